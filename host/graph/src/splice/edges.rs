//! The edges of a spliced graph: the base's lists copied in runs,
//! renumbered (or as they are when no node is gone), and only the few
//! that the files' change reaches made again.

use super::{Fate, GONE, Map};
use crate::{Adjacency, NodeIx, TypeIx};

/// A spliced graph's edges: out, in, and the inferred and ambiguous bits
/// of the out-edges.
pub(super) struct Edges {
    pub out: Adjacency,
    pub inn: Adjacency,
    pub inferred: Vec<u64>,
    pub ambiguous: Vec<u64>,
}

impl Fate<'_> {
    /// The spliced graph's edges, `remap` giving each pre-splice node's
    /// new index (`count` of them), `dropped` the placeholders that went.
    ///
    /// A node's out-edges are the base's, renumbered, unless it is
    /// replaced, added, has edges in the delta, or an edge to a node
    /// replaced or gone: the few *own* nodes, whose edges are made again. A
    /// node's in-edges are the base's, renumbered, unless some own node had
    /// or has an edge to it, or it is replaced: the few *touched* nodes. The
    /// renumbering keeps order, so what is copied stays sorted, and runs of
    /// nodes neither own nor touched are copied at once (as they are when
    /// no node is gone).
    pub(super) fn edges(&self, dropped: &[NodeIx], remap: &[NodeIx], count: usize) -> Edges {
        let (base, n, total) = (self.base, self.n, remap.len());
        let mut own = vec![false; total];
        own[n..].fill(true);
        for &u in self.replaced_nodes.iter().chain(dropped) {
            own[u as usize] = true;
            for (_, s) in base.inn.edges(u) {
                own[s as usize] = true;
            }
        }
        for &u in self.extra.keys() {
            own[u as usize] = true;
        }
        let same_numbers = count == total;
        let mut buf = Vec::new();
        let renumbered = |dst: &mut Vec<NodeIx>, src: &[NodeIx]| {
            if same_numbers { dst.extend_from_slice(src) } else { dst.extend(src.iter().map(|&m| remap[m as usize])) }
        };
        // Copies the base's lists of nodes `u..end` (of `adj`) to `to`.
        let copy_run = |to: &mut Adjacency, adj: &Adjacency, u: usize, end: usize| {
            let (a, b) = (adj.offsets[u] as usize, adj.offsets[end] as usize);
            let shift = to.targets.len() as i64 - a as i64;
            to.offsets.extend(adj.offsets[u + 1..=end].iter().map(|&o| (o as i64 + shift) as u32));
            renumbered(&mut to.targets, &adj.targets[a..b]);
            to.types.extend_from_slice(&adj.types[a..b]);
            a..b
        };
        let edge_room = base.out.targets.len() + self.extra.values().map(Vec::len).sum::<usize>();
        let mut out = Adjacency {
            offsets: Vec::with_capacity(count + 1),
            targets: Vec::with_capacity(edge_room),
            types: Vec::with_capacity(edge_room),
        };
        let mut ranks: Vec<u8> = Vec::with_capacity(edge_room);
        // The own nodes' edges, by target (new indexes): (type, source).
        let mut into: Map<NodeIx, Vec<(TypeIx, NodeIx)>> = Map::default();
        out.offsets.push(0);
        let mut u = 0;
        while u < total {
            let at = remap[u];
            if at == GONE {
                u += 1;
            } else if own[u] {
                self.edges_of(u, &mut buf);
                for &(t, m, how) in &buf {
                    let to = remap[m as usize];
                    if to != GONE {
                        out.targets.push(to);
                        out.types.push(t);
                        ranks.push(how);
                        into.entry(to).or_default().push((t, at));
                    }
                }
                out.offsets.push(out.targets.len() as u32);
                u += 1;
            } else {
                // (a node not own is the base's and alive)
                let end = u + own[u..n].iter().take_while(|&&o| !o).count();
                let r = copy_run(&mut out, &base.out, u, end);
                if base.inferred.is_empty() && base.ambiguous.is_empty() {
                    ranks.resize(ranks.len() + r.len(), 0);
                } else {
                    ranks.extend(r.map(|k| base.derivation_at(k).rank()));
                }
                u = end;
            }
        }
        let mut touched = vec![false; count];
        for &to in into.keys() {
            touched[to as usize] = true;
        }
        for u in (0..n).filter(|&u| own[u]) {
            for &m in &base.out.targets[base.out.offsets[u] as usize..base.out.offsets[u + 1] as usize] {
                if remap[m as usize] != GONE {
                    touched[remap[m as usize] as usize] = true;
                }
            }
            if remap[u] != GONE && self.replaced[u] {
                touched[remap[u] as usize] = true;
            }
        }
        let mut inn = Adjacency {
            offsets: Vec::with_capacity(count + 1),
            targets: Vec::with_capacity(out.targets.len()),
            types: Vec::with_capacity(out.targets.len()),
        };
        inn.offsets.push(0);
        let mut list: Vec<(TypeIx, NodeIx)> = Vec::new();
        let untouched = |u: usize| u < n && remap[u] != GONE && !touched[remap[u] as usize];
        let mut u = 0;
        while u < total {
            let at = remap[u];
            if at == GONE {
                u += 1;
            } else if untouched(u) {
                // (a source of an untouched node's edges is not own, so
                // its edges are the base's, and it is alive)
                let end = u + (u..n).take_while(|&k| untouched(k)).count();
                copy_run(&mut inn, &base.inn, u, end);
                u = end;
            } else {
                // The base's edges from nodes not own (kept as their out-
                // edges are), and the own nodes' edges made above.
                list.clear();
                if u < n {
                    for (t, s) in base.inn.edges(u as NodeIx) {
                        if !own[s as usize] {
                            list.push((t, remap[s as usize]));
                        }
                    }
                }
                list.extend(into.get(&at).map_or(&[][..], Vec::as_slice));
                list.sort_unstable();
                inn.types.extend(list.iter().map(|e| e.0));
                inn.targets.extend(list.iter().map(|e| e.1));
                inn.offsets.push(inn.targets.len() as u32);
                u += 1;
            }
        }
        debug_assert_eq!(inn.targets.len(), out.targets.len(), "every edge out is an edge in");
        let bits = |at_least: u8| crate::edges::rank_bits(&ranks, at_least);
        Edges {
            out,
            inn,
            inferred: bits(crate::Derivation::Inferred.rank()),
            ambiguous: bits(crate::Derivation::Ambiguous.rank()),
        }
    }
}
