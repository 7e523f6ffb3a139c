//! `signpost --project`'s precise pass for the built-in indexer's
//! languages: when a language's SCIP indexer is on PATH (scip-java,
//! scip-go, scip-dotnet, scip-clang, scip-ruby; `Lang::scip_command`), it
//! runs in the background at start, and again once edits have been quiet
//! for a while. Its index replaces the built-in indexer's part of each
//! language it read (exact edges for inferred ones), but only if no file of
//! that language changed while it ran: an edit is read at once by the
//! built-in indexer, and a precise index of older files is thrown away and
//! made again. Languages that share an indexer (scip-java: Java, Kotlin,
//! Scala) share one run, its documents split by language.

use std::path::{Path, PathBuf};
use std::time::Duration;

use signpost_graph::indexer;
use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::walk;

/// How long the built-in languages' files must be quiet before the precise
/// pass runs again: SCIP indexers build the project, which an agent's burst
/// of edits should not start over and over.
pub const QUIET: Duration = Duration::from_secs(20);

/// One SCIP indexer and the languages it reads.
#[derive(Debug)]
pub struct Pass {
    /// Its command line, `{out}` standing for the index to write.
    pub command: Vec<String>,
    /// The languages it reads (that the project has files of).
    pub langs: Vec<&'static Lang>,
    /// A run is under way.
    pub running: bool,
    /// Files changed while it ran: run again when quiet.
    pub again: bool,
    /// A quiet timer is armed.
    pub waiting: bool,
}

/// What a built-in language's SCIP indexer (the program, as
/// `Lang::scip_command` names it) runs or reads of the tree it indexes:
/// why it does not run on a tree that is not trusted (docs/security.md).
pub fn reaches(program: &str) -> &'static str {
    match program {
        "scip-java" => "it runs the project's Maven, Gradle or sbt build, with the plugins and scripts the build names",
        "scip-go" => {
            "it runs the Go toolchain on the module: a `toolchain` line in `go.mod` can fetch and run another Go, \
             and cgo runs the compilers and flags `#cgo` directives name"
        }
        "scip-dotnet" => "it runs MSBuild: the targets, tasks and `Directory.Build.props` of the project",
        "scip-clang" => {
            "it runs the compile commands `compile_commands.json` lists (the compilers and flags the tree names)"
        }
        "scip-ruby" => "it reads `sorbet/config` and the files it names, outside the tree too",
        _ => "it builds or configures itself from the tree",
    }
}

/// The passes for the languages of `found` (those with files) whose SCIP
/// indexer is on PATH (whether the tree's trust lets them run is the
/// caller's to decide).
pub fn passes(found: &[(&'static Lang, Vec<PathBuf>)]) -> Vec<Pass> {
    let mut out: Vec<Pass> = Vec::new();
    for lang in LANGUAGES {
        if !found.iter().any(|(l, files)| std::ptr::eq(*l, lang) && !files.is_empty()) {
            continue;
        }
        let Some(command) = shlex::split(lang.scip_command).filter(|w| !w.is_empty()) else { continue };
        if command.first().and_then(|p| indexer::on_path(p)).is_none() {
            continue;
        }
        match out.iter_mut().find(|p| p.command == command) {
            Some(pass) => pass.langs.push(lang),
            None => out.push(Pass { command, langs: vec![lang], running: false, again: false, waiting: false }),
        }
    }
    out
}

/// The index a pass writes for `lang`, in the project's cache.
pub fn index_of(cache: &Path, lang: &Lang) -> PathBuf {
    cache.join(format!("index.{}.precise.scip", lang.name))
}

/// Runs `command` in `root` and splits what it wrote by language: for each
/// of `langs`, its index (its documents only, build outputs left out).
pub fn run(command: &[String], langs: &[&'static Lang], root: &Path, cache: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let (program, args) = command.split_first().ok_or_else(|| anyhow::anyhow!("no command"))?;
    let name = langs.first().map_or("precise", |l| l.name);
    // What the indexer writes, apart from each language's file being made.
    // (its own name per server: two servers of one project share its cache)
    let partial = cache.join(format!("index.{name}.precise-run.{}.scip", std::process::id()));
    let args = args.iter().map(|a| a.replace("{out}", &partial.to_string_lossy()));
    indexer::run_quiet(std::process::Command::new(program).args(args).current_dir(root), program)?;
    let mut out = Vec::new();
    for lang in langs {
        let file = index_of(cache, lang);
        let part = indexer::partial_of(&file);
        std::fs::copy(&partial, &part)?;
        let ours = |rel: &str| {
            !walk::excluded(root, rel)
                && Path::new(rel).extension().and_then(|e| e.to_str()).is_some_and(|e| lang.extensions.contains(&e))
        };
        indexer::tidy(&part, "", root, &ours)?;
        std::fs::rename(&part, &file)?;
        out.push(file);
    }
    let _ = std::fs::remove_file(&partial);
    Ok(out)
}
