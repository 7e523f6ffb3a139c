//! Policies in other languages: written in Python (built with
//! componentize-py) and JavaScript (componentize-js), they pass `policy
//! check` and swap live next to the two Rust policies; a Rust policy started
//! from `cargo component new` builds against the WIT the binary exports.
//!
//! The tools come from npm, PyPI and crates.io through [`crate::toolchain`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::common::swap::{Scratch, active, read};
use crate::common::toolchain;
use crate::common::{Client, DEFAULT_POLICY, STRICT_POLICY, run_cli};

const CARGO_COMPONENT: &str = "cargo-component@0.21.1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds `tests/policies/python` with its own script; the component's path,
/// or `None` when componentize-py cannot be installed (see [`toolchain::require`]).
fn build_python_policy() -> Option<PathBuf> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trail.wasm");
    toolchain::componentize_py(&repo().join("tests/policies/python/build.sh"), &out).then_some(out)
}

/// Builds `tests/policies/js` with its own script, next to its npm packages
/// (installed from its package.json and lock); the component's path, or
/// `None` when they cannot be installed.
fn build_js_policy() -> Option<PathBuf> {
    let project = repo().join("tests/policies/js");
    let installed = toolchain::npm_tools("componentize-js", 18, Some(&project), &[]);
    let (node, dir) = toolchain::require("@bytecodealliance/componentize-js (npm)", installed)?;
    // Next to node_modules, so its imports resolve.
    for file in ["build.mjs", "policy.js"] {
        std::fs::copy(project.join(file), dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compass.wasm");
    toolchain::run_ok(Command::new(&node.node).arg(dir.join("build.mjs")).arg(&out).arg(repo().join("wit")))
        .unwrap_or_else(|e| panic!("building the JavaScript policy: {e}"));
    Some(out)
}

fn check(file: &Path) -> String {
    let (passed, report) = run_cli(&["policy".as_ref(), "check".as_ref(), file.as_os_str()]);
    assert!(passed, "policy check {}:\n{report}", file.display());
    report
}

/// `signpost policy test FILE --cases DIR`: (passed, report).
fn golden(file: &Path, cases: &str) -> (bool, String) {
    let cases = repo().join(cases);
    run_cli(&["policy".as_ref(), "test".as_ref(), file.as_os_str(), "--cases".as_ref(), cases.as_os_str()])
}

/// The ids the describe hints of a reply point at.
fn described(reply: &crate::common::Reply) -> Vec<String> {
    reply
        .actionable()
        .into_iter()
        .filter(|(tool, _)| tool == "describe")
        .filter_map(|(_, args)| args["id"].as_str().map(str::to_owned))
        .collect()
}

/// Hostile arguments reach the policy's own code (coercion and advice parse
/// the agent's JSON): the answers all come back, and the policy never faults.
async fn survives_hostile_input(client: &Client, policy: &str) {
    for (tool, args) in crate::common::hostile_calls() {
        let shown: String = args.to_string().chars().take(120).collect();
        let r = client.call_any_policy(tool, args).await;
        assert!(!r.text.is_empty(), "{policy}: {tool} {shown}: no answer");
    }
    let status = client.status().await;
    assert_eq!(status["active"]["name"], policy, "{status:#}");
    let counters = &status["counters"];
    assert!(counters["traps"] == 0 && counters["timeouts"] == 0, "{policy} faulted on hostile input: {status:#}");
}

/// AUTHORING.md's cargo-component path, as a Rust author without a
/// checkout takes it: the example project (`tests/policies/cargo-component`,
/// started with `cargo component new --lib`) gets its WIT from `signpost
/// policy wit`, builds with `cargo component build --release` (wasm32-wasip1
/// and the WASI adapter, cargo-component's default), passes `policy check`
/// and its golden cases, and swaps in live.
#[tokio::test]
async fn a_cargo_component_policy_builds_from_the_exported_wit_and_swaps_in() {
    let Some(root) = toolchain::require(CARGO_COMPONENT, toolchain::cargo_install("cargo-component", CARGO_COMPONENT))
    else {
        return;
    };
    let wasip1 = Command::new("rustup").args(["target", "add", "wasm32-wasip1"]).output();
    assert!(wasip1.as_ref().is_ok_and(|o| o.status.success()), "rustup target add wasm32-wasip1: {wasip1:?}");
    // A scratch copy: what the author has, and nothing generated.
    let example = repo().join("tests/policies/cargo-component");
    let project = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cargo-component-tour");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join("src")).unwrap_or_else(|e| panic!("{e}"));
    for file in ["Cargo.toml", "Cargo.lock", "src/lib.rs"] {
        std::fs::copy(example.join(file), project.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let (ok, out) = run_cli(&["policy".as_ref(), "wit".as_ref(), project.join("wit").as_os_str()]);
    assert!(ok && out.contains("package signpost:policy@"), "{out}");
    let build = toolchain::run_ok(
        Command::new(root.join("bin/cargo-component"))
            .args(["component", "build", "--release", "--locked"])
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", project.join("target")),
    );
    let build = build.unwrap_or_else(|e| panic!("{e}"));
    let log = String::from_utf8_lossy(&build.stderr);
    assert!(log.contains("Generating bindings for tour"), "bindings come from the exported WIT: {log}");
    let tour = project.join("target/wasm32-wasip1/release/tour.wasm");

    let report = check(&tour);
    assert!(report.contains("ok: tour 0.1.0 (build "), "{report}");
    assert!(report.contains("exports  signpost:policy/policy@0.3.0 "), "built from the newest WIT: {report}");
    let (passed, report) = golden(&tour, "tests/policies/cargo-component/cases");
    assert!(passed && report.contains("4 of 4 cases passed"), "{report}");
    let (passed, report) = golden(&tour, "hints-component/cases");
    assert!(!passed, "the tour is not the default policy: {report}");

    let s = Scratch::new("cargo-component-swap");
    s.install(&read(DEFAULT_POLICY));
    let client = Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg()]).await;
    let ctrl = client.id_of("OrderController").await;
    s.install(&read(&tour));
    let status = client.wait_status(Duration::from_secs(60), |st| active(st) == "tour").await;
    assert_eq!(active(&status), "tour", "{status:#}");
    let r = client.call_any_policy("describe", json!({"id": ctrl})).await;
    assert!(r.text.starts_with("[stop] tour: class com.acme.shop.orders.OrderController"), "{}", r.text);
    assert_eq!(r.hints().len(), 1, "{}", r.text);
    client.close().await;
}

/// The "done when" of the authoring work: four policy components, two in
/// Rust, one in Python and one in JavaScript, each accepted by `policy
/// check` and each swapped in live under one running server, whose next
/// answers are the new policy's.
#[tokio::test]
async fn four_policies_in_three_languages_pass_check_and_swap_live() {
    let (Some(trail), Some(compass)) = (build_python_policy(), build_js_policy()) else { return };
    for (file, name, interface) in [
        (Path::new(DEFAULT_POLICY), "signpost-default", "0.3.0"),
        (Path::new(STRICT_POLICY), "strict", "0.1.0"),
        (trail.as_path(), "trail", "0.3.0"),
        (compass.as_path(), "compass", "0.3.0"),
    ] {
        let report = check(file);
        assert!(report.contains(&format!("ok: {name} 0.1.0 (build ")), "{report}");
        // strict, written against 0.1.0, served beside 0.3.0 unchanged.
        assert!(report.contains(&format!("exports  signpost:policy/policy@{interface} ")), "{report}");
    }

    // Each ships golden cases that pin its own behaviour, and only its own.
    for (file, own, other) in [
        (&trail, "tests/policies/python/cases", "tests/policies/js/cases"),
        (&compass, "tests/policies/js/cases", "tests/policies/python/cases"),
    ] {
        let (passed, report) = golden(file, own);
        assert!(passed && report.contains("4 of 4 cases passed"), "{report}");
        let (passed, report) = golden(file, other);
        assert!(!passed && report.contains("FAIL "), "another policy's cases must fail: {report}");
    }

    let s = Scratch::new("polyglot-swap");
    s.install(&read(DEFAULT_POLICY));
    // What is checked here is what each policy answers, not how fast: a
    // call's deadline of two seconds (100 ms by default) still ends a policy
    // that never answers, but not one slowed by builds running beside the
    // suite on two cores (the interpreted Python and JS policies are the
    // slowest; once seen counted as a timeout under such load).
    let client =
        Client::spawn(&["--policy", &s.policy_arg(), "--cache-dir", &s.cache_arg(), "--policy-timeout-ms", "2000"])
            .await;
    // A cold compile of the Python (18 MB) or JS (13 MB) component takes seconds.
    let wait = Duration::from_secs(60);
    let ctrl = client.id_of("OrderController").await;

    s.install(&read(&trail));
    let status = client.wait_status(wait, |st| active(st) == "trail").await;
    assert_eq!(active(&status), "trail", "{status:#}");
    assert_eq!(status["last_swap"]["result"], "published", "{status:#}");
    assert_eq!(
        status["accepts"],
        json!(["signpost:policy/policy@0.3.0", "signpost:policy/policy@0.2.0", "signpost:policy/policy@0.1.0"]),
        "the status names the interfaces it takes"
    );
    assert_eq!(status["active"]["interface"], "signpost:policy/policy@0.3.0", "{status:#}");

    // The Python policy's text, hints and coercion, through the real server.
    let r = client.call_any_policy("describe", json!({"id": ctrl})).await;
    assert!(!r.is_error && r.text.starts_with("trail: [ok] class "), "{}", r.text);
    assert!(r.text.contains("\nthen: neighbors "), "{}", r.text);
    let neighbors = json!({"ids": ctrl, "direction": "out", "edge_types": ["DECLARES"]});
    let first = client.call_any_policy("neighbors", neighbors.clone()).await;
    assert!(!first.is_error, "a bare id string is read by the Python coercion: {}", first.text);
    let shown = described(&first);
    assert!(!shown.is_empty() && shown.len() <= 3, "{}", first.text);
    // The session now saw those ids: the trail leads elsewhere next time.
    let again = client.call_any_policy("neighbors", neighbors).await;
    assert!(described(&again).iter().all(|id| !shown.contains(id)), "{}\n---\n{}", first.text, again.text);
    let listed = format!("{}, {}", ctrl.to_uppercase(), shown[0]);
    let r = client
        .call_any_policy("neighbors", json!({"ids": listed, "direction": "in", "edge_types": ["DECLARES"]}))
        .await;
    assert!(!r.is_error && r.structured["ids"].as_array().is_some_and(|ids| ids.len() == 2), "{}", r.text);
    let r = client
        .call_any_policy("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}))
        .await;
    assert!(r.is_error && r.text.contains("trail: `ids` of neighbors must hold"), "a teaching error: {}", r.text);

    survives_hostile_input(&client, "trail").await;
    // componentize-py's runtime imports sockets, whose waits block on the
    // runtime: its calls are handed off to other threads.
    assert_eq!(client.status().await["active"]["runs_in_place"], false);

    // The JavaScript policy: one hint at most, its own text and errors.
    s.install(&read(&compass));
    let status = client.wait_status(wait, |st| active(st) == "compass").await;
    assert_eq!(active(&status), "compass", "{status:#}");
    let r = client.call_any_policy("describe", json!({"id": ctrl})).await;
    assert!(r.text.starts_with("compass: class ") && r.text.contains("\n→ neighbors "), "{}", r.text);
    assert_eq!(r.hints().len(), 1, "{}", r.text);
    let as_text = json!({"ids": json!([ctrl]).to_string(), "direction": "out", "edge_types": ["DECLARES"]});
    let r = client.call_any_policy("neighbors", as_text).await;
    assert!(!r.is_error && r.text.starts_with("compass: 5 result(s)"), "a JSON array sent as a string: {}", r.text);
    let r =
        client.call_any_policy("neighbors", json!({"ids": ctrl, "direction": "out", "edge_types": ["CALLS"]})).await;
    assert!(r.is_error && r.text.contains("compass: `ids` of neighbors takes a JSON array"), "{}", r.text);

    survives_hostile_input(&client, "compass").await;

    // Then the strict Rust policy, then back to Python (from the cache).
    s.install(&read(STRICT_POLICY));
    let status = client.wait_status(wait, |st| active(st) == "strict").await;
    assert_eq!(active(&status), "strict", "{status:#}");
    assert!(client.call_raw_text("describe", json!({"id": ctrl})).await.contains("### Next steps"));
    s.install(&read(&trail));
    let status = client.wait_status(wait, |st| active(st) == "trail").await;
    assert_eq!(status["last_swap"]["from_cache"], true, "{status:#}");
    assert!(client.call_raw_text("describe", json!({"id": ctrl})).await.starts_with("trail: "));
    assert_eq!(status["counters"]["traps"], 0, "{status:#}");
}

/// `signpost policy new DIR --lang L` in each language, as a new author
/// takes it: the project is written, builds with its own script, passes
/// `policy check` with its three golden cases, strictly; a project is never
/// written over anything.
#[test]
fn policy_new_builds_and_passes_its_cases_in_each_language() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("policy-new");
    let _ = std::fs::remove_dir_all(&root);
    for lang in ["rust", "python", "js"] {
        let dir = root.join(format!("tour-{lang}"));
        let (ok, out) =
            run_cli(&["policy".as_ref(), "new".as_ref(), dir.as_os_str(), "--lang".as_ref(), lang.as_ref()]);
        assert!(ok && out.contains("wit/policy.wit") && out.contains("cases/01-"), "{out}");
        let wasm = dir.join("policy.wasm");
        let built = match lang {
            "rust" => {
                let build = toolchain::run_ok(Command::new("sh").arg(dir.join("build.sh")));
                build.unwrap_or_else(|e| panic!("building the new Rust policy: {e}"));
                true
            }
            "python" => toolchain::componentize_py(&dir.join("build.sh"), &wasm),
            _ => {
                // The npm packages the JavaScript example pins (the same
                // versions as the template's package.json).
                let installed =
                    toolchain::npm_tools("componentize-js", 18, Some(&repo().join("tests/policies/js")), &[]);
                let Some((node, tools)) = toolchain::require("@bytecodealliance/componentize-js (npm)", installed)
                else {
                    continue;
                };
                std::os::unix::fs::symlink(tools.join("node_modules"), dir.join("node_modules"))
                    .unwrap_or_else(|e| panic!("{e}"));
                let build = toolchain::run_ok(Command::new(&node.node).arg(dir.join("build.mjs")).arg(&wasm));
                build.unwrap_or_else(|e| panic!("building the new JavaScript policy: {e}"));
                true
            }
        };
        if !built {
            continue;
        }
        let cases = dir.join("cases");
        let (ok, report) =
            run_cli(&["policy".as_ref(), "check".as_ref(), wasm.as_os_str(), "--cases".as_ref(), cases.as_os_str()]);
        assert!(ok, "{lang}: {report}");
        let name = format!("tour-{lang}");
        assert!(report.contains(&format!("ok: {name} 0.1.0 (build ")), "{lang}: {report}");
        assert!(report.contains("exports  signpost:policy/policy@0.3.0 "), "{lang}: {report}");
        assert!(report.contains("3 golden cases passed, strictly"), "{lang}: {report}");
        // The cases pin the template's behaviour: another policy fails them.
        let (passed, report) = golden(Path::new(STRICT_POLICY), &cases.display().to_string());
        assert!(!passed && report.contains("FAIL 01-"), "{report}");
    }
    // Nothing is written over: a directory with a file in it is refused.
    let taken = root.join("tour-rust");
    let (ok, out) = run_cli(&["policy".as_ref(), "new".as_ref(), taken.as_os_str()]);
    assert!(!ok && out.contains("is not empty"), "{out}");
    let (ok, out) = run_cli(&["policy".as_ref(), "new".as_ref(), root.join("9lives").as_os_str()]);
    assert!(!ok && out.contains("makes no policy name"), "{out}");
}
