//! `signpost policy replay`: re-runs recorded sessions against candidate
//! policies, offline, and tells how often each would have suggested what
//! the agent actually did next.
//!
//! Each recorded session runs again in order, through the same pipeline as
//! a live call ([`crate::pipeline::run`]), with a session history and a
//! policy instance of its own, on the graph given (the results, and so the
//! history the policy reads, are the live ones when it is the same graph).
//! A call is *suggested* when the response before it offered an actionable
//! hint of the same shape ([`crate::tools::CallShape`]), *adapted* when one had the same
//! tool and ids. When a policy is the one that served a record, its hints
//! are compared with the recorded ones: a replay of the live policy on the
//! live graph reproduces them exactly, and says so.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::metrics::Outcome;
use crate::pipeline::{self, Asker, Findings};
use crate::policy::Policy;
use crate::record::{self, Decision};
use crate::response::Response;
use crate::session::SessionContext;
use crate::tools::{Follow, Tool};
use crate::validate::HintValidator;

/// Recorded sessions, read from decision logs.
#[derive(Debug, Default)]
pub struct Log {
    /// Sessions, each in call order.
    pub sessions: Vec<Vec<Decision>>,
    /// Files read.
    pub files: usize,
    /// Lines that were not decision records (or named no known tool).
    pub skipped: usize,
    /// Names of the graphs the records were made on.
    pub graphs: BTreeSet<String>,
}

impl Log {
    /// Recorded calls.
    pub fn calls(&self) -> usize {
        self.sessions.iter().map(Vec::len).sum()
    }
}

/// Reads decision logs: files, or directories of `decisions-*.jsonl`.
pub fn read_logs(paths: &[PathBuf]) -> anyhow::Result<Log> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = record::log_files(p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))?;
            if found.is_empty() {
                anyhow::bail!("{}: no decision logs ({}*.jsonl) in this directory", p.display(), record::FILE_PREFIX);
            }
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let mut log = Log::default();
    let mut by_session: std::collections::HashMap<String, Vec<Decision>> = Default::default();
    let mut order: Vec<String> = Vec::new();
    for file in &files {
        let f = std::fs::File::open(file).map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
        log.files += 1;
        for line in std::io::BufReader::new(f).split(b'\n') {
            let line = line.map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Decision>(&line) {
                Ok(d) if d.v == record::FORMAT && Tool::from_name(&d.tool).is_some() => {
                    log.graphs.insert(d.graph.clone());
                    if !by_session.contains_key(&d.session) {
                        order.push(d.session.clone());
                    }
                    by_session.entry(d.session.clone()).or_default().push(d);
                }
                _ => log.skipped += 1,
            }
        }
    }
    for s in order {
        if let Some(mut calls) = by_session.remove(&s) {
            calls.sort_by_key(|d| d.seq);
            log.sessions.push(calls);
        }
    }
    if log.calls() == 0 {
        anyhow::bail!(
            "no decision records in {} file(s) ({} line(s) skipped): record some with `signpost --record DIR`",
            log.files,
            log.skipped
        );
    }
    Ok(log)
}

/// One call as a policy answered it in the replay.
#[derive(Debug, Clone, Serialize)]
pub struct Replayed {
    /// The session.
    pub session: String,
    /// The call's number in it.
    pub seq: u64,
    /// The tool.
    pub tool: String,
    /// Actionable hints, as `tool {args}`.
    pub hints: Vec<String>,
    /// How the agent's next call relates to these hints (`None`: the
    /// session had no next call).
    pub next: Option<Follow>,
}

/// What one policy did over the whole log.
#[derive(Debug, Clone, Serialize, Default)]
pub struct PolicyReport {
    /// `name@version`.
    pub policy: String,
    /// Its sha256.
    pub sha256: String,
    /// Where it came from.
    pub source: String,
    /// Calls replayed.
    pub calls: u64,
    /// Calls left out (arguments not recorded).
    pub skipped: u64,
    /// Calls that had a next call in their session (the denominator of the rates).
    pub with_next: u64,
    /// Next calls the policy suggested exactly.
    pub suggested: u64,
    /// Next calls that adapted one of its hints.
    pub adapted: u64,
    /// Share of calls with a next call whose next call it suggested or adapted.
    pub suggested_rate: f64,
    /// Share it suggested exactly.
    pub exact_rate: f64,
    /// Actionable hints per response.
    pub hints_per_response: f64,
    /// Hints it returned that the host dropped as invalid.
    pub invalid_hints: u64,
    /// Bytes of text per response.
    pub text_bytes_per_response: f64,
    /// Calls in which a policy function faulted.
    pub faults: u64,
    /// Responses with neither results nor an actionable hint.
    pub dead_ends: u64,
    /// Calls whose record this policy served: how many got the same hints now.
    pub same_as_recorded: Option<[u64; 2]>,
    /// Why the policy was refused (then nothing else is filled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Every call, for the diff.
    #[serde(skip)]
    pub per_call: Vec<Replayed>,
}

fn hint_line(tool: &str, args: &Map<String, Value>) -> String {
    format!("{tool} {}", Value::Object(args.clone()))
}

/// Replays `log` on `graph` with `policy`.
pub fn replay(log: &Log, graph: &Arc<Graph>, validator: &HintValidator, policy: &Policy) -> PolicyReport {
    let id = policy.identity();
    let mut report = PolicyReport {
        policy: format!("{}@{}", id.name, id.version),
        sha256: id.sha256.clone(),
        source: id.source.clone(),
        ..PolicyReport::default()
    };
    let dropped_before = policy.stats().hints_dropped.load(Ordering::Relaxed);
    let (mut same, mut compared) = (0, 0);
    let (mut hints, mut text_bytes) = (0u64, 0u64);
    for session in &log.sessions {
        let ctx = SessionContext::new();
        let mut answered: Vec<(&Decision, Response)> = Vec::new();
        for d in session {
            // Records of other tools were left out when the log was read.
            let (Some(args), Some(tool)) = (&d.args, Tool::from_name(&d.tool)) else {
                report.skipped += 1;
                continue;
            };
            let snapshot = ctx.snapshot();
            let mut lease = policy.lease(ctx.key());
            let response = pipeline::run(
                graph,
                validator,
                &mut lease,
                tool,
                args,
                Asker::session(&snapshot),
                &mut Findings::logging(),
            );
            report.faults += u64::from(lease.faults() > 0);
            drop((lease, snapshot));
            ctx.record(&d.tool, &response);
            report.calls += 1;
            text_bytes += response.text.len() as u64;
            let actionable = response.hints.iter().filter(|h| h.actionable).count() as u64;
            hints += actionable;
            let outcome = Outcome::of(response.is_error, &response.structured);
            report.dead_ends += u64::from(outcome.is_dead_end(actionable as usize));
            if d.policy.sha256 == id.sha256 {
                compared += 1;
                let same_hints = response.hints.len() == d.hints.len()
                    && response.hints.iter().zip(&d.hints).all(|(now, then)| {
                        now.tool == then.tool && now.args == then.args && now.actionable == then.actionable
                    });
                same += u64::from(same_hints);
            }
            answered.push((d, response));
        }
        for (i, (d, response)) in answered.iter().enumerate() {
            let offered = pipeline::offered(response, Some(graph));
            // The next call only counts when it came right after this one.
            let next = answered.get(i + 1).filter(|(n, _)| n.seq.checked_sub(1) == Some(d.seq)).map(|(_, r)| r);
            let follow = next.map(|n| n.shape.as_ref().map_or(Follow::None, |s| s.follows(&offered)));
            if let Some(f) = follow {
                report.with_next += 1;
                report.suggested += u64::from(f == Follow::Exact);
                report.adapted += u64::from(f == Follow::Adapted);
            }
            report.per_call.push(Replayed {
                session: d.session.clone(),
                seq: d.seq,
                tool: d.tool.clone(),
                hints: response.hints.iter().filter(|h| h.actionable).map(|h| hint_line(&h.tool, &h.args)).collect(),
                next: follow,
            });
        }
    }
    let per = |n: u64, d: u64| if d == 0 { 0.0 } else { (n as f64 / d as f64 * 10_000.0).round() / 10_000.0 };
    report.suggested_rate = per(report.suggested + report.adapted, report.with_next);
    report.exact_rate = per(report.suggested, report.with_next);
    report.hints_per_response = per(hints, report.calls);
    report.text_bytes_per_response = per(text_bytes, report.calls);
    report.invalid_hints = policy.stats().hints_dropped.load(Ordering::Relaxed) - dropped_before;
    report.same_as_recorded = (compared > 0).then_some([same, compared]);
    report
}

/// A call on which two policies' actionable hints differ.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// The session.
    pub session: String,
    /// The call's number in it.
    pub seq: u64,
    /// The tool.
    pub tool: String,
    /// Hints of the first policy.
    pub a: Vec<String>,
    /// Hints of the other.
    pub b: Vec<String>,
}

/// Calls where `b` offered other actionable hints than `a`.
pub fn diff(a: &PolicyReport, b: &PolicyReport) -> Vec<Diff> {
    a.per_call
        .iter()
        .zip(&b.per_call)
        .filter(|(x, y)| x.hints != y.hints)
        .map(|(x, y)| Diff {
            session: x.session.clone(),
            seq: x.seq,
            tool: x.tool.clone(),
            a: x.hints.clone(),
            b: y.hints.clone(),
        })
        .collect()
}

/// The whole replay as JSON: the log, each policy, the diffs against the first.
pub fn to_json(log: &Log, graph: &Graph, reports: &[PolicyReport]) -> Value {
    let diffs: Vec<Value> = reports
        .iter()
        .skip(1)
        .filter(|r| r.refused.is_none() && reports[0].refused.is_none())
        .map(|r| json!({"a": reports[0].policy, "b": r.policy, "calls": diff(&reports[0], r)}))
        .collect();
    json!({
        "log": {"files": log.files, "sessions": log.sessions.len(), "calls": log.calls(), "skipped_lines": log.skipped,
                "recorded_on": log.graphs},
        "graph": {"name": graph.name(), "symbols": graph.node_count()},
        "policies": reports,
        "diffs": diffs,
    })
}

/// The whole replay as a table for people, with at most `max_diffs` diff
/// lines per pair.
pub fn to_table(log: &Log, graph: &Graph, reports: &[PolicyReport], max_diffs: usize) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "replayed {} session(s), {} call(s) from {} file(s) ({} line(s) skipped) on graph {} ({} symbols)",
        log.sessions.len(),
        log.calls(),
        log.files,
        log.skipped,
        crate::sanitize::line(graph.name(), 80),
        graph.node_count()
    );
    if log.graphs.iter().any(|g| g != graph.name()) {
        let names: Vec<String> = log.graphs.iter().take(5).map(|g| crate::sanitize::line(g, 80)).collect();
        let _ =
            writeln!(out, "note: recorded on {}; results (and so hints) may differ on this graph", names.join(", "));
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<28} {:>10} {:>7} {:>8} {:>11} {:>8} {:>12} {:>7} {:>10} {:>17}",
        "policy",
        "next call",
        "exact",
        "adapted",
        "hints/resp",
        "invalid",
        "text B/resp",
        "faults",
        "dead ends",
        "same as recorded"
    );
    for r in reports {
        if let Some(why) = &r.refused {
            let _ = writeln!(out, "{:<28} refused: {why}", r.policy);
            continue;
        }
        let same = r.same_as_recorded.map_or("-".to_owned(), |[s, n]| format!("{s}/{n}"));
        let _ = writeln!(
            out,
            "{:<28} {:>9.1}% {:>6.1}% {:>8} {:>11.2} {:>8} {:>12.0} {:>7} {:>10} {:>17}",
            crate::sanitize::line(&r.policy, 28),
            r.suggested_rate * 100.0,
            r.exact_rate * 100.0,
            r.adapted,
            r.hints_per_response,
            r.invalid_hints,
            r.text_bytes_per_response,
            r.faults,
            r.dead_ends,
            same
        );
    }
    let _ = writeln!(
        out,
        "\nnext call: share of calls whose next call the policy suggested (exact) or adapted (same tool and ids), \
         over {} call(s) with a next call",
        reports.iter().find(|r| r.refused.is_none()).map_or(0, |r| r.with_next)
    );
    for r in reports.iter().skip(1).filter(|r| r.refused.is_none()) {
        let Some(a) = reports.first().filter(|a| a.refused.is_none()) else { break };
        let diffs = diff(a, r);
        let _ = writeln!(
            out,
            "\nhints differ on {} of {} call(s) between {} and {}",
            diffs.len(),
            a.per_call.len(),
            a.policy,
            r.policy
        );
        for d in diffs.iter().take(max_diffs) {
            let _ = writeln!(out, "  {} #{} {}", crate::sanitize::line(&d.session, 40), d.seq, d.tool);
            let shown = |hints: &[String]| {
                if hints.is_empty() { "(none)".to_owned() } else { crate::sanitize::line(&hints.join(" | "), 300) }
            };
            let _ = writeln!(out, "    A: {}", shown(&d.a));
            let _ = writeln!(out, "    B: {}", shown(&d.b));
        }
        if diffs.len() > max_diffs {
            let _ = writeln!(out, "  … {} more (--json has them all)", diffs.len() - max_diffs);
        }
    }
    out
}
