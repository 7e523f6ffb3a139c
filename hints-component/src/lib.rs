//! Signpost's default hint policy.
//!
//! Built for `wasm32-wasip2` this crate is a WebAssembly component exporting
//! the `signpost:policy/hints` world (see `wit/policy.wit`); built natively it
//! is a plain library with the same logic, for unit tests and benchmarks.
//!
//! - [`coerce`]: reading ids from whatever JSON an agent sent;
//! - [`advise`]: the road-sign catalogue (hints after a call, prerequisites
//!   before it);
//! - [`render`]: the terse, state-tagged text projection;
//! - [`model`]: plain Rust mirrors of the WIT types;
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
