//! What a tool call returns to the agent: the leaf type every layer above
//! the tools passes around (the pipeline makes it; sessions, trails,
//! metrics and the terminal read it).

use serde_json::Value;

use crate::graph::Graph;
use crate::tools::{CallShape, HintOut};
use crate::trails::carry;

/// What a tool call returns to the agent.
#[derive(Debug, Clone)]
pub struct Response {
    /// Whether the call failed (`isError`).
    pub is_error: bool,
    /// The terse text projection.
    pub text: String,
    /// The advice's state tag (`ok`/`error` when the policy faulted), however
    /// the policy rendered its text.
    pub state_tag: String,
    /// The result (or `{error}`) plus `hints`.
    pub structured: Value,
    /// The call as the graph read it (`None` when its arguments could not
    /// be read).
    pub shape: Option<CallShape>,
    /// The hints the response carries (also in `structured`).
    pub hints: Vec<HintOut>,
}

impl Response {
    /// The shapes of its actionable hints on `graph` (what the agent's next
    /// call is judged against). The trail a hint carries is not part of the
    /// question it asks.
    pub fn offered(&self, graph: &Graph) -> Vec<CallShape> {
        self.hints
            .iter()
            .filter(|h| h.actionable)
            .filter_map(|h| CallShape::of_args(graph, &h.tool, &carry::without_trail(&h.args)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_hint_on_a_trail_offers_the_call_it_asks() {
        let graph = Graph::sample();
        let id = graph.node(0).id();
        let hint = |args: Value| HintOut {
            tool: "describe".into(),
            args: args.as_object().cloned().unwrap_or_default(),
            actionable: true,
            reason: String::new(),
        };
        let response = |hints| Response {
            is_error: false,
            text: String::new(),
            state_tag: "ok".into(),
            structured: Value::Null,
            shape: None,
            hints,
        };
        let plain = response(vec![hint(json!({"id": id}))]).offered(&graph);
        let trailed = response(vec![hint(json!({"id": id, carry::TRAIL_ARG: carry::STAND_IN}))]).offered(&graph);
        assert_eq!(plain.len(), 1);
        assert_eq!(trailed, plain);
    }
}
