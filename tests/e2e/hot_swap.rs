//! Hot swap through the real binary: file writes, atomic renames and SIGHUP;
//! bad candidates that leave the previous policy serving; automatic rollback;
//! the compiled-policy cache; and many swaps under concurrent load.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::common::swap::{Scratch, WAIT, active, last, read};
use crate::common::{
    CHAOS_POLICY, CHAOS_V3_POLICY, Client, DEFAULT_POLICY, GARBAGE_POLICY, OUTCOME_BUGS_POLICY, STRICT_POLICY,
};

#[tokio::test]
#[allow(deprecated)] // `resources/subscribe`: the legacy protocol's, which agents still speak
async fn swaps_on_file_write_rename_and_sighup() {
    let s = Scratch::new("swap-triggers");
    s.install(&read(DEFAULT_POLICY));
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    let ctrl = client.id_of("OrderController").await;
    assert_eq!(active(&client.status().await), "signpost-default");
    let before = client.call("describe", json!({"id": ctrl})).await;
    assert!(before.text.starts_with("[record]"), "{}", before.text);
    // The policy's status announces its updates to a session subscribed.
    let subscribe = rmcp::model::SubscribeRequestParams::new("signpost://policy");
    client.service().subscribe(subscribe).await.expect("subscribing to the policy's status");
    assert!(client.notices().is_empty(), "{:?}", client.notices());

    // A write in place.
    s.overwrite(&read(STRICT_POLICY));
    let status = client.wait_status(WAIT, |st| active(st) == "strict").await;
    assert_eq!(active(&status), "strict", "{status:#}");
    assert_eq!(last(&status), "published");
    let mut updated = false;
    for _ in 0..40 {
        updated = client.notices().contains(&json!({"updated": "signpost://policy"}));
        if updated {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(updated, "the swap updated the subscribed status: {:?}", client.notices());
    let after = client.call_raw_text("describe", json!({"id": ctrl})).await;
    assert!(after.contains("### Next steps") && after.contains("strict: "), "hints changed on the next call:\n{after}");

    // An atomic rename back: served from the cache this time.
    s.install(&read(DEFAULT_POLICY));
    let status = client.wait_status(WAIT, |st| active(st) == "signpost-default").await;
    assert_eq!(active(&status), "signpost-default", "{status:#}");
    assert_eq!(status["last_swap"]["from_cache"], true, "a known version skips compilation: {status:#}");
    let logs = client.logs();
    assert!(
        logs.iter().any(|l| l["logger"] == "signpost.policy" && l["data"]["result"] == "published"),
        "swaps are sent as logging notifications: {logs:#?}"
    );

    // SIGHUP, with the watcher off.
    let s2 = Scratch::new("swap-sighup");
    s2.install(&read(DEFAULT_POLICY));
    let quiet = Client::spawn(&["--policy", &s2.policy_arg(), "--no-watch", "--no-cache"]).await;
    s2.install(&read(STRICT_POLICY));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(active(&quiet.status().await), "signpost-default", "no watcher: nothing happens on its own");
    let ok = std::process::Command::new("kill").args(["-HUP", &quiet.pid().to_string()]).status();
    assert!(ok.is_ok_and(|s| s.success()));
    let status = quiet.wait_status(WAIT, |st| active(st) == "strict").await;
    assert_eq!(active(&status), "strict", "{status:#}");
    let r = quiet.call_raw_text("resolve", json!({"identifier": "OrderService"})).await;
    assert!(r.starts_with("**ok**"), "{r}");
}

#[tokio::test]
async fn bad_candidates_leave_the_previous_policy_serving() {
    let s = Scratch::new("swap-bad");
    s.install(&read(DEFAULT_POLICY));
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--no-cache"]).await;
    let sha = client.status().await["active"]["sha256"].as_str().unwrap_or("").to_owned();
    let empty_component = wat::parse_str("(component)").unwrap_or_default();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("corrupt", b"\x00asm\x0d\x00\x01\x00 truncated".to_vec(), "not a valid WebAssembly component"),
        ("incompatible", empty_component, "implements no policy interface this host serves"),
        ("fails self-check", read(GARBAGE_POLICY), "self-check failed"),
        // Fine on every path but two: search finding nothing, neighbors
        // finding nothing.
        ("a bug on one outcome path", read(OUTCOME_BUGS_POLICY), "search finds nothing"),
    ];
    for (label, bytes, needle) in cases {
        s.install(&bytes);
        let status = client
            .wait_status(WAIT, |st| {
                last(st) == "rejected" && st["last_swap"]["message"].as_str().is_some_and(|m| m.contains(needle))
            })
            .await;
        assert_eq!(last(&status), "rejected", "{label}: {status:#}");
        assert!(status["last_swap"]["message"].as_str().unwrap_or("").contains(needle), "{label}: {status:#}");
        assert_eq!(status["active"]["sha256"], sha.as_str(), "{label}: the previous policy keeps serving");
        let r = client.call("resolve", json!({"identifier": "OrderService"})).await;
        assert_eq!(r.tag(), "resolved", "{label}: still answering with the default policy");
    }
    let rejected = client.status().await["swaps"]["rejected"].as_u64().unwrap_or(0);
    assert!(rejected >= 4, "rejections are counted");
    let logs = client.logs();
    assert!(logs.iter().any(|l| l["level"] == "warning" && l["data"]["result"] == "rejected"), "{logs:#?}");
}

/// A build that faults too often is rolled back, to the last build that
/// served without a fault: one that faulted once (a bug on some path) is
/// passed over. Every message names the builds by digest and says what a
/// restart would load.
#[tokio::test]
async fn a_policy_that_faults_on_live_calls_is_rolled_back_past_builds_that_faulted() {
    let s = Scratch::new("swap-rollback");
    s.install(&read(DEFAULT_POLICY));
    // The faults counted here are traps: a deadline a starved CI machine
    // cannot miss, so that no timeout is counted with them.
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--no-cache", "--policy-timeout-ms", "5000"]).await;
    let default_build = client.status().await["active"]["build"].as_str().unwrap_or("?").to_owned();
    assert_eq!(default_build.len(), 12, "a build is named by 12 hex digits of its sha256");
    // chaos passes the self-check, then traps on live traffic: once, which
    // the rollback rule lets pass.
    s.install(&read(CHAOS_POLICY));
    let status = client.wait_status(WAIT, |st| active(st) == "chaos").await;
    assert_eq!(active(&status), "chaos", "{status:#}");
    let message = status["last_swap"]["message"].as_str().unwrap_or("");
    assert!(message.starts_with("chaos 6.6.6 (build ") && message.contains(") is live"), "{status:#}");
    let r = client.call("search", json!({"query": "chaos:panic once"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(client.status().await["counters"]["faulted_tool_calls"], 1, "one fault: no rollback");
    // Another build (chaos on 0.3.0) over it, which faults on every call.
    s.install(&read(CHAOS_V3_POLICY));
    let v3 = "signpost:policy/policy@0.3.0";
    let status = client.wait_status(WAIT, |st| st["active"]["interface"] == v3 && active(st) == "chaos").await;
    assert_eq!(status["rollback_to"]["build"], default_build.as_str(), "chaos faulted: not a target: {status:#}");
    let bad_build = status["active"]["build"].as_str().unwrap_or("?").to_owned();
    for i in 0..4 {
        let r = client.call("search", json!({"query": format!("chaos:panic {i}")})).await;
        assert!(!r.is_error && r.structured["results"].is_array(), "answers survive the faults: {}", r.text);
    }
    let status = client.wait_status(WAIT, |st| active(st) == "signpost-default").await;
    assert_eq!(active(&status), "signpost-default", "back to the last fault-free build: {status:#}");
    assert_eq!(last(&status), "rolled_back", "{status:#}");
    assert_eq!(status["swaps"]["rolled_back"], 1);
    let message = status["last_swap"]["message"].as_str().unwrap_or("");
    assert!(message.contains(&format!("(build {bad_build}) faulted on")), "{message}");
    assert!(message.contains(&format!("signpost-default 0.1.0 (build {default_build}) is back")), "{message}");
    assert!(message.contains("A restart loads") && message.contains(&s.policy_arg()), "{message}");
    assert!(status["rollback_to"].is_null(), "nothing fault-free left behind it: {status:#}");
    let r = client.call("resolve", json!({"identifier": "OrderService"})).await;
    assert_eq!(r.tag(), "resolved");
}

/// `--policy-cases DIR`: every candidate must also pass the operator's
/// golden cases, strictly, at start and on every swap.
#[tokio::test]
async fn golden_cases_given_to_the_server_gate_every_swap() {
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../hints-component/cases");
    let s = Scratch::new("swap-cases");
    s.install(&read(STRICT_POLICY));
    // strict fails the default policy's cases: it cannot start with them.
    let out = std::process::Command::new(crate::common::BIN)
        .args(["--policy", &s.policy_arg(), "--policy-cases", cases, "--no-cache"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("golden cases failed"), "{stderr}");
    s.install(&read(DEFAULT_POLICY));
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--policy-cases", cases, "--no-cache"]).await;
    let sha = client.status().await["active"]["sha256"].as_str().unwrap_or("").to_owned();
    s.install(&read(STRICT_POLICY));
    let status = client.wait_status(WAIT, |st| last(st) == "rejected").await;
    let message = status["last_swap"]["message"].as_str().unwrap_or("");
    assert!(message.contains("golden cases failed") && message.contains(".json"), "{status:#}");
    assert!(message.starts_with("build ") && message.contains("signpost-default 0.1.0 (build "), "{message}");
    assert_eq!(status["active"]["sha256"], sha.as_str(), "the default keeps serving");
    client.close().await;
}

#[tokio::test]
async fn cache_survives_a_restart() {
    let s = Scratch::new("swap-cache");
    s.install(&read(STRICT_POLICY));
    let first = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    assert_eq!(first.status().await["active"]["from_cache"], false);
    first.close().await;
    let second = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    let status = second.status().await;
    assert_eq!(status["active"]["name"], "strict");
    assert_eq!(status["active"]["from_cache"], true, "{status:#}");
    // A tampered cache entry is not trusted blindly: it is recompiled.
    for entry in std::fs::read_dir(s.dir.join("cache")).into_iter().flatten().flatten() {
        std::fs::write(entry.path(), b"garbage").unwrap_or_default();
    }
    second.close().await;
    let third = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    let status = third.status().await;
    assert_eq!(status["active"]["name"], "strict", "a corrupt cache entry costs a compile, not the policy");
    assert_eq!(status["active"]["from_cache"], false);
}

/// Several concurrent callers while the policy file is replaced 50 times,
/// alternating two real components: no call fails, and every response's
/// hints and text come wholly from one policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swap_under_load() {
    const SWAPS: usize = 50;
    let s = Scratch::new("swap-load");
    s.install(&read(DEFAULT_POLICY));
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    let ctrl = client.id_of("OrderController").await;
    let (default_bytes, strict_bytes) = (read(DEFAULT_POLICY), read(STRICT_POLICY));
    let stop = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..4 {
        let peer = client.service().peer().clone();
        let (stop, calls, ctrl) = (stop.clone(), calls.clone(), ctrl.clone());
        workers.push(tokio::spawn(async move {
            let requests = [
                ("describe", json!({"id": ctrl})),
                ("resolve", json!({"identifier": "OrderController"})),
                ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"]})),
                ("search", json!({"query": "payment"})),
            ];
            let mut by_policy = [0usize; 2];
            let mut i = w;
            while stop.load(Ordering::Relaxed) == 0 {
                let (tool, args) = &requests[i % requests.len()];
                i += 1;
                let params = CallToolRequestParams::new(tool.to_string())
                    .with_arguments(args.as_object().cloned().unwrap_or_default());
                let result =
                    peer.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: call failed during swaps: {e}"));
                assert_ne!(result.is_error, Some(true), "{tool} failed during swaps: {result:?}");
                let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
                let hints =
                    result.structured_content.as_ref().and_then(|s| s["hints"].as_array().cloned()).unwrap_or_default();
                let strict_hints =
                    hints.iter().filter(|h| h["reason"].as_str().is_some_and(|r| r.starts_with("strict: "))).count();
                if text.starts_with("**") {
                    assert_eq!(strict_hints, hints.len(), "strict text with foreign hints: {text}\n{hints:?}");
                    by_policy[1] += 1;
                } else {
                    assert!(text.starts_with('['), "unknown text shape: {text}");
                    assert_eq!(strict_hints, 0, "default text with strict hints: {text}\n{hints:?}");
                    by_policy[0] += 1;
                }
                calls.fetch_add(1, Ordering::Relaxed);
            }
            by_policy
        }));
    }
    for i in 0..SWAPS {
        let (bytes, name) = if i % 2 == 0 { (&strict_bytes, "strict") } else { (&default_bytes, "signpost-default") };
        s.install(bytes);
        let status = client.wait_status(WAIT, |st| active(st) == name).await;
        assert_eq!(active(&status), name, "swap {i}: {status:#}");
    }
    stop.store(1, Ordering::Relaxed);
    let mut totals = [0usize; 2];
    for w in workers {
        let counts = w.await.unwrap_or_else(|e| panic!("worker: {e}"));
        totals[0] += counts[0];
        totals[1] += counts[1];
    }
    let status = client.status().await;
    let published = status["swaps"]["published"].as_u64().unwrap_or(0);
    println!(
        "swap under load: {published} swaps, {} calls ({} default, {} strict), 0 failed",
        calls.load(Ordering::Relaxed),
        totals[0],
        totals[1]
    );
    assert!(published >= SWAPS as u64, "{status:#}");
    assert!(totals[0] > 0 && totals[1] > 0, "both policies served: {totals:?}");
}
