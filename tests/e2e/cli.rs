//! The `signpost` command line: `policy check`, and refusing bad files with
//! a clear message and a non-zero exit (never a panic).

use signpost::policy;

use crate::common::{CHAOS_POLICY, DEFAULT_POLICY, GARBAGE_POLICY, STRICT_POLICY, run_cli as run};

#[test]
fn policy_check_reports_identity_or_failure() {
    let (ok, text) = run(&["policy", "check", DEFAULT_POLICY]);
    assert!(ok, "{text}");
    assert!(text.contains("identity signpost-default 0.1.0"), "{text}");
    assert!(text.contains("all valid") && text.contains("ok: signpost-default 0.1.0 would be accepted"), "{text}");
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
