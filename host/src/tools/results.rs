//! The tools' results, as agents read them (their output schemas derive
//! from these types), and the hints every result carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::graph::{Derivation, Direction, EdgeSummary, Node, NodeRef};

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
    /// `resolve`'s candidates that share their qualified name with another
    /// (overloads, a type's namesakes): the signature that tells them
    /// apart. Absent otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
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
            signature: String::new(),
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
    /// Set when the symbol's file changed since its part of the graph was
    /// indexed (a served project, `--project`): its line and edges may be
    /// out of date until the file is indexed again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// Set when the symbol's file is generated code, by its name
    /// (`*.pb.go`, `*_pb2.py`, T4's `*.g.cs`, `*.designer.cs`,
    /// `zz_generated.*.go`): read and served like the rest, but a change
    /// belongs in what it is generated from.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generated: bool,
    /// For a callable: call sites named like it that name resolution could
    /// not bind to one definition (a receiver of unknown type, namesakes
    /// it could not tell apart). Its callers may be more than its edges
    /// show. Absent when none (or when a compiler-backed indexer made the
    /// graph).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unbound_calls: u32,
    /// Its file, or for a package, namespace or type the files of what it
    /// declares, where the indexer could read only in part (syntax its
    /// grammar does not know): what they declare after the line given may
    /// be missing from the graph. Absent when every file was read whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_in_part: Vec<ReadInPart>,
}

/// A file the indexer could read only in part.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReadInPart {
    /// Its path, relative to the project.
    pub file: String,
    /// The 1-based line its grammar stopped reading it as written at.
    pub from_line: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
    /// `inferred` when the edge was resolved by name (the built-in
    /// tree-sitter indexer) rather than given by a compiler-backed indexer:
    /// most probably right, not certain; `ambiguous` when it is one of
    /// several definitions the call could mean (overloads name resolution
    /// could not tell apart): at most one of them is the callee. Absent when
    /// exact, and for composed keys.
    #[serde(skip_serializing_if = "is_exact")]
    pub derived: Option<Derivation>,
    /// The symbol at the other end.
    pub other: Symbol,
}

fn is_exact(d: &Option<Derivation>) -> bool {
    matches!(d, None | Some(Derivation::Exact))
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
    /// Edge types asked for that this graph has none of at all (no
    /// `OVERRIDES` where the indexer found no override): their answer is
    /// empty, which is not an error. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_edge_types: Vec<String>,
    /// Callers asked for (`in`, `CALLS`): call sites named like the origins
    /// that name resolution could not bind to one definition. The callers
    /// may be more than the edges show. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unbound_calls: u32,
}

/// A hint as it appears in `structuredContent.hints`. Two hints are equal
/// when they show the same (their `shape` is the host's note).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HintOut {
    /// Tool to call.
    pub tool: String,
    /// Arguments: send them as they are when `actionable`.
    pub args: Map<String, Value>,
    /// Whether tool + args is a complete, valid call.
    pub actionable: bool,
    /// Why.
    pub reason: String,
    /// The question it asks, when the validator parsed it on the graph:
    /// what follow-through judges the agent's next call against
    /// ([`crate::pipeline::offered`]). Never shown.
    #[serde(skip)]
    #[schemars(skip)]
    pub shape: Option<crate::tools::CallShape>,
}

impl PartialEq for HintOut {
    fn eq(&self, other: &Self) -> bool {
        (&self.tool, &self.args, self.actionable, &self.reason)
            == (&other.tool, &other.args, other.actionable, &other.reason)
    }
}
