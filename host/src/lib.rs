//! Signpost: an MCP server for coding agents whose hints and id coercion run
//! in a sandboxed, hot-swappable WebAssembly policy component.
//!
//! Data flows one way per tool call (see `ARCHITECTURE.md`):
//! [`server`] (rmcp) → [`pipeline`] → the policy's `prerequisites` and
//! `coerce-ids` ([`policy`]) → [`tools`] on the [`graph`] → the policy's
//! `advise` → hint validation → the policy's `render` → the response.

pub mod cases;
pub mod graph;
pub mod graphs;
pub mod http;
pub mod indexer;
pub mod live;
pub mod metrics;
pub mod pipeline;
pub mod policy;
pub mod record;
pub mod reload;
pub mod replay;
pub mod sanitize;
pub mod search;
pub mod selfcheck;
pub mod server;
pub mod session;
pub mod terminal;
pub mod tools;
pub mod trails;
pub mod trial;
pub mod validate;

/// The default policy component, built from `hints-component/` by `build.rs`.
pub const DEFAULT_POLICY: &[u8] = include_bytes!(env!("SIGNPOST_DEFAULT_POLICY"));

/// The WIT package policies implement (`signpost policy wit DIR` writes it).
pub const POLICY_WIT: &str = include_str!("../../wit/policy.wit");

/// At most 80 characters of untrusted text on one line, control and
/// invisible characters removed, for messages.
pub fn clip(s: &str) -> String {
    sanitize::line(s, 80)
}
