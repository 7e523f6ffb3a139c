//! A project's parts merged without the builder's tables.
//!
//! A project's languages are parts of one graph, and a first index merges
//! them again as each lands. Through the builder, a merge collects every
//! node in a table of ids and every edge in a list, sorts the list twice
//! and lays it out (for a 3.3M-line tree's 310,000 symbols and 1.1M
//! edges, tens of MB beside the graph serving and the one being made, and
//! 0.6-0.8 s of each of its last merges: BENCHMARKS.md, issue 47,
//! thirty-sixth part). The parts are
//! graphs already: each one's nodes unique and sorted by id in its index,
//! each node's edges sorted. So [`merged`] finds the ids two parts share
//! by walking those indexes side by side, numbers the nodes as the builder
//! would (each id where it is first met), and lays each node's edges out
//! from its parts' lists, mapped, sorted again only where the mapping
//! changed their order. It makes the graph the builder makes, in
//! allocations of their final lengths.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::builder::Interner;
use crate::index::Indexes;
use crate::tight::tight;
use crate::{Adjacency, Derivation, EXTERNAL, Graph, NodeIx, RawId, Rec, Span, Text, TypeIx};

/// A part's indexes into one of its tables (kinds, files, roles, edge
/// types), mapped to the merged table's as they are first met: interned
/// as the builder interns them, with its limits.
struct Mapped<'a> {
    local: &'a [String],
    to: Vec<u32>,
    max: usize,
    what: &'static str,
}

impl<'a> Mapped<'a> {
    const UNSEEN: u32 = u32::MAX;

    fn new(local: &'a [String], max: usize, what: &'static str) -> Mapped<'a> {
        Mapped { local, to: vec![Mapped::UNSEEN; local.len()], max, what }
    }

    /// `None` past the table's limit (the builder then says which).
    fn get(&mut self, i: usize, table: &mut Interner) -> Option<u32> {
        if self.to[i] == Mapped::UNSEEN {
            self.to[i] = table.get(&self.local[i], self.max, self.what).ok()?;
        }
        Some(self.to[i])
    }
}

/// A node of a part: (part, index in it).
type At = (usize, NodeIx);

/// Every node of a later part whose id an earlier part has, with the
/// first part's node of that id (where the builder meets it first): the
/// parts' nodes sorted by id, walked side by side.
fn shared_ids(parts: &[&Graph]) -> HashMap<At, At> {
    let mut at = vec![0usize; parts.len()];
    let head = |k: usize, at: &[usize]| -> Option<(&RawId, NodeIx)> {
        parts[k].index.by_id.get(at[k]).map(|&n| (&parts[k].ids[n as usize], n))
    };
    let mut shared = HashMap::new();
    loop {
        // The least id at the heads, and the first part that has it.
        let mut least: Option<(usize, &RawId, NodeIx)> = None;
        for k in 0..parts.len() {
            if let Some((id, n)) = head(k, &at)
                && least.is_none_or(|(_, l, _)| id < l)
            {
                least = Some((k, id, n));
            }
        }
        let Some((first, id, n)) = least else { return shared };
        at[first] += 1;
        for k in first + 1..parts.len() {
            if let Some((other, m)) = head(k, &at)
                && other == id
            {
                shared.insert((k, m), (first, n));
                at[k] += 1;
            }
        }
    }
}

/// A node's edges of one direction gathered from its parts: (type,
/// other end, derivation rank), laid out sorted by (type, other end), an
/// edge met twice kept once, the most certain.
fn lay_out(edges: &mut Vec<(TypeIx, NodeIx, u8)>, into: &mut Adjacency, ranks: Option<&mut Vec<u8>>) {
    if !edges.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)) {
        edges.sort_unstable();
        edges.dedup_by_key(|e| (e.0, e.1));
    }
    into.types.extend(edges.iter().map(|e| e.0));
    into.targets.extend(edges.iter().map(|e| e.1));
    if let Some(ranks) = ranks {
        ranks.extend(edges.iter().map(|e| e.2));
    }
    into.offsets.push(into.targets.len() as u32);
    edges.clear();
}

/// The graph [`crate::merge`] makes of `parts`, made from their arrays;
/// `None` when the merged tables or text would pass their limits (the
/// builder then says which).
pub(crate) fn merged(name: &str, parts: &[&Graph]) -> Option<Graph> {
    let shared = shared_ids(parts);
    let nodes: usize = parts.iter().map(|g| g.node_count()).sum::<usize>() - shared.len();
    let edges: usize = parts.iter().map(|g| g.edge_count()).sum();
    if nodes >= (NodeIx::MAX - 1) as usize || edges >= u32::MAX as usize {
        return None;
    }
    let (mut kinds, mut files, mut roles, mut types) =
        (Interner::default(), Interner::default(), Interner::default(), Interner::default());
    // File 0 is "no file", as in the builder.
    files.get("", 1, "files").ok()?;
    let mut text = Text::default();
    let mut ids: Vec<RawId> = Vec::with_capacity(nodes);
    let mut recs: Vec<Rec> = Vec::with_capacity(nodes);
    // A node another part's definition may replace, as in the builder.
    let mut placeholder: Vec<bool> = Vec::with_capacity(nodes);
    let mut role_lists: Vec<u16> = Vec::with_capacity(parts.iter().map(|g| g.role_lists.len()).sum());
    // Each part's nodes and edge types in the merged graph.
    let mut node_maps: Vec<Vec<NodeIx>> = Vec::with_capacity(parts.len());
    let mut type_maps: Vec<Vec<TypeIx>> = Vec::with_capacity(parts.len());
    // The later parts' nodes of each id met before, by its merged node.
    let mut also: HashMap<NodeIx, Vec<At>> = HashMap::new();
    for (k, g) in parts.iter().enumerate() {
        let at = text.adopt(&g.text)?;
        let shift = |s: Span| if s.len == 0 { Span::default() } else { Span { start: s.start + at, len: s.len } };
        let mut kind = Mapped::new(&g.kinds, u16::MAX as usize, "kinds");
        let mut file = Mapped::new(&g.files, u32::MAX as usize, "files");
        let mut role = Mapped::new(&g.roles, u16::MAX as usize, "roles");
        let external = g.roles.iter().position(|r| r == EXTERNAL);
        let mut map = Vec::with_capacity(g.node_count());
        for (n, r) in g.recs.iter().enumerate() {
            let local = &g.role_lists[r.roles_start as usize..r.roles_start as usize + r.roles_len as usize];
            let is_placeholder =
                g.files[r.file as usize].is_empty() || external.is_some_and(|x| local.contains(&(x as u16)));
            let first = shared.get(&(k, n as NodeIx)).map(|&(j, m)| node_maps[j][m as usize]);
            if let Some(u) = first {
                map.push(u);
                also.entry(u).or_default().push((k, n as NodeIx));
                // A definition replaces a placeholder; otherwise the
                // first record stays.
                if !placeholder[u as usize] || is_placeholder {
                    continue;
                }
                placeholder[u as usize] = false;
            } else {
                map.push(recs.len() as NodeIx);
                ids.push(g.ids[n]);
                placeholder.push(is_placeholder);
            }
            let roles_start = role_lists.len() as u32;
            for &x in local {
                role_lists.push(role.get(x as usize, &mut roles)? as u16);
            }
            let rec = Rec {
                name: shift(r.name),
                fqn: shift(r.fqn),
                doc: shift(r.doc),
                signature: shift(r.signature),
                kind: kind.get(r.kind as usize, &mut kinds)? as u16,
                file: file.get(r.file as usize, &mut files)?,
                line: r.line,
                roles_start,
                roles_len: r.roles_len,
            };
            match first {
                Some(u) => recs[u as usize] = rec,
                None => recs.push(rec),
            }
        }
        node_maps.push(map);
        // Types as the builder meets them: each node's out-edges in turn.
        let mut ty = Mapped::new(&g.types, TypeIx::MAX as usize, "edge types");
        for &t in &g.out.types {
            ty.get(t as usize, &mut types)?;
        }
        type_maps.push(ty.to.iter().map(|&t| t as TypeIx).collect());
    }
    drop(placeholder);
    let inferred_any = parts.iter().any(|g| !g.inferred.is_empty());
    // Each merged node's edges of one direction, from the part that has
    // it first and then the others that have its id.
    let edges_of = |inn: bool| {
        let mut adj = Adjacency {
            offsets: Vec::with_capacity(nodes + 1),
            targets: Vec::with_capacity(edges),
            types: Vec::with_capacity(edges),
        };
        let mut ranks = (!inn && inferred_any).then(|| Vec::with_capacity(edges));
        adj.offsets.push(0);
        let mut gathered: Vec<(TypeIx, NodeIx, u8)> = Vec::new();
        let gather = |(k, n): At, into: &mut Vec<(TypeIx, NodeIx, u8)>| {
            let g = parts[k];
            let a = if inn { &g.inn } else { &g.out };
            let r = a.offsets[n as usize] as usize..a.offsets[n as usize + 1] as usize;
            into.extend(r.map(|i| {
                let how = if inn || !inferred_any { 0 } else { g.derivation_at(i).rank() };
                (type_maps[k][a.types[i] as usize], node_maps[k][a.targets[i] as usize], how)
            }));
        };
        for (k, g) in parts.iter().enumerate() {
            for n in 0..g.node_count() as NodeIx {
                if shared.contains_key(&(k, n)) {
                    continue;
                }
                gather((k, n), &mut gathered);
                if let Some(more) = also.get(&node_maps[k][n as usize]) {
                    for &at in more {
                        gather(at, &mut gathered);
                    }
                }
                lay_out(&mut gathered, &mut adj, ranks.as_mut());
            }
        }
        let adj = Adjacency { offsets: adj.offsets, targets: tight(adj.targets), types: tight(adj.types) };
        (adj, ranks)
    };
    let ((out, ranks), (inn, _)) = rayon::join(|| edges_of(false), || edges_of(true));
    let (inferred, ambiguous) = ranks.map_or_else(Default::default, |r| {
        let bits = |d: Derivation| crate::edges::rank_bits(&r, d.rank());
        (bits(Derivation::Inferred), bits(Derivation::Ambiguous))
    });
    let mut unresolved: Vec<(String, u32)> = parts.iter().flat_map(|g| g.unresolved.iter().cloned()).collect();
    unresolved.par_sort_unstable();
    unresolved.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 = kept.1.saturating_add(next.1);
        }
        same
    });
    let mut unread: Vec<(String, u32)> = parts.iter().flat_map(|g| g.unread.iter().cloned()).collect();
    unread.sort_unstable();
    unread.dedup_by(|a, b| a.0 == b.0);
    let mut graph = Graph {
        name: name.to_owned(),
        text: text.frozen(),
        ids,
        recs,
        kinds: kinds.names,
        files: files.names,
        roles: roles.names,
        types: types.names,
        role_lists: tight(role_lists),
        out,
        inn,
        inferred,
        ambiguous,
        unresolved,
        unread,
        index: Indexes::default(),
    };
    graph.index = Indexes::build(&graph);
    Some(graph)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Derivation, GraphBuilder, NodeSpec};

    /// Every field of two graphs, the indexes made at build included.
    fn assert_same(a: &Graph, b: &Graph) {
        assert_eq!(a.name, b.name);
        assert!(a.text == b.text, "text");
        assert_eq!(a.ids, b.ids, "ids");
        assert_eq!(a.recs, b.recs, "records");
        assert_eq!((&a.kinds, &a.files, &a.roles, &a.types), (&b.kinds, &b.files, &b.roles, &b.types), "tables");
        assert_eq!(a.role_lists, b.role_lists, "roles");
        assert_eq!(a.out, b.out, "out-edges");
        assert_eq!(a.inn, b.inn, "in-edges");
        assert_eq!((&a.inferred, &a.ambiguous), (&b.inferred, &b.ambiguous), "derivations");
        assert_eq!(a.unresolved, b.unresolved, "unresolved calls");
        assert_eq!(a.unread, b.unread, "files read in part");
        assert!(a.index == b.index, "indexes by id and file");
        assert!(a.indexes_are_fresh());
    }

    /// A small deterministic generator (xorshift).
    struct Dice(u64);

    impl Dice {
        fn roll(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const KINDS: [&str; 4] = ["class", "method", "function", "module"];
    const ROLES: [&str; 4] = ["external", "test", "entry", "route"];
    const TYPES: [&str; 5] = ["CALLS", "DECLARES", "EXTENDS", "REFERENCES", "OVERRIDES"];

    /// A part of `nodes` symbols whose ids start with `tag`: kinds, files,
    /// roles and edge types each met in an order of the dice's choosing,
    /// edges of every derivation, unbound calls and files read in part.
    fn part(tag: u8, nodes: usize, dice: &mut Dice) -> Graph {
        let mut b = GraphBuilder::new("poly");
        let files: Vec<String> = (0..4).map(|f| format!("{tag}/f{f}.src")).collect();
        let mut taken = std::collections::HashSet::new();
        for n in 0..nodes {
            // A sixth of the ids from a pool every part draws from (a
            // namespace two languages name, a symbol one only references).
            let mut id = [0u8; 20];
            id[0] = tag;
            id[1..9].copy_from_slice(&((n as u64) * 7919 % 100_003).to_be_bytes());
            if dice.roll(6) == 0 {
                let pooled = dice.roll(12) as u8;
                if taken.insert(pooled) {
                    id = [0u8; 20];
                    id[19] = pooled;
                }
            }
            let roles: Vec<&str> = (0..dice.roll(3)).map(|_| ROLES[dice.roll(4)]).collect();
            let (name, fqn) = (format!("n{n}"), format!("p{tag}.n{n}"));
            let doc = if dice.roll(3) == 0 { String::new() } else { format!("doc of {n}") };
            let file = if dice.roll(8) == 0 { "" } else { files[dice.roll(4)].as_str() };
            b.add_node(NodeSpec {
                id,
                kind: KINDS[dice.roll(4)],
                name: &name,
                fqn: &fqn,
                file,
                line: n as u32,
                roles: &roles,
                doc: &doc,
                signature: "",
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
        for _ in 0..nodes * 3 {
            let how = [Derivation::Exact, Derivation::Inferred, Derivation::Ambiguous][dice.roll(3)];
            let (s, d) = (dice.roll(nodes) as NodeIx, dice.roll(nodes) as NodeIx);
            b.add_edge_as(s, TYPES[dice.roll(5)], d, how).unwrap_or_else(|e| panic!("{e}"));
        }
        b.add_unresolved(["get", "put", &format!("only{tag}")][dice.roll(3)], 1 + dice.roll(5) as u32);
        b.add_unread(&files[dice.roll(4)], 1 + dice.roll(50) as u32);
        b.build().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parts_merged_from_their_arrays_make_the_builders_graph() {
        let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
        let mut shared = 0;
        for round in 0..60 {
            let count = 2 + dice.roll(4);
            let parts: Vec<Graph> = (0..count).map(|k| part(k as u8 + 1, 1 + dice.roll(60), &mut dice)).collect();
            let parts: Vec<&Graph> = parts.iter().collect();
            let laid = merged("poly", &parts).unwrap_or_else(|| panic!("round {round}: within the limits"));
            let built = crate::load::merged_by_builder("poly", &parts).unwrap_or_else(|e| panic!("{e}"));
            shared += parts.iter().map(|g| g.node_count()).sum::<usize>() - built.node_count();
            assert_same(&laid, &built);
        }
        assert!(shared > 100, "few ids in two parts: {shared}");
    }

    #[test]
    fn a_definition_in_a_later_part_replaces_a_placeholder_in_its_place() {
        let mut dice = Dice(7);
        let a = part(1, 30, &mut dice);
        let mut b = GraphBuilder::new("poly");
        let (named, lone) = (a.ids[3], [9u8; 20]);
        let spec = |id, file, roles| NodeSpec { id, kind: "class", name: "X", file, roles, ..NodeSpec::default() };
        b.add_node(spec(lone, "b.src", &[])).unwrap_or_else(|e| panic!("{e}"));
        b.add_node(spec(named, "b.src", &[])).unwrap_or_else(|e| panic!("{e}"));
        b.add_edge_as(0, "CALLS", 1, Derivation::Exact).unwrap_or_else(|e| panic!("{e}"));
        let b = b.build().unwrap_or_else(|e| panic!("{e}"));
        let m = merged("poly", &[&a, &b]).unwrap_or_else(|| panic!("within the limits"));
        assert_same(&m, &crate::load::merged_by_builder("poly", &[&a, &b]).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(m.node_count(), 31);
        let x = m.lookup_raw(&named).unwrap_or_else(|| panic!("kept"));
        assert_eq!(x, 3, "in the first part's place");
        let placeholder = a.node(3).has_role(EXTERNAL) || a.node(3).file().is_empty();
        assert_eq!(m.node(x).file() == "b.src", placeholder, "a placeholder replaced, a definition kept");
        let lone = m.lookup_raw(&lone).unwrap_or_else(|| panic!("added"));
        let calls = m.parse_edge_key("CALLS").ok().flatten().unwrap_or_default();
        assert!(m.walk(lone, crate::Direction::Out, &calls).contains(&x), "the later part's edge kept");
    }
}
