//! `signpost --project DIR`: a repository served as its code stands now.
//!
//! The built-in indexer reads its languages (Java, Kotlin, Go, C#, C, C++,
//! Ruby, PHP, Swift and Scala, and Rust, TypeScript, JavaScript and Python
//! outside the projects their SCIP indexers have indexed) on start, in seconds, and again whenever
//! their files change: a watcher on the tree collects changes for a moment,
//! reads the changed files again, resolves the language's part and imports
//! it in this process, and the served graph swaps that part in whole (calls
//! in flight finish on the old graph; ids of symbols that did not change
//! stay the same, as they are digests of their SCIP symbols). Edits are not
//! written to the cache: a restart indexes again.
//!
//! A project of a SCIP indexer's (Rust, TypeScript, Python) starts from
//! that indexer's index of the last run, while the indexer runs again in
//! the background; its new index swaps in whole when done. Without an index
//! of the last run, the built-in indexer reads the project's files
//! meanwhile, in seconds, and gives them up to the SCIP index when it comes
//! in. Its files that changed after the last run's index was written, or
//! that it holds and are gone (while Signpost was stopped), are marked
//! stale until the new index swaps in.
//!
//! The index files live in a cache directory, not in the project:
//! `$XDG_CACHE_HOME/signpost/projects/<name>-<hash of the path>/`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use signpost_graph::{indexer, tree};
use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::walk::{self, WalkOptions};
use signpost_treesitter::{Indexed, Workspace};

use crate::live_graph::LiveGraph;
use crate::precise;
use crate::trust::Trust;

/// How long a start waits for the built-in indexer's first index before
/// it serves what is ready (and the rest swaps in when done).
pub const FIRST_WAIT: Duration = Duration::from_secs(3);

/// How to serve a project.
#[derive(Debug, Clone)]
pub struct Options {
    /// Whether the tree's own code may run: its SCIP indexers build it
    /// ([`crate::trust`]).
    pub trust: Trust,
    /// How long the start waits for the first index (none: until it is
    /// done). Past it, the graph answers from what is ready, says that it
    /// is still building, and the rest swaps in when done.
    pub first_wait: Option<Duration>,
    /// Run the SCIP indexers of a trusted tree in the background (a server
    /// does; one command from a shell, which ends at once, does not: it
    /// serves the index of their last run, if any).
    pub background: bool,
    /// Languages the built-in indexer reads whatever their SCIP indexer,
    /// each with why (`--indexer rust=builtin`, the configuration).
    pub builtin: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options { trust: Trust::untrusted(), first_wait: Some(FIRST_WAIT), background: true, builtin: Vec::new() }
    }
}

/// The built-in indexer's first index: each language's part.
type First = Vec<(Workspace, Indexed)>;

/// How long the tree must be quiet before changes are read: an editor's
/// save (write, rename, chmod) is one change.
const QUIET: Duration = Duration::from_millis(80);

/// Longest a batch of changes stays open while changes keep coming (a
/// code generator, a formatter over the tree): edits are read at least
/// this often.
const MAX_BATCH: Duration = Duration::from_secs(1);

/// What the project's thread hears about.
enum Event {
    /// A path under the root changed (the watcher).
    Changed(PathBuf),
    /// The SCIP indexer of a project (language, directory) wrote its index:
    /// its files are that index's from now on.
    Indexed(String, PathBuf),
    /// A precise pass ([`crate::precise`]) ended: each language's index, or
    /// why there is none; `generations` are its languages' edit counts
    /// when it started.
    Precise { pass: usize, generations: Vec<u64>, result: Result<Vec<PathBuf>, String> },
    /// The built-in languages' files have been quiet since their edit
    /// counts were `generations`: a precise pass may run again.
    Quiet { pass: usize, generations: Vec<u64> },
    /// The first index, built in the background past [`Options::first_wait`].
    FirstIndex(First),
    /// The watcher is in place: whatever changed while the first index
    /// read the tree (before anything watched it) is read again.
    CatchUp,
}

/// A project being served.
pub struct Project {
    root: PathBuf,
    cache: PathBuf,
    parts: Vec<Workspace>,
    sources: Vec<PathBuf>,
    /// The SCIP projects (language, directory) whose index is served: a
    /// built-in language's files inside one of the same language are its
    /// indexer's. One whose indexer has not written an index yet is not
    /// here, and the built-in indexer reads its files meanwhile.
    scip_roots: Vec<(String, PathBuf)>,
    events: mpsc::Sender<Event>,
    heard: Option<mpsc::Receiver<Event>>,
    /// Files of each SCIP project served from the last run's index that
    /// changed after that index was written (while Signpost was stopped):
    /// stale until the project's new index swaps in.
    stopped: Vec<((String, PathBuf), Vec<String>)>,
    /// The change number after which the watcher's marks are newer than
    /// those of `stopped`.
    stopped_seen: u64,
    /// The built-in languages' precise passes: their SCIP indexers found
    /// on PATH.
    precise: Vec<precise::Pass>,
    /// How many times each built-in language's part was read again after an
    /// edit: a precise index of older files is not swapped in.
    edits: std::collections::HashMap<&'static str, u64>,
    /// Notes for `signpost://graph`, by topic, until the graph is served.
    notes: Vec<(String, Vec<String>)>,
    /// The first index, still being built in the background.
    first: Option<(mpsc::Receiver<First>, Instant, usize)>,
    /// Changes heard while the first index was being built: read once it
    /// lands.
    deferred: Vec<PathBuf>,
    /// The first index is being built in the background (watched).
    first_pending: bool,
    /// The root was found gone (moved or deleted) and has not been read
    /// since it came back.
    root_was_gone: bool,
}

/// `files` of `lang` that no SCIP project of the same language covers
/// (`scip_roots`: each project's language name and directory).
pub fn uncovered(lang: &Lang, files: &[PathBuf], scip_roots: &[(String, PathBuf)]) -> Vec<PathBuf> {
    files.iter().filter(|f| !scip_roots.iter().any(|(l, r)| l == lang.name && f.starts_with(r))).cloned().collect()
}

/// The language name and directory of each SCIP project, as
/// [`uncovered`] reads them.
pub fn scip_roots(projects: &[(indexer::Language, PathBuf)]) -> Vec<(String, PathBuf)> {
    projects.iter().map(|(l, d)| (l.name().to_owned(), d.clone())).collect()
}

/// Not in signpost's cache, not in `.git`.
fn outside(cache: &Path, p: &Path) -> bool {
    !p.starts_with(cache) && !p.components().any(|c| c.as_os_str() == ".git")
}

/// Whether a change at `p` can change what is served: a file the built-in
/// indexer reads (or one naming its modules), a directory (created or
/// moved in: a walk finds its files, some written before its watch was),
/// or a path gone (a file, or a whole directory deleted or moved out).
/// Never the cache, `.git`, or anything in a directory the walk skips; a
/// log or a build output written all the time is no change: it must not
/// hold a batch open.
fn worth_reading(root: &Path, cache: &Path, p: &Path) -> bool {
    let Ok(rel) = p.strip_prefix(root) else { return false };
    if !outside(cache, p) || walk::in_skipped_dir(&rel.to_string_lossy().replace('\\', "/")) {
        return false;
    }
    signpost_treesitter::languages::of_path(p).is_some()
        || signpost_treesitter::is_module_marker(p)
        || is_ignore_file(p)
        || p.is_dir()
        || !p.exists()
}

/// An ignore file (`.gitignore`, `.ignore`): a change to one can add
/// files to what is served, or take some out.
fn is_ignore_file(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == ".gitignore" || n == ".ignore")
}

/// Watches each of `dirs`, not recursively (the walk chose them: no build
/// output, dependency, hidden directory or symlink). One that cannot be
/// watched (unreadable, or past the system's limit of watches) is logged
/// and left out, and the others are watched: how many were left out.
fn watch_dirs(watcher: &mut impl notify::Watcher, dirs: &[PathBuf]) -> usize {
    const LOGGED: usize = 5;
    let mut failed = 0;
    for dir in dirs {
        if let Err(e) = watcher.watch(dir, notify::RecursiveMode::NonRecursive) {
            failed += 1;
            if failed <= LOGGED {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch a directory of the project: edits in it are not followed");
            }
        }
    }
    if failed > LOGGED {
        tracing::warn!(failed, "directories of the project not watched in all");
    }
    failed
}

/// Extensions of the files SCIP indexers read and the watcher does not
/// re-index (their projects are indexed once, in the background).
const SCIP_EXTENSIONS: &[&str] = &["rs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "py", "pyi"];

/// A changed source file as the graph names it (relative to the project
/// root, `/`-separated), if it is one: what `describe` marks as changed
/// since indexed. Told by its name alone (no file is opened: the
/// watcher's thread calls it).
fn graph_path(root: &Path, cache: &Path, p: &Path) -> Option<String> {
    let ext = p.extension()?.to_str()?;
    let known = SCIP_EXTENSIONS.contains(&ext) || signpost_treesitter::languages::of_path(p).is_some();
    let rel = tree::spell(p.strip_prefix(root).ok()?);
    // Build outputs, dependencies and generated files are not the graph's.
    let dir = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
    (known && outside(cache, p) && !walk::in_skipped_dir(dir) && !walk::is_generated_name(root, p)).then_some(rel)
}

/// For each SCIP project served from the last run's index (`ready`), its
/// files (those of its language the walk `found` under its directory) that
/// changed after that index was written, as the graph names them.
fn changed_while_stopped(
    project: &Project,
    ready: &[(indexer::Language, PathBuf)],
    found: &[(&'static Lang, Vec<PathBuf>)],
) -> Vec<((String, PathBuf), Vec<String>)> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut out = Vec::new();
    for (lang, dir) in ready {
        let Some(written) = modified(&project.file_of(&part_name(lang.name(), dir, &project.root))) else { continue };
        let files: Vec<String> = found
            .iter()
            .filter(|(l, _)| l.name == lang.name())
            .flat_map(|(_, files)| files)
            .filter(|f| f.starts_with(dir) && modified(f).is_some_and(|m| m > written))
            .filter_map(|f| graph_path(&project.root, &project.cache, f))
            .collect();
        if !files.is_empty() {
            tracing::info!(
                language = lang.name(),
                dir = %dir.display(),
                files = files.len(),
                "files changed since the last index: stale until the new one swaps in"
            );
            out.push(((lang.name().to_owned(), dir.clone()), files));
        }
    }
    out
}

/// Where a project's index files go by default.
pub fn default_cache(root: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "root".into());
    let name: String =
        name.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    base.join("signpost").join("projects").join(format!("{name}-{hash}"))
}

/// The SCIP-indexed projects under `root` (a workspace of several, or one
/// at its top), by their marker files.
pub fn scip_projects(root: &Path) -> Vec<(indexer::Language, PathBuf)> {
    indexer::projects(&walk::marked(root, &indexer::markers()))
}

/// What a part of the workspace under `root` is called: its language, and
/// its directory when it is not the root (`python.services-api`).
pub fn part_name(lang: &str, dir: &Path, root: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().replace(['/', '\\'], "-");
    if rel.is_empty() { lang.to_owned() } else { format!("{lang}.{rel}") }
}

/// Runs the SCIP indexer of `lang` on the project at `dir` (inside the
/// workspace `root`) into `partial`, then rewrites it for the workspace:
/// paths relative to `root`, build outputs and generated files (a `.d.ts`
/// beside its `.ts`, anything under `dist/`, `node_modules/`, …) left out.
/// Returns how many documents were left out.
pub fn index_scip_part(
    lang: indexer::Language,
    dir: &Path,
    root: &Path,
    partial: &Path,
    opts: &indexer::Options,
) -> anyhow::Result<usize> {
    indexer::index(lang, dir, partial, opts)?;
    let prefix = dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().replace('\\', "/");
    indexer::tidy(partial, &prefix, root, &|rel| !walk::excluded(root, rel))
}

/// The SCIP projects and precise passes that may run on the tree at `root`
/// (all of them when it is trusted, none otherwise), and a note for each
/// indexer that may not, saying what it would run and how to opt in.
fn trusted_indexers(
    opts: &Options,
    root: &Path,
    detected: Vec<(indexer::Language, PathBuf)>,
    found: &[(&'static Lang, Vec<PathBuf>)],
) -> (Vec<(indexer::Language, PathBuf)>, Vec<precise::Pass>, Vec<String>) {
    let trust = &opts.trust;
    let chosen = |lang: &str| opts.builtin.iter().find(|(l, _)| l == lang).map(|(_, why)| why.as_str());
    let mut notes = Vec::new();
    // Languages the operator gives the built-in indexer: their SCIP
    // indexers never run, trusted or not.
    for lang in indexer::LANGUAGES {
        if let Some(why) = chosen(lang.name())
            && detected.iter().any(|(l, _)| *l == lang)
        {
            notes.push(format!("{} is read by the built-in indexer, not {} ({why})", lang.name(), lang.program()));
        }
    }
    let detected: Vec<_> = detected.into_iter().filter(|(l, _)| chosen(l.name()).is_none()).collect();
    let passes: Vec<precise::Pass> = precise::passes(found)
        .into_iter()
        .filter(|p| {
            let all_chosen = p.langs.iter().all(|l| chosen(l.name).is_some());
            if all_chosen {
                let program = p.command.first().map_or("", String::as_str);
                notes.push(format!("{program} is not run: the built-in indexer reads its languages (chosen)"));
            }
            !all_chosen
        })
        .collect();
    if trust.trusted {
        return (detected, passes, notes);
    }
    for lang in indexer::LANGUAGES {
        if detected.iter().any(|(l, _)| *l == lang) {
            notes.push(trust.not_run(lang.program(), lang.reaches(), root));
        }
    }
    for pass in &passes {
        let program = pass.command.first().map_or("", String::as_str);
        notes.push(trust.not_run(program, precise::reaches(program), root));
    }
    (Vec::new(), Vec::new(), notes)
}

/// Whether `path` holds an index other than `empty` (the placeholder a
/// SCIP project's part starts from): its indexer's, from an earlier run.
fn has_index(path: &Path, empty: &[u8]) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.len() != empty.len() as u64 => m.is_file(),
        Ok(_) => std::fs::read(path).is_ok_and(|b| b != empty),
        Err(_) => false,
    }
}

/// Writes `bytes` beside `path` and renames it into place: a watcher of
/// `path` only ever sees a whole file.
fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let partial = indexer::partial_of(path);
    std::fs::write(&partial, bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

impl Project {
    /// Indexes `root` into `cache` and says which index files to serve.
    pub fn open(root: &Path, cache: &Path, opts: &Options) -> anyhow::Result<Project> {
        let root = std::fs::canonicalize(root).with_context(|| format!("no project directory {}", root.display()))?;
        std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
        let cache = std::fs::canonicalize(cache)?;
        let started = Instant::now();
        let (found, walk_notes) = walk::sources(&root, &WalkOptions::default());
        for note in &walk_notes {
            tracing::info!(note = note.as_str(), "project walk");
        }
        let detected = scip_projects(&root);
        if found.is_empty() && detected.is_empty() {
            anyhow::bail!(
                "nothing to serve in {}: no Cargo.toml, package.json, tsconfig.json, pyproject.toml, setup.py or \
                 requirements.txt under it, and no Java, Kotlin, Go, C#, C, C++, Ruby, PHP, Swift, Scala or Python \
                 files",
                root.display()
            );
        }
        // The SCIP indexers build the project (they run its code): only on
        // a trusted tree. Otherwise the built-in indexer reads their
        // languages too, and a note says which did not run and why.
        let (scip_parts, precise, trust_notes) = trusted_indexers(opts, &root, detected, &found);
        tracing::info!(root = %root.display(), trust = opts.trust.because.as_str(), "project");
        for note in &trust_notes {
            tracing::info!(note = note.as_str(), "project trust");
        }
        let (events, heard) = mpsc::channel();
        let mut project = Project {
            root: root.clone(),
            cache: cache.clone(),
            parts: Vec::new(),
            sources: Vec::new(),
            scip_roots: Vec::new(),
            events,
            heard: Some(heard),
            stopped: Vec::new(),
            stopped_seen: 0,
            precise,
            edits: std::collections::HashMap::new(),
            notes: vec![("trust".into(), trust_notes), ("walk".into(), walk_notes)],
            first: None,
            deferred: Vec::new(),
            first_pending: false,
            root_was_gone: false,
        };
        // A SCIP project with an index from the last run serves it (and its
        // indexer runs again in the background); one without is read by
        // the built-in indexer, in seconds, until its indexer is done.
        let empty = signpost_treesitter::emit::empty(&root)?;
        let ready: Vec<(indexer::Language, PathBuf)> = scip_parts
            .iter()
            .filter(|(lang, dir)| has_index(&project.file_of(&part_name(lang.name(), dir, &root)), &empty))
            .cloned()
            .collect();
        project.scip_roots = scip_roots(&ready);
        project.stopped = changed_while_stopped(&project, &ready, &found);
        // Every language of the built-in indexer has its file, empty when the
        // project has none of it yet: a first file of it shows up live. The
        // first index is built in the background and waited for a moment:
        // past it, the server answers from what is ready.
        let jobs: Vec<(&'static Lang, Vec<PathBuf>)> = LANGUAGES
            .iter()
            .map(|lang| {
                let files = found.iter().find(|(l, _)| std::ptr::eq(*l, lang)).map(|(_, f)| f.as_slice());
                (lang, uncovered(lang, files.unwrap_or_default(), &project.scip_roots))
            })
            .collect();
        let files: usize = jobs.iter().map(|(_, f)| f.len()).sum();
        let (done, built) = mpsc::channel();
        let at = root.clone();
        std::thread::Builder::new().name("signpost-first-index".into()).spawn(move || {
            let opts = signpost_treesitter::Options::default();
            let first: First =
                jobs.into_iter().map(|(lang, files)| Workspace::open(&at, lang, &files, &opts)).collect();
            let _ = done.send(first);
        })?;
        let waited = match opts.first_wait {
            Some(wait) => built.recv_timeout(wait),
            None => built.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match waited {
            Ok(first) => {
                for (ws, indexed) in first {
                    let out = project.built_in_file(indexed.lang.name);
                    project.write(&out, &indexed)?;
                    project.notes.push((indexed.lang.name.to_owned(), indexed.report.notes.clone()));
                    project.sources.push(out);
                    project.parts.push(ws);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                for lang in LANGUAGES {
                    let out = project.built_in_file(lang.name);
                    write_whole(&out, &empty)?;
                    project.sources.push(out);
                }
                tracing::info!(
                    files,
                    waited_ms = started.elapsed().as_millis() as u64,
                    "the first index is still being built: serving what is ready, the rest swaps in when done"
                );
                project.first = Some((built, started, files));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the built-in indexer stopped (a bug in signpost)")
            }
        }
        for (lang, dir) in scip_parts {
            let out = project.file_of(&part_name(lang.name(), &dir, &root));
            if !out.is_file() {
                write_whole(&out, &empty)?;
            }
            project.sources.push(out.clone());
            if !opts.background {
                continue;
            }
            let root = root.clone();
            let events = project.events.clone();
            // The precise pass: swapped in whole by the graph's watcher.
            std::thread::spawn(move || {
                let partial = indexer::partial_of(&out);
                let started = Instant::now();
                let result = index_scip_part(lang, &dir, &root, &partial, &indexer::Options::default())
                    .and_then(|_| Ok(std::fs::rename(&partial, &out)?));
                match result {
                    Ok(()) => {
                        tracing::info!(
                            language = lang.name(),
                            dir = %dir.display(),
                            secs = started.elapsed().as_secs_f64(),
                            "the SCIP indexer's index swaps in"
                        );
                        let _ = events.send(Event::Indexed(lang.name().to_owned(), dir));
                    }
                    Err(e) => {
                        let _ = std::fs::remove_file(&partial);
                        tracing::warn!(
                            language = lang.name(),
                            dir = %dir.display(),
                            error = %e,
                            "the SCIP indexer failed; the project is served from its last index, if any"
                        )
                    }
                }
            });
        }
        // The precise passes start now, in the background.
        for i in (0..project.precise.len()).filter(|_| opts.background) {
            project.start_precise(i);
        }
        tracing::info!(
            root = %root.display(),
            cache = %cache.display(),
            ms = started.elapsed().as_millis() as u64,
            "{}",
            if project.first.is_some() { "project opened (its first index is still being built)" } else { "project indexed" }
        );
        Ok(project)
    }

    /// The index files to serve.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// The index file of a SCIP project's part (`python`, `python.api`).
    fn file_of(&self, part: &str) -> PathBuf {
        self.cache.join(format!("index.{part}.scip"))
    }

    /// The index file of a language's part read by the built-in indexer:
    /// a name of its own, so that it never is a SCIP project's at the root.
    fn built_in_file(&self, lang: &str) -> PathBuf {
        self.cache.join(format!("index.{lang}.tree-sitter.scip"))
    }

    fn write(&self, out: &Path, indexed: &Indexed) -> anyhow::Result<()> {
        let r = &indexed.report;
        for note in r.notes.iter().take(20) {
            tracing::info!(note = note.as_str(), "indexing");
        }
        tracing::debug!(language = indexed.lang.name, files = r.files, ms = r.elapsed.as_millis() as u64, "indexed");
        write_whole(out, &indexed.to_bytes()?)
    }

    /// Says in `graphs`' status what the start found: notes by topic, and
    /// whether the first index is still being built. (`watch` does it too.)
    pub fn publish(&mut self, graphs: &LiveGraph) {
        for (topic, notes) in self.notes.drain(..) {
            graphs.set_notes(&topic, notes);
        }
        if let Some((_, started, files)) = &self.first {
            graphs.set_building(Some(format!(
                "the built-in indexer is reading {files} file(s) (started {:.0} s ago); answers come from what is \
                 ready, and the rest swaps in when done",
                started.elapsed().as_secs_f64()
            )));
        }
    }

    /// Watches the tree and re-indexes what changes into `graphs`, on a
    /// thread of its own for the life of the process.
    pub fn watch(mut self, graphs: std::sync::Arc<LiveGraph>) -> anyhow::Result<()> {
        use notify::{RecursiveMode, Watcher};
        let (tx, rx) = (self.events.clone(), self.heard.take().context("the project is watched once")?);
        self.publish(&graphs);
        // What changed while Signpost was stopped is stale from the start:
        // files modified since their index was written, and files the
        // served graph holds that are gone.
        self.gone_while_stopped(&graphs.current());
        for file in self.stopped.iter().flat_map(|(_, files)| files) {
            graphs.mark_changed(file.clone());
        }
        self.stopped_seen = graphs.changes_seen();
        let (root, cache, marks) = (self.root.clone(), self.cache.clone(), graphs.clone());
        // The watcher's own thread only looks at names and file types: it
        // opens nothing (a FIFO, or a link to one, would hold it for good);
        // files are read on the project's thread, through `tree`.
        let handler = move |event: notify::Result<notify::Event>| {
            if let Ok(event) = event
                && !event.kind.is_access()
            {
                for p in event.paths.into_iter().filter(|p| worth_reading(&root, &cache, p)) {
                    // Marked at once, so `describe` says so while the
                    // re-index waits for the writes to settle.
                    if let Some(file) = graph_path(&root, &cache, &p) {
                        marks.mark_changed(file);
                    }
                    let _ = tx.send(Event::Changed(p));
                }
            }
        };
        // Each directory the walk goes into, watched on its own: not the
        // build outputs and dependencies a recursive watch would take
        // (thousands of watches under `node_modules`, events all through a
        // build), nor a tree a symlink leads to; and one unreadable
        // directory costs its own edits, not the whole watch.
        let mut watcher =
            notify::RecommendedWatcher::new(handler, notify::Config::default().with_follow_symlinks(false))?;
        watcher
            .watch(&self.root, RecursiveMode::NonRecursive)
            .with_context(|| format!("watching {}", self.root.display()))?;
        let dirs = walk::directories(&self.root);
        let unwatched = watch_dirs(&mut watcher, dirs.get(1..).unwrap_or_default());
        tracing::info!(root = %self.root.display(), directories = dirs.len() - unwatched, unwatched, "watching the project's sources");
        // Now that everything is watched, what changed while the first
        // index read the tree (and nothing watched it) is looked for; the
        // first index itself, when still being built, lands as an event.
        match self.first.take() {
            Some((built, _, _)) => {
                let events = self.events.clone();
                std::thread::Builder::new().name("signpost-first-index-wait".into()).spawn(move || {
                    if let Ok(first) = built.recv() {
                        let _ = events.send(Event::FirstIndex(first));
                    }
                })?;
                self.first_pending = true;
            }
            None => {
                let _ = self.events.send(Event::CatchUp);
            }
        }
        std::thread::Builder::new().name("signpost-project".into()).spawn(move || {
            let mut watcher = watcher;
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                let closes = Instant::now() + MAX_BATCH;
                loop {
                    let left = closes.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    match rx.recv_timeout(QUIET.min(left)) {
                        Ok(e) => batch.push(e),
                        Err(_) => break,
                    }
                }
                // The batch is closed: a change marked from here on is
                // not in it, and stays marked until a later batch.
                let seen = graphs.changes_seen();
                let mut changed = Vec::new();
                let mut covered = false;
                for e in batch {
                    match e {
                        Event::Changed(p) => changed.push(p),
                        Event::Precise { pass, generations, result } => {
                            self.landed(pass, &generations, result, &graphs);
                        }
                        Event::Quiet { pass, generations } => {
                            self.precise[pass].waiting = false;
                            let p = &self.precise[pass];
                            if self.generations(pass) != generations {
                                // Edited since it was armed: wait again.
                                self.when_quiet(pass);
                            } else if p.again && !p.running {
                                self.start_precise(pass);
                            }
                        }
                        Event::Indexed(lang, dir) => {
                            // The new index read the files as they stood when
                            // it started: those that changed while stopped
                            // are current again (unless changed since).
                            let key = (lang.clone(), dir.clone());
                            if let Some(at) = self.stopped.iter().position(|(k, _)| *k == key) {
                                let (_, files) = self.stopped.swap_remove(at);
                                graphs.mark_indexed(self.stopped_seen, |f| files.iter().any(|s| s == f));
                            }
                            if !self.scip_roots.contains(&(lang.clone(), dir.clone())) {
                                self.scip_roots.push((lang, dir));
                                covered = true;
                            }
                        }
                        Event::FirstIndex(first) => {
                            self.first_landed(first, &graphs);
                            changed.append(&mut self.deferred);
                            changed.extend(self.catch_up());
                        }
                        Event::CatchUp => changed.extend(self.catch_up()),
                    }
                }
                if self.first_pending {
                    // Read once the first index lands.
                    self.deferred.append(&mut changed);
                    continue;
                }
                // (every change in it is one the watcher found worth reading)
                if changed.is_empty() && !covered {
                    continue;
                }
                // A root moved or deleted would read as every file deleted:
                // the graph keeps serving as it was, and says why, until
                // the root is back (then read again whole).
                if !self.root_present(&graphs) {
                    self.deferred.clear();
                    continue;
                }
                if std::mem::take(&mut self.root_was_gone) {
                    changed.push(self.root.clone());
                }
                changed.sort();
                changed.dedup();
                // A directory created or moved in is watched, and what is
                // in it already is found by the walk `refresh` makes.
                for dir in changed.iter().filter(|p| p.is_dir()) {
                    watch_dirs(&mut watcher, &walk::directories(dir));
                }
                if let Err(e) = self.refresh(&changed, covered, &graphs, seen) {
                    tracing::warn!(error = %e, "re-indexing the project failed; the previous graph keeps serving");
                }
            }
        })?;
        Ok(())
    }

    /// Whether the project's root is still a directory where it was; when it
    /// is not, the log and `signpost://graph` say so, once each time it goes.
    fn root_present(&mut self, graphs: &LiveGraph) -> bool {
        let present = self.root.is_dir();
        if !present && !self.root_was_gone {
            let why = format!(
                "the project root {} is gone (moved or deleted): the graph is kept as it was, and edits are not \
                 followed until it is back; serve the project where it is now with --project",
                self.root.display()
            );
            tracing::warn!("{why}");
            graphs.set_notes("root", vec![why]);
        } else if present && self.root_was_gone {
            tracing::info!(root = %self.root.display(), "the project root is back: reading it again");
            graphs.set_notes("root", Vec::new());
        }
        self.root_was_gone |= !present;
        present
    }

    /// What to read again once the watcher is in place: the files the first
    /// index read that changed since, and the root (a walk finds files
    /// created meanwhile, and drops those deleted).
    fn catch_up(&self) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = self.parts.iter().flat_map(|w| w.drifted()).collect();
        if !changed.is_empty() {
            tracing::info!(files = changed.len(), "files changed while the first index read them: reading them again");
        }
        changed.push(self.root.clone());
        changed
    }

    /// The first index, built in the background, swaps in.
    fn first_landed(&mut self, first: First, graphs: &LiveGraph) {
        self.first_pending = false;
        for (ws, indexed) in first {
            let opts = signpost_graph::scip::Options { name: indexed.lang.name.to_owned() };
            match signpost_graph::scip::import_index(&indexed.index, &opts) {
                Ok(graph) => {
                    let record = graphs.replace_part(&self.built_in_file(indexed.lang.name), graph);
                    tracing::info!(language = indexed.lang.name, result = record.result, "the first index swaps in");
                }
                Err(e) => tracing::warn!(language = indexed.lang.name, error = %e, "the first index does not load"),
            }
            for note in indexed.report.notes.iter().take(20) {
                tracing::info!(note = note.as_str(), "indexing");
            }
            graphs.set_notes(indexed.lang.name, indexed.report.notes);
            self.parts.push(ws);
        }
        graphs.set_building(None);
    }

    /// Adds to `stopped` the files `graph` holds, in a SCIP project served
    /// from the last run's index, that are no longer there.
    fn gone_while_stopped(&mut self, graph: &signpost_graph::Graph) {
        if self.scip_roots.is_empty() {
            return;
        }
        let mut checked = std::collections::HashSet::new();
        for node in graph.iter() {
            let file = node.file();
            if file.is_empty() || !checked.insert(file) {
                continue;
            }
            let path = self.root.join(tree::unspell(file));
            if path.exists() {
                continue;
            }
            let Some(key) = self.scip_roots.iter().find(|(_, dir)| path.starts_with(dir)).cloned() else { continue };
            match self.stopped.iter_mut().find(|(k, _)| *k == key) {
                Some((_, files)) => files.push(file.to_owned()),
                None => self.stopped.push((key, vec![file.to_owned()])),
            }
        }
    }

    /// Reads the changed files again and swaps in the parts they belong to;
    /// when a SCIP project's index came in (`covered`), its files leave
    /// the built-in indexer's part.
    fn refresh(&mut self, changed: &[PathBuf], covered: bool, graphs: &LiveGraph, seen: u64) -> anyhow::Result<()> {
        let started = Instant::now();
        // Edits to files it knows need no walk; a new or deleted file does.
        let known = !covered && changed.iter().all(|c| c.is_file() && self.parts.iter().any(|w| w.knows(c)));
        let found = if known {
            Vec::new()
        } else {
            let (found, notes) = walk::sources(&self.root, &WalkOptions::default());
            graphs.set_notes("walk", notes);
            found
        };
        let mut updates = Vec::new();
        for ws in &mut self.parts {
            let files = if known {
                ws.files()
            } else {
                let all =
                    found.iter().find(|(l, _)| std::ptr::eq(*l, ws.lang())).map_or(&[][..], |(_, f)| f.as_slice());
                uncovered(ws.lang(), all, &self.scip_roots)
            };
            if let Some(indexed) = ws.update(&files, changed) {
                updates.push(indexed);
            }
        }
        for indexed in &updates {
            *self.edits.entry(indexed.lang.name).or_insert(0) += 1;
            let opts = signpost_graph::scip::Options { name: indexed.lang.name.to_owned() };
            let graph = signpost_graph::scip::import_index(&indexed.index, &opts)?;
            let record = graphs.replace_part(&self.built_in_file(indexed.lang.name), graph);
            graphs.set_notes(indexed.lang.name, indexed.report.notes.clone());
            if record.result == "swapped" {
                // Every file the part holds now, and the changed ones that
                // are gone, is as current as what was read.
                let part = self.parts.iter().find(|w| std::ptr::eq(w.lang(), indexed.lang));
                graphs.mark_indexed(seen, |file| {
                    let path = self.root.join(tree::unspell(file));
                    part.is_some_and(|w| w.knows(&path)) || (changed.contains(&path) && !path.exists())
                });
            }
            tracing::info!(
                language = indexed.lang.name,
                changed = changed.len(),
                result = record.result,
                ms = started.elapsed().as_millis() as u64,
                "re-indexed after a change"
            );
        }
        // A precise pass of an edited language runs again once edits are
        // quiet (and one under way is thrown away when it lands).
        for i in 0..self.precise.len() {
            if self.precise[i].langs.iter().any(|l| updates.iter().any(|u| std::ptr::eq(u.lang, *l))) {
                self.precise[i].again = true;
                self.when_quiet(i);
            }
        }
        Ok(())
    }

    /// Each of pass `i`'s languages' edit count.
    fn generations(&self, i: usize) -> Vec<u64> {
        self.precise[i].langs.iter().map(|l| self.edits.get(l.name).copied().unwrap_or(0)).collect()
    }

    /// Runs precise pass `i` in the background.
    fn start_precise(&mut self, i: usize) {
        let generations = self.generations(i);
        let pass = &mut self.precise[i];
        pass.running = true;
        pass.again = false;
        let (command, langs) = (pass.command.clone(), pass.langs.clone());
        let (root, cache, events) = (self.root.clone(), self.cache.clone(), self.events.clone());
        let what = command.first().cloned().unwrap_or_default();
        tracing::info!(indexer = %what, "the precise pass starts in the background");
        let spawned = std::thread::Builder::new().name("signpost-precise".into()).spawn(move || {
            let result = precise::run(&command, &langs, &root, &cache).map_err(|e| format!("{e:#}"));
            let _ = events.send(Event::Precise { pass: i, generations, result });
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the precise pass could not start");
            self.precise[i].running = false;
        }
    }

    /// Asks for pass `i` to run again once the tree has been quiet for
    /// [`precise::QUIET`] (`SIGNPOST_PRECISE_QUIET_MS` overrides it): one
    /// timer per pass, armed again while edits go on.
    fn when_quiet(&mut self, i: usize) {
        if std::mem::replace(&mut self.precise[i].waiting, true) {
            return;
        }
        let quiet = std::env::var("SIGNPOST_PRECISE_QUIET_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(precise::QUIET, Duration::from_millis);
        let (events, generations) = (self.events.clone(), self.generations(i));
        let _ = std::thread::Builder::new().name("signpost-quiet".into()).spawn(move || {
            std::thread::sleep(quiet);
            let _ = events.send(Event::Quiet { pass: i, generations });
        });
    }

    /// Pass `i` ended: each language whose files did not change while it
    /// ran gets its index in place of the built-in indexer's part.
    fn landed(&mut self, i: usize, generations: &[u64], result: Result<Vec<PathBuf>, String>, graphs: &LiveGraph) {
        self.precise[i].running = false;
        let what = self.precise[i].command.first().cloned().unwrap_or_default();
        let files = match result {
            Ok(files) => files,
            Err(e) => {
                tracing::warn!(indexer = %what, error = %e, "the precise pass failed; the built-in indexer's parts keep serving");
                return;
            }
        };
        let now = self.generations(i);
        let langs = self.precise[i].langs.clone();
        for (((lang, file), then), now) in langs.iter().zip(files).zip(generations).zip(now) {
            if *then != now {
                // Files changed while it ran: its index is of older files.
                self.precise[i].again = true;
                continue;
            }
            let opts = signpost_graph::scip::Options { name: lang.name.to_owned() };
            match signpost_graph::scip::import_file(&file, &opts) {
                Ok(graph) => {
                    let record = graphs.replace_part(&self.built_in_file(lang.name), graph);
                    tracing::info!(language = lang.name, indexer = %what, result = record.result, "the precise pass's index swaps in");
                }
                Err(e) => {
                    tracing::warn!(language = lang.name, indexer = %what, error = %e, "the precise pass's index does not load")
                }
            }
        }
        if self.precise[i].again {
            self.when_quiet(i);
        }
    }
}
