//! Readings across line breaks, where no line alone holds the whole of
//! what it shows: ids split over lines ([`ids_over_lines`]), JSON values
//! written over several lines that hold an unvalidated call
//! ([`multiline_calls`]), and the bounds on how far such readings go.

use std::borrow::Cow;

use serde_json::Value;

use super::calls::{self, Found};
use super::ids::{self, Known};
use super::redact::{Verdict, verdict};
use super::scope::{Changes, Scope};

/// Non-blank lines after a tool named in prose that are read for its
/// arguments.
pub(super) const MAX_ARG_LINES: usize = 6;

/// Lines read as one around a line break for ids split over it.
const MAX_ID_LINES: usize = 8;

/// `text` with the ids it forges over line breaks replaced (`…e8a5` then
/// `6aa6…` on the next line, a chunk a list item): wherever a line ends
/// in a run of hex digits shorter than an id and the next starts with one,
/// those lines (up to [`MAX_ID_LINES`]) are read as one, a line break being
/// a separator like any other.
pub(super) fn ids_over_lines<'t>(text: &'t str, known: &Known<'_>, changes: &mut Changes) -> Cow<'t, str> {
    fn short_run(hex: usize) -> bool {
        (1..40).contains(&hex)
    }
    // A run of hex digits that is a token of its own (not the end of a word
    // such as `validate`), shorter than an id, ending or starting the line
    // but for a few separators.
    let ends_short = |l: &str| {
        let t = l.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
        let run = t.bytes().rev().take_while(u8::is_ascii_hexdigit).count();
        let token = !t[..t.len() - run].ends_with(|c: char| c.is_alphanumeric());
        l.len() - t.len() <= ids::MAX_JOIN && short_run(run) && token
    };
    let starts_short = |l: &str| {
        let t = l.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
        let run = t.bytes().take_while(u8::is_ascii_hexdigit).count();
        let token = !t[run..].starts_with(|c: char| c.is_alphanumeric());
        l.len() - t.len() <= ids::MAX_JOIN && short_run(run) && token
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut starts = Vec::with_capacity(lines.len());
    let mut at = 0;
    for l in &lines {
        starts.push(at);
        at += l.len() + 1;
    }
    // The line that continues line `k`'s id, past up to two blank lines.
    let next = |k: usize| {
        let j = (k + 1..lines.len().min(k + 4)).find(|&j| !lines[j].trim().is_empty())?;
        (ends_short(lines[k]) && starts_short(lines[j])).then_some(j)
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < lines.len() {
        let Some(mut j) = next(i) else {
            i += 1;
            continue;
        };
        while j - i + 1 < MAX_ID_LINES
            && let Some(k) = next(j)
        {
            j = k;
        }
        let (start, end) = (starts[i], starts[j] + lines[j].len());
        let window = &text[start..end];
        let (read, n) = ids::replace_forged(window, known, &mut ids::Scanner::default());
        if n > 0 {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..start]);
            out.push_str(&read);
            copied = end;
            changes.ids += n;
            changes.lines += j - i + 1;
        }
        i = j + 1;
    }
    match out {
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
        None => Cow::Borrowed(text),
    }
}

/// Most JSON values read over several lines (or failing past the line
/// after their start) in one text; past them, the lines that open more are
/// dropped unread.
pub(super) const MAX_SPANNING: usize = 32;

/// The lines of a JSON value written over several lines (a pretty-printed
/// `{"name": …, "arguments": …}`, a JSON-RPC body) that holds a call the
/// host did not validate: every line it spans, and the line before it when
/// that is where its tool is named. Each line alone holds no whole call, so
/// the line-by-line reading misses it.
///
/// `calls_of` gives a line's calls ([`calls::calls_in`]), for a tool named
/// in prose a few lines above such a value.
pub(super) fn multiline_calls<'c>(
    folded: &[Cow<'_, str>],
    scope: &Scope<'_>,
    calls_of: impl Fn(usize) -> Option<&'c [Found]>,
) -> std::collections::BTreeSet<usize> {
    let mut dropped = std::collections::BTreeSet::new();
    let joined = folded.join("\n");
    let mut starts = Vec::with_capacity(folded.len());
    let mut at = 0;
    for l in folded {
        starts.push(at);
        at += l.len() + 1;
    }
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let quoted = scope.quoted();
    let mut tried = 0;
    let mut n = 0;
    while n < folded.len() {
        let Some(col) = left_open(&folded[n]) else {
            n += 1;
            continue;
        };
        if tried >= MAX_SPANNING {
            dropped.insert(n);
            n += 1;
            continue;
        }
        let open = starts[n] + col;
        let mut stream = serde_json::Deserializer::from_str(&joined[open..]).into_iter::<Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            // Code's braces fail at once; a long run of JSON that fails
            // late counts as an attempt, as a value read does.
            Some(Err(e)) => {
                tried += usize::from(e.line() > 2);
                n += 1;
                continue;
            }
            None => {
                n += 1;
                continue;
            }
        };
        tried += 1;
        let last = line_of(open + stream.byte_offset().saturating_sub(1));
        // Its tool: named before it on its line, or on the line before
        // when nothing but decoration precedes it.
        let before = folded[n][..col].to_ascii_lowercase();
        let mut first = n;
        let mut named = calls::named_before(&before, scope.vocab).map(|(tool, _)| tool);
        if named.is_none() && !before.contains(|c: char| c.is_alphanumeric()) {
            // (past a code fence: a tool, then its arguments in a block)
            let above = (n.saturating_sub(3)..n).rev().find(|&k| says_something(&folded[k]));
            // (the tool must end that line: `describe` then its block)
            let dangling = above.and_then(|k| Some((k, calls::dangling_tool(&folded[k], scope.vocab)?)));
            if let Some((k, name)) = dangling {
                named = calls::tool_named(&folded[k][name], scope.vocab);
                first = k;
            }
        }
        // (a tool named in prose a few lines above, the object keyed by
        // its parameters)
        if let (None, Value::Object(args)) = (named, &value) {
            let above = (n.saturating_sub(MAX_ARG_LINES + 2)..n).rev().filter(|&k| !folded[k].trim().is_empty());
            let prose = above
                .take(MAX_ARG_LINES)
                .find_map(|k| Some((k, calls::named_alone(&folded[k], scope.vocab, &quoted, || calls_of(k))?)));
            if let Some((k, (tool, _))) = prose.filter(|(_, (tool, _))| calls::is_arguments(args, tool, scope.vocab)) {
                named = Some(tool);
                first = k;
            }
        }
        let block = &joined[open..open + stream.byte_offset()];
        let calls = calls::calls_in_json(&value, named, scope.vocab, &quoted);
        let unvalidated = match calls {
            None => true,
            Some(calls) => {
                !scope.known.quotes(block)
                    && calls.iter().any(|c| matches!(verdict(c, "", scope), Verdict::Unvalidated))
            }
        };
        if unvalidated {
            dropped.extend(first..=last);
        }
        n = last.max(n) + 1;
    }
    dropped
}

/// Whether a line shows something to read: not blank, not a code fence.
pub(super) fn says_something(line: &str) -> bool {
    !line.trim().is_empty() && !is_fence(line)
}

/// A Markdown code fence (```` ``` ```` or `~~~`, a language after it).
fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Where a JSON value opens on `line` and is left open at its end: the
/// first `{` or `[` not closed on it (strings skipped).
fn left_open(line: &str) -> Option<usize> {
    let mut open: Vec<usize> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, b) in line.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => open.push(i),
            b'}' | b']' => {
                open.pop();
            }
            _ => {}
        }
    }
    open.first().copied()
}
