//! What the `signpost://graph` resource says of the served graph, and
//! what every session is told as it changes.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::graph::Graph;

/// A change of the graph's status, told to every session: a swap (or a
/// refused reload), or how far a project's first index is.
#[derive(Debug, Clone, Serialize)]
pub struct GraphNotice {
    /// `swapped`, `refused`, `building` (the first index is under way:
    /// `building` says how far) or `built` (it is done).
    pub what: &'static str,
    /// What was swapped in, or why not; the graph's size.
    pub detail: String,
    /// While the first index is built: how far it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub building: Option<String>,
}

/// What the status resource says about the graph.
#[derive(Debug, Clone, Serialize)]
pub struct GraphStatus {
    /// The graph's name.
    pub name: String,
    /// The files it was loaded from (empty: the embedded sample).
    pub sources: Vec<String>,
    /// Symbols.
    pub nodes: usize,
    /// Edges.
    pub edges: usize,
    /// Source files the symbols are in.
    pub files: usize,
    /// Memory the graph holds, in MiB.
    pub memory_mib: f64,
    /// Memory the graph and the parts it was merged from (one per source,
    /// a project's languages) hold together, their shared strings counted
    /// once, in MiB: what serving it costs. Absent for a graph of one part
    /// (`memory_mib` says it) and while the parts are being read or
    /// swapped. A saved graph served whole after a restart shares no
    /// strings with its parts read beside it: it and they count apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with_parts_mib: Option<f64>,
    /// How long the load took.
    pub load_ms: u64,
    /// When it was loaded (seconds since the Unix epoch).
    pub loaded_at: u64,
    /// Graphs swapped in since the start.
    pub swaps: u64,
    /// Reloads refused (the old graph kept serving).
    pub refused: u64,
    /// The last reload: what happened.
    pub last_reload: Option<ReloadRecord>,
    /// While a project's first index is still being built: how far it is.
    /// The graph answers from what is ready meanwhile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub building: Option<String>,
    /// What the project's indexers say, each note naming what it is about:
    /// whether the tree is trusted, an indexer that did not run and why,
    /// a file not read (or read in part) and why, an ignore file that
    /// could not apply. Empty for graph files.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Files the indexer could read only in part (syntax its grammar does
    /// not know), each with the line its reading stopped at: what they
    /// declare after it may be missing. Every one, by path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_in_part: Vec<crate::tools::ReadInPart>,
}

/// One reload attempt.
#[derive(Debug, Clone, Serialize)]
pub struct ReloadRecord {
    /// `swapped`, `refused`, or `unchanged` (a part read again that gives
    /// the same graph).
    pub result: &'static str,
    /// What was loaded, or why not.
    pub detail: String,
    /// When (seconds since the Unix epoch).
    pub at: u64,
    /// How long it took.
    pub duration_ms: u64,
}

impl ReloadRecord {
    /// A part read again that gives the graph it had: nothing to swap.
    pub fn unchanged(path: &Path) -> ReloadRecord {
        ReloadRecord {
            result: "unchanged",
            detail: format!("{}: the same graph", path.display()),
            at: now(),
            duration_ms: 0,
        }
    }
}

impl GraphStatus {
    /// Describes `graph`, loaded in `load`.
    pub(super) fn loaded(&mut self, graph: &Graph, load: Duration) {
        self.name = graph.name().to_owned();
        self.nodes = graph.node_count();
        self.edges = graph.edge_count();
        self.files = graph.file_count();
        self.memory_mib = mib(graph.heap_bytes());
        self.load_ms = load.as_millis() as u64;
        self.loaded_at = now();
        self.read_in_part = graph
            .unread()
            .iter()
            .map(|(file, line)| crate::tools::ReadInPart { file: file.clone(), from_line: *line })
            .collect();
    }
}

/// `bytes` in MiB, to a tenth.
pub(super) fn mib(bytes: usize) -> f64 {
    (bytes as f64 / 1048576.0 * 10.0).round() / 10.0
}

pub(super) fn now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
