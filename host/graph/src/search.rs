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
    let total = hits.len();
    // Best first: the score to the thousandth (as returned), then the
    // shorter qualified name (precomputed ranks, one per node), as one
    // integer, read once a hit.
    let rank = &graph.index().fqn_rank;
    let mut keyed: Vec<(u64, NodeIx)> = hits
        .into_iter()
        .map(|(n, score)| {
            let milli = (score * 1000.0).round().clamp(0.0, 1_000_000.0) as u64;
            (((1_000_000 - milli) << 32) | u64::from(rank[n as usize]), n)
        })
        .collect();
    if keep < total {
        keyed.select_nth_unstable(keep);
        keyed.truncate(keep);
    }
    keyed.sort_unstable();
    let scored = keyed.into_iter().map(|(key, n)| (n, (1_000_000 - (key >> 32)) as f64 / 1000.0)).collect();
    (total, scored)
}

/// The best score per node, from lists each sorted by node (a list that
/// is not gets sorted): the two shortest merged, again and again, each
/// merge linear in what it reads (a few lists, one or two long).
fn best(mut lists: Vec<Vec<(NodeIx, f64)>>) -> Vec<(NodeIx, f64)> {
    for l in &mut lists {
        if !l.is_sorted_by_key(|h| h.0) {
            l.sort_unstable_by_key(|h| h.0);
        }
    }
    lists.sort_by_key(|l| std::cmp::Reverse(l.len()));
    while lists.len() > 1 {
        let (a, b) = (lists.pop().unwrap_or_default(), lists.pop().unwrap_or_default());
        let merged = merged(&a, &b, f64::max);
        let at = lists.partition_point(|l| l.len() >= merged.len());
        lists.insert(at, merged);
    }
    let mut out = lists.pop().unwrap_or_default();
    // A list may name a node twice (its best score counts).
    out.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 = kept.1.max(next.1);
        }
        same
    });
    out
}

/// Two lists sorted by node as one, a node named in both with its two
/// scores made one by `both` (the best, or their sum).
fn merged(a: &[(NodeIx, f64)], b: &[(NodeIx, f64)], both: fn(f64, f64) -> f64) -> Vec<(NodeIx, f64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        match x.0.cmp(&y.0) {
            std::cmp::Ordering::Less => {
                out.push(x);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(y);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((x.0, both(x.1, y.1)));
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn single(graph: &Graph, q: &str) -> Vec<(NodeIx, f64)> {
    let ix = graph.index();
    let with = |nodes: &[NodeIx], score: f64| each(nodes, score).collect::<Vec<_>>();
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
        ix.names_containing(q)
            .flat_map(|(name, nodes)| {
                let coverage = q.len() as f64 / name.len().max(1) as f64;
                each(nodes, if name.starts_with(q) { 0.7 } else { 0.6 } + 0.2 * coverage)
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
            ix.names_starting(&head)
                .filter_map(|(name, nodes)| {
                    let spread = subsequence(q, name)?;
                    let coverage = q.len() as f64 / name.len().max(1) as f64;
                    Some(each(nodes, 0.25 + 0.2 * coverage.min(1.0) / spread))
                })
                .flatten()
                .collect(),
        );
    }
    best(lists)
}

/// A name's score given to each of its nodes (names are scored once each,
/// not once a node).
fn each(nodes: &[NodeIx], score: f64) -> impl Iterator<Item = (NodeIx, f64)> + '_ {
    nodes.iter().map(move |&n| (n, score))
}

/// Several words: each scores 1 in the name, 0.8 in the qualified name's
/// container, 0.5 as a doc word; the symbol scores 0.9 × the mean. Each
/// word's best scores, then their sums, by merges of lists sorted by node.
fn several(graph: &Graph, terms: &[&str]) -> Vec<(NodeIx, f64)> {
    let ix = graph.index();
    let mut sums: Vec<(NodeIx, f64)> = Vec::new();
    for t in terms {
        let found = [(&ix.name_contains(t)[..], 1.0), (&ix.container_contains(t)[..], 0.8), (ix.doc_has_word(t), 0.5)];
        let word = best(found.iter().map(|&(nodes, score)| each(nodes, score).collect()).collect());
        sums = merged(&sums, &word, |a, b| a + b);
    }
    let words = terms.len() as f64;
    sums.into_iter().map(|(n, sum)| (n, 0.9 * sum / words)).collect()
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

    /// The best score per node, as a map of every hit finds it: lists
    /// sorted or not, a node in several lists or twice in one.
    #[test]
    fn best_is_the_best_score_of_each_node() {
        let mut seed = 11u64;
        let mut next = |below: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % below
        };
        for lists in [0, 1, 2, 3, 7] {
            let lists: Vec<Vec<(NodeIx, f64)>> = (0..lists)
                .map(|l| {
                    let len = next(if l == 0 { 500 } else { 40 });
                    let mut list: Vec<(NodeIx, f64)> =
                        (0..len).map(|_| (next(300) as NodeIx, next(1000) as f64 / 1000.0)).collect();
                    if l % 2 == 0 {
                        list.sort_by_key(|h| h.0);
                    }
                    list
                })
                .collect();
            let mut plain = std::collections::BTreeMap::<NodeIx, f64>::new();
            for &(n, score) in lists.iter().flatten() {
                let kept = plain.entry(n).or_insert(score);
                *kept = kept.max(score);
            }
            assert_eq!(best(lists), plain.into_iter().collect::<Vec<_>>());
        }
    }

    /// The best `keep` are the first `keep` of every match, ranked by score
    /// (to the thousandth), then by the shorter qualified name.
    #[test]
    fn the_top_matches_are_the_first_of_the_ranking() {
        let g = Graph::sample();
        let shorter = &g.index().fqn_rank;
        for q in ["order", "service", "pay", "o", "ordcontr", "payment refund", "zzzz"] {
            let all = rank(&g, q);
            let ordered = |a: &(NodeIx, f64), b: &(NodeIx, f64)| {
                a.1 > b.1 || (a.1 == b.1 && shorter[a.0 as usize] < shorter[b.0 as usize])
            };
            assert!(all.windows(2).all(|w| ordered(&w[0], &w[1])), "{q}");
            assert!(all.iter().all(|h| h.1 >= MIN_SCORE && h.1 <= 1.0 && (h.1 * 1000.0).fract() == 0.0), "{q}");
            for keep in [0, 1, 3, all.len(), all.len() + 5] {
                let (total, top) = top(&g, q, keep);
                assert_eq!((total, &top[..]), (all.len(), &all[..keep.min(all.len())]), "{q} {keep}");
            }
        }
    }

    /// Several words score, for each symbol, 0.9 × the mean of each word's
    /// best place (name 1, container 0.8, doc 0.5), as a plain look at
    /// every symbol finds it.
    #[test]
    fn several_words_score_the_mean_of_their_best_places() {
        let g = Graph::sample();
        let ix = g.index();
        for terms in [&["payment", "refund"][..], &["order", "service", "status"], &["zzz", "order"], &["a", "e"]] {
            let plain: Vec<(NodeIx, f64)> = (0..g.node_count() as NodeIx)
                .filter_map(|n| {
                    let place = |t: &&str| {
                        if ix.name_contains(t).contains(&n) {
                            1.0
                        } else if ix.container_contains(t).contains(&n) {
                            0.8
                        } else if ix.doc_has_word(t).contains(&n) {
                            0.5
                        } else {
                            0.0
                        }
                    };
                    let sum: f64 = terms.iter().map(place).sum();
                    (sum > 0.0).then(|| (n, 0.9 * sum / terms.len() as f64))
                })
                .collect();
            assert!(!plain.is_empty() || terms[0] == "zzz", "{terms:?}");
            assert_eq!(several(&g, terms), plain, "{terms:?}");
        }
    }
}
