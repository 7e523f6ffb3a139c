//! What a tool call returns to the agent: the leaf type every layer above
//! the tools passes around (the pipeline makes it; sessions, trails,
//! metrics and the terminal read it).

use serde_json::Value;

use crate::tools::{CallShape, HintOut};

/// What a tool call returns to the agent.
#[derive(Debug, Clone)]
pub struct Response {
    /// Whether the call failed (`isError`).
    pub is_error: bool,
    /// The terse text projection.
    pub text: String,
    /// The advice's state tag (`ok`/`error` when the policy faulted), however
    /// the policy rendered its text.
    pub state_tag: String,
    /// The result (or `{error}`) plus `hints`.
    pub structured: Value,
    /// The call as the graph read it (`None` when its arguments could not
    /// be read).
    pub shape: Option<CallShape>,
    /// The hints the response carries (also in `structured`).
    pub hints: Vec<HintOut>,
    /// A forwarded call's answer, as the proxy's backend sent it: for a
    /// result, the agent gets its content, then `text`; an input request
    /// (2026-07-28, MRTR) reaches the agent as it is
    /// ([`crate::pipeline::forward`]).
    pub backend: Option<Box<rmcp::model::CallToolResponse>>,
    /// The digest of a call the policy held once instead of sending it
    /// ([`crate::session::call_digest`]): sent again, it goes through.
    pub held: Option<u64>,
}
