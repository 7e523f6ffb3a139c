//! The terse text an agent reads (the seed-001 shape):
//!
//! ```text
//! [state_tag] concise summary
//! one detail per line
//! → next: <tool> <compact JSON args> — reason
//! note: advice that is not a ready call
//! ? ask user: a decision the agent cannot infer
//! ```

use crate::model::{Advice, Call};

/// Most detail lines shown; the structured result always has all of them.
pub const MAX_DETAILS: usize = 25;

/// Renders `advice` (whose hints the host already validated) as text.
pub fn render(_call: &Call, advice: &Advice) -> String {
    let hints: Vec<Shown<'_>> = advice
        .hints
        .iter()
        .map(|h| Shown { tool: &h.tool, args: h.args.to_string().into(), actionable: h.actionable, reason: &h.reason })
        .collect();
    render_parts(&advice.state_tag, &advice.summary, &advice.details, &hints, advice.ask_user.as_deref())
}

/// A hint as the text shows it: its arguments as compact JSON text.
#[derive(Debug)]
pub struct Shown<'a> {
    /// Tool to call.
    pub tool: &'a str,
    /// Arguments, as the JSON text to show (the host's, as it sent them).
    pub args: std::borrow::Cow<'a, str>,
    /// Whether `tool` + `args` is a complete call.
    pub actionable: bool,
    /// Why.
    pub reason: &'a str,
}

/// [`render`] from the advice's parts, hints' arguments as text: the
/// component renders the host's advice without reading its JSON back.
pub fn render_parts(
    state_tag: &str,
    summary: &str,
    details: &[String],
    hints: &[Shown<'_>],
    ask_user: Option<&str>,
) -> String {
    let mut out = String::with_capacity(256);
    out.push('[');
    out.push_str(state_tag);
    out.push_str("] ");
    out.push_str(summary);
    for line in details.iter().take(MAX_DETAILS) {
        out.push('\n');
        out.push_str(line);
    }
    if details.len() > MAX_DETAILS {
        out.push_str(&format!("\n… {} more in structuredContent", details.len() - MAX_DETAILS));
    }
    for hint in hints {
        out.push('\n');
        if hint.actionable {
            out.push_str("→ next: ");
            out.push_str(hint.tool);
            out.push(' ');
            out.push_str(&hint.args);
            if !hint.reason.is_empty() {
                out.push_str(" — ");
                out.push_str(hint.reason);
            }
        } else {
            out.push_str("note: ");
            out.push_str(hint.reason);
        }
    }
    if let Some(ask) = ask_user {
        out.push_str("\n? ask user: ");
        out.push_str(ask);
    }
    out
}
