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
//! What it leaves out, counted in [`Expanded::unread`]: a macro defined in
//! another file (`#[macro_use] mod macros;`), an invocation no rule of its
//! macro matches, and an expansion past the bounds (nesting depth
//! [`MAX_DEPTH`], size [`MAX_TOKENS`]): such an invocation stays as it is
//! written. Hygiene is not modelled: a generated name is read as written.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// The spliced text, to parse.
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

/// Keywords a type or an expression has a word after (`dyn Trait`, `x as
/// u8`, `match x`, `if a {} else {}`).
const JOINING: &[&[u8]] = &[
    b"as",
    b"dyn",
    b"impl",
    b"mut",
    b"const",
    b"unsafe",
    b"extern",
    b"fn",
    b"for",
    b"in",
    b"return",
    b"break",
    b"continue",
    b"move",
    b"match",
    b"if",
    b"else",
    b"while",
    b"let",
    b"ref",
    b"box",
    b"async",
    b"loop",
    b"yield",
    b"static",
    b"crate",
    b"self",
    b"super",
    b"where",
];

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

/// One macro: its rules, and where its definitions are (invocations inside
/// them are expanded only when the macro is).
struct Macro {
    rules: Vec<(Vec<Matcher>, Vec<Piece>)>,
    spans: Vec<(usize, usize)>,
}

#[derive(Debug, Clone)]
enum Matcher {
    Tok(Piece),
    Frag(String, Frag),
    Rep(Vec<Matcher>, Option<Piece>, u8),
    Group(u8, Vec<Matcher>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frag {
    Ident,
    Lifetime,
    Literal,
    Tt,
    Block,
    Vis,
    Expr,
    Ty,
    Pat,
    PatParam,
    Item,
    Other,
}

/// Every `macro_rules! name { (matcher) => { transcriber }; … }` of the
/// file, by name (two definitions of one name: their rules in order).
fn definitions<'s>(toks: &[Piece], src: &'s [u8]) -> HashMap<&'s str, Macro> {
    let mut out: HashMap<&str, Macro> = HashMap::new();
    let mut i = 0;
    while i + 3 < toks.len() {
        let is_def = toks[i].bytes(src) == b"macro_rules"
            && toks[i + 1].bytes(src) == b"!"
            && toks[i + 2].kind == Tk::Ident
            && matches!(toks[i + 3].kind, Tk::Open(_));
        if !is_def {
            i += 1;
            continue;
        }
        let Text::Src(a, b) = toks[i + 2].text else { break };
        let Ok(name) = std::str::from_utf8(&src[a..b]) else { break };
        let Some(close) = close_of(toks, i + 3) else { break };
        let body = &toks[i + 4..close];
        let mut rules = Vec::new();
        let mut j = 0;
        // `(matcher) => {transcriber}` separated by `;`.
        while j < body.len() {
            let Tk::Open(_) = body[j].kind else { break };
            let Some(mc) = close_of(body, j) else { break };
            if body.get(mc + 1).map(|t| t.bytes(src)) != Some(b"=>") {
                break;
            }
            let Some(Tk::Open(_)) = body.get(mc + 2).map(|t| t.kind) else { break };
            let Some(tc) = close_of(body, mc + 2) else { break };
            if let Some(m) = matcher(&body[j + 1..mc], src) {
                rules.push((m, body[mc + 3..tc].to_vec()));
            }
            j = tc + 1;
            while body.get(j).is_some_and(|t| t.bytes(src) == b";") {
                j += 1;
            }
        }
        let m = out.entry(name).or_insert_with(|| Macro { rules: Vec::new(), spans: Vec::new() });
        m.rules.extend(rules);
        m.spans.push((toks[i].origin.0, toks[close].origin.1));
        i = close + 1;
    }
    out
}

/// A rule's matcher, read from its tokens.
fn matcher(toks: &[Piece], src: &[u8]) -> Option<Vec<Matcher>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Tk::Punct if t.bytes(src) == b"$" => match toks.get(i + 1).map(|n| n.kind) {
                Some(Tk::Ident) => {
                    let name = String::from_utf8_lossy(toks[i + 1].bytes(src)).into_owned();
                    // `$x:kind`
                    if toks.get(i + 2).map(|t| t.bytes(src)) != Some(b":") {
                        return None;
                    }
                    let kind = match toks.get(i + 3)?.bytes(src) {
                        b"ident" => Frag::Ident,
                        b"lifetime" => Frag::Lifetime,
                        b"literal" => Frag::Literal,
                        b"tt" => Frag::Tt,
                        b"block" => Frag::Block,
                        b"vis" => Frag::Vis,
                        b"expr" | b"expr_2021" | b"stmt" => Frag::Expr,
                        b"ty" | b"path" => Frag::Ty,
                        b"pat" => Frag::Pat,
                        b"pat_param" => Frag::PatParam,
                        b"item" => Frag::Item,
                        b"meta" => Frag::Other,
                        _ => return None,
                    };
                    out.push(Matcher::Frag(name, kind));
                    i += 4;
                }
                Some(Tk::Open(b'(')) => {
                    let close = close_of(toks, i + 1)?;
                    let inner = matcher(&toks[i + 2..close], src)?;
                    let (sep, op, next) = repetition_tail(toks, close + 1, src)?;
                    out.push(Matcher::Rep(inner, sep, op));
                    i = next;
                }
                _ => return None,
            },
            Tk::Open(d) => {
                let close = close_of(toks, i)?;
                out.push(Matcher::Group(d, matcher(&toks[i + 1..close], src)?));
                i = close + 1;
            }
            _ => {
                out.push(Matcher::Tok(t));
                i += 1;
            }
        }
    }
    Some(out)
}

/// After a repetition's `)`: its separator, if any, its operator, and the
/// token after them.
fn repetition_tail(toks: &[Piece], at: usize, src: &[u8]) -> Option<(Option<Piece>, u8, usize)> {
    let op = |t: &Piece| match t.bytes(src) {
        b"*" => Some(b'*'),
        b"+" => Some(b'+'),
        b"?" => Some(b'?'),
        _ => None,
    };
    let first = toks.get(at)?;
    if let Some(o) = op(first) {
        return Some((None, o, at + 1));
    }
    let o = op(toks.get(at + 1)?)?;
    Some((Some(*first), o, at + 2))
}

#[derive(Debug, Clone)]
enum Binding {
    One(Vec<Piece>),
    Many(Vec<HashMap<String, Binding>>),
}

struct Expander<'a> {
    src: &'a [u8],
    macros: &'a HashMap<&'a str, Macro>,
    budget: usize,
    /// Tokens made so far, by every expansion of the file.
    made: usize,
    expanded: usize,
    unread: usize,
}

impl Expander<'_> {
    /// The expansion of `name!(args)` placed at `whole`, its own nested
    /// invocations expanded; none if no rule matches or a bound is met.
    fn invoke(&mut self, name: &str, args: &[Piece], whole: (usize, usize), depth: usize) -> Option<Vec<Piece>> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let m = self.macros.get(name)?;
        let (binds, body) = m.rules.iter().find_map(|(matcher, body)| {
            let mut binds = HashMap::new();
            let end = self.matches(matcher, args, 0, None, &mut binds)?;
            (end == args.len()).then_some((binds, body))
        })?;
        let mut out = Vec::new();
        self.transcribe(body, &[&binds], whole, &mut out)?;
        self.expand_within(out, depth, None)
    }

    /// `std`'s macro `name!(args)` whose arguments are expressions
    /// ([`std_expression`]): the arguments as a tuple (or an array, for
    /// `vec!`), so the grammar reads the calls in them as calls, with
    /// their receivers; the macros in them expanded too.
    fn std_args(&mut self, name: &str, args: &[Piece], whole: (usize, usize), depth: usize) -> Option<Vec<Piece>> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let (open, close) = std_expression(name)?;
        let first = Piece::fixed(Tk::Open(open.as_bytes()[0]), open, whole);
        let mut out = vec![first];
        self.made += args.len();
        out.extend(self.expand_within(args.to_vec(), depth + 1, Some(first))?);
        out.push(Piece::fixed(Tk::Close(close.as_bytes()[0]), close, whole));
        Some(out)
    }

    /// `out` with the invocations in it of the file's macros and of `std`'s
    /// expression macros expanded in place; `before`: the token before it,
    /// none where it starts a statement.
    fn expand_within(&mut self, out: Vec<Piece>, depth: usize, before: Option<Piece>) -> Option<Vec<Piece>> {
        if !out.iter().any(|p| p.kind == Tk::Punct && p.bytes(self.src) == b"!") {
            return Some(out);
        }
        let mut done: Vec<Piece> = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            if let Some((inner, _, open, close)) = invocation(&out, i, self.src) {
                let own = self.macros.contains_key(inner);
                if !own && std_expression(inner).is_none() {
                    // Another crate's macro: its tokens as they are.
                    done.extend_from_slice(&out[i..=close]);
                    i = close + 1;
                    continue;
                }
                let at = (out[i].origin.0, out[close].origin.1);
                let origin = if out[i].exact { at } else { out[i].origin };
                let args = &out[open + 1..close];
                let nested = if own {
                    self.invoke(inner, args, origin, depth + 1)?
                } else {
                    self.std_args(inner, args, origin, depth + 1)?
                };
                if out[..i].last().is_some_and(|p| p.bytes(self.src) == b"::") {
                    // A path to it (`$crate::name!`): left as written.
                    done.extend_from_slice(&out[i..=close]);
                    i = close + 1;
                    continue;
                }
                let item = statement_position(done.last().or(before.as_ref()), self.src);
                let prev = done.last().or(before.as_ref()).copied();
                done.extend(splice(out[i], out[i + 1], nested, item, prev.as_ref(), origin, self.src));
                i = close + 1;
                continue;
            }
            done.push(out[i]);
            i += 1;
        }
        Some(done)
    }

    /// Matches `ms` against `input` from `at`; the position after, binding
    /// fragments into `binds`. `follow`: the token that comes after `ms`
    /// (where a greedy fragment at its end stops).
    fn matches(
        &self,
        ms: &[Matcher],
        input: &[Piece],
        mut at: usize,
        follow: Option<&Piece>,
        binds: &mut HashMap<String, Binding>,
    ) -> Option<usize> {
        let src = self.src;
        for (k, m) in ms.iter().enumerate() {
            let next = match ms.get(k + 1) {
                Some(Matcher::Tok(t)) => Some(t),
                Some(_) => None,
                None => follow,
            };
            match m {
                Matcher::Tok(t) => {
                    let got = input.get(at)?;
                    if got.kind != t.kind || got.bytes(src) != t.bytes(src) {
                        return None;
                    }
                    at += 1;
                }
                Matcher::Group(d, inner) => {
                    let got = input.get(at)?;
                    if got.kind != Tk::Open(*d) {
                        return None;
                    }
                    let close = close_of(input, at)?;
                    let end = self.matches(inner, &input[..close], at + 1, None, binds)?;
                    if end != close {
                        return None;
                    }
                    at = close + 1;
                }
                Matcher::Frag(name, kind) => {
                    let end = self.fragment(*kind, input, at, next)?;
                    binds.insert(name.clone(), Binding::One(input[at..end].to_vec()));
                    at = end;
                }
                Matcher::Rep(inner, sep, op) => {
                    let mut iterations = Vec::new();
                    let stop = sep.as_ref().or(next);
                    loop {
                        if *op == b'?' && !iterations.is_empty() {
                            break;
                        }
                        let mut before = at;
                        if let Some(s) = sep
                            && !iterations.is_empty()
                        {
                            match input.get(at) {
                                Some(t) if t.bytes(src) == s.bytes(src) => before = at + 1,
                                _ => break,
                            }
                        }
                        let mut b = HashMap::new();
                        match self.matches(inner, input, before, stop, &mut b) {
                            Some(end) if end > before => {
                                iterations.push(b);
                                at = end;
                            }
                            _ => break,
                        }
                    }
                    if *op == b'+' && iterations.is_empty() {
                        return None;
                    }
                    let names = names_in(inner);
                    for n in names {
                        let per: Vec<HashMap<String, Binding>> = iterations
                            .iter()
                            .map(|b| b.get(&n).map(|v| HashMap::from([(n.clone(), v.clone())])).unwrap_or_default())
                            .collect();
                        binds.insert(n, Binding::Many(per));
                    }
                }
            }
        }
        Some(at)
    }

    /// Where a fragment of `kind` starting at `at` ends.
    fn fragment(&self, kind: Frag, input: &[Piece], at: usize, next: Option<&Piece>) -> Option<usize> {
        let src = self.src;
        let tree_end = |i: usize| -> Option<usize> {
            match input.get(i)?.kind {
                Tk::Open(_) => close_of(input, i).map(|c| c + 1),
                Tk::Close(_) => None,
                _ => Some(i + 1),
            }
        };
        let first = input.get(at);
        match kind {
            Frag::Ident => (first?.kind == Tk::Ident).then_some(at + 1),
            Frag::Lifetime => (first?.kind == Tk::Lifetime).then_some(at + 1),
            Frag::Literal => match first? {
                t if t.kind == Tk::Literal => Some(at + 1),
                t if t.bytes(src) == b"-" && input.get(at + 1)?.kind == Tk::Literal => Some(at + 2),
                t if matches!(t.bytes(src), b"true" | b"false") => Some(at + 1),
                _ => None,
            },
            Frag::Tt => tree_end(at),
            Frag::Block => (first?.kind == Tk::Open(b'{')).then(|| tree_end(at)).flatten(),
            Frag::Vis => match first {
                Some(t) if t.bytes(src) == b"pub" => match input.get(at + 1) {
                    Some(g) if g.kind == Tk::Open(b'(') => tree_end(at + 1),
                    _ => Some(at + 1),
                },
                _ => Some(at),
            },
            Frag::Item => {
                let mut i = at;
                while i < input.len() {
                    let t = &input[i];
                    if next.is_some_and(|n| n.bytes(src) == t.bytes(src)) && i > at {
                        return Some(i);
                    }
                    if t.bytes(src) == b";" {
                        return Some(i + 1);
                    }
                    // A body ends an item, unless a `;` follows (`use
                    // a::{b, c};`, `const X: T = T { … };`).
                    if t.kind == Tk::Open(b'{') {
                        let end = tree_end(i)?;
                        let semi = input.get(end).is_some_and(|t| t.bytes(src) == b";");
                        return Some(end + usize::from(semi));
                    }
                    i = tree_end(i)?;
                }
                (i > at).then_some(i)
            }
            _ => {
                // Greedy: token trees up to a follow token at the top level.
                let mut i = at;
                let mut angles = 0i32;
                while i < input.len() {
                    let t = &input[i];
                    let b = t.bytes(src);
                    let stop = next.is_some_and(|n| n.bytes(src) == b && n.kind == t.kind)
                        || matches!(b, b"," | b";" | b"=>")
                        || match kind {
                            Frag::Ty => {
                                angles == 0
                                    && (matches!(b, b"=" | b"|" | b":" | b"as" | b"where")
                                        || matches!(t.kind, Tk::Open(b'{') | Tk::Open(b'[')))
                            }
                            Frag::Pat => matches!(b, b"=" | b"if" | b"in"),
                            Frag::PatParam => matches!(b, b"=" | b"|" | b"if" | b"in"),
                            _ => false,
                        };
                    // Two words in a row with no keyword between end a type
                    // or an expression (`$($ty:ty)*` over `u8 u16`).
                    let adjacent = i > at
                        && angles <= 0
                        && matches!(kind, Frag::Ty | Frag::Expr)
                        && t.kind == Tk::Ident
                        && !JOINING.contains(&b)
                        && matches!(input[i - 1].kind, Tk::Ident | Tk::Literal | Tk::Lifetime | Tk::Close(_))
                        && !(input[i - 1].kind == Tk::Ident && JOINING.contains(&input[i - 1].bytes(src)))
                        && !(kind == Frag::Ty && b == b"fn");
                    if (stop && angles <= 0 && i > at) || adjacent {
                        break;
                    }
                    if kind == Frag::Ty {
                        match b {
                            b"<" => angles += 1,
                            b">" => angles -= 1,
                            b"->" => {}
                            _ => {}
                        }
                    }
                    i = tree_end(i)?;
                }
                (i > at).then_some(i)
            }
        }
    }

    /// Writes the transcriber `body` with `binds` (innermost last) into
    /// `out`, its own tokens placed at `whole`.
    fn transcribe(
        &mut self,
        body: &[Piece],
        binds: &[&HashMap<String, Binding>],
        whole: (usize, usize),
        out: &mut Vec<Piece>,
    ) -> Option<()> {
        let src = self.src;
        let lookup = |name: &[u8]| -> Option<&Binding> {
            let name = std::str::from_utf8(name).ok()?;
            binds.iter().rev().find_map(|b| b.get(name))
        };
        let mut i = 0;
        while i < body.len() {
            if self.made >= self.budget {
                return None;
            }
            self.made += 1;
            let t = body[i];
            if t.bytes(src) == b"$" {
                match body.get(i + 1) {
                    Some(n) if n.kind == Tk::Ident && n.bytes(src) == b"crate" => {
                        out.push(Piece { space: t.space, ..Piece::fixed(Tk::Ident, "crate", whole) });
                        i += 2;
                        continue;
                    }
                    Some(n) if n.kind == Tk::Ident => match lookup(n.bytes(src)) {
                        Some(Binding::One(pieces)) => {
                            self.made += pieces.len();
                            out.extend_from_slice(pieces);
                            i += 2;
                            continue;
                        }
                        Some(Binding::Many(_)) => return None,
                        None => {}
                    },
                    Some(n) if n.kind == Tk::Open(b'(') => {
                        let close = close_of(body, i + 1)?;
                        let (sep, _, next) = repetition_tail(body, close + 1, src)?;
                        let inner = &body[i + 2..close];
                        // As many times as the repeated fragments it names.
                        let mut count = None;
                        for name in dollar_names(inner, src) {
                            if let Some(Binding::Many(v)) = lookup(name) {
                                count = Some(count.map_or(v.len(), |c: usize| c.min(v.len())));
                            }
                        }
                        let count = count?;
                        for k in 0..count {
                            if k > 0
                                && let Some(s) = sep
                            {
                                out.push(Piece { origin: whole, exact: false, ..s });
                            }
                            let mut level = HashMap::new();
                            for name in dollar_names(inner, src) {
                                if let Some(Binding::Many(v)) = lookup(name)
                                    && let Some(b) = v.get(k)
                                {
                                    level.extend(b.iter().map(|(a, b)| (a.clone(), b.clone())));
                                }
                            }
                            let mut deeper = binds.to_vec();
                            deeper.push(&level);
                            self.transcribe(inner, &deeper, whole, out)?;
                        }
                        i = next;
                        continue;
                    }
                    _ => {}
                }
            }
            out.push(Piece { origin: whole, exact: false, ..t });
            i += 1;
        }
        Some(())
    }
}

/// The fragment names a matcher binds.
fn names_in(ms: &[Matcher]) -> Vec<String> {
    let mut out = Vec::new();
    for m in ms {
        match m {
            Matcher::Frag(n, _) => out.push(n.clone()),
            Matcher::Rep(inner, _, _) | Matcher::Group(_, inner) => out.extend(names_in(inner)),
            Matcher::Tok(_) => {}
        }
    }
    out
}

/// The names a transcriber writes after `$`.
fn dollar_names<'s>(body: &[Piece], src: &'s [u8]) -> Vec<&'s [u8]> {
    body.windows(2)
        .filter(|w| w[0].bytes(src) == b"$" && w[1].kind == Tk::Ident)
        .filter_map(|w| match w[1].text {
            Text::Src(a, b) => Some(&src[a..b]),
            Text::Fixed(_) => None,
        })
        .collect()
}

/// The file's tokens: comments and whitespace left out (noted on the token
/// after them), strings and characters as one literal each, `=>`, `::`
/// and `->` as one punctuation each. An unbalanced closer is dropped, so
/// groups always nest.
fn tokens(src: &[u8]) -> Vec<Piece> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(src: &str) -> String {
        String::from_utf8(expand(src.as_bytes()).expect("expanded").text).unwrap()
    }

    #[test]
    fn fragments_repetitions_and_nesting() {
        let src = "macro_rules! define_bool {\n    ($bit:expr, $is:ident, $set:ident) => {\n        fn $is(&self) -> bool { self.b & (1 << $bit) > 0 }\n        fn $set(&mut self) {}\n    };\n}\nimpl Info {\n    define_bool!(0, is_utf8, set_utf8);\n}\n";
        let out = expanded(src);
        assert!(out.contains("fn is_utf8(&self)") || out.contains("fn is_utf8 (&self)"), "{out}");
        assert!(out.contains("fn set_utf8"), "{out}");
        let x = expand(src.as_bytes()).unwrap();
        // The generated name is where the caller wrote it.
        let at = out.find("is_utf8").unwrap();
        assert_eq!(x.point(at, false), (7, 20));
        // A token of the macro's body is at the invocation.
        let body = out.rfind("self.b").unwrap();
        assert_eq!(x.point(body, false), (7, 4));
        assert_eq!(x.expanded, 1);
    }

    #[test]
    fn nested_and_repeated() {
        let src = r#"macro_rules! t {
    ($name:ident, $which:ident, $re:expr) => { t!($name, $which, $re,); };
    ($name:ident, $which:ident, $re:expr, $($lit:expr),*) => {
        #[test] fn $name() { let v = vec![$($lit),*]; check($which(&parse($re)), v); }
    };
}
t!(one, prefixes, "a", M("a"), C("b"));
t!(two, suffixes, "b");
"#;
        let out = expanded(src);
        assert!(out.contains("fn one"), "{out}");
        assert!(out.contains("prefixes (&parse") || out.contains("prefixes(&parse"), "{out}");
        assert!(out.contains("let v = { vec! ( ) ;") && out.contains("[ M(\"a\"), C(\"b\") ]"), "{out}");
        assert!(out.contains("fn two"), "{out}");
    }

    #[test]
    fn hostile_macros_stop_at_their_bounds() {
        // Itself without end, and doubling at each level.
        let src =
            "macro_rules! a { () => { a!(); } }\nmacro_rules! b { () => { b!(); b!(); } }\nfn f() { a!(); b!(); }\n";
        let x = expand(src.as_bytes()).unwrap();
        assert_eq!(x.unread, 2);
        assert_eq!(x.expanded, 0);
        // Unbalanced groups, a lone `$`, no rules: nothing panics.
        for s in [
            "macro_rules! m { ($($x:tt)*) => { $($x)* } } m!(]);",
            "macro_rules! m { ($x:ident) => { $ } } m!(a);",
            "macro_rules! m {} m!();",
            "macro_rules! m { ($x:expr) => { $x }",
            "macro_rules! m { ($($x:ident),+) => { $y } } m!(a, b);",
        ] {
            let _ = expand(s.as_bytes());
        }
    }
}
#[cfg(test)]
mod corpus {
    /// Every Rust file of this repository (macros of its own and `std`'s
    /// by the hundred): an expansion never leaves the grammar more to
    /// misread than the file as written.
    #[test]
    fn no_expansion_of_this_repository_reads_worse() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        let (mut files, mut expanded) = (0, 0);
        let mut worse = Vec::new();
        let mut stack = vec![root.join("host"), root.join("hints-component"), root.join("tests")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read(&path).unwrap();
                    files += 1;
                    let Some(x) = super::expand(&text) else { continue };
                    expanded += 1;
                    let before = parser.parse(&text, None).unwrap().root_node().has_error();
                    if !before && parser.parse(&x.text, None).unwrap().root_node().has_error() {
                        worse.push(path.display().to_string());
                    }
                }
            }
        }
        assert!(files > 100 && expanded > 50, "{files} files, {expanded} expanded");
        assert!(worse.is_empty(), "expanded, these read worse: {worse:?}");
    }
}
