//! The wit-bindgen glue: converts between the generated WIT types and
//! [`crate::model`], and remembers between `prerequisites` and `advise` of
//! one call how many hints the first gave; nothing else. The generated code
//! needs `unsafe` (canonical ABI exports); no hand-written code here does.
#![allow(unsafe_code)]

use crate::model;
use exports::signpost::policy::policy::Guest;
use signpost::policy::types as wit;

wit_bindgen::generate!({
    path: "../wit",
    world: "hints",
});

struct Policy;

export!(Policy);

impl Guest for Policy {
    fn identity() -> wit::PolicyInfo {
        wit::PolicyInfo { name: crate::NAME.into(), version: crate::VERSION.into() }
    }

    fn coerce_ids(call: wit::Call, param: String) -> Result<Vec<String>, wit::CoercionError> {
        crate::coerce::coerce_ids(&from_call(&call), &param)
            .map_err(|e| wit::CoercionError { message: e.message, example: e.example.to_string() })
    }

    fn catalogue(_tools: Vec<wit::Tool>) -> Vec<wit::ToolRules> {
        // Signpost's own tools: the host knows their ids and that they only
        // read; nothing to declare.
        Vec::new()
    }

    fn prerequisites(call: wit::Call) -> wit::BeforeCall {
        let hints: Vec<_> =
            crate::advise::prerequisites(&from_call(&call), &HostHistory).into_iter().map(to_hint).collect();
        BEFORE.set(Some(Before { tool: call.tool, args: call.args, hints: hints.len() }));
        wit::BeforeCall { hints, hold: None }
    }

    fn advise(call: wit::Call, outcome: wit::Outcome) -> wit::Advice {
        // The host asks for the prerequisites of the same call, on the same
        // history, just before: their count sizes the advice's budget
        // without asking the host about the ids a second time.
        let before = match BEFORE.take() {
            Some(b) if b.tool == call.tool && b.args == call.args => b.hints,
            _ => crate::advise::prerequisites(&from_call(&call), &HostHistory).len(),
        };
        let outcome = from_outcome(outcome);
        let mut advice = crate::advise::advise_after(&from_call(&call), &outcome, before);
        // A failure's hints stay: its text teaches the calls they are.
        if cfg!(feature = "hints-off") && matches!(outcome, model::Outcome::Success(_)) {
            advice.hints.clear();
        }
        wit::Advice {
            state_tag: advice.state_tag,
            summary: advice.summary,
            details: advice.details,
            hints: advice.hints.into_iter().map(to_hint).collect(),
            ask_user: advice.ask_user,
        }
    }

    fn render(_call: wit::Call, advice: wit::Advice) -> String {
        // The hints' arguments are shown as the host sent them (compact
        // JSON, validated): not read back into a JSON tree to be written
        // out again.
        let hints: Vec<crate::render::Shown<'_>> = advice
            .hints
            .iter()
            .map(|h| crate::render::Shown {
                tool: &h.tool,
                args: h.args.as_str().into(),
                actionable: h.actionable,
                reason: &h.reason,
            })
            .collect();
        crate::render::render_parts(
            &advice.state_tag,
            &advice.summary,
            &advice.details,
            &hints,
            advice.ask_user.as_deref(),
        )
    }
}

fn from_call(call: &wit::Call) -> model::Call {
    model::Call::from_json(&call.tool, &call.args)
}

/// The call the last `prerequisites` answered, and how many hints it gave.
struct Before {
    tool: String,
    args: String,
    hints: usize,
}

thread_local! {
    /// Set by `prerequisites`, taken by the next `advise` (an instance runs
    /// one call at a time; the history a call is judged on does not change
    /// between the two).
    static BEFORE: std::cell::Cell<Option<Before>> = const { std::cell::Cell::new(None) };
}

/// The session's history as the host answers for it (`host.has-seen`):
/// only the ids the policy asks about cross the boundary.
struct HostHistory;

impl model::History for HostHistory {
    fn seen(&self, ids: &[String]) -> Vec<bool> {
        signpost::policy::host::has_seen(ids)
    }
}

fn from_outcome(o: wit::Outcome) -> model::Outcome {
    match o {
        // Read typed where it is used (`crate::reply`): no JSON tree.
        wit::Outcome::Success(json) => model::Outcome::Success(json),
        wit::Outcome::Failure(e) => model::Outcome::Failure(model::ToolError {
            kind: match e.kind {
                wit::ErrorKind::InvalidId => model::ErrorKind::InvalidId,
                wit::ErrorKind::UnknownId => model::ErrorKind::UnknownId,
                wit::ErrorKind::BadArgument => model::ErrorKind::BadArgument,
                wit::ErrorKind::Internal => model::ErrorKind::Internal,
            },
            message: e.message,
            example: e.example.and_then(|x| serde_json::from_str(&x).ok()),
        }),
    }
}

fn to_hint(h: model::Hint) -> wit::Hint {
    wit::Hint { tool: h.tool, args: h.args.to_string(), actionable: h.actionable, reason: h.reason }
}

/// The instance's allocator: an arena for each call's allocations, over
/// talc (a component instance has one thread, as [`crate::arena`] needs).
#[global_allocator]
static ALLOCATOR: crate::arena::Arena<talc::wasm::WasmDynamicTalc> =
    crate::arena::Arena::new(talc::wasm::new_wasm_dynamic_allocator());
