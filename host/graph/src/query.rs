//! Queries over a graph's name indexes: `find`'s filters and `resolve`'s
//! reading of an identifier. Ranking by words is [`crate::search`].

use crate::index::{ends_with_segment, lower, tail_start};
use crate::{EXTERNAL, Graph, NodeIx, is_id};

/// `find`'s filters, each a case-insensitive match; `None` or blank matches all.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// The kind, exactly (`class`).
    pub kind: Option<&'a str>,
    /// A role the symbol has, exactly.
    pub role: Option<&'a str>,
    /// A substring of the symbol's name.
    pub name: Option<&'a str>,
    /// A substring of the symbol's file path.
    pub path: Option<&'a str>,
}

/// The symbols matching every filter given: the most selective index gives the candidates (name substring,
/// then kind, role, file), the other filters check each; ascending ids of
/// the graph's order.
pub fn find(graph: &Graph, filter: &Filter<'_>) -> Vec<NodeIx> {
    let lc = |o: Option<&str>| o.map(str::trim).filter(|s| !s.is_empty()).map(lower);
    let (kind, role, name, path) = (lc(filter.kind), lc(filter.role), lc(filter.name), lc(filter.path));
    let ix = graph.index();
    let union = |lists: Vec<&[NodeIx]>| {
        let mut v: Vec<NodeIx> = lists.into_iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let matching = |table: &[String], want: &str| -> Vec<usize> {
        table.iter().enumerate().filter(|(_, t)| t.eq_ignore_ascii_case(want)).map(|(i, _)| i).collect()
    };
    let files_matching = |want: &str| -> Vec<usize> {
        graph.files.iter().enumerate().filter(|(_, f)| f.to_lowercase().contains(want)).map(|(i, _)| i).collect()
    };
    let candidates: Vec<NodeIx> = if let Some(n) = &name {
        ix.name_contains(n)
    } else if let Some(k) = &kind {
        union(matching(&graph.kinds, k).into_iter().map(|k| ix.by_kind.get(k)).collect())
    } else if let Some(r) = &role {
        union(matching(&graph.roles, r).into_iter().map(|r| ix.by_role.get(r)).collect())
    } else if let Some(p) = &path {
        union(files_matching(p).into_iter().map(|f| ix.by_file.get(f)).collect())
    } else {
        (0..graph.node_count() as NodeIx).collect()
    };
    let file_ok: Option<Vec<usize>> = path.as_deref().map(files_matching);
    candidates
        .into_iter()
        .filter(|&i| {
            let n = graph.node(i);
            kind.as_ref().is_none_or(|k| n.kind().eq_ignore_ascii_case(k))
                && role.as_ref().is_none_or(|r| n.has_role(r))
                && file_ok.as_ref().is_none_or(|f| f.binary_search(&(graph.recs[i as usize].file as usize)).is_ok())
        })
        .collect()
}

fn kind_rank(kind: &str) -> u8 {
    match kind {
        "class" | "interface" | "struct" | "trait" | "enum" => 0,
        "method" | "function" => 1,
        "route" | "topic" => 2,
        "module" => 3,
        _ => 4,
    }
}

/// The symbols an identifier names (an id, a qualified name, a qualified
/// suffix such as `OrderService.placeOrder`, or a simple name), of `kind`
/// when given: defined symbols before external ones, types before members,
/// shorter names first. At most `max` of them, and how many there were.
///
/// A qualified name is taken in the spellings of the languages' users
/// ([`spellings`]): `Shop::Base`, `Vendor\Package\Client` and
/// `geometry.Circle` find what is stored as `Shop.Base`,
/// `Vendor.Package.Client` and `geometry::Circle`.
pub fn resolve(graph: &Graph, identifier: &str, kind: Option<&str>, max: usize) -> (Vec<NodeIx>, usize) {
    let mut hits = Vec::new();
    for spelling in spellings(identifier.trim()) {
        hits = resolve_as(graph, &spelling, kind);
        if !hits.is_empty() {
            break;
        }
    }
    // Defined symbols before external placeholders, types before members.
    hits.sort_by_key(|ix| {
        let n = graph.node(*ix);
        (n.has_role(EXTERNAL), kind_rank(n.kind()), n.fqn().len(), n.fqn(), *ix)
    });
    let total = hits.len();
    hits.truncate(max);
    (hits, total)
}

/// An identifier as written, then in the other spellings of a qualified
/// name: with `::` or `\` between segments (Ruby, PHP, C++, Rust) read as
/// dots, a leading `::` or `\` (PHP's and C++'s global scope) dropped, and
/// dots read as `::` (Rust's stored form).
pub fn spellings(ident: &str) -> Vec<String> {
    let mut out = vec![ident.to_owned()];
    let mut push = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    let bare = ident.trim_start_matches("::").trim_start_matches('\\');
    push(bare.to_owned());
    if bare.contains("::") || bare.contains('\\') {
        push(bare.replace("::", ".").replace('\\', "."));
    }
    if bare.contains('.') && !bare.contains("::") {
        push(bare.replace('.', "::"));
    }
    out
}

/// [`resolve`] for one spelling, unsorted.
fn resolve_as(graph: &Graph, ident: &str, kind: Option<&str>) -> Vec<NodeIx> {
    let kind = kind.map(str::trim).filter(|k| !k.is_empty());
    let keep = |ix: &NodeIx| kind.is_none_or(|k| graph.node(*ix).kind().eq_ignore_ascii_case(k));
    let index = graph.index();
    let wanted = lower(ident);
    if is_id(&wanted)
        && let Some(ix) = graph.lookup(&wanted)
    {
        return vec![ix];
    }
    // Every symbol the identifier names: its qualified name, or a qualified
    // suffix of it (`OrderService.placeOrder`, `geometry::Circle`, a simple
    // name). A top-level symbol named exactly so does not hide the others
    // of that name: a namespace-less `Order` and `shop.Order` are both
    // candidates.
    let mut hits: Vec<NodeIx> = index.fqn_is(graph, &wanted).iter().copied().filter(keep).collect();
    let tail = &wanted[tail_start(&wanted)..];
    let suffixed = index
        .tail_is(graph, tail)
        .iter()
        .copied()
        .filter(|ix| ends_with_segment(&lower(graph.node(*ix).fqn()), &wanted))
        .filter(keep);
    // The index gives each suffixed symbol once: only the exact matches
    // before them can repeat one (a name with 10,000 namesakes costs a
    // pass, not a square).
    let exact = hits.len();
    for ix in suffixed {
        if !hits[..exact].contains(&ix) {
            hits.push(ix);
        }
    }
    if hits.is_empty() {
        hits = index.name_is(&wanted).iter().copied().filter(keep).collect();
    }
    // Case decides where some symbol is spelled as asked (`Monoid` the type,
    // not the methods `monoid`; `Order.Status`, not `Order.status`): the
    // symbols spelled otherwise are candidates only when none is.
    let spelled = |ix: &NodeIx| {
        let n = graph.node(*ix);
        n.name() == ident || n.fqn() == ident || ends_with_segment(n.fqn(), ident)
    };
    if hits.iter().any(spelled) {
        hits.retain(spelled);
    }
    hits
}

#[cfg(test)]
mod tests {
    use crate::Graph;

    fn names(g: &Graph, identifier: &str) -> Vec<(String, String)> {
        let (hits, _) = super::resolve(g, identifier, None, 10);
        hits.iter().map(|ix| (g.node(*ix).fqn().to_owned(), g.node(*ix).kind().to_owned())).collect()
    }

    #[test]
    fn a_package_named_like_its_class_in_another_case_does_not_hide_it() {
        // Java's `package order; class Order`: the package's qualified name
        // is `order`.
        let id = |n: u8| format!("{n:040x}");
        let doc = serde_json::json!({"nodes": [
            {"id": id(1), "kind": "module", "name": "order", "fqn": "order"},
            {"id": id(2), "kind": "class", "name": "Order", "fqn": "order.Order"},
            {"id": id(3), "kind": "method", "name": "total", "fqn": "order.Order.total"},
        ]});
        let g = Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let class = vec![("order.Order".to_owned(), "class".to_owned())];
        let package = vec![("order".to_owned(), "module".to_owned())];
        assert_eq!(names(&g, "Order"), class, "the class, spelled as asked");
        assert_eq!(names(&g, "order"), package, "the package, spelled as asked");
        assert_eq!(names(&g, "ORDER").len(), 2, "neither spelled as asked: both");
        assert_eq!(names(&g, "Order.total"), vec![("order.Order.total".to_owned(), "method".to_owned())]);
    }

    #[test]
    fn a_top_level_namesake_does_not_hide_the_others_and_case_decides() {
        // A namespace-less template class `Order`, the app's `shop.Order`,
        // the type `Monoid` and methods `monoid`.
        let id = |n: u8| format!("{n:040x}");
        let doc = serde_json::json!({"nodes": [
            {"id": id(1), "kind": "class", "name": "Order", "fqn": "Order"},
            {"id": id(2), "kind": "class", "name": "Order", "fqn": "shop.Order"},
            {"id": id(3), "kind": "interface", "name": "Monoid", "fqn": "cats.Monoid"},
            {"id": id(4), "kind": "method", "name": "monoid", "fqn": "cats.Instances.monoid"},
            {"id": id(5), "kind": "method", "name": "monoid", "fqn": "cats.Other.monoid"},
            {"id": id(6), "kind": "class", "name": "Monoid", "fqn": "cats.std.Monoid"},
        ]});
        let g = Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let fqns = |ident: &str| names(&g, ident).into_iter().map(|(f, _)| f).collect::<Vec<_>>();
        assert_eq!(fqns("Order"), ["Order", "shop.Order"], "both, the shorter first");
        assert_eq!(fqns("Monoid"), ["cats.Monoid", "cats.std.Monoid"], "the types, not the methods");
        assert_eq!(fqns("monoid"), ["cats.Other.monoid", "cats.Instances.monoid"]);
        assert_eq!(fqns("MONOID").len(), 4, "spelled as none is: all of them");
    }

    #[test]
    fn qualified_names_in_each_languages_spelling() {
        let id = |n: u8| format!("{n:040x}");
        let doc = serde_json::json!({"nodes": [
            {"id": id(1), "kind": "class", "name": "Base", "fqn": "Shop.Base"},
            {"id": id(2), "kind": "class", "name": "Client", "fqn": "Vendor.Package.Client"},
            {"id": id(3), "kind": "method", "name": "format", "fqn": "Utils.format"},
            {"id": id(4), "kind": "struct", "name": "Circle", "fqn": "shapes::geometry::Circle"},
        ]});
        let g = Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let fqns = |ident: &str| names(&g, ident).into_iter().map(|(f, _)| f).collect::<Vec<_>>();
        assert_eq!(fqns("Shop::Base"), ["Shop.Base"], "Ruby");
        assert_eq!(fqns("::Shop::Base"), ["Shop.Base"], "Ruby, from the top");
        assert_eq!(fqns("Vendor\\Package\\Client"), ["Vendor.Package.Client"], "PHP");
        assert_eq!(fqns("\\Vendor\\Package\\Client"), ["Vendor.Package.Client"], "PHP, fully qualified");
        assert_eq!(fqns("Package\\Client"), ["Vendor.Package.Client"], "PHP, a suffix");
        assert_eq!(fqns("Utils::format"), ["Utils.format"]);
        assert_eq!(fqns("geometry.Circle"), ["shapes::geometry::Circle"], "Rust, dotted");
        assert_eq!(fqns("geometry::Circle"), ["shapes::geometry::Circle"]);
        assert!(fqns("Shop::Nothing").is_empty());
    }
}
