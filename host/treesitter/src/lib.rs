//! Signpost's built-in indexer: tree-sitter grammars, one query file per
//! language, and a resolver that turns what the queries capture into a
//! SCIP index. It serves the languages no SCIP indexer is at hand for, and
//! answers within seconds where one is.
//!
//! The pipeline, one module each:
//! - [`walk`]: the files of a project, the way git sees them (ignored
//!   files, build outputs, vendored and generated code left out);
//! - [`extract`]: one file → its facts (definitions, headers, imports,
//!   calls, typed names), files in parallel;
//! - [`resolve`]: every name used → the definition it most probably means;
//! - [`emit`]: the project → a SCIP index, which the graph's SCIP importer
//!   reads like any other indexer's.
//!
//! [`accuracy`] compares what it finds with a SCIP indexer's graph of the
//! same code.
//!
//! The languages are rows of [`languages::LANGUAGES`]; what each one's
//! syntax looks like is its query file (`queries/<name>.scm`).

pub mod accuracy;
mod early;
pub mod emit;
pub mod expr;
pub mod extract;
pub mod ignores;
pub mod languages;
pub mod macros;
pub mod prepass;
pub mod resolve;
pub mod saved;
pub mod truth;
pub mod walk;

#[cfg(test)]
mod again_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use extract::Reader;
use languages::{Lang, Packages};
use resolve::{Counts, Source};
use signpost_graph::tree;

pub use early::{EVERY, FIRST, Schedule};
pub use emit::TOOL;

/// A file read into its facts (shared, so that indexing a part again
/// copies no file's facts), or the note saying why it was not.
pub(crate) type Read = Result<Arc<Source>, String>;

/// A file's reading, with what the file was when read.
pub(crate) type Stamped = (Read, Option<tree::Stamp>);

/// How to index.
#[derive(Debug, Clone)]
pub struct Options {
    /// Files larger than this are skipped with a note (generated code).
    pub max_file_bytes: u64,
    /// A file that takes longer to parse is skipped with a note.
    pub parse_timeout: Duration,
    /// Threads reading files (0: one per core).
    pub threads: usize,
    /// Where an index handed over encoded is written, in a file of its own
    /// that no path names ([`signpost_graph::scip::Encoded`]); none, or no
    /// such file there: in memory.
    pub spill: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_file_bytes: 2 << 20, parse_timeout: Duration::from_secs(5), threads: 0, spill: None }
    }
}

/// A part of this many files or more, read on start, gives the
/// definitions of its first files while the rest is read, about every
/// second ([`Workspace::open_early`]): on the 3.96M-line tree of
/// BENCHMARKS.md, Java's 5,400 files take five seconds to read on two
/// cores. A smaller part is read within a second or two.
pub const EARLY_FILES: usize = 2000;

/// What indexing one language of a project did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Files read.
    pub files: usize,
    /// Their lines.
    pub lines: usize,
    /// Definitions found.
    pub definitions: usize,
    /// Resolution counts.
    pub counts: Counts,
    /// Files read with syntax the grammar does not know.
    pub syntax_errors: usize,
    /// Invocations of a file's own `macro_rules!` read as their expansion,
    /// and left as written ([`macros`]).
    pub macros: (usize, usize),
    /// One line per file skipped or worth a word.
    pub notes: Vec<String>,
    /// How many files' uses were resolved again, and how many kept.
    pub again: resolve::Again,
    /// Wall time.
    pub elapsed: Duration,
    /// Files not read yet: the definitions of a part's first files, given
    /// early ([`Workspace::open_early`]), and how many are still to come.
    pub pending: usize,
}

/// A language's part of a project, indexed.
pub struct Indexed {
    /// The language.
    pub lang: &'static Lang,
    /// The SCIP index (empty when it is [`Indexed::encoded`]).
    pub index: scip::types::Index,
    /// The SCIP index as protobuf bytes instead, `index` left empty: a
    /// large part's whole index handed over in a fraction of its decoded
    /// size, on disk where [`Options::spill`] says, and read a document at
    /// a time ([`Workspace::open_early_encoded`]).
    pub encoded: Option<signpost_graph::scip::Encoded>,
    /// What happened.
    pub report: Report,
    /// This index's number, unique in the process.
    pub generation: u64,
    /// What changed since an earlier index of the same workspace, when it
    /// is known: a patch compares only those documents.
    pub changed: Option<Changed>,
}

/// The documents of an index that may differ from an earlier index's of
/// the same part; every other document is the same, and every document
/// defines the symbols it defined.
#[derive(Debug, Clone)]
pub struct Changed {
    /// The earlier index's [`Indexed::generation`].
    pub since: u64,
    /// The documents' paths.
    pub documents: Vec<String>,
    /// The index holds only those documents and the ones that share a
    /// symbol with them ([`Workspace::update_in_part`]); the whole index
    /// is [`Workspace::written`].
    pub only: bool,
}

impl Indexed {
    /// An index of `lang` with what happened, numbered; nothing known of
    /// what changed.
    pub fn new(lang: &'static Lang, index: scip::types::Index, report: Report) -> Indexed {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let generation = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Indexed { lang, index, report, generation, changed: None, encoded: None }
    }

    /// The index as SCIP protobuf bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, protobuf::Error> {
        match &self.encoded {
            Some(encoded) => Ok(encoded.to_vec()?),
            None => protobuf::Message::write_to_bytes(&self.index),
        }
    }
}

/// Indexes `files` (all of `lang`, under `root`) into one SCIP index.
pub fn index(root: &Path, lang: &'static Lang, files: &[PathBuf], opts: &Options) -> Indexed {
    Workspace::open(root, lang, files, opts).1
}

/// [`index`], encoded into `out` as each document is made
/// ([`emit::write`]): the same bytes, without the whole index in memory.
/// What happened, or the writer's error.
pub fn index_to(
    root: &Path,
    lang: &'static Lang,
    files: &[PathBuf],
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> Result<Report, protobuf::Error> {
    let started = Instant::now();
    let mut ws = Workspace::empty(root, lang, files, opts);
    let read = ws.read_all(files);
    ws.keep(files.iter().cloned().zip(read));
    let (mut report, sources) = ws.gather();
    let project = resolve::resolve(sources);
    report.counts = project.counts;
    emit::write(&project, &ws.root, out)?;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// One language's part of a project, kept in memory so that a change to a
/// few files costs reading those files again, not the whole project. What
/// is resolved (and written) is always the whole part: an edit to one file
/// can change what names in another one mean.
pub struct Workspace {
    root: PathBuf,
    lang: &'static Lang,
    opts: Options,
    modules: Vec<(PathBuf, String)>,
    /// Every file, read or with the note saying why not.
    files: std::collections::BTreeMap<PathBuf, Read>,
    /// What each file read was when it was read.
    stamps: std::collections::HashMap<PathBuf, tree::Stamp>,
    /// The last resolve and what it kept for the next: a change resolves
    /// again the uses of the files it may move, not every file's.
    last: Option<(resolve::Project, resolve::Memo)>,
    /// The generation of the index the last resolve wrote.
    last_written: u64,
    /// What it keeps was allocated by a resolve and its readings, and not
    /// since allocated again ([`Workspace::compact`]).
    scattered: bool,
    /// Where its readings' packed bodies go, in a file that no path names
    /// where [`Options::spill`] says: as each file is read, and those
    /// still in memory when it is compacted ([`Workspace::compact`]).
    shelf: Option<Arc<extract::Shelf>>,
}

/// A shelf is made again once it holds this much more than twice the
/// bodies still on it: each edit shelves the files it read again, and
/// leaves their old bodies behind. (In tests, none: the fixtures' shelves
/// are made again as soon as half of one is gone, so that bodies moved
/// from one shelf to the next are met.)
const SHELF_SLACK: u64 = if cfg!(test) { 0 } else { 16 << 20 };

impl Workspace {
    /// A workspace of `lang` under `root` that has read nothing yet, with
    /// the modules above `files`.
    fn empty(root: &Path, lang: &'static Lang, files: &[PathBuf], opts: &Options) -> Workspace {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let modules = modules(&root, lang, files);
        Workspace {
            root,
            lang,
            opts: opts.clone(),
            modules,
            files: Default::default(),
            stamps: Default::default(),
            last: None,
            last_written: 0,
            scattered: false,
            shelf: opts.spill.as_deref().and_then(Workspace::new_shelf),
        }
    }

    /// Reads `files` and indexes them.
    pub fn open(root: &Path, lang: &'static Lang, files: &[PathBuf], opts: &Options) -> (Workspace, Indexed) {
        Workspace::open_early(root, lang, files, opts, None::<fn(Indexed)>)
    }

    /// [`Workspace::open`], giving `early` (when there is one) the part's
    /// definitions alone as soon as the files are read, before any use is
    /// resolved: their symbols are the whole part's, so what resolve, find
    /// and search answer from them stays true when the whole part comes.
    /// A part of [`EARLY_FILES`] files or more gives, before, the
    /// definitions of its first files read so far, paced by time
    /// ([`Schedule::Paced`]: the first after half a second of reading, then
    /// about every second), where their symbols are already the whole
    /// part's ([`Workspace::open_early_after`]).
    pub fn open_early(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        early: Option<impl FnMut(Indexed)>,
    ) -> (Workspace, Indexed) {
        let schedule = if files.len() >= EARLY_FILES { Schedule::Paced } else { Schedule::At(&[]) };
        Workspace::open_early_after(root, lang, files, opts, schedule, early)
    }

    /// [`Workspace::open_early`], the whole part's index given encoded
    /// ([`Indexed::encoded`]): written as its documents are made, a few
    /// hundred at a time (`emit::write`), never whole in memory decoded
    /// (a large part's is hundreds of megabytes so, a fraction of that
    /// encoded). The definitions given early are decoded (they are small).
    pub fn open_early_encoded(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        early: Option<impl FnMut(Indexed)>,
    ) -> (Workspace, Indexed) {
        let schedule = if files.len() >= EARLY_FILES { Schedule::Paced } else { Schedule::At(&[]) };
        Workspace::open_early_as(root, lang, files, opts, schedule, early, true)
    }

    /// [`Workspace::open_early`], giving `early` the definitions of the
    /// first files read (in path order) as `schedule` says, while the rest
    /// is read, then all of them once every file is: each
    /// [`Indexed::report`] says how many files it holds and how many are
    /// still to read. The first files' are given only where no definition
    /// of theirs can be spelled otherwise once the rest is read
    /// ([`resolve::spelled_alone`]). Each costs a resolve of the
    /// definitions read so far.
    pub fn open_early_after(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        schedule: Schedule<'_>,
        early: Option<impl FnMut(Indexed)>,
    ) -> (Workspace, Indexed) {
        Workspace::open_early_as(root, lang, files, opts, schedule, early, false)
    }

    /// [`Workspace::open_early_after`], the whole index `encoded` or not.
    fn open_early_as(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        schedule: Schedule<'_>,
        early: Option<impl FnMut(Indexed)>,
        encoded: bool,
    ) -> (Workspace, Indexed) {
        let started = Instant::now();
        let mut ws = Workspace::empty(root, lang, files, opts);
        let Some(mut early) = early.filter(|_| !files.is_empty()) else {
            let read = ws.read_all(files);
            ws.keep(files.iter().cloned().zip(read));
            let indexed = ws.index_as(started, false, encoded);
            return (ws, indexed);
        };
        let mut sorted = files.to_vec();
        sorted.sort_unstable();
        ws.read_giving(&sorted, schedule, started, encoded, &mut early);
        early(ws.definitions(started, encoded));
        let indexed = ws.index_as(started, false, encoded);
        (ws, indexed)
    }

    /// Brings a reading saved by an earlier process ([`Workspace::reading`])
    /// up to date with `files` (every file of the language now) and
    /// indexes it: only files new or changed since it was saved are read
    /// again. Why not, when the bytes are not a reading of this build,
    /// language and options, or the modules its packages were named from
    /// changed (then [`Workspace::open`] reads every file).
    pub fn restore(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        bytes: &[u8],
    ) -> Result<(Workspace, Indexed, saved::Drift), String> {
        Workspace::restore_as(root, lang, files, opts, bytes, false)
    }

    /// [`Workspace::restore`], the whole part's index given encoded
    /// ([`Indexed::encoded`]), as [`Workspace::open_early_encoded`] gives
    /// it: a restart reads every language again for its next edit, and a
    /// large part decoded whole is hundreds of megabytes.
    pub fn restore_encoded(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        bytes: &[u8],
    ) -> Result<(Workspace, Indexed, saved::Drift), String> {
        Workspace::restore_as(root, lang, files, opts, bytes, true)
    }

    /// [`Workspace::restore`], the whole index `encoded` or not.
    fn restore_as(
        root: &Path,
        lang: &'static Lang,
        files: &[PathBuf],
        opts: &Options,
        bytes: &[u8],
        encoded: bool,
    ) -> Result<(Workspace, Indexed, saved::Drift), String> {
        let started = Instant::now();
        let saved = saved::Saved::read(bytes)?;
        saved.fits(lang, opts)?;
        let mut ws = Workspace::empty(root, lang, files, opts);
        if saved.modules() != ws.modules.as_slice() {
            return Err("the modules its packages were named from changed".into());
        }
        let drift = saved.drift(&ws.root, files);
        let mut kept = saved.files(lang, ws.shelf.as_ref())?;
        let stale: std::collections::HashSet<&PathBuf> = drift.changed.iter().collect();
        let same = files
            .iter()
            .filter(|f| !stale.contains(f))
            .filter_map(|f| Some((f.clone(), kept.remove(f.strip_prefix(&ws.root).unwrap_or(f))?)));
        let same: Vec<(PathBuf, Stamped)> = same.collect();
        ws.keep(same.into_iter());
        let read = ws.read_all(&drift.changed);
        ws.keep(drift.changed.iter().cloned().zip(read));
        let indexed = ws.index_as(started, false, encoded);
        Ok((ws, indexed, drift))
    }

    /// Its reading, to save ([`saved::Reading::to_bytes`]) for a later
    /// process to [`Workspace::restore`]: the files' facts are shared, not
    /// copied.
    pub fn reading(&self) -> saved::Reading {
        let files = self
            .files
            .iter()
            .map(|(path, read)| {
                let rel = path.strip_prefix(&self.root).unwrap_or(path).to_path_buf();
                (rel, self.stamps.get(path).copied(), read.clone())
            })
            .collect();
        saved::Reading::new(self.lang, &self.opts, self.modules.clone(), files)
    }

    /// The language.
    pub fn lang(&self) -> &'static Lang {
        self.lang
    }

    /// Whether `path` is one of its files.
    pub fn knows(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    /// Its files.
    pub fn files(&self) -> Vec<PathBuf> {
        self.files.keys().cloned().collect()
    }

    /// Allocates again, on the calling thread, what the workspace keeps
    /// between resolves (its readings, the last resolve and its memo), so
    /// that it fills pages of its own rather than those of the threads
    /// that read and resolved it. Meant for a quiet moment after a
    /// resolve. Each value is copied, then the old one freed, one reading
    /// or one field at a time: the copy never doubles what the part keeps
    /// (on a 25.2M-line tree, copying Java's part whole took the process
    /// from 4.3 to 5.5 GB). Does nothing when nothing was resolved since
    /// the last compaction; says whether it did.
    pub fn compact(&mut self) -> bool {
        if !std::mem::take(&mut self.scattered) || self.files.is_empty() {
            return false;
        }
        let mut last = self.last.take();
        if let Some((project, memo)) = &mut last {
            project.compact(memo);
        }
        let shelf = self.shelf();
        resolve::compact_readings(
            self.files.values_mut().filter_map(|read| read.as_mut().ok()),
            last.as_mut().map(|(project, _)| project),
            shelf.as_ref(),
        );
        if let Some(shelf) = &shelf {
            tracing::debug!(
                language = self.lang.name,
                shelved_bytes = self.shelved_bytes(shelf),
                shelf_bytes = shelf.len(),
                "packed bodies on the shelf"
            );
        }
        self.last = last;
        self.files = std::mem::take(&mut self.files)
            .into_iter()
            .map(|(path, read)| (PathBuf::from(path.as_os_str()), read))
            .collect();
        self.stamps = std::mem::take(&mut self.stamps)
            .into_iter()
            .map(|(path, s)| (PathBuf::from(path.as_os_str()), s))
            .collect();
        true
    }

    /// The shelf its bodies go to now: the last one, unless most of what
    /// it holds is of readings since gone; none where no nameless file can
    /// be made (the bodies stay in memory).
    fn shelf(&mut self) -> Option<Arc<extract::Shelf>> {
        let dir = self.opts.spill.as_deref()?;
        if let Some(shelf) = &self.shelf
            && shelf.len() <= 2 * self.shelved_bytes(shelf) + SHELF_SLACK
        {
            return Some(shelf.clone());
        }
        self.shelf = Workspace::new_shelf(dir);
        self.shelf.clone()
    }

    /// A new shelf in `dir`, if one can be made there.
    fn new_shelf(dir: &Path) -> Option<Arc<extract::Shelf>> {
        extract::Shelf::new(dir)
            .inspect_err(
                |e| tracing::debug!(dir = %dir.display(), error = %e, "no shelf: packed bodies kept in memory"),
            )
            .ok()
    }

    /// How many bytes of its readings' bodies are on `shelf`.
    fn shelved_bytes(&self, shelf: &Arc<extract::Shelf>) -> u64 {
        self.files.values().filter_map(|read| read.as_ref().ok()).map(|s| s.body.bytes_on(shelf)).sum()
    }

    /// Brings the part up to date with `files` (every file of the language
    /// now): files no longer there are dropped, new ones read, and `changed`
    /// ones read again. None when nothing of this part changed.
    pub fn update(&mut self, files: &[PathBuf], changed: &[PathBuf]) -> Option<Indexed> {
        self.update_with(files, changed, false)
    }

    /// [`Workspace::update`], writing only the documents that changed when
    /// it knows which ([`Changed::only`]): an edit that keeps every
    /// definition. What a patch needs; [`Workspace::written`] gives the
    /// whole index.
    pub fn update_in_part(&mut self, files: &[PathBuf], changed: &[PathBuf]) -> Option<Indexed> {
        self.update_with(files, changed, true)
    }

    /// The whole index of the last update (or opening), written again.
    pub fn written(&self) -> scip::types::Index {
        let rebuilt = self.last.as_ref().and_then(|(p, memo)| memo.rebuilt(p));
        emit::emit(rebuilt.as_ref().unwrap_or(&resolve::Project::default()), &self.root)
    }

    fn update_with(&mut self, files: &[PathBuf], changed: &[PathBuf], in_part: bool) -> Option<Indexed> {
        let started = Instant::now();
        // Hashed: compared, two paths walk their components.
        let now: resolve::HashSet<&Path> = files.iter().map(PathBuf::as_path).collect();
        let before = self.files.len();
        self.files.retain(|p, _| now.contains(p.as_path()));
        self.stamps.retain(|p, _| now.contains(p.as_path()));
        let gone = self.files.len() != before;
        // Every file it holds is one of `files` now: those it lacks are new.
        let mut stale: Vec<PathBuf> = if self.files.len() < now.len() {
            files.iter().filter(|f| !self.files.contains_key(*f)).cloned().collect()
        } else {
            Vec::new()
        };
        // A changed go.mod or package.json moves packages: read every file
        // again.
        let markers = module_markers(self.lang);
        if changed.iter().any(|c| c.file_name().and_then(|n| n.to_str()).is_some_and(|n| markers.contains(&n))) {
            self.modules = modules(&self.root, self.lang, files);
            stale = files.to_vec();
        } else {
            stale.extend(changed.iter().filter(|c| self.files.contains_key(*c)).cloned());
        }
        stale.sort();
        stale.dedup();
        if stale.is_empty() && !gone {
            return None;
        }
        let read = self.read_all(&stale);
        self.keep(stale.into_iter().zip(read));
        Some(self.index(started, in_part))
    }

    fn keep(&mut self, read: impl Iterator<Item = (PathBuf, Stamped)>) {
        for (path, (read, stamp)) in read {
            match stamp {
                Some(s) => self.stamps.insert(path.clone(), s),
                None => self.stamps.remove(&path),
            };
            self.files.insert(path, read);
        }
    }

    /// The files it read that are no longer what they were when read
    /// (changed, replaced or gone): what a change made while they were
    /// being read, before a watcher was there to see it, left behind.
    pub fn drifted(&self) -> Vec<PathBuf> {
        self.stamps.iter().filter(|(p, s)| tree::stamp(p).as_ref() != Some(*s)).map(|(p, _)| p.clone()).collect()
    }

    /// The files read, for a resolve, and the report of their reading (the
    /// files, lines and definitions counted; a note per file skipped, cut
    /// short or read in part).
    fn gather(&self) -> (Report, Vec<Arc<Source>>) {
        let lang = self.lang;
        let mut report = Report::default();
        let mut sources = Vec::with_capacity(self.files.len());
        let mut unread = Vec::new();
        for r in self.files.values() {
            match r {
                Ok(s) => {
                    report.files += 1;
                    report.lines += s.facts.lines;
                    report.definitions += s.facts.defs.len();
                    report.macros.0 += s.facts.macros.0 as usize;
                    report.macros.1 += s.facts.macros.1 as usize;
                    if s.facts.syntax_errors.is_some() {
                        report.syntax_errors += 1;
                        unread.push(s.path.as_str());
                        tracing::debug!(path = %s.path, language = lang.name, "syntax the grammar does not read");
                    }
                    if let Some(cut) = s.facts.cut {
                        report.notes.push(format!(
                            "{}: the query ran out of time ({:?} for parse and query together) at line {}: what \
                             came before is indexed, the rest of the file is not",
                            s.path, cut.after, cut.line
                        ));
                    }
                    sources.push(s.clone());
                }
                Err(note) => report.notes.push(note.clone()),
            }
        }
        if report.syntax_errors > 0 {
            const NAMED: usize = 3;
            let more =
                if unread.len() > NAMED { format!(", and {} more", unread.len() - NAMED) } else { String::new() };
            report.notes.push(format!(
                "{} {} file(s) have syntax the {} grammar does not read ({}{more}); what it could read is indexed \
                 (RUST_LOG=signpost_treesitter=debug lists each file)",
                report.syntax_errors,
                lang.name,
                lang.name,
                unread[..unread.len().min(NAMED)].join(", ")
            ));
        }
        if report.macros.1 > 0 {
            report.notes.push(format!(
                "{} invocation(s) of a macro_rules! macro were not expanded (no rule of the macro matched, the \
                 expansion went past its bounds, or the grammar read it worse than the text): what they generate \
                 is not indexed",
                report.macros.1
            ));
        }
        (report, sources)
    }

    /// The part's definitions alone, before any use is resolved
    /// ([`resolve::definitions_only`]): the same symbols as the whole
    /// part, no edge but DECLARES.
    fn definitions(&self, started: Instant, encoded: bool) -> Indexed {
        let (mut report, sources) = self.gather();
        let project = resolve::definitions_only(sources);
        report.elapsed = started.elapsed();
        self.handed(&project, report, encoded)
    }

    /// `project`'s index as it is handed over: encoded when so asked, in a
    /// nameless file where [`Options::spill`] says and one can be made,
    /// else in memory; decoded when not asked, or when it cannot be encoded
    /// (said in the log). The definitions given early are handed over so
    /// too: on the 25.2M-line tree the process grew by 1.8 GiB while
    /// Java's 1.7M definitions were resolved and emitted decoded (their
    /// comments in them), and the peak came while they were imported
    /// (BENCHMARKS.md, issue 47, thirty-first part).
    fn handed(&self, project: &resolve::Project, report: Report, encoded: bool) -> Indexed {
        let spill = self.opts.spill.as_deref();
        let bytes = encoded.then(|| {
            signpost_graph::scip::Encoded::write(spill, |out| emit::write(project, &self.root, out))
                .map_err(|e| tracing::warn!(language = self.lang.name, error = %e, "the index could not be encoded"))
                .ok()
        });
        match bytes.flatten() {
            Some(bytes) => Indexed { encoded: Some(bytes), ..Indexed::new(self.lang, Default::default(), report) },
            None => Indexed::new(self.lang, emit::emit(project, &self.root), report),
        }
    }

    /// Resolves and writes the part: the documents that changed alone when
    /// `in_part` and it knows which, else every document.
    fn index(&mut self, started: Instant, in_part: bool) -> Indexed {
        self.index_as(started, in_part, false)
    }

    /// [`Workspace::index`], every document written `encoded` when so
    /// asked ([`Indexed::encoded`]; not a part written in part).
    fn index_as(&mut self, started: Instant, in_part: bool, encoded: bool) -> Indexed {
        let lang = self.lang;
        let (mut report, sources) = self.gather();
        let gathered = started.elapsed();
        let (mut project, memo, mut again) = resolve::resolve_again(sources, self.last.take());
        let resolved = started.elapsed();
        report.counts = project.counts;
        // Files whose documents may differ from the last index written:
        // those whose uses were resolved again, and those that go with
        // them (a symbol they share, a C++ declaration's comment).
        let anew =
            again.touched.take().filter(|_| self.last_written != 0).map(|fs| resolve::with_sharing(&project, &fs));
        report.again = again;
        // Written alone when asked and they are few (a C++ namespace or a
        // Ruby module in every file makes a patch whole anyway).
        let only = anew.as_ref().filter(|fs| in_part && fs.len() * 4 <= project.sources.len().max(4));
        let mut indexed = match only {
            Some(files) => Indexed::new(lang, emit::emit_only(&project, &self.root, files), report),
            None => self.handed(&project, report, encoded),
        };
        indexed.changed = anew.as_ref().map(|fs| Changed {
            since: self.last_written,
            documents: fs.iter().map(|&f| project.sources[f].path.clone()).collect(),
            only: only.is_some(),
        });
        indexed.report.elapsed = started.elapsed();
        let bytes = indexed.encoded.as_ref();
        tracing::debug!(
            language = lang.name,
            read_ms = gathered.as_millis() as u64,
            resolve_ms = (resolved - gathered).as_millis() as u64,
            emit_ms = (indexed.report.elapsed - resolved).as_millis() as u64,
            documents = if bytes.is_some() { project.sources.len() } else { indexed.index.documents.len() },
            encoded_bytes = bytes.map_or(0, |b| b.len()),
            on_disk = bytes.is_some_and(|b| b.on_disk()),
            "indexed"
        );
        project.keep_for_next();
        self.last = Some((project, memo));
        self.scattered = true;
        self.last_written = indexed.generation;
        indexed
    }
}

/// Reads one file into a source, or says in one line why not; with what
/// the file was when read.
fn read_one(
    reader: &mut Reader,
    root: &Path,
    lang: &'static Lang,
    path: &Path,
    modules: &[(PathBuf, String)],
    opts: &Options,
) -> (Result<Source, String>, Option<tree::Stamp>) {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let shown = tree::spell(rel);
    // A regular file inside the root, reached without a link, and bounded
    // in size: never a FIFO that blocks, nor a file a link leads out to.
    match tree::read_stamped(root, path, opts.max_file_bytes) {
        Ok((text, stamp)) => (source_of(reader, root, lang, rel, shown, &text, modules), Some(stamp)),
        Err(e) => (Err(format!("{shown}: {e}")), tree::stamp(path)),
    }
}

/// The facts of one file's text, with its package.
fn source_of(
    reader: &mut Reader,
    root: &Path,
    lang: &'static Lang,
    rel: &Path,
    shown: String,
    text: &[u8],
    modules: &[(PathBuf, String)],
) -> Result<Source, String> {
    let why = |e: &dyn std::fmt::Display| format!("{shown}: {e}");
    let mut facts = reader.read(text).map_err(|e| why(&e))?;
    let (package, module) = match lang.packages {
        Packages::Dotted => (
            facts.package.as_deref().map(|p| p.split('.').map(str::to_owned).collect()).unwrap_or_default(),
            String::new(),
        ),
        Packages::ModulePath => go_package(modules, rel),
        Packages::ModuleFile => {
            let (under, module) = module_of(modules, rel);
            let package = python_module(under);
            let init = under.file_stem().is_some_and(|s| s == "__init__");
            for i in &mut facts.imports {
                if let Some(path) = python_relative(&package, init, &i.path) {
                    i.path = path;
                }
            }
            (package, module.to_owned())
        }
        Packages::CratePath => {
            let (under, module) = module_of(modules, rel);
            let path = rust_module(under);
            for i in &mut facts.imports {
                i.path = rust_import(&path, &i.path);
            }
            (path, module.to_owned())
        }
        Packages::FilePath => {
            let (package, module) = file_package(modules, rel);
            for i in &mut facts.imports {
                if let Some(name) = i.path.strip_prefix("@self.") {
                    // `export default Ky`: a name of this very file.
                    i.path = format!("{}.{name}", package.join("."));
                } else if let Some(path) = relative_import(root, rel, &i.path, modules) {
                    i.path = path;
                }
            }
            (package, module)
        }
    };
    let body = crate::extract::Body::of(&mut facts);
    Ok(Source { path: shown, lang, facts, body, package, module })
}

/// A Rust file's module path in its crate, one namespace each:
/// `src/geometry.rs` → `geometry`, `src/a/mod.rs` → `a`; the crate roots
/// (`src/main.rs`, `src/lib.rs`, `build.rs`, and each of `src/bin/`,
/// `examples/`, `tests/` and `benches/`, a file or a directory's `main.rs`)
/// are the root, as rust-analyzer spells them.
fn rust_module(under: &Path) -> Vec<String> {
    let mut parts: Vec<String> = under.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let words: Vec<&str> = parts.iter().map(String::as_str).collect();
    let (prefix, targets) = match words[..] {
        ["src", "bin", _, ..] => (2, true),
        ["examples" | "tests" | "benches", _, ..] => (1, true),
        ["src", ..] => (1, false),
        _ => (0, false),
    };
    parts.drain(..prefix);
    // In a directory of targets, each file, or directory, is a crate.
    if targets {
        parts.remove(0);
        if parts.is_empty() {
            return parts;
        }
    }
    match parts.last().map(String::as_str) {
        Some("mod") => {
            parts.pop();
        }
        Some("main" | "lib" | "build") if parts.len() == 1 => parts.clear(),
        _ => {}
    }
    parts
}

/// A Rust `use` path (`crate::geometry::Circle`, `super::*`,
/// `geometry::{…}` items read as `geometry.Circle`), rewritten to the
/// dotted module path [`resolve`] keys packages by, from the file's module
/// `module`: `crate` is the root, `self` the module, `super` its parent,
/// and any other first name a module under this one.
fn rust_import(module: &[String], path: &str) -> String {
    let path = path.replace("::", ".");
    let mut words = path.split('.').peekable();
    let mut at: Vec<String> = match words.peek().copied() {
        Some("crate") => {
            words.next();
            Vec::new()
        }
        _ => module.to_vec(),
    };
    for w in words {
        match w {
            "self" => {}
            "super" => {
                at.pop();
            }
            _ => at.push(w.to_owned()),
        }
    }
    // The root package is the empty key: `.Circle` is `Circle` in it.
    let joined = at.join(".");
    if at.len() == 1 { format!(".{joined}") } else { joined }
}

/// A Python file's module: its path under the project root, dotted, the
/// extension and a package's `__init__` left out (`shapes/geometry.py` →
/// `shapes.geometry`).
fn python_module(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "__init__") {
        parts.pop();
    }
    let module = parts.join(".");
    if module.is_empty() { Vec::new() } else { vec![module] }
}

/// A Python relative import (`.utils.echo`, `..echo`) made absolute from
/// the module `package` of the file importing it (`init`: the file is a
/// package's `__init__.py`, the package itself): one dot is the file's
/// package, each more its parent. None when it is not relative, or climbs
/// above the project.
fn python_relative(package: &[String], init: bool, import: &str) -> Option<String> {
    let rest = import.strip_prefix('.')?;
    let up = rest.len() - rest.trim_start_matches('.').len();
    let rest = &rest[up..];
    let module = package.first().map_or("", String::as_str);
    let mut parts: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split('.').collect() };
    if !init {
        parts.pop()?;
    }
    for _ in 0..up {
        parts.pop()?;
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

/// The files a language's modules are marked by: `go.mod` (Go's module
/// path), `package.json` (an npm package's name), a Python project's.
fn module_markers(lang: &Lang) -> &'static [&'static str] {
    match lang.packages {
        Packages::ModulePath => &["go.mod"],
        Packages::FilePath => &["package.json"],
        Packages::CratePath => &["Cargo.toml"],
        Packages::ModuleFile => &["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"],
        Packages::Dotted => &[],
    }
}

/// Whether `path` is a file that names modules of some language
/// (`go.mod`, `package.json`, `pyproject.toml`, …): a change to one moves
/// that language's symbols.
pub fn is_module_marker(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    languages::LANGUAGES.iter().any(|l| module_markers(l).contains(&name))
}

/// The modules above `files`: each directory (relative to `root`) that
/// holds one of the language's marker files, with the name its SCIP
/// indexer gives it, deepest first.
fn modules(root: &Path, lang: &Lang, files: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let markers = module_markers(lang);
    if markers.is_empty() {
        return Vec::new();
    }
    let mut dirs: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        for up in rel.parent().unwrap_or(Path::new("")).ancestors() {
            if !dirs.insert(up.to_path_buf()) {
                break;
            }
        }
    }
    let name = |d: &Path| -> Option<String> {
        let dir = root.join(d);
        match lang.packages {
            Packages::ModulePath => walk::go_module(root, &dir),
            Packages::FilePath => walk::npm_package(root, &dir),
            Packages::CratePath => walk::cargo_package(root, &dir),
            // As `signpost index` names it for scip-python: the
            // distribution's name, else the directory's.
            _ => markers.iter().any(|m| tree::is_file(root, &dir.join(m))).then(|| {
                signpost_graph::indexer::python_project_name(root, &dir)
                    .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_else(|| "project".into())
            }),
        }
    };
    let mut found: Vec<(PathBuf, String)> = dirs.into_iter().filter_map(|d| name(&d).map(|m| (d, m))).collect();
    found.sort_by_key(|(d, _)| std::cmp::Reverse(d.components().count()));
    found
}

/// The module above a file (`rel`, under the root): its directory and
/// name, or the root and no name.
fn module_of<'m>(modules: &'m [(PathBuf, String)], rel: &'m Path) -> (&'m Path, &'m str) {
    match modules.iter().find(|(d, _)| rel.starts_with(d)) {
        Some((up, module)) => (rel.strip_prefix(up).unwrap_or(rel), module),
        None => (rel, ""),
    }
}

/// A TypeScript or JavaScript file's package descriptors (each directory
/// under its package's root, then the file itself) and its package's name.
/// Without a `package.json` above it, the path under the project root.
fn file_package(modules: &[(PathBuf, String)], rel: &Path) -> (Vec<String>, String) {
    let (under, module) = module_of(modules, rel);
    (under.iter().map(|c| c.to_string_lossy().into_owned()).collect(), module.to_owned())
}

/// Extensions an import without one may mean, in the order TypeScript
/// tries them.
const SCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

/// A relative import (`./shapes.totalArea`: the module as written, then
/// the imported name) of the file `rel`, rewritten to the imported file's
/// package as [`resolve`] keys it (`src.shapes.ts.totalArea`). None when
/// it is not relative or names no file of the project.
fn relative_import(root: &Path, rel: &Path, import: &str, modules: &[(PathBuf, String)]) -> Option<String> {
    let (module, name) = import.rsplit_once('.')?;
    if !module.starts_with("./") && !module.starts_with("../") && module != "." && module != ".." {
        return None;
    }
    // `./a/../b` and `./b.js` (TypeScript's ESM spelling of `./b.ts`).
    let mut joined = PathBuf::new();
    for c in rel.parent().unwrap_or(Path::new("")).join(module).components() {
        match c {
            std::path::Component::ParentDir => {
                joined.pop();
            }
            std::path::Component::Normal(n) => joined.push(n),
            _ => {}
        }
    }
    let stem = match joined.extension().and_then(|e| e.to_str()) {
        Some("js" | "jsx" | "mjs" | "cjs") => joined.with_extension(""),
        _ => joined.clone(),
    };
    let appended = |e: &str| {
        let mut p = joined.clone().into_os_string();
        p.push(".");
        p.push(e);
        PathBuf::from(p)
    };
    let candidates = std::iter::once(joined.clone())
        .chain(SCRIPT_EXTENSIONS.iter().map(|e| appended(e)))
        .chain(SCRIPT_EXTENSIONS.iter().map(|e| stem.with_extension(e)))
        .chain(SCRIPT_EXTENSIONS.iter().map(|e| joined.join("index").with_extension(e)));
    let found = candidates.into_iter().find(|c| tree::is_file(root, &root.join(c)))?;
    let (package, _) = file_package(modules, &found);
    Some(format!("{}.{name}", package.join(".")))
}

/// A Go file's package import path (one namespace) and module: the nearest
/// `go.mod` above it names the module; the directory under it the rest.
/// Without one, the directory under the project root.
fn go_package(modules: &[(PathBuf, String)], rel: &Path) -> (Vec<String>, String) {
    let dir = rel.parent().unwrap_or(Path::new(""));
    if let Some((up, module)) = modules.iter().find(|(d, _)| dir.starts_with(d)) {
        let under = dir.strip_prefix(up).unwrap_or(Path::new(""));
        let under = under.to_string_lossy().replace('\\', "/");
        let path = if under.is_empty() { module.clone() } else { format!("{module}/{under}") };
        return (vec![path], module.clone());
    }
    let d = dir.to_string_lossy().replace('\\', "/");
    (if d.is_empty() { Vec::new() } else { vec![d] }, String::new())
}
