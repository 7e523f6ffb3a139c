//! A loaded policy: its instances, pooled per session, and the lease through
//! which one call of the pipeline runs the policy's functions on one of them.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, StoreLimitsBuilder, Trap};
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

use crate::bindings::{Instance, Interface, Pre, types};
use crate::engine::Limiter;
use crate::rules::{Rules, ToolSet};
use crate::{
    Advice, BeforeCall, Call, CoercionError, HostDeadline, HostState, IDLE_BUDGET, Identity, LoadError, Lookup,
    MAX_HOST_RESOURCES, MAX_HOSTCALL_BYTES, MAX_IDLE, MAX_LOOKUPS, MAX_USES, Outcome, PolicyEngine, PolicyFault,
    PolicyInfo, Session, SessionKey, Stats, sha256_hex, text,
};

/// How long a call in place must hold a worker before the hand-off that
/// follows is logged as a warning (below it, at debug level).
const WORTH_A_WARNING: std::time::Duration = std::time::Duration::from_millis(50);

/// A compiled, linked policy component, ready to run.
pub struct Policy {
    pub(crate) pre: Pre<HostState>,
    pub(crate) engine: PolicyEngine,
    pub(crate) pool: Mutex<Pool>,
    pub(crate) stats: Stats,
    pub(crate) info: Identity,
    /// Whether its calls run in place on a runtime's worker (until one
    /// runs long).
    pub(crate) in_place: std::sync::atomic::AtomicBool,
}

/// One escaped line describing a wasmtime error: its own message (a trap
/// code, or the host's error) and, for traps, the guest functions on the
/// stack, each name escaped.
pub(crate) fn describe_error(e: &wasmtime::Error) -> String {
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

impl PolicyEngine {
    /// Compiles, links and identifies a policy component. `source` names
    /// where it came from (a path, or "embedded").
    pub fn load(&self, bytes: &[u8], source: &str) -> Result<Policy, LoadError> {
        let started = Instant::now();
        let sha256 = sha256_hex(bytes);
        let crate::engine::Linked { pre, from_cache, in_place } = self.link(bytes, &sha256)?;
        let mut policy = Policy {
            pre,
            in_place: in_place.into(),
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
            from_cache, in_place, ms = started.elapsed().as_millis() as u64, "policy loaded"
        );
        Ok(policy)
    }
}

/// Idle instances, each kept for the one session it served, least recently
/// used first; bounded in number and in total footprint.
#[derive(Default)]
pub(crate) struct Pool {
    pub(crate) idle: std::collections::VecDeque<(SessionKey, Slot)>,
    pub(crate) footprint: usize,
}

impl Pool {
    pub(crate) fn take(&mut self, key: SessionKey) -> Option<Slot> {
        let at = self.idle.iter().rposition(|(k, _)| *k == key)?;
        let (_, slot) = self.idle.remove(at)?;
        self.footprint -= slot.footprint();
        Some(slot)
    }

    pub(crate) fn put(&mut self, key: SessionKey, slot: Slot) {
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

pub(crate) struct Slot {
    pub(crate) store: Store<HostState>,
    pub(crate) instance: Instance,
    pub(crate) uses: u32,
    pub(crate) logged: (usize, usize),
    /// The catalogue this instance was told (its generation), and the rules
    /// it declared for it.
    pub(crate) told: Option<(u64, Arc<Rules>)>,
}

impl Slot {
    pub(crate) fn footprint(&self) -> usize {
        self.store.data().limits.footprint
    }
}

impl Policy {
    /// The policy's identity.
    pub fn identity(&self) -> &Identity {
        &self.info
    }

    /// The limits its calls run under (each function's deadline, its memory).
    pub fn limits(&self) -> crate::Limits {
        self.engine.limits()
    }

    /// The policy's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Whether its calls run in place on a tokio runtime's worker: it
    /// imports nothing that can wait on the runtime but through the
    /// sandbox's own versions of WASI's waits, which hand the worker off
    /// only when called ([`crate::in_place`]), and none of its calls has
    /// run long yet.
    pub fn runs_in_place(&self) -> bool {
        self.in_place.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `work`, which calls this policy (and may do other blocking work
    /// bounded like it): in place when the policy [`runs_in_place`](Policy::runs_in_place),
    /// else off the runtime ([`off_the_runtime`](crate::off_the_runtime)).
    /// Work in place that holds the worker longer than [`LONG_IN_PLACE`](crate::in_place::LONG_IN_PLACE)
    /// (a policy that spins to its deadline, a slow graph query; not the
    /// waits it hands off, such as a lookup's) has every later call of this
    /// policy handed off, and so does one function of the policy that runs
    /// that long (the rest of the same call is handed off too): a worker
    /// held that long holds up the other requests it would serve. At worst,
    /// each worker is held once for one function's deadline.
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        if !self.runs_in_place() {
            return crate::in_place::off_the_runtime(work);
        }
        let (done, took) = crate::in_place::timed(work);
        self.held_for(took, "a tool call");
        done
    }

    /// Hands this policy's calls off from now on if `what` held a worker
    /// longer than [`LONG_IN_PLACE`](crate::in_place::LONG_IN_PLACE).
    fn held_for(&self, took: std::time::Duration, what: &str) {
        if took > crate::in_place::LONG_IN_PLACE && self.in_place.swap(false, std::sync::atomic::Ordering::Relaxed) {
            // Handing off is how a slow policy is served, not a fault: worth
            // an operator's attention only when a call took a real while.
            let ms = took.as_millis() as u64;
            let why = "held a worker of the server's runtime that long: this policy's calls are handed off to other \
                       threads from now on";
            if took >= WORTH_A_WARNING {
                tracing::warn!(policy = %self.info.name, ms, "{what} {why}");
            } else {
                tracing::debug!(policy = %self.info.name, ms, "{what} {why}");
            }
        }
    }

    /// The interface version the component exports (the newest this host
    /// serves, when it exports several).
    pub fn interface(&self) -> Interface {
        self.pre.interface()
    }

    /// Checks out the instance that served `session` before (or a new one)
    /// for the calls of one tool call; it goes back to the pool, for that
    /// session only, when the lease is dropped, unless it faulted.
    pub fn lease(&self, session: SessionKey) -> Lease<'_> {
        let slot = self.pool.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take(session);
        Lease::new(self, slot, Some(session))
    }

    /// A lease on a new instance that is never pooled: for one-off work
    /// (identity, the self-check, benchmarks of a cold call).
    pub fn cold_lease(&self) -> Lease<'_> {
        Lease::new(self, None, None)
    }

    /// Idle instances kept now (one per recently active session at most).
    pub fn idle_instances(&self) -> usize {
        self.pool.lock().unwrap_or_else(std::sync::PoisonError::into_inner).idle.len()
    }

    pub(crate) fn instantiate(&self) -> Result<Slot, PolicyFault> {
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
            lookup: None,
            lookups_left: 0,
            history: None,
        };
        let mut store = Store::new(&self.engine.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_hostcall_fuel(MAX_HOSTCALL_BYTES);
        store.set_epoch_deadline(self.engine.deadline_ticks());
        Stats::add(&self.stats.instances, 1);
        let instance = self.pre.instantiate(&mut store).map_err(|e| PolicyFault::Instantiate(instantiate_error(&e)))?;
        let limiter = &mut store.data_mut().limits;
        limiter.initial = limiter.footprint;
        Ok(Slot { store, instance, uses: 0, logged: (0, 0), told: None })
    }
}

/// What becomes of an instance near its limits after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wear {
    /// Retired: the next call gets a fresh instance.
    Retire,
    /// Kept for one more call (it is retired after that one).
    Keep,
}

/// An instance checked out of a policy's pool.
pub struct Lease<'p> {
    pub(crate) policy: &'p Policy,
    pub(crate) slot: Option<Slot>,
    pub(crate) faults: u32,
    /// The session whose instance this is; `None` for a cold lease.
    pub(crate) session: Option<SessionKey>,
    /// The catalogue its instances are told ([`Lease::tell`]).
    pub(crate) tools: Option<Arc<ToolSet>>,
    /// The rules the instance declared for it.
    pub(crate) rules: Arc<Rules>,
    /// What answers the policy's lookups ([`Lease::set_lookup`]).
    pub(crate) lookup: Option<Arc<dyn Lookup>>,
}

impl<'p> Lease<'p> {
    fn new(policy: &'p Policy, slot: Option<Slot>, session: Option<SessionKey>) -> Self {
        Lease { policy, slot, faults: 0, session, tools: None, rules: Arc::default(), lookup: None }
    }

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

    /// Tells this lease's instances the catalogue they serve: a 0.2.0 or later
    /// instance is told before its next call, unless it was told this very
    /// list before ([`ToolSet`]).
    pub fn tell(&mut self, tools: &Arc<ToolSet>) {
        self.tools = Some(tools.clone());
    }

    /// What answers `host.lookup` in this lease's calls (none: every
    /// lookup is refused).
    pub fn set_lookup(&mut self, lookup: Arc<dyn Lookup>) {
        self.lookup = Some(lookup);
    }

    /// The rules the instance declared for the catalogue it was told
    /// (telling it now if needed): none for a 0.1.0 policy, for a lease
    /// that was told no catalogue, or when `catalogue` faulted (counted as
    /// the lease's fault; the next call gets a new instance).
    pub fn rules(&mut self) -> Arc<Rules> {
        match self.ready() {
            Ok(()) => self.rules.clone(),
            Err(_) => Arc::default(),
        }
    }

    /// An instance in the slot, told the lease's catalogue when it speaks
    /// 0.2.0 or later and was not told this one yet.
    fn ready(&mut self) -> Result<(), PolicyFault> {
        if self.slot.is_none() {
            self.slot = Some(self.policy.instantiate().inspect_err(|_| self.faults += 1)?);
        }
        let Some(tools) = self.tools.clone() else { return Ok(()) };
        let Some(slot) = self.slot.as_ref() else { return Ok(()) };
        if let Some((generation, rules)) = &slot.told
            && *generation == tools.generation()
        {
            self.rules = rules.clone();
            return Ok(());
        }
        if matches!(slot.instance, Instance::V0_1(_)) {
            return Ok(());
        }
        // The instance told serves the call it was told for, however worn:
        // retired now, it would leave the call to a fresh instance that was
        // never told (the WIT promises `catalogue` first). The cap still holds.
        let answer = self.call_with("catalogue", None, Wear::Keep, |instance, store| match instance {
            Instance::V0_3(h) => h.signpost_policy_policy().call_catalogue(store, tools.tools()),
            Instance::V0_2(h) => h.signpost_policy_policy().call_catalogue(store, tools.tools()),
            Instance::V0_1(_) => Ok(Vec::new()),
        })?;
        let rules = Arc::new(Rules::read(&tools, answer));
        for why in rules.skipped() {
            tracing::debug!(policy = %self.policy.info.name, rule = %why, "policy rule left out");
        }
        if let Some(slot) = self.slot.as_mut() {
            slot.told = Some((tools.generation(), rules.clone()));
        }
        self.rules = rules;
        Ok(())
    }

    pub(crate) fn run<R>(
        &mut self,
        what: &'static str,
        history: Option<&Arc<Session>>,
        f: impl FnOnce(&Instance, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PolicyFault> {
        self.ready()?;
        self.call(what, history, f)
    }

    /// One function call on the slot's instance (a new one if there is
    /// none), under the deadline, the host answering for `history`; the
    /// instance goes back into the slot unless it faulted or neared its
    /// limits.
    fn call<R>(
        &mut self,
        what: &'static str,
        history: Option<&Arc<Session>>,
        f: impl FnOnce(&Instance, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PolicyFault> {
        self.call_with(what, history, Wear::Retire, f)
    }

    /// [`Lease::call`], keeping a worn instance when `wear` says so.
    fn call_with<R>(
        &mut self,
        what: &'static str,
        history: Option<&Arc<Session>>,
        wear: Wear,
        f: impl FnOnce(&Instance, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, PolicyFault> {
        let policy = self.policy;
        let mut slot = match self.slot.take() {
            Some(slot) => slot,
            None => policy.instantiate().inspect_err(|_| self.faults += 1)?,
        };
        Stats::add(&policy.stats.calls, 1);
        slot.store.set_epoch_deadline(policy.engine.deadline_ticks());
        let state = slot.store.data_mut();
        state.deadline = Instant::now() + policy.engine.limits.timeout;
        state.lookup = self.lookup.clone();
        state.lookups_left = MAX_LOOKUPS;
        state.history = history.cloned();
        // On a worker, in place ([`Policy::run`]): so while the policy runs
        // so; a function that holds the worker long hands the rest of the
        // call off. Anywhere else (handed off, the blocking pool, a thread
        // of its own), simply.
        let result = if !crate::in_place::in_place_now() {
            f(&slot.instance, &mut slot.store)
        } else if policy.runs_in_place() {
            let (result, took) = crate::in_place::timed(|| f(&slot.instance, &mut slot.store));
            policy.held_for(took, what);
            result
        } else {
            crate::in_place::off_the_runtime(|| f(&slot.instance, &mut slot.store))
        };
        // A pooled instance keeps no graph, backend or history alive.
        let state = slot.store.data_mut();
        state.lookup = None;
        state.history = None;
        slot.uses += 1;
        // What the guest wrote to stderr in this call: a trap's cause (a
        // Rust panic's message, a Python traceback, a JS exception).
        let said = result.is_err().then(|| {
            let state = slot.store.data();
            let bytes = state.stderr.contents();
            String::from_utf8_lossy(&bytes[slot.logged.1.min(bytes.len())..]).into_owned()
        });
        drain_output(&mut slot, &policy.info.name);
        match result {
            Ok(value) => {
                let state = slot.store.data_mut();
                if wear == Wear::Keep {
                    self.slot = Some(slot);
                } else if state.limits.nearly_full() {
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
                        PolicyFault::Trap(with_cause(describe_error(&e), said.as_deref().unwrap_or("")))
                    }
                };
                tracing::warn!(policy = %policy.info.name, function = what, %fault, "policy call failed; instance discarded");
                Err(fault)
            }
        }
    }

    /// `identity()`.
    pub fn identity(&mut self) -> Result<PolicyInfo, PolicyFault> {
        self.call("identity", None, |instance, s| match instance {
            Instance::V0_1(h) => h.signpost_policy_policy().call_identity(s),
            Instance::V0_2(h) => h.signpost_policy_policy().call_identity(s),
            Instance::V0_3(h) => h.signpost_policy_policy().call_identity(s),
        })
    }

    /// `coerce-ids(call, param)`.
    pub fn coerce_ids(&mut self, call: &Call, param: &str) -> Result<Result<Vec<String>, CoercionError>, PolicyFault> {
        self.run("coerce-ids", None, |instance, s| match instance {
            Instance::V0_1(h) => h.signpost_policy_policy().call_coerce_ids(s, call, param),
            Instance::V0_2(h) => h.signpost_policy_policy().call_coerce_ids(s, call, param),
            Instance::V0_3(h) => h.signpost_policy_policy().call_coerce_ids(s, call, param),
        })
    }

    /// `prerequisites(call)`, the host answering for `session`'s history
    /// (passed by value before 0.3.0): a 0.1.0 policy's hints never hold.
    pub fn prerequisites(&mut self, call: &Call, session: &Arc<Session>) -> Result<BeforeCall, PolicyFault> {
        self.run("prerequisites", Some(session), |instance, s| match instance {
            Instance::V0_1(h) => h
                .signpost_policy_policy()
                .call_prerequisites(s, call, session)
                .map(|hints| types::BeforeCall { hints, hold: None }),
            Instance::V0_2(h) => h.signpost_policy_policy().call_prerequisites(s, call, session),
            Instance::V0_3(h) => h.signpost_policy_policy().call_prerequisites(s, call),
        })
    }

    /// `advise(call, outcome)`, the host answering for `session`'s history
    /// (passed by value before 0.3.0).
    pub fn advise(&mut self, call: &Call, outcome: &Outcome, session: &Arc<Session>) -> Result<Advice, PolicyFault> {
        self.run("advise", Some(session), |instance, s| match instance {
            Instance::V0_1(h) => h.signpost_policy_policy().call_advise(s, call, outcome, session),
            Instance::V0_2(h) => h.signpost_policy_policy().call_advise(s, call, outcome, session),
            Instance::V0_3(h) => h.signpost_policy_policy().call_advise(s, call, outcome),
        })
    }

    /// `render(call, advice)`.
    pub fn render(&mut self, call: &Call, advice: &Advice) -> Result<String, PolicyFault> {
        self.run("render", None, |instance, s| match instance {
            Instance::V0_1(h) => h.signpost_policy_policy().call_render(s, call, advice),
            Instance::V0_2(h) => h.signpost_policy_policy().call_render(s, call, advice),
            Instance::V0_3(h) => h.signpost_policy_policy().call_render(s, call, advice),
        })
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
        self.policy.pool.lock().unwrap_or_else(std::sync::PoisonError::into_inner).put(session, slot);
    }
}

/// Most characters of a guest's stderr a fault carries.
const CAUSE_CHARS: usize = 600;

/// A trap's description, with what the guest said on stderr as it
/// trapped (its last [`CAUSE_CHARS`] characters, one line, Rust's
/// backtrace advice left out).
fn with_cause(trap: String, stderr: &str) -> String {
    // Rust's `thread '<unnamed>' (1) panicked at src/lib.rs:9:5:` is the
    // guest's panic, not the host's: `panic at src/lib.rs:9:5:`.
    let said: Vec<String> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .map(|l| match l.split_once(" panicked at ") {
            Some((thread, at)) if thread.starts_with("thread '") => format!("panic at {at}"),
            _ => l.to_owned(),
        })
        .collect();
    if said.is_empty() {
        return trap;
    }
    let said = said.join(" | ");
    let start = said.char_indices().rev().nth(CAUSE_CHARS - 1).map_or(0, |(i, _)| i);
    let cut = if start > 0 { "…" } else { "" };
    format!("{trap}; the policy said: {cut}{}", text::escape(&said[start..], CAUSE_CHARS + 1))
}

/// Forwards what the guest wrote since the last call to the host log.
pub(crate) fn drain_output(slot: &mut Slot, policy: &str) {
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

/// Why an instance could not be made, naming the address-space limit when
/// one is set and memory could not be reserved under it.
fn instantiate_error(e: &wasmtime::Error) -> String {
    let why = describe_error(e);
    match crate::engine::address_space_limit() {
        Some(limit) if why.contains("Cannot allocate memory") || why.contains("out of memory") => format!(
            "{why} (the process's address-space limit, `ulimit -v` or `prlimit --as`, is {} MiB: raise it, or \
             lower --policy-memory-mib)",
            limit >> 20
        ),
        _ => why,
    }
}
