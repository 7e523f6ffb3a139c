//! The code graph: symbols with 40-hex ids and typed edges, in a compact,
//! immutable form that serves millions of symbols.
//!
//! A graph comes from one of three formats, one file each, all through the
//! public [`GraphBuilder`]: the documented JSON format ([`json`],
//! `docs/graph-format.md`), a SCIP index ([`scip`], `docs/scip.md`), or a
//! snapshot written by `signpost graph import` ([`snapshot`]). [`load`]
//! tells them apart by content; [`merge`] joins several into one workspace.
//!
//! Layout: every string lives in one arena and nodes hold spans into it;
//! kinds, files, roles and edge types are interned; edges are two
//! compressed adjacency arrays (out and in), each node's slice sorted by
//! (type, other end). The name indexes ([`index`]) are built once, here,
//! and stored in snapshots, so loading one is a read, not a rebuild.
//!
//! Edge types are upper-case words (`CALLS`, `DECLARES`, …). A *composed* key
//! such as `DECLARES.EXPOSES` follows several edges in a row: out of a class,
//! `DECLARES.EXPOSES` reaches the routes its members expose; into a route, the
//! classes whose members expose it.

mod builder;
mod concat;
mod edges;
pub(crate) mod index;
pub mod indexer;
pub mod json;
mod load;
mod node;
pub mod query;
pub mod scip;
mod scip_symbol;
pub mod search;
pub mod snapshot;
mod splice;
mod tight;
pub mod tree;

pub use builder::{EXTERNAL, GraphBuilder, NodeSpec};
pub(crate) use edges::Adjacency;
pub use edges::{Direction, EdgeKey, EdgeKeyError, EdgeSummary};
use index::{Index, Indexes};
pub use load::{Format, from_bytes, load, merge};
pub use node::{Node, NodeRef};
pub(crate) use node::{Rec, Span, Text};
pub use splice::Delta;

/// The JSON graph sample compiled into the binary: a small Spring-style shop.
pub const SAMPLE_GRAPH: &str = include_str!("../data/sample-graph.json");

/// Most edges one composed key may chain.
pub const MAX_COMPOSED: usize = 3;

/// Why a graph was refused.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// Not JSON, or not the documented shape.
    #[error("graph is not valid signpost-graph JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A node or edge that breaks a rule of the format.
    #[error("{at}: {problem}")]
    Invalid {
        /// Where, e.g. `nodes[3].id`.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// A SCIP index that cannot be read.
    #[error("not a readable SCIP index: {0}")]
    Scip(#[from] scip::ScipError),
    /// A snapshot that cannot be read (corrupt, truncated, another version).
    #[error("{0}")]
    Snapshot(#[from] snapshot::SnapshotError),
    /// A file whose content is none of the formats.
    #[error("{0}")]
    Format(String),
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Index of a node in the graph.
pub type NodeIx = u32;
/// Index of an edge type in the graph.
pub type TypeIx = u16;

/// A node id in binary form: the 20 bytes of its 40 hex characters.
pub type RawId = [u8; 20];

/// The process's resident and peak resident memory in MiB, where the
/// system says (Linux: `/proc/self/status`; zeros elsewhere): for the
/// importer's debug log and the benchmarks.
pub fn memory_mib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kib| kib / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Whether `s` is a canonical id: 40 lowercase hex characters.
pub fn is_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses 40 hex characters (either case).
pub fn parse_id(s: &str) -> Option<RawId> {
    if s.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    let hex = |b: u8| (b as char).to_digit(16);
    for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
        out[i] = (hex(pair[0])? << 4 | hex(pair[1])?) as u8;
    }
    Some(out)
}

/// The 40 lowercase hex characters of `raw`.
pub fn format_id(raw: &RawId) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(40);
    for b in raw {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// The edge types Signpost's indexers and importers make
/// (`docs/graph-format.md`). A graph may have others (a JSON graph's own);
/// one of these that a graph lacks is a question with an empty answer,
/// not a mistake.
pub const EDGE_TYPES: &[&str] = &[
    "CALLS",
    "DECLARES",
    "REFERENCES",
    "IMPLEMENTS",
    "EXTENDS",
    "OVERRIDES",
    "EXPOSES",
    "TARGETS",
    "PUBLISHES",
    "SUBSCRIBES",
];

/// Whether `s` is an edge type: an upper-case word, no dots.
pub fn is_edge_type(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// An in-memory, immutable code graph.
#[derive(Debug)]
pub struct Graph {
    pub(crate) name: String,
    pub(crate) text: Text,
    pub(crate) ids: Vec<RawId>,
    pub(crate) recs: Vec<Rec>,
    pub(crate) kinds: Vec<String>,
    pub(crate) files: Vec<String>,
    pub(crate) roles: Vec<String>,
    pub(crate) types: Vec<String>,
    pub(crate) role_lists: Vec<u16>,
    pub(crate) out: Adjacency,
    pub(crate) inn: Adjacency,
    /// One bit per out-edge (by position in `out`): set when the edge was
    /// inferred by name rather than given by a compiler-backed indexer.
    /// Empty when every edge is exact.
    pub(crate) inferred: Vec<u64>,
    /// One bit per out-edge: set when the edge is one of several a call
    /// could mean ([`Derivation::Ambiguous`]; its inferred bit is set too).
    /// Empty when none is.
    pub(crate) ambiguous: Vec<u64>,
    /// Call sites that name resolution could not bind to one definition
    /// of the project (a receiver of unknown type, overloads past telling
    /// apart), counted by the called name, sorted by name: what makes a
    /// "nobody calls it" uncertain.
    pub(crate) unresolved: Vec<(String, u32)>,
    /// Files the indexer could read only in part (syntax its grammar does
    /// not know), sorted, each with the line its reading stopped at.
    pub(crate) unread: Vec<(String, u32)>,
    pub(crate) index: Indexes,
}

/// How an edge was derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Derivation {
    /// Given by an indexer that knows the program (a SCIP indexer built on
    /// its compiler), or read from the syntax itself (DECLARES).
    #[default]
    Exact,
    /// Inferred by name resolution (the built-in tree-sitter indexer): most
    /// probably right, not checked by a compiler.
    Inferred,
    /// One of several definitions a call could mean that name resolution
    /// could not tell apart (overloads of the same arity, say): each of
    /// them gets such an edge, and at most one of them is the callee.
    Ambiguous,
}

impl Derivation {
    /// The rank of a derivation among edges that say the same: the most
    /// certain one is kept.
    fn rank(self) -> u8 {
        match self {
            Derivation::Exact => 0,
            Derivation::Inferred => 1,
            Derivation::Ambiguous => 2,
        }
    }
}

impl Graph {
    /// Parses and validates a JSON graph document.
    pub fn from_json(text: &str) -> Result<Graph, GraphError> {
        json::parse(text)
    }

    /// The embedded sample graph.
    pub fn sample() -> Graph {
        #[allow(clippy::expect_used)]
        Graph::from_json(SAMPLE_GRAPH).expect("the embedded sample graph is valid (tested)")
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.recs.len()
    }

    /// Number of distinct edges.
    pub fn edge_count(&self) -> usize {
        self.out.targets.len()
    }

    /// Bytes of memory the graph holds (its arrays and strings, by
    /// capacity): what a symbol costs, independent of the allocator.
    pub fn heap_bytes(&self) -> usize {
        self.heap_breakdown().iter().map(|(_, b)| b).sum()
    }

    /// Bytes of memory `graphs` hold together: [`Graph::heap_bytes`] of
    /// each, the strings they share counted once (a served project's
    /// merged graph and its per-language parts share their strings).
    pub fn heap_bytes_together<'a>(graphs: impl IntoIterator<Item = &'a Graph>) -> usize {
        let mut seen = std::collections::HashSet::new();
        graphs
            .into_iter()
            .map(|g| g.heap_breakdown()[1..].iter().map(|(_, b)| b).sum::<usize>() + g.text.capacity_unseen(&mut seen))
            .sum()
    }

    /// [`Graph::heap_bytes`] by what holds it, the strings first (shared with
    /// the graphs it was patched or merged from, counted whole), the
    /// symbols' ids and records, the edges, and the lookup indexes.
    pub fn heap_breakdown(&self) -> [(&'static str, usize); 6] {
        fn v<T>(x: &Vec<T>) -> usize {
            x.capacity() * std::mem::size_of::<T>()
        }
        let strings = |x: &Vec<String>| v(x) + x.iter().map(String::capacity).sum::<usize>();
        let adj = |a: &Adjacency| v(&a.offsets) + v(&a.targets) + v(&a.types);
        let made = self.index.query.get();
        let empty = Index::default();
        let ix = made.unwrap_or(&empty);
        let csr = |c: &index::Csr| v(&c.offsets) + v(&c.items);
        let counted = |x: &[(String, u32)]| x.iter().map(|(n, _)| n.capacity() + 28).sum::<usize>();
        [
            ("text", self.text.capacity()),
            (
                "records",
                v(&self.ids)
                    + v(&self.recs)
                    + strings(&self.kinds)
                    + strings(&self.files)
                    + strings(&self.roles)
                    + strings(&self.types)
                    + v(&self.role_lists)
                    + counted(&self.unresolved)
                    + counted(&self.unread),
            ),
            ("edges", adj(&self.out) + adj(&self.inn) + v(&self.inferred) + v(&self.ambiguous)),
            ("by id and file", v(&self.index.by_id) + csr(&self.index.by_file)),
            (
                "names",
                ix.lower_names.capacity()
                    + v(&ix.name_starts)
                    + v(&ix.by_name)
                    + ix.distinct_names_made().map_or(0, index::Names::heap_bytes)
                    + v(&ix.by_fqn)
                    + v(&ix.by_tail)
                    + v(&ix.fqn_rank)
                    + ix.containers.capacity()
                    + v(&ix.container_starts)
                    + csr(&ix.members),
            ),
            ("docs, kinds, roles", v(&ix.doc_words) + csr(&ix.doc_nodes) + csr(&ix.by_kind) + csr(&ix.by_role)),
        ]
    }

    /// Number of distinct source files.
    pub fn file_count(&self) -> usize {
        // A patched graph may keep the name of a file that has no symbol left.
        (1..self.files.len()).filter(|&f| !self.index.by_file.get(f).is_empty()).count()
    }

    /// The node at `ix`.
    pub fn node(&self, ix: NodeIx) -> NodeRef<'_> {
        NodeRef { graph: self, ix, rec: &self.recs[ix as usize] }
    }

    /// Every node, in index order.
    pub fn iter(&self) -> impl Iterator<Item = NodeRef<'_>> + '_ {
        (0..self.recs.len() as NodeIx).map(|ix| self.node(ix))
    }

    /// The first node named exactly `name` (tests and examples).
    pub fn find_named(&self, name: &str) -> Option<NodeRef<'_>> {
        self.iter().find(|n| n.name() == name)
    }

    /// The node with id `id` (40 hex characters, either case).
    pub fn lookup(&self, id: &str) -> Option<NodeIx> {
        self.lookup_raw(&parse_id(id)?)
    }

    /// The node with binary id `raw`.
    pub fn lookup_raw(&self, raw: &RawId) -> Option<NodeIx> {
        let by_id = &self.index.by_id;
        let i = by_id.partition_point(|&n| self.ids[n as usize] < *raw);
        by_id.get(i).copied().filter(|&n| self.ids[n as usize] == *raw)
    }

    /// How the edge `from -ty-> to` was derived (exact when absent).
    pub fn derivation(&self, from: NodeIx, ty: TypeIx, to: NodeIx) -> Derivation {
        if self.inferred.is_empty() {
            return Derivation::Exact;
        }
        match self.out.position(from, ty, to) {
            Some(i) => self.derivation_at(i),
            None => Derivation::Exact,
        }
    }

    /// How out-edge number `i` was derived.
    fn derivation_at(&self, i: usize) -> Derivation {
        let bit = |bits: &[u64]| bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
        if bit(&self.ambiguous) {
            Derivation::Ambiguous
        } else if bit(&self.inferred) {
            Derivation::Inferred
        } else {
            Derivation::Exact
        }
    }

    /// How many call sites named `name` name resolution could not bind to
    /// one definition of the project (0 for a graph a compiler-backed
    /// indexer made).
    pub fn unresolved_calls(&self, name: &str) -> u32 {
        self.unresolved.binary_search_by(|(n, _)| n.as_str().cmp(name)).map_or(0, |i| self.unresolved[i].1)
    }

    /// Files the indexer could read only in part, sorted, each with the
    /// 1-based line where it met syntax its grammar does not know: what
    /// follows may be missing from the graph.
    pub fn unread(&self) -> &[(String, u32)] {
        &self.unread
    }

    /// The line `file`'s reading stopped at, when it could be read only in
    /// part.
    pub fn unread_from(&self, file: &str) -> Option<u32> {
        self.unread.binary_search_by(|(f, _)| f.as_str().cmp(file)).ok().map(|i| self.unread[i].1)
    }

    /// Every name with call sites that were not bound, and how many.
    pub fn unresolved(&self) -> &[(String, u32)] {
        &self.unresolved
    }

    /// Whether any edge of the graph is inferred.
    pub fn has_inferred_edges(&self) -> bool {
        self.inferred.iter().any(|&w| w != 0)
    }

    /// The edges out of node `n`: `(type, other end, derivation)`.
    pub(crate) fn out_edges(&self, n: NodeIx) -> impl Iterator<Item = (TypeIx, NodeIx, Derivation)> + '_ {
        let start = self.out.offsets[n as usize] as usize;
        self.out.edges(n).enumerate().map(move |(k, (t, m))| (t, m, self.derivation_at(start + k)))
    }

    /// The base edge types present, sorted.
    pub fn edge_types(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.types.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The symbol kinds present, sorted.
    pub fn kinds(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.kinds.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The roles present, sorted.
    pub fn roles(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.roles.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The graph as sorted lines of text, one per node, edge and
    /// diagnostic, by id and independent of node order: two graphs with
    /// the same lines say the same (tests compare a patched graph with a
    /// fresh import this way).
    #[doc(hidden)]
    pub fn canonical_lines(&self) -> Vec<String> {
        let mut lines = Vec::with_capacity(self.node_count() + self.edge_count());
        for n in self.iter() {
            let mut roles: Vec<&str> = n.roles().collect();
            roles.sort_unstable();
            lines.push(format!(
                "node {} {} {:?} {:?} {:?}:{} [{}] {:?} {:?}",
                n.id(),
                n.kind(),
                n.name(),
                n.fqn(),
                n.file(),
                n.line(),
                roles.join(","),
                n.doc(),
                n.signature()
            ));
            for (t, m, how) in self.out_edges(n.ix()) {
                lines.push(format!("edge {} {} {} {how:?}", n.id(), self.types[t as usize], self.node(m).id()));
            }
        }
        for m in 0..self.node_count() as NodeIx {
            for (t, s) in self.inn.edges(m) {
                lines.push(format!("in {} {} {}", self.node(s).id(), self.types[t as usize], self.node(m).id()));
            }
        }
        lines.extend(self.unresolved.iter().map(|(n, c)| format!("unresolved {n} {c}")));
        lines.extend(self.unread.iter().map(|(f, l)| format!("unread {f} {l}")));
        lines.sort_unstable();
        lines
    }

    /// Whether the graph's indexes are those [`Index`] builds from its
    /// nodes, and its in-edges its out-edges reversed, each node's sorted
    /// by (type, other end) as lookups expect (tests check patched graphs
    /// with it).
    #[doc(hidden)]
    pub fn indexes_are_fresh(&self) -> bool {
        let sorted = |a: &Adjacency| {
            (0..self.node_count() as NodeIx).all(|u| {
                let list: Vec<(TypeIx, NodeIx)> = a.edges(u).collect();
                list.windows(2).all(|w| w[0] < w[1])
            })
        };
        let reversed = self.out.targets.len() == self.inn.targets.len()
            && (0..self.node_count() as NodeIx)
                .all(|u| self.out.edges(u).all(|(t, m)| self.inn.position(m, t, u).is_some()));
        let built = Indexes::build(self);
        // Query indexes not made are not made here (a graph never queried
        // stays so).
        let query = || {
            self.index.query.get().is_none_or(|made| {
                let built = Index::build(self);
                built == *made && built.distinct_names() == made.distinct_names()
            })
        };
        built.by_id == self.index.by_id
            && built.by_file == self.index.by_file
            && query()
            && sorted(&self.out)
            && sorted(&self.inn)
            && reversed
    }

    /// Makes now what the indexes make at their first use: the query
    /// indexes of a graph built or spliced from one never queried (a
    /// loaded graph has them), and a patched graph's distinct names. A
    /// graph about to be served is warmed, so that no query waits for
    /// them.
    pub fn warm(&self) {
        self.index().distinct_names();
    }

    /// Makes the query indexes now if they are not made (a graph never
    /// queried has none), but not a patched graph's distinct names
    /// ([`Graph::warm`]): what a graph about to be served needs before
    /// its first query, on the thread that serves it, or just after it
    /// serves (queries meanwhile, but on rayon's threads, wait for them).
    pub fn build_query_indexes(&self) {
        self.index();
    }

    /// Lets the query indexes go (made again at the next query): a graph
    /// read to be merged with others, not queried itself.
    pub fn forget_query_indexes(&mut self) {
        self.index.query = std::sync::OnceLock::new();
    }

    /// Whether the query indexes are made (a graph never queried nor
    /// warmed has none).
    pub fn is_warm(&self) -> bool {
        self.index.query.get().is_some()
    }

    /// The query indexes, made now if they were not.
    pub(crate) fn index(&self) -> &Index {
        self.index.query(self)
    }
}

#[cfg(test)]
mod tests;
