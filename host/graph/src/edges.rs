//! Edges: the two compressed adjacency arrays, edge keys (`CALLS`,
//! composed `DECLARES.EXPOSES`), walking them, and counting them.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{Derivation, Graph, MAX_COMPOSED, NodeIx, TypeIx, is_edge_type};

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

/// One bit per out-edge, set where the edge's derivation rank (0 exact,
/// 1 inferred, 2 ambiguous) is at least `at_least`: a graph's `inferred`
/// or `ambiguous` bits (none when no edge is).
pub(crate) fn rank_bits(ranks: &[u8], at_least: u8) -> Vec<u64> {
    if !ranks.iter().any(|&r| r >= at_least) {
        return Vec::new();
    }
    let mut bits = vec![0u64; ranks.len().div_ceil(64)];
    for (i, &r) in ranks.iter().enumerate() {
        if r >= at_least {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
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
    pub(crate) fn edges(&self, n: NodeIx) -> impl Iterator<Item = (TypeIx, NodeIx)> + '_ {
        let r = self.range(n);
        self.types[r.clone()].iter().copied().zip(self.targets[r].iter().copied())
    }

    /// The position of edge `n -ty-> other` in `targets`.
    pub(crate) fn position(&self, n: NodeIx, ty: TypeIx, other: NodeIx) -> Option<usize> {
        let r = self.range(n);
        let (types, targets) = (&self.types[r.clone()], &self.targets[r.clone()]);
        let lo = types.partition_point(|&t| t < ty);
        let hi = lo + types[lo..].partition_point(|&t| t <= ty);
        let k = targets[lo..hi].binary_search(&other).ok()?;
        Some(r.start + lo + k)
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

/// Why an edge key is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdgeKeyError {
    /// More edges chained than [`MAX_COMPOSED`].
    #[error("`{key}` chains {edges} edges; at most {MAX_COMPOSED}")]
    TooLong {
        /// The key.
        key: String,
        /// Edges it chains.
        edges: usize,
    },
    /// A part that is no edge type's name (upper-case words).
    #[error("`{key}` is not an edge type")]
    NotAType {
        /// The key.
        key: String,
    },
}

impl Graph {
    /// Parses an edge key (`CALLS`, `DECLARES.EXPOSES`) into base types.
    /// `Ok(None)` when the key is well-formed but uses a type this graph lacks.
    pub fn parse_edge_key(&self, key: &str) -> Result<Option<EdgeKey>, EdgeKeyError> {
        let parts: Vec<&str> = key.split('.').collect();
        if parts.len() > MAX_COMPOSED {
            return Err(EdgeKeyError::TooLong { key: key.to_owned(), edges: parts.len() });
        }
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            if !is_edge_type(p) {
                return Err(EdgeKeyError::NotAType { key: key.to_owned() });
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

    /// How the edge between `origin` and `other` that a walk along the
    /// single-type `key` in `dir` found was derived; none for composed keys
    /// (a path, not an edge).
    pub fn step_derivation(&self, origin: NodeIx, dir: Direction, key: &EdgeKey, other: NodeIx) -> Option<Derivation> {
        let [t] = key.0[..] else { return None };
        Some(match dir {
            Direction::Out => self.derivation(origin, t, other),
            Direction::In => self.derivation(other, t, origin),
        })
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
