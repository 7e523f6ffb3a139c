//! The `signpost` command line: `policy check`, and refusing bad files with
//! a clear message and a non-zero exit (never a panic).

use signpost::policy;

use crate::common::{CHAOS_POLICY, DEFAULT_POLICY, GARBAGE_POLICY, OUTCOME_BUGS_POLICY, STRICT_POLICY, run_cli as run};

#[test]
fn policy_check_reports_identity_or_failure() {
    let (ok, text) = run(&["policy", "check", DEFAULT_POLICY]);
    assert!(ok, "{text}");
    assert!(text.contains("identity signpost-default 0.1.0"), "{text}");
    assert!(text.contains("all valid") && text.contains("ok: signpost-default 0.1.0 (build "), "{text}");
    for other in [CHAOS_POLICY, STRICT_POLICY] {
        let (ok, text) = run(&["policy", "check", other]);
        assert!(ok, "{text}");
    }
    // Refused every time. Why is its invalid hints, unless a busy machine
    // made one of its (slow, garbage-heavy) calls miss the 100 ms deadline
    // first, which stops a check too: then ask again.
    let mut text = String::new();
    for _ in 0..3 {
        let (ok, said) = run(&["policy", "check", GARBAGE_POLICY]);
        assert!(!ok && said.contains("FAILED: self-check failed"), "{said}");
        text = said;
        if !text.contains("a call timed out") {
            break;
        }
    }
    assert!(text.contains("invalid hint"), "{text}");
    let junk = std::env::temp_dir().join(format!("signpost-junk-{}.wasm", std::process::id()));
    std::fs::write(&junk, b"definitely not wasm").unwrap_or_default();
    let (ok, text) = run(&["policy", "check", &junk.display().to_string()]);
    assert!(!ok && text.contains("FAILED") && text.contains("not a valid WebAssembly component"), "{text}");
    let (ok, text) = run(&["policy", "check", "/nonexistent/policy.wasm"]);
    assert!(!ok && text.contains("reading policy /nonexistent/policy.wasm"), "{text}");
    let _ = std::fs::remove_file(junk);
}

#[test]
fn version_states_the_policy_interface_it_accepts() {
    let (ok, text) = run(&["--version"]);
    assert!(ok, "{text}");
    let accepted = format!(
        "export {} (WIT package signpost:policy@{}), signpost:policy/policy@0.2.0 or signpost:policy/policy@0.1.0",
        policy::POLICY_INTERFACE,
        policy::WIT_VERSION
    );
    assert!(text.starts_with("signpost ") && text.contains(&accepted), "{text}");
}

#[test]
fn bad_graph_files_are_refused_clearly() {
    let dir = std::env::temp_dir();
    let cases = [
        ("not json", "not valid signpost-graph JSON"),
        (r#"{"nodes":[{"id":"abc","kind":"class","name":"A"}]}"#, "nodes[0].id"),
    ];
    for (i, (content, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("signpost-graph-{}-{i}.json", std::process::id()));
        std::fs::write(&path, content).unwrap_or_default();
        let (ok, text) = run(&["--graph", &path.display().to_string()]);
        assert!(!ok, "{content}");
        assert!(text.contains(needle), "{needle} missing:\n{text}");
        let _ = std::fs::remove_file(path);
    }
    let (ok, text) = run(&["--policy-timeout-ms", "0"]);
    assert!(!ok && text.contains("policy-timeout-ms"), "{text}");
}

#[test]
fn policy_test_runs_golden_cases() {
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../hints-component/cases");
    let (ok, text) = run(&["policy", "test", DEFAULT_POLICY, "--cases", cases]);
    assert!(ok, "{text}");
    let total = std::fs::read_dir(cases).map(|d| d.count()).unwrap_or(0);
    assert!(total >= 10, "the default policy ships its cases");
    assert!(text.contains(&format!("{total} of {total} cases passed")), "{text}");
    // Another policy with another philosophy fails them, saying why.
    let (ok, text) = run(&["policy", "test", STRICT_POLICY, "--cases", cases]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("FAIL 11-coerce-name-teaches-resolve.json")
            && text.contains("first hint is not resolve")
            && text.contains("hints were:"),
        "{text}"
    );
    // A malformed case is a failure with a reason; an empty directory an error.
    let dir = std::env::temp_dir().join(format!("signpost-cases-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let (ok, text) = run(&["policy", "test", DEFAULT_POLICY, "--cases", &dir.display().to_string()]);
    assert!(!ok && text.contains("no *.json cases"), "{text}");
    std::fs::write(dir.join("bad.json"), r#"{"call": {"tool": "resolve"}, "expect": {"colour": "blue"}}"#)
        .unwrap_or_default();
    let (ok, text) = run(&["policy", "test", DEFAULT_POLICY, "--cases", &dir.display().to_string()]);
    assert!(!ok && text.contains("FAIL bad.json") && text.contains("not a case"), "{text}");
    // A policy that prints, sleeps or polls (no runtime runs here): each
    // case answers, the waits cut off at the policy's deadline.
    let _ = std::fs::remove_file(dir.join("bad.json"));
    for marker in ["chaos:print", "chaos:sleep", "chaos:poll"] {
        let case = serde_json::json!({
            "description": marker,
            "call": {"tool": "search", "args": {"query": marker}},
            "expect": {"state_tag": "chaos"}
        });
        std::fs::write(dir.join(format!("{}.json", &marker[6..])), case.to_string()).unwrap_or_default();
    }
    let (_, text) = run(&["policy", "test", CHAOS_POLICY, "--cases", &dir.display().to_string()]);
    assert!(text.contains("of 3 cases passed") && !text.contains("not a case") && !text.contains("panicked"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Golden tests are strict: a case whose expectations hold still fails when
/// the host had to correct the policy's answers on the way (here an invalid
/// hint, on the one path where the policy has its bug), saying what was
/// corrected; `--lenient` passes it and lists the corrections. `policy
/// check --cases` runs them strictly after the self-check, and `--explain`
/// lists the probes.
#[test]
fn golden_cases_fail_on_what_the_host_corrected_unless_lenient() {
    let dir = std::env::temp_dir().join(format!("signpost-strict-cases-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_default();
    // neighbors that finds nothing: the outcome-bugs policy hints at a tool
    // that does not exist there, and the host drops the hint.
    let case = serde_json::json!({
        "description": "nothing calls into the controller",
        "call": {"tool": "neighbors", "args": {
            "ids": ["721797098567ca69c8d8f724033dc6ec8670d50b"], "direction": "in", "edge_types": ["EXPOSES"]
        }},
        "expect": {"is_error": false, "result": {"/total": 0}}
    });
    std::fs::write(dir.join("01-empty-neighbors.json"), case.to_string()).unwrap_or_default();
    let cases = dir.display().to_string();
    let (ok, text) = run(&["policy", "test", OUTCOME_BUGS_POLICY, "--cases", &cases]);
    assert!(!ok && text.contains("FAIL 01-empty-neighbors.json"), "{text}");
    assert!(text.contains("the host corrected the policy's answers"), "{text}");
    assert!(text.contains("call 1 (neighbors): invalid hint") && text.contains("no_such_tool"), "{text}");
    assert!(text.contains("0 of 1 cases passed"), "{text}");
    let (ok, text) = run(&["policy", "test", OUTCOME_BUGS_POLICY, "--cases", &cases, "--lenient"]);
    assert!(ok && text.contains("PASS 01-empty-neighbors.json"), "{text}");
    assert!(text.contains("passed leniently") && text.contains("no_such_tool"), "{text}");
    assert!(text.contains("1 of 1 cases passed (leniently)"), "{text}");
    // The default policy corrects nothing there: it passes strictly.
    let (ok, text) = run(&["policy", "test", DEFAULT_POLICY, "--cases", &cases]);
    assert!(ok && !text.contains("leniently"), "{text}");

    // `check --cases`: the self-check, then the cases, strictly.
    let default_cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../hints-component/cases");
    let (ok, text) = run(&["policy", "check", DEFAULT_POLICY, "--cases", default_cases, "--explain"]);
    assert!(ok && text.contains("golden cases passed, strictly"), "{text}");
    assert!(text.contains("search {\"query\":\"zzqxwvk\"}"), "--explain lists the probes: {text}");
    let (ok, text) = run(&["policy", "check", STRICT_POLICY, "--cases", default_cases]);
    assert!(!ok && text.contains("golden cases failed") && text.contains("01-resolve-one.json"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A report whose reader went away (`… | head -1`) ends the command
/// quietly, as other Unix tools end: no panic, no backtrace.
#[test]
fn a_report_to_a_closed_pipe_ends_quietly() {
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../hints-component/cases");
    for args in [
        vec!["policy", "test", DEFAULT_POLICY, "--cases", cases],
        vec!["policy", "check", DEFAULT_POLICY, "--explain"],
        vec!["graph", "symbols"],
    ] {
        let mut child = std::process::Command::new(crate::common::BIN)
            .args(&args)
            .current_dir(crate::common::outside_any_project())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        // 141 (as a shell reports SIGPIPE), or done before it noticed.
        assert!(matches!(out.status.code(), Some(141 | 0)), "{args:?}: {:?} {stderr}", out.status);
    }
}

/// `policy export-default --cases DIR` writes the default policy's cases,
/// with the graph four of them run on beside them: they pass where written.
#[test]
fn the_default_policys_cases_export_and_pass_where_written() {
    let dir = std::env::temp_dir().join(format!("signpost-default-cases-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let wasm = std::env::temp_dir().join(format!("signpost-default-{}.wasm", std::process::id()));
    let cases = dir.display().to_string();
    let (ok, text) = run(&["policy", "export-default", &wasm.display().to_string(), "--cases", &cases]);
    assert!(ok, "{text}");
    let shipped = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../hints-component/cases"))
        .map(|d| d.count())
        .unwrap_or(0);
    let (ok, text) = run(&["policy", "test", &wasm.display().to_string(), "--cases", &cases]);
    assert!(ok && text.contains(&format!("{shipped} of {shipped} cases passed")), "{text}");
    // Written again: refused, nothing overwritten.
    let (ok, text) = run(&["policy", "export-default", &wasm.display().to_string(), "--cases", &cases]);
    assert!(!ok && text.contains("creating"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_file(wasm);
}

/// The default component and the WIT package come out of the binary: the
/// bytes are the embedded ones, and the printed sha256 is the one the
/// server reports for its serving policy.
#[tokio::test(flavor = "multi_thread")]
async fn the_default_component_and_the_wit_export_without_a_checkout() {
    let dir = std::env::temp_dir().join(format!("signpost-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let wasm = dir.join("nested/default.wasm");
    let (ok, text) = run(&["policy", "export-default", &wasm.display().to_string()]);
    assert!(!ok && text.contains("writing"), "a missing directory is an error, not a panic: {text}");
    std::fs::create_dir_all(dir.join("nested")).unwrap_or_default();
    let (ok, text) = run(&["policy", "export-default", &wasm.display().to_string()]);
    assert!(ok, "{text}");
    assert_eq!(std::fs::read(&wasm).unwrap_or_default(), signpost::DEFAULT_POLICY);
    let client = crate::common::Client::default().await;
    let sha = client.status().await["active"]["sha256"].as_str().unwrap_or_default().to_owned();
    client.close().await;
    assert!(!sha.is_empty() && text.starts_with(&sha), "printed {text}, serving {sha}");
    let (ok, text) = run(&["policy", "wit", &dir.join("wit").display().to_string()]);
    assert!(ok && text.contains("signpost:policy@"), "{text}");
    let wit = std::fs::read_to_string(dir.join("wit/policy.wit")).unwrap_or_default();
    assert_eq!(wit, include_str!("../../wit/policy.wit"));
    assert!(wit.contains("package signpost:policy@0.3.0;"), "the newest by default");
    let (ok, text) = run(&["policy", "wit", "--version", "0.2.0", &dir.join("v2").display().to_string()]);
    assert!(ok && text.contains("signpost:policy@0.2.0"), "{text}");
    let wit = std::fs::read_to_string(dir.join("v2/policy.wit")).unwrap_or_default();
    assert_eq!(wit, include_str!("../../wit/0.2.0/policy.wit"));
    let (ok, text) = run(&["policy", "wit", "--version", "0.1.0", &dir.join("old").display().to_string()]);
    assert!(ok && text.contains("signpost:policy@0.1.0"), "{text}");
    let wit = std::fs::read_to_string(dir.join("old/policy.wit")).unwrap_or_default();
    assert_eq!(wit, include_str!("../../wit/0.1.0/policy.wit"));
    let (ok, text) = run(&["policy", "wit", "--version", "0.4.0", &dir.join("new").display().to_string()]);
    let known = ["0.3.0", "0.2.0", "0.1.0"].iter().all(|v| text.contains(v));
    assert!(!ok && known, "an unknown version names the known: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}
