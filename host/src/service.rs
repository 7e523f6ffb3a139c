//! The service: the graph, the tools and the live policy, shared by every
//! session, and what it keeps about the calls it serves (in-flight
//! accounting, evidence, canary and shadow trials).
//!
//! [`Signpost::call`] picks the policy that serves a call (the live one, or a
//! canary), runs it through [`pipeline::run`], and then does the
//! bookkeeping: the live policy's fault watch, the session's history, the
//! metrics and decision log, and the shadow's copy of the call. The pipeline
//! knows nothing of this; the trials are built on the pipeline, not it on them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::model::CallToolResponse;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::graph::Graph;
use crate::live_graph::LiveGraph;
use crate::live_policy::LivePolicy;
use crate::metrics::{Arm, Metrics, Observation, Revision};
use crate::pipeline::{self, Asker, Findings};
use crate::policy::{Interface, Policy};
use crate::proxy::{Relay, Upstream, UpstreamError};
use crate::record::{self, Decision, RecordedHint, RecordedPolicy, Recorder};
use crate::response::Response;
use crate::rollout::{ShadowCall, ShadowOn, Trials};
use crate::session::SessionContext;
use crate::tools::{self, CallShape, Tool};
use crate::trails::carry;
use crate::validate::HintValidator;

/// The graph, the tools and the live policy, shared by every session.
pub struct Signpost {
    graphs: Arc<LiveGraph>,
    tools: Vec<rmcp::model::Tool>,
    validator: HintValidator,
    live: LivePolicy,
    in_flight: AtomicUsize,
    evidence: Evidence,
    trials: Trials,
    trails: crate::trails::Trails,
    /// The backend of `signpost proxy`: its tools are served instead of
    /// the graph's ([`Signpost::forward`]).
    upstream: Option<Arc<Upstream>>,
}

/// What the host keeps about how agents use the hints: follow-through
/// metrics (on unless turned off) and the decision log (when recording).
#[derive(Debug)]
pub struct Evidence {
    /// Counted calls, when on.
    pub metrics: Option<Arc<Metrics>>,
    /// The decision log, when recording.
    pub recorder: Option<Recorder>,
}

impl Default for Evidence {
    fn default() -> Self {
        Evidence { metrics: Some(Arc::default()), recorder: None }
    }
}

/// Counts a call as in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Signpost {
    /// Serves `graph` with `policy`.
    pub fn new(graph: Graph, policy: impl Into<Arc<Policy>>) -> anyhow::Result<Self> {
        Self::with_graphs(LiveGraph::new(graph, Vec::new(), std::time::Duration::ZERO), policy)
    }

    /// Serves a live graph (reloaded when its files change) with `policy`.
    pub fn with_graphs(graphs: LiveGraph, policy: impl Into<Arc<Policy>>) -> anyhow::Result<Self> {
        Ok(Signpost {
            graphs: Arc::new(graphs),
            tools: tools::definitions().into_iter().map(carry::with_trail).collect(),
            validator: HintValidator::new()?,
            live: LivePolicy::new(policy),
            in_flight: AtomicUsize::new(0),
            evidence: Evidence::default(),
            trials: Trials::new(),
            trails: crate::trails::Trails::default(),
            upstream: None,
        })
    }

    /// Serves `upstream`'s tools instead of the graph's: `signpost proxy`.
    pub fn with_upstream(mut self, upstream: Arc<Upstream>) -> Self {
        self.upstream = Some(upstream);
        self
    }

    /// The backend of a proxy.
    pub fn upstream(&self) -> Option<&Arc<Upstream>> {
        self.upstream.as_ref()
    }

    /// Tries `canary` on `share` of the sessions (see [`crate::rollout`]);
    /// its follow-through rule needs metrics, which it turns on.
    pub fn with_canary(mut self, canary: Arc<Policy>, share: f64) -> Self {
        self.evidence.metrics.get_or_insert_with(Arc::default);
        self.trials.start_canary(canary, share, &self.live);
        self
    }

    /// Computes `shadow`'s hints for every call, never shown (see
    /// [`crate::rollout`]); counting needs metrics, which it turns on.
    pub fn with_shadow(mut self, shadow: Arc<Policy>) -> anyhow::Result<Self> {
        self.evidence.metrics.get_or_insert_with(Arc::default);
        self.start_shadow(shadow)?;
        Ok(self)
    }

    /// Replaces the shadow (or starts one) while serving.
    pub fn start_shadow(&self, shadow: Arc<Policy>) -> anyhow::Result<()> {
        let metrics = self.evidence.metrics.clone().ok_or_else(|| anyhow::anyhow!("a shadow needs metrics on"))?;
        self.trials.start_shadow(shadow, metrics, &self.live)
    }

    /// Keeps trails as `trails` says (lifetime, bound) instead of the default.
    pub fn with_trails(mut self, trails: crate::trails::Trails) -> Self {
        self.trails = trails;
        self
    }

    /// The trails: session context as state handles ([`crate::trails`]).
    pub fn trails(&self) -> &crate::trails::Trails {
        &self.trails
    }

    /// The canary and the shadow.
    pub fn trials(&self) -> &Trials {
        &self.trials
    }

    /// Keeps `evidence` (metrics on or off, a decision log) instead of the
    /// default (metrics on, no log). Recording counts too: a decision
    /// record says how its call took the previous hints.
    pub fn with_evidence(mut self, mut evidence: Evidence) -> Self {
        let trials = self.trials.has_shadow() || self.trials.canary_sha256().is_some();
        if (evidence.recorder.is_some() || trials) && evidence.metrics.is_none() {
            evidence.metrics = Some(Arc::default());
        }
        self.evidence = evidence;
        self
    }

    /// The follow-through metrics and the decision log.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// The status document served as `signpost://policy`: the live
    /// policy's, with follow-through metrics and the recorder's state.
    pub fn status(&self) -> Value {
        let mut status = self.live.status();
        status["follow_through"] = match &self.evidence.metrics {
            Some(m) => m.summary(),
            None => json!("off (--no-metrics)"),
        };
        status["recording"] = self.evidence.recorder.as_ref().map_or(Value::Null, Recorder::status);
        let trials = self.trials.status(self.evidence.metrics.as_deref(), &self.live);
        status["canary"] = trials["canary"].clone();
        status["shadow"] = trials["shadow"].clone();
        status["live_sessions"] = trials["live_sessions"].clone();
        status["trails"] = self.trails.status();
        status
    }

    /// The Prometheus text exposition (`GET /metrics`), or `None` when
    /// metrics are off.
    pub fn prometheus(&self) -> Option<String> {
        let metrics = self.evidence.metrics.as_ref()?;
        let n = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        let mut policy_counters = Vec::new();
        let mut serving = Vec::new();
        let mut policies = vec![(Arm::Live, self.live.current())];
        policies.extend(self.trials.policies());
        for (arm, policy) in policies {
            let stats = policy.stats();
            let revision = Revision::of(policy.identity());
            serving.push((arm, revision.clone(), policy.identity().source.clone()));
            policy_counters.extend(
                [
                    ("calls", n(&stats.calls)),
                    ("traps", n(&stats.traps)),
                    ("timeouts", n(&stats.timeouts)),
                    ("hints_dropped", n(&stats.hints_dropped)),
                    ("coercions_refused", n(&stats.coercions_refused)),
                    ("instances_recycled_for_memory", n(&stats.recycled_for_memory)),
                ]
                .into_iter()
                .map(|(name, v)| (arm, revision.clone(), name, v)),
            );
        }
        policy_counters.sort_by_key(|p| p.2);
        Some(metrics.prometheus(crate::metrics::Extra {
            policy_counters,
            swaps: self.live.swap_counts(),
            in_flight: self.in_flight() as u64,
            serving,
        }))
    }

    /// The graph serving now.
    pub fn graph(&self) -> Arc<Graph> {
        self.graphs.current()
    }

    /// The live graph: reloads and status.
    pub fn graphs(&self) -> &Arc<LiveGraph> {
        &self.graphs
    }

    /// Lists the tools without their output schemas: the same
    /// `structuredContent`, a `tools/list` a third the size (an agent reads
    /// the whole list before its first question). A client that validates
    /// results against a declared schema wants them: `--output-schemas`.
    pub fn without_output_schemas(mut self) -> Self {
        for tool in &mut self.tools {
            tool.output_schema = None;
        }
        self
    }

    /// The tool definitions.
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        &self.tools
    }

    /// The policy serving now.
    pub fn policy(&self) -> Arc<Policy> {
        self.live.current()
    }

    /// The live policy: swaps, rollback, status.
    pub fn live(&self) -> &LivePolicy {
        &self.live
    }

    /// Tool calls running now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Says so in a `describe` answer whose symbol's file changed since it
    /// was indexed: `"stale": true`, and a line of the host's own after
    /// the policy's text.
    fn mark_stale(&self, response: &mut Response) {
        let file = response.structured.pointer("/record/file").and_then(Value::as_str).unwrap_or_default();
        if file.is_empty() || !self.graphs.changed_since_indexed(file) {
            return;
        }
        let note = format!(
            "note: {file} changed since it was indexed: this symbol's line and edges may be out of date until it is indexed again"
        );
        response.structured["stale"] = Value::Bool(true);
        append_note(response, &note);
    }

    /// Says so in a `describe` or callers' `neighbors` answer when call
    /// sites named like the symbol were not bound to one definition: a
    /// line of the host's own, so that no policy can let "no callers" stand
    /// silently where the index could not tell.
    fn mark_unbound(response: &mut Response) {
        let n = response.structured.get("unbound_calls").and_then(Value::as_u64).unwrap_or(0);
        if n == 0 {
            return;
        }
        let name = response.structured.pointer("/record/name").and_then(Value::as_str);
        let what = name.map_or_else(|| "named like these symbols".to_owned(), |n| format!("named `{n}`"));
        let note = format!(
            "note: {n} call site(s) {what} were not bound to one definition (a receiver whose type is not known, or \
             namesakes the index could not tell apart): the callers may be more than the edges show"
        );
        append_note(response, &note);
    }

    /// Says so in a `describe` answer when the symbol's file is generated
    /// code: an agent about to edit it is told where the change belongs.
    fn mark_generated(response: &mut Response) {
        if response.structured.get("generated").and_then(Value::as_bool) != Some(true) {
            return;
        }
        let file = response.structured.pointer("/record/file").and_then(Value::as_str).unwrap_or("its file");
        let note = format!(
            "note: {file} is generated code: a change to it belongs in what it is generated from (its generator \
             overwrites edits)"
        );
        append_note(response, &note);
    }

    /// Says so in a `describe` answer when the symbol's file (a package's
    /// files) could be read only in part: a line of the host's own, as for
    /// unbound call sites.
    fn mark_read_in_part(response: &mut Response) {
        let Some(files) = response.structured.get("read_in_part").and_then(Value::as_array) else { return };
        let places: Vec<String> = files
            .iter()
            .filter_map(|f| Some(format!("{} from line {}", f.get("file")?.as_str()?, f.get("from_line")?.as_u64()?)))
            .collect();
        if places.is_empty() {
            return;
        }
        let note = format!(
            "note: the indexer read {} only in part (syntax its grammar does not know): what is declared after \
             that line may be missing from the graph",
            places.join(", ")
        );
        append_note(response, &note);
    }

    /// Says so in every answer while the project's first index is still
    /// being built: a line of the host's own, so that an answer from what
    /// is ready (nothing found, no callers yet) is never taken as final.
    fn mark_building(&self, response: &mut Response) {
        if let Some(building) = self.graphs.building() {
            append_note(response, &format!("note: {building}"));
        }
    }

    /// The hint validator (also used by the self-check).
    pub fn validator(&self) -> &HintValidator {
        &self.validator
    }

    /// Runs one tool call for a session. Blocking (policy calls are
    /// synchronous and bounded by the policy deadline).
    pub fn call(&self, tool: Tool, args: Map<String, Value>, session: &SessionContext) -> Response {
        self.call_noting(tool, args, session, &mut Findings::logging())
    }

    /// [`Signpost::call`], keeping what the host had to correct in the
    /// policy's answers ([`Findings`]): `signpost policy test` fails a
    /// case on them.
    pub fn call_checked(
        &self,
        tool: Tool,
        args: Map<String, Value>,
        session: &SessionContext,
    ) -> (Response, Vec<String>) {
        let mut findings = Findings::collecting();
        let response = self.call_noting(tool, args, session, &mut findings);
        (response, findings.into_notes())
    }

    fn call_noting(
        &self,
        tool: Tool,
        args: Map<String, Value>,
        session: &SessionContext,
        findings: &mut Findings,
    ) -> Response {
        let started = Instant::now();
        let _in_flight = InFlight::new(&self.in_flight);
        let seq = session.seq();
        let (arm, policy) = self.serving(session);
        // In place on a runtime's worker if the policy can be, else handed off.
        policy.run(|| self.call_on(tool, args, session, (arm, &policy), (started, seq), findings))
    }

    /// [`Signpost::call`], once the policy serving it is chosen (`served`),
    /// where that policy runs.
    fn call_on(
        &self,
        tool: Tool,
        args: Map<String, Value>,
        session: &SessionContext,
        (arm, policy): (Arm, &Arc<Policy>),
        (started, seq): (Instant, u64),
        findings: &mut Findings,
    ) -> Response {
        let mut lease = policy.lease(session.key());
        let snapshot = session.snapshot();
        // The call finishes on the graph it started with, whatever swaps.
        let graph = self.graphs.current();
        let asker = Asker { session: &snapshot, trail: session.handle(), memory: None };
        let mut response = pipeline::run(&graph, &self.validator, &mut lease, tool, &args, asker, findings);
        if tool == Tool::Describe && !response.is_error {
            self.mark_stale(&mut response);
        }
        if matches!(tool, Tool::Describe | Tool::Neighbors) && !response.is_error {
            Signpost::mark_unbound(&mut response);
        }
        if tool == Tool::Describe && !response.is_error {
            Signpost::mark_read_in_part(&mut response);
            Signpost::mark_generated(&mut response);
        }
        self.mark_building(&mut response);
        let faulted = lease.faults() > 0;
        drop(lease);
        // Kept for the shadow; else let go, so that recording the call
        // changes the history in place rather than copying it.
        let seen_before = self.trials.has_shadow().then_some(snapshot);
        let served = Served { arm, policy, graph: graph.name(), faulted, seq, latency: started.elapsed() };
        self.account(tool.name(), &args, session, &response, || pipeline::offered(&response, Some(&graph)), served);
        if let Some(history) = seen_before {
            self.shadow(ShadowOn::Graph { tool, graph }, args, history, &response, session, seq);
        }
        response
    }

    /// Queues the shadow's answer to a live call that ran `on` something
    /// for `session` (call number `seq`, its history `snapshot` before it).
    fn shadow(
        &self,
        on: ShadowOn,
        args: Map<String, Value>,
        snapshot: Arc<crate::policy::Session>,
        response: &Response,
        session: &SessionContext,
        seq: u64,
    ) {
        // Busy: more calls in flight than cores; the shadow waits for quiet.
        let busy = self.in_flight() > std::thread::available_parallelism().map_or(2, |n| n.get());
        let call = ShadowCall {
            on,
            args,
            history: snapshot,
            shape: response.shape.clone(),
            session: session.key(),
            seq,
            offered: session.shadow_offered().clone(),
        };
        self.trials.shadow(call, busy);
    }

    /// Runs one call of a proxy ([`crate::proxy`]) for a session: sent to
    /// the backend through [`pipeline::forward`], with the same choice of
    /// policy and the same bookkeeping as [`Signpost::call`]. `request` is
    /// the call as the agent sent it, its trail taken out; its progress goes
    /// to `relay`, and the call to the backend is cancelled when `cancelled` is.
    pub async fn forward(
        &self,
        upstream: &Arc<Upstream>,
        request: rmcp::model::CallToolRequestParams,
        session: &SessionContext,
        relay: Option<Relay>,
        cancelled: &CancellationToken,
    ) -> Response {
        self.forward_noting(upstream, request, session, (relay, cancelled), &mut Findings::logging()).await
    }

    /// [`Signpost::forward`] with no progress relayed, keeping what the host
    /// had to correct in the policy's answers, as [`Signpost::call_checked`].
    pub async fn forward_checked(
        &self,
        upstream: &Arc<Upstream>,
        request: rmcp::model::CallToolRequestParams,
        session: &SessionContext,
    ) -> (Response, Vec<String>) {
        let mut findings = Findings::collecting();
        let never = CancellationToken::new();
        let response = self.forward_noting(upstream, request, session, (None, &never), &mut findings).await;
        (response, findings.into_notes())
    }

    async fn forward_noting(
        &self,
        upstream: &Arc<Upstream>,
        request: rmcp::model::CallToolRequestParams,
        session: &SessionContext,
        (relay, cancelled): (Option<Relay>, &CancellationToken),
        findings: &mut Findings,
    ) -> Response {
        let started = Instant::now();
        let _in_flight = InFlight::new(&self.in_flight);
        let seq = session.seq();
        let (arm, policy) = self.serving(session);
        let mut lease = policy.lease(session.key());
        let snapshot = session.snapshot();
        // Only a 0.2.0 or later policy declares references or holds calls.
        let memory = (policy.interface() >= Interface::V0_2).then(|| session.memory());
        let catalogue = upstream.catalogue();
        let asker = Asker { session: &snapshot, trail: session.handle(), memory: memory.as_ref() };
        let tool = request.name.to_string();
        let args = request.arguments.clone().unwrap_or_default();
        // A shadow is given the backend's answer to the live call, and what
        // the session remembered before it.
        let shadow = self.trials.has_shadow();
        let shadow_memory = shadow.then(|| memory.clone().unwrap_or_else(|| session.memory()));
        let mut answered = None;
        // The arguments as the policy coerced them, if it did.
        let send = async |coerced: Option<Map<String, Value>>| {
            let mut request = request;
            if coerced.is_some() {
                request.arguments = coerced;
            }
            let answer = tokio::select! {
                answer = upstream.call(request, relay) => answer,
                () = cancelled.cancelled() => Err(UpstreamError::Cancelled),
            };
            if shadow {
                answered = Some(answer.clone());
            }
            answer
        };
        let response = pipeline::forward(upstream, &catalogue, &mut lease, &tool, &args, asker, send, findings).await;
        let faulted = lease.faults() > 0;
        drop((lease, memory));
        let seen_before = shadow.then_some(snapshot);
        let served = Served { arm, policy: &policy, graph: "", faulted, seq, latency: started.elapsed() };
        self.account(&tool, &args, session, &response, || pipeline::offered(&response, None), served);
        // A held call has no answer; an input request, none yet.
        let answer = match answered {
            Some(Ok(CallToolResponse::Complete(result))) => Some(Ok(result)),
            Some(Err(e)) => Some(Err(e)),
            _ => None,
        };
        if let (Some(answer), Some(history)) = (answer, seen_before) {
            let on = ShadowOn::Backend { tool, upstream: upstream.clone(), catalogue, answer, memory: shadow_memory };
            self.shadow(on, args, history, &response, session, seq);
        }
        response
    }

    /// The policy that serves a call of `session`: its canary, or the live one.
    fn serving(&self, session: &SessionContext) -> (Arm, Arc<Policy>) {
        match self.trials.canary_for(session) {
            Some(canary) => (Arm::Canary, canary),
            None => (Arm::Live, self.live.current()),
        }
    }

    /// After a call: the serving policy's fault watch, the session's
    /// history, and (with metrics on) the call counted, with the shapes of
    /// the calls its hints `offered`, and its decision record.
    fn account(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        session: &SessionContext,
        response: &Response,
        offered: impl FnOnce() -> Vec<CallShape>,
        served: Served<'_>,
    ) {
        match served.arm {
            Arm::Canary => self.trials.after_canary_call(
                served.policy,
                served.faulted,
                &self.live,
                self.evidence.metrics.as_deref(),
            ),
            _ => self.live.after_call(served.policy, served.faulted),
        }
        session.record(tool, response);
        if self.evidence.metrics.is_some() {
            self.observe(tool, args, session, response, offered(), served);
        }
    }

    /// Counts a served call and writes its decision record.
    fn observe(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        session: &SessionContext,
        response: &Response,
        offered: Vec<CallShape>,
        served: Served<'_>,
    ) {
        let Some(metrics) = &self.evidence.metrics else { return };
        let revision = Revision::of(served.policy.identity());
        let observation = Observation::of(
            served.seq,
            tool,
            response.shape.as_ref(),
            response,
            offered,
            served.faulted,
            served.latency,
        );
        let outcome = observation.outcome;
        let follow = metrics.observe(served.arm, &revision, session.offered(), observation);
        let Some(recorder) = &self.evidence.recorder else { return };
        let args_fit = serde_json::to_string(args).is_ok_and(|s| s.len() <= record::MAX_ARGS_BYTES);
        let ids = if response.is_error { Vec::new() } else { crate::session::result_ids(&response.structured) };
        let id = served.policy.identity();
        recorder.record(&Decision {
            v: record::FORMAT,
            at_ms: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            session: record::session_name(session.key()),
            seq: served.seq,
            tool: tool.to_owned(),
            args: args_fit.then(|| args.clone()),
            outcome: outcome.as_str().to_owned(),
            id_count: ids.len(),
            ids: ids.into_iter().take(record::MAX_RECORDED_IDS).collect(),
            state_tag: response.state_tag.clone(),
            hints: response
                .hints
                .iter()
                .map(|h| RecordedHint {
                    tool: h.tool.clone(),
                    // A trail is a bearer capability: never in a log.
                    args: carry::without_trail(&h.args).into_owned(),
                    actionable: h.actionable,
                })
                .collect(),
            follow,
            arm: served.arm.as_str().to_owned(),
            policy: RecordedPolicy {
                name: id.name.clone(),
                version: id.version.clone(),
                sha256: id.sha256.clone(),
                digest: crate::oci::digest_in(&id.source).map(str::to_owned),
            },
            graph: served.graph.to_owned(),
            latency_us: served.latency.as_micros() as u64,
            text_bytes: response.text.len(),
        });
    }
}

/// Who served a call, on what, at what cost.
struct Served<'a> {
    arm: Arm,
    policy: &'a Arc<Policy>,
    /// The graph's name (empty for a proxy's call).
    graph: &'a str,
    faulted: bool,
    seq: u64,
    latency: Duration,
}

/// Appends a line of the host's own to a tool's text, on a line of its own.
fn append_note(response: &mut Response, note: &str) {
    if !response.text.ends_with('\n') {
        response.text.push('\n');
    }
    response.text.push_str(note);
}
