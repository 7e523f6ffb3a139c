//! The built-in indexer against a SCIP indexer on a real project: per edge
//! type, precision and recall of the built-in graph, and how many of the
//! SCIP indexer's definitions keep their id (BENCHMARKS.md, "Accuracy").
//!
//! ```text
//! signpost index DIR -o /tmp/truth.scip          # the SCIP indexer's graph
//! SIGNPOST_ACCURACY_DIR=DIR SIGNPOST_ACCURACY_LANG=rust \
//!   SIGNPOST_ACCURACY_SCIP=/tmp/truth.scip \
//!   cargo bench -p signpost-treesitter --bench accuracy
//! ```
//!
//! `SIGNPOST_ACCURACY_UNDER=src/` compares only what is defined under a
//! path (rust-analyzer gives every example's `main` one symbol, so its
//! examples cannot be compared file by file). Without the first three
//! variables it says so and measures nothing.

use std::path::PathBuf;
use std::time::Instant;

use signpost_treesitter::walk::{WalkOptions, sources};
use signpost_treesitter::{Options, accuracy, index, languages};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (Some(dir), Some(lang), Some(scip)) = (
        std::env::var_os("SIGNPOST_ACCURACY_DIR").map(PathBuf::from),
        std::env::var("SIGNPOST_ACCURACY_LANG").ok(),
        std::env::var_os("SIGNPOST_ACCURACY_SCIP").map(PathBuf::from),
    ) else {
        eprintln!("accuracy: set SIGNPOST_ACCURACY_DIR, SIGNPOST_ACCURACY_LANG and SIGNPOST_ACCURACY_SCIP to measure");
        return Ok(());
    };
    let lang = languages::by_name(&lang).ok_or_else(|| format!("no built-in language {lang}"))?;
    let dir = std::fs::canonicalize(&dir)?;
    let truth = signpost_graph::scip::import_file(&scip, &signpost_graph::scip::Options { name: "truth".into() })?;
    let (found, _) = sources(&dir, &WalkOptions::default());
    let files = found.into_iter().find(|(l, _)| std::ptr::eq(*l, lang)).map(|(_, f)| f).unwrap_or_default();
    let started = Instant::now();
    let indexed = index(&dir, lang, &files, &Options::default());
    let ours =
        signpost_graph::scip::import_index(&indexed.index, &signpost_graph::scip::Options { name: "ours".into() })?;
    println!(
        "{}: {} files, {} lines, built-in index and import {:.2} s; {} nodes here, {} in the SCIP index",
        dir.display(),
        indexed.report.files,
        indexed.report.lines,
        started.elapsed().as_secs_f64(),
        ours.node_count(),
        truth.node_count()
    );
    println!("| edge | built-in | SCIP | both | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|");
    let under = std::env::var("SIGNPOST_ACCURACY_UNDER").unwrap_or_default();
    // `SIGNPOST_ACCURACY_EXAMPLES=N`: N differences per edge type (5 when
    // not a number).
    let shown = std::env::var("SIGNPOST_ACCURACY_EXAMPLES").ok().map_or(5, |n| n.parse().unwrap_or(5));
    let figures = accuracy::edges(&truth, &ours, &under, shown);
    for f in &figures {
        println!(
            "| {} | {} | {} | {} | {:.0}% | {:.0}% |",
            f.edge,
            f.ours,
            f.theirs,
            f.both,
            f.precision() * 100.0,
            f.recall() * 100.0
        );
    }
    let (same, all, differ) = accuracy::ids(&truth, &ours, &under);
    println!("ids: {same} of {all} definitions the same ({:.0}%)", same as f64 * 100.0 / all.max(1) as f64);
    if std::env::var_os("SIGNPOST_ACCURACY_EXAMPLES").is_some() {
        for f in &figures {
            for e in &f.examples {
                println!("  {} {e}", f.edge);
            }
        }
        for d in differ.iter().take(20) {
            println!("  id differs: {d}");
        }
    }
    Ok(())
}
