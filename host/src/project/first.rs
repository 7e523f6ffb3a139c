//! The first index: each built-in language's part read at the start, on a
//! thread of its own, and landed on the project's thread.
//!
//! A cold start reads every language (serving each one's definitions, then
//! the whole part, as soon as they are read, when the server does not wait)
//! and lands them together. A restart that serves the last run's parts
//! reads each language again for what the next edit patches, and lands
//! each one as soon as it is read: an edit waits for its own language
//! only, and a language an edit waits for is read before the others.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::{Indexed, Workspace};

use super::{Early, Event, SERVE_FIRST, imported, saved};

/// The built-in indexer's first index: each language's part, and whether
/// it already serves (restored from the last run's state with nothing
/// changed since, no files now nor before, or sent whole to be served
/// early: then its index is left empty here).
pub(super) type First = Vec<(Workspace, Indexed, bool)>;

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
                asked.extend(wanted.try_iter());
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

#[cfg(target_os = "linux")]
fn lower_priority() {
    // A thread's own id: `setpriority` sets that thread's alone on Linux.
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

impl Read {
    /// One language's part: restored from its state and what changed read
    /// again, or read whole (sent early to be served when a server does
    /// not wait for it).
    fn language(&self, ((lang, files), state): Job) -> (Workspace, Indexed, bool) {
        let (at, reading) = (&self.at, &self.reading);
        // No files, none before: the empty part serves already.
        let none = state.is_none() && files.is_empty();
        if let Some(state) = state {
            let unchanged = state.drift.is_empty();
            match Workspace::restore(at, lang, &files, reading, state.reading()) {
                Ok((ws, indexed, _)) => return (ws, indexed, unchanged),
                Err(why) => tracing::info!(
                    language = lang.name,
                    why = why.as_str(),
                    "the saved reading is not used: every file is read again"
                ),
            }
        }
        let Some(events) = self.early.as_ref().filter(|_| !files.is_empty()) else {
            let (ws, indexed) = Workspace::open(at, lang, &files, reading);
            return (ws, indexed, none);
        };
        let defs = |mut indexed: Indexed| {
            let graph = imported(&indexed);
            indexed.index = Default::default();
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
        let (ws, mut indexed) = Workspace::open_early(at, lang, &files, reading, Some(defs));
        // The whole part serves at once; the first index keeps its report.
        let index = std::mem::take(&mut indexed.index);
        let (report, generation) = (indexed.report.clone(), indexed.generation);
        let early = Early { indexed: Indexed { index, ..indexed }, whole: true, graph: None };
        let _ = events.send(Event::Early(Box::new(early)));
        (ws, Indexed { lang, index: Default::default(), report, generation, changed: None }, true)
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
    parts.sort_by_key(|(_, indexed, _)| LANGUAGES.iter().position(|l| std::ptr::eq(l, indexed.lang)));
    Ok(parts)
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
        parts.iter().map(|(_, indexed, _)| indexed.lang.name).collect()
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
