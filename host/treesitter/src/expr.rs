//! Expressions and written types as the resolver reads them, one language
//! family's syntax at a time being close enough to the next: a call's
//! receiver (`self.state().draw_target`, `Arg::new("x").short('f')`,
//! `await repo.find(id)`) read as [`Step`]s, and a written type
//! (`Option<&Arc<Mutex<State>>>`, `*orders.Order`, `Shape[] | undefined`)
//! read as its [`TypeText`] head and arguments.
//!
//! Both readers are partial by design: what they do not know (an operator,
//! a closure, a literal) makes them answer nothing, and the resolver then
//! makes no edge. Neither allocates more than the steps' vector.

/// One step of an expression, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The first name (`self`, `order`, `Order`, `fmt`).
    Name(&'a str),
    /// `new T(…)`: a value of type `T` (its last path segment).
    New(&'a str),
    /// `.f`, `->f`, or `::f` (`scoped`): a field, or a name in a type or
    /// namespace.
    Member {
        /// The name.
        name: &'a str,
        /// Written after `::`.
        scoped: bool,
    },
    /// `f(…)` as the first step, or `.f(…)` / `::f(…)` after one: a call,
    /// with its number of arguments.
    Call {
        /// The called name.
        name: &'a str,
        /// Arguments given.
        args: u32,
        /// Written after `::` (a type's or namespace's function).
        scoped: bool,
    },
    /// `?`, `!` (TypeScript's non-null), `.await`, `await …`: what a
    /// wrapper holds.
    Unwrap,
    /// `[…]`: an element of a collection.
    Index,
    /// `[a...]`, `[..<n]`, `[1..]`: a part of the same collection.
    Slice,
    /// `T { … }` right after the first name: Rust's struct literal.
    Literal,
    /// `.(T)` after a value: Go's type assertion, a value of type `T`.
    Cast(&'a str),
    /// `(…)` after a value that is not a name: a call of what the value
    /// is (a function pointer read off a field, `(vtable.drop)(p)`; what a
    /// call returned, `make(a)(b)`), with its number of arguments.
    Apply {
        /// Arguments given.
        args: u32,
    },
}

/// Built-in types a cast may name (`(long)number`, `(string)value`).
const PRIMITIVES: &[&str] = &[
    "long", "int", "short", "byte", "sbyte", "char", "float", "double", "bool", "boolean", "string", "decimal", "uint",
    "ulong", "ushort", "object",
];

/// The most steps an expression may have before it is not read.
const MAX_STEPS: usize = 32;
/// The longest expression read.
pub(crate) const MAX_LEN: usize = 4096;
/// The most parentheses (or union and tuple types) read inside each other.
const MAX_NESTING: u8 = 16;

/// The steps of `text`, or none when it holds something the resolver does
/// not read (an operator, a closure, a literal as the first step).
pub fn steps(text: &str) -> Option<Vec<Step<'_>>> {
    if text.len() > MAX_LEN {
        return None;
    }
    let mut out = Vec::new();
    read(text.as_bytes(), text, 0, &mut out, MAX_NESTING)?;
    Some(out)
}

fn read<'a>(b: &[u8], text: &'a str, mut i: usize, out: &mut Vec<Step<'a>>, nesting: u8) -> Option<usize> {
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    // Prefixes: borrows, derefs, `await`, Swift's `try`, `new`.
    let mut awaits = 0;
    loop {
        skip_ws(&mut i);
        if i < b.len() && matches!(b[i], b'&' | b'*') {
            i += 1;
        } else if let Some(rest) = keyword(b, i, "mut") {
            i = rest;
        } else if let Some(rest) = keyword(b, i, "await") {
            awaits += 1;
            i = rest;
        } else if let Some(rest) = ["try", "try?", "try!"].iter().find_map(|w| keyword(b, i, w)) {
            // Swift's `try`, `try?` and `try!`: the value tried (an
            // optional of it is read as it).
            i = rest;
        } else {
            break;
        }
    }
    skip_ws(&mut i);
    let start_len = out.len();
    if let Some(rest) = keyword(b, i, "new") {
        // `new a.b.Order(…)`: the type's last segment.
        let mut j = rest;
        skip_ws(&mut j);
        let last = loop {
            let (name, k) = ident(b, text, j)?;
            j = k;
            if b.get(j) == Some(&b'.') {
                j += 1;
            } else if b[j..].starts_with(b"::") {
                j += 2;
            } else {
                break name;
            }
        };
        j = skip_generics(b, j);
        if b.get(j) == Some(&b'(') {
            j = close(b, j)?.0;
        }
        out.push(Step::New(last));
        i = j;
    } else if let Some(open) = unsafe_block(b, i) {
        // Rust's `unsafe { … }` around one expression: its steps.
        i = enclosed(b, text, open, out, nesting)?;
    } else if b.get(i) == Some(&b'(') {
        // A parenthesised head: its own steps.
        i = enclosed(b, text, i, out, nesting)?;
        // A cast (`(JsonWriter) out`, `(Shape) shapes.get(0)`): a type's
        // name in parentheses, then the value cast: a value of that type.
        let mut j = i;
        skip_ws(&mut j);
        if let [Step::Name(t)] = out[start_len..]
            && (t.starts_with(|c: char| c.is_ascii_uppercase()) || PRIMITIVES.contains(&t))
            && b.get(j).is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'(')
        {
            let mut operand = Vec::new();
            let end = read(b, text, j, &mut operand, nesting.checked_sub(1)?)?;
            out.truncate(start_len);
            out.push(Step::New(t));
            return Some(end);
        }
    } else {
        let (name, j) = ident(b, text, i)?;
        i = j;
        let k = skip_generics_call(b, i);
        match b.get(k) {
            Some(b'(') => {
                let (end, args) = close(b, k)?;
                out.push(Step::Call { name, args, scoped: false });
                i = end;
            }
            Some(b'!') if b.get(k + 1).is_some_and(|c| matches!(c, b'(' | b'[')) => {
                // A Rust macro: a call to a name no type holds.
                let (end, args) = close(b, k + 1)?;
                out.push(Step::Call { name, args, scoped: false });
                i = end;
            }
            _ => {
                out.push(Step::Name(name));
                let mut k = i;
                skip_ws(&mut k);
                if b.get(k) == Some(&b'{') && name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push(Step::Literal);
                    i = close(b, k)?.0;
                }
            }
        }
    }
    // Postfix steps.
    loop {
        if out.len() > MAX_STEPS {
            return None;
        }
        skip_ws(&mut i);
        let Some(&c) = b.get(i) else { break };
        let scoped = b[i..].starts_with(b"::");
        let member_at = if scoped || b[i..].starts_with(b"->") || b[i..].starts_with(b"?.") {
            Some(i + 2)
        } else if c == b'.' {
            Some(i + 1)
        } else {
            None
        };
        if let Some(mut j) = member_at {
            skip_ws(&mut j);
            // Go's type assertion `.(*T)`, `.(pkg.T)`: a value of type T.
            if c == b'.' && b.get(j) == Some(&b'(') {
                let end = close(b, j)?.0;
                let inner = text.get(j + 1..end - 1)?.trim().trim_start_matches('*');
                let last = inner.rsplit('.').next().unwrap_or(inner);
                if last.is_empty() || !last.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                    return None;
                }
                out.push(Step::Cast(last));
                i = end;
                continue;
            }
            // `.await`.
            if let Some(rest) = keyword(b, j, "await") {
                out.push(Step::Unwrap);
                i = rest;
                continue;
            }
            // `::<T>(…)`: a turbofish before the call it types.
            if scoped && b.get(j) == Some(&b'<') {
                return None;
            }
            let (name, k) = ident(b, text, j).or_else(|| digits(b, text, j))?;
            let m = skip_generics_call(b, k);
            if b.get(m) == Some(&b'(') {
                let (end, args) = close(b, m)?;
                out.push(Step::Call { name, args, scoped });
                i = end;
            } else {
                out.push(Step::Member { name, scoped });
                i = k;
                // `ast::ClassSetUnion { … }`: a struct literal of a type
                // named through its module.
                let mut l = i;
                skip_ws(&mut l);
                if scoped && b.get(l) == Some(&b'{') && name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push(Step::Literal);
                    i = close(b, l)?.0;
                }
            }
            continue;
        }
        match c {
            b'?' | b'!' => {
                out.push(Step::Unwrap);
                i += 1;
            }
            b'[' => {
                let end = close(b, i)?.0;
                // `[start...]`, `[..<n]`, `[1..]`: a range gives a part of
                // the same collection, not an element.
                let range = b.get(i + 1..end.saturating_sub(1)).is_some_and(|r| r.windows(2).any(|w| w == b".."));
                out.push(if range { Step::Slice } else { Step::Index });
                i = end;
            }
            b'(' => {
                let (end, args) = close(b, i)?;
                out.push(Step::Apply { args });
                i = end;
            }
            _ => break,
        }
    }
    // A cast after the value (`x as? T`, `x as! T`, `x as T`: Swift,
    // Kotlin, TypeScript, C#, Rust): a value of type `T`.
    let mut k = i;
    skip_ws(&mut k);
    if k > 0
        && b[k - 1].is_ascii_whitespace()
        && out.len() > start_len
        && let Some(rest) = cast_keyword(b, k)
    {
        let ty = text.get(rest..b.len())?.trim().trim_end_matches(['?', '!']);
        let head = ty.split('<').next().unwrap_or(ty).trim();
        let last = head.rsplit(['.', ':']).next().unwrap_or(head);
        let is_name = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        let generics_closed = ty.find('<').is_none_or(|_| ty.ends_with('>'));
        if !is_name(last) || !generics_closed || !head.bytes().all(|c| c.is_ascii_alphanumeric() || b"_.:".contains(&c))
        {
            return None;
        }
        out.push(Step::Cast(last));
        i = b.len();
    }
    if out.len() == start_len {
        return None;
    }
    out.extend(std::iter::repeat_n(Step::Unwrap, awaits));
    skip_ws(&mut i);
    (i == b.len()).then_some(i)
}

/// `as`, `as?` or `as!` at `i`, followed by a space: the index after it.
fn cast_keyword(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i..i + 2)? != b"as" {
        return None;
    }
    let j = if matches!(b.get(i + 2), Some(b'?' | b'!')) { i + 3 } else { i + 2 };
    b.get(j).is_some_and(|c| c.is_ascii_whitespace()).then_some(j)
}

/// `word` at `i` as a whole word followed by a space (or, for `await` and
/// `mut`, by anything that is not part of a name): the index after it.
fn keyword(b: &[u8], i: usize, word: &str) -> Option<usize> {
    let end = i + word.len();
    (b.get(i..end)? == word.as_bytes() && b.get(end).is_some_and(|c| c.is_ascii_whitespace())).then_some(end)
}

/// The steps of the one expression between the bracket at `open` and the
/// one that closes it: the index after that one.
fn enclosed<'a>(b: &[u8], text: &'a str, open: usize, out: &mut Vec<Step<'a>>, nesting: u8) -> Option<usize> {
    let inner_end = close(b, open)?.0;
    let mut end = read(&b[..inner_end - 1], text, open + 1, out, nesting.checked_sub(1)?)?;
    while b.get(end).is_some_and(|c| c.is_ascii_whitespace()) {
        end += 1;
    }
    (end == inner_end - 1).then_some(inner_end)
}

/// Rust's `unsafe {` at `i`: the index of its `{`.
fn unsafe_block(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + "unsafe".len();
    if b.get(i..j)? != b"unsafe" {
        return None;
    }
    while b.get(j).is_some_and(|c| c.is_ascii_whitespace()) {
        j += 1;
    }
    (b.get(j) == Some(&b'{')).then_some(j)
}

fn ident<'a>(b: &[u8], text: &'a str, i: usize) -> Option<(&'a str, usize)> {
    let start = i;
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'$') || b[j] >= 0x80) {
        j += 1;
    }
    (j > start && !b[start].is_ascii_digit()).then(|| (&text[start..j], j))
}

/// A tuple field (`.0`).
fn digits<'a>(b: &[u8], text: &'a str, i: usize) -> Option<(&'a str, usize)> {
    let mut j = i;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    (j > i).then(|| (&text[i..j], j))
}

/// Past generic arguments written right after a name (`<T>`), when what
/// follows them is a call; else `i` unchanged.
fn skip_generics_call(b: &[u8], i: usize) -> usize {
    let k = if b[i..].starts_with(b"::<") { i + 2 } else { i };
    if b.get(k) != Some(&b'<') {
        return i;
    }
    match close(b, k) {
        Some((end, _)) if b.get(end) == Some(&b'(') => end,
        _ => i,
    }
}

/// Past generic arguments (`<T>`), if any.
fn skip_generics(b: &[u8], i: usize) -> usize {
    if b.get(i) == Some(&b'<') { close(b, i).map_or(i, |(end, _)| end) } else { i }
}

/// From an opening bracket at `i`: the index past its match, and how many
/// items it holds (commas at its own depth; 0 when empty). String and
/// character literals are skipped whole; a `<` that is never closed was a
/// comparison, and a `>` that closes nothing (`a > b`, `=>`, `->`) is not a
/// bracket.
fn close(b: &[u8], i: usize) -> Option<(usize, u32)> {
    let mut open: Vec<u8> = Vec::new();
    let mut items = 0u32;
    let mut empty = true;
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        match c {
            b'(' | b'[' | b'{' => open.push(c),
            // Generics follow a name or `::` (`Vec::<u8>`); a comparison
            // is written with a space (`a < b`).
            b'<' if j == i || b[j - 1].is_ascii_alphanumeric() || matches!(b[j - 1], b'_' | b':') => open.push(c),
            b'>' if open.last() == Some(&b'<') => {
                open.pop();
            }
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                while open.last() == Some(&b'<') {
                    open.pop();
                }
                if open.pop()? != want {
                    return None;
                }
            }
            b'"' | b'`' | b'\'' => {
                j = string_end(b, j, c)?;
                empty = false;
                continue;
            }
            b',' if open.len() == 1 => items += 1,
            _ => {}
        }
        if open.is_empty() {
            return Some((j + 1, if empty { 0 } else { items + 1 }));
        }
        if j > i && !c.is_ascii_whitespace() {
            empty = false;
        }
        j += 1;
    }
    None
}

/// Past a string literal opened by `quote` at `i`.
fn string_end(b: &[u8], i: usize, quote: u8) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == quote => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// A written type: its head's name, the path segment before it, and its
/// arguments as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeText<'a> {
    /// The head's last segment (`Arc`, `Order`, `Self`), or `[]` for an
    /// array or slice and `map` for Go's maps.
    pub head: &'a str,
    /// The segment before it (`orders` in `orders.Order`).
    pub qualifier: Option<&'a str>,
    /// Its arguments (`Mutex<State>` of `Arc<Mutex<State>>`; an array's
    /// element; a map's key and value).
    pub args: Vec<&'a str>,
}

impl<'a> TypeText<'a> {
    /// Reads `text`; none when it is not a type this reader knows.
    pub fn parse(text: &'a str) -> Option<TypeText<'a>> {
        TypeText::parse_within(text, MAX_NESTING)
    }

    fn parse_within(text: &'a str, nesting: u8) -> Option<TypeText<'a>> {
        if text.len() > MAX_LEN {
            return None;
        }
        let nesting = nesting.checked_sub(1)?;
        let mut t = text.trim();
        // Annotations and prefixes that do not change what the value is.
        loop {
            let before = t;
            // `?Item`: PHP's nullable type.
            t = t.trim_start_matches([':', '&', '*', ' ', '?']).trim_start_matches("->").trim_start();
            if t.starts_with('\'') {
                // A lifetime.
                t = t[1..].trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
            }
            // Swift's existential and opaque types (`any P`, `some P`).
            for kw in
                ["mut ", "dyn ", "impl ", "const ", "readonly ", "ref ", "final ", "struct ", "class ", "any ", "some "]
            {
                if let Some(rest) = t.strip_prefix(kw) {
                    t = rest;
                }
            }
            if t == before {
                break;
            }
        }
        // A nullable type (`Shape?`), a Python forward reference ("Shape").
        t = t.trim_end_matches('?').trim_matches(['"', '\'']).trim();
        // A union with null (`Shape | undefined`): the other member.
        let union = split_top(t, b'|');
        if union.len() > 1 {
            let mut members =
                union.into_iter().map(str::trim).filter(|m| !matches!(*m, "undefined" | "null" | "None" | "void"));
            let one = members.next()?;
            if members.next().is_some() {
                return None;
            }
            return TypeText::parse_within(one, nesting);
        }
        // Several results (Go's `(*Order, error)`): the first.
        if let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            return TypeText::parse_within(split_top(inner, b',').first()?, nesting);
        }
        // `Shape[]`.
        if let Some(elem) = t.strip_suffix("[]") {
            return Some(TypeText { head: "[]", qualifier: None, args: vec![elem] });
        }
        // `[Shape]`, `[Shape; 4]`, Go's `[]Shape` and `[4]Shape`.
        if let Some(rest) = t.strip_prefix('[') {
            let close = rest.find(']')?;
            let elem = if close + 1 < rest.len() { &rest[close + 1..] } else { rest[..close].split(';').next()? };
            return Some(TypeText { head: "[]", qualifier: None, args: vec![elem.trim()] });
        }
        // Go's `map[K]V`.
        if let Some(rest) = t.strip_prefix("map[") {
            let close = rest.find(']')?;
            return Some(TypeText { head: "map", qualifier: None, args: vec![&rest[..close], &rest[close + 1..]] });
        }
        let open = t.find(['<', '[']).unwrap_or(t.len());
        let path = t[..open].trim();
        let args = if open < t.len() {
            let closing = if t.as_bytes()[open] == b'<' { '>' } else { ']' };
            let inner = t[open + 1..].trim_end().strip_suffix(closing)?;
            split_top(inner, b',').into_iter().map(str::trim).collect()
        } else {
            Vec::new()
        };
        let mut segments = path.rsplit(['.', ':']).filter(|s| !s.is_empty());
        let head = segments.next()?;
        if !head.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return None;
        }
        Some(TypeText { head, qualifier: segments.next(), args })
    }
}

/// `text` split at `sep` where no bracket is open.
pub(crate) fn split_top(text: &str, sep: u8) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::Step::*;
    use super::*;

    #[test]
    fn receivers_read_as_steps() {
        assert_eq!(
            steps("self.state().draw_target"),
            Some(vec![
                Name("self"),
                Call { name: "state", args: 0, scoped: false },
                Member { name: "draw_target", scoped: false }
            ])
        );
        assert_eq!(
            steps("Arg::new(\"a, (b\").short('f')\n  .long(\"x\")"),
            Some(vec![
                Name("Arg"),
                Call { name: "new", args: 1, scoped: true },
                Call { name: "short", args: 1, scoped: false },
                Call { name: "long", args: 1, scoped: false }
            ])
        );
        assert_eq!(
            steps("state.write().unwrap()"),
            Some(vec![
                Name("state"),
                Call { name: "write", args: 0, scoped: false },
                Call { name: "unwrap", args: 0, scoped: false }
            ])
        );
        assert_eq!(
            steps("await repo.find(id, 2)"),
            Some(vec![Name("repo"), Call { name: "find", args: 2, scoped: false }, Unwrap])
        );
        assert_eq!(
            steps("try? urlRequest.asURLRequest()"),
            Some(vec![Name("urlRequest"), Call { name: "asURLRequest", args: 0, scoped: false }])
        );
        assert_eq!(steps("tryParse(x)"), Some(vec![Call { name: "tryParse", args: 1, scoped: false }]));
        assert_eq!(
            steps("(*self).items[i]?"),
            Some(vec![Name("self"), Member { name: "items", scoped: false }, Index, Unwrap])
        );
        assert_eq!(
            steps("new shapes.Square(2).area"),
            Some(vec![New("Square"), Member { name: "area", scoped: false }])
        );
        assert_eq!(steps("make::<u8>(a < b, |x| x.0)"), Some(vec![Call { name: "make", args: 2, scoped: false }]));
        assert_eq!(steps("Point { x: 1, y: 2 }"), Some(vec![Name("Point"), Literal]));
        assert_eq!(
            steps("(vtable(e.ptr).object_ref)(e)"),
            Some(vec![
                Call { name: "vtable", args: 1, scoped: false },
                Member { name: "object_ref", scoped: false },
                Apply { args: 1 }
            ])
        );
        assert_eq!(
            steps("unsafe { this.deref() }.backtrace"),
            Some(vec![
                Name("this"),
                Call { name: "deref", args: 0, scoped: false },
                Member { name: "backtrace", scoped: false }
            ])
        );
        assert_eq!(steps("unsafe { a; b }"), None);
        assert_eq!(
            steps("to_thenable(f)(input, 2)"),
            Some(vec![Call { name: "to_thenable", args: 1, scoped: false }, Apply { args: 2 }])
        );
        assert_eq!(
            steps("ast::ClassSetUnion { span: s, items: vec![] }"),
            Some(vec![Name("ast"), Member { name: "ClassSetUnion", scoped: true }, Literal])
        );
        // A block after a value's field is no literal.
        assert_eq!(steps("a::b {"), None);
        assert_eq!(
            steps("s->next->value"),
            Some(vec![Name("s"), Member { name: "next", scoped: false }, Member { name: "value", scoped: false }])
        );
        assert_eq!(
            steps("x.0.name"),
            Some(vec![Name("x"), Member { name: "0", scoped: false }, Member { name: "name", scoped: false }])
        );
        assert_eq!(
            steps("vec![1, 2].len"),
            Some(vec![Call { name: "vec", args: 2, scoped: false }, Member { name: "len", scoped: false }])
        );
        // A cast: a value of the type cast to (Swift, Kotlin, TypeScript, C#).
        assert_eq!(
            steps("child.value as? ArgumentSetProvider"),
            Some(vec![Name("child"), Member { name: "value", scoped: false }, Cast("ArgumentSetProvider")])
        );
        assert_eq!(steps("x as! Shop.Item<T>"), Some(vec![Name("x"), Cast("Item")]));
        assert_eq!(
            steps("(node as Element).tagName"),
            Some(vec![Name("node"), Cast("Element"), Member { name: "tagName", scoped: false }])
        );
        assert_eq!(steps("asset"), Some(vec![Name("asset")]));
    }

    #[test]
    fn what_is_not_read_is_none() {
        for text in [
            "a + b",
            "|x| x",
            "\"lit\"",
            "1",
            "a.b(",
            "(a",
            "a)",
            "",
            "a b",
            "x as [Y]",
            "x as Y + 1",
            "a.b(\"unclosed)",
        ] {
            assert_eq!(steps(text), None, "{text}");
        }
        assert_eq!(steps(&"a.b()".repeat(40).replace(")a", ").a")), None);
        assert_eq!(steps(&"(".repeat(5000)), None);
        // Nesting deeper than a person writes is not read (and costs no
        // deep recursion).
        let deep = format!("{}x{}", "(".repeat(2000), ")".repeat(2000));
        assert_eq!(steps(&deep), None);
        assert_eq!(steps("((x)).y"), Some(vec![Name("x"), Member { name: "y", scoped: false }]));
    }

    /// Any text at all: an answer or none, never a panic or a hang.
    #[test]
    fn hostile_text_is_read_or_refused() {
        let alphabet: Vec<char> = "ab_:.()<>[]{}?!&*'\"`\\,|= -0é\u{1F600}\n".chars().collect();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..2000usize {
            let text: String = (0..len % 61)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = steps(&text);
            let _ = TypeText::parse(&text);
        }
    }

    #[test]
    fn written_types_read_as_head_and_arguments() {
        let t = |s| TypeText::parse(s);
        let of = |head, qualifier, args: Vec<&'static str>| Some(TypeText { head, qualifier, args });
        assert_eq!(t("Option<&Arc<Mutex<State>>>"), of("Option", None, vec!["&Arc<Mutex<State>>"]));
        assert_eq!(t("&'a mut Self"), of("Self", None, vec![]));
        assert_eq!(t("*orders.Order"), of("Order", Some("orders"), vec![]));
        assert_eq!(t("(*Order, error)"), of("Order", None, vec![]));
        assert_eq!(t(": Promise<Shape>"), of("Promise", None, vec!["Shape"]));
        assert_eq!(t("Shape | undefined"), of("Shape", None, vec![]));
        assert_eq!(t("any URLRequestConvertible"), of("URLRequestConvertible", None, vec![]));
        assert_eq!(t("Shape[]"), of("[]", None, vec!["Shape"]));
        assert_eq!(t("&[Box<dyn Shape>]"), of("[]", None, vec!["Box<dyn Shape>"]));
        assert_eq!(t("[]*Item"), of("[]", None, vec!["*Item"]));
        assert_eq!(t("map[string]*Item"), of("map", None, vec!["string", "*Item"]));
        assert_eq!(t("Optional[\"Shape\"]"), of("Optional", None, vec!["\"Shape\""]));
        assert_eq!(t("crate::builder::Arg"), of("Arg", Some("builder"), vec![]));
        assert_eq!(t("HashMap<Id, Vec<Arg>>"), of("HashMap", None, vec!["Id", "Vec<Arg>"]));
        assert_eq!(t("impl Iterator<Item = &Arg>"), of("Iterator", None, vec!["Item = &Arg"]));
        assert_eq!(t("Shape | Square"), None);
        assert_eq!(t("Promise<Item | undefined>"), of("Promise", None, vec!["Item | undefined"]));
        assert_eq!(t("((Item))"), of("Item", None, vec![]));
        let deep = format!("{}Item{}", "(".repeat(2000), ")".repeat(2000));
        assert_eq!(t(&deep), None);
        assert_eq!(t("fn(u8) -> u8"), None);
    }
}
