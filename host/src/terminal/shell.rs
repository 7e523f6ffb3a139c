//! The way back from a call to a command line ([`Shell::command`]),
//! quoted for a POSIX shell, with nothing hidden in it.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::sanitize;
use crate::tools::Tool;
use crate::trails::carry::{self, TRAIL_ARG};

/// How an argument of a tool is written on its command line.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    /// A positional string.
    Positional,
    /// Positional strings, from a non-empty array.
    Positionals,
    /// `--flag STRING`.
    Text,
    /// `--flag NUMBER`.
    Number,
    /// `--flag A,B`, from a non-empty array of strings without commas.
    Commas,
}

/// Each tool's arguments, in the order they are written.
pub(super) fn slots(tool: Tool) -> &'static [(&'static str, Slot)] {
    use Slot::*;
    match tool {
        Tool::Resolve => &[("identifier", Positional), ("kind", Text)],
        Tool::Describe => &[("id", Positional)],
        Tool::Find => {
            &[("kind", Text), ("role", Text), ("name", Text), ("path", Text), ("limit", Number), ("offset", Number)]
        }
        Tool::Search => &[("query", Positional), ("limit", Number), ("offset", Number)],
        Tool::Neighbors => {
            &[("ids", Positionals), ("direction", Text), ("edge_types", Commas), ("limit", Number), ("offset", Number)]
        }
    }
}

/// How to run `signpost` again from a shell: the program as it was invoked
/// and the options to repeat.
#[derive(Debug, Clone)]
pub struct Shell {
    pub(super) program: String,
    repeated: Vec<String>,
}

impl Shell {
    /// `program` as invoked (argv 0), `repeated` the options every command
    /// carries (see [`QueryOptions::repeated`]).
    pub fn new(program: impl Into<String>, repeated: Vec<String>) -> Shell {
        Shell { program: program.into(), repeated }
    }

    /// The command line that makes the call `tool args`, quoted for a POSIX
    /// shell: the tool's own command when its arguments fit it, else
    /// `signpost call TOOL 'JSON'`. Parsing it back gives the same call.
    pub fn command(&self, tool: &str, args: &Map<String, Value>) -> String {
        // The trail a hint carries is an option of every command.
        let trail = match args.get(TRAIL_ARG) {
            Some(Value::String(trail)) if !has_hidden(&json!(trail)) => Some(trail.clone()),
            _ => None,
        };
        let args = match trail {
            Some(_) => carry::without_trail(args),
            None => std::borrow::Cow::Borrowed(args),
        };
        // Arguments a terminal would not show as they are (line breaks,
        // bidi controls, invisible characters) go as JSON with those
        // characters escaped: the command reads as it runs.
        let fits = (!args.values().any(has_hidden)).then(|| tool_words(tool, &args)).flatten();
        let (command, positional, mut flags) = match fits {
            Some((positional, flags)) => (tool, positional, flags),
            None => ("call", vec![tool.to_owned(), visible_json(&args)], Vec::new()),
        };
        if let Some(trail) = trail {
            option(&mut flags, "--trail", trail);
        }
        let mut words = vec![self.program.as_str(), command];
        // A positional that starts with `-` would read as an option: after `--`.
        let dashed = positional.iter().any(|p| p.starts_with('-'));
        if !dashed {
            words.extend(positional.iter().map(String::as_str));
        }
        words.extend(flags.iter().map(String::as_str));
        words.extend(self.repeated.iter().map(String::as_str));
        if dashed {
            words.push("--");
            words.extend(positional.iter().map(String::as_str));
        }
        words.into_iter().map(quote).collect::<Vec<_>>().join(" ")
    }
}

/// Whether a character would not show as itself on a terminal line.
pub(super) fn hidden(c: char) -> bool {
    c.is_control() || sanitize::is_invisible(c) || sanitize::is_line_break(c) || (c.is_whitespace() && c != ' ')
}

/// Whether a JSON value holds a string with a [`hidden`] character.
pub(super) fn has_hidden(v: &Value) -> bool {
    match v {
        Value::String(s) => s.chars().any(hidden),
        Value::Array(items) => items.iter().any(has_hidden),
        Value::Object(map) => map.iter().any(|(k, v)| k.chars().any(hidden) || has_hidden(v)),
        _ => false,
    }
}

/// Compact JSON with every [`hidden`] character written as a `\u` escape.
pub(super) fn visible_json(args: &Map<String, Value>) -> String {
    escape_hidden(&Value::Object(args.clone()).to_string())
}

/// JSON as serde_json wrote it, with every [`hidden`] character but the
/// line breaks of its own layout written as a `\u` escape: serde_json
/// escapes control characters in strings but not bidi controls, invisible
/// characters or U+2028, which a terminal would act on. They can only stand
/// inside strings, where JSON allows the escape.
pub(super) fn escape_hidden(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if hidden(c) && c != '\n' {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON answer for stdout: pretty, with nothing a terminal would act on.
pub fn json_text(v: &Value) -> String {
    escape_hidden(&format!("{v:#}\n"))
}

/// `--flag value`, or `--flag=-value`: a value that starts with `-` would
/// read as an option.
pub(super) fn option(words: &mut Vec<String>, flag: &str, value: String) {
    if value.starts_with('-') {
        words.push(format!("{flag}={value}"));
    } else {
        words.extend([flag.to_owned(), value]);
    }
}

/// A word for a POSIX shell (single quotes where needed). Only a NUL
/// cannot be quoted, and no word holds one: a string holding one is
/// [`hidden`] and goes as escaped JSON.
pub(super) fn quote(word: &str) -> Cow<'_, str> {
    shlex::try_quote(word).unwrap_or(Cow::Borrowed("''"))
}

/// `tool`'s arguments as its command's positional words and options,
/// `None` when they do not fit it (an unknown key, a value of another type).
pub(super) fn tool_words(tool: &str, args: &Map<String, Value>) -> Option<(Vec<String>, Vec<String>)> {
    let slots = slots(Tool::from_name(tool)?);
    if args.keys().any(|k| !slots.iter().any(|(name, _)| name == k)) {
        return None;
    }
    let mut positional = Vec::new();
    let mut flags = Vec::new();
    for (name, slot) in slots {
        let Some(value) = args.get(*name) else {
            if matches!(slot, Slot::Positional | Slot::Positionals) {
                return None;
            }
            continue;
        };
        let mut flag = |value: String| option(&mut flags, &format!("--{}", name.replace('_', "-")), value);
        match (slot, value) {
            (Slot::Positional, Value::String(s)) => positional.push(s.clone()),
            (Slot::Positionals, Value::Array(items)) if !items.is_empty() => {
                for item in items {
                    positional.push(item.as_str()?.to_owned());
                }
            }
            (Slot::Text, Value::String(s)) => flag(s.clone()),
            (Slot::Number, Value::Number(n)) if n.is_u64() => flag(n.to_string()),
            (Slot::Commas, Value::Array(items)) if !items.is_empty() => {
                let items: Vec<&str> = items.iter().map(Value::as_str).collect::<Option<_>>()?;
                if items.iter().any(|s| s.is_empty() || s.contains(',')) {
                    return None;
                }
                flag(items.join(","));
            }
            _ => return None,
        }
    }
    Some((positional, flags))
}
