//! The one way to make a [`Graph`]: every format adds nodes and edges here,
//! and [`GraphBuilder::build`] lays them out and indexes them.

/// Fast hashing: ids and interned strings of the graph being built.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use rayon::slice::ParallelSliceMut;

use super::index::Indexes;
use super::{Adjacency, Derivation, Graph, GraphError, NodeIx, RawId, Rec, Span, TypeIx, is_edge_type};
use crate::tight::tight;

/// The role that marks a symbol a graph only references (defined elsewhere).
pub const EXTERNAL: &str = "external";

/// A node to add: its fields, borrowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeSpec<'a> {
    /// Binary id (the 20 bytes of its 40 hex characters).
    pub id: RawId,
    /// Kind (not empty).
    pub kind: &'a str,
    /// Short name (not empty).
    pub name: &'a str,
    /// Qualified name.
    pub fqn: &'a str,
    /// Source file.
    pub file: &'a str,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// Roles.
    pub roles: &'a [&'a str],
    /// Documentation.
    pub doc: &'a str,
    /// Signature.
    pub signature: &'a str,
}

/// Strings interned to small indexes, in the order first met.
#[derive(Default)]
pub(crate) struct Interner {
    pub(crate) names: Vec<String>,
    ix: HashMap<String, u32>,
}

impl Interner {
    /// The index of `s`, interned now if it was not; refused past `max`
    /// distinct values (`what` says of which).
    pub(crate) fn get(&mut self, s: &str, max: usize, what: &str) -> Result<u32, GraphError> {
        if let Some(&i) = self.ix.get(s) {
            return Ok(i);
        }
        if self.names.len() >= max {
            return Err(invalid(what, format!("more than {max} distinct values")));
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_owned());
        self.ix.insert(s.to_owned(), i);
        Ok(i)
    }
}

fn is_placeholder(spec: &NodeSpec<'_>) -> bool {
    spec.roles.contains(&EXTERNAL) || spec.file.is_empty()
}

fn invalid(at: &str, problem: String) -> GraphError {
    GraphError::Invalid { at: at.to_owned(), problem }
}

/// Collects nodes and edges, then builds an immutable [`Graph`].
pub struct GraphBuilder {
    name: String,
    text: crate::node::Text,
    ids: Vec<RawId>,
    recs: Vec<Rec>,
    /// Nodes another graph's definition may replace (see `merge_node`).
    placeholder: Vec<bool>,
    by_id: HashMap<RawId, NodeIx>,
    kinds: Interner,
    files: Interner,
    roles: Interner,
    types: Interner,
    role_lists: Vec<u16>,
    /// Edges: (source, type, destination, derivation rank).
    edges: Vec<(NodeIx, TypeIx, NodeIx, u8)>,
    /// Unbound call sites by called name.
    unresolved: HashMap<String, u32>,
    /// Files read only in part, and the line the reading stopped at.
    unread: Vec<(String, u32)>,
}

impl GraphBuilder {
    /// An empty graph called `name`.
    pub fn new(name: &str) -> GraphBuilder {
        let mut files = Interner::default();
        // File 0 is "no file".
        let _ = files.get("", 1, "files");
        GraphBuilder {
            name: name.to_owned(),
            text: Default::default(),
            ids: Vec::new(),
            recs: Vec::new(),
            placeholder: Vec::new(),
            by_id: HashMap::default(),
            kinds: Interner::default(),
            files,
            roles: Interner::default(),
            types: Interner::default(),
            role_lists: Vec::new(),
            edges: Vec::new(),
            unresolved: HashMap::default(),
            unread: Vec::new(),
        }
    }

    /// Counts `n` call sites named `name` that name resolution could not
    /// bind to one definition ([`Graph::unresolved_calls`]).
    pub fn add_unresolved(&mut self, name: &str, n: u32) {
        let c = self.unresolved.entry(name.to_owned()).or_default();
        *c = c.saturating_add(n);
    }

    /// Says that `file` could not be read whole: its syntax was not read
    /// from `line` on ([`Graph::unread`]).
    pub fn add_unread(&mut self, file: &str, line: u32) {
        self.unread.push((file.to_owned(), line));
    }

    /// Renames the graph.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_owned();
    }

    /// Nodes added so far.
    pub fn node_count(&self) -> usize {
        self.recs.len()
    }

    /// The node with binary id `id`, if added.
    pub fn node_ix(&self, id: &RawId) -> Option<NodeIx> {
        self.by_id.get(id).copied()
    }

    /// Adds a node; a second node with the same id is an error.
    pub fn add_node(&mut self, spec: NodeSpec<'_>) -> Result<NodeIx, GraphError> {
        self.add_node_in(spec, None)
    }

    fn add_node_in(&mut self, spec: NodeSpec<'_>, spans: Option<[Span; 4]>) -> Result<NodeIx, GraphError> {
        if self.by_id.contains_key(&spec.id) {
            return Err(invalid("node", format!("duplicate id {}", super::format_id(&spec.id))));
        }
        let rec = self.record(&spec, spans)?;
        let ix = self.recs.len() as NodeIx;
        if self.recs.len() >= (NodeIx::MAX - 1) as usize {
            return Err(invalid("nodes", "more than 4 billion nodes".into()));
        }
        self.recs.push(rec);
        self.ids.push(spec.id);
        self.placeholder.push(is_placeholder(&spec));
        self.by_id.insert(spec.id, ix);
        Ok(ix)
    }

    /// Adds a node, or joins it with the node of the same id: a definition
    /// replaces a placeholder (a symbol marked `external`, or one with no
    /// source file, such as a namespace an importer made up to hold its
    /// members); otherwise the first one stays.
    pub fn merge_node(&mut self, spec: NodeSpec<'_>) -> Result<NodeIx, GraphError> {
        self.merge_node_in(spec, None)
    }

    /// [`GraphBuilder::merge_node`], the node's strings given as spans of
    /// this builder's text (`spans`: name, qualified name, doc and
    /// signature, in a text adopted by [`GraphBuilder::adopt_text`]) rather
    /// than copied in.
    pub(crate) fn merge_node_in(&mut self, spec: NodeSpec<'_>, spans: Option<[Span; 4]>) -> Result<NodeIx, GraphError> {
        let Some(&ix) = self.by_id.get(&spec.id) else { return self.add_node_in(spec, spans) };
        if self.placeholder[ix as usize] && !is_placeholder(&spec) {
            self.recs[ix as usize] = self.record(&spec, spans)?;
            self.placeholder[ix as usize] = false;
        }
        Ok(ix)
    }

    /// Appends the strings of `text` (another graph's) by sharing its
    /// arenas: where they start here, to give [`GraphBuilder::merge_node_in`]
    /// that graph's spans moved by it.
    pub(crate) fn adopt_text(&mut self, text: &crate::node::Text) -> Result<u32, GraphError> {
        self.text.adopt(text).ok_or_else(|| invalid("text", "the graph's text exceeds 4 GiB".into()))
    }

    fn record(&mut self, spec: &NodeSpec<'_>, spans: Option<[Span; 4]>) -> Result<Rec, GraphError> {
        if spec.kind.trim().is_empty() || spec.name.trim().is_empty() {
            return Err(invalid("node", "`kind` and `name` must not be empty".into()));
        }
        let kind = self.kinds.get(spec.kind, u16::MAX as usize, "kinds")? as u16;
        let file = self.files.get(spec.file, u32::MAX as usize, "files")?;
        let roles_start = self.role_lists.len() as u32;
        let mut roles_len = 0u16;
        for role in spec.roles.iter().take(u16::MAX as usize) {
            let r = self.roles.get(role, u16::MAX as usize, "roles")? as u16;
            if !self.role_lists[roles_start as usize..].contains(&r) {
                self.role_lists.push(r);
                roles_len += 1;
            }
        }
        let [name, fqn, doc, signature] = match spans {
            Some(spans) => spans,
            None => [
                self.push_text(spec.name)?,
                self.push_text(spec.fqn)?,
                self.push_text(spec.doc)?,
                self.push_text(spec.signature)?,
            ],
        };
        Ok(Rec { name, fqn, doc, signature, file, line: spec.line, roles_start, kind, roles_len })
    }

    fn push_text(&mut self, s: &str) -> Result<Span, GraphError> {
        if s.is_empty() {
            return Ok(Span::default());
        }
        if self.text.len() + s.len() > u32::MAX as usize {
            return Err(invalid("text", "the graph's text exceeds 4 GiB".into()));
        }
        Ok(self.text.push(s))
    }

    /// Adds an exact edge of type `ty` (an upper-case word) between two
    /// added nodes. Repeated edges collapse when the graph is built.
    pub fn add_edge(&mut self, src: NodeIx, ty: &str, dst: NodeIx) -> Result<(), GraphError> {
        self.add_edge_as(src, ty, dst, Derivation::Exact)
    }

    /// Adds an edge derived as `how`. The same edge added both ways is
    /// exact: one indexer's certainty outweighs another's guess.
    pub fn add_edge_as(&mut self, src: NodeIx, ty: &str, dst: NodeIx, how: Derivation) -> Result<(), GraphError> {
        if !is_edge_type(ty) {
            return Err(invalid(
                "edge",
                format!("`{ty}` is not an edge type (upper-case letters, digits, _; no dots)"),
            ));
        }
        let n = self.recs.len() as NodeIx;
        if src >= n || dst >= n {
            return Err(invalid("edge", format!("node index {} out of range", src.max(dst))));
        }
        let t = self.types.get(ty, TypeIx::MAX as usize, "edge types")? as TypeIx;
        self.edges.push((src, t, dst, how.rank()));
        Ok(())
    }

    /// Lays the graph out and builds its indexes (the adjacency and the
    /// lookup indexes side by side: neither reads the other).
    pub fn build(mut self) -> Result<Graph, GraphError> {
        let n = self.recs.len();
        let edges = std::mem::take(&mut self.edges);
        let mut graph = Graph {
            name: self.name,
            text: self.text.frozen(),
            ids: tight(self.ids),
            recs: tight(self.recs),
            kinds: self.kinds.names,
            files: self.files.names,
            roles: self.roles.names,
            types: self.types.names,
            role_lists: tight(self.role_lists),
            out: Adjacency::default(),
            inn: Adjacency::default(),
            inferred: Vec::new(),
            ambiguous: Vec::new(),
            unresolved: {
                let mut u: Vec<(String, u32)> = self.unresolved.into_iter().collect();
                u.sort_unstable();
                u
            },
            unread: {
                let mut u = self.unread;
                u.sort_unstable();
                u.dedup_by(|a, b| a.0 == b.0);
                u
            },
            index: Indexes::default(),
        };
        let (adjacency, index) = rayon::join(|| adjacency(n, edges), || Indexes::build(&graph));
        (graph.out, graph.inn, graph.inferred, graph.ambiguous) = adjacency?;
        graph.index = index;
        Ok(graph)
    }
}

/// Edges (source, type, destination, derivation rank) laid out both ways,
/// and which of the outgoing ones are inferred and which ambiguous (one bit
/// each; none when all are exact). Repeated edges collapse; the more
/// certain sorts first, so the one kept of an edge added several ways is
/// the most certain.
fn adjacency(
    n: usize,
    mut edges: Vec<(NodeIx, TypeIx, NodeIx, u8)>,
) -> Result<(Adjacency, Adjacency, Vec<u64>, Vec<u64>), GraphError> {
    edges.par_sort_unstable();
    edges.dedup_by_key(|e| (e.0, e.1, e.2));
    if edges.len() >= u32::MAX as usize {
        return Err(invalid("edges", "more than 4 billion edges".into()));
    }
    let mut rev: Vec<(NodeIx, TypeIx, NodeIx)> = edges.iter().map(|&(s, t, d, _)| (d, t, s)).collect();
    let bits = |at_least: u8| {
        if !edges.iter().any(|e| e.3 >= at_least) {
            return Vec::new();
        }
        let mut bits = vec![0u64; edges.len().div_ceil(64)];
        for (i, e) in edges.iter().enumerate() {
            if e.3 >= at_least {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        bits
    };
    let (inferred, ambiguous) = (bits(Derivation::Inferred.rank()), bits(Derivation::Ambiguous.rank()));
    let (out, inn) = rayon::join(
        || csr(n, edges.iter().map(|&(s, t, d, _)| (s, t, d))),
        || {
            rev.par_sort_unstable();
            csr(n, rev.into_iter())
        },
    );
    Ok((out, inn, inferred, ambiguous))
}

/// Compressed adjacency from edges sorted by (node, type, other).
fn csr(n: usize, sorted: impl ExactSizeIterator<Item = (NodeIx, TypeIx, NodeIx)>) -> Adjacency {
    let edges = sorted.len();
    let mut adj = Adjacency {
        offsets: Vec::with_capacity(n + 1),
        targets: Vec::with_capacity(edges),
        types: Vec::with_capacity(edges),
    };
    adj.offsets.push(0);
    for (node, ty, other) in sorted {
        while adj.offsets.len() <= node as usize {
            adj.offsets.push(adj.targets.len() as u32);
        }
        adj.targets.push(other);
        adj.types.push(ty);
    }
    while adj.offsets.len() <= n {
        adj.offsets.push(adj.targets.len() as u32);
    }
    adj
}
