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
//!   never block;
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
pub mod text;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

pub use bindings::types::{
    Advice, Call, CoercionError, ErrorKind as WitErrorKind, Hint, Outcome, PastCall, PolicyInfo, Session,
    ToolError as WitToolError,
};
use bindings::{Hints, HintsPre};
pub use bindings::{POLICY_INTERFACE, WIT_VERSION};

/// The WIT package policies implement (`signpost policy wit DIR` writes it).
pub const WIT: &str = include_str!("../../../wit/policy.wit");

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
    /// Does not export the policy interface this host speaks.
    #[error(
        "the component does not implement {POLICY_INTERFACE} (this host speaks signpost:policy@{WIT_VERSION}): {detail}; it exports: [{exports}]"
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

/// Builds the component's copy-on-write memory images now rather than at
/// its first instantiation. wasmtime writes each image into a memfd and
/// seals it; sealing fails with EBUSY while the kernel briefly holds pages of
/// it (migration, compaction: up to ~150 ms, seen under load on two cores),
/// and a short retry rides that out. A failed attempt caches nothing, and no
/// guest code has run yet.
fn prepare_memory_images(component: &Component) -> Result<(), LoadError> {
    const TRIES: u32 = 4;
    for attempt in 1.. {
        match component.initialize_copy_on_write_image() {
            Ok(()) => return Ok(()),
            Err(e) if attempt < TRIES && is_busy(&e) => {
                tracing::debug!(attempt, "memory image busy (EBUSY); retrying");
                std::thread::sleep(Duration::from_millis(50 * u64::from(attempt)));
            }
            Err(e) => return Err(LoadError::Memory(text::escape(&format!("{e:#}"), 300))),
        }
    }
    unreachable!("the loop returns")
}

/// Whether `e` is the OS saying "busy, try again" (EBUSY).
fn is_busy(e: &wasmtime::Error) -> bool {
    e.root_cause()
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.raw_os_error() == Some(16) || io.kind() == std::io::ErrorKind::ResourceBusy)
}

/// One escaped line describing a wasmtime error: its own message (a trap
/// code, or the host's error) and, for traps, the guest functions on the
/// stack, each name escaped.
fn describe_error(e: &wasmtime::Error) -> String {
    let head = match e.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => e.root_cause().to_string(),
    };
    let mut out = text::escape(&head, 300);
    if let Some(trace) = e.downcast_ref::<wasmtime::WasmBacktrace>() {
        let names: Vec<String> =
            trace.frames().iter().take(8).map(|f| text::escape(f.func_name().unwrap_or("<unnamed>"), 80)).collect();
        if !names.is_empty() {
            out.push_str(" (in ");
            out.push_str(&names.join(" ← "));
            out.push(')');
        }
    }
    out
}

/// `format!("{e:#}")` for load-time errors, as one escaped line.
fn describe_load_error(e: &wasmtime::Error) -> String {
    text::escape(&format!("{e:#}"), 600)
}

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
}

impl Stats {
    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// The shared wasmtime engine and linker; one per process, shared by every
/// policy it loads (so compiled code stays compatible across swaps).
#[derive(Clone)]
pub struct PolicyEngine {
    engine: Engine,
    linker: Arc<Linker<HostState>>,
    limits: Limits,
    cache: Option<PathBuf>,
}

impl fmt::Debug for PolicyEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyEngine").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Per-instance host state: WASI with nothing granted, the footprint limits,
/// the current call's deadline and the captured output streams.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: Limiter,
    deadline: Instant,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

/// One budget for an instance's whole footprint: every linear memory and
/// every table counts against `cap` together (a guest cannot multiply its
/// room by declaring several memories, or grow the host through tables).
/// Remembers the footprint after instantiation, so a guest whose heap only
/// ever grows (a garbage-collected runtime that collects lazily, a leak) is
/// retired while it still has room, instead of trapping at the cap.
struct Limiter {
    /// Instance, table and memory counts.
    limits: StoreLimits,
    cap: usize,
    /// Bytes of memories and tables now (they never shrink).
    footprint: usize,
    /// `footprint` right after instantiation.
    initial: usize,
}

impl Limiter {
    fn grow(&mut self, bytes: usize) -> bool {
        match self.footprint.checked_add(bytes) {
            Some(total) if total <= self.cap => {
                self.footprint = total;
                true
            }
            _ => false,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        Ok(self.grow(desired.saturating_sub(current)))
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        Ok(self.grow(desired.saturating_sub(current).saturating_mul(TABLE_ELEMENT_BYTES)))
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

impl Limiter {
    /// Whether the instance has used three quarters of the room it had to
    /// grow after instantiation.
    fn nearly_full(&self) -> bool {
        let room = self.cap.saturating_sub(self.initial);
        self.footprint.saturating_sub(self.initial) > room / 4 * 3
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl PolicyEngine {
    /// A new engine with epoch interruption and the sandbox's linker. Starts
    /// the epoch ticker thread, which ends when the engine is dropped.
    pub fn new(limits: Limits) -> anyhow::Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).max_wasm_stack(1 << 20);
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        bound_waits(&mut linker)?;
        let weak = engine.weak();
        std::thread::Builder::new().name("signpost-epoch".into()).spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(TICK);
            }
        })?;
        Ok(PolicyEngine { engine, linker: Arc::new(linker), limits, cache: None })
    }

    /// Caches compiled components in `dir` (created 0700 if missing), keyed
    /// by the component's sha256 and this engine's compatibility hash, so a
    /// restart or a swap back to a known version skips compilation.
    pub fn with_cache(mut self, dir: PathBuf) -> std::io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        }
        self.cache = Some(dir);
        Ok(self)
    }

    fn cache_path(&self, sha256: &str) -> Option<PathBuf> {
        let mut hasher = std::hash::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        Some(self.cache.as_ref()?.join(format!("{sha256}-{:016x}.cwasm", hasher.finish())))
    }

    /// The compiled component: from the cache when a trusted entry exists,
    /// else compiled (and cached). The flag says whether the cache served.
    fn compile(&self, bytes: &[u8], sha256: &str) -> Result<(Component, bool), LoadError> {
        let path = self.cache_path(sha256);
        if let Some(path) = path.as_deref().filter(|p| cache::trusted(p)) {
            match cache::load(&self.engine, path) {
                Ok(component) => return Ok((component, true)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %format!("{e:#}"), "ignoring unusable cache entry");
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        if !bytes.starts_with(b"\0asm") {
            return Err(LoadError::Compile(
                "not a WebAssembly file (it does not start with `\\0asm`): pass the `.wasm` component a policy \
                 build produces, e.g. `cargo build --target wasm32-wasip2 --release`"
                    .into(),
            ));
        }
        if bytes.get(4..8) == Some(&[1, 0, 0, 0]) {
            return Err(LoadError::Compile(
                "a core WebAssembly module, not a component: build for `wasm32-wasip2` (which links a component), \
                 or wrap the module with `wasm-tools component new`"
                    .into(),
            ));
        }
        let component = Component::new(&self.engine, bytes).map_err(|e| LoadError::Compile(describe_load_error(&e)))?;
        if let Some(path) = path {
            match component.serialize() {
                Ok(compiled) => {
                    if let Err(e) = cache::store(&path, &compiled) {
                        tracing::warn!(path = %path.display(), error = %e, "could not cache compiled policy");
                    }
                }
                Err(e) => tracing::warn!(error = %format!("{e:#}"), "could not serialize compiled policy"),
            }
        }
        Ok((component, false))
    }

    /// The limits calls run under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Compiles, links and identifies a policy component. `source` names
    /// where it came from (a path, or "embedded").
    pub fn load(&self, bytes: &[u8], source: &str) -> Result<Policy, LoadError> {
        let started = Instant::now();
        let sha256 = sha256_hex(bytes);
        let (component, from_cache) = self.compile(bytes, &sha256)?;
        prepare_memory_images(&component)?;
        let pre = self.linker.instantiate_pre(&component).map_err(|e| LoadError::Link(describe_load_error(&e)))?;
        let pre = HintsPre::new(pre).map_err(|e| LoadError::World {
            detail: describe_load_error(&e),
            exports: component
                .component_type()
                .exports(&self.engine)
                .take(20)
                .map(|(name, _)| text::escape(name, 80))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        let mut policy = Policy {
            pre,
            engine: self.clone(),
            pool: Mutex::new(Pool::default()),
            stats: Stats::default(),
            info: Identity {
                name: String::new(),
                version: String::new(),
                sha256,
                source: source.to_owned(),
                loaded_at: SystemTime::now(),
                from_cache,
            },
        };
        let info = policy.cold_lease().identity().map_err(LoadError::Identity)?;
        policy.info.name = text::line(&info.name, 80);
        policy.info.version = text::line(&info.version, 80);
        tracing::info!(
            policy = %policy.info.name, version = %policy.info.version, sha256 = %policy.info.sha256, source,
            from_cache, ms = started.elapsed().as_millis() as u64, "policy loaded"
        );
        Ok(policy)
    }

    fn deadline_ticks(&self) -> u64 {
        (self.limits.timeout.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1
    }
}

/// The WASI interface whose host calls can wait.
const WASI_POLL: &str = "wasi:io/poll@0.2.12";

/// Replaces the two host calls that can wait — `poll` and `pollable.block`,
/// through which every sleep, clock wait and stream wait arrives — with ones
/// that give up at the policy call's deadline (the epoch deadline cannot
/// interrupt a guest that is blocked in the host).
fn bound_waits(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::DynPollable;
    use wasmtime_wasi::p2::bindings::io::poll::{Host, HostPollable};

    fn until<F: std::future::Future>(deadline: Instant, wait: F) -> wasmtime::Result<F::Output> {
        let deadline = tokio::time::Instant::from_std(deadline);
        wasmtime_wasi::runtime::in_tokio(async move { tokio::time::timeout_at(deadline, wait).await })
            .map_err(|_| wasmtime::Error::new(HostDeadline))
    }

    linker.allow_shadowing(true);
    let mut poll = linker.instance(WASI_POLL)?;
    poll.func_wrap(
        "poll",
        |mut store: wasmtime::StoreContextMut<'_, HostState>, (list,): (Vec<Resource<DynPollable>>,)| {
            let state = store.data_mut();
            let ready = until(state.deadline, Host::poll(&mut state.table, list))??;
            Ok((ready,))
        },
    )?;
    poll.func_wrap(
        "[method]pollable.block",
        |mut store: wasmtime::StoreContextMut<'_, HostState>, (pollable,): (Resource<DynPollable>,)| {
            let state = store.data_mut();
            until(state.deadline, HostPollable::block(&mut state.table, pollable))??;
            Ok(())
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
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

/// A compiled, linked policy component, ready to run.
pub struct Policy {
    pre: HintsPre<HostState>,
    engine: PolicyEngine,
    pool: Mutex<Pool>,
    stats: Stats,
    info: Identity,
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

/// Idle instances, each kept for the one session it served, least recently
/// used first; bounded in number and in total footprint.
#[derive(Default)]
struct Pool {
    idle: std::collections::VecDeque<(SessionKey, Slot)>,
    footprint: usize,
}

impl Pool {
    fn take(&mut self, key: SessionKey) -> Option<Slot> {
        let at = self.idle.iter().rposition(|(k, _)| *k == key)?;
        let (_, slot) = self.idle.remove(at)?;
        self.footprint -= slot.footprint();
        Some(slot)
    }

    fn put(&mut self, key: SessionKey, slot: Slot) {
        // A session with two calls in flight returns two instances: keep one.
        drop(self.take(key));
        self.footprint += slot.footprint();
        self.idle.push_back((key, slot));
        while self.idle.len() > MAX_IDLE || self.footprint > IDLE_BUDGET {
            let Some((_, old)) = self.idle.pop_front() else { break };
            self.footprint -= old.footprint();
        }
    }
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy").field("info", &self.info).finish_non_exhaustive()
    }
}

struct Slot {
    store: Store<HostState>,
    hints: Hints,
    uses: u32,
    logged: (usize, usize),
}

impl Slot {
    fn footprint(&self) -> usize {
        self.store.data().limits.footprint
    }
}

impl Policy {
    /// The policy's identity.
    pub fn identity(&self) -> &Identity {
        &self.info
    }

    /// The policy's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Checks out the instance that served `session` before (or a new one)
    /// for the calls of one tool call; it goes back to the pool, for that
    /// session only, when the lease is dropped, unless it faulted.
    pub fn lease(&self, session: SessionKey) -> Lease<'_> {
        let slot = self.pool.lock().ok().and_then(|mut pool| pool.take(session));
        Lease { policy: self, slot, faults: 0, session: Some(session) }
    }

    /// A lease on a new instance that is never pooled: for one-off work
    /// (identity, the self-check, benchmarks of a cold call).
    pub fn cold_lease(&self) -> Lease<'_> {
        Lease { policy: self, slot: None, faults: 0, session: None }
    }

    /// Idle instances kept now (one per recently active session at most).
    pub fn idle_instances(&self) -> usize {
        self.pool.lock().map_or(0, |pool| pool.idle.len())
    }

    fn instantiate(&self) -> Result<Slot, PolicyFault> {
        let limits = self.engine.limits;
        let stdout = MemoryOutputPipe::new(limits.output_bytes);
        let stderr = MemoryOutputPipe::new(limits.output_bytes);
        // Nothing inherited: no env, args, preopens; no sockets at all.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        let state = HostState {
            wasi,
            table: ResourceTable::new(),
            limits: Limiter {
                limits: StoreLimitsBuilder::new().instances(16).tables(16).memories(4).build(),
                cap: limits.memory_bytes,
                footprint: 0,
                initial: 0,
            },
            deadline: Instant::now() + limits.timeout,
            stdout,
            stderr,
        };
        let mut store = Store::new(&self.engine.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(self.engine.deadline_ticks());
        Stats::add(&self.stats.instances, 1);
        let hints = self.pre.instantiate(&mut store).map_err(|e| PolicyFault::Instantiate(describe_error(&e)))?;
        let limiter = &mut store.data_mut().limits;
        limiter.initial = limiter.footprint;
        Ok(Slot { store, hints, uses: 0, logged: (0, 0) })
    }
}

/// An instance checked out of a policy's pool.
pub struct Lease<'p> {
    policy: &'p Policy,
    slot: Option<Slot>,
    faults: u32,
    /// The session whose instance this is; `None` for a cold lease.
    session: Option<SessionKey>,
}

impl<'p> Lease<'p> {
    /// How many of this lease's calls faulted.
    pub fn faults(&self) -> u32 {
        self.faults
    }

    /// Counts a policy answer the host refused as a fault (it costs the
    /// call like a trap does, and counts toward a rollback); the instance is
    /// not reused.
    pub fn refuse_answer(&mut self) {
        self.faults += 1;
        self.slot = None;
    }

    /// The policy this lease runs.
    pub fn policy(&self) -> &'p Policy {
        self.policy
    }

    fn run<R>(
        &mut self,
        what: &'static str,
        f: impl FnOnce(&Hints, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PolicyFault> {
        let policy = self.policy;
        let mut slot = match self.slot.take() {
            Some(slot) => slot,
            None => policy.instantiate().inspect_err(|_| self.faults += 1)?,
        };
        Stats::add(&policy.stats.calls, 1);
        slot.store.set_epoch_deadline(policy.engine.deadline_ticks());
        slot.store.data_mut().deadline = Instant::now() + policy.engine.limits.timeout;
        let result = f(&slot.hints, &mut slot.store);
        slot.uses += 1;
        drain_output(&mut slot, &policy.info.name);
        match result {
            Ok(value) => {
                let state = slot.store.data_mut();
                if state.limits.nearly_full() {
                    Stats::add(&policy.stats.recycled_for_memory, 1);
                    tracing::debug!(
                        policy = %policy.info.name, footprint = state.limits.footprint, initial = state.limits.initial,
                        uses = slot.uses, "instance retired: its footprint neared the cap"
                    );
                } else if state.table.iter_mut().nth(MAX_HOST_RESOURCES).is_some() {
                    Stats::add(&policy.stats.recycled_for_memory, 1);
                    tracing::debug!(policy = %policy.info.name, "instance retired: it holds too many host resources");
                } else {
                    self.slot = Some(slot);
                }
                Ok(value)
            }
            Err(e) => {
                self.faults += 1;
                let fault = match e.downcast_ref::<Trap>() {
                    Some(Trap::Interrupt) => Some(PolicyFault::Timeout),
                    _ if e.is::<HostDeadline>() => Some(PolicyFault::Timeout),
                    _ => None,
                };
                let fault = match fault {
                    Some(timeout) => {
                        Stats::add(&policy.stats.timeouts, 1);
                        timeout
                    }
                    None => {
                        Stats::add(&policy.stats.traps, 1);
                        PolicyFault::Trap(describe_error(&e))
                    }
                };
                tracing::warn!(policy = %policy.info.name, function = what, %fault, "policy call failed; instance discarded");
                Err(fault)
            }
        }
    }

    /// `identity()`.
    pub fn identity(&mut self) -> Result<PolicyInfo, PolicyFault> {
        self.run("identity", |h, s| h.signpost_policy_policy().call_identity(s))
    }

    /// `coerce-ids(call, param)`.
    pub fn coerce_ids(&mut self, call: &Call, param: &str) -> Result<Result<Vec<String>, CoercionError>, PolicyFault> {
        self.run("coerce-ids", |h, s| h.signpost_policy_policy().call_coerce_ids(s, call, param))
    }

    /// `prerequisites(call, session)`.
    pub fn prerequisites(&mut self, call: &Call, session: &Session) -> Result<Vec<Hint>, PolicyFault> {
        self.run("prerequisites", |h, s| h.signpost_policy_policy().call_prerequisites(s, call, session))
    }

    /// `advise(call, outcome, session)`.
    pub fn advise(&mut self, call: &Call, outcome: &Outcome, session: &Session) -> Result<Advice, PolicyFault> {
        self.run("advise", |h, s| h.signpost_policy_policy().call_advise(s, call, outcome, session))
    }

    /// `render(call, advice)`.
    pub fn render(&mut self, call: &Call, advice: &Advice) -> Result<String, PolicyFault> {
        self.run("render", |h, s| h.signpost_policy_policy().call_render(s, call, advice))
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let (Some(slot), Some(session)) = (self.slot.take(), self.session) else { return };
        let limits = self.policy.engine.limits;
        let spent = slot.logged.0.max(slot.logged.1);
        if slot.uses >= MAX_USES || spent > limits.output_bytes / 2 {
            return;
        }
        if let Ok(mut pool) = self.policy.pool.lock() {
            pool.put(session, slot);
        }
    }
}

/// Forwards what the guest wrote since the last call to the host log.
fn drain_output(slot: &mut Slot, policy: &str) {
    let state = slot.store.data();
    for (stream, pipe, logged) in
        [("stdout", &state.stdout, &mut slot.logged.0), ("stderr", &state.stderr, &mut slot.logged.1)]
    {
        let bytes = pipe.contents();
        if bytes.len() > *logged {
            let text = String::from_utf8_lossy(&bytes[*logged..]);
            for line in text.split('\n').filter(|l| !l.trim().is_empty()) {
                let line = text::escape(line, 1000);
                tracing::info!(target: "signpost::policy_output", policy, stream, "{line}");
            }
            *logged = bytes.len();
        }
    }
}
