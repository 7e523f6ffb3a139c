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

use std::sync::Arc;

use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::{Map, Value, json};

use crate::graph::Graph;
use crate::policy::{self, Stats};
use crate::proxy::{
    BackendLookup, Catalogue, Shown, Upstream, UpstreamError, outcome_of, referenced, replace_referenced, shape_of,
};
use crate::response::Response;
use crate::sanitize::{self, Allowed, Known, Scope, Vocabulary};
use crate::session::{self, Memory};
use crate::tools::{self, CallShape, ErrorKind, HintOut, IdCoercer, IdParam, StrictIds, Tool, ToolError};
use crate::trails::carry;
use crate::validate::{self, HintValidator};

/// Most detail lines kept from a policy.
pub const MAX_DETAILS: usize = 200;
/// Longest summary, detail or ask-user line kept, in characters.
pub const MAX_LINE: usize = 500;
/// Most ids a coercion may return.
pub const MAX_COERCED_IDS: usize = 1024;

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
fn sanitize_advice(advice: &mut policy::Advice, ok: bool, findings: &mut Findings) {
    if !is_tag(&advice.state_tag) {
        findings.note(|| format!("state tag `{}` is not lower_snake_case", sanitize::escape(&advice.state_tag, 40)));
        advice.state_tag = plain_tag(ok).into();
    }
    advice.summary = sanitize::line(&advice.summary, MAX_LINE);
    advice.details.truncate(MAX_DETAILS);
    for d in &mut advice.details {
        *d = sanitize::line(d, MAX_LINE);
    }
    advice.ask_user = advice.ask_user.as_deref().map(|a| sanitize::line(a, MAX_LINE)).filter(|a| !a.is_empty());
}

/// The documented layout, rendered by the host when the policy's `render`
/// failed. Its lines pass the same sanitiser as the policy's own text.
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
/// The fault's detail goes to the log, not to the agent.
fn fallback_text(tool: &str, outcome: &Result<Value, ToolError>) -> String {
    match outcome {
        Ok(result) => format!("[ok] {tool} result (no hints: the hint policy failed)\n{result}"),
        Err(e) => {
            let example = e.example.as_ref().map(|x| format!("\nSend: {tool} {x}")).unwrap_or_default();
            format!("[error] {tool} failed: {}{example}", e.message)
        }
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
