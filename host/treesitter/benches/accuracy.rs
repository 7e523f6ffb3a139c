//! The built-in indexer against the truth about a real project: a
//! compiler's (`bench/truth/`: javac, go/types, libclang) or a SCIP
//! indexer's. Per edge type, precision and recall of the built-in graph;
//! per question an agent asks ("who calls this?"), how many answers are
//! complete and clean, and how many are empty; and for a SCIP truth, how
//! many of its definitions keep their id (BENCHMARKS.md, "Accuracy").
//!
//! ```text
//! bench/truth/java/run.sh /tmp/repos/gson gson/src/main/java /tmp/truth/gson.json
//! SIGNPOST_ACCURACY_DIR=/tmp/repos/gson SIGNPOST_ACCURACY_LANG=java \
//!   SIGNPOST_ACCURACY_TRUTH=/tmp/truth/gson.json \
//!   cargo bench -p signpost-treesitter --bench accuracy
//!
//! signpost index DIR --trust -o /tmp/truth.scip     # a SCIP indexer's graph
//! SIGNPOST_ACCURACY_DIR=DIR SIGNPOST_ACCURACY_LANG=rust \
//!   SIGNPOST_ACCURACY_SCIP=/tmp/truth.scip \
//!   cargo bench -p signpost-treesitter --bench accuracy
//! ```
//!
//! `SIGNPOST_ACCURACY_UNDER=src/` compares only what a SCIP truth defines
//! under a path (rust-analyzer gives every example's `main` one symbol, so
//! its examples cannot be compared file by file).
//! `SIGNPOST_ACCURACY_EXAMPLES=N` prints N differences per edge type and
//! question. `SIGNPOST_ACCURACY_OURS=a.scip,b.scip` compares what another
//! build's `signpost index` wrote instead of indexing here. Without a directory, a language and a truth it says so and
//! measures nothing.

use std::path::PathBuf;
use std::time::Instant;

use signpost_treesitter::truth::{self, Truth};
use signpost_treesitter::walk::{WalkOptions, sources};
use signpost_treesitter::{Options, accuracy, index, languages};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (Some(dir), Some(lang)) =
        (std::env::var_os("SIGNPOST_ACCURACY_DIR").map(PathBuf::from), std::env::var("SIGNPOST_ACCURACY_LANG").ok())
    else {
        eprintln!(
            "accuracy: set SIGNPOST_ACCURACY_DIR, SIGNPOST_ACCURACY_LANG and SIGNPOST_ACCURACY_TRUTH (a compiler's) or \
             SIGNPOST_ACCURACY_SCIP (a SCIP indexer's) to measure"
        );
        return Ok(());
    };
    let under = std::env::var("SIGNPOST_ACCURACY_UNDER").unwrap_or_default();
    let scip = std::env::var_os("SIGNPOST_ACCURACY_SCIP").map(PathBuf::from);
    let json = std::env::var_os("SIGNPOST_ACCURACY_TRUTH").map(PathBuf::from);
    let scip_graph = match &scip {
        Some(path) => {
            Some(signpost_graph::scip::import_file(path, &signpost_graph::scip::Options { name: "truth".into() })?)
        }
        None => None,
    };
    let truth = match (&scip_graph, &json) {
        (Some(g), _) => Truth::from_graph(g, &under),
        (None, Some(path)) => Truth::from_json(&std::fs::read_to_string(path)?)?,
        (None, None) => {
            eprintln!("accuracy: set SIGNPOST_ACCURACY_TRUTH or SIGNPOST_ACCURACY_SCIP");
            return Ok(());
        }
    };
    let languages: Vec<&'static languages::Lang> = lang
        .split(',')
        .map(|l| languages::by_name(l).ok_or_else(|| format!("no built-in language {l}")))
        .collect::<Result<_, _>>()?;
    let dir = std::fs::canonicalize(&dir)?;
    let (found, _) = sources(&dir, &WalkOptions::default());
    let started = Instant::now();
    let mut parts = Vec::new();
    let (mut files, mut lines) = (0, 0);
    // `SIGNPOST_ACCURACY_OURS=a.scip,b.scip`: the built-in indexer's graph as
    // another build wrote it (`signpost index`), to measure that build.
    let given: Vec<PathBuf> =
        std::env::var("SIGNPOST_ACCURACY_OURS").map(|s| s.split(',').map(PathBuf::from).collect()).unwrap_or_default();
    for path in &given {
        parts.push(signpost_graph::scip::import_file(path, &signpost_graph::scip::Options { name: "ours".into() })?);
    }
    for lang in languages.iter().filter(|_| given.is_empty()) {
        let mine = found.iter().find(|(l, _)| std::ptr::eq(*l, *lang)).map(|(_, f)| f.clone()).unwrap_or_default();
        let indexed = index(&dir, lang, &mine, &Options::default());
        files += indexed.report.files;
        lines += indexed.report.lines;
        parts.push(signpost_graph::scip::import_index(
            &indexed.index,
            &signpost_graph::scip::Options { name: lang.name.into() },
        )?);
    }
    let ours = signpost_graph::merge("ours", parts.iter())?;
    // rust-analyzer's SCIP index has an occurrence only for a token the
    // file writes where the macro is invoked, none for a call in the
    // macro's body: against it, ours are judged without the latter, and
    // those are counted apart.
    let rust = languages.iter().any(|l| l.rules.macro_rules);
    let (ours, body_only) = if scip.is_some() && rust && given.is_empty() {
        signpost_treesitter::macros::BODY_CALLS.store(false, std::sync::atomic::Ordering::Relaxed);
        let mut seen = Vec::new();
        for lang in &languages {
            let mine = found.iter().find(|(l, _)| std::ptr::eq(*l, *lang)).map(|(_, f)| f.clone()).unwrap_or_default();
            let indexed = index(&dir, lang, &mine, &Options::default());
            seen.push(signpost_graph::scip::import_index(
                &indexed.index,
                &signpost_graph::scip::Options { name: lang.name.into() },
            )?);
        }
        signpost_treesitter::macros::BODY_CALLS.store(true, std::sync::atomic::Ordering::Relaxed);
        let seen = signpost_graph::merge("ours", seen.iter())?;
        let count = |g: &signpost_graph::Graph| {
            let Ok(Some(key)) = g.parse_edge_key("CALLS") else { return 0 };
            g.iter().map(|n| g.walk(n.ix(), signpost_graph::Direction::Out, &key).len()).sum::<usize>()
        };
        let apart = count(&ours).saturating_sub(count(&seen));
        (seen, apart)
    } else {
        (ours, 0)
    };
    println!(
        "{} ({}): {files} files, {lines} lines, built-in index and import {:.2} s; {} nodes here; the truth ({}): {} \
         definitions, {} edges",
        dir.display(),
        lang,
        started.elapsed().as_secs_f64(),
        ours.node_count(),
        truth.tool,
        truth.defs.len(),
        truth.edges.len()
    );
    let shown = std::env::var("SIGNPOST_ACCURACY_EXAMPLES").ok().map_or(0, |n| n.parse().unwrap_or(5));
    let c = truth::compare(&truth, &ours, shown);
    println!("definitions at the truth's places: {} of {}", c.placed.0, c.placed.1);
    if body_only > 0 {
        println!(
            "calls read in macro bodies, which the SCIP indexer has no occurrence for: {body_only} CALLS edges, not judged"
        );
    }
    for u in &c.unplaced {
        println!("  no definition here at the place of {u}");
    }
    println!("| edge | built-in | truth | both | precision | recall | marked ambiguous (true) | precision unmarked |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for f in &c.edges {
        let unmarked = f.ours - f.ambiguous;
        let sure = (f.both - f.ambiguous_true) as f64 * 100.0 / unmarked.max(1) as f64;
        println!(
            "| {} | {} | {} | {} | {:.1}% | {:.1}% | {} ({}) | {:.1}% |",
            f.edge,
            f.ours,
            f.truth,
            f.both,
            f.precision() * 100.0,
            f.recall() * 100.0,
            f.ambiguous,
            f.ambiguous_true,
            sure
        );
    }
    println!(
        "| who … it? | asked | complete and clean | complete, clean but what it marks | empty | (no definition there) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for q in &c.questions {
        let pct = |n: usize| n as f64 * 100.0 / q.asked.max(1) as f64;
        println!(
            "| {} | {} | {} ({:.1}%) | {} ({:.1}%) | {} ({:.1}%) | {} |",
            q.edge,
            q.asked,
            q.complete_clean,
            pct(q.complete_clean),
            q.complete_labelled,
            pct(q.complete_labelled),
            q.empty,
            pct(q.empty),
            q.no_definition
        );
    }
    if let Some(g) = &scip_graph {
        let (same, all, differ) = accuracy::ids(g, &ours, &under);
        println!("ids: {same} of {all} definitions the same ({:.0}%)", same as f64 * 100.0 / all.max(1) as f64);
        for d in differ.iter().take(shown) {
            println!("  id differs: {d}");
        }
    }
    for f in &c.edges {
        for e in &f.examples {
            println!("  {} {e}", f.edge);
        }
    }
    for q in &c.questions {
        for e in &q.examples {
            println!("  who {}: {e}", q.edge);
        }
    }
    Ok(())
}
