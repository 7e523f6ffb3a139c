//! `signpost proxy`: Signpost in front of another MCP server.
//!
//! The proxy is an MCP client of its backend ([`Upstream`]: a command
//! spoken to over stdio or a URL over streamable HTTP, started or connected
//! to again with back-off when it goes away) and serves
//! the backend's tools as its own ([`Catalogue`]), each call through
//! [`crate::pipeline::forward`]: the policy's prerequisites, the backend's
//! answer, the policy's advice with its hints validated against the
//! backend's input schemas, and the sanitiser with the backend's tool names
//! as the calls it reads.

mod catalogue;
mod lookup;
mod upstream;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

pub use catalogue::{Catalogue, Shown, referenced, replace_referenced, shape_of};
pub use lookup::BackendLookup;
pub use upstream::{
    Backend, CLIENT_TRANSPORT_LOGS, Command, Notice, Relay, Upstream, UpstreamError, severity, url_holds_secrets,
};

/// A backend's result as a policy reads it (`outcome.success`, a lookup's
/// answer): `content` and `structuredContent` as the backend sent them.
pub fn outcome_of(result: &CallToolResult) -> Value {
    let mut outcome = Map::new();
    outcome.insert("content".into(), serde_json::to_value(&result.content).unwrap_or_default());
    if let Some(structured) = &result.structured_content {
        outcome.insert("structuredContent".into(), structured.clone());
    }
    Value::Object(outcome)
}
