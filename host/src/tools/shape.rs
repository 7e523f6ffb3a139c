//! A call as the graph reads it, and how an agent's call relates to the
//! hints it was offered (follow-through metrics and replay compare by shape).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Parsed, StrictIds, Tool, parse};
use crate::graph::{Graph, NodeIx};

/// A call as the graph reads it: two calls with the same shape ask the same
/// question, however their arguments were spelled (id case, order of ids
/// and edge types, defaults left out). Follow-through metrics and replay
/// compare the agent's calls with the hints offered by shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallShape {
    /// The tool's name (one of Signpost's, or a backend's).
    pub tool: String,
    /// Every argument, canonical.
    pub key: String,
    /// The ids it names, sorted.
    pub ids: Vec<String>,
}

impl CallShape {
    /// The shape of a parsed call.
    pub fn of(graph: &Graph, parsed: &Parsed) -> CallShape {
        let id = |ix: NodeIx| graph.node(ix).id();
        let (key, mut ids) = match parsed {
            Parsed::Resolve(a) => (format!("{:?}|{:?}", a.identifier, a.kind), Vec::new()),
            Parsed::Describe(ix) => (String::new(), vec![id(*ix)]),
            Parsed::Find(a) => {
                (format!("{:?}|{:?}|{:?}|{:?}|{}|{}", a.kind, a.role, a.name, a.path, a.limit, a.offset), Vec::new())
            }
            Parsed::Search(a) => (format!("{:?}|{}|{}", a.query, a.limit, a.offset), Vec::new()),
            Parsed::Neighbors { origins, direction, keys, absent, limit, offset } => {
                let mut types: Vec<&str> =
                    keys.iter().map(|(k, _)| k.as_str()).chain(absent.iter().map(String::as_str)).collect();
                types.sort_unstable();
                types.dedup();
                (
                    format!("{direction:?}|{}|{limit}|{offset}", types.join(",")),
                    origins.iter().map(|&o| id(o)).collect(),
                )
            }
        };
        ids.sort_unstable();
        ids.dedup();
        CallShape { tool: parsed.tool().name().to_owned(), key, ids }
    }

    /// The shape of a call whose arguments are already canonical (a
    /// validated hint, its trail taken out), or `None` when they do not
    /// parse on `graph`.
    pub fn of_args(graph: &Graph, tool: &str, args: &Map<String, Value>) -> Option<CallShape> {
        let tool = Tool::from_name(tool)?;
        parse(graph, tool, args, &mut StrictIds).ok().map(|p| CallShape::of(graph, &p))
    }

    /// The shape of a call to a backend's tool (`signpost proxy`): every
    /// argument, canonical ([`canonical_json`]), and as its ids the strings
    /// at the arguments `references` reach (what the policy declared names
    /// things; see [`crate::proxy::shape_of`]).
    pub fn of_backend(tool: &str, args: &Map<String, Value>, mut references: Vec<String>) -> CallShape {
        references.sort_unstable();
        references.dedup();
        CallShape { tool: tool.to_owned(), key: canonical_json(args), ids: references }
    }

    /// How this call relates to the hints `offered`.
    pub fn follows(&self, offered: &[CallShape]) -> Follow {
        if offered.iter().any(|h| h.tool == self.tool && h.key == self.key && h.ids == self.ids) {
            Follow::Exact
        } else if !self.ids.is_empty() && offered.iter().any(|h| h.tool == self.tool && h.ids == self.ids) {
            Follow::Adapted
        } else {
            Follow::None
        }
    }
}

/// How a call relates to the actionable hints of the response before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Follow {
    /// The same call as a hint (same tool, same arguments).
    Exact,
    /// A hint adapted: same tool and ids, other arguments.
    Adapted,
    /// Neither.
    None,
}

/// `args` as JSON text with every object's members in sorted order: two
/// calls whose arguments differ only in member order read the same.
pub fn canonical_json(args: &Map<String, Value>) -> String {
    let mut out = String::new();
    canonical_object(args, &mut out);
    out
}

fn canonical_object(map: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(k).unwrap_or_default());
        out.push(':');
        canonical(&map[k], out);
    }
    out.push('}');
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
