//! The policy sandbox: compiles a policy component once, links it once
//! (`instantiate_pre`), and runs its functions under limits.
//!
//! Instances are pooled per session and reused (a call on a warm instance
//! costs about a microsecond; a fresh instance tens of microseconds): an
//! instance serves the calls of one session (one agent) only, so nothing a
//! policy keeps in its memory crosses from one agent to another. An instance
//! that trapped, timed out or was used [`MAX_USES`] times is dropped, never
//! reused.
//!
//! Every call runs under limits that hold whatever the guest calls:
//! - time: an epoch deadline while the guest computes, and the same deadline
//!   on every host call that can wait (`wasi:io/poll`'s `poll` and
//!   `pollable.block`, which is how sleeps and clock waits arrive); sockets
//!   are off, and the only streams (stdin closed, stdout/stderr in memory)
//!   never block (those that can wait on the ambient tokio runtime hand a
//!   runtime's worker off first, so calls can run in place: `in_place`);
//! - space: one budget for the instance's whole footprint, all its linear
//!   memories plus its tables, and a bound on the host resources it holds;
//!   an instance near its budget is retired.
//!
//! WASI is linked with nothing granted: no preopened directories, no
//! environment, no arguments, no network, and stdout/stderr captured into
//! the host's log. Everything a guest chooses (its output, the function
//! names in a trap's backtrace, its export names) reaches the log or a
//! terminal only through [`text::escape`].

mod bindings;
mod cache;
mod engine;
mod in_place;
mod pool;
pub mod rules;
pub mod text;

use std::fmt;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

pub use bindings::types::{
    Advice, BeforeCall, Call, CoercionError, ErrorKind as WitErrorKind, Hint, Outcome, PastCall, PolicyInfo, Session,
    Tool as WitTool, ToolError as WitToolError, ToolRules,
};
pub use bindings::{Interface, POLICY_INTERFACE, WIT_VERSION};
pub use engine::{HostState, PolicyEngine};
pub use in_place::{WASI_POLL, off_the_runtime};
pub use pool::{Lease, Policy};
pub use rules::{Rules, ToolSet};

/// The WIT package new policies implement, the newest
/// (`signpost policy wit DIR` writes it).
pub const WIT: &str = include_str!("../wit/policy.wit");
/// The WIT package of 0.2.0, still served (`signpost policy wit --version 0.2.0 DIR`).
pub const WIT_0_2: &str = include_str!("../wit/0.2.0/policy.wit");
/// The WIT package of 0.1.0, still served (`signpost policy wit --version 0.1.0 DIR`).
pub const WIT_0_1: &str = include_str!("../wit/0.1.0/policy.wit");

/// The WIT text of a served interface version.
pub fn wit_of(interface: Interface) -> &'static str {
    match interface {
        Interface::V0_1 => WIT_0_1,
        Interface::V0_2 => WIT_0_2,
        Interface::V0_3 => WIT,
    }
}

/// Most ids one `host.has-seen` asks about (0.3.0).
pub const MAX_HAS_SEEN: usize = 4096;
/// Most bytes one crossing copies from a policy into the host: the
/// arguments of one host call (`host.has-seen`'s list, WASI's included) or
/// what one function returns (wasmtime's hostcall fuel; its default is 128
/// MiB). Past it the policy traps. Room for any real answer, and for a
/// hostile one the host cleans up (10 MB of detail lines), not for a list
/// of strings that alias the same bytes to multiply the host's copies.
pub const MAX_HOSTCALL_BYTES: usize = 32 << 20;
/// Lookups one policy function call may make (`host.lookup`, 0.2.0 and later).
pub const MAX_LOOKUPS: u32 = 4;
/// Largest `args` of a lookup, in bytes.
pub const MAX_LOOKUP_ARGS: usize = 64 << 10;
/// Largest result a lookup returns, in bytes.
pub const MAX_LOOKUP_RESULT: usize = 1 << 20;

/// What answers a 0.2.0 or later policy's `host.lookup`: a read-only call to a tool
/// of the catalogue the host serves (the graph's, or a proxy's backend's).
/// Set on a lease ([`Lease::set_lookup`]) for the calls it makes; `deadline`
/// is the calling function's.
pub trait Lookup: Send + Sync {
    /// The tool's result as JSON text, or why not (one line).
    fn lookup(&self, tool: &str, args: &str, deadline: std::time::Instant) -> Result<String, String>;
}

/// Calls after which a pooled instance is retired (bounds leaks in a policy).
pub const MAX_USES: u32 = 10_000;
/// Idle instances kept per policy (one per recently active session).
pub const MAX_IDLE: usize = 64;
/// Footprint of all idle instances of a policy together, in bytes; the least
/// recently used go first.
pub const IDLE_BUDGET: usize = 256 << 20;
/// Host bytes counted per table element (wasmtime stores one pointer; the
/// margin covers its bookkeeping).
pub const TABLE_ELEMENT_BYTES: usize = 16;
/// Host resources (streams, pollables, …) an instance may hold between calls.
pub const MAX_HOST_RESOURCES: usize = 256;
/// Epoch tick: the resolution of the per-call deadline.
pub const TICK: Duration = Duration::from_millis(5);

/// The limits every policy call runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Footprint per instance, in bytes: all its linear memories together,
    /// plus [`TABLE_ELEMENT_BYTES`] per table element.
    pub memory_bytes: usize,
    /// Wall-clock budget of one policy function call.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr an instance may write before it is retired.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory_bytes: 64 << 20, timeout: Duration::from_millis(100), output_bytes: 64 << 10 }
    }
}

/// Why a policy component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not a WebAssembly component wasmtime can compile.
    #[error("not a valid WebAssembly component: {0}")]
    Compile(String),
    /// Imports something the sandbox does not provide.
    #[error("the component imports what the sandbox does not grant: {0}")]
    Link(String),
    /// Exports no policy interface version this host serves.
    #[error(
        "the component implements no policy interface this host serves (signpost:policy/policy@0.3.0, @0.2.0 or @0.1.0; new policies: {POLICY_INTERFACE}): {detail}; it exports: [{exports}]"
    )]
    World {
        /// What wasmtime reported.
        detail: String,
        /// What the component does export.
        exports: String,
    },
    /// Its memory image could not be prepared.
    #[error("the component's memory image could not be prepared: {0}")]
    Memory(String),
    /// Failed its first call (`identity`).
    #[error("the component failed its identity call: {0}")]
    Identity(PolicyFault),
}

/// A policy call that did not return normally. Costs the response its hints,
/// never the response itself. Messages are single escaped lines (guest-chosen
/// names included), safe for logs and terminals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyFault {
    /// Ran past its deadline, computing or waiting in a host call.
    Timeout,
    /// Trapped (panic, unreachable, out of memory, stack overflow, …).
    Trap(String),
    /// Could not be instantiated.
    Instantiate(String),
}

impl fmt::Display for PolicyFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyFault::Timeout => write!(f, "policy call timed out"),
            PolicyFault::Trap(m) => write!(f, "policy trapped: {m}"),
            PolicyFault::Instantiate(m) => write!(f, "policy could not be instantiated: {m}"),
        }
    }
}

/// The error a bounded host wait returns when the call's deadline passes.
#[derive(Debug)]
struct HostDeadline;

impl fmt::Display for HostDeadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the policy call's deadline passed while it waited in a host call")
    }
}

impl std::error::Error for HostDeadline {}

impl std::error::Error for PolicyFault {}

/// Counters of one loaded policy.
#[derive(Debug, Default)]
pub struct Stats {
    /// Policy function calls made.
    pub calls: AtomicU64,
    /// Calls that trapped.
    pub traps: AtomicU64,
    /// Calls that timed out.
    pub timeouts: AtomicU64,
    /// Hints that reached an agent.
    pub hints_emitted: AtomicU64,
    /// Hints dropped by validation.
    pub hints_dropped: AtomicU64,
    /// Tool calls served.
    pub tool_calls: AtomicU64,
    /// Tool calls during which the policy faulted at least once.
    pub faulted_tool_calls: AtomicU64,
    /// Instances retired before a fault because their footprint neared the cap.
    pub recycled_for_memory: AtomicU64,
    /// Coercions refused because the policy answered with ids the agent
    /// did not send (counted as faults).
    pub coercions_refused: AtomicU64,
    /// Instances created.
    pub instances: AtomicU64,
    /// Calls held once at the policy's request (a proxy's, 0.2.0).
    pub calls_held: AtomicU64,
}

impl Stats {
    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// The SHA-256 of `bytes`, as lowercase hex: how policies are identified.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Who a loaded policy is and where it came from.
#[derive(Debug, Clone)]
pub struct Identity {
    /// Name the policy reports.
    pub name: String,
    /// Version the policy reports.
    pub version: String,
    /// SHA-256 of the component bytes, hex.
    pub sha256: String,
    /// Where it was loaded from.
    pub source: String,
    /// When it was loaded.
    pub loaded_at: SystemTime,
    /// Whether its compiled code came from the cache.
    pub from_cache: bool,
}

impl Identity {
    /// Hex digits of the sha256 that name a build in messages.
    pub const BUILD_DIGITS: usize = 12;

    /// The build's short name: the first [`Identity::BUILD_DIGITS`] hex
    /// digits of its sha256 (two builds with the same name and version
    /// differ here).
    pub fn build(&self) -> &str {
        &self.sha256[..self.sha256.len().min(Self::BUILD_DIGITS)]
    }
}

/// `name version (build 1a2b3c4d5e6f)`: a build, as messages name it.
impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} (build {})", self.name, self.version, self.build())
    }
}

/// Who a lease is for: the instance it gets has served this session only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionKey(pub u64);

impl SessionKey {
    /// A key never handed out before in this process.
    pub fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SessionKey(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The key of a trail (the host's `trails`), from its random id: the same
    /// on every replica, and never one [`SessionKey::fresh`] hands out
    /// (those stay below 2^63).
    pub fn of_trail(id: &[u8; 16]) -> Self {
        let mut low = [0u8; 8];
        low.copy_from_slice(&id[..8]);
        SessionKey(u64::from_le_bytes(low) | 1 << 63)
    }
}
