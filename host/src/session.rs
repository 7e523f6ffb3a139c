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

    /// The history as the policy sees it: shared, not copied. Drop it
    /// before the call is recorded, or recording copies the history to
    /// leave this one as it was.
    pub fn snapshot(&self) -> Arc<policy::Session> {
        self.history().view.clone()
    }

    /// What the host remembers beside the history the policy reads: the
    /// values a proxy's results showed (shared, as [`Self::snapshot`]
    /// is), and the calls held once.
    pub fn memory(&self) -> Memory {
        let h = self.history();
        Memory { values: h.values.clone(), held: h.held.iter().copied().collect() }
    }

    /// Records a finished call (and, for a proxy's call, the values its
    /// result showed, or that it was held).
    pub fn record(&self, tool: &str, response: &Response) {
        self.history().take(Step::of(tool, response));
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
    pub values: Arc<Vec<String>>,
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

/// All a finished call adds to a history: the call ([`PastCall`]), and for
/// a proxy's call that it was held, or the values its result showed. A
/// trail in a shared store is given the whole step, as a session's own
/// history is ([`History::take`]).
#[derive(Debug, Clone)]
pub struct Step {
    call: PastCall,
    held: Option<u64>,
    shown: Option<Vec<String>>,
}

impl Step {
    /// The step `response`, the answer to a call of `tool`, adds.
    pub fn of(tool: &str, response: &Response) -> Step {
        let result = response.backend.as_deref().and_then(|b| match b {
            rmcp::model::CallToolResponse::Complete(result) => Some(result),
            _ => None,
        });
        let shown = result.filter(|_| !response.is_error).map(shown_values);
        Step { call: PastCall::of(tool, response), held: response.held, shown }
    }
}

/// What one MCP session did so far, bounded in size.
///
/// The part a policy reads (`session`: the call count, the recent calls,
/// the ids seen) is kept as the policy is given it and shared with the
/// calls in flight ([`SessionContext::snapshot`] hands out a reference,
/// not a copy): a long session's history is hundreds of ids, and copying
/// them for every call cost as much as the rest of the host's work. A
/// call changes it in place once no call in flight still reads it.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "StoredHistory")]
pub struct History {
    view: Arc<policy::Session>,
    /// Values a proxy's results showed ([`Memory`]), shared likewise.
    values: Arc<Vec<String>>,
    /// Calls held once ([`Memory`]).
    held: VecDeque<u64>,
}

/// How a history is stored (in a shared trail store): the fields it had
/// before the policy's part was shared, so every build reads every other's.
#[derive(Deserialize)]
struct StoredHistory {
    call_count: u32,
    recent: Vec<PastCall>,
    seen: Vec<String>,
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    held: VecDeque<u64>,
}

impl From<StoredHistory> for History {
    fn from(s: StoredHistory) -> History {
        let recent = s.recent.into_iter().map(|c| policy::PastCall { tool: c.tool, ok: c.ok, ids: c.ids }).collect();
        let view = policy::Session { call_count: s.call_count, recent, seen_ids: s.seen };
        History { view: Arc::new(view), values: Arc::new(s.values), held: s.held }
    }
}

impl Serialize for History {
    /// As [`StoredHistory`] reads it.
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Call<'a> {
            tool: &'a str,
            ok: bool,
            ids: &'a [String],
        }
        #[derive(Serialize)]
        struct Stored<'a> {
            call_count: u32,
            recent: Vec<Call<'a>>,
            seen: &'a [String],
            values: &'a [String],
            held: &'a VecDeque<u64>,
        }
        let view = &*self.view;
        let recent = view.recent.iter().map(|c| Call { tool: &c.tool, ok: c.ok, ids: &c.ids }).collect();
        let (values, held) = (&self.values, &self.held);
        Stored { call_count: view.call_count, recent, seen: &view.seen_ids, values, held }.serialize(out)
    }
}

impl Default for History {
    fn default() -> History {
        let view = policy::Session { call_count: 0, recent: Vec::new(), seen_ids: Vec::new() };
        History { view: Arc::new(view), values: Arc::default(), held: VecDeque::new() }
    }
}

impl PartialEq for History {
    fn eq(&self, other: &History) -> bool {
        let (a, b) = (&*self.view, &*other.view);
        let same_call = |x: &policy::PastCall, y: &policy::PastCall| x.tool == y.tool && x.ok == y.ok && x.ids == y.ids;
        a.call_count == b.call_count
            && a.seen_ids == b.seen_ids
            && a.recent.len() == b.recent.len()
            && a.recent.iter().zip(&b.recent).all(|(x, y)| same_call(x, y))
            && self.values == other.values
            && self.held == other.held
    }
}

impl History {
    /// Calls made so far.
    pub fn call_count(&self) -> u32 {
        self.view.call_count
    }

    /// Most recent calls, oldest first.
    pub fn recent(&self) -> impl Iterator<Item = &policy::PastCall> {
        self.view.recent.iter()
    }

    /// Ids seen, most recent last.
    pub fn seen(&self) -> impl Iterator<Item = &String> {
        self.view.seen_ids.iter()
    }

    /// Adds a finished call's whole step: the call, and whether it was held
    /// or what its result showed.
    pub fn take(&mut self, step: Step) {
        let Step { call, held, shown } = step;
        self.apply(call);
        if let Some(digest) = held {
            self.hold(digest);
        }
        if let Some(values) = shown {
            self.shown(values);
        }
    }

    /// Records a finished call.
    pub fn apply(&mut self, call: PastCall) {
        let PastCall { tool, ok, mut ids } = call;
        ids.retain(|id| is_id(id));
        ids.truncate(MAX_IDS_PER_CALL);
        let view = Arc::make_mut(&mut self.view);
        view.call_count = view.call_count.saturating_add(1);
        see(&mut view.seen_ids, &ids);
        if view.recent.len() >= MAX_RECENT {
            view.recent.drain(..=view.recent.len() - MAX_RECENT);
        }
        view.recent.push(policy::PastCall { tool, ok, ids });
    }

    /// Records ids as seen, most recent last, without a call.
    pub fn saw(&mut self, ids: &[String]) {
        see(&mut Arc::make_mut(&mut self.view).seen_ids, ids);
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
        let values = values.into_iter().take(MAX_VALUES_PER_CALL);
        let fit = values.filter(|v| !v.is_empty() && v.len() <= MAX_VALUE_BYTES);
        remember(Arc::make_mut(&mut self.values), fit, MAX_VALUES);
    }

    /// Within this build's bounds, whatever it was read from (a shared
    /// store another build wrote): the newest calls and ids kept, and only
    /// what reads as an id.
    pub fn bounded(mut self) -> History {
        let view = Arc::make_mut(&mut self.view);
        let excess = view.recent.len().saturating_sub(MAX_RECENT);
        view.recent.drain(..excess);
        let excess = view.seen_ids.len().saturating_sub(MAX_SEEN);
        view.seen_ids.drain(..excess);
        view.seen_ids.retain(|id| is_id(id));
        for call in &mut view.recent {
            call.ids.retain(|id| is_id(id));
            call.ids.truncate(MAX_IDS_PER_CALL);
            call.tool.truncate(call.tool.floor_char_boundary(64));
        }
        let values = Arc::make_mut(&mut self.values);
        values.retain(|v| !v.is_empty() && v.len() <= MAX_VALUE_BYTES);
        values.drain(..values.len().saturating_sub(MAX_VALUES));
        while self.held.len() > MAX_HELD {
            self.held.pop_front();
        }
        self
    }
}

/// Adds `ids` (the first [`MAX_IDS_PER_CALL`] that read as ids) to `seen`
/// ([`remember`], at most [`MAX_SEEN`]).
fn see(seen: &mut Vec<String>, ids: &[String]) {
    remember(seen, ids.iter().filter(|id| is_id(id)).take(MAX_IDS_PER_CALL), MAX_SEEN);
}

/// Adds `values` to `kept`, most recent last: one there already moves to
/// the end (copied only when new); the oldest go past `max`.
fn remember<T: AsRef<str> + Into<String>>(kept: &mut Vec<String>, values: impl IntoIterator<Item = T>, max: usize) {
    for value in values {
        match kept.iter().position(|k| k == value.as_ref()) {
            Some(pos) => kept[pos..].rotate_left(1),
            None => kept.push(value.into()),
        }
    }
    let excess = kept.len().saturating_sub(max);
    kept.drain(..excess);
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
    fn an_id_seen_again_moves_to_the_end_and_the_oldest_go() {
        let id = |i: usize| format!("{i:040x}");
        let mut h = History::default();
        let all: Vec<String> = (0..MAX_SEEN).map(id).collect();
        all.chunks(MAX_IDS_PER_CALL).for_each(|ids| h.saw(ids));
        // 0 seen again, then one new id: 1 (now the oldest) goes, not 0.
        h.saw(&[id(0), id(MAX_SEEN)]);
        let seen: Vec<&String> = h.seen().collect();
        assert_eq!(seen.len(), MAX_SEEN);
        assert_eq!(seen[0], &id(2));
        assert_eq!(seen[MAX_SEEN - 2..], [&id(0), &id(MAX_SEEN)]);
        // Not ids, and past the most one call adds, are not taken.
        h.saw(&["not an id".to_owned()]);
        h.saw(&(1000..1000 + 2 * MAX_IDS_PER_CALL).map(id).collect::<Vec<_>>());
        assert_eq!(h.seen().last(), Some(&id(1000 + MAX_IDS_PER_CALL - 1)));
        assert!(!h.seen().any(|s| s == "not an id"));
    }

    #[test]
    fn a_snapshot_is_shared_and_keeps_what_it_saw() {
        let ctx = SessionContext::new();
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        ctx.saw(std::slice::from_ref(&a));
        let before = ctx.snapshot();
        // A call in flight reads the history it started with, whatever is
        // recorded meanwhile.
        ctx.saw(std::slice::from_ref(&b));
        assert_eq!(before.seen_ids, std::slice::from_ref(&a));
        assert_eq!(ctx.snapshot().seen_ids, [a.clone(), b.clone()]);
        // With no call reading it, the history changes in place: no copy.
        drop(before);
        let at = Arc::as_ptr(&ctx.snapshot());
        ctx.saw(std::slice::from_ref(&a));
        let after = ctx.snapshot();
        assert_eq!(Arc::as_ptr(&after), at);
        assert_eq!(after.seen_ids, [b, a]);
    }

    #[test]
    fn a_history_is_stored_as_every_build_reads_it() {
        let mut h = History::default();
        let id = "c".repeat(40);
        h.apply(PastCall { tool: "describe".into(), ok: true, ids: vec![id.clone(), "no".into()] });
        h.shown(vec!["Dave".into()]);
        h.hold(7);
        let stored = serde_json::to_value(&h).expect("serialises");
        let expected = json!({
            "call_count": 1,
            "recent": [{"tool": "describe", "ok": true, "ids": [id]}],
            "seen": [id],
            "values": ["Dave"],
            "held": [7],
        });
        assert_eq!(stored, expected);
        assert_eq!(serde_json::from_value::<History>(stored).expect("reads back"), h);
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
