//! A call to one of Signpost's own tools on the graph ([`run`]): its ids
//! read strictly, and through the policy only when that fails
//! ([`PolicyIds`], the coercion rule: the policy may answer only with ids
//! the agent sent or named); a tool error's example kept only when it is a
//! working call or a template ([`vet_example`]).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Asker, Findings, Said, advise, finish, known, known_in, prerequisites};
use crate::graph::Graph;
use crate::policy::{self, Stats};
use crate::response::Response;
use crate::sanitize::{self, Known, Vocabulary};
use crate::session;
use crate::tools::{self, CallShape, ErrorKind, IdCoercer, IdParam, StrictIds, Tool, ToolError};
use crate::validate::HintValidator;

/// Most ids a coercion may return.
pub const MAX_COERCED_IDS: usize = 1024;

/// One tool call on `graph` with the policy instance `lease`, for a session
/// whose history is `session`: the whole pipeline, live or in a self-check.
pub fn run(
    graph: &Arc<Graph>,
    validator: &HintValidator,
    lease: &mut policy::Lease<'_>,
    tool: Tool,
    args: &Map<String, Value>,
    asker: Asker<'_>,
    findings: &mut Findings,
) -> Response {
    let Asker { session, trail, .. } = asker;
    let call = policy::Call { tool: tool.name().to_owned(), args: serde_json::to_string(args).unwrap_or_default() };

    lease.tell(tools::tool_set());
    lease.set_lookup(Arc::new(tools::GraphLookup::new(graph.clone())));
    let policy::BeforeCall { hints, hold } = prerequisites(lease, &call, session, findings);
    if hold.is_some() {
        findings.not_held(tool.name());
    }
    let mut shape = None;
    let outcome = {
        let mut ids = PolicyIds { graph, lease: &mut *lease, call: &call, findings: &mut *findings };
        tools::parse(graph, tool, args, &mut ids).and_then(|parsed| {
            shape = Some(CallShape::of(graph, &parsed));
            tools::execute(graph, parsed)
        })
    };
    let outcome =
        outcome.map_err(|e| vet_example(graph, validator, tool, e, &known(graph, args, session, None), findings));
    let check = |hints, findings: &mut Findings| {
        validator.filter(graph, hints, |why| findings.note(|| format!("invalid hint: {why}")))
    };
    let (valid, text, state_tag) = advise(lease, &call, &outcome, hints, asker, check, findings);
    let said = Said { tool: tool.name(), outcome, text, state_tag, hints: valid };
    let known = known_in(Some(graph), args, session);
    finish(said, known, Vocabulary::signpost(), trail, findings, shape)
}

/// A tool error's `example` stays only when it is a call that works on this
/// graph, or a template to adapt (an argument is a whole `<placeholder>`):
/// agents copy it.
fn vet_example(
    graph: &Graph,
    validator: &HintValidator,
    tool: Tool,
    mut error: ToolError,
    known: &Known<'_>,
    findings: &mut Findings,
) -> ToolError {
    let Some(Value::Object(args)) = &error.example else { return error };
    // (as long as a hint's arguments may be, template or not)
    let written = Value::Object(args.clone()).to_string();
    if written.len() > crate::validate::MAX_HINT_ARGS {
        findings.note(|| format!("the error's example is over {} bytes (removed)", crate::validate::MAX_HINT_ARGS));
        error.example = None;
        return error;
    }
    if !args.values().all(|v| sanitize::ids::all_known(v, known)) {
        findings.note(|| "the error's example names an id the agent has not seen (removed)".into());
        error.example = None;
        return error;
    }
    let hint = policy::Hint { tool: tool.name().to_owned(), args: written, actionable: true, reason: String::new() };
    if sanitize::is_template(args) || validator.check(graph, &hint).is_ok() {
        return error;
    }
    findings
        .note(|| format!("the error's example {} is not a working call (removed)", sanitize::escape(&hint.args, 120)));
    error.example = None;
    error
}

/// Reads ids: strictly when the agent sent canonical ids (the policy is not
/// asked, so it can never overrule correct input); otherwise through the
/// policy, whose answer must be ids that occur in what the agent sent.
/// Anything else from the policy is refused (and counted as a fault), and
/// the strict reading's teaching error stands.
struct PolicyIds<'a, 'p> {
    graph: &'a Graph,
    lease: &'a mut policy::Lease<'p>,
    call: &'a policy::Call,
    findings: &'a mut Findings,
}

impl IdCoercer for PolicyIds<'_, '_> {
    fn coerce(&mut self, tool: Tool, args: &Map<String, Value>, param: IdParam) -> Result<Vec<String>, ToolError> {
        let strict = StrictIds.coerce(tool, args, param);
        if strict.is_ok() {
            return strict;
        }
        let value = args.get(param.name());
        let sent = value.map(Value::to_string).unwrap_or_default().to_ascii_lowercase();
        // The names the agent sent are resolved only for an answer with an
        // id it did not send.
        let agent_sent = |ids: &[String]| {
            if !ids.iter().all(|id| crate::graph::is_id(id)) {
                return false;
            }
            let unsent: Vec<&String> = ids.iter().filter(|id| !sent_whole(&sent, id)).collect();
            unsent.is_empty() || {
                let named = value.map(|v| named_ids(self.graph, v)).unwrap_or_default();
                unsent.iter().all(|id| named.contains(id))
            }
        };
        match self.lease.coerce_ids(self.call, param.name()) {
            Ok(Ok(ids)) if !ids.is_empty() && ids.len() <= MAX_COERCED_IDS && agent_sent(&ids) => Ok(ids),
            Ok(Err(e)) => Err(ToolError {
                kind: ErrorKind::InvalidId,
                message: sanitize::line(&e.message, 1000),
                example: serde_json::from_str::<Value>(&e.example).ok().filter(Value::is_object),
            }),
            Ok(Ok(ids)) => {
                let shown: Vec<String> = ids.iter().take(3).map(|id| sanitize::escape(id, 48)).collect();
                self.findings.note(|| {
                    format!(
                        "coerce-ids({}) returned {} id(s) the agent did not send, or malformed ones: {shown:?} (refused)",
                        sanitize::escape(&sent, 120),
                        ids.len()
                    )
                });
                Stats::add(&self.lease.policy().stats().coercions_refused, 1);
                self.lease.refuse_answer();
                strict
            }
            Err(fault) => {
                self.findings.note(|| format!("coerce-ids: {fault}"));
                strict
            }
        }
    }
}

/// Most names read from one argument for [`named_ids`].
const MAX_NAMES: usize = 16;

/// The ids of the symbols that names the agent sent in `value` name
/// exactly: each word ([`session::words`]) that `resolve` answers with one
/// candidate. What a policy may coerce a
/// name into (after a `host.lookup` of `resolve`, say), since the agent
/// named that very symbol.
fn named_ids(graph: &Graph, value: &Value) -> Vec<String> {
    let mut strings = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => strings.push(s.as_str()),
            Value::Array(items) => stack.extend(items.iter().take(64)),
            _ => {}
        }
    }
    let words = strings.into_iter().flat_map(session::words).take(MAX_NAMES);
    let mut ids = Vec::new();
    for word in words {
        if let (hits, 1) = crate::graph::query::resolve(graph, word, None, 2)
            && let [ix] = hits.as_slice()
        {
            ids.push(graph.node(*ix).id());
        }
    }
    ids
}

/// Whether `id` stands whole in what the agent sent: an occurrence not
/// glued to more hex digits, so a policy cannot carve an id out of a longer
/// hex string (a SHA-256, two ids run together).
fn sent_whole(sent: &str, id: &str) -> bool {
    sent.match_indices(id).any(|(at, _)| {
        let before = sent[..at].bytes().next_back();
        let after = sent[at + id.len()..].bytes().next();
        !before.is_some_and(|b| b.is_ascii_hexdigit()) && !after.is_some_and(|b| b.is_ascii_hexdigit())
    })
}
