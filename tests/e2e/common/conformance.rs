//! Installs and runs the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, which needs Node 22 or newer), by
//! way of [`crate::common::toolchain`].

use std::path::PathBuf;
use std::process::Command;

use crate::common::toolchain;

const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";
/// The 0.2 line, which checks the 2026-07-28 revision (`--requirements`);
/// no stable 0.2 is published yet.
const SUITE_2026: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

pub struct Runner {
    node: PathBuf,
    cli: PathBuf,
}

impl Runner {
    /// Finds or installs Node >= 22 and the released suite; `None` if skipped.
    pub fn install() -> Option<Runner> {
        Runner::install_suite("mcp-conformance", SUITE)
    }

    /// The same for the 0.2 line.
    pub fn install_2026() -> Option<Runner> {
        Runner::install_suite("mcp-conformance-0.2.0-alpha.12", SUITE_2026)
    }

    fn install_suite(name: &str, suite: &str) -> Option<Runner> {
        let installed = toolchain::npm_tools(name, 22, None, &[suite]).map(|(node, dir)| Runner {
            node: node.node,
            cli: dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        });
        toolchain::require(suite, installed)
    }

    /// Runs a frozen requirement set (`2026-07-28`) against `url` with the
    /// list of checks expected to fail: the suite exits 0 only when exactly
    /// those fail (a listed check that passes is stale, and fails the run;
    /// a warning counts as a failure). (passed, output).
    pub fn run_requirements(&self, url: &str, requirements: &str, expected: &std::path::Path) -> (bool, String) {
        let out = Command::new(&self.node)
            .arg(&self.cli)
            .args(["server", "--url", url, "--requirements", requirements, "--expected-failures"])
            .arg(expected)
            .env("NO_COLOR", "1")
            .output()
            .unwrap_or_else(|e| panic!("running the conformance suite: {e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
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
