//! The one place `bindgen!` runs: host bindings for the `signpost:policy/hints`
//! world in every version this host serves, re-exporting only what the host
//! uses.
//!
//! 0.3.0 (`wit/policy.wit`) is the contract the host speaks; 0.2.0 and
//! 0.1.0 (`wit/0.2.0/`, `wit/0.1.0/`) are served beside it. Every older
//! type is also a 0.3.0 type, unchanged, so the older bindings take their
//! types from the 0.3.0 ones (`with`): an older policy is called with the
//! very values a 0.3.0 one is, and only the functions that changed need an
//! adapter ([`crate::pool`]).
#![allow(missing_docs)] // generated code documents itself from the WIT

/// `signpost:policy@0.3.0`.
pub mod v0_3 {
    wasmtime::component::bindgen!({
        path: "wit",
        world: "hints",
        // Bounded: too many ids, or a call past the deadline, traps.
        imports: {
            "signpost:policy/host.has-seen": trappable,
            "signpost:policy/host.history": trappable,
        },
    });
}

/// `signpost:policy@0.2.0`, its types those of 0.3.0.
pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: "wit/0.2.0",
        world: "hints",
        with: {
            "signpost:policy/types": crate::bindings::v0_3::signpost::policy::types,
        },
    });
}

/// `signpost:policy@0.1.0`, its types those of 0.3.0.
pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "wit/0.1.0",
        world: "hints",
        with: {
            "signpost:policy/types": crate::bindings::v0_3::signpost::policy::types,
        },
    });
}

pub use self::v0_3::signpost::policy::types;

/// The newest WIT package version this host implements, as a literal (for
/// `concat!`): the one place it is written.
#[macro_export]
macro_rules! wit_version {
    () => {
        "0.3.0"
    };
}

/// The newest WIT package version this host implements: the one
/// `signpost policy wit` writes.
pub const WIT_VERSION: &str = crate::wit_version!();

/// An interface version this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Interface {
    /// `signpost:policy/policy@0.1.0`: no catalogue, no hold.
    V0_1,
    /// `signpost:policy/policy@0.2.0`: the session's history passed by value.
    V0_2,
    /// `signpost:policy/policy@0.3.0`.
    V0_3,
}

impl Interface {
    /// Every version served, newest first.
    pub const ALL: [Interface; 3] = [Interface::V0_3, Interface::V0_2, Interface::V0_1];

    /// The package version, e.g. `0.2.0`.
    pub fn version(self) -> &'static str {
        match self {
            Interface::V0_1 => "0.1.0",
            Interface::V0_2 => "0.2.0",
            Interface::V0_3 => WIT_VERSION,
        }
    }

    /// The exported interface's full name, e.g. `signpost:policy/policy@0.2.0`.
    pub fn name(self) -> &'static str {
        match self {
            Interface::V0_1 => "signpost:policy/policy@0.1.0",
            Interface::V0_2 => "signpost:policy/policy@0.2.0",
            Interface::V0_3 => concat!("signpost:policy/policy@", crate::wit_version!()),
        }
    }
}

impl std::fmt::Display for Interface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A component linked for the interface version it exports.
pub(crate) enum Pre<T: 'static> {
    V0_1(v0_1::HintsPre<T>),
    V0_2(v0_2::HintsPre<T>),
    V0_3(v0_3::HintsPre<T>),
}

/// One instance, of the version its component exports.
pub(crate) enum Instance {
    V0_1(v0_1::Hints),
    V0_2(v0_2::Hints),
    V0_3(v0_3::Hints),
}

impl<T: 'static> Pre<T> {
    pub(crate) fn interface(&self) -> Interface {
        match self {
            Pre::V0_1(_) => Interface::V0_1,
            Pre::V0_2(_) => Interface::V0_2,
            Pre::V0_3(_) => Interface::V0_3,
        }
    }

    pub(crate) fn instantiate(&self, store: &mut wasmtime::Store<T>) -> wasmtime::Result<Instance> {
        Ok(match self {
            Pre::V0_1(pre) => Instance::V0_1(pre.instantiate(store)?),
            Pre::V0_2(pre) => Instance::V0_2(pre.instantiate(store)?),
            Pre::V0_3(pre) => Instance::V0_3(pre.instantiate(store)?),
        })
    }
}

/// The exported interface a new policy provides (the newest).
pub const POLICY_INTERFACE: &str = concat!("signpost:policy/policy@", crate::wit_version!());
