//! One tool call, end to end: the policy's prerequisites, its id coercion,
//! the tool on the graph, the policy's advice, hint validation, the policy's
//! text rendering, and the sanitiser.
//!
//! The guarantees live here, in [`run`], the one code path that serves live
//! calls *and* the self-check a candidate policy must pass (so a policy is
//! judged by exactly what an agent would get). Every actionable hint that
//! leaves it validated against its tool's input schema *and* parsed as a
//! working call on this graph; no text line shows a call that is not one of
//! those hints; coercion is asked only about input the host cannot read
//! strictly, and may only return ids the agent sent. A policy that traps,
//! times out or returns garbage costs the response its hints, never the
//! result: each policy step has a host fallback.
//!
//! [`run`] is a call to Signpost's own tools on the graph (`run.rs`, with
//! the coercion rule); [`forward`] a proxy's call to its backend
//! (`forward.rs`, with the policy's coercion of references and its hold).
//! Both go through the steps here: the policy's prerequisites, its advice
//! and its rendering, and `finish`, the sanitiser over what was said;
//! `advice.rs` makes a policy's advice safe to show, and writes the host's
//! own text when the policy gives none.

mod advice;
mod forward;
mod run;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::policy::{self, Stats};
use crate::response::Response;
use crate::sanitize::{self, Allowed, Known, Scope, Vocabulary};
use crate::session::Memory;
use crate::tools::{self, CallShape, ErrorKind, HintOut, ToolError};
use crate::trails::carry;
use crate::validate;
pub use advice::{MAX_DETAILS, MAX_LINE, fallback_render, is_tag};
use advice::{fallback_text, plain_tag, sanitize_advice};
pub use forward::{COERCED_FIELD, HELD_TAG, INPUT_REQUIRED_TAG, forward};
pub use run::{MAX_COERCED_IDS, run};

/// What the host had to refuse or repair in one call: policy faults,
/// invalid hints, coercions it would not accept, text lines it removed. Live
/// calls log them at debug level; the self-check reports them.
#[derive(Debug, Default)]
pub struct Findings {
    collect: bool,
    notes: Vec<String>,
    /// The call went to a proxy's backend: its error messages are the
    /// backend's, not the policy's.
    backend: bool,
}

impl Findings {
    /// Findings to keep (the self-check), at most 32 per call.
    pub fn collecting() -> Self {
        Findings { collect: true, notes: Vec::new(), backend: false }
    }

    /// Findings to log only (live calls).
    pub fn logging() -> Self {
        Findings::default()
    }

    fn note(&mut self, what: impl FnOnce() -> String) {
        if self.collect {
            if self.notes.len() < 32 {
                self.notes.push(what());
            }
        } else if tracing::enabled!(tracing::Level::DEBUG) {
            tracing::debug!(finding = %what(), "the host corrected a policy answer");
        }
    }

    /// What the host repaired in what the tool itself said (its error
    /// message): the policy's doing on Signpost's tools (a coercion's
    /// teaching message), a backend's in front of one, which is logged
    /// but not held against the policy.
    fn note_tool(&mut self, what: impl FnOnce() -> String) {
        if self.backend {
            tracing::debug!(finding = %what(), "the host corrected the backend's error message");
        } else {
            self.note(what);
        }
    }

    /// A hold asked for a call to `tool`, which changes no state: not held.
    fn not_held(&mut self, tool: &str) {
        self.note(|| {
            format!("prerequisites asked to hold `{}`, which changes no state (not held)", sanitize::escape(tool, 80))
        });
    }

    /// What was noted, in order.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// What was noted, in order, kept.
    pub fn into_notes(self) -> Vec<String> {
        self.notes
    }
}

/// Who asks a call: the history the policy reads, and the trail the
/// response's actionable hints carry (none outside a trail).
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    /// The session history, as the policy sees it.
    pub session: &'a Arc<policy::Session>,
    /// The trail handle ([`crate::trails`]).
    pub trail: Option<&'a str>,
    /// What the host remembers of the session for a proxy's calls (values
    /// shown, calls held once); none outside a live session.
    pub memory: Option<&'a Memory>,
}

impl<'a> Asker<'a> {
    /// A session that is no trail, with nothing remembered beside its history.
    pub fn session(session: &'a Arc<policy::Session>) -> Self {
        Asker { session, trail: None, memory: None }
    }
}

/// The policy's advice on a finished call, its hints (after the
/// prerequisites `hints`) kept only as `check` accepts them, and its text:
/// (valid hints, text, state tag). A policy fault costs the hints, never the
/// result: the host renders the text itself.
fn advise(
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    outcome: &Result<Value, ToolError>,
    mut hints: Vec<policy::Hint>,
    asker: Asker<'_>,
    check: impl FnOnce(Vec<policy::Hint>, &mut Findings) -> validate::Filtered,
    findings: &mut Findings,
) -> (Vec<HintOut>, String, String) {
    match lease.advise(call, &to_wit_outcome(outcome), asker.session) {
        Ok(mut advice) => {
            sanitize_advice(&mut advice, outcome.is_ok(), findings);
            hints.append(&mut advice.hints);
            let filtered = check(hints, findings);
            let (hints, text) = render(lease, call, &mut advice, filtered, asker, findings);
            (hints, text, advice.state_tag)
        }
        Err(fault) => {
            findings.note(|| format!("advise: {fault}"));
            (Vec::new(), fallback_text(&call.tool, outcome), plain_tag(outcome.is_ok()).to_owned())
        }
    }
}

/// The text of `advice` with the hints that survived validation
/// (`filtered`), as the policy renders it (the host's layout when it
/// cannot), and those hints, counted.
fn render(
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    advice: &mut policy::Advice,
    mut filtered: validate::Filtered,
    asker: Asker<'_>,
    findings: &mut Findings,
) -> (Vec<HintOut>, String) {
    // Every actionable hint carries the trail, so the agent that follows
    // it threads its history. The policy renders them with a stand-in (it
    // never holds a handle: nothing it logs shows one), which becomes the
    // trail once the text is clean.
    if asker.trail.is_some() {
        carry::stand_in(&mut filtered.hints);
    }
    let stats = lease.policy().stats();
    Stats::add(&stats.hints_emitted, filtered.hints.len() as u64);
    Stats::add(&stats.hints_dropped, filtered.dropped);
    advice.hints = validate::to_wit(&filtered.hints);
    let text = match lease.render(call, advice) {
        Ok(text) if !text.trim().is_empty() => text,
        Ok(_) => {
            findings.note(|| "render returned no text".into());
            fallback_render(advice)
        }
        Err(fault) => {
            findings.note(|| format!("render: {fault}"));
            fallback_render(advice)
        }
    };
    (filtered.hints, text)
}

/// The policy's prerequisites for a call about to run, and whether it asks
/// to hold it (neither if it faults).
fn prerequisites(
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    session: &Arc<policy::Session>,
    findings: &mut Findings,
) -> policy::BeforeCall {
    lease.prerequisites(call, session).unwrap_or_else(|fault| {
        findings.note(|| format!("prerequisites: {fault}"));
        policy::BeforeCall { hints: Vec::new(), hold: None }
    })
}

/// What the tool and the policy said of one call, before the sanitiser.
struct Said<'t> {
    tool: &'t str,
    outcome: Result<Value, ToolError>,
    text: String,
    state_tag: String,
    hints: Vec<HintOut>,
}

/// The sanitiser over what was said ([`crate::sanitize`]): the text, the
/// hints' reasons and the error message may show only validated calls (to
/// the tools of `vocab`) and ids from `known`, the result or the hints;
/// then the trail put in where the policy had its stand-in.
fn finish(
    said: Said<'_>,
    known: Known<'_>,
    vocab: &Vocabulary,
    trail: Option<&str>,
    findings: &mut Findings,
    shape: Option<CallShape>,
) -> Response {
    let Said { tool, outcome, text, state_tag, hints: mut valid } = said;
    let example = outcome.as_ref().err().and_then(|e| e.example.clone());
    let example = example.as_ref().and_then(Value::as_object);
    // A call the policy wrote in prose (a teaching message) is the hint
    // without its trail: allowed too.
    let untrailed = carry::untrailed(&valid);
    let allowed: Vec<Allowed<'_>> = valid
        .iter()
        .filter(|h| h.actionable)
        .map(|h| Allowed { tool: &h.tool, args: &h.args })
        .chain(untrailed.iter().map(|(tool, args)| Allowed { tool, args }))
        .chain(example.map(|args| Allowed { tool, args }))
        .collect();
    let known = match outcome.as_ref() {
        Ok(result) => known.result(result),
        Err(_) => known,
    };
    let scope = Scope::new(&allowed, known).with_vocabulary(vocab);
    let (mut safe, changes) = sanitize::agent_text(&text, &scope);
    if !changes.is_none() {
        findings.note(|| {
            format!(
                "the text had {} line(s) showing calls that are not validated hints or ids not in the answer ({} call(s) cut out, {} id(s) replaced)",
                changes.lines, changes.calls, changes.ids
            )
        });
    }
    // Hint reasons reach the agent in `structuredContent` too.
    let reasons: Vec<Option<String>> = valid
        .iter()
        .map(|h| {
            let (reason, replaced) = sanitize::scrub_ids(&h.reason, &scope);
            (replaced > 0).then_some(reason)
        })
        .collect();
    if reasons.iter().any(Option::is_some) {
        findings.note(|| "a hint's reason showed an id not in the answer (replaced)".into());
    }
    // Advice that is not a call keeps arguments only as a template it
    // could show in its text: agents read `hints` as calls too.
    let unshown: Vec<bool> = valid
        .iter()
        .map(|h| !h.actionable && !h.args.is_empty() && !sanitize::template_allowed(&h.args, &scope))
        .collect();
    if vocab.strict_templates() && unshown.iter().any(|u| *u) {
        findings.note(|| {
            "a hint that is not actionable carried arguments that are no template of known values (removed)".into()
        });
    }
    let message = match &outcome {
        Err(e) => match sanitize::safe_line(&e.message, 1000, &scope) {
            Some(message) if message == e.message => None,
            Some(message) => {
                findings.note_tool(|| {
                    "the error message showed a call that is not a validated hint or an id not in the answer (cut out)"
                        .into()
                });
                Some(message)
            }
            None => {
                findings.note_tool(|| "the error message showed a call that is not a validated hint (replaced)".into());
                Some(format!("{tool} failed: {}", tools::describe_error_kind(e.kind)))
            }
        },
        Ok(_) => None,
    };
    drop(scope);
    drop(allowed);
    for ((hint, reason), unshown) in valid.iter_mut().zip(reasons).zip(unshown) {
        if let Some(reason) = reason {
            hint.reason = reason;
        }
        if unshown && vocab.strict_templates() {
            hint.args = Map::new();
        }
    }
    let (is_error, mut structured) = match outcome {
        Ok(Value::Object(map)) => (false, map),
        Ok(other) => (false, Map::from_iter([("result".to_owned(), other)])),
        Err(mut e) => {
            if let Some(message) = message {
                e.message = message;
            }
            (true, Map::from_iter([("error".to_owned(), json!(e))]))
        }
    };
    if let Some(trail) = trail {
        carry::fill(trail, &mut safe, &mut structured, &mut valid);
    }
    structured.insert("hints".into(), json!(valid));
    Response {
        is_error,
        text: safe,
        state_tag,
        structured: Value::Object(structured),
        shape,
        hints: valid,
        backend: None,
        held: None,
    }
}

/// The shapes of a response's actionable hints: what the agent's next call
/// is judged against. Each has the shape its validation found (on the
/// graph, or a backend's tool with the policy's references); on `graph`, a
/// hint without one is read again. The trail a hint carries (put there by
/// [`run`]) is not part of the question it asks.
pub fn offered(response: &Response, graph: Option<&Graph>) -> Vec<CallShape> {
    response
        .hints
        .iter()
        .filter(|h| h.actionable)
        .filter_map(|h| {
            let again = || CallShape::of_args(graph?, &h.tool, &carry::without_trail(&h.args));
            h.shape.clone().or_else(again)
        })
        .collect()
}

/// Where the ids a response may show come from: what the agent sent, the
/// session's history, the result (when there is one), and the graph (to
/// tell a split id that names a symbol).
pub fn known<'a>(
    graph: &'a Graph,
    args: &'a Map<String, Value>,
    session: &'a policy::Session,
    result: Option<&'a Value>,
) -> Known<'a> {
    let known = known_in(Some(graph), args, session);
    match result {
        Some(r) => known.result(r),
        None => known,
    }
}

/// [`known`] without a result yet: what the agent sent, the session's
/// history, and the graph when there is one.
fn known_in<'a>(graph: Option<&'a Graph>, args: &'a Map<String, Value>, session: &'a policy::Session) -> Known<'a> {
    let known = Known::default().sent(args).history(&session.seen_ids);
    let known = match graph {
        Some(graph) => known.graph(graph),
        None => known,
    };
    session.recent.iter().fold(known, |k, c| k.history(&c.ids))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::HintOut;

    #[test]
    fn a_hint_on_a_trail_offers_the_call_it_asks() {
        let graph = Graph::sample();
        let id = graph.node(0).id();
        let hint = |args: Value| HintOut {
            tool: "describe".into(),
            args: args.as_object().cloned().unwrap_or_default(),
            actionable: true,
            reason: String::new(),
            shape: None,
        };
        let response = |hints| Response {
            is_error: false,
            text: String::new(),
            state_tag: "ok".into(),
            structured: Value::Null,
            shape: None,
            hints,
            backend: None,
            held: None,
        };
        let plain = offered(&response(vec![hint(json!({"id": id}))]), Some(&graph));
        let trailed =
            offered(&response(vec![hint(json!({"id": id, carry::TRAIL_ARG: carry::STAND_IN}))]), Some(&graph));
        assert_eq!(plain.len(), 1);
        assert_eq!(trailed, plain);
    }
}
