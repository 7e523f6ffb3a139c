//! The `signpost` command line: `policy check`, and refusing bad files with
//! a clear message and a non-zero exit (never a panic).

use std::process::Command;

use crate::common::{BIN, CHAOS_POLICY, DEFAULT_POLICY, GARBAGE_POLICY, STRICT_POLICY};

fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(BIN).args(args).env("RUST_LOG", "error").output().unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("panicked"), "{args:?} panicked:\n{text}");
    (out.status.success(), text)
}

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
    let (ok, text) = run(&["policy", "check", GARBAGE_POLICY]);
    assert!(!ok, "{text}");
    assert!(text.contains("FAILED: self-check failed") && text.contains("invalid hint"), "{text}");
    let junk = std::env::temp_dir().join(format!("signpost-junk-{}.wasm", std::process::id()));
    std::fs::write(&junk, b"definitely not wasm").unwrap_or_default();
    let (ok, text) = run(&["policy", "check", &junk.display().to_string()]);
    assert!(!ok && text.contains("FAILED") && text.contains("not a valid WebAssembly component"), "{text}");
    let (ok, text) = run(&["policy", "check", "/nonexistent/policy.wasm"]);
    assert!(!ok && text.contains("reading policy /nonexistent/policy.wasm"), "{text}");
    let _ = std::fs::remove_file(junk);
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
