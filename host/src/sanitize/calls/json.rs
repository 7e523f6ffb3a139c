//! Calls written as JSON: an object after a tool's name, records that
//! name a tool at any depth (`{"tool": …}`, MCP's `tools/call` params,
//! OpenAI's function calls), and such a record's key written out in
//! another notation (`tool: describe`).

use super::lines::are_arguments;
use super::*;

/// Calls written as a JSON object after a tool name, and records inside
/// any JSON object of the line.
pub(super) fn json_calls(
    folded: &str,
    lower: &str,
    keys: bool,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Option<Vec<Found>> {
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
                } else if let Some((tool, after)) = tool_after(&folded[end..], vocab)
                    && is_arguments(&map, tool, vocab)
                {
                    // The arguments first, then the tool they are for
                    // (`Pass {"id": …} to neighbors`).
                    found.push(Found { call: Some((tool.to_owned(), map)), span: Some(at..end + after) });
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
pub(super) fn calls_in_value(
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
            let folded = crate::sanitize::fold::fold(s);
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
pub(super) fn calls_in_map(
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
    } else if let Some((key, tool)) = map.iter().find_map(|(k, v)| Some((k, tool_named(v.as_str()?, vocab)?)))
        && map.len() > 1
        && are_arguments(map.keys().filter(|k| *k != key).map(String::as_str), tool, vocab)
    {
        // A tool's name under any key, beside its arguments
        // (`{"fn": "delete_entities", "entityNames": […]}`).
        records += 1;
        found.push(Found { call: None, span: None });
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
pub(super) fn args_of(value: &Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(a) => Some(a.clone()),
        Value::String(s) => serde_json::from_str(s).ok(),
        _ => None,
    }
}

/// Whether a record names a call other than by [`TOOL_KEYS`]: a tool's
/// name, exactly, under a [`VERB_KEYS`] key, or under `name` beside a key
/// that holds arguments by another spelling. (A record with a `name` and
/// no arguments is a thing named like a tool, such as a symbol.)
pub(super) fn names_a_call(map: &Map<String, Value>, vocab: &Vocabulary) -> bool {
    let is_tool = |v: &Value| v.as_str().is_some_and(|s| vocab.find(s.trim()).is_some());
    let verb = map.iter().any(|(k, v)| VERB_KEYS.iter().any(|verb| k.eq_ignore_ascii_case(verb)) && is_tool(v));
    let argument_key = |k: &String| {
        let k = k.to_ascii_lowercase();
        k == "with" || ["arg", "input", "param"].iter().any(|a| k.contains(a))
    };
    verb || (map.get("name").is_some_and(is_tool) && map.keys().any(argument_key))
}

pub(super) fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ':' | '=' | '(' | '`' | '"' | '\'' | ',' | '-' | '>' | '—' | '–') || is_arrow(c)
}

/// The tool named right before a `{`, and where its name starts: after any
/// run of spaces, quotes, `:`, `=`, `(`, commas, dashes and arrows, and
/// after up to two short words (`describe with {`), within 48 bytes. Not
/// only as a word of its own: a reader skips what is glued before it
/// (`[31mdescribe {` once an escape sequence lost its ESC).
pub(super) fn tool_before<'v>(before: &str, vocab: &'v Vocabulary) -> Option<(&'v str, usize)> {
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

/// The tool named right after an object, and where its name ends
/// (relative to `after`): past separators and up to two short words (`→
/// neighbors`, ` to neighbors`, `, call resolve`, ` tool search`), within
/// [`MAX_CALL_GAP`] bytes, as a word of its own.
pub(super) fn tool_after<'v>(after: &str, vocab: &'v Vocabulary) -> Option<(&'v str, usize)> {
    let mut rest = after;
    for words in 0..=MAX_CALL_WORDS {
        rest = rest.trim_start_matches(|c: char| is_separator(c) || matches!(c, '|' | '.' | ';'));
        if after.len() - rest.len() > MAX_CALL_GAP {
            return None;
        }
        let word = rest.bytes().take_while(|b| vocab.word_byte(*b)).count();
        if let Some((tool, 0)) = vocab.named(&rest[..word]) {
            return Some((tool, after.len() - rest.len() + word));
        }
        if words == MAX_CALL_WORDS || word == 0 || word > 10 || !rest[..word].bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        rest = &rest[word..];
    }
    None
}

/// Every call in a JSON value that spans several lines of a text (a
/// pretty-printed record), `named` the tool written right before it, if
/// any; `None` when it cannot be analysed within bounds.
pub fn calls_in_json(value: &Value, named: Option<&str>, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
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
pub(super) fn tool_key_mentions(lower: &str, vocab: &Vocabulary, parsed: &[Range<usize>]) -> Vec<usize> {
    let mut mentions = Vec::new();
    let mut previous = 0..0;
    for word in words(lower, vocab) {
        let key = &lower[word.clone()];
        let invoke_name = key == "name" && lower[previous.clone()] == *"invoke";
        previous = word.clone();
        // (inside a JSON object parsed on the line, the record rules read it)
        // (`parsed` lies in order, one after another)
        let inside = |at: usize| parsed.get(parsed.partition_point(|r| r.end <= at)).is_some_and(|r| r.contains(&at));
        let name = NAMING_KEYS.contains(&key) && !inside(word.start);
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
