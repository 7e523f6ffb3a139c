//! A project's tree followed while it is served: a watch on each directory
//! the walk goes into, changes collected until the tree is quiet, the
//! changed files read again and their parts swapped into the graph
//! ([`Project::refresh`], `edit.rs`); each change marked in the graph as the watcher
//! sees it, and what changed while Signpost was stopped marked stale from
//! the start.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use signpost_graph::{indexer, tree};
use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::walk;

use super::dirs::{Watching, watch_tree};
use super::parts::part_name;
use super::{Early, Event, Landing, Project};
use crate::live_graph::LiveGraph;

/// How long the tree must be quiet before changes are read, once a batch
/// holds more than one file's changes (a checkout, a formatter over the
/// tree, a refactoring across files): they are read together.
const QUIET: Duration = Duration::from_millis(80);

/// How long it must be quiet while a batch holds one file's changes: an
/// editor's save (write, rename, chmod) comes within a few milliseconds,
/// and every event after the batch closes is read again in the next one,
/// so waiting longer only delays what the agent sees.
const QUIET_ONE: Duration = Duration::from_millis(20);

/// Longest a batch of changes stays open while changes keep coming (a
/// code generator, a formatter over the tree): edits are read at least
/// this often.
const MAX_BATCH: Duration = Duration::from_secs(1);

/// How long the project is quiet (no change, no index landing) before
/// what reading it freed is given back to the system
/// ([`super::freed::release`]).
const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// Whether a batch is one file's changes and nothing else.
fn one_file(batch: &[Event]) -> bool {
    match batch {
        [Event::Changed(p), rest @ ..] => rest.iter().all(|e| matches!(e, Event::Changed(q) if q == p)),
        _ => false,
    }
}

/// Whether `batch` holds parts read early alone.
fn only_early(batch: &[Event]) -> bool {
    batch.iter().all(|e| matches!(e, Event::Early(_)))
}

/// Whether an edit's part is imported whole, never patched
/// (`SIGNPOST_EDITS_WHOLE`): benchmarks compare the two paths in one build
/// (BENCHMARKS.md).
pub(super) fn whole_only() -> bool {
    std::env::var_os("SIGNPOST_EDITS_WHOLE").is_some_and(|v| !v.is_empty())
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

/// Extensions of the files SCIP indexers read and the watcher does not
/// re-index (their projects are indexed once, in the background).
const SCIP_EXTENSIONS: &[&str] = &["rs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "py", "pyi"];

/// A changed source file as the graph names it (relative to the project
/// root, `/`-separated), if it is one: what `describe` marks as changed
/// since indexed. Told by its name alone (no file is opened: the
/// watcher's thread calls it).
pub(super) fn graph_path(root: &Path, cache: &Path, p: &Path) -> Option<String> {
    let ext = p.extension()?.to_str()?;
    let known = SCIP_EXTENSIONS.contains(&ext) || signpost_treesitter::languages::of_path(p).is_some();
    let rel = tree::spell(p.strip_prefix(root).ok()?);
    // Build outputs, dependencies and copies of source are not the graph's.
    let dir = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
    (known && outside(cache, p) && !walk::in_skipped_dir(dir) && !walk::is_copy(root, p)).then_some(rel)
}

/// For each SCIP project served from the last run's index (`ready`), its
/// files (those of its language the walk `found` under its directory) that
/// changed after that index was written, as the graph names them.
pub(super) fn changed_while_stopped(
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

impl Project {
    /// Watches the tree and re-indexes what changes into `graphs`, on a
    /// thread of its own for the life of the process.
    pub fn watch(mut self, graphs: std::sync::Arc<LiveGraph>) -> anyhow::Result<()> {
        use notify::{RecursiveMode, Watcher};
        let (tx, rx) = (self.events.clone(), self.heard.take().context("the project is watched once")?);
        self.publish(&graphs);
        // The whole graph is saved beside the parts when a restart could
        // serve it: every source served a built-in language's part.
        if graphs.sources().iter().all(|s| LANGUAGES.iter().any(|l| self.built_in_file(l.name) == *s)) {
            self.saver.serving(graphs.clone(), self.whole_owed);
        }
        // What changed while Signpost was stopped is stale from the start:
        // files modified since their index was written, and files the
        // served graph holds that are gone.
        self.gone_while_stopped(&graphs.current());
        for file in self.stopped.iter().flat_map(|(_, files)| files) {
            graphs.mark_changed(file.clone());
        }
        // So are the files changed since the saved parts serving now were
        // made, until the first index reads them.
        for (_, file) in &self.restored_stale {
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
        // The first index, when still being built, lands as an event, and
        // so does the look for what changed while it read the tree (and
        // nothing watched it): both are handled on the project's thread,
        // after every directory is watched.
        match self.first.take() {
            Some((built, _, _)) => {
                let events = self.events.clone();
                std::thread::Builder::new().name("signpost-first-index-wait".into()).spawn(move || {
                    loop {
                        let Ok(landing) = built.recv() else {
                            // The reader stopped before its last landing (a
                            // panic): what landed and what is held swap in,
                            // and the edits waiting are read, not held for good.
                            tracing::warn!(
                                "the first index stopped before every language was read (a bug in signpost)"
                            );
                            let _ = events.send(Event::FirstIndex(Landing { parts: Vec::new(), last: true }));
                            break;
                        };
                        let last = landing.last;
                        if events.send(Event::FirstIndex(landing)).is_err() || last {
                            break;
                        }
                    }
                })?;
                self.first_pending = true;
            }
            None => {
                let _ = self.events.send(Event::CatchUp);
            }
        }
        // The directories are watched on a thread of their own, while the
        // server answers already (5,334 directories take 0.4-0.5 s:
        // BENCHMARKS.md) and a large language's first files read early
        // are swapped in; no other event is handled before they all are.
        // But here when a SCIP project's files are followed: what changed
        // while stopped was looked for once, and a change before the watch
        // would be missed.
        let later = self.scip_roots.is_empty() && self.stopped.is_empty();
        if !later {
            watch_tree(&self.root, &mut watcher);
        }
        std::thread::Builder::new().name("signpost-project".into()).spawn(move || {
            let mut watching = Watching::start(watcher, later.then(|| self.root.clone()));
            // The restored parts as they serve before any event.
            let restored: Vec<PathBuf> = self
                .restored
                .iter()
                .filter(|(_, i)| *i != super::whole::Ident::EMPTY)
                .map(|(p, _)| p.clone())
                .collect();
            self.restored_parts = restored.into_iter().map(|p| (p.clone(), graphs.part(&p))).collect();
            let known = self.restored_parts.iter().filter_map(|(p, graph)| {
                let (_, ident) = self.restored.iter().find(|(r, _)| r == p)?;
                Some((graph.clone()?, *ident))
            });
            self.saver.known(known.collect());
            // Whether memory was freed since the project was last quiet
            // (the first index was, if it was built before serving), and
            // whether it was given back since.
            let (mut freed, mut released) = (true, false);
            loop {
                let next = if freed { rx.recv_timeout(RELEASE_AFTER) } else { rx.recv().map_err(Into::into) };
                let first = match next {
                    Ok(e) => e,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        // Not while the first index is still being built:
                        // its threads would fault the pages in again.
                        if !self.first_pending {
                            super::freed::bulk(false);
                            // A reading waiting to be saved shares what a
                            // compaction would copy: looked at again once
                            // more quiet. What the edit freed goes back now
                            // all the same: the save waits seconds after
                            // the last edit, and the pages an edit's
                            // resolve freed on threads gone idle would
                            // stay resident until then (120 MiB after a
                            // Java edit on a 3.96M-line tree).
                            if self.saver.holds_readings() {
                                if !released {
                                    super::freed::release(true);
                                    released = true;
                                }
                                continue;
                            }
                            let more = super::freed::compact_one(&mut self.parts);
                            super::freed::release(true);
                            released = true;
                            if more {
                                continue;
                            }
                        }
                        freed = false;
                        continue;
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                };
                (freed, released) = (true, false);
                let mut batch = vec![first];
                let mut closes = Instant::now() + MAX_BATCH;
                // Parts read early wait for the last merge's pause
                // (`early_next`), and those that land meanwhile are merged
                // together; anything else closes the batch as usual.
                let pause = self.early_next.filter(|&at| at > Instant::now() && only_early(&batch));
                if let Some(at) = pause {
                    closes = closes.max(at);
                }
                loop {
                    let left = closes.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    let quiet = if one_file(&batch) { QUIET_ONE } else { QUIET };
                    let wait = match pause {
                        Some(at) if only_early(&batch) => at.saturating_duration_since(Instant::now()).max(quiet),
                        _ => quiet,
                    };
                    match rx.recv_timeout(wait.min(left)) {
                        Ok(e) => batch.push(e),
                        Err(_) => break,
                    }
                }
                // What a part read early swaps in waits for no watch; every
                // other event for all of them.
                if batch.iter().any(|e| !matches!(e, Event::Early(_))) {
                    watching.wait();
                }
                // The batch is closed: a change marked from here on is
                // not in it, and stays marked until a later batch.
                let seen = graphs.changes_seen();
                let mut changed = Vec::new();
                let mut covered = false;
                let mut early = Vec::new();
                // Languages of the first index that landed in the batch go
                // to `held`, and land together (`landing_now`).
                let mut last = false;
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
                        Event::Early(part) => {
                            // The newest of each language in the batch, all
                            // swapped in at once.
                            early.retain(|e: &Early| !std::ptr::eq(e.indexed.lang, part.indexed.lang));
                            early.push(*part);
                        }
                        Event::FirstIndex(landing) => {
                            self.held.extend(landing.parts);
                            last |= landing.last;
                        }
                        Event::CatchUp => changed.extend(self.catch_up()),
                    }
                }
                self.early_landed(early, &graphs);
                let parts = self.landing_now(&changed, last);
                if !parts.is_empty() || last {
                    self.first_landed(parts, last, &graphs);
                    // What waited for these languages is read now (the
                    // rest waits on, below).
                    changed.append(&mut self.deferred);
                    if last {
                        changed.extend(self.catch_up());
                    }
                }
                if self.first_pending {
                    // Read once the first index lands: all of it but the
                    // files of a restart's languages landed already.
                    changed = self.defer_unlanded(changed);
                    covered = false;
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
                    watching.add(dir);
                }
                if let Err(e) = self.refresh(&changed, covered, &graphs, seen) {
                    tracing::warn!(error = %e, "re-indexing the project failed; the previous graph keeps serving");
                }
                // What the edit freed goes back now, not a second later:
                // edits in a row (an agent's, a formatter's) would each
                // add their freed pages to the last one's before mimalloc
                // purges them (on a 3.3M-line tree, 667 MiB at the highest
                // over twelve Java edits against 644; 5-8 ms, once the edit
                // serves).
                if !self.first_pending {
                    super::freed::release(false);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_closes_early_only_while_it_is_one_files_changes() {
        let a = || Event::Changed(PathBuf::from("src/a.rs"));
        assert!(one_file(&[a()]));
        assert!(one_file(&[a(), a(), a()]), "an editor's write, rename and chmod of one file");
        assert!(!one_file(&[a(), Event::Changed(PathBuf::from("src/b.rs"))]), "two files: a checkout, a formatter");
        assert!(!one_file(&[a(), Event::CatchUp]));
        assert!(!one_file(&[Event::CatchUp]));
        assert!(!one_file(&[]));
    }
}
