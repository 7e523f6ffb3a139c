//! Where the ids an agent may be shown come from ([`Known`]): what it sent
//! in this call, the tool's result, the validated hints, the session's
//! history, and the graph (to tell a split token that names a symbol);
//! each looked up lazily, a value's id-long hex runs read once
//! ([`HexRuns`]).

use std::cell::OnceCell;

use serde_json::{Map, Value};

use super::ID_LEN;
use crate::graph::Graph;

/// Where the ids an agent may be shown come from: what it sent in this
/// call, the tool's result, the validated hints, and the session's history.
/// Looked up lazily: a text that shows only the ids the agent sent costs
/// no serialisation.
#[derive(Default)]
pub struct Known<'a> {
    sent: Option<&'a Map<String, Value>>,
    result: Option<&'a Value>,
    hints: Vec<&'a Map<String, Value>>,
    history: Vec<&'a [String]>,
    graph: Option<&'a Graph>,
    sent_runs: OnceCell<HexRuns>,
    result_runs: OnceCell<HexRuns>,
}

impl std::fmt::Debug for Known<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Known").field("hints", &self.hints.len()).field("history", &self.history.len()).finish()
    }
}

impl<'a> Known<'a> {
    /// Ids in the arguments the agent sent in this call.
    pub fn sent(mut self, args: &'a Map<String, Value>) -> Self {
        self.sent = Some(args);
        self
    }

    /// Ids anywhere in the tool's result (or error).
    pub fn result(mut self, result: &'a Value) -> Self {
        self.result = Some(result);
        self
    }

    /// Ids in a validated hint's arguments.
    pub fn hint(mut self, args: &'a Map<String, Value>) -> Self {
        self.hints.push(args);
        self
    }

    /// Ids the session's history holds.
    pub fn history(mut self, ids: &'a [String]) -> Self {
        self.history.push(ids);
        self
    }

    /// The graph, to tell a split token that names a symbol.
    pub fn graph(mut self, graph: &'a Graph) -> Self {
        self.graph = Some(graph);
        self
    }

    /// Whether `hex` (lower-case hex digits) stands whole in something the
    /// agent may know.
    pub fn contains(&self, hex: &str) -> bool {
        let in_value = |v: &Value| value_has(v, hex);
        self.hints.iter().any(|h| h.values().any(in_value))
            || self.sent.is_some_and(|s| self.sent_runs.get_or_init(|| HexRuns::in_map(s)).has(hex))
            || self.history.iter().any(|ids| ids.iter().any(|id| id.eq_ignore_ascii_case(hex)))
            || self.result.is_some_and(|r| self.result_runs.get_or_init(|| HexRuns::in_value(r)).has(hex))
    }

    /// Whether `text` stands verbatim in a string the agent sent or the
    /// result holds (a signature or a doc line of the code itself, the
    /// agent's own words echoed), or is JSON equal to the result, what the
    /// agent sent, or a value in either: text the policy did not invent.
    pub fn quotes(&self, text: &str) -> bool {
        fn walk(v: &Value, text: &str) -> bool {
            match v {
                Value::String(s) => s.contains(text),
                Value::Array(items) => items.iter().any(|i| walk(i, text)),
                Value::Object(map) => map.values().any(|i| walk(i, text)),
                _ => false,
            }
        }
        // A JSON value written whole that is the result or a value in it
        // (the host's own fallback text shows the result): its data.
        fn holds(v: &Value, value: &Value) -> bool {
            v == value
                || match v {
                    Value::Array(items) => items.iter().any(|i| holds(i, value)),
                    Value::Object(map) => map.values().any(|i| holds(i, value)),
                    _ => false,
                }
        }
        let text = text.trim_end_matches('…').trim();
        let value = || serde_json::from_str::<Value>(text).ok().filter(|v| v.is_object() || v.is_array());
        !text.is_empty()
            && (self.sent.is_some_and(|s| s.values().any(|v| walk(v, text)))
                || self.result.is_some_and(|r| walk(r, text))
                || (text.starts_with(['{', '['])
                    && value().is_some_and(|value| {
                        self.result.is_some_and(|r| holds(r, &value))
                            || self
                                .sent
                                .is_some_and(|s| s.values().any(|v| holds(v, &value)) || value.as_object() == Some(s))
                    })))
    }

    pub(super) fn names_a_symbol(&self, hex: &str) -> bool {
        self.graph.is_some_and(|g| g.lookup(hex).is_some())
    }
}

fn value_has(v: &Value, hex: &str) -> bool {
    match v {
        Value::String(s) => s.len() >= hex.len() && has_token_any_case(s, hex),
        Value::Array(items) => items.iter().any(|i| value_has(i, hex)),
        Value::Object(map) => map.values().any(|i| value_has(i, hex)),
        _ => false,
    }
}

/// Whether `hex` stands in `haystack` (any case, without a lower-cased
/// copy) not glued to more hex digits (as [`HexRuns`] reads a text).
fn has_token_any_case(haystack: &str, hex: &str) -> bool {
    let h = haystack.as_bytes();
    h.windows(hex.len()).enumerate().any(|(at, w)| {
        w.eq_ignore_ascii_case(hex.as_bytes())
            && !h[..at].last().is_some_and(u8::is_ascii_hexdigit)
            && !h.get(at + hex.len()).is_some_and(u8::is_ascii_hexdigit)
    })
}

/// The id-long hex tokens of a JSON value (its strings and keys): their
/// maximal runs of [`ID_LEN`] or more hex digits, lower-case, sorted. An id
/// stands in the value when it is one of them, not glued to more hex digits
/// (an id is not carved out of a longer hex string). One walk of the value,
/// then a binary search per id: a result with many ids is not searched
/// once per id, nor written out as text.
#[derive(Debug, Default)]
struct HexRuns(Vec<String>);

impl HexRuns {
    fn in_value(v: &Value) -> Self {
        let mut runs = HexRuns::default();
        runs.walk(v);
        runs.sorted()
    }

    fn in_map(map: &Map<String, Value>) -> Self {
        let mut runs = HexRuns::default();
        runs.map(map);
        runs.sorted()
    }

    fn sorted(mut self) -> Self {
        self.0.sort_unstable();
        self
    }

    fn walk(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.text(s),
            Value::Array(items) => items.iter().for_each(|i| self.walk(i)),
            Value::Object(map) => self.map(map),
            _ => {}
        }
    }

    fn map(&mut self, map: &Map<String, Value>) {
        for (k, v) in map {
            self.text(k);
            self.walk(v);
        }
    }

    fn text(&mut self, s: &str) {
        let bytes = s.as_bytes();
        if bytes.len() < ID_LEN {
            return;
        }
        let mut at = 0;
        while at < bytes.len() {
            let len = bytes[at..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if len >= ID_LEN {
                self.0.push(s[at..at + len].to_ascii_lowercase());
            }
            at += len + 1;
        }
    }

    fn has(&self, hex: &str) -> bool {
        self.0.binary_search_by(|run| run.as_str().cmp(hex)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_holds_an_id_only_as_a_whole_token() {
        let id = "0123456789abcdef0123456789abcdef01234567";
        let upper = id.to_ascii_uppercase();
        let value = serde_json::json!({"a": [id], "b": format!("f{id}"), "c": &id[1..]});
        let runs = HexRuns::in_value(&value);
        assert!(runs.has(id));
        assert!(runs.has(&format!("f{id}")), "a longer run is a token of its own");
        let key = serde_json::json!({"x": {format!("k{upper}"): 1}});
        assert!(HexRuns::in_value(&key).has(id), "keys count, in any case");
        assert!(!runs.has(&id[1..]), "39 digits are no token");
        let glued = HexRuns::in_value(&serde_json::json!(format!("x{id}9 and 1{id}")));
        assert!(!glued.has(id), "an id is not carved out of a longer hex string");
        assert!(glued.has(&format!("{id}9")) && glued.has(&format!("1{id}")));
        assert!(!HexRuns::in_value(&Value::Null).has(id));
    }
}
