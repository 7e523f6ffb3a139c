//! Copies of Rust that live in Python agree with it: the peer server's port
//! of the tools and the default policy (`bench/peer/port.py`, what the peer
//! benchmark compares Signpost with), and the Python embedding kit's tables
//! (`tests/hosts/python/kit/signpost_embed/`). Each copy is run or read by
//! `python3` and held against the Rust it mirrors, so neither can drift.

use std::process::Command;

use serde_json::{Map, Value};
use signpost::DEFAULT_POLICY;
use signpost::graph::Graph;
use signpost::policy::{Limits, PolicyEngine};
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::tools::Tool;

fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python(what: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("python3 (needed to read the Python copies): {e}"));
    assert!(out.status.success(), "python3 reading {what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The state tag a text starts with (`[found]`).
fn tag(text: &str) -> &str {
    text.split(']').next().unwrap_or("")
}

#[test]
fn the_peer_port_answers_the_call_mix_as_signpost_does() {
    let lines = python("the peer port", &["bench/peer/port.py"]);
    let engine = PolicyEngine::new(Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let policy = engine.load(DEFAULT_POLICY, "default").unwrap_or_else(|e| panic!("{e}"));
    let signpost = Signpost::new(Graph::sample(), policy).unwrap_or_else(|e| panic!("{e}"));
    // One session, as the benchmark's one stdio session per server.
    let session = SessionContext::new();
    let mut calls = 0;
    let mut differences = Vec::new();
    for line in lines.lines() {
        let peer: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let tool = Tool::from_name(peer["tool"].as_str().unwrap_or_default()).expect("a tool of the mix");
        let args: Map<String, Value> = peer["args"].as_object().cloned().unwrap_or_default();
        let ours = signpost.call(tool, args.clone(), &session);
        calls += 1;
        let (mut a, mut b) = (ours.structured.clone(), peer["structured"].clone());
        let (ha, hb) =
            (a.as_object_mut().and_then(|m| m.remove("hints")), b.as_object_mut().and_then(|m| m.remove("hints")));
        let call = format!("{tool} {}", Value::Object(args));
        if a != b {
            differences.push(format!("{call}: result\n  signpost {a}\n  peer     {b}"));
        }
        if ha != hb {
            differences.push(format!(
                "{call}: hints\n  signpost {}\n  peer     {}",
                ha.unwrap_or_default(),
                hb.unwrap_or_default()
            ));
        }
        let peer_text = peer["text"].as_str().unwrap_or_default();
        if tag(&ours.text) != tag(peer_text) || ours.is_error != peer["is_error"].as_bool().unwrap_or(!ours.is_error) {
            differences.push(format!(
                "{call}: state\n  signpost {:?}\n  peer     {:?}",
                tag(&ours.text),
                tag(peer_text)
            ));
        }
    }
    assert_eq!(calls, 30, "the peer's call mix: 6 symbols × 5 calls");
    assert!(differences.is_empty(), "{} difference(s):\n{}", differences.len(), differences.join("\n"));
}

/// The kit's module-level constants: literals and simple arithmetic, read
/// without importing the package (it needs wasmtime-py).
const KIT_TABLES: &str = r#"
import ast, importlib.util, json, sys
kit = "tests/hosts/python/kit/signpost_embed/"
def consts(name):
    out = {}
    for node in ast.parse(open(kit + name).read()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = eval(compile(ast.Expression(node.value), name, "eval"), {"__builtins__": {}})
            except Exception:
                pass
    return out
spec = importlib.util.spec_from_file_location("kit_sanitize", kit + "sanitize.py")
sanitize = importlib.util.module_from_spec(spec)
sys.modules["kit_sanitize"] = sanitize
spec.loader.exec_module(sanitize)
def ranges(pred):
    out = []
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or not pred(chr(c)):
            continue
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out
print(json.dumps({
    "pipeline": {k: v for k, v in consts("pipeline.py").items() if isinstance(v, (int, float, str))},
    "sanitize": {k: v for k, v in consts("sanitize.py").items() if isinstance(v, (int, float, str))},
    "policy": {k: v for k, v in consts("policy.py").items() if isinstance(v, (int, float, str))},
    "invisible": ranges(sanitize.is_invisible),
    "line_break": ranges(sanitize.is_line_break),
    "arrow": ranges(sanitize._is_arrow),
}))
"#;

/// Ranges of code points (surrogates left out) where `pred` holds.
fn ranges(pred: impl Fn(char) -> bool) -> Value {
    let mut out: Vec<[u32; 2]> = Vec::new();
    for c in (0..0x11_0000u32).filter_map(char::from_u32).filter(|&c| pred(c)) {
        match out.last_mut() {
            Some(last) if last[1] + 1 == c as u32 => last[1] = c as u32,
            _ => out.push([c as u32, c as u32]),
        }
    }
    serde_json::to_value(out).expect("ranges")
}

#[test]
fn the_python_kit_agrees_with_the_rust_tables() {
    let kit: Value =
        serde_json::from_str(&python("the kit's tables", &["-c", KIT_TABLES])).expect("JSON from the kit reader");
    let expect = [
        ("pipeline", "MAX_DETAILS", Value::from(signpost::pipeline::MAX_DETAILS)),
        ("pipeline", "MAX_LINE", Value::from(signpost::pipeline::MAX_LINE)),
        ("pipeline", "MAX_COERCED_IDS", Value::from(signpost::pipeline::MAX_COERCED_IDS)),
        ("pipeline", "MAX_IDS", Value::from(signpost::tools::MAX_IDS)),
        ("sanitize", "MAX_TEXT", Value::from(signpost::sanitize::MAX_TEXT)),
        ("sanitize", "MAX_FAILED_PARSES", Value::from(signpost::sanitize::MAX_FAILED_PARSES)),
        ("sanitize", "REDACTED", Value::from(signpost::sanitize::REDACTED)),
        ("policy", "TICK_S", Value::from(signpost::policy::TICK.as_secs_f64())),
        ("policy", "WASI_POLL", Value::from(signpost::policy::WASI_POLL)),
    ];
    for (module, name, rust) in expect {
        assert_eq!(kit[module][name], rust, "{module}.py's {name} and the Rust it mirrors");
    }
    assert_eq!(kit["invisible"], ranges(signpost::sanitize::is_invisible), "is_invisible");
    assert_eq!(kit["line_break"], ranges(signpost::sanitize::is_line_break), "is_line_break");
    assert_eq!(kit["arrow"], ranges(signpost::sanitize::is_arrow), "is_arrow");
}
