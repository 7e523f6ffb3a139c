//! The live policy and its swaps: which policy serves, the last good one to
//! roll back to, the watch on its fault rate for its whole life (the first
//! [`PROBATION_CALLS`] calls are its probation), and the record of every swap
//! (the `signpost://policy` status resource and the MCP logging
//! notifications are built from it).
//!
//! The rollback rule, one for a policy's whole life: over its last
//! [`FAULT_WINDOW`] tool calls (or all of them, while it has made fewer), if
//! at least [`ROLLBACK_MIN_FAULTS`] faulted and they are more than
//! [`ROLLBACK_SHARE`] of the window, the previous policy comes back. A
//! policy with nothing to roll back to (the one the server started with)
//! keeps serving — its faults cost only hints — and the status marks it
//! `degraded`.
//!
//! What a rollback returns to is the most recent build that served before
//! and never faulted on a live call (kept: the last [`FALLBACKS`]). A build
//! that faulted once has a bug on some path, so it is passed over, and so is
//! one that was rolled back: the rollback never trades one known bug for
//! another. Builds are named by their sha256 (`name version (build
//! 1a2b3c4d5e6f)`): two builds of one version differ there.
//!
//! Publishing is one `ArcSwap::store`: a call that already loaded the old
//! policy finishes on it, new calls see the new one, and no call ever mixes
//! two policies.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::policy::{Policy, Stats};

/// Tool calls a newly published policy is on probation for (shown in the
/// status; the fault watch itself never ends).
pub const PROBATION_CALLS: u64 = 20;
/// Most recent tool calls the fault rate is read over.
pub const FAULT_WINDOW: usize = 50;
/// Faulted calls needed before a rollback is considered.
pub const ROLLBACK_MIN_FAULTS: u64 = 3;
/// Share of faulted calls during probation above which the previous policy
/// comes back.
pub const ROLLBACK_SHARE: f64 = 0.25;
/// Fault-free builds kept to roll back to, most recent first.
pub const FALLBACKS: usize = 3;

/// What became of one swap attempt.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwapResult {
    /// The candidate passed every check and now serves.
    Published,
    /// The candidate failed a check; the previous policy keeps serving.
    Rejected,
    /// The candidate is the one already serving.
    Unchanged,
    /// A published policy faulted too often; the previous one came back.
    RolledBack,
    /// A newer candidate arrived while this one was being checked; the
    /// newer one is checked instead.
    Superseded,
    /// A canary began serving a share of the sessions.
    CanaryStarted,
    /// The canary became the live policy.
    CanaryPromoted,
    /// The canary was dropped (by an operator, or by its fault or
    /// follow-through rule).
    CanaryDropped,
    /// A shadow began computing hints for every call.
    ShadowStarted,
}

/// One swap attempt, as the status resource shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SwapRecord {
    /// What happened.
    pub result: SwapResult,
    /// Where the candidate came from.
    pub source: String,
    /// The candidate's sha256, when it could be read.
    pub sha256: Option<String>,
    /// Human-readable detail (the rejection reason, the rollback cause).
    pub message: String,
    /// Unix time of the attempt, in milliseconds.
    pub at_unix_ms: u64,
    /// From trigger to decision, in milliseconds.
    pub duration_ms: u64,
    /// Whether compiled code came from the cache.
    pub from_cache: bool,
}

impl SwapRecord {
    /// A record stamped now.
    pub fn new(result: SwapResult, source: &str, sha256: Option<String>, message: String) -> Self {
        SwapRecord {
            result,
            source: source.to_owned(),
            sha256,
            message,
            at_unix_ms: unix_ms(SystemTime::now()),
            duration_ms: 0,
            from_cache: false,
        }
    }
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The fault watch on a serving policy (the live one, or a canary).
#[derive(Debug, Default)]
pub(crate) struct Health {
    /// Tool calls since it started serving.
    calls: u64,
    /// Faulted tool calls since it started serving.
    faulted: u64,
    /// The last [`FAULT_WINDOW`] calls: whether each faulted.
    window: std::collections::VecDeque<bool>,
    /// Faulted calls in `window`.
    window_faulted: u64,
    /// Over the threshold with nothing to roll back to.
    degraded: bool,
}

impl Health {
    /// Faulted calls in the window.
    pub(crate) fn window_faulted(&self) -> u64 {
        self.window_faulted
    }

    /// Calls in the window.
    pub(crate) fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Faulted calls in all.
    pub(crate) fn faulted(&self) -> u64 {
        self.faulted
    }

    /// Accounts one call; whether the rollback rule now holds.
    pub(crate) fn record(&mut self, faulted: bool) -> bool {
        self.calls += 1;
        self.faulted += u64::from(faulted);
        self.window.push_back(faulted);
        self.window_faulted += u64::from(faulted);
        if self.window.len() > FAULT_WINDOW && self.window.pop_front() == Some(true) {
            self.window_faulted -= 1;
        }
        self.window_faulted >= ROLLBACK_MIN_FAULTS
            && self.window_faulted as f64 > ROLLBACK_SHARE * self.window.len() as f64
    }
}

#[derive(Default)]
struct SwapState {
    /// Builds that served and never faulted on a live call, the most recent
    /// last: a rollback returns to the last of them.
    fallbacks: Vec<Arc<Policy>>,
    health: Health,
    last: Option<SwapRecord>,
    published: u64,
    rejected: u64,
    rolled_back: u64,
    /// Canary and shadow events: started, promoted, dropped.
    trials: [u64; 4],
}

/// A build as the status documents name it.
pub(crate) fn build_json(policy: &Policy) -> Value {
    let id = policy.identity();
    json!({
        "name": id.name,
        "version": id.version,
        "sha256": id.sha256,
        "build": id.build(),
        "source": id.source,
        "digest": crate::oci::digest_in(&id.source),
    })
}

/// Whether `policy` never faulted on a live call: fit to roll back to.
fn fault_free(policy: &Policy) -> bool {
    policy.stats().faulted_tool_calls.load(Ordering::Relaxed) == 0
}

/// The policy serving now, and everything about how it got there.
pub struct LivePolicy {
    current: ArcSwap<Policy>,
    state: Mutex<SwapState>,
    events: broadcast::Sender<SwapRecord>,
}

impl LivePolicy {
    /// Starts serving `policy`.
    pub fn new(policy: impl Into<Arc<Policy>>) -> Self {
        LivePolicy {
            current: ArcSwap::new(policy.into()),
            state: Mutex::new(SwapState::default()),
            events: broadcast::channel(64).0,
        }
    }

    /// The policy serving now.
    pub fn current(&self) -> Arc<Policy> {
        self.current.load_full()
    }

    /// Swap records as they happen (for logging notifications).
    pub fn subscribe(&self) -> broadcast::Receiver<SwapRecord> {
        self.events.subscribe()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SwapState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes `policy` serve; the one it replaces becomes the rollback target
    /// and `policy` starts its probation. `record` says how it came (a
    /// swap, a promoted canary).
    pub fn publish(&self, policy: Arc<Policy>, record: SwapRecord) -> Arc<Policy> {
        let mut state = self.state();
        let old = self.current.swap(policy.clone());
        let sha256 = &policy.identity().sha256;
        state.fallbacks.retain(|p| &p.identity().sha256 != sha256 && p.identity().sha256 != old.identity().sha256);
        if fault_free(&old) && &old.identity().sha256 != sha256 {
            state.fallbacks.push(old);
        }
        if state.fallbacks.len() > FALLBACKS {
            state.fallbacks.remove(0);
        }
        state.health = Health::default();
        state.published += 1;
        self.record(&mut state, record);
        policy
    }

    /// Records and announces an event that changes no live policy (a canary
    /// started or dropped).
    pub fn note(&self, record: SwapRecord) {
        self.refuse(record);
    }

    /// Notes a swap that did not happen (rejected or unchanged).
    pub fn refuse(&self, record: SwapRecord) {
        let mut state = self.state();
        if record.result == SwapResult::Rejected {
            state.rejected += 1;
        }
        self.record(&mut state, record);
    }

    fn record(&self, state: &mut SwapState, record: SwapRecord) {
        let trial = match record.result {
            SwapResult::CanaryStarted => Some(0),
            SwapResult::CanaryPromoted => Some(1),
            SwapResult::CanaryDropped => Some(2),
            SwapResult::ShadowStarted => Some(3),
            _ => None,
        };
        if let Some(i) = trial {
            state.trials[i] += 1;
        }
        match record.result {
            SwapResult::Rejected | SwapResult::RolledBack | SwapResult::CanaryDropped => {
                tracing::warn!(result = ?record.result, source = %record.source, message = %record.message, "policy swap")
            }
            _ => {
                tracing::info!(result = ?record.result, source = %record.source, message = %record.message, "policy swap")
            }
        }
        let _ = self.events.send(record.clone());
        state.last = Some(record);
    }

    /// Accounts one finished tool call of `policy`; rolls back to the
    /// previous policy when the rollback rule holds (see the module docs).
    pub fn after_call(&self, policy: &Arc<Policy>, faulted: bool) {
        let stats = policy.stats();
        Stats::add(&stats.tool_calls, 1);
        Stats::add(&stats.faulted_tool_calls, u64::from(faulted));
        let mut state = self.state();
        if !Arc::ptr_eq(policy, &self.current.load()) {
            return;
        }
        if !state.health.record(faulted) {
            state.health.degraded = false;
            return;
        }
        let (calls, window, window_faulted) =
            (state.health.calls, state.health.window.len(), state.health.window_faulted);
        // Builds that faulted since they were set aside are passed over too.
        state.fallbacks.retain(|p| fault_free(p));
        let Some(previous) = state.fallbacks.pop() else {
            if !state.health.degraded {
                state.health.degraded = true;
                tracing::warn!(
                    policy = %policy.identity().name, window_faulted, window,
                    "the policy faults often and there is no previous policy to roll back to"
                );
            }
            return;
        };
        let bad = self.current.swap(previous.clone());
        state.health = Health::default();
        state.rolled_back += 1;
        let message = format!(
            "{} faulted on {window_faulted} of its last {window} calls ({calls} calls served); {} is back \
             (the last build that served without a fault). A restart loads {} as it is on disk: \
             this faulted build, unless it was replaced since",
            bad.identity(),
            previous.identity(),
            bad.identity().source,
        );
        let record = SwapRecord::new(
            SwapResult::RolledBack,
            &bad.identity().source,
            Some(bad.identity().sha256.clone()),
            message,
        );
        self.record(&mut state, record);
    }

    /// Swap attempts so far, by result.
    pub fn swap_counts(&self) -> Vec<(&'static str, u64)> {
        let state = self.state();
        vec![
            ("published", state.published),
            ("rejected", state.rejected),
            ("rolled_back", state.rolled_back),
            ("canary_started", state.trials[0]),
            ("canary_promoted", state.trials[1]),
            ("canary_dropped", state.trials[2]),
            ("shadow_started", state.trials[3]),
        ]
    }

    /// The status document served as `signpost://policy`.
    pub fn status(&self) -> Value {
        let current = self.current();
        let state = self.state();
        let id = current.identity();
        let stats = current.stats();
        let n = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        // The build as every status document names it (with an OCI
        // artifact's digest, the same on every replica serving it), and
        // what only the serving one has.
        let mut active = build_json(&current);
        let more = json!({
            "interface": current.interface().name(),
            "loaded_at_unix_ms": unix_ms(id.loaded_at),
            "from_cache": id.from_cache,
            // Whether its calls run on the worker that took them, with no
            // thread hand-off (until one runs long: `Policy::run`).
            "runs_in_place": current.runs_in_place(),
            "on_probation": (!state.fallbacks.is_empty() && state.health.calls < PROBATION_CALLS)
                .then(|| json!({"calls": state.health.calls, "faulted": state.health.faulted, "of": PROBATION_CALLS})),
            "health": {
                "calls": state.health.calls,
                "faulted": state.health.faulted,
                "window_calls": state.health.window.len(),
                "window_faulted": state.health.window_faulted,
                "degraded": state.health.degraded,
                "rollback_rule": format!(
                    "roll back when at least {ROLLBACK_MIN_FAULTS} of the last {FAULT_WINDOW} calls faulted and more than {}%",
                    (ROLLBACK_SHARE * 100.0) as u32
                ),
            },
        });
        if let (Some(active), Value::Object(more)) = (active.as_object_mut(), more) {
            active.extend(more);
        }
        json!({
            "accepts": crate::policy::Interface::ALL.map(|i| i.name()),
            "active": active,
            "counters": {
                "tool_calls": n(&stats.tool_calls),
                "faulted_tool_calls": n(&stats.faulted_tool_calls),
                "policy_calls": n(&stats.calls),
                "traps": n(&stats.traps),
                "timeouts": n(&stats.timeouts),
                "hints_emitted": n(&stats.hints_emitted),
                "hints_dropped": n(&stats.hints_dropped),
                "instances_recycled_for_memory": n(&stats.recycled_for_memory),
                "coercions_refused": n(&stats.coercions_refused),
                "calls_held": n(&stats.calls_held),
                "instances_created": n(&stats.instances),
                "idle_instances": current.idle_instances(),
            },
            // The build a rollback would return to now, and the ones after
            // it (most recent first): each served without a fault.
            "rollback_to": state.fallbacks.last().map(|p| build_json(p)),
            "fallbacks": state.fallbacks.iter().rev().map(|p| build_json(p)).collect::<Vec<_>>(),
            "last_swap": state.last,
            "swaps": {
                "published": state.published, "rejected": state.rejected, "rolled_back": state.rolled_back,
                "canary_started": state.trials[0], "canary_promoted": state.trials[1],
                "canary_dropped": state.trials[2], "shadow_started": state.trials[3],
            },
        })
    }
}
