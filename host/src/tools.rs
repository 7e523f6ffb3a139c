//! The five code-graph tools: arguments, results, schemas and execution.
//!
//! A call runs in two steps. [`parse`] turns the agent's JSON arguments into
//! a [`Parsed`] call, asking an [`IdCoercer`] (the policy) to read id
//! arguments; [`execute`] runs it against the [`Graph`]. Hint validation uses
//! the same [`parse`] with the strict coercer, so "valid hint" and "call that
//! works" are one definition.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::graph::{Direction, EdgeKey, EdgeSummary, Graph, Node, NodeIx, NodeRef, is_id, query, search};

/// The tools, in the order `tools/list` shows them.
pub const TOOL_NAMES: [&str; 5] = ["resolve", "describe", "find", "search", "neighbors"];

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
    fn bad(message: impl Into<String>, example: Option<Value>) -> Self {
        ToolError { kind: ErrorKind::BadArgument, message: message.into(), example }
    }
}

/// Reads id arguments (`describe.id`, `neighbors.ids`) into canonical ids.
pub trait IdCoercer {
    /// The ids in `args[param]` of a call to `tool`, or an `invalid_id` error.
    fn coerce(&mut self, tool: &str, args: &Map<String, Value>, param: &str) -> Result<Vec<String>, ToolError>;
}

/// The strict reading: a JSON array of canonical ids (or, for `describe`, one
/// id string). Used to validate hints, and when the policy is unavailable.
pub struct StrictIds;

impl IdCoercer for StrictIds {
    fn coerce(&mut self, tool: &str, args: &Map<String, Value>, param: &str) -> Result<Vec<String>, ToolError> {
        let ids = match args.get(param) {
            Some(Value::String(s)) if param == "id" => vec![s.clone()],
            Some(Value::Array(items)) if !items.is_empty() => {
                items.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>().unwrap_or_default()
            }
            _ => Vec::new(),
        };
        if ids.is_empty() || ids.len() > MAX_IDS || !ids.iter().all(|id| is_id(id)) {
            let shape = if param == "id" { "one id string" } else { "a JSON array of id strings" };
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

// ---- arguments -------------------------------------------------------------

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// A name (`OrderService`), a qualified name
    /// (`com.acme.shop.orders.OrderService`), a qualified suffix
    /// (`OrderService.placeOrder`) or a 40-hex id.
    pub identifier: String,
    /// Only symbols of this kind: class, interface, method, field, module, route, topic, …
    #[serde(default)]
    pub kind: Option<String>,
}

/// Arguments of `describe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeArgs {
    /// The symbol's 40-hex id, as returned by resolve, search, find or neighbors.
    #[schemars(with = "String")]
    pub id: Value,
}

/// Arguments of `find`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// Exact kind: class, interface, method, field, module, route, topic, …
    #[serde(default)]
    pub kind: Option<String>,
    /// Exact role: controller, service, repository, entity, dto, http_client, producer, consumer, handler, …
    #[serde(default)]
    pub role: Option<String>,
    /// Case-insensitive substring of the symbol's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Substring of the symbol's file path.
    #[serde(default)]
    pub path: Option<String>,
    /// Page size, 1 to 100.
    #[serde(default = "default_find_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to look for in names, qualified names and docs; fuzzy.
    pub query: String,
    /// Page size, 1 to 100.
    #[serde(default = "default_search_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

/// Arguments of `neighbors`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeighborsArgs {
    /// Ids of the symbols to start from: a JSON array of 40-hex id strings.
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub ids: Value,
    /// `out` follows edges from the symbols, `in` follows edges into them.
    pub direction: Direction,
    /// Edge types to follow: CALLS, DECLARES, REFERENCES, IMPLEMENTS, EXTENDS, OVERRIDES,
    /// EXPOSES, TARGETS, PUBLISHES, SUBSCRIBES, or dotted chains such as DECLARES.EXPOSES
    /// (members' routes).
    #[schemars(length(min = 1))]
    pub edge_types: Vec<String>,
    /// Page size, 1 to 100.
    #[serde(default = "default_find_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

fn default_find_limit() -> u32 {
    25
}

fn default_search_limit() -> u32 {
    10
}

// ---- results ---------------------------------------------------------------

/// A symbol in a list: a record without its doc.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Symbol {
    /// 40-hex id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Short name.
    pub name: String,
    /// Qualified name.
    pub fqn: String,
    /// Source file.
    pub file: String,
    /// Declaration line.
    pub line: u32,
    /// Roles.
    pub roles: Vec<String>,
}

impl From<NodeRef<'_>> for Symbol {
    fn from(n: NodeRef<'_>) -> Self {
        Symbol {
            id: n.id(),
            kind: n.kind().to_owned(),
            name: n.name().to_owned(),
            fqn: n.fqn().to_owned(),
            file: n.file().to_owned(),
            line: n.line(),
            roles: n.roles().map(str::to_owned).collect(),
        }
    }
}

/// How many symbols `resolve` found.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ResolveStatus {
    /// Exactly one.
    One,
    /// Several: narrow with `kind`, or pick one.
    Many,
    /// None.
    None,
}

/// Result of `resolve`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResolveResult {
    /// one, many or none.
    pub status: ResolveStatus,
    /// The identifier looked up.
    pub identifier: String,
    /// The kind filter, if any.
    pub kind: Option<String>,
    /// Matching symbols, best first.
    pub candidates: Vec<Symbol>,
}

/// Result of `describe`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DescribeResult {
    /// The full record.
    pub record: Node,
    /// Edge counts per type and direction, with composed DECLARES.* keys.
    pub edge_summary: EdgeSummary,
}

/// Result of `find`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FindResult {
    /// This page of matching symbols.
    pub results: Vec<Symbol>,
    /// All matches.
    pub total: u64,
    /// Page size used (smaller than asked when the page would exceed the
    /// response size budget; the next page starts after the results shown).
    pub limit: u32,
    /// Offset used.
    pub offset: u32,
}

/// A search match.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Scored {
    /// The symbol.
    #[serde(flatten)]
    pub symbol: Symbol,
    /// Relevance, 0 to 1.
    pub score: f64,
}

/// Result of `search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The query.
    pub query: String,
    /// This page of matches, best first.
    pub results: Vec<Scored>,
    /// All matches.
    pub total: u64,
    /// Page size used (smaller than asked when the page would exceed the
    /// response size budget; the next page starts after the results shown).
    pub limit: u32,
    /// Offset used.
    pub offset: u32,
}

/// One edge found by `neighbors`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Neighbor {
    /// The id this edge starts from (one of the requested ids).
    pub origin: String,
    /// The edge key followed.
    pub edge: String,
    /// The symbol at the other end.
    pub other: Symbol,
}

/// Result of `neighbors`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NeighborsResult {
    /// The origin ids, canonical.
    pub ids: Vec<String>,
    /// Direction followed.
    pub direction: Direction,
    /// Edge keys followed, canonical.
    pub edge_types: Vec<String>,
    /// This page of edges.
    pub results: Vec<Neighbor>,
    /// All edges found.
    pub total: u64,
    /// Page size used (smaller than asked when the page would exceed the
    /// response size budget; the next page starts after the results shown).
    pub limit: u32,
    /// Offset used.
    pub offset: u32,
    /// When nothing was found: the edges the origins do have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<EdgeSummary>,
}

/// A hint as it appears in `structuredContent.hints`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct HintOut {
    /// Tool to call.
    pub tool: String,
    /// Arguments: send them as they are when `actionable`.
    pub args: Map<String, Value>,
    /// Whether tool + args is a complete, valid call.
    pub actionable: bool,
    /// Why.
    pub reason: String,
}

// ---- tool definitions ------------------------------------------------------

fn schema_of<T: JsonSchema>() -> JsonObject {
    // Inline subschemas: agents read these, and `$ref`s only get in the way.
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = match serde_json::to_value(settings.into_generator().into_root_schema_for::<T>()) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    schema.remove("$schema");
    schema
}

/// What a trail argument is, for agents reading the schemas.
const TRAIL_DOC: &str = "Optional. The trail this call continues: the `trail` of an earlier result (every actionable \
hint carries it). It keeps what this agent already saw, so the hints fit. Without one, a call in an MCP session \
uses the session's history, and a sessionless call starts a new trail. Opaque; it expires when unused for a while \
(an hour unless the server is told otherwise) or when many newer trails push it out: an expired trail is \
reported in `trail_notice` and the call runs on a new one.";

/// A tool's input schema: its arguments and the optional `trail`.
fn input_schema<T: JsonSchema>() -> JsonObject {
    let mut schema = schema_of::<T>();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert(crate::trails::TRAIL_ARG.into(), json!({"type": "string", "description": TRAIL_DOC}));
    }
    schema
}

fn output_schema<T: JsonSchema>() -> JsonObject {
    let mut schema = schema_of::<T>();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        let doc = "The trail of this call: send it as the `trail` argument of the next call (the hints carry it).";
        props.insert(crate::trails::TRAIL_ARG.into(), json!({"type": "string", "description": doc}));
        let doc = "Why the `trail` this call sent was not used (changed, expired, not a string), when it was not.";
        props.insert("trail_notice".into(), json!({"type": "string", "description": doc}));
    }
    let mut hints = schema_of::<Vec<HintOut>>();
    hints.remove("title");
    hints.insert("description".into(), json!("Suggested next calls, best first: the single hint mechanism."));
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert("hints".into(), Value::Object(hints));
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.push(json!("hints"));
    }
    schema
}

/// The tool definitions served by `tools/list`.
pub fn definitions() -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false);
    let tool = |name: &'static str, desc: &'static str, input: JsonObject, output: JsonObject| {
        Tool::new(name, desc, Arc::new(input)).with_raw_output_schema(Arc::new(output)).with_annotations(read_only())
    };
    vec![
        tool(
            "resolve",
            "Find the symbol(s) an identifier names: exact name, qualified name, qualified suffix or id. \
             Returns status one|many|none with candidates; start here to get ids.",
            input_schema::<ResolveArgs>(),
            output_schema::<ResolveResult>(),
        ),
        tool(
            "describe",
            "The full record of one symbol by id, with counts of its edges per type and direction \
             (composed keys such as DECLARES.EXPOSES count what its members connect to).",
            input_schema::<DescribeArgs>(),
            output_schema::<DescribeResult>(),
        ),
        tool(
            "find",
            "Browse symbols by exact kind and role and by name or path substring, paged.",
            input_schema::<FindArgs>(),
            output_schema::<FindResult>(),
        ),
        tool(
            "search",
            "Ranked fuzzy lookup over names, qualified names and docs, paged, with scores 0..1.",
            input_schema::<SearchArgs>(),
            output_schema::<SearchResult>(),
        ),
        tool(
            "neighbors",
            "Symbols adjacent to the given ids along the given edge types, in or out, paged. \
             Dotted edge types chain edges: DECLARES.EXPOSES = routes exposed by members.",
            input_schema::<NeighborsArgs>(),
            output_schema::<NeighborsResult>(),
        ),
    ]
}

// ---- parsing ---------------------------------------------------------------

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
        /// Page size.
        limit: u32,
        /// Offset.
        offset: u32,
    },
}

/// A call as the graph reads it: two calls with the same shape ask the same
/// question, however their arguments were spelled (id case, order of ids
/// and edge types, defaults left out). Follow-through metrics and replay
/// compare the agent's calls with the hints offered by shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallShape {
    /// The tool.
    pub tool: String,
    /// Every argument, canonical.
    pub key: String,
    /// The ids it names, sorted.
    pub ids: Vec<String>,
}

impl CallShape {
    /// The shape of a parsed call of `tool`.
    pub fn of(graph: &Graph, tool: &str, parsed: &Parsed) -> CallShape {
        let id = |ix: NodeIx| graph.node(ix).id();
        let (key, mut ids) = match parsed {
            Parsed::Resolve(a) => (format!("{:?}|{:?}", a.identifier, a.kind), Vec::new()),
            Parsed::Describe(ix) => (String::new(), vec![id(*ix)]),
            Parsed::Find(a) => {
                (format!("{:?}|{:?}|{:?}|{:?}|{}|{}", a.kind, a.role, a.name, a.path, a.limit, a.offset), Vec::new())
            }
            Parsed::Search(a) => (format!("{:?}|{}|{}", a.query, a.limit, a.offset), Vec::new()),
            Parsed::Neighbors { origins, direction, keys, limit, offset } => {
                let mut types: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
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
        CallShape { tool: tool.to_owned(), key, ids }
    }

    /// The shape of a call whose arguments are already canonical (a
    /// validated hint), or `None` when they do not parse on `graph`.
    pub fn of_args(graph: &Graph, tool: &str, args: &Map<String, Value>) -> Option<CallShape> {
        // The trail a hint carries is not part of the question it asks.
        let args = crate::trails::without_trail(args);
        parse(graph, tool, &args, &mut StrictIds).ok().map(|p| CallShape::of(graph, tool, &p))
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

/// The message for a tool name that is not one of [`TOOL_NAMES`].
pub fn unknown_tool(name: &str) -> String {
    format!("unknown tool `{}`; tools: {}", crate::clip(name), TOOL_NAMES.join(", "))
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

/// A generic correct call per tool, for teaching messages.
pub fn example_for(tool: &str) -> Value {
    match tool {
        "resolve" => json!({"identifier": "OrderService"}),
        "find" => json!({"kind": "class", "role": "controller"}),
        "search" => json!({"query": "order"}),
        _ => json!({}),
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

fn check_page(tool: &str, limit: u32, offset: u32, example: &Value) -> Result<(), ToolError> {
    if limit == 0 || limit > MAX_LIMIT {
        let mut fixed = example.clone();
        fixed["limit"] = json!(limit.clamp(1, MAX_LIMIT));
        return Err(ToolError::bad(format!("`limit` of {tool} must be 1 to {MAX_LIMIT}, got {limit}"), Some(fixed)));
    }
    if offset > MAX_OFFSET {
        return Err(ToolError::bad(format!("`offset` must be at most {MAX_OFFSET}"), None));
    }
    Ok(())
}

fn lookup_all(graph: &Graph, tool: &str, ids: &[String]) -> Result<Vec<NodeIx>, ToolError> {
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
    tool: &str,
    args: &Map<String, Value>,
    ids: &mut dyn IdCoercer,
) -> Result<Parsed, ToolError> {
    fn de<T: serde::de::DeserializeOwned>(tool: &str, args: &Map<String, Value>) -> Result<T, ToolError> {
        serde_json::from_value(Value::Object(args.clone())).map_err(|e| {
            // The example travels in `example`, never inside the message:
            // the text may show a call only where the host can vet it.
            let example = Some(example_for(tool)).filter(|x| x.as_object().is_some_and(|m| !m.is_empty()));
            ToolError::bad(format!("bad arguments for {tool}: {e}."), example)
        })
    }
    match tool {
        "resolve" => {
            let a: ResolveArgs = de(tool, args)?;
            check_text("identifier", &a.identifier)?;
            if a.identifier.trim().is_empty() {
                return Err(ToolError::bad(
                    "`identifier` is empty: pass a symbol name, qualified name or id",
                    Some(example_for(tool)),
                ));
            }
            if let Some(k) = &a.kind {
                check_text("kind", k)?;
            }
            Ok(Parsed::Resolve(a))
        }
        "describe" => {
            let _: DescribeArgs = de(tool, args)?;
            let found = ids.coerce(tool, args, "id")?;
            if found.len() != 1 {
                return Err(ToolError {
                    kind: ErrorKind::InvalidId,
                    message: format!("describe takes one id, got {}: call it once per id", found.len()),
                    example: found.first().map(|id| json!({"id": id})),
                });
            }
            Ok(Parsed::Describe(lookup_all(graph, tool, &found)?[0]))
        }
        "find" => {
            let a: FindArgs = de(tool, args)?;
            for (name, v) in [("kind", &a.kind), ("role", &a.role), ("name", &a.name), ("path", &a.path)] {
                if let Some(v) = v {
                    check_text(name, v)?;
                }
            }
            let example = Value::Object(args.clone());
            check_page(tool, a.limit, a.offset, &example)?;
            Ok(Parsed::Find(a))
        }
        "search" => {
            let a: SearchArgs = de(tool, args)?;
            check_text("query", &a.query)?;
            if a.query.trim().is_empty() {
                return Err(ToolError::bad("`query` is empty: pass words to look for", Some(example_for(tool))));
            }
            check_page(tool, a.limit, a.offset, &Value::Object(args.clone()))?;
            Ok(Parsed::Search(a))
        }
        "neighbors" => {
            let a: NeighborsArgs = de(tool, args)?;
            let found = ids.coerce(tool, args, "ids")?;
            let origins = lookup_all(graph, tool, &found)?;
            let mut keys: Vec<(String, EdgeKey)> = Vec::with_capacity(a.edge_types.len());
            let mut unknown = Vec::new();
            if a.edge_types.is_empty() || a.edge_types.len() > 16 {
                return Err(ToolError::bad(
                    "`edge_types` must list 1 to 16 edge types",
                    Some(json!({"ids": found, "direction": a.direction, "edge_types": ["CALLS"]})),
                ));
            }
            for raw in &a.edge_types {
                check_text("edge_types", raw)?;
                let key = raw.trim().to_ascii_uppercase();
                match graph.parse_edge_key(&key) {
                    Ok(Some(parsed)) => {
                        if !keys.iter().any(|(k, _)| *k == key) {
                            keys.push((key, parsed));
                        }
                    }
                    Ok(None) | Err(_) => unknown.push(raw.clone()),
                }
            }
            if !unknown.is_empty() {
                let valid: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
                let fixed = if valid.is_empty() { vec!["CALLS"] } else { valid };
                return Err(ToolError::bad(
                    format!(
                        "unknown edge type {}; this graph has {} (chain with dots, e.g. DECLARES.EXPOSES)",
                        unknown.iter().map(|u| format!("`{}`", crate::clip(u))).collect::<Vec<_>>().join(", "),
                        graph.edge_types().join(", ")
                    ),
                    Some(json!({"ids": found, "direction": a.direction, "edge_types": fixed})),
                ));
            }
            let example = json!({"ids": found, "direction": a.direction, "edge_types": a.edge_types});
            check_page(tool, a.limit, a.offset, &example)?;
            Ok(Parsed::Neighbors { origins, direction: a.direction, keys, limit: a.limit, offset: a.offset })
        }
        other => Err(ToolError::bad(unknown_tool(other), None)),
    }
}

// ---- execution -------------------------------------------------------------

fn to_value<T: Serialize>(v: &T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError { kind: ErrorKind::Internal, message: e.to_string(), example: None })
}

/// Shortens a paged result to [`MAX_RESULT_BYTES`] (at least one result
/// stays), setting `limit` to the size used so the next page continues
/// where this one stops.
fn fit_page(mut v: Value) -> Value {
    let size = |x: &Value| serde_json::to_vec(x).map_or(0, |b| b.len());
    let whole = size(&v);
    if whole <= MAX_RESULT_BYTES {
        return v;
    }
    if let Some(results) = v.get_mut("results").and_then(Value::as_array_mut) {
        let sizes: Vec<usize> = results.iter().map(|r| size(r) + 1).collect();
        let mut used = whole - sizes.iter().sum::<usize>();
        let keep = sizes.iter().take_while(|&&s| {
            used += s;
            used <= MAX_RESULT_BYTES
        });
        let keep = keep.count().max(1);
        results.truncate(keep);
        v["limit"] = json!(keep);
    }
    v
}

/// At most [`MAX_DOC_CHARS`] characters, with how many were left out.
fn clip_doc(s: &mut String) {
    if let Some((cut, _)) = s.char_indices().nth(MAX_DOC_CHARS) {
        let more = s[cut..].chars().count();
        s.truncate(cut);
        s.push_str(&format!("… ({more} more characters)"));
    }
}

fn page<T>(items: Vec<T>, limit: u32, offset: u32) -> Vec<T> {
    items.into_iter().skip(offset as usize).take(limit as usize).collect()
}

/// Runs a parsed call: the structured result.
pub fn execute(graph: &Graph, call: Parsed) -> Result<Value, ToolError> {
    match call {
        Parsed::Resolve(a) => {
            let (hits, total) = query::resolve(graph, &a.identifier, a.kind.as_deref(), MAX_CANDIDATES);
            let status = match total {
                0 => ResolveStatus::None,
                1 => ResolveStatus::One,
                _ => ResolveStatus::Many,
            };
            to_value(&ResolveResult {
                status,
                identifier: a.identifier.trim().to_owned(),
                kind: a.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned),
                candidates: hits.iter().map(|ix| Symbol::from(graph.node(*ix))).collect(),
            })
        }
        Parsed::Describe(ix) => {
            let mut record = graph.node(ix).to_node();
            clip_doc(&mut record.doc);
            clip_doc(&mut record.signature);
            to_value(&DescribeResult { record, edge_summary: graph.edge_summary(&[ix]) })
        }
        Parsed::Find(a) => {
            let filter = query::Filter {
                kind: a.kind.as_deref(),
                role: a.role.as_deref(),
                name: a.name.as_deref(),
                path: a.path.as_deref(),
            };
            let hits = query::find(graph, &filter);
            let total = hits.len() as u64;
            let results = page(hits, a.limit, a.offset).into_iter().map(|ix| Symbol::from(graph.node(ix))).collect();
            to_value(&FindResult { results, total, limit: a.limit, offset: a.offset }).map(fit_page)
        }
        Parsed::Search(a) => {
            let (total, scored) = search::top(graph, &a.query, a.offset as usize + a.limit as usize);
            let total = total as u64;
            let results = page(scored, a.limit, a.offset)
                .into_iter()
                .map(|(ix, score)| Scored { symbol: Symbol::from(graph.node(ix)), score })
                .collect();
            to_value(&SearchResult { query: a.query, results, total, limit: a.limit, offset: a.offset }).map(fit_page)
        }
        Parsed::Neighbors { origins, direction, keys, limit, offset } => {
            // Count every (origin, key) group; materialise only the groups
            // the page reaches, so a hub with 100,000 callers costs a page.
            let (start, end) = (offset as usize, offset as usize + limit as usize);
            let mut total = 0usize;
            let mut window = Vec::new();
            for &o in &origins {
                for (key, parsed) in &keys {
                    // A composed key is walked to be counted; that walk
                    // serves the page too.
                    let mut walked = (!parsed.is_single()).then(|| graph.walk(o, direction, parsed));
                    let n = walked.as_ref().map_or_else(|| graph.walk_len(o, direction, parsed), Vec::len);
                    if total < end && total + n > start {
                        let walked = walked.take().unwrap_or_else(|| graph.walk(o, direction, parsed));
                        let from = start.saturating_sub(total);
                        let to = (end - total).min(walked.len());
                        window.extend(walked[from.min(to)..to].iter().map(|&other| (o, key, other)));
                    }
                    total += n;
                }
            }
            let available = (total == 0).then(|| graph.edge_summary(&origins));
            let results = window
                .into_iter()
                .map(|(o, key, other)| Neighbor {
                    origin: graph.node(o).id(),
                    edge: key.clone(),
                    other: Symbol::from(graph.node(other)),
                })
                .collect();
            to_value(&NeighborsResult {
                ids: origins.iter().map(|&o| graph.node(o).id()).collect(),
                direction,
                edge_types: keys.into_iter().map(|(k, _)| k).collect(),
                results,
                total: total as u64,
                limit,
                offset,
                available,
            })
            .map(fit_page)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn run(graph: &Graph, tool: &str, a: Value) -> Result<Value, ToolError> {
        execute(graph, parse(graph, tool, &args(a), &mut StrictIds)?)
    }

    #[test]
    fn resolve_tiers_and_kinds() {
        let g = Graph::sample();
        let r = run(&g, "resolve", json!({"identifier": "OrderService"})).unwrap_or_default();
        assert_eq!(r["status"], "one");
        let r = run(&g, "resolve", json!({"identifier": "validate"})).unwrap_or_default();
        assert_eq!(r["status"], "many");
        let r = run(&g, "resolve", json!({"identifier": "OrderService.placeOrder"})).unwrap_or_default();
        assert_eq!(r["status"], "one", "{r}");
        let r = run(&g, "resolve", json!({"identifier": "placeOrder", "kind": "route"})).unwrap_or_default();
        assert_eq!(r["status"], "none");
    }

    #[test]
    fn neighbors_follow_composed_keys() {
        let g = Graph::sample();
        let ctrl = run(&g, "resolve", json!({"identifier": "OrderController"})).unwrap_or_default();
        let id = ctrl["candidates"][0]["id"].clone();
        let r = run(&g, "neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["declares.exposes"]}))
            .unwrap_or_default();
        assert_eq!(r["total"], 4, "{r}");
        assert!(r["results"].as_array().into_iter().flatten().all(|n| n["other"]["kind"] == "route"));
        let d = run(&g, "describe", json!({"id": id})).unwrap_or_default();
        assert_eq!(d["edge_summary"]["out"]["DECLARES.EXPOSES"], 4);
    }

    #[test]
    fn bad_arguments_teach() {
        let g = Graph::sample();
        let id = g.node(0).id();
        let e = run(&g, "neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["CALLZ"]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadArgument);
        assert!(e.message.contains("CALLS"), "{}", e.message);
        assert_eq!(e.example, Some(json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})));
        let e = run(&g, "find", json!({"limit": 0})).unwrap_err();
        assert_eq!(e.example, Some(json!({"limit": 1})));
        let e =
            run(&g, "neighbors", json!({"ids": [id], "direction": "sideways", "edge_types": ["CALLS"]})).unwrap_err();
        assert!(e.message.contains("sideways"), "{}", e.message);
        let e = run(&g, "describe", json!({"id": "0".repeat(40)})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnknownId);
        let e = run(&g, "find", json!({"nme": "x"})).unwrap_err();
        assert!(e.message.contains("unknown field `nme`"), "{}", e.message);
    }
}
