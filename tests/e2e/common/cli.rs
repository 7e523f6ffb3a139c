//! The `signpost` binary as a command: run it, run what it prints in a shell.

use std::process::Command;

use serde_json::Value;

use super::BIN;

/// A finished command: its exit code and output.
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `cmd` to its end (no `SIGNPOST_STATE`/`SIGNPOST_TOKEN` from the
/// test's environment); it must not panic.
pub fn output(cmd: &mut Command) -> Run {
    cmd.env_remove("SIGNPOST_STATE").env_remove("SIGNPOST_TOKEN");
    let out = cmd.env("RUST_LOG", "error").env_remove("NO_COLOR").output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!run.stderr.contains("panicked"), "{cmd:?} panicked:\n{}", run.stderr);
    run
}

/// Runs the `signpost` binary with `args`.
pub fn signpost(args: &[&str]) -> Run {
    output(Command::new(BIN).args(args).current_dir(super::outside_any_project()))
}

/// The command's stdout as JSON.
pub fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// The commands after `→ next: ` in a text answer (a trailing `# reason`
/// is a shell comment and stays).
pub fn next_commands(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix("→ next: ")).map(str::to_owned).collect()
}

/// Runs a printed command in a POSIX shell, as a person or an agent would paste it.
pub fn in_shell(command: &str) -> Run {
    output(Command::new("sh").arg("-c").arg(command).current_dir(super::outside_any_project()))
}
