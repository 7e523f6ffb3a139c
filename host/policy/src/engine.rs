//! The engine: compiling a policy component once (or reading it from the
//! cache), linking it against WASI with nothing granted and with waits that
//! give up at the deadline, and the limits every instance runs under.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, StoreLimits};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::{Interface, Pre, v0_1, v0_2, v0_3};
use crate::{
    HostDeadline, Limits, LoadError, Lookup, MAX_HAS_SEEN, MAX_LOOKUP_ARGS, MAX_LOOKUP_RESULT, MAX_LOOKUPS, Session,
    TABLE_ELEMENT_BYTES, TICK, cache, text,
};

/// Builds the component's copy-on-write memory images now rather than at
/// its first instantiation. wasmtime writes each image into a memfd and
/// seals it; sealing fails with EBUSY while the kernel briefly holds pages of
/// it (migration, compaction: up to ~150 ms, seen under load on two cores),
/// and a short retry rides that out. A failed attempt caches nothing, and no
/// guest code has run yet.
pub(crate) fn prepare_memory_images(component: &Component) -> Result<(), LoadError> {
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
pub(crate) fn is_busy(e: &wasmtime::Error) -> bool {
    e.root_cause()
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.raw_os_error() == Some(16) || io.kind() == std::io::ErrorKind::ResourceBusy)
}

/// `format!("{e:#}")` for load-time errors, as one escaped line.
pub(crate) fn describe_load_error(e: &wasmtime::Error) -> String {
    text::escape(&format!("{e:#}"), 600)
}

/// The shared wasmtime engine and linker; one per process, shared by every
/// policy it loads (so compiled code stays compatible across swaps).
#[derive(Clone)]
pub struct PolicyEngine {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<HostState>>,
    pub(crate) limits: Limits,
    pub(crate) cache: Option<PathBuf>,
}

impl fmt::Debug for PolicyEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyEngine").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Per-instance host state: WASI with nothing granted, the footprint limits,
/// the current call's deadline and the captured output streams.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: Limiter,
    pub(crate) deadline: Instant,
    pub(crate) stdout: MemoryOutputPipe,
    pub(crate) stderr: MemoryOutputPipe,
    /// What answers `host.lookup` during the current function call.
    pub(crate) lookup: Option<Arc<dyn Lookup>>,
    /// Lookups the current function call may still make.
    pub(crate) lookups_left: u32,
    /// The history of the session whose call the current function judges
    /// (`host.has-seen`, `host.history`): set for `prerequisites` and
    /// `advise` only.
    pub(crate) history: Option<Arc<Session>>,
}

impl v0_3::signpost::policy::types::Host for HostState {}

impl v0_2::signpost::policy::host::Host for HostState {
    fn lookup(&mut self, tool: String, args: String) -> Result<String, String> {
        self.answer_lookup(tool, args)
    }
}

impl v0_3::signpost::policy::host::Host for HostState {
    fn lookup(&mut self, tool: String, args: String) -> Result<String, String> {
        self.answer_lookup(tool, args)
    }

    fn has_seen(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<bool>> {
        if ids.len() > MAX_HAS_SEEN {
            wasmtime::bail!("host.has-seen: {} ids, at most {MAX_HAS_SEEN} a call", ids.len());
        }
        if Instant::now() >= self.deadline {
            return Err(wasmtime::Error::new(HostDeadline));
        }
        let Some(history) = &self.history else { return Ok(vec![false; ids.len()]) };
        let seen = &history.seen_ids;
        // A few ids (a call's): a scan each. More: one set, so the answer
        // costs the guest's list and the history once each.
        if ids.len() <= 8 {
            return Ok(ids.iter().map(|id| seen.contains(id)).collect());
        }
        let seen: std::collections::HashSet<&str> = seen.iter().map(String::as_str).collect();
        Ok(ids.iter().map(|id| seen.contains(id.as_str())).collect())
    }

    fn history(&mut self) -> wasmtime::Result<Session> {
        if Instant::now() >= self.deadline {
            return Err(wasmtime::Error::new(HostDeadline));
        }
        Ok(match &self.history {
            Some(history) => Session::clone(history),
            None => Session { call_count: 0, recent: Vec::new(), seen_ids: Vec::new() },
        })
    }
}

impl HostState {
    /// `host.lookup`, in every version that has it.
    fn answer_lookup(&mut self, tool: String, args: String) -> Result<String, String> {
        let Some(lookup) = self.lookup.clone() else {
            return Err("no lookups here: this call serves no tools".into());
        };
        if self.lookups_left == 0 {
            return Err(format!("at most {MAX_LOOKUPS} lookups in one policy function call"));
        }
        self.lookups_left -= 1;
        if args.len() > MAX_LOOKUP_ARGS {
            return Err(format!("args over {} KiB", MAX_LOOKUP_ARGS >> 10));
        }
        if Instant::now() >= self.deadline {
            return Err("the policy call's deadline has passed".into());
        }
        let answer = lookup.lookup(&tool, &args, self.deadline).map_err(|why| text::escape(&why, 500))?;
        if answer.len() > MAX_LOOKUP_RESULT {
            return Err(format!("the result is over {} KiB", MAX_LOOKUP_RESULT >> 10));
        }
        Ok(answer)
    }
}

/// One budget for an instance's whole footprint: every linear memory and
/// every table counts against `cap` together (a guest cannot multiply its
/// room by declaring several memories, or grow the host through tables).
/// Remembers the footprint after instantiation, so a guest whose heap only
/// ever grows (a garbage-collected runtime that collects lazily, a leak) is
/// retired while it still has room, instead of trapping at the cap.
pub(crate) struct Limiter {
    /// Instance, table and memory counts.
    pub(crate) limits: StoreLimits,
    pub(crate) cap: usize,
    /// Bytes of memories and tables now (they never shrink).
    pub(crate) footprint: usize,
    /// `footprint` right after instantiation.
    pub(crate) initial: usize,
}

impl Limiter {
    pub(crate) fn grow(&mut self, bytes: usize) -> bool {
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
    pub(crate) fn nearly_full(&self) -> bool {
        let room = self.cap.saturating_sub(self.initial);
        self.footprint.saturating_sub(self.initial) > room / 4 * 3
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The process's address-space limit in bytes (`RLIMIT_AS`), if one is set.
pub fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::As).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

impl PolicyEngine {
    /// A new engine with epoch interruption and the sandbox's linker. Starts
    /// the epoch ticker thread, which ends when the engine is dropped.
    pub fn new(limits: Limits) -> anyhow::Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).max_wasm_stack(1 << 20);
        if let Some(limit) = address_space_limit() {
            // Under an address-space limit (`ulimit -v`, `prlimit --as`, as
            // sandboxes and agent runners set), the default reservation of
            // 4 GiB plus guards per linear memory does not fit for long: each
            // memory is reserved at its size instead (bounds-checked, and
            // moved when it grows), so what instances reserve is about what
            // they use, which the footprint limit bounds.
            config
                .memory_reservation(0)
                .memory_reservation_for_growth(4 << 20)
                .memory_guard_size(64 << 10)
                .guard_before_linear_memory(false)
                .memory_may_move(true);
            tracing::info!(
                limit_mib = limit >> 20,
                "an address-space limit is set: policy memories are reserved at their size, not 4 GiB each"
            );
        }
        // Profiling a policy: `SIGNPOST_PERFMAP=1` has wasmtime write
        // /tmp/perf-<pid>.map, so `perf report` names the guest's functions
        // (of a component built with its names; BENCHMARKS.md shows how).
        if std::env::var_os("SIGNPOST_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        bound_waits(&mut linker)?;
        crate::in_place::hand_off_waits(&mut linker)?;
        // The `host` interfaces of 0.3.0 and 0.2.0 (0.1.0 imports nothing
        // of the host's).
        v0_3::Hints::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(&mut linker, |s| s)?;
        v0_2::Hints::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(&mut linker, |s| s)?;
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

    pub(crate) fn cache_path(&self, sha256: &str) -> Option<PathBuf> {
        let mut hasher = std::hash::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        Some(self.cache.as_ref()?.join(format!("{sha256}-{:016x}.cwasm", hasher.finish())))
    }

    /// The compiled component: from the cache when a trusted entry exists,
    /// else compiled (and cached). The flag says whether the cache served.
    pub(crate) fn compile(&self, bytes: &[u8], sha256: &str) -> Result<(Component, bool), LoadError> {
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

    /// Compiles (or reads from the cache) and links a policy component for
    /// the newest interface version it exports. `sha256` names it in the
    /// cache.
    pub(crate) fn link(&self, bytes: &[u8], sha256: &str) -> Result<Linked, LoadError> {
        let (component, from_cache) = self.compile(bytes, sha256)?;
        prepare_memory_images(&component)?;
        let in_place = crate::in_place::runs_in_place(&component, &self.engine);
        let pre = self.linker.instantiate_pre(&component).map_err(|e| LoadError::Link(describe_load_error(&e)))?;
        let mut tried = Vec::new();
        for interface in Interface::ALL {
            let linked = match interface {
                Interface::V0_3 => v0_3::HintsPre::new(pre.clone()).map(Pre::V0_3),
                Interface::V0_2 => v0_2::HintsPre::new(pre.clone()).map(Pre::V0_2),
                Interface::V0_1 => v0_1::HintsPre::new(pre.clone()).map(Pre::V0_1),
            };
            match linked {
                Ok(pre) => return Ok(Linked { pre, from_cache, in_place }),
                Err(e) => tried.push(format!("{interface}: {}", describe_load_error(&e))),
            }
        }
        Err(LoadError::World {
            detail: tried.join("; "),
            exports: component
                .component_type()
                .exports(&self.engine)
                .take(20)
                .map(|(name, _)| text::escape(name, 80))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    pub(crate) fn deadline_ticks(&self) -> u64 {
        (self.limits.timeout.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1
    }
}

/// A policy component, compiled and linked.
pub(crate) struct Linked {
    /// Ready to instantiate, for the newest interface it exports.
    pub(crate) pre: Pre<HostState>,
    /// Whether the compiled code came from the cache.
    pub(crate) from_cache: bool,
    /// Whether its calls may run in place on a runtime's worker
    /// ([`crate::in_place::runs_in_place`]).
    pub(crate) in_place: bool,
}

/// Replaces the two host calls that can wait — `poll` and `pollable.block`,
/// through which every sleep, clock wait and stream wait arrives — with ones
/// that give up at the policy call's deadline (the epoch deadline cannot
/// interrupt a guest that is blocked in the host), and, like `pollable.ready`,
/// hand a runtime's worker off before they wait
/// ([`crate::in_place::off_the_runtime`]).
pub(crate) fn bound_waits(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::DynPollable;
    use wasmtime_wasi::p2::bindings::io::poll::{Host, HostPollable};

    fn until<F: std::future::Future>(deadline: Instant, wait: F) -> wasmtime::Result<F::Output> {
        let deadline = tokio::time::Instant::from_std(deadline);
        // (what is ready already is answered in place; only a wait hands off)
        crate::in_place::now_or_handed_off(async move { tokio::time::timeout_at(deadline, wait).await })
            .map_err(|_| wasmtime::Error::new(HostDeadline))
    }

    linker.allow_shadowing(true);
    let mut poll = linker.instance(crate::in_place::WASI_POLL)?;
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
    poll.func_wrap(
        "[method]pollable.ready",
        |mut store: wasmtime::StoreContextMut<'_, HostState>, (pollable,): (Resource<DynPollable>,)| {
            let state = store.data_mut();
            let ready = until(state.deadline, HostPollable::ready(&mut state.table, pollable))??;
            Ok((ready,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
