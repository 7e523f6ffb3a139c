//! Evidence that a policy helps: follow-through metrics (status resource and
//! Prometheus), the decision log, and replay against candidate policies —
//! driven by scripted agents over stdio and HTTP, whose follow-through the
//! tests compute on their own, from the hints they received.

use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use crate::common::agents::{TOKEN, agent, assert_counts, decisions, get, http_call, live_row, post, temp_dir};
use crate::common::http::HttpServer;
use crate::common::{
    CHAOS_POLICY, Client, DEFAULT_POLICY, GARBAGE_POLICY, free_port, hostile_calls, run_cli, sum_samples,
};

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
