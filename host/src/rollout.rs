//! Trying a policy on real traffic without risk: the canary and the shadow.
//!
//! **Canary** (`--canary FILE --canary-share S`): a session is served by the
//! canary when a fixed hash of its key falls under the share, so a session
//! stays with one policy for its whole life. The canary passed the same
//! checks as a hot swap. It is dropped, and its sessions go back to the
//! live policy, when
//! - it faults by the live policy's rollback rule (at least
//!   [`crate::live_policy::ROLLBACK_MIN_FAULTS`] of its last
//!   [`crate::live_policy::FAULT_WINDOW`] calls, and more than a quarter), or
//! - its follow-through is clearly below the live policy's: once each arm
//!   served [`CANARY_MIN_CALLS`] calls, the share of calls that took a hint
//!   of the response before them is compared with a one-sided
//!   two-proportion z-test; the canary is dropped when z < −[`CANARY_Z`]
//!   (p < 0.001) *and* it trails by more than [`CANARY_MIN_GAP`].
//!   A policy that offers no hints has a follow-through of zero, so
//!   hint-less policies lose this comparison, as they should.
//!
//! Operators promote it (it becomes the live policy, the old one its
//! rollback target) or drop it without a restart: SIGUSR1 / SIGUSR2, or
//! `signpost canary promote|drop --url` against an HTTP server.
//!
//! **Shadow** (`--shadow FILE`): every live call is queued, after its
//! response is ready, to one worker thread that runs the same call through
//! the same pipeline with the shadow policy (its own instance per session,
//! the history the live policy saw). Its hints are validated and counted
//! (arm `shadow`): how often the agent's actual next call was among them,
//! against the live policy's rate. Agents never see them. The queue is
//! bounded and a job is dropped when it is full or the server is busy, so a
//! slow, looping or trapping shadow costs the live traffic nothing but the
//! CPU its deadline allows.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use arc_swap::ArcSwapOption;
use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::live_policy::{Health, LivePolicy, SwapRecord, SwapResult};
use crate::metrics::{Arm, Metrics, Observation, Offered, Revision};
use crate::pipeline::{self, Asker, Findings};
use crate::policy::{self, Identity, Policy, SessionKey};
use crate::proxy::{Catalogue, Upstream, UpstreamError};
use crate::session::{Memory, SessionContext};
use crate::tools::{CallShape, Tool};
use crate::validate::HintValidator;

/// Calls each arm must have served before follow-through can drop a canary.
pub const CANARY_MIN_CALLS: u64 = 100;
/// The z score below which the canary's follow-through is clearly lower.
pub const CANARY_Z: f64 = 3.09;
/// The least gap in follow-through (absolute) that drops a canary.
pub const CANARY_MIN_GAP: f64 = 0.05;
/// Canary calls between two follow-through comparisons.
const CHECK_EVERY: u64 = 10;
/// Shadow jobs waiting before new ones are dropped.
const SHADOW_QUEUE: usize = 64;

/// A canary policy and what it did so far.
pub struct Canary {
    policy: Arc<Policy>,
    /// Which canary this is: sessions are pinned to one.
    generation: u64,
    /// Of 10,000 sessions, how many it serves.
    share: u32,
    health: Mutex<Health>,
    calls: AtomicU64,
    sessions: AtomicU64,
}

/// The one shadow policy and its worker's queue.
pub struct Shadow {
    policy: Arc<Policy>,
    tx: SyncSender<ShadowCall>,
    computed: Arc<AtomicU64>,
    faulted: Arc<AtomicU64>,
    dropped: AtomicU64,
}

/// What a live call ran on, for the shadow to answer it on the same.
pub enum ShadowOn {
    /// One of Signpost's tools, on the graph the live call ran on.
    Graph {
        /// The tool.
        tool: Tool,
        /// The graph.
        graph: Arc<Graph>,
    },
    /// A proxy's backend: the shadow is given the answer the live call got
    /// and never calls the backend (its lookups are refused).
    Backend {
        /// The tool's name.
        tool: String,
        /// The backend.
        upstream: Arc<Upstream>,
        /// Its tools as the live call saw them.
        catalogue: Arc<Catalogue>,
        /// The backend's answer to the live call.
        answer: Result<CallToolResult, UpstreamError>,
        /// What the host remembered of the session (values shown, holds).
        memory: Option<Memory>,
    },
}

/// One live call for the shadow to answer.
pub struct ShadowCall {
    /// What it ran on.
    pub on: ShadowOn,
    /// The arguments as the agent sent them.
    pub args: Map<String, Value>,
    /// The history the live policy saw.
    pub history: Arc<policy::Session>,
    /// The call as the live host read it (the agent's actual call).
    pub shape: Option<CallShape>,
    /// The session: the shadow keeps an instance per session too.
    pub session: SessionKey,
    /// The call's number in its session.
    pub seq: u64,
    /// What the shadow offered this session last.
    pub offered: Arc<Mutex<Offered>>,
}

/// The canary and the shadow, either or both absent.
#[derive(Default)]
pub struct Trials {
    canary: ArcSwapOption<Canary>,
    shadow: ArcSwapOption<Shadow>,
    live_sessions: AtomicU64,
    /// Serialises promote, drop and the automatic drop.
    decide: Mutex<()>,
}

/// Where a session goes: a fixed hash of its key, in 0..10,000.
fn bucket(key: SessionKey) -> u32 {
    (foldhash::quality::FixedState::with_seed(0x0063_616e_6172_7921).hash_one(key.0) % 10_000) as u32
}

impl Trials {
    /// No canary, no shadow.
    pub fn new() -> Self {
        Trials::default()
    }

    /// Starts a canary serving `share` (0 to 1) of new sessions.
    pub fn start_canary(&self, policy: Arc<Policy>, share: f64, live: &LivePolicy) {
        static GENERATION: AtomicU64 = AtomicU64::new(1);
        let canary = Canary {
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
            share: (share.clamp(0.0, 1.0) * 10_000.0).round() as u32,
            policy,
            health: Mutex::default(),
            calls: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
        };
        let id = canary.policy.identity();
        let message = format!("{id} serves {:.1}% of new sessions as the canary", share * 100.0);
        live.note(SwapRecord::new(SwapResult::CanaryStarted, &id.source, Some(id.sha256.clone()), message));
        self.canary.store(Some(Arc::new(canary)));
    }

    /// Starts a shadow worker for `policy`, counting into `metrics`; the
    /// shadow it replaces, if any, stops once its queue is drained.
    pub fn start_shadow(&self, policy: Arc<Policy>, metrics: Arc<Metrics>, live: &LivePolicy) -> anyhow::Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel(SHADOW_QUEUE);
        let (computed, faulted) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let worker = Worker {
            policy: policy.clone(),
            validator: HintValidator::new()?,
            metrics,
            computed: computed.clone(),
            faulted: faulted.clone(),
        };
        std::thread::Builder::new().name("signpost-shadow".into()).spawn(move || worker.run(rx))?;
        let id = policy.identity();
        let message = format!("{id} computes hints for every call as the shadow");
        live.note(SwapRecord::new(SwapResult::ShadowStarted, &id.source, Some(id.sha256.clone()), message));
        let shadow = Shadow { policy: policy.clone(), tx, computed, faulted, dropped: AtomicU64::new(0) };
        self.shadow.store(Some(Arc::new(shadow)));
        Ok(())
    }

    /// The canary, when `session` is one of its sessions. A session is
    /// pinned at its first call: to the canary serving then, if its bucket
    /// is under the share, else to the live policy. It stays there: a
    /// canary started later serves only sessions that start later, and
    /// once its canary is promoted or dropped a session is served live.
    pub fn canary_for(&self, session: &SessionContext) -> Option<Arc<Policy>> {
        let canary = self.canary.load();
        let pinned = *session.canary_generation().get_or_init(|| match &*canary {
            Some(c) if bucket(session.key()) < c.share => {
                c.sessions.fetch_add(1, Ordering::Relaxed);
                Some(c.generation)
            }
            _ => {
                self.live_sessions.fetch_add(1, Ordering::Relaxed);
                None
            }
        });
        canary.as_ref().filter(|c| pinned == Some(c.generation)).map(|c| c.policy.clone())
    }

    /// Accounts one canary call; drops the canary when it faults too often
    /// or its follow-through is clearly below the live policy's.
    pub fn after_canary_call(&self, policy: &Arc<Policy>, faulted: bool, live: &LivePolicy, metrics: Option<&Metrics>) {
        let Some(canary) = self.canary.load_full().filter(|c| Arc::ptr_eq(&c.policy, policy)) else { return };
        let calls = canary.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let faults_over = canary.health.lock().unwrap_or_else(PoisonError::into_inner).record(faulted);
        if faults_over {
            let h = canary.health.lock().unwrap_or_else(PoisonError::into_inner);
            let why =
                format!("faulted on {} of its last {} calls (the rollback rule)", h.window_faulted(), h.window_len());
            drop(h);
            self.drop_canary_because(&canary, live, &why);
            return;
        }
        if calls % CHECK_EVERY != 0 {
            return;
        }
        let Some(metrics) = metrics else { return };
        let c = metrics.follow_of(Arm::Canary, &Revision::of(canary.policy.identity()));
        let l = metrics.follow_of(Arm::Live, &Revision::of(live.current().identity()));
        if let Some(verdict) = follow_verdict(c, l) {
            self.drop_canary_because(&canary, live, &verdict);
        }
    }

    fn drop_canary_because(&self, canary: &Arc<Canary>, live: &LivePolicy, why: &str) {
        let _one = self.decide.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.canary.load();
        if !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, canary)) {
            return; // already promoted or dropped
        }
        self.canary.store(None);
        let id = canary.policy.identity();
        let message = format!("canary {id} dropped: {why}; its sessions go back to the live policy");
        live.note(SwapRecord::new(SwapResult::CanaryDropped, &id.source, Some(id.sha256.clone()), message));
    }

    /// Drops the canary (an operator's decision). `false` when there is none.
    pub fn drop_canary(&self, live: &LivePolicy) -> bool {
        match self.canary.load_full() {
            Some(c) => {
                self.drop_canary_because(&c, live, "an operator dropped it");
                true
            }
            None => false,
        }
    }

    /// Makes the canary the live policy (the live one becomes its rollback
    /// target). `false` when there is none.
    pub fn promote_canary(&self, live: &LivePolicy) -> bool {
        let _one = self.decide.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(canary) = self.canary.swap(None) else { return false };
        let id = canary.policy.identity();
        let message = format!("canary {id} promoted: it is the live policy");
        let record = SwapRecord::new(SwapResult::CanaryPromoted, &id.source, Some(id.sha256.clone()), message);
        live.publish(canary.policy.clone(), record);
        true
    }

    /// Queues the shadow's answer to a live call (dropped, counted, when
    /// the queue is full or `busy`; the session's next shadow answer is then
    /// not judged, as its `seq` does not follow).
    pub fn shadow(&self, call: ShadowCall, busy: bool) {
        let shadow = self.shadow.load();
        let Some(shadow) = shadow.as_ref() else { return };
        if busy || shadow.tx.try_send(call).is_err() {
            shadow.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether a shadow runs.
    pub fn has_shadow(&self) -> bool {
        self.shadow.load().is_some()
    }

    /// The sha256 of the canary, if one serves.
    pub fn canary_sha256(&self) -> Option<String> {
        self.canary_identity().map(|id| id.sha256)
    }

    /// Who the canary is, if one serves.
    pub fn canary_identity(&self) -> Option<Identity> {
        self.canary.load().as_ref().map(|c| c.policy.identity().clone())
    }

    /// Who the shadow is, if one runs.
    pub fn shadow_identity(&self) -> Option<Identity> {
        self.shadow.load().as_ref().map(|s| s.policy.identity().clone())
    }

    /// The canary and shadow sections of the status resource.
    pub fn status(&self, metrics: Option<&Metrics>, live: &LivePolicy) -> Value {
        let canary = self.canary.load_full().map(|c| {
            let h = c.health.lock().unwrap_or_else(PoisonError::into_inner);
            let rate = |arm: Arm, p: &Policy| {
                metrics.map(|m| m.follow_of(arm, &Revision::of(p.identity()))).map(|(f, n)| {
                    let rate = (n > 0).then(|| (f as f64 / n as f64 * 10_000.0).round() / 10_000.0);
                    json!({"followed": f, "calls": n, "rate": rate})
                })
            };
            json!({
                "policy": crate::live_policy::build_json(&c.policy),
                "share": f64::from(c.share) / 10_000.0,
                "sessions": c.sessions.load(Ordering::Relaxed),
                "calls": c.calls.load(Ordering::Relaxed),
                "faulted": h.faulted(),
                "follow_through": {"canary": rate(Arm::Canary, &c.policy), "live": rate(Arm::Live, &live.current())},
                "drop_rule": format!(
                    "dropped when it faults by the rollback rule, or when, after {CANARY_MIN_CALLS} calls on each arm, \
                     its share of calls that took a hint is below the live policy's with z < -{CANARY_Z} and by more \
                     than {} points", CANARY_MIN_GAP * 100.0
                ),
            })
        });
        let shadow = self.shadow.load_full().map(|s| {
            json!({
                "policy": crate::live_policy::build_json(&s.policy),
                "computed": s.computed.load(Ordering::Relaxed),
                "faulted": s.faulted.load(Ordering::Relaxed),
                "dropped": s.dropped.load(Ordering::Relaxed),
            })
        });
        json!({"canary": canary, "shadow": shadow, "live_sessions": self.live_sessions.load(Ordering::Relaxed)})
    }

    /// The canary's and shadow's policies, for metrics.
    pub fn policies(&self) -> Vec<(Arm, Arc<Policy>)> {
        let mut out: Vec<(Arm, Arc<Policy>)> =
            self.canary.load_full().map(|c| (Arm::Canary, c.policy.clone())).into_iter().collect();
        out.extend(self.shadow.load().as_ref().map(|s| (Arm::Shadow, s.policy.clone())));
        out
    }
}

/// The follow-through rule: `(took a hint, calls)` of the canary and the
/// live policy; why to drop the canary, if it should go.
pub fn follow_verdict(canary: (u64, u64), live: (u64, u64)) -> Option<String> {
    let ((fc, nc), (fl, nl)) = (canary, live);
    if nc < CANARY_MIN_CALLS || nl < CANARY_MIN_CALLS {
        return None;
    }
    let (pc, pl) = (fc as f64 / nc as f64, fl as f64 / nl as f64);
    let pooled = (fc + fl) as f64 / (nc + nl) as f64;
    let se = (pooled * (1.0 - pooled) * (1.0 / nc as f64 + 1.0 / nl as f64)).sqrt();
    if se == 0.0 {
        return None; // both always or never: no difference to test
    }
    let z = (pc - pl) / se;
    (z < -CANARY_Z && pl - pc > CANARY_MIN_GAP).then(|| {
        format!(
            "its calls took a hint {:.1}% of the time over {nc} calls, the live policy's {:.1}% over {nl} (z = {z:.2})",
            pc * 100.0,
            pl * 100.0
        )
    })
}

struct Worker {
    policy: Arc<Policy>,
    validator: HintValidator,
    metrics: Arc<Metrics>,
    computed: Arc<AtomicU64>,
    faulted: Arc<AtomicU64>,
}

impl Worker {
    fn run(self, rx: Receiver<ShadowCall>) {
        let revision = Revision::of(self.policy.identity());
        while let Ok(job) = rx.recv() {
            let started = Instant::now();
            let mut lease = self.policy.lease(job.session);
            let mut findings = Findings::logging();
            let (response, tool, graph) = match job.on {
                ShadowOn::Graph { tool, graph } => {
                    let asker = Asker::session(&job.history);
                    let response =
                        pipeline::run(&graph, &self.validator, &mut lease, tool, &job.args, asker, &mut findings);
                    (response, tool.name().to_owned(), Some(graph))
                }
                ShadowOn::Backend { tool, upstream, catalogue, answer, memory } => {
                    let asker = Asker { session: &job.history, trail: None, memory: memory.as_ref() };
                    let answered = async |_| answer.map(CallToolResponse::Complete);
                    let forward = pipeline::forward(
                        &upstream,
                        &catalogue,
                        &mut lease,
                        &tool,
                        &job.args,
                        asker,
                        answered,
                        &mut findings,
                    );
                    // The backend's answer is given, so the pipeline never
                    // waits: it runs to its end on this thread, outside any
                    // runtime (where WASI's waits have their own, and a
                    // lookup, which would call the backend, is refused).
                    use futures_util::FutureExt as _;
                    let Some(response) = forward.now_or_never() else {
                        tracing::warn!(tool = %crate::clip(&tool), "the shadow's pipeline waited, with the answer given");
                        continue;
                    };
                    (response, tool, None)
                }
            };
            let faulted = lease.faults() > 0;
            drop(lease);
            // The shape is the call as the live host read it: the agent's actual call.
            let observation = Observation::of(
                job.seq,
                &tool,
                job.shape.as_ref(),
                &response,
                pipeline::offered(&response, graph.as_deref()),
                faulted,
                started.elapsed(),
            );
            self.metrics.observe(Arm::Shadow, &revision, &job.offered, observation);
            // Counted once observed: a status that shows the job shows its metrics too.
            self.faulted.fetch_add(u64::from(faulted), Ordering::Relaxed);
            self.computed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_follow_rule_needs_calls_and_a_clear_gap() {
        assert_eq!(follow_verdict((0, 50), (50, 50)), None, "too few calls");
        assert!(follow_verdict((0, 100), (80, 100)).is_some());
        assert_eq!(follow_verdict((48, 100), (52, 100)), None, "within noise");
        assert_eq!(follow_verdict((100, 100), (100, 100)), None);
        // Significant but tiny: 1,000,000 calls, 0.4 points apart.
        assert_eq!(follow_verdict((500_000, 1_000_000), (504_000, 1_000_000)), None);
        assert!(follow_verdict((300, 1000), (600, 1000)).is_some_and(|w| w.contains("30.0%") && w.contains("60.0%")));
    }

    #[test]
    fn buckets_spread_evenly() {
        let under = (0..20_000u64).filter(|k| bucket(SessionKey(*k)) < 1_000).count();
        assert!((1_700..2_300).contains(&under), "{under} of 20,000 under a 10% share");
    }
}
