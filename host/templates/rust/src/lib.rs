//! {{name}}: a Signpost hint policy (signpost:policy@0.3.0, `wit/policy.wit`).
//!
//! For each tool call an agent makes, the host asks the policy, in order:
//! `prerequisites` (hints before the call runs), `coerce-ids` (only for id
//! arguments it cannot read strictly), `advise` (after the call: a state
//! tag, a summary, details and the hints to suggest next) and `render`
//! (the text the agent reads, with the hints that passed validation). The
//! host checks every hint and every line of text: an actionable hint is
//! dropped unless it is a call that works as sent.

use exports::signpost::policy::policy::Guest;
use serde_json::{Value, json};
use signpost::policy::host;
use signpost::policy::types::{
    Advice, BeforeCall, Call, CoercionError, ErrorKind, Hint, Outcome, PolicyInfo, Tool, ToolRules,
};

wit_bindgen::generate!({ path: "wit", world: "hints" });

struct Policy;

export!(Policy);

impl Guest for Policy {
    fn identity() -> PolicyInfo {
        // Bump the version with each build you ship: logs and
        // `signpost://policy` name it (and the build's sha256).
        PolicyInfo { name: "{{name}}".into(), version: "0.1.0".into() }
    }

    fn catalogue(_tools: Vec<Tool>) -> Vec<ToolRules> {
        // Signpost's own tools need no rules; in front of another MCP
        // server (`signpost proxy`), declare which arguments name things.
        Vec::new()
    }

    fn coerce_ids(call: Call, param: String) -> Result<Vec<String>, CoercionError> {
        let args: Value = serde_json::from_str(&call.args).unwrap_or(Value::Null);
        let sent = args.get(&param).and_then(Value::as_str).unwrap_or("");
        // A JSON array written as a string, or ids separated by commas.
        let ids: Vec<String> = match serde_json::from_str::<Vec<String>>(sent) {
            Ok(ids) => ids,
            Err(_) => sent.split(',').map(|s| s.trim().trim_matches(['"', '\'']).to_owned()).collect(),
        };
        let ids: Vec<String> = ids.into_iter().filter(|id| is_id(id)).map(|id| id.to_lowercase()).collect();
        if ids.is_empty() {
            // The call as sent, with a placeholder where the ids belong.
            let mut example = args.as_object().cloned().unwrap_or_default();
            let placeholder = "<an id from resolve or search>";
            example.insert(param.clone(), if param == "id" { json!(placeholder) } else { json!([placeholder]) });
            return Err(CoercionError {
                message: format!("`{param}` takes ids (40 hex digits) from a resolve or search result"),
                example: Value::Object(example).to_string(),
            });
        }
        Ok(ids)
    }

    fn prerequisites(_call: Call) -> BeforeCall {
        BeforeCall { hints: Vec::new(), hold: None }
    }

    fn advise(call: Call, outcome: Outcome) -> Advice {
        match outcome {
            Outcome::Success(result) => {
                let result: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
                success(&call.tool, &result)
            }
            Outcome::Failure(error) => {
                let tag = match error.kind {
                    ErrorKind::InvalidId => "invalid_id",
                    ErrorKind::UnknownId => "unknown_id",
                    ErrorKind::BadArgument => "bad_argument",
                    ErrorKind::Internal => "internal",
                };
                // The host's example is a corrected call: suggest it.
                let hints = error
                    .example
                    .map(|args| Hint {
                        tool: call.tool.clone(),
                        actionable: !args.contains('<'),
                        args,
                        reason: "the call, corrected".into(),
                    })
                    .into_iter()
                    .collect();
                advice(tag, first_line(&error.message), Vec::new(), hints)
            }
        }
    }

    fn render(_call: Call, advice: Advice) -> String {
        // `[tag] summary`, the details, then one line per hint: an
        // actionable one as `→ next: TOOL ARGS` (the host lets a call
        // appear in the text only as one of the validated hints).
        let mut out = format!("[{}] {}", advice.state_tag, advice.summary);
        for line in &advice.details {
            out.push('\n');
            out.push_str(line);
        }
        for hint in &advice.hints {
            if hint.actionable {
                out.push_str(&format!("\n→ next: {} {} — {}", hint.tool, hint.args, hint.reason));
            } else {
                out.push_str(&format!("\nnote: {}", hint.reason));
            }
        }
        out
    }
}

/// The advice on a call that succeeded: what it found, and where to go next.
fn success(tool: &str, result: &Value) -> Advice {
    let listed = |key: &str| result[key].as_array().cloned().unwrap_or_default();
    match tool {
        "resolve" => {
            let candidates = listed("candidates");
            let details = candidates.iter().map(describe_line).collect();
            let hints = describe_hint(candidates.first(), "read the symbol's record").into_iter().collect();
            let tag = match candidates.len() {
                0 => "not_found",
                1 => "resolved",
                _ => "ambiguous",
            };
            advice(tag, format!("{} candidate(s)", candidates.len()), details, hints)
        }
        "search" | "find" | "neighbors" => {
            let results = listed("results");
            let total = result["total"].as_u64().unwrap_or(results.len() as u64);
            let details = results.iter().map(describe_line).collect();
            let hints = describe_hint(results.first(), "read the top result's record").into_iter().collect();
            let tag = if results.is_empty() { "empty" } else { "results" };
            advice(tag, format!("{} of {total} result(s)", results.len()), details, hints)
        }
        _ => advice("ok", format!("{tool} answered"), Vec::new(), Vec::new()),
    }
}

/// A hint to describe `symbol`, unless the session has seen it already.
fn describe_hint(symbol: Option<&Value>, reason: &str) -> Option<Hint> {
    let id = symbol?["id"].as_str()?.to_owned();
    if host::has_seen(std::slice::from_ref(&id)).first() == Some(&true) {
        return None;
    }
    Some(Hint { tool: "describe".into(), args: json!({"id": id}).to_string(), actionable: true, reason: reason.into() })
}

/// One detail line per symbol: its kind and name.
fn describe_line(symbol: &Value) -> String {
    format!("{} {}", symbol["kind"].as_str().unwrap_or("symbol"), symbol["name"].as_str().unwrap_or("?"))
}

fn advice(tag: &str, summary: String, details: Vec<String>, hints: Vec<Hint>) -> Advice {
    Advice { state_tag: tag.into(), summary, details, hints, ask_user: None }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}

/// 40 hex digits, either case.
fn is_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}
