//! The one place `bindgen!` runs: host bindings for the `signpost:policy/hints`
//! world, re-exporting only what the host uses.
#![allow(missing_docs)] // generated code documents itself from the WIT

wasmtime::component::bindgen!({
    path: "../wit",
    world: "hints",
});

pub use self::signpost::policy::types;

/// The WIT package version this host implements.
pub const WIT_VERSION: &str = "0.1.0";
/// The exported interface a policy component must provide.
pub const POLICY_INTERFACE: &str = "signpost:policy/policy@0.1.0";
