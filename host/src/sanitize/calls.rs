//! What reads as a call, in any notation an agent might copy.
//!
//! A line is read after [`super::fold::fold`]. A **call** is:
//! - a tool name (any case) followed, within 48 bytes and up to two short
//!   words, by a JSON object: `describe {"id": …}`, `describe({…})`,
//!   `"describe": {…}`; glued to what precedes it too (`[31mdescribe {`);
//! - a tool name standing as a word (`mcp__signpost__describe` and
//!   `functions.describe` included) followed by an argument list in another
//!   notation: brackets holding arguments (`neighbors(['…'],'out')`,
//!   `describe(id="…")`, `neighbors ["…"] out`, `find [kind=class]`, `()`),
//!   a quoted string (`resolve "OrderService"`), `key=value` or `key: value`
//!   with a parameter name (`describe id=…`, `find kind: class`), a shell
//!   flag (`--direction out`), or an id (`describe 7217…`);
//! - a tool name ending a line whose next non-empty line starts with an
//!   object, bracketed arguments or `key=value` (returned by
//!   [`dangling_tool`] and [`leading_args`]: the caller pairs lines);
//! - the program's shell form: `signpost <subcommand> …`, any path to it;
//! - a JSON record at any depth naming a tool under `tool`, `tool_name`,
//!   `function` or `recipient_name` (with or without arguments), or under
//!   `name` beside `arguments`/`args`/`input`/`parameters`/`params` (or any
//!   key holding `arg`, `input` or `param`, or `with`): MCP's `tools/call`
//!   params, OpenAI's function calls (arguments as a JSON string), the
//!   `<tool_call>` convention of open models; a tool's name under a verb key
//!   (`method` of JSON-RPC, `action` of LangChain, `op`, `call`, …); a
//!   member named after a tool (`{"describe": {…}}`); and such a key
//!   written out in another notation (`tool: describe`, `function=describe`,
//!   `<invoke name="describe">`, `Action: describe`);
//! - a tool named anywhere before a JSON object on its line;
//! - `-key value` and `:key value` arguments, a comma or `|` after the name;
//!   right after the name, a parameter's name and a bare word (`find kind
//!   class`, `find | kind | class`);
//! - XML: an element that names a tool (`<name>find</name>`,
//!   `<tool>find</tool>`), or a tool's element holding elements named after
//!   its parameters (`<find><kind>class</kind>`, on one line or the next);
//! - a table row with a cell naming a tool and a value under a header that
//!   is a parameter's name ([`table_calls`]): Markdown and grid tables,
//!   comma-separated, aligned by spaces; an HTML row on one line; a
//!   Markdown table flattened onto one line;
//! - a key naming a tool before a dotted leader (`Tool ..... find`);
//! - a tool that may change state ([`Vocabulary::acting`]) and a value in
//!   the clause its name opens (`delete_entities Alice`, `run
//!   delete_entities on both Alice and Bob`: a quoted string or a
//!   capitalised word of no prose; `notations::names_a_value`), or a list
//!   of values under it (`delete_entities:`, then `- Alice`;
//!   [`leading_value`]). After a tool that only reads, a bare word is prose
//!   (`resolve OrderService first`): a name there is no capability;
//! - the name spelled otherwise: `delete-entities`, `deleteEntities`,
//!   `Delete Entities`, `f-i-n-d` (its letters and digits in order, split by
//!   `-`, `_` or spaces), with arguments as above.
//!
//! Across lines ([`super::agent_text`]): a JSON value written over several
//! lines is read whole, and a tool ending a line is paired with arguments
//! opening the next (an object, `key=value`, a parameter's name as a YAML
//! or TOML key, past a code fence); a tool named in prose ([`named_alone`])
//! is paired with an object of its own parameters (or of every parameter it
//! requires, beside others) on one of the next three lines
//! ([`keyed_object`]).
//!
//! Only a JSON object can be compared with a validated hint; every other
//! notation is a call the host cannot vet, so it never counts as allowed.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::tools::{self, Tool};
use crate::trails::carry::TRAIL_ARG;

mod json;
mod lines;
mod notations;
mod tables;

pub(super) use json::calls_in_json;
use json::json_calls;
pub use lines::{
    acting_before_colon, dangling_tool, is_arguments, keyed_object, leading_args, leading_value, named_alone,
};
use notations::{named_calls, shell_calls, spelled_calls};
use tables::{flattened_table, header_then_tool, html_cells};
pub use tables::{is_label, table_calls};

/// `{` positions per line that may fail to parse before the line is dropped.
pub const MAX_FAILED_PARSES: usize = 64;
/// Most bytes between a tool's name and its arguments.
const MAX_CALL_GAP: usize = 48;
/// Most words between them (`describe with {…}`), each of at most 10 letters.
const MAX_CALL_WORDS: usize = 2;
/// The tools a text may call, as the sanitiser reads them: their names
/// and their parameters' names. Signpost's own tools ([`Vocabulary::signpost`]),
/// or the tools of the server a proxy fronts ([`Vocabulary::new`]).
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Tool names, lower-case, longest first (a name that ends another,
    /// `diff` in `git_diff`, is tried after it).
    names: Vec<String>,
    /// Parameter names (the trail included), with their shell-flag
    /// spellings (`edge-types`): a `key=value` with one of these after a
    /// tool name is an argument.
    params: Vec<String>,
    /// Each tool's own parameters (lower-case), by its name.
    params_of: std::collections::HashMap<String, Vec<String>>,
    /// Each tool's required parameters (lower-case), by its name.
    required_of: std::collections::HashMap<String, Vec<String>>,
    /// The ASCII bytes a word can hold: letters and `_`, and every other
    /// byte some tool's name holds (digits, `-`, `.`, `/`, `:`).
    word: [bool; 128],
    /// The bytes a tool's name ends with, lower-case: a word that ends
    /// otherwise names no tool (most words of a text; one look each).
    last: [bool; 256],
    /// Each name's letters and digits, lower-case, when it has 4 or more
    /// (a name spelled otherwise is read by them), by their first byte.
    skeletons: Vec<(u8, Vec<u8>, usize)>,
    /// Whether some skeleton starts with this byte (lower-case).
    skeleton_starts: [bool; 128],
    /// Whether a template (a call with a `<placeholder>`) may show only
    /// values the agent sent or the result holds: for tools that may
    /// change state (a proxy's backend's), where a template with one
    /// placeholder could still be sent and act on the rest.
    strict_templates: bool,
    /// The tools that may change state (lower-case; none unless said,
    /// [`Vocabulary::acting`]): after one of these, a bare value is an
    /// argument (`delete_entities Alice`), as a name is a capability there.
    acting: std::collections::HashSet<String>,
}

impl Vocabulary {
    /// The vocabulary of tools given as (name, input schema): the schema's
    /// `properties` are the parameters.
    pub fn new<'a>(tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        let mut names = Vec::new();
        let mut params = vec![TRAIL_ARG.to_owned()];
        let mut params_of = std::collections::HashMap::new();
        let mut required_of = std::collections::HashMap::new();
        for (name, schema) in tools {
            let name = name.trim().to_ascii_lowercase();
            let own: Vec<String> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| properties.keys().map(|k| k.to_ascii_lowercase()).collect())
                .unwrap_or_default();
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|required| required.iter().filter_map(Value::as_str).map(str::to_ascii_lowercase).collect())
                .unwrap_or_default();
            params.extend(own.iter().cloned());
            if !name.is_empty() {
                params_of.insert(name.clone(), own);
                required_of.insert(name.clone(), required);
                names.push(name);
            }
        }
        names.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        names.dedup();
        params.extend(params.iter().filter(|n| n.contains('_')).map(|n| n.replace('_', "-")).collect::<Vec<_>>());
        params.retain(|p| !p.is_empty());
        params.sort();
        params.dedup();
        let mut word = [false; 128];
        for b in (b'a'..=b'z').chain(b'A'..=b'Z').chain([b'_']).chain(names.iter().flat_map(|n| n.bytes())) {
            if let Some(slot) = word.get_mut(usize::from(b)) {
                *slot = true;
            }
        }
        let mut last = [false; 256];
        for b in names.iter().filter_map(|n| n.bytes().last()) {
            last[usize::from(b)] = true;
        }
        let mut skeletons = Vec::new();
        let mut skeleton_starts = [false; 128];
        for (i, name) in names.iter().enumerate() {
            let skeleton: Vec<u8> = name.bytes().filter(u8::is_ascii_alphanumeric).collect();
            if let Some(&first) = skeleton.first().filter(|_| skeleton.len() >= 4) {
                skeleton_starts[usize::from(first & 0x7f)] = true;
                skeletons.push((first, skeleton, i));
            }
        }
        Vocabulary {
            names,
            params,
            params_of,
            required_of,
            word,
            last,
            skeletons,
            skeleton_starts,
            strict_templates: true,
            acting: std::collections::HashSet::new(),
        }
    }

    /// Says which of the tools may change state (a backend's tools not
    /// marked read-only): after their names, a bare value reads as an
    /// argument.
    pub fn acting<'a>(mut self, tools: impl IntoIterator<Item = &'a str>) -> Self {
        self.acting = tools.into_iter().map(|t| t.trim().to_ascii_lowercase()).collect();
        self
    }

    /// This vocabulary with `tools` acting too (those a policy declares
    /// change state, beside those the server does not mark read-only):
    /// what a policy declares only ever adds to what is read as a call.
    pub fn also_acting<'a>(&self, tools: impl IntoIterator<Item = &'a str>) -> Self {
        let mut vocab = self.clone();
        vocab.acting.extend(tools.into_iter().map(|t| t.trim().to_ascii_lowercase()));
        vocab
    }

    /// Whether a call to `tool` may change state, as this vocabulary reads it.
    pub fn may_change_state(&self, tool: &str) -> bool {
        self.acts(&tool.trim().to_ascii_lowercase())
    }

    /// Whether `name` (lower-case, as the vocabulary spells it) may change state.
    fn acts(&self, name: &str) -> bool {
        // (Signpost's own vocabulary has none: no hashing on its every name)
        !self.acting.is_empty() && self.acting.contains(name)
    }

    /// Signpost's own tools.
    pub fn signpost() -> &'static Vocabulary {
        static SIGNPOST: std::sync::OnceLock<Vocabulary> = std::sync::OnceLock::new();
        SIGNPOST.get_or_init(|| {
            let schemas: Vec<(&str, Value)> =
                Tool::ALL.into_iter().map(|t| (t.name(), Value::Object(tools::input_schema(t)))).collect();
            // Signpost's tools only read, and their ids must be known anyway.
            Vocabulary { strict_templates: false, ..Vocabulary::new(schemas.iter().map(|(n, s)| (*n, s))) }
        })
    }

    /// The tool `word` is (any ASCII case), as the vocabulary spells it.
    fn find(&self, word: &str) -> Option<&str> {
        self.names.iter().map(String::as_str).find(|t| t.eq_ignore_ascii_case(word))
    }

    /// The tool a word names, and where its name starts in the word: the
    /// whole word (less `-`, `.`, `/`, `:` at either end), or a name ending
    /// it after a separator (`mcp__signpost__describe`, `functions.search`,
    /// `srv/fs.read`, `x_describe`), longest names first.
    #[inline]
    fn named(&self, word: &str) -> Option<(&str, usize)> {
        // Most words of a text end otherwise than any name (one look).
        let last = *word.as_bytes().last()?;
        if !self.ends_a_name(last) && !matches!(last, b'-' | b'.' | b'/' | b':') {
            return None;
        }
        self.named_at_end(word)
    }

    /// Whether some tool's name ends with `b` (any ASCII case).
    fn ends_a_name(&self, b: u8) -> bool {
        self.last[usize::from(b.to_ascii_lowercase())]
    }

    /// [`Vocabulary::named`] past its first look.
    fn named_at_end(&self, word: &str) -> Option<(&str, usize)> {
        let edge = |c: char| matches!(c, '-' | '.' | '/' | ':');
        let start = word.len() - word.trim_start_matches(edge).len();
        let word = word[start..].trim_end_matches(edge);
        if !word.bytes().last().is_some_and(|b| self.ends_a_name(b)) {
            return None;
        }
        if let Some(name) = self.find(word) {
            return Some((name, start));
        }
        // A name after a separator: the word must hold one.
        if !word.contains(['_', '.', '/', ':', '-']) {
            return None;
        }
        self.names.iter().map(String::as_str).find_map(|name| {
            let at = word.len().checked_sub(name.len())?;
            let ends = word.is_char_boundary(at) && word[at..].eq_ignore_ascii_case(name);
            let after_separator = word[..at].ends_with(['_', '.', '/', ':', '-']);
            (ends && after_separator).then_some((name, start + at))
        })
    }

    /// Whether templates must show only known values (see the field).
    pub fn strict_templates(&self) -> bool {
        self.strict_templates
    }

    /// Whether `key` is a parameter's name however it is spelled
    /// (`entityNames`, `entity_names`, `Entity-Names`): its letters and
    /// digits, any case.
    fn is_param(&self, key: &str) -> bool {
        self.params
            .iter()
            .any(|p| p.eq_ignore_ascii_case(key) || (p.len().abs_diff(key.len()) <= 4 && same_skeleton(p, key)))
    }

    /// Whether `key` names arguments: a parameter's name, or a key that
    /// holds them (`arguments`, `params`, …; [`ARG_KEYS`]), any ASCII case.
    fn is_argument_key(&self, key: &str) -> bool {
        self.is_param(key) || ARG_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
    }

    /// [`Vocabulary::is_argument_key`], or a key that names a tool
    /// (`tool`, `function`, …; [`TOOL_KEYS`]).
    fn is_key(&self, key: &str) -> bool {
        self.is_argument_key(key) || TOOL_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
    }

    /// Whether `b` belongs to a word a tool name can be.
    fn word_byte(&self, b: u8) -> bool {
        self.word.get(usize::from(b)).copied().unwrap_or(false)
    }
}

/// Whether `a` and `b` hold the same ASCII letters and digits, any case,
/// and some.
fn same_skeleton(a: &str, b: &str) -> bool {
    fn skeleton(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase())
    }
    skeleton(a).next().is_some() && skeleton(a).eq(skeleton(b))
}

/// The program's subcommands besides one per tool: `signpost <a tool or one
/// of these>` is a shell command ([`is_subcommand`]).
pub const OTHER_SUBCOMMANDS: [&str; 10] =
    ["call", "policy", "index", "graph", "canary", "serve", "proxy", "trust", "setup", "help"];

/// Whether `word` is one of the program's subcommands.
pub fn is_subcommand(word: &str) -> bool {
    Tool::from_name(word).is_some() || OTHER_SUBCOMMANDS.contains(&word)
}
/// Keys that name a tool in a record.
const TOOL_KEYS: [&str; 6] = ["tool", "tool_name", "toolname", "function", "function_name", "recipient_name"];
/// Keys that hold a call's arguments in a record.
const ARG_KEYS: [&str; 7] = ["args", "arguments", "input", "parameters", "params", "kwargs", "tool_input"];

/// A call found in a line.
#[derive(Debug)]
pub struct Found {
    /// Tool and arguments, when the arguments are a JSON object.
    pub call: Option<(String, Map<String, Value>)>,
    /// Where it stands in the folded line, when that is known.
    pub span: Option<Range<usize>>,
}

/// The tool `name` names, with or without a namespace
/// (`mcp__signpost__describe`, `functions.describe`, `signpost/describe`).
pub fn tool_named<'v>(name: &str, vocab: &'v Vocabulary) -> Option<&'v str> {
    vocab.named(name.trim()).map(|(tool, _)| tool)
}

/// Whether a text stands verbatim in the result or in what the agent sent:
/// the code's own text (a signature, a doc line), not the policy's.
pub type Quoted<'a> = &'a dyn Fn(&str) -> bool;

/// Every call in a folded line; `None` when the line cannot be analysed
/// within bounds.
pub fn calls_in(folded: &str, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
    let mut found = calls_as_spelled(folded, vocab, quoted)?;
    found.extend(spelled_calls(folded, vocab, quoted)?);
    Some(found)
}

/// [`calls_in`] of names spelled as the vocabulary spells them.
fn calls_as_spelled(folded: &str, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
    let signs = may_hold_call(folded, vocab);
    if !(signs.brace || signs.tool || signs.key || signs.program) {
        return Some(Vec::new());
    }
    let lower = folded.to_ascii_lowercase();
    let mut found =
        if signs.brace || signs.key { json_calls(folded, &lower, signs.key, vocab, quoted)? } else { Vec::new() };
    if signs.tool {
        named_calls(folded, &lower, vocab, &mut found);
    }
    if signs.program {
        shell_calls(&lower, &mut found);
    }
    if signs.tool && folded.contains('|') {
        found.extend(flattened_table(folded, vocab));
    }
    if signs.tool && (lower.contains("<td") || lower.contains("<th")) {
        found.extend(html_cells(&lower, vocab));
    }
    if signs.tool && signs.key {
        found.extend(header_then_tool(&lower, vocab));
    }
    Some(found)
}

/// Whether a line can hold a call at all: a `{`, or a word that is a tool
/// name, a key that names one, or the program's name (one pass, no
/// allocation; most lines of a text are neither).
fn may_hold_call(folded: &str, vocab: &Vocabulary) -> Signs {
    let mut signs = Signs { brace: folded.contains('{'), ..Signs::default() };
    let bytes = folded.as_bytes();
    for w in words(folded, vocab) {
        // A word glued to a digit (the letters of a hex id) is neither a
        // tool name nor a key nor the program's name to any reader below.
        let glued = |at: Option<usize>| at.and_then(|at| bytes.get(at)).is_some_and(u8::is_ascii_digit);
        if glued(w.start.checked_sub(1)) || glued(Some(w.end)) {
            continue;
        }
        let word = &folded[w];
        signs.tool |= vocab.named(word).is_some();
        // Every key and the program's name start with one of these.
        if matches!(word.as_bytes()[0].to_ascii_lowercase(), b't' | b'f' | b'r' | b'n' | b's' | b'a' | b'm') {
            signs.key |= TOOL_KEYS.iter().chain(&NAMING_KEYS).any(|k| k.eq_ignore_ascii_case(word));
            signs.program |= word.eq_ignore_ascii_case("signpost");
        }
    }
    signs
}

/// What a line holds that a call is made of.
#[derive(Debug, Default, Clone, Copy)]
struct Signs {
    brace: bool,
    tool: bool,
    key: bool,
    program: bool,
}

/// Keys that name a tool outside JSON only when their value is exactly
/// one (`"name": "describe",` on a line of its own, `Action: describe`).
const NAMING_KEYS: [&str; 3] = ["name", "action", "method"];

/// Keys under which a record says which call to make, beside `tool` and
/// its kin ([`TOOL_KEYS`]).
const VERB_KEYS: [&str; 12] =
    ["method", "action", "call", "op", "operation", "command", "cmd", "invoke", "execute", "run", "use", "do"];

/// The last tool named as a word in `lower`, and where its name starts.
pub(super) fn named_before<'v>(lower: &str, vocab: &'v Vocabulary) -> Option<(&'v str, usize)> {
    let word = tool_words(lower, vocab).pop()?;
    Some((vocab.find(&lower[word.clone()])?, word.start))
}

/// The Unicode arrow blocks, and `»` `›`.
pub fn is_arrow(c: char) -> bool {
    matches!(c,
        '\u{2190}'..='\u{21FF}' | '\u{27F0}'..='\u{27FF}' | '\u{2900}'..='\u{297F}' | '\u{2B00}'..='\u{2BFF}'
        | '\u{2794}'..='\u{27BF}' | '\u{1F800}'..='\u{1F8FF}' | '\u{00BB}' | '\u{203A}')
}

/// Characters between a tool's name and its arguments.
fn is_gap(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ':' | '='
                | '\\'
                | '-'
                | '>'
                | '—'
                | '–'
                | '―'
                | '`'
                | '*'
                | '?'
                | ','
                | '|'
                | ']'
                | ';'
                | '/'
                | '≔'
                | '«'
                | '‹'
                | '⟨'
                | '「'
                | '『'
                | '〈'
                | '《'
        )
        || is_arrow(c)
}

/// The runs of ASCII letters and `_` in a line (and digits and `-` when a
/// tool's name holds them; one pass, no allocation): the words a tool
/// name, a record key or the program's name can be.
fn words<'l>(lower: &'l str, vocab: &'l Vocabulary) -> impl Iterator<Item = Range<usize>> + 'l {
    let bytes = lower.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !vocab.word_byte(bytes[i]) {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && vocab.word_byte(bytes[i]) {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// Tool names standing as words in the line (`mcp__signpost__describe`
/// and `functions.describe` included): their byte ranges.
pub(super) fn tool_words(lower: &str, vocab: &Vocabulary) -> Vec<Range<usize>> {
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    for word in words(lower, vocab) {
        // `mcp__signpost__describe`: the name that ends the word.
        let Some((name, at)) = vocab.named(&lower[word.clone()]) else { continue };
        let (start, end) = (word.start + at, word.start + at + name.len());
        let glued = start > 0 && bytes[start - 1].is_ascii_digit();
        let after = lower[end..].chars().next();
        if !glued && !after.is_some_and(char::is_alphanumeric) {
            out.push(start..end);
        }
    }
    out
}

#[cfg(test)]
mod tests;
