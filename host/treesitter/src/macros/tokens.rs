//! Rust's tokens, as far as matching macros needs them.

use super::*;

/// The file's tokens: comments and whitespace left out (noted on the token
/// after them), strings and characters as one literal each, `=>`, `::`
/// and `->` as one punctuation each. An unbalanced closer is dropped, so
/// groups always nest.
pub(super) fn tokens(src: &[u8]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
    let mut space = true;
    let n = src.len();
    let tok = |kind, a, b, space| Piece { kind, text: Text::Src(a, b), space, origin: (a, b), exact: true };
    while i < n {
        let c = src[i];
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        if c == b'/' && src.get(i + 1) == Some(&b'/') {
            i = memchr::memchr(b'\n', &src[i..]).map_or(n, |k| i + k);
            space = true;
            continue;
        }
        if c == b'/' && src.get(i + 1) == Some(&b'*') {
            let mut depth = 0usize;
            while i < n {
                if src[i] == b'/' && src.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if src[i] == b'*' && src.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            space = true;
            continue;
        }
        let start = i;
        let kind;
        if let Some(end) = string_end(src, i) {
            i = end;
            kind = Tk::Literal;
        } else if c == b'\'' {
            // A character, or a lifetime (`'a` not closed by a quote).
            if src.get(i + 1) == Some(&b'\\') {
                // Past the escaped character (`'\''`).
                i += 3;
                while i < n && src[i] != b'\'' {
                    i += 1;
                }
                i = (i + 1).min(n);
                kind = Tk::Literal;
            } else {
                let ch = std::str::from_utf8(&src[i + 1..n.min(i + 5)])
                    .or_else(|e| std::str::from_utf8(&src[i + 1..i + 1 + e.valid_up_to()]))
                    .ok()
                    .and_then(|s| s.chars().next());
                let len = ch.map_or(1, char::len_utf8);
                if src.get(i + 1 + len) == Some(&b'\'') {
                    i += 2 + len;
                    kind = Tk::Literal;
                } else {
                    i += 1;
                    while i < n && is_word(src[i]) {
                        i += 1;
                    }
                    kind = Tk::Lifetime;
                }
            }
        } else if c.is_ascii_digit() {
            while i < n && (is_word(src[i]) || (src[i] == b'.' && src.get(i + 1).is_some_and(u8::is_ascii_digit))) {
                i += 1;
            }
            kind = Tk::Literal;
        } else if is_word(c) {
            while i < n && is_word(src[i]) {
                i += 1;
            }
            // `r#ident`
            if &src[start..i] == b"r" && src.get(i) == Some(&b'#') && src.get(i + 1).is_some_and(|&b| is_word(b)) {
                i += 1;
                while i < n && is_word(src[i]) {
                    i += 1;
                }
            }
            kind = Tk::Ident;
        } else if matches!(c, b'(' | b'[' | b'{') {
            open.push(c);
            i += 1;
            kind = Tk::Open(c);
        } else if matches!(c, b')' | b']' | b'}') {
            i += 1;
            if open.pop().is_none() {
                space = true;
                continue;
            }
            kind = Tk::Close(c);
        } else {
            let two = src.get(i..i + 2);
            i += if matches!(two, Some(b"=>" | b"::" | b"->")) { 2 } else { 1 };
            kind = Tk::Punct;
        }
        out.push(tok(kind, start, i, space));
        space = false;
    }
    // Groups left open at the end of the file: closed, so they nest.
    while open.pop().is_some() {
        out.push(Piece::fixed(Tk::Close(b')'), ")", (n, n)));
    }
    out
}

/// Where a string literal starting at `i` ends (`"…"`, `b"…"`, `c"…"`,
/// `r#"…"#`, `br"…"`), if one starts there.
fn string_end(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(src.get(j), Some(b'b' | b'c')) {
        j += 1;
    }
    let raw = src.get(j) == Some(&b'r') && matches!(src.get(j + 1), Some(b'"' | b'#'));
    if raw {
        j += 1;
        let hashes = src[j..].iter().take_while(|&&b| b == b'#').count();
        j += hashes;
        if src.get(j) != Some(&b'"') {
            return None;
        }
        let mut k = j + 1;
        while k < src.len() {
            if src[k] == b'"' && src[k + 1..].iter().take(hashes).filter(|&&b| b == b'#').count() == hashes {
                return Some(k + 1 + hashes);
            }
            k += 1;
        }
        return Some(src.len());
    }
    if src.get(j) != Some(&b'"') {
        return None;
    }
    let mut k = j + 1;
    while k < src.len() {
        match src[k] {
            b'\\' => k += 2,
            b'"' => return Some(k + 1),
            _ => k += 1,
        }
    }
    Some(src.len())
}
