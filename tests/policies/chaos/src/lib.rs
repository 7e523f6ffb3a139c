//! A hostile policy for the host's tests. It behaves (no hints, a plain
//! `[chaos]` text, so it passes the host's self-check) until a marker in the
//! agent's arguments asks for trouble, so one component exercises every
//! failure mode, including the ones that only show on live traffic:
//!
//! - `chaos:loop` → spins forever;
//! - `chaos:panic` → panics (a trap, with a message on stderr);
//! - `chaos:oom` → allocates until memory runs out;
//! - `chaos:leak` → leaks 1 MiB per policy call, then behaves (a heap that
//!   only grows, like a lazily collected runtime's);
//! - `chaos:print` → writes to stdout and stderr, then behaves;
//! - `chaos:garbage` → returns garbage the host must filter: hints to unknown
//!   tools, invalid or non-object args, unknown ids, huge reasons, control
//!   characters in text, a malformed state tag;
//! - `chaos:badids` → coerces ids into malformed ones;
//! - `chaos:refuse` → refuses ids with a malformed teaching error.
#![allow(unsafe_code, missing_docs)]

use exports::signpost::policy::policy::Guest;
use signpost::policy::types::*;

wit_bindgen::generate!({ path: "../../../wit", world: "hints" });

struct Chaos;
export!(Chaos);

fn act(args: &str) {
    if args.contains("chaos:loop") {
        #[allow(clippy::empty_loop)]
        loop {
            std::hint::black_box(());
        }
    }
    if args.contains("chaos:panic") {
        panic!("chaos policy panics on purpose");
    }
    if args.contains("chaos:oom") {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(vec![7u8; 1 << 20]);
            std::hint::black_box(&hoard);
        }
    }
    if args.contains("chaos:leak") {
        std::mem::forget(std::hint::black_box(vec![7u8; 1 << 20]));
    }
    if args.contains("chaos:print") {
        println!("chaos says hello on stdout");
        eprintln!("chaos says hello on stderr");
    }
}

fn garbage(args: &str) -> bool {
    cfg!(feature = "always-garbage") || args.contains("chaos:garbage")
}

fn garbage_hints() -> Vec<Hint> {
    let h = |tool: &str, args: &str, actionable: bool, reason: &str| Hint {
        tool: tool.into(),
        args: args.into(),
        actionable,
        reason: reason.into(),
    };
    vec![
        h("rm_rf", "{}", true, "unknown tool"),
        h("describe", "not json", true, "args are not JSON"),
        h("describe", "[1,2]", true, "args are not an object"),
        h("describe", r#"{"id":"0000000000000000000000000000000000000000"}"#, true, "unknown id"),
        h("neighbors", r#"{"ids":["x"],"direction":"up","edge_types":[]}"#, true, "schema violation"),
        h("find", r#"{"limit":100000}"#, true, "out of range"),
        h("search", r#"{"query":"order"}"#, true, &"long reason ".repeat(100)),
        h("find", r#"{"kind":"class"}"#, false, "advice\u{7}with\ncontrol chars"),
    ]
}

impl Guest for Chaos {
    fn identity() -> PolicyInfo {
        PolicyInfo { name: "chaos".into(), version: "6.6.6".into() }
    }

    fn coerce_ids(call: Call, param: String) -> Result<Vec<String>, CoercionError> {
        act(&call.args);
        if call.args.contains("chaos:badids") {
            return Ok(vec!["not-an-id".into()]);
        }
        if call.args.contains("chaos:refuse") {
            return Err(CoercionError { message: "chaos refuses\u{0}all ids".into(), example: "{not json".into() });
        }
        // A template (a `<placeholder>` argument): adapt it, do not send it.
        Err(CoercionError {
            message: "chaos reads no ids".into(),
            example: format!("{{\"{param}\":[\"<40-hex id>\"]}}"),
        })
    }

    fn prerequisites(call: Call, _session: Session) -> Vec<Hint> {
        act(&call.args);
        if garbage(&call.args) { garbage_hints() } else { Vec::new() }
    }

    fn advise(call: Call, _outcome: Outcome, _session: Session) -> Advice {
        act(&call.args);
        if !garbage(&call.args) {
            return Advice {
                state_tag: "chaos".into(),
                summary: format!("{} answered by chaos", call.tool),
                details: Vec::new(),
                hints: Vec::new(),
                ask_user: None,
            };
        }
        Advice {
            state_tag: "Not A Tag!\n".into(),
            summary: "line one\nline two\u{1b}[31m".into(),
            details: vec!["x".repeat(10_000); 1000],
            hints: garbage_hints(),
            ask_user: Some("\n".into()),
        }
    }

    fn render(call: Call, advice: Advice) -> String {
        act(&call.args);
        let mut text = format!("[{}] {}", advice.state_tag, advice.summary);
        if garbage(&call.args) {
            text.push_str("\u{0}\u{1b}[2J");
            for h in &advice.hints {
                text.push_str(&format!("\n→ next: {} {}", h.tool, h.args));
            }
        }
        text
    }
}
