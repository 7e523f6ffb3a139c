//! The lookup indexes of a [`Graph`]: ids, exact and prefix names, name
//! substrings, qualified-name containers, doc words, kinds, roles, files.
//!
//! Built once by the builder (and stored in snapshots). Every query reads
//! only the part of the graph that can match: a sorted array, a posting
//! list, or one `memmem` pass over the arena of lower-cased names (about
//! 15 bytes a symbol), never a pass that lower-cases every symbol.

use memchr::memmem;
use rayon::slice::ParallelSliceMut;

mod patched;

use super::{Graph, NodeIx};

/// Lists of nodes per key: key `k`'s nodes are `items[offsets[k]..offsets[k+1]]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Csr {
    pub offsets: Vec<u32>,
    pub items: Vec<NodeIx>,
}

impl Csr {
    /// From (key, node) pairs; keys below `keys`.
    fn from_pairs(keys: usize, mut pairs: Vec<(u32, NodeIx)>) -> Csr {
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut offsets = Vec::with_capacity(keys + 1);
        offsets.push(0);
        let mut items = Vec::with_capacity(pairs.len());
        for (k, n) in pairs {
            while offsets.len() <= k as usize {
                offsets.push(items.len() as u32);
            }
            items.push(n);
        }
        while offsets.len() <= keys {
            offsets.push(items.len() as u32);
        }
        Csr { offsets, items }
    }

    /// Key `k`'s nodes, ascending (empty for an unknown key).
    pub fn get(&self, k: usize) -> &[NodeIx] {
        match (self.offsets.get(k), self.offsets.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Lower case, character by character (the one rule every index and query
/// uses, so sorted orders and comparisons agree).
pub fn lower(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// Where the last segment of a qualified name starts: after the last `::`,
/// `.`, `/`, `#` or space.
pub fn tail_start(s: &str) -> usize {
    let one = s.rfind(['.', '/', '#', ' ']).map_or(0, |i| i + 1);
    let two = s.rfind("::").map_or(0, |i| i + 2);
    one.max(two)
}

/// Whether `fqn` ends with `suffix` as whole segments: preceded by one of
/// the separators [`tail_start`] knows (`OrderService.placeOrder` in
/// `com.acme.OrderService.placeOrder`, `geometry::Circle` in
/// `shapes::geometry::Circle`).
pub fn ends_with_segment(fqn: &str, suffix: &str) -> bool {
    fqn.len() > suffix.len() && fqn.ends_with(suffix) && {
        let head = &fqn[..fqn.len() - suffix.len()];
        head.ends_with(['.', '/', '#', ' ']) || head.ends_with("::")
    }
}

/// The [`word_hash`] of each word of a text for the doc index (runs of
/// alphanumeric characters, lower-cased), made without a string a word.
fn word_hashes(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| {
        let mut buf = [0u8; 4];
        w.chars()
            .flat_map(char::to_lowercase)
            .flat_map(|c| {
                let n = c.encode_utf8(&mut buf).len();
                buf.into_iter().take(n)
            })
            .fold(FNV_OFFSET, |h, b| (h ^ b as u64).wrapping_mul(FNV_PRIME))
    })
}

/// The distinct [`word_hashes`] of a node's doc, ascending, in `into`
/// (emptied first: one buffer serves every node).
fn doc_words_of(doc: &str, into: &mut Vec<u64>) {
    into.clear();
    into.extend(word_hashes(doc));
    into.sort_unstable();
    into.dedup();
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// A stable 64-bit hash (FNV-1a): snapshots store these, so it must not
/// change between runs or builds.
pub fn word_hash(word: &str) -> u64 {
    word.bytes().fold(FNV_OFFSET, |h, b| (h ^ b as u64).wrapping_mul(FNV_PRIME))
}

/// Which entries of a NUL-separated table (`starts[i]` is where entry `i`
/// begins) contain `needle`: ascending, each once. One `memmem` pass that
/// goes on from the next entry once an entry matched, each match's entry
/// found by galloping from the last one (matches are ascending: a
/// neighbour, not a binary search of the whole table, most of the time).
fn entries_containing(table: &str, starts: &[u32], needle: &str) -> Vec<u32> {
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
fn ascending(n: usize, lists: &[&[NodeIx]]) -> Vec<NodeIx> {
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
fn partition(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

/// The nodes of `keyed` in the order of their keys (then of their
/// indexes): the keys sorted beside the nodes, not looked up again at
/// each comparison, on every core.
fn sorted(mut keyed: Vec<(&str, NodeIx)>) -> Vec<NodeIx> {
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

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
    fn of(ix: &Index) -> Names {
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
        names
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
    fn get<'a>(&'a self, by_name: &'a [NodeIx], k: usize) -> (&'a str, &'a [NodeIx]) {
        let (a, b) = (self.starts[k] as usize, self.starts[k + 1] as usize);
        (&self.table[a..b - 1], &by_name[self.runs[k] as usize..self.runs[k + 1] as usize])
    }

    fn len(&self) -> usize {
        self.runs.len().saturating_sub(1)
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

/// The indexes (see the module docs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Index {
    /// Nodes sorted by binary id.
    pub by_id: Vec<NodeIx>,
    /// Every lower-cased name followed by NUL, in node order.
    pub lower_names: String,
    /// Where each node's lower-cased name starts in `lower_names` (n + 1).
    pub name_starts: Vec<u32>,
    /// Nodes sorted by lower-cased name.
    pub by_name: Vec<NodeIx>,
    /// The distinct lower-cased names, each with its run of `by_name`:
    /// made from the two fields above (when built or read; a patched
    /// graph's at its first search).
    pub distinct: Distinct,
    /// Nodes with a qualified name, sorted by it lower-cased.
    pub by_fqn: Vec<NodeIx>,
    /// Nodes with a qualified name, sorted by its last segment lower-cased.
    pub by_tail: Vec<NodeIx>,
    /// Each node's place in the order (qualified-name length, qualified
    /// name, index): how equal scores are ranked, as one integer compare.
    pub fqn_rank: Vec<u32>,
    /// Distinct lower-cased containers (a qualified name without its last
    /// segment), each followed by NUL.
    pub containers: String,
    /// Where each container starts in `containers` (c + 1).
    pub container_starts: Vec<u32>,
    /// Each container's members.
    pub members: Csr,
    /// Distinct doc-word hashes, ascending.
    pub doc_words: Vec<u64>,
    /// Each doc word's nodes.
    pub doc_nodes: Csr,
    /// Each kind's nodes.
    pub by_kind: Csr,
    /// Each role's nodes.
    pub by_role: Csr,
    /// Each file's nodes.
    pub by_file: Csr,
}

impl Index {
    /// Builds every index of `g` (its nodes and strings must be in place):
    /// the name, qualified-name and the other indexes side by side.
    pub fn build(g: &Graph) -> Index {
        let (names, (fqns, rest)) =
            rayon::join(|| Index::names(g), || rayon::join(|| Index::fqns(g), || Index::rest(g)));
        Index {
            by_id: names.by_id,
            lower_names: names.lower_names,
            name_starts: names.name_starts,
            by_name: names.by_name,
            distinct: names.distinct,
            by_fqn: fqns.by_fqn,
            by_tail: fqns.by_tail,
            fqn_rank: fqns.fqn_rank,
            containers: fqns.containers,
            container_starts: fqns.container_starts,
            members: fqns.members,
            doc_words: rest.doc_words,
            doc_nodes: rest.doc_nodes,
            by_kind: rest.by_kind,
            by_role: rest.by_role,
            by_file: rest.by_file,
        }
    }

    /// Ids and names: `by_id`, `lower_names`, `name_starts`, `by_name`.
    fn names(g: &Graph) -> Index {
        let n = g.node_count();
        let mut ix = Index { by_id: (0..n as NodeIx).collect(), ..Index::default() };
        ix.by_id.par_sort_unstable_by_key(|&i| g.ids[i as usize]);
        ix.name_starts.reserve(n + 1);
        for node in g.iter() {
            ix.name_starts.push(ix.lower_names.len() as u32);
            for c in node.name().chars().flat_map(char::to_lowercase) {
                ix.lower_names.push(if c == '\0' { ' ' } else { c });
            }
            ix.lower_names.push('\0');
        }
        ix.name_starts.push(ix.lower_names.len() as u32);
        let by_name = sorted((0..n as NodeIx).map(|i| (ix.lower_name(i), i)).collect());
        ix.by_name = by_name;
        ix.distinct_names();
        ix
    }

    /// Qualified names: `by_fqn`, `fqn_rank`, `by_tail`, `containers`,
    /// `container_starts`, `members`.
    fn fqns(g: &Graph) -> Index {
        let n = g.node_count();
        let mut ix = Index::default();
        // Every lower-cased qualified name in one arena, not one string a
        // node.
        let mut arena = String::new();
        let mut starts: Vec<usize> = Vec::with_capacity(n + 1);
        for node in g.iter() {
            starts.push(arena.len());
            arena.extend(node.fqn().chars().flat_map(char::to_lowercase));
        }
        starts.push(arena.len());
        let keyed: Vec<(&str, NodeIx)> =
            (0..n).map(|i| (&arena[starts[i]..starts[i + 1]], i as NodeIx)).filter(|(f, _)| !f.is_empty()).collect();
        let tails: Vec<(&str, NodeIx)> = keyed.iter().map(|&(f, i)| (&f[tail_start(f)..], i)).collect();
        // Containers: qualified names without their last segment.
        let mut held: Vec<(&str, NodeIx)> = keyed
            .iter()
            .map(|&(f, i)| (f[..tail_start(f)].trim_end_matches(['.', '/', '#', ' ', ':']), i))
            .filter(|(c, _)| !c.is_empty())
            .collect();
        ix.by_fqn = sorted(keyed);
        ix.by_tail = sorted(tails);
        let mut order: Vec<(usize, &str, NodeIx)> =
            g.iter().map(|node| (node.fqn().len(), node.fqn(), node.ix())).collect();
        order.par_sort_unstable();
        ix.fqn_rank = vec![0; n];
        for (rank, &(_, _, node)) in order.iter().enumerate() {
            ix.fqn_rank[node as usize] = rank as u32;
        }
        drop(order);

        held.par_sort_unstable();
        let mut pairs = Vec::with_capacity(held.len());
        let mut last: Option<&str> = None;
        for &(c, i) in &held {
            if last != Some(c) {
                ix.container_starts.push(ix.containers.len() as u32);
                ix.containers.extend(c.chars().map(|c| if c == '\0' { ' ' } else { c }));
                ix.containers.push('\0');
                last = Some(c);
            }
            pairs.push((ix.container_starts.len() as u32 - 1, i));
        }
        let count = ix.container_starts.len();
        ix.container_starts.push(ix.containers.len() as u32);
        ix.members = Csr::from_pairs(count, pairs);
        ix
    }

    /// Doc words, kinds, files and roles.
    fn rest(g: &Graph) -> Index {
        let mut ix = Index::default();
        // Doc words.
        let mut pairs: Vec<(u64, NodeIx)> = Vec::new();
        let mut hashes: Vec<u64> = Vec::new();
        for node in g.iter() {
            doc_words_of(node.doc(), &mut hashes);
            pairs.extend(hashes.iter().map(|&h| (h, node.ix())));
        }
        pairs.par_sort_unstable();
        ix.doc_words = pairs.iter().map(|p| p.0).collect();
        ix.doc_words.dedup();
        let keyed: Vec<(u32, NodeIx)> = {
            let mut k = 0u32;
            let mut out = Vec::with_capacity(pairs.len());
            for (i, &(h, node)) in pairs.iter().enumerate() {
                if i > 0 && pairs[i - 1].0 != h {
                    k += 1;
                }
                out.push((k, node));
            }
            out
        };
        ix.doc_nodes = Csr::from_pairs(ix.doc_words.len(), keyed);

        ix.by_kind = Csr::from_pairs(
            g.kinds.len(),
            g.recs.iter().enumerate().map(|(i, r)| (r.kind as u32, i as NodeIx)).collect(),
        );
        ix.by_file =
            Csr::from_pairs(g.files.len(), g.recs.iter().enumerate().map(|(i, r)| (r.file, i as NodeIx)).collect());
        let mut roles = Vec::new();
        for (i, r) in g.recs.iter().enumerate() {
            for &role in &g.role_lists[r.roles_start as usize..(r.roles_start as usize + r.roles_len as usize)] {
                roles.push((role as u32, i as NodeIx));
            }
        }
        ix.by_role = Csr::from_pairs(g.roles.len(), roles);
        ix
    }

    /// Node `i`'s lower-cased name.
    pub fn lower_name(&self, i: NodeIx) -> &str {
        let (a, b) = (self.name_starts[i as usize] as usize, self.name_starts[i as usize + 1] as usize);
        &self.lower_names[a..b - 1]
    }

    /// Nodes whose lower-cased name is `key` (lower-cased already).
    pub fn name_is(&self, key: &str) -> &[NodeIx] {
        let lo = self.by_name.partition_point(|&i| self.lower_name(i) < key);
        let hi = lo + self.by_name[lo..].partition_point(|&i| self.lower_name(i) <= key);
        &self.by_name[lo..hi]
    }

    /// The distinct names, made now if they were not (a patched graph's).
    pub fn distinct_names(&self) -> &Names {
        self.distinct.0.get_or_init(|| Names::of(self))
    }

    /// The distinct names, if made.
    pub fn distinct_names_made(&self) -> Option<&Names> {
        self.distinct.0.get()
    }

    /// Each distinct lower-cased name that contains `needle`, with its
    /// nodes (ascending), in the names' order.
    pub fn names_containing(&self, needle: &str) -> impl Iterator<Item = (&str, &[NodeIx])> {
        let names = self.distinct_names();
        let found = entries_containing(&names.table, &names.starts, needle);
        found.into_iter().map(move |k| names.get(&self.by_name, k as usize))
    }

    /// Each distinct lower-cased name that starts with `prefix`, with its
    /// nodes (ascending), in the names' order.
    pub fn names_starting(&self, prefix: &str) -> impl Iterator<Item = (&str, &[NodeIx])> {
        let names = self.distinct_names();
        let name = |k: usize| names.get(&self.by_name, k).0;
        let lo = partition(names.len(), |k| name(k) < prefix);
        let hi = lo + partition(names.len() - lo, |k| name(lo + k).starts_with(prefix));
        (lo..hi).map(move |k| names.get(&self.by_name, k))
    }

    /// Nodes whose lower-cased name contains `needle`, ascending.
    pub fn name_contains(&self, needle: &str) -> Vec<NodeIx> {
        let runs: Vec<&[NodeIx]> = self.names_containing(needle).map(|(_, nodes)| nodes).collect();
        ascending(self.by_name.len(), &runs)
    }

    /// Nodes whose lower-cased qualified name is `key`.
    pub fn fqn_is<'a>(&'a self, g: &Graph, key: &str) -> &'a [NodeIx] {
        let cmp = |i: NodeIx| g.node(i).fqn().chars().flat_map(char::to_lowercase).cmp(key.chars());
        let lo = self.by_fqn.partition_point(|&i| cmp(i).is_lt());
        let hi = lo + self.by_fqn[lo..].partition_point(|&i| cmp(i).is_le());
        &self.by_fqn[lo..hi]
    }

    /// Nodes whose qualified name's last segment, lower-cased, is `key`.
    pub fn tail_is<'a>(&'a self, g: &Graph, key: &str) -> &'a [NodeIx] {
        let cmp = |i: NodeIx| {
            let f = g.node(i).fqn();
            let l = lower(f);
            l[tail_start(&l)..].cmp(key)
        };
        let lo = self.by_tail.partition_point(|&i| cmp(i).is_lt());
        let hi = lo + self.by_tail[lo..].partition_point(|&i| cmp(i).is_le());
        &self.by_tail[lo..hi]
    }

    /// Nodes whose container (qualified name without the last segment)
    /// contains `needle`, ascending.
    pub fn container_contains(&self, needle: &str) -> Vec<NodeIx> {
        let containers = entries_containing(&self.containers, &self.container_starts, needle);
        let members: Vec<&[NodeIx]> = containers.iter().map(|&c| self.members.get(c as usize)).collect();
        ascending(self.by_name.len(), &members)
    }

    /// Nodes whose lower-cased qualified name contains `needle`: those
    /// whose container contains it, and, when `needle` spans a separator
    /// (`orderservice.place`, `geometry::circ`), the members of containers
    /// holding its part before the last separator whose qualified name
    /// contains it whole. Ascending.
    pub fn fqn_contains(&self, g: &Graph, needle: &str) -> Vec<NodeIx> {
        let mut out = self.container_contains(needle);
        let cut = tail_start(needle);
        let head = needle[..cut].trim_end_matches(['.', '/', '#', ' ', ':']);
        if cut > 0 && !head.is_empty() {
            let spanning = self.container_contains(head);
            out.extend(spanning.into_iter().filter(|&n| lower(g.node(n).fqn()).contains(needle)));
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// Nodes whose doc has the word `word` (lower-cased already).
    pub fn doc_has_word(&self, word: &str) -> &[NodeIx] {
        match self.doc_words.binary_search(&word_hash(word)) {
            Ok(k) => self.doc_nodes.get(k),
            Err(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GraphBuilder, NodeSpec};

    /// A doc word's hash is its lower-cased spelling's, whatever its case
    /// and script (snapshots store these hashes).
    #[test]
    fn word_hashes_are_the_hashes_of_the_lower_cased_words() {
        let words =
            |text: &'static str| text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(lower);
        let text = "Places an ORDER; İstanbul's Straße, ΣΊΣΥΦΟΣ — 注文 x2 _under_score_ ǅemal";
        let plain: Vec<u64> = words(text).map(|w| word_hash(&w)).collect();
        assert_eq!(word_hashes(text).collect::<Vec<u64>>(), plain);
        assert_eq!(plain.len(), 12, "{:?}", words(text).collect::<Vec<_>>());
    }

    /// The orders the indexes hold, made the plain way: each list sorted
    /// by its key looked up at every comparison.
    #[test]
    fn the_sorted_indexes_are_the_plain_sorts() {
        let fqns = [
            "com.acme.Order.place",
            "com.acme.Order",
            "com.acme.order",
            "",
            "shapes::geometry::Circle",
            "shapes::geometry::circle::area",
            "İstanbul.Şehir.Ünvan",
            "a.b-x.y",
            "a.b.z",
            "a\0b.c",
            "Main#run",
            "main#run",
            "",
            "lib/pkg.Type",
            "x",
        ];
        let mut b = GraphBuilder::new("orders");
        for (k, fqn) in fqns.iter().enumerate() {
            let name = fqn.rsplit(['.', ':', '#', '/']).next().filter(|n| !n.is_empty()).unwrap_or("anon");
            let mut id = [0u8; 20];
            id[0] = 0xff - k as u8;
            let spec =
                NodeSpec { id, kind: "function", name, fqn, file: "a.rs", line: 1, roles: &[], doc: "", signature: "" };
            b.add_node(spec).unwrap();
        }
        let g = b.build().unwrap();
        let ix = Index::build(&g);
        let n = g.node_count() as NodeIx;
        let low = |i: NodeIx| lower(g.node(i).fqn());
        let mut by_fqn: Vec<NodeIx> = (0..n).filter(|&i| !low(i).is_empty()).collect();
        by_fqn.sort_by(|&a, &b| low(a).cmp(&low(b)).then(a.cmp(&b)));
        assert_eq!(ix.by_fqn, by_fqn);
        let tail = |i: NodeIx| {
            let l = low(i);
            l[tail_start(&l)..].to_owned()
        };
        let mut by_tail = by_fqn.clone();
        by_tail.sort_by(|&a, &b| tail(a).cmp(&tail(b)).then(a.cmp(&b)));
        assert_eq!(ix.by_tail, by_tail);
        let mut order: Vec<NodeIx> = (0..n).collect();
        order.sort_by_key(|&i| (g.node(i).fqn().len(), g.node(i).fqn().to_owned(), i));
        for (rank, &i) in order.iter().enumerate() {
            assert_eq!(ix.fqn_rank[i as usize], rank as u32, "{}", g.node(i).fqn());
        }
        let mut by_name: Vec<NodeIx> = (0..n).collect();
        by_name.sort_by(|&a, &b| ix.lower_name(a).cmp(ix.lower_name(b)).then(a.cmp(&b)));
        assert_eq!(ix.by_name, by_name);
        // Members of a container, found by a part of it.
        let members: Vec<&str> = ix.container_contains("geometry").iter().map(|&i| g.node(i).fqn()).collect();
        assert_eq!(members, ["shapes::geometry::Circle", "shapes::geometry::circle::area"]);
        let both: Vec<&str> = ix.container_contains("com.acme").iter().map(|&i| g.node(i).fqn()).collect();
        assert_eq!(both.len(), 3, "{both:?}");
    }

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
