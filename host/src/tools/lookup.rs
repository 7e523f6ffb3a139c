//! `host.lookup` on the code graph: a 0.2.0 or later policy calls one of the five
//! tools (all read-only) while it runs, with strict id reading (no policy
//! in the loop) and the tool's own errors.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::{StrictIds, Tool, execute, parse};
use crate::graph::Graph;

/// Answers lookups from one graph (the one the call runs on).
pub struct GraphLookup {
    graph: Arc<Graph>,
}

impl GraphLookup {
    /// Lookups on `graph`.
    pub fn new(graph: Arc<Graph>) -> Self {
        GraphLookup { graph }
    }
}

impl crate::policy::Lookup for GraphLookup {
    fn lookup(&self, tool: &str, args: &str, _deadline: Instant) -> Result<String, String> {
        let tool = Tool::from_name(tool).ok_or_else(|| {
            format!("`{}` is none of this server's tools ({})", crate::clip(tool), Tool::NAMES.join(", "))
        })?;
        let args = match serde_json::from_str::<Value>(args) {
            Ok(Value::Object(map)) => map,
            _ => return Err(format!("{} takes a JSON object of arguments", tool.name())),
        };
        run(&self.graph, tool, &args).map(|v| v.to_string())
    }
}

fn run(graph: &Graph, tool: Tool, args: &Map<String, Value>) -> Result<Value, String> {
    let parsed = parse(graph, tool, args, &mut StrictIds).map_err(|e| e.message)?;
    execute(graph, parsed).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Lookup;

    #[test]
    fn lookups_read_the_graph_and_refuse_what_is_not_a_call() {
        let l = GraphLookup::new(Arc::new(Graph::sample()));
        let soon = Instant::now();
        let found = l.lookup("resolve", r#"{"identifier":"OrderController"}"#, soon).expect("resolves");
        assert!(found.contains("721797098567ca69c8d8f724033dc6ec8670d50b"), "{found}");
        assert!(l.lookup("drop_tables", "{}", soon).is_err_and(|e| e.contains("none of this server's tools")));
        assert!(l.lookup("resolve", "[1]", soon).is_err_and(|e| e.contains("JSON object")));
        assert!(l.lookup("describe", r#"{"id":"OrderController"}"#, soon).is_err(), "no coercion in a lookup");
    }
}
