//! The one sanitiser: every text that leaves the host goes through here.
//!
//! Three audiences, three functions:
//! - the agent's text ([`agent_text`]): invisible and reordering characters
//!   removed, every kind of line break made a real `\n`, no id the agent
//!   may not be shown, and no call shown unless it is one the host validated;
//! - the log and the terminal ([`escape`]): anything that is not plainly
//!   printable (line breaks, escapes, bidi overrides, zero-width characters)
//!   is written as `\u{…}`, so a guest-chosen name can never start a line of
//!   its own or move the cursor; [`is_shell_line`] for the lines a terminal
//!   must not show;
//! - single-line fields ([`line()`]; [`safe_line`] for a teaching message,
//!   [`has_call`] and [`scrub_ids`] for a hint's reason).
//!
//! # Two layers
//!
//! 1. **No invented ids** ([`ids`]): every id-shaped token (40 hex digits in
//!    any case, also split by separators, escaped, full-width or written with
//!    look-alike letters) must be one the agent sent in this call, one the
//!    tool's result holds, one a validated hint carries, or one the
//!    session's history holds ([`Known`]); any other is replaced in place by
//!    [`REPLACED_ID`]. A forged call to a symbol is then impossible in any
//!    notation: the symbol cannot be named. Names are not ids and stay: a
//!    name is no capability (the agent must resolve it, and the host answers
//!    that truthfully), and policies rightly name symbols in advice.
//! 2. **No unvalidated call** ([`calls`]): a tool name followed by an
//!    argument list in any notation, or a record naming a tool, is a call.
//!    A call is **allowed** when its arguments are a JSON object equal to a
//!    validated actionable hint of the response (or a validated teaching
//!    example), or when it is a template (some argument string is a whole
//!    `<placeholder>`, so it cannot be sent as it is). A call whose whole
//!    text stands verbatim in the result or in what the agent sent (a
//!    method's signature, the agent's own query) is the code's text, not
//!    the policy's: it stays. Every other call is cut out.
//!
//! The text is read as a reader sees it ([`fold`]): NFKC, invisible
//! characters removed, look-alike letters of other scripts as Latin.
//!
//! [`agent_text`] reads a text line by line here; what it is read against
//! ([`Scope`]) is in [`scope`], the readings across line breaks in
//! [`spans`], a call's verdict and a line's redaction in [`redact`], hint
//! lines, hint markers and shell lines in [`markers`], templates in
//! [`templates`].
//!
//! # What happens to a line
//!
//! - Unknown ids are replaced first, in place.
//! - Every call in it allowed: it stays as it is.
//! - It *looks like* a hint line — its first word is `next` followed by
//!   `:`, a dash, an arrow, `>` or `=`, whatever arrows, bullets or spaces
//!   come before it: it stays only if it holds at least one call, all its
//!   calls are allowed and it shows no second marker; otherwise it is
//!   dropped whole. A marker later in a line, followed by a tool's name
//!   (`[tag] → next: resolve X`), starts a hint too: unless it is the
//!   line's one validated hint, the line is cut from it on.
//! - A JSON value over several lines holding an unvalidated call: every
//!   line of it goes; so does a Markdown table row naming a tool, with a
//!   value under a parameter's header. A tool named in prose and an object
//!   of its parameters up to three lines on: both are cut. Ids split over
//!   lines are read across the break.
//! - Otherwise each call that is not allowed is cut out and replaced by
//!   [`REDACTED`]; where that cannot be done exactly (the normalised line
//!   differs from the text, or a call's extent is unknown) the line is
//!   dropped. A line the analysis cannot finish cheaply (too many `{` that
//!   do not parse) is dropped too: the filter fails closed.

mod calls;
mod fold;
pub mod ids;
mod markers;
mod redact;
mod scope;
mod spans;
mod templates;

use std::borrow::Cow;

use calls::Found;
pub use calls::{MAX_FAILED_PARSES, OTHER_SUBCOMMANDS, Vocabulary, is_arrow, is_subcommand};
pub use ids::{Known, REPLACED_ID};
pub use markers::{has_call, has_call_to, has_hint_marker, is_hint_line, is_shell_line};
pub use redact::REDACTED;
use redact::{Verdict, redact, verdict};
use scope::clean_text;
pub use scope::{Allowed, Changes, MAX_TEXT, Scope};
pub use signpost_policy::text::{escape, is_invisible, is_line_break, is_plain, is_space, line};
use spans::{MAX_ARG_LINES, ids_over_lines, multiline_calls, says_something};
pub use templates::{is_template, template_allowed};

/// The agent's text: cleaned; every id the agent may not be shown replaced
/// in place; every unvalidated call in a line replaced by [`REDACTED`] (or
/// the line dropped where that cannot be done safely; see the module
/// docs), a call split over two lines included.
pub fn agent_text(text: &str, scope: &Scope<'_>) -> (String, Changes) {
    let mut changes = Changes::default();
    let cleaned = clean_text(text);
    let cleaned = ids_over_lines(&cleaned, &scope.known, &mut changes);
    let mut scanner = ids::Scanner::default();
    let lines: Vec<(Cow<'_, str>, bool)> = cleaned
        .split('\n')
        .map(|l| {
            let (l, n) = ids::replace_forged(l, &scope.known, &mut scanner);
            changes.ids += n;
            (l, n > 0)
        })
        .collect();
    let folded: Vec<Cow<'_, str>> = lines.iter().map(|(l, _)| fold::fold(l)).collect();
    // A tool named at the end of one line, its arguments opening the next:
    // (line, span) of each part.
    let mut split: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    // The last line read as an item of a list of values: a line inside a
    // list opens none of its own (each line is read once).
    let mut listed = None;
    for i in 0..folded.len() {
        let dangling = calls::dangling_tool(&folded[i], scope.vocab);
        let Some(name) = dangling.clone().or_else(|| calls::acting_before_colon(&folded[i], scope.vocab)) else {
            continue;
        };
        let read = |j: &usize| says_something(&folded[*j]) && !calls::is_label(&folded[*j]);
        let Some(j) = (i + 1..folded.len()).find(read) else {
            continue;
        };
        if let Some(args) = dangling.and_then(|_| calls::leading_args(&folded[j], scope.vocab)) {
            split.push((i, name.start..folded[i].len()));
            split.push((j, args));
            continue;
        }
        // (`delete_entities:`, then a list of names: every item of it, past
        // blank lines)
        if listed.is_some_and(|last| i <= last) {
            continue;
        }
        let word = &folded[i][name.clone()];
        let Some(value) = calls::leading_value(word, &folded[j], scope.vocab) else { continue };
        split.push((i, name.start..folded[i].len()));
        split.push((j, value));
        listed = Some(j);
        for (k, item) in folded.iter().enumerate().skip(j + 1).filter(|(_, l)| says_something(l)) {
            let Some(value) = calls::leading_value(word, item, scope.vocab) else { break };
            split.push((k, value));
            listed = Some(k);
        }
    }
    // Each line's calls, read once when first needed: by the readings
    // across lines below and by the line's own verdict.
    let quoted = scope.quoted();
    let mut line_calls: Vec<std::cell::OnceCell<Option<Vec<Found>>>> =
        (0..folded.len()).map(|_| std::cell::OnceCell::new()).collect();
    let spanned = {
        let calls_of =
            |i: usize| line_calls[i].get_or_init(|| calls::calls_in(&folded[i], scope.vocab, &quoted)).as_deref();
        let mut spanned = multiline_calls(&folded, scope, calls_of);
        spanned.extend(calls::table_calls(&folded, scope.vocab, &quoted));
        // A name broken over a line at a `_` or `-` (`delete_`, then
        // `entities {…}` on the next): the two lines read as one.
        let unvalidated = |line: &str, calls: Option<&[Found]>| {
            calls.map_or(usize::MAX, |calls| {
                calls.iter().filter(|c| matches!(verdict(c, line, scope), Verdict::Unvalidated)).count()
            })
        };
        for i in 0..folded.len().saturating_sub(1) {
            let (a, b) = (&folded[i], &folded[i + 1]);
            let broken = a.len() >= 2
                && a.ends_with(['_', '-'])
                && a.as_bytes()[a.len() - 2].is_ascii_alphanumeric()
                && b.starts_with(|c: char| c.is_ascii_alphabetic());
            if !broken {
                continue;
            }
            let joined = format!("{a}{b}");
            let alone = unvalidated(a, calls_of(i)).saturating_add(unvalidated(b, calls_of(i + 1)));
            if unvalidated(&joined, calls::calls_in(&joined, scope.vocab, &quoted).as_deref()) > alone {
                spanned.extend([i, i + 1]);
            }
        }
        // A tool named in prose, an object of its arguments a few lines on
        // (`Use delete_entities.`, a blank line, `{"entityNames": …}`);
        // lines dropped already are out of it.
        for i in (0..folded.len()).filter(|i| !spanned.contains(i)) {
            let Some(name) = calls::named_alone(&folded[i], scope.vocab, &quoted, || calls_of(i)) else {
                continue;
            };
            let next = (i + 1..folded.len()).filter(|&j| says_something(&folded[j]) && !spanned.contains(&j));
            let object = |j: usize| calls::keyed_object(&folded[j], name.0, scope.vocab, &quoted, calls_of(j));
            if let Some((j, at)) = next.take(MAX_ARG_LINES).find_map(|j| Some((j, object(j)?))) {
                split.push((i, name.1..folded[i].len()));
                split.push((j, at..folded[j].len()));
                continue;
            }
            // (or a few lines above it: `Payload: {…}`, then `Endpoint: delete_entities`)
            let before = (0..i).rev().filter(|&j| says_something(&folded[j]) && !spanned.contains(&j));
            if let Some((j, at)) = before.take(MAX_ARG_LINES).find_map(|j| Some((j, object(j)?))) {
                split.push((j, at..folded[j].len()));
                split.push((i, name.1..folded[i].len()));
            }
        }
        spanned
    };
    let mut split_by_line: std::collections::HashMap<usize, Vec<std::ops::Range<usize>>> =
        std::collections::HashMap::new();
    for (line, span) in split {
        split_by_line.entry(line).or_default().push(span);
    }
    let mut out = String::with_capacity(cleaned.len());
    let mut first = true;
    for (n, ((l, scrubbed), folded)) in lines.iter().zip(&folded).enumerate() {
        if spanned.contains(&n) {
            changes.lines += 1;
            changes.calls += 1;
            tracing::debug!(
                line = n + 1,
                "removed a line of a multi-line record or a table row that shows an unvalidated call"
            );
            continue;
        }
        let parts: Vec<std::ops::Range<usize>> = split_by_line.remove(&n).unwrap_or_default();
        let l: &str = l;
        let calls = line_calls[n].take().unwrap_or_else(|| calls::calls_in(folded, scope.vocab, &quoted));
        match redact(l, folded, scope, &parts, calls) {
            Some(kept) => {
                let cut = matches!(&kept, Cow::Owned(redacted) if redacted != l);
                if cut {
                    changes.calls += 1;
                }
                if cut || *scrubbed {
                    changes.lines += 1;
                    tracing::debug!(line = n + 1, "changed a text line: an unvalidated call or an unknown id");
                }
                if !first {
                    out.push('\n');
                }
                first = false;
                out.push_str(&kept);
            }
            None => {
                changes.lines += 1;
                changes.calls += 1;
                tracing::debug!(line = n + 1, "removed a text line that shows an unvalidated call");
            }
        }
    }
    (out, changes)
}

/// One line for an agent, single-line fields included (a teaching message):
/// cleaned like [`line()`], ids the agent may not be shown replaced, then
/// its unvalidated calls redacted; `None` when the line must go whole.
pub fn safe_line(l: &str, max: usize, scope: &Scope<'_>) -> Option<String> {
    let single = line(l, max);
    let (l, _) = ids::replace_forged(&single, &scope.known, &mut ids::Scanner::default());
    let folded = fold::fold(&l);
    let calls = calls::calls_in(&folded, scope.vocab, &scope.quoted());
    redact(&l, &folded, scope, &[], calls).map(Cow::into_owned)
}

/// `s` with every id the agent may not be shown replaced (a hint's
/// reason), and how many were.
pub fn scrub_ids(s: &str, scope: &Scope<'_>) -> (String, usize) {
    let (s, n) = ids::replace_forged(s, &scope.known, &mut ids::Scanner::default());
    (s.into_owned(), n)
}

#[cfg(test)]
mod tests;
