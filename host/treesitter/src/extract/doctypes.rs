//! Types written in doc comments, where the code writes none or only
//! `array` (PHP's docblocks, as PHPStan and Psalm read them): `/** @var
//! Handler[] */` above a property, `@param list<Item> $items` and
//! `@return Item` above a function, `/** @var Item $x */` above an
//! assignment.

use tree_sitter::Node;

use super::syntax::doc_above;

/// The type the docblock above `var`'s declaration gives it: `@var` above
/// a property or an assignment (naming `var` or no variable), `@param`
/// naming `var` above a function. As [`normal`] writes it.
pub(super) fn of_var(var: Node<'_>, text: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(&text[var.byte_range()]).ok()?;
    let (tag, decl) = std::iter::successors(var.parent(), |a| a.parent())
        .take_while(|a| !matches!(a.kind(), "compound_statement" | "declaration_list" | "program"))
        .find_map(|a| match a.kind() {
            "property_declaration" | "expression_statement" => Some(("var", a)),
            "method_declaration" | "function_definition" => Some(("param", a)),
            _ => None,
        })?;
    doc_above(decl, text).lines().find_map(|line| tagged(line, tag, Some(name)))
}

/// The type a definition's doc comment (markers stripped, as
/// [`doc_above`] gives it) says it returns (`@return list<Item>`).
pub(super) fn returned(doc: &str) -> Option<String> {
    doc.lines().find_map(|line| tagged(line, "return", None))
}

/// Whether a written type says nothing of what the value is or holds
/// (`array`, `mixed`): a docblock's type says more.
pub(super) fn vague(written: &str) -> bool {
    matches!(
        written.trim_start_matches('?').to_ascii_lowercase().as_str(),
        "array" | "iterable" | "mixed" | "object" | "callable" | "array|null" | "iterable|null"
    )
}

/// The type of a docblock line `@TAG TYPE [$name]` (`@psalm-TAG` and
/// `@phpstan-TAG` alike), where `var` is the name given or no name is
/// given (`@param` always names one).
fn tagged(line: &str, tag: &str, var: Option<&str>) -> Option<String> {
    let rest = line.trim().strip_prefix('@')?;
    let rest = rest.strip_prefix("psalm-").or_else(|| rest.strip_prefix("phpstan-")).unwrap_or(rest);
    let rest = rest.strip_prefix(tag)?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    // The type runs to the first blank outside brackets.
    let mut depth = 0i32;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match c {
            '<' | '(' | '{' | '[' => depth += 1,
            '>' | ')' | '}' | ']' => depth -= 1,
            c if c.is_whitespace() && depth <= 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let (ty, after) = rest.split_at(end);
    let named = after.split_whitespace().next().map(|w| w.trim_start_matches("...").trim_start_matches('&'));
    let named = named.filter(|w| w.starts_with('$')).map(|w| w.trim_start_matches('$'));
    match (var.map(|v| v.trim_start_matches('$')), named) {
        (Some(v), Some(n)) if v != n => return None,
        (Some(_), None) if tag == "param" => return None,
        _ => {}
    }
    normal(ty).filter(|t| !vague(t))
}

/// A docblock type as [`crate::expr::TypeText`] reads it: namespaces
/// dropped (`\Monolog\Handler\Handler` → `Handler`), `non-empty-list<T>`
/// as `list<T>`; none for what names no type (`$this`, a literal).
fn normal(ty: &str) -> Option<String> {
    if ty.is_empty() || ty.len() > 200 || ty.starts_with(['$', '\'', '"']) {
        return None;
    }
    let mut out = String::with_capacity(ty.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let last = word.rsplit('\\').next().unwrap_or_default();
        out.push_str(match last {
            "non-empty-list" | "list" => "list",
            "non-empty-array" | "array" => "array",
            other => other,
        });
        word.clear();
    };
    for c in ty.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '\\' | '-') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docblock_types() {
        assert_eq!(tagged("@var HandlerInterface[]", "var", Some("handlers")), Some("HandlerInterface[]".into()));
        assert_eq!(
            tagged("@var list<\\Monolog\\Handler\\HandlerInterface> $handlers", "var", Some("handlers")),
            Some("list<HandlerInterface>".into())
        );
        assert_eq!(tagged("@var Item $other", "var", Some("$item")), None);
        assert_eq!(tagged("@var Item the one read", "var", Some("$item")), Some("Item".into()));
        assert_eq!(
            tagged("@param non-empty-array<string, Item> $items the items", "param", Some("$items")),
            Some("array<string, Item>".into())
        );
        assert_eq!(tagged("@param Item $items", "param", Some("$other")), None);
        assert_eq!(tagged("@param Item", "param", Some("$items")), None);
        assert_eq!(tagged("@phpstan-param Item|null ...$items", "param", Some("$items")), Some("Item|null".into()));
        assert_eq!(tagged("@variable Item", "var", None), None);
        assert_eq!(tagged("@var array", "var", None), None);
        assert_eq!(tagged("@var mixed", "var", None), None);
        assert_eq!(returned("Reads it.\n@return Item[] the items"), Some("Item[]".into()));
        assert_eq!(returned("@return $this"), None);
        assert_eq!(returned("@throws Oops"), None);
    }
}
