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
        union(files_matching(p).into_iter().map(|f| graph.index.by_file.get(f)).collect())
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
/// ([`spellings`]): `Shop::Base`, `Vendor\Package\Client`, Ruby's
/// `Shop::Cart#total`, C#'s `RelayCommand<T>.Execute` and
/// `geometry.Circle` find what is stored as `Shop.Base`,
/// `Vendor.Package.Client`, `Shop.Cart.total`, ``RelayCommand`1.Execute``
/// and `geometry::Circle`. A callable may be named with its parameters
/// ([`Params`]): Swift's labels (`load(_:for:)`), or a list of types or
/// names (`parse(String, int)`, `close()`), which choose among the
/// callables of that name the ones whose declaration fits (all of them when
/// none does).
pub fn resolve(graph: &Graph, identifier: &str, kind: Option<&str>, max: usize) -> (Vec<NodeIx>, usize) {
    let (name, params) = Params::split(identifier.trim());
    let mut hits = Vec::new();
    for spelling in spellings(name) {
        hits = resolve_as(graph, &spelling, kind);
        if !hits.is_empty() {
            break;
        }
    }
    // `Source.buffer` for Kotlin's extension function `fun Source.buffer()`
    // (a top-level function, spelled by its receiver as its users write it).
    for ix in extensions_named(graph, name) {
        if !hits.contains(&ix) {
            hits.push(ix);
        }
    }
    if let Some(params) = params {
        let fit: Vec<NodeIx> =
            hits.iter().copied().filter(|&ix| params.fit(graph.node(ix).signature(), graph.node(ix).name())).collect();
        if !fit.is_empty() {
            hits = fit;
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
    fn push(out: &mut Vec<String>, s: String) {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    let mut out = vec![ident.to_owned()];
    let bare = ident.trim_start_matches("::").trim_start_matches('\\');
    push(&mut out, bare.to_owned());
    // Ruby's `Cart#total` (an instance method) is `Cart.total`.
    let bare = match bare.find('#') {
        Some(i) if i > 0 && !bare.contains(' ') => {
            let dotted = bare.replace('#', ".");
            push(&mut out, dotted.clone());
            dotted
        }
        _ => bare.to_owned(),
    };
    if bare.contains("::") || bare.contains('\\') {
        push(&mut out, bare.replace("::", ".").replace('\\', "."));
    }
    if bare.contains('.') && !bare.contains("::") {
        push(&mut out, bare.replace('.', "::"));
    }
    // Kotlin's companion object, written (`ByteString.Companion.of`) or
    // not: its members are stored as its class's.
    if bare.contains(".Companion.") {
        push(&mut out, bare.replace(".Companion.", "."));
    }
    // Type arguments as written (`RelayCommand<T>.Execute`, `Map<K, V>`):
    // by their count, as C# and Java metadata name a generic type
    // (``RelayCommand`1``), then left out.
    if bare.contains('<') {
        for s in out.clone() {
            if let Some((counted, bare)) = generic_spellings(&s) {
                push(&mut out, counted);
                push(&mut out, bare);
            }
        }
    }
    out
}

/// The extension functions `Receiver.name` names: callables called `name`
/// declared for a receiver type whose last name is `Receiver` (`fun
/// Source.buffer()`, `fun <T> List<T>.second()`, `fun Sink?.orEmpty()`).
fn extensions_named(graph: &Graph, ident: &str) -> Vec<NodeIx> {
    let Some((receiver, name)) = ident.rsplit_once('.') else { return Vec::new() };
    let receiver = receiver.rsplit(['.', ':']).next().unwrap_or(receiver);
    if receiver.is_empty() || name.is_empty() {
        return Vec::new();
    }
    let call = format!(".{name}(");
    graph
        .index()
        .name_is(&lower(name))
        .iter()
        .copied()
        .filter(|&ix| {
            let n = graph.node(ix);
            matches!(n.kind(), "function" | "method") && n.name() == name && {
                let sig = n.signature();
                sig.match_indices(&call).any(|(at, _)| {
                    let head = sig[..at].trim_end_matches('?');
                    let head = match head.strip_suffix('>') {
                        Some(h) => h.rfind('<').map_or(h, |i| &h[..i]),
                        None => head,
                    };
                    head.ends_with(receiver)
                        && !head[..head.len() - receiver.len()].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            }
        })
        .collect()
}

/// A name's type argument lists (`A<T>.B<K, V>`) by their count
/// (``A`1.B`2``), and left out (`A.B`); None when they do not balance.
fn generic_spellings(s: &str) -> Option<(String, String)> {
    let (mut counted, mut bare) = (String::new(), String::new());
    let mut depth = 0usize;
    let mut args = 0usize;
    for c in s.chars() {
        match c {
            '<' => {
                depth += 1;
                if depth == 1 {
                    args = 1;
                }
            }
            '>' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    counted.push('`');
                    counted.push_str(&args.to_string());
                }
            }
            ',' if depth == 1 => args += 1,
            _ if depth > 0 => {}
            c => {
                counted.push(c);
                bare.push(c);
            }
        }
    }
    (depth == 0).then_some((counted, bare))
}

/// The parameters a callable is named with (`load(_:for:)`, `parse(String,
/// int)`, `close()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Params {
    /// Swift's argument labels, `_` for none: `(_:for:)`.
    Labels(Vec<String>),
    /// How many: `(String, int)` is two, `()` none.
    Count(usize),
}

impl Params {
    /// A name and the parameters it is written with, if any: `load(_:for:)`
    /// is `load` with the labels `_` and `for`. A name that only ends in
    /// parentheses by its language's rules (C++'s `operator()`) has none.
    pub fn split(ident: &str) -> (&str, Option<Params>) {
        let Some(inner) = ident.strip_suffix(')') else { return (ident, None) };
        let Some(open) = inner.find('(') else { return (ident, None) };
        let (name, list) = (&inner[..open], &inner[open + 1..]);
        if name.is_empty() || name.ends_with("operator") || list.contains(['(', ')']) {
            return (ident, None);
        }
        let list = list.trim();
        let params = if list.is_empty() {
            Params::Count(0)
        } else if list.ends_with(':') && !list.contains([',', ' ']) {
            Params::Labels(list.split_terminator(':').map(str::to_owned).collect())
        } else {
            Params::Count(split_top(list).len())
        };
        (name.trim_end(), Some(params))
    }

    /// Whether a callable declared with `signature` (its declaration's
    /// head, `func load(_ url: URL, for key: String)`) takes these
    /// parameters. A signature without a parameter list fits any.
    pub fn fit(&self, signature: &str, name: &str) -> bool {
        let Some(list) = param_list(signature, name) else { return true };
        let params: Vec<&str> = split_top(list).into_iter().filter(|p| !p.trim().is_empty()).collect();
        match self {
            Params::Count(n) => params.len() == *n,
            Params::Labels(labels) => {
                params.len() == labels.len()
                    && params.iter().zip(labels).all(|(p, want)| swift_label(p).is_some_and(|l| l == want))
            }
        }
    }
}

/// The text between the parentheses after `name` in a declaration's head
/// (the first list after it: `init(name: String)`, `func f<T>(x: T)`).
fn param_list<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let from = signature.find(name).map_or(0, |i| i + name.len());
    let open = from + signature[from..].find('(')?;
    let mut depth = 0usize;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&signature[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// A list split at its commas outside brackets.
fn split_top(list: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out
}

/// A Swift parameter's argument label: `for key: String` is `for`, `_ url:
/// URL` is `_`, `name: String` is `name`.
fn swift_label(param: &str) -> Option<&str> {
    param.split(':').next()?.split_whitespace().next()
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
    fn native_spellings_ruby_instance_methods_generic_types_and_parameters() {
        use super::{Params, spellings};
        assert!(spellings("Shop::Cart#total").contains(&"Shop.Cart.total".to_owned()));
        assert!(spellings("RelayCommand<T>.Execute").contains(&"RelayCommand`1.Execute".to_owned()));
        assert!(spellings("Map<K, V<W>>").contains(&"Map`2".to_owned()));
        assert!(spellings("Map<K").iter().all(|s| !s.contains('`')), "unbalanced: as written only");
        assert_eq!(Params::split("load(_:for:)"), ("load", Some(Params::Labels(vec!["_".into(), "for".into()]))));
        assert_eq!(Params::split("close()"), ("close", Some(Params::Count(0))));
        assert_eq!(Params::split("parse(String, Map<K, V>)"), ("parse", Some(Params::Count(2))));
        assert_eq!(Params::split("operator()"), ("operator()", None));
        assert_eq!(Params::split("(x)"), ("(x)", None));
        let labels = Params::Labels(vec!["_".into(), "for".into()]);
        assert!(labels.fit("func load(_ url: URL, for key: String) -> Data", "load"));
        assert!(!labels.fit("func load(_ url: URL, using key: String)", "load"));
        assert!(!labels.fit("func load(_ url: URL)", "load"));
        assert!(!Params::Count(0).fit("init(name: String)", "init"));
        assert!(Params::Count(1).fit("void parse(Map<K, V> m)", "parse"));
        assert!(Params::Count(1).fit("parse", "parse"), "no parameter list: fits");

        let id = |n: u8| format!("{n:040x}");
        let doc = serde_json::json!({"nodes": [
            {"id": id(1), "kind": "method", "name": "load", "fqn": "Cache.load",
             "signature": "func load(_ url: URL, for key: String)"},
            {"id": id(2), "kind": "method", "name": "load", "fqn": "Cache.load",
             "signature": "func load(_ url: URL, using key: String)"},
            {"id": id(3), "kind": "class", "name": "Cart", "fqn": "Shop.Cart"},
            {"id": id(4), "kind": "method", "name": "total", "fqn": "Shop.Cart.total"},
        ]});
        let g = Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let ids = |ident: &str| super::resolve(&g, ident, None, 10).0;
        assert_eq!(ids("Cache.load(_:for:)"), vec![0]);
        assert_eq!(ids("load(_:using:)"), vec![1]);
        assert_eq!(ids("load").len(), 2, "the base name: all of them");
        assert_eq!(ids("load(_:with:)").len(), 2, "none fits: all of that name");
        assert_eq!(ids("Shop::Cart#total"), vec![3]);
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
