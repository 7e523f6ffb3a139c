//! `signpost --project DIR`: a repository served as its code stands now.
//!
//! The built-in indexer reads its languages (Java, Kotlin, Go, C#, C, C++,
//! Ruby, PHP, Swift and Scala, and Rust, TypeScript, JavaScript and Python
//! outside the projects their SCIP indexers have indexed) on start, in seconds, and again whenever
//! their files change: a watcher on the tree collects changes for a moment,
//! reads the changed files again, resolves the language's part and imports
//! it in this process, and the served graph swaps that part in whole (calls
//! in flight finish on the old graph; ids of symbols that did not change
//! stay the same, as they are digests of their SCIP symbols). Each part is
//! saved in the cache once edits are quiet (`saved.rs`): a restart serves
//! it at once, marks the files changed meanwhile stale, and reads only
//! those again.
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
//!
//! The project as it opens is here: its parts chosen (a SCIP indexer runs
//! only on a trusted tree), the first index built and waited for.
//! `parts.rs` names the parts and their index files in the cache;
//! `watch.rs` follows the tree and reads what changes (`dirs.rs` watches
//! its directories); `passes.rs` runs the built-in languages' precise
//! passes.

mod dirs;
mod edit;
mod first;
mod freed;
mod parts;
mod passes;
mod saved;
mod trusted;
mod watch;
mod whole;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use first::{First, Landing};
use signpost_graph::indexer;
use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::walk::{self, WalkOptions};
use signpost_treesitter::{Indexed, Workspace};

use crate::live_graph::LiveGraph;
use crate::precise;
use crate::trust::Trust;
pub use parts::{default_cache, index_scip_part, part_name, scip_roots, uncovered};
use parts::{has_index, write_whole};
use trusted::trusted_indexers;
use watch::changed_while_stopped;

/// How long a start waits for the built-in indexer's first index before
/// it serves what is ready (and the rest swaps in when done); no longer
/// once a large part has sent its first files' definitions.
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

/// A language's part read while the first index is built.
struct Early {
    indexed: Indexed,
    /// Its definitions alone (false), or the whole part.
    whole: bool,
    /// The part, imported already on the thread that read it: there the
    /// import runs before the uses resolve (definitions) or the next
    /// language's reading (the whole part) takes both cores, where on the
    /// project's thread it ran beside them, 2.5 times slower on Kafka and
    /// at both one's and the other's peak (BENCHMARKS.md, issue 47 sixth
    /// and thirty-seventh parts). The definitions' index is then left
    /// empty; a whole part's is kept for its memo.
    graph: Option<std::sync::Arc<signpost_graph::Graph>>,
}

/// A built-in language's part, imported as the graph it serves.
fn imported(indexed: &Indexed) -> Result<std::sync::Arc<signpost_graph::Graph>, signpost_graph::GraphError> {
    let opts = signpost_graph::scip::Options { name: indexed.lang.name.to_owned() };
    match &indexed.encoded {
        // Decoded a document at a time.
        Some(encoded) => signpost_graph::scip::import_encoded(encoded, &opts),
        None => signpost_graph::scip::import_index(&indexed.index, &opts),
    }
    .map(std::sync::Arc::new)
}

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
    /// The first index, built in the background past [`Options::first_wait`]:
    /// all of it, or (a restart's) each language as it is read again.
    FirstIndex(Landing),
    /// While the first index is built in the background, a language's
    /// part as soon as it is read: its definitions alone, then the whole
    /// part, each served at once.
    Early(Box<Early>),
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
    /// those of `stopped` and `restored_stale`.
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
    first: Option<(mpsc::Receiver<Landing>, Instant, usize)>,
    /// Changes heard while the first index was being built: read once
    /// their language lands, or (a file no part knows, a directory) once
    /// the whole index has.
    deferred: Vec<PathBuf>,
    /// The first index is being built in the background (watched).
    first_pending: bool,
    /// While the first index is built: when the next part read early may
    /// be merged in. Each merge of a large tree's parts takes about a
    /// second of the project's thread, and the parts land faster than that
    /// ([`Project::early_landed`]): those that land meanwhile are merged
    /// together, at most a third of the time spent merging.
    early_next: Option<std::time::Instant>,
    /// The root was found gone (moved or deleted) and has not been read
    /// since it came back.
    root_was_gone: bool,
    /// Files changed or gone since the last run's saved parts, which serve
    /// until the first index lands, with their language and as the graph
    /// names them: marked stale until their language lands.
    restored_stale: Vec<(&'static str, String)>,
    /// Writes the parts' states for the next start.
    saver: saved::Saver,
    /// Languages served early while the first index is built: whether
    /// whole, or only their definitions so far, and then how many files
    /// those are of and how many are still to read (the definitions of a
    /// large part's first files: [`Workspace::open_early`]).
    early: Vec<(&'static str, bool, (usize, usize))>,
    /// While the first index is built in the background with parts
    /// missing (not when it restores the last run's, which serve
    /// meanwhile): since when, and how many files it reads.
    building_since: Option<(Instant, usize)>,
    /// Each built-in language's part as this process last made it, with
    /// the memo of the index it was imported from: an edit patches it per
    /// file ([`signpost_graph::scip::delta`]) while it is still the part
    /// served.
    served: std::collections::HashMap<&'static str, Served>,
    /// Held while a server loads the last run's parts: the thread that
    /// reads the restored languages again (what an edit needs, not an
    /// answer) starts once it is dropped ([`Project::publish`]), so that
    /// it does not take the cores the first answer needs.
    serving: Option<mpsc::Sender<()>>,
    /// A restart's languages read again that changed since the last run,
    /// not swapped in yet: they land together (`first.rs`, `landing_now`).
    held: First,
    /// While a restart's languages are read again: tells the reader which
    /// one an edit waits for, to read it next.
    wanted: Option<mpsc::Sender<&'static str>>,
    /// What each built-in language's part served at the start holds, when
    /// it is the last run's (or empty): the key of the whole graph saved
    /// from them ([`Project::take_whole`]).
    restored: Vec<(PathBuf, whole::Ident)>,
    /// The whole graph saved is missing or not of the parts restored: the
    /// saver saves one as soon as the graph serves.
    whole_owed: bool,
    /// The restored parts as they served when the project's thread
    /// started (none for one that did not read): each one that still
    /// serves when its language is read again is kept as the part an edit
    /// patches; one that did not read is replaced then.
    restored_parts: Vec<(PathBuf, Option<std::sync::Arc<signpost_graph::Graph>>)>,
}

/// How long a restore waits for the graph to serve at most (a caller that
/// never publishes it still gets its first index).
const SERVE_FIRST: Duration = Duration::from_secs(20);

/// A built-in language's part as this process made it, and what a patch
/// needs of the index it came from.
struct Served {
    graph: std::sync::Arc<signpost_graph::Graph>,
    memo: signpost_graph::scip::Memo,
    /// The generation of the index it was made from
    /// ([`signpost_treesitter::Indexed::generation`]).
    generation: u64,
}

impl Project {
    /// Indexes `root` into `cache` and says which index files to serve.
    pub fn open(root: &Path, cache: &Path, opts: &Options) -> anyhow::Result<Project> {
        let root = std::fs::canonicalize(root).with_context(|| format!("no project directory {}", root.display()))?;
        std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
        let cache = std::fs::canonicalize(cache)?;
        // The first index (or the restored parts' reading) frees as it
        // goes: given back at once until the project is quiet.
        freed::bulk(true);
        let (left, bytes) = indexer::sweep_partials(&cache);
        if left > 0 {
            tracing::info!(files = left, mib = bytes >> 20, "partial files of saves that never finished removed");
        }
        let started = Instant::now();
        // The last run's states are read (from the cache) while the tree is
        // walked, on two threads: both take a restart's first moments.
        // A large part's index waits for its import on disk, in a file of
        // its own that no path names, not in memory.
        let reading = signpost_treesitter::Options { spill: Some(cache.clone()), ..Default::default() };
        let (walked, loaded) = std::thread::scope(|s| {
            let states = s.spawn(|| {
                LANGUAGES.iter().map(|lang| saved::read(&saved::file_of(&cache, lang.name), lang, &reading)).collect()
            });
            let walked = walk::project(&root, &WalkOptions::default(), &crate::indexer::markers());
            let states: Vec<Option<Result<saved::Loaded, String>>> = states.join().unwrap_or_else(|_| {
                LANGUAGES
                    .iter()
                    .map(|_| Some(Err("reading the saved states panicked (a bug in signpost)".into())))
                    .collect()
            });
            (walked, states)
        });
        let walked_ms = started.elapsed().as_millis() as u64;
        tracing::debug!(
            ms = walked_ms,
            files = walked.sources.iter().map(|(_, f)| f.len()).sum::<usize>(),
            "project walked"
        );
        let walk::Walked { sources: found, notes: walk_notes, marked } = walked;
        for note in &walk_notes {
            tracing::info!(note = note.as_str(), "project walk");
        }
        let detected = crate::indexer::projects(&marked);
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
            early_next: None,
            root_was_gone: false,
            restored_stale: Default::default(),
            saver: saved::Saver::start(cache.join(whole::FILE)),
            early: Vec::new(),
            building_since: None,
            served: Default::default(),
            serving: None,
            wanted: None,
            held: Vec::new(),
            restored: Vec::new(),
            whole_owed: false,
            restored_parts: Vec::new(),
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
        // The last run's parts: each one whole, of this build, serves at once
        // (its files changed since are marked stale), and only what changed
        // is read again.
        let states: Vec<Option<saved::State>> = jobs
            .iter()
            .zip(loaded)
            .map(|((lang, files), loaded)| {
                let state = project.saved_state(lang, files, loaded)?;
                // Files a SCIP project's index covers now (it came in after
                // the save): the saved part is not this part any more.
                let covered = |g: &PathBuf| uncovered(lang, std::slice::from_ref(g), &project.scip_roots).is_empty();
                if state.drift.gone.iter().any(covered) {
                    tracing::info!(
                        language = lang.name,
                        "the saved part is not used: a SCIP project's index covers some of its files now"
                    );
                    return None;
                }
                Some(state)
            })
            .collect();
        let all_saved = jobs.iter().zip(&states).all(|((_, files), state)| state.is_some() || files.is_empty());
        let unchanged = all_saved && states.iter().flatten().all(|s| s.drift.is_empty());
        for ((lang, files), state) in jobs.iter().zip(&states) {
            let out = project.built_in_file(lang.name);
            if let Some(state) = state {
                // Left as it is when it holds that snapshot already.
                if !parts::holds(&out, state.snapshot()) {
                    write_whole(&out, state.snapshot())?;
                }
                project.restored.push((out.clone(), state.ident()));
                let moved = state.drift.changed.iter().chain(&state.drift.gone);
                let spelled = moved.filter_map(|p| watch::graph_path(&project.root, &project.cache, p));
                project.restored_stale.extend(spelled.map(|file| (lang.name, file)));
            } else if files.is_empty() {
                write_whole(&out, &empty)?;
                project.restored.push((out.clone(), whole::Ident::EMPTY));
            }
        }
        if all_saved {
            tracing::info!(
                languages = states.iter().flatten().count(),
                changed = project.restored_stale.len(),
                walked_ms,
                ms = started.elapsed().as_millis() as u64,
                "the last run's parts serve at once; files changed since are read again"
            );
        }
        // One command from a shell serves the saved parts as they are when
        // nothing changed; a server reads them in the background all the
        // same (an edit needs each file's reading).
        if unchanged && opts.first_wait.is_none() {
            let served: Vec<PathBuf> = LANGUAGES.iter().map(|lang| project.built_in_file(lang.name)).collect();
            project.sources.extend(served);
            return project.finish_opening(scip_parts, opts, started);
        }
        // Which languages serve already (restored, or no files): for the
        // parts served while the first index is built.
        let saved_langs: Vec<bool> = states.iter().map(Option::is_some).collect();
        let jobs_files: Vec<(&'static Lang, bool)> = jobs.iter().map(|(l, f)| (*l, f.is_empty())).collect();
        // Past the wait, a server answers from each language's definitions
        // as soon as its files are read, then from its whole part.
        let early = (opts.first_wait.is_some() && !all_saved).then(|| project.events.clone());
        // Set once a large part sends its first files' definitions: the
        // first index will not be done within the wait, which ends then.
        let large = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let heard_large = large.clone();
        let (done, built) = mpsc::channel();
        // A server answers from the restored parts at once: they are read
        // again once they serve (a sender dropped at once lets it go now),
        // each language landing as soon as it is read, those an edit waits
        // for first.
        let (go, gate) = mpsc::channel::<()>();
        let (want, wanted) = mpsc::channel();
        let gated = all_saved && opts.first_wait.is_some();
        project.serving = gated.then_some(go);
        project.wanted = gated.then_some(want);
        let read = first::Read { at: root.clone(), reading, early, large };
        let reader = first::Reader { read, gate, wanted: gated.then_some(wanted) };
        reader.spawn(jobs.into_iter().zip(states).collect(), done)?;
        // Saved parts serve at once; otherwise the first index is waited
        // for a moment, until a large part's first files are served.
        let wait = if all_saved { Some(Duration::ZERO) } else { opts.first_wait };
        let waited = match wait.filter(|_| opts.first_wait.is_some()) {
            Some(wait) => {
                let until = Instant::now() + wait;
                loop {
                    let left = until.saturating_duration_since(Instant::now());
                    match built.recv_timeout(left.min(Duration::from_millis(20))) {
                        Err(mpsc::RecvTimeoutError::Timeout)
                            if !left.is_zero() && !heard_large.load(std::sync::atomic::Ordering::Acquire) => {}
                        waited => break waited,
                    }
                }
            }
            None => built.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match waited {
            Ok(first) => {
                let first = first::whole(first, &built).context("the built-in indexer stopped (a bug in signpost)")?;
                // Parts sent to be served early (none when no wait was
                // given) are written like the others: nothing serves them.
                let mut sent: Vec<Indexed> = Vec::new();
                if let Some(heard) = &project.heard {
                    for event in heard.try_iter() {
                        if let Event::Early(early) = event
                            && early.whole
                        {
                            sent.push(early.indexed);
                        }
                    }
                }
                for first::Language { ws, indexed, serves } in first {
                    let out = project.built_in_file(indexed.lang.name);
                    if let Some(at) = sent.iter().position(|e| std::ptr::eq(e.lang, indexed.lang)) {
                        project.write(&out, &ws, &sent.swap_remove(at))?;
                        project.restored.retain(|(p, _)| *p != out);
                    } else if !serves {
                        project.write(&out, &ws, &indexed)?;
                        project.restored.retain(|(p, _)| *p != out);
                    }
                    project.notes.push((indexed.lang.name.to_owned(), indexed.report.notes.clone()));
                    project.sources.push(out);
                    project.parts.push(ws);
                }
                project.restored_stale.clear();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Parts restored or empty already serve; the others start
                // empty.
                for ((lang, files), state) in jobs_files.iter().zip(&saved_langs) {
                    let out = project.built_in_file(lang.name);
                    if !state && !files {
                        write_whole(&out, &empty)?;
                    }
                    project.sources.push(out);
                }
                tracing::info!(
                    files,
                    waited_ms = started.elapsed().as_millis() as u64,
                    "the first index is still being built: serving what is ready, the rest swaps in when done"
                );
                project.first = Some((built, started, files));
                project.building_since = (!all_saved).then_some((started, files));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the built-in indexer stopped (a bug in signpost)")
            }
        }
        project.finish_opening(scip_parts, opts, started)
    }

    /// The SCIP projects' parts and the precise passes, started; the log
    /// line that the project is open.
    fn finish_opening(
        mut self,
        scip_parts: Vec<(indexer::Language, PathBuf)>,
        opts: &Options,
        started: Instant,
    ) -> anyhow::Result<Project> {
        let (root, cache) = (self.root.clone(), self.cache.clone());
        let project = &mut self;
        let empty = signpost_treesitter::emit::empty(&root)?;
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
        Ok(self)
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
        self.cache.join(format!("index.{lang}.tree-sitter.snapshot"))
    }

    /// Writes `indexed` (of `ws`) as the part served from `out`, a
    /// snapshot (loaded by reading), and saves it for the next start.
    fn write(&mut self, out: &Path, ws: &Workspace, indexed: &Indexed) -> anyhow::Result<()> {
        let r = &indexed.report;
        for note in r.notes.iter().take(20) {
            tracing::info!(note = note.as_str(), "indexing");
        }
        tracing::debug!(language = indexed.lang.name, files = r.files, ms = r.elapsed.as_millis() as u64, "indexed");
        let graph = imported(indexed)?;
        parts::write_streamed_as(out, 0o666, |file| Ok(signpost_graph::snapshot::write_to(&graph, file)?))?;
        self.save(ws, graph.clone());
        self.keep_served(indexed, graph);
        Ok(())
    }

    /// Keeps `graph`, imported from `indexed`, as the part an edit of its
    /// language patches.
    fn keep_served(&mut self, indexed: &Indexed, graph: std::sync::Arc<signpost_graph::Graph>) {
        let memo = match &indexed.encoded {
            Some(encoded) => match signpost_graph::scip::Memo::of_encoded(encoded) {
                Ok(memo) => memo,
                // (the import read these bytes: they decode)
                Err(e) => {
                    tracing::warn!(language = indexed.lang.name, error = %e, "no memo of the index: the next edit imports the part whole");
                    self.served.remove(indexed.lang.name);
                    return;
                }
            },
            None => signpost_graph::scip::Memo::of(&indexed.index),
        };
        self.served.insert(indexed.lang.name, Served { graph, memo, generation: indexed.generation });
    }

    /// The parts this process built and wrote to their sources, to serve
    /// as they are rather than read back ([`crate::LiveGraph::open_with`]).
    pub fn built(&self) -> Vec<(PathBuf, std::sync::Arc<signpost_graph::Graph>)> {
        self.served.iter().map(|(lang, s)| (self.built_in_file(lang), s.graph.clone())).collect()
    }

    /// Says in `graphs`' status what the start found: notes by topic, and
    /// whether the first index is still being built. (`watch` does it too.)
    pub fn publish(&mut self, graphs: &LiveGraph) {
        // The graph serves: the restored languages are read again now.
        self.serving = None;
        for (topic, notes) in self.notes.drain(..) {
            graphs.set_notes(&topic, notes);
        }
        if self.building_since.is_some() {
            graphs.set_building(Some(self.building()));
        }
    }

    /// What `signpost://graph` and every answer say while the first index
    /// is built: how far it is, and that an answer may not be final.
    fn building(&self) -> String {
        let (files, secs) = self.building_since.map_or((0, 0.0), |(s, f)| (f, s.elapsed().as_secs_f64()));
        let langs = |whole: bool, part: bool| -> Vec<String> {
            let early = self.early.iter().filter(|(_, w, (_, left))| *w == whole && (*left > 0) == part);
            early
                .map(
                    |(l, _, (read, left))| {
                        if part { format!("{l}'s first {read} of {} files", read + left) } else { l.to_string() }
                    },
                )
                .collect()
        };
        let (whole, defs, first) = (langs(true, false), langs(false, false), langs(false, true));
        let mut served = Vec::new();
        if !whole.is_empty() {
            served.push(format!("{} served whole", whole.join(", ")));
        }
        if !defs.is_empty() {
            served
                .push(format!("the definitions of {} served, their callers and other edges not yet", defs.join(", ")));
        }
        if !first.is_empty() {
            served.push(format!("the definitions in {} served, the rest being read", first.join(", ")));
        }
        if served.is_empty() {
            served.push("nothing served yet".to_owned());
        }
        let served = served.join("; ");
        format!(
            "the project's first index is still being built ({files} file(s), started {secs:.0} s ago; {served}): \
             an answer that finds nothing, or no callers, may not be final; the rest swaps in when done"
        )
    }
}
