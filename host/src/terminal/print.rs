//! Printing an answer: text for a terminal (coloured when it is one) or
//! JSON, each actionable hint as a command to paste.

use anstyle::{AnsiColor, Style};
use serde_json::{Map, Value, json};

use super::names::{Ambiguous, Named};
use super::shell::Shell;
use crate::response::Response;
use crate::sanitize;
use crate::tools::HintOut;

pub(super) const TAG_OK: Style = AnsiColor::Green.on_default().bold();
pub(super) const TAG_EMPTY: Style = AnsiColor::Yellow.on_default().bold();
pub(super) const TAG_ERROR: Style = AnsiColor::Red.on_default().bold();
pub(super) const SUMMARY: Style = Style::new().bold();
pub(super) const NEXT: Style = AnsiColor::Cyan.on_default().bold();
pub(super) const COMMAND: Style = AnsiColor::Cyan.on_default();
pub(super) const ID: Style = AnsiColor::Blue.on_default();
pub(super) const ASK: Style = AnsiColor::Magenta.on_default().bold();
pub(super) const QUIET: Style = Style::new().dimmed();

pub(super) fn paint(style: Style, s: &str) -> String {
    format!("{style}{s}{style:#}")
}

/// Graph-derived text (a name, a qualified name, a path) for one terminal
/// line: nothing that moves the cursor, starts a line or hides.
pub(super) fn shown(s: &str) -> String {
    sanitize::escape(s, 200)
}

/// The line that says what a name was read as.
pub fn note(n: &Named) -> String {
    format!("note: `{}` is {} {}", shown(&n.name), shown(&n.symbol), n.id)
}

/// A hint for the terminal: `→ next: <command>` on a line of its own (the
/// line after the arrow is the whole command, nothing the policy wrote),
/// then its reason, indented (withheld when it reads as a command: only
/// the host writes commands on a terminal).
pub(super) fn hint_block(shell: &Shell, tool: &str, args: &Map<String, Value>, reason: &str) -> String {
    let command = shell.command(tool, args);
    let reason = sanitize::line(reason, crate::validate::MAX_REASON);
    let reason = if sanitize::is_shell_line(&reason, &shell.program) {
        "(its reason reads as a shell command: not shown)".to_owned()
    } else {
        reason
    };
    format!("{} {}\n  {}\n", paint(NEXT, "→ next:"), paint(COMMAND, &command), paint(QUIET, &format!("— {reason}")))
}

/// The answer as text, with ANSI styles (the stream strips them when
/// colour is off): first what names were read as; then the policy's text,
/// the state tag coloured by outcome, the summary bold, ids in details
/// coloured, `? ask user:` highlighted; the policy's own hint lines
/// replaced by the response's actionable hints, each as the command that
/// makes it (where the policy put its first hint line, else before the
/// ask-user line or at the end).
pub fn text(response: &Response, named: &[Named], shell: &Shell) -> String {
    let mut out = String::new();
    for n in named {
        out.push_str(&paint(QUIET, &note(n)));
        out.push('\n');
    }
    let tag_style = if response.is_error {
        TAG_ERROR
    } else if crate::metrics::Outcome::of(false, &response.structured) == crate::metrics::Outcome::Empty {
        TAG_EMPTY
    } else {
        TAG_OK
    };
    let mut hints: String = response
        .hints
        .iter()
        .filter(|h| h.actionable)
        .map(|h| hint_block(shell, &h.tool, &h.args, &h.reason))
        .collect();
    // A shell line continued with `\` carries on on the next line.
    let mut continued = false;
    for (i, line) in response.text.lines().enumerate() {
        // Only the host writes commands on a terminal.
        if continued || sanitize::is_shell_line(line, &shell.program) {
            continued = line.trim_end().ends_with('\\');
            continue;
        }
        if sanitize::is_hint_line(line) {
            out.push_str(&std::mem::take(&mut hints));
            continue;
        }
        if line.starts_with("? ask user:") {
            out.push_str(&std::mem::take(&mut hints));
            out.push_str(&paint(ASK, line));
        } else if line.starts_with("note:") {
            out.push_str(&paint(QUIET, line));
        } else if let Some((tag, rest)) = line.strip_prefix('[').and_then(|r| r.split_once(']')).filter(|_| i == 0) {
            out.push_str(&paint(tag_style, &format!("[{tag}]")));
            out.push_str(&paint(SUMMARY, rest));
        } else {
            out.push_str(&ids_painted(line));
        }
        out.push('\n');
    }
    out.push_str(&hints);
    out
}

/// A line with its 40-hex ids coloured.
pub(super) fn ids_painted(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(at) = rest.find(|c: char| c.is_ascii_hexdigit()) {
        let run = rest[at..].find(|c: char| !c.is_ascii_hexdigit()).map_or(rest.len(), |n| at + n);
        out.push_str(&rest[..at]);
        let word = &rest[at..run];
        // A whole word of 40 hex digits, not part of a longer word.
        let whole = !rest[..at].ends_with(|c: char| c.is_alphanumeric())
            && !rest[run..].starts_with(|c: char| c.is_alphanumeric());
        if word.len() == 40 && whole {
            out.push_str(&paint(ID, word));
        } else {
            out.push_str(word);
        }
        rest = &rest[run..];
    }
    out.push_str(rest);
    out
}

/// The answer as JSON: the structured result, each actionable hint with
/// the `command` that makes it, and the names read as ids.
pub fn json(response: &Response, named: &[Named], shell: &Shell) -> Value {
    let mut structured = response.structured.clone();
    if let Value::Object(map) = &mut structured {
        map.insert("hints".into(), hints_json(&response.hints, shell));
        if !named.is_empty() {
            map.insert("resolved_names".into(), json!(named));
        }
    }
    structured
}

pub(super) fn hints_json(hints: &[HintOut], shell: &Shell) -> Value {
    let hints = hints.iter().map(|h| {
        let mut v = json!(h);
        if h.actionable {
            v["command"] = json!(shell.command(&h.tool, &h.args));
        }
        v
    });
    Value::Array(hints.collect())
}

/// A name that names several symbols: each candidate as a `describe` hint,
/// and `resolve` (whose advice narrows it) first.
pub(super) fn ambiguous_hints(a: &Ambiguous) -> Vec<HintOut> {
    let hint = |tool: &str, args: Value, reason: String| HintOut {
        tool: tool.into(),
        args: args.as_object().cloned().unwrap_or_default(),
        actionable: true,
        reason,
        shape: None,
    };
    let narrow = hint("resolve", json!({"identifier": a.name}), "how to narrow it".into());
    let pick = a.candidates.iter().filter_map(|c| {
        let id = c["id"].as_str()?;
        let fqn = c["fqn"].as_str().unwrap_or("?");
        Some(hint("describe", json!({"id": id}), format!("this one: {}", sanitize::line(fqn, 150))))
    });
    std::iter::once(narrow).chain(pick).collect()
}

pub(super) fn ambiguous_message(a: &Ambiguous) -> String {
    format!("`{}` names {} symbols; give an id instead", shown(&a.name), a.candidates.len())
}

/// A name that names several symbols, for the terminal.
pub fn ambiguous_text(a: &Ambiguous, shell: &Shell) -> String {
    let mut out = format!("{} {}:\n", paint(TAG_ERROR, "[ambiguous_name]"), ambiguous_message(a));
    for c in &a.candidates {
        let field = |k: &str| shown(c[k].as_str().unwrap_or("?"));
        let place = format!("{}:{}", field("file"), c["line"]);
        let line = format!("{} {} {}", field("id"), field("kind"), field("fqn"));
        out.push_str(&format!("{} {}\n", ids_painted(&line), paint(QUIET, &place)));
    }
    for h in ambiguous_hints(a) {
        out.push_str(&hint_block(shell, &h.tool, &h.args, &h.reason));
    }
    out
}

/// A name that names several symbols, as JSON (`error.kind` is
/// `ambiguous_name`), with the same hints as the text.
pub fn ambiguous_json(a: &Ambiguous, shell: &Shell) -> Value {
    json!({
        "error": {"kind": "ambiguous_name", "message": ambiguous_message(a), "candidates": a.candidates},
        "hints": hints_json(&ambiguous_hints(a), shell),
    })
}
