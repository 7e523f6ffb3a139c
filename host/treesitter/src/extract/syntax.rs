//! What a syntax node says, read as text: argument kinds and types,
//! parameter lists, arity, signatures, doc comments, written types reduced
//! to their simple names.

use tree_sitter::Node;

use super::{Arg, Arity, Call, Lit, Name, Span, Typed, Var, offset};

/// How many type parameters or arguments a list (`<T, U>`) holds: 0 for
/// none.
pub(super) fn generics(list: Option<Node<'_>>) -> u8 {
    list.map_or(0, |l| u8::try_from(l.named_child_count()).unwrap_or(u8::MAX))
}

/// A path's last segment, with its generic arguments (`fmt::Display` →
/// `Display`, `convert::From<&str>` → `From<&str>`): how rust-analyzer
/// names an impl's type and trait.
pub(super) fn unqualified(path: &str) -> String {
    let head = path.find('<').unwrap_or(path.len());
    let start = path[..head].rfind("::").map_or(0, |i| i + 2);
    compact(&path[start..])
}

/// Source text with each run of whitespace one space (a type or an
/// expression, read as steps by [`crate::resolve`]).
pub(super) fn compact(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn memchr_nul(b: &[u8]) -> bool {
    b.contains(&0)
}

fn is_comment(n: Node<'_>) -> bool {
    n.kind().contains("comment")
}

/// Arguments in an argument list.
pub(super) fn count_args(list: Node<'_>) -> u32 {
    let mut c = list.walk();
    let args = list.named_children(&mut c).filter(|n| !is_comment(*n));
    // Ruby's keyword arguments (`default_options max_age: 1, preload:
    // false`) are one hash, one argument.
    let (pairs, rest) = args.fold((0u32, 0u32), |(p, r), n| if n.kind() == "pair" { (p + 1, r) } else { (p, r + 1) });
    // Kotlin's and Swift's trailing lambda after the list (`f(1) { … }`) is
    // its last argument: Swift's beside the list, Kotlin's beside the call
    // (the grammar wraps the call and the lambda in another call).
    // (A node's parent is found from the root: asked only of a list that
    // ends its call.)
    let lambda = |n: Node<'_>| matches!(n.kind(), "annotated_lambda" | "lambda_literal");
    let trailing = list.kind() == "value_arguments"
        && match list.next_named_sibling() {
            Some(next) => lambda(next),
            None => list
                .parent()
                .filter(|p| p.kind() == "call_expression")
                .and_then(|c| c.next_named_sibling())
                .is_some_and(lambda),
        };
    rest + u32::from(pairs > 0) + u32::from(trailing)
}

/// The calls written in a macro's body (`name(`, not after `.`, `->` or
/// `#`), as plain calls: the body is text to the grammar.
pub(super) fn calls_in_text(text: &[u8], value: Node<'_>) -> Vec<Call> {
    let (start, end) = (value.start_byte(), value.end_byte().min(text.len()));
    let body = &text[start..end];
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if !(body[i].is_ascii_alphabetic() || body[i] == b'_') || (i > 0 && ident(body[i - 1])) {
            i += 1;
            continue;
        }
        let a = i;
        while i < body.len() && ident(body[i]) {
            i += 1;
        }
        let mut j = i;
        while j < body.len() && matches!(body[j], b' ' | b'\t') {
            j += 1;
        }
        let before = body[..a].iter().rev().find(|c| !c.is_ascii_whitespace()).copied();
        if body.get(j) != Some(&b'(') || matches!(before, Some(b'.' | b'>' | b'#')) {
            continue;
        }
        let name = String::from_utf8_lossy(&body[a..i]).into_owned();
        if matches!(name.as_str(), "if" | "while" | "for" | "switch" | "return" | "sizeof" | "defined" | "do") {
            continue;
        }
        // The place, counted from the value's start.
        let line_of = |k: usize| body[..k].iter().filter(|&&c| c == b'\n').count() as u32;
        let col_of = |k: usize| (k - body[..k].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1)) as u32;
        let (row0, col0) = (value.start_position().row as u32, value.start_position().column as u32);
        let at = |k: usize| {
            let r = line_of(k);
            (row0 + r, if r == 0 { col0 + col_of(k) } else { col_of(k) })
        };
        out.push(Call {
            name,
            receiver: None,
            args: None,
            given: Vec::new(),
            span: Span { start: at(a), end: at(i), bytes: (offset(start + a), offset(start + i)) },
            construct: false,
            scoped: false,
            read: false,
            generics: 0,
            labels: None,
        });
    }
    out
}

/// Swift's argument labels of a declaration whose parameters are its own
/// children (`func load(_ url: URL, for key: String)`: `_`, `for`): a
/// parameter's first name, its only one when it has one.
pub(super) fn param_labels(decl: Node<'_>, text: &[u8]) -> Option<Vec<String>> {
    if !decl.kind().ends_with("_declaration") {
        return None;
    }
    let mut c = decl.walk();
    let labels = decl
        .children(&mut c)
        .filter(|n| n.kind() == "parameter")
        .map(|p| {
            let mut pc = p.walk();
            let first = p.named_children(&mut pc).find(|n| n.kind() == "simple_identifier");
            first.and_then(|n| n.utf8_text(text).ok()).unwrap_or("_").to_owned()
        })
        .collect();
    Some(labels)
}

/// Swift's argument labels as a call writes them (`load(u, for: k)`: `_`,
/// `for`); none for other languages' argument lists.
pub(super) fn labels_given(list: Node<'_>, text: &[u8]) -> Option<Vec<String>> {
    // Kotlin's arguments are `value_argument`s too; only Swift's list is
    // in a call suffix.
    if list.kind() != "value_arguments" || list.parent().is_none_or(|p| p.kind() != "call_suffix") {
        return None;
    }
    let mut c = list.walk();
    Some(
        list.named_children(&mut c)
            .filter(|n| n.kind() == "value_argument")
            .map(|a| {
                let mut ac = a.walk();
                a.named_children(&mut ac)
                    .find(|n| n.kind() == "value_argument_label")
                    .and_then(|l| l.utf8_text(text).ok())
                    .unwrap_or("_")
                    .to_owned()
            })
            .collect(),
    )
}

/// What each argument of an argument list is.
pub(super) fn args_given(list: Node<'_>, text: &[u8]) -> Vec<Arg> {
    let mut c = list.walk();
    list.named_children(&mut c).filter(|n| !is_comment(*n)).map(|n| arg_of(n, text)).collect()
}

/// What one argument is: a literal by its node's kind, a plain name, a
/// construction; an argument node of one child (C#'s `argument`, Kotlin's
/// `value_argument`) is what that child is.
fn arg_of(n: Node<'_>, text: &[u8]) -> Arg {
    let mut n = n;
    loop {
        // Swift's labelled argument (`at: i`): its value.
        if n.kind() == "value_argument"
            && let Some(v) = n.child_by_field_name("value")
            && v.id() != n.id()
        {
            n = v;
        } else if n.named_child_count() == 1
            && (n.kind().contains("argument") || n.kind() == "parenthesized_expression")
            && let Some(c) = n.named_child(0)
        {
            n = c;
        } else {
            break;
        }
    }
    let kind = n.kind();
    let txt = || n.utf8_text(text).unwrap_or("").trim().to_owned();
    let lit = |l| Arg::Literal(l);
    match kind {
        "true" | "false" | "boolean_literal" | "boolean" => lit(Lit::Bool),
        "null_literal" | "null" | "nil" | "nullptr" | "none" | "None" => lit(Lit::Null),
        "identifier"
        | "simple_identifier"
        | "field_access"
        | "member_access_expression"
        | "selector_expression"
        | "method_invocation"
        | "call_expression"
        | "invocation_expression"
        | "navigation_expression"
        | "member_expression"
        | "attribute"
        | "call"
        | "this"
        | "self"
        | "array_access"
        | "element_access_expression"
        | "subscript_expression"
        | "index_expression"
        // Swift's `value!`, C#'s `value!`.
        | "postfix_expression"
        | "postfix_unary_expression" => {
            let t = compact(&txt());
            if t.len() <= 160 { Arg::Expr(t) } else { Arg::Other }
        }
        // `(long[]) lhs`: a value of the type it is cast to, nullable
        // where so written (C#'s `(LetterCasing?)casing`).
        "cast_expression" => match n.child_by_field_name("type") {
            Some(t) => {
                let written = t.utf8_text(text).unwrap_or("").trim();
                let nullable = if written.ends_with('?') { "?" } else { "" };
                Arg::New(format!("{}{nullable}", simple_type(written)))
            }
            None => Arg::Other,
        },
        "object_creation_expression" | "new_expression" | "instance_creation_expression" => {
            match n.child_by_field_name("type").or_else(|| n.child_by_field_name("constructor")) {
                Some(t) => Arg::New(simple_type(t.utf8_text(text).unwrap_or(""))),
                None => Arg::Other,
            }
        }
        k if k.contains("char") && k.contains("literal") => lit(Lit::Char),
        k if k.contains("string") => lit(Lit::Str),
        k if k.contains("float") || k.contains("real_literal") || k.contains("double") => lit(Lit::Float),
        k if k.contains("integer") || k.contains("int_literal") || k.contains("decimal") || k.contains("hex") => {
            lit(Lit::Int)
        }
        "number_literal" | "number" | "integer" => {
            let t = txt();
            let float = t.contains('.') || (!t.starts_with("0x") && t.contains(['e', 'E']));
            lit(if float { Lit::Float } else { Lit::Int })
        }
        _ => Arg::Other,
    }
}

/// A type as written, reduced to its simple name: qualifiers, generic
/// arguments, array and pointer marks, `const`, `final` and `?` left out
/// (`java.util.List<String>` → `List`, `const std::string&` → `string`,
/// `int[]` → `int[]` stays an array).
pub fn simple_type(written: &str) -> String {
    let mut t = written.trim();
    for prefix in ["const ", "final ", "volatile ", "struct ", "class ", "enum ", "in ", "out ", "ref ", "params "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let array = t.ends_with("[]") || t.ends_with("...");
    // `List<T>`, and Scala's and Python's `List[T]` (not `int[]`, nor
    // Swift's `[T]`).
    let open = t.find('<').or_else(|| t.find('[').filter(|&i| i > 0 && !t[i..].starts_with("[]")));
    let head = open.map_or(t, |i| &t[..i]);
    let head = head.trim_end_matches(['*', '&', '?', ' ', '.', ']', '[']).trim_end_matches(" const");
    let last = head.rsplit(['.', ':', '\\']).next().unwrap_or(head).trim();
    if array { format!("{last}[]") } else { last.to_owned() }
}

/// Each parameter's type as written (`""` where none is written).
pub(super) fn param_types(list: Node<'_>, text: &[u8]) -> Vec<String> {
    if list.kind() == "identifier" {
        return vec![String::new()];
    }
    let params: Vec<(Node<'_>, Option<&str>)> = if list.kind().ends_with("_declaration") {
        let mut c = list.walk();
        list.children(&mut c).filter(|n| n.kind() == "parameter").map(|n| (n, None)).collect()
    } else {
        named_params(list)
    };
    let mut out = Vec::new();
    let mut vararg = false;
    for (p, field) in params {
        if matches!(p.kind(), "receiver_parameter" | "self_parameter" | "block_parameter") || default_value(p) {
            continue;
        }
        // C#'s `params int[] rest`: the list's own fields, a variadic
        // parameter of its elements.
        match field {
            Some("type") => {
                let t = p.utf8_text(text).unwrap_or("").trim();
                out.push(format!("{}...", t.strip_suffix("[]").unwrap_or(t).trim()));
                continue;
            }
            Some("name") => continue,
            _ => {}
        }
        if p.kind() == "parameter_modifiers" {
            vararg = is_vararg(p, text);
            continue;
        }
        let mut pc = p.walk();
        let ty = p.child_by_field_name("type").or_else(|| {
            p.named_children(&mut pc).find(|c| c.kind().ends_with("type") || c.kind() == "type_annotation")
        });
        let spread = std::mem::take(&mut vararg) || p.kind().contains("spread") || p.kind().contains("variadic");
        let written = ty.map_or(String::new(), |t| {
            let t = t.utf8_text(text).unwrap_or("").trim_start_matches(':').trim();
            if spread { format!("{t}...") } else { t.to_owned() }
        });
        // Go's `a, b int` declares two of one type (Swift's `at position:
        // Int`, a label and a name, one).
        let names = if list.kind().ends_with("_declaration") {
            1
        } else {
            p.children_by_field_name("name", &mut p.walk()).count().max(1)
        };
        out.extend(std::iter::repeat_n(written, names));
    }
    out
}

/// A parameter list's named children, comments left out, each with the
/// field name the grammar gives it, if any (C#'s `params` parameter is the
/// list's own `type` and `name`).
fn named_params<'t>(list: Node<'t>) -> Vec<(Node<'t>, Option<&'t str>)> {
    let mut out = Vec::new();
    let mut c = list.walk();
    if !c.goto_first_child() {
        return out;
    }
    loop {
        let n = c.node();
        if n.is_named() && !is_comment(n) {
            out.push((n, c.field_name()));
        }
        if !c.goto_next_sibling() {
            return out;
        }
    }
}

/// Kotlin's default value, a sibling after its parameter and `=`.
fn default_value(p: Node<'_>) -> bool {
    p.prev_sibling().is_some_and(|s| s.kind() == "=")
}

/// Kotlin's parameter modifiers holding `vararg`.
fn is_vararg(modifiers: Node<'_>, text: &[u8]) -> bool {
    let mut c = modifiers.walk();
    modifiers.named_children(&mut c).any(|m| m.kind() == "parameter_modifier" && m.utf8_text(text) == Ok("vararg"))
}

/// Parameters in a parameter list: a Go `a, b int` declares two; a
/// variadic last parameter (`String... xs`, `xs ...int`) opens the top; one
/// with a default value (`x=1`, `int x = 1`) may be left out; C's `(void)`
/// takes none.
pub(super) fn arity(list: Node<'_>, text: &[u8]) -> Arity {
    // A lone parameter written without parentheses (`x => …`).
    if list.kind() == "identifier" {
        return Arity { min: 1, max: Some(1) };
    }
    // Swift's parameters are the declaration's own children, each default
    // value a field of the declaration after its parameter.
    if list.kind().ends_with("_declaration") {
        let mut c = list.walk();
        let params = list.children(&mut c).filter(|n| n.kind() == "parameter").count() as u32;
        let mut c = list.walk();
        let defaults = list.children_by_field_name("default_value", &mut c).count() as u32;
        return Arity { min: params.saturating_sub(defaults), max: Some(params) };
    }
    let mut min = 0u32;
    let mut optional = 0u32;
    let mut variadic = false;
    let params = named_params(list);
    if let [(only, _)] = params[..]
        && only.named_child_count() == 1
        && only.utf8_text(text).is_ok_and(|t| t.trim() == "void")
    {
        return Arity { min: 0, max: Some(0) };
    }
    // C's `...` is a token of the list, not a named parameter.
    let mut all = list.walk();
    if list.children(&mut all).any(|n| !n.is_named() && n.kind() == "...") {
        variadic = true;
    }
    let mut vararg = false;
    for (p, field) in params {
        // Ruby's `&block` is no argument.
        if p.kind() == "block_parameter" {
            continue;
        }
        // C#'s `params int[] rest`: its type and name are the list's own
        // fields, not a parameter's.
        match field {
            Some("type") => {
                variadic = true;
                continue;
            }
            Some("name") => continue,
            _ => {}
        }
        // C#'s default value (`bool addAnd = true`): after an `=` in the
        // parameter.
        let mut dc = p.walk();
        if p.kind() == "parameter" && p.children(&mut dc).any(|c| !c.is_named() && c.kind() == "=") {
            optional += 1;
            continue;
        }
        // Kotlin's modifiers and annotations stand before their parameter,
        // `vararg` among them; a default value after it (`b: Int = 0`).
        if p.kind() == "parameter_modifiers" {
            vararg = is_vararg(p, text);
            continue;
        }
        if default_value(p) {
            if min > 0 {
                min -= 1;
                optional += 1;
            }
            continue;
        }
        if std::mem::take(&mut vararg)
            || p.kind().contains("spread")
            || p.kind().contains("variadic")
            || p.kind().contains("splat")
        {
            variadic = true;
            continue;
        }
        // Python's `*` and `/` between parameters are none.
        if matches!(p.kind(), "keyword_separator" | "positional_separator") {
            continue;
        }
        // TypeScript's `...rest: T[]`; Python's typed `*args: T`, `**kw: T`.
        let mut rc = p.walk();
        if p.named_children(&mut rc).any(|c| c.kind().contains("rest") || c.kind().contains("splat")) {
            variadic = true;
            continue;
        }
        // `x = 1` in TypeScript's parameters is a field of the parameter.
        if p.kind().contains("optional") || p.kind().contains("default") || p.child_by_field_name("value").is_some() {
            optional += 1;
            continue;
        }
        // Java's receiver parameter and Rust's `self` are not arguments.
        if p.kind() == "receiver_parameter" || p.kind() == "self_parameter" {
            continue;
        }
        let mut pc = p.walk();
        let names = p.children_by_field_name("name", &mut pc).count() as u32;
        min += names.max(1);
    }
    Arity { min, max: (!variadic).then_some(min + optional) }
}

/// The declaration up to its body (or its first line), whitespace
/// collapsed, at most 300 characters.
pub(super) fn signature(def: Node<'_>, text: &[u8]) -> String {
    let end = def.child_by_field_name("body").map_or(def.end_byte(), |b| b.start_byte());
    // A declaration the grammar nests alone in a keyword's list (Go's
    // `type Order struct`) starts at the keyword.
    let start = match def.parent() {
        Some(p) if p.named_child_count() == 1 && p.start_position().row == def.start_position().row => p.start_byte(),
        _ => def.start_byte(),
    };
    let raw = String::from_utf8_lossy(&text[start..end]);
    let head = if def.child_by_field_name("body").is_some() { &raw[..] } else { raw.lines().next().unwrap_or("") };
    let mut out = String::new();
    for w in head.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > 300 {
            let cut = (0..=300).rev().find(|&i| out.is_char_boundary(i)).unwrap_or(0);
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out.trim_end_matches(['{', ' ', ';', '=']).to_owned()
}

/// The comments right above a definition (or above its container when the
/// grammar nests the name in a declaration list), markers stripped.
pub(super) fn doc_above(def: Node<'_>, text: &[u8]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut at = def;
    // Go's type_spec sits in a type_declaration; Java's field in a declaration.
    if at.prev_sibling().is_none_or(|p| !is_comment(p))
        && let Some(parent) = at.parent()
        && parent.named_child_count() == 1
    {
        at = parent;
    }
    let mut next_row = at.start_position().row;
    while let Some(p) = at.prev_sibling().filter(|p| is_comment(*p) && p.end_position().row + 1 >= next_row) {
        let body = String::from_utf8_lossy(&text[p.byte_range()]).into_owned();
        let mut chunk: Vec<String> = body
            .lines()
            .map(|l| {
                l.trim()
                    .trim_start_matches("/**")
                    .trim_start_matches("/*")
                    .trim_end_matches("*/")
                    .trim_start_matches("///")
                    .trim_start_matches("//")
                    .trim_start_matches('*')
                    .trim()
                    .to_owned()
            })
            .filter(|l| !l.is_empty())
            .collect();
        chunk.append(&mut lines);
        lines = chunk;
        next_row = p.start_position().row;
        at = p;
    }
    lines.join("\n")
}

/// A variable's node's bytes, and whether it holds (what the variables
/// read so far are found by).
pub(super) type VarKey = (usize, usize, bool);

/// Methods of Swift's sequences that call a closure with each element.
const SWIFT_EACH: &[&str] = &[
    "forEach",
    "map",
    "compactMap",
    "flatMap",
    "filter",
    "first",
    "last",
    "contains",
    "allSatisfy",
    "firstIndex",
    "lastIndex",
    "drop",
    "prefix",
    "removeAll",
    "sorted",
    "min",
    "max",
    "partition",
];

/// Methods of Kotlin's collections and sequences that call a lambda with
/// each element.
const KOTLIN_EACH: &[&str] = &[
    "forEach",
    "onEach",
    "map",
    "mapNotNull",
    "flatMap",
    "filter",
    "filterNot",
    "first",
    "firstOrNull",
    "last",
    "lastOrNull",
    "find",
    "single",
    "singleOrNull",
    "any",
    "all",
    "none",
    "count",
    "sumOf",
    "sortedBy",
    "sortedByDescending",
    "groupBy",
    "associateBy",
    "associateWith",
    "partition",
    "takeWhile",
    "dropWhile",
    "maxBy",
    "minBy",
    "maxByOrNull",
    "minByOrNull",
    "distinctBy",
    "removeAll",
    "retainAll",
];

/// For a call of one of a sequence's methods that calls a closure with
/// each element (`name`, on `receiver`), the closures it is given, as
/// Swift and Kotlin write them (a trailing closure, or an argument's:
/// `items.forEach { $0.run() }`, `.first(where: { item in … })`,
/// `items.map { it.name }`, `.filter({ x -> x.ok })`): each one's implicit
/// parameter (`$0`, `it`), and its parameter where it names exactly one
/// (two are a pair's parts, a dictionary's key and value, or an index and
/// an element), an element of the receiver, seen in the closure only. A
/// named parameter comes with its node's bytes, under which its own
/// capture (of no type) is the same variable. Told by the grammars'
/// `navigation_expression`; nothing for other languages.
pub(super) fn each_closures(name: Node<'_>, receiver: Node<'_>, text: &[u8]) -> Vec<(Option<VarKey>, Var)> {
    let mut out = Vec::new();
    let Ok(method) = name.utf8_text(text) else { return out };
    // A node's parent is found from the root: the name is checked first.
    if !SWIFT_EACH.contains(&method) && !KOTLIN_EACH.contains(&method) {
        return out;
    }
    let Some(parent) = name.parent() else { return out };
    // Swift: name → navigation_suffix → navigation_expression → call;
    // Kotlin: name → navigation_expression → call.
    let (call, each, implicit) = match parent.kind() {
        "navigation_suffix" => (parent.parent().and_then(|e| e.parent()), SWIFT_EACH, "$0"),
        "navigation_expression" => (parent.parent(), KOTLIN_EACH, "it"),
        _ => return out,
    };
    let Some(call) = call.filter(|c| c.kind() == "call_expression" && each.contains(&method)) else { return out };
    let mut closures = Vec::new();
    let mut parts: Vec<Node<'_>> = call.named_children(&mut call.walk()).collect();
    if let Some(suffix) = parts.iter().find(|c| c.kind() == "call_suffix").copied() {
        parts = suffix.named_children(&mut suffix.walk()).collect();
    }
    let lambda = |n: Node<'_>| n.kind() == "lambda_literal";
    for c in parts {
        match c.kind() {
            "lambda_literal" => closures.push(c),
            "annotated_lambda" => closures.extend(c.named_children(&mut c.walk()).filter(|n| lambda(*n))),
            "value_arguments" => {
                for a in c.named_children(&mut c.walk()) {
                    let value = a.child_by_field_name("value").or_else(|| a.named_child(0));
                    closures.extend(value.filter(|v| lambda(*v)));
                }
            }
            _ => {}
        }
    }
    let of = compact(receiver.utf8_text(text).unwrap_or(""));
    for closure in closures {
        let element = |name: String, at: Node<'_>| Var {
            name,
            ty: Name { name: of.clone(), qualifier: None, span: Span::of(at), generics: 0 },
            typed: Typed::Element,
            written: None,
            // Seen in the closure only (its function literal, found later).
            within: Some((closure.start_byte(), closure.start_byte())),
            member: false,
            at: (receiver.start_byte(), receiver.end_byte()),
        };
        out.push((None, element(implicit.into(), closure)));
        // Swift's `{ item in … }`, Kotlin's `{ item -> … }`.
        let params = match closure.child_by_field_name("type") {
            Some(t) => t.named_child(0),
            None => closure.named_children(&mut closure.walk()).find(|c| c.kind() == "lambda_parameters"),
        };
        let Some(params) = params.filter(|ps| ps.named_child_count() == 1) else { continue };
        let named = params.named_child(0).and_then(|p| p.child_by_field_name("name").or_else(|| p.named_child(0)));
        if let Some(p) = named.filter(|p| matches!(p.kind(), "simple_identifier" | "identifier")) {
            out.push((Some((p.start_byte(), p.end_byte(), false)), element(p.utf8_text(text).unwrap_or("").into(), p)));
        }
    }
    out
}
