//! The code graph: symbols with 40-hex ids and typed edges, loaded from the
//! documented JSON format (`docs/graph-format.md`) into in-memory indexes.
//!
//! Edge types are upper-case words (`CALLS`, `DECLARES`, …). A *composed* key
//! such as `DECLARES.EXPOSES` follows several edges in a row: out of a class,
//! `DECLARES.EXPOSES` reaches the routes its members expose; into a route, the
//! classes whose members expose it.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

/// The JSON graph sample compiled into the binary: a small Spring-style shop.
pub const SAMPLE_GRAPH: &str = include_str!("../data/sample-graph.json");

/// Most edges one composed key may chain.
pub const MAX_COMPOSED: usize = 3;

/// Why a graph document was refused.
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
}

/// A symbol, as the JSON format stores it and as tools return it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Node {
    /// 40 lowercase hex characters.
    pub id: String,
    /// `class`, `interface`, `method`, `field`, `module`, `route`, `topic`, …
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
    /// Roles such as `controller`, `service`, `repository`, `entity`.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Documentation text.
    #[serde(default)]
    pub doc: String,
}

#[derive(Deserialize)]
struct EdgeDoc {
    src: String,
    dst: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Deserialize)]
struct GraphDoc {
    #[serde(default)]
    name: Option<String>,
    nodes: Vec<Node>,
    #[serde(default)]
    edges: Vec<EdgeDoc>,
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
type TypeIx = u16;

/// An in-memory, immutable code graph.
#[derive(Debug)]
pub struct Graph {
    name: String,
    nodes: Vec<Node>,
    by_id: HashMap<String, NodeIx>,
    types: Vec<String>,
    type_ix: HashMap<String, TypeIx>,
    out: Vec<Vec<(TypeIx, NodeIx)>>,
    inn: Vec<Vec<(TypeIx, NodeIx)>>,
    by_name: HashMap<String, Vec<NodeIx>>,
    by_fqn: HashMap<String, Vec<NodeIx>>,
    edge_count: usize,
}

/// Whether `s` is a canonical id: 40 lowercase hex characters.
pub fn is_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_edge_type(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

impl Graph {
    /// Parses and validates a graph document.
    pub fn from_json(text: &str) -> Result<Graph, GraphError> {
        let doc: GraphDoc = serde_json::from_str(text)?;
        Graph::build(doc.name.unwrap_or_else(|| "graph".into()), doc.nodes, doc.edges)
    }

    /// The embedded sample graph.
    pub fn sample() -> Graph {
        #[allow(clippy::expect_used)]
        Graph::from_json(SAMPLE_GRAPH).expect("the embedded sample graph is valid (tested)")
    }

    fn build(name: String, mut nodes: Vec<Node>, edges: Vec<EdgeDoc>) -> Result<Graph, GraphError> {
        let invalid = |at: String, problem: String| GraphError::Invalid { at, problem };
        let mut by_id = HashMap::with_capacity(nodes.len());
        if nodes.len() >= NodeIx::MAX as usize {
            return Err(invalid("nodes".into(), format!("{} nodes is too many", nodes.len())));
        }
        for (i, node) in nodes.iter_mut().enumerate() {
            node.id.make_ascii_lowercase();
            if !is_id(&node.id) {
                return Err(invalid(format!("nodes[{i}].id"), format!("`{}` is not 40 hex characters", node.id)));
            }
            if node.kind.trim().is_empty() || node.name.trim().is_empty() {
                return Err(invalid(format!("nodes[{i}]"), "`kind` and `name` must not be empty".into()));
            }
            if by_id.insert(node.id.clone(), i as NodeIx).is_some() {
                return Err(invalid(format!("nodes[{i}].id"), format!("duplicate id {}", node.id)));
            }
        }
        let mut graph = Graph {
            name,
            out: vec![Vec::new(); nodes.len()],
            inn: vec![Vec::new(); nodes.len()],
            by_id,
            types: Vec::new(),
            type_ix: HashMap::new(),
            by_name: HashMap::new(),
            by_fqn: HashMap::new(),
            edge_count: 0,
            nodes,
        };
        let mut seen = HashSet::with_capacity(edges.len());
        for (i, e) in edges.iter().enumerate() {
            if !is_edge_type(&e.ty) {
                return Err(invalid(
                    format!("edges[{i}].type"),
                    format!("`{}` is not an edge type (upper-case letters, digits, _; no dots)", e.ty),
                ));
            }
            let end = |id: &str, field: &str| {
                graph
                    .by_id
                    .get(&id.to_ascii_lowercase())
                    .copied()
                    .ok_or_else(|| invalid(format!("edges[{i}].{field}"), format!("no node has id `{id}`")))
            };
            let (src, dst) = (end(&e.src, "src")?, end(&e.dst, "dst")?);
            let next = graph.types.len() as TypeIx;
            let ty = *graph.type_ix.entry(e.ty.clone()).or_insert(next);
            if ty == next {
                graph.types.push(e.ty.clone());
            }
            if seen.insert((src, ty, dst)) {
                graph.out[src as usize].push((ty, dst));
                graph.inn[dst as usize].push((ty, src));
                graph.edge_count += 1;
            }
        }
        for (i, n) in graph.nodes.iter().enumerate() {
            graph.by_name.entry(n.name.to_lowercase()).or_default().push(i as NodeIx);
            if !n.fqn.is_empty() {
                graph.by_fqn.entry(n.fqn.to_lowercase()).or_default().push(i as NodeIx);
            }
        }
        Ok(graph)
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of distinct edges.
    pub fn edge_count(&self) -> usize {
        self.edge_count
    }

    /// All nodes, in document order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node at `ix`.
    pub fn node(&self, ix: NodeIx) -> &Node {
        &self.nodes[ix as usize]
    }

    /// The node with canonical id `id`.
    pub fn lookup(&self, id: &str) -> Option<NodeIx> {
        self.by_id.get(id).copied()
    }

    /// The base edge types present, sorted.
    pub fn edge_types(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.types.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Nodes whose name or qualified name is `text` (case-insensitive).
    pub fn by_exact_name(&self, text: &str) -> (&[NodeIx], &[NodeIx]) {
        let key = text.to_lowercase();
        let fqn = self.by_fqn.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let name = self.by_name.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        (fqn, name)
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
            match self.type_ix.get(p) {
                Some(t) => out.push(*t),
                None => return Ok(None),
            }
        }
        Ok(Some(EdgeKey(out)))
    }

    /// Nodes one composed step away from `origin`, deduplicated, in edge order.
    pub fn walk(&self, origin: NodeIx, dir: Direction, key: &EdgeKey) -> Vec<NodeIx> {
        let steps: Vec<TypeIx> = match dir {
            Direction::Out => key.0.clone(),
            Direction::In => key.0.iter().rev().copied().collect(),
        };
        let adj = match dir {
            Direction::Out => &self.out,
            Direction::In => &self.inn,
        };
        // One step needs no deduplication: the builder keeps one edge per
        // (source, type, destination).
        if let [ty] = steps[..] {
            return adj[origin as usize].iter().filter(|(t, _)| *t == ty).map(|(_, m)| *m).collect();
        }
        let mut frontier = vec![origin];
        for ty in steps {
            let mut seen = HashSet::new();
            let mut next = Vec::new();
            for n in frontier {
                for &(t, m) in &adj[n as usize] {
                    if t == ty && seen.insert(m) {
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
        let declares = self.type_ix.get("DECLARES").copied();
        let mut summary = EdgeSummary::default();
        for (dir, map) in [(Direction::Out, &mut summary.out), (Direction::In, &mut summary.inn)] {
            // (composed?, type) → nodes reached, with repeats until the end.
            let mut reach: BTreeMap<(bool, TypeIx), Vec<NodeIx>> = BTreeMap::new();
            let adj = |n: NodeIx| match dir {
                Direction::Out => &self.out[n as usize],
                Direction::In => &self.inn[n as usize],
            };
            for &o in origins {
                for &(t, m) in adj(o) {
                    reach.entry((false, t)).or_default().push(m);
                }
                let Some(decl) = declares else { continue };
                match dir {
                    // o -DECLARES-> m -T-> x
                    Direction::Out => {
                        for &(_, m) in adj(o).iter().filter(|(t, _)| *t == decl) {
                            for &(t, x) in self.out[m as usize].iter().filter(|(t, _)| *t != decl) {
                                reach.entry((true, t)).or_default().push(x);
                            }
                        }
                    }
                    // x -DECLARES-> m -T-> o: o's in-edges grouped by m, so
                    // each m's containers are read once.
                    Direction::In => {
                        let mut via: Vec<(NodeIx, TypeIx)> =
                            adj(o).iter().filter(|(t, _)| *t != decl).map(|&(t, m)| (m, t)).collect();
                        via.sort_unstable();
                        via.dedup();
                        for group in via.chunk_by(|a, b| a.0 == b.0) {
                            let m = group[0].0;
                            for &(_, x) in self.inn[m as usize].iter().filter(|(t, _)| *t == decl) {
                                for &(_, t) in group {
                                    reach.entry((true, t)).or_default().push(x);
                                }
                            }
                        }
                    }
                }
            }
            map.extend(reach.into_iter().map(|((composed, t), mut nodes)| {
                nodes.sort_unstable();
                nodes.dedup();
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
        let node = |n: u8, kind: &str, name: &str| serde_json::json!({"id": id(n), "kind": kind, "name": name, "fqn": format!("x.{name}")});
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
    fn bad_documents_say_where() {
        let cases = [
            (r#"{"nodes":[{"id":"xyz","kind":"class","name":"A"}]}"#, "nodes[0].id"),
            (r#"{"nodes":[],"edges":[{"src":"a","dst":"b","type":"CALLS"}]}"#, "edges[0].src"),
            (r#"{"nodes":[]}x"#, "not valid"),
        ];
        for (doc, needle) in cases {
            let err = Graph::from_json(doc).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        let dup = format!(
            r#"{{"nodes":[{{"id":"{0}","kind":"a","name":"a"}},{{"id":"{0}","kind":"a","name":"b"}}]}}"#,
            id(1)
        );
        assert!(Graph::from_json(&dup).map(|_| ()).unwrap_err().to_string().contains("duplicate"));
        let bad_type = format!(
            r#"{{"nodes":[{{"id":"{0}","kind":"a","name":"a"}}],"edges":[{{"src":"{0}","dst":"{0}","type":"A.B"}}]}}"#,
            id(1)
        );
        assert!(Graph::from_json(&bad_type).is_err());
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
            assert!(g.nodes().iter().any(|n| n.kind == kind), "no {kind}");
        }
        for role in ["controller", "service", "repository", "entity", "http_client", "producer", "consumer"] {
            assert!(g.nodes().iter().any(|n| n.roles.iter().any(|r| r == role)), "no {role}");
        }
    }
}
