//! The first index: each built-in language's part read at the start, on a
//! thread of its own, and landed on the project's thread.
//!
//! A cold start reads every language (serving each one's definitions, then
//! the whole part, as soon as they are read, when the server does not wait)
//! and lands them together. A restart that serves the last run's parts
//! reads each language again for what the next edit patches, and lands
//! each one as soon as it is read: an edit waits for its own language
//! only, and a language an edit waits for is read before the others.
//! What lands is swapped in on the project's thread (`first_landed`),
//! from the watcher's loop.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::{Indexed, Workspace};

use super::{Early, Event, Project, SERVE_FIRST, imported, saved};
use crate::live_graph::LiveGraph;

/// The built-in indexer's first index: each language's part.
pub(super) type First = Vec<Language>;

/// A language's part of the first index.
pub(super) struct Language {
    pub(super) ws: Workspace,
    pub(super) indexed: Indexed,
    /// It serves already: restored from the last run's state with nothing
    /// changed since, no files now nor before, or sent whole to be served
    /// early (then `indexed`'s index is left empty).
    pub(super) serves: bool,
}

/// Languages' parts of the first index as they land: all of them at once,
/// or (a restart's) one at a time; the last tells the first index is done.
pub(super) struct Landing {
    pub(super) parts: First,
    pub(super) last: bool,
}

/// A language to read: its files, and the last run's state of it.
pub(super) type Job = ((&'static Lang, Vec<PathBuf>), Option<saved::State>);

/// What the thread reading the first index is given.
pub(super) struct Reader {
    pub(super) read: Read,
    /// Held until the graph serves: a restart reads its languages again
    /// only then (none: at once).
    pub(super) gate: mpsc::Receiver<()>,
    /// A restart's: languages land one by one, and those named here
    /// (an edit waits for them) are read first. None: all land together.
    pub(super) wanted: Option<mpsc::Receiver<&'static str>>,
}

/// How each language is read.
pub(super) struct Read {
    /// The project's root.
    pub(super) at: PathBuf,
    pub(super) reading: signpost_treesitter::Options,
    /// Where a part read early is sent to be served while the rest is
    /// read (a cold start that does not wait for the whole index).
    pub(super) early: Option<mpsc::Sender<Event>>,
    /// Set once a large part sends its first files' definitions.
    pub(super) large: Arc<AtomicBool>,
}

impl Reader {
    /// Reads `jobs` on a thread of its own, sending what lands to `done`.
    pub(super) fn spawn(self, jobs: Vec<Job>, done: mpsc::Sender<Landing>) -> std::io::Result<()> {
        let Reader { read, gate, wanted } = self;
        std::thread::Builder::new().name("signpost-first-index".into()).spawn(move || {
            let _ = gate.recv_timeout(SERVE_FIRST);
            let Some(wanted) = wanted else {
                let parts = jobs.into_iter().map(|job| read.language(job)).collect();
                let _ = done.send(Landing { parts, last: true });
                return;
            };
            tracing::info!("the restored parts serve: their languages are read again for the next edit");
            // The graph serves already: what is read here is for the next
            // edit, and an edit's own work (on the process's other
            // threads) comes first.
            let pool = background();
            let mut jobs = jobs;
            let mut asked: Vec<&'static str> = Vec::new();
            while !jobs.is_empty() {
                for lang in wanted.try_iter() {
                    if !asked.contains(&lang) {
                        asked.push(lang);
                    }
                }
                let at = jobs.iter().position(|((lang, _), _)| asked.contains(&lang.name)).unwrap_or(0);
                let job = jobs.remove(at);
                let part = match &pool {
                    Some(pool) => pool.install(|| read.language(job)),
                    None => read.language(job),
                };
                if done.send(Landing { parts: vec![part], last: jobs.is_empty() }).is_err() {
                    return;
                }
            }
        })?;
        Ok(())
    }
}

/// Threads of low priority for work nobody waits on: as many as the
/// process's own pool, each lowered to `nice` 10 where the system lets a
/// thread say so (Linux). None when they cannot be made.
fn background() -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("signpost-reread-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .map_err(|e| tracing::debug!(error = %e, "no pool of low priority: the languages are read on the process's"))
        .ok()
}

/// Ten steps below the thread's own (at most 19, the lowest). A thread's
/// id: `setpriority` sets that thread's alone on Linux, and the threads it
/// starts inherit it (`Workspace::restore` reads files on scoped threads:
/// they are lowered too).
#[cfg(target_os = "linux")]
fn lower_priority() {
    use rustix::process::{getpriority_process, setpriority_process};
    let me = Some(rustix::thread::gettid());
    let lowered = getpriority_process(me).and_then(|now| setpriority_process(me, (now + 10).min(19)));
    if let Err(e) = lowered {
        tracing::debug!(error = %e, "a thread reading languages again keeps its priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

impl Read {
    /// One language's part: restored from its state and what changed read
    /// again, or read whole (sent early to be served when a server does
    /// not wait for it).
    fn language(&self, ((lang, files), state): Job) -> Language {
        let (at, reading) = (&self.at, &self.reading);
        // No files, none before: the empty part serves already.
        let none = state.is_none() && files.is_empty();
        if let Some(state) = state {
            let unchanged = state.drift.is_empty();
            match Workspace::restore_encoded(at, lang, &files, reading, state.reading()) {
                // Unchanged only if nothing changed before it was read
                // either: a file edited since the start is in this reading,
                // and the part that serves must be swapped for it.
                Ok((ws, indexed, drift)) => {
                    return Language { ws, indexed, serves: unchanged && drift.is_empty() };
                }
                Err(why) => tracing::info!(
                    language = lang.name,
                    why = why.as_str(),
                    "the saved reading is not used: every file is read again"
                ),
            }
        }
        let Some(events) = self.early.as_ref().filter(|_| !files.is_empty()) else {
            let (ws, indexed) = Workspace::open(at, lang, &files, reading);
            return Language { ws, indexed, serves: none };
        };
        let defs = |mut indexed: Indexed| {
            let graph = imported(&indexed);
            (indexed.index, indexed.encoded) = (Default::default(), None);
            match graph {
                Ok(graph) => {
                    let graph = Some(graph);
                    let first_files = indexed.report.pending > 0;
                    let _ = events.send(Event::Early(Box::new(Early { indexed, whole: false, graph })));
                    if first_files {
                        self.large.store(true, Ordering::Release);
                    }
                }
                Err(e) => {
                    tracing::warn!(language = lang.name, error = %e, "a part read early does not load")
                }
            }
        };
        // The whole part encoded: its import and memo read it a document
        // at a time.
        let (ws, mut indexed) = Workspace::open_early_encoded(at, lang, &files, reading, Some(defs));
        // The whole part serves at once; the first index keeps its report.
        let (index, encoded) = (std::mem::take(&mut indexed.index), indexed.encoded.take());
        let (report, generation) = (indexed.report.clone(), indexed.generation);
        let whole = Indexed { index, encoded, ..indexed };
        // Imported here, before the next language is read: on the
        // project's thread it ran beside that reading, both at their
        // peaks at once (BENCHMARKS.md, issue 47 thirty-seventh part).
        // One that fails is tried there again, and says why.
        let graph = imported(&whole).ok();
        let early = Early { indexed: whole, whole: true, graph };
        let _ = events.send(Event::Early(Box::new(early)));
        let indexed = Indexed { lang, index: Default::default(), report, generation, changed: None, encoded: None };
        Language { ws, indexed, serves: true }
    }
}

/// The first index whole, from its first landing: the rest received too
/// when it lands in pieces.
pub(super) fn whole(first: Landing, built: &mpsc::Receiver<Landing>) -> Result<First, mpsc::RecvError> {
    let Landing { mut parts, mut last } = first;
    while !last {
        let more = built.recv()?;
        parts.extend(more.parts);
        last = more.last;
    }
    // In the languages' order, whatever order they were read in.
    parts.sort_by_key(|part| LANGUAGES.iter().position(|l| std::ptr::eq(l, part.indexed.lang)));
    Ok(parts)
}

/// The first index lands on the project's thread ([`Project::watch`]'s loop).
impl Project {
    /// Languages' parts read while the first index is built (each one's
    /// definitions alone, or whole) serve at once, with one join, and
    /// those that land during the pause after it (twice the join's time,
    /// [`Project::early_next`]) with the next. None once the first index
    /// has landed: a server that waited for it already serves it.
    pub(super) fn early_landed(&mut self, early: Vec<Early>, graphs: &LiveGraph) {
        if !self.first_pending || early.is_empty() {
            return;
        }
        let mut parts = Vec::new();
        for Early { indexed, whole, graph } in early {
            let lang = indexed.lang.name;
            match graph.map_or_else(|| imported(&indexed), Ok) {
                Ok(graph) => {
                    if whole {
                        self.keep_served(&indexed, graph.clone());
                    } else {
                        self.served.remove(lang);
                    }
                    parts.push((self.built_in_file(lang), graph));
                    self.early.retain(|(l, _, _)| *l != lang);
                    self.early.push((lang, whole, (indexed.report.files, indexed.report.pending)));
                }
                Err(e) => tracing::warn!(language = lang, error = %e, "a part read early does not load"),
            }
        }
        let started = std::time::Instant::now();
        let record = graphs.replace_parts(parts);
        // Twice as long again before the next merge: a third of the time.
        self.early_next = Some(std::time::Instant::now() + 2 * started.elapsed());
        tracing::info!(served = ?self.early, result = record.result, "served while the first index is built");
        graphs.set_building(Some(self.building()));
    }

    /// Of a restart's languages read again and not landed yet (`held`),
    /// those to land now: all with the last; before it, those unchanged
    /// since the last run (nothing to swap in) and those holding a file an
    /// edit changed (in `changed` or deferred). The others, changed while
    /// stopped, swap in together with the last, in one join (each join
    /// merges every part: 1.2-1.6 s on a large tree).
    pub(super) fn landing_now(&mut self, changed: &[PathBuf], last: bool) -> First {
        if last {
            return std::mem::take(&mut self.held);
        }
        // A file the held part knows: a new one waits for the last
        // landing like any file no part knows.
        let waited = |ws: &Workspace| self.deferred.iter().chain(changed).any(|p| ws.knows(p));
        let (now, held): (First, First) =
            std::mem::take(&mut self.held).into_iter().partition(|part| part.serves || waited(&part.ws));
        self.held = held;
        now
    }

    /// Of `changed`, heard while the first index is still landing, the
    /// files of the languages landed already (a restart's, read again one
    /// at a time): the rest waits, looked at again after each landing, and
    /// the reader is told which languages an edit waits for (each once).
    pub(super) fn defer_unlanded(&mut self, changed: Vec<PathBuf>) -> Vec<PathBuf> {
        let (ready, wait): (Vec<PathBuf>, Vec<PathBuf>) =
            changed.into_iter().partition(|c| self.parts.iter().any(|w| w.knows(c)));
        if let Some(wanted) = &self.wanted {
            let mut langs: Vec<&'static str> =
                wait.iter().filter_map(|c| signpost_treesitter::languages::of_path(c)).map(|l| l.name).collect();
            langs.sort_unstable();
            langs.dedup();
            for lang in langs {
                let _ = wanted.send(lang);
            }
        }
        self.deferred.extend(wait);
        ready
    }

    /// The first index, built in the background, swaps in: each part that
    /// is not already served (restored from the last run, unchanged), all
    /// those of a landing at once, and is saved for the next start. The
    /// `last` landing ends the first index.
    pub(super) fn first_landed(&mut self, first: First, last: bool, graphs: &LiveGraph) {
        self.first_pending = !last;
        if last {
            self.wanted = None;
        }
        let langs: Vec<&str> = first.iter().map(|part| part.indexed.lang.name).collect();
        tracing::debug!(languages = ?langs, last, "the first index lands");
        let mut swapped = Vec::new();
        for Language { ws, indexed, serves } in &first {
            let lang = indexed.lang.name;
            let path = self.built_in_file(lang);
            let at_start = self.restored_parts.iter().position(|(p, _)| *p == path);
            let at_start = at_start.map(|at| self.restored_parts.swap_remove(at).1);
            let at_start = at_start.as_ref();
            // A restored part that did not read beside a whole graph is
            // replaced like a changed one.
            let unread = matches!(at_start, Some(None));
            if *serves && !unread {
                // A part restored from the last run's state that still
                // serves (no precise index swapped in meanwhile): its reading
                // made again is what it was made from, so the next edit
                // patches it.
                if let Some(Some(at_start)) = at_start
                    && !self.served.contains_key(lang)
                    && graphs.part(&path).is_some_and(|now| std::sync::Arc::ptr_eq(&now, at_start))
                {
                    self.keep_served(indexed, at_start.clone());
                }
                continue;
            }
            match imported(indexed) {
                Ok(graph) => {
                    self.keep_served(indexed, graph.clone());
                    swapped.push((self.built_in_file(indexed.lang.name), graph, ws));
                }
                Err(e) => tracing::warn!(language = indexed.lang.name, error = %e, "the first index does not load"),
            }
        }
        if !swapped.is_empty() {
            let parts: Vec<(PathBuf, std::sync::Arc<signpost_graph::Graph>)> =
                swapped.iter().map(|(path, graph, _)| (path.clone(), graph.clone())).collect();
            let record = graphs.replace_parts(parts);
            tracing::info!(parts = swapped.len(), result = record.result, "the first index swaps in");
            if record.result == "swapped" {
                // What changed in these languages since the saved parts
                // were made is read now.
                let read = |lang: &str| swapped.iter().any(|(_, _, ws)| ws.lang().name == lang);
                let stale: std::collections::HashSet<String> =
                    self.restored_stale.iter().filter(|(l, _)| read(l)).map(|(_, f)| f.clone()).collect();
                self.restored_stale.retain(|(l, _)| !read(l));
                graphs.mark_indexed(self.stopped_seen, |file| stale.contains(file));
                for (_, graph, ws) in &swapped {
                    self.save(ws, graph.clone());
                }
            }
        }
        // Parts served whole early are saved now, with their workspace.
        for Language { ws, indexed, .. } in &first {
            let lang = indexed.lang.name;
            if self.early.iter().any(|&(l, whole, _)| l == lang && whole)
                && let Some(graph) = graphs.part(&self.built_in_file(lang))
            {
                self.save(ws, graph);
            }
        }
        for Language { ws, indexed, .. } in first {
            for note in indexed.report.notes.iter().take(20) {
                tracing::info!(note = note.as_str(), "indexing");
            }
            graphs.set_notes(indexed.lang.name, indexed.report.notes);
            self.parts.push(ws);
        }
        if last {
            self.early.clear();
            self.restored_parts.clear();
            self.building_since = None;
            graphs.set_building(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(root: &std::path::Path, wanted: Option<mpsc::Receiver<&'static str>>) -> (Reader, mpsc::Sender<()>) {
        let (go, gate) = mpsc::channel();
        let read = Read { at: root.to_owned(), reading: Default::default(), early: None, large: Default::default() };
        let reader = Reader { read, gate, wanted };
        (reader, go)
    }

    fn jobs() -> Vec<Job> {
        LANGUAGES.iter().map(|lang| ((lang, Vec::new()), None)).collect()
    }

    fn names(parts: &First) -> Vec<&'static str> {
        parts.iter().map(|part| part.indexed.lang.name).collect()
    }

    #[test]
    fn a_restarts_languages_land_one_at_a_time_those_an_edit_waits_for_first() {
        let root = std::env::temp_dir().join(format!("signpost-first-landing-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("a scratch directory");
        let (want, wanted) = mpsc::channel();
        let (reader, go) = reader(&root, Some(wanted));
        let (done, built) = mpsc::channel();
        reader.spawn(jobs(), done).expect("the reader's thread");
        // Asked for before the graph serves: read first, in the
        // languages' order among themselves.
        let asked = [LANGUAGES[LANGUAGES.len() - 1].name, LANGUAGES[1].name];
        for name in asked {
            want.send(name).expect("the reader listens");
        }
        drop(go);
        let landed: Vec<Landing> = built.iter().collect();
        assert_eq!(landed.len(), LANGUAGES.len(), "one landing a language");
        assert!(landed.iter().all(|l| l.parts.len() == 1));
        let lasts: Vec<bool> = landed.iter().map(|l| l.last).collect();
        assert_eq!(lasts.iter().filter(|&&l| l).count(), 1);
        assert_eq!(lasts.last(), Some(&true), "the last landing says so");
        let order: Vec<&str> = landed.iter().flat_map(|l| names(&l.parts)).collect();
        assert_eq!(order[..2], [LANGUAGES[1].name, LANGUAGES[LANGUAGES.len() - 1].name]);
        let rest: Vec<&str> = LANGUAGES.iter().map(|l| l.name).filter(|n| !asked.contains(n)).collect();
        assert_eq!(order[2..], rest[..]);
        // Whatever the order read, the whole index is in the languages'.
        let mut landed = landed.into_iter();
        let (tx, rx) = mpsc::channel();
        let first = landed.next().expect("a first landing");
        for l in landed {
            tx.send(l).expect("a channel");
        }
        let all = whole(first, &rx).expect("every landing");
        assert_eq!(names(&all), LANGUAGES.iter().map(|l| l.name).collect::<Vec<_>>());
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The pool a restart reads its languages again on runs below the
    /// priority of the thread that made it.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_reading_again_runs_at_a_lower_priority() {
        use rustix::process::getpriority_process;
        let here = getpriority_process(Some(rustix::thread::gettid())).expect("this thread's priority");
        let pool = background().expect("a pool");
        let there = pool.install(|| getpriority_process(Some(rustix::thread::gettid()))).expect("its priority");
        assert_eq!(there, (here + 10).min(19));
        assert!(here == 19 || there > here);
    }

    #[test]
    fn a_cold_first_index_lands_whole_once() {
        let root = std::env::temp_dir().join(format!("signpost-first-whole-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("a scratch directory");
        let (reader, go) = reader(&root, None);
        let (done, built) = mpsc::channel();
        reader.spawn(jobs(), done).expect("the reader's thread");
        drop(go);
        let landed: Vec<Landing> = built.iter().collect();
        assert_eq!(landed.len(), 1);
        assert!(landed[0].last);
        assert_eq!(names(&landed[0].parts), LANGUAGES.iter().map(|l| l.name).collect::<Vec<_>>());
        let _ = std::fs::remove_dir_all(&root);
    }
}
