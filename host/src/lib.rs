//! Signpost: an MCP server for coding agents whose hints and id coercion run
//! in a sandboxed, hot-swappable WebAssembly policy component.
//!
//! Data flows one way per tool call (see `ARCHITECTURE.md`):
//! [`server`] (rmcp) → [`pipeline`] → the policy's `prerequisites` and
//! `coerce-ids` ([`policy`]) → [`tools`] on the [`graph`] → the policy's
//! `advise` → hint validation → the policy's `render` → the response.

pub mod golden;
pub mod http;
pub mod live_graph;
pub mod live_policy;
pub mod metrics;
pub mod oci;
pub mod pipeline;
pub mod precise;
pub mod project;
pub mod proxy;
pub mod record;
pub mod reload;
pub mod replay;
pub mod response;
pub mod rollout;
pub mod sanitize;
pub mod selfcheck;
pub mod server;
pub mod service;
pub mod session;
pub mod terminal;
pub mod tools;
pub mod trails;
pub mod trust;
pub mod validate;
pub mod watch;

/// The default policy component, built from `hints-component/` by `build.rs`.
pub const DEFAULT_POLICY: &[u8] = include_bytes!(env!("SIGNPOST_DEFAULT_POLICY"));

include!(concat!(env!("OUT_DIR"), "/default_cases.rs"));

/// The Rust index the default policy's cases 20–23 run on
/// (`tests/fixtures/scip/rust/index.scip`), written beside them by
/// `signpost policy export-default --cases DIR`.
pub const DEFAULT_CASES_RUST_INDEX: &[u8] = include_bytes!(env!("SIGNPOST_CASES_RUST_INDEX"));

/// The code graph ([`signpost_graph`]): its formats, queries and indexers.
pub use signpost_graph as graph;
pub use signpost_graph::{indexer, search};
/// The policy sandbox ([`signpost_policy`]).
pub use signpost_policy as policy;
/// The WIT package policies implement (`signpost policy wit DIR` writes it).
pub use signpost_policy::WIT as POLICY_WIT;
pub use signpost_policy::wit_version;
/// At most 80 characters of untrusted text on one line, control and
/// invisible characters removed, for messages.
pub fn clip(s: &str) -> String {
    policy::text::line(s, 80)
}
