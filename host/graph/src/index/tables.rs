//! The name index's distinct names, and the searches of the
//! NUL-separated tables (names, containers) that `search` and `find`
//! read: a substring's entries, several lists' nodes as one ascending list.

use memchr::memmem;

use super::Index;
use crate::NodeIx;

/// The distinct lower-cased names of a graph, in `by_name`'s order, each
/// followed by NUL, and where each one's run of `by_name` starts: a
/// substring or a prefix is looked for once a name, not once a node (a
/// large tree's names repeat: 57,094 names for 2.06M symbols in the
/// 25M-line benchmark tree).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    table: String,
    /// Where each name starts in `table` (d + 1).
    starts: Vec<u32>,
    /// Where each name's nodes start in `by_name` (d + 1).
    runs: Vec<u32>,
}

impl Names {
    /// From the nodes sorted by lower-cased name: one pass.
    pub(super) fn of(ix: &Index) -> Names {
        let mut names = Names::default();
        let mut last: Option<&str> = None;
        for (at, &i) in ix.by_name.iter().enumerate() {
            let name = ix.lower_name(i);
            if last != Some(name) {
                names.starts.push(names.table.len() as u32);
                names.runs.push(at as u32);
                names.table.push_str(name);
                names.table.push('\0');
                last = Some(name);
            }
        }
        names.starts.push(names.table.len() as u32);
        names.runs.push(ix.by_name.len() as u32);
        // Held as long as the graph serves.
        Names {
            table: crate::tight::tight_text(names.table),
            starts: crate::tight::tight(names.starts),
            runs: crate::tight::tight(names.runs),
        }
    }

    /// Whether `by_name` (read from a file, its nodes in range already) is
    /// sorted as [`Index::build`] sorts it: by lower-cased name, then by
    /// index, each node once. The distinct names made from a list that is
    /// not could be larger than every name together, and would not find
    /// what the names hold.
    pub fn sorted_ok(ix: &Index) -> Result<(), String> {
        let key = |i: NodeIx| (ix.lower_name(i), i);
        match ix.by_name.windows(2).position(|w| key(w[0]) >= key(w[1])) {
            Some(at) => Err(format!("the name index is not sorted at {at}")),
            None => Ok(()),
        }
    }

    /// Name `k` and its nodes (ascending: `by_name` breaks ties by index).
    pub(super) fn get<'a>(&'a self, by_name: &'a [NodeIx], k: usize) -> (&'a str, &'a [NodeIx]) {
        let (a, b) = (self.starts[k] as usize, self.starts[k + 1] as usize);
        (&self.table[a..b - 1], &by_name[self.runs[k] as usize..self.runs[k + 1] as usize])
    }

    pub(super) fn len(&self) -> usize {
        self.runs.len().saturating_sub(1)
    }

    /// Which names contain `needle`, ascending.
    pub(super) fn containing(&self, needle: &str) -> Vec<u32> {
        entries_containing(&self.table, &self.starts, needle)
    }

    /// Bytes held (by capacity).
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() + 4 * (self.starts.capacity() + self.runs.capacity())
    }
}

/// [`Names`], made when first asked: by [`Index::build`] and a snapshot's
/// read, by the first search of a patched graph (or [`Graph::warm`]).
/// Equal whenever the indexes it is made from are
/// ([`Graph::indexes_are_fresh`] compares the made ones).
#[derive(Debug, Default, Clone)]
pub(crate) struct Distinct(std::sync::OnceLock<Names>);

impl PartialEq for Distinct {
    fn eq(&self, _: &Distinct) -> bool {
        true
    }
}

impl Eq for Distinct {}

impl Distinct {
    /// The names of `ix`, made now if they were not.
    pub(super) fn made(&self, ix: &Index) -> &Names {
        self.0.get_or_init(|| Names::of(ix))
    }

    /// The names, if made.
    pub(super) fn get(&self) -> Option<&Names> {
        self.0.get()
    }
}

/// Which entries of a NUL-separated table (`starts[i]` is where entry `i`
/// begins) contain `needle`: ascending, each once. One `memmem` pass that
/// goes on from the next entry once an entry matched, each match's entry
/// found by galloping from the last one (matches are ascending: a
/// neighbour, not a binary search of the whole table, most of the time).
pub(super) fn entries_containing(table: &str, starts: &[u32], needle: &str) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    if needle.is_empty() || needle.contains('\0') {
        return out;
    }
    let (hay, finder) = (table.as_bytes(), memmem::Finder::new(needle.as_bytes()));
    // The entry the search is in or past, and where the search goes on.
    let (mut entry, mut from) = (0usize, 0usize);
    while let Some(pos) = hay.get(from..).and_then(|rest| finder.find(rest)).map(|at| from + at) {
        // A match before the first entry cannot happen in a table this
        // module built (the first start is 0); one read from a file is
        // checked for that too, and is skipped rather than trusted.
        let Some(found) = entry_at(starts, entry, pos) else {
            from = pos + 1;
            continue;
        };
        out.push(found as u32);
        entry = found + 1;
        from = match starts.get(entry) {
            Some(&next) if next as usize > pos => next as usize,
            _ => pos + 1,
        };
    }
    out
}

/// The last entry at or after `from` whose start is at most `pos`, found
/// by galloping from `from`; `None` when even `from`'s start is past it
/// (or there is no entry there).
fn entry_at(starts: &[u32], from: usize, pos: usize) -> Option<usize> {
    let at_most = |k: usize| starts.get(k).is_some_and(|&s| s as usize <= pos);
    if !at_most(from) {
        return None;
    }
    // starts[lo] <= pos < starts[hi] (or hi is past the end).
    let (mut lo, mut step) = (from, 1usize);
    let mut hi = loop {
        let probe = lo.saturating_add(step).min(starts.len());
        if probe == starts.len() || !at_most(probe) {
            break probe;
        }
        lo = probe;
        step *= 2;
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at_most(mid) { lo = mid } else { hi = mid }
    }
    Some(lo)
}

/// The nodes (below `n`) of several lists, ascending, each once: sorted
/// when they are few, read off a bit a node when they are many (a broad
/// word's hundreds of thousands, where a sort took milliseconds).
pub(super) fn ascending(n: usize, lists: &[&[NodeIx]]) -> Vec<NodeIx> {
    let count: usize = lists.iter().map(|l| l.len()).sum();
    if count.saturating_mul(32) < n {
        let mut out: Vec<NodeIx> = lists.concat();
        out.sort_unstable();
        out.dedup();
        return out;
    }
    let mut bits = vec![0u64; n.div_ceil(64)];
    for &i in lists.iter().copied().flatten() {
        if let Some(word) = bits.get_mut(i as usize / 64) {
            *word |= 1 << (i % 64);
        }
    }
    let mut out = Vec::with_capacity(count);
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            out.push((w * 64) as NodeIx + word.trailing_zeros());
            word &= word - 1;
        }
    }
    out
}

/// The first of `0..len` for which `pred` is false (`pred` true on a prefix).
pub(super) fn partition(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Graph, GraphBuilder, NodeSpec};

    /// A graph of `n` functions named from a small vocabulary in several
    /// cases and scripts (names repeat, as in real trees), in containers
    /// that repeat too.
    fn repeating(n: usize) -> Graph {
        let names =
            ["get", "Get", "getAdmin", "adminClient", "AdminClient", "run", "Straße", "STRASSE", "ß", "a", "aa", "x"];
        let containers = ["com.acme.admin", "com.acme", "shapes::geometry", "lib/admin/pkg", "Main#x"];
        let mut b = GraphBuilder::new("repeating");
        for k in 0..n {
            let name = names[(k * 7 + k / 13) % names.len()];
            let fqn = format!("{}.{name}", containers[(k * 3 + k / 5) % containers.len()]);
            let mut id = [0u8; 20];
            id[..8].copy_from_slice(&(k as u64).to_le_bytes());
            let spec = NodeSpec {
                id,
                kind: "function",
                name,
                fqn: &fqn,
                file: "a.rs",
                line: 1,
                roles: &[],
                doc: "",
                signature: "",
            };
            b.add_node(spec).unwrap();
        }
        b.build().unwrap()
    }

    /// The distinct names' lookups find each node a scan of every node's
    /// lower-cased name finds, once, under its own name.
    #[test]
    fn the_name_lookups_are_the_plain_scans() {
        for n in [0, 1, 40, 3000] {
            let g = repeating(n);
            let ix = g.index();
            let all = 0..n as NodeIx;
            for q in ["", "a", "aa", "admin", "get", "ß", "straße", "strasse", "x", "zz", "t", "n\0"] {
                let scan: Vec<NodeIx> = all
                    .clone()
                    .filter(|&i| !q.contains('\0') && !q.is_empty() && ix.lower_name(i).contains(q))
                    .collect();
                assert_eq!(ix.name_contains(q), scan, "{n} {q:?}");
                let mut grouped: Vec<NodeIx> = Vec::new();
                for (name, nodes) in ix.names_containing(q) {
                    assert!(nodes.is_sorted() && !nodes.is_empty(), "{q:?}");
                    assert!(nodes.iter().all(|&i| ix.lower_name(i) == name), "{q:?} {name:?}");
                    grouped.extend(nodes);
                }
                grouped.sort_unstable();
                assert_eq!(grouped, scan, "{n} {q:?}");
                let mut starting: Vec<NodeIx> =
                    ix.names_starting(q).flat_map(|(_, nodes)| nodes.iter().copied()).collect();
                starting.sort_unstable();
                let scan: Vec<NodeIx> = all.clone().filter(|&i| ix.lower_name(i).starts_with(q)).collect();
                assert_eq!(starting, scan, "{n} {q:?}");
            }
            // The distinct names, in order, each with every node of that
            // name, ascending, as sorting and grouping the names finds them.
            let mut plain: Vec<(&str, Vec<NodeIx>)> = Vec::new();
            let mut sorted: Vec<NodeIx> = all.clone().collect();
            sorted.sort_by_key(|&i| (ix.lower_name(i), i));
            for i in sorted {
                match plain.last_mut() {
                    Some((name, nodes)) if *name == ix.lower_name(i) => nodes.push(i),
                    _ => plain.push((ix.lower_name(i), vec![i])),
                }
            }
            let names = ix.distinct_names();
            let made: Vec<(&str, Vec<NodeIx>)> =
                (0..names.len()).map(|k| names.get(&ix.by_name, k)).map(|(n, nodes)| (n, nodes.to_vec())).collect();
            assert_eq!(made, plain, "{n}");
        }
    }

    /// The entries of a table that contain a needle: each once, ascending,
    /// as a plain scan finds them (several matches in one entry, empty
    /// entries, matches at the first and the last, other scripts); a match
    /// before a table's first entry (a table read from a file) is skipped.
    #[test]
    fn entries_containing_is_the_plain_scan() {
        let entries = ["", "aa", "aaa", "baab", "", "xaax", "ß", "aßa", "a"];
        let mut table = String::new();
        let mut starts = Vec::new();
        for e in entries {
            starts.push(table.len() as u32);
            table.push_str(e);
            table.push('\0');
        }
        starts.push(table.len() as u32);
        for q in ["aa", "a", "x", "ß", "ßa", "b", "", "a\0", "zz"] {
            let plain: Vec<u32> = (0..entries.len() as u32)
                .filter(|&i| !q.is_empty() && !q.contains('\0') && entries[i as usize].contains(q))
                .collect();
            assert_eq!(entries_containing(&table, &starts, q), plain, "{q:?}");
        }
        // Shifted by one byte, "a" first: that match is before the first
        // entry, the others are as before.
        let late: Vec<u32> = starts.iter().map(|&s| s + 1).collect();
        let plain: Vec<u32> = (0..entries.len() as u32).filter(|&i| entries[i as usize].contains('a')).collect();
        assert_eq!(entries_containing(&format!("a{table}"), &late, "a"), plain);
    }

    /// Several lists' nodes, ascending and each once, whether sorted (few)
    /// or read off bits (many).
    #[test]
    fn ascending_is_the_sorted_union_either_way() {
        let mut seed = 7u64;
        let mut next = |below: u32| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % below as u64) as u32
        };
        for (n, count) in [(1000, 5), (1000, 900), (64, 64), (65, 3), (130, 500)] {
            let lists: Vec<Vec<NodeIx>> = (0..4).map(|_| (0..count / 4).map(|_| next(n)).collect()).collect();
            let views: Vec<&[NodeIx]> = lists.iter().map(Vec::as_slice).collect();
            let mut plain = lists.concat();
            plain.sort_unstable();
            plain.dedup();
            assert_eq!(ascending(n as usize, &views), plain, "{n} {count}");
        }
    }
}
