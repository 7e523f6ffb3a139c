//! The host's guarantees against a hostile policy, with real components:
//! the `chaos` policy (built from `tests/policies/chaos/`) traps, loops,
//! exhausts memory and returns garbage; tiny WAT components are malformed.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use signpost::graph::Graph;
use signpost::policy::{Limits, LoadError, PolicyEngine, PolicyFault};
use signpost::response::Response;
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::tools::Tool;

use crate::common::{CHAOS_POLICY, Client, DEFAULT_POLICY, obj};

fn engine() -> PolicyEngine {
    engine_with(Duration::from_millis(50))
}

/// For checks of what reaches the agent or how a fault is counted, not of
/// the deadline: one a starved CI machine cannot miss (at 50 ms a cold
/// instance could time out before it trapped, and a starved call lost
/// every hint).
fn patient_engine() -> PolicyEngine {
    engine_with(Duration::from_secs(10))
}

fn engine_with(timeout: Duration) -> PolicyEngine {
    let limits = Limits { memory_bytes: 16 << 20, timeout, ..Limits::default() };
    PolicyEngine::new(limits).unwrap_or_else(|e| panic!("engine: {e}"))
}

fn signpost_with(path: &str) -> Signpost {
    signpost_on(engine(), path)
}

fn signpost_on(engine: PolicyEngine, path: &str) -> Signpost {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let policy = engine.load(&bytes, path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Signpost::new(Graph::sample(), policy).unwrap_or_else(|e| panic!("{e}"))
}

thread_local! {
    /// One session per test (each test runs on a thread of its own), so its
    /// calls share policy instances as one agent's calls do.
    static SESSION: SessionContext = SessionContext::new();
}

fn call(sp: &Signpost, tool: &str, args: Value) -> Response {
    let tool = Tool::from_name(tool).unwrap_or_else(|| panic!("no tool {tool}"));
    SESSION.with(|session| sp.call(tool, obj(args), session))
}

#[test]
fn default_policy_loads_and_identifies_itself() {
    let sp = signpost_with(DEFAULT_POLICY);
    let policy = sp.policy();
    assert_eq!(policy.identity().name, "signpost-default");
    assert_eq!(policy.identity().sha256.len(), 64);
}

#[test]
fn traps_timeouts_and_memory_bombs_cost_only_the_hints() {
    // Only the loop needs the short deadline.
    let quick = signpost_with(CHAOS_POLICY);
    let patient = signpost_on(patient_engine(), CHAOS_POLICY);
    for (mode, fault_counter) in [("chaos:panic", "traps"), ("chaos:loop", "timeouts"), ("chaos:oom", "traps")] {
        let sp = if fault_counter == "timeouts" { &quick } else { &patient };
        let policy = sp.policy();
        let counter = |name: &str| match name {
            "traps" => policy.stats().traps.load(Ordering::Relaxed),
            _ => policy.stats().timeouts.load(Ordering::Relaxed),
        };
        let before = counter(fault_counter);
        let started = Instant::now();
        let r = call(sp, "search", json!({"query": mode}));
        assert!(started.elapsed() < Duration::from_secs(5), "{mode} took {:?}", started.elapsed());
        assert!(!r.is_error, "{mode}: the answer must come back: {}", r.text);
        assert_eq!(r.structured["hints"], json!([]), "{mode}: no hints from a faulting policy");
        assert!(r.structured["results"].is_array(), "{mode}: the result is still there");
        assert!(r.text.starts_with("[ok] search result (no hints: the hint policy failed)"), "{mode}: {}", r.text);
        assert!(counter(fault_counter) > before, "{mode} must be counted as {fault_counter}");
        // The instance was discarded; the next call works on a fresh one.
        let r = call(sp, "resolve", json!({"identifier": "OrderService"}));
        assert_eq!(r.structured["status"], "one");
    }
}

/// A heap that only grows (a leak, or a garbage-collected runtime that
/// collects lazily) must not end in a trap at the memory cap: the host
/// retires the instance while it still has room, and no answer loses hints.
#[test]
fn instances_whose_memory_only_grows_are_retired_before_the_cap() {
    // 16 MiB per instance; chaos:leak keeps 1 MiB a policy call.
    let sp = signpost_on(patient_engine(), CHAOS_POLICY);
    let policy = sp.policy();
    let stats = policy.stats();
    for i in 0..40 {
        let r = call(&sp, "search", json!({"query": "order chaos:leak"}));
        assert!(r.text.starts_with("[chaos]"), "call {i} lost its policy text: {}", r.text);
    }
    assert_eq!(stats.traps.load(Ordering::Relaxed), 0, "no call may hit the cap");
    let recycled = stats.recycled_for_memory.load(Ordering::Relaxed);
    // 40 tool calls leak well over 100 MiB in all: many 16 MiB instances.
    assert!(recycled >= 5, "instances retired for memory: {recycled}");
}

#[test]
fn garbage_from_the_policy_never_reaches_the_agent() {
    let sp = signpost_on(patient_engine(), CHAOS_POLICY);
    let r = call(&sp, "search", json!({"query": "order chaos:garbage"}));
    assert!(!r.is_error);
    let hints = r.structured["hints"].as_array().cloned().unwrap_or_default();
    // Of chaos's 8 hints (twice: prerequisites and advice), only two are valid:
    // an actionable search (reason cut) and an advisory find (cleaned).
    assert_eq!(hints.len(), 2, "{hints:#?}");
    assert_eq!(hints[0]["tool"], "search");
    assert_eq!(hints[0]["actionable"], true);
    assert_eq!(hints[0]["reason"].as_str().map(|r| r.chars().count()), Some(200));
    assert_eq!(hints[1]["reason"], "advice with control chars");
    let stats = sp.policy();
    assert!(stats.stats().hints_dropped.load(Ordering::Relaxed) >= 12);
    // Text: no control characters, the malformed tag replaced.
    assert!(r.text.starts_with("[ok] line one line two"), "{}", r.text);
    assert!(!r.text.chars().any(|c| c.is_control() && c != '\n'), "{:?}", r.text);
    // chaos renders a `→ next:` line for every hint it got, the advisory one
    // included: only the line of the valid actionable hint may survive.
    let next: Vec<&str> = r.text.lines().filter(|l| l.starts_with("→ next: ")).collect();
    assert_eq!(next, [format!("→ next: search {}", json!({"query": "order"}))], "{}", r.text);
    // Coercion garbage: malformed ids fall back to strict reading…
    let id = Graph::sample().node(0).id();
    let r =
        call(&sp, "neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["DECLARES", "chaos:badids"]}));
    assert_eq!(r.structured["error"]["kind"], "bad_argument", "strict coercion read the ids: {}", r.text);
    // …and a refusal's message is cleaned, its unparsable example dropped.
    let r = call(&sp, "describe", json!({"id": "chaos:refuse"}));
    assert_eq!(r.structured["error"]["kind"], "invalid_id");
    assert_eq!(r.structured["error"]["message"], "chaos refuses all ids");
    assert!(r.structured["error"].get("example").is_none());
}

#[test]
fn malformed_components_are_refused_with_a_reason() {
    let engine = engine();
    let wat = |text: &str| wat::parse_str(text).unwrap_or_else(|e| panic!("{e}"));
    let not_wasm = engine.load(b"\x00asm but not really", "junk").map(|_| ()).unwrap_err();
    assert!(matches!(not_wasm, LoadError::Compile(_)), "{not_wasm}");
    let text = engine.load(b"#!/bin/sh\necho policy", "script").map(|_| ()).unwrap_err();
    assert!(text.to_string().contains("not a WebAssembly file"), "{text}");
    let module = engine.load(&wat("(module)"), "core module").map(|_| ()).unwrap_err();
    assert!(matches!(module, LoadError::Compile(_)), "{module}");
    assert!(module.to_string().contains("a core WebAssembly module, not a component"), "{module}");
    let empty = engine.load(&wat("(component)"), "empty").map(|_| ()).unwrap_err();
    assert!(matches!(empty, LoadError::World { .. }), "{empty}");
    assert!(empty.to_string().contains("signpost:policy/policy@0.3.0, @0.2.0 or @0.1.0"), "{empty}");
    // A policy built against another version of the WIT package: the refusal
    // names what it exports and what this host speaks.
    let exporting = |name: &str| {
        wat(&format!(
            r#"(component
                 (core module $m (func (export "f")))
                 (core instance $i (instantiate $m))
                 (func $f (canon lift (core func $i "f")))
                 (instance $p (export "identity" (func $f)))
                 (export "{name}" (instance $p)))"#
        ))
    };
    let future = engine.load(&exporting("signpost:policy/policy@0.4.0"), "future").map(|_| ()).unwrap_err();
    assert!(matches!(future, LoadError::World { .. }), "{future}");
    let said = future.to_string();
    assert!(
        said.contains("it exports: [signpost:policy/policy@0.4.0]")
            && said.contains("this host serves (signpost:policy/policy@0.3.0, @0.2.0 or @0.1.0"),
        "{said}"
    );
    // The right names with the wrong shape (identity returns nothing here):
    // what each version found wrong is said.
    for version in ["0.1.0", "0.2.0", "0.3.0"] {
        let name = format!("signpost:policy/policy@{version}");
        let misshapen = engine.load(&exporting(&name), "misshapen").map(|_| ()).unwrap_err();
        assert!(misshapen.to_string().contains(&format!("it exports: [{name}]")), "{misshapen}");
    }
    let greedy = engine
        .load(&wat(r#"(component (import "evil:fs/files" (instance (export "read" (func)))))"#), "greedy")
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(greedy, LoadError::Link(_)), "{greedy}");
    assert!(greedy.to_string().contains("evil:fs/files"), "{greedy}");
}

#[test]
fn lease_faults_are_reported_precisely() {
    let bytes = std::fs::read(CHAOS_POLICY).unwrap_or_default();
    let policy = engine().load(&bytes, "chaos").unwrap_or_else(|e| panic!("{e}"));
    let call = signpost::policy::Call { tool: "search".into(), args: r#"{"query":"chaos:loop"}"#.into() };
    let session = std::sync::Arc::new(signpost::policy::Session { call_count: 0, recent: vec![], seen_ids: vec![] });
    let started = Instant::now();
    assert_eq!(policy.cold_lease().prerequisites(&call, &session).err(), Some(PolicyFault::Timeout));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(45) && took < Duration::from_secs(2), "deadline honoured: {took:?}");
    let patient = patient_engine().load(&bytes, "chaos").unwrap_or_else(|e| panic!("{e}"));
    let call = signpost::policy::Call { tool: "search".into(), args: r#"{"query":"chaos:panic"}"#.into() };
    let fault = patient.cold_lease().prerequisites(&call, &session).err();
    assert!(matches!(fault, Some(PolicyFault::Trap(_))), "{fault:?}");
}

#[tokio::test]
async fn a_faulting_policy_over_stdio_still_answers() {
    let client = Client::spawn(&["--policy", CHAOS_POLICY, "--policy-timeout-ms", "50"]).await;
    // Its calls run on the worker that took them (its writes hand the
    // worker off when made), until one spins to its deadline there: from
    // then on they are handed off.
    assert_eq!(client.status().await["active"]["runs_in_place"], true);
    for query in ["chaos:print", "order", "chaos:loop", "chaos:panic", "chaos:print", "order"] {
        let r = client.call("search", json!({"query": query})).await;
        assert!(!r.is_error, "{query}: {}", r.text);
        assert!(r.structured["results"].is_array(), "{query}");
    }
    assert_eq!(client.status().await["active"]["runs_in_place"], false);
}

#[tokio::test]
async fn policy_output_goes_to_the_host_log_not_stdout() {
    let log = std::env::temp_dir().join(format!("signpost-policy-log-{}.txt", std::process::id()));
    let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
    let client = Client::spawn_logging(&["--policy", CHAOS_POLICY], "info", file).await;
    // stdout is the MCP channel: if the guest's println reached it, this
    // session would break instead of answering.
    let r = client.call("search", json!({"query": "chaos:print"})).await;
    assert!(!r.is_error, "{}", r.text);
    let r = client.call("resolve", json!({"identifier": "OrderService"})).await;
    assert_eq!(r.structured["status"], "one");
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    for stream in ["stdout", "stderr"] {
        let line = text.lines().find(|l| l.contains(&format!("chaos says hello on {stream}")));
        let line = line.unwrap_or_else(|| panic!("guest {stream} missing from the host log:\n{text}"));
        assert!(line.contains("policy_output") && line.contains(&format!("stream=\"{stream}\"")), "{line}");
    }
}
