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
    fn lone_carriage_returns_become_line_feeds() {
        let lang = crate::languages::by_name("java").expect("java");
        assert_eq!(&*prepare(lang, b"a\rb\r\nc\r"), b"a\nb\r\nc\n");
        assert!(matches!(prepare(lang, b"a\r\nb\n"), Cow::Borrowed(_)));
    }
}
