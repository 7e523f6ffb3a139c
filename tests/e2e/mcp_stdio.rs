//! The real binary over stdio with rmcp's client: the five tools, their
//! results, hints and text, errors, and hostile input.

use serde_json::{Value, json};

use crate::common::Client;

/// The tool list an agent reads before its first question stays small:
/// the five tools with their input schemas, under 8 KB; the output schemas
/// (the same `structuredContent` either way) with `--output-schemas`.
#[tokio::test]
async fn lists_exactly_the_five_tools_with_schemas() {
    let lean = Client::default().await;
    let tools = lean.service().list_all_tools().await.unwrap_or_default();
    let bytes = serde_json::to_string(&tools).map(|s| s.len()).unwrap_or(usize::MAX);
    assert!(bytes <= 8 * 1024, "tools/list is {bytes} bytes");
    assert!(tools.iter().all(|t| t.output_schema.is_none()), "no output schemas by default");
    let r = lean.call("resolve", json!({"identifier": "OrderController"})).await;
    assert_eq!(r.structured["candidates"][0]["fqn"], "com.acme.shop.orders.OrderController", "the same results");
    lean.close().await;

    let client = Client::spawn(&["--output-schemas"]).await;
    let info = client.service().peer_info().and_then(|i| i.server_info.clone()).map(|s| s.name);
    assert_eq!(info.as_deref(), Some("signpost"));
    let tools = client.service().list_all_tools().await.unwrap_or_default();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["resolve", "describe", "find", "search", "neighbors"]);
    for tool in &tools {
        let output = tool.output_schema.as_ref().unwrap_or_else(|| panic!("{} has no output schema", tool.name));
        assert_eq!(output["properties"]["hints"]["type"], "array", "{}", tool.name);
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 20));
        assert_eq!(tool.input_schema["additionalProperties"], false, "{} rejects unknown args", tool.name);
    }
    let neighbors = &tools[4].input_schema;
    assert_eq!(neighbors["properties"]["ids"]["type"], "array", "ids is advertised as a list of strings");
    assert_eq!(neighbors["properties"]["ids"]["items"]["type"], "string");
    assert_eq!(neighbors["properties"]["direction"]["enum"], json!(["out", "in"]));
    let required: Vec<&str> =
        neighbors["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(required, ["ids", "direction", "edge_types"]);
}

#[tokio::test]
async fn each_tool_answers_with_results_hints_and_text() {
    let client = Client::default().await;

    let r = client.call("resolve", json!({"identifier": "OrderController"})).await;
    assert!(!r.is_error);
    assert_eq!(r.tag(), "resolved");
    assert_eq!(r.structured["candidates"][0]["fqn"], "com.acme.shop.orders.OrderController");
    let ctrl = r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(r.hint_to("describe"), Some(json!({"id": ctrl})));

    let d = client.call("describe", json!({"id": ctrl})).await;
    assert_eq!(d.tag(), "record");
    assert_eq!(d.structured["record"]["kind"], "class");
    assert_eq!(d.structured["edge_summary"]["out"]["DECLARES.EXPOSES"], 4);
    assert!(d.text.contains("DECLARES.EXPOSES 4"), "{}", d.text);
    assert_eq!(
        d.actionable()[0],
        ("neighbors".to_owned(), json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]}))
    );

    let f = client.call("find", json!({"role": "controller", "limit": 3})).await;
    assert_eq!(f.tag(), "listing");
    assert_eq!(f.structured["results"].as_array().map(Vec::len), Some(3));
    assert!(f.structured["total"].as_u64() > Some(3));
    assert_eq!(f.hint_to("find"), Some(json!({"role": "controller", "limit": 3, "offset": 3})));

    let s = client.call("search", json!({"query": "refund"})).await;
    assert_eq!(s.tag(), "results");
    let top = &s.structured["results"][0];
    assert!(top["name"].as_str().unwrap_or_default().to_lowercase().contains("refund"), "{}", s.text);
    assert!(top["score"].as_f64() >= Some(0.5));
    assert!(s.hint_to("describe").is_some());

    let n =
        client.call("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]})).await;
    assert_eq!(n.tag(), "neighbors");
    assert_eq!(n.structured["total"], 4);
    for edge in n.structured["results"].as_array().into_iter().flatten() {
        assert_eq!(edge["origin"], ctrl.as_str());
        assert_eq!(edge["edge"], "DECLARES.EXPOSES");
        assert_eq!(edge["other"]["kind"], "route");
    }
    assert!(n.text.lines().filter(|l| l.starts_with("->DECLARES.EXPOSES ")).count() == 4, "{}", n.text);
}

#[tokio::test]
async fn every_actionable_hint_of_each_tool_succeeds_verbatim() {
    let client = Client::default().await;
    let ctrl = client.id_of("OrderController").await;
    let calls = [
        ("resolve", json!({"identifier": "OrderService"})),
        ("describe", json!({"id": ctrl})),
        ("find", json!({"kind": "method", "name": "save"})),
        ("search", json!({"query": "payment"})),
        ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"]})),
    ];
    for (tool, args) in calls {
        let r = client.call(tool, args.clone()).await;
        assert!(!r.actionable().is_empty(), "{tool} gave no actionable hint:\n{}", r.text);
        for (next, next_args) in r.actionable() {
            let n = client.call(&next, next_args.clone()).await;
            assert!(!n.is_error, "hint {next} {next_args} from {tool} failed:\n{}", n.text);
        }
    }
}

#[tokio::test]
async fn bad_input_is_a_tool_error_that_teaches() {
    let client = Client::default().await;
    let ctrl = client.id_of("OrderController").await;
    let unknown = "0".repeat(40);
    let cases = [
        ("describe", json!({"id": unknown}), "unknown_id", "no symbol has id"),
        ("describe", json!({}), "bad_argument", "missing field `id`"),
        ("resolve", json!({"identifier": 42}), "bad_argument", "invalid type"),
        ("resolve", json!({"identifier": "   "}), "bad_argument", "empty"),
        ("find", json!({"limit": 0}), "bad_argument", "limit"),
        ("find", json!({"limit": -1}), "bad_argument", "invalid value"),
        ("find", json!({"offset": "3"}), "bad_argument", "invalid type"),
        ("search", json!({"query": "a\u{0}b"}), "bad_argument", "control characters"),
        ("search", json!({"query": "x".repeat(5000)}), "bad_argument", "at most"),
        (
            "neighbors",
            json!({"ids": [ctrl], "direction": "up", "edge_types": ["CALLS"]}),
            "bad_argument",
            "unknown variant",
        ),
        (
            "neighbors",
            json!({"ids": [ctrl], "direction": "out", "edge_types": ["CALLZ"]}),
            "bad_argument",
            "unknown edge type",
        ),
        ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": []}), "bad_argument", "1 to 16"),
        (
            "neighbors",
            json!({"ids": [ctrl], "direction": "out", "edge_type": ["CALLS"]}),
            "bad_argument",
            "unknown field `edge_type`",
        ),
        (
            "neighbors",
            json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}),
            "invalid_id",
            "is a name",
        ),
    ];
    for (tool, args, kind, needle) in cases {
        let r = client.call(tool, args.clone()).await;
        assert!(r.is_error, "{tool} {args} should fail:\n{}", r.text);
        assert_eq!(r.error_kind(), kind, "{tool} {args}:\n{}", r.text);
        assert!(r.text.contains(needle), "{tool} {args}: `{needle}` missing from:\n{}", r.text);
        assert!(r.text.starts_with(&format!("[{}] ", r.tag())));
    }
    // A teaching error whose fix is known comes with it as an actionable hint.
    let r = client.call("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["CALLZ"]})).await;
    assert_eq!(r.hint_to("neighbors"), Some(json!({"ids": [ctrl], "direction": "out", "edge_types": ["CALLS"]})));
    let r = client.call("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]})).await;
    assert_eq!(r.hint_to("resolve"), Some(json!({"identifier": "OrderService"})));
}

#[tokio::test]
async fn hostile_input_never_breaks_the_server() {
    let client = Client::default().await;
    let hostile = crate::common::hostile_calls();
    for (tool, args) in hostile {
        // `call` asserts the response is well formed (tag, hints, clean text).
        let _ = client.call(tool, args).await;
    }
    // An unknown tool is a protocol error, and the session goes on.
    let err = client.raw("rm_rf", json!({})).await;
    assert!(err.is_err(), "unknown tool must be refused");
    let r = client.call("resolve", json!({"identifier": "OrderService"})).await;
    assert_eq!(r.structured["status"], "one", "still serving after hostile input");
}

#[tokio::test]
async fn prerequisites_suggest_but_never_block() {
    let client = Client::default().await;
    // An id this session never saw: the call runs, with a non-blocking note.
    let ctrl = {
        let other = Client::default().await;
        other.id_of("OrderController").await
    };
    let r = client.call("describe", json!({"id": ctrl})).await;
    assert!(!r.is_error);
    let note = r.hints().into_iter().find(|h| h["actionable"] == false).unwrap_or_default();
    assert_eq!(note["tool"], "resolve", "{}", r.text);
    assert!(r.text.contains("note: this id not seen in this session"), "{}", r.text);
    // After the session has seen it, no such note.
    let _ = client.call("resolve", json!({"identifier": "OrderController"})).await;
    let r = client.call("describe", json!({"id": ctrl})).await;
    assert!(!r.text.contains("not seen in this session"), "{}", r.text);
}

/// stdin a pipe that is quiet for a while, stdout a file (`signpost < pipe
/// > answers.jsonl`): the server waits for input instead of failing a read.
#[test]
fn serves_a_slow_pipe_into_a_file() {
    use std::io::Write;
    let out = std::env::temp_dir().join(format!("signpost-stdio-file-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&out).unwrap_or_else(|e| panic!("{e}"));
    let mut child = std::process::Command::new(crate::common::BIN)
        .env("RUST_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(file)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for line in lines {
        // Quiet before each line: every read first finds the pipe empty.
        std::thread::sleep(std::time::Duration::from_millis(300));
        writeln!(stdin, "{line}").unwrap_or_else(|e| panic!("the server stopped reading: {e}"));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(stdin);
    let done = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&done.stderr);
    let answers = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert!(done.status.success() && !stderr.contains("temporarily unavailable"), "{stderr}");
    let listed = answers.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|v| v["id"] == 2);
    let tools = listed.as_ref().and_then(|v| v["result"]["tools"].as_array()).map(Vec::len);
    assert_eq!(tools, Some(5), "{answers}\n{stderr}");
}

/// An unknown resource is a "not found" error that names the URI and the
/// resources there are; the capabilities declare what answers (prompts: an
/// empty list).
#[tokio::test]
async fn an_unknown_resource_names_itself_and_capabilities_match_handlers() {
    let client = Client::default().await;
    let uri = "signpost://nope";
    let err = client.service().read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await;
    let Err(rmcp::service::ServiceError::McpError(e)) = err else { panic!("expected an MCP error: {err:?}") };
    assert_eq!(e.data, Some(json!({"uri": uri})), "{e:?}");
    assert!(e.message.contains("signpost://policy"), "{e:?}");
    let info = client.service().peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
    assert!(info.prompts.is_some() && info.tools.is_some() && info.resources.is_some(), "{info:?}");
    let prompts = client.service().list_all_prompts().await.unwrap_or_else(|e| panic!("prompts/list: {e}"));
    assert!(prompts.is_empty());
    client.close().await;
}
