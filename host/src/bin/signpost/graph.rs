//! `signpost index` and `signpost graph …`: make, import and inspect graphs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

pub(super) fn index_project(
    dir: &Path,
    output: Option<&Path>,
    all_features: bool,
    indexers: &[String],
) -> anyhow::Result<ExitCode> {
    use signpost::indexer;
    use signpost::project::{index_scip_part, part_name, scip_projects, scip_roots, uncovered};
    use signpost_treesitter::walk::{self, WalkOptions};
    let dir = std::fs::canonicalize(dir).with_context(|| format!("no project directory {}", dir.display()))?;
    let given = given_indexers(indexers)?;
    // Every project under DIR with a SCIP indexer here, by its marker files;
    // every other language's files, for the built-in tree-sitter indexer.
    let projects = scip_projects(&dir);
    let (parsed, walk_notes) = walk::sources(&dir, &WalkOptions::default());
    if projects.is_empty() && parsed.is_empty() {
        let extensions: Vec<String> = signpost_treesitter::languages::LANGUAGES
            .iter()
            .flat_map(|l| l.extensions.iter().map(|e| format!(".{e}")))
            .collect();
        anyhow::bail!(
            "nothing to index in {}: no Cargo.toml (Rust), package.json or tsconfig.json (TypeScript/JavaScript), \
             pyproject.toml, setup.py or requirements.txt (Python) under it, and no {} source files. \
             An index made by another SCIP indexer (scip-clang, scip-dotnet, scip-ruby, …) is served as it is: \
             signpost --graph index.scip",
            dir.display(),
            extensions.join(" ")
        );
    }
    // A built-in language's files inside a SCIP project of the same
    // language (Python) are that indexer's; the built-in indexer reads the
    // rest, and those files too when the SCIP indexer fails.
    let under = |lang: &str, root: &Path| -> Vec<PathBuf> {
        let files = parsed.iter().find(|(l, _)| l.name == lang).map_or(&[][..], |(_, f)| f.as_slice());
        files.iter().filter(|f| f.starts_with(root)).cloned().collect()
    };
    let roots = scip_roots(&projects);
    let leftover: Vec<(&'static signpost_treesitter::languages::Lang, Vec<PathBuf>)> = parsed
        .iter()
        .map(|(l, files)| (*l, uncovered(l, files, &roots)))
        .filter(|(_, files)| !files.is_empty())
        .collect();
    let parts = projects.len() + leftover.len();
    let out_for = |name: &str| -> anyhow::Result<PathBuf> {
        let out = match (output, parts) {
            (Some(o), 1) => o.to_path_buf(),
            (Some(o), _) => o.join(format!("index.{name}.scip")),
            (None, 1) => dir.join("index.scip"),
            (None, _) => dir.join(format!("index.{name}.scip")),
        };
        Ok(std::path::absolute(&out)?)
    };
    let mut written = Vec::new();
    for (lang, root) in &projects {
        let out = out_for(&part_name(lang.name(), root, &dir))?;
        // Written beside the target and renamed into place, so a server
        // watching the index only ever sees a whole file.
        let partial = out.with_extension("scip.partial");
        let what = match root.strip_prefix(&dir).ok().filter(|r| !r.as_os_str().is_empty()) {
            Some(rel) => format!("{} in {}", lang.name(), rel.display()),
            None => lang.name().to_owned(),
        };
        let ran =
            index_scip_part(*lang, root, &dir, &partial, &indexer::Options { all_features }).and_then(|dropped| {
                place(&partial, &out, &format!("the {} indexer", lang.name()), &what).map(|()| dropped)
            });
        match ran {
            Ok(dropped) => {
                if dropped > 0 {
                    println!("  left out {dropped} generated or build-output files (dist/, .d.ts beside its .ts, …)");
                }
            }
            Err(e) => {
                let built_in = signpost_treesitter::languages::by_name(lang.name());
                let Some(built_in) = built_in else { return Err(e) };
                eprintln!(
                    "note: the {} indexer failed ({}); the built-in indexer reads {what} instead",
                    lang.name(),
                    one_line(&e)
                );
                read_built_in(&dir, built_in, &under(lang.name(), root), &out)?;
            }
        }
        written.push(out);
    }
    for note in &walk_notes {
        eprintln!("note: {note}");
    }
    for (lang, files) in &leftover {
        let out = out_for(lang.name)?;
        let partial = out.with_extension("scip.partial");
        // The language's SCIP indexer when given or on PATH; the built-in
        // indexer when it is missing or fails.
        let command = given.iter().find(|(l, _)| l == lang.name).map(|(_, c)| c.clone()).or_else(|| {
            let words = shlex::split(lang.scip_command).filter(|w| !w.is_empty())?;
            words.first().and_then(|p| indexer::on_path(p)).map(|_| words)
        });
        if let Some(words) = command {
            let program = words.first().cloned().unwrap_or_default();
            let ran = indexer::with_progress(&format!("indexing {} with {program}", lang.name), || {
                let args = words[1..].iter().map(|w| w.replace("{out}", &partial.to_string_lossy()));
                indexer::run_quiet(std::process::Command::new(&program).args(args).current_dir(&dir), &program)
            })
            .and_then(|()| indexer::tidy(&partial, "", &dir, &|rel| !walk::excluded(&dir, rel)))
            .and_then(|_| place(&partial, &out, &program, &format!("{}, {program}", lang.name)));
            match ran {
                Ok(()) => {
                    written.push(out);
                    continue;
                }
                Err(e) => eprintln!(
                    "note: the {} SCIP indexer failed ({}); the built-in indexer reads {} instead",
                    lang.name,
                    one_line(&e),
                    lang.name,
                ),
            }
        }
        read_built_in(&dir, lang, files, &out)?;
        written.push(out);
    }
    let flags: Vec<String> = written.iter().map(|p| format!("--graph {}", p.display())).collect();
    println!("serve it: signpost {}", flags.join(" "));
    Ok(ExitCode::SUCCESS)
}

/// An error's chain on one line, at most six parts.
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace(":\n", ": ").lines().take(6).collect::<Vec<_>>().join(" / ")
}

/// Reads `files` of `lang` with the built-in indexer into `out`, and says
/// what it found and what would do better.
fn read_built_in(
    dir: &Path,
    lang: &'static signpost_treesitter::languages::Lang,
    files: &[PathBuf],
    out: &Path,
) -> anyhow::Result<()> {
    let partial = out.with_extension("scip.partial");
    let indexed = signpost::indexer::with_progress(
        &format!("indexing {} {} files with tree-sitter", files.len(), lang.name),
        || signpost_treesitter::index(dir, lang, files, &signpost_treesitter::Options::default()),
    );
    std::fs::write(&partial, indexed.to_bytes()?).with_context(|| format!("writing {}", partial.display()))?;
    let r = &indexed.report;
    place(&partial, out, "the tree-sitter indexer", &format!("{}, tree-sitter", lang.name))?;
    const SHOWN: usize = 20;
    for note in r.notes.iter().take(SHOWN) {
        eprintln!("note: {note}");
    }
    if r.notes.len() > SHOWN {
        eprintln!("note: … and {} more", r.notes.len() - SHOWN);
    }
    println!(
        "  {}: {} lines in {:.1} s; {} of {} calls resolved by name (scope, supertypes, written types, imports); \
         these edges are inferred, not compiler-checked: for exact ones, index with {} and serve its index",
        lang.name,
        r.lines,
        r.elapsed.as_secs_f64(),
        r.counts.calls_resolved,
        r.counts.calls,
        lang.better
    );
    Ok(())
}

/// `--indexer LANG=COMMAND` flags: each a built-in language and a command
/// line that names `{out}`.
fn given_indexers(flags: &[String]) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let names: Vec<&str> = signpost_treesitter::languages::LANGUAGES.iter().map(|l| l.name).collect();
    flags
        .iter()
        .map(|f| {
            let (lang, command) = f
                .split_once('=')
                .with_context(|| format!("--indexer {f}: give LANG=COMMAND, e.g. go='scip-go --output {{out}}'"))?;
            if !names.contains(&lang) {
                anyhow::bail!("--indexer {f}: `{lang}` is not one of {}", names.join(", "));
            }
            let words = shlex::split(command)
                .filter(|w| !w.is_empty())
                .with_context(|| format!("--indexer {f}: the command does not parse as a shell command line"))?;
            if !words.iter().any(|w| w.contains("{out}")) {
                anyhow::bail!("--indexer {f}: the command must name the index it writes as {{out}}");
            }
            Ok((lang.to_owned(), words))
        })
        .collect()
}

/// Checks that the index at `partial` loads, renames it to `out`, and says
/// what it holds.
fn place(partial: &Path, out: &Path, indexer: &str, what: &str) -> anyhow::Result<()> {
    let graph =
        signpost::indexer::with_progress(&format!("checking {}", out.display()), || signpost::graph::load(partial))
            .with_context(|| format!("{indexer} wrote an index signpost cannot load"))?;
    std::fs::rename(partial, out).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{}: {} symbols, {} edges, {} files ({what})",
        out.display(),
        graph.node_count(),
        graph.edge_count(),
        graph.file_count(),
    );
    Ok(())
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
