//! A graph patched per file: [`Graph::spliced`] replaces what some files
//! gave a graph (their definitions and the edges out of them) with what
//! they give now, a small *delta* graph imported from those files alone
//! ([`crate::scip::delta`]), without rebuilding the rest.
//!
//! The result is the graph a full import would make, up to the order of
//! node indexes (unchanged nodes keep theirs, relative to each other; new
//! ones come last): every id, record, edge and derivation is the same. The
//! work is linear copies of the arrays, no hashing of symbols, no sort of
//! the whole graph's edges.
//!
//! Rules, for the set `files` and the delta:
//! - a node of the base whose file is in `files` is *replaced*: by the
//!   delta's node of the same id (its record, same index), else removed;
//! - a delta node whose id the base has outside `files` is that node (a
//!   *stub*: the delta reaches it, it stays as it is), unless the base has
//!   only a placeholder and the delta a definition, which replaces it;
//! - edges out of replaced nodes are dropped (but `DECLARES` of a child
//!   defined elsewhere), and so are `DECLARES` into them (the delta's
//!   parents declare them again); every delta edge is added;
//! - a placeholder (no file, or `external`) that is left with no edge out
//!   and no edge in but `DECLARES` goes, as an import makes none such;
//! - in a graph merged from parts, a removed node that another part has as
//!   a placeholder takes that record (`fallback`); one another part defines
//!   too is refused (its edges are two parts', and a merged graph does not
//!   say whose): such parts are merged again.

mod edges;

use std::collections::HashSet;

use crate::builder::EXTERNAL;
use crate::index::Indexes;
use crate::{Adjacency, Graph, GraphError, Node, NodeIx, RawId, Rec, Span, TypeIx};

/// What replaces a set of files' part of a graph.
pub struct Delta {
    /// The files whose part is replaced (as the graph spells them).
    pub files: HashSet<String>,
    /// What they give now, with stubs of the nodes outside them that they
    /// reach.
    pub graph: Graph,
    /// Unbound call sites those files had before, by name (taken off the
    /// base's counts; the delta's own are added).
    pub unresolved_before: Vec<(String, u32)>,
}

/// Where a node of the spliced graph takes its record from.
enum From {
    Base(NodeIx),
    Delta(NodeIx),
    Own(Box<Node>),
}

const GONE: NodeIx = NodeIx::MAX;

type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
const DECLARES: &str = "DECLARES";

fn placeholder(g: &Graph, n: NodeIx) -> bool {
    let node = g.node(n);
    node.rec.file == 0 || node.has_role(EXTERNAL)
}

/// What a splice has decided of each node, in pre-splice indexes (the
/// base's, then the delta's added ones): where each base node's record
/// comes from (none: gone), which the files had, and the delta's edges by
/// source.
struct Fate<'a> {
    base: &'a Graph,
    d: &'a Graph,
    /// The base's nodes.
    n: usize,
    from: Vec<Option<From>>,
    /// The base's nodes the files had, ascending, and each node's mark.
    replaced_nodes: Vec<NodeIx>,
    replaced: Vec<bool>,
    declares: Option<TypeIx>,
    /// The delta's out-edges by source: (type, target, rank).
    extra: Map<NodeIx, Vec<(TypeIx, NodeIx, u8)>>,
}

impl Fate<'_> {
    fn alive(&self, x: NodeIx) -> bool {
        (x as usize) >= self.n || self.from[x as usize].is_some()
    }

    /// Whether the base's edge `s -t-> m` is kept: unless it leaves a
    /// replaced node (but to a child defined elsewhere) or declares one.
    fn keep_base(&self, s: NodeIx, t: TypeIx, m: NodeIx) -> bool {
        let decl = Some(t) == self.declares;
        let replaced = |b: NodeIx| self.replaced[b as usize];
        if replaced(s) { decl && !replaced(m) && self.base.recs[m as usize].file != 0 } else { !(decl && replaced(m)) }
    }

    /// Node `u`'s out-edges now: the base's it keeps and the delta's, to
    /// nodes alive, sorted.
    fn edges_of(&self, u: usize, out: &mut Vec<(TypeIx, NodeIx, u8)>) {
        let base = self.base;
        out.clear();
        if u < self.n && self.from[u].is_some() {
            let start = base.out.offsets[u] as usize;
            for (k, (t, m)) in base.out.edges(u as NodeIx).enumerate() {
                if self.alive(m) && self.keep_base(u as NodeIx, t, m) {
                    out.push((t, m, base.derivation_at(start + k).rank()));
                }
            }
        }
        let more = self.extra.get(&(u as NodeIx)).map_or(&[][..], Vec::as_slice);
        if self.alive(u as NodeIx) {
            out.extend(more.iter().filter(|e| self.alive(e.1)));
        }
        if !more.is_empty() {
            out.sort_unstable();
            out.dedup_by_key(|e| (e.0, e.1));
        }
    }

    fn is_placeholder(&self, u: usize) -> bool {
        match &self.from[u] {
            Some(From::Base(b)) => placeholder(self.base, *b),
            Some(From::Delta(x)) => placeholder(self.d, *x),
            Some(From::Own(node)) => node.file.is_empty() || node.roles.iter().any(|r| r == EXTERNAL),
            None => false,
        }
    }

    /// Placeholders with no edge out and none in but DECLARES go, and
    /// their parents with them when that was their last child. Only the
    /// nodes next to what the files had can lose their last edge. Returns
    /// those that went.
    fn drop_placeholders(&mut self) -> Vec<NodeIx> {
        let (base, declares) = (self.base, self.declares);
        let mut delta_in: Map<NodeIx, Vec<NodeIx>> = Map::default();
        for (&u, list) in &self.extra {
            for &(t, m, _) in list {
                // DECLARES parents, or a mark (`GONE`) for any other edge.
                delta_in.entry(m).or_default().push(if Some(t) == declares { u } else { GONE });
            }
        }
        let mut work: Vec<NodeIx> = Vec::new();
        for &b in &self.replaced_nodes {
            work.extend(base.out.edges(b).map(|(_, m)| m));
            work.extend(base.inn.edges(b).filter(|&(t, _)| Some(t) == declares).map(|(_, p)| p));
            if matches!(self.from[b as usize], Some(From::Own(_))) {
                work.push(b);
            }
        }
        let mut buf = Vec::new();
        let mut dropped: Vec<NodeIx> = Vec::new();
        while let Some(u) = work.pop() {
            let u = u as usize;
            if u >= self.n || self.from[u].is_none() || !self.is_placeholder(u) {
                continue;
            }
            self.edges_of(u, &mut buf);
            let parents = delta_in.get(&(u as NodeIx)).map_or(&[][..], Vec::as_slice);
            let reached = parents.contains(&GONE)
                || base.inn.edges(u as NodeIx).any(|(t, s)| {
                    Some(t) != declares && self.from[s as usize].is_some() && self.keep_base(s, t, u as NodeIx)
                });
            if !buf.is_empty() || reached {
                continue;
            }
            self.from[u] = None;
            dropped.push(u as NodeIx);
            work.extend(base.inn.edges(u as NodeIx).filter(|&(t, _)| Some(t) == declares).map(|(_, p)| p));
            work.extend(parents.iter().copied());
        }
        dropped
    }
}

impl Graph {
    /// This graph with `delta` spliced in (see the module docs). `fallback`
    /// gives, for a graph merged from parts, the record another part has of
    /// a node of the files (none for a graph of one part); an error when
    /// another part defines one too.
    pub fn spliced(&self, delta: &Delta, fallback: &dyn Fn(&RawId) -> Option<Node>) -> Result<Graph, GraphError> {
        let started = std::time::Instant::now();
        let phase = |what: &str| tracing::debug!(phase = what, us = started.elapsed().as_micros() as u64, "splice");
        let base = self;
        let d = &delta.graph;
        let n = base.node_count();
        // The nodes the files had, from the by-file index: no pass over
        // every record.
        let mut replaced_nodes: Vec<NodeIx> = (base.files.iter().enumerate())
            .filter(|(_, f)| !f.is_empty() && delta.files.contains(*f))
            .flat_map(|(f, _)| base.index.by_file.get(f).iter().copied())
            .collect();
        replaced_nodes.sort_unstable();
        let mut replaced = vec![false; n];
        for &b in &replaced_nodes {
            replaced[b as usize] = true;
        }

        // What becomes of each base node, and where each delta node goes.
        let mut from: Vec<Option<From>> = (0..n).map(|b| (!replaced[b]).then_some(From::Base(b as NodeIx))).collect();
        let mut to_base: Vec<NodeIx> = vec![GONE; d.node_count()];
        let mut added: Vec<NodeIx> = Vec::new();
        for x in 0..d.node_count() as NodeIx {
            match base.lookup_raw(&d.ids[x as usize]) {
                Some(b) => {
                    to_base[x as usize] = b;
                    if replaced[b as usize] || (placeholder(base, b) && !placeholder(d, x)) {
                        from[b as usize] = Some(From::Delta(x));
                    }
                }
                None => {
                    to_base[x as usize] = (n + added.len()) as NodeIx;
                    added.push(x);
                }
            }
        }
        let total = n + added.len();
        let types = merged_names(&base.types, &d.types);
        let declares = types.names.iter().position(|t| t == DECLARES).map(|t| t as TypeIx);
        let d_type: Vec<TypeIx> = d.types.iter().map(|t| types.get(t) as TypeIx).collect();

        // A node of the files that another part of a merged graph has too:
        // that part's placeholder stands in for it when it is removed; a
        // definition there means its edges are two parts' (which is whose,
        // a merged graph does not say): the parts are merged again instead.
        for &b in &replaced_nodes {
            let Some(node) = fallback(&base.ids[b as usize]) else { continue };
            if !node.file.is_empty() && !node.roles.iter().any(|r| r == EXTERNAL) {
                return Err(GraphError::Invalid {
                    at: "splice".into(),
                    problem: format!("`{}` is defined in another part too: merge the parts again", node.fqn),
                });
            }
            if from[b as usize].is_none() {
                from[b as usize] = Some(From::Own(Box::new(node)));
            }
        }

        // The delta's out-edges, in pre-splice indexes, by source: the few
        // nodes whose edges are not the base's alone.
        let mut extra: Map<NodeIx, Vec<(TypeIx, NodeIx, u8)>> = Map::default();
        for x in 0..d.node_count() as NodeIx {
            for (t, m, how) in d.out_edges(x) {
                let edge = (d_type[t as usize], to_base[m as usize], how.rank());
                extra.entry(to_base[x as usize]).or_default().push(edge);
            }
        }
        let mut fate = Fate { base, d, n, from, replaced_nodes, replaced, declares, extra };
        let dropped = fate.drop_placeholders();
        phase("placeholders");

        // New indexes: surviving base nodes in order, then added ones.
        let mut next: NodeIx = 0;
        let remap: Vec<NodeIx> = (0..total as NodeIx)
            .map(|u| {
                let alive = fate.alive(u);
                next += NodeIx::from(alive);
                if alive { next - 1 } else { GONE }
            })
            .collect();
        let count = next as usize;

        // Records: the base's as they are (its text, roles and files come
        // along, the others' appended), the fresh ones copied in.
        let g = fate.records(delta, &types, &added, &remap, count)?;
        phase("records");

        // The edges, and beside them the name indexes, which read only the
        // records.
        let mut fresh = vec![false; count];
        for u in 0..total {
            if remap[u] != GONE && !matches!(fate.from.get(u), Some(Some(From::Base(_)))) {
                fresh[remap[u] as usize] = true;
            }
        }
        let (edges, index) =
            rayon::join(|| fate.edges(&dropped, &remap, count), || base.index.patched(&g, &remap[..n], &fresh));
        let g =
            Graph { out: edges.out, inn: edges.inn, inferred: edges.inferred, ambiguous: edges.ambiguous, index, ..g };
        phase("edges and index");
        Ok(g)
    }
}

impl Fate<'_> {
    /// The spliced graph's records (no edges, no indexes yet): `remap`
    /// gives each pre-splice node's new index, `count` of them.
    fn records(
        &self,
        delta: &Delta,
        types: &Names,
        added: &[NodeIx],
        remap: &[NodeIx],
        count: usize,
    ) -> Result<Graph, GraphError> {
        let (base, d, n, from) = (self.base, self.d, self.n, &self.from);
        let kinds = merged_names(&base.kinds, &d.kinds);
        let roles = merged_names(&base.roles, &d.roles);
        let mut files = Files { names: base.files.clone(), seen: Map::default() };
        let mut g = Graph {
            name: base.name.clone(),
            text: base.text.clone(),
            ids: Vec::with_capacity(count),
            recs: Vec::with_capacity(count),
            kinds: Vec::new(),
            files: Vec::new(),
            roles: Vec::new(),
            types: types.names.clone(),
            role_lists: base.role_lists.clone(),
            out: Adjacency::default(),
            inn: Adjacency::default(),
            inferred: Vec::new(),
            ambiguous: Vec::new(),
            unresolved: unresolved(&base.unresolved, &delta.unresolved_before, &d.unresolved),
            unread: {
                let mut u: Vec<(String, u32)> =
                    base.unread.iter().filter(|(f, _)| !delta.files.contains(f)).cloned().collect();
                u.extend(d.unread.iter().cloned());
                u.sort_unstable();
                u.dedup_by(|a, b| a.0 == b.0);
                u
            },
            index: Indexes::default(),
        };
        let mut u = 0;
        while u < remap.len() {
            if remap[u] == GONE {
                u += 1;
                continue;
            }
            // A run of the base's records kept as they are: copied at once.
            let run = from[u.min(n)..].iter().take_while(|f| matches!(f, Some(From::Base(_)))).count();
            if u < n && run > 0 {
                g.ids.extend_from_slice(&base.ids[u..u + run]);
                g.recs.extend_from_slice(&base.recs[u..u + run]);
                u += run;
                continue;
            }
            let source = if u < n { from[u].as_ref() } else { None };
            let (id, rec) = match source {
                None => {
                    let x = added[u - n];
                    (d.ids[x as usize], g.copy_rec(d, x, &kinds, &roles, &mut files))
                }
                Some(From::Base(b)) => (base.ids[*b as usize], base.recs[*b as usize]),
                Some(From::Delta(x)) => (base.ids[u], g.copy_rec(d, *x, &kinds, &roles, &mut files)),
                Some(From::Own(node)) => (base.ids[u], g.own_rec(node, &kinds, &roles, &mut files)?),
            };
            g.ids.push(id);
            g.recs.push(rec);
            u += 1;
        }
        g.kinds = kinds.names;
        g.roles = roles.names;
        g.files = files.names;
        g.compact();
        Ok(g)
    }
}

impl Graph {
    /// Copies node `x` of `src`'s record into this graph's arrays.
    fn copy_rec(&mut self, src: &Graph, x: NodeIx, kinds: &Names, roles: &Names, files: &mut Files) -> Rec {
        let r = src.recs[x as usize];
        let node = src.node(x);
        let roles_start = self.role_lists.len() as u32;
        self.role_lists.extend(node.roles().map(|role| roles.get(role) as u16));
        Rec {
            name: self.push(node.name()),
            fqn: self.push(node.fqn()),
            doc: self.push(node.doc()),
            signature: self.push(node.signature()),
            file: files.ix(node.file()),
            line: r.line,
            roles_start,
            kind: kinds.get(node.kind()) as u16,
            roles_len: r.roles_len,
        }
    }

    /// An owned node's record, its kind and roles interned as they come.
    fn own_rec(&mut self, node: &Node, kinds: &Names, roles: &Names, files: &mut Files) -> Result<Rec, GraphError> {
        let known = |names: &Names, s: &str| {
            names.names.iter().position(|k| k == s).ok_or_else(|| GraphError::Invalid {
                at: "splice".into(),
                problem: format!("`{s}` is no kind or role of the graphs spliced"),
            })
        };
        let roles_start = self.role_lists.len() as u32;
        for role in &node.roles {
            self.role_lists.push(known(roles, role)? as u16);
        }
        Ok(Rec {
            name: self.push(&node.name),
            fqn: self.push(&node.fqn),
            doc: self.push(&node.doc),
            signature: self.push(&node.signature),
            file: files.ix(&node.file),
            line: node.line,
            roles_start,
            kind: known(kinds, &node.kind)? as u16,
            roles_len: node.roles.len() as u16,
        })
    }

    /// Copies the live records' strings and role lists into fresh arrays
    /// once what no record points at any more is most of them (patches
    /// append; this keeps the garbage bounded).
    fn compact(&mut self) {
        let strings = |r: &Rec| (r.name.len + r.fqn.len + r.doc.len + r.signature.len) as usize;
        let live: usize = self.recs.iter().map(strings).sum();
        let roles: usize = self.recs.iter().map(|r| r.roles_len as usize).sum();
        if self.text.len() <= 2 * live + 4096 && self.role_lists.len() <= 2 * roles + 4096 {
            return;
        }
        let (text, role_lists) = (std::mem::take(&mut self.text), std::mem::take(&mut self.role_lists));
        let mut one = String::with_capacity(live);
        let mut copy = |s: Span| {
            let start = one.len() as u32;
            one.push_str(text.get(s));
            Span { start: if s.len == 0 { 0 } else { start }, len: s.len }
        };
        self.role_lists.reserve(roles);
        for i in 0..self.recs.len() {
            let r = self.recs[i];
            let roles_start = self.role_lists.len() as u32;
            self.role_lists.extend_from_slice(&role_lists[r.roles_start as usize..][..r.roles_len as usize]);
            self.recs[i] = Rec {
                name: copy(r.name),
                fqn: copy(r.fqn),
                doc: copy(r.doc),
                signature: copy(r.signature),
                roles_start,
                ..r
            };
        }
        self.text = one.into();
    }

    fn push(&mut self, s: &str) -> Span {
        self.text.push(s)
    }
}

/// Interned names: the base's, then the delta's new ones.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    ix: std::collections::HashMap<String, u32, foldhash::fast::RandomState>,
}

impl Names {
    fn ix(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ix.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_owned());
        self.ix.insert(s.to_owned(), i);
        i
    }

    fn get(&self, s: &str) -> u32 {
        self.ix.get(s).copied().unwrap_or(0)
    }
}

/// A graph's file names, the base's then new ones: the few a splice looks
/// up are found by a scan (no table of every file made per splice).
struct Files {
    names: Vec<String>,
    seen: Map<String, u32>,
}

impl Files {
    fn ix(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.seen.get(s) {
            return i;
        }
        let i = self.names.iter().position(|f| f == s).unwrap_or_else(|| {
            self.names.push(s.to_owned());
            self.names.len() - 1
        }) as u32;
        self.seen.insert(s.to_owned(), i);
        i
    }
}

fn merged_names(base: &[String], more: &[String]) -> Names {
    let mut names = Names::default();
    for s in base.iter().chain(more) {
        names.ix(s);
    }
    names
}

/// The base's unbound call counts, less those the files had, plus the
/// delta's; names that reach none are dropped. Sorted by name.
fn unresolved(base: &[(String, u32)], before: &[(String, u32)], now: &[(String, u32)]) -> Vec<(String, u32)> {
    let mut counts: std::collections::BTreeMap<&str, i64> = base.iter().map(|(k, c)| (k.as_str(), *c as i64)).collect();
    for (k, c) in before {
        *counts.entry(k).or_default() -= *c as i64;
    }
    for (k, c) in now {
        *counts.entry(k).or_default() += *c as i64;
    }
    counts.into_iter().filter(|(_, c)| *c > 0).map(|(k, c)| (k.to_owned(), c.min(u32::MAX as i64) as u32)).collect()
}
