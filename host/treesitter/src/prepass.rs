//! Text rewritten before it is parsed, byte for byte the same length (so
//! every position, line and column stays what it is in the file), where a
//! grammar would otherwise misread a whole declaration:
//!
//! - a lone CR (classic Mac line ends) becomes an LF: tree-sitter counts
//!   rows at LF only, and every symbol of such a file would be on line 1;
//! - in C and C++, the export, visibility and inline macros written before
//!   a name become spaces: `class SPDLOG_API logger : public base` reads to
//!   the grammar as a class named `SPDLOG_API` followed by an error, and
//!   `SPDLOG_INLINE void logger::flush()` as a declaration of type
//!   `SPDLOG_INLINE`; without the macro, both are what the compiler sees
//!   once the preprocessor has run (the macro expands to an attribute or
//!   to nothing).
//!
//! And, for a C or C++ file the grammar could not read whole, a second
//! reading without its conditional directives ([`unconditional`]): a
//! conditional that opens a brace another one closes (`#ifdef USE_DECNUM
//! … } else { #endif … #ifdef USE_DECNUM } #endif`) is no syntax to a
//! grammar that parses each conditional as a block of its own, while the
//! code between them is.

use std::borrow::Cow;

use crate::languages::Lang;

/// The text to parse for a file of `lang`.
pub fn prepare<'t>(lang: &Lang, text: &'t [u8]) -> Cow<'t, [u8]> {
    let mut out = Cow::Borrowed(text);
    if memchr::memchr_iter(b'\r', text).any(|i| text.get(i + 1) != Some(&b'\n')) {
        let owned = out.to_mut();
        for i in memchr::memchr_iter(b'\r', text) {
            if text.get(i + 1) != Some(&b'\n') {
                owned[i] = b'\n';
            }
        }
    }
    if lang.name == "cpp" {
        let spans = decoration_macros(&out);
        if !spans.is_empty() {
            let owned = out.to_mut();
            for (a, b) in spans {
                owned[a..b].fill(b' ');
            }
        }
    }
    out
}

/// Suffixes of the macros C and C++ libraries put before a declaration's
/// name to export it, set its visibility, or inline it.
const SUFFIXES: &[&str] = &[
    "_API",
    "_EXPORT",
    "_EXPORTS",
    "_IMPORT",
    "_INLINE",
    "_FORCE_INLINE",
    "_FORCEINLINE",
    "_NOINLINE",
    "_DLL",
    "_DLLEXPORT",
    "_DECL",
    "_EXTERN",
    "_VISIBLE",
    "_VISIBILITY",
    "_PUBLIC",
    "_HIDDEN",
    "_LOCAL",
    "_NODISCARD",
    "_CONSTEXPR",
    "_CONSTEXPR20",
    "_NOEXCEPT",
    "_NORETURN",
    "_ALWAYS_INLINE",
];

/// The byte ranges of decoration macros in C or C++ text: an identifier in
/// capitals that ends in one of [`SUFFIXES`] and is not called (no `(`
/// after it), or one in capitals between `class`, `struct` or `union` and
/// the type's name.
fn decoration_macros(text: &[u8]) -> Vec<(usize, usize)> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut prev_word: (usize, usize) = (0, 0);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if !(b.is_ascii_alphabetic() || b == b'_') || (i > 0 && ident(text[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < text.len() && ident(text[i]) {
            i += 1;
        }
        let word = &text[start..i];
        let capitals = word.len() >= 3
            && word.iter().all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
            && word.iter().any(u8::is_ascii_uppercase);
        if capitals {
            let after = text[i..].iter().position(|c| !c.is_ascii_whitespace()).map_or(text.len(), |k| i + k);
            let called = text.get(after) == Some(&b'(');
            let suffixed = SUFFIXES.iter().any(|s| word.ends_with(s.as_bytes()));
            let head = &text[prev_word.0..prev_word.1];
            let before_name = matches!(head, b"class" | b"struct" | b"union")
                && text.get(after).is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_');
            if (suffixed && !called) || before_name {
                out.push((start, i));
            }
        }
        prev_word = (start, i);
    }
    out
}

/// A range of bytes made spaces.
pub type Blanked = (usize, usize);

/// The text with its conditional directives made spaces, same length, line
/// ends kept: every branch's code read in sequence, as if each condition
/// held, but `#if 0`'s (dead code, often not code at all). None when the
/// text has no conditional. With it, the ranges of lines made spaces (for
/// an incremental parse: every other byte is where it was).
pub fn unconditional(text: &[u8]) -> Option<(Vec<u8>, Vec<Blanked>)> {
    let mut out = text.to_vec();
    let mut blanked: Vec<Blanked> = Vec::new();
    // Per open conditional: whether its branch being read is dead (`#if 0`).
    let mut open: Vec<bool> = Vec::new();
    let mut any = false;
    let mut at = 0;
    while at < text.len() {
        let end = line_end(text, at);
        let line = &text[at..end];
        let directive = directive_of(line);
        let dead_before = open.iter().any(|&d| d);
        match directive {
            Some(d @ (b"if" | b"ifdef" | b"ifndef")) => {
                let cond = &line.trim_ascii_start()[1..];
                let cond = &cond.trim_ascii_start()[d.len()..];
                open.push(d == b"if" && is_zero(cond));
            }
            Some(b"elif" | b"elifdef" | b"elifndef" | b"else") => {
                if let Some(o) = open.last_mut() {
                    *o = false;
                }
            }
            Some(b"endif") => {
                open.pop();
            }
            _ => {}
        }
        let conditional = matches!(
            directive,
            Some(b"if" | b"ifdef" | b"ifndef" | b"elif" | b"elifdef" | b"elifndef" | b"else" | b"endif")
        );
        any |= conditional;
        // A directive continues over lines ending in `\`.
        let mut stop = end;
        if directive.is_some() {
            while stop < text.len() && text[..stop].trim_ascii_end().ends_with(b"\\") {
                stop = line_end(text, stop + 1);
            }
        }
        if conditional || (dead_before && open.iter().any(|&d| d)) {
            for b in &mut out[at..stop] {
                if *b != b'\n' && *b != b'\r' {
                    *b = b' ';
                }
            }
            match blanked.last_mut() {
                Some(last) if last.1 + 1 >= at => last.1 = stop,
                _ => blanked.push((at, stop)),
            }
        }
        at = stop + 1;
    }
    any.then_some((out, blanked))
}

/// A Kotlin file the grammar could not read whole, laid out the way it
/// reads it: same length, same lines, every name where it was. None when
/// nothing was moved. Two layouts the Kotlin grammar misreads, both legal
/// and common:
///
/// - a body on its header's line (`class A { val x = 1 }`, `enum class D
///   { A, B; fun f() = 1 }`, `class A { init { f() } }`): the grammar ends
///   a member at a line end or a `;` only, and without one it reads the
///   rest of the file as an error. The space before each closing brace of
///   such a line whose member is not ended becomes a `;`.
/// - a primary constructor on the line after its class's header (`class
///   Nested` then `internal constructor(val b: Int) {`, a formatter's
///   default for a long one): the grammar takes the header for a class
///   without a body and drops the class around it. The header's line end
///   moves to a space in the constructor's parameter list (or before its
///   body), where a line end means nothing.
pub fn kotlin_layout(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = text.to_vec();
    let mut moved = false;
    let mut at = 0;
    while at < text.len() {
        let end = line_end(text, at);
        let line = &text[at..end];
        moved |= one_line_body(line, &mut out[at..end]);
        if end < text.len()
            && is_bare_class_header(line)
            && let Some(space) = constructor_space(text, end + 1)
        {
            out[end] = b' ';
            out[space] = b'\n';
            moved = true;
        }
        at = end + 1;
    }
    moved.then_some(out)
}

/// On a declaration's line with its body (`class A { val x = 1 }`), each
/// space before a `}` that closes an unended member made a `;`. Lines with
/// a quote are left alone (a brace in a string or a template).
fn one_line_body(line: &[u8], out: &mut [u8]) -> bool {
    let code = memchr::memmem::find(line, b"//").map_or(line, |i| &line[..i]);
    let Some(open) = memchr::memchr(b'{', code) else { return false };
    if code.iter().any(|b| matches!(b, b'"' | b'\'' | b'`'))
        || !words(&code[..open]).any(|w| matches!(w, b"class" | b"interface" | b"object"))
    {
        return false;
    }
    let mut moved = false;
    for i in open + 2..code.len() {
        if code[i] != b'}' || code[i - 1] != b' ' {
            continue;
        }
        let before = code[..i - 1].iter().rposition(|b| !b.is_ascii_whitespace());
        if before.is_some_and(|j| !matches!(code[j], b'{' | b';')) {
            out[i - 1] = b';';
            moved = true;
        }
    }
    moved
}

/// The identifier-like words of some code.
fn words(code: &[u8]) -> impl Iterator<Item = &[u8]> {
    code.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).filter(|w| !w.is_empty())
}

/// Modifiers a Kotlin declaration may carry.
pub(crate) const KOTLIN_MODIFIERS: &[&[u8]] = &[
    b"public",
    b"private",
    b"internal",
    b"protected",
    b"open",
    b"abstract",
    b"sealed",
    b"data",
    b"inner",
    b"enum",
    b"annotation",
    b"value",
    b"final",
    b"expect",
    b"actual",
    b"inline",
];

/// Skips annotations (`@Inject`, `@Suppress("x")`) and modifiers; the rest.
fn after_modifiers(mut s: &[u8]) -> &[u8] {
    loop {
        s = s.trim_ascii_start();
        if let Some(rest) = s.strip_prefix(b"@") {
            let name = rest.iter().position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':')));
            let rest = &rest[name.unwrap_or(rest.len())..];
            s = match rest.strip_prefix(b"(") {
                Some(args) => match args.iter().position(|&b| b == b')') {
                    Some(close) => &args[close + 1..],
                    None => return s,
                },
                None => rest,
            };
            continue;
        }
        let word = s.iter().position(|b| !b.is_ascii_alphanumeric()).unwrap_or(s.len());
        if word > 0 && KOTLIN_MODIFIERS.contains(&&s[..word]) {
            s = &s[word..];
            continue;
        }
        return s;
    }
}

/// `class Name` or `class Name<T>` and nothing more on the line.
fn is_bare_class_header(line: &[u8]) -> bool {
    let Some(rest) = after_modifiers(line).strip_prefix(b"class") else { return false };
    if !rest.first().is_some_and(u8::is_ascii_whitespace) {
        return false;
    }
    let rest = rest.trim_ascii_start();
    let name = rest.iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).unwrap_or(rest.len());
    let mut tail = &rest[name..];
    if name == 0 {
        return false;
    }
    if tail.first() == Some(&b'<') {
        match tail.iter().position(|&b| b == b'>') {
            Some(close) => tail = &tail[close + 1..],
            None => return false,
        }
    }
    tail.trim_ascii().is_empty()
}

/// Where the line at `at` is a primary constructor (`@Inject internal
/// constructor(`), a space a line end can take: the first after a `,` or a
/// `:` in its parameter list, or the one before the body's `{` on the line
/// its list closes.
fn constructor_space(text: &[u8], at: usize) -> Option<usize> {
    let line = &text[at..line_end(text, at)];
    let rest = after_modifiers(line).strip_prefix(b"constructor")?.trim_ascii_start();
    if rest.first() != Some(&b'(') {
        return None;
    }
    let open = at + (line.len() - rest.len());
    let mut depth = 0usize;
    for i in open..text.len() {
        match text[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    let close_line = &text[i..line_end(text, i)];
                    let brace = memchr::memchr(b'{', close_line)?;
                    return (brace > 0 && close_line[brace - 1] == b' ').then_some(i + brace - 1);
                }
            }
            b' ' if depth == 1 && matches!(text[i - 1], b',' | b':') => return Some(i),
            b'"' | b'\'' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// Where the line starting at `at` ends (its `\n`, or the text's end).
fn line_end(text: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i)
}

/// A preprocessor line's directive (`if`, `ifdef`, `endif`…).
fn directive_of(line: &[u8]) -> Option<&[u8]> {
    let rest = line.trim_ascii_start().strip_prefix(b"#")?.trim_ascii_start();
    let n = rest.iter().position(|c| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
    Some(&rest[..n]).filter(|d| !d.is_empty())
}

/// Whether an `#if`'s condition is a literal `0` or `false` (`#if 0`, `#if (0)`,
/// C#'s `#if false`).
fn is_zero(condition: &[u8]) -> bool {
    let c: Vec<u8> =
        condition.iter().copied().filter(|c| !c.is_ascii_whitespace() && !matches!(c, b'(' | b')')).collect();
    // C's `#if 0`, C#'s `#if false`.
    c == b"0" || c == b"false"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpp(text: &str) -> String {
        let lang = crate::languages::by_name("cpp").expect("cpp");
        String::from_utf8(prepare(lang, text.as_bytes()).into_owned()).expect("utf-8")
    }

    #[test]
    fn export_and_inline_macros_become_spaces_of_the_same_length() {
        let text = "class SPDLOG_API logger : public base {};\nSPDLOG_INLINE void logger::flush() {}\n";
        let out = cpp(text);
        assert_eq!(out.len(), text.len());
        assert_eq!(out, "class            logger : public base {};\n              void logger::flush() {}\n");
        // A macro that is called, a type in capitals, a constant: kept.
        for kept in ["FMT_DEPRECATED_API(\"x\") void f();", "MY_TYPE x = MAX_SIZE;", "class FOO;", "struct RGB {};"] {
            assert_eq!(cpp(kept), kept);
        }
        assert_eq!(cpp("struct LIB_EXPORT Point { int x; };"), "struct            Point { int x; };");
    }

    #[test]
    fn unconditional_text_keeps_every_branch_but_dead_code_and_the_length() {
        let text = "int f(void) {\n#ifdef DEC\n  if (a) {\n    g();\n  } else {\n#endif\n    h();\n#ifdef DEC\n  }\n#endif\n}\n#if 0\nint dead(void) { return 0; }\n#else\nint live(void) { return 1; }\n#endif\n#if A\nint a;\n#elif B \\\n  && C\nint b;\n#endif\n";
        let (out, blanked) = unconditional(text.as_bytes()).expect("conditionals");
        // Outside the ranges it gives, the text is what it was.
        let mut outside = text.as_bytes().to_vec();
        for &(a, b) in &blanked {
            outside[a..b].copy_from_slice(&out[a..b]);
        }
        assert_eq!(outside, out);
        let out = String::from_utf8(out).expect("utf-8");
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        // Both halves of the brace kept, the directives (and their continued lines) gone.
        assert!(out.contains("  } else {") && out.contains("    h();") && !out.contains('#'), "{out}");
        assert!(!out.contains("&& C"), "{out}");
        // `#if 0`'s branch skipped; every other branch kept.
        assert!(!out.contains("dead") && out.contains("live"), "{out}");
        assert!(out.contains("int a;") && out.contains("int b;"), "{out}");
        assert!(unconditional(b"int x;\n#define Y 1\n").is_none());
    }

    #[test]
    fn lone_carriage_returns_become_line_feeds() {
        let lang = crate::languages::by_name("java").expect("java");
        assert_eq!(&*prepare(lang, b"a\rb\r\nc\r"), b"a\nb\r\nc\n");
        assert!(matches!(prepare(lang, b"a\r\nb\n"), Cow::Borrowed(_)));
    }
    #[test]
    fn kotlin_layouts_the_grammar_misreads_keep_length_and_lines() {
        let text = "class A { val x = 1 }\nenum class D { A, B; fun f() = 1 }\nclass P { companion object { fun of() = P() } }\nval s = \"class Q { x }\"\nfun g() { h() }\nclass E {}\n";
        let out = String::from_utf8(kotlin_layout(text.as_bytes()).expect("moved")).expect("utf-8");
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        assert!(out.starts_with("class A { val x = 1;}\nenum class D { A, B; fun f() = 1;}\nclass P { companion object { fun of() = P();};}\n"), "{out}");
        // A string, a function's body, an empty body: as they were.
        assert!(out.ends_with("val s = \"class Q { x }\"\nfun g() { h() }\nclass E {}\n"), "{out}");
        let text = "class Outer {\n  @Keep class Nested<T>\n  @Inject internal constructor(val b: Int, c: T) : Base(b) {\n    fun inner() = 1\n  }\n  class Bare\n  constructor(val b: Int)\n  class Empty\n  constructor() {\n  }\n}\n";
        let out = String::from_utf8(kotlin_layout(text.as_bytes()).expect("moved")).expect("utf-8");
        assert_eq!((out.len(), out.lines().count()), (text.len(), text.lines().count()));
        assert!(
            out.contains("@Keep class Nested<T>   @Inject internal constructor(val b:\nInt, c: T) : Base(b) {"),
            "{out}"
        );
        assert!(out.contains("class Bare   constructor(val b:\nInt)"), "{out}");
        assert!(out.contains("class Empty   constructor()\n{"), "{out}");
        assert!(kotlin_layout(b"class A {\n  val x = 1\n}\nclass B(val a: Int)\n").is_none());
    }
}
