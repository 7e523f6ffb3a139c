//! Plain Rust mirrors of the WIT types in `wit/policy.wit`.
//!
//! The policy logic speaks only these types, so it compiles and runs natively
//! (unit tests, benchmarks, the host's fallback-free comparisons) as well as
//! inside the component, where `component.rs` converts at the boundary.

use serde_json::{Map, Value};

/// A tool call as the agent made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Tool name.
    pub tool: String,
    /// Arguments as sent: a JSON object (anything else reads as empty).
    pub args: Map<String, Value>,
}

impl Call {
    /// Builds a call from a tool name and JSON argument text. Text that is not
    /// a JSON object yields empty arguments rather than an error: the host
    /// already validated what it could, and the policy must not fail on it.
    pub fn from_json(tool: &str, args: &str) -> Self {
        let args = match serde_json::from_str::<Value>(args) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Call { tool: tool.to_owned(), args }
    }

    /// A string argument, if present and a string.
    pub fn str_arg(&self, name: &str) -> Option<&str> {
        self.args.get(name).and_then(Value::as_str)
    }
}

/// A suggested next call.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    /// Tool to call.
    pub tool: String,
    /// Arguments: a JSON object.
    pub args: Value,
    /// Whether `tool` + `args` is a complete call.
    pub actionable: bool,
    /// Why, in one short line.
    pub reason: String,
}

impl Hint {
    /// An actionable hint.
    pub fn call(tool: &str, args: Value, reason: impl Into<String>) -> Self {
        Hint { tool: tool.to_owned(), args, actionable: true, reason: reason.into() }
    }

    /// An advisory hint: `args` show the shape but must be adapted.
    pub fn advice(tool: &str, args: Value, reason: impl Into<String>) -> Self {
        Hint { tool: tool.to_owned(), args, actionable: false, reason: reason.into() }
    }
}

/// What kind of failure a tool call ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A failed tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// Failure kind.
    pub kind: ErrorKind,
    /// Teaching message.
    pub message: String,
    /// A correct call to copy, when known.
    pub example: Option<Value>,
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The structured result, as JSON text (read typed and borrowed:
    /// [`crate::reply::Reply`]).
    Success(String),
    /// The failure.
    Failure(ToolError),
}

/// One earlier call of the session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PastCall {
    /// Tool name.
    pub tool: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Ids of the records it returned.
    pub ids: Vec<String>,
}

/// Bounded summary of the session before the current call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    /// Calls made before this one.
    pub call_count: u32,
    /// Most recent calls, oldest first.
    pub recent: Vec<PastCall>,
    /// Ids seen in results, most recent last.
    pub seen_ids: Vec<String>,
}

/// What the policy reads of a session's history: whether it has seen ids
/// in earlier results. In the component the host answers
/// (`host.has-seen`); natively (tests, benchmarks) a [`Session`] does.
pub trait History {
    /// For each of `ids`, whether the session has seen it.
    fn seen(&self, ids: &[String]) -> Vec<bool>;
}

impl History for Session {
    fn seen(&self, ids: &[String]) -> Vec<bool> {
        ids.iter().map(|id| self.seen_ids.contains(id)).collect()
    }
}

/// What the policy says about a finished call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Advice {
    /// Short lower_snake_case tag.
    pub state_tag: String,
    /// One-line summary.
    pub summary: String,
    /// Detail lines.
    pub details: Vec<String>,
    /// Suggested next calls, best first.
    pub hints: Vec<Hint>,
    /// A decision for the user, if any.
    pub ask_user: Option<String>,
}

/// Why an id argument could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct CoercionError {
    /// What was wrong and how to send it instead.
    pub message: String,
    /// A correct call for the same tool (a JSON object of arguments).
    pub example: Value,
}
