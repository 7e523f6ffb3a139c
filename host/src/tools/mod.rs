//! The five code-graph tools: what they are ([`Tool`]), their arguments and
//! results, their schemas, and how a call is read and run.
//!
//! A call runs in two steps. [`parse`] turns the agent's JSON arguments into
//! a [`Parsed`] call, asking an [`IdCoercer`] (the policy) to read id
//! arguments; [`execute`] runs it against the [`Graph`](crate::graph::Graph).
//! Hint validation uses the same [`parse`] with the strict coercer, so
//! "valid hint" and "call that works" are one definition.
//!
//! Everything that differs per tool derives from [`Tool`] by a `match`: its
//! name, description, schemas, id parameter, teaching example, parsing and
//! execution; the sanitiser's list of names and parameters and the terminal's
//! subcommands read it too. A sixth tool is a variant, and the compiler
//! lists every match that must handle it.

mod args;
mod execute;
mod lookup;
mod parse;
mod results;
mod schema;
mod shape;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use args::{DescribeArgs, FindArgs, NeighborsArgs, ResolveArgs, SearchArgs};
pub use execute::execute;
pub use lookup::GraphLookup;
pub use parse::{ErrorKind, IdCoercer, Parsed, StrictIds, ToolError, describe_error_kind, parse};
pub use results::{
    DescribeResult, FindResult, HintOut, Neighbor, NeighborsResult, ReadInPart, ResolveResult, ResolveStatus, Scored,
    SearchResult, Symbol,
};
pub use schema::{definition, definitions, input_schema, output_schema, to_wit_tool, tool_set};
pub use shape::{CallShape, Follow, canonical_json};

/// Largest page a paged tool returns.
pub const MAX_LIMIT: u32 = 100;
/// Largest offset accepted.
pub const MAX_OFFSET: u32 = 1_000_000;
/// Longest text argument accepted (identifier, query, filters).
pub const MAX_TEXT: usize = 1024;
/// Most ids one call may name.
pub const MAX_IDS: usize = 256;
/// Most candidates `resolve` returns.
pub const MAX_CANDIDATES: usize = 20;
/// Most bytes of JSON a paged result carries: about 12,000 tokens, so that
/// with the text the policy renders from it a response stays well under
/// the 25,000-token cap clients such as Claude Code apply. A page that
/// would be larger is shortened, and its `limit` says the size used.
pub const MAX_RESULT_BYTES: usize = 48 * 1024;
/// Longest doc or signature a `describe` record carries, in characters.
pub const MAX_DOC_CHARS: usize = 8_000;

/// One of the tools Signpost serves (in JSON, its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// The symbols an identifier names.
    Resolve,
    /// One symbol's whole record.
    Describe,
    /// Symbols by kind, role, name and path.
    Find,
    /// Symbols ranked by words.
    Search,
    /// Symbols one or more edges away.
    Neighbors,
}

impl Tool {
    /// Every tool, in the order `tools/list` shows them.
    pub const ALL: [Tool; 5] = [Tool::Resolve, Tool::Describe, Tool::Find, Tool::Search, Tool::Neighbors];

    /// Every tool's name, in [`Tool::ALL`]'s order.
    pub const NAMES: [&'static str; Tool::ALL.len()] = {
        let mut names = [""; Tool::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Tool::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The name agents call it by.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Resolve => "resolve",
            Tool::Describe => "describe",
            Tool::Find => "find",
            Tool::Search => "search",
            Tool::Neighbors => "neighbors",
        }
    }

    /// The tool named `name` exactly, if any.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// What `tools/list` says it does.
    pub const fn description(self) -> &'static str {
        match self {
            Tool::Resolve => {
                "Find the symbol(s) an identifier names: exact name, qualified name, qualified suffix or id. \
                 Returns status one|many|none with candidates; start here to get ids."
            }
            Tool::Describe => {
                "The full record of one symbol by id, with counts of its edges per type and direction \
                 (composed keys such as DECLARES.EXPOSES count what its members connect to)."
            }
            Tool::Find => "Browse symbols by exact kind and role and by name or path substring, paged.",
            Tool::Search => "Ranked fuzzy lookup over names, qualified names and docs, paged, with scores 0..1.",
            Tool::Neighbors => {
                "Symbols adjacent to the given ids along the given edge types, in or out, paged. \
                 Dotted edge types chain edges: DECLARES.EXPOSES = routes exposed by members."
            }
        }
    }

    /// The argument that holds ids, which the policy may coerce.
    pub const fn id_param(self) -> Option<IdParam> {
        match self {
            Tool::Describe => Some(IdParam::Id),
            Tool::Neighbors => Some(IdParam::Ids),
            Tool::Resolve | Tool::Find | Tool::Search => None,
        }
    }

    /// A generic correct call, for teaching messages (`{}` when a correct
    /// call needs ids, which only the graph can give).
    pub fn example(self) -> Value {
        match self {
            Tool::Resolve => json!({"identifier": "OrderService"}),
            Tool::Find => json!({"kind": "class", "role": "controller"}),
            Tool::Search => json!({"query": "order"}),
            Tool::Describe | Tool::Neighbors => json!({}),
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is none of the tools'.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{}`; tools: {}", crate::clip(.0), Tool::NAMES.join(", "))]
pub struct UnknownTool(pub String);

impl FromStr for Tool {
    type Err = UnknownTool;

    fn from_str(name: &str) -> Result<Tool, UnknownTool> {
        Tool::from_name(name).ok_or_else(|| UnknownTool(name.to_owned()))
    }
}

/// An argument that holds ids (what `coerce-ids` is asked about).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdParam {
    /// `id`: exactly one id, as a string.
    Id,
    /// `ids`: a JSON array of ids.
    Ids,
}

impl IdParam {
    /// The argument's name.
    pub const fn name(self) -> &'static str {
        match self {
            IdParam::Id => "id",
            IdParam::Ids => "ids",
        }
    }
}
