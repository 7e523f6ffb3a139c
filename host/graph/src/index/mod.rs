//! The lookup indexes of a [`Graph`]: ids, exact and prefix names, name
//! substrings, qualified-name containers, doc words, kinds, roles, files.
//!
//! Built once by the builder (and stored in snapshots, but the distinct
//! names, made again as one is read). Every query reads only the part of
//! the graph that can match: a sorted array, a posting list, or one
//! `memmem` pass over the distinct lower-cased names or containers
//! (`tables.rs`), never a pass that lower-cases every symbol.

use rayon::slice::ParallelSliceMut;

/// Fast hashing: the doc words counted as the indexes are made.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

mod patched;
mod tables;

pub(crate) use tables::{Distinct, Names};
use tables::{ascending, entries_containing};

use super::{Graph, NodeIx};
use crate::tight::{tight, tight_text};

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

/// The nodes of `keyed` in the order of their keys (then of their
/// indexes): the keys sorted beside the nodes, not looked up again at
/// each comparison, on every core.
fn sorted(mut keyed: Vec<(&str, NodeIx)>) -> Vec<NodeIx> {
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Held while a thread outside rayon's pool makes a graph's query
/// indexes ([`Indexes::query`]): one such build at a time in the process.
/// A graph served before its indexes are made (a project's first index
/// merging its parts, `signpost::live_graph`) has callers that wait for
/// them here instead of each making a copy.
static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The graphs whose query indexes were made, by address (a test counts
/// how many times a graph's were).
#[cfg(test)]
pub(crate) static BUILT: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// A graph's indexes: by id and by file, made with the graph (a lookup by
/// id and a splice read them); the others ([`Index`]) made at the first
/// query or by [`Graph::warm`]. A graph that is never queried itself (a
/// language's part of a project, served merged with the others) never
/// makes them: on a 3.96M-line tree, 25 MiB (BENCHMARKS.md, issue 47,
/// twenty-eighth part).
#[derive(Debug, Default, Clone)]
pub(crate) struct Indexes {
    /// Nodes sorted by binary id.
    pub by_id: Vec<NodeIx>,
    /// Each file's nodes.
    pub by_file: Csr,
    /// The others, once made.
    pub query: std::sync::OnceLock<Index>,
}

impl Indexes {
    /// The indexes by id and by file of `g` (its nodes and strings in
    /// place), the others not made.
    pub fn build(g: &Graph) -> Indexes {
        let (by_id, by_file) = rayon::join(
            || {
                let mut by_id: Vec<NodeIx> = (0..g.node_count() as NodeIx).collect();
                by_id.par_sort_unstable_by_key(|&i| g.ids[i as usize]);
                by_id
            },
            || Csr::from_pairs(g.files.len(), g.recs.iter().enumerate().map(|(i, r)| (r.file, i as NodeIx)).collect()),
        );
        Indexes { by_id, by_file, query: std::sync::OnceLock::new() }
    }

    /// The other indexes of `g`, whose these are: made now if they were
    /// not. Made outside the cell, then set (the first made is kept): a
    /// query that waited on the cell while its maker's parallel sorts
    /// waited on the waiting query's thread would never end. Off rayon's
    /// threads, callers take turns ([`BUILDING`]): one that finds another
    /// making them waits and reads what it made, rather than making a
    /// second copy beside it. Rayon's threads never wait: one of them may
    /// be what the maker's sorts wait for.
    pub fn query(&self, g: &Graph) -> &Index {
        if let Some(ix) = self.query.get() {
            return ix;
        }
        let _turn = rayon::current_thread_index()
            .is_none()
            .then(|| BUILDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        if let Some(ix) = self.query.get() {
            return ix;
        }
        let _ = self.query.set(Index::build(g));
        self.query.get().expect("set just now")
    }
}

/// Indexes made whenever the graph is compared: the others as `g` makes
/// them, the same made or not.
impl PartialEq for Indexes {
    fn eq(&self, other: &Indexes) -> bool {
        self.by_id == other.by_id && self.by_file == other.by_file && self.query.get() == other.query.get()
    }
}

impl Eq for Indexes {}

/// The indexes a query reads (see the module docs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Index {
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
}

impl Index {
    /// Builds the query indexes of `g` (its nodes and strings must be in
    /// place): the name, qualified-name and the other indexes side by side.
    pub fn build(g: &Graph) -> Index {
        #[cfg(test)]
        BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(g as *const Graph as usize);
        let (names, (fqns, rest)) =
            rayon::join(|| Index::names(g), || rayon::join(|| Index::fqns(g), || Index::rest(g)));
        // Each held as long as the graph serves: in allocations of their
        // lengths (`crate::tight`).
        let csr = |c: Csr| Csr { offsets: tight(c.offsets), items: tight(c.items) };
        Index {
            lower_names: tight_text(names.lower_names),
            name_starts: tight(names.name_starts),
            by_name: tight(names.by_name),
            distinct: names.distinct,
            by_fqn: tight(fqns.by_fqn),
            by_tail: tight(fqns.by_tail),
            fqn_rank: tight(fqns.fqn_rank),
            containers: tight_text(fqns.containers),
            container_starts: tight(fqns.container_starts),
            members: csr(fqns.members),
            doc_words: tight(rest.doc_words),
            doc_nodes: csr(rest.doc_nodes),
            by_kind: csr(rest.by_kind),
            by_role: csr(rest.by_role),
        }
    }

    /// Names: `lower_names`, `name_starts`, `by_name`.
    fn names(g: &Graph) -> Index {
        let n = g.node_count();
        let mut ix = Index::default();
        ix.name_starts.reserve(n + 1);
        ix.lower_names.reserve(g.recs.iter().map(|r| r.name.len as usize + 1).sum());
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
        let mut arena = String::with_capacity(g.recs.iter().map(|r| r.fqn.len as usize).sum());
        let mut starts: Vec<usize> = Vec::with_capacity(n + 1);
        for node in g.iter() {
            starts.push(arena.len());
            arena.extend(node.fqn().chars().flat_map(char::to_lowercase));
        }
        starts.push(arena.len());
        // Each order's keys made as it is sorted, and let go after: one
        // key a node held at a time.
        let keyed = || (0..n).map(|i| (&arena[starts[i]..starts[i + 1]], i as NodeIx)).filter(|(f, _)| !f.is_empty());
        ix.by_fqn = sorted(keyed().collect());
        ix.by_tail = sorted(keyed().map(|(f, i)| (&f[tail_start(f)..], i)).collect());
        let mut order: Vec<(usize, &str, NodeIx)> =
            g.iter().map(|node| (node.fqn().len(), node.fqn(), node.ix())).collect();
        order.par_sort_unstable();
        ix.fqn_rank = vec![0; n];
        for (rank, &(_, _, node)) in order.iter().enumerate() {
            ix.fqn_rank[node as usize] = rank as u32;
        }
        drop(order);

        // Containers: qualified names without their last segment.
        let mut held: Vec<(&str, NodeIx)> = keyed()
            .map(|(f, i)| (f[..tail_start(f)].trim_end_matches(['.', '/', '#', ' ', ':']), i))
            .filter(|(c, _)| !c.is_empty())
            .collect();
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

    /// Doc words, kinds and roles.
    fn rest(g: &Graph) -> Index {
        let mut ix = Index::default();
        // Doc words: each distinct word's nodes counted, then laid out in
        // a second pass over the docs, not a (word, node) pair for every
        // word of every doc sorted (on a 3.3M-line tree, tens of MB for a
        // moment while a merged graph is made).
        let mut count: HashMap<u64, u32> = HashMap::default();
        let mut hashes: Vec<u64> = Vec::new();
        for node in g.iter() {
            doc_words_of(node.doc(), &mut hashes);
            for &h in &hashes {
                *count.entry(h).or_default() += 1;
            }
        }
        let mut words: Vec<u64> = count.keys().copied().collect();
        words.par_sort_unstable();
        let mut offsets = Vec::with_capacity(words.len() + 1);
        offsets.push(0u32);
        for w in &words {
            let start = offsets[offsets.len() - 1];
            // From here on, where the word's next node goes.
            let n = std::mem::replace(count.get_mut(w).expect("counted"), start);
            offsets.push(start + n);
        }
        let mut items = vec![0; offsets[offsets.len() - 1] as usize];
        for node in g.iter() {
            doc_words_of(node.doc(), &mut hashes);
            for h in &hashes {
                let at = count.get_mut(h).expect("counted in the first pass");
                items[*at as usize] = node.ix();
                *at += 1;
            }
        }
        drop(count);
        ix.doc_words = words;
        ix.doc_nodes = Csr { offsets, items };

        ix.by_kind = Csr::from_pairs(
            g.kinds.len(),
            g.recs.iter().enumerate().map(|(i, r)| (r.kind as u32, i as NodeIx)).collect(),
        );
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
        self.distinct.made(self)
    }

    /// The distinct names, if made.
    pub fn distinct_names_made(&self) -> Option<&Names> {
        self.distinct.get()
    }

    /// Each distinct lower-cased name that contains `needle`, with its
    /// nodes (ascending), in the names' order.
    pub fn names_containing(&self, needle: &str) -> impl Iterator<Item = (&str, &[NodeIx])> {
        let names = self.distinct_names();
        names.containing(needle).into_iter().map(move |k| names.get(&self.by_name, k as usize))
    }

    /// Each distinct lower-cased name that starts with `prefix`, with its
    /// nodes (ascending), in the names' order.
    pub fn names_starting(&self, prefix: &str) -> impl Iterator<Item = (&str, &[NodeIx])> {
        let names = self.distinct_names();
        let name = |k: usize| names.get(&self.by_name, k).0;
        let lo = tables::partition(names.len(), |k| name(k) < prefix);
        let hi = lo + tables::partition(names.len() - lo, |k| name(lo + k).starts_with(prefix));
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

    /// Each doc word's nodes, as the plain way finds them: every node
    /// whose doc has the word, ascending, once each.
    #[test]
    fn the_doc_word_index_is_the_plain_search() {
        let docs =
            ["Places an order", "", "order ORDER order", "cancels an Order; refunds", "İstanbul order", "refunds"];
        let mut b = GraphBuilder::new("docs");
        for (k, doc) in docs.iter().cycle().take(40).enumerate() {
            let mut id = [0u8; 20];
            id[0] = k as u8;
            let spec = NodeSpec { id, kind: "function", name: "f", file: "a.rs", doc, ..NodeSpec::default() };
            b.add_node(spec).unwrap();
        }
        let g = b.build().unwrap();
        let ix = Index::build(&g);
        let mut seen = 0;
        for word in ["order", "an", "refunds", "places", "istanbul", "i̇stanbul", "absent"] {
            let plain: Vec<NodeIx> = (0..g.node_count() as NodeIx)
                .filter(|&i| word_hashes(g.node(i).doc()).any(|h| h == word_hash(word)))
                .collect();
            assert_eq!(ix.doc_has_word(word), plain, "{word}");
            seen += plain.len();
        }
        assert!(seen > 40, "{seen} postings");
        let postings: usize = (0..ix.doc_words.len()).map(|k| ix.doc_nodes.get(k).len()).sum();
        assert_eq!(ix.doc_nodes.items.len(), postings);
    }
}
