//! Unforgeable in any notation: the `chaos` policy writes forged calls in
//! 38 notations (`chaos:notations`: pseudo-Python, keyword calls, MCP's
//! `tools/call` params, `<tool_call>`, OpenAI function calls, `<invoke>`,
//! Signpost's shell form, `key=value`, bare arrays and ids, a call over two
//! lines, the id upper-cased, grouped, escaped, full-width or in Cyrillic
//! letters, and calls with no id at all) in its summary, details, ask-user
//! line, hint reasons and rendered text, beside one valid hint. Through the
//! real binary over stdio, over HTTP and on the terminal: no forged id and
//! no forged call reaches anyone, the valid hint does; a teaching error
//! cannot point at a symbol either; and a policy that does this on every
//! call is refused by the self-check.

use std::process::Command;

use crate::common::http::HttpServer;
use crate::common::{BIN, CHAOS_POLICY, Client, FORGER_POLICY, as_read, run_cli};
use serde_json::{Value, json};

/// PaymentService: a real symbol no answer of these calls holds.
const PAYMENT: &str = "73b27882a8e70d1ee8a56aa648c836e9f556b6ce";
/// The argument of the forged calls that carry no id.
const ZEBRA: &str = "zebra";
/// The one valid hint chaos offers, as a hint line shows it.
const VALID: &str = r#"→ next: search {"query":"chaos"}"#;

/// Nothing forged in `what`: no PaymentService id however written, no
/// call with the id-less forged argument.
fn assert_unforged(what: &str, text: &str) {
    assert!(!as_read(text).contains(PAYMENT), "{what}: a forged id got through:\n{text}");
    assert!(!text.to_lowercase().contains(ZEBRA), "{what}: a forged call got through:\n{text}");
}

/// The answer to a `chaos:notations` call: the valid hint survives in the
/// text and the hints, nothing forged survives anywhere the agent reads.
fn assert_answer(what: &str, text: &str, structured: &Value, fallback: bool) {
    assert_unforged(what, text);
    assert_unforged(&format!("{what} (hints)"), &structured["hints"].to_string());
    assert_unforged(&format!("{what} (error)"), &structured["error"].to_string());
    let hints = structured["hints"].as_array().cloned().unwrap_or_default();
    let actionable: Vec<&Value> = hints.iter().filter(|h| h["actionable"] == true).collect();
    assert_eq!(actionable.len(), 1, "{what}: the valid hint stays:\n{structured:#}");
    assert_eq!(actionable[0]["args"]["query"], "chaos", "{what}");
    assert!(text.lines().any(|l| l.starts_with(VALID)), "{what}: the valid hint line stays:\n{text}");
    assert!(text.starts_with("[chaos]"), "{what}:\n{text}");
    if !fallback {
        // The notes of the non-actionable hints keep their words, less the id.
        assert!(text.contains("note: see [id not in this answer]"), "{what}:\n{text}");
    }
}

#[tokio::test]
async fn forged_calls_in_any_notation_never_reach_an_agent_over_stdio() {
    let client = Client::spawn(&["--policy", CHAOS_POLICY]).await;
    for marker in ["chaos:notations", "chaos:notations-fallback"] {
        for (tool, args) in [
            ("search", json!({"query": marker})),
            ("resolve", json!({"identifier": marker})),
            ("find", json!({"name": marker})),
        ] {
            let r = client.call_any_policy(tool, args).await;
            assert!(!r.is_error, "{marker} {tool}: the answer comes back: {}", r.text);
            assert_answer(&format!("{marker} {tool}"), &r.text, &r.structured, marker.ends_with("fallback"));
        }
    }
    client.close().await;
}

#[tokio::test]
async fn a_teaching_error_cannot_point_at_a_symbol_the_agent_never_saw() {
    let client = Client::spawn(&["--policy", CHAOS_POLICY]).await;
    let args = json!({"ids": "chaos:forge-error", "direction": "out", "edge_types": ["CALLS"]});
    let r = client.call_any_policy("neighbors", args).await;
    assert!(r.is_error && r.structured["error"]["kind"] == "invalid_id", "{:#}", r.structured);
    let error = &r.structured["error"];
    // The example was a call that works, to a real symbol: it goes.
    assert!(error["example"].is_null(), "{error:#}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("[id not in this answer]") || message.contains("[unvalidated call removed]"), "{message}");
    assert_unforged("error", &r.structured.to_string());
    assert_unforged("text", &r.text);
    client.close().await;
}

/// A teaching error's example is bounded like a hint's arguments, template
/// or not: 100 KB of it never reaches the agent.
#[tokio::test]
async fn a_teaching_errors_example_is_bounded() {
    let client = Client::spawn(&["--policy", CHAOS_POLICY]).await;
    let r = client.call_any_policy("describe", json!({"id": "chaos:big-example"})).await;
    assert!(r.is_error && r.structured["error"]["kind"] == "invalid_id", "{:.300}", r.structured);
    assert!(r.structured["error"]["example"].is_null(), "{:.300}", r.structured);
    assert!(r.structured.to_string().len() < 20_000, "{:.300}", r.structured);
    client.close().await;
}

#[tokio::test]
async fn forged_calls_in_any_notation_never_reach_an_agent_over_http() {
    let server = HttpServer::start(&["--policy", CHAOS_POLICY], &[]);
    let client = server.client(None).await.unwrap_or_else(|e| panic!("{e}"));
    let params = rmcp::model::CallToolRequestParams::new("search")
        .with_arguments(json!({"query": "chaos:notations"}).as_object().cloned().unwrap_or_default());
    let r = client.call_tool(params).await.unwrap_or_else(|e| panic!("{e}"));
    let text = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
    assert_answer("http", &text, &r.structured_content.unwrap_or_default(), false);
    drop(client);
}

#[test]
fn forged_calls_in_any_notation_never_reach_a_terminal() {
    for format in ["text", "json"] {
        let out = Command::new(BIN)
            .args(["search", "chaos:notations", "--policy", CHAOS_POLICY, "--format", format, "--color", "never"])
            .current_dir(crate::common::outside_any_project())
            .env("RUST_LOG", "error")
            .env_remove("SIGNPOST_STATE")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_unforged(format, &stdout);
        if format == "json" {
            continue;
        }
        // Only the host writes commands: its `→ next:` lines, each the valid hint.
        let next: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("→ next: ")).collect();
        assert_eq!(next.len(), 1, "{stdout}");
        assert!(next[0].starts_with(&format!("{BIN} search chaos")), "{stdout}");
        for line in stdout.lines().filter(|l| !l.starts_with("→ next: ")) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let shell = words.windows(2).any(|w| {
                (w[0].ends_with("signpost") || w[0] == "$")
                    && ["describe", "search", "call", "neighbors", "find", "resolve"].contains(&w[1])
            });
            assert!(!shell && !line.trim_start().starts_with("$ "), "a shell command on the terminal: {line}");
        }
    }
}

#[test]
fn a_bug_on_one_outcome_path_is_refused_by_the_self_check() {
    let (ok, report) = run_cli(&["policy", "check", crate::common::OUTCOME_BUGS_POLICY]);
    assert!(!ok, "the self-check refuses it:\n{report}");
    // The panic's own message, and the probe it happened on.
    assert!(report.contains("search finds nothing"), "the trap's message:\n{report}");
    assert!(report.contains("the policy said: panic at src/lib.rs:"), "where it panicked:\n{report}");
    // Only the report, with no RUST_LOG set: no log lines beside it.
    let out = std::process::Command::new(BIN)
        .args(["policy", "check", crate::common::OUTCOME_BUGS_POLICY])
        .env_remove("RUST_LOG")
        .current_dir(crate::common::outside_any_project())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !stderr.contains("WARN"), "{stderr}");
    assert!(report.contains("zzqxwvk"), "the probe that found it:\n{report}");
    // The invalid hint on an empty `neighbors`.
    assert!(report.contains("no_such_tool"), "the invalid hint:\n{report}");
}

#[test]
fn a_policy_that_forges_in_any_notation_is_refused_before_it_serves() {
    let (ok, report) = run_cli(&["policy", "check", FORGER_POLICY]);
    assert!(!ok, "the self-check refuses it:\n{report}");
    assert!(report.contains("id(s) replaced"), "it says ids were replaced:\n{report}");
    assert!(report.contains("call(s) cut out"), "it says calls were cut out:\n{report}");
    assert_unforged("policy check", &report);
}
