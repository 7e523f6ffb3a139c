//! `signpost index` and `signpost graph …`: make, import and inspect graphs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

pub(super) fn index_project(dir: &Path, output: Option<&Path>, all_features: bool) -> anyhow::Result<ExitCode> {
    use signpost::indexer;
    let dir = std::fs::canonicalize(dir).with_context(|| format!("no project directory {}", dir.display()))?;
    let langs = indexer::detect(&dir);
    if langs.is_empty() {
        anyhow::bail!(
            "nothing to index in {}: no Cargo.toml (Rust), package.json or tsconfig.json (TypeScript/JavaScript), \
             pyproject.toml, setup.py or requirements.txt (Python) at its top",
            dir.display()
        );
    }
    let mut written = Vec::new();
    for &lang in &langs {
        let out = match (output, langs.len()) {
            (Some(o), 1) => o.to_path_buf(),
            (Some(o), _) => o.join(format!("index.{}.scip", lang.name())),
            (None, 1) => dir.join("index.scip"),
            (None, _) => dir.join(format!("index.{}.scip", lang.name())),
        };
        let out = std::path::absolute(&out)?;
        // Written beside the target and renamed into place, so a server
        // watching the index only ever sees a whole file.
        let partial = out.with_extension("scip.partial");
        indexer::index(lang, &dir, &partial, &indexer::Options { all_features })?;
        let graph = indexer::with_progress(&format!("checking {}", out.display()), || signpost::graph::load(&partial))
            .with_context(|| format!("the {} indexer wrote an index signpost cannot load", lang.name()))?;
        std::fs::rename(&partial, &out).with_context(|| format!("writing {}", out.display()))?;
        println!(
            "{}: {} symbols, {} edges, {} files ({})",
            out.display(),
            graph.node_count(),
            graph.edge_count(),
            graph.file_count(),
            lang.name()
        );
        written.push(out);
    }
    let flags: Vec<String> = written.iter().map(|p| format!("--graph {}", p.display())).collect();
    println!("serve it: signpost {}", flags.join(" "));
    Ok(ExitCode::SUCCESS)
}

pub(super) fn graph_import(files: &[PathBuf], output: &Path) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::indexer::with_progress("loading", || signpost::live_graph::load_sources(files))?;
    let loaded = started.elapsed();
    let bytes = signpost::graph::snapshot::write(&graph);
    let partial = output.with_extension("partial");
    std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, output).with_context(|| format!("writing {}", output.display()))?;
    println!(
        "{}: snapshot v{} of {}: {} symbols, {} edges, {} MB (loaded in {:.1} s)",
        output.display(),
        signpost::graph::snapshot::VERSION,
        graph.name(),
        graph.node_count(),
        graph.edge_count(),
        bytes.len() / 1_000_000,
        loaded.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn graph_info(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::live_graph::load_sources(files)?;
    println!("graph    {}", graph.name());
    println!("symbols  {}", graph.node_count());
    println!("edges    {}", graph.edge_count());
    println!("files    {}", graph.file_count());
    println!("types    {}", graph.edge_types().join(", "));
    println!("loaded   in {:.2} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

pub(super) fn graph_symbols(files: &[PathBuf], name: Option<&str>) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let graph = signpost::live_graph::load_sources(files)?;
    let want = name.map(str::to_lowercase);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for n in graph.iter() {
        if want.as_ref().is_some_and(|w| !n.name().to_lowercase().contains(w.as_str())) {
            continue;
        }
        let place = if n.file().is_empty() { String::new() } else { format!("  {}:{}", n.file(), n.line()) };
        let roles: Vec<&str> = n.roles().collect();
        let roles = if roles.is_empty() { String::new() } else { format!("  [{}]", roles.join(", ")) };
        let line = format!("{}  {:<10} {}{place}{roles}", n.id(), n.kind(), n.fqn());
        if writeln!(out, "{}", signpost::sanitize::escape(&line, 400)).is_err() {
            break; // a closed pipe (`| head`)
        }
    }
    Ok(ExitCode::SUCCESS)
}
