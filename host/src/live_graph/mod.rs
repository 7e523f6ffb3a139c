//! The served graph, live: loaded from one or more files, swapped whole
//! when a file changes, with a status for the `signpost://graph` resource.
//!
//! Each source file is a part, kept in memory. A reload reads again the
//! parts whose files changed and merges them with the others; a part can
//! also be replaced in memory (`signpost --project` re-indexing an edit).
//! Only a graph that loads completely replaces the one serving. Calls in
//! flight keep the `Arc<Graph>` they started with.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwap;
use tokio::sync::mpsc;

use crate::graph::{self, Graph, GraphError};

mod status;

pub use status::{GraphNotice, GraphStatus, ReloadRecord};
use status::{mib, now};

const DEBOUNCE: Duration = Duration::from_millis(300);

/// Reads the sources (none: the embedded sample) and merges them.
pub fn load_sources(paths: &[PathBuf]) -> Result<Graph, GraphError> {
    match paths {
        [] => Ok(Graph::sample()),
        [one] => graph::load(one).map_err(|e| in_file(one, e)),
        many => {
            let parts = many
                .iter()
                .map(|p| graph::load(p).map_err(|e| in_file(p, e)))
                .collect::<Result<Vec<Graph>, GraphError>>()?;
            combine(&parts.iter().collect::<Vec<_>>()).map(|g| match g {
                Combined::One(i) => parts.into_iter().nth(i).unwrap_or_else(Graph::sample),
                Combined::Merged(g) => *g,
            })
        }
    }
}

/// Parts joined: the one part that has symbols as it is (no rebuild), or
/// all of them merged.
enum Combined {
    One(usize),
    Merged(Box<Graph>),
}

fn combine(parts: &[&Graph]) -> Result<Combined, GraphError> {
    let full: Vec<usize> = (0..parts.len()).filter(|&i| parts[i].node_count() > 0).collect();
    match full[..] {
        [] => Ok(Combined::One(0)),
        [one] => Ok(Combined::One(one)),
        _ => {
            // Each name once: a project's parts (one per language) share its name.
            let mut names: Vec<&str> = Vec::new();
            for &i in &full {
                if !names.contains(&parts[i].name()) {
                    names.push(parts[i].name());
                }
            }
            let name = names.join("+");
            graph::merge(&name, full.iter().map(|&i| parts[i])).map(|g| Combined::Merged(Box::new(g)))
        }
    }
}

/// Parts by source: each one's path and graph.
pub type PartGraphs = Vec<(PathBuf, Arc<Graph>)>;

/// One source file's graph, and the file's modification time when read.
struct Part {
    path: PathBuf,
    modified: Option<SystemTime>,
    graph: Arc<Graph>,
    /// Beside a graph served whole, the file did not read: `graph` is
    /// empty, and the part is not given out ([`LiveGraph::part`]) until
    /// it is replaced.
    unread: bool,
}

/// The parts of a graph served whole, read from `sources`
/// ([`LiveGraph::open_whole`]): one that does not read is an empty graph,
/// marked unread.
fn read_beside(sources: &[PathBuf]) -> Vec<Part> {
    let started = Instant::now();
    let parts = sources
        .iter()
        .map(|p| {
            let m = modified(p);
            match graph::load(p) {
                Ok(mut graph) => {
                    // Served merged into `whole`, never queried itself.
                    graph.forget_query_indexes();
                    Part { path: p.clone(), modified: m, graph: Arc::new(graph), unread: false }
                }
                Err(e) => {
                    tracing::error!(
                        file = %p.display(),
                        error = %e,
                        "a part of the graph served whole does not read: its language is read again"
                    );
                    let empty = graph::GraphBuilder::new(&p.display().to_string()).build();
                    let empty = empty.expect("a graph without symbols builds");
                    Part { path: p.clone(), modified: m, graph: Arc::new(empty), unread: true }
                }
            }
        })
        .collect();
    tracing::debug!(ms = started.elapsed().as_millis() as u64, "the parts of the graph served whole are read");
    parts
}

/// The parts joined (see [`combine`]).
fn joined<'a>(parts: impl Iterator<Item = &'a Arc<Graph>>) -> Result<Arc<Graph>, GraphError> {
    let parts: Vec<&Arc<Graph>> = parts.collect();
    let graphs: Vec<&Graph> = parts.iter().map(|g| g.as_ref()).collect();
    Ok(match combine(&graphs)? {
        Combined::One(i) => parts.get(i).map_or_else(|| Arc::new(Graph::sample()), |g| (*g).clone()),
        Combined::Merged(g) => Arc::from(g),
    })
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn in_file(path: &Path, e: GraphError) -> GraphError {
    GraphError::Format(format!("{}: {e}", path.display()))
}

/// Most notes the status shows (the rest are counted).
const SHOWN_NOTES: usize = 200;

/// Whether `current` is the graph merged from `parts`: two of them or
/// more have symbols, each is read, and none is served itself.
fn merged_from(parts: &[Part], current: &Arc<Graph>) -> bool {
    parts.iter().filter(|p| p.graph.node_count() > 0).count() >= 2
        && !parts.iter().any(|p| p.unread || Arc::ptr_eq(&p.graph, current))
}

/// What `merged` and the `parts` it is merged from hold together
/// ([`GraphStatus::with_parts_mib`]).
fn with_parts_bytes(merged: &Graph, parts: &[Arc<Graph>]) -> usize {
    Graph::heap_bytes_together(parts.iter().map(|g| g.as_ref()).chain([merged]))
}

/// The graph serving now, and its history.
pub struct LiveGraph {
    current: ArcSwap<Graph>,
    sources: Vec<PathBuf>,
    /// The sources' graphs (empty until [`LiveGraph::open`] or a reload
    /// reads them one by one).
    parts: Mutex<Vec<Part>>,
    /// The parts still being read beside a graph served whole
    /// ([`LiveGraph::open_whole`]): awaited by the first that needs them.
    loading: Mutex<Option<std::thread::JoinHandle<Vec<Part>>>>,
    status: Mutex<GraphStatus>,
    /// Source files changed since the graph's part that holds them was
    /// made (paths as the graph writes them), with the number of their
    /// last change (a counter: no wall clock that could step back).
    stale: std::sync::RwLock<std::collections::HashMap<String, u64>>,
    /// Changes seen so far.
    changes: AtomicU64,
    /// Notes by what they are about (a part, the trust decision, the walk).
    notes: Mutex<std::collections::BTreeMap<String, Vec<String>>>,
    /// Status changes, for the sessions ([`LiveGraph::subscribe`]).
    notices: tokio::sync::broadcast::Sender<GraphNotice>,
}

impl LiveGraph {
    /// Serves `graph`, loaded from `sources` in `load` time.
    pub fn new(graph: Graph, sources: Vec<PathBuf>, load: Duration) -> LiveGraph {
        let mut status = GraphStatus {
            name: String::new(),
            sources: sources.iter().map(|p| p.display().to_string()).collect(),
            nodes: 0,
            edges: 0,
            files: 0,
            memory_mib: 0.0,
            with_parts_mib: None,
            load_ms: 0,
            loaded_at: 0,
            swaps: 0,
            refused: 0,
            last_reload: None,
            building: None,
            notes: Vec::new(),
            read_in_part: Vec::new(),
        };
        status.loaded(&graph, load);
        graph.build_query_indexes();
        LiveGraph {
            current: ArcSwap::from_pointee(graph),
            sources,
            parts: Mutex::new(Vec::new()),
            loading: Mutex::new(None),
            status: Mutex::new(status),
            stale: Default::default(),
            changes: AtomicU64::new(0),
            notes: Default::default(),
            notices: tokio::sync::broadcast::channel(64).0,
        }
    }

    /// The graph's status changes from now on: swaps, refused reloads, and
    /// a project's first index under way and done.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<GraphNotice> {
        self.notices.subscribe()
    }

    /// Sets the notes about `topic` (a part of the graph, the tree's trust,
    /// the walk), replacing what was said of it before.
    pub fn set_notes(&self, topic: &str, notes: Vec<String>) {
        let mut all = self.notes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if notes.is_empty() {
            all.remove(topic);
        } else {
            all.insert(topic.to_owned(), notes);
        }
        let flat: Vec<&String> = all.values().flatten().collect();
        let mut shown: Vec<String> = flat.iter().take(SHOWN_NOTES).map(|n| (*n).clone()).collect();
        if flat.len() > SHOWN_NOTES {
            shown
                .push(format!("… and {} more notes (the log at RUST_LOG=info has them all)", flat.len() - SHOWN_NOTES));
        }
        self.lock_status().notes = shown;
    }

    /// Says that the first index is still being built (`Some`: how far),
    /// or that it is done (`None`).
    pub fn set_building(&self, building: Option<String>) {
        let mut status = self.lock_status();
        let (what, detail) = match &building {
            Some(how) => ("building", how.clone()),
            None if status.building.is_some() => (
                "built",
                format!("the project's first index is done: {} symbols, {} edges", status.nodes, status.edges),
            ),
            None => return,
        };
        status.building = building.clone();
        drop(status);
        // (no session listening is no error)
        let _ = self.notices.send(GraphNotice { what, detail, building });
    }

    /// While the first index is still being built: how far it is.
    pub fn building(&self) -> Option<String> {
        self.lock_status().building.clone()
    }

    /// Notes that the source file `file` (a path as the graph writes it)
    /// changed now: until its part is indexed again, what the graph says
    /// about it may be out of date.
    pub fn mark_changed(&self, file: String) {
        let mut stale = self.stale.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = self.changes.fetch_add(1, Ordering::SeqCst) + 1;
        stale.insert(file, n);
    }

    /// The changes seen so far: taken before files are read, it says which
    /// marks the reading covers ([`LiveGraph::mark_indexed`]).
    pub fn changes_seen(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// Notes that the files `indexed` says yes to were indexed from what
    /// they held after change number `seen`: each is current again unless
    /// it changed since. Only the marked files are asked, not every file
    /// of the part.
    pub fn mark_indexed(&self, seen: u64, indexed: impl Fn(&str) -> bool) {
        let mut stale = self.stale.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        stale.retain(|file, &mut changed| changed > seen || !indexed(file));
    }

    /// Whether `file` changed since the graph's part that holds it was made.
    pub fn changed_since_indexed(&self, file: &str) -> bool {
        self.stale.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains_key(file)
    }

    /// Loads `sources` (none: the embedded sample), each kept as a part.
    pub fn open(sources: Vec<PathBuf>) -> Result<LiveGraph, GraphError> {
        LiveGraph::open_with(sources, Vec::new())
    }

    /// [`LiveGraph::open`], with the parts of some sources given as the
    /// graphs this process just wrote to them (`signpost --project`'s
    /// first index): those are not read back.
    pub fn open_with(sources: Vec<PathBuf>, built: Vec<(PathBuf, Arc<Graph>)>) -> Result<LiveGraph, GraphError> {
        let started = Instant::now();
        if sources.is_empty() {
            return Ok(LiveGraph::new(Graph::sample(), sources, started.elapsed()));
        }
        let parts = sources
            .iter()
            .map(|p| {
                let m = modified(p);
                if let Some((_, g)) = built.iter().find(|(path, _)| path == p) {
                    return Ok(Part { path: p.clone(), modified: m, graph: g.clone(), unread: false });
                }
                graph::load(p)
                    .map(|g| Part { path: p.clone(), modified: m, graph: Arc::new(g), unread: false })
                    .map_err(|e| in_file(p, e))
            })
            .collect::<Result<Vec<Part>, GraphError>>()?;
        let graph = joined(parts.iter().map(|p| &p.graph))?;
        graph.build_query_indexes();
        let live = LiveGraph::new(Graph::sample(), sources, Duration::ZERO);
        live.lock_status().loaded(&graph, started.elapsed());
        live.current.store(graph);
        *live.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = parts;
        Ok(live)
    }

    /// Serves `whole`, the graph merged from `sources` when they last
    /// served (a project's restart: [`crate::project::Project::take_whole`]),
    /// at once, and reads the sources as its parts beside it, on a thread
    /// of their own (or this one, if no thread starts): a reload, patch or
    /// part replaced waits for them. A part that does not read is said in
    /// the log and not given out ([`LiveGraph::part`]): the project reads
    /// its language again and replaces it; meanwhile the graph served is
    /// still `whole`, and no whole graph is taken from the parts
    /// ([`LiveGraph::parts_and_whole`]).
    /// `load` is how long `whole` took to read (the status says it).
    pub fn open_whole(sources: Vec<PathBuf>, whole: Graph, load: Duration) -> LiveGraph {
        let live = LiveGraph::new(whole, sources.clone(), load);
        let reading = std::thread::Builder::new().name("signpost-parts".into()).spawn(move || read_beside(&sources));
        match reading {
            Ok(thread) => *live.loading.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(thread),
            Err(e) => {
                tracing::warn!(error = %e, "no thread to read the graph's parts: they are read now");
                *live.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = read_beside(&live.sources);
            }
        }
        live
    }

    /// The parts, once read (see [`LiveGraph::open_whole`]).
    fn lock_parts(&self) -> std::sync::MutexGuard<'_, Vec<Part>> {
        let mut parts = self.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let reading = self.loading.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(reading) = reading {
            *parts = reading.join().unwrap_or_else(|_| {
                tracing::error!("reading the graph's parts panicked: they are read again");
                read_beside(&self.sources)
            });
        }
        parts
    }

    /// The parts serving now, by source, and the graph merged from them;
    /// none unless two parts or more have symbols (otherwise the graph
    /// served is one of them, or none).
    pub fn parts_and_whole(&self) -> Option<(PartGraphs, Arc<Graph>)> {
        let parts = self.lock_parts();
        // Read under the parts' lock: every swap of a part stores its
        // graph before letting go of it.
        let whole = self.current.load_full();
        if !merged_from(&parts, &whole) {
            return None;
        }
        Some((parts.iter().map(|p| (p.path.clone(), p.graph.clone())).collect(), whole))
    }

    fn lock_status(&self) -> std::sync::MutexGuard<'_, GraphStatus> {
        self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the parts read from the given paths with the graphs given
    /// (made in this process, e.g. by re-indexing an edit) and serves the
    /// result: one join and one swap however many parts. The files are not
    /// read; a later reload reads one only if it changes.
    pub fn replace_parts(&self, new: Vec<(PathBuf, Arc<Graph>)>) -> ReloadRecord {
        let started = Instant::now();
        let mut parts = self.lock_parts();
        let mut at = Vec::with_capacity(new.len());
        for (path, _) in &new {
            match parts.iter().position(|p| p.path == *path) {
                Some(i) => at.push(i),
                None => {
                    return ReloadRecord {
                        result: "refused",
                        detail: format!("{} is not a source of the served graph", path.display()),
                        at: now(),
                        duration_ms: 0,
                    };
                }
            }
        }
        let graph_of = |k: usize| at.iter().rposition(|&i| i == k).map_or(&parts[k].graph, |j| &new[j].1);
        let result = joined((0..parts.len()).map(graph_of));
        let what = new.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", ");
        if result.is_ok() {
            for (i, (_, graph)) in at.into_iter().zip(new) {
                parts[i].graph = graph;
                parts[i].unread = false;
            }
        }
        // Swapped before the parts are let go: the graph served is always
        // the one merged from them ([`LiveGraph::parts_and_whole`]).
        let record = self.swap(result, started, &what);
        drop(parts);
        record
    }

    /// Patches the part read from `path`, and the served graph with it, in
    /// one swap: `patch` makes the new graph from the old (a splice, say),
    /// given for a graph merged from several parts the record another part
    /// has of a node (see [`Graph::spliced`]). `None`, with nothing done,
    /// when the part is not `base` any more (replaced since, by a precise
    /// index say): the caller replaces it whole. Otherwise the record of
    /// the swap and the part now.
    ///
    /// A merged graph is patched first, with the machine to itself, and
    /// served at once; the part, which only the next merge or patch reads,
    /// is patched after, under the same lock (no one sees the parts
    /// without it). When the merged graph cannot be patched (a symbol
    /// another part defines too), the part is patched and the parts are
    /// merged again.
    pub fn patch_part(
        &self,
        path: &Path,
        base: &Arc<Graph>,
        patch: impl Fn(&Graph, &(dyn Fn(&graph::RawId) -> Option<graph::Node> + Sync)) -> Result<Graph, GraphError>,
    ) -> Option<(ReloadRecord, Arc<Graph>)> {
        let started = Instant::now();
        let mut parts = self.lock_parts();
        let i = parts.iter().position(|p| p.path == path)?;
        if !Arc::ptr_eq(&parts[i].graph, base) {
            return None;
        }
        let what = path.display().to_string();
        let current = self.current.load_full();
        let others = (0..parts.len()).filter(|&k| k != i && parts[k].graph.node_count() > 0).count();
        // A merged graph (more than one part with symbols, before and
        // after) is patched alike; otherwise the parts are joined as a
        // swap joins them (one part: itself, no rebuild).
        let merged = others > 0 && base.node_count() > 0 && !parts.iter().any(|p| Arc::ptr_eq(&p.graph, &current));
        let whole = merged.then(|| {
            let fallback = |id: &graph::RawId| {
                (0..parts.len())
                    .filter(|&k| k != i)
                    .find_map(|k| parts[k].graph.lookup_raw(id).map(|n| parts[k].graph.node(n).to_node()))
            };
            patch(&current, &fallback)
        });
        drop(current);
        // A merged graph patched that still holds symbols is served now:
        // the part, patched next, is checked to hold some too.
        let early = match whole {
            Some(Ok(g)) if g.node_count() > 0 => {
                let graph = Arc::new(g);
                let record = self.swap(Ok(graph.clone()), started, &format!("{what} (the merged graph patched)"));
                Some((record, graph))
            }
            _ => None,
        };
        let part = match patch(base, &|_| None) {
            Ok(g) => Arc::new(g),
            Err(e) if early.is_none() => {
                drop(parts);
                return Some((self.swap(Err(e), started, &what), base.clone()));
            }
            Err(e) => {
                // The merged graph took a patch the part refused (a bug in
                // the patch): told refused, the caller imports the part
                // whole, which merges the parts again.
                tracing::warn!(what = %what, error = %e, "the part refused a patch its merged graph took");
                let detail = crate::sanitize::escape(&format!("{e}; the part is imported whole"), 2000);
                let duration_ms = started.elapsed().as_millis() as u64;
                return Some((ReloadRecord { result: "refused", detail, at: now(), duration_ms }, base.clone()));
            }
        };
        let join = || joined((0..parts.len()).map(|k| if k == i { &part } else { &parts[k].graph }));
        let (record, served) = match early {
            Some((record, graph)) if part.node_count() > 0 => (record, Some(graph)),
            early => {
                // A symbol two parts define is merged again, not patched;
                // a part the edit emptied leaves the others, joined as a
                // swap joins them (one: itself), after the merged graph
                // patched served for the time the part took.
                let again = early.is_none() && merged && part.node_count() > 0;
                let how = if again { "the parts merged again" } else { "the part served" };
                let result = join();
                let served = result.as_ref().ok().cloned();
                (self.swap(result, started, &format!("{what} ({how})")), served)
            }
        };
        if record.result == "swapped" {
            parts[i].graph = part.clone();
        }
        drop(parts);
        // What a patched graph's indexes make at first use is made now, on
        // this thread, once the edit is served: only a search in between
        // makes it itself (a part served alone later makes its own).
        if let Some(graph) = served {
            graph.warm();
        }
        Some((record, part))
    }

    /// The graph the part read from `path` serves now.
    pub fn part(&self, path: &Path) -> Option<Arc<Graph>> {
        let parts = self.lock_parts();
        parts.iter().find(|p| p.path == path && !p.unread).map(|p| p.graph.clone())
    }

    /// The graph serving now.
    pub fn current(&self) -> Arc<Graph> {
        self.current.load_full()
    }

    /// Serves `graph` from now on (for embedders and the case runner; file
    /// reloads go through [`LiveGraph::reload`]). The parts are left as
    /// they are: `graph` is not taken as merged from them.
    pub fn set(&self, graph: Arc<Graph>) {
        graph.build_query_indexes();
        self.current.store(graph);
    }

    /// The files the graph comes from.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// The status resource's content.
    pub fn status(&self) -> GraphStatus {
        let (mut status, current, parts) = {
            let status = self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // The graph the status describes: a swap stores it under this lock.
            let current = self.current.load_full();
            let parts = self.parts_merged_into(&current);
            (status.clone(), current, parts)
        };
        // Summed with no lock held: a swap does not wait for it.
        status.with_parts_mib = parts.map(|parts| mib(with_parts_bytes(&current, &parts)));
        status
    }

    /// The parts `current` is merged from ([`merged_from`]), taken without
    /// waiting: `None` while they are being read or swapped (the next
    /// status says), or when `current` is not merged from them.
    fn parts_merged_into(&self, current: &Arc<Graph>) -> Option<Vec<Arc<Graph>>> {
        use std::sync::TryLockError::{Poisoned, WouldBlock};
        let parts = match self.parts.try_lock() {
            Ok(parts) => parts,
            Err(Poisoned(e)) => e.into_inner(),
            Err(WouldBlock) => return None,
        };
        let reading = match self.loading.try_lock() {
            Ok(loading) => loading.is_some(),
            Err(Poisoned(e)) => e.into_inner().is_some(),
            Err(WouldBlock) => return None,
        };
        (!reading && merged_from(&parts, current)).then(|| parts.iter().map(|p| p.graph.clone()).collect())
    }

    /// Loads again the sources whose files changed (every source when the
    /// graph was not opened part by part); swaps the graph in if it loads,
    /// keeps the old one otherwise.
    pub fn reload(&self) -> ReloadRecord {
        let started = Instant::now();
        let mut parts = self.lock_parts();
        let result = if parts.is_empty() {
            load_sources(&self.sources).map(Arc::new)
        } else {
            let mut next: Vec<(Option<SystemTime>, Arc<Graph>)> =
                parts.iter().map(|p| (p.modified, p.graph.clone())).collect();
            let mut failed = None;
            for (i, p) in parts.iter().enumerate() {
                let m = modified(&p.path);
                if m.is_some() && m == p.modified {
                    continue;
                }
                match graph::load(&p.path) {
                    Ok(g) => next[i] = (m, Arc::new(g)),
                    Err(e) => {
                        failed = Some(in_file(&p.path, e));
                        break;
                    }
                }
            }
            let result = match failed {
                Some(e) => Err(e),
                None => joined(next.iter().map(|(_, g)| g)),
            };
            if result.is_ok() {
                for (p, (m, g)) in parts.iter_mut().zip(next) {
                    p.unread &= Arc::ptr_eq(&p.graph, &g);
                    p.modified = m;
                    p.graph = g;
                }
            }
            result
        };
        let record = self.swap(result, started, "reload");
        drop(parts);
        record
    }

    /// Serves `result` if it is a graph; records what happened either way.
    fn swap(&self, result: Result<Arc<Graph>, GraphError>, started: Instant, what: &str) -> ReloadRecord {
        // A graph built from parts never queried (a merge, a part served
        // alone) makes its query indexes before it serves, while the graph
        // it replaces answers. But while a project's first index is built,
        // it serves first and makes them after, once the graph it replaced
        // is let go: the merges of the last parts are when the process is
        // at its largest, and making a merged graph's indexes takes about
        // 70 MiB for a moment on a 3.3M-line tree (BENCHMARKS.md, issue 47,
        // thirty-sixth part). A query meanwhile waits for them (half a
        // second there) and reads what was made ([`Graph::build_query_indexes`]).
        let later = self.lock_status().building.is_some();
        if let Ok(graph) = &result
            && !later
        {
            graph.build_query_indexes();
        }
        let mut unindexed = None;
        let duration_ms = started.elapsed().as_millis() as u64;
        let mut status = self.lock_status();
        let record = match result {
            Ok(graph) => {
                let detail = format!("{}: {} symbols, {} edges", graph.name(), graph.node_count(), graph.edge_count());
                tracing::info!(
                    graph = graph.name(),
                    nodes = graph.node_count(),
                    edges = graph.edge_count(),
                    duration_ms,
                    what,
                    "graph swapped"
                );
                status.loaded(&graph, started.elapsed());
                status.swaps += 1;
                if later {
                    unindexed = Some(graph.clone());
                }
                self.current.store(graph);
                ReloadRecord { result: "swapped", detail, at: now(), duration_ms }
            }
            Err(e) => {
                let detail = crate::sanitize::escape(&format!("{e}; the previous graph keeps serving"), 2000);
                tracing::warn!(error = %detail, "graph reload refused");
                status.refused += 1;
                ReloadRecord { result: "refused", detail, at: now(), duration_ms }
            }
        };
        status.last_reload = Some(record.clone());
        let building = status.building.clone();
        drop(status);
        let _ = self.notices.send(GraphNotice { what: record.result, detail: record.detail.clone(), building });
        if let Some(graph) = unindexed {
            graph.build_query_indexes();
            let mut status = self.lock_status();
            if Arc::ptr_eq(&self.current.load(), &graph) {
                status.memory_mib = mib(graph.heap_bytes());
            }
        }
        record
    }

    /// Watches the source files (their directories, so atomic renames are
    /// seen) and reloads after changes settle. Needs a tokio runtime; the
    /// watchers live as long as the task.
    pub fn watch(self: Arc<Self>) -> anyhow::Result<()> {
        if self.sources.is_empty() {
            return Ok(());
        }
        let (tx, mut rx) = mpsc::channel::<()>(16);
        let requests = Arc::new(AtomicU64::new(0));
        let watchers = crate::watch::watch_files(&self.sources, tx.clone(), requests.clone(), "graph")?;
        tokio::spawn(async move {
            let _watchers = watchers;
            while crate::watch::settled(&mut rx, DEBOUNCE).await {
                let me = self.clone();
                let seen = requests.load(Ordering::SeqCst);
                if let Err(e) = tokio::task::spawn_blocking(move || me.reload()).await {
                    tracing::error!(error = %e, "graph reload task failed");
                }
                // Events during the load ask for another round.
                if requests.load(Ordering::SeqCst) != seen {
                    let _ = tx.try_send(());
                }
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first index's progress is told once per change: under way, then
    /// done (once), and every swap.
    #[test]
    fn status_changes_are_told_once_each() {
        let live = LiveGraph::new(Graph::sample(), Vec::new(), Duration::ZERO);
        let mut heard = live.subscribe();
        live.set_building(Some("java served whole".into()));
        live.set_building(None);
        live.set_building(None);
        live.set(Arc::new(Graph::sample()));
        let record = live.swap(Ok(Arc::new(Graph::sample())), Instant::now(), "test");
        assert_eq!(record.result, "swapped");
        let told: Vec<(&str, Option<String>)> =
            std::iter::from_fn(|| heard.try_recv().ok()).map(|n| (n.what, n.building)).collect();
        assert_eq!(
            told,
            [("building", Some("java served whole".to_owned())), ("built", None), ("swapped", None)],
            "{told:?}"
        );
    }

    /// The status counts the merged graph and its parts together, the
    /// strings they share once; a graph of one part is not counted again.
    #[test]
    fn the_status_counts_a_merged_graph_with_its_parts() {
        let other = serde_json::json!({"nodes": [{"id": format!("{:040x}", 7), "kind": "class", "name": "Other", "file": "o.java"}]});
        let a = Arc::new(Graph::sample());
        let b = Arc::new(Graph::from_json(&other.to_string()).unwrap_or_else(|e| panic!("{e}")));
        let (pa, pb) = (PathBuf::from("/nonexistent/a.scip"), PathBuf::from("/nonexistent/b.scip"));
        let sources = vec![pa.clone(), pb.clone()];
        let live = LiveGraph::open_with(sources, vec![(pa.clone(), a.clone()), (pb, b.clone())])
            .unwrap_or_else(|e| panic!("{e}"));
        let merged = live.current();
        assert!(!Arc::ptr_eq(&merged, &a) && merged.node_count() == a.node_count() + 1);
        let together = with_parts_bytes(&merged, &[a.clone(), b.clone()]);
        let apart = a.heap_bytes() + b.heap_bytes() + merged.heap_bytes();
        let text = |g: &Graph| g.heap_breakdown()[0].1;
        assert_eq!(together, apart - text(&a) - text(&b), "the parts' strings, shared with the merged graph, once");
        let parts = live.parts_merged_into(&merged).unwrap_or_default();
        assert_eq!(with_parts_bytes(&merged, &parts), together);
        assert_eq!(live.status().with_parts_mib, Some(mib(together)));
        let one = LiveGraph::open_with(vec![pa.clone()], vec![(pa, a)]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(one.status().with_parts_mib, None, "a graph of one part is served itself");
    }

    /// While a first index is built, a merged graph serves and then makes
    /// its query indexes: they are made by the time the swap returns, and
    /// the status counts them.
    #[test]
    fn a_first_indexs_merged_graph_makes_its_indexes_once_it_serves() {
        let node = |n: u32, name: &str| serde_json::json!({"id": format!("{n:040x}"), "kind": "class", "name": name, "file": "o.java"});
        let graph = |nodes: Vec<serde_json::Value>| {
            let doc = serde_json::json!({ "nodes": nodes });
            Arc::new(Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}")))
        };
        let (pa, pb) = (PathBuf::from("/nonexistent/a.scip"), PathBuf::from("/nonexistent/b.scip"));
        let built = vec![(pa.clone(), Arc::new(Graph::sample())), (pb.clone(), graph(vec![node(7, "Other")]))];
        let live = LiveGraph::open_with(vec![pa.clone(), pb.clone()], built).unwrap_or_else(|e| panic!("{e}"));
        live.set_building(Some("java".into()));
        let old = Arc::downgrade(&live.current());
        let b = graph(vec![node(7, "Other"), node(8, "More")]);
        assert_eq!(live.replace_parts(vec![(pb, b.clone())]).result, "swapped");
        let merged = live.current();
        assert_eq!(merged.node_count(), Graph::sample().node_count() + 2);
        assert!(merged.is_warm() && !b.is_warm(), "the merged graph's indexes made, not its part's");
        assert!(old.upgrade().is_none(), "the graph it replaced let go");
        assert_eq!(live.status().memory_mib, mib(merged.heap_bytes()), "counted with its indexes");
        live.set_building(None);
        let c = graph(vec![node(9, "Third")]);
        assert_eq!(live.replace_parts(vec![(pa, c)]).result, "swapped");
        assert!(live.current().is_warm(), "made before it serves once built");
    }

    /// A graph served whole reads its parts beside it: one that reads is
    /// given out and the pair is taken for a save; one that does not is
    /// not given out, no whole graph is taken from the parts until it is
    /// replaced, and the graph served stays the whole one.
    #[test]
    fn a_part_that_does_not_read_beside_a_whole_graph_is_not_given_out() {
        let dir = std::env::temp_dir().join(format!("signpost-beside-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let (good, other, bad) = (dir.join("a.snapshot"), dir.join("c.snapshot"), dir.join("b.snapshot"));
        let part = Graph::sample();
        for file in [&good, &other] {
            std::fs::write(file, graph::snapshot::write(&part)).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&bad, b"SIGNPOST-GRAPH\0 cut short").unwrap_or_else(|e| panic!("{e}"));
        let whole = graph::merge("whole", [&part, &part]).unwrap_or_else(|e| panic!("{e}"));
        let nodes = whole.node_count();
        let live = LiveGraph::open_whole(vec![good.clone(), bad.clone(), other], whole, Duration::ZERO);
        assert_eq!(live.current().node_count(), nodes, "the whole graph serves at once");
        assert!(live.part(&good).is_some_and(|g| g.node_count() == part.node_count()));
        assert!(live.part(&bad).is_none(), "a part that did not read is given out");
        assert!(live.parts_and_whole().is_none(), "a whole graph is taken from parts one of which did not read");
        // Replaced, it is a part like the others.
        let record = live.replace_parts(vec![(bad.clone(), Arc::new(Graph::sample()))]);
        assert_eq!(record.result, "swapped", "{}", record.detail);
        assert!(live.part(&bad).is_some());
        let (parts, merged) = live.parts_and_whole().unwrap_or_else(|| panic!("no pair once both parts read"));
        assert_eq!(parts.len(), 3);
        assert!(Arc::ptr_eq(&merged, &live.current()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A project's parts (one per language) share its name: the merged
    /// graph is named once, not once per part.
    #[test]
    fn parts_that_share_a_name_are_named_once() {
        let (a, b) = (Graph::sample(), Graph::sample());
        match combine(&[&a, &b]) {
            Ok(Combined::Merged(graph)) => assert_eq!(graph.name(), a.name()),
            Ok(Combined::One(_)) => panic!("two parts with symbols are merged"),
            Err(e) => panic!("{e}"),
        }
    }
}
