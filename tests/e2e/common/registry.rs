//! An OCI registry of the test's own: Debian's `docker-registry` (the
//! reference distribution server) on a free loopback port, storing under a
//! temporary directory; stopped when dropped.

use std::path::PathBuf;

use super::toolchain;

pub struct OciRegistry {
    child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Where it stores blobs and manifests.
    pub storage: PathBuf,
    dir: PathBuf,
}

impl OciRegistry {
    pub fn start() -> Result<OciRegistry, String> {
        OciRegistry::start_with(None)
    }

    /// One that asks for HTTP basic credentials: `htpasswd` is a line of
    /// an htpasswd file (`user:bcrypt-hash`).
    pub fn start_with(htpasswd: Option<&str>) -> Result<OciRegistry, String> {
        let mut last = String::new();
        // A free port can be taken between the probe and the bind: retry.
        for attempt in 0..5 {
            match OciRegistry::start_at(crate::common::free_port(), attempt, htpasswd) {
                Ok(r) => return Ok(r),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn start_at(port: u16, attempt: u32, htpasswd: Option<&str>) -> Result<OciRegistry, String> {
        let exe = toolchain::docker_registry()?;
        let dir = std::env::temp_dir().join(format!("signpost-registry-{}-{port}-{attempt}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let storage = dir.join("storage");
        std::fs::create_dir_all(&storage).map_err(|e| e.to_string())?;
        let config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    \
             enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            storage.display()
        );
        let mut config = config;
        if let Some(line) = htpasswd {
            let file = dir.join("htpasswd");
            std::fs::write(&file, format!("{line}\n")).map_err(|e| e.to_string())?;
            config.push_str(&format!("auth:\n  htpasswd:\n    realm: signpost-tests\n    path: {}\n", file.display()));
        }
        let config_path = dir.join("config.yml");
        std::fs::write(&config_path, config).map_err(|e| e.to_string())?;
        let mut child = std::process::Command::new(&exe)
            .arg("serve")
            .arg(&config_path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(20) {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("docker-registry exited ({status}) on port {port}"));
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(OciRegistry { child, port, storage, dir });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(format!("docker-registry did not listen on port {port} within 20 s"))
    }

    /// `oci://127.0.0.1:PORT/PATH`.
    pub fn reference(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    /// The file holding the blob `digest` (`sha256:…`).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage.join("docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }

    /// Sends the server a signal (`STOP`, `CONT`).
    pub fn signal(&self, signal: &str) {
        let sent =
            std::process::Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{signal}");
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
