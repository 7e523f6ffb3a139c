//! A scratch directory holding a served policy file, and readers of the
//! `signpost://policy` status, for the suites that swap policies.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How long a swap may take to show.
pub const WAIT: Duration = Duration::from_secs(20);

/// A fresh directory for one test, with the policy file and a cache dir.
pub struct Scratch {
    /// The directory.
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("signpost-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        Scratch { dir }
    }

    pub fn policy(&self) -> PathBuf {
        self.dir.join("policy.wasm")
    }

    /// The path of `name` in the scratch directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes another file in the scratch directory; its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        path
    }

    pub fn policy_arg(&self) -> String {
        self.policy().display().to_string()
    }

    pub fn cache_arg(&self) -> String {
        self.dir.join("cache").display().to_string()
    }

    /// Replaces the policy file atomically (write elsewhere, rename over).
    pub fn install(&self, bytes: &[u8]) {
        let tmp = self.dir.join(".policy.wasm.tmp");
        std::fs::write(&tmp, bytes).unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&tmp, self.policy()).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Overwrites the policy file in place.
    pub fn overwrite(&self, bytes: &[u8]) {
        std::fs::write(self.policy(), bytes).unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A policy file's bytes.
pub fn read(path: impl AsRef<Path>) -> Vec<u8> {
    let path = path.as_ref();
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The serving policy's name, from the status resource.
pub fn active(status: &Value) -> &str {
    status["active"]["name"].as_str().unwrap_or("")
}

/// The result of the last swap, from the status resource.
pub fn last(status: &Value) -> &str {
    status["last_swap"]["result"].as_str().unwrap_or("")
}
