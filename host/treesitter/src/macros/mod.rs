//! Rust's `macro_rules!` expanded before a file is parsed, where the macro
//! is defined in the same file: what an invocation generates (the methods
//! of `define_bool!(0, is_utf8, set_utf8)`, the test functions of
//! `test_lit!(pfx1, prefixes, "a", M("a"))`) is read as the compiler sees
//! it, instead of as one opaque token tree.
//!
//! The expansion is made on tokens, the way `rustc` matches and transcribes
//! (fragments `ident`, `lifetime`, `literal`, `tt`, `block`, `vis`, and the
//! greedy ones `expr`, `ty`, `path`, `pat`, `stmt`, `item`, `meta` cut at
//! their follow tokens; repetitions with a separator; `$crate`; nested
//! invocations of the file's macros), and spliced into the text in place
//! of each invocation. The grammar then reads the spliced text, and every
//! position is mapped back ([`Expanded::point`]): a token a macro's caller
//! wrote (a generated function's name, a call in an argument) keeps its own
//! place; a token of the macro's body is placed at the invocation.
//!
//! What it leaves as written, counted in [`Expanded::unread`] (and in the
//! index's notes): an invocation no rule of its macro matches, and an
//! expansion past the bounds (nesting depth [`MAX_DEPTH`], size
//! [`MAX_TOKENS`]); and every invocation of a file whose expansion the
//! grammar reads worse than its text. Not expanded, and not counted: a
//! macro defined in another file (`#[macro_use] mod macros;`, another
//! crate's), which a file's reading cannot see. Hygiene is not modelled: a
//! generated name is read as written.

mod rules;
#[cfg(test)]
mod tests;
mod tokens;

use std::sync::atomic::{AtomicBool, Ordering};

use rules::{Expander, definitions};
use tokens::tokens;

/// Whether a call written in a macro's body is read where the macro is
/// invoked (the default: `escape_lits(…)` in `assert_lit_eq!`'s body is a
/// call of each function that invokes it). The accuracy benchmark turns it
/// off to compare with rust-analyzer's SCIP index, which has occurrences
/// only for tokens the invocation itself writes.
pub static BODY_CALLS: AtomicBool = AtomicBool::new(true);

/// Whether macros are expanded at all (the default); the index benchmark
/// turns it off to weigh what expansion costs.
pub static EXPAND: AtomicBool = AtomicBool::new(true);

/// Nested invocations followed at most this deep (a macro that invokes
/// itself without end stops here).
const MAX_DEPTH: usize = 32;
/// Tokens all the expansions of one file may make, at least: beyond it
/// (and beyond 16 times the file's own tokens), the rest is left unread.
const MAX_TOKENS: usize = 200_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tk {
    Ident,
    Lifetime,
    Literal,
    Punct,
    Open(u8),
    Close(u8),
}

/// A token of the file, or of an expansion: its text is a range of the
/// file (every token an expansion makes is one the file has), or a fixed
/// string; `origin` is where it stands in the file.
#[derive(Debug, Clone, Copy)]
struct Piece {
    kind: Tk,
    text: Text,
    /// Whitespace (or a comment) before it.
    space: bool,
    /// The range of the file it is placed at.
    origin: (usize, usize),
    /// Whether `origin` is its own text (it maps byte for byte), or the
    /// invocation it came out of.
    exact: bool,
}

#[derive(Debug, Clone, Copy)]
enum Text {
    Src(usize, usize),
    Fixed(&'static str),
}

impl Piece {
    fn bytes<'t>(&self, src: &'t [u8]) -> &'t [u8] {
        match self.text {
            Text::Src(a, b) => &src[a..b],
            Text::Fixed(s) => s.as_bytes(),
        }
    }

    fn fixed(kind: Tk, s: &'static str, origin: (usize, usize)) -> Piece {
        Piece { kind, text: Text::Fixed(s), space: true, origin, exact: false }
    }
}

/// A file's text with its macros expanded, and the way back to its places.
pub struct Expanded {
    /// The spliced text, to parse (taken by the reader, which keeps the
    /// rest to map positions back).
    pub text: Vec<u8>,
    /// Pieces of `text` (sorted by start, not overlapping): where each
    /// starts in `text` and ends, and where in the file it maps.
    segments: Vec<Segment>,
    /// Where each line of the file starts.
    lines: Vec<usize>,
    /// Invocations expanded.
    pub expanded: usize,
    /// Invocations of a macro of the file left as written (no rule matched,
    /// past the bounds).
    pub unread: usize,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    at: usize,
    end: usize,
    origin: (usize, usize),
    exact: bool,
}

impl Expanded {
    /// Whether byte `at` of [`Expanded::text`] is a token of the file's own
    /// text (not of a macro's body).
    pub fn written(&self, at: usize) -> bool {
        let i = self.segments.partition_point(|s| s.at <= at).saturating_sub(1);
        self.segments.get(i).is_none_or(|s| s.exact)
    }

    /// Whether calls written in macros' bodies are read ([`BODY_CALLS`]).
    pub fn body_calls() -> bool {
        BODY_CALLS.load(Ordering::Relaxed)
    }

    /// The (line, column) in the file of byte `at` of [`Expanded::text`]; a
    /// byte of a macro's body is at its invocation's start (`end`: its
    /// end).
    pub fn point(&self, at: usize, end: bool) -> (u32, u32) {
        // An end at a segment's start ends the segment before.
        let i = self.segments.partition_point(|s| if end { s.at < at } else { s.at <= at }).saturating_sub(1);
        let orig = match self.segments.get(i) {
            Some(s) if s.exact => s.origin.0 + (at.min(s.end) - s.at).min(s.origin.1 - s.origin.0),
            Some(s) if end && at > s.at => s.origin.1,
            Some(s) => s.origin.0,
            None => 0,
        };
        let row = self.lines.partition_point(|&l| l <= orig).saturating_sub(1);
        (row as u32, (orig - self.lines[row]) as u32)
    }
}

/// `text` with the invocations of the macros it defines expanded, or none
/// when it defines none (or none is invoked).
pub fn expand(text: &[u8]) -> Option<Expanded> {
    if !EXPAND.load(Ordering::Relaxed) {
        return None;
    }
    memchr::memchr(b'!', text)?;
    let toks = tokens(text);
    let macros = definitions(&toks, text);
    let mut x = Expander {
        src: text,
        macros: &macros,
        budget: MAX_TOKENS.max(toks.len() * 16),
        made: 0,
        expanded: 0,
        unread: 0,
    };
    // Top-level invocations, outside the definitions' own bodies.
    let inside: Vec<(usize, usize)> = macros.values().flat_map(|m| m.spans.iter().copied()).collect();
    let mut out = Splice::default();
    let mut copied = 0usize;
    let mut i = 0;
    let mut any = false;
    while i < toks.len() {
        let Some((name, bang, open, close)) = invocation(&toks, i, text) else {
            i += 1;
            continue;
        };
        let at = toks[i].origin.0;
        let std = !macros.contains_key(name) && std_expression(name).is_some();
        let pathed = i > 0 && toks[i - 1].bytes(text) == b"::";
        if pathed || inside.iter().any(|&(a, b)| a <= at && at < b) || !(std || macros.contains_key(name)) {
            i = close + 1;
            continue;
        }
        let whole = (at, toks[close].origin.1);
        let args = &toks[open + 1..close];
        let body = if std { x.std_args(name, args, whole, 0) } else { x.invoke(name, args, whole, 0) };
        match body {
            Some(body) => {
                any = true;
                x.expanded += usize::from(!std);
                out.copy(text, copied, at);
                let item = statement_position(i.checked_sub(1).map(|p| &toks[p]), text);
                // A `;` after it stays: the grammar reads a stray one as
                // an empty statement, anywhere.
                let end = close + 1;
                let spliced = splice(toks[i], toks[bang], body, item, i.checked_sub(1).map(|p| &toks[p]), whole, text);
                for p in &spliced {
                    out.piece(p, text);
                }
                copied = toks[end - 1].origin.1;
                i = end;
            }
            None => {
                x.unread += usize::from(!std);
                i = close + 1;
            }
        }
    }
    if !any && x.unread == 0 {
        return None;
    }
    out.copy(text, copied, text.len());
    let mut lines = vec![0];
    lines.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
    Some(Expanded { text: out.text, segments: out.segments, lines, expanded: x.expanded, unread: x.unread })
}

#[derive(Default)]
struct Splice {
    text: Vec<u8>,
    segments: Vec<Segment>,
}

impl Splice {
    fn copy(&mut self, src: &[u8], from: usize, to: usize) {
        if from >= to {
            return;
        }
        let at = self.text.len();
        self.text.extend_from_slice(&src[from..to]);
        self.segments.push(Segment { at, end: self.text.len(), origin: (from, to), exact: true });
    }

    fn piece(&mut self, p: &Piece, src: &[u8]) {
        let bytes = p.bytes(src);
        let glue = |a: u8, b: u8| is_word(a) && is_word(b);
        if p.space || self.text.last().zip(bytes.first()).is_some_and(|(&a, &b)| glue(a, b)) {
            self.text.push(b' ');
        }
        let at = self.text.len();
        self.text.extend_from_slice(bytes);
        self.segments.push(Segment { at, end: self.text.len(), origin: p.origin, exact: p.exact });
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// An expanded invocation as it is spliced: where an item or a statement
/// stands, `name!();` then the expansion as it is; where a type stands
/// (after `for`, `->`, `as`, `<`, `impl`, `dyn`), in parentheses, which a
/// type may have; elsewhere (an expression), as a block `{ name!(); … }`.
fn splice(
    name: Piece,
    bang: Piece,
    body: Vec<Piece>,
    item: bool,
    prev: Option<&Piece>,
    at: (usize, usize),
    src: &[u8],
) -> Vec<Piece> {
    let mut out = Vec::with_capacity(body.len() + 7);
    let of_type = prev.is_some_and(|p| matches!(p.bytes(src), b"for" | b"->" | b"as" | b"<" | b"impl" | b"dyn"));
    if item {
        out.extend([name, bang]);
        out.extend(marker(at));
        out.extend(body);
    } else if !of_type {
        out.extend([Piece::fixed(Tk::Open(b'{'), "{", at), name, bang]);
        out.extend(marker(at));
        out.extend(body);
        out.push(Piece::fixed(Tk::Close(b'}'), "}", at));
    } else {
        out.push(Piece::fixed(Tk::Open(b'('), "(", at));
        out.extend(body);
        out.push(Piece::fixed(Tk::Close(b')'), ")", at));
    }
    out
}

/// What follows an expanded invocation's `name!`: `();`, so that the
/// invocation stays a use of the macro, a statement of its own before the
/// expansion.
fn marker(at: (usize, usize)) -> [Piece; 3] {
    [Piece::fixed(Tk::Open(b'('), "(", at), Piece::fixed(Tk::Close(b')'), ")", at), Piece::fixed(Tk::Punct, ";", at)]
}

/// The macros of `std` whose arguments are expressions (a format string
/// and its values, conditions, elements), with the brackets that make them
/// one expression the grammar reads.
fn std_expression(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "vec" => Some(("[", "]")),
        "assert" | "assert_eq" | "assert_ne" | "debug_assert" | "debug_assert_eq" | "debug_assert_ne" | "format"
        | "format_args" | "print" | "println" | "eprint" | "eprintln" | "write" | "writeln" | "panic" | "todo"
        | "unimplemented" | "unreachable" | "dbg" => Some(("(", ")")),
        _ => None,
    }
}

/// Whether an invocation after `prev` stands where an item or a statement
/// does (its expansion is spliced as it is), rather than in an expression
/// (spliced as a block).
fn statement_position(prev: Option<&Piece>, src: &[u8]) -> bool {
    prev.is_none_or(|p| matches!(p.kind, Tk::Open(b'{') | Tk::Close(b'}' | b']')) || p.bytes(src) == b";")
}

/// At token `i`: `name ! (…)` (or `[…]`, `{…}`), as (name, the `!`, the
/// group's open and close tokens). `macro_rules! x {…}` is no invocation.
fn invocation<'s>(toks: &[Piece], i: usize, src: &'s [u8]) -> Option<(&'s str, usize, usize, usize)> {
    let t = toks.get(i)?;
    if t.kind != Tk::Ident || toks.get(i + 1)?.bytes(src) != b"!" {
        return None;
    }
    let Text::Src(a, b) = t.text else { return None };
    let name = std::str::from_utf8(&src[a..b]).ok()?;
    if name == "macro_rules" {
        return None;
    }
    let open = i + 2;
    let Tk::Open(_) = toks.get(open)?.kind else { return None };
    Some((name, i + 1, open, close_of(toks, open)?))
}

/// The token that closes the group opened at `open`.
fn close_of(toks: &[Piece], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Tk::Open(_) => depth += 1,
            Tk::Close(_) => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}
