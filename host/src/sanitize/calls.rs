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
        }
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

    fn is_param(&self, key: &str) -> bool {
        self.params.iter().any(|p| p.eq_ignore_ascii_case(key))
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

/// The program's subcommands besides one per tool: `signpost <a tool or one
/// of these>` is a shell command ([`is_subcommand`]).
pub const OTHER_SUBCOMMANDS: [&str; 8] = ["call", "policy", "index", "graph", "canary", "serve", "proxy", "help"];

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

/// Most tool names spelled otherwise in one line; past them the line
/// cannot be analysed within bounds.
const MAX_SPELLED: usize = 8;

/// Calls to a tool whose name is spelled otherwise: `delete-entities`,
/// `deleteEntities`, `Delete Entities`, `f-i-n-d` (its letters and digits
/// in order, split only by `-`, `_` or spaces, any case), followed by
/// arguments as they follow the name itself; each cut to the end of the
/// line.
fn spelled_calls(folded: &str, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let bytes = folded.as_bytes();
    let mut seen = 0;
    for at in 0..bytes.len() {
        // A word's start: an ASCII letter or digit after anything else,
        // the first of some name's.
        let first = bytes[at].to_ascii_lowercase();
        if !first.is_ascii_alphanumeric()
            || !vocab.skeleton_starts[usize::from(first & 0x7f)]
            || at.checked_sub(1).is_some_and(|b| bytes[b].is_ascii_alphanumeric())
        {
            continue;
        }
        for (_, skeleton, i) in vocab.skeletons.iter().filter(|(f, _, _)| *f == first) {
            let name = &vocab.names[*i];
            let Some(end) = spelled_at(bytes, at, skeleton, name) else { continue };
            seen += 1;
            if seen > MAX_SPELLED {
                return None;
            }
            // The line again with the name as the vocabulary spells it.
            let respelled = format!("{name}{}", &folded[end..]);
            let calls = calls_as_spelled(&respelled, vocab, quoted)?;
            if let Some(call) = calls.into_iter().find(|f| f.span.as_ref().is_some_and(|s| s.start == 0)) {
                found.push(Found { call: call.call, span: Some(at..folded.len()) });
            }
        }
    }
    Some(found)
}

/// Where `name` (its letters and digits `skeleton`) ends when it is spelled
/// otherwise from `at` on: those in order (any case), split by `-`, `_` or
/// spaces, ending a word; `None` where it is not, or is spelled as it is
/// (read as a word of its own already).
fn spelled_at(bytes: &[u8], at: usize, skeleton: &[u8], name: &str) -> Option<usize> {
    let mut i = at;
    for (n, want) in skeleton.iter().enumerate() {
        if n > 0 {
            while i < bytes.len() && matches!(bytes[i], b'-' | b'_' | b' ') {
                i += 1;
            }
        }
        if !bytes.get(i)?.eq_ignore_ascii_case(want) {
            return None;
        }
        i += 1;
    }
    let as_named = bytes[at..i].eq_ignore_ascii_case(name.as_bytes());
    (!as_named && !bytes.get(i).is_some_and(u8::is_ascii_alphanumeric)).then_some(i)
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

/// A table without pipes flattened onto one line (a single-line field's
/// line breaks gone): a key naming a tool (`tool`), parameters' names, then
/// a tool's name and its values (`tool kind role find class service`,
/// `tool,entityNames delete_entities,Alice`). From the key on.
fn header_then_tool(lower: &str, vocab: &Vocabulary) -> Option<Found> {
    let mut words = lower
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(|w| (w.as_ptr() as usize - lower.as_ptr() as usize, w.trim_matches(['"', '\'', '`', '*'])));
    let (start, _) = words.find(|(_, w)| TOOL_KEYS.contains(w))?;
    let mut params = 0;
    for (_, w) in words {
        if vocab.is_key(w) {
            params += usize::from(vocab.is_param(w));
        } else {
            return (params > 0 && vocab.find(w).is_some())
                .then_some(Found { call: None, span: Some(start..lower.len()) });
        }
    }
    None
}

/// An HTML table's cells on one line (`<tr><td>find</td><td>kind</td>…`):
/// one naming a tool and one naming a parameter make it a call, from its
/// first cell on.
fn html_cells(lower: &str, vocab: &Vocabulary) -> Option<Found> {
    let mut cells = Vec::new();
    let mut first = None;
    for (at, _) in lower.match_indices('<').filter(|(at, _)| lower[at + 1..].starts_with(['t'])) {
        let tag = &lower[at + 1..];
        if !(tag.starts_with("td") || tag.starts_with("th")) || !tag[2..].starts_with(['>', ' ']) {
            continue;
        }
        let Some(open) = tag.find('>') else { continue };
        let body = &tag[open + 1..];
        cells.push(body[..body.find('<').unwrap_or(body.len())].trim());
        first.get_or_insert(at);
    }
    let named = cells.iter().any(|c| tool_named(c, vocab).is_some());
    let keyed = cells.iter().any(|c| vocab.is_argument_key(c));
    (named && keyed).then(|| Found { call: None, span: Some(first.unwrap_or(0)..lower.len()) })
}

/// A Markdown table written on one line (its line breaks gone, as in a
/// single-line field): a delimiter cell (`---`), a cell naming a tool and
/// one naming a parameter make it a call, from its first `|` on.
fn flattened_table(folded: &str, vocab: &Vocabulary) -> Option<Found> {
    let cells: Vec<&str> = cell_iter(folded, Cells::Pipes).collect();
    // (`---` of Markdown, `+----+` and `+====+` of grid tables)
    let delimiter = cells.iter().any(|c| {
        (c.contains("---") || c.contains("===")) && c.chars().all(|c| matches!(c, '-' | ':' | '+' | '=' | ' '))
    });
    let named = cells.iter().any(|c| tool_named(c, vocab).is_some());
    let keyed = cells.iter().any(|c| vocab.is_argument_key(c));
    let start = folded.find('|')?;
    (delimiter && named && keyed).then_some(Found { call: None, span: Some(start..folded.len()) })
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

/// Calls written as a JSON object after a tool name, and records inside
/// any JSON object of the line.
fn json_calls(folded: &str, lower: &str, keys: bool, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let mut records = 0usize;
    let mut failed = 0usize;
    let mut parsed: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while let Some(off) = folded[i..].find('{') {
        let at = i + off;
        let named = tool_before(&folded[..at], vocab);
        let mut stream = serde_json::Deserializer::from_str(&folded[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(map))) => {
                let end = at + stream.byte_offset();
                parsed.push(at..end);
                // A tool named anywhere before it on the line (past the last
                // object) is its name too, however far or wordy the gap.
                let named = named.or_else(|| named_before(&lower[i..at], vocab).map(|(t, start)| (t, i + start)));
                let start = named.map_or(at, |(_, start)| start);
                let mut inner = Vec::new();
                records += calls_in_map(&map, &mut inner, 0, vocab, quoted)?;
                if let Some((tool, _)) = named {
                    found.push(Found { call: Some((tool.to_owned(), map)), span: Some(start..end) });
                }
                // Calls inside the object are cut out with the whole object.
                found.extend(inner.into_iter().map(|f| Found { span: Some(start..end), ..f }));
                i = end;
            }
            _ => {
                if let Some((_, start)) = named {
                    found.push(Found { call: None, span: Some(start..folded.len()) });
                }
                failed += 1;
                if failed > MAX_FAILED_PARSES {
                    return None;
                }
                i = at + 1;
            }
        }
        if i >= folded.len() {
            break;
        }
    }
    // A record written out in another notation (`tool: describe`): each
    // mention needs a record parsed above, or it cannot be allowed.
    // (cut from the first mention to the end of the line)
    let mentions = if keys { tool_key_mentions(lower, vocab, &parsed) } else { Vec::new() };
    if mentions.len() > records {
        found.push(Found { call: None, span: Some(mentions[0]..folded.len()) });
    }
    Some(found)
}

/// Calls inside a parsed JSON value (records naming a tool, and calls
/// written inside its strings); the number of records found.
fn calls_in_value(
    v: &Value,
    found: &mut Vec<Found>,
    depth: u8,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Option<usize> {
    if depth > 8 {
        return None;
    }
    let mut records = 0;
    match v {
        Value::Object(map) => records += calls_in_map(map, found, depth, vocab, quoted)?,
        Value::Array(items) => {
            for v in items {
                records += calls_in_value(v, found, depth + 1, vocab, quoted)?;
            }
        }
        // Too short to hold a call (`out`), or a single word (an id, a
        // name): a call needs arguments after the name, and they start
        // with a character a word does not hold.
        Value::String(s)
            if s.len() < 6
                || !s.contains(|c: char| c.is_ascii_alphabetic())
                || s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {}
        Value::String(s) => {
            let folded = super::fold::fold(s);
            let calls = calls_in(&folded, vocab, quoted)?;
            // A string of the result itself (a signature) is the code's text.
            if !calls.is_empty() && !quoted(s) {
                found.extend(calls.into_iter().map(|f| Found { span: None, ..f }));
            }
        }
        _ => {}
    }
    Some(records)
}

/// [`calls_in_value`] of an object: a record naming a tool, and the calls
/// inside its values.
fn calls_in_map(
    map: &Map<String, Value>,
    found: &mut Vec<Found>,
    depth: u8,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Option<usize> {
    let mut records = 0;
    let args = ARG_KEYS.iter().find_map(|k| map.get(*k));
    let named = TOOL_KEYS
        .iter()
        .filter_map(|k| map.get(*k))
        .chain(map.get("name").filter(|_| args.is_some()))
        .find_map(|v| v.as_str().and_then(|name| tool_named(name, vocab)));
    if let Some(tool) = named {
        records += 1;
        found.push(Found { call: args.and_then(args_of).map(|a| (tool.to_owned(), a)), span: None });
    } else if map.len() > 1 && names_a_call(map, vocab) {
        // A tool's name under a key that says what to do (JSON-RPC's
        // `method`, LangChain's `action`, `op`, `call`), or under `name`
        // beside arguments by another key (`arguments_json`, `with`).
        found.push(Found { call: None, span: None });
    }
    // A member named after a tool (`{"describe": {"id": …}}`): the call
    // its value is the arguments of (the same call as `describe {…}`).
    for (key, value) in map {
        let Some(tool) = tool_named(key, vocab) else { continue };
        found.push(Found { call: args_of(value).map(|a| (tool.to_owned(), a)), span: None });
    }
    for v in map.values() {
        records += calls_in_value(v, found, depth + 1, vocab, quoted)?;
    }
    Some(records)
}

/// A record's arguments: an object, or a string holding one (OpenAI's).
fn args_of(value: &Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(a) => Some(a.clone()),
        Value::String(s) => serde_json::from_str(s).ok(),
        _ => None,
    }
}

/// Keys that name a tool outside JSON only when their value is exactly
/// one (`"name": "describe",` on a line of its own, `Action: describe`).
const NAMING_KEYS: [&str; 3] = ["name", "action", "method"];

/// Keys under which a record says which call to make, beside `tool` and
/// its kin ([`TOOL_KEYS`]).
const VERB_KEYS: [&str; 12] =
    ["method", "action", "call", "op", "operation", "command", "cmd", "invoke", "execute", "run", "use", "do"];

/// Whether a record names a call other than by [`TOOL_KEYS`]: a tool's
/// name, exactly, under a [`VERB_KEYS`] key, or under `name` beside a key
/// that holds arguments by another spelling. (A record with a `name` and
/// no arguments is a thing named like a tool, such as a symbol.)
fn names_a_call(map: &Map<String, Value>, vocab: &Vocabulary) -> bool {
    let is_tool = |v: &Value| v.as_str().is_some_and(|s| vocab.find(s.trim()).is_some());
    let verb = map.iter().any(|(k, v)| VERB_KEYS.iter().any(|verb| k.eq_ignore_ascii_case(verb)) && is_tool(v));
    let argument_key = |k: &String| {
        let k = k.to_ascii_lowercase();
        k == "with" || ["arg", "input", "param"].iter().any(|a| k.contains(a))
    };
    verb || (map.get("name").is_some_and(is_tool) && map.keys().any(argument_key))
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ':' | '=' | '(' | '`' | '"' | '\'' | ',' | '-' | '>' | '—' | '–') || is_arrow(c)
}

/// The tool named right before a `{`, and where its name starts: after any
/// run of spaces, quotes, `:`, `=`, `(`, commas, dashes and arrows, and
/// after up to two short words (`describe with {`), within 48 bytes. Not
/// only as a word of its own: a reader skips what is glued before it
/// (`[31mdescribe {` once an escape sequence lost its ESC).
fn tool_before<'v>(before: &str, vocab: &'v Vocabulary) -> Option<(&'v str, usize)> {
    let mut rest = before;
    for words in 0..=MAX_CALL_WORDS {
        rest = rest.trim_end_matches(is_separator);
        if before.len() - rest.len() > MAX_CALL_GAP {
            return None;
        }
        let named = vocab.names.iter().map(String::as_str).find_map(|t| {
            let start = rest.len().checked_sub(t.len())?;
            (rest.is_char_boundary(start) && rest[start..].eq_ignore_ascii_case(t)).then_some((t, start))
        });
        if named.is_some() || words == MAX_CALL_WORDS {
            return named;
        }
        let word = rest.trim_end_matches(|c: char| c.is_alphabetic());
        if word.len() == rest.len() || rest[word.len()..].chars().count() > 10 {
            return None;
        }
        rest = word;
    }
    None
}

/// The last tool named as a word in `lower`, and where its name starts.
pub(super) fn named_before<'v>(lower: &str, vocab: &'v Vocabulary) -> Option<(&'v str, usize)> {
    let word = tool_words(lower, vocab).pop()?;
    Some((vocab.find(&lower[word.clone()])?, word.start))
}

/// Every call in a JSON value that spans several lines of a text (a
/// pretty-printed record), `named` the tool written right before it, if
/// any; `None` when it cannot be analysed within bounds.
pub(super) fn calls_in_json(
    value: &Value,
    named: Option<&str>,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    calls_in_value(value, &mut found, 0, vocab, quoted)?;
    if let (Some(tool), Value::Object(args)) = (named.and_then(|n| vocab.find(n)), value) {
        found.push(Found { call: Some((tool.to_owned(), args.clone())), span: None });
    }
    Some(found)
}

/// Where a key that names a tool stands before a tool name outside JSON:
/// `tool: describe`, `function=describe`, `<invoke name="describe">`,
/// `Action: describe`, `<name>describe</name>`, `| tool | describe |`.
fn tool_key_mentions(lower: &str, vocab: &Vocabulary, parsed: &[Range<usize>]) -> Vec<usize> {
    let mut mentions = Vec::new();
    let mut previous = 0..0;
    for word in words(lower, vocab) {
        let key = &lower[word.clone()];
        let invoke_name = key == "name" && lower[previous.clone()] == *"invoke";
        previous = word.clone();
        // (inside a JSON object parsed on the line, the record rules read it)
        let name = NAMING_KEYS.contains(&key) && !parsed.iter().any(|r| r.contains(&word.start));
        if !(TOOL_KEYS.contains(&key) || invoke_name || name)
            || lower[..word.start].ends_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        let after = lower[word.end..].trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\''));
        // `tool: x`, `tool=x`; an element `<tool>x</tool>`; a table's cells
        // `| tool | x |`.
        let element = lower[..word.start].ends_with('<');
        // (a dotted leader too: `Tool ........ describe`)
        let leader = after.strip_prefix("..").map(|a| a.trim_start_matches('.'));
        let Some(value) =
            after.strip_prefix([':', '=', '|']).or_else(|| after.strip_prefix('>').filter(|_| element)).or(leader)
        else {
            continue;
        };
        let value = value.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\''));
        let end = value.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-')));
        let value = &value[..end.unwrap_or(value.len())];
        let names = if name && !invoke_name { vocab.find(value).is_some() } else { tool_named(value, vocab).is_some() };
        if names {
            mentions.push(word.start);
        }
    }
    mentions
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

/// The end of an argument list that starts `rest` (right after the gap),
/// relative to `rest`; `None` when what follows is no argument list.
/// `with_quote` allows a quoted string (the gap had a space or `:`/`=`);
/// `with_id` allows a bare id; `with_colon` allows `key: value` (right
/// after the name only: `describe failed: trail: …` is prose), and
/// `with_bare` a parameter's name followed by a bare word (on the name's
/// line only).
fn argument_list(
    rest: &str,
    vocab: &Vocabulary,
    with_quote: bool,
    with_id: bool,
    with_colon: bool,
    with_bare: bool,
) -> Option<usize> {
    let first = rest.chars().next()?;
    match first {
        // An element named after a parameter (`<kind>class</kind>`): the
        // arguments as XML, to the end of the line.
        '<' if param_element(rest, vocab) => Some(rest.len()),
        '(' | '[' | '<' => {
            let close = matching(rest)?;
            // Between the brackets (to the end of the line when unclosed).
            let inner = rest[1..close].strip_suffix([')', ']', '>', '}']).unwrap_or(&rest[1..close]);
            if first == '<' && !arglike(inner, vocab) {
                // `describe <id>`: a placeholder to adapt, not a call.
                return None;
            }
            ((close == 2 && first == '(') || arglike(inner, vocab)).then_some(close)
        }
        '"' | '\'' | '“' | '‘' | '`' if with_quote => {
            let close = match first {
                '“' => '”',
                '‘' => '’',
                c => c,
            };
            let body = &rest[first.len_utf8()..];
            let end = body.find(close)?;
            (end > 0).then_some(first.len_utf8() + end + close.len_utf8())
        }
        _ => {
            if let Some(end) = key_value(rest, vocab, with_colon, with_bare) {
                return Some(end);
            }
            let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
            (with_id && hex >= 40).then_some(rest.len())
        }
    }
}

/// Whether `s` opens an element named after a parameter or an argument
/// key: `<kind>`, `<entityNames attr="…">`, `<arguments>`.
fn param_element(s: &str, vocab: &Vocabulary) -> bool {
    let Some(tag) = s.strip_prefix('<') else { return false };
    let len = tag.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    let name = &tag[..len];
    len > 0 && tag[len..].starts_with(['>', ' ', '/']) && vocab.is_argument_key(name)
}

/// `key=value`, `key: value` or `--key value` with a parameter name, and
/// with `bare` `key value` too, the value a bare word (`find kind class`,
/// `x, key value`, `x | key | value`): the arguments run to the end of
/// the line.
fn key_value(rest: &str, vocab: &Vocabulary, with_colon: bool, bare_ok: bool) -> Option<usize> {
    // `--key`, PowerShell's `-key`, Lisp's `:key`.
    let flag = rest.strip_prefix("--").or_else(|| rest.strip_prefix(['-', ':', '/']));
    let body = flag.unwrap_or(rest);
    let key: String = body.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')).collect();
    if !vocab.is_param(&key) {
        return None;
    }
    let after = &body[key.len()..];
    // A value plainly a value: quoted, bracketed or a number.
    let plain_value = |v: &&str| {
        v.trim_start().starts_with(|c: char| matches!(c, '"' | '\'' | '[' | '{' | '(') || c.is_ascii_digit())
    };
    let value = match flag {
        Some(_) => after.strip_prefix([' ', '=', ':'])?,
        None => after
            .trim_start_matches(' ')
            .strip_prefix('=')
            .or_else(|| after.strip_prefix(':').filter(|v| with_colon || plain_value(v)))
            .or_else(|| after.strip_prefix(' ').filter(plain_value))
            .or_else(|| {
                let bare = after.trim_start_matches(is_gap);
                (bare_ok && bare.len() < after.len() && bare.starts_with(|c: char| c.is_alphanumeric())).then_some(bare)
            })?,
    };
    let value = value.trim_start_matches(' ');
    value.chars().next().filter(|c| !c.is_whitespace()).map(|_| rest.len())
}

/// Whether bracketed text holds arguments rather than prose: quotes,
/// `=`, nested brackets or objects, a comma-separated list, `key:`, an id,
/// or a single name (`describe(OrderService)`).
fn arglike(inner: &str, vocab: &Vocabulary) -> bool {
    let inner = inner.trim();
    if inner.is_empty() {
        return false;
    }
    if inner.contains(['"', '\'', '=', '{', '[', '(', '`', ',', '“', '‘']) {
        return true;
    }
    if inner.bytes().filter(u8::is_ascii_hexdigit).count() >= 40 {
        return true;
    }
    let lower = inner.to_ascii_lowercase();
    if vocab
        .params
        .iter()
        .any(|p| lower.match_indices(p.as_str()).any(|(at, _)| lower[at + p.len()..].starts_with(':')))
    {
        return true;
    }
    // `(kind class)`: a parameter's name, then its value.
    let mut pair = lower.split_whitespace();
    if pair.next().is_some_and(|k| vocab.is_param(k.trim_end_matches(':'))) && pair.next().is_some() {
        return true;
    }
    let mut words = inner.split_whitespace();
    words.next().is_some_and(|w| {
        w.starts_with(|c: char| c.is_alphabetic()) && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
    }) && words.next().is_none()
}

/// The byte just past the bracket that closes the one `s` starts with
/// (quote-aware, nested); the end of `s` when it does not close.
fn matching(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    Some(s.len())
}

/// Calls of the other notations: a tool name standing as a word, then
/// (after a gap and up to two short words) an argument list.
fn named_calls(folded: &str, lower: &str, vocab: &Vocabulary, found: &mut Vec<Found>) {
    for name in tool_words(lower, vocab) {
        let mut at = name.end;
        // A name in quotes (`"describe": …`) ends with its closing quote.
        if let (Some(open), Some(close)) = (lower[..name.start].chars().next_back(), lower[at..].chars().next())
            && open == close
            && matches!(open, '"' | '\'' | '`')
        {
            at += close.len_utf8();
        }
        // Whether every word skipped so far is a label of the arguments
        // (`find Arguments kind: class`): they still follow the name.
        let mut labels = true;
        for word_index in 0..=MAX_CALL_WORDS {
            let rest = &lower[at..];
            // (an ellipsis is a gap, a lone `.` is not: `find . -name x`)
            let mut after = rest.trim_start_matches(is_gap);
            while let Some(dots) = after.strip_prefix("..") {
                after = dots.trim_start_matches(|c: char| c == '.' || is_gap(c));
            }
            let mut gap = &rest[..rest.len() - after.len()];
            // A shell flag (`--direction out`, `-kind class`) starts the arguments.
            if let Some(before_flag) = gap.strip_suffix("--") {
                gap = before_flag;
            } else if gap.ends_with(" -") {
                gap = &gap[..gap.len() - 1];
            }
            // A backtick after a space opens a code span: a quoted argument.
            if let Some(before_tick) = gap.strip_suffix('`').filter(|g| g.ends_with([' ', ':', '='])) {
                gap = before_tick;
            }
            let args = &rest[gap.len()..];
            if gap.len() > MAX_CALL_GAP || args.starts_with('{') {
                break;
            }
            let spaced = !gap.is_empty() && gap.contains([' ', ':', '=', '\t']);
            // A quoted string is an argument right after the name only
            // (`describe or `find``: prose naming two tools).
            let first = word_index == 0 || labels;
            if let Some(end) = argument_list(args, vocab, spaced && first, spaced, first, first) {
                let end = at + gap.len() + end;
                found.push(Found { call: None, span: Some(name.start..end.min(folded.len())) });
                break;
            }
            // Up to two short words between (`describe with id=…`).
            let word = args.bytes().take_while(|b| b.is_ascii_alphabetic() || *b == b'_').count();
            if gap.is_empty() || word == 0 || word > 10 {
                break;
            }
            labels &= ARG_KEYS.contains(&&args[..word]) || &args[..word] == "with";
            at += gap.len() + word;
        }
    }
}

/// `signpost <subcommand> …` (any path to the program, `.exe`): a shell
/// command, to the end of the line.
fn shell_calls(lower: &str, found: &mut Vec<Found>) {
    for word in words(lower, Vocabulary::signpost()).filter(|w| lower[w.clone()] == *"signpost") {
        let (at, end) = (word.start, word.end);
        let before = lower[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let rest = lower[end..].strip_prefix(".exe").unwrap_or(&lower[end..]);
        let Some(rest) = rest.strip_prefix([' ', '\t']) else { continue };
        let word: String = rest.trim_start().chars().take_while(|c| c.is_ascii_alphabetic() || *c == '-').collect();
        if is_subcommand(&word) {
            // The path before the program name is part of the command.
            let start = lower[..at]
                .rfind(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '$'))
                .map_or(0, |s| s + 1);
            found.push(Found { call: None, span: Some(start..lower.len()) });
        }
    }
}

/// A tool name that ends its line (nothing but a gap, a closing quote or
/// `:` after it): its span, to pair with arguments on the next line.
pub fn dangling_tool(folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    // (a comment after it: `describe   # the record`)
    let body = match folded.find(" #") {
        Some(at) if !folded[..at].trim().is_empty() => &folded[..at],
        _ => folded,
    };
    // (`[describe]`: a TOML or INI section named after it; `describe \`,
    // continued on the next line; `Use describe.`)
    let end = body
        .trim_end_matches(|c: char| is_gap(c) || matches!(c, '"' | '\'' | '(' | ',' | ']' | ')' | '.' | '\\' | ';'))
        .len();
    let start = folded[..end]
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii() && vocab.word_byte(*c as u8)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &folded[start..end];
    let named = vocab.named(word).is_some();
    // A tool name as a word of its own (`mcp__signpost__describe` too).
    let glued = folded[..start].ends_with(|c: char| c.is_alphanumeric());
    (named && !glued).then_some(start..end)
}

/// The rows of Markdown tables that call a tool: a cell naming one, and a
/// value in a column whose header is a parameter's name or an argument
/// key (`| tool | query |`, `|---|---|`, `| search | x |`), unless every
/// cell of the row stands in the result or the agent's arguments.
pub fn table_calls(lines: &[std::borrow::Cow<'_, str>], vocab: &Vocabulary, quoted: Quoted<'_>) -> Vec<usize> {
    // (`|---|---|` of Markdown; `+----+` and `+====+` of grid tables)
    let delimiter = |l: &str| {
        let t = l.trim();
        t.contains(['|', '+'])
            && t.contains(['-', '='])
            && t.chars().all(|c| matches!(c, '|' | '+' | '-' | '=' | ':' | ' ' | '\t'))
    };
    let mut rows = Vec::new();
    for d in (1..lines.len()).filter(|&d| delimiter(&lines[d]) && lines[d - 1].contains('|')) {
        let header = cells(&lines[d - 1], Cells::Pipes);
        let body = lines.iter().enumerate().skip(d + 1).take_while(|(_, l)| l.contains('|') || delimiter(l));
        let body = body.filter(|(_, l)| !delimiter(l)).map(|(r, l)| (r, cells(l, Cells::Pipes)));
        rows.extend(calling_rows(&header, body, vocab, quoted));
    }
    // Tables without pipes: comma-separated, columns aligned by spaces, or
    // one space apart (a tab reads as one once the text is clean), a
    // header naming a parameter and rows of as many cells.
    for kind in [Cells::Commas, Cells::Spaces, Cells::Words] {
        let mut h = 0;
        while h < lines.len() {
            let separated = match kind {
                Cells::Commas => lines[h].contains(','),
                Cells::Spaces => lines[h].trim().contains("  "),
                _ => lines[h].contains(' '),
            };
            // (one space apart, as a tab reads once the text is clean, a
            // header is nothing but keys: `tool entityNames`)
            let keyed = separated
                && !lines[h].contains('|')
                && (!matches!(kind, Cells::Words) || cell_iter(&lines[h], kind).all(|c| vocab.is_key(c)))
                && cell_iter(&lines[h], kind).any(|c| vocab.is_param(c));
            let header = if keyed { cells(&lines[h], kind) } else { Vec::new() };
            if header.len() < 2 {
                h += 1;
                continue;
            }
            let same = lines.iter().enumerate().skip(h + 1).map(|(r, l)| (r, cells(l, kind)));
            let body: Vec<(usize, Vec<&str>)> = same.take_while(|(_, c)| c.len() == header.len()).collect();
            h += body.len() + 1;
            rows.extend(calling_rows(&header, body.into_iter(), vocab, quoted));
        }
    }
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Whether a line is only a label of arguments to come (`Arguments:`).
pub fn is_label(folded: &str) -> bool {
    let t = folded.trim().trim_end_matches(':').trim();
    ARG_KEYS.iter().any(|k| k.eq_ignore_ascii_case(t))
}

/// How a table's cells are separated.
#[derive(Debug, Clone, Copy)]
enum Cells {
    Pipes,
    Commas,
    /// Two spaces or more.
    Spaces,
    /// One space or more.
    Words,
}

/// A table line's cells, trimmed of spaces and inline markup.
fn cells(line: &str, kind: Cells) -> Vec<&str> {
    cell_iter(line, kind).collect()
}

/// [`cells`], one at a time.
fn cell_iter(line: &str, kind: Cells) -> impl Iterator<Item = &str> {
    let t = line.trim();
    let raw: Box<dyn Iterator<Item = &str>> = match kind {
        Cells::Pipes => {
            let t = t.strip_prefix('|').unwrap_or(t);
            Box::new(t.strip_suffix('|').unwrap_or(t).split('|'))
        }
        Cells::Commas => Box::new(t.split(',')),
        Cells::Spaces => Box::new(t.split("  ").filter(|c| !c.trim().is_empty())),
        Cells::Words => Box::new(t.split_whitespace()),
    };
    raw.map(|c| c.trim().trim_matches(|c: char| matches!(c, '`' | '*' | '_' | '"' | '\'')).trim())
}

/// The rows (of `body`, under `header`) with a cell naming a tool and a
/// value in a column whose header is a parameter's name or an argument
/// key, unless every cell of the row stands in the result or the agent's
/// arguments (a row of the result's own values: a symbol named `find`).
fn calling_rows<'l>(
    header: &[&str],
    body: impl Iterator<Item = (usize, Vec<&'l str>)>,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Vec<usize> {
    let argument_columns: Vec<usize> =
        header.iter().enumerate().filter(|(_, h)| vocab.is_argument_key(h)).map(|(i, _)| i).collect();
    if argument_columns.is_empty() {
        return Vec::new();
    }
    body.filter(|(_, cells)| {
        let named: Vec<usize> = (0..cells.len()).filter(|&i| tool_named(cells[i], vocab).is_some()).collect();
        let valued =
            argument_columns.iter().any(|&a| cells.get(a).is_some_and(|v| !v.is_empty()) && !named.contains(&a));
        let all_quoted = cells.iter().filter(|c| !c.is_empty()).all(|c| quoted(c));
        !named.is_empty() && valued && !all_quoted
    })
    .map(|(r, _)| r)
    .collect()
}

/// A tool named as a word in a line, not by a call of that line (prose
/// that names it: `Use delete_entities.`, `<summary>find</summary>`), and
/// not inside a word the result or the agent's arguments hold (a symbol
/// `Repository.find`): where the name starts. Its arguments may follow on
/// a later line.
/// `calls` gives the line's calls ([`calls_in`]), asked for only when a
/// tool is named in it.
pub fn named_alone<'v, 'c>(
    folded: &str,
    vocab: &'v Vocabulary,
    quoted: Quoted<'_>,
    calls: impl FnOnce() -> Option<&'c [Found]>,
) -> Option<(&'v str, usize)> {
    let lower = folded.to_ascii_lowercase();
    let words = tool_words(&lower, vocab);
    if words.is_empty() {
        return None;
    }
    let calls = calls()?;
    let token = |w: &Range<usize>| {
        let start = folded[..w.start].rfind(char::is_whitespace).map_or(0, |s| s + 1);
        let end = folded[w.end..].find(char::is_whitespace).map_or(folded.len(), |e| w.end + e);
        &folded[start..end]
    };
    let w = words.into_iter().find(|w| !within_a_call(calls, w) && !quoted(token(w)))?;
    Some((vocab.find(&lower[w.clone()])?, w.start))
}

/// Whether `r` lies inside the span of one of `calls`.
fn within_a_call(calls: &[Found], r: &Range<usize>) -> bool {
    calls.iter().any(|c| c.span.as_ref().is_some_and(|s| s.start <= r.start && r.end <= s.end))
}

/// Whether a record reads as arguments of `tool`: every key of it one of
/// its parameters or the trail, or it holds every parameter the tool
/// requires (an agent sends the extra keys along). Data such as a symbol's
/// record has other keys, and not all a tool requires.
pub fn is_arguments(map: &Map<String, Value>, tool: &str, vocab: &Vocabulary) -> bool {
    let Some(own) = vocab.params_of.get(tool) else { return false };
    let param = |k: &String| k.eq_ignore_ascii_case(TRAIL_ARG) || own.iter().any(|p| p.eq_ignore_ascii_case(k));
    let required = vocab.required_of.get(tool).map_or(&[][..], Vec::as_slice);
    let holds = |r: &String| map.keys().any(|k| k.eq_ignore_ascii_case(r));
    !map.is_empty() && (map.keys().all(param) || (!required.is_empty() && required.iter().all(holds)))
}

/// A JSON object on a line that reads as arguments of `tool`
/// ([`is_arguments`]), not part of a call of the line and not text the
/// result holds: where it starts (the arguments of a tool named on a line
/// before).
pub fn keyed_object(
    folded: &str,
    tool: &str,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
    calls: Option<&[Found]>,
) -> Option<usize> {
    if !folded.contains('{') {
        return None;
    }
    let calls = calls?;
    let (mut tried, mut from) = (0, 0);
    while let Some(off) = folded[from..].find('{') {
        let at = from + off;
        tried += 1;
        if tried > MAX_FAILED_PARSES {
            return Some(at);
        }
        let mut stream = serde_json::Deserializer::from_str(&folded[at..]).into_iter::<Value>();
        let Some(Ok(Value::Object(map))) = stream.next() else {
            from = at + 1;
            continue;
        };
        // (objects inside it are its values, not arguments of their own)
        let end = at + stream.byte_offset();
        if is_arguments(&map, tool, vocab) && !within_a_call(calls, &(at..end)) && !quoted(&folded[at..end]) {
            return Some(at);
        }
        from = end;
    }
    None
}

/// An argument list opening a line (an object, bracketed arguments,
/// `key=value`): its span, for a tool named at the end of the line before.
pub fn leading_args(folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    let lower = folded.to_ascii_lowercase();
    let decoration = |c: char| c.is_whitespace() || matches!(c, '`' | '>' | '-' | '*' | '•' | '?' | ':') || is_arrow(c);
    let mut args = lower.trim_start_matches(decoration);
    // A parameter's name as a key (`entityNames:` of YAML, `kind = "class"`
    // of TOML): the arguments, one a line.
    // (an element named after one, `<entityNames>`, of XML)
    let quoted_key = args.trim_start_matches(['"', '\'']);
    let key = quoted_key.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    let name = &quoted_key[..key];
    let after = quoted_key[key..].trim_start_matches(['"', '\'']).trim_start();
    let keyed = key > 0 && vocab.is_argument_key(name) && after.starts_with([':', '=']);
    if keyed || param_element(args, vocab) {
        return Some(lower.len() - args.len()..lower.len());
    }
    // Up to two short labels before them (`Send:`, `1.`, `next:`, `Action Input:`).
    for _ in 0..2 {
        let label = args.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b' ').count();
        match args[label..].strip_prefix([':', '.']) {
            Some(rest) if (1..=20).contains(&label) && args[..label].split(' ').count() <= 3 => {
                args = rest.trim_start_matches(decoration);
            }
            _ => break,
        }
    }
    let start = lower.len() - args.len();
    if args.starts_with('{') {
        return Some(start..lower.len());
    }
    if args.starts_with('<') {
        return None;
    }
    argument_list(args, vocab, false, false, true, true).map(|end| start..start + end)
}

#[cfg(test)]
mod tests;
