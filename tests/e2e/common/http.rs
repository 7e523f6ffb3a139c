//! A `signpost --http` server process for the suites that speak HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};

use super::{BIN, Recorder};

/// A `signpost --http` process on a free loopback port; killed on drop.
pub struct HttpServer {
    /// The server process.
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    /// `http://127.0.0.1:PORT`
    pub base: String,
}

impl HttpServer {
    /// Starts one with `args` and `env`, and waits until it listens.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let argv: Vec<&str> = ["--http", "127.0.0.1:0"].into_iter().chain(args.iter().copied()).collect();
        HttpServer::start_argv(&argv, env)
    }

    /// Starts `signpost ARGV` (which must listen over HTTP, e.g. `proxy
    /// --http 127.0.0.1:0 -- …`) with `env`, and waits until it listens.
    pub fn start_argv(argv: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut cmd = Command::new(BIN);
        cmd.args(argv).env("RUST_LOG", "warn").env_remove("SIGNPOST_TOKEN");
        cmd.env_remove("SIGNPOST_STATE");
        cmd.envs(env.iter().copied()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawning {BIN}: {e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines.next().and_then(Result::ok).unwrap_or_else(|| panic!("server exited before listening"));
            if let Some(url) = line.strip_prefix("signpost: listening on ") {
                break url.trim().to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let base = url.trim_end_matches("/mcp").to_owned();
        HttpServer { child, url, base }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// An rmcp client session over HTTP.
    pub async fn client(&self, token: Option<&str>) -> Result<RunningService<RoleClient, Recorder>, String> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        Recorder::default().serve(transport).await.map_err(|e| e.to_string())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
