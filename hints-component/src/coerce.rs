//! Id coercion: reading the ids an agent meant from whatever JSON it sent.
//!
//! Lossless shapes are accepted: a JSON array, a bare id, a JSON-encoded
//! array string (encoded any number of times, up to [`MAX_ENCODINGS`]), a
//! Python-style list or tuple string, brackets without quotes,
//! comma- or space-separated ids, surrounding whitespace, quotes or backticks,
//! uppercase hex, duplicates (removed, order kept). Anything that would need a
//! guess is refused with a teaching error that shows a correct call as JSON.

use serde_json::{Map, Value, json};

use crate::model::{Call, CoercionError};

/// Length of a symbol id: 40 hexadecimal characters.
pub const ID_LEN: usize = 40;
/// Most ids one argument may carry.
pub const MAX_IDS: usize = 256;
/// Longest id argument text read at all; longer input is refused unread.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// String encodings peeled off an id argument before it is read.
pub const MAX_ENCODINGS: usize = 8;

const PLACEHOLDER: &str = "<40-hex id from resolve or search>";

/// Why an id argument was refused. Kept structured so that `advise` can turn
/// a name into an actionable `resolve` hint.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// Nothing was sent, or only whitespace and brackets.
    Empty,
    /// The argument is missing.
    Missing,
    /// More than [`MAX_IDS`] ids, or more than [`MAX_INPUT_BYTES`] of text.
    TooLarge(String),
    /// A value of a type that cannot hold ids (number, bool, object, nested list).
    WrongType(String),
    /// Brackets or quotes that do not pair up.
    Unbalanced(String),
    /// A control character inside the text.
    ControlChar,
    /// Hex, but not 40 characters long.
    WrongLength(String),
    /// Something that reads as a symbol name, not an id.
    Name(String),
    /// Characters that belong in neither an id nor a name.
    Garbage(String),
    /// `describe` takes exactly one id.
    TooMany(usize),
}

/// Coerces `call.args[param]` into canonical ids (lowercase, deduplicated,
/// in order), or explains how to send them.
pub fn coerce_ids(call: &Call, param: &str) -> Result<Vec<String>, CoercionError> {
    analyze(call, param).map_err(|(problem, found)| teach(call, param, &problem, found.as_deref()))
}

/// Like [`coerce_ids`], but keeps the problem structured. On error, the second
/// element is the first well-formed id seen, used to make examples concrete.
pub fn analyze(call: &Call, param: &str) -> Result<Vec<String>, (Problem, Option<String>)> {
    let mut ids = Ids::default();
    let res = match call.args.get(param) {
        None | Some(Value::Null) => Err(Problem::Missing),
        Some(Value::Array(items)) => ids.items(items),
        Some(Value::String(text)) => ids.text(text),
        Some(Value::Object(obj)) => Err(object_problem(obj)),
        Some(other) => Err(Problem::WrongType(type_name(other).to_owned())),
    };
    let res = res.and_then(|()| {
        if ids.list.is_empty() {
            Err(Problem::Empty)
        } else if param == "id" && ids.list.len() > 1 {
            Err(Problem::TooMany(ids.list.len()))
        } else {
            Ok(())
        }
    });
    match res {
        Ok(()) => Ok(ids.list),
        Err(problem) => Err((problem, ids.list.into_iter().next())),
    }
}

#[derive(Default)]
struct Ids {
    list: Vec<String>,
}

impl Ids {
    fn push(&mut self, id: String) -> Result<(), Problem> {
        if !self.list.contains(&id) {
            if self.list.len() == MAX_IDS {
                return Err(Problem::TooLarge(format!("more than {MAX_IDS} ids")));
            }
            self.list.push(id);
        }
        Ok(())
    }

    fn items(&mut self, items: &[Value]) -> Result<(), Problem> {
        if items.len() > 4 * MAX_IDS {
            return Err(Problem::TooLarge(format!("{} items", items.len())));
        }
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => {
                    let token = unwrap_token(s.trim())?;
                    self.push(parse_id(token)?)?;
                }
                Value::Array(_) => {
                    return Err(Problem::WrongType(format!("a nested list at item {i}")));
                }
                Value::Object(obj) => return Err(object_problem(obj)),
                other => {
                    return Err(Problem::WrongType(format!("{} at item {i}", type_name(other))));
                }
            }
        }
        Ok(())
    }

    fn text(&mut self, raw: &str) -> Result<(), Problem> {
        if raw.len() > MAX_INPUT_BYTES {
            return Err(Problem::TooLarge(format!("{} bytes of text", raw.len())));
        }
        // Any number of JSON string encodings around the text is lossless
        // (an agent that serialises twice sends `"[\"<id>\"]"`): peel them.
        let mut decoded = std::borrow::Cow::Borrowed(raw.trim());
        for _ in 0..MAX_ENCODINGS {
            match serde_json::from_str::<Value>(&decoded) {
                Ok(Value::String(inner)) => decoded = std::borrow::Cow::Owned(inner.trim().to_owned()),
                Ok(Value::Array(items)) => return self.items(&items),
                _ => break,
            }
        }
        let mut t = decoded.trim();
        if t.chars().any(char::is_control) {
            return Err(Problem::ControlChar);
        }
        // Whole-argument wrapping: "`[...]`", "'abc'", "\"[...]\"".
        for _ in 0..4 {
            match strip_quotes(t) {
                Some(inner) => t = inner.trim(),
                None => break,
            }
        }
        let (open, close) = (t.chars().next(), t.chars().last());
        match (open, close) {
            (Some('['), Some(']')) | (Some('('), Some(')')) if t.len() >= 2 => {
                if open == Some('[')
                    && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(t)
                {
                    return self.items(&items);
                }
                self.list_body(&t[1..t.len() - 1])
            }
            (Some('[' | '('), _) | (_, Some(']' | ')')) => {
                Err(Problem::Unbalanced(format!("brackets do not pair up in `{}`", clip(t))))
            }
            _ => self.list_body(t),
        }
    }

    /// The inside of a list: ids separated by commas and/or whitespace, each
    /// optionally quoted. One trailing comma is allowed (`('a',)`).
    fn list_body(&mut self, body: &str) -> Result<(), Problem> {
        if body.contains(['[', ']', '(', ')', '{', '}']) {
            return Err(Problem::WrongType("a nested list".to_owned()));
        }
        let parts: Vec<&str> = body.split(',').map(str::trim).collect();
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                if i == last && i > 0 {
                    continue;
                }
                return Err(Problem::Empty);
            }
            // `a b` and `'a' 'b'` are lists too, unless the words read as one
            // name (then `parse_id` teaches `resolve`).
            let words: Vec<&str> = part.split_whitespace().collect();
            let all_ids =
                words.len() > 1 && words.iter().all(|w| unwrap_token(w).is_ok_and(|w| w.len() == ID_LEN && is_hex(w)));
            if all_ids {
                for w in words {
                    self.push(parse_id(unwrap_token(w)?)?)?;
                }
            } else {
                self.push(parse_id(unwrap_token(part)?)?)?;
            }
        }
        Ok(())
    }
}

/// Removes one pair of matching quotes or backticks around a token; a quote
/// on one side only is an error.
fn unwrap_token(token: &str) -> Result<&str, Problem> {
    if let Some(inner) = strip_quotes(token) {
        return Ok(inner.trim());
    }
    let quote = |c: Option<char>| matches!(c, Some('"' | '\'' | '`'));
    if quote(token.chars().next()) || quote(token.chars().last()) {
        return Err(Problem::Unbalanced(format!("quotes do not pair up in `{}`", clip(token))));
    }
    Ok(token)
}

fn strip_quotes(t: &str) -> Option<&str> {
    let mut chars = t.chars();
    let (first, last) = (chars.next()?, chars.next_back()?);
    (matches!(first, '"' | '\'' | '`') && first == last).then(|| &t[1..t.len() - 1])
}

fn parse_id(token: &str) -> Result<String, Problem> {
    if token.is_empty() {
        return Err(Problem::Empty);
    }
    if is_hex(token) {
        return if token.len() == ID_LEN {
            Ok(token.to_ascii_lowercase())
        } else {
            Err(Problem::WrongLength(token.to_owned()))
        };
    }
    let namelike = token.chars().any(char::is_alphabetic)
        && token
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$' | '#' | '-' | '/' | '<' | '>' | ' '));
    if namelike { Err(Problem::Name(token.to_owned())) } else { Err(Problem::Garbage(token.to_owned())) }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn object_problem(obj: &Map<String, Value>) -> Problem {
    match obj.get("id").and_then(Value::as_str) {
        Some(id) => Problem::WrongType(format!("an object (a record? pass its id `{}`)", clip(id))),
        None => Problem::WrongType("an object".to_owned()),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// At most 60 characters of hostile text, for messages.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// A correct call for `call.tool`, using `id` (or a placeholder) and the
/// call's other arguments where they are already right.
pub fn example_call(call: &Call, param: &str, id: Option<&str>) -> Value {
    let id = id.unwrap_or(PLACEHOLDER);
    match (call.tool.as_str(), param) {
        ("neighbors", "ids") => {
            let direction = call.str_arg("direction").filter(|d| matches!(*d, "in" | "out")).unwrap_or("out");
            let edge_types = match call.args.get("edge_types") {
                Some(Value::Array(items))
                    if !items.is_empty() && items.iter().all(|v| v.as_str().is_some_and(|s| !s.is_empty())) =>
                {
                    Value::Array(items.clone())
                }
                _ => json!(["CALLS"]),
            };
            json!({"ids": [id], "direction": direction, "edge_types": edge_types})
        }
        (_, "id") => json!({ "id": id }),
        (_, param) => json!({ param: [id] }),
    }
}

fn teach(call: &Call, param: &str, problem: &Problem, found: Option<&str>) -> CoercionError {
    let what = match problem {
        Problem::Missing => format!("`{param}` is missing."),
        Problem::Empty => format!("`{param}` holds no id."),
        Problem::TooLarge(what) => format!("`{param}` is too large ({what})."),
        Problem::WrongType(what) => format!("`{param}` got {what}; ids are 40-hex strings."),
        Problem::Unbalanced(what) => format!("`{param}` is not readable: {what}."),
        Problem::ControlChar => format!("`{param}` contains control characters."),
        Problem::WrongLength(tok) => format!(
            "`{}` is {} hex characters; ids are exactly {ID_LEN} (truncated? copy the whole id).",
            clip(tok),
            tok.len()
        ),
        Problem::Name(name) => format!(
            "`{}` is a name, not an id: get its id with resolve {{\"identifier\":{}}} first.",
            clip(name),
            Value::String(clip(name))
        ),
        Problem::Garbage(tok) => format!("`{}` is not an id (ids are 40 hex characters).", clip(tok)),
        Problem::TooMany(n) => format!("`{param}` takes one id, got {n}: call {} once per id.", call.tool),
    };
    let example = example_call(call, param, found);
    let message = format!("{what} Send: {} {}", call.tool, example);
    CoercionError { message, example }
}
