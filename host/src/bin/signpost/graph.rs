//! `signpost index` and `signpost graph …`: make, import and inspect graphs;
//! `signpost graph`'s subcommands ([`GraphCommand`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

#[derive(Subcommand)]
pub(super) enum GraphCommand {
    /// Convert graph files (SCIP, JSON or snapshot; several are merged into
    /// one workspace) into a snapshot that loads by reading.
    #[command(after_help = "Examples:\n  signpost graph import index.rust.scip index.typescript.scip -o shop.snapshot")]
    Import {
        /// The graph files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The snapshot to write.
        #[arg(short, long, value_name = "PATH")]
        output: PathBuf,
    },
    /// Print symbols with their ids (kind, qualified name, place), to use
    /// in golden cases and scripts; `--name` keeps those whose name
    /// contains it.
    #[command(
        after_help = "Examples:\n  signpost graph symbols --name OrderService\n  signpost graph symbols index.scip --name parse"
    )]
    Symbols {
        /// The graph files (none: the embedded sample graph).
        files: Vec<PathBuf>,
        /// Only symbols whose name contains this (case-insensitive).
        #[arg(long)]
        name: Option<String>,
    },
    /// Load graph files as `--graph` would and print what they hold.
    #[command(after_help = "Examples:\n  signpost graph info index.scip")]
    Info {
        /// The graph files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub(super) fn index_project(
    dir: &Path,
    output: Option<&Path>,
    all_features: bool,
    indexers: &[String],
    trust: bool,
) -> anyhow::Result<ExitCode> {
    use signpost::indexer;
    use signpost::project::{index_scip_part, part_name, scip_roots, uncovered};
    use signpost_treesitter::walk::{self, WalkOptions};
    let dir = std::fs::canonicalize(dir).with_context(|| format!("no project directory {}", dir.display()))?;
    let given = given_indexers(indexers)?;
    let trust = signpost::trust::Trust::of(&dir, trust);
    // Every project under DIR with a SCIP indexer here, by its marker files;
    // every other language's files, for the built-in tree-sitter indexer.
    let walk::Walked { sources: parsed, notes: walk_notes, marked } =
        walk::project(&dir, &WalkOptions::default(), &indexer::markers());
    let detected = indexer::projects(&marked);
    if detected.is_empty() && parsed.is_empty() {
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
    // The SCIP indexers build the project (they run its code): only on a
    // trusted tree; otherwise the built-in indexer reads their languages.
    // `--indexer rust=builtin` (or `[indexer] rust = "builtin"`): that
    // language's SCIP projects are read by the built-in indexer.
    let builtin = signpost::trust::builtin_choices(indexers);
    let (detected, chosen): (Vec<_>, Vec<_>) =
        detected.into_iter().partition(|(l, _)| !builtin.iter().any(|(b, _)| b == l.name()));
    for lang in indexer::LANGUAGES.into_iter().filter(|l| chosen.iter().any(|(c, _)| c == l)) {
        let why = builtin.iter().find(|(b, _)| b == lang.name()).map_or("", |(_, w)| w.as_str());
        eprintln!("note: {} is read by the built-in indexer, not {} ({why})", lang.name(), lang.program());
    }
    let projects = if trust.trusted {
        detected
    } else {
        for lang in indexer::LANGUAGES.into_iter().filter(|l| detected.iter().any(|(d, _)| d == l)) {
            eprintln!("note: {}", trust.not_run(lang.program(), lang.reaches(), &dir));
        }
        Vec::new()
    };
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
    let names: Vec<String> = projects
        .iter()
        .map(|(lang, root)| part_name(lang.name(), root, &dir))
        .chain(leftover.iter().map(|(l, _)| l.name.to_owned()))
        .collect();
    // Where each part goes, decided (and checked) before anything is indexed.
    let target = Target::of(output, &dir, &names)?;
    let mut written = Vec::new();
    for (lang, root) in &projects {
        let out = target.file(&part_name(lang.name(), root, &dir));
        // Written beside the target and renamed into place, so a server
        // watching the index only ever sees a whole file; removed on failure.
        let partial = Partial::of(&out);
        let what = match root.strip_prefix(&dir).ok().filter(|r| !r.as_os_str().is_empty()) {
            Some(rel) => format!("{} in {}", lang.name(), rel.display()),
            None => lang.name().to_owned(),
        };
        let ran =
            index_scip_part(*lang, root, &dir, &partial.0, &indexer::Options { all_features }).and_then(|dropped| {
                place(&partial.0, &out, &format!("the {} indexer", lang.name()), &what).map(|()| dropped)
            });
        match ran {
            Ok(dropped) => {
                if dropped > 0 {
                    outln!(
                        "  left out {dropped} generated, build-output or outside files (dist/, .d.ts beside its .ts, …)"
                    );
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
        let out = target.file(lang.name);
        let partial = Partial::of(&out);
        // The language's SCIP indexer when given (the operator's own
        // command), or on PATH and the tree is trusted; the built-in
        // indexer when it is missing, not trusted, or fails.
        let chosen = given.iter().find(|(l, _)| l == lang.name).map(|(_, c)| c.clone());
        let command = chosen.filter(|c| c[..] != ["builtin"]).or_else(|| {
            if builtin.iter().any(|(b, _)| b == lang.name) {
                return None;
            }
            let words = shlex::split(lang.scip_command).filter(|w| !w.is_empty())?;
            let program = words.first().filter(|p| indexer::on_path(p).is_some())?;
            if !trust.trusted {
                eprintln!("note: {}", trust.not_run(program, signpost::precise::reaches(program), &dir));
                return None;
            }
            Some(words)
        });
        if let Some(words) = command {
            let program = words.first().cloned().unwrap_or_default();
            let ran = indexer::with_progress(&format!("indexing {} with {program}", lang.name), || {
                let args = words[1..].iter().map(|w| w.replace("{out}", &partial.0.to_string_lossy()));
                indexer::run_quiet(std::process::Command::new(&program).args(args).current_dir(&dir), &program)
            })
            .and_then(|()| indexer::tidy(&partial.0, "", &dir, &|rel| !walk::excluded(&dir, rel)))
            .and_then(|_| place(&partial.0, &out, &program, &format!("{}, {program}", lang.name)));
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
    outln!("serve it: signpost {}", flags.join(" "));
    Ok(ExitCode::SUCCESS)
}

/// Where `signpost index` writes, by one rule: `-o NAME.scip` is the index
/// file (a project of one part only), any other `-o` a directory (created
/// when missing) that gets `index.scip` for one part and
/// `index.<part>.scip` for several; without `-o`, the project directory.
struct Target {
    /// The one file, or the directory.
    path: PathBuf,
    file: bool,
    several: bool,
}

impl Target {
    fn of(output: Option<&Path>, dir: &Path, parts: &[String]) -> anyhow::Result<Target> {
        let several = parts.len() > 1;
        let Some(output) = output else { return Ok(Target { path: dir.to_path_buf(), file: false, several }) };
        let path = std::path::absolute(output)?;
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        let ext = path.extension().and_then(|e| e.to_str());
        if !is_dir && ext == Some("scip") {
            if several {
                anyhow::bail!(
                    "-o {}: this project has {} parts ({}), one index file each: give -o a directory (created when \
                     missing), e.g. -o {}",
                    output.display(),
                    parts.len(),
                    parts.join(", "),
                    path.with_extension("").display()
                );
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("-o: creating {}", parent.display()))?;
            }
            return Ok(Target { path, file: true, several });
        }
        if !is_dir && ext.is_some() {
            anyhow::bail!(
                "-o {}: give an index file named *.scip, or a directory (created when missing) for \
                 index.<part>.scip files",
                output.display()
            );
        }
        std::fs::create_dir_all(&path).with_context(|| format!("-o: creating the directory {}", path.display()))?;
        Ok(Target { path, file: false, several })
    }

    /// The index file of the part `name`.
    fn file(&self, name: &str) -> PathBuf {
        match (self.file, self.several) {
            (true, _) => self.path.clone(),
            (false, false) => self.path.join("index.scip"),
            (false, true) => self.path.join(format!("index.{name}.scip")),
        }
    }
}

/// An index being written beside its place (a name of its own), removed if
/// it is not renamed into place.
struct Partial(PathBuf);

impl Partial {
    fn of(out: &Path) -> Partial {
        Partial(signpost::indexer::partial_of(out))
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `signpost trust`: lists, adds or removes a trusted tree in the user's
/// configuration.
pub(super) fn trust(dir: &Path, remove: bool, list: bool) -> anyhow::Result<ExitCode> {
    use signpost::trust::{Config, config_path};
    let path = config_path();
    let mut config = Config::read(&path)?;
    if list {
        if config.all() {
            outln!("every tree (`all = true` in {})", path.display());
        }
        for tree in config.trees() {
            outln!("{}", tree.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let tree = std::fs::canonicalize(dir).with_context(|| format!("no directory {}", dir.display()))?;
    let changed = if remove { config.remove(&tree)? } else { config.add(&tree)? };
    if changed {
        config.write(&path)?;
    }
    let what = match (remove, changed) {
        (false, true) => "trusted from now on: its SCIP indexers may run (they run its code)",
        (false, false) => "already trusted",
        (true, true) => "no longer trusted: the built-in indexer reads it, and nothing of it runs",
        (true, false) => "was not trusted",
    };
    outln!("{}: {what} ({})", tree.display(), path.display());
    if remove && config.all() {
        outln!("note: `all = true` in {} still trusts every tree", path.display());
    }
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
    let partial = Partial::of(out);
    // Encoded into the file as the documents are made: neither the index
    // nor its bytes are ever whole in memory, nor held while `place` loads
    // the file back.
    let file = std::fs::File::create(&partial.0).with_context(|| format!("writing {}", partial.0.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    let report = signpost::indexer::with_progress(
        &format!("indexing {} {} files with tree-sitter", files.len(), lang.name),
        || signpost_treesitter::index_to(dir, lang, files, &signpost_treesitter::Options::default(), &mut writer),
    )
    .with_context(|| format!("writing {}", partial.0.display()))?;
    writer
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)
        .with_context(|| format!("writing {}", partial.0.display()))?;
    let r = &report;
    place(&partial.0, out, "the tree-sitter indexer", &format!("{}, tree-sitter", lang.name))?;
    const SHOWN: usize = 20;
    for note in r.notes.iter().take(SHOWN) {
        eprintln!("note: {note}");
    }
    if r.notes.len() > SHOWN {
        eprintln!("note: … and {} more", r.notes.len() - SHOWN);
    }
    outln!(
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
            // `LANG=builtin`: the built-in indexer, whatever the SCIP one.
            if command == "builtin" {
                return Ok((lang.to_owned(), vec!["builtin".to_owned()]));
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
    outln!(
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
    let partial = output.with_extension("partial");
    // Written as it is made: a large graph's snapshot is not held whole.
    let written = std::fs::File::create(&partial).and_then(|file| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        let written = signpost::graph::snapshot::write_to(&graph, &mut out)?;
        std::io::Write::flush(&mut out)?;
        Ok(written)
    });
    let written = written.with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, output).with_context(|| format!("writing {}", output.display()))?;
    outln!(
        "{}: snapshot v{} of {}: {} symbols, {} edges, {} MB (loaded in {:.1} s)",
        output.display(),
        signpost::graph::snapshot::VERSION,
        graph.name(),
        graph.node_count(),
        graph.edge_count(),
        written.len / 1_000_000,
        loaded.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn graph_info(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::live_graph::load_sources(files)?;
    outln!("graph    {}", graph.name());
    outln!("symbols  {}", graph.node_count());
    outln!("edges    {}", graph.edge_count());
    outln!("files    {}", graph.file_count());
    outln!("types    {}", graph.edge_types().join(", "));
    outln!("loaded   in {:.2} s", started.elapsed().as_secs_f64());
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
