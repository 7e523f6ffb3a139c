//! How a call found in a line stands ([`verdict`]: allowed, the code's own
//! text, or unvalidated), and a line with its unvalidated calls cut out
//! ([`redact`]), or dropped where that cannot be done exactly.

use std::borrow::Cow;

use super::calls::{self, Found, is_arrow};
use super::markers::{hint_markers, looks_like_hint_line, marks_a_tool};
use super::scope::Scope;
use super::templates::template_allowed;

/// What replaces an unvalidated call inside a line.
pub const REDACTED: &str = "[unvalidated call removed]";

/// How a call found in a line stands.
pub(super) enum Verdict {
    /// A validated hint, or a template.
    Allowed,
    /// The code's own text (it stands verbatim in the result or in what
    /// the agent sent): neither allowed nor cut.
    Quoted,
    /// Anything else.
    Unvalidated,
}

pub(super) fn verdict(found: &Found, folded: &str, scope: &Scope<'_>) -> Verdict {
    let allowed = found.call.as_ref().is_some_and(|(tool, args)| {
        template_allowed(args, scope)
            || scope.allowed.iter().any(|(t, a)| t.eq_ignore_ascii_case(tool) && a.as_ref() == args)
    });
    if allowed {
        return Verdict::Allowed;
    }
    match found.span.as_ref().and_then(|s| folded.get(s.clone())) {
        Some(text) if scope.known.quotes(text) => Verdict::Quoted,
        _ => Verdict::Unvalidated,
    }
}

/// A line with its unvalidated calls replaced by [`REDACTED`]; `None` when
/// it must be dropped: it looks like a hint line without a validated call in
/// it, it cannot be analysed within bounds, or a call in it cannot be cut
/// out exactly (its span is not known in the text as shown). `calls` are
/// the calls in `folded` ([`calls::calls_in`]); `split` the spans (in
/// `folded`) of a call that continues on another line.
pub(super) fn redact<'l>(
    l: &'l str,
    folded: &str,
    scope: &Scope<'_>,
    split: &[std::ops::Range<usize>],
    calls: Option<Vec<Found>>,
) -> Option<Cow<'l, str>> {
    let quoted = scope.quoted();
    let mut calls = calls?;
    calls.extend(split.iter().map(|s| Found { call: None, span: Some(s.clone()) }));
    let mut ok = 0;
    let mut bad = Vec::new();
    for c in &calls {
        match verdict(c, folded, scope) {
            Verdict::Allowed => ok += 1,
            Verdict::Quoted => {}
            Verdict::Unvalidated => bad.push(c),
        }
    }
    // A hint line shows one call: a second marker (a hint line inside the
    // reason of another) is a hint nothing validated.
    let markers = hint_markers(folded);
    if looks_like_hint_line(folded) {
        return (bad.is_empty() && ok > 0 && markers <= 1).then_some(Cow::Borrowed(l));
    }
    // A hint marker later in the line, naming a tool (`[tag] → next:
    // resolve X`): what follows it is a hint of its own. Unless it is the
    // one validated hint of the line, it is cut from its marker on.
    if let Some(from) = (markers > 0).then(|| marks_a_tool(folded, scope.vocab)).flatten() {
        if bad.is_empty() && ok > 0 && markers <= 1 {
            return Some(Cow::Borrowed(l));
        }
        let kept = l.get(..from).filter(|_| folded == l)?.trim_end_matches(|c: char| c.is_whitespace() || is_arrow(c));
        return Some(Cow::Owned(format!("{kept} {REDACTED}")));
    }
    if bad.is_empty() {
        return Some(Cow::Borrowed(l));
    }
    if folded != l {
        return None;
    }
    let mut spans: Vec<std::ops::Range<usize>> = bad.iter().map(|c| c.span.clone()).collect::<Option<_>>()?;
    spans.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(l.len());
    let mut at = 0;
    for span in spans {
        if span.start >= at {
            out.push_str(&l[at..span.start]);
            out.push_str(REDACTED);
            at = span.end;
        } else {
            at = at.max(span.end);
        }
    }
    out.push_str(&l[at.min(l.len())..]);
    // What is left must hold no unvalidated call either.
    let rest = calls::calls_in(&out, scope.vocab, &quoted)?;
    rest.iter().all(|c| !matches!(verdict(c, &out, scope), Verdict::Unvalidated)).then_some(Cow::Owned(out))
}
