//! Evidence that a policy helps: what agents do with the hints they get.
//!
//! Every call passes through the host, so the host can see, per session,
//! which actionable hints the previous response offered and whether the
//! agent's next call took one ([`Follow`]). Each call is counted under its
//! own row — policy revision, tool, the response's state tag — with its
//! outcome and cost; the *next* call's follow-through is counted under the
//! row of the response that offered the hints. So "after a `describe` that
//! ended `found`, agents took a hint 71% of the time" is one row's rate.
//!
//! Definitions (docs/metrics.md has them for operators):
//! - *followed*: the call has the [`CallShape`] of an actionable hint just
//!   offered; *adapted*: same tool and ids, other arguments;
//! - *ok* / *empty* / an error kind: the call's outcome; empty is a success
//!   whose `results` or `candidates` list is empty;
//! - *dead end*: a response with neither results (an error or empty) nor an
//!   actionable hint;
//! - *repeat*: the call has the shape of one of the session's last
//!   [`RECENT_CALLS`] calls (a loop);
//! - *cost*: bytes of the text projection and of the `hints` JSON.
//!
//! Bounded whatever policies and agents do: a revision's state tags beyond
//! [`MAX_TAGS`] are counted as `other`, and at most [`MAX_REVISIONS`]
//! policy revisions are kept (the one unused longest is forgotten).

mod prometheus;

pub use prometheus::Extra;
use prometheus::{Labels, Snapshot};

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::policy::Identity;
use crate::response::Response;
use crate::tools::{CallShape, ErrorKind, Follow};

/// Distinct state tags counted per policy revision; the rest are `other`.
pub const MAX_TAGS: usize = 32;
/// Policy revisions whose rows are kept.
pub const MAX_REVISIONS: usize = 16;
/// A session's calls remembered to spot repeats.
pub const RECENT_CALLS: usize = 32;

/// Which policy served a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// The live policy.
    Live,
    /// The canary: a share of the sessions.
    Canary,
    /// The shadow: computed for every call, never shown.
    Shadow,
}

impl Arm {
    /// Its label.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Live => "live",
            Arm::Canary => "canary",
            Arm::Shadow => "shadow",
        }
    }
}

/// A policy revision as metrics name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Revision {
    /// `name@version`.
    pub policy: Arc<str>,
    /// The first 12 hex digits of its sha256.
    pub sha: Arc<str>,
}

impl Revision {
    /// The revision of a loaded policy.
    pub fn of(id: &Identity) -> Revision {
        Revision {
            policy: format!("{}@{}", id.name, id.version).into(),
            sha: id.sha256.get(..12).unwrap_or(&id.sha256).into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RowKey {
    arm: Arm,
    revision: Revision,
    tool: Arc<str>,
    tag: Arc<str>,
}

/// How a call ended, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Results.
    Ok,
    /// A success with nothing in it.
    Empty,
    /// A tool error of this kind.
    Error(ErrorKind),
}

impl Outcome {
    /// Its label.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Empty => "empty",
            Outcome::Error(ErrorKind::InvalidId) => "invalid_id",
            Outcome::Error(ErrorKind::UnknownId) => "unknown_id",
            Outcome::Error(ErrorKind::BadArgument) => "bad_argument",
            Outcome::Error(ErrorKind::Internal) => "internal",
        }
    }

    /// The outcome of a response's structured content.
    pub fn of(is_error: bool, structured: &Value) -> Outcome {
        if is_error {
            let kind = structured["error"]["kind"].as_str().unwrap_or_default();
            return Outcome::Error(match kind {
                "invalid_id" => ErrorKind::InvalidId,
                "unknown_id" => ErrorKind::UnknownId,
                "bad_argument" => ErrorKind::BadArgument,
                _ => ErrorKind::Internal,
            });
        }
        let empty = ["results", "candidates"]
            .iter()
            .any(|k| structured.get(*k).and_then(Value::as_array).is_some_and(Vec::is_empty));
        if empty { Outcome::Empty } else { Outcome::Ok }
    }

    /// Whether a response with this outcome and `actionable` hints is a
    /// dead end: neither results nor a call to make next.
    pub fn is_dead_end(self, actionable: usize) -> bool {
        actionable == 0 && self != Outcome::Ok
    }

    const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Empty,
        Outcome::Error(ErrorKind::InvalidId),
        Outcome::Error(ErrorKind::UnknownId),
        Outcome::Error(ErrorKind::BadArgument),
        Outcome::Error(ErrorKind::Internal),
    ];

    fn index(self) -> usize {
        Outcome::ALL.iter().position(|o| *o == self).unwrap_or(0)
    }
}

/// Counters of one row.
#[derive(Debug, Default, Clone)]
struct Counters {
    responses: u64,
    outcomes: [u64; 6],
    /// Responses with at least one actionable hint.
    hinted: u64,
    hints: u64,
    notes: u64,
    dead_ends: u64,
    repeats: u64,
    faulted: u64,
    text_bytes: u64,
    hint_bytes: u64,
    latency_us: u64,
    /// Calls that came after a hinted response of this row.
    next_calls: u64,
    followed: u64,
    adapted: u64,
    /// Of the followed and adapted: calls that had results.
    followed_ok: u64,
}

impl Counters {
    fn add(&mut self, o: &Counters) {
        self.responses += o.responses;
        for (a, b) in self.outcomes.iter_mut().zip(o.outcomes) {
            *a += b;
        }
        self.hinted += o.hinted;
        self.hints += o.hints;
        self.notes += o.notes;
        self.dead_ends += o.dead_ends;
        self.repeats += o.repeats;
        self.faulted += o.faulted;
        self.text_bytes += o.text_bytes;
        self.hint_bytes += o.hint_bytes;
        self.latency_us += o.latency_us;
        self.next_calls += o.next_calls;
        self.followed += o.followed;
        self.adapted += o.adapted;
        self.followed_ok += o.followed_ok;
    }

    /// The share of hinted responses whose next call took a hint.
    fn follow_rate(&self) -> Option<f64> {
        ratio(self.followed + self.adapted, self.next_calls)
    }

    fn summary(&self) -> Value {
        let per = |n: u64| ratio(n, self.responses);
        let outcomes: Map<String, Value> =
            Outcome::ALL.iter().map(|o| (o.as_str().to_owned(), json!(self.outcomes[o.index()]))).collect();
        json!({
            "responses": self.responses,
            "outcomes": outcomes,
            "hinted_responses": self.hinted,
            "calls_after_hints": self.next_calls,
            "followed": self.followed,
            "adapted": self.adapted,
            "follow_rate": round(self.follow_rate()),
            "exact_follow_rate": round(ratio(self.followed, self.next_calls)),
            "followed_ok_rate": round(ratio(self.followed_ok, self.followed + self.adapted)),
            "dead_end_rate": round(per(self.dead_ends)),
            "repeat_rate": round(per(self.repeats)),
            "fault_rate": round(per(self.faulted)),
            "hints_per_response": round(per(self.hints)),
            "text_bytes_per_response": round(per(self.text_bytes)),
            "hint_bytes_per_response": round(per(self.hint_bytes)),
            "mean_latency_ms": round(per(self.latency_us).map(|us| us / 1000.0)),
        })
    }
}

fn ratio(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

fn round(x: Option<f64>) -> Option<f64> {
    x.map(|x| (x * 10_000.0).round() / 10_000.0)
}

/// What one session's last response offered, and its recent calls: the
/// state follow-through is judged against.
#[derive(Debug, Default)]
pub struct Offered {
    offered: Vec<CallShape>,
    offered_by: Option<RowKey>,
    recent: VecDeque<u64>,
    /// The `seq` of the call observed last.
    last_seq: u64,
}

impl Offered {
    /// Forgets what the last response offered (its next call is not judged).
    fn forget(&mut self) {
        self.offered.clear();
        self.offered_by = None;
    }
}

/// One finished call, as metrics count it.
#[derive(Debug)]
pub struct Observation<'a> {
    /// The call's number in its session (from 1). A call is judged against
    /// the hints of the call numbered just before it, and only then: with
    /// two calls of one session in flight, or a shadow job dropped, the
    /// hints it would be judged against are not the ones the agent saw.
    pub seq: u64,
    /// The tool called.
    pub tool: &'a str,
    /// Its shape, when its arguments could be read.
    pub shape: Option<&'a CallShape>,
    /// Its outcome.
    pub outcome: Outcome,
    /// The response's state tag.
    pub tag: &'a str,
    /// Shapes of the actionable hints offered.
    pub offered: Vec<CallShape>,
    /// Hints that are notes (not actionable).
    pub notes: usize,
    /// Bytes of the text projection.
    pub text_bytes: usize,
    /// Bytes of the `hints` JSON.
    pub hint_bytes: usize,
    /// Whether a policy call faulted.
    pub faulted: bool,
    /// Time spent in the host.
    pub latency: Duration,
}

impl<'a> Observation<'a> {
    /// What `response` offered (the shapes of its actionable hints,
    /// `pipeline::offered`) and cost, for the call numbered `seq` in its
    /// session whose shape (as the agent sent it) is `shape`.
    pub fn of(
        seq: u64,
        tool: &'a str,
        shape: Option<&'a CallShape>,
        response: &'a Response,
        offered: Vec<CallShape>,
        faulted: bool,
        latency: Duration,
    ) -> Self {
        Observation {
            seq,
            tool,
            shape,
            outcome: Outcome::of(response.is_error, &response.structured),
            tag: &response.state_tag,
            offered,
            notes: response.hints.iter().filter(|h| !h.actionable).count(),
            text_bytes: response.text.len(),
            hint_bytes: serde_json::to_string(&response.hints).map_or(0, |s| s.len()),
            faulted,
            latency,
        }
    }
}

#[derive(Default)]
struct Table {
    rows: HashMap<RowKey, Counters>,
    tags: HashMap<Revision, HashSet<Arc<str>>>,
    revisions: VecDeque<Revision>,
}

impl Table {
    /// The row for a response, bounded in tags and revisions; and the
    /// revision forgotten to make room, if one was.
    fn key(&mut self, arm: Arm, revision: &Revision, tool: &str, tag: &str) -> (RowKey, Option<Revision>) {
        let mut forgotten = None;
        if self.tags.contains_key(revision) {
            // Least recently used last: a revision that serves is never forgotten.
            if self.revisions.back() != Some(revision)
                && let Some(at) = self.revisions.iter().position(|r| r == revision)
                && let Some(r) = self.revisions.remove(at)
            {
                self.revisions.push_back(r);
            }
        } else {
            if self.revisions.len() == MAX_REVISIONS
                && let Some(old) = self.revisions.pop_front()
            {
                self.tags.remove(&old);
                self.rows.retain(|k, _| k.revision != old);
                forgotten = Some(old);
            }
            self.revisions.push_back(revision.clone());
        }
        let tags = self.tags.entry(revision.clone()).or_default();
        let tag: Arc<str> = match tags.get(tag) {
            Some(t) => t.clone(),
            None if tags.len() < MAX_TAGS => {
                let t: Arc<str> = tag.into();
                tags.insert(t.clone());
                t
            }
            None => "other".into(),
        };
        (RowKey { arm, revision: revision.clone(), tool: tool.into(), tag }, forgotten)
    }
}

/// Follow-through counters and latency histograms for the whole server.
pub struct Metrics {
    table: Mutex<Table>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency_histogram() -> Histogram {
    // 50 µs to ~1.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

fn latency_labels(arm: Arm, revision: &Revision, tool: &str) -> Labels {
    vec![
        ("arm", arm.as_str().to_owned()),
        ("policy", revision.policy.to_string()),
        ("revision", revision.sha.to_string()),
        ("tool", tool.to_owned()),
    ]
}

fn hash_shape(shape: &CallShape) -> u64 {
    foldhash::fast::FixedState::with_seed(0x0051_656e_706f_7374).hash_one(shape)
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Self {
        Metrics { table: Mutex::default(), latency: Family::new_with_constructor(latency_histogram) }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one call served by `revision` on `arm` for the session whose
    /// follow-through state is `offered`; returns how it followed the previous response's
    /// hints (`None` when that offered none).
    pub fn observe(
        &self,
        arm: Arm,
        revision: &Revision,
        offered: &Mutex<Offered>,
        o: Observation<'_>,
    ) -> Option<Follow> {
        let mut state = offered.lock().unwrap_or_else(PoisonError::into_inner);
        if o.seq != state.last_seq.saturating_add(1) {
            state.forget();
        }
        state.last_seq = state.last_seq.max(o.seq);
        let mut table = self.table();
        let (key, forgotten) = table.key(arm, revision, o.tool, o.tag);
        if let Some(old) = forgotten {
            for arm in [Arm::Live, Arm::Canary, Arm::Shadow] {
                for tool in crate::tools::Tool::NAMES {
                    self.latency.remove(&latency_labels(arm, &old, tool));
                }
            }
        }
        let follow = state.offered_by.take().map(|by| {
            let follow = o.shape.map_or(Follow::None, |s| s.follows(&state.offered));
            if let Some(row) = table.rows.get_mut(&by) {
                row.next_calls += 1;
                match follow {
                    Follow::Exact => row.followed += 1,
                    Follow::Adapted => row.adapted += 1,
                    Follow::None => {}
                }
                if follow != Follow::None && o.outcome == Outcome::Ok {
                    row.followed_ok += 1;
                }
            }
            follow
        });
        let repeat = o.shape.map(hash_shape).is_some_and(|h| {
            let seen = state.recent.contains(&h);
            if state.recent.len() == RECENT_CALLS {
                state.recent.pop_front();
            }
            state.recent.push_back(h);
            seen
        });
        let row = table.rows.entry(key.clone()).or_default();
        row.responses += 1;
        row.outcomes[o.outcome.index()] += 1;
        let hinted = !o.offered.is_empty();
        row.hinted += u64::from(hinted);
        row.hints += o.offered.len() as u64;
        row.notes += o.notes as u64;
        row.dead_ends += u64::from(o.outcome.is_dead_end(o.offered.len()));
        row.repeats += u64::from(repeat);
        row.faulted += u64::from(o.faulted);
        row.text_bytes += o.text_bytes as u64;
        row.hint_bytes += o.hint_bytes as u64;
        row.latency_us += o.latency.as_micros() as u64;
        // Under the table's lock, so an eviction never races a new series.
        self.latency.get_or_create(&latency_labels(arm, revision, o.tool)).observe(o.latency.as_secs_f64());
        drop(table);
        if hinted {
            state.offered = o.offered;
            state.offered_by = Some(key);
        } else {
            state.offered.clear();
        }
        drop(state);
        follow
    }

    /// The follow-through of every revision kept, for the status resource:
    /// totals, then by tool and by state tag.
    pub fn summary(&self) -> Value {
        let table = self.table();
        let mut by_rev: Vec<(Arm, &Revision)> = table.rows.keys().map(|k| (k.arm, &k.revision)).collect();
        by_rev.sort_by(|a, b| (a.0 as u8, &*a.1.policy, &*a.1.sha).cmp(&(b.0 as u8, &*b.1.policy, &*b.1.sha)));
        by_rev.dedup();
        let out: Vec<Value> = by_rev
            .into_iter()
            .map(|(arm, rev)| {
                let mut total = Counters::default();
                let mut tools: std::collections::BTreeMap<&str, Counters> = Default::default();
                let mut tags: std::collections::BTreeMap<&str, Counters> = Default::default();
                for (k, c) in table.rows.iter().filter(|(k, _)| k.arm == arm && &k.revision == rev) {
                    total.add(c);
                    tools.entry(&k.tool).or_default().add(c);
                    tags.entry(&k.tag).or_default().add(c);
                }
                let mut v = total.summary();
                v["arm"] = json!(arm);
                v["policy"] = json!(&*rev.policy);
                v["revision"] = json!(&*rev.sha);
                v["by_tool"] = tools.iter().map(|(t, c)| ((*t).to_owned(), c.summary())).collect();
                v["by_state_tag"] = tags.iter().map(|(t, c)| ((*t).to_owned(), c.summary())).collect();
                v
            })
            .collect();
        json!(out)
    }

    /// Calls that took a hint (exact or adapted) and calls served, for one
    /// arm and revision: the canary rule compares them. Every call counts,
    /// so a policy that offers no hints scores zero.
    pub fn follow_of(&self, arm: Arm, revision: &Revision) -> (u64, u64) {
        let table = self.table();
        table
            .rows
            .iter()
            .filter(|(k, _)| k.arm == arm && &k.revision == revision)
            .fold((0, 0), |(f, n), (_, c)| (f + c.followed + c.adapted, n + c.responses))
    }

    /// The Prometheus text exposition of these metrics plus `extra`
    /// (server-wide gauges and counters read at scrape time).
    pub fn prometheus(&self, extra: Extra) -> String {
        let mut registry = Registry::with_prefix("signpost");
        registry.register(
            "tool_call_duration_seconds",
            "Time the host spent on a tool call, policy included",
            self.latency.clone(),
        );
        let mut rows: Vec<(RowKey, Counters)> = self.table().rows.iter().map(|(k, c)| (k.clone(), c.clone())).collect();
        rows.sort_by(|(a, _), (b, _)| {
            (a.arm as u8, &a.revision.policy, &a.revision.sha, &a.tool, &a.tag).cmp(&(
                b.arm as u8,
                &b.revision.policy,
                &b.revision.sha,
                &b.tool,
                &b.tag,
            ))
        });
        registry.register_collector(Box::new(Snapshot { rows, extra }));
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &registry).is_err() {
            out.clear();
            let _ = writeln!(out, "# the metrics could not be encoded");
        }
        out
    }
}

#[cfg(test)]
mod tests;
