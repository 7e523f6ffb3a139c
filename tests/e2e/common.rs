//! A real MCP client for the real binary, and assertions shared by suites.

use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_signpost");
/// The default policy component, built from `hints-component/`.
pub const DEFAULT_POLICY: &str = env!("SIGNPOST_DEFAULT_POLICY");
/// The hostile test policy, built from `tests/policies/chaos/`.
pub const CHAOS_POLICY: &str = env!("SIGNPOST_CHAOS_POLICY");

/// An MCP client session with a freshly spawned `signpost`.
pub struct Client {
    service: RunningService<RoleClient, ()>,
}

/// One tool result, unpacked.
#[derive(Debug, Clone)]
pub struct Reply {
    /// `isError`.
    pub is_error: bool,
    /// The text content.
    pub text: String,
    /// `structuredContent`.
    pub structured: Value,
}

impl Client {
    /// Spawns `signpost ARGS` (quiet logs) and initializes a session.
    pub async fn spawn(args: &[&str]) -> Client {
        Client::spawn_logging(args, "warn", Stdio::null()).await
    }

    /// Spawns `signpost ARGS` with `RUST_LOG=log` and stderr sent to `stderr`.
    pub async fn spawn_logging(args: &[&str], log: &str, stderr: impl Into<Stdio>) -> Client {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(args).env("RUST_LOG", log);
        let (transport, _stderr) =
            TokioChildProcess::builder(cmd).stderr(stderr).spawn().unwrap_or_else(|e| panic!("spawning {BIN}: {e}"));
        let service = ().serve(transport).await.unwrap_or_else(|e| panic!("MCP initialize failed: {e}"));
        Client { service }
    }

    /// The default server: embedded graph, embedded policy.
    pub async fn default() -> Client {
        Client::spawn(&[]).await
    }

    /// Calls a tool; protocol errors are returned, not unpacked.
    pub async fn raw(&self, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.service.call_tool(params).await
    }

    /// Calls a tool and checks the response's shape (text layout, hints in
    /// text match structured hints).
    pub async fn call(&self, tool: &str, args: Value) -> Reply {
        let result = self.raw(tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: protocol error {e}"));
        let text =
            result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
        let reply = Reply {
            is_error: result.is_error.unwrap_or(false),
            text,
            structured: result.structured_content.unwrap_or(Value::Null),
        };
        reply.assert_well_formed(tool, &args);
        reply
    }

    /// Resolves a name that must be unique; its id.
    pub async fn id_of(&self, name: &str) -> String {
        let r = self.call("resolve", serde_json::json!({"identifier": name})).await;
        assert_eq!(r.structured["status"], "one", "{name}: {}", r.text);
        r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned()
    }

    /// Ends the session and waits for the server to exit.
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }

    /// The underlying rmcp client.
    pub fn service(&self) -> &RunningService<RoleClient, ()> {
        &self.service
    }
}

impl Reply {
    /// All hints.
    pub fn hints(&self) -> Vec<Value> {
        self.structured["hints"].as_array().cloned().unwrap_or_default()
    }

    /// Actionable hints as (tool, args).
    pub fn actionable(&self) -> Vec<(String, Value)> {
        self.hints()
            .into_iter()
            .filter(|h| h["actionable"] == true)
            .map(|h| (h["tool"].as_str().unwrap_or_default().to_owned(), h["args"].clone()))
            .collect()
    }

    /// The first actionable hint to `tool`, if any.
    pub fn hint_to(&self, tool: &str) -> Option<Value> {
        self.actionable().into_iter().find(|(t, _)| t == tool).map(|(_, a)| a)
    }

    /// The state tag of the first line.
    pub fn tag(&self) -> &str {
        self.text.strip_prefix('[').and_then(|t| t.split(']').next()).unwrap_or("")
    }

    /// The error kind, for failed calls.
    pub fn error_kind(&self) -> &str {
        self.structured["error"]["kind"].as_str().unwrap_or("")
    }

    fn assert_well_formed(&self, tool: &str, args: &Value) {
        let ctx = format!("{tool} {args}\n--- text ---\n{}", self.text);
        let first = self.text.lines().next().unwrap_or("");
        let tag = self.tag();
        assert!(
            !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "first line must be `[state_tag] summary`: {ctx}"
        );
        assert!(first.len() > tag.len() + 3, "summary missing: {ctx}");
        assert!(self.structured.is_object(), "structuredContent must be an object: {ctx}");
        let hints = self.structured["hints"].as_array().unwrap_or_else(|| panic!("no hints array: {ctx}"));
        assert!(hints.len() <= 8, "too many hints: {ctx}");
        if self.is_error {
            assert!(self.structured["error"]["message"].is_string(), "error without message: {ctx}");
        }
        let next_lines: Vec<&str> = self.text.lines().filter(|l| l.starts_with("→ next: ")).collect();
        let actionable = self.actionable();
        assert_eq!(next_lines.len(), actionable.len(), "one `→ next:` line per actionable hint: {ctx}");
        for (line, (tool, args)) in next_lines.iter().zip(&actionable) {
            let call = format!("→ next: {tool} {args}");
            assert!(
                *line == call || line.starts_with(&format!("{call} — ")),
                "`{line}` does not render hint {tool} {args} exactly: {ctx}"
            );
        }
        for h in hints {
            let reason = h["reason"].as_str().unwrap_or("");
            assert!(reason.chars().count() <= 200 && !reason.chars().any(char::is_control), "bad reason: {ctx}");
            assert!(h["args"].is_object(), "args must be an object: {ctx}");
        }
        assert!(!self.text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "control chars in text: {ctx}");
    }
}

/// `json!` as a map.
pub fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}
