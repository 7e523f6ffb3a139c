//! What a text is read against, and what reading it changed: [`Scope`],
//! the calls the host validated (their arguments as a text shows them),
//! where the ids a response may show come from and the tools a call may
//! name; [`Changes`], the lines, ids and calls the sanitiser changed; and
//! [`clean_text`], a text as the agent will see it, before it is read.

use std::borrow::Cow;

use serde_json::{Map, Value};

use signpost_policy::text::{is_invisible, is_line_break, is_plain, is_space};

use super::calls::Vocabulary;
use super::fold;
use super::ids::Known;

/// Longest text an agent receives, in bytes.
pub const MAX_TEXT: usize = 256 << 10;
/// A call the host validated: the only calls a text may show.
#[derive(Debug, Clone, Copy)]
pub struct Allowed<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Arguments.
    pub args: &'a Map<String, Value>,
}

/// Multi-line text as the agent will see it: every line break a `\n`
/// (`\r\n` one break), spaces plain, control and invisible characters gone,
/// at most [`MAX_TEXT`] bytes.
pub(super) fn clean_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_TEXT));
    let mut rest = s;
    while !rest.is_empty() {
        if out.len() >= MAX_TEXT {
            out.push_str("\n… (truncated)");
            break;
        }
        // A run of printable ASCII stays as it is: copied at once.
        let plain = rest.bytes().take_while(|b| is_plain(*b)).count();
        if plain > 0 {
            let take = plain.min(MAX_TEXT - out.len());
            out.push_str(&rest[..take]);
            rest = &rest[take..];
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        if is_line_break(c) {
            if c == '\r' && chars.as_str().starts_with('\n') {
                chars.next();
            }
            out.push('\n');
        } else if is_space(c) {
            out.push(' ');
        } else if !c.is_control() && !is_invisible(c) {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// What a response may show: the calls the host validated, and where the
/// ids it may show come from.
#[derive(Debug)]
pub struct Scope<'a> {
    pub(super) allowed: Vec<(&'a str, Cow<'a, Map<String, Value>>)>,
    pub(super) known: Known<'a>,
    pub(super) vocab: &'a Vocabulary,
}

impl<'a> Scope<'a> {
    /// The validated calls `allowed` (each hint's ids are known too) and
    /// the other sources of ids in `known`.
    pub fn new(allowed: &[Allowed<'a>], known: Known<'a>) -> Self {
        let known = allowed.iter().fold(known, |k, a| k.hint(a.args));
        Scope { allowed: seen_as_text(allowed), known, vocab: Vocabulary::signpost() }
    }

    /// The tools a call may name: Signpost's own unless said otherwise
    /// (a proxy's are its backend's).
    pub fn with_vocabulary(mut self, vocab: &'a Vocabulary) -> Self {
        self.vocab = vocab;
        self
    }

    /// Where the ids this response may show come from.
    pub fn known(&self) -> &Known<'a> {
        &self.known
    }

    pub(super) fn quoted(&self) -> impl Fn(&str) -> bool + '_ {
        |s: &str| self.known.quotes(s)
    }
}

/// What the sanitiser changed in a text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// Lines changed or dropped (each counted once).
    pub lines: usize,
    /// Ids replaced by [`REPLACED_ID`](super::REPLACED_ID).
    pub ids: usize,
    /// Calls cut out or lines dropped for showing a call that is not validated.
    pub calls: usize,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_none(&self) -> bool {
        self.lines == 0
    }
}

/// The allowed calls' arguments as they read once written in a text:
/// cleaned and folded like the text itself (an argument holding a bidi
/// control still matches its own line, which no longer shows it).
fn seen_as_text<'a>(allowed: &[Allowed<'a>]) -> Vec<(&'a str, Cow<'a, Map<String, Value>>)> {
    allowed
        .iter()
        .map(|a| {
            // Written in printable ASCII, it reads as it is written (the
            // usual case): JSON writes ASCII controls as printable escapes.
            if map_writes_ascii(a.args) {
                return (a.tool, Cow::Borrowed(a.args));
            }
            let written = serde_json::to_string(a.args).unwrap_or_default();
            let cleaned = clean_text(&written);
            let shown = fold::fold(&cleaned);
            let args = match serde_json::from_str(&shown) {
                Ok(Value::Object(map)) if shown != written => Cow::Owned(map),
                _ => Cow::Borrowed(a.args),
            };
            (a.tool, args)
        })
        .collect()
}

/// Whether JSON writes `s` in printable ASCII: it escapes ASCII control
/// characters, and writes every other character as it is.
fn writes_ascii(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii() && b != 0x7f)
}

fn map_writes_ascii(map: &Map<String, Value>) -> bool {
    map.iter().all(|(k, v)| writes_ascii(k) && value_writes_ascii(v))
}

fn value_writes_ascii(v: &Value) -> bool {
    match v {
        Value::String(s) => writes_ascii(s),
        Value::Array(items) => items.iter().all(value_writes_ascii),
        Value::Object(map) => map_writes_ascii(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}
