//! Trying a policy on real traffic without risk: the canary (stable session
//! buckets near the share, promoted or dropped by hand, by signal, or on its
//! own when it faults or leads nowhere) and the shadow (never delays or
//! changes a live answer; judged by what agents did next).

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};

use crate::common::agents::{
    Expect, TOKEN, actionable, agent, arm_row, assert_counts, http_call, live_row, post, temp_dir,
};
use crate::common::http::HttpServer;
use crate::common::{CHAOS_POLICY, Client, DEFAULT_POLICY, GARBAGE_POLICY, run_cli};

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
    assert!(!ok && out.contains(": 401 Unauthorized"), "no token: {out}");
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
    assert!(!ok && out.contains(": 409 Conflict") && out.contains("no canary"), "{out}");
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
