//! No invented ids: every id-shaped token in a text for an agent must be an
//! id the agent may already know of ([`Known`]); any other is replaced in
//! place by [`REPLACED_ID`].
//!
//! An agent acts on an id however it is written, so "id-shaped" is read
//! the way a reader reads it:
//! - hex digits as the reader sees them: any case, full-width and
//!   mathematical digits (NFKC), the decimal digits of other scripts (`٧`,
//!   `७`), enclosed ones (`⑺`, `⒝`, `⓪`), and letters of other scripts that
//!   look like `a`–`f` (Unicode confusables, UTS #39), `О` for `0`, `І`/`ӏ`
//!   for `1`;
//! - escapes decoded (`\u0037`, `\u{37}`, `\U00000037`, `\x37`, `\067`,
//!   `%37`, `%u0037`, `&#55;`, `&#x37;`), and read a second way, as the hex
//!   digits of the byte they write: an id written byte by byte (`%73%b2…`,
//!   `\x73\xb2…`) is those digits;
//! - a **token**: a run of 40 or more hex digits with nothing between them
//!   (a longer run can hide an id as well as show one);
//! - a **split token**: hex groups joined by short runs of separators
//!   (spaces, punctuation, a `0x` before a group: at most [`MAX_JOIN`]
//!   characters, a run of one character counted once, no letter or digit
//!   that is not hex; markup that shows nothing, such as `<!-- -->` or
//!   `<span></span>`, not counted; numbered labels between the chunks,
//!   `(2/2):` or `2)`, passed over; no group
//!   part of a word, as the `a` of `append` is) whose digits add up to
//!   exactly 40, when they
//!   hold both a letter and a digit (so prose such as `a bad cafe` and
//!   lists of numbers are not read as ids) or name a symbol of the graph.
//!
//! An id in words (spelled out, reversed, split by words) is outside what a
//! filter can read; the call filter ([`super::calls`]) is the second layer.
//!
//! Where the ids the agent may know come from, and how they are looked up,
//! is in [`known`]; the reading of a line is here.

mod known;

use std::ops::Range;

use serde_json::Value;

pub use known::Known;

/// What replaces an id the agent may not be shown.
pub const REPLACED_ID: &str = "[id not in this answer]";
/// Most separator characters between two hex groups of one split token.
pub const MAX_JOIN: usize = 12;
/// Hex digits in an id.
const ID_LEN: usize = 40;
/// Hex groups looked at per chain (a line of thousands of tiny groups is
/// cut at this bound; what lies past it is read as a new chain).
const MAX_GROUPS: usize = 256;

/// One character of a line as a reader of ids sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    /// A hex digit (lower case).
    Hex(u8),
    /// Punctuation or space: may join hex groups.
    Join,
    /// A letter or digit that is not hex, or anything that ends a token.
    Break,
}

/// A run of hex digits with nothing between them.
#[derive(Debug, Clone)]
struct Group {
    /// Its digits, in the line's digit buffer.
    digits: Range<usize>,
    bytes: Range<usize>,
    /// Join characters between the previous group and this one (`usize::MAX`
    /// after a break).
    joined_by: usize,
    /// Whether a letter or digit that is no hex digit touches it (the `a`
    /// of `append`): part of a word, no piece of a split token.
    in_word: bool,
}

/// The hex digit a reader sees in `c`, a letter or digit outside ASCII,
/// if any (NFKC, confusables).
fn hex_of(c: char) -> Option<u8> {
    // Decimal digits of other scripts (`٧`, `७`): Unicode keeps each
    // script's ten in a row, from its zero.
    if let Some(zero) = DIGIT_ZEROS.iter().rev().find(|&&z| z <= u32::from(c)) {
        let d = u32::from(c) - zero;
        if d < 10 && char::from_u32(*zero).is_some_and(|z| z.is_numeric()) && c.is_numeric() {
            return Some(b'0' + d as u8);
        }
    }
    let plain = super::fold::latin(c).or_else(|| enclosed(c))?;
    match plain {
        'O' | 'o' => Some(b'0'),
        'l' | 'I' => Some(b'1'),
        p if p.is_ascii_hexdigit() => Some(p.to_ascii_lowercase() as u8),
        _ => None,
    }
}

/// The first code point of each run of ten decimal digits outside ASCII
/// (Unicode's `Nd` digits whose value is 0; Unicode 14).
const DIGIT_ZEROS: [u32; 65] = [
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20,
    0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0,
    0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The letter or digit an enclosed or marked character shows (`⑺` `(7)`,
/// `⒈` `1.`, `⒝` `(b)`, `é`): its compatibility form less brackets, the
/// dot and marks.
fn enclosed(c: char) -> Option<char> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    let mut inner = std::iter::once(c).nfkd().filter(|c| !matches!(c, '(' | ')' | '.') && !is_combining_mark(*c));
    let plain = inner.next().filter(char::is_ascii_alphanumeric)?;
    inner.next().is_none().then_some(plain)
}

/// The byte an escape at the start of `s` writes in hex (`%73`, `\x73`,
/// `&#x73;`, `\u0073`, `\u{73}`), as its two hex digits (lower case), and
/// the escape's length: a reader of an id written byte by byte reads
/// those digits, whatever character the byte would be.
fn escaped_byte(s: &str) -> Option<([u8; 2], usize)> {
    let b = s.as_bytes();
    let (digits, len) = match *b.first()? {
        b'%' => (s.get(1..3)?, 3),
        b'&' => {
            let body = s.strip_prefix("&#x").or_else(|| s.strip_prefix("&#X"))?;
            let end = body.bytes().take(6).position(|c| c == b';')?;
            (&body[..end], 3 + end + 1)
        }
        b'\\' => {
            let slashes = b.iter().take_while(|&&c| c == b'\\').count();
            match (b.get(slashes)?, b.get(slashes + 1)) {
                (b'x', _) => (s.get(slashes + 1..slashes + 3)?, slashes + 3),
                (b'u', Some(b'{')) => {
                    let close = s[slashes + 2..].bytes().take(8).position(|b| b == b'}')?;
                    (&s[slashes + 2..slashes + 2 + close], slashes + 3 + close)
                }
                (b'u', _) => (s.get(slashes + 1..slashes + 5)?, slashes + 5),
                _ => return None,
            }
        }
        _ => return None,
    };
    let value = u32::from_str_radix(digits, 16).ok().filter(|v| *v <= 0xFF && !digits.is_empty())?;
    let hex = format!("{value:02x}");
    let hex = hex.as_bytes();
    Some(([hex[0], hex[1]], len))
}

/// Buffers for reading ids, reused from line to line of a text.
#[derive(Debug, Default)]
pub struct Scanner {
    digits: Vec<u8>,
    groups: Vec<Group>,
}

/// The hex groups of a line, in order, with how each joins the previous
/// one, into `out`; their digits (lower case) in `buf`.
///
/// With `as_bytes`, an escape that writes a byte in hex counts as the two
/// hex digits it is written with ([`escaped_byte`]) rather than as the
/// character it stands for: an id written byte by byte (`%73%b2…`).
fn groups(line: &str, as_bytes: bool, buf: &mut Vec<u8>, out: &mut Vec<Group>) {
    buf.clear();
    out.clear();
    let mut current: Option<Group> = None;
    let mut joins = usize::MAX;
    let mut after_break = false;
    // The separator just read: a run of one (spaces, dots) counts once.
    let mut last_join: Option<char> = None;
    let mut i = 0;
    let bytes = line.as_bytes();
    while i < bytes.len() {
        let b = bytes[i];
        if as_bytes
            && matches!(b, b'%' | b'\\' | b'&')
            && let Some((digits, len)) = escaped_byte(&line[i..])
        {
            add_digits(&mut current, buf, digits, i..i + len, (joins, after_break));
            last_join = None;
            i += len;
            continue;
        }
        // `0x` before hex digits, not glued to a word: a prefix a reader
        // skips, as a separator (`0x7217 0x9709 …`).
        if b == b'0'
            && matches!(bytes.get(i + 1), Some(b'x' | b'X'))
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            && !(i > 0 && bytes[i - 1].is_ascii_alphanumeric())
        {
            if let Some(g) = current.take() {
                out.push(g);
                joins = 0;
            }
            joins = joins.saturating_add(2);
            after_break = false;
            last_join = None;
            i += 2;
            continue;
        }
        // Markup that shows nothing (`<span></span>`, a comment, `&shy;`)
        // is not there for a reader: what stands on either side is one.
        if matches!(b, b'<' | b'&')
            && let Some(len) = super::fold::unseen_at(&line[i..])
        {
            i += len;
            continue;
        }
        if b.is_ascii_hexdigit() {
            // A run of plain hex digits at once (the bulk of an id).
            let run = bytes[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            let digits = bytes[i..i + run].iter().map(u8::to_ascii_lowercase);
            add_digits(&mut current, buf, digits, i..i + run, (joins, after_break));
            last_join = None;
            i += run;
            continue;
        }
        let (c, len) = match b {
            b'\\' | b'%' | b'&' => super::fold::unescape(&line[i..]).unwrap_or((b as char, 1)),
            0..0x80 => (b as char, 1),
            _ => {
                let c = line[i..].chars().next().unwrap_or(' ');
                (c, c.len_utf8())
            }
        };
        // A mark belongs to the character before it (`7̲3̲`): nothing of its own.
        if unicode_normalization::char::is_combining_mark(c) {
            i += len;
            continue;
        }
        let unit = if c.is_ascii() {
            match c {
                '0'..='9' | 'a'..='f' => Unit::Hex(c as u8),
                'A'..='F' => Unit::Hex(c.to_ascii_lowercase() as u8),
                _ if c.is_ascii_alphanumeric() => Unit::Break,
                _ => Unit::Join,
            }
        } else if super::fold::is_symbol(c) {
            Unit::Join
        } else if let Some(h) = hex_of(c) {
            // (enclosed letters, `⒝`, are symbols to Unicode, not letters)
            Unit::Hex(h)
        } else if c.is_alphanumeric() {
            Unit::Break
        } else {
            Unit::Join
        };
        match unit {
            Unit::Hex(h) => {
                add_digits(&mut current, buf, [h], i..i + len, (joins, after_break));
                last_join = None;
            }
            Unit::Join => {
                if let Some(g) = current.take() {
                    out.push(g);
                    joins = 0;
                }
                if last_join != Some(c) {
                    joins = joins.saturating_add(1);
                }
                last_join = Some(c);
                after_break = false;
            }
            Unit::Break => {
                last_join = None;
                if let Some(mut g) = current.take() {
                    g.in_word = true;
                    out.push(g);
                }
                joins = usize::MAX;
                after_break = true;
            }
        }
        i += len;
    }
    out.extend(current);
}

/// `digits`, read from `bytes` of the line, added to the group being read,
/// or to a new one joined to the last as `joined` says (its join
/// characters, and whether a letter or digit that is no hex digit touches
/// it).
fn add_digits(
    current: &mut Option<Group>,
    buf: &mut Vec<u8>,
    digits: impl IntoIterator<Item = u8>,
    bytes: Range<usize>,
    (joined_by, in_word): (usize, bool),
) {
    let at = buf.len();
    let g = current.get_or_insert(Group { digits: at..at, bytes: bytes.start..bytes.start, joined_by, in_word });
    buf.extend(digits);
    g.digits.end = buf.len();
    g.bytes.end = bytes.end;
}

/// The spans of `line` that show an id the agent may not be shown.
pub fn forged_spans(line: &str, known: &Known<'_>, scanner: &mut Scanner) -> Vec<Range<usize>> {
    // Fast path: no 40 hex-looking characters at all (ASCII hex digits,
    // escapes' characters, anything non-ASCII counted as possible).
    let possible = line.bytes().filter(|b| b.is_ascii_hexdigit() || *b >= 0xC0).count();
    if possible < ID_LEN {
        return Vec::new();
    }
    let mut spans = forged_in(line, false, known, scanner);
    // Escapes read a second way: as the hex digits of the bytes they write.
    if line.contains(['%', '\\']) || line.contains("&#") {
        spans.extend(forged_in(line, true, known, scanner));
    }
    merge(spans)
}

/// Most numbered labels (`(1/2):`, `2)`) a split token's chain passes over.
const MAX_LABELS: usize = 3;

/// [`forged_spans`] of one reading of the line's escapes ([`groups`]).
fn forged_in(line: &str, as_bytes: bool, known: &Known<'_>, scanner: &mut Scanner) -> Vec<Range<usize>> {
    let Scanner { digits: buf, groups: found } = scanner;
    groups(line, as_bytes, buf, found);
    let (buf, groups) = (&*buf, &*found);
    let text = |r: &Range<usize>| std::str::from_utf8(&buf[r.clone()]).unwrap_or_default();
    // A short run of decimal digits (`1`, `2/2`): a label between the
    // chunks of a split token, or a chunk of it.
    let label = |g: &Group| g.digits.len() <= 3 && buf[g.digits.clone()].iter().all(u8::is_ascii_digit);
    let mut spans: Vec<Range<usize>> = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        if g.digits.len() >= ID_LEN {
            if !known.contains(text(&g.digits)) {
                spans.push(g.bytes.clone());
            }
            continue;
        }
        // A split token starting here: groups joined by short separators
        // whose digits add up to exactly 40, none of them part of a word;
        // read once with every group, once passing over numbered labels.
        if g.in_word {
            continue;
        }
        // (the digits collected only when a label is passed over: groups
        // lie one after another in the digit buffer)
        let mut saw_label = false;
        for skip_labels in [false, true] {
            if skip_labels && !saw_label {
                break;
            }
            let mut digits = skip_labels.then(|| String::from(text(&g.digits)));
            let mut count = g.digits.len();
            let mut skipped = 0;
            for next in groups.iter().skip(i + 1).take(MAX_GROUPS) {
                if next.joined_by > MAX_JOIN || next.in_word || next.digits.len() >= ID_LEN {
                    break;
                }
                saw_label |= label(next);
                if skip_labels && label(next) && skipped < MAX_LABELS {
                    skipped += 1;
                    continue;
                }
                if count + next.digits.len() > ID_LEN {
                    break;
                }
                count += next.digits.len();
                if let Some(digits) = digits.as_mut() {
                    digits.push_str(text(&next.digits));
                }
                if count == ID_LEN {
                    let digits = digits.as_deref().unwrap_or_else(|| text(&(g.digits.start..next.digits.end)));
                    let mixed =
                        digits.bytes().any(|b| b.is_ascii_digit()) && digits.bytes().any(|b| b.is_ascii_alphabetic());
                    if (mixed || known.names_a_symbol(digits)) && !known.contains(digits) {
                        spans.push(g.bytes.start..next.bytes.end);
                    }
                    break;
                }
            }
        }
    }
    spans
}

/// Whether every id-shaped token in the strings of `v` is one the agent
/// may be shown (a teaching example the agent would copy).
pub fn all_known(v: &Value, known: &Known<'_>) -> bool {
    match v {
        Value::String(s) => forged_spans(s, known, &mut Scanner::default()).is_empty(),
        Value::Array(items) => items.iter().all(|i| all_known(i, known)),
        Value::Object(map) => map.values().all(|i| all_known(i, known)),
        _ => true,
    }
}

/// Sorted, overlapping spans merged.
fn merge(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// `line` with every id the agent may not be shown replaced in place, and
/// how many were.
pub fn replace_forged<'l>(
    line: &'l str,
    known: &Known<'_>,
    scanner: &mut Scanner,
) -> (std::borrow::Cow<'l, str>, usize) {
    let spans = forged_spans(line, known, scanner);
    if spans.is_empty() {
        return (std::borrow::Cow::Borrowed(line), 0);
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for s in &spans {
        out.push_str(&line[at..s.start]);
        out.push_str(REPLACED_ID);
        at = s.end;
    }
    out.push_str(&line[at..]);
    let replaced = spans.len();
    (std::borrow::Cow::Owned(out), replaced)
}

#[cfg(test)]
mod tests;
