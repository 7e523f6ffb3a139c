//! A macro's rules read from its definition, matched against an
//! invocation's tokens and transcribed, nested invocations expanded.

use std::collections::HashMap;

use super::*;

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

/// One macro: its rules, and where its definitions are (invocations inside
/// them are expanded only when the macro is).
pub(super) struct Macro {
    rules: Vec<(Vec<Matcher>, Vec<Piece>)>,
    pub(super) spans: Vec<(usize, usize)>,
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
pub(super) fn definitions<'s>(toks: &[Piece], src: &'s [u8]) -> HashMap<&'s str, Macro> {
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

pub(super) struct Expander<'a> {
    pub(super) src: &'a [u8],
    pub(super) macros: &'a HashMap<&'a str, Macro>,
    pub(super) budget: usize,
    /// Tokens made so far, by every expansion of the file.
    pub(super) made: usize,
    pub(super) expanded: usize,
    pub(super) unread: usize,
}

impl Expander<'_> {
    /// The expansion of `name!(args)` placed at `whole`, its own nested
    /// invocations expanded; none if no rule matches or a bound is met.
    pub(super) fn invoke(
        &mut self,
        name: &str,
        args: &[Piece],
        whole: (usize, usize),
        depth: usize,
    ) -> Option<Vec<Piece>> {
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
    pub(super) fn std_args(
        &mut self,
        name: &str,
        args: &[Piece],
        whole: (usize, usize),
        depth: usize,
    ) -> Option<Vec<Piece>> {
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
                    // A type's generics (`->` is one token, never a `>`).
                    if kind == Frag::Ty {
                        angles += i32::from(b == b"<") - i32::from(b == b">");
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
