//! Signpost's default hint policy.
//!
//! Built for `wasm32-wasip2` this crate is a WebAssembly component of the
//! `hints` world of `signpost:policy@0.3.0` (see `wit/policy.wit`): it asks
//! the host only whether the session has seen the ids a call sends
//! (`host.has-seen`), and declares no catalogue rules. Built natively it is a
//! plain library with the same logic, for unit tests and benchmarks (a
//! [`model::Session`] answers for the host there).
//!
//! - [`coerce`]: reading ids from whatever JSON an agent sent;
//! - [`advise`]: the road-sign catalogue (hints after a call, prerequisites
//!   before it);
//! - [`render`]: the terse, state-tagged text projection;
//! - [`model`]: plain Rust mirrors of the WIT types, and [`model::History`],
//!   what the policy reads of a session's history;
//! - [`reply`]: a tool's result, read typed from its JSON text;
//! - [`arena`]: the instance's allocator, an arena per call.

pub mod advise;
pub mod arena;
pub mod coerce;
pub mod model;
pub mod render;
pub mod reply;

#[cfg(target_arch = "wasm32")]
mod component;

/// The policy's name, as reported through `identity`.
pub const NAME: &str = "signpost-default";
/// The policy's version, as reported through `identity`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
