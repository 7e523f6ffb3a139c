//! `strict`: an alternative Signpost policy with another philosophy than the
//! default one.
//!
//! - ids must be sent as the schema says (a JSON array of 40-hex ids; one id
//!   string for `describe`); anything else is refused with a teaching error;
//! - at most two hints, every reason prefixed `strict:`; no prerequisites;
//! - text in markdown: a bold state line, bullet details, "Next steps".
#![allow(unsafe_code)] // generated canonical-ABI glue

use exports::signpost::policy::policy::Guest;
use serde_json::{Value, json};
use signpost::policy::types::*;

wit_bindgen::generate!({ path: "../../../wit/0.1.0", world: "hints" });

struct Strict;
export!(Strict);

fn is_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hint(tool: &str, args: Value, reason: &str) -> Hint {
    Hint { tool: tool.into(), args: args.to_string(), actionable: true, reason: format!("strict: {reason}") }
}

fn field<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

impl Guest for Strict {
    fn identity() -> PolicyInfo {
        PolicyInfo { name: "strict".into(), version: env!("CARGO_PKG_VERSION").into() }
    }

    fn coerce_ids(call: Call, param: String) -> Result<Vec<String>, CoercionError> {
        let args: Value = serde_json::from_str(&call.args).unwrap_or_default();
        let ids: Option<Vec<String>> = match args.get(&param) {
            Some(Value::String(s)) if param == "id" && is_id(s) => Some(vec![s.clone()]),
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= 256 => {
                items.iter().map(|v| v.as_str().filter(|s| is_id(s)).map(str::to_owned)).collect()
            }
            _ => None,
        };
        let example = if param == "id" {
            json!({"id": "<40-hex id>"})
        } else {
            json!({"ids": ["<40-hex id>"], "direction": "out", "edge_types": ["CALLS"]})
        };
        ids.ok_or_else(|| CoercionError {
            message: format!(
                "strict: `{param}` must be {} of 40 lowercase hex characters, exactly as the schema says. Send: {} {example}",
                if param == "id" { "one id string" } else { "a JSON array of ids" },
                call.tool
            ),
            example: example.to_string(),
        })
    }

    fn prerequisites(_call: Call, _session: Session) -> Vec<Hint> {
        Vec::new()
    }

    fn advise(call: Call, outcome: Outcome, _session: Session) -> Advice {
        let result = match outcome {
            Outcome::Failure(e) => {
                return Advice {
                    state_tag: "error".into(),
                    summary: format!("{} failed: {}", call.tool, e.message),
                    details: Vec::new(),
                    hints: Vec::new(),
                    ask_user: None,
                };
            }
            Outcome::Success(json) => serde_json::from_str::<Value>(&json).unwrap_or_default(),
        };
        let mut hints = Vec::new();
        let mut details = Vec::new();
        let describe = |r: &Value| hint("describe", json!({"id": field(r, "id")}), "inspect it");
        let summary = match call.tool.as_str() {
            "resolve" => {
                let c = list(&result, "candidates");
                hints.extend(c.iter().take(2).map(describe));
                details.extend(c.iter().map(|r| format!("{} {}", field(r, "id"), field(r, "fqn"))));
                if c.is_empty() {
                    let ident = field(&result, "identifier");
                    if !ident.is_empty() {
                        hints.push(hint("search", json!({"query": ident}), "nothing by that name"));
                    }
                }
                format!("{} candidate(s)", c.len())
            }
            "describe" => {
                let rec = result.get("record").cloned().unwrap_or_default();
                let out = result.pointer("/edge_summary/out").and_then(Value::as_object).cloned().unwrap_or_default();
                if let Some((key, _)) = out.iter().max_by_key(|(_, n)| n.as_u64().unwrap_or(0)) {
                    hints.push(hint(
                        "neighbors",
                        json!({"ids": [field(&rec, "id")], "direction": "out", "edge_types": [key]}),
                        "its most common edge",
                    ));
                }
                format!("{} {}", field(&rec, "kind"), field(&rec, "fqn"))
            }
            "neighbors" => {
                let r = list(&result, "results");
                hints.extend(r.iter().filter_map(|n| n.get("other")).take(1).map(describe));
                details.extend(r.iter().map(|n| format!("{} {}", field(&n["other"], "id"), field(&n["other"], "fqn"))));
                format!("{} neighbor(s)", r.len())
            }
            _ => {
                let r = list(&result, "results");
                hints.extend(r.iter().take(1).map(describe));
                details.extend(r.iter().map(|n| format!("{} {}", field(n, "id"), field(n, "fqn"))));
                format!("{} result(s)", r.len())
            }
        };
        hints.truncate(2);
        Advice { state_tag: "ok".into(), summary, details, hints, ask_user: None }
    }

    fn render(_call: Call, advice: Advice) -> String {
        let mut out = format!("**{}** {}", advice.state_tag, advice.summary);
        for d in &advice.details {
            out.push_str(&format!("\n- {d}"));
        }
        if !advice.hints.is_empty() {
            out.push_str("\n\n### Next steps");
            for (i, h) in advice.hints.iter().enumerate() {
                out.push_str(&format!("\n{}. `{} {}` — {}", i + 1, h.tool, h.args, h.reason));
            }
        }
        out
    }
}
