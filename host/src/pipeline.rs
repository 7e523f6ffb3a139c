//! One tool call, end to end: the policy's prerequisites, its id coercion,
//! the tool on the graph, the policy's advice, hint validation, and the
//! policy's text rendering.
//!
//! The guarantees live here. Every actionable hint that leaves this module
//! validated against its tool's input schema *and* parsed as a working call
//! on this graph; anything else was dropped and counted. A policy that traps,
//! times out or returns garbage costs the response its hints, never the
//! result: each policy step has a host fallback.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::live::LivePolicy;
use crate::policy::{self, Policy, PolicyFault, Stats};
use crate::session::History;
use crate::tools::{self, ErrorKind, IdCoercer, StrictIds, ToolError};
use crate::validate::{self, HintValidator, clean_line, only_valid_next_lines};

/// Longest rendered text kept, in bytes.
pub const MAX_TEXT: usize = 256 << 10;
/// Most detail lines kept from a policy.
pub const MAX_DETAILS: usize = 200;

/// What a tool call returns to the agent.
#[derive(Debug, Clone)]
pub struct Response {
    /// Whether the call failed (`isError`).
    pub is_error: bool,
    /// The terse text projection.
    pub text: String,
    /// The advice's state tag (`ok`/`error` when the policy faulted), however
    /// the policy rendered its text.
    pub state_tag: String,
    /// The result (or `{error}`) plus `hints`.
    pub structured: Value,
}

/// The graph, the tools and the live policy, shared by every session.
pub struct Signpost {
    graph: Graph,
    tools: Vec<Tool>,
    validator: HintValidator,
    live: LivePolicy,
    in_flight: AtomicUsize,
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
    pub fn new(graph: Graph, policy: Policy) -> anyhow::Result<Self> {
        Ok(Signpost {
            graph,
            tools: tools::definitions(),
            validator: HintValidator::new()?,
            live: LivePolicy::new(policy),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// The graph served.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The tool definitions.
    pub fn tools(&self) -> &[Tool] {
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

    /// The hint validator (also used by the self-check).
    pub fn validator(&self) -> &HintValidator {
        &self.validator
    }

    /// Runs one tool call for a session. Blocking (policy calls are
    /// synchronous and bounded by the policy deadline).
    pub fn call(&self, tool: &str, args: Map<String, Value>, history: &Mutex<History>) -> Response {
        let _in_flight = InFlight::new(&self.in_flight);
        let policy = self.live.current();
        let mut lease = policy.lease();
        let session = snapshot(history);
        let call = policy::Call { tool: tool.to_owned(), args: Value::Object(args.clone()).to_string() };

        let mut hints = lease.prerequisites(&call, &session).unwrap_or_default();
        let outcome = {
            let mut ids = PolicyIds { lease: &mut lease, call: &call };
            tools::parse(&self.graph, tool, &args, &mut ids).and_then(|parsed| tools::execute(&self.graph, parsed))
        };
        let wit_outcome = to_wit_outcome(&outcome);

        let (out_hints, text, state_tag) = match lease.advise(&call, &wit_outcome, &session) {
            Ok(mut advice) => {
                sanitize_advice(&mut advice, outcome.is_ok());
                hints.append(&mut advice.hints);
                let (valid, dropped) = self.validator.filter(&self.graph, hints);
                Stats::add(&policy.stats().hints_emitted, valid.len() as u64);
                Stats::add(&policy.stats().hints_dropped, dropped);
                advice.hints = validate::to_wit(&valid);
                let text = match lease.render(&call, &advice) {
                    Ok(text) => only_valid_next_lines(&clean_text(&text), &valid),
                    Err(_) => fallback_render(&advice),
                };
                (valid, text, advice.state_tag)
            }
            Err(fault) => (Vec::new(), fallback_text(tool, &outcome, &fault), plain_tag(outcome.is_ok()).to_owned()),
        };
        let faulted = lease.faults() > 0;
        drop(lease);
        self.live.after_call(&policy, faulted);

        let (is_error, mut structured) = match &outcome {
            Ok(Value::Object(map)) => (false, map.clone()),
            Ok(other) => (false, Map::from_iter([("result".to_owned(), other.clone())])),
            Err(e) => (true, Map::from_iter([("error".to_owned(), json!(e))])),
        };
        structured.insert("hints".into(), json!(out_hints));
        if let Ok(mut h) = history.lock() {
            h.record(tool, !is_error, outcome.as_ref().ok());
        }
        Response { is_error, text, state_tag, structured: Value::Object(structured) }
    }
}

/// A tool's outcome as the WIT `outcome` the policy reads.
pub fn to_wit_outcome(outcome: &Result<Value, ToolError>) -> policy::Outcome {
    match outcome {
        Ok(result) => policy::Outcome::Success(result.to_string()),
        Err(e) => policy::Outcome::Failure(policy::WitToolError {
            kind: match e.kind {
                ErrorKind::InvalidId => policy::WitErrorKind::InvalidId,
                ErrorKind::UnknownId => policy::WitErrorKind::UnknownId,
                ErrorKind::BadArgument => policy::WitErrorKind::BadArgument,
                ErrorKind::Internal => policy::WitErrorKind::Internal,
            },
            message: e.message.clone(),
            example: e.example.as_ref().map(Value::to_string),
        }),
    }
}

/// Reads ids through the policy; falls back to [`StrictIds`] when the policy
/// faults or answers with something that is not a list of canonical ids.
struct PolicyIds<'a, 'p> {
    lease: &'a mut policy::Lease<'p>,
    call: &'a policy::Call,
}

impl IdCoercer for PolicyIds<'_, '_> {
    fn coerce(&mut self, tool: &str, args: &Map<String, Value>, param: &str) -> Result<Vec<String>, ToolError> {
        match self.lease.coerce_ids(self.call, param) {
            Ok(Ok(ids)) if !ids.is_empty() && ids.len() <= 1024 && ids.iter().all(|id| crate::graph::is_id(id)) => {
                Ok(ids)
            }
            Ok(Err(e)) => Err(ToolError {
                kind: ErrorKind::InvalidId,
                message: clean_line(&e.message, 1000),
                example: serde_json::from_str::<Value>(&e.example).ok().filter(Value::is_object),
            }),
            Ok(Ok(_)) => {
                tracing::warn!("policy coerce-ids returned malformed ids; using strict coercion");
                StrictIds.coerce(tool, args, param)
            }
            Err(_) => StrictIds.coerce(tool, args, param),
        }
    }
}

fn snapshot(history: &Mutex<History>) -> policy::Session {
    let Ok(h) = history.lock() else {
        return policy::Session { call_count: 0, recent: Vec::new(), seen_ids: Vec::new() };
    };
    policy::Session {
        call_count: h.call_count(),
        recent: h.recent().map(|c| policy::PastCall { tool: c.tool.clone(), ok: c.ok, ids: c.ids.clone() }).collect(),
        seen_ids: h.seen().cloned().collect(),
    }
}

/// Whether `tag` is a well-formed state tag: lower_snake_case, 1 to 32 bytes.
pub fn is_tag(tag: &str) -> bool {
    (1..=32).contains(&tag.len())
        && tag.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The state tag when the policy gave none usable.
fn plain_tag(ok: bool) -> &'static str {
    if ok { "ok" } else { "error" }
}

/// Makes a policy's advice safe to show: a well-formed tag, single lines of
/// bounded length, a bounded number of details.
fn sanitize_advice(advice: &mut policy::Advice, ok: bool) {
    if !is_tag(&advice.state_tag) {
        advice.state_tag = plain_tag(ok).into();
    }
    advice.summary = clean_line(&advice.summary, 500);
    advice.details.truncate(MAX_DETAILS);
    for d in &mut advice.details {
        *d = clean_line(d, 500);
    }
    advice.ask_user = advice.ask_user.as_deref().map(|a| clean_line(a, 500)).filter(|a| !a.is_empty());
}

/// Text: control characters other than newline and tab removed; bounded.
fn clean_text(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control() || *c == '\n' || *c == '\t').collect();
    if out.len() > MAX_TEXT {
        let mut cut = MAX_TEXT;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("\n… (truncated)");
    }
    out
}

/// The documented layout, rendered by the host when the policy's `render`
/// failed.
pub fn fallback_render(advice: &policy::Advice) -> String {
    let mut lines = vec![format!("[{}] {}", advice.state_tag, advice.summary)];
    lines.extend(advice.details.iter().cloned());
    for h in &advice.hints {
        if h.actionable {
            lines.push(format!("→ next: {} {} — {}", h.tool, h.args, h.reason));
        } else {
            lines.push(format!("note: {}", h.reason));
        }
    }
    if let Some(ask) = &advice.ask_user {
        lines.push(format!("? ask user: {ask}"));
    }
    lines.join("\n")
}

/// The text when the policy could not advise: the result itself, unhinted.
fn fallback_text(tool: &str, outcome: &Result<Value, ToolError>, fault: &PolicyFault) -> String {
    match outcome {
        Ok(result) => format!("[ok] {tool} result (no hints: {fault})\n{result}"),
        Err(e) => {
            let example = e.example.as_ref().map(|x| format!("\nSend: {tool} {x}")).unwrap_or_default();
            format!("[error] {tool} failed: {}{example}", e.message)
        }
    }
}
