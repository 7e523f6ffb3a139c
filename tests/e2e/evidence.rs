//! Evidence that a policy helps: follow-through metrics (status resource and
//! Prometheus), the decision log, and replay against candidate policies —
//! driven by scripted agents over stdio and HTTP, whose follow-through the
//! tests compute on their own, from the hints they received.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};

use crate::common::{CHAOS_POLICY, Client, DEFAULT_POLICY, GARBAGE_POLICY, hostile_calls, run_cli};
use crate::http::HttpServer;

const TOKEN: &str = "correct-horse-battery-staple-42";

/// What an agent's calls should have counted, computed by the test.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Expect {
    calls: u64,
    /// Calls right after a response with an actionable hint.
    after_hints: u64,
    exact: u64,
    adapted: u64,
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

fn ids_of(args: &Value) -> Vec<String> {
    let mut ids: Vec<String> = match (&args["id"], &args["ids"]) {
        (Value::String(id), _) => vec![id.to_lowercase()],
        (_, Value::Array(ids)) => ids.iter().filter_map(Value::as_str).map(str::to_lowercase).collect(),
        _ => Vec::new(),
    };
    ids.sort();
    ids.dedup();
    ids
}

fn actionable(structured: &Value) -> Vec<(String, Value)> {
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
async fn agent<F, Fut>(call: F, follow: bool, steps: usize) -> Expect
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

fn arm_row<'a>(status: &'a Value, arm: &str) -> &'a Value {
    let rows = status["follow_through"].as_array().unwrap_or_else(|| panic!("no follow_through: {status:#}"));
    rows.iter().find(|r| r["arm"] == arm).unwrap_or_else(|| panic!("no {arm} row: {status:#}"))
}

fn live_row(status: &Value) -> &Value {
    arm_row(status, "live")
}

fn assert_counts(row: &Value, e: Expect) {
    let ctx = format!("expected {e:?}, got {row:#}");
    assert_eq!(row["responses"], e.calls, "{ctx}");
    assert_eq!(row["calls_after_hints"], e.after_hints, "{ctx}");
    assert_eq!(row["followed"], e.exact, "{ctx}");
    assert_eq!(row["adapted"], e.adapted, "{ctx}");
    let rate = (e.exact + e.adapted) as f64 / e.after_hints as f64;
    assert!((row["follow_rate"].as_f64().unwrap_or(-1.0) - rate).abs() < 1e-3, "{ctx}");
}

/// Sums the samples of `metric` whose labels contain every `want`.
fn sum_samples(exposition: &str, metric: &str, want: &[&str]) -> f64 {
    exposition
        .lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && want.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    l.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"))
}

async fn get(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    (r.status().as_u16(), r.text().await.unwrap_or_default())
}

/// Waits until the decision logs in `dir` hold `n` lines; returns them.
fn decisions(dir: &Path, n: usize) -> Vec<Value> {
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

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("signpost-evidence-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn follow_through_of_a_scripted_agent_over_stdio_recorded_and_replayed() {
    let dir = temp_dir("stdio");
    let port = free_port().to_string();
    let dir_arg = dir.display().to_string();
    let client = Client::spawn(&["--record", &dir_arg, "--metrics", &port]).await;
    let c = &client;
    let follower = agent(|t, a| async move { c.call(&t, a).await.structured }, true, 14).await;
    assert!(follower.exact >= 10, "the follower took hints: {follower:?}");

    let status = client.status().await;
    assert_counts(live_row(&status), follower);
    assert_eq!(status["recording"]["dropped"], 0, "{status:#}");

    // Prometheus, from the stdio server's --metrics listener.
    let (code, text) = get(&format!("http://127.0.0.1:{port}/metrics")).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(sum_samples(&text, "signpost_hints_followed_total", &["follow=\"exact\""]), follower.exact as f64);
    assert_eq!(sum_samples(&text, "signpost_calls_after_hints_total", &[]), follower.after_hints as f64);
    assert_eq!(sum_samples(&text, "signpost_tool_call_duration_seconds_count", &["tool="]), follower.calls as f64);
    assert!(text.contains("signpost_policy_swaps_total{result=\"published\"} 0"), "{text}");
    assert!(text.trim_end().ends_with("# EOF"), "OpenMetrics text ends with # EOF: {text}");

    // The decision log: one line per call, follow-through as counted.
    let lines = decisions(&dir, follower.calls as usize);
    let exact = lines.iter().filter(|l| l["follow"] == "exact").count() as u64;
    assert_eq!(exact, follower.exact, "{lines:#?}");
    assert!(lines.iter().all(|l| l["policy"]["name"] == "signpost-default" && l["args"].is_object()), "{lines:#?}");
    client.close().await;

    // Replay: the default policy (exported, so it is a file) gives the hints
    // the live one gave, call for call, and suggests exactly what the agent
    // followed; the chaos policy (it offers no hints) ranks below it.
    let exported = dir.join("default.wasm");
    let (ok, out) = run_cli(&["policy", "export-default", &exported.display().to_string()]);
    assert!(ok, "{out}");
    let args = ["policy", "replay", &dir_arg, "--policy", DEFAULT_POLICY, "--policy", CHAOS_POLICY, "--json"];
    let (ok, out) = run_cli(&args);
    assert!(ok, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let (default, chaos) = (&report["policies"][0], &report["policies"][1]);
    assert_eq!(default["same_as_recorded"], json!([follower.calls, follower.calls]), "{report:#}");
    assert_eq!(default["suggested"], follower.exact, "{report:#}");
    assert_eq!(default["adapted"], follower.adapted, "{report:#}");
    assert_eq!(chaos["suggested"], 0, "{report:#}");
    assert!(default["suggested_rate"].as_f64() > chaos["suggested_rate"].as_f64(), "{report:#}");
    assert_eq!(report["diffs"][0]["calls"].as_array().map(Vec::len), Some(follower.calls as usize), "{report:#}");

    // The table for people says the same.
    let (ok, table) = run_cli(&["policy", "replay", &dir_arg, "--policy", DEFAULT_POLICY, "--policy", CHAOS_POLICY]);
    assert!(ok, "{table}");
    let default_line = table.lines().find(|l| l.starts_with("signpost-default@")).unwrap_or_default();
    assert!(default_line.ends_with(&format!("{0}/{0}", follower.calls)), "{table}");
    assert!(table.contains("hints differ on"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

async fn http_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, crate::common::Recorder>,
    tool: String,
    args: Value,
) -> Value {
    let params = CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default());
    client.call_tool(params).await.unwrap_or_else(|e| panic!("{e}")).structured_content.unwrap_or_default()
}

#[tokio::test]
async fn follow_through_of_two_agents_over_http_and_prometheus() {
    let dir = temp_dir("http");
    let server = HttpServer::start(&["--record", &dir.display().to_string()], &[]);
    let (a, b) = (server.client(None).await, server.client(None).await);
    let (a, b) = (a.unwrap_or_else(|e| panic!("{e}")), b.unwrap_or_else(|e| panic!("{e}")));
    let (follower, ignorer) =
        tokio::join!(agent(|t, x| http_call(&a, t, x), true, 12), agent(|t, x| http_call(&b, t, x), false, 12));
    assert!(follower.exact > ignorer.exact, "{follower:?} vs {ignorer:?}");
    let both = follower + ignorer;

    let status = a.read_resource(ReadResourceRequestParams::new("signpost://policy")).await;
    let status = status.unwrap_or_else(|e| panic!("{e}"));
    let text = match &status.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let status: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_counts(live_row(&status), both);
    let by_tool = &live_row(&status)["by_tool"];
    let per_tool: u64 =
        by_tool.as_object().into_iter().flatten().map(|(_, r)| r["responses"].as_u64().unwrap_or(0)).sum();
    assert_eq!(per_tool, both.calls, "{status:#}");

    let (code, text) = get(&format!("{}/metrics", server.base)).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(sum_samples(&text, "signpost_hints_followed_total", &["follow=\"exact\""]), both.exact as f64);
    assert_eq!(sum_samples(&text, "signpost_hints_followed_total", &["follow=\"adapted\""]), both.adapted as f64);
    assert_eq!(sum_samples(&text, "signpost_tool_calls_total", &[]), both.calls as f64);

    // Each session's records carry their own follow-through.
    let lines = decisions(&dir, both.calls as usize);
    let sessions: std::collections::BTreeSet<&str> = lines.iter().filter_map(|l| l["session"].as_str()).collect();
    assert_eq!(sessions.len(), 2, "{lines:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn metrics_can_be_turned_off_and_sit_behind_the_token() {
    let server = HttpServer::start(&["--no-metrics"], &[]);
    let (code, text) = get(&format!("{}/metrics", server.base)).await;
    assert_eq!(code, 404, "{text}");
    assert!(text.contains("--no-metrics"), "{text}");
    drop(server);

    let server = HttpServer::start(&["--canary", CHAOS_POLICY], &[("SIGNPOST_TOKEN", TOKEN)]);
    let (code, _) = get(&format!("{}/metrics", server.base)).await;
    assert_eq!(code, 401);
    let metrics = format!("{}/metrics", server.base);
    let r = reqwest::Client::new().get(&metrics).bearer_auth(TOKEN).send().await;
    assert_eq!(r.map(|r| r.status().as_u16()).ok(), Some(200));
    // A DNS-rebinding page reaches the port under another name: refused.
    let r = reqwest::Client::new().get(&metrics).bearer_auth(TOKEN).header("Host", "evil.example").send().await;
    assert_eq!(r.map(|r| r.status().as_u16()).ok(), Some(403));
    drop(server);

    // Without a token, the admin endpoints answer no one (signals still work).
    let server = HttpServer::start(&["--canary", CHAOS_POLICY], &[]);
    let (code, text) = post(&format!("{}/admin/canary/drop", server.base), None, None).await;
    assert!(code == 403 && text.contains("SIGUSR2"), "{code} {text}");
}

#[test]
fn recording_into_a_place_that_cannot_hold_logs_is_refused_at_start() {
    let file = temp_dir("not-a-dir");
    std::fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = run_cli(&["--record", &file.display().to_string()]);
    assert!(!ok && out.contains("--record") && out.contains("cannot"), "{out}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn replay_survives_hostile_logs_and_says_what_it_refused() {
    let dir = temp_dir("hostile");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    // No records at all: a clear error.
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "not json\n{\"v\": 1}\n\n").unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = run_cli(&["policy", "replay", &empty.display().to_string(), "--policy", DEFAULT_POLICY]);
    assert!(!ok && out.contains("no decision records") && out.contains("2 line(s) skipped"), "{out}");

    // Hostile arguments, unknown tools, garbage and truncated lines among
    // real records: the garbage is skipped, every record is replayed.
    let record = |seq: u64, tool: &str, args: Value| {
        json!({"v": 1, "at_ms": 0, "session": "s", "seq": seq, "tool": tool, "args": args, "outcome": "ok",
               "ids": [], "id_count": 0, "state_tag": "ok", "hints": [], "follow": null, "arm": "live",
               "policy": {"name": "x", "version": "1", "sha256": "0"}, "graph": "g", "latency_us": 0, "text_bytes": 0})
        .to_string()
    };
    let mut lines: Vec<String> =
        hostile_calls().into_iter().enumerate().map(|(i, (t, a))| record(i as u64 + 1, t, a)).collect();
    let n = lines.len();
    lines.push(record(900, "drop_tables", json!({})));
    lines.push(record(901, "describe", Value::Null));
    lines.push("{\"v\": 1, \"tool\": \"describe\"".to_owned());
    lines.push("\u{0}\u{1}binary".to_owned());
    let log = dir.join("decisions-hostile.jsonl");
    std::fs::write(&log, lines.join("\n")).unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = run_cli(&["policy", "replay", &log.display().to_string(), "--policy", DEFAULT_POLICY, "--json"]);
    assert!(ok, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["log"]["skipped_lines"], 3, "{report:#}");
    assert_eq!(report["policies"][0]["calls"], n, "{report:#}");
    assert_eq!(report["policies"][0]["skipped"], 1, "a record without args is left out: {report:#}");

    // A policy that fails the swap checks is reported as refused.
    let (ok, out) = run_cli(&[
        "policy",
        "replay",
        &log.display().to_string(),
        "--policy",
        DEFAULT_POLICY,
        "--policy",
        GARBAGE_POLICY,
    ]);
    assert!(!ok && out.contains("refused:"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

async fn status_over_http(client: &rmcp::service::RunningService<rmcp::RoleClient, crate::common::Recorder>) -> Value {
    let r = client.read_resource(ReadResourceRequestParams::new("signpost://policy")).await;
    let r = r.unwrap_or_else(|e| panic!("{e}"));
    match &r.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"))
        }
        other => panic!("{other:?}"),
    }
}

async fn post(url: &str, token: Option<&str>, origin: Option<&str>) -> (u16, String) {
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

/// Whether a describe answer came from the strict policy (its own layout)
/// rather than the default one (`[tag] summary`).
fn from_strict(structured_text: &str) -> bool {
    structured_text.contains("### Next steps")
}

async fn describe_text(
    client: &rmcp::service::RunningService<rmcp::RoleClient, crate::common::Recorder>,
    id: &str,
) -> String {
    let params = CallToolRequestParams::new("describe")
        .with_arguments(json!({"id": id}).as_object().cloned().unwrap_or_default());
    let r = client.call_tool(params).await.unwrap_or_else(|e| panic!("{e}"));
    r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

#[tokio::test]
async fn canary_sessions_are_stable_near_the_share_and_the_canary_can_be_promoted() {
    let args = ["--canary", crate::common::STRICT_POLICY, "--canary-share", "0.3"];
    let server = HttpServer::start(&args, &[("SIGNPOST_TOKEN", TOKEN)]);
    let token_file = temp_dir("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap_or_else(|e| panic!("{e}"));
    let token_arg = token_file.display().to_string();
    let first = server.client(Some(TOKEN)).await.unwrap_or_else(|e| panic!("{e}"));
    let r = http_call(&first, "resolve".into(), json!({"identifier": "OrderService"})).await;
    let id = r["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(id.len(), 40, "{r:#}");
    let sessions = 60;
    let mut on_canary = u64::from(from_strict(&describe_text(&first, &id).await));
    for _ in 1..sessions {
        let c = server.client(Some(TOKEN)).await.unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (describe_text(&c, &id).await, describe_text(&c, &id).await);
        assert_eq!(from_strict(&a), from_strict(&b), "a session stays with one policy:\n{a}\n---\n{b}");
        on_canary += u64::from(from_strict(&a));
        let _ = c.cancel().await;
    }
    // 30% of 60 sessions: 18 expected, 3.5 standard deviations either way.
    assert!((5..=31).contains(&on_canary), "{on_canary} of {sessions} sessions on the canary");
    let status = status_over_http(&first).await;
    assert_eq!(status["canary"]["sessions"], on_canary, "{status:#}");
    assert_eq!(status["live_sessions"], sessions - on_canary, "{status:#}");
    assert_eq!(status["canary"]["policy"]["name"], "strict", "{status:#}");

    // Without the token, from a browser, or to another Host: refused. The
    // CLI promotes; then there is nothing to drop.
    let promote = format!("{}/admin/canary/promote", server.base);
    assert_eq!(post(&promote, None, None).await.0, 401);
    assert_eq!(post(&promote, Some(TOKEN), Some("http://localhost:3000")).await.0, 403);
    let (ok, out) = run_cli(&["canary", "promote", "--url", &server.base]);
    assert!(!ok && out.contains("401"), "no token: {out}");
    let (ok, out) = run_cli(&["canary", "promote", "--url", &server.url, "--token-file", &token_arg]);
    assert!(ok && out.contains("promoted") && out.contains("live policy: strict"), "{out}");
    let status = status_over_http(&first).await;
    assert_eq!(status["active"]["name"], "strict", "{status:#}");
    assert!(status["canary"].is_null(), "{status:#}");
    assert_eq!(status["last_swap"]["result"], "canary_promoted", "{status:#}");
    assert_eq!(status["rollback_to"]["name"], "signpost-default", "{status:#}");
    let c = server.client(Some(TOKEN)).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(from_strict(&describe_text(&c, &id).await), "new sessions get the promoted policy");
    let (ok, out) = run_cli(&["canary", "drop", "--url", &server.base, "--token-file", &token_arg]);
    assert!(!ok && out.contains("409") && out.contains("no canary"), "{out}");
    let _ = std::fs::remove_file(&token_file);
}

#[tokio::test]
async fn a_canary_that_faults_or_leads_nowhere_is_dropped_on_its_own() {
    // Faults: the rollback rule.
    let server = HttpServer::start(&["--canary", CHAOS_POLICY, "--canary-share", "1"], &[]);
    let c = server.client(None).await.unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..4 {
        let r = http_call(&c, "resolve".into(), json!({"identifier": "chaos:panic"})).await;
        assert!(r.is_object(), "a faulting policy still answers: {r:#}");
    }
    let status = status_over_http(&c).await;
    assert!(status["canary"].is_null(), "{status:#}");
    assert_eq!(status["last_swap"]["result"], "canary_dropped", "{status:#}");
    assert!(status["last_swap"]["message"].as_str().is_some_and(|m| m.contains("faulted")), "{status:#}");
    let r = http_call(&c, "resolve".into(), json!({"identifier": "OrderService"})).await;
    assert!(!actionable(&r).is_empty(), "the live default policy serves again: {r:#}");
    drop(server);

    // Follow-through: agents that follow hints get none from the chaos
    // canary; once both arms served enough calls, the rule drops it.
    let server = HttpServer::start(&["--canary", CHAOS_POLICY, "--canary-share", "0.5"], &[]);
    let mut dropped = None;
    for _ in 0..80 {
        let c = server.client(None).await.unwrap_or_else(|e| panic!("{e}"));
        agent(|t, x| http_call(&c, t, x), true, 12).await;
        let status = status_over_http(&c).await;
        let _ = c.cancel().await;
        if status["canary"].is_null() {
            dropped = Some(status);
            break;
        }
    }
    let status = dropped.unwrap_or_else(|| panic!("the canary was never dropped"));
    let message = status["last_swap"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("took a hint 0.0% of the time") && message.contains("z = "), "{status:#}");
}

#[tokio::test]
async fn a_shadow_that_loops_or_traps_never_delays_or_changes_a_live_answer() {
    let shadowed = Client::spawn(&["--shadow", CHAOS_POLICY, "--policy-timeout-ms", "1000", "--no-watch"]).await;
    let plain = Client::spawn(&["--policy-timeout-ms", "1000", "--no-watch"]).await;
    let calls = [
        ("resolve", json!({"identifier": "chaos:loop"})),
        ("search", json!({"query": "chaos:loop order"})),
        ("resolve", json!({"identifier": "chaos:panic"})),
        ("resolve", json!({"identifier": "OrderService"})),
        ("find", json!({"name": "chaos:loop"})),
        ("search", json!({"query": "chaos:panic payment"})),
    ];
    for (tool, args) in &calls {
        let started = Instant::now();
        let a = shadowed.call(tool, args.clone()).await;
        // The shadow spins for its whole 1 s deadline on each of these
        // calls; the live answer never waits for it.
        assert!(started.elapsed() < Duration::from_millis(900), "{tool} {args}: {:?}", started.elapsed());
        let b = plain.call(tool, args.clone()).await;
        assert_eq!((a.text, a.structured), (b.text, b.structured), "{tool} {args}");
    }
    let status = shadowed
        .wait_status(Duration::from_secs(30), |s| {
            s["shadow"]["computed"].as_u64().unwrap_or(0) + s["shadow"]["dropped"].as_u64().unwrap_or(0) >= 6
        })
        .await;
    assert_eq!(status["shadow"]["policy"]["name"], "chaos", "{status:#}");
    assert!(status["shadow"]["faulted"].as_u64() >= Some(1), "{status:#}");
    assert_eq!(status["active"]["name"], "signpost-default", "{status:#}");
    assert_eq!(status["counters"]["traps"], 0, "the live policy never trapped: {status:#}");
}

/// A follower's 12 calls on a server with `shadow`; the status once the
/// shadow answered them all.
async fn follow_with_shadow(shadow: &str) -> (Expect, Value) {
    let client = Client::spawn(&["--shadow", shadow]).await;
    let c = &client;
    let follower = agent(|t, a| async move { c.call(&t, a).await.structured }, true, 12).await;
    // A shadow job is dropped, never queued without bound, when the worker
    // lags (a loaded machine): every call is computed or dropped.
    let settled = |s: &Value| {
        let n = |k: &str| s["shadow"][k].as_u64().unwrap_or(0);
        n("computed") + n("dropped") == follower.calls
    };
    let status = client.wait_status(Duration::from_secs(30), settled).await;
    client.close().await;
    assert!(settled(&status), "{status:#}");
    (follower, status)
}

#[tokio::test]
async fn a_shadow_is_judged_by_what_agents_did_next() {
    // The same policy as shadow: its hints are the live ones, so the agent's
    // next call is among them exactly as often.
    let (follower, status) = follow_with_shadow(DEFAULT_POLICY).await;
    let shadow = arm_row(&status, "shadow");
    assert_counts(live_row(&status), follower);
    if status["shadow"]["dropped"] == 0 {
        assert_counts(shadow, follower);
    }

    // A shadow that offers nothing: the agent never took one of its hints.
    let (_, status) = follow_with_shadow(CHAOS_POLICY).await;
    let shadow = arm_row(&status, "shadow");
    assert_eq!(shadow["responses"], status["shadow"]["computed"], "{status:#}");
    assert_eq!(shadow["followed"], 0, "{status:#}");
    assert_eq!(shadow["hinted_responses"], 0, "{status:#}");
}

#[test]
fn bad_canary_and_shadow_flags_are_refused_with_the_reason() {
    for (args, want) in [
        (vec!["--canary", GARBAGE_POLICY], "canary policy"),
        (vec!["--shadow", GARBAGE_POLICY], "shadow policy"),
        (vec!["--canary", "/nonexistent/canary.wasm"], "reading the canary policy"),
        (vec!["--canary", DEFAULT_POLICY, "--canary-share", "1.5"], "not a share from 0 to 1"),
        (vec!["--canary", DEFAULT_POLICY, "--canary-share", "NaN"], "not a share from 0 to 1"),
        (vec!["--canary-share", "0.5"], "--canary"),
        (vec!["--metrics", "nonsense"], "expected PORT or HOST:PORT"),
    ] {
        let (ok, out) = run_cli(&args);
        assert!(!ok && out.contains(want), "{args:?}: {out}");
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// Puts `from` at `to` the way operators should: write beside, rename over.
fn install(from: &str, to: &Path) {
    let partial = to.with_extension("partial");
    std::fs::copy(from, &partial).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(&partial, to).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn canary_and_shadow_files_are_watched_and_signals_promote_or_drop() {
    let dir = temp_dir("trial-files");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let (canary, shadow, live) = (dir.join("canary.wasm"), dir.join("shadow.wasm"), dir.join("policy.wasm"));
    install(crate::common::STRICT_POLICY, &canary);
    install(CHAOS_POLICY, &shadow);
    install(DEFAULT_POLICY, &live);
    let (c, s, l) = (canary.display().to_string(), shadow.display().to_string(), live.display().to_string());
    let client = Client::spawn(&["--policy", &l, "--canary", &c, "--canary-share", "1", "--shadow", &s]).await;
    let wait = Duration::from_secs(60);
    let r = client.call_any_policy("resolve", json!({"identifier": "OrderService"})).await;
    let id = r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert!(client.call_raw_text("describe", json!({"id": id})).await.contains("### Next steps"), "the canary serves");

    // SIGUSR2 drops the canary: the session goes back to the live policy.
    signal(client.pid(), "-USR2");
    let status = client.wait_status(wait, |st| st["canary"].is_null()).await;
    assert_eq!(status["last_swap"]["result"], "canary_dropped", "{status:#}");
    assert!(client.call_raw_text("describe", json!({"id": id})).await.starts_with("[record]"));

    // A new canary file becomes the canary, for sessions that start from
    // now on: this one stays with the live policy. SIGUSR1 promotes it.
    install(CHAOS_POLICY, &canary);
    let status = client.wait_status(wait, |st| st["canary"]["policy"]["name"] == "chaos").await;
    assert_eq!(status["canary"]["policy"]["name"], "chaos", "{status:#}");
    assert!(client.call_raw_text("describe", json!({"id": id})).await.starts_with("[record]"));
    signal(client.pid(), "-USR1");
    let status = client.wait_status(wait, |st| st["active"]["name"] == "chaos").await;
    assert_eq!(status["last_swap"]["result"], "canary_promoted", "{status:#}");
    assert!(status["canary"].is_null(), "{status:#}");
    // A SIGHUP reloads the three files, whose content was put in service
    // before: the promotion stands and no canary comes back.
    signal(client.pid(), "-HUP");
    let status = client.wait_status(wait, |st| st["last_swap"]["result"] == "unchanged").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = if status["last_swap"]["result"] == "unchanged" { client.status().await } else { status };
    assert_eq!(status["active"]["name"], "chaos", "{status:#}");
    assert!(status["canary"].is_null(), "{status:#}");
    assert_eq!(status["last_swap"]["result"], "unchanged", "{status:#}");

    // A new shadow file replaces the shadow; a broken one is refused and
    // the shadow keeps running.
    install(crate::common::STRICT_POLICY, &shadow);
    let status = client.wait_status(wait, |st| st["shadow"]["policy"]["name"] == "strict").await;
    assert_eq!(status["shadow"]["policy"]["name"], "strict", "{status:#}");
    std::fs::write(dir.join("junk.partial"), b"not wasm").unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(dir.join("junk.partial"), &shadow).unwrap_or_else(|e| panic!("{e}"));
    let status = client.wait_status(wait, |st| st["last_swap"]["result"] == "rejected").await;
    assert!(status["last_swap"]["message"].as_str().is_some_and(|m| m.starts_with("shadow: ")), "{status:#}");
    assert_eq!(status["shadow"]["policy"]["name"], "strict", "{status:#}");
    let swaps = &status["swaps"];
    let counts =
        ["canary_started", "canary_dropped", "canary_promoted", "shadow_started", "published"].map(|k| &swaps[k]);
    assert_eq!(counts, [2, 1, 1, 2, 1], "{status:#}");
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
