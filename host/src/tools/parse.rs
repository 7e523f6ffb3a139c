//! Reading a call: its arguments checked, its ids read (by the policy, or
//! strictly), and what a failed call tells the agent.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::args::{DescribeArgs, FindArgs, NeighborsArgs, ResolveArgs, SearchArgs};
use super::{IdParam, MAX_IDS, MAX_LIMIT, MAX_OFFSET, MAX_TEXT, Tool};
use crate::graph::{Direction, EdgeKey, Graph, NodeIx, is_id};

/// What kind of failure a tool call ended in (mirrors the WIT `error-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// An id argument that could not be read as ids.
    InvalidId,
    /// A well-formed id the graph does not contain.
    UnknownId,
    /// Another argument of the wrong type, value or range.
    BadArgument,
    /// The server failed.
    Internal,
}

/// A failed tool call: what the agent reads, and a call to copy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolError {
    /// Failure kind.
    pub kind: ErrorKind,
    /// Teaching message.
    pub message: String,
    /// A correct call (JSON object of arguments), when one is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
}

impl ToolError {
    pub(super) fn bad(message: impl Into<String>, example: Option<Value>) -> Self {
        ToolError { kind: ErrorKind::BadArgument, message: message.into(), example }
    }
}

/// Reads id arguments (`describe.id`, `neighbors.ids`) into canonical ids.
pub trait IdCoercer {
    /// The ids in `args[param]` of a call to `tool`, or an `invalid_id` error.
    fn coerce(&mut self, tool: Tool, args: &Map<String, Value>, param: IdParam) -> Result<Vec<String>, ToolError>;
}

/// The strict reading: a JSON array of canonical ids (or, for `describe`, one
/// id string). Used to validate hints, and when the policy is unavailable.
pub struct StrictIds;

impl IdCoercer for StrictIds {
    fn coerce(&mut self, tool: Tool, args: &Map<String, Value>, param: IdParam) -> Result<Vec<String>, ToolError> {
        let ids = match args.get(param.name()) {
            Some(Value::String(s)) if param == IdParam::Id => vec![s.clone()],
            Some(Value::Array(items)) if !items.is_empty() => {
                items.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>().unwrap_or_default()
            }
            _ => Vec::new(),
        };
        if ids.is_empty() || ids.len() > MAX_IDS || !ids.iter().all(|id| is_id(id)) {
            let shape = match param {
                IdParam::Id => "one id string",
                IdParam::Ids => "a JSON array of id strings",
            };
            let param = param.name();
            return Err(ToolError {
                kind: ErrorKind::InvalidId,
                message: format!(
                    "`{param}` of {tool} must be {shape} (40 lowercase hex characters each, at most {MAX_IDS})"
                ),
                example: None,
            });
        }
        // Canonical and deduplicated, in order (what coercion promises too).
        let mut unique = Vec::with_capacity(ids.len());
        for id in ids {
            if !unique.contains(&id) {
                unique.push(id);
            }
        }
        Ok(unique)
    }
}

/// A call whose arguments were read and checked.
#[derive(Debug)]
pub enum Parsed {
    /// `resolve`.
    Resolve(ResolveArgs),
    /// `describe` of one node.
    Describe(NodeIx),
    /// `find`.
    Find(FindArgs),
    /// `search`.
    Search(SearchArgs),
    /// `neighbors`.
    Neighbors {
        /// Origins, in request order.
        origins: Vec<NodeIx>,
        /// Direction.
        direction: Direction,
        /// (canonical key, parsed key).
        keys: Vec<(String, EdgeKey)>,
        /// Keys asked for, of edge types Signpost knows, that this graph
        /// has none of: their answer is empty (canonical).
        absent: Vec<String>,
        /// Page size.
        limit: u32,
        /// Offset.
        offset: u32,
    },
}

impl Parsed {
    /// The tool it calls.
    pub fn tool(&self) -> Tool {
        match self {
            Parsed::Resolve(_) => Tool::Resolve,
            Parsed::Describe(_) => Tool::Describe,
            Parsed::Find(_) => Tool::Find,
            Parsed::Search(_) => Tool::Search,
            Parsed::Neighbors { .. } => Tool::Neighbors,
        }
    }
}

/// What a kind of failure means, in a few words (when a message cannot be shown).
pub fn describe_error_kind(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidId => "an id argument could not be read as 40-hex ids",
        ErrorKind::UnknownId => "no symbol has that id",
        ErrorKind::BadArgument => "an argument has the wrong type, value or range",
        ErrorKind::Internal => "the server failed",
    }
}

fn check_text(name: &str, text: &str) -> Result<(), ToolError> {
    if text.len() > MAX_TEXT {
        return Err(ToolError::bad(format!("`{name}` is {} bytes; at most {MAX_TEXT}", text.len()), None));
    }
    if text.chars().any(char::is_control) {
        return Err(ToolError::bad(format!("`{name}` contains control characters"), None));
    }
    Ok(())
}

/// `example` is the call as sent, for the teaching error (made only then).
fn check_page(tool: Tool, limit: u32, offset: u32, example: impl FnOnce() -> Value) -> Result<(), ToolError> {
    if limit == 0 || limit > MAX_LIMIT {
        let mut fixed = example();
        fixed["limit"] = json!(limit.clamp(1, MAX_LIMIT));
        return Err(ToolError::bad(format!("`limit` of {tool} must be 1 to {MAX_LIMIT}, got {limit}"), Some(fixed)));
    }
    if offset > MAX_OFFSET {
        return Err(ToolError::bad(format!("`offset` must be at most {MAX_OFFSET}"), None));
    }
    Ok(())
}

fn lookup_all(graph: &Graph, tool: Tool, ids: &[String]) -> Result<Vec<NodeIx>, ToolError> {
    let mut found = Vec::with_capacity(ids.len());
    let mut unknown = Vec::new();
    for id in ids {
        match graph.lookup(id) {
            Some(ix) => found.push(ix),
            None => unknown.push(id.as_str()),
        }
    }
    if unknown.is_empty() {
        return Ok(found);
    }
    let shown: Vec<&str> = unknown.iter().take(3).copied().collect();
    let more = if unknown.len() > 3 { format!(" and {} more", unknown.len() - 3) } else { String::new() };
    Err(ToolError {
        kind: ErrorKind::UnknownId,
        message: format!(
            "{tool}: no symbol has id {}{more}. Ids come from resolve, search, find or neighbors results of this graph.",
            shown.join(", ")
        ),
        example: None,
    })
}

/// Reads and checks a call's arguments.
pub fn parse(
    graph: &Graph,
    tool: Tool,
    args: &Map<String, Value>,
    ids: &mut dyn IdCoercer,
) -> Result<Parsed, ToolError> {
    fn de<T: serde::de::DeserializeOwned>(tool: Tool, args: &Map<String, Value>) -> Result<T, ToolError> {
        // Read from the map where it is, not from a copy of it.
        T::deserialize(args).map_err(|e| {
            // The example travels in `example`, never inside the message:
            // the text may show a call only where the host can vet it.
            let example = Some(tool.example()).filter(|x| x.as_object().is_some_and(|m| !m.is_empty()));
            ToolError::bad(format!("bad arguments for {tool}: {e}."), example)
        })
    }
    match tool {
        Tool::Resolve => {
            let a: ResolveArgs = de(tool, args)?;
            check_text("identifier", &a.identifier)?;
            if a.identifier.trim().is_empty() {
                return Err(ToolError::bad(
                    "`identifier` is empty: pass a symbol name, qualified name or id",
                    Some(tool.example()),
                ));
            }
            if let Some(k) = &a.kind {
                check_text("kind", k)?;
            }
            Ok(Parsed::Resolve(a))
        }
        Tool::Describe => {
            let _: DescribeArgs = de(tool, args)?;
            let found = ids.coerce(tool, args, IdParam::Id)?;
            if found.len() != 1 {
                return Err(ToolError {
                    kind: ErrorKind::InvalidId,
                    message: format!("describe takes one id, got {}: call it once per id", found.len()),
                    example: found.first().map(|id| json!({"id": id})),
                });
            }
            Ok(Parsed::Describe(lookup_all(graph, tool, &found)?[0]))
        }
        Tool::Find => {
            let a: FindArgs = de(tool, args)?;
            for (name, v) in [("kind", &a.kind), ("role", &a.role), ("name", &a.name), ("path", &a.path)] {
                if let Some(v) = v {
                    check_text(name, v)?;
                }
            }
            check_page(tool, a.limit, a.offset, || Value::Object(args.clone()))?;
            // A kind or role this graph has none of is a question about
            // another graph, or a misspelling: say which there are.
            for (what, given, present) in [("kind", &a.kind, graph.kinds()), ("role", &a.role, graph.roles())] {
                let Some(given) = given.as_deref().map(str::trim).filter(|g| !g.is_empty()) else {
                    continue;
                };
                if present.iter().any(|p| p.eq_ignore_ascii_case(given)) {
                    continue;
                }
                let listed = if present.is_empty() { "none".to_owned() } else { present.join(", ") };
                let example = nearest(&given.to_ascii_lowercase(), &present).map(|near| {
                    let mut fixed = args.clone();
                    fixed.insert(what.into(), json!(near));
                    Value::Object(fixed)
                });
                return Err(ToolError::bad(
                    format!("this graph has no symbol of {what} `{}`; its {what}s: {listed}", crate::clip(given)),
                    example,
                ));
            }
            Ok(Parsed::Find(a))
        }
        Tool::Search => {
            let a: SearchArgs = de(tool, args)?;
            check_text("query", &a.query)?;
            if a.query.trim().is_empty() {
                return Err(ToolError::bad("`query` is empty: pass words to look for", Some(tool.example())));
            }
            check_page(tool, a.limit, a.offset, || Value::Object(args.clone()))?;
            Ok(Parsed::Search(a))
        }
        Tool::Neighbors => {
            let a: NeighborsArgs = de(tool, args)?;
            let found = ids.coerce(tool, args, IdParam::Ids)?;
            let origins = lookup_all(graph, tool, &found)?;
            let mut keys: Vec<(String, EdgeKey)> = Vec::with_capacity(a.edge_types.len());
            let mut absent: Vec<String> = Vec::new();
            let mut unknown = Vec::new();
            if a.edge_types.is_empty() || a.edge_types.len() > 16 {
                return Err(ToolError::bad(
                    "`edge_types` must list 1 to 16 edge types",
                    Some(json!({"ids": found, "direction": a.direction, "edge_types": ["CALLS"]})),
                ));
            }
            let known =
                |t: &str| crate::graph::EDGE_TYPES.contains(&t) || graph.parse_edge_key(t).is_ok_and(|k| k.is_some());
            for raw in &a.edge_types {
                check_text("edge_types", raw)?;
                let key = raw.trim().to_ascii_uppercase();
                match graph.parse_edge_key(&key) {
                    Ok(Some(parsed)) => {
                        if !keys.iter().any(|(k, _)| *k == key) {
                            keys.push((key, parsed));
                        }
                    }
                    // A type Signpost makes, that this graph has none of
                    // (no `OVERRIDES` in a Go project): an empty answer.
                    Ok(None) if key.split('.').all(known) => {
                        if !absent.contains(&key) {
                            absent.push(key);
                        }
                    }
                    Ok(None) | Err(_) => unknown.push(raw.clone()),
                }
            }
            if !unknown.is_empty() {
                let types = graph.edge_types();
                // The call shown keeps the keys that read, with each
                // misspelt type replaced by the one of this graph it is
                // nearest to (`CALLZ` → `CALLS`); a key with a type near
                // none is left out, never replaced by an unrelated one.
                let mut fixed: Vec<String> =
                    keys.iter().map(|(k, _)| k.clone()).chain(absent.iter().cloned()).collect();
                for raw in &unknown {
                    let key = raw.trim().to_ascii_uppercase();
                    let parts: Option<Vec<&str>> =
                        key.split('.').map(|t| if known(t) { Some(t) } else { nearest(t, &types) }).collect();
                    if let Some(parts) = parts.filter(|p| !p.is_empty() && p.len() <= 3) {
                        let key = parts.join(".");
                        if !fixed.contains(&key) {
                            fixed.push(key);
                        }
                    }
                }
                let chain = match types.iter().find(|t| **t != "DECLARES") {
                    Some(t) if types.contains(&"DECLARES") => format!(", e.g. DECLARES.{t}"),
                    _ => String::new(),
                };
                return Err(ToolError::bad(
                    format!(
                        "unknown edge type {}; this graph has {} (chain with dots{chain})",
                        unknown.iter().map(|u| format!("`{}`", crate::clip(u))).collect::<Vec<_>>().join(", "),
                        types.join(", ")
                    ),
                    (!fixed.is_empty()).then(|| json!({"ids": found, "direction": a.direction, "edge_types": fixed})),
                ));
            }
            let example = || json!({"ids": found, "direction": a.direction, "edge_types": a.edge_types});
            check_page(tool, a.limit, a.offset, example)?;
            Ok(Parsed::Neighbors { origins, direction: a.direction, keys, absent, limit: a.limit, offset: a.offset })
        }
    }
}

/// The edge type of `types` that `typed` is a misspelling of: at most two
/// edits away, and nearer than to any other.
fn nearest<'t>(typed: &str, types: &[&'t str]) -> Option<&'t str> {
    let mut by: Vec<(usize, &str)> = types.iter().map(|t| (strsim::damerau_levenshtein(typed, t), *t)).collect();
    by.sort_unstable();
    match by[..] {
        [(d, t), (e, _), ..] if d <= 2 && d < e => Some(t),
        [(d, t)] if d <= 2 => Some(t),
        _ => None,
    }
}
