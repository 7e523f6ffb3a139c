//! A real MCP client for the real binary, and assertions shared by suites.
#![allow(deprecated)] // MCP logging notifications

pub mod agents;
pub mod cli;
pub mod conformance;
pub mod http;
pub mod projects;
pub mod redis;
pub mod registry;
pub mod swap;
pub mod toolchain;
pub mod trails;
pub mod wat;
pub mod wave;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    ReadResourceRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_signpost");
/// The default policy component, built from `hints-component/`.
pub const DEFAULT_POLICY: &str = env!("SIGNPOST_DEFAULT_POLICY");
/// The hostile test policy, built from `tests/policies/chaos/`.
pub const CHAOS_POLICY: &str = env!("SIGNPOST_CHAOS_POLICY");
/// The chaos policy built to return garbage on every call (fails the self-check).
pub const GARBAGE_POLICY: &str = env!("SIGNPOST_GARBAGE_POLICY");
/// The chaos policy built to sleep in every `advise`.
pub const SLEEPY_POLICY: &str = env!("SIGNPOST_SLEEPY_POLICY");
/// The chaos policy built to forge calls in every notation on every call.
pub const FORGER_POLICY: &str = env!("SIGNPOST_FORGER_POLICY");
/// The chaos policy built with bugs on one outcome path each (a panic
/// when `search` finds nothing, a hint to no tool when `neighbors` does).
pub const OUTCOME_BUGS_POLICY: &str = env!("SIGNPOST_OUTCOME_BUGS_POLICY");
/// The alternative `strict` policy, built from `tests/policies/strict/`.
pub const STRICT_POLICY: &str = env!("SIGNPOST_STRICT_POLICY");
/// The policy for the MCP memory server, built from `tests/policies/memory/`.
pub const MEMORY_POLICY: &str = env!("SIGNPOST_MEMORY_POLICY");
/// The chaos policy speaking signpost:policy@0.3.0 (`--features v0_3`).
pub const CHAOS_V3_POLICY: &str = env!("SIGNPOST_CHAOS_V3_POLICY");

/// A client handler that records the server's logging notifications, and
/// its other notifications (progress, list changes) as `notices`.
#[derive(Clone, Default)]
pub struct Recorder {
    logs: Arc<Mutex<Vec<Value>>>,
    notices: Arc<Mutex<Vec<Value>>>,
}

impl Recorder {
    fn notice(&self, notice: Value) {
        self.notices.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(notice);
    }
}

impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let entry = json!({"level": params.level, "logger": params.logger, "data": params.data});
        self.logs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(entry);
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.notice(json!({"progress": params}));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(json!("resources/list_changed"));
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(json!("prompts/list_changed"));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(json!("tools/list_changed"));
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notice(json!({"updated": params.uri}));
    }
}

/// An MCP client session with a freshly spawned `signpost`.
pub struct Client {
    service: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    pid: Option<u32>,
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
        Client::spawn_with(args, &[("RUST_LOG", log)], stderr).await
    }

    /// Spawns `signpost ARGS` with extra environment variables (quiet logs
    /// unless `RUST_LOG` is among them) and stderr sent to `stderr`.
    pub async fn spawn_with(args: &[&str], env: &[(&str, &str)], stderr: impl Into<Stdio>) -> Client {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(args).env("RUST_LOG", "warn").envs(env.iter().copied());
        Client::spawn_command(cmd, stderr).await
    }

    /// Initializes a session with the server `cmd` starts (a wrapper that
    /// execs the binary under limits, say), its stderr sent to `stderr`.
    pub async fn spawn_command(cmd: tokio::process::Command, stderr: impl Into<Stdio>) -> Client {
        let (transport, _stderr) =
            TokioChildProcess::builder(cmd).stderr(stderr).spawn().unwrap_or_else(|e| panic!("spawning: {e}"));
        let pid = transport.id();
        let recorder = Recorder::default();
        let service = recorder.clone().serve(transport).await.unwrap_or_else(|e| panic!("MCP initialize failed: {e}"));
        Client { service, recorder, pid }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid.unwrap_or_else(|| panic!("no pid"))
    }

    /// Logging notifications received so far.
    pub fn logs(&self) -> Vec<Value> {
        self.recorder.logs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Other notifications received so far: progress (`{"progress": params}`)
    /// and list changes (`"resources/list_changed"`, …).
    pub fn notices(&self) -> Vec<Value> {
        self.recorder.notices.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The `signpost://policy` status resource, parsed.
    pub async fn status(&self) -> Value {
        self.resource("signpost://policy").await
    }

    /// A JSON resource, parsed.
    pub async fn resource(&self, uri: &str) -> Value {
        let r = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("reading {uri}: {e}"));
        let text = r.contents.first().and_then(|c| match c {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        });
        serde_json::from_str(&text.unwrap_or_default()).unwrap_or_default()
    }

    /// Polls the status until `done` holds (at most `limit`); the last status.
    pub async fn wait_status(&self, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let status = self.status().await;
            if done(&status) || started.elapsed() > limit {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
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
        let reply = self.call_any_policy(tool, args.clone()).await;
        reply.assert_well_formed(tool, &args);
        reply
    }

    /// Calls a tool, without the default policy's shape checks (for other
    /// policies' formats).
    pub async fn call_any_policy(&self, tool: &str, args: Value) -> Reply {
        let result = self.raw(tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: protocol error {e}"));
        let text =
            result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
        Reply {
            is_error: result.is_error.unwrap_or(false),
            text,
            structured: result.structured_content.unwrap_or(Value::Null),
        }
    }

    /// Calls a tool and returns its text, without the default policy's shape
    /// checks (for other policies' formats).
    pub async fn call_raw_text(&self, tool: &str, args: Value) -> String {
        let reply = self.call_any_policy(tool, args.clone()).await;
        assert!(!reply.is_error, "{tool} {args}: {}", reply.text);
        reply.text
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
    pub fn service(&self) -> &RunningService<RoleClient, Recorder> {
        &self.service
    }
}

impl Reply {
    /// All hints.
    pub fn hints(&self) -> Vec<Value> {
        self.structured["hints"].as_array().cloned().unwrap_or_default()
    }

    /// Actionable hints as (tool, args), the args as sent back (the
    /// response's trail included).
    pub fn actionable_as_sent(&self) -> Vec<(String, Value)> {
        self.hints()
            .into_iter()
            .filter(|h| h["actionable"] == true)
            .map(|h| (h["tool"].as_str().unwrap_or_default().to_owned(), h["args"].clone()))
            .collect()
    }

    /// Actionable hints as (tool, args): the question each asks, without
    /// the trail every one of them carries (checked to be the response's).
    pub fn actionable(&self) -> Vec<(String, Value)> {
        let trail = &self.structured["trail"];
        self.actionable_as_sent()
            .into_iter()
            .map(|(tool, mut args)| {
                if let Some(args) = args.as_object_mut() {
                    let carried = args.remove("trail").unwrap_or(Value::Null);
                    assert_eq!(&carried, trail, "an actionable hint carries the response's trail: {}", self.structured);
                }
                (tool, args)
            })
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
        let actionable = self.actionable_as_sent();
        assert_eq!(next_lines.len(), actionable.len(), "one `→ next:` line per actionable hint: {ctx}");
        for (line, (tool, args)) in next_lines.iter().zip(&actionable) {
            // The text shows what an agent can read: invisible characters
            // (bidi controls, zero-width ones) that the structured args keep
            // are not in it.
            let shown: String = args.to_string().chars().filter(|c| !signpost::sanitize::is_invisible(*c)).collect();
            let call = format!("→ next: {tool} {shown}");
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

/// `signpost proxy FLAGS -- python3 rogue.py echo`: the arguments, the
/// misbehaving test backend (`tests/backends/rogue.py`) behind the proxy.
pub fn proxy_before_rogue(flags: &[&str]) -> Vec<String> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/backends/rogue.py");
    let mut argv = vec!["proxy".to_owned()];
    argv.extend(flags.iter().map(|f| (*f).to_owned()));
    argv.extend(["--".to_owned(), "python3".to_owned(), script.display().to_string(), "echo".to_owned()]);
    argv
}

/// Runs `signpost ARGS` to completion: (exit status success, stdout +
/// stderr). Fails the test if it panicked.
pub fn run_cli<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> (bool, String) {
    let out = std::process::Command::new(BIN)
        .args(args)
        .current_dir(outside_any_project())
        .env("RUST_LOG", "error")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("panicked"), "{args:?} panicked:\n{text}");
    (out.status.success(), text)
}

/// An empty directory outside any repository, to run tool commands in: run
/// inside one, they answer from that repository instead of the embedded
/// sample graph.
pub fn outside_any_project() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join("signpost-e2e-outside-any-project");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// `json!` as a map.
pub fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Arguments an agent should never send, one tool call each: deep nesting,
/// huge strings and lists, wrong types, control and bidi characters.
pub fn hostile_calls() -> Vec<(&'static str, Value)> {
    let mut deep = json!("x");
    for _ in 0..100 {
        deep = json!([deep]);
    }
    let huge_list: Vec<String> = (0..5000).map(|i| format!("{i:040x}")).collect();
    vec![
        ("resolve", json!({"identifier": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ☃ \u{202e}evil"})),
        ("resolve", json!({"identifier": "x".repeat(100_000)})),
        ("resolve", json!({"identifier": ["a", "b"]})),
        ("describe", json!({"id": deep.clone()})),
        ("describe", json!({"id": {"id": {"id": "a"}}})),
        ("describe", json!({"id": null})),
        ("neighbors", json!({"ids": deep, "direction": "out", "edge_types": ["CALLS"]})),
        ("neighbors", json!({"ids": huge_list, "direction": "out", "edge_types": ["CALLS"]})),
        ("neighbors", json!({"ids": "[".repeat(50_000), "direction": "out", "edge_types": ["CALLS"]})),
        (
            "neighbors",
            json!({"ids": "[".repeat(5_000) + &"]".repeat(5_000), "direction": "out", "edge_types": ["CALLS"]}),
        ),
        ("neighbors", json!({"ids": ["a".repeat(40)], "direction": "out", "edge_types": ["A.B.C.D.E"]})),
        ("find", json!({"kind": "class", "limit": 1e300})),
        ("find", json!({"name": "%s%n%x\u{7f}"})),
        ("search", json!({"query": "' OR 1=1 --"})),
        ("search", json!({"query": "🙂".repeat(200)})),
    ]
}

/// What a reader could make of `text`: NFKC, look-alike Cyrillic letters as
/// Latin, `\uXXXX`, `&#x…;`, `&#…;` and `%XX` escapes decoded, lower case,
/// and every character that is not a letter or digit gone (so an id split
/// by any separators reads whole).
pub fn as_read(text: &str) -> String {
    let mut s: String = unicode_normalization::UnicodeNormalization::nfkc(text).collect();
    for (from, to) in [('а', 'a'), ('е', 'e'), ('с', 'c'), ('о', 'o')] {
        s = s.replace(from, &to.to_string());
    }
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(c) = rest.chars().next() {
        let escape = [("\\u", 4, 16), ("&#x", 0, 16), ("&#", 0, 10), ("%", 2, 16)].iter().find_map(|(p, n, radix)| {
            let body = rest.strip_prefix(p)?;
            let len = if *n > 0 { *n } else { body.find(';')? };
            let code = u32::from_str_radix(body.get(..len)?, *radix).ok()?;
            let skip = p.len() + len + usize::from(*n == 0);
            Some((char::from_u32(code)?, skip))
        });
        match escape {
            Some((c, skip)) => {
                out.push(c);
                rest = &rest[skip..];
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect()
}

/// Sums the samples of `metric` whose labels contain every `want`.
pub fn sum_samples(exposition: &str, metric: &str, want: &[&str]) -> f64 {
    exposition
        .lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && want.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// A loopback port free at the time of asking.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    l.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"))
}
