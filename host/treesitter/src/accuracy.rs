//! How the built-in indexer's graph of some code compares with a SCIP
//! indexer's graph of the same code: per edge type, the edges both find,
//! and the ids both give. Edges are compared by where their ends are
//! defined (file and line), so a symbol either indexer spells differently
//! still counts; ids are compared as they are.

use std::collections::BTreeSet;

use signpost_graph::{Direction, EXTERNAL, Graph, NodeRef};

/// One edge type's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdgeFigures {
    /// The edge type.
    pub edge: String,
    /// Edges the built-in indexer found.
    pub ours: usize,
    /// Edges the SCIP indexer found.
    pub theirs: usize,
    /// Edges both found.
    pub both: usize,
    /// A few edges only one of them found (`ours:` or `theirs:` first).
    pub examples: Vec<String>,
}

impl EdgeFigures {
    /// Of ours, how many the SCIP indexer found too (1 when we found none).
    pub fn precision(&self) -> f64 {
        if self.ours == 0 { 1.0 } else { self.both as f64 / self.ours as f64 }
    }

    /// Of theirs, how many we found too (1 when they found none).
    pub fn recall(&self) -> f64 {
        if self.theirs == 0 { 1.0 } else { self.both as f64 / self.theirs as f64 }
    }
}

/// Whether node `n` is defined in a file under `under` (a path prefix,
/// `/`-separated; empty: anywhere).
fn placed(n: &NodeRef<'_>, under: &str) -> bool {
    !n.file().is_empty() && !n.has_role(EXTERNAL) && n.line() > 0 && n.file().starts_with(under)
}

/// Edges as `(file:line, TYPE, file:line)` between nodes defined under
/// `under`.
fn located_edges(g: &Graph, under: &str) -> BTreeSet<(String, String, String)> {
    let at = |ix: u32| {
        let n = g.node(ix);
        placed(&n, under).then(|| format!("{}:{}", n.file(), n.line()))
    };
    let mut out = BTreeSet::new();
    for n in g.iter() {
        for t in g.edge_types() {
            let Ok(Some(key)) = g.parse_edge_key(t) else { continue };
            for m in g.walk(n.ix(), Direction::Out, &key) {
                if let (Some(a), Some(b)) = (at(n.ix()), at(m)) {
                    out.insert((a, t.to_owned(), b));
                }
            }
        }
    }
    out
}

/// Per edge type (sorted), how `ours` compares with `truth` on the files
/// under `under`; up to `examples` differences each.
///
/// Only files the SCIP indexer read are compared: a module its build left
/// out (`#[cfg(feature = "rayon")] mod rayon;`) has no edges there to
/// judge ours by.
pub fn edges(truth: &Graph, ours: &Graph, under: &str, examples: usize) -> Vec<EdgeFigures> {
    let read: BTreeSet<&str> = truth.iter().filter(|n| placed(n, under)).map(|n| n.file()).collect();
    let (truth, mut ours) = (located_edges(truth, under), located_edges(ours, under));
    let file = |at: &str| at.rsplit_once(':').map_or("", |(f, _)| f).to_owned();
    ours.retain(|(a, _, b)| read.contains(file(a).as_str()) && read.contains(file(b).as_str()));
    let types: BTreeSet<&String> = truth.iter().chain(&ours).map(|e| &e.1).collect();
    types
        .into_iter()
        .map(|t| {
            let of = |s: &BTreeSet<(String, String, String)>| -> BTreeSet<(String, String)> {
                s.iter().filter(|e| &e.1 == t).map(|e| (e.0.clone(), e.2.clone())).collect()
            };
            let (a, b) = (of(&ours), of(&truth));
            let only = |x: &BTreeSet<(String, String)>, y: &BTreeSet<(String, String)>, who: &str| {
                x.difference(y).take(examples).map(|(f, t)| format!("{who}: {f} -> {t}")).collect::<Vec<_>>()
            };
            let mut shown = only(&a, &b, "ours");
            shown.extend(only(&b, &a, "theirs"));
            EdgeFigures {
                edge: t.clone(),
                ours: a.len(),
                theirs: b.len(),
                both: a.intersection(&b).count(),
                examples: shown,
            }
        })
        .collect()
}

/// Of the definitions `truth` places in the files under `under`, how many
/// `ours` gives the same id, and the qualified names and lines of those it
/// does not.
pub fn ids(truth: &Graph, ours: &Graph, under: &str) -> (usize, usize, Vec<String>) {
    let placed: Vec<_> = truth.iter().filter(|n| placed(n, under)).collect();
    let differ: Vec<String> =
        placed.iter().filter(|n| ours.lookup(&n.id()).is_none()).map(|n| format!("{}:{}", n.fqn(), n.line())).collect();
    (placed.len() - differ.len(), placed.len(), differ)
}
