//! A `redis-server` of the test's own, for the suites that share trails
//! between replicas.

use super::toolchain;

/// A `redis-server` of the test's own, on a free port, with nothing saved
/// to disk; stopped when dropped.
pub struct Redis {
    child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Redis {
    pub fn start() -> Result<Redis, String> {
        let mut last = String::new();
        // A free port can be taken between the probe and the bind: retry.
        for _ in 0..5 {
            match Redis::start_at(crate::common::free_port()) {
                Ok(redis) => return Ok(redis),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub fn start_at(port: u16) -> Result<Redis, String> {
        use std::io::BufRead as _;
        let exe = toolchain::redis_server()?;
        let mut last = String::new();
        {
            let mut child = std::process::Command::new(&exe)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(["--dir", &std::env::temp_dir().display().to_string()])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("{}: {e}", exe.display()))?;
            let stdout = child.stdout.take().ok_or("no stdout")?;
            let mut lines = std::io::BufReader::new(stdout).lines();
            let ready = lines.by_ref().map_while(Result::ok).any(|line| {
                last = line.clone();
                line.contains("Ready to accept connections")
            });
            if ready {
                std::thread::spawn(move || for _ in lines {});
                return Ok(Redis { child, port });
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(format!("redis-server did not start on port {port}: {last}"))
    }

    /// Sends the server a signal (`STOP`, `CONT`).
    pub fn signal(&self, signal: &str) {
        let sent =
            std::process::Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{signal}");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
