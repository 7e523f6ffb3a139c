//! Ranked fuzzy lookup over names, qualified names and docs.
//!
//! Each symbol scores the best of several signals, from an exact name (1.0)
//! down to a loose subsequence of its name; multi-word queries score the
//! share of words found. Scores are comparable across queries: below 0.5 a
//! match is a guess.

use crate::graph::{Graph, NodeIx};

/// Matches scoring below this are not returned.
pub const MIN_SCORE: f64 = 0.2;

/// All matches for `query`, best first: (node, score in 0..=1).
pub fn rank(graph: &Graph, query: &str) -> Vec<(NodeIx, f64)> {
    let q = query.trim().to_lowercase();
    let words: Vec<&str> = q.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
    let mut hits: Vec<(NodeIx, f64)> = graph
        .nodes()
        .iter()
        .enumerate()
        .filter_map(|(ix, n)| {
            let name = n.name.to_lowercase();
            let fqn = n.fqn.to_lowercase();
            let score = if words.len() > 1 {
                let doc = n.doc.to_lowercase();
                let per_word: f64 = words
                    .iter()
                    .map(|w| {
                        if name.contains(w) {
                            1.0
                        } else if fqn.contains(w) {
                            0.8
                        } else if doc.contains(w) {
                            0.5
                        } else {
                            0.0
                        }
                    })
                    .sum();
                0.9 * per_word / words.len() as f64
            } else {
                single(&q, &name, &fqn, &n.doc.to_lowercase())
            };
            (score >= MIN_SCORE).then_some((ix as NodeIx, (score * 1000.0).round() / 1000.0))
        })
        .collect();
    hits.sort_by(|a, b| {
        b.1.total_cmp(&a.1).then_with(|| {
            let (x, y) = (graph.node(a.0), graph.node(b.0));
            (x.fqn.len(), &x.fqn).cmp(&(y.fqn.len(), &y.fqn))
        })
    });
    hits
}

fn single(q: &str, name: &str, fqn: &str, doc: &str) -> f64 {
    if q.is_empty() {
        return 0.0;
    }
    if name == q || fqn == q {
        return 1.0;
    }
    if fqn.ends_with(&format!(".{q}")) {
        return 0.95;
    }
    let coverage = q.len() as f64 / name.len().max(1) as f64;
    if name.starts_with(q) {
        return 0.7 + 0.2 * coverage;
    }
    if name.contains(q) {
        return 0.6 + 0.2 * coverage;
    }
    if fqn.contains(q) {
        return 0.55;
    }
    if doc.split(|c: char| !c.is_alphanumeric()).any(|w| w == q) {
        return 0.45;
    }
    if q.chars().count() < 3 {
        return 0.0;
    }
    subsequence(q, name).map_or(0.0, |spread| 0.25 + 0.2 * coverage.min(1.0) / spread)
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
        let top = |q: &str| rank(&g, q).first().map(|(ix, s)| (g.node(*ix).name.clone(), *s));
        assert_eq!(top("OrderService"), Some(("OrderService".into(), 1.0)));
        let (name, score) = top("ordcontr").unwrap_or_default();
        assert_eq!(name, "OrderController");
        assert!(score < 0.5, "a subsequence is a weak match: {score}");
        let (_, score) = top("payment refund").unwrap_or_default();
        assert!(score > 0.5);
        assert!(rank(&g, "zzzzqqq").is_empty());
    }
}
