//! The self-check a policy must pass before it serves: probe calls on the
//! embedded sample graph, each through [`pipeline::run`] — the very code
//! that serves agents — on a fresh instance under the normal limits. It
//! passes when the host had nothing to refuse or repair: no fault, no
//! invalid hint, no coercion answer it would not accept, no text line it had
//! to remove, a well-formed state tag and some text, for every probe.
//!
//! The check is bounded like everything else a policy does: it stops at the
//! first timeout (a policy that misses its deadline once is not fit to
//! serve), when its time budget runs out, or when the caller says a newer
//! candidate has arrived; and it keeps at most [`MAX_DISTINCT`] distinct
//! problems, each counted, so a policy that returns a hundred thousand bad
//! hints costs no more memory than one that returns one.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::pipeline::{self, Asker, Findings};
use crate::policy::{self, Policy};
use crate::proxy::{Upstream, UpstreamError};
use crate::sanitize;
use crate::tools::Tool;
use crate::validate::HintValidator;

/// Distinct problems kept (the rest are counted).
pub const MAX_DISTINCT: usize = 50;
/// Problems listed in a report; the rest are summed up as "and N more".
pub const MAX_LISTED: usize = 20;

/// What the self-check ran.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Probe tool calls made.
    pub probes: usize,
    /// Policy function calls they took.
    pub policy_calls: u64,
    /// Hints that validated.
    pub hints_valid: u64,
    /// Wall time.
    pub took: Duration,
    /// Of the probes, those of a proxied backend's tools.
    pub backend_probes: usize,
    /// Golden cases passed after the probes (`--policy-cases`, `policy
    /// check --cases`).
    pub cases: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} probe calls{} ({} policy calls), {} hints, all valid, in {:.1} ms",
            self.probes,
            match self.backend_probes {
                0 => String::new(),
                n => format!(", {n} of them to the backend's tools"),
            },
            self.policy_calls,
            self.hints_valid,
            self.took.as_secs_f64() * 1000.0
        )?;
        if self.cases > 0 {
            write!(f, "; {} golden cases passed, strictly", self.cases)?;
        }
        Ok(())
    }
}

/// Problems found, deduplicated and counted, bounded in memory.
#[derive(Debug, Default, Clone)]
pub struct Problems {
    /// Problem → (times seen, the first probe that showed it).
    counts: BTreeMap<String, (u64, String)>,
    /// First-seen order of the kept messages.
    order: Vec<String>,
    /// Problems not kept because [`MAX_DISTINCT`] were already.
    unkept: u64,
}

impl Problems {
    fn add(&mut self, message: String, probe: &str) {
        if let Some((n, _)) = self.counts.get_mut(&message) {
            *n += 1;
        } else if self.counts.len() < MAX_DISTINCT {
            self.order.push(message.clone());
            self.counts.insert(message, (1, probe.to_owned()));
        } else {
            self.unkept += 1;
        }
    }

    fn add_all(&mut self, findings: &Findings, probe: &str) {
        for note in findings.notes() {
            self.add(note.clone(), probe);
        }
    }

    /// Problems found in all (with repeats).
    pub fn total(&self) -> u64 {
        self.counts.values().map(|(n, _)| n).sum::<u64>() + self.unkept
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Distinct problems kept, in the order first seen: the problem, how
    /// often, and the first probe call that showed it.
    pub fn distinct(&self) -> impl Iterator<Item = (&str, u64, &str)> {
        self.order.iter().filter_map(|m| self.counts.get(m).map(|(n, probe)| (m.as_str(), *n, probe.as_str())))
    }
}

/// Why a candidate failed its self-check.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CheckError {
    /// Problems were found (the check may also have stopped early).
    #[error("{}", render(.problems, .stopped.as_deref()))]
    Failed {
        /// What was found.
        problems: Problems,
        /// Why the check stopped before its last probe, if it did.
        stopped: Option<String>,
    },
    /// A newer candidate arrived; this one was not judged.
    #[error("superseded by a newer candidate before its check finished")]
    Superseded,
}

fn render(problems: &Problems, stopped: Option<&str>) -> String {
    let distinct = problems.counts.len();
    let mut out = format!("{} problem(s), {} distinct", problems.total(), distinct + usize::from(problems.unkept > 0));
    if let Some(why) = stopped {
        out.push_str(&format!("; stopped early: {why}"));
    }
    out.push(':');
    for (message, count, probe) in problems.distinct().take(MAX_LISTED) {
        let times = if count > 1 { format!("{count}× ") } else { String::new() };
        out.push_str(&format!("\n  - {times}{message}\n      first seen on: {probe}"));
    }
    let rest = problems.total() - problems.distinct().take(MAX_LISTED).map(|(_, n, _)| n).sum::<u64>();
    if rest > 0 {
        out.push_str(&format!("\n  - and {rest} more"));
    }
    out
}

/// Why the check stops now, if it ran past its budget.
fn over_budget(started: Instant, timeout: Duration) -> Option<String> {
    (started.elapsed() > budget(timeout))
        .then(|| format!("the check ran past its budget of {} ms", budget(timeout).as_millis()))
}

/// Why the check stops now, if a call of `policy` timed out since it had
/// `before` timeouts: a policy that misses its deadline once is not fit.
fn timed_out(policy: &Policy, before: u64, timeout: Duration) -> Option<String> {
    (policy.stats().timeouts.load(Ordering::Relaxed) > before).then(|| {
        format!("a call timed out (deadline {} ms); a policy must answer within its deadline", timeout.as_millis())
    })
}

/// The check's time budget under the engine's limits: enough for every
/// probe to take a tenth of its deadline, never less than two seconds.
pub fn budget(timeout: Duration) -> Duration {
    Duration::from_secs(2) + timeout * 10
}

fn sessions(seen: &str) -> [Arc<policy::Session>; 2] {
    [
        Arc::new(policy::Session { call_count: 0, recent: vec![], seen_ids: vec![] }),
        Arc::new(policy::Session {
            call_count: 2,
            recent: vec![policy::PastCall { tool: "resolve".into(), ok: true, ids: vec![seen.to_owned()] }],
            seen_ids: vec![seen.to_owned()],
        }),
    ]
}

/// The probe calls: (tool, args, in both sessions?). Every outcome a
/// tool's contract can present, for each tool: results, nothing, a page
/// with more after it and the last page, and each error kind it can end in
/// (a unit test checks the set covers them); then sloppy id shapes.
fn probes(graph: &Graph) -> Vec<(Tool, Value, bool)> {
    let id_of = |name: &str| graph.find_named(name).map(|n| n.id()).unwrap_or_default();
    let (ctrl, svc) = (id_of("OrderController"), id_of("OrderService"));
    let unknown = "0".repeat(40);
    // A last page of a search: its final match alone.
    let last_of_order = crate::graph::search::top(graph, "order", 0).0.saturating_sub(1);
    let neighbors = |ids: Value| json!({"ids": ids, "direction": "out", "edge_types": ["CALLS"]});
    let mut probes = vec![
        // resolve: one, many, none, none of a kind, a bad argument.
        (Tool::Resolve, json!({"identifier": "OrderController"}), true),
        (Tool::Resolve, json!({"identifier": "placeOrder"}), true),
        (Tool::Resolve, json!({"identifier": "NoSuchSymbol"}), true),
        (Tool::Resolve, json!({"identifier": "OrderController", "kind": "route"}), false),
        (Tool::Resolve, json!({"identifier": " "}), false),
        // describe: a record, an unknown id, a bad argument.
        (Tool::Describe, json!({"id": ctrl}), true),
        (Tool::Describe, json!({"id": unknown}), true),
        (Tool::Describe, json!({"id": ctrl, "depth": 2}), false),
        // find: a first page, a middle one, the last, nothing, a kind the
        // graph lacks, a bad page.
        (Tool::Find, json!({"role": "controller", "limit": 2}), true),
        (Tool::Find, json!({"role": "controller", "limit": 2, "offset": 2}), false),
        (Tool::Find, json!({"role": "controller", "limit": 5, "offset": 5}), false),
        (Tool::Find, json!({"name": "NoSuchSymbol"}), true),
        (Tool::Find, json!({"kind": "wizard"}), false),
        (Tool::Find, json!({"limit": 0}), false),
        // search: strong results, weak ones, a later page, nothing, a bad
        // argument.
        (Tool::Search, json!({"query": "payment"}), true),
        (Tool::Search, json!({"query": "ordctl"}), false),
        (Tool::Search, json!({"query": "order", "limit": 3, "offset": 3}), false),
        (Tool::Search, json!({"query": "order", "limit": 3, "offset": last_of_order}), false),
        (Tool::Search, json!({"query": "zzqxwvk"}), true),
        (Tool::Search, json!({"query": ""}), false),
        // neighbors: results, a page with more, nothing (and the edges
        // there are), a name for an id, an unknown id, a misspelt edge
        // type, a bad direction.
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]}), true),
        (Tool::Neighbors, json!({"ids": [svc], "direction": "out", "edge_types": ["DECLARES"], "limit": 1}), false),
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "in", "edge_types": ["EXPOSES"]}), true),
        (Tool::Neighbors, neighbors(json!("OrderService")), true),
        (Tool::Neighbors, neighbors(json!([unknown])), false),
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "out", "edge_types": ["CALZ"]}), false),
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "sideways", "edge_types": ["CALLS"]}), false),
    ];
    // Sloppy id shapes reach the policy's coercion; whatever it answers must
    // be ids the agent sent.
    for ids in [
        json!(format!("['{ctrl}']")),
        json!(format!("[\"{ctrl}\", \"{svc}\"]")),
        json!(json!([ctrl]).to_string().to_uppercase()),
        json!(format!("{ctrl},{svc}")),
        json!(""),
        json!([1]),
    ] {
        probes.push((Tool::Neighbors, neighbors(ids), false));
    }
    probes.push((Tool::Describe, json!({"id": [svc]}), false));
    probes.push((Tool::Describe, json!({"id": ctrl.to_uppercase()}), false));
    probes
}

/// The probe calls, one line each, as `signpost policy check --explain`
/// prints them: the call, and the sessions it is made in.
pub fn explain() -> Vec<String> {
    let graph = Graph::sample();
    probes(&graph)
        .into_iter()
        .map(|(tool, args, both)| {
            let sessions =
                if both { "a fresh session, then one that has seen OrderService" } else { "a fresh session" };
            format!("{tool} {args}   ({sessions})")
        })
        .collect()
}

/// Most of a proxied backend's tools probed (a catalogue may list hundreds).
pub const MAX_BACKEND_TOOLS: usize = 32;

/// What a probe of a backend's tool is answered with, in place of the
/// backend (which is never called: a probe changes nothing anywhere).
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// A result with text in it.
    Result,
    /// A result with no content at all.
    Empty,
    /// A tool error (`isError`).
    ToolError,
    /// The backend refused the call (a JSON-RPC error).
    Refused,
    /// No answer before the deadline.
    Timeout,
}

impl Answer {
    const ALL: [Answer; 5] = [Answer::Result, Answer::Empty, Answer::ToolError, Answer::Refused, Answer::Timeout];

    fn name(self) -> &'static str {
        match self {
            Answer::Result => "a result",
            Answer::Empty => "an empty result",
            Answer::ToolError => "a tool error",
            Answer::Refused => "a refusal",
            Answer::Timeout => "no answer in time",
        }
    }

    fn of(self, tool: &str) -> Result<CallToolResponse, UpstreamError> {
        let text = |t: String| vec![ContentBlock::text(t)];
        match self {
            Answer::Result => Ok(CallToolResponse::Complete(CallToolResult::success(text(format!(
                "{tool}: done (an answer the self-check made up; the backend was not called)"
            ))))),
            Answer::Empty => Ok(CallToolResponse::Complete(CallToolResult::success(Vec::new()))),
            Answer::ToolError => Ok(CallToolResponse::Complete(CallToolResult::error(text(format!(
                "{tool} failed: the arguments were not what it takes"
            ))))),
            Answer::Refused => Err(UpstreamError::Refused(format!("-32602: invalid params for {tool}"))),
            Answer::Timeout => Err(UpstreamError::Timeout(Duration::from_secs(30))),
        }
    }
}

/// The arguments a tool's input schema requires, each a plain value of its
/// type: what a probe sends.
fn required_args(schema: &Map<String, Value>) -> Map<String, Value> {
    let properties = schema.get("properties").unwrap_or(&Value::Null);
    let required = schema.get("required").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    required
        .iter()
        .filter_map(Value::as_str)
        .map(|name| {
            let value = match properties[name]["type"].as_str() {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("probe"),
            };
            (name.to_owned(), value)
        })
        .collect()
}

/// Runs the probes on a fresh instance of `policy`, and with a `backend`
/// (a proxy's), probes of each of its tools ([`MAX_BACKEND_TOOLS`] at
/// most) answered with each [`Answer`] in its stead. `superseded` is asked
/// between probes; when it says yes, the check stops unjudged. The backend
/// probes block on the tokio runtime the caller runs in.
pub fn run(
    policy: &Policy,
    validator: &HintValidator,
    timeout: Duration,
    backend: Option<&Arc<Upstream>>,
    superseded: &dyn Fn() -> bool,
) -> Result<Report, CheckError> {
    // Parsed once per process: every swap runs a self-check.
    static SAMPLE: OnceLock<Arc<Graph>> = OnceLock::new();
    let graph = SAMPLE.get_or_init(|| Arc::new(Graph::sample()));
    let started = Instant::now();
    let stats = policy.stats();
    let calls_before = stats.calls.load(Ordering::Relaxed);
    let hints_before = stats.hints_emitted.load(Ordering::Relaxed);
    let timeouts_before = stats.timeouts.load(Ordering::Relaxed);
    let svc = graph.find_named("OrderService").map(|n| n.id()).unwrap_or_default();
    let mut problems = Problems::default();
    let mut report = Report::default();
    let mut stopped = None;
    let mut lease = policy.cold_lease();
    'probes: for (tool, args, both) in probes(graph) {
        let map = args.as_object().cloned().unwrap_or_default();
        let label = format!("{tool} {}", sanitize::escape(&args.to_string(), 160));
        for session in sessions(&svc).iter().take(if both { 2 } else { 1 }) {
            if superseded() {
                return Err(CheckError::Superseded);
            }
            if let Some(why) = over_budget(started, timeout) {
                stopped = Some(why);
                break 'probes;
            }
            let mut findings = Findings::collecting();
            pipeline::run(graph, validator, &mut lease, tool, &map, Asker::session(session), &mut findings);
            report.probes += 1;
            problems.add_all(&findings, &label);
            if let Some(why) = timed_out(policy, timeouts_before, timeout) {
                stopped = Some(why);
                break 'probes;
            }
        }
    }
    if let (Some(upstream), None) = (backend, &stopped) {
        let runtime = tokio::runtime::Handle::try_current();
        let catalogue = upstream.catalogue();
        let session = &sessions(&svc)[0];
        'backend: for tool in catalogue.tools().iter().take(MAX_BACKEND_TOOLS) {
            let name = tool.name.to_string();
            let args = required_args(&tool.input_schema);
            let call =
                format!("the backend's {name} {}", sanitize::escape(&Value::Object(args.clone()).to_string(), 160));
            for answer in Answer::ALL {
                let label = format!("{call} answered with {}", answer.name());
                if superseded() {
                    return Err(CheckError::Superseded);
                }
                if let Some(why) = over_budget(started, timeout) {
                    stopped = Some(why);
                    break 'backend;
                }
                let Ok(runtime) = &runtime else {
                    stopped = Some("the backend's tools cannot be probed outside a tokio runtime".into());
                    break 'backend;
                };
                let mut findings = Findings::collecting();
                let send = async |_: Option<Map<String, Value>>| answer.of(&name);
                let asker = Asker::session(session);
                let forward =
                    pipeline::forward(upstream, &catalogue, &mut lease, &name, &args, asker, send, &mut findings);
                runtime.block_on(forward);
                report.probes += 1;
                report.backend_probes += 1;
                problems.add_all(&findings, &label);
                if let Some(why) = timed_out(policy, timeouts_before, timeout) {
                    stopped = Some(why);
                    break 'backend;
                }
            }
        }
    }
    report.took = started.elapsed();
    report.policy_calls = stats.calls.load(Ordering::Relaxed) - calls_before;
    report.hints_valid = stats.hints_emitted.load(Ordering::Relaxed) - hints_before;
    if problems.is_empty() && stopped.is_none() {
        return Ok(report);
    }
    if problems.is_empty()
        && let Some(why) = &stopped
    {
        problems.add(why.clone(), "-");
    }
    Err(CheckError::Failed { problems, stopped })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::tools::{ErrorKind, StrictIds, execute, parse};

    /// What a probe's call ends in, as the contract names outcomes.
    fn outcome(graph: &Graph, tool: Tool, args: &Value) -> String {
        let map = args.as_object().cloned().unwrap_or_default();
        let result = parse(graph, tool, &map, &mut StrictIds).and_then(|p| execute(graph, p));
        match result {
            Err(e) => format!("{tool} error {:?}", e.kind),
            Ok(r) => {
                let shown = r["results"].as_array().map_or(0, Vec::len) as u64;
                let (total, offset) = (r["total"].as_u64().unwrap_or(0), r["offset"].as_u64().unwrap_or(0));
                match r["status"].as_str() {
                    Some(status) => format!("{tool} {status}"),
                    None if tool == Tool::Describe => format!("{tool} record"),
                    None if total == 0 => format!("{tool} nothing"),
                    None if offset + shown < total => format!("{tool} page with more"),
                    None if offset > 0 => format!("{tool} last page"),
                    None => format!("{tool} results"),
                }
            }
        }
    }

    #[test]
    fn the_probes_cover_every_outcome_of_every_tool() {
        let graph = Graph::sample();
        let seen: BTreeSet<String> = probes(&graph).iter().map(|(t, a, _)| outcome(&graph, *t, a)).collect();
        let mut want: Vec<String> = ["one", "many", "none"].iter().map(|s| format!("resolve {s}")).collect();
        want.push("describe record".into());
        for tool in [Tool::Find, Tool::Search, Tool::Neighbors] {
            for o in ["nothing", "page with more"] {
                want.push(format!("{tool} {o}"));
            }
        }
        for tool in [Tool::Find, Tool::Search] {
            want.push(format!("{tool} last page"));
        }
        // Each error kind a tool's arguments can end in (strict ids here:
        // the policy's coercion is probed by the sloppy shapes).
        for (tool, kinds) in [
            (Tool::Resolve, &[ErrorKind::BadArgument][..]),
            (Tool::Describe, &[ErrorKind::UnknownId, ErrorKind::BadArgument, ErrorKind::InvalidId]),
            (Tool::Find, &[ErrorKind::BadArgument]),
            (Tool::Search, &[ErrorKind::BadArgument]),
            (Tool::Neighbors, &[ErrorKind::UnknownId, ErrorKind::BadArgument, ErrorKind::InvalidId]),
        ] {
            for k in kinds {
                want.push(format!("{tool} error {k:?}"));
            }
        }
        let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
        assert!(missing.is_empty(), "outcomes no probe reaches: {missing:#?}\nreached: {seen:#?}");
    }
}
