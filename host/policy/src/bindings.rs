//! The one place `bindgen!` runs: host bindings for the `signpost:policy/hints`
//! world, re-exporting only what the host uses.
#![allow(missing_docs)] // generated code documents itself from the WIT

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "hints",
});

pub use self::signpost::policy::types;

/// The WIT package version this host implements, as a literal (for
/// `concat!`): the one place it is written.
#[macro_export]
macro_rules! wit_version {
    () => {
        "0.1.0"
    };
}

/// The WIT package version this host implements.
pub const WIT_VERSION: &str = crate::wit_version!();
/// The exported interface a policy component must provide.
pub const POLICY_INTERFACE: &str = concat!("signpost:policy/policy@", crate::wit_version!());
