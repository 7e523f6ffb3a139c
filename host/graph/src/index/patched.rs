//! The indexes of a spliced graph, patched from the old graph's
//! ([`Index::patched`]): what kept nodes had carries over, renumbered, and
//! the fresh nodes are inserted where they sort.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Csr, Index, Indexes, doc_words_of, lower, tail_start};
use crate::{Graph, NodeIx};

impl Indexes {
    /// The indexes of `g`, a graph spliced from the one whose indexes
    /// these are ([`Graph::spliced`]; `remap` and `fresh` as
    /// [`Index::patched`] takes them): by id and by file, and the others
    /// when these had them made (a graph never queried keeps not making
    /// them).
    pub fn patched(&self, g: &Graph, remap: &[NodeIx], fresh: &[bool]) -> Indexes {
        let kept = kept_map(remap, fresh);
        let kept_as = kept_as(&kept);
        let new: Vec<NodeIx> = (0..g.node_count() as NodeIx).filter(|&i| fresh[i as usize]).collect();
        let ((by_id, by_file), query) = rayon::join(
            || {
                let kept = carried(&self.by_id, &kept);
                let by_id = inserted(kept, new.to_vec(), |a, b| g.ids[a as usize].cmp(&g.ids[b as usize]));
                let files = new.iter().map(|&i| (g.recs[i as usize].file, i)).collect();
                (by_id, self.by_file.carried(g.files.len(), kept_as, files))
            },
            || self.query.get().map(|ix| ix.patched(g, remap, fresh, &new, &kept)),
        );
        Indexes { by_id, by_file, query: query.map(std::sync::OnceLock::from).unwrap_or_default() }
    }
}

/// Each old node's index in the spliced graph when it carries over,
/// `NodeIx::MAX` when it is gone or has a record of its own (`fresh`):
/// made once, so that carrying a posting over reads one table, not two.
/// Postings are in name order, not node order: millions of reads at
/// random per edit of a large graph.
fn kept_map(remap: &[NodeIx], fresh: &[bool]) -> Vec<NodeIx> {
    remap.iter().map(|&i| if i == NodeIx::MAX || fresh[i as usize] { NodeIx::MAX } else { i }).collect()
}

/// The nodes of `list` that carry over ([`kept_map`]), renumbered, in
/// its order.
fn carried(list: &[NodeIx], kept: &[NodeIx]) -> Vec<NodeIx> {
    let kept_as = kept_as(kept);
    list.iter().filter_map(|&o| kept_as(o)).collect()
}

/// What old node `o` is in the spliced graph when it carries over
/// ([`kept_map`]).
fn kept_as(kept: &[NodeIx]) -> impl Fn(NodeIx) -> Option<NodeIx> + Copy + '_ {
    move |o| Some(kept[o as usize]).filter(|&i| i != NodeIx::MAX)
}

impl Index {
    /// The indexes of `g`, a graph spliced from the one whose indexes
    /// these are ([`Graph::spliced`]): `remap[o]` is old node `o`'s index
    /// in `g` (`NodeIx::MAX` when it is gone), `fresh[i]` whether node `i`
    /// of `g` has a record of its own (added or rewritten), and `kept[o]`
    /// what old node `o` is when it carries over ([`kept_map`]). What the
    /// other nodes had carries over, renumbered (the renumbering keeps
    /// their order); the fresh ones (`new`, ascending) are inserted where
    /// they sort. The same indexes as [`Index::build`] of `g`, in time
    /// linear in the graph but with no sort of it.
    fn patched(&self, g: &Graph, remap: &[NodeIx], fresh: &[bool], new: &[NodeIx], kept: &[NodeIx]) -> Index {
        // Three parts side by side, as a build makes them: a large graph's
        // postings are millions, and the core that splices the edges
        // beside this takes a part once they are done.
        let (names, (fqns, rest)) = rayon::join(
            || self.names_patched(g, remap, fresh, new, kept),
            || rayon::join(|| self.fqns_patched(g, new, kept), || self.rest_patched(g, new, kept)),
        );
        Index {
            by_fqn: fqns.by_fqn,
            by_tail: fqns.by_tail,
            fqn_rank: fqns.fqn_rank,
            containers: rest.containers,
            container_starts: rest.container_starts,
            members: rest.members,
            doc_words: rest.doc_words,
            doc_nodes: rest.doc_nodes,
            by_kind: rest.by_kind,
            by_role: rest.by_role,
            ..names
        }
    }

    /// [`Index::patched`]'s names: each node's lower-cased, and the nodes
    /// by them.
    fn names_patched(&self, g: &Graph, remap: &[NodeIx], fresh: &[bool], new: &[NodeIx], kept: &[NodeIx]) -> Index {
        let n = g.node_count();
        let mut ix = Index::default();

        // Lower-cased names, in node order: copied, or made for the fresh.
        let mut back = vec![NodeIx::MAX; n];
        for (o, &i) in remap.iter().enumerate() {
            if i != NodeIx::MAX {
                back[i as usize] = o as NodeIx;
            }
        }
        ix.name_starts.reserve(n + 1);
        ix.lower_names.reserve(self.lower_names.len());
        let mut i = 0;
        while i < n {
            if fresh[i] {
                ix.name_starts.push(ix.lower_names.len() as u32);
                for c in g.node(i as NodeIx).name().chars().flat_map(char::to_lowercase) {
                    ix.lower_names.push(if c == '\0' { ' ' } else { c });
                }
                ix.lower_names.push('\0');
                i += 1;
                continue;
            }
            // A run of kept nodes that were neighbours: their names copied
            // at once, their starts shifted.
            let (first, mut end) = (back[i] as usize, i + 1);
            while end < n && !fresh[end] && back[end] as usize == first + (end - i) {
                end += 1;
            }
            let old = &self.name_starts[first..=first + (end - i)];
            let shift = ix.lower_names.len() as i64 - old[0] as i64;
            ix.name_starts.extend(old[..end - i].iter().map(|&s| (s as i64 + shift) as u32));
            ix.lower_names.push_str(&self.lower_names[old[0] as usize..old[end - i] as usize]);
            i = end;
        }
        ix.name_starts.push(ix.lower_names.len() as u32);
        let by_name = inserted(carried(&self.by_name, kept), new.to_vec(), |a, b| {
            ix.lower_name(a).cmp(ix.lower_name(b)).then(a.cmp(&b))
        });
        ix.by_name = by_name;
        ix
    }

    /// [`Index::patched`]'s qualified names: the nodes by them, by their
    /// last segment, and each node's rank.
    fn fqns_patched(&self, g: &Graph, new: &[NodeIx], kept: &[NodeIx]) -> Index {
        let mut ix = Index::default();
        let lowered = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<char>>();
        // Keys made once for the fresh nodes; a kept node's compared as
        // it is lower-cased, with no string made (a few dozen compares).
        let keyed = |key: &dyn Fn(&str) -> Vec<char>| -> Vec<(Vec<char>, NodeIx)> {
            let mut v: Vec<(Vec<char>, NodeIx)> =
                new.iter().filter(|&&i| !g.node(i).fqn().is_empty()).map(|&i| (key(g.node(i).fqn()), i)).collect();
            v.sort_unstable();
            v
        };
        let vs = |of: &dyn for<'s> Fn(&'s str) -> &'s str, k: NodeIx, key: &[char], x: NodeIx| {
            of(g.node(k).fqn()).chars().flat_map(char::to_lowercase).cmp(key.iter().copied()).then(k.cmp(&x))
        };
        ix.by_fqn =
            inserted_keyed(carried(&self.by_fqn, kept), keyed(&|f| lowered(f)), |k, key, x| vs(&whole, k, key, x));
        ix.by_tail = inserted_keyed(carried(&self.by_tail, kept), keyed(&|f| lowered(tail_of(f))), |k, key, x| {
            vs(&tail_of, k, key, x)
        });
        let mut order = vec![NodeIx::MAX; self.fqn_rank.len()];
        for (o, &rank) in self.fqn_rank.iter().enumerate() {
            order[rank as usize] = o as NodeIx;
        }
        let order = inserted(carried(&order, kept), new.to_vec(), |a, b| {
            let (x, y) = (g.node(a).fqn(), g.node(b).fqn());
            (x.len(), x, a).cmp(&(y.len(), y, b))
        });
        ix.fqn_rank = vec![0; g.node_count()];
        for (rank, &node) in order.iter().enumerate() {
            ix.fqn_rank[node as usize] = rank as u32;
        }
        ix
    }

    /// [`Index::patched`]'s other postings: by container, doc word, kind
    /// and role.
    fn rest_patched(&self, g: &Graph, new: &[NodeIx], kept: &[NodeIx]) -> Index {
        let kept_as = kept_as(kept);
        let lower_fqn = |i: NodeIx| lower(g.node(i).fqn());
        let mut ix = Index::default();

        // Containers: the old ones with their members that carry over, and
        // the fresh nodes' (new containers where they sort).
        let container_of = |i: NodeIx| {
            let l = lower_fqn(i);
            let c = l[..tail_start(&l)].trim_end_matches(['.', '/', '#', ' ', ':']).to_owned();
            c.chars().map(|c| if c == '\0' { ' ' } else { c }).collect::<String>()
        };
        let mut added: BTreeMap<Cow<'_, str>, Vec<NodeIx>> = BTreeMap::new();
        for &i in new {
            let c = container_of(i);
            if !c.is_empty() {
                added.entry(Cow::Owned(c)).or_default().push(i);
            }
        }
        let old = (0..self.container_starts.len().saturating_sub(1)).map(|c| {
            let (a, b) = (self.container_starts[c] as usize, self.container_starts[c + 1] as usize);
            (Cow::Borrowed(&self.containers[a..b - 1]), self.members.get(c))
        });
        let members = merged_postings(old, added, kept_as, self.members.items.len(), |name| {
            ix.container_starts.push(ix.containers.len() as u32);
            ix.containers.push_str(name);
            ix.containers.push('\0');
        });
        ix.container_starts.push(ix.containers.len() as u32);
        ix.members = members;

        // Doc words: the old postings that carry over, and the fresh nodes'.
        let mut added: BTreeMap<u64, Vec<NodeIx>> = BTreeMap::new();
        let mut hashes: Vec<u64> = Vec::new();
        for &i in new {
            doc_words_of(g.node(i).doc(), &mut hashes);
            for &h in &hashes {
                added.entry(h).or_default().push(i);
            }
        }
        let old = self.doc_words.iter().enumerate().map(|(k, &h)| (h, self.doc_nodes.get(k)));
        let nodes = merged_postings(old, added, kept_as, self.doc_nodes.items.len(), |&h| ix.doc_words.push(h));
        ix.doc_nodes = nodes;

        // Kinds and roles (whose numbers a splice keeps): carried
        // over, and the fresh nodes' merged in.
        let rec = |i: NodeIx| &g.recs[i as usize];
        ix.by_kind =
            self.by_kind.carried(g.kinds.len(), kept_as, new.iter().map(|&i| (rec(i).kind as u32, i)).collect());
        let roles = new.iter().flat_map(|&i| {
            let r = rec(i);
            g.role_lists[r.roles_start as usize..][..r.roles_len as usize].iter().map(move |&role| (role as u32, i))
        });
        ix.by_role = self.by_role.carried(g.roles.len(), kept_as, roles.collect());
        ix
    }
}

impl Csr {
    /// These postings carried over to a spliced graph (`kept_as`, which
    /// keeps their order) under `keys` keys, the same for the keys they
    /// had, with the `fresh` (key, node) pairs merged in.
    fn carried(&self, keys: usize, kept_as: impl Fn(NodeIx) -> Option<NodeIx>, mut fresh: Vec<(u32, NodeIx)>) -> Csr {
        fresh.sort_unstable();
        fresh.dedup();
        let mut offsets = Vec::with_capacity(keys + 1);
        let mut items = Vec::with_capacity(self.items.len() + fresh.len());
        offsets.push(0);
        let mut f = 0;
        for k in 0..keys {
            let start = items.len();
            items.extend(self.get(k).iter().filter_map(|&o| kept_as(o)));
            let (kept, from) = (items.len() - start, f);
            while f < fresh.len() && fresh[f].0 as usize == k {
                items.push(fresh[f].1);
                f += 1;
            }
            if kept > 0 && f > from {
                merge_sorted(&mut items[start..], kept);
            }
            offsets.push(items.len() as u32);
        }
        Csr { offsets, items }
    }
}

/// `run[..mid]` and `run[mid..]`, each ascending, merged in place: the
/// few fresh nodes of the tail put where they sort, from the last, the
/// kept ones after each moved up at once. A posting list carried over is
/// a kind's or a common word's (a hundred thousand nodes): no sort of it.
fn merge_sorted(run: &mut [NodeIx], mid: usize) {
    let tail = run[mid..].to_vec();
    let (mut kept_end, mut free_end) = (mid, run.len());
    for &x in tail.iter().rev() {
        let at = run[..kept_end].partition_point(|&y| y < x);
        let moved = kept_end - at;
        run.copy_within(at..kept_end, free_end - moved);
        free_end -= moved + 1;
        kept_end = at;
        run[free_end] = x;
    }
}

/// `kept`, sorted by `cmp`, with `new` inserted where each sorts: a binary
/// search each, then one copy.
fn inserted(
    kept: Vec<NodeIx>,
    mut new: Vec<NodeIx>,
    cmp: impl Fn(NodeIx, NodeIx) -> std::cmp::Ordering,
) -> Vec<NodeIx> {
    if new.is_empty() {
        return kept;
    }
    new.sort_by(|&a, &b| cmp(a, b));
    let mut out = Vec::with_capacity(kept.len() + new.len());
    let mut from = 0;
    for x in new {
        let at = from + kept[from..].partition_point(|&k| cmp(k, x).is_lt());
        out.extend_from_slice(&kept[from..at]);
        out.push(x);
        from = at;
    }
    out.extend_from_slice(&kept[from..]);
    out
}

/// Postings under keys in ascending order: each old key's nodes that
/// carry over (`kept_as`), with the fresh nodes' (`added`) merged in, new
/// keys where they sort. `keep` is told each key left with nodes, in
/// order (a key left with none is dropped).
fn merged_postings<'o, K: Ord>(
    old: impl Iterator<Item = (K, &'o [NodeIx])>,
    added: BTreeMap<K, Vec<NodeIx>>,
    kept_as: impl Fn(NodeIx) -> Option<NodeIx>,
    capacity: usize,
    mut keep: impl FnMut(&K),
) -> Csr {
    let mut csr = Csr { offsets: vec![0], items: Vec::with_capacity(capacity) };
    let mut close = |csr: &mut Csr, key: &K| {
        if csr.items.len() > csr.offsets[csr.offsets.len() - 1] as usize {
            csr.offsets.push(csr.items.len() as u32);
            keep(key);
        }
    };
    let mut added = added.into_iter().peekable();
    for (key, list) in old {
        while let Some((next, _)) = added.peek()
            && *next < key
            && let Some((next, nodes)) = added.next()
        {
            csr.items.extend(nodes);
            close(&mut csr, &next);
        }
        let start = csr.items.len();
        csr.items.extend(list.iter().filter_map(|&o| kept_as(o)));
        if let Some((next, _)) = added.peek()
            && *next == key
            && let Some((_, nodes)) = added.next()
        {
            let kept = csr.items.len() - start;
            csr.items.extend(nodes);
            merge_sorted(&mut csr.items[start..], kept);
        }
        close(&mut csr, &key);
    }
    for (next, nodes) in added {
        csr.items.extend(nodes);
        close(&mut csr, &next);
    }
    csr
}

/// The last segment of a qualified name.
fn tail_of(f: &str) -> &str {
    &f[tail_start(f)..]
}

/// The whole of a qualified name.
fn whole(f: &str) -> &str {
    f
}

/// `kept` with each of `new` (sorted by key, then node) inserted where
/// `vs(kept node, key, new node)` says it sorts: a binary search each.
fn inserted_keyed<K>(
    kept: Vec<NodeIx>,
    new: Vec<(K, NodeIx)>,
    vs: impl Fn(NodeIx, &K, NodeIx) -> std::cmp::Ordering,
) -> Vec<NodeIx> {
    if new.is_empty() {
        return kept;
    }
    let mut out = Vec::with_capacity(kept.len() + new.len());
    let mut from = 0;
    for (key, x) in new {
        let at = from + kept[from..].partition_point(|&k| vs(k, &key, x).is_lt());
        out.extend_from_slice(&kept[from..at]);
        out.push(x);
        from = at;
    }
    out.extend_from_slice(&kept[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_in_place_gives_what_a_sort_gives() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for _ in 0..2000 {
            let (kept, fresh) = (next(40) as usize, next(6) as usize);
            let mut a: Vec<NodeIx> = (0..kept).map(|_| next(100) as NodeIx).collect();
            let mut b: Vec<NodeIx> = (0..fresh).map(|_| next(100) as NodeIx).collect();
            a.sort_unstable();
            b.sort_unstable();
            let mut run = [a, b].concat();
            let mut want = run.clone();
            want.sort_unstable();
            merge_sorted(&mut run, kept);
            assert_eq!(run, want, "kept {kept}, fresh {fresh}");
        }
    }
}
