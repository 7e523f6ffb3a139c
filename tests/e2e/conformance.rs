//! Installs and runs the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, which needs Node 22 or newer), by
//! way of [`crate::toolchain`].

use std::path::PathBuf;
use std::process::Command;

use crate::toolchain;

const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";

pub struct Runner {
    node: PathBuf,
    cli: PathBuf,
}

impl Runner {
    /// Finds or installs Node >= 22 and the suite; `None` if skipped.
    pub fn install() -> Option<Runner> {
        let installed = toolchain::npm_tools("mcp-conformance", 22, None, &[SUITE]).map(|(node, dir)| Runner {
            node: node.node,
            cli: dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        });
        toolchain::require(SUITE, installed)
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
