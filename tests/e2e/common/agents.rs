//! Scripted agents that follow (or ignore) hints, the follow-through they
//! expect, and readers of what the server counted and recorded: shared by
//! the metrics and rollout suites.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

pub const TOKEN: &str = "correct-horse-battery-staple-42";

/// What an agent's calls should have counted, computed by the test.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Expect {
    pub calls: u64,
    /// Calls right after a response with an actionable hint.
    pub after_hints: u64,
    pub exact: u64,
    pub adapted: u64,
}

impl std::ops::Add for Expect {
    type Output = Expect;
    fn add(self, o: Expect) -> Expect {
        Expect {
            calls: self.calls + o.calls,
            after_hints: self.after_hints + o.after_hints,
            exact: self.exact + o.exact,
            adapted: self.adapted + o.adapted,
        }
    }
}

pub fn ids_of(args: &Value) -> Vec<String> {
    let mut ids: Vec<String> = match (&args["id"], &args["ids"]) {
        (Value::String(id), _) => vec![id.to_lowercase()],
        (_, Value::Array(ids)) => ids.iter().filter_map(Value::as_str).map(str::to_lowercase).collect(),
        _ => Vec::new(),
    };
    ids.sort();
    ids.dedup();
    ids
}

pub fn actionable(structured: &Value) -> Vec<(String, Value)> {
    structured["hints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["actionable"] == true)
        .map(|h| (h["tool"].as_str().unwrap_or_default().to_owned(), h["args"].clone()))
        .collect()
}

/// Drives one session: `follow` takes the first hint it has not taken yet
/// (the first one when it took them all), otherwise it runs its own script.
pub async fn agent<F, Fut>(call: F, follow: bool, steps: usize) -> Expect
where
    F: Fn(String, Value) -> Fut,
    Fut: Future<Output = Value>,
{
    let script = [
        ("resolve", json!({"identifier": "OrderService"})),
        ("search", json!({"query": "payment"})),
        ("find", json!({"kind": "class", "limit": 5})),
        ("resolve", json!({"identifier": "PaymentService"})),
        ("search", json!({"query": "order total"})),
    ];
    let mut expect = Expect::default();
    let mut offered: Vec<(String, Value)> = Vec::new();
    let mut taken: Vec<(String, Value)> = Vec::new();
    for step in 0..steps {
        let (tool, args) = match offered.iter().find(|h| !taken.contains(h)).or(offered.first()) {
            Some(hint) if follow => hint.clone(),
            _ => {
                let (t, a) = &script[step % script.len()];
                ((*t).to_owned(), a.clone())
            }
        };
        // The test's own reading of follow-through: the JSON of the call
        // against the JSON of the hints.
        if !offered.is_empty() {
            expect.after_hints += 1;
            if offered.iter().any(|(t, a)| *t == tool && *a == args) {
                expect.exact += 1;
            } else if !ids_of(&args).is_empty() && offered.iter().any(|(t, a)| *t == tool && ids_of(a) == ids_of(&args))
            {
                expect.adapted += 1;
            }
        }
        let structured = call(tool.clone(), args.clone()).await;
        expect.calls += 1;
        taken.push((tool, args));
        offered = actionable(&structured);
    }
    expect
}

pub fn arm_row<'a>(status: &'a Value, arm: &str) -> &'a Value {
    let rows = status["follow_through"].as_array().unwrap_or_else(|| panic!("no follow_through: {status:#}"));
    rows.iter().find(|r| r["arm"] == arm).unwrap_or_else(|| panic!("no {arm} row: {status:#}"))
}

pub fn live_row(status: &Value) -> &Value {
    arm_row(status, "live")
}

pub fn assert_counts(row: &Value, e: Expect) {
    let ctx = format!("expected {e:?}, got {row:#}");
    assert_eq!(row["responses"], e.calls, "{ctx}");
    assert_eq!(row["calls_after_hints"], e.after_hints, "{ctx}");
    assert_eq!(row["followed"], e.exact, "{ctx}");
    assert_eq!(row["adapted"], e.adapted, "{ctx}");
    let rate = (e.exact + e.adapted) as f64 / e.after_hints as f64;
    assert!((row["follow_rate"].as_f64().unwrap_or(-1.0) - rate).abs() < 1e-3, "{ctx}");
}

pub async fn get(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    (r.status().as_u16(), r.text().await.unwrap_or_default())
}

/// Waits until the decision logs in `dir` hold `n` lines; returns them.
pub fn decisions(dir: &Path, n: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let mut lines = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            lines.extend(text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))));
        }
        if lines.len() >= n || started.elapsed() > Duration::from_secs(10) {
            assert_eq!(lines.len(), n, "decision lines in {}", dir.display());
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("signpost-evidence-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

pub async fn http_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, crate::common::Recorder>,
    tool: String,
    args: Value,
) -> Value {
    let params = CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default());
    client.call_tool(params).await.unwrap_or_else(|e| panic!("{e}")).structured_content.unwrap_or_default()
}

pub async fn post(url: &str, token: Option<&str>, origin: Option<&str>) -> (u16, String) {
    let mut r = reqwest::Client::new().post(url);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    if let Some(o) = origin {
        r = r.header("Origin", o);
    }
    let r = r.send().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
    (r.status().as_u16(), r.text().await.unwrap_or_default())
}
