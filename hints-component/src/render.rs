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
    let mut out = String::with_capacity(256);
    out.push('[');
    out.push_str(&advice.state_tag);
    out.push_str("] ");
    out.push_str(&advice.summary);
    for line in advice.details.iter().take(MAX_DETAILS) {
        out.push('\n');
        out.push_str(line);
    }
    if advice.details.len() > MAX_DETAILS {
        out.push_str(&format!("\n… {} more in structuredContent", advice.details.len() - MAX_DETAILS));
    }
    for hint in &advice.hints {
        out.push('\n');
        if hint.actionable {
            out.push_str(&format!("→ next: {} {}", hint.tool, hint.args));
            if !hint.reason.is_empty() {
                out.push_str(" — ");
                out.push_str(&hint.reason);
            }
        } else {
            out.push_str("note: ");
            out.push_str(&hint.reason);
        }
    }
    if let Some(ask) = &advice.ask_user {
        out.push_str("\n? ask user: ");
        out.push_str(ask);
    }
    out
}
