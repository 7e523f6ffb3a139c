//! The command line of the tool commands: [`Query`] and its options, and
//! the MCP call each command makes.

use std::borrow::Cow;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::shell::option;
use crate::tools::Tool;

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

pub(super) const RESOLVE_EXAMPLE: &str =
    "Examples:\n  signpost resolve OrderService\n  signpost resolve placeOrder --kind method";
pub(super) const DESCRIBE_EXAMPLE: &str = "Examples:\n  signpost describe 721797098567ca69c8d8f724033dc6ec8670d50b\n  \
                                signpost describe OrderController      (a name that names one symbol)";
pub(super) const FIND_EXAMPLE: &str =
    "Examples:\n  signpost find --kind class --role controller\n  signpost find --path orders/ --limit 50";
pub(super) const SEARCH_EXAMPLE: &str =
    "Examples:\n  signpost search refund payment\n  signpost search 'place order' --format json";
pub(super) const NEIGHBORS_EXAMPLE: &str = "Examples:\n  signpost neighbors OrderController --direction out --edge-types DECLARES.EXPOSES\n  \
                                 signpost neighbors 7d529f3251ac14c03145667c552d3725352b660e --direction in --edge-types TARGETS,CALLS";
pub(super) const CALL_EXAMPLE: &str = "Examples:\n  signpost call describe '{\"id\": \"721797098567ca69c8d8f724033dc6ec8670d50b\"}'\n  \
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

pub(super) fn tool_example(tool: Tool) -> String {
    let example = tool.example();
    shlex::try_quote(&example.to_string()).map_or_else(|_| "{}".to_owned(), Cow::into_owned)
}
