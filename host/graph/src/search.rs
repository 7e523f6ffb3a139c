//! Ranked fuzzy lookup over names, qualified names and docs, on the
//! graph's indexes (the tiers are in `docs/search.md`).
//!
//! Each symbol scores the best of several signals, from an exact name (1.0)
//! down to a loose subsequence of its name; multi-word queries score the
//! share of words found. Scores are comparable across queries: below 0.5 a
//! match is a guess. Only symbols an index can produce are scored: names
//! containing the query (one `memmem` pass over the lower-cased names),
//! qualified names whose container contains it, docs with the word, and,
//! for the loose tier, names that start with the query's first two
//! characters.

use crate::index::{ends_with_segment, lower, tail_start};
use crate::{Graph, NodeIx};

/// Matches scoring below this are not returned.
pub const MIN_SCORE: f64 = 0.2;

/// All matches for `query`, best first: (node, score in 0..=1).
pub fn rank(graph: &Graph, query: &str) -> Vec<(NodeIx, f64)> {
    top(graph, query, usize::MAX).1
}

/// How many symbols match `query`, and the best `keep` of them, best
/// first. Only those are sorted: a query that matches half a million
/// symbols costs a selection, not a sort.
pub fn top(graph: &Graph, query: &str, keep: usize) -> (usize, Vec<(NodeIx, f64)>) {
    let q = lower(query.trim()).replace('\0', "");
    let terms: Vec<&str> = q.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
    let mut hits = match terms[..] {
        [] => Vec::new(),
        // A qualified name in its language's spelling (`shop::base`,
        // `vendor\client`) is also read as stored.
        [one] => match &crate::query::spellings(one)[..] {
            [only] => single(graph, only),
            several => best(several.iter().map(|s| single(graph, s)).collect()),
        },
        _ => several(graph, &terms),
    };
    hits.retain(|h| h.1 >= MIN_SCORE);
    for h in &mut hits {
        h.1 = (h.1 * 1000.0).round() / 1000.0;
    }
    // Equal scores: shorter qualified names first (precomputed ranks).
    let rank = &graph.index().fqn_rank;
    let order = |a: &(NodeIx, f64), b: &(NodeIx, f64)| {
        b.1.total_cmp(&a.1).then_with(|| rank[a.0 as usize].cmp(&rank[b.0 as usize]))
    };
    let total = hits.len();
    if keep < total {
        hits.select_nth_unstable_by(keep, order);
        hits.truncate(keep);
    }
    hits.sort_by(order);
    (total, hits)
}

/// The best score per node, from lists each sorted by node (a list that
/// is not gets sorted): a k-way merge, linear in the hits.
fn best(mut lists: Vec<Vec<(NodeIx, f64)>>) -> Vec<(NodeIx, f64)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    for l in &mut lists {
        if !l.is_sorted_by_key(|h| h.0) {
            l.sort_by_key(|h| h.0);
        }
    }
    let mut heap: BinaryHeap<Reverse<(NodeIx, usize, usize)>> =
        lists.iter().enumerate().filter(|(_, l)| !l.is_empty()).map(|(i, l)| Reverse((l[0].0, i, 0))).collect();
    let mut out: Vec<(NodeIx, f64)> = Vec::with_capacity(lists.iter().map(Vec::len).max().unwrap_or(0));
    while let Some(Reverse((node, list, at))) = heap.pop() {
        let score = lists[list][at].1;
        match out.last_mut() {
            Some(last) if last.0 == node => last.1 = last.1.max(score),
            _ => out.push((node, score)),
        }
        if let Some(next) = lists[list].get(at + 1) {
            heap.push(Reverse((next.0, list, at + 1)));
        }
    }
    out
}

fn single(graph: &Graph, q: &str) -> Vec<(NodeIx, f64)> {
    let ix = graph.index();
    let with = |nodes: &[NodeIx], score: f64| nodes.iter().map(|&n| (n, score)).collect::<Vec<_>>();
    let mut lists = vec![with(ix.name_is(q), 1.0), with(ix.fqn_is(graph, q), 1.0)];
    let tail = &q[tail_start(q)..];
    lists.push(
        ix.tail_is(graph, tail)
            .iter()
            .filter(|&&n| ends_with_segment(&lower(graph.node(n).fqn()), q))
            .map(|&n| (n, 0.95))
            .collect(),
    );
    lists.push(
        ix.name_contains(q)
            .into_iter()
            .map(|n| {
                let name = ix.lower_name(n);
                let coverage = q.len() as f64 / name.len().max(1) as f64;
                (n, if name.starts_with(q) { 0.7 } else { 0.6 } + 0.2 * coverage)
            })
            .collect(),
    );
    lists.push(with(&ix.fqn_contains(graph, q), 0.55));
    lists.push(with(ix.doc_has_word(q), 0.45));
    if q.chars().count() >= 3 {
        // The loose tier reads only names that start like the query (its
        // first two characters): abbreviations keep their head (`ordcontr`
        // for OrderController), and a common first letter would otherwise
        // mean a tenth of the graph.
        let head: String = q.chars().take(2).collect();
        lists.push(
            ix.name_starts_with(&head)
                .iter()
                .filter_map(|&n| {
                    let name = ix.lower_name(n);
                    let spread = subsequence(q, name)?;
                    let coverage = q.len() as f64 / name.len().max(1) as f64;
                    Some((n, 0.25 + 0.2 * coverage.min(1.0) / spread))
                })
                .collect(),
        );
    }
    best(lists)
}

/// Several words: each scores 1 in the name, 0.8 in the qualified name's
/// container, 0.5 as a doc word; the symbol scores 0.9 × the mean.
fn several(graph: &Graph, terms: &[&str]) -> Vec<(NodeIx, f64)> {
    let ix = graph.index();
    let per_term: Vec<[Vec<NodeIx>; 3]> =
        terms.iter().map(|t| [ix.name_contains(t), ix.container_contains(t), ix.doc_has_word(t).to_vec()]).collect();
    let mut candidates: Vec<NodeIx> = per_term.iter().flat_map(|sets| sets.iter().flatten().copied()).collect();
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .into_iter()
        .map(|n| {
            let sum: f64 = per_term
                .iter()
                .map(|[name, container, doc]| {
                    if name.binary_search(&n).is_ok() {
                        1.0
                    } else if container.binary_search(&n).is_ok() {
                        0.8
                    } else if doc.binary_search(&n).is_ok() {
                        0.5
                    } else {
                        0.0
                    }
                })
                .sum();
            (n, 0.9 * sum / terms.len() as f64)
        })
        .collect()
}

/// Whether `q`'s characters appear in order in `s`; how spread out (>= 1).
fn subsequence(q: &str, s: &str) -> Option<f64> {
    let mut chars = s.char_indices();
    let (mut first, mut last) = (None, 0);
    for qc in q.chars() {
        let (i, _) = chars.by_ref().find(|(_, c)| *c == qc)?;
        first.get_or_insert(i);
        last = i;
    }
    let span = (last - first.unwrap_or(0) + 1) as f64;
    Some((span / q.len() as f64).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_beats_prefix_beats_fuzzy() {
        let g = Graph::sample();
        let top = |q: &str| rank(&g, q).first().map(|(ix, s)| (g.node(*ix).name().to_owned(), *s));
        assert_eq!(top("OrderService"), Some(("OrderService".into(), 1.0)));
        let (name, score) = top("ordcontr").unwrap_or_default();
        assert_eq!(name, "OrderController");
        assert!(score < 0.5, "a subsequence is a weak match: {score}");
        let (_, score) = top("payment refund").unwrap_or_default();
        assert!(score > 0.5);
        assert!(rank(&g, "zzzzqqq").is_empty());
        // A query across a qualified name's segments.
        let spanning = rank(&g, "OrderService.place");
        assert!(spanning.iter().any(|(ix, _)| g.node(*ix).fqn().ends_with("OrderService.placeOrder")), "{spanning:?}");
        assert!(rank(&g, " \0 ").is_empty());
        // The same, in Ruby's, PHP's and C++'s spellings.
        for q in ["OrderService::placeOrder", "OrderService\\placeOrder", "::OrderService::placeOrder"] {
            let (name, score) = top(q).unwrap_or_default();
            assert_eq!((name.as_str(), score), ("placeOrder", 0.95), "{q}");
        }
    }

    #[test]
    fn the_index_finds_what_a_scan_would() {
        let g = Graph::sample();
        for q in ["order", "repo", "pay", "Controller", "status"] {
            let lq = q.to_lowercase();
            let scan: Vec<NodeIx> =
                g.iter().filter(|n| n.name().to_lowercase().contains(&lq)).map(|n| n.ix()).collect();
            let found = rank(&g, q);
            for n in scan {
                assert!(found.iter().any(|h| h.0 == n), "{q}: {} missing", g.node(n).name());
            }
        }
    }
}
