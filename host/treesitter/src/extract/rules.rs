//! A language's rules applied to one file's facts with its syntax tree,
//! after the query: what a pattern cannot say (a tuple variant's fields by
//! position, a type parameter's trait bound, overload stubs folded into
//! their implementation, `#[cfg]` alternatives), and the positions of a
//! text read with its macros expanded put back in the file's terms.

use tree_sitter::Node;

use super::syntax::compact;
use super::*;

/// A tuple variant's fields (`Class(hir::ClassUnicode, Span)`), as fields
/// named by position (`0`, `1`), of the types written.
pub(super) fn tuple_fields(list: Node<'_>, text: &[u8]) -> Vec<Var> {
    let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
    let mut out = Vec::new();
    let mut c = list.walk();
    for (k, ty) in list.children_by_field_name("type", &mut c).enumerate() {
        // The type's name, past references and a path, and what it holds.
        let mut t = ty;
        while t.kind() == "reference_type" {
            match t.child_by_field_name("type") {
                Some(inner) => t = inner,
                None => break,
            }
        }
        let head = if t.kind() == "generic_type" { t.child_by_field_name("type").unwrap_or(t) } else { t };
        let (name, qualifier) = match head.kind() {
            "type_identifier" => (txt(head), None),
            "scoped_type_identifier" => match head.child_by_field_name("name") {
                Some(n) => (txt(n), head.child_by_field_name("path").map(txt)),
                None => continue,
            },
            _ => continue,
        };
        out.push(Var {
            name: k.to_string(),
            ty: Name { name, qualifier, span: Span::of(ty), generics: 0 },
            typed: Typed::Is,
            written: Some(compact(&txt(ty))),
            within: Some((ty.start_byte(), ty.start_byte())),
            member: false,
            at: (ty.start_byte(), ty.start_byte()),
        });
    }
    out
}

/// The names a variant's pattern binds by position (`HirKind::Class(ref
/// cls)`, `Ast::Group(_, mut g)`), each the value of that field
/// (`HirKind::Class.0`).
pub(super) fn tuple_bindings(pattern: Node<'_>, text: &[u8]) -> Vec<Var> {
    let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
    let Some(ty) = pattern.child_by_field_name("type") else { return Vec::new() };
    let path = compact(&txt(ty));
    let mut out = Vec::new();
    let mut c = pattern.walk();
    let elements = pattern.named_children(&mut c).filter(|e| e.id() != ty.id() && !e.kind().ends_with("comment"));
    for (k, e) in elements.enumerate() {
        let mut at = e;
        while matches!(at.kind(), "ref_pattern" | "mut_pattern") {
            match at.named_child((at.named_child_count() as u32).saturating_sub(1)) {
                Some(inner) => at = inner,
                None => break,
            }
        }
        if at.kind() != "identifier" {
            continue;
        }
        out.push(Var {
            name: txt(at),
            ty: Name { name: format!("{path}.{k}"), qualifier: None, span: Span::of(at), generics: 0 },
            typed: Typed::Value,
            written: None,
            within: Some((at.start_byte(), at.start_byte())),
            member: false,
            at: (at.start_byte(), at.start_byte()),
        });
    }
    out
}

/// A Kotlin written type's last name and the name before it (`Segment?`:
/// `Segment`; `JsonAdapter.Factory<T>`: `Factory` in `JsonAdapter`).
pub(super) fn type_path(ty: Node<'_>) -> Option<(Node<'_>, Option<Node<'_>>)> {
    let user = if ty.kind() == "nullable_type" { ty.named_child(0)? } else { ty };
    if user.kind() != "user_type" {
        return None;
    }
    let mut c = user.walk();
    let names: Vec<Node<'_>> = user.named_children(&mut c).filter(|n| n.kind() == "identifier").collect();
    match names[..] {
        [] => None,
        [.., q, last] => Some((last, Some(q))),
        [last] => Some((last, None)),
    }
}

/// The names a condition binds (`@let.bindings`: Swift's `guard let a =
/// x, let b = y as? T`, `if let …`): each `let NAME = VALUE` in a row of
/// the statement's children, typed by its value.
pub(super) fn let_bindings(statement: Node<'_>, text: &[u8]) -> Vec<Var> {
    let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
    let mut c = statement.walk();
    let children: Vec<Node<'_>> = statement.named_children(&mut c).collect();
    let mut out = Vec::new();
    for w in children.windows(3) {
        let [binding, name, value] = w else { continue };
        // Not `if case let .failure(error) = r`: a pattern, no binding of a name.
        if binding.kind() != "value_binding_pattern" || name.kind() != "simple_identifier" || value.kind() == "pattern"
        {
            continue;
        }
        out.push(Var {
            name: txt(*name),
            ty: Name { name: compact(&txt(*value)), qualifier: None, span: Span::of(*name), generics: 0 },
            typed: Typed::Value,
            written: None,
            within: Some((name.start_byte(), name.start_byte())),
            member: false,
            at: (value.start_byte(), value.end_byte()),
        });
    }
    out
}

/// Variables typed by a type parameter of their function, its impl or its
/// type that a trait, a protocol or a class bounds (Rust's `fn visit<V:
/// Visitor>(visitor: V)`, `where V: Visitor`, `impl<V: Visitor>
/// Walker<V>`; C#'s `where TTask : Task`; Swift's `struct
/// OptionGroup<Value: ParsableArguments>`, `where T: P`), typed by that
/// bound instead: what is called on them is the bound's.
pub(super) fn bounded_types(facts: &mut Facts, root: Node<'_>, text: &[u8]) {
    let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
    let simple = |n: Node<'_>| crate::extract::simple_type(&txt(n));
    // The first bound of each type parameter a node declares.
    let bounds_of = |n: Node<'_>, out: &mut Vec<(String, String)>| {
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            let mut c2 = ch.walk();
            match ch.kind() {
                "type_parameters" => {
                    for tp in ch.children(&mut c2) {
                        // Rust's `V: Visitor`.
                        let name = tp.child_by_field_name("left").or_else(|| tp.child_by_field_name("name"));
                        if let (Some(l), Some(b)) = (name, tp.child_by_field_name("bounds"))
                            && let Some(t) = first_trait(b, &txt)
                        {
                            out.push((txt(l), t));
                        }
                        // Swift's `Value: ParsableArguments`.
                        if tp.kind() == "type_parameter"
                            && let (Some(l), Some(b)) = (tp.named_child(0), tp.child_by_field_name("name"))
                            && l.kind() == "type_identifier"
                            && l.id() != b.id()
                        {
                            out.push((txt(l), simple(b)));
                        }
                    }
                }
                "where_clause" => {
                    for wp in ch.children(&mut c2).filter(|t| t.kind() == "where_predicate") {
                        if let (Some(l), Some(b)) = (wp.child_by_field_name("left"), wp.child_by_field_name("bounds"))
                            && let Some(t) = first_trait(b, &txt)
                        {
                            out.push((txt(l), t));
                        }
                    }
                }
                // C#'s `where TTask : Task, new()`.
                "type_parameter_constraints_clause" => {
                    let target = ch.named_children(&mut c2).find(|t| t.kind() == "identifier");
                    let mut c3 = ch.walk();
                    let bound = ch
                        .named_children(&mut c3)
                        .filter(|t| t.kind() == "type_parameter_constraint")
                        .find_map(|t| t.child_by_field_name("type"));
                    if let (Some(l), Some(b)) = (target, bound) {
                        out.push((txt(l), simple(b)));
                    }
                }
                // Swift's `where T: P`.
                "type_constraints" => {
                    for tc in ch.named_children(&mut c2).filter(|t| t.kind() == "type_constraint") {
                        let Some(ic) = tc.named_child(0).filter(|i| i.kind() == "inheritance_constraint") else {
                            continue;
                        };
                        if let (Some(l), Some(b)) =
                            (ic.child_by_field_name("constrained_type"), ic.child_by_field_name("name"))
                        {
                            out.push((txt(l), simple(b)));
                        }
                    }
                }
                _ => {}
            }
        }
    };
    // Each callable's and type's byte range, and its type parameters'
    // bounds.
    type Bounds = Vec<(String, String)>;
    let mut scopes: Vec<((usize, usize), Bounds)> = Vec::new();
    for d in facts.defs.iter().filter(|d| d.kind.is_callable() || d.kind.is_type()) {
        let Some(n) = node_of(root, &d.span) else { continue };
        let mut b = Vec::new();
        bounds_of(n, &mut b);
        // The impl's own parameters (`impl<V: Visitor> Walker<V>`).
        if let Some(imp) = n.parent().and_then(|l| l.parent()).filter(|i| i.kind() == "impl_item") {
            bounds_of(imp, &mut b);
        }
        if !b.is_empty() {
            scopes.push((d.span.offsets(), b));
        }
    }
    if scopes.is_empty() {
        return;
    }
    // Innermost first.
    scopes.sort_by_key(|((a, b), _)| b - a);
    for v in facts.vars.iter_mut().filter(|v| v.typed == Typed::Is) {
        let at = v.ty.span.offsets();
        // `&'a mut W` is a `W`; C#'s `TTask?` a `TTask`.
        let named =
            v.ty.name
                .trim_start_matches('&')
                .split_whitespace()
                .find(|w| !w.starts_with('\'') && !matches!(*w, "mut" | "dyn" | "impl"))
                .map(|w| w.trim_end_matches('?'));
        let bound = scopes
            .iter()
            .filter(|((a, b), _)| *a <= at.0 && at.1 <= *b)
            .find_map(|(_, b)| b.iter().find(|(p, _)| Some(p.as_str()) == named));
        if let Some((_, t)) = bound {
            v.ty.name = t.clone();
            v.written = None;
        }
    }
}

/// The first trait a bound list names (`Visitor + Send`, `?Sized + Read`,
/// `io::Write`): its last path segment.
fn first_trait(bounds: Node<'_>, txt: &impl Fn(Node<'_>) -> String) -> Option<String> {
    let mut c = bounds.walk();
    let found = bounds.children(&mut c).find_map(|b| match b.kind() {
        "type_identifier" => Some(txt(b)),
        "scoped_type_identifier" => b.child_by_field_name("name").map(txt),
        "generic_type" => b.child_by_field_name("type").map(|t| {
            let s = txt(t);
            s.rsplit("::").next().unwrap_or(&s).to_owned()
        }),
        _ => None,
    });
    found.filter(|t| !matches!(t.as_str(), "Sized" | "Send" | "Sync" | "Copy" | "Clone" | "Unpin"))
}

/// The syntax node a definition's span is.
pub(super) fn node_of<'t>(root: Node<'t>, span: &Span) -> Option<Node<'t>> {
    let (start, end) = span.offsets();
    let mut n = root.descendant_for_byte_range(start, end)?;
    while n.byte_range() != (start..end) {
        n = n.parent()?;
    }
    Some(n)
}

/// Overload signatures and their implementation made one definition
/// ([`crate::languages::Rules::overload_stubs`]): a run of definitions of
/// one name in one scope, each but the last a stub (TypeScript's bodiless
/// `function_signature` or a class's `method_signature`; a Python `def`
/// decorated `@overload`), is the first of them, spanning to the end of the
/// last, taking every arity any of them takes.
pub(super) fn fold_overloads(facts: &mut Facts, root: Node<'_>, text: &[u8]) {
    let stub = |d: &Def| {
        let Some(n) = node_of(root, &d.span) else { return false };
        match n.kind() {
            "function_signature" | "method_signature" => true,
            // Its decorators are in its span (`decorators_inside`), or around it.
            "decorated_definition" | "function_definition" => Some(n)
                .filter(|n| n.kind() == "decorated_definition")
                .or_else(|| n.parent())
                .filter(|p| p.kind() == "decorated_definition")
                .is_some_and(|p| {
                    let mut c = p.walk();
                    p.children(&mut c).filter(|k| k.kind() == "decorator").any(|k| {
                        let t = String::from_utf8_lossy(&text[k.byte_range()]);
                        t.trim_end().ends_with("overload")
                    })
                }),
            _ => false,
        }
    };
    if !facts.defs.iter().any(|d| d.kind.is_callable()) {
        return;
    }
    let stubs: Vec<bool> = facts.defs.iter().map(|d| d.kind.is_callable() && stub(d)).collect();
    if !stubs.contains(&true) {
        return;
    }
    // Defs are in source order, outer before inner: the next definition
    // that is not inside this one is its sibling or after its scope.
    let mut gone = vec![false; facts.defs.len()];
    let mut i = 0;
    while i < facts.defs.len() {
        if !stubs[i] || gone[i] {
            i += 1;
            continue;
        }
        let mut last = i;
        loop {
            let end = facts.defs[last].span.bytes.1;
            let Some(j) = (last + 1..facts.defs.len()).find(|&j| facts.defs[j].span.bytes.0 >= end) else { break };
            let end = end as usize;
            let (a, b) = (&facts.defs[i], &facts.defs[j]);
            if b.name() != a.name() || !b.kind.is_callable() {
                break;
            }
            // Nothing but whitespace, comments and decorators between.
            let between = &text[end..b.span.bytes.0 as usize];
            let plain = String::from_utf8_lossy(between);
            let other = plain.lines().map(|l| l.trim().trim_start_matches([';', ',']).trim()).any(|l| {
                !l.is_empty()
                    && !l.starts_with("//")
                    && !l.starts_with('#')
                    && !l.starts_with('@')
                    && !l.starts_with("/*")
                    && !l.starts_with('*')
                    && l != "export"
                    && l != "declare"
            });
            if other {
                break;
            }
            last = j;
            if !stubs[j] {
                break;
            }
        }
        if last > i {
            let (end_span, kind) = (facts.defs[last].span, facts.defs[last].kind);
            // What the implementation returns and takes is what every
            // overload's caller may get and give.
            let implementation = facts.defs[last].words.parts();
            let arities: Vec<Arity> = facts.defs[i..=last].iter().filter_map(|d| d.arity).collect();
            let first = &mut facts.defs[i];
            first.span.end = end_span.end;
            first.span.bytes.1 = end_span.bytes.1;
            first.kind = kind;
            first.change_words(|w| {
                w.returns = implementation.returns;
                w.params = implementation.params;
            });
            if let Some(min) = arities.iter().map(|a| a.min).min() {
                let max = if arities.iter().any(|a| a.max.is_none()) {
                    None
                } else {
                    arities.iter().filter_map(|a| a.max).max()
                };
                first.arity = Some(Arity { min, max });
            }
            for g in gone.iter_mut().take(last + 1).skip(i + 1) {
                *g = true;
            }
        }
        i = last + 1;
    }
    let mut k = 0;
    facts.retain_defs(|_| {
        k += 1;
        !gone[k - 1]
    });
}

/// Of two definitions of one name in one scope, one of them under
/// `#[cfg(not(feature = …))]` (Rust: `fn imp()` written once for a build
/// without a feature and once for a build with it): the build with the
/// crate's features on, which rust-analyzer and `cargo build` read by
/// default, has the other one only. The first is left out, with the calls
/// and names in it.
pub(super) fn drop_cfg_alternatives(facts: &mut Facts, root: Node<'_>, text: &[u8]) {
    // Most files name no feature: nothing to look for at each definition.
    if memchr::memmem::find(text, b"feature").is_none() {
        return;
    }
    let without_feature = |d: &Def| {
        let Some(n) = node_of(root, &d.span) else { return false };
        let mut at = n.prev_sibling();
        while let Some(a) = at.filter(|a| a.kind() == "attribute_item" || a.kind().ends_with("comment")) {
            let t: String = String::from_utf8_lossy(&text[a.byte_range()]).split_whitespace().collect();
            if t.starts_with("#[cfg(not(feature") {
                return true;
            }
            at = a.prev_sibling();
        }
        false
    };
    let flagged: Vec<usize> = (0..facts.defs.len()).filter(|&i| without_feature(&facts.defs[i])).collect();
    if flagged.is_empty() {
        return;
    }
    // The innermost definition around each: namesakes under one are in one scope.
    let parent = |i: usize| {
        let s = facts.defs[i].span;
        (0..facts.defs.len())
            .filter(|&j| j != i && facts.defs[j].span.contains(&s) && facts.defs[j].span != s)
            .min_by_key(|&j| facts.defs[j].span.bytes.1 - facts.defs[j].span.bytes.0)
    };
    let gone: Vec<(usize, usize)> = flagged
        .iter()
        .copied()
        .filter(|&i| {
            (0..facts.defs.len()).any(|j| {
                j != i
                    && facts.defs[j].name() == facts.defs[i].name()
                    && !flagged.contains(&j)
                    && parent(j) == parent(i)
            })
        })
        .map(|i| facts.defs[i].span.offsets())
        .collect();
    if gone.is_empty() {
        return;
    }
    let inside = |b: (usize, usize)| gone.iter().any(|g| g.0 <= b.0 && b.1 <= g.1);
    facts.retain_defs(|d| !inside(d.span.offsets()));
    facts.calls.retain(|c| !inside(c.span.offsets()));
    facts.vars.retain(|v| !inside(v.ty.span.offsets()));
    facts.types.retain(|t| !inside(t.span.offsets()));
}

/// Every position of `facts`, read from a text with its macros expanded,
/// put back in the file's terms. Byte offsets stay the expanded text's:
/// they only tell which span holds which.
pub(super) fn placed_back(facts: &mut Facts, x: &crate::macros::Expanded) {
    let fix = |s: &mut Span| {
        s.start = x.point(s.bytes.0 as usize, false);
        s.end = x.point(s.bytes.1 as usize, true);
    };
    for d in &mut facts.defs {
        fix(&mut d.span);
        fix(&mut d.name_span);
    }
    if !crate::macros::Expanded::body_calls() {
        facts.calls.retain(|c| x.written(c.span.bytes.0 as usize));
    }
    for c in &mut facts.calls {
        fix(&mut c.span);
    }
    for v in &mut facts.vars {
        fix(&mut v.ty.span);
    }
    for n in facts.types.iter_mut().chain(facts.supers.iter_mut()) {
        fix(&mut n.span);
    }
    for (_, n) in &mut facts.anonymous {
        fix(&mut n.span);
    }
}
