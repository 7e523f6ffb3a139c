//! A proxy's call to its backend ([`forward`]): the steps of a call around
//! the backend's answer, the policy's coercion of the references it
//! declared (to values the agent was shown or a lookup of the call found),
//! and a hold honoured once per call and session ([`held`]); a backend's
//! input request passed to the agent as it is.

use std::sync::Arc;

use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::{Map, Value, json};

use super::advice::MAX_LINE;
use super::{Asker, Findings, Said, advise, finish, known_in, prerequisites, render};
use crate::policy::{self, Stats};
use crate::proxy::{
    BackendLookup, Catalogue, Shown, Upstream, UpstreamError, outcome_of, referenced, replace_referenced, shape_of,
};
use crate::response::Response;
use crate::sanitize;
use crate::session;
use crate::tools::{ErrorKind, ToolError};

/// One call forwarded to a proxy's backend ([`crate::proxy`]): the
/// policy's prerequisites, the call itself (`send`), the policy's advice
/// with its hints kept only when they name a tool the backend lists with
/// arguments its input schema accepts (and, at the arguments the policy
/// declared references, only values the agent was shown: [`Shown`]), and
/// the sanitiser over the text with the backend's tools (and Signpost's)
/// as the calls it reads. The backend's own result reaches the agent as
/// the backend sent it ([`Response::backend`]); the policy reads it as the
/// `success` outcome (`content` and `structuredContent`), or as a failure:
/// a result with `isError`, or no result at all (a timeout, a backend that
/// is down).
///
/// A 0.2.0 or later policy may hold a call to a tool that changes state once per
/// session: `send` is then never awaited, and the agent is told why, what
/// to do first, and that the same call sent again proceeds, which it does
/// ([`held`]).
///
/// The call is awaited on the runtime; the policy's steps around it run
/// where the policy can ([`policy::Policy::run`]: in place, unless it
/// imports what can wait on the runtime).
#[allow(clippy::too_many_arguments)]
pub async fn forward(
    upstream: &Arc<Upstream>,
    catalogue: &Arc<Catalogue>,
    lease: &mut policy::Lease<'_>,
    tool: &str,
    args: &Map<String, Value>,
    asker: Asker<'_>,
    send: impl AsyncFnOnce(Option<Map<String, Value>>) -> Result<CallToolResponse, UpstreamError>,
    findings: &mut Findings,
) -> Response {
    let call = policy::Call { tool: tool.to_owned(), args: serde_json::to_string(args).unwrap_or_default() };
    findings.backend = true;
    lease.tell(catalogue.tool_set());
    let policy = lease.policy();
    let before = policy.run(|| {
        let rules = lease.rules();
        let lookup = Arc::new(BackendLookup::new(upstream.clone(), catalogue.clone(), rules.clone()));
        lease.set_lookup(lookup.clone());
        (prerequisites(lease, &call, asker.session, findings), rules, lookup)
    });
    let (policy::BeforeCall { hints, hold }, rules, lookup) = before;
    if let Some(reason) = hold {
        let digest = session::call_digest(tool, args);
        if !rules.changes_state(catalogue.tool_set(), tool) {
            findings.not_held(tool);
        } else if asker.memory.is_some_and(|m| m.held.contains(&digest)) {
            // Held once already: it goes through, whatever the policy asks.
        } else {
            let hold = Hold { reason, digest, hints };
            return policy.run(|| held(catalogue, lease, &call, args, hold, &rules, asker, findings));
        }
    }
    let shown = Shown { rules: &rules, sent: args, result: None, memory: asker.memory };
    let coerced = policy.run(|| coerce_references(lease, &call, args, &shown, &lookup, findings));
    let (coerced, read) = match coerced {
        Some(Coerced { args, read }) => (Some(args), read),
        None => (None, Vec::new()),
    };
    let sent = match send(coerced).await {
        Ok(CallToolResponse::Complete(result)) => Ok(result),
        // Not an answer yet: the backend asks the agent for input (MRTR),
        // and the agent's retry is forwarded as it sends it.
        Ok(asked @ CallToolResponse::InputRequired(_)) => return input_required(asked),
        // Signpost declares no tasks capability, so a backend must answer
        // the call itself; a task handle it sends anyway cannot be followed
        // through Signpost (the work may still run in the backend).
        Ok(_) => Err(UpstreamError::Garbage(
            "a task handle, which Signpost did not ask for (it declares no tasks capability to its backend); the \
             call may still run in the backend, but its result cannot reach you through Signpost"
                .into(),
        )),
        Err(e) => Err(e),
    };
    let mut response = policy.run(|| answer(catalogue, lease, &call, args, hints, &rules, sent, asker, findings));
    if !read.is_empty() {
        // Told in the text too, unless what it shows reads as a call.
        for read in &read {
            let quote = |v: &Value| sanitize::escape(&v.to_string(), 200);
            let line =
                format!("(read {} as {}: you sent {})", read["path"], quote(&read["used"]), quote(&read["sent"]));
            if !sanitize::has_call_to(&line, &catalogue.vocabulary_for(&rules)) {
                response.text.push('\n');
                response.text.push_str(&line);
            }
        }
        if let Some(structured) = response.structured.as_object_mut() {
            structured.insert(COERCED_FIELD.into(), Value::Array(read));
        }
    }
    response
}

/// The state tag of a call the backend answered with an input request.
pub const INPUT_REQUIRED_TAG: &str = "input_required";

/// A backend's input request, passed to the agent as it is: no advice (the
/// call is not done), no hints.
fn input_required(asked: CallToolResponse) -> Response {
    Response {
        is_error: false,
        text: String::new(),
        state_tag: INPUT_REQUIRED_TAG.into(),
        structured: json!({"hints": []}),
        shape: None,
        hints: Vec::new(),
        backend: Some(Box::new(asked)),
        held: None,
    }
}

/// Where a forwarded response's `structured` holds what the policy coerced
/// (the agent gets it in `_meta`, `signpost/coerced`).
pub const COERCED_FIELD: &str = "coerced";

/// Most values read from one reference argument for coercion.
const MAX_COERCED_VALUES: usize = 64;
/// Most reference paths of one call a policy is asked to coerce.
const MAX_COERCED_PATHS: usize = 8;

/// A call's arguments as a policy coerced them (sent instead of the
/// agent's), and what it read, one `{"path", "sent", "used"}` per argument
/// it changed.
struct Coerced {
    args: Map<String, Value>,
    read: Vec<Value>,
}

/// A 0.2.0 or later policy's reading of what the agent sent at the arguments it
/// declared references (`coerce-ids(call, path)`: the strings at `path`, in
/// order, as they should read). Each value it changes must still be named
/// by what the agent sent there (every word of it is a word of the new
/// value, case aside: `ada` may read as `Ada Lovelace`, never as `Bob`), and
/// must be something the agent was shown or a lookup of this call found.
/// Any other answer is refused (a fault) and the call goes as sent; a
/// coercion error leaves the call as sent (a backend's arguments are its
/// own to refuse).
fn coerce_references(
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    args: &Map<String, Value>,
    shown: &Shown<'_>,
    lookup: &BackendLookup,
    findings: &mut Findings,
) -> Option<Coerced> {
    let mut coerced: Option<Coerced> = None;
    let started = std::time::Instant::now();
    let mut asked: Vec<&policy::rules::Path> = Vec::new();
    for path in shown.rules.references(&call.tool) {
        let sent: Vec<String> = referenced(args, path).into_iter().map(str::to_owned).collect();
        if sent.is_empty() || sent.len() > MAX_COERCED_VALUES || asked.contains(&path) {
            continue;
        }
        // A call's coercions cost at most a few of the policy's calls and
        // about one deadline, however many references it declares.
        if asked.len() == MAX_COERCED_PATHS || started.elapsed() > lease.policy().limits().timeout {
            findings.note(|| "coerce-ids: this call's coercions ran out of time or paths (the rest not asked)".into());
            break;
        }
        asked.push(path);
        let name = path.to_string();
        let used = match lease.coerce_ids(call, &name) {
            Ok(Ok(used)) if used == sent => continue,
            Ok(Ok(used)) => used,
            Ok(Err(_)) => continue,
            Err(fault) => {
                findings.note(|| format!("coerce-ids: {fault}"));
                continue;
            }
        };
        let names = |sent: &str, used: &str| {
            let words: Vec<String> = session::words(used).map(str::to_lowercase).collect();
            let mut said = session::words(sent).peekable();
            said.peek().is_some() && said.all(|w| words.contains(&w.to_lowercase()))
        };
        let fits = used.len() == sent.len()
            && used.iter().zip(&sent).all(|(u, s)| u == s || (names(s, u) && (shown.holds(u) || lookup.found(u, s))));
        if !fits {
            let said: Vec<String> = used.iter().take(3).map(|u| sanitize::escape(u, 48)).collect();
            findings.note(|| {
                format!(
                    "coerce-ids({}) read {} value(s) the agent did not name or was not shown: {said:?} (refused)",
                    sanitize::escape(&name, 80),
                    used.len()
                )
            });
            Stats::add(&lease.policy().stats().coercions_refused, 1);
            lease.refuse_answer();
            continue;
        }
        let c = coerced.get_or_insert_with(|| Coerced { args: args.clone(), read: Vec::new() });
        replace_referenced(&mut c.args, path, &used);
        c.read.push(json!({"path": name, "sent": sent, "used": used}));
    }
    coerced
}

/// A call the policy asked to hold: why, its identity, and the
/// prerequisites' hints.
struct Hold {
    reason: String,
    digest: u64,
    hints: Vec<policy::Hint>,
}

/// The state tag of a held call's response.
pub const HELD_TAG: &str = "held";

/// The response to a held call, not sent: the host's advice (state tag
/// [`HELD_TAG`], the policy's reason, its prerequisite hints validated, and
/// the call itself as the hint that proceeds), rendered by the policy and
/// cleaned like any text. An error result (nothing was done), remembered
/// in the session ([`Response::held`]) so the same call sent again goes
/// through.
#[allow(clippy::too_many_arguments)]
fn held(
    catalogue: &Catalogue,
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    args: &Map<String, Value>,
    hold: Hold,
    rules: &policy::Rules,
    asker: Asker<'_>,
    findings: &mut Findings,
) -> Response {
    let Hold { reason, digest, mut hints } = hold;
    let reason = match sanitize::line(&reason, MAX_LINE) {
        r if r.trim().is_empty() => "the policy asks for another step first".to_owned(),
        r => r,
    };
    let repeat = "send the same call again to proceed: it is not held twice";
    hints.push(policy::Hint {
        tool: call.tool.clone(),
        args: call.args.clone(),
        actionable: true,
        reason: repeat.into(),
    });
    let shown = Shown { rules, sent: args, result: None, memory: asker.memory };
    let filtered = catalogue.filter(hints, &shown, |why| findings.note(|| format!("invalid hint: {why}")));
    Stats::add(&lease.policy().stats().calls_held, 1);
    let mut advice = policy::Advice {
        state_tag: HELD_TAG.into(),
        summary: format!("{} was not sent: {reason}", call.tool),
        details: vec![
            "Nothing was changed. Sending the same call again proceeds: a call is held at most once.".to_owned(),
        ],
        hints: Vec::new(),
        ask_user: None,
    };
    let (hints, text) = render(lease, call, &mut advice, filtered, asker, findings);
    let message =
        format!("Not sent: the hint policy held this call once ({reason}). Send the same call again to proceed.");
    let outcome = Err(ToolError { kind: ErrorKind::BadArgument, message, example: None });
    let said = Said { tool: &call.tool, outcome, text, state_tag: HELD_TAG.into(), hints };
    let known = known_in(None, args, asker.session);
    let mut response = finish(said, known, &catalogue.vocabulary_for(rules), asker.trail, findings, None);
    response.held = Some(digest);
    response.shape = Some(shape_of(&call.tool, args, rules));
    response
}

/// [`forward`] once the backend answered (or did not).
#[allow(clippy::too_many_arguments)]
fn answer(
    catalogue: &Catalogue,
    lease: &mut policy::Lease<'_>,
    call: &policy::Call,
    args: &Map<String, Value>,
    hints: Vec<policy::Hint>,
    rules: &policy::Rules,
    sent: Result<CallToolResult, UpstreamError>,
    asker: Asker<'_>,
    findings: &mut Findings,
) -> Response {
    let outcome = match &sent {
        Ok(result) if result.is_error != Some(true) => Ok(outcome_of(result)),
        Ok(result) => Err(ToolError { kind: ErrorKind::BadArgument, message: text_of(result), example: None }),
        Err(e @ UpstreamError::Refused(_)) => {
            Err(ToolError { kind: ErrorKind::BadArgument, message: e.to_string(), example: None })
        }
        Err(e) => Err(ToolError { kind: ErrorKind::Internal, message: e.to_string(), example: None }),
    };
    let shown = Shown { rules, sent: args, result: sent.as_ref().ok(), memory: asker.memory };
    let check = |hints, findings: &mut Findings| {
        catalogue.filter(hints, &shown, |why| findings.note(|| format!("invalid hint: {why}")))
    };
    let (valid, text, state_tag) = advise(lease, call, &outcome, hints, asker, check, findings);
    let said = Said { tool: &call.tool, outcome, text, state_tag, hints: valid };
    let known = known_in(None, args, asker.session);
    let mut response = finish(said, known, &catalogue.vocabulary_for(rules), asker.trail, findings, None);
    response.backend = sent.ok().map(|r| Box::new(CallToolResponse::Complete(r)));
    response.shape = Some(shape_of(&call.tool, args, rules));
    response
}

/// The text of a backend's error result, as one bounded message.
fn text_of(result: &CallToolResult) -> String {
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    match text.join(" ").trim() {
        "" => "the backend reported an error without a message".to_owned(),
        text => sanitize::line(text, 2000),
    }
}
