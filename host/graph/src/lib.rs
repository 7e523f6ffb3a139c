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
pub(crate) mod index;
pub mod indexer;
pub mod json;
pub mod query;
pub mod scip;
mod scip_symbol;
pub mod search;
pub mod snapshot;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use builder::{EXTERNAL, GraphBuilder, NodeSpec};
use index::Index;

/// The JSON graph sample compiled into the binary: a small Spring-style shop.
pub const SAMPLE_GRAPH: &str = include_str!("../../data/sample-graph.json");

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
    Scip(String),
    /// A snapshot that cannot be read (corrupt, truncated, another version).
    #[error("{0}")]
    Snapshot(String),
    /// A file whose content is none of the formats.
    #[error("{0}")]
    Format(String),
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A symbol, as the JSON format stores it and as tools return it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, PartialEq, Default)]
pub struct Node {
    /// 40 lowercase hex characters.
    pub id: String,
    /// `class`, `interface`, `struct`, `trait`, `function`, `method`, `field`, `module`, `route`, …
    pub kind: String,
    /// Short name.
    pub name: String,
    /// Fully qualified name.
    #[serde(default)]
    pub fqn: String,
    /// Source file, relative to the repository root.
    #[serde(default)]
    pub file: String,
    /// 1-based line of the declaration (0 when unknown).
    #[serde(default)]
    pub line: u32,
    /// Roles such as `controller`, `service`, `test`, `external`.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Documentation text.
    #[serde(default)]
    pub doc: String,
    /// Declaration signature, when the source gives one (SCIP indexes do).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

/// Direction of travel along edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    // Plain comments, not docs: documented variants would make schemars emit
    // `oneOf`/`const` instead of a plain `enum`, which agents read worse.
    // Along edges, from source to destination.
    #[allow(missing_docs)]
    Out,
    // Against edges, from destination to source.
    #[allow(missing_docs)]
    In,
}

impl Direction {
    /// `"out"` or `"in"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Out => "out",
            Direction::In => "in",
        }
    }
}

/// Index of a node in the graph.
pub type NodeIx = u32;
/// Index of an edge type in the graph.
pub type TypeIx = u16;

/// A node id in binary form: the 20 bytes of its 40 hex characters.
pub type RawId = [u8; 20];

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

/// Whether `s` is an edge type: an upper-case word, no dots.
pub fn is_edge_type(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A byte range of the string arena.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u32,
    pub len: u32,
}

/// One node's fixed-size record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rec {
    pub name: Span,
    pub fqn: Span,
    pub doc: Span,
    pub signature: Span,
    pub file: u32,
    pub line: u32,
    pub roles_start: u32,
    pub kind: u16,
    pub roles_len: u16,
}

impl Rec {
    pub const WORDS: usize = 13;

    pub fn to_words(self) -> [u32; Rec::WORDS] {
        [
            self.name.start,
            self.name.len,
            self.fqn.start,
            self.fqn.len,
            self.doc.start,
            self.doc.len,
            self.signature.start,
            self.signature.len,
            self.file,
            self.line,
            self.roles_start,
            self.kind as u32,
            self.roles_len as u32,
        ]
    }

    pub fn from_words(w: &[u32]) -> Rec {
        Rec {
            name: Span { start: w[0], len: w[1] },
            fqn: Span { start: w[2], len: w[3] },
            doc: Span { start: w[4], len: w[5] },
            signature: Span { start: w[6], len: w[7] },
            file: w[8],
            line: w[9],
            roles_start: w[10],
            kind: w[11] as u16,
            roles_len: w[12] as u16,
        }
    }
}

/// Edges of one direction: node `n`'s edges are
/// `targets[offsets[n]..offsets[n+1]]` with their types in `types`, sorted
/// by (type, other end).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Adjacency {
    pub offsets: Vec<u32>,
    pub targets: Vec<NodeIx>,
    pub types: Vec<TypeIx>,
}

impl Adjacency {
    fn range(&self, n: NodeIx) -> std::ops::Range<usize> {
        self.offsets[n as usize] as usize..self.offsets[n as usize + 1] as usize
    }

    /// `(type, other)` pairs of node `n`.
    fn edges(&self, n: NodeIx) -> impl Iterator<Item = (TypeIx, NodeIx)> + '_ {
        let r = self.range(n);
        self.types[r.clone()].iter().copied().zip(self.targets[r].iter().copied())
    }

    /// The other ends of node `n`'s edges of type `ty`, ascending.
    fn of_type(&self, n: NodeIx, ty: TypeIx) -> &[NodeIx] {
        let r = self.range(n);
        let types = &self.types[r.clone()];
        let lo = types.partition_point(|&t| t < ty);
        let hi = lo + types[lo..].partition_point(|&t| t <= ty);
        &self.targets[r.start + lo..r.start + hi]
    }
}

/// An in-memory, immutable code graph.
#[derive(Debug)]
pub struct Graph {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) ids: Vec<RawId>,
    pub(crate) recs: Vec<Rec>,
    pub(crate) kinds: Vec<String>,
    pub(crate) files: Vec<String>,
    pub(crate) roles: Vec<String>,
    pub(crate) types: Vec<String>,
    pub(crate) role_lists: Vec<u16>,
    pub(crate) out: Adjacency,
    pub(crate) inn: Adjacency,
    pub(crate) index: Index,
}

/// A node of a [`Graph`]: its fields, borrowed.
#[derive(Clone, Copy)]
pub struct NodeRef<'g> {
    graph: &'g Graph,
    ix: NodeIx,
    rec: &'g Rec,
}

impl<'g> NodeRef<'g> {
    fn span(&self, s: Span) -> &'g str {
        &self.graph.text[s.start as usize..(s.start + s.len) as usize]
    }
    /// Its index.
    pub fn ix(&self) -> NodeIx {
        self.ix
    }
    /// Its id in binary form.
    pub fn raw_id(&self) -> &'g RawId {
        &self.graph.ids[self.ix as usize]
    }
    /// Its id: 40 lowercase hex characters.
    pub fn id(&self) -> String {
        format_id(self.raw_id())
    }
    /// Kind.
    pub fn kind(&self) -> &'g str {
        &self.graph.kinds[self.rec.kind as usize]
    }
    /// Short name.
    pub fn name(&self) -> &'g str {
        self.span(self.rec.name)
    }
    /// Qualified name (may be empty).
    pub fn fqn(&self) -> &'g str {
        self.span(self.rec.fqn)
    }
    /// Documentation (may be empty).
    pub fn doc(&self) -> &'g str {
        self.span(self.rec.doc)
    }
    /// Signature (may be empty).
    pub fn signature(&self) -> &'g str {
        self.span(self.rec.signature)
    }
    /// Source file (may be empty).
    pub fn file(&self) -> &'g str {
        &self.graph.files[self.rec.file as usize]
    }
    /// 1-based line, 0 when unknown.
    pub fn line(&self) -> u32 {
        self.rec.line
    }
    /// Roles.
    pub fn roles(&self) -> impl Iterator<Item = &'g str> + 'g {
        let (g, start, len) = (self.graph, self.rec.roles_start as usize, self.rec.roles_len as usize);
        g.role_lists[start..start + len].iter().map(move |&r| g.roles[r as usize].as_str())
    }
    /// Whether it has role `role` (case-insensitive).
    pub fn has_role(&self, role: &str) -> bool {
        self.roles().any(|r| r.eq_ignore_ascii_case(role))
    }
    /// An owned copy of the whole record.
    pub fn to_node(&self) -> Node {
        Node {
            id: self.id(),
            kind: self.kind().to_owned(),
            name: self.name().to_owned(),
            fqn: self.fqn().to_owned(),
            file: self.file().to_owned(),
            line: self.line(),
            roles: self.roles().map(str::to_owned).collect(),
            doc: self.doc().to_owned(),
            signature: self.signature().to_owned(),
        }
    }
}

impl std::fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeRef").field("id", &self.id()).field("kind", &self.kind()).field("fqn", &self.fqn()).finish()
    }
}

/// Reads a graph file in any of the formats, told apart by content: a
/// snapshot by its magic bytes, JSON by its first non-blank byte `{`, and
/// anything else that parses as a SCIP protobuf index.
pub fn load(path: &Path) -> Result<Graph, GraphError> {
    let bytes = std::fs::read(path)?;
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
    from_bytes(&bytes, name)
}

/// Which format `bytes` are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `docs/graph-format.md`.
    Json,
    /// A SCIP index (protobuf).
    Scip,
    /// A `signpost graph import` snapshot.
    Snapshot,
}

impl Format {
    /// Detects the format from content. `None` for empty input. Text (a
    /// UTF-8 start without control characters) is read as JSON, so a
    /// mistyped JSON file gets JSON's error, not protobuf's; SCIP indexes
    /// start with a protobuf tag byte, a control character.
    pub fn detect(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(snapshot::MAGIC_PREFIX) {
            return Some(Format::Snapshot);
        }
        bytes.iter().position(|b| !b.is_ascii_whitespace())?;
        // Control characters first: a SCIP index starts with a tag byte
        // and its metadata holds more (`0x08`, `0x12`, `0x1a`), whatever
        // its length byte happens to be (123 is `{`). JSON has none.
        let head = &bytes[..bytes.len().min(1024)];
        if head.iter().any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | b' ')) {
            return Some(Format::Scip);
        }
        let text = match std::str::from_utf8(head) {
            Ok(_) => true,
            // A character cut by the 1 KiB window is still text.
            Err(e) => e.error_len().is_none() && e.valid_up_to() + 4 > head.len(),
        };
        Some(if text { Format::Json } else { Format::Scip })
    }
}

/// Reads a graph from bytes in any format; `name` names it when the
/// content does not.
pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Graph, GraphError> {
    match Format::detect(bytes) {
        None => Err(GraphError::Format("the file is empty".into())),
        Some(Format::Snapshot) => snapshot::read(bytes),
        Some(Format::Json) => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| GraphError::Format(format!("starts like JSON but is not UTF-8 text ({e})")))?;
            json::parse(text)
        }
        Some(Format::Scip) => scip::import(bytes, &scip::Options { name: name.into() }),
    }
}

/// Joins several graphs into one (a workspace of repositories). Nodes with
/// the same id are one node: a definition wins over a placeholder (a symbol
/// another repository only references, or a namespace with no source file
/// of its own), otherwise the first graph given wins. Edges of every graph
/// are kept.
pub fn merge(name: &str, parts: &[Graph]) -> Result<Graph, GraphError> {
    let mut b = GraphBuilder::new(name);
    for g in parts {
        let mut map = Vec::with_capacity(g.node_count());
        for n in g.iter() {
            let roles: Vec<&str> = n.roles().collect();
            map.push(b.merge_node(NodeSpec {
                id: *n.raw_id(),
                kind: n.kind(),
                name: n.name(),
                fqn: n.fqn(),
                file: n.file(),
                line: n.line(),
                roles: &roles,
                doc: n.doc(),
                signature: n.signature(),
            })?);
        }
        for n in 0..g.node_count() as NodeIx {
            for (t, m) in g.out.edges(n) {
                b.add_edge(map[n as usize], &g.types[t as usize], map[m as usize])?;
            }
        }
    }
    b.build()
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
        fn v<T>(x: &Vec<T>) -> usize {
            x.capacity() * std::mem::size_of::<T>()
        }
        let strings = |x: &Vec<String>| v(x) + x.iter().map(String::capacity).sum::<usize>();
        let adj = |a: &Adjacency| v(&a.offsets) + v(&a.targets) + v(&a.types);
        let ix = &self.index;
        let csr = |c: &index::Csr| v(&c.offsets) + v(&c.items);
        self.text.capacity()
            + v(&self.ids)
            + v(&self.recs)
            + strings(&self.kinds)
            + strings(&self.files)
            + strings(&self.roles)
            + strings(&self.types)
            + v(&self.role_lists)
            + adj(&self.out)
            + adj(&self.inn)
            + v(&ix.by_id)
            + ix.lower_names.capacity()
            + v(&ix.name_starts)
            + v(&ix.by_name)
            + v(&ix.by_fqn)
            + v(&ix.by_tail)
            + v(&ix.fqn_rank)
            + ix.containers.capacity()
            + v(&ix.container_starts)
            + csr(&ix.members)
            + v(&ix.doc_words)
            + csr(&ix.doc_nodes)
            + csr(&ix.by_kind)
            + csr(&ix.by_role)
            + csr(&ix.by_file)
    }

    /// Number of distinct source files.
    pub fn file_count(&self) -> usize {
        self.files.iter().filter(|f| !f.is_empty()).count()
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

    /// The base edge types present, sorted.
    pub fn edge_types(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.types.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The name indexes.
    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Parses an edge key (`CALLS`, `DECLARES.EXPOSES`) into base types.
    /// `Ok(None)` when the key is well-formed but uses a type this graph lacks.
    pub fn parse_edge_key(&self, key: &str) -> Result<Option<EdgeKey>, String> {
        let parts: Vec<&str> = key.split('.').collect();
        if parts.len() > MAX_COMPOSED {
            return Err(format!("`{key}` chains {} edges; at most {MAX_COMPOSED}", parts.len()));
        }
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            if !is_edge_type(p) {
                return Err(format!("`{key}` is not an edge type"));
            }
            match self.type_ix(p) {
                Some(t) => out.push(t),
                None => return Ok(None),
            }
        }
        Ok(Some(EdgeKey(out)))
    }

    fn type_ix(&self, name: &str) -> Option<TypeIx> {
        self.types.iter().position(|t| t == name).map(|i| i as TypeIx)
    }

    fn adjacency(&self, dir: Direction) -> &Adjacency {
        match dir {
            Direction::Out => &self.out,
            Direction::In => &self.inn,
        }
    }

    /// How many nodes one composed step away from `origin` (without
    /// materialising them for a single step).
    pub fn walk_len(&self, origin: NodeIx, dir: Direction, key: &EdgeKey) -> usize {
        match key.0[..] {
            [ty] => self.adjacency(dir).of_type(origin, ty).len(),
            _ => self.walk(origin, dir, key).len(),
        }
    }

    /// Nodes one composed step away from `origin`, deduplicated: ascending
    /// for one step, in discovery order for composed keys.
    pub fn walk(&self, origin: NodeIx, dir: Direction, key: &EdgeKey) -> Vec<NodeIx> {
        let adj = self.adjacency(dir);
        let steps: Vec<TypeIx> = match dir {
            Direction::Out => key.0.clone(),
            Direction::In => key.0.iter().rev().copied().collect(),
        };
        // One step needs no deduplication: the builder keeps one edge per
        // (source, type, destination).
        if let [ty] = steps[..] {
            return adj.of_type(origin, ty).to_vec();
        }
        let mut frontier = vec![origin];
        for ty in steps {
            let mut seen = HashSet::new();
            let mut next = Vec::new();
            for n in frontier {
                for &m in adj.of_type(n, ty) {
                    if seen.insert(m) {
                        next.push(m);
                    }
                }
            }
            frontier = next;
        }
        frontier
    }

    /// Edge counts per key and direction: every base type, plus the composed
    /// `DECLARES.<type>` keys (what a container's members connect to).
    /// Linear in the edges it visits (the origins' own edges, and the edges
    /// of their members, out, or of the nodes reaching them, in), plus a sort
    /// of the nodes reached: no hashing per edge, so a hub with tens of
    /// thousands of callers costs milliseconds, not seconds.
    pub fn edge_summary(&self, origins: &[NodeIx]) -> EdgeSummary {
        let declares = self.type_ix("DECLARES");
        let mut summary = EdgeSummary::default();
        for (dir, map) in [(Direction::Out, &mut summary.out), (Direction::In, &mut summary.inn)] {
            // (composed?, type) → nodes reached, with repeats until the end.
            let mut reach: BTreeMap<(bool, TypeIx), Vec<NodeIx>> = BTreeMap::new();
            let adj = self.adjacency(dir);
            for &o in origins {
                for (t, m) in adj.edges(o) {
                    reach.entry((false, t)).or_default().push(m);
                }
                let Some(decl) = declares else { continue };
                match dir {
                    // o -DECLARES-> m -T-> x
                    Direction::Out => {
                        for &m in adj.of_type(o, decl) {
                            for (t, x) in self.out.edges(m).filter(|(t, _)| *t != decl) {
                                reach.entry((true, t)).or_default().push(x);
                            }
                        }
                    }
                    // x -DECLARES-> m -T-> o: o's in-edges grouped by m, so
                    // each m's containers are read once.
                    Direction::In => {
                        let mut via: Vec<(NodeIx, TypeIx)> =
                            adj.edges(o).filter(|(t, _)| *t != decl).map(|(t, m)| (m, t)).collect();
                        via.sort_unstable();
                        via.dedup();
                        for group in via.chunk_by(|a, b| a.0 == b.0) {
                            let m = group[0].0;
                            for &x in self.inn.of_type(m, decl) {
                                for &(_, t) in group {
                                    reach.entry((true, t)).or_default().push(x);
                                }
                            }
                        }
                    }
                }
            }
            map.extend(reach.into_iter().map(|((composed, t), mut nodes)| {
                // One origin's base edges are distinct already (the builder
                // keeps one per source, type and destination).
                if composed || origins.len() > 1 {
                    nodes.sort_unstable();
                    nodes.dedup();
                }
                let name = &self.types[t as usize];
                let key = if composed { format!("DECLARES.{name}") } else { name.clone() };
                (key, nodes.len() as u64)
            }));
        }
        summary
    }
}

/// A parsed edge key of this graph: the base types to follow, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EdgeKey(Vec<TypeIx>);

impl EdgeKey {
    /// Whether it is one base type (not a composed `A.B` key).
    pub fn is_single(&self) -> bool {
        self.0.len() == 1
    }
}

/// Edge counts of one or more nodes, per key and direction.
#[derive(Debug, Default, Clone, Serialize, schemars::JsonSchema, PartialEq)]
pub struct EdgeSummary {
    /// Outgoing: key → number of distinct nodes reached.
    pub out: BTreeMap<String, u64>,
    /// Incoming: key → number of distinct nodes reaching this one.
    #[serde(rename = "in")]
    pub inn: BTreeMap<String, u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> String {
        format!("{n:040x}")
    }

    fn small() -> Graph {
        let node = |n: u8, kind: &str, name: &str| serde_json::json!({"id": id(n), "kind": kind, "name": name, "fqn": format!("x.{name}"), "file": "x.java"});
        let doc = serde_json::json!({
            "nodes": [node(1, "class", "C"), node(2, "method", "m"), node(3, "route", "GET /"), node(4, "method", "caller")],
            "edges": [
                {"src": id(1), "dst": id(2), "type": "DECLARES"},
                {"src": id(2), "dst": id(3), "type": "EXPOSES"},
                {"src": id(4), "dst": id(2), "type": "CALLS"},
                {"src": id(4), "dst": id(2), "type": "CALLS"}
            ]
        });
        Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn composed_keys_walk_both_ways() {
        let g = small();
        let key = g.parse_edge_key("DECLARES.EXPOSES").ok().flatten().unwrap_or_default();
        assert_eq!(g.walk(0, Direction::Out, &key), vec![2]);
        assert_eq!(g.walk(2, Direction::In, &key), vec![0]);
        assert_eq!(g.edge_count(), 3, "duplicate edges collapse");
        let s = g.edge_summary(&[0]);
        assert_eq!(s.out.get("DECLARES.EXPOSES"), Some(&1));
        assert_eq!(s.out.get("DECLARES.CALLS"), None);
        let s = g.edge_summary(&[2]);
        assert_eq!(s.inn.get("DECLARES.EXPOSES"), Some(&1));
    }

    #[test]
    fn ids_round_trip_and_lookups_take_either_case() {
        let g = small();
        let raw = parse_id(&id(3)).unwrap_or_default();
        assert_eq!(format_id(&raw), id(3));
        assert_eq!(g.lookup(&id(3).to_uppercase()), Some(2));
        assert_eq!(g.lookup(&id(9)), None);
        assert_eq!(g.lookup("not an id"), None);
    }

    #[test]
    fn formats_are_told_apart_by_content() {
        assert_eq!(Format::detect(b"  \n{\"nodes\":[]}"), Some(Format::Json));
        assert_eq!(Format::detect(snapshot::MAGIC_PREFIX), Some(Format::Snapshot));
        assert_eq!(Format::detect(&[0x0a, 0x05]), Some(Format::Scip));
        assert_eq!(Format::detect(b"not json"), Some(Format::Json), "text gets JSON's error");
        assert_eq!(Format::detect(b"\x89PNG\r\n"), Some(Format::Scip));
        // Metadata of exactly 123 bytes: the length byte is `{`.
        assert_eq!(Format::detect(&[0x0a, 0x7b, 0x12, 0x0f, 0x0a, 0x0d]), Some(Format::Scip));
        assert_eq!(Format::detect(b"   "), None);
    }

    #[test]
    fn merge_joins_by_id_and_a_definition_beats_a_placeholder() {
        let a = small();
        let ext = serde_json::json!({
            "nodes": [{"id": id(2), "kind": "method", "name": "m", "roles": ["external"]},
                      {"id": id(7), "kind": "function", "name": "user"}],
            "edges": [{"src": id(7), "dst": id(2), "type": "CALLS"}]
        });
        let b = Graph::from_json(&ext.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let m = merge("ws", &[b, a]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.node_count(), 5);
        let ix = m.lookup(&id(2)).unwrap_or_default();
        assert_eq!(m.node(ix).fqn(), "x.m", "the definition's record wins");
        assert!(!m.node(ix).has_role("external"));
        // A node without a source file (a namespace an importer made up) is
        // a placeholder too: a later graph's definition replaces it.
        let made_up = serde_json::json!({"nodes": [{"id": id(1), "kind": "module", "name": "C"}]});
        let made_up = Graph::from_json(&made_up.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let m2 = merge("ws", &[made_up, small()]).unwrap_or_else(|e| panic!("{e}"));
        let c = m2.lookup(&id(1)).unwrap_or_default();
        assert_eq!((m2.node(c).kind(), m2.node(c).file()), ("class", "x.java"));
        let calls = m.parse_edge_key("CALLS").ok().flatten().unwrap_or_default();
        assert_eq!(m.walk(ix, Direction::In, &calls).len(), 2, "callers from both graphs");
    }

    #[test]
    fn sample_graph_is_realistic() {
        let g = Graph::sample();
        assert!(g.node_count() >= 150, "{}", g.node_count());
        let types = g.edge_types();
        for t in [
            "CALLS",
            "DECLARES",
            "EXPOSES",
            "EXTENDS",
            "IMPLEMENTS",
            "OVERRIDES",
            "REFERENCES",
            "TARGETS",
            "PUBLISHES",
            "SUBSCRIBES",
        ] {
            assert!(types.contains(&t), "{t} missing from the sample graph");
        }
        for kind in ["class", "interface", "method", "field", "module", "route", "topic"] {
            assert!(g.iter().any(|n| n.kind() == kind), "no {kind}");
        }
        for role in ["controller", "service", "repository", "entity", "http_client", "producer", "consumer"] {
            assert!(g.iter().any(|n| n.has_role(role)), "no {role}");
        }
    }
}
