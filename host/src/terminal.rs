//! The terminal face: the five tools as commands (`signpost describe ID`),
//! for people and for agents that prefer a shell.
//!
//! A command runs the same pipeline as an MCP call (same graph, same
//! policy, same validation and sanitising) and prints the same answer:
//! the policy's text, with its hint lines replaced by the response's
//! actionable hints, each as `→ next: <command>` ([`Shell::command`]) on a
//! line that holds nothing else, so it can be pasted into a shell as it
//! is; or, with `--format json`, the structured result with its hints, each
//! actionable one with its `command`. Nothing the policy or the graph wrote
//! reaches the terminal unescaped, or into a command unquoted. [`Query`] is the command line, [`Shell`] the way
//! back from a call to a command line; the two agree (a unit test parses
//! every rendering back).
//!
//! On the command line a name is accepted where an id belongs when it
//! names exactly one symbol ([`resolve_names`]); the MCP tools keep their
//! contract (a name there is a teaching error).

use std::borrow::Cow;
use std::path::PathBuf;

use anstyle::{AnsiColor, Style};
use serde_json::{Map, Value, json};

use crate::graph::parse_id;
use crate::response::Response;
use crate::sanitize;
use crate::tools::{HintOut, IdParam, Tool};
use crate::trails::carry::{self, TRAIL_ARG};

/// A tool is a value of `signpost call TOOL`.
impl clap::ValueEnum for Tool {
    fn value_variants<'a>() -> &'a [Self] {
        &Tool::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// How a command prints its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The policy's text, hints as commands, coloured on a terminal.
    #[default]
    Text,
    /// The structured result with its hints (each actionable one with its `command`).
    Json,
}

/// When to colour text output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and neither `NO_COLOR` nor `CLICOLOR=0` is
    /// set, or when `CLICOLOR_FORCE` is.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// As anstream's choice.
    pub fn choice(self) -> anstream::ColorChoice {
        match self {
            Color::Auto => anstream::ColorChoice::Auto,
            Color::Always => anstream::ColorChoice::Always,
            Color::Never => anstream::ColorChoice::Never,
        }
    }
}

/// The options every tool command takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct QueryOptions {
    /// A graph file (SCIP, JSON or snapshot), as for serving; give it
    /// several times for a workspace [default: the embedded sample graph].
    #[arg(long, value_name = "PATH")]
    pub graph: Vec<PathBuf>,
    /// A policy component [default: the embedded default policy].
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    /// Print the policy's text, or the structured result as JSON.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Colour the text.
    #[arg(long, value_enum, default_value_t)]
    pub color: Color,
    /// Continue this trail (the suggested commands carry it), so the
    /// policy sees what earlier commands on it did. Needs --state.
    #[arg(long, value_name = "HANDLE")]
    pub trail: Option<String>,
    /// Keep trails in this Redis (or Valkey), as `signpost --http --state`
    /// does: each command runs on a trail, which the next command (or an
    /// MCP client of a server on the same store) continues. The suggested
    /// commands repeat it unless it holds a password; SIGNPOST_STATE is
    /// read too, and never repeated.
    #[arg(long, value_name = "URL")]
    pub state: Option<String>,
}

impl QueryOptions {
    /// The options to repeat in the commands this answer suggests, so that
    /// they run on the same graph and policy, in the same format.
    pub fn repeated(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for g in &self.graph {
            option(&mut flags, "--graph", g.display().to_string());
        }
        if let Some(p) = &self.policy {
            option(&mut flags, "--policy", p.display().to_string());
        }
        if self.format == Format::Json {
            option(&mut flags, "--format", "json".to_owned());
        }
        // A URL with a password stays out: the commands are printed.
        if let Some(state) = self.state.as_ref().filter(|s| !has_credentials(s)) {
            option(&mut flags, "--state", state.clone());
        }
        flags
    }
}

/// Whether a store URL holds credentials (user info, or a unix socket's
/// `pass=`), which a printed command must not repeat.
pub fn has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?']).next().is_some_and(|authority| authority.contains('@')) || url.contains("pass=")
}

const RESOLVE_EXAMPLE: &str = "Examples:\n  signpost resolve OrderService\n  signpost resolve placeOrder --kind method";
const DESCRIBE_EXAMPLE: &str = "Examples:\n  signpost describe 721797098567ca69c8d8f724033dc6ec8670d50b\n  \
                                signpost describe OrderController      (a name that names one symbol)";
const FIND_EXAMPLE: &str =
    "Examples:\n  signpost find --kind class --role controller\n  signpost find --path orders/ --limit 50";
const SEARCH_EXAMPLE: &str =
    "Examples:\n  signpost search refund payment\n  signpost search 'place order' --format json";
const NEIGHBORS_EXAMPLE: &str = "Examples:\n  signpost neighbors OrderController --direction out --edge-types DECLARES.EXPOSES\n  \
                                 signpost neighbors 7d529f3251ac14c03145667c552d3725352b660e --direction in --edge-types TARGETS,CALLS";
const CALL_EXAMPLE: &str = "Examples:\n  signpost call describe '{\"id\": \"721797098567ca69c8d8f724033dc6ec8670d50b\"}'\n  \
                            signpost call find '{\"kind\": \"route\"}' --format json";

/// The tool commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Query {
    /// Find the symbol(s) a name, qualified name or id stands for (MCP tool `resolve`).
    #[command(after_help = RESOLVE_EXAMPLE)]
    Resolve {
        /// A name, a qualified name or a suffix of one, or an id.
        identifier: String,
        /// Keep only symbols of this kind (class, method, route, …).
        #[arg(long)]
        kind: Option<String>,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
    /// One symbol's record and its edge counts (MCP tool `describe`).
    #[command(after_help = DESCRIBE_EXAMPLE)]
    Describe {
        /// The symbol's id, or a name that names exactly one symbol.
        id: String,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
    /// Browse symbols by kind, role, name or path (MCP tool `find`).
    #[command(after_help = FIND_EXAMPLE)]
    Find {
        /// Exact kind.
        #[arg(long)]
        kind: Option<String>,
        /// Exact role (controller, service, repository, …).
        #[arg(long)]
        role: Option<String>,
        /// A substring of the name.
        #[arg(long)]
        name: Option<String>,
        /// A substring of the file path.
        #[arg(long)]
        path: Option<String>,
        /// Paging.
        #[command(flatten)]
        page: Page,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
    /// Ranked fuzzy lookup over names, qualified names and docs (MCP tool `search`).
    #[command(after_help = SEARCH_EXAMPLE)]
    Search {
        /// The words to look for (one argument or several).
        #[arg(required = true)]
        query: Vec<String>,
        /// Paging.
        #[command(flatten)]
        page: Page,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
    /// The symbols along edges from or to the given ones (MCP tool `neighbors`).
    #[command(after_help = NEIGHBORS_EXAMPLE)]
    Neighbors {
        /// Ids, or names that name exactly one symbol each.
        #[arg(required = true)]
        ids: Vec<String>,
        /// `out` follows edges from the symbols, `in` edges into them.
        #[arg(long, value_parser = ["out", "in"])]
        direction: String,
        /// Edge types, comma-separated or repeated (CALLS, DECLARES, DECLARES.EXPOSES, …).
        #[arg(long, required = true, value_delimiter = ',')]
        edge_types: Vec<String>,
        /// Paging.
        #[command(flatten)]
        page: Page,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
    /// Any tool with its MCP arguments as one JSON object.
    #[command(after_help = CALL_EXAMPLE)]
    Call {
        /// The tool: resolve, describe, find, search or neighbors.
        #[arg(value_enum)]
        tool: Tool,
        /// Its arguments, a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        /// Graph, policy and output.
        #[command(flatten)]
        options: QueryOptions,
    },
}

/// Paging options.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Page {
    /// Page size, 1 to 100.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Results to skip.
    #[arg(long)]
    pub offset: Option<u64>,
}

impl Page {
    fn add_to(self, args: &mut Map<String, Value>) {
        if let Some(limit) = self.limit {
            args.insert("limit".into(), json!(limit));
        }
        if let Some(offset) = self.offset {
            args.insert("offset".into(), json!(offset));
        }
    }
}

impl Query {
    /// The command's options, to read or fill in.
    pub fn options_mut(&mut self) -> &mut QueryOptions {
        match self {
            Query::Resolve { options, .. }
            | Query::Describe { options, .. }
            | Query::Find { options, .. }
            | Query::Search { options, .. }
            | Query::Neighbors { options, .. }
            | Query::Call { options, .. } => options,
        }
    }

    /// The MCP call this command makes: tool and arguments, exactly as an
    /// MCP client would send them (options left out are left out).
    /// `Err` for `call` arguments that are not a JSON object.
    pub fn to_call(&self) -> Result<(Tool, Map<String, Value>), String> {
        let mut args = Map::new();
        let mut put = |key: &str, value: Option<&String>| {
            if let Some(v) = value {
                args.insert(key.into(), json!(v));
            }
        };
        let tool = match self {
            Query::Resolve { identifier, kind, .. } => {
                put("identifier", Some(identifier));
                put("kind", kind.as_ref());
                Tool::Resolve
            }
            Query::Describe { id, .. } => {
                put("id", Some(id));
                Tool::Describe
            }
            Query::Find { kind, role, name, path, page, .. } => {
                put("kind", kind.as_ref());
                put("role", role.as_ref());
                put("name", name.as_ref());
                put("path", path.as_ref());
                page.add_to(&mut args);
                Tool::Find
            }
            Query::Search { query, page, .. } => {
                put("query", Some(&query.join(" ")));
                page.add_to(&mut args);
                Tool::Search
            }
            Query::Neighbors { ids, direction, edge_types, page, .. } => {
                args.insert("ids".into(), json!(ids));
                args.insert("direction".into(), json!(direction));
                args.insert("edge_types".into(), json!(edge_types));
                page.add_to(&mut args);
                Tool::Neighbors
            }
            Query::Call { tool, args: text, .. } => {
                return match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(map)) => Ok((*tool, map)),
                    Ok(_) => {
                        Err(format!("the arguments of `{tool}` must be a JSON object, such as {}", tool_example(*tool)))
                    }
                    Err(e) => Err(format!(
                        "the arguments are not JSON ({e}); `{tool}` takes an object such as {}",
                        tool_example(*tool)
                    )),
                };
            }
        };
        Ok((tool, args))
    }
}

fn tool_example(tool: Tool) -> String {
    let example = tool.example();
    shlex::try_quote(&example.to_string()).map_or_else(|_| "{}".to_owned(), Cow::into_owned)
}

/// How an argument of a tool is written on its command line.
#[derive(Clone, Copy)]
enum Slot {
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
fn slots(tool: Tool) -> &'static [(&'static str, Slot)] {
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
    program: String,
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
fn hidden(c: char) -> bool {
    c.is_control() || sanitize::is_invisible(c) || sanitize::is_line_break(c) || (c.is_whitespace() && c != ' ')
}

/// Whether a JSON value holds a string with a [`hidden`] character.
fn has_hidden(v: &Value) -> bool {
    match v {
        Value::String(s) => s.chars().any(hidden),
        Value::Array(items) => items.iter().any(has_hidden),
        Value::Object(map) => map.iter().any(|(k, v)| k.chars().any(hidden) || has_hidden(v)),
        _ => false,
    }
}

/// Compact JSON with every [`hidden`] character written as a `\u` escape.
fn visible_json(args: &Map<String, Value>) -> String {
    escape_hidden(&Value::Object(args.clone()).to_string())
}

/// JSON as serde_json wrote it, with every [`hidden`] character but the
/// line breaks of its own layout written as a `\u` escape: serde_json
/// escapes control characters in strings but not bidi controls, invisible
/// characters or U+2028, which a terminal would act on. They can only stand
/// inside strings, where JSON allows the escape.
fn escape_hidden(json: &str) -> String {
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
fn option(words: &mut Vec<String>, flag: &str, value: String) {
    if value.starts_with('-') {
        words.push(format!("{flag}={value}"));
    } else {
        words.extend([flag.to_owned(), value]);
    }
}

/// A word for a POSIX shell (single quotes where needed). Only a NUL
/// cannot be quoted, and no word holds one: a string holding one is
/// [`hidden`] and goes as escaped JSON.
fn quote(word: &str) -> Cow<'_, str> {
    shlex::try_quote(word).unwrap_or(Cow::Borrowed("''"))
}

/// `tool`'s arguments as its command's positional words and options,
/// `None` when they do not fit it (an unknown key, a value of another type).
fn tool_words(tool: &str, args: &Map<String, Value>) -> Option<(Vec<String>, Vec<String>)> {
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

/// A name given where an id belongs, and the id it names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Named {
    /// What was typed.
    pub name: String,
    /// The symbol's id.
    pub id: String,
    /// The symbol: its kind and qualified name.
    pub symbol: String,
}

/// A name that names several symbols: the candidates, best first.
#[derive(Debug, Clone)]
pub struct Ambiguous {
    /// What was typed.
    pub name: String,
    /// The candidates (`Symbol` records).
    pub candidates: Vec<Value>,
}

/// Replaces each name in an id argument (`describe`'s `id`, `neighbors`'
/// `ids`) that names exactly one symbol with its id, and says which. A
/// string that is an id, or that names nothing, is left for the tool to
/// judge (it teaches); one that names several symbols is refused.
/// `resolve` makes the `resolve` call (in the command's session, so the
/// policy sees the id as found) and gives its result.
pub fn resolve_names(
    tool: Tool,
    args: &mut Map<String, Value>,
    mut resolve: impl FnMut(&str) -> Option<Value>,
) -> Result<Vec<Named>, Ambiguous> {
    let Some(key) = tool.id_param().map(IdParam::name) else { return Ok(Vec::new()) };
    let mut named = Vec::new();
    let mut swap = |s: &mut String| -> Result<(), Ambiguous> {
        if parse_id(s).is_some() || s.trim().is_empty() {
            return Ok(());
        }
        let Some(mut result) = resolve(s) else { return Ok(()) };
        let candidates = match result.get_mut("candidates") {
            Some(Value::Array(c)) => std::mem::take(c),
            _ => Vec::new(),
        };
        match (result["status"].as_str(), candidates.first()) {
            (Some("one"), Some(c)) => {
                let Some(id) = c["id"].as_str().map(str::to_owned) else { return Ok(()) };
                let symbol = format!("{} {}", c["kind"].as_str().unwrap_or("?"), c["fqn"].as_str().unwrap_or("?"));
                named.push(Named { name: std::mem::replace(s, id.clone()), id, symbol });
                Ok(())
            }
            (Some("many"), _) => Err(Ambiguous { name: s.clone(), candidates }),
            _ => Ok(()),
        }
    };
    match args.get_mut(key) {
        Some(Value::String(s)) => swap(s)?,
        Some(Value::Array(items)) => {
            for item in items {
                if let Value::String(s) = item {
                    swap(s)?;
                }
            }
        }
        _ => {}
    }
    Ok(named)
}

// ---- printing --------------------------------------------------------------

const TAG_OK: Style = AnsiColor::Green.on_default().bold();
const TAG_EMPTY: Style = AnsiColor::Yellow.on_default().bold();
const TAG_ERROR: Style = AnsiColor::Red.on_default().bold();
const SUMMARY: Style = Style::new().bold();
const NEXT: Style = AnsiColor::Cyan.on_default().bold();
const COMMAND: Style = AnsiColor::Cyan.on_default();
const ID: Style = AnsiColor::Blue.on_default();
const ASK: Style = AnsiColor::Magenta.on_default().bold();
const QUIET: Style = Style::new().dimmed();

fn paint(style: Style, s: &str) -> String {
    format!("{style}{s}{style:#}")
}

/// Graph-derived text (a name, a qualified name, a path) for one terminal
/// line: nothing that moves the cursor, starts a line or hides.
fn shown(s: &str) -> String {
    sanitize::escape(s, 200)
}

/// The line that says what a name was read as.
pub fn note(n: &Named) -> String {
    format!("note: `{}` is {} {}", shown(&n.name), shown(&n.symbol), n.id)
}

/// A hint for the terminal: `→ next: <command>` on a line of its own (the
/// line after the arrow is the whole command, nothing the policy wrote),
/// then its reason, indented.
fn hint_block(command: &str, reason: &str) -> String {
    let reason = sanitize::line(reason, crate::validate::MAX_REASON);
    format!("{} {}\n  {}\n", paint(NEXT, "→ next:"), paint(COMMAND, command), paint(QUIET, &format!("— {reason}")))
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
        .map(|h| hint_block(&shell.command(&h.tool, &h.args), &h.reason))
        .collect();
    for (i, line) in response.text.lines().enumerate() {
        // Only the host writes commands on a terminal.
        if sanitize::is_shell_line(line, &shell.program) {
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
fn ids_painted(line: &str) -> String {
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

fn hints_json(hints: &[HintOut], shell: &Shell) -> Value {
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
fn ambiguous_hints(a: &Ambiguous) -> Vec<HintOut> {
    let hint = |tool: &str, args: Value, reason: String| HintOut {
        tool: tool.into(),
        args: args.as_object().cloned().unwrap_or_default(),
        actionable: true,
        reason,
    };
    let narrow = hint("resolve", json!({"identifier": a.name}), "how to narrow it".into());
    let pick = a.candidates.iter().filter_map(|c| {
        let id = c["id"].as_str()?;
        let fqn = c["fqn"].as_str().unwrap_or("?");
        Some(hint("describe", json!({"id": id}), format!("this one: {}", sanitize::line(fqn, 150))))
    });
    std::iter::once(narrow).chain(pick).collect()
}

fn ambiguous_message(a: &Ambiguous) -> String {
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
        out.push_str(&hint_block(&shell.command(&h.tool, &h.args), &h.reason));
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        query: Query,
    }

    fn parse_back(command: &str) -> (Tool, Map<String, Value>, QueryOptions) {
        let words = shlex::split(command).expect("a shell command line");
        assert_eq!(words[0], "/opt/sign post/signpost");
        let mut cli = Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{command}: {e}"));
        let (tool, mut args) = cli.query.to_call().expect("a call");
        let options = cli.query.options_mut().clone();
        // The trail goes as an option, and comes back as MCP sends it.
        if let Some(trail) = &options.trail {
            args.insert(TRAIL_ARG.into(), json!(trail));
        }
        (tool, args, options)
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn every_command_parses_back_to_its_call() {
        let options = QueryOptions {
            graph: vec!["my graph.scip".into(), "b.json".into()],
            policy: Some("p.wasm".into()),
            format: Format::Json,
            color: Color::Auto,
            trail: None,
            state: Some("redis://h:1/2".into()),
        };
        let shell = Shell::new("/opt/sign post/signpost", options.repeated());
        let id = "721797098567ca69c8d8f724033dc6ec8670d50b";
        let calls = [
            ("resolve", json!({"identifier": "OrderService"})),
            ("resolve", json!({"identifier": "it's a \"name\"; rm -rf /", "kind": "class"})),
            ("resolve", json!({"identifier": "--help"})),
            ("describe", json!({"id": id})),
            ("find", json!({"kind": "class", "role": "controller", "limit": 2, "offset": 2})),
            ("find", json!({})),
            ("find", json!({"name": "-x", "path": "src/$(touch x)/`id`"})),
            ("search", json!({"query": "refund  payment", "limit": 10})),
            ("search", json!({"query": "-v"})),
            ("search", json!({"query": ""})),
            ("neighbors", json!({"ids": [id, id], "direction": "in", "edge_types": ["TARGETS", "DECLARES.CALLS"]})),
            ("neighbors", json!({"ids": ["-a"], "direction": "out", "edge_types": ["CALLS"], "offset": 25})),
            ("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["-CALLS", "--help"]})),
            ("find", json!({"kind": "--", "role": "=", "name": "'", "path": "\\"})),
            ("resolve", json!({"identifier": "--", "kind": "-h"})),
            // Do not fit the tool commands: `call`.
            ("neighbors", json!({"ids": id, "direction": "out", "edge_types": ["CALLS"]})),
            ("neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["A,B"]})),
            ("find", json!({"limit": -1})),
            ("find", json!({"limit": 1.5})),
            ("describe", json!({"id": id, "extra": true})),
            ("describe", json!({})),
            ("resolve", json!({"identifier": "x\ny\u{202e}z"})),
            // A trail is an option of every command, `call` too.
            ("describe", json!({"id": id, "trail": "tr_abc"})),
            ("search", json!({"query": "x", "trail": "-tr; rm"})),
            ("describe", json!({"id": id, "extra": true, "trail": "tr_x"})),
            ("describe", json!({"id": id, "trail": "tr\u{202e}x"})),
            ("describe", json!({"id": id, "trail": 42})),
        ];
        for (tool, args) in calls {
            let args = obj(args);
            let command = shell.command(tool, &args);
            let (t, a, o) = parse_back(&command);
            assert_eq!((t.name(), &a), (tool, &args), "{command}");
            assert_eq!(o.graph, options.graph, "{command}");
            assert_eq!((o.policy, o.format), (options.policy.clone(), Format::Json), "{command}");
            assert_eq!(o.state, options.state, "{command}");
        }
        let plain = Shell::new("signpost", Vec::new());
        let command =
            plain.command("neighbors", &obj(json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})));
        assert_eq!(command, format!("signpost neighbors {id} --direction out --edge-types CALLS"));
        assert_eq!(plain.command("search", &obj(json!({"query": "a b"}))), "signpost search 'a b'");
        assert_eq!(plain.command("describe", &obj(json!({}))), "signpost call describe '{}'");
    }

    #[test]
    fn a_store_url_with_a_password_is_not_repeated() {
        for url in ["redis://:pw@h:1/2", "redis://user:pw@h", "redis+unix:///run/r.sock?db=1&pass=pw"] {
            assert!(has_credentials(url), "{url}");
            let options = QueryOptions { state: Some(url.into()), ..QueryOptions::default() };
            assert!(!options.repeated().iter().any(|w| w.contains("pw")), "{url}");
        }
        for url in ["redis://h:6379/0", "redis+unix:///run/a@b/r.sock", "redis://h/0"] {
            assert!(!has_credentials(url), "{url}");
            let options = QueryOptions { state: Some(url.into()), ..QueryOptions::default() };
            assert_eq!(options.repeated(), ["--state", url], "{url}");
        }
    }

    proptest::proptest! {
        /// Any strings and numbers an agent or a policy could put in a
        /// hint's arguments make a command that parses back to the call.
        #[test]
        fn any_call_parses_back(
            text in proptest::collection::vec("[^\\x00]{0,12}", 3),
            graph in "[^\\x00]{1,12}",
            edge in proptest::collection::vec("[^\\x00,]{1,6}", 1..3),
            ids in proptest::collection::vec("[^\\x00]{1,8}", 1..3),
            limit in proptest::option::of(0u64..1_000_000),
            which in 0usize..5,
        ) {
            let shell = Shell::new("/opt/sign post/signpost", QueryOptions { graph: vec![graph.clone().into()], ..QueryOptions::default() }.repeated());
            let mut args = match which {
                0 => json!({"identifier": text[0], "kind": text[1]}),
                1 => json!({"id": text[0]}),
                2 => json!({"kind": text[0], "role": text[1], "name": text[2]}),
                3 => json!({"query": text[0]}),
                _ => json!({"ids": ids, "direction": "in", "edge_types": edge}),
            };
            if let (Some(limit), 2..) = (limit, which) {
                args["limit"] = json!(limit);
            }
            let args = obj(args);
            let tool = Tool::NAMES[which];
            let command = shell.command(tool, &args);
            let (t, a, o) = parse_back(&command);
            proptest::prop_assert_eq!((t.name(), &a), (tool, &args), "{}", command);
            proptest::prop_assert_eq!(o.graph, vec![PathBuf::from(&graph)], "{}", command);
        }
    }

    fn response(text: &str, hints: &[(&str, Value)]) -> Response {
        let hints: Vec<HintOut> = hints
            .iter()
            .map(|(tool, args)| HintOut {
                tool: (*tool).into(),
                args: obj(args.clone()),
                actionable: true,
                reason: "why".into(),
            })
            .collect();
        Response {
            is_error: false,
            text: text.into(),
            state_tag: "ok".into(),
            structured: json!({"results": [1], "hints": hints}),
            shape: None,
            hints,
        }
    }

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn hint_lines_are_the_hints_as_commands() {
        let shell = Shell::new("signpost", Vec::new());
        let id = "721797098567ca69c8d8f724033dc6ec8670d50b";
        let hints = [("describe", json!({"id": id})), ("search", json!({"query": "a b"}))];
        // The policy's own hint lines, whatever surrounds their calls, give way
        // to the hints, where the first of them stood.
        let text = format!(
            "[ok] found\nline {id}\n→ next: describe {{\"id\":\"{id}\"}} $(touch x)\n→ next: junk\n? ask user: which?"
        );
        let out = plain(&super::text(&response(&text, &hints), &[], &shell));
        let expected = format!(
            "[ok] found\nline {id}\n→ next: signpost describe {id}\n  — why\n→ next: signpost search 'a b'\n  — why\n? ask user: which?\n"
        );
        assert_eq!(out, expected);
        // No hint line in the text: the hints go before the ask-user line.
        let out = plain(&super::text(&response("[ok] found\n? ask user: which?", &hints[..1]), &[], &shell));
        assert_eq!(out, format!("[ok] found\n→ next: signpost describe {id}\n  — why\n? ask user: which?\n"));
        // …or at the end.
        let out = plain(&super::text(&response("[ok] found", &hints[..1]), &[], &shell));
        assert!(out.ends_with(&format!("→ next: signpost describe {id}\n  — why\n")), "{out}");
    }

    #[test]
    fn hidden_characters_never_reach_a_command_or_json() {
        let shell = Shell::new("signpost", Vec::new());
        for s in ["a\u{202e}b", "a\u{2028}b", "a\u{200b}b", "a\u{7f}b", "a\nb", "a\u{85}b", "a\u{e0041}b"] {
            let args = obj(json!({"path": s}));
            let command = shell.command("find", &args);
            assert!(!command.chars().any(hidden), "{command:?}");
            assert!(command.starts_with("signpost call find "), "{command}");
            // It still parses back to the same call.
            let words = shlex::split(&command).unwrap_or_default();
            let back: Value = serde_json::from_str(&words[3]).unwrap_or_default();
            assert_eq!(back, Value::Object(args.clone()), "{command}");
            let printed = json_text(&json!({"path": s, "list": [s]}));
            assert!(!printed.trim_end().chars().any(|c| hidden(c) && c != '\n'), "{printed:?}");
            assert_eq!(serde_json::from_str::<Value>(&printed).unwrap_or_default()["path"], json!(s));
        }
    }

    #[test]
    fn call_arguments_must_be_an_object() {
        for (text, needle) in [("[1]", "must be a JSON object"), ("{nope", "not JSON")] {
            let cli = Cli::try_parse_from(["signpost", "call", "find", text]).expect("parses");
            let err = cli.query.to_call().expect_err(text);
            assert!(err.contains(needle) && err.contains("find"), "{err}");
        }
        assert!(Cli::try_parse_from(["signpost", "call", "delete", "{}"]).is_err());
    }
}
