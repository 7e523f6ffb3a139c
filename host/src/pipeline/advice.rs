//! A policy's advice made safe to show (a well-formed state tag, single
//! lines of bounded length, a bounded number of details), and the host's
//! own text when the policy's `advise` or `render` fails.

use serde_json::Value;

use super::Findings;
use crate::policy;
use crate::sanitize;
use crate::tools::ToolError;

/// Most detail lines kept from a policy.
pub const MAX_DETAILS: usize = 200;
/// Longest summary, detail or ask-user line kept, in characters.
pub const MAX_LINE: usize = 500;

/// Whether `tag` is a well-formed state tag: lower_snake_case, 1 to 32 bytes.
pub fn is_tag(tag: &str) -> bool {
    (1..=32).contains(&tag.len())
        && tag.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The state tag when the policy gave none usable.
pub(super) fn plain_tag(ok: bool) -> &'static str {
    if ok { "ok" } else { "error" }
}

/// Makes a policy's advice safe to show: a well-formed tag, single lines of
/// bounded length, a bounded number of details.
pub(super) fn sanitize_advice(advice: &mut policy::Advice, ok: bool, findings: &mut Findings) {
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
pub(super) fn fallback_text(tool: &str, outcome: &Result<Value, ToolError>) -> String {
    match outcome {
        Ok(result) => format!("[ok] {tool} result (no hints: the hint policy failed)\n{result}"),
        Err(e) => {
            let example = e.example.as_ref().map(|x| format!("\nSend: {tool} {x}")).unwrap_or_default();
            format!("[error] {tool} failed: {}{example}", e.message)
        }
    }
}
