//! A line as a reader sees it: NFKC (full-width and mathematical letters
//! read as their plain forms), invisible characters gone, and letters of
//! other scripts that look like Latin letters read as those letters
//! (Unicode confusables, UTS #39: Cyrillic `е` is `e`), and what a page or
//! a URL decodes (`&lpar;`, `&#40;`, `%28` are `(`).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::is_invisible;

/// The ASCII letter or digit a non-ASCII character reads as, if it reads
/// as exactly one: `ｄ` and `𝐝` (NFKC), Cyrillic `е`, Greek `ο` (confusables).
pub fn latin(c: char) -> Option<char> {
    let mut nfkc = std::iter::once(c).nfkc();
    let plain = nfkc.next()?;
    if nfkc.next().is_some() {
        return None;
    }
    if plain.is_ascii_alphanumeric() {
        return Some(plain);
    }
    let mut buf = [0u8; 4];
    let mut skeleton = unicode_security::skeleton(plain.encode_utf8(&mut buf));
    let looks = skeleton.next()?;
    (skeleton.next().is_none() && looks.is_ascii_alphanumeric()).then_some(looks)
}

/// Dashes, quotes, bullets and arrows: the non-ASCII characters of every
/// hint line, none of them a letter or digit (a quick answer before the
/// Unicode tables).
pub fn is_symbol(c: char) -> bool {
    matches!(c, '\u{2010}'..='\u{205F}' | '\u{2190}'..='\u{21FF}' | '\u{2500}'..='\u{25FF}')
}

/// The form a reader sees: NFKC, invisible characters removed, confusable
/// letters as the Latin letters they look like, character references and
/// percent-escapes decoded ([`escapes`]), and markup that shows
/// nothing gone (an HTML comment, `<wbr>`, a soft hyphen written `&shy;`:
/// `delete<!-- -->_entities` reads `delete_entities`).
pub fn fold(l: &str) -> std::borrow::Cow<'_, str> {
    let read = then(unseen_markup(l), escapes);
    then(read, fold_chars)
}

/// `step` applied to `l`: `l` itself (borrowed or owned) where it changes
/// nothing.
fn then<'l>(
    l: std::borrow::Cow<'l, str>,
    step: impl for<'a> Fn(&'a str) -> std::borrow::Cow<'a, str>,
) -> std::borrow::Cow<'l, str> {
    match l {
        std::borrow::Cow::Borrowed(l) => step(l),
        std::borrow::Cow::Owned(l) => {
            let changed = match step(&l) {
                std::borrow::Cow::Owned(changed) => Some(changed),
                std::borrow::Cow::Borrowed(_) => None,
            };
            std::borrow::Cow::Owned(changed.unwrap_or(l))
        }
    }
}

/// Escapes decoded as a reader decodes them: an HTML character reference
/// (`&#40;`, `&#x28;`, `&lpar;`, `&quot;`, `&nbsp;`, `&#8203;`) as the
/// character it stands for, whatever it is but a control character other
/// than a tab (a page shows `describe(`, and `delete&nbsp;x` as
/// `delete x`: the fold that follows reads a no-break space as a space
/// and drops an invisible one); a percent-escape (`%28`) as the printable
/// ASCII character it stands for (a URL shows `describe(`); a backslash
/// escape (`\u0064`, `\x64`) only where it writes a letter, a digit or
/// `_`: `\u0064escribe` reads `describe`, and a `\u0022` in a JSON string
/// is still its quote.
fn escapes(l: &str) -> std::borrow::Cow<'_, str> {
    let printable = |c: &char| c.is_ascii_graphic() || *c == ' ';
    let read = |s: &str| match s.as_bytes().first() {
        Some(b'\\') => unescape(s).filter(|(c, _)| c.is_ascii_alphanumeric() || *c == '_'),
        Some(b'&') => unescape(s).or_else(|| named_reference(s)).filter(|(c, _)| !c.is_control() || *c == '\t'),
        _ => unescape(s).filter(|(c, _)| printable(c)),
    };
    rewrite(l, &['&', '\\', '%'], |s| read(s).map(|(c, len)| (len, Some(c))))
}

/// The HTML named character references (HTML's own table) for printable
/// ASCII, and for the spaces, dashes, arrows and quotes that stand between
/// words: the character and the reference's length.
fn named_reference(s: &str) -> Option<(char, usize)> {
    const NAMED: [(&str, char); 68] = [
        ("amp", '&'),
        ("AMP", '&'),
        ("lt", '<'),
        ("LT", '<'),
        ("gt", '>'),
        ("GT", '>'),
        ("quot", '"'),
        ("QUOT", '"'),
        ("apos", '\''),
        ("lpar", '('),
        ("rpar", ')'),
        ("lsqb", '['),
        ("lbrack", '['),
        ("rsqb", ']'),
        ("rbrack", ']'),
        ("lcub", '{'),
        ("lbrace", '{'),
        ("rcub", '}'),
        ("rbrace", '}'),
        ("colon", ':'),
        ("comma", ','),
        ("equals", '='),
        ("quest", '?'),
        ("num", '#'),
        ("sol", '/'),
        ("bsol", '\\'),
        ("period", '.'),
        ("semi", ';'),
        ("excl", '!'),
        ("lowbar", '_'),
        ("dollar", '$'),
        ("percnt", '%'),
        ("ast", '*'),
        ("midast", '*'),
        ("plus", '+'),
        ("vert", '|'),
        ("verbar", '|'),
        ("VerticalLine", '|'),
        ("grave", '`'),
        ("Hat", '^'),
        ("tilde", '~'),
        ("Tab", '\t'),
        ("nbsp", '\u{a0}'),
        ("NonBreakingSpace", '\u{a0}'),
        ("ensp", '\u{2002}'),
        ("emsp", '\u{2003}'),
        ("thinsp", '\u{2009}'),
        ("ThinSpace", '\u{2009}'),
        ("hairsp", '\u{200a}'),
        ("zwsp", '\u{200b}'),
        ("ZeroWidthSpace", '\u{200b}'),
        ("zwnj", '\u{200c}'),
        ("zwj", '\u{200d}'),
        ("ndash", '\u{2013}'),
        ("mdash", '\u{2014}'),
        ("hellip", '\u{2026}'),
        ("middot", '\u{b7}'),
        ("bull", '\u{2022}'),
        ("rarr", '\u{2192}'),
        ("larr", '\u{2190}'),
        ("harr", '\u{2194}'),
        ("rArr", '\u{21d2}'),
        ("lsquo", '\u{2018}'),
        ("rsquo", '\u{2019}'),
        ("ldquo", '\u{201c}'),
        ("rdquo", '\u{201d}'),
        ("laquo", '\u{ab}'),
        ("raquo", '\u{bb}'),
    ];
    let body = s.strip_prefix('&')?;
    let end = body.bytes().take(14).position(|b| b == b';')?;
    NAMED.iter().find(|(name, _)| *name == &body[..end]).map(|&(_, c)| (c, end + 2))
}

/// Markup that shows nothing where it stands, removed (an unclosed
/// comment runs to the end of the line).
fn unseen_markup(l: &str) -> std::borrow::Cow<'_, str> {
    rewrite(l, &['<', '&'], |s| unseen_at(s).map(|len| (len, None)))
}

/// `l` with what `read` finds where one of `starts` stands (its length,
/// and the character written instead, if any) rewritten; `l` itself when
/// it finds nothing.
fn rewrite<'l>(
    l: &'l str,
    starts: &[char],
    read: impl Fn(&str) -> Option<(usize, Option<char>)>,
) -> std::borrow::Cow<'l, str> {
    // Nothing is copied until something changes: most lines hold a `<`
    // or `&` that starts nothing `read` finds.
    let mut out = String::new();
    let mut changed = false;
    // `l[..done]` is in `out`; the search goes on from `at`.
    let (mut done, mut at) = (0, 0);
    while let Some(found) = l[at..].find(starts) {
        let start = at + found;
        match read(&l[start..]) {
            Some((len, instead)) => {
                out.push_str(&l[done..start]);
                out.extend(instead);
                (done, at) = (start + len, start + len);
                changed = true;
            }
            // Every start is ASCII: one byte on.
            None => at = start + 1,
        }
    }
    if !changed {
        return std::borrow::Cow::Borrowed(l);
    }
    out.push_str(&l[done..]);
    std::borrow::Cow::Owned(out)
}

/// Longest empty element read as showing nothing, in bytes.
const MAX_EMPTY_ELEMENT: usize = 200;

/// The length of markup at the start of `s` that shows nothing: an HTML
/// comment (to its end, or to the end of `s` when unclosed), `<wbr>`, a
/// soft hyphen written `&shy;`, or an element with nothing in it
/// (`<span></span>`, `<b class="x"></b>`).
pub fn unseen_at(s: &str) -> Option<usize> {
    const EMPTY: [&str; 6] = ["<wbr>", "<wbr/>", "<wbr />", "&shy;", "&#173;", "&#xad;"];
    if let Some(comment) = s.strip_prefix("<!--") {
        return Some(comment.find("-->").map_or(s.len(), |end| 4 + end + 3));
    }
    if let Some(m) = EMPTY.iter().find(|m| s.get(..m.len()).is_some_and(|r| r.eq_ignore_ascii_case(m))) {
        return Some(m.len());
    }
    // `<name attributes></name>`
    let tag = s.strip_prefix('<')?;
    let name = tag.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if name == 0 || !tag.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let open = tag[name..].bytes().take(MAX_EMPTY_ELEMENT).position(|b| matches!(b, b'>' | b'<'))?;
    let attributes = &tag[name..name + open];
    if tag.as_bytes()[name + open] != b'>' || !(attributes.is_empty() || attributes.starts_with(' ')) {
        return None;
    }
    let after = &tag[name + open + 1..];
    let close = after.strip_prefix("</")?;
    let closed = close.get(..name).is_some_and(|n| n.eq_ignore_ascii_case(&tag[..name]));
    let end = close.get(name..)?.trim_start_matches(' ');
    (closed && end.starts_with('>')).then(|| s.len() - end.len() + 1)
}

fn fold_chars(l: &str) -> std::borrow::Cow<'_, str> {
    // Arrows, dashes and other symbols are no letters: only letters and
    // digits outside ASCII may read as Latin ones.
    let lookalike = |c: char| !c.is_ascii() && !is_symbol(c) && c.is_alphanumeric();
    // ASCII is NFKC and reads as itself: only the other characters need
    // the Unicode tables (leaving ASCII out of the quick check can only
    // make it answer "maybe", never a wrong "yes").
    let others = || l.chars().filter(|c| !c.is_ascii());
    // Marks on letters (`é`, an underline `d̲`) are read past: a reader
    // sees the letter.
    let marked = |c: char| is_combining_mark(c) || (lookalike(c) && c.nfd().any(is_combining_mark));
    // Dashes, arrows and box drawing (every hint line's) are neither marks
    // nor letters: one range check each before the tables.
    let plain = l.is_ascii()
        || (unicode_normalization::is_nfkc_quick(others()) == unicode_normalization::IsNormalized::Yes
            && !others()
                .any(|c| is_invisible(c) || (!is_symbol(c) && (marked(c) || (lookalike(c) && latin(c).is_some())))));
    if plain {
        return std::borrow::Cow::Borrowed(l);
    }
    l.nfkd()
        .filter(|c| !is_invisible(*c) && !is_combining_mark(*c))
        .map(|c| if lookalike(c) { latin(c).unwrap_or(c) } else { c })
        .collect()
}

/// The character an escape at the start of `s` stands for, and its length:
/// `\u0037`, `\u{37}`, `\U00000037`, `\x37`, `\x{37}`, `\067`, `%37`,
/// `%u0037`, `&#55;`, `&#x37;` (any number of backslashes before `u`/`x`:
/// JSON inside JSON).
pub(super) fn unescape(s: &str) -> Option<(char, usize)> {
    let b = s.as_bytes();
    let hex_at = |from: usize, n: usize| -> Option<u32> {
        let digits = s.get(from..from + n)?;
        digits.bytes().all(|d| d.is_ascii_hexdigit()).then(|| u32::from_str_radix(digits, 16).ok())?
    };
    match b.first()? {
        b'\\' => {
            let slashes = b.iter().take_while(|&&c| c == b'\\').count();
            match b.get(slashes)? {
                // `\u{37}`, `\x{37}`
                b'u' | b'x' if b.get(slashes + 1) == Some(&b'{') => {
                    let close = s[slashes + 2..].bytes().take(8).position(|b| b == b'}')?;
                    let code = s.get(slashes + 2..slashes + 2 + close).filter(|d| (1..=6).contains(&d.len()))?;
                    let c = char::from_u32(u32::from_str_radix(code, 16).ok()?)?;
                    Some((c, slashes + 3 + close))
                }
                b'u' => Some((char::from_u32(hex_at(slashes + 1, 4)?)?, slashes + 5)),
                b'x' => Some((char::from_u32(hex_at(slashes + 1, 2)?)?, slashes + 3)),
                b'U' => Some((char::from_u32(hex_at(slashes + 1, 8)?)?, slashes + 9)),
                // Octal: `\067`.
                b'0'..=b'3' => {
                    let digits = s.get(slashes..slashes + 3)?;
                    let code = u32::from_str_radix(digits, 8).ok()?;
                    Some((char::from_u32(code)?, slashes + 3))
                }
                _ => None,
            }
        }
        b'%' if matches!(b.get(1), Some(b'u' | b'U')) => Some((char::from_u32(hex_at(2, 4)?)?, 6)),
        b'%' => Some((char::from_u32(hex_at(1, 2)?)?, 3)),
        b'&' if b.get(1) == Some(&b'#') => {
            let end = s.get(2..)?.bytes().take(10).position(|c| c == b';')? + 2;
            let body = &s[2..end];
            let code = match body.strip_prefix(['x', 'X']) {
                Some(h) => u32::from_str_radix(h, 16).ok()?,
                None => body.parse().ok()?,
            };
            Some((char::from_u32(code)?, end + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookalikes_read_as_latin() {
        assert_eq!(fold("dеsсribe"), "describe"); // Cyrillic е and с
        assert_eq!(fold("ｄｅｓｃｒｉｂｅ"), "describe");
        assert_eq!(fold("𝐝𝐞𝐬𝐜𝐫𝐢𝐛𝐞"), "describe");
        assert_eq!(fold("neіghbors"), "neighbors"); // Ukrainian і
        assert_eq!(fold("desc\u{200b}ribe"), "describe");
        // Marks on letters are read past, however they are written.
        assert_eq!(fold("→ é"), "→ e");
        assert_eq!(fold("→ e\u{301}"), "→ e");
        assert_eq!(fold("a\u{301}\u{316} → x"), "a → x");
        assert_eq!(fold("delete_entitiés"), "delete_entities");
        assert_eq!(fold("d\u{332}e\u{332}l\u{332}"), "del");
        // Escapes of letters are read as the letters; others stay.
        assert_eq!(fold("&#100;elete_&#x65;ntities \\u0064escribe"), "delete_entities describe");
        assert_eq!(fold(r#"{"q": "a\u0022b"}"#), r#"{"q": "a\u0022b"}"#);
        // What a page or a URL shows: references and percent-escapes of
        // any printable character.
        assert_eq!(fold("describe&#40;&quot;x&quot;&rpar; &amp; %7B%22id%22%3A1%7D"), r#"describe("x") & {"id":1}"#);
        assert_eq!(fold("50% of &unknown; &#0; %0A"), "50% of &unknown; &#0; %0A");
        assert_eq!(fold("→ ﬁnd"), "→ find");
        assert_eq!(fold("— ‼"), "— !!");
        // Markup that shows nothing.
        assert_eq!(fold("delete<!-- x -->_entities"), "delete_entities");
        assert_eq!(fold("de<wbr>scribe&shy;s <!-- open"), "describes ");
        assert_eq!(fold("a < b && c"), "a < b && c");
        assert_eq!(fold("delete<span></span>_entities<b class=\"x\"></B >"), "delete_entities");
        // Elements that hold something, or are left open, show it.
        for kept in ["<b>find</b>", "<span>", "</span>", "<span></b>", "<a\nb></a>", "<1></1>", "a<b>c"] {
            assert_eq!(fold(kept), kept);
        }
    }
}
