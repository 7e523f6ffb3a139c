//! Each built-in language's part saved in the cache between runs, so that a
//! restart answers at once and reads again only what changed meanwhile:
//! the part as it was served (a graph snapshot, loaded by reading) and the
//! reading it was made from (every file's facts with what the file was
//! when read, `signpost_treesitter::saved`).
//!
//! A state is written whole (beside its name, then renamed), by one thread
//! (`Saver`) that keeps only the newest part of each language it was
//! given; a state that is damaged, of another layout or of another build
//! is set aside with the reason, and the files are read again.
//!
//! Layout of `saved.<language>`: `SIGNPOST-SAVED\0\0`, a layout version
//! (u32, little-endian), the snapshot's length (u64) and its CRC-32 (u32),
//! the snapshot, then the reading.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use signpost_graph::Graph;
use signpost_treesitter::languages::Lang;
use signpost_treesitter::saved::{Drift, Reading, Saved};

#[cfg(test)]
use super::parts::write_whole_as;
use super::parts::{read_own, write_streamed_as};
use super::whole::{self, Ident, Known};
use crate::live_graph::LiveGraph;

const MAGIC: &[u8; 16] = b"SIGNPOST-SAVED\0\0";
const VERSION: u32 = 1;
const HEAD: usize = 16 + 4 + 8 + 4;
/// Where the snapshot's CRC-32 is in the head (its last four bytes).
const CRC_AT: usize = HEAD - 4;

/// A language's state from the last run, checked against the tree.
pub(super) struct State {
    /// The whole state file.
    bytes: Vec<u8>,
    /// Where the snapshot ends and the reading begins.
    split: usize,
    /// How the tree moved since it was saved.
    pub drift: Drift,
}

impl State {
    /// The part as it was served: a graph snapshot.
    pub fn snapshot(&self) -> &[u8] {
        &self.bytes[HEAD..self.split]
    }

    /// What the part holds: its snapshot's length and CRC-32 (the key of
    /// a whole graph merged from it, [`super::whole`]).
    pub fn ident(&self) -> Ident {
        let crc = self.bytes[CRC_AT..HEAD].iter().rev().fold(0u32, |v, b| v << 8 | u32::from(*b));
        Ident { len: (self.split - HEAD) as u64, crc }
    }

    /// The reading it was made from ([`signpost_treesitter::Workspace::restore`]).
    pub fn reading(&self) -> &[u8] {
        &self.bytes[self.split..]
    }
}

/// Where `lang`'s part is saved in the project's cache `cache`.
pub(super) fn file_of(cache: &Path, lang: &str) -> PathBuf {
    cache.join(format!("saved.{lang}"))
}

/// The state of `lang` saved in `file`, if it is whole, of this build and
/// options (not yet held against the tree: [`Loaded::against`]). Why not,
/// otherwise (none when there is no state). It reads no file of the tree:
/// a start reads the states while it walks the tree.
pub(super) fn read(file: &Path, lang: &Lang, opts: &signpost_treesitter::Options) -> Option<Result<Loaded, String>> {
    Some(read_own(file)?.and_then(|bytes| checked(bytes, lang, opts)))
}

/// [`read`], held against `files` (the language's files now).
#[cfg(test)]
fn load(
    file: &Path,
    root: &Path,
    lang: &Lang,
    files: &[PathBuf],
    opts: &signpost_treesitter::Options,
) -> Option<Result<State, String>> {
    read(file, lang, opts).map(|r| r.and_then(|loaded| loaded.against(root, files)))
}

/// The state in `bytes`, held against `files`.
#[cfg(test)]
fn check(
    bytes: Vec<u8>,
    root: &Path,
    lang: &Lang,
    files: &[PathBuf],
    opts: &signpost_treesitter::Options,
) -> Result<State, String> {
    checked(bytes, lang, opts).and_then(|loaded| loaded.against(root, files))
}

/// A language's state as saved: whole, of this build and options.
pub(super) struct Loaded {
    bytes: Vec<u8>,
    split: usize,
}

impl Loaded {
    /// The state, with how `files` (the language's files now) moved since
    /// it was saved.
    pub fn against(self, root: &Path, files: &[PathBuf]) -> Result<State, String> {
        let drift = Saved::read(&self.bytes[self.split..])?.drift(root, files);
        Ok(State { bytes: self.bytes, split: self.split, drift })
    }
}

/// The state in `bytes` if it is whole, of `lang`, this build and `opts`.
fn checked(bytes: Vec<u8>, lang: &Lang, opts: &signpost_treesitter::Options) -> Result<Loaded, String> {
    let head = bytes.get(..HEAD).ok_or("truncated")?;
    if &head[..16] != MAGIC {
        return Err("not a saved state".into());
    }
    let word = |at: usize, n: usize| head[at..at + n].iter().rev().fold(0u64, |v, b| v << 8 | u64::from(*b));
    if word(16, 4) != u64::from(VERSION) {
        return Err(format!("a state of layout {}, not {VERSION}", word(16, 4)));
    }
    let split = usize::try_from(word(20, 8)).ok().and_then(|n| n.checked_add(HEAD)).filter(|&s| s <= bytes.len());
    let split = split.ok_or("truncated")?;
    if u64::from(crc32fast::hash(&bytes[HEAD..split])) != word(CRC_AT, 4) {
        return Err("its snapshot's checksum does not match: damaged".into());
    }
    Saved::read(&bytes[split..])?.fits(lang, opts)?;
    Ok(Loaded { bytes, split })
}

impl super::Project {
    /// The state `lang`'s part was saved in by the last run, if it can
    /// serve: whole, of this build, with how `files` moved since.
    pub(super) fn saved_state(
        &self,
        lang: &Lang,
        files: &[PathBuf],
        loaded: Option<Result<Loaded, String>>,
    ) -> Option<State> {
        match loaded?.and_then(|loaded| loaded.against(&self.root, files)) {
            Ok(state) => Some(state),
            Err(why) => {
                tracing::info!(
                    language = lang.name,
                    why = why.as_str(),
                    "the saved part is not used: its files are read again"
                );
                None
            }
        }
    }

    /// Where `lang`'s part is saved for the next start.
    pub(super) fn saved_file(&self, lang: &str) -> PathBuf {
        file_of(&self.cache, lang)
    }

    /// Saves the part `graph` of `ws`'s language for the next start, in the
    /// background once edits are quiet.
    pub(super) fn save(&self, ws: &signpost_treesitter::Workspace, graph: std::sync::Arc<signpost_graph::Graph>) {
        let lang = ws.lang().name;
        let reading = self.saver.hold(ws.reading());
        self.saver.save(Job { lang, file: self.saved_file(lang), graph, reading });
    }
}

/// A language's part to save.
pub(super) struct Job {
    pub lang: &'static str,
    pub file: PathBuf,
    pub graph: Arc<Graph>,
    pub reading: Held,
}

/// A reading a job holds, counted by its saver until it is dropped
/// ([`Saver::holds_readings`]).
pub(super) struct Held {
    reading: Reading,
    count: Arc<AtomicUsize>,
}

impl std::ops::Deref for Held {
    type Target = Reading;

    fn deref(&self) -> &Reading {
        &self.reading
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Writes the state of `graph`, made from `reading`, to `out` from where
/// it stands, as it is made (the head, which says what the snapshot
/// holds, last, in its place); what the snapshot holds.
fn write_state<W: Write + Seek>(out: &mut W, graph: &Graph, reading: &Reading) -> Result<Ident, String> {
    let io = |e: std::io::Error| e.to_string();
    let start = out.stream_position().map_err(io)?;
    out.write_all(&[0; HEAD]).map_err(io)?;
    let ident = Ident::from(signpost_graph::snapshot::write_to(graph, out).map_err(io)?);
    reading.write_to(out)?;
    let end = out.stream_position().map_err(io)?;
    let mut head = Vec::with_capacity(HEAD);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&ident.len.to_le_bytes());
    head.extend_from_slice(&ident.crc.to_le_bytes());
    out.seek(SeekFrom::Start(start)).map_err(io)?;
    out.write_all(&head).map_err(io)?;
    out.seek(SeekFrom::Start(end)).map_err(io)?;
    Ok(ident)
}

/// [`write_state`], in memory.
#[cfg(test)]
fn bytes_of(graph: &Graph, reading: &Reading) -> Result<(Vec<u8>, Ident), String> {
    let mut out = std::io::Cursor::new(Vec::new());
    let ident = write_state(&mut out, graph, reading)?;
    Ok((out.into_inner(), ident))
}

/// How long parts must be quiet (no newer part given) before they are
/// saved: an agent's burst of edits is saved once
/// (`SIGNPOST_SAVE_QUIET_MS` overrides it).
const QUIET: Duration = Duration::from_secs(5);

/// Longest parts wait while newer ones keep coming.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// What the saver hears.
enum Message {
    /// A language's part to save.
    Part(Job),
    /// The graph served from now on: the whole graph merged from the parts
    /// is saved beside them ([`super::whole`]); at once when it is owed.
    Serving(Arc<LiveGraph>, bool),
    /// Parts restored from the last run's states, with what they hold.
    Known(Vec<(Arc<Graph>, Ident)>),
}

/// Writes parts' states on a thread of its own once they are quiet, the
/// newest of each language only, and then the whole graph served; dropped,
/// it saves what it was given at once.
pub(super) struct Saver {
    jobs: Option<mpsc::Sender<Message>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Readings its jobs hold, not yet saved or dropped.
    held: Arc<AtomicUsize>,
}

impl Saver {
    /// A saver whose whole graph is saved in `whole_file`.
    pub fn start(whole_file: PathBuf) -> Saver {
        let quiet = std::env::var("SIGNPOST_SAVE_QUIET_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(QUIET, Duration::from_millis);
        Saver::quiet_for(whole_file, quiet)
    }

    /// [`Saver::start`], saving parts once `quiet` passed with no newer
    /// one.
    fn quiet_for(whole_file: PathBuf, quiet: Duration) -> Saver {
        let (jobs, rx) = mpsc::channel::<Message>();
        let thread = std::thread::Builder::new()
            .name("signpost-save".into())
            .spawn(move || {
                let mut serving: Option<Arc<LiveGraph>> = None;
                let mut known = Known::default();
                // Parts were saved since the whole graph was.
                let mut owed = false;
                while let Ok(first) = rx.recv() {
                    // Only the newest of each language: a part edited again
                    // meanwhile is saved once.
                    let mut newest: Vec<Job> = Vec::new();
                    let until = Instant::now() + MAX_WAIT;
                    let mut next = Ok(first);
                    while let Ok(message) = next {
                        match message {
                            Message::Part(job) => {
                                newest.retain(|j| j.lang != job.lang);
                                newest.push(job);
                            }
                            Message::Serving(graphs, owes) => {
                                serving = Some(graphs);
                                owed |= owes;
                            }
                            Message::Known(parts) => {
                                for (graph, ident) in &parts {
                                    known.note(graph, *ident);
                                }
                            }
                        }
                        next = rx.recv_timeout(quiet.min(until.saturating_duration_since(Instant::now())));
                    }
                    for job in newest {
                        if let Some(ident) = save(&job) {
                            known.note(&job.graph, ident);
                            owed = true;
                        }
                    }
                    if let Some(graphs) = serving.as_ref().filter(|_| owed) {
                        save_whole(&whole_file, graphs, &mut known);
                        owed = false;
                    }
                    // The snapshots' bytes, and the parts they were the
                    // last to hold, are freed: given back now.
                    super::freed::release(true);
                }
            })
            .map_err(
                |e| tracing::warn!(error = %e, "no thread to save the project's parts: a restart reads them again"),
            )
            .ok();
        Saver { jobs: thread.is_some().then_some(jobs), thread, held: Arc::default() }
    }

    /// Whether a part's reading waits to be saved: its files' facts are
    /// shared with the workspace, which copying now would double
    /// ([`super::freed::compact`]).
    pub fn holds_readings(&self) -> bool {
        self.held.load(Ordering::SeqCst) > 0
    }

    /// `reading`, counted until dropped.
    fn hold(&self, reading: Reading) -> Held {
        self.held.fetch_add(1, Ordering::SeqCst);
        Held { reading, count: self.held.clone() }
    }

    /// Saves `job` in the background.
    pub fn save(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Message::Part(job));
        }
    }

    /// Saves the whole graph `graphs` serves beside its parts from now on,
    /// and now if `owed`.
    pub fn serving(&self, graphs: Arc<LiveGraph>, owed: bool) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Message::Serving(graphs, owed));
        }
    }

    /// Notes what the parts restored from the last run's states hold (the
    /// key of a whole graph merged from them is not made again).
    pub fn known(&self, parts: Vec<(Arc<Graph>, Ident)>) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Message::Known(parts));
        }
    }
}

impl Drop for Saver {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Saves `job`'s state; what its part holds, if it was saved.
fn save(job: &Job) -> Option<Ident> {
    let started = Instant::now();
    let result = write_streamed_as(&job.file, 0o600, |out| {
        let ident = write_state(out, &job.graph, &job.reading).map_err(anyhow::Error::msg)?;
        Ok((out.stream_position()?, ident))
    })
    .map_err(|e| format!("{e:#}"));
    match result {
        Ok((bytes, ident)) => {
            tracing::debug!(
                language = job.lang,
                files = job.reading.files(),
                bytes,
                ms = started.elapsed().as_millis() as u64,
                "part saved for the next start"
            );
            Some(ident)
        }
        Err(e) => {
            tracing::warn!(language = job.lang, error = %e, "the part could not be saved: a restart reads it again");
            None
        }
    }
}

/// Saves the whole graph `graphs` serves, with the parts it was merged
/// from as its key; removes the one saved before when the graph served is
/// not merged (a single part: nothing to merge on a restart).
fn save_whole(file: &Path, graphs: &LiveGraph, known: &mut Known) {
    let started = Instant::now();
    let Some((parts, graph)) = graphs.parts_and_whole() else {
        let _ = std::fs::remove_file(file);
        return;
    };
    let key = known.key(&parts);
    match whole::write(file, &key, &graph) {
        Ok(bytes) => tracing::debug!(
            parts = key.len(),
            bytes,
            ms = started.elapsed().as_millis() as u64,
            "the whole graph saved for the next start"
        ),
        Err(e) => {
            let _ = std::fs::remove_file(file);
            tracing::warn!(error = %format!("{e:#}"), "the whole graph could not be saved: a restart merges its parts")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state is trusted only whole: any cut or flipped byte is refused
    /// with a reason, and so is a state of another language.
    #[test]
    fn a_state_is_trusted_only_whole_and_of_its_language() {
        let root = std::env::temp_dir().join(format!("signpost-saved-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
        let file = root.join("Shop.java");
        std::fs::write(&file, "package p;\nclass Shop { void pay() { pay(); } }\n").unwrap_or_else(|e| panic!("{e}"));
        let java = signpost_treesitter::languages::LANGUAGES.iter().find(|l| l.name == "java").expect("java");
        let opts = signpost_treesitter::Options::default();
        let files = vec![file.clone()];
        let (ws, indexed) = signpost_treesitter::Workspace::open(&root, java, &files, &opts);
        let scip_opts = signpost_graph::scip::Options { name: "java".into() };
        let graph = signpost_graph::scip::import_index(&indexed.index, &scip_opts).unwrap_or_else(|e| panic!("{e}"));
        let (bytes, ident) = bytes_of(&graph, &ws.reading()).unwrap_or_else(|e| panic!("{e}"));
        let state = check(bytes.clone(), &root, java, &files, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert!(state.drift.is_empty());
        assert_eq!(state.ident(), ident);
        assert_eq!(ident, Ident::of(&graph), "a state's key is not its graph's");
        let back = signpost_graph::snapshot::read(state.snapshot()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.node_count(), graph.node_count());
        for at in [0, 5, HEAD + 1, bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x01;
            assert!(check(damaged, &root, java, &files, &opts).is_err(), "a flipped byte at {at} was trusted");
            assert!(check(bytes[..at].to_vec(), &root, java, &files, &opts).is_err(), "a cut at {at} was trusted");
        }
        let go = signpost_treesitter::languages::LANGUAGES.iter().find(|l| l.name == "go").expect("go");
        assert!(check(bytes.clone(), &root, go, &files, &opts).is_err());
        // Written by the saver: private; opened to others: not trusted.
        let file_of = root.join("saved.java");
        write_whole_as(&file_of, &bytes, 0o600).unwrap_or_else(|e| panic!("{e}"));
        assert!(load(&file_of, &root, java, &files, &opts).is_some_and(|r| r.is_ok()));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file_of, std::fs::Permissions::from_mode(0o666)).unwrap_or_else(|e| panic!("{e}"));
        let why = load(&file_of, &root, java, &files, &opts).and_then(Result::err).unwrap_or_default();
        assert!(why.contains("not trusted"), "{why}");
        assert!(load(&root.join("saved.go"), &root, java, &files, &opts).is_none(), "none saved: nothing said");
        // Edited: the file is said to have changed.
        std::fs::write(&file, "package p;\nclass Shop { void pay() {} }\n").unwrap_or_else(|e| panic!("{e}"));
        let state = check(bytes, &root, java, &files, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(state.drift.changed, files);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A state whose write fails half-way (a full disk) is not put in
    /// place, and nothing is left beside it.
    #[test]
    fn a_write_that_fails_leaves_no_file() {
        let root = std::env::temp_dir().join(format!("signpost-saved-failed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
        let file = root.join("saved.java");
        let e = write_streamed_as(&file, 0o600, |out| -> anyhow::Result<()> {
            out.write_all(&[7; 100_000])?;
            anyhow::bail!("the disk is full")
        })
        .expect_err("a failed write put in place");
        assert!(format!("{e:#}").contains("the disk is full"), "{e:#}");
        let left: Vec<_> =
            std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{e}")).flatten().map(|f| f.path()).collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A part's reading given to the saver is counted until the part is
    /// saved, and then let go: what the project's thread waits for before
    /// it compacts the workspace the reading shares its facts with.
    #[test]
    fn a_saver_holds_a_reading_until_its_part_is_saved() {
        let root = std::env::temp_dir().join(format!("signpost-saver-holds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
        let file = root.join("Shop.java");
        std::fs::write(&file, "package p;\nclass Shop { void pay() { pay(); } }\n").unwrap_or_else(|e| panic!("{e}"));
        let java = signpost_treesitter::languages::LANGUAGES.iter().find(|l| l.name == "java").expect("java");
        let (ws, indexed) =
            signpost_treesitter::Workspace::open(&root, java, &[file], &signpost_treesitter::Options::default());
        let scip_opts = signpost_graph::scip::Options { name: "java".into() };
        let graph = signpost_graph::scip::import_index(&indexed.index, &scip_opts).unwrap_or_else(|e| panic!("{e}"));
        let saver = Saver::quiet_for(root.join("whole"), Duration::from_millis(20));
        assert!(!saver.holds_readings());
        let reading = saver.hold(ws.reading());
        assert!(saver.holds_readings());
        let saved = root.join("saved.java");
        saver.save(Job { lang: "java", file: saved.clone(), graph: Arc::new(graph), reading });
        let until = Instant::now() + Duration::from_secs(60);
        while saver.holds_readings() {
            assert!(Instant::now() < until, "the reading was never let go");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(saved.is_file(), "let go before its part was saved");
        // A job dropped unsaved lets its reading go too.
        drop(saver.hold(ws.reading()));
        assert!(!saver.holds_readings());
        drop(saver);
        let _ = std::fs::remove_dir_all(&root);
    }
}
