//! Per-session context: which policy instance serves the session (its
//! [`SessionKey`]), and a bounded summary of the calls it made, which the
//! policy reads to suggest prerequisites.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::graph::is_id;
use crate::metrics::Offered;
use crate::policy::{self, SessionKey};
use crate::response::Response;

/// One session (one agent): its key and its history.
#[derive(Debug)]
pub struct SessionContext {
    key: SessionKey,
    handle: Option<String>,
    history: Mutex<History>,
    offered: Arc<Mutex<Offered>>,
    shadow_offered: Arc<Mutex<Offered>>,
    calls: AtomicU64,
    canary: OnceLock<Option<u64>>,
}

impl Default for SessionContext {
    fn default() -> Self {
        SessionContext::new()
    }
}

impl SessionContext {
    /// A new session with a key never used before and an empty history.
    pub fn new() -> Self {
        SessionContext::with_handle(None)
    }

    /// A new session that is the trail `handle` ([`crate::trails`]): the
    /// hints of its responses carry it. Its policy instances are pooled
    /// under `key`, which the trail's id gives, so every replica keys (and
    /// buckets, for a canary) one trail alike.
    pub fn for_trail(handle: String, key: SessionKey) -> Self {
        SessionContext { key, ..SessionContext::with_handle(Some(handle)) }
    }

    fn with_handle(handle: Option<String>) -> Self {
        SessionContext {
            key: SessionKey::fresh(),
            handle,
            history: Mutex::new(History::default()),
            offered: Arc::default(),
            shadow_offered: Arc::default(),
            calls: AtomicU64::new(0),
            canary: OnceLock::new(),
        }
    }

    /// The handle of the trail it is, if it is one.
    pub fn handle(&self) -> Option<&str> {
        self.handle.as_deref()
    }

    /// What its last response offered, for follow-through metrics.
    pub fn offered(&self) -> &Mutex<Offered> {
        &self.offered
    }

    /// The canary this session is pinned to (`None`: the live policy),
    /// set at its first call.
    pub fn canary_generation(&self) -> &OnceLock<Option<u64>> {
        &self.canary
    }

    /// What the shadow policy would have offered last.
    pub fn shadow_offered(&self) -> &Arc<Mutex<Offered>> {
        &self.shadow_offered
    }

    /// Numbers its calls: 1 for the first call this is asked about, then 2…
    pub fn seq(&self) -> u64 {
        self.calls.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The key its policy instances are pooled under.
    pub fn key(&self) -> SessionKey {
        self.key
    }

    fn history(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The history as the policy sees it.
    pub fn snapshot(&self) -> policy::Session {
        let h = self.history();
        policy::Session {
            call_count: h.call_count(),
            recent: h
                .recent()
                .map(|c| policy::PastCall { tool: c.tool.clone(), ok: c.ok, ids: c.ids.clone() })
                .collect(),
            seen_ids: h.seen().cloned().collect(),
        }
    }

    /// What the host remembers beside the history the policy reads: the
    /// values a proxy's results showed, and the calls held once.
    pub fn memory(&self) -> Memory {
        let h = self.history();
        Memory { values: h.values.iter().cloned().collect(), held: h.held.iter().copied().collect() }
    }

    /// Records a finished call (and, for a proxy's call, the values its
    /// result showed, or that it was held).
    pub fn record(&self, tool: &str, response: &Response) {
        let call = PastCall::of(tool, response);
        let result = response.backend.as_deref().and_then(|b| match b {
            rmcp::model::CallToolResponse::Complete(result) => Some(result),
            _ => None,
        });
        let shown = result.filter(|_| !response.is_error).map(shown_values);
        let mut h = self.history();
        h.apply(call);
        if let Some(digest) = response.held {
            h.hold(digest);
        }
        if let Some(values) = shown {
            h.shown(values);
        }
    }

    /// Records ids the agent came by outside this session as seen (a
    /// terminal command's ids were read off an earlier command's output).
    pub fn saw(&self, ids: &[String]) {
        self.history().saw(ids);
    }

    /// Takes the history and call count a shared trail store holds
    /// ([`crate::trails`]), in place of this replica's.
    pub fn restore(&self, history: &History, calls: u64) {
        *self.history() = history.clone();
        self.calls.store(calls, Ordering::Relaxed);
    }
}

/// Most recent calls remembered.
pub const MAX_RECENT: usize = 16;
/// Most ids remembered.
pub const MAX_SEEN: usize = 512;
/// Most ids taken from one result.
pub const MAX_IDS_PER_CALL: usize = 64;
/// Most values of a proxy's results remembered.
pub const MAX_VALUES: usize = 512;
/// Most values taken from one result.
pub const MAX_VALUES_PER_CALL: usize = 128;
/// Longest value remembered, in bytes (longer ones are no names).
pub const MAX_VALUE_BYTES: usize = 200;
/// Most held calls remembered (one forgotten may be held once more).
pub const MAX_HELD: usize = 64;

/// What the host remembers of a session for a proxy's calls: the values
/// its results showed (what a hint's references may carry) and the calls
/// held once (which go through when sent again).
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// Values shown, most recent last.
    pub values: Vec<String>,
    /// Digests of the calls held ([`call_digest`]).
    pub held: Vec<u64>,
}

/// One remembered call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastCall {
    /// Tool name.
    pub tool: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Ids of the records it returned.
    pub ids: Vec<String>,
}

impl PastCall {
    /// A finished call as its history remembers it.
    pub fn of(tool: &str, response: &Response) -> PastCall {
        let ids = if response.is_error { Vec::new() } else { result_ids(&response.structured) };
        PastCall { tool: tool.to_owned(), ok: !response.is_error, ids }
    }
}

/// What one MCP session did so far, bounded in size.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    call_count: u32,
    recent: VecDeque<PastCall>,
    seen: VecDeque<String>,
    /// Values a proxy's results showed ([`Memory`]).
    #[serde(default)]
    values: VecDeque<String>,
    /// Calls held once ([`Memory`]).
    #[serde(default)]
    held: VecDeque<u64>,
}

impl History {
    /// Calls made so far.
    pub fn call_count(&self) -> u32 {
        self.call_count
    }

    /// Most recent calls, oldest first.
    pub fn recent(&self) -> impl Iterator<Item = &PastCall> {
        self.recent.iter()
    }

    /// Ids seen, most recent last.
    pub fn seen(&self) -> impl Iterator<Item = &String> {
        self.seen.iter()
    }

    /// Records a finished call.
    pub fn apply(&mut self, call: PastCall) {
        self.call_count = self.call_count.saturating_add(1);
        let PastCall { tool, ok, mut ids } = call;
        ids.retain(|id| is_id(id));
        ids.truncate(MAX_IDS_PER_CALL);
        self.saw(&ids);
        if self.recent.len() == MAX_RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(PastCall { tool, ok, ids });
    }

    /// Records ids as seen, most recent last, without a call.
    pub fn saw(&mut self, ids: &[String]) {
        for id in ids.iter().filter(|id| is_id(id)).take(MAX_IDS_PER_CALL) {
            if let Some(pos) = self.seen.iter().position(|s| s == id) {
                self.seen.remove(pos);
            }
            if self.seen.len() == MAX_SEEN {
                self.seen.pop_front();
            }
            self.seen.push_back(id.clone());
        }
    }

    /// Remembers that the call `digest` was held once.
    pub fn hold(&mut self, digest: u64) {
        if !self.held.contains(&digest) {
            if self.held.len() == MAX_HELD {
                self.held.pop_front();
            }
            self.held.push_back(digest);
        }
    }

    /// Remembers values a result showed, most recent last.
    pub fn shown(&mut self, values: Vec<String>) {
        for value in values.into_iter().take(MAX_VALUES_PER_CALL) {
            if value.is_empty() || value.len() > MAX_VALUE_BYTES {
                continue;
            }
            if let Some(pos) = self.values.iter().position(|v| *v == value) {
                self.values.remove(pos);
            }
            if self.values.len() == MAX_VALUES {
                self.values.pop_front();
            }
            self.values.push_back(value);
        }
    }

    /// Within this build's bounds, whatever it was read from (a shared
    /// store another build wrote): the newest calls and ids kept, and only
    /// what reads as an id.
    pub fn bounded(mut self) -> History {
        while self.recent.len() > MAX_RECENT {
            self.recent.pop_front();
        }
        while self.seen.len() > MAX_SEEN {
            self.seen.pop_front();
        }
        self.seen.retain(|id| is_id(id));
        self.values.retain(|v| !v.is_empty() && v.len() <= MAX_VALUE_BYTES);
        while self.values.len() > MAX_VALUES {
            self.values.pop_front();
        }
        while self.held.len() > MAX_HELD {
            self.held.pop_front();
        }
        for call in &mut self.recent {
            call.ids.retain(|id| is_id(id));
            call.ids.truncate(MAX_IDS_PER_CALL);
            call.tool.truncate(call.tool.floor_char_boundary(64));
        }
        self
    }
}

/// Ids of the records in a tool result (any `id` field holding an id),
/// in document order, at most [`MAX_IDS_PER_CALL`].
pub fn result_ids(result: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>, depth: u8) {
        if out.len() >= MAX_IDS_PER_CALL || depth > 6 {
            return;
        }
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(s)
                            if (k == "id" || k == "origin")
                                && is_id(s)
                                && !out.contains(s)
                                && out.len() < MAX_IDS_PER_CALL =>
                        {
                            out.push(s.clone());
                        }
                        Value::Object(_) | Value::Array(_) if k != "hints" => walk(v, out, depth + 1),
                        _ => {}
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(result, &mut out, 0);
    out
}

/// The values a proxy's result shows, as a later hint may carry them: the
/// strings of its structured content, and of each text block, the strings
/// of the JSON it holds or else its words; at most
/// [`MAX_VALUES_PER_CALL`], each at most [`MAX_VALUE_BYTES`].
pub fn shown_values(result: &rmcp::model::CallToolResult) -> Vec<String> {
    fn strings(v: &Value, out: &mut Vec<String>, depth: u8) {
        if out.len() >= MAX_VALUES_PER_CALL || depth > 16 {
            return;
        }
        match v {
            Value::String(s) if !s.is_empty() && s.len() <= MAX_VALUE_BYTES => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| strings(i, out, depth + 1)),
            Value::Object(map) => map.values().for_each(|i| strings(i, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(structured) = &result.structured_content {
        strings(structured, &mut out, 0);
    }
    for text in result.content.iter().filter_map(|c| c.as_text()) {
        match serde_json::from_str::<Value>(&text.text) {
            Ok(json @ (Value::Object(_) | Value::Array(_))) => strings(&json, &mut out, 0),
            _ => out.extend(words(&text.text).map(str::to_owned)),
        }
    }
    out.truncate(MAX_VALUES_PER_CALL);
    out
}

/// The words of plain text as names may stand in it: split at white space,
/// quotes and brackets, trailing punctuation off.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;".contains(c))
        .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
        .filter(|w| !w.is_empty() && w.len() <= MAX_VALUE_BYTES)
}

/// A call's identity for holding it once: the tool and its arguments, with
/// object members in sorted order (the same call sent with its members in
/// another order is the same call). Stable across processes and replicas.
pub fn call_digest(tool: &str, args: &serde_json::Map<String, Value>) -> u64 {
    use sha2::{Digest, Sha256};
    let text = crate::tools::canonical_json(args);
    let digest = Sha256::new().chain_update(tool.as_bytes()).chain_update([0]).chain_update(text.as_bytes()).finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn history_is_bounded() {
        let mut h = History::default();
        for i in 0..1000u32 {
            let id = format!("{i:040x}");
            h.apply(PastCall { tool: "describe".into(), ok: true, ids: result_ids(&json!({"record": {"id": id}})) });
        }
        assert_eq!(h.call_count(), 1000);
        assert_eq!(h.recent().count(), MAX_RECENT);
        assert_eq!(h.seen().count(), MAX_SEEN);
        assert_eq!(h.seen().last().map(String::as_str), Some(format!("{:040x}", 999).as_str()));
    }

    #[test]
    fn ids_come_from_records_not_hints() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let r = json!({"results": [{"origin": a, "other": {"id": b}}], "hints": [{"args": {"id": "c".repeat(40)}}]});
        assert_eq!(result_ids(&r), vec![a, b]);
    }

    #[test]
    fn a_call_is_the_same_whatever_the_order_of_its_members() {
        let a = json!({"entities": [{"name": "Alice", "entityType": "person"}], "x": 1});
        let b = json!({"x": 1, "entities": [{"entityType": "person", "name": "Alice"}]});
        let c = json!({"x": 1, "entities": [{"entityType": "person", "name": "Alicia"}]});
        let digest = |v: &Value| call_digest("create_entities", v.as_object().expect("object"));
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert_ne!(digest(&a), call_digest("delete_entities", a.as_object().expect("object")));
    }

    #[test]
    fn values_shown_are_bounded_and_held_calls_remembered() {
        let mut h = History::default();
        h.shown((0..2000).map(|i| format!("v{i}")).chain(["x".repeat(MAX_VALUE_BYTES + 1)]).collect());
        assert_eq!(h.values.len(), MAX_VALUES_PER_CALL);
        for i in 0..10 {
            h.shown((0..MAX_VALUES_PER_CALL).map(|j| format!("w{i}.{j}")).collect());
        }
        assert_eq!(h.values.len(), MAX_VALUES);
        for d in 0..(MAX_HELD as u64 + 5) {
            h.hold(d);
        }
        assert_eq!(h.held.len(), MAX_HELD);
        assert!(h.held.contains(&(MAX_HELD as u64 + 4)) && !h.held.contains(&0));
        let text = serde_json::to_string(&h).expect("serialises");
        let back: History = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, h);
        // A history an older build stored (no values, no held calls) still reads.
        let old: History = serde_json::from_str(r#"{"call_count":1,"recent":[],"seen":[]}"#).expect("reads");
        assert_eq!(old.call_count(), 1);
    }

    #[test]
    fn words_of_plain_text() {
        let w: Vec<&str> = words("On branch main. Changes: modified:   src/main.rs (\"quoted\")").collect();
        assert_eq!(w, ["On", "branch", "main", "Changes", "modified", "src/main.rs", "quoted"]);
    }
}
