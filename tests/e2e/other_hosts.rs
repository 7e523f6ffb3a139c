//! The default policy component, unchanged, in other WebAssembly hosts
//! (Node.js through jco, Python through wasmtime-py and the embedding kit,
//! and the wasmtime CLI when one is installed), giving the same answers as
//! in Signpost, call for call; and each host's answer to `host.history`,
//! through the chaos policy's 0.3.0 build, which asks for it.
//!
//! The tools come from npm and PyPI through [`crate::common::toolchain`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use signpost::graph::Graph;
use signpost::policy::{self, Limits, PolicyEngine};
use signpost::tools::{self, StrictIds, Tool};

use crate::common::swap::read;
use crate::common::toolchain;
use crate::common::{CHAOS_POLICY, CHAOS_V3_POLICY, DEFAULT_POLICY};

use crate::common::wave::{signature, wave};

const WASMTIME_PY: &str = "wasmtime==50.0.1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

// ---------------------------------------------------------------------------
// Other hosts. Each runs a list of probes — calls to the policy's exports —
// and answers in the JSON form of WIT values (tests/hosts/README.md); the
// answers must equal Signpost's own, call for call.

struct Probes {
    /// `[{"fn": ..., "args": [...]}]`, the input every host runner reads.
    calls: Vec<Value>,
    /// What Signpost's host answered, in the same form.
    expected: Vec<Value>,
}

fn call_json(c: &policy::Call) -> Value {
    json!({"tool": c.tool, "args": c.args})
}

fn session_json(s: &policy::Session) -> Value {
    let recent: Vec<Value> = s.recent.iter().map(|p| json!({"tool": p.tool, "ok": p.ok, "ids": p.ids})).collect();
    json!({"call-count": s.call_count, "recent": recent, "seen-ids": s.seen_ids})
}

fn outcome_json(o: &policy::Outcome) -> Value {
    match o {
        policy::Outcome::Success(result) => json!({"success": result}),
        policy::Outcome::Failure(e) => {
            let kind = match e.kind {
                policy::WitErrorKind::InvalidId => "invalid-id",
                policy::WitErrorKind::UnknownId => "unknown-id",
                policy::WitErrorKind::BadArgument => "bad-argument",
                policy::WitErrorKind::Internal => "internal",
            };
            json!({"failure": {"kind": kind, "message": e.message, "example": e.example}})
        }
    }
}

fn hints_json(hints: &[policy::Hint]) -> Value {
    hints
        .iter()
        .map(|h| json!({"tool": h.tool, "args": h.args, "actionable": h.actionable, "reason": h.reason}))
        .collect()
}

fn advice_json(a: &policy::Advice) -> Value {
    json!({
        "state-tag": a.state_tag,
        "summary": a.summary,
        "details": a.details,
        "hints": hints_json(&a.hints),
        "ask-user": a.ask_user,
    })
}

fn answered<T>(r: Result<T, policy::PolicyFault>) -> T {
    r.unwrap_or_else(|e| panic!("Signpost's host: {e}"))
}

/// Probes over the sample graph, answered by Signpost's host: every export,
/// ids in many shapes (including non-ASCII and control characters, which
/// cross each host's string conversion), every tool's success and failure
/// outcomes, two sessions, and the rendering of each advice.
fn probes() -> Probes {
    let engine = PolicyEngine::new(Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let policy = engine.load(&read(DEFAULT_POLICY), "default").unwrap_or_else(|e| panic!("{e}"));
    let mut lease = policy.cold_lease();
    let graph = Graph::sample();
    let id = |name: &str| graph.find_named(name).map(|n| n.id()).unwrap_or_default();
    let (ctrl, svc) = (id("OrderController"), id("OrderService"));
    let mut p = Probes { calls: vec![json!({"fn": "identity", "args": []})], expected: vec![] };
    let info = answered(lease.identity());
    p.expected.push(json!({"name": info.name, "version": info.version}));

    let shapes = [
        json!([ctrl, svc]),
        json!(format!("('{}', '{svc}',)", ctrl.to_uppercase())),
        json!(format!("{ctrl}, {svc}")),
        json!(ctrl),
        json!("OrderService"),
        json!("naïve 🦀 id"),
        json!("\u{1}\u{7f}"),
        json!([1, [2]]),
        json!({"id": ctrl}),
        json!("x".repeat(70_000)),
        json!(""),
    ];
    for ids in shapes {
        for (tool, param) in [("neighbors", "ids"), ("describe", "id")] {
            let call = policy::Call {
                tool: tool.into(),
                args: json!({param: ids, "direction": "out", "edge_types": ["CALLS"]}).to_string(),
            };
            p.calls.push(json!({"fn": "coerce-ids", "args": [call_json(&call), param]}));
            p.expected.push(match answered(lease.coerce_ids(&call, param)) {
                Ok(ids) => json!({"ok": ids}),
                Err(e) => json!({"err": {"message": e.message, "example": e.example}}),
            });
        }
    }

    let sessions = [
        policy::Session { call_count: 0, recent: vec![], seen_ids: vec![] },
        policy::Session {
            call_count: 3,
            recent: vec![
                policy::PastCall { tool: "resolve".into(), ok: true, ids: vec![svc.clone()] },
                policy::PastCall { tool: "describe".into(), ok: false, ids: vec![] },
            ],
            seen_ids: vec![svc.clone()],
        },
    ];
    let calls = [
        ("resolve", json!({"identifier": "placeOrder"})),
        ("resolve", json!({"identifier": "Nope"})),
        ("describe", json!({"id": ctrl})),
        ("describe", json!({"id": "0".repeat(40)})),
        ("find", json!({"role": "service", "limit": 2})),
        ("search", json!({"query": "payment"})),
        ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]})),
        ("neighbors", json!({"ids": [svc], "direction": "in", "edge_types": ["EXPOSES"]})),
        ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["CALLZ"]})),
    ];
    for (tool, args) in calls {
        let map = args.as_object().cloned().unwrap_or_default();
        let outcome = tools::parse(&graph, Tool::from_name(tool).expect("a tool"), &map, &mut StrictIds)
            .and_then(|parsed| tools::execute(&graph, parsed));
        let outcome = signpost::pipeline::to_wit_outcome(&outcome);
        let call = policy::Call { tool: tool.into(), args: args.to_string() };
        for session in &sessions {
            p.calls.push(json!({"fn": "prerequisites", "args": [call_json(&call), session_json(session)]}));
            let history = std::sync::Arc::new(session.clone());
            let before = answered(lease.prerequisites(&call, &history));
            p.expected.push(json!({"hints": hints_json(&before.hints), "hold": before.hold}));
            let advice = answered(lease.advise(&call, &outcome, &history));
            p.calls.push(
                json!({"fn": "advise", "args": [call_json(&call), outcome_json(&outcome), session_json(session)]}),
            );
            p.expected.push(advice_json(&advice));
            p.calls.push(json!({"fn": "render", "args": [call_json(&call), advice_json(&advice)]}));
            p.expected.push(json!(answered(lease.render(&call, &advice))));
        }
    }
    // The history must change some answer, or a host that answers the
    // policy's `host.has-seen` wrongly would pass.
    let before: Vec<&Value> =
        p.calls.iter().zip(&p.expected).filter(|(c, _)| c["fn"] == "prerequisites").map(|(_, e)| e).collect();
    assert!(before.chunks(2).any(|pair| pair[0] != pair[1]), "no probe's prerequisites depend on the history");
    p
}

/// Probes of the chaos policy's 0.3.0 build, which asks the host for the
/// whole history (`host.history`) when the call says `chaos:history` and
/// writes what it was told into its summary: a host's `history` answers
/// as Signpost's does, for a first call and a later one.
fn history_probes() -> Probes {
    let engine = PolicyEngine::new(Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let policy = engine.load(&read(CHAOS_V3_POLICY), "chaos 0.3.0").unwrap_or_else(|e| panic!("{e}"));
    let mut lease = policy.cold_lease();
    let mut p = Probes { calls: vec![], expected: vec![] };
    let sessions = [
        policy::Session { call_count: 0, recent: vec![], seen_ids: vec![] },
        policy::Session {
            call_count: 7,
            recent: vec![
                policy::PastCall { tool: "search".into(), ok: true, ids: vec!["a".repeat(40)] },
                policy::PastCall { tool: "find".into(), ok: false, ids: vec![] },
            ],
            seen_ids: vec!["a".repeat(40), "b".repeat(40)],
        },
    ];
    let call = policy::Call { tool: "search".into(), args: json!({"query": "chaos:history"}).to_string() };
    let outcome = policy::Outcome::Success(json!({"results": []}).to_string());
    for session in &sessions {
        let history = std::sync::Arc::new(session.clone());
        let advice = answered(lease.advise(&call, &outcome, &history));
        p.calls
            .push(json!({"fn": "advise", "args": [call_json(&call), outcome_json(&outcome), session_json(session)]}));
        p.expected.push(advice_json(&advice));
    }
    // What the policy was told must differ between the two sessions.
    assert_ne!(p.expected[0]["summary"], p.expected[1]["summary"], "{:#}", json!(p.expected));
    p
}

/// Feeds the probes to a host runner on stdin; its answers, parsed.
fn run_host(what: &str, cmd: &mut Command, calls: &[Value]) -> Vec<Value> {
    let input = serde_json::to_vec(calls).unwrap_or_default();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("{what}: no stdin"));
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let _ = writer.join();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr).chars().take(4000).collect::<String>()
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what} printed no JSON answers ({e}):\n{}", String::from_utf8_lossy(&out.stdout)))
}

fn assert_same_answers(host: &str, probes: &Probes, answers: &[Value]) {
    assert_eq!(answers.len(), probes.expected.len(), "{host}: one answer per probe");
    for ((call, expected), got) in probes.calls.iter().zip(&probes.expected).zip(answers) {
        let shown: String = call.to_string().chars().take(300).collect();
        assert_eq!(got, expected, "{host} answered differently from Signpost for {shown}");
    }
}

/// Node.js: `jco transpile` turns the component into JS + core wasm, and
/// `tests/hosts/node/run.mjs` calls it (WASI from jco's preview2-shim).
#[test]
fn default_component_runs_in_node_through_jco() {
    let project = repo().join("tests/hosts/node");
    let installed = toolchain::npm_tools("jco", 18, Some(&project), &[]);
    let Some((node, dir)) = toolchain::require("@bytecodealliance/jco (npm)", installed) else { return };
    for (component, probes) in [(DEFAULT_POLICY, probes()), (CHAOS_V3_POLICY, history_probes())] {
        // Inside the install dir, so the transpiled JS resolves preview2-shim.
        let out = tempdir_in(&dir, "transpiled");
        toolchain::run_ok(
            Command::new(&node.node)
                .arg(dir.join("node_modules/@bytecodealliance/jco/dist/jco.js"))
                .args(["transpile", component, "--name", "policy", "--map"])
                .arg(format!("signpost:policy/host={}", project.join("host.mjs").display()))
                .arg("-o")
                .arg(&out),
        )
        .unwrap_or_else(|e| panic!("jco transpile {component}: {e}"));
        let answers = run_host(
            "node",
            Command::new(&node.node).arg(project.join("run.mjs")).arg(out.join("policy.js")),
            &probes.calls,
        );
        assert_same_answers(&format!("node (jco), {component}"), &probes, &answers);
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Python: wasmtime-py loads the component as is, with WASI p2 linked and
/// nothing granted; `tests/hosts/python/run.py` converts values by walking
/// the component's own function types.
#[test]
fn default_component_runs_in_wasmtime_py() {
    let Some(dir) = toolchain::require(WASMTIME_PY, toolchain::pip("wasmtime-py", &[WASMTIME_PY])) else { return };
    for (component, probes) in [(DEFAULT_POLICY, probes()), (CHAOS_V3_POLICY, history_probes())] {
        let answers = run_host(
            "wasmtime-py",
            Command::new("python3")
                .arg(repo().join("tests/hosts/python/run.py"))
                .arg(component)
                .env("PYTHONPATH", &dir),
            &probes.calls,
        );
        assert_same_answers(&format!("wasmtime-py, {component}"), &probes, &answers);
    }
}

/// The recipe for embedders (tests/hosts/python/bounded.py) keeps the
/// deadline: the chaos policy's endless loop is cut off, the well-behaved
/// call answers.
#[test]
fn the_python_embedding_recipe_bounds_a_looping_policy() {
    let Some(dir) = toolchain::require(WASMTIME_PY, toolchain::pip("wasmtime-py", &[WASMTIME_PY])) else { return };
    let out = Command::new("python3")
        .arg(repo().join("tests/hosts/python/bounded.py"))
        .arg(CHAOS_POLICY)
        .env("PYTHONPATH", dir)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0]["answer"]["message"].is_string(), "{text}");
    assert_eq!(lines[1]["answer"]["faulted"], "wasm trap: interrupt", "{text}");
    // 100 ms deadline; the loop never ends on its own.
    assert!(lines[1]["seconds"].as_f64().is_some_and(|s| s < 10.0), "{text}");
}

/// The Python embedding kit (`tests/hosts/python/kit`), installed with pip
/// from its path as an operator would, runs its own driver: the sanitiser
/// against every forgery of the chaos policy, the sandbox (deadline, host
/// waits, memory cap, fresh instances, the coercion rule), and the example
/// FastMCP server through the MCP Python SDK's client over stdio, with the
/// default policy (every tool, hints that work when followed) and the
/// hostile one (a loop answered in time, no forged line reaching the client,
/// memory capped, serving on after each fault); then the same texts, hints
/// and errors as Signpost's own host for every chaos trigger.
#[test]
fn the_python_embedding_kit_keeps_the_guarantees_in_a_fastmcp_server() {
    let kit = repo().join("tests/hosts/python/kit");
    let pyproject = std::fs::read(kit.join("pyproject.toml")).unwrap_or_else(|e| panic!("{e}"));
    // Its dependencies (and mcp, for the example) once per pyproject.toml ...
    let deps_name = format!("python-kit-{}", &signpost::policy::sha256_hex(&pyproject)[..12]);
    let spec = format!("{}[example]", kit.display());
    let Some(deps) = toolchain::require("signpost-embed's dependencies", toolchain::pip(&deps_name, &[&spec])) else {
        return;
    };
    // ... and the kit itself fresh from its path, built from a copy (a
    // setuptools build writes into the source tree).
    let scratch = tempdir_in(Path::new(env!("CARGO_TARGET_TMPDIR")), "python-kit");
    let (source, installed) = (scratch.join("src"), scratch.join("site"));
    copy_tree(&kit, &source);
    toolchain::run_ok(
        Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--target"])
            .arg(&installed)
            .arg(&source),
    )
    .unwrap_or_else(|e| panic!("pip install ./tests/hosts/python/kit: {e}"));
    let path = std::env::join_paths([&installed, &deps]).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new("python3")
        .arg(kit.join("tests/test_kit.py"))
        .args(["--default", DEFAULT_POLICY, "--chaos", CHAOS_POLICY, "--signpost", crate::common::BIN])
        .env("PYTHONPATH", path)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let summary = stdout.lines().rev().find(|l| l.contains(" passed, ")).unwrap_or_default();
    assert!(out.status.success() && summary.contains(" 0 failed, 0 skipped"), "{stdout}\n{stderr}");
    let passed: usize = summary.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(passed >= 30, "{summary}");
    let _ = std::fs::remove_dir_all(scratch);
}

/// Copies a directory tree (files and directories; no build output).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())).flatten() {
        let name = entry.file_name();
        if ["build", "__pycache__"].contains(&name.to_string_lossy().as_ref())
            || name.to_string_lossy().ends_with(".egg-info")
        {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        }
    }
}

/// A fresh directory under `parent` for one test run.
fn tempdir_in(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The wasmtime CLI, which invokes one export per run (`--invoke` with WAVE
/// arguments). It runs when `SIGNPOST_WASMTIME` names a `wasmtime` binary or
/// one is on PATH; building it (`cargo install wasmtime-cli@48.0.8 --locked`)
/// takes longer than the rest of the suite, so the suite does not.
#[test]
fn default_component_runs_in_the_wasmtime_cli() {
    let wasmtime = std::env::var_os("SIGNPOST_WASMTIME").map_or_else(|| PathBuf::from("wasmtime"), PathBuf::from);
    if Command::new(&wasmtime).arg("--version").output().is_err() {
        eprintln!(
            "SKIPPED: no wasmtime CLI ({}); install one with `cargo install wasmtime-cli@48.0.8 --locked` and \
             put it on PATH or in SIGNPOST_WASMTIME",
            wasmtime.display()
        );
        return;
    }
    let probes = probes();
    for (call, expected) in probes.calls.iter().zip(&probes.expected) {
        let function = call["fn"].as_str().unwrap_or_default();
        // The CLI cannot answer the policy's questions about a session
        // (`host.has-seen`): the functions that ask are left to the hosts
        // above, and the import the others never call traps.
        if matches!(function, "prerequisites" | "advise") {
            continue;
        }
        let (params, result) = signature(function);
        let args: Vec<String> =
            params.iter().zip(call["args"].as_array().into_iter().flatten()).map(|(ty, v)| wave(ty, v)).collect();
        let invoke = format!("{function}({})", args.join(", "));
        let out = toolchain::run_ok(
            Command::new(&wasmtime)
                .args(["run", "-Wunknown-imports-trap=y", "--invoke"])
                .arg(&invoke)
                .arg(DEFAULT_POLICY),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let shown: String = invoke.chars().take(300).collect();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim_end(),
            wave(&result, expected),
            "the wasmtime CLI answered differently from Signpost for {shown}"
        );
    }
}
