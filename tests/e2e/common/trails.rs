//! Calls that carry a trail: sessionless (the 2026-07-28 revision) and in a
//! session, and what a result says about its trail.

use serde_json::{Value, json};

pub const ORDER_CONTROLLER: &str = "721797098567ca69c8d8f724033dc6ec8670d50b";
/// The default policy's note for an id the session has not seen.
pub const UNSEEN: &str = "not seen in this session";

/// One `tools/call` on the 2026-07-28 revision: no session, the protocol
/// fields in `_meta` and the headers. The result, whether JSON or SSE.
pub async fn stateless_call(url: &str, tool: &str, args: Value) -> Value {
    stateless_call_as(url, None, tool, args).await
}

/// [`stateless_call`] with a bearer token.
pub async fn stateless_call_as(url: &str, token: Option<&str>, tool: &str, args: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut request = reqwest::Client::new().post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(response.headers().get("mcp-session-id").is_none(), "a sessionless request got a session");
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    assert_eq!(status, 200, "{tool} {args}: {text}");
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok().filter(|v| v.get("id").is_some()))
        .unwrap_or_else(|| panic!("no JSON-RPC response in {text}"));
    message["result"].clone()
}

pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

pub fn trail_of(result: &Value) -> String {
    let trail = result["structuredContent"]["trail"].as_str().unwrap_or_default().to_owned();
    assert!(trail.starts_with("tr_") && trail.len() == 35, "{result}");
    trail
}

/// The actionable hint for `tool` in a result: its arguments, as sent back.
pub fn hint_args(result: &Value, tool: &str) -> Value {
    actionable_args(&result["structuredContent"]["hints"], tool, result)
}

/// The actionable hint for `tool` in a proxied result (`_meta`'s
/// `signpost/hints`): its arguments, as sent back.
pub fn proxied_hint_args(result: &Value, tool: &str) -> Value {
    actionable_args(&result["_meta"]["signpost/hints"], tool, result)
}

/// The arguments of the actionable hint for `tool` among `hints`, those of
/// `result`.
fn actionable_args(hints: &Value, tool: &str, result: &Value) -> Value {
    hints
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["tool"] == tool && h["actionable"] == true)
        .map(|h| h["args"].clone())
        .unwrap_or_else(|| panic!("no {tool} hint in {result}"))
}

/// A call in an MCP session over HTTP (the 2025 revision): (text, structured).
pub async fn session_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, crate::common::Recorder>,
    tool: &str,
    args: Value,
) -> (String, Value) {
    let params = rmcp::model::CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let r = client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
    (text, r.structured_content.unwrap_or_default())
}
