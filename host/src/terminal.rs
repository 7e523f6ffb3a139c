//! The terminal face: the five tools as commands (`signpost describe ID`),
//! for people and for agents that prefer a shell.
//!
//! A command runs the same pipeline as an MCP call (same graph, same
//! policy, same validation and sanitising) and prints the same answer:
//! the policy's text, with every call it shows that is a validated hint
//! rewritten as the command line that makes it ([`Shell::command`]), so a
//! `→ next:` line can be copied to a shell as it is; or, with
//! `--format json`, the structured result with its hints, each actionable
//! one with its `command`. [`Query`] is the command line, [`Shell`] the way
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
use crate::pipeline::Response;
use crate::sanitize;
use crate::tools;

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
    /// When stdout is a terminal and neither `NO_COLOR` nor `CLICOLOR=0` is set.
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
        flags
    }
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
        #[arg(value_parser = tools::TOOL_NAMES)]
        tool: String,
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
    pub fn to_call(&self) -> Result<(String, Map<String, Value>), String> {
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
                "resolve"
            }
            Query::Describe { id, .. } => {
                put("id", Some(id));
                "describe"
            }
            Query::Find { kind, role, name, path, page, .. } => {
                put("kind", kind.as_ref());
                put("role", role.as_ref());
                put("name", name.as_ref());
                put("path", path.as_ref());
                page.add_to(&mut args);
                "find"
            }
            Query::Search { query, page, .. } => {
                put("query", Some(&query.join(" ")));
                page.add_to(&mut args);
                "search"
            }
            Query::Neighbors { ids, direction, edge_types, page, .. } => {
                args.insert("ids".into(), json!(ids));
                args.insert("direction".into(), json!(direction));
                args.insert("edge_types".into(), json!(edge_types));
                page.add_to(&mut args);
                "neighbors"
            }
            Query::Call { tool, args: text, .. } => {
                return match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(map)) => Ok((tool.clone(), map)),
                    Ok(_) => {
                        Err(format!("the arguments of `{tool}` must be a JSON object, such as {}", tool_example(tool)))
                    }
                    Err(e) => Err(format!(
                        "the arguments are not JSON ({e}); `{tool}` takes an object such as {}",
                        tool_example(tool)
                    )),
                };
            }
        };
        Ok((tool.to_owned(), args))
    }
}

fn tool_example(tool: &str) -> String {
    let example = tools::example_for(tool);
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
fn slots(tool: &str) -> &'static [(&'static str, Slot)] {
    use Slot::*;
    match tool {
        "resolve" => &[("identifier", Positional), ("kind", Text)],
        "describe" => &[("id", Positional)],
        "find" => {
            &[("kind", Text), ("role", Text), ("name", Text), ("path", Text), ("limit", Number), ("offset", Number)]
        }
        "search" => &[("query", Positional), ("limit", Number), ("offset", Number)],
        "neighbors" => {
            &[("ids", Positionals), ("direction", Text), ("edge_types", Commas), ("limit", Number), ("offset", Number)]
        }
        _ => &[],
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
        let (positional, flags) = tool_words(tool, args)
            .unwrap_or_else(|| (vec![tool.to_owned(), Value::Object(args.clone()).to_string()], Vec::new()));
        let command = if tool_words(tool, args).is_some() { tool } else { "call" };
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

/// `--flag value`, or `--flag=-value`: a value that starts with `-` would
/// read as an option.
fn option(words: &mut Vec<String>, flag: &str, value: String) {
    if value.starts_with('-') {
        words.push(format!("{flag}={value}"));
    } else {
        words.extend([flag.to_owned(), value]);
    }
}

/// A word for a POSIX shell (single quotes where needed).
fn quote(word: &str) -> Cow<'_, str> {
    // Only a NUL cannot be quoted; no argument holds one (it is not valid
    // in a command line either), so show it escaped rather than fail.
    shlex::try_quote(word).unwrap_or_else(|_| Cow::Owned(format!("'{}'", word.replace('\0', "\\0"))))
}

/// `tool`'s arguments as its command's positional words and options,
/// `None` when they do not fit it (an unknown key, a value of another type).
fn tool_words(tool: &str, args: &Map<String, Value>) -> Option<(Vec<String>, Vec<String>)> {
    let slots = slots(tool);
    if slots.is_empty() || args.keys().any(|k| !slots.iter().any(|(name, _)| name == k)) {
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
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    /// What was typed.
    pub name: String,
    /// The symbol's id.
    pub id: String,
    /// Its kind and qualified name.
    pub what: String,
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
    tool: &str,
    args: &mut Map<String, Value>,
    mut resolve: impl FnMut(&str) -> Option<Value>,
) -> Result<Vec<Named>, Ambiguous> {
    let key = match tool {
        "describe" => "id",
        "neighbors" => "ids",
        _ => return Ok(Vec::new()),
    };
    let mut named = Vec::new();
    let mut swap = |s: &mut String| -> Result<(), Ambiguous> {
        if parse_id(s).is_some() || s.trim().is_empty() {
            return Ok(());
        }
        let Some(result) = resolve(s) else { return Ok(()) };
        let candidates = result["candidates"].as_array().cloned().unwrap_or_default();
        match result["status"].as_str() {
            Some("one") => {
                let c = &candidates[0];
                let id = c["id"].as_str().unwrap_or_default().to_owned();
                let what = format!("{} {}", c["kind"].as_str().unwrap_or("?"), c["fqn"].as_str().unwrap_or("?"));
                named.push(Named { name: std::mem::replace(s, id.clone()), id, what });
                Ok(())
            }
            Some("many") => Err(Ambiguous { name: s.clone(), candidates }),
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
const ASK: Style = AnsiColor::Magenta.on_default().bold();
const QUIET: Style = Style::new().dimmed();

fn paint(style: Style, s: &str) -> String {
    format!("{style}{s}{style:#}")
}

/// The answer as text, with ANSI styles (the stream strips them when
/// colour is off): the policy's text, each validated call in it rewritten
/// as a command, the state tag coloured by outcome, `→ next:` hints and
/// `? ask user:` lines highlighted, and first what names were read as.
pub fn text(response: &Response, named: &[Named], shell: &Shell) -> String {
    let mut out = String::new();
    for n in named {
        let line = format!("note: `{}` is {} {}", sanitize::line(&n.name, 80), n.what, n.id);
        out.push_str(&paint(QUIET, &line));
        out.push('\n');
    }
    let tag_style = if response.is_error {
        TAG_ERROR
    } else if crate::metrics::Outcome::of(false, &response.structured) == crate::metrics::Outcome::Empty {
        TAG_EMPTY
    } else {
        TAG_OK
    };
    for (i, line) in response.text.lines().enumerate() {
        let line = commands_in(line, response, shell);
        let line = match line.strip_prefix('[').and_then(|rest| rest.split_once(']')) {
            Some((tag, rest)) if i == 0 => format!("{}{}", paint(tag_style, &format!("[{tag}]")), paint(SUMMARY, rest)),
            _ if line.starts_with("? ask user:") => paint(ASK, &line),
            _ if line.starts_with("note:") => paint(QUIET, &line),
            _ => match line.strip_prefix("→ next:") {
                Some(rest) => format!("{}{rest}", paint(NEXT, "→ next:")),
                None => line.into_owned(),
            },
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A text line with each call that is an actionable hint of the response
/// (or a template to adapt) written as its command; on a hint line, the
/// ` — reason` after a command becomes a shell comment, so the line after
/// `→ next: ` runs as it is.
fn commands_in<'a>(line: &'a str, response: &Response, shell: &Shell) -> Cow<'a, str> {
    let calls = sanitize::written_calls(line);
    let shown: Vec<_> = calls
        .into_iter()
        .filter(|(_, tool, args)| {
            sanitize::is_template(args)
                || response.hints.iter().any(|h| h.actionable && h.tool == *tool && h.args == *args)
        })
        .collect();
    if shown.is_empty() {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() * 2);
    let mut at = 0;
    for (span, tool, args) in shown {
        if span.start < at {
            continue;
        }
        out.push_str(&line[at..span.start]);
        out.push_str(&paint(COMMAND, &shell.command(&tool, &args)));
        at = span.end;
    }
    let rest = &line[at..];
    match rest.strip_prefix(" — ") {
        Some(reason) if line.starts_with("→ next:") => {
            out.push_str("  ");
            out.push_str(&paint(QUIET, &format!("# {reason}")));
        }
        _ => out.push_str(rest),
    }
    Cow::Owned(out)
}

/// The answer as JSON: the structured result, each actionable hint with
/// the `command` that makes it.
pub fn json(response: &Response, shell: &Shell) -> Value {
    let mut structured = response.structured.clone();
    if let Some(Value::Array(hints)) = structured.get_mut("hints") {
        for (hint, out) in hints.iter_mut().zip(&response.hints) {
            if let (Value::Object(hint), true) = (hint, out.actionable) {
                hint.insert("command".into(), json!(shell.command(&out.tool, &out.args)));
            }
        }
    }
    structured
}

/// A name that names several symbols, for the terminal.
pub fn ambiguous_text(a: &Ambiguous, shell: &Shell) -> String {
    let mut out = format!(
        "{} `{}` names {} symbols; give an id instead:\n",
        paint(TAG_ERROR, "[ambiguous_name]"),
        sanitize::line(&a.name, 80),
        a.candidates.len()
    );
    for c in &a.candidates {
        let place = format!("{}:{}", c["file"].as_str().unwrap_or("?"), c["line"]);
        out.push_str(&format!(
            "{} {} {} {}\n",
            c["id"].as_str().unwrap_or("?"),
            c["kind"].as_str().unwrap_or("?"),
            c["fqn"].as_str().unwrap_or("?"),
            paint(QUIET, &place)
        ));
    }
    let mut args = Map::new();
    args.insert("identifier".into(), json!(a.name));
    out.push_str(&format!("{} {}\n", paint(NEXT, "→ next:"), paint(COMMAND, &shell.command("resolve", &args))));
    out
}

/// A name that names several symbols, as JSON (`error.kind` is
/// `ambiguous_name`).
pub fn ambiguous_json(a: &Ambiguous) -> Value {
    json!({"error": {
        "kind": "ambiguous_name",
        "message": format!("`{}` names {} symbols; give an id instead", sanitize::line(&a.name, 80), a.candidates.len()),
        "candidates": a.candidates,
    }})
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

    fn parse_back(command: &str) -> (String, Map<String, Value>, QueryOptions) {
        let words = shlex::split(command).expect("a shell command line");
        assert_eq!(words[0], "/opt/sign post/signpost");
        let mut cli = Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{command}: {e}"));
        let (tool, args) = cli.query.to_call().expect("a call");
        (tool, args, cli.query.options_mut().clone())
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
        ];
        for (tool, args) in calls {
            let args = obj(args);
            let command = shell.command(tool, &args);
            let (t, a, o) = parse_back(&command);
            assert_eq!((t.as_str(), &a), (tool, &args), "{command}");
            assert_eq!(o.graph, options.graph, "{command}");
            assert_eq!((o.policy, o.format), (options.policy.clone(), Format::Json), "{command}");
        }
        let plain = Shell::new("signpost", Vec::new());
        let command =
            plain.command("neighbors", &obj(json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})));
        assert_eq!(command, format!("signpost neighbors {id} --direction out --edge-types CALLS"));
        assert_eq!(plain.command("search", &obj(json!({"query": "a b"}))), "signpost search 'a b'");
        assert_eq!(plain.command("describe", &obj(json!({}))), "signpost call describe '{}'");
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
            let tool = ["resolve", "describe", "find", "search", "neighbors"][which];
            let command = shell.command(tool, &args);
            let (t, a, o) = parse_back(&command);
            proptest::prop_assert_eq!((t.as_str(), &a), (tool, &args), "{}", command);
            proptest::prop_assert_eq!(o.graph, vec![PathBuf::from(&graph)], "{}", command);
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
