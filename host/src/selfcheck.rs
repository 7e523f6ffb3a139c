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

use serde_json::{Value, json};

use crate::graph::Graph;
use crate::pipeline::{self, Asker, Findings};
use crate::policy::{self, Policy};
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
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} probe calls ({} policy calls), {} hints, all valid, in {:.1} ms",
            self.probes,
            self.policy_calls,
            self.hints_valid,
            self.took.as_secs_f64() * 1000.0
        )
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

/// The probe calls: (tool, args, in both sessions?).
fn probes(graph: &Graph) -> Vec<(Tool, Value, bool)> {
    let id_of = |name: &str| graph.find_named(name).map(|n| n.id()).unwrap_or_default();
    let (ctrl, svc) = (id_of("OrderController"), id_of("OrderService"));
    let neighbors = |ids: Value| json!({"ids": ids, "direction": "out", "edge_types": ["CALLS"]});
    let mut probes = vec![
        (Tool::Resolve, json!({"identifier": "OrderController"}), true),
        (Tool::Resolve, json!({"identifier": "placeOrder"}), true),
        (Tool::Resolve, json!({"identifier": "NoSuchSymbol"}), true),
        (Tool::Describe, json!({"id": ctrl}), true),
        (Tool::Describe, json!({"id": "0".repeat(40)}), true),
        (Tool::Find, json!({"role": "controller", "limit": 2}), true),
        (Tool::Search, json!({"query": "payment"}), true),
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]}), true),
        (Tool::Neighbors, json!({"ids": [ctrl], "direction": "in", "edge_types": ["EXPOSES"]}), true),
        (Tool::Neighbors, neighbors(json!("OrderService")), true),
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

/// Runs the probes on a fresh instance of `policy`. `superseded` is asked
/// between probes; when it says yes, the check stops unjudged.
pub fn run(
    policy: &Policy,
    validator: &HintValidator,
    timeout: Duration,
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
            if started.elapsed() > budget(timeout) {
                stopped = Some(format!("the check ran past its budget of {} ms", budget(timeout).as_millis()));
                break 'probes;
            }
            let mut findings = Findings::collecting();
            pipeline::run(graph, validator, &mut lease, tool, &map, Asker::session(session), &mut findings);
            report.probes += 1;
            for note in findings.notes() {
                problems.add(note.clone(), &label);
            }
            if stats.timeouts.load(Ordering::Relaxed) > timeouts_before {
                stopped = Some(format!(
                    "a call timed out (deadline {} ms); a policy must answer within its deadline",
                    timeout.as_millis()
                ));
                break 'probes;
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
