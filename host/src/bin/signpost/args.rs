//! The flags of serving ([`ServeArgs`]: the top-level flags and
//! `signpost serve`'s, which the tool commands and `signpost policy` read
//! the policy's settings from too), of a proxy ([`ProxyArgs`]) and of its
//! backend ([`BackendArgs`]), and what they make: the HTTP face's options,
//! the evidence kept, the policy engine and its limits, where the backend
//! is.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use signpost::oci::PolicySource;
use signpost::oci::follow::{Follower, Trust};
use signpost::policy::{Limits, PolicyEngine};

#[derive(clap::Args, Clone)]
pub(super) struct ProxyArgs {
    #[command(flatten)]
    pub(super) serve: ServeArgs,
    #[command(flatten)]
    pub(super) backend: BackendArgs,
}

/// Where a proxy's backend is: a command after `--`, or a URL.
#[derive(clap::Args, Clone)]
pub(super) struct BackendArgs {
    /// Deadline of one call to the backend, in seconds: past it the agent
    /// gets a tool error (with the policy's advice) and the backend is told
    /// to cancel.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    backend_timeout_secs: u64,
    /// The backend as a streamable HTTP endpoint instead of a command,
    /// e.g. `https://mcp.example.com/mcp`.
    #[arg(long, value_name = "URL", conflicts_with = "backend")]
    pub(super) backend_url: Option<String>,
    /// File holding a bearer token for the backend URL (also read from
    /// SIGNPOST_BACKEND_TOKEN).
    #[arg(long, value_name = "PATH", requires = "backend_url")]
    backend_token_file: Option<PathBuf>,
    /// Another header for the backend URL, as `Name: value` (repeatable).
    #[arg(long, value_name = "HEADER", requires = "backend_url")]
    backend_header: Vec<String>,
    /// A backend tool you vouch only reads, though its server does not
    /// mark it so (repeatable): served with `readOnlyHint: true`, so a
    /// policy may look it up (`host.lookup`) and a name after it in a
    /// policy's text reads as prose. A policy cannot say this; only the
    /// backend or you can.
    #[arg(long = "read-only", value_name = "TOOL")]
    read_only: Vec<String>,
    /// The backend: a command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    backend: Vec<std::ffi::OsString>,
}

impl BackendArgs {
    /// Where the backend is, and each call's deadline; `None` when neither
    /// a command nor a URL was given.
    pub(super) fn command(&self) -> anyhow::Result<Option<signpost::proxy::Command>> {
        let backend = match &self.backend_url {
            None if self.backend.is_empty() => {
                anyhow::ensure!(
                    self.read_only.is_empty(),
                    "--read-only names a backend's tool, and there is no backend: give its COMMAND after `--`, or \
                     --backend-url URL"
                );
                return Ok(None);
            }
            None => signpost::proxy::Backend::Command(self.backend.clone()),
            Some(url) => {
                let token = match (&self.backend_token_file, std::env::var("SIGNPOST_BACKEND_TOKEN")) {
                    (Some(path), _) => Some(
                        std::fs::read_to_string(path)
                            .map_err(|e| anyhow::anyhow!("reading the backend token {}: {e}", path.display()))?
                            .trim()
                            .to_owned(),
                    ),
                    (None, Ok(token)) if !token.trim().is_empty() => Some(token.trim().to_owned()),
                    (None, _) => None,
                };
                let headers = self
                    .backend_header
                    .iter()
                    .enumerate()
                    .map(|(n, h)| match h.split_once(':') {
                        Some((name, value)) if !name.trim().is_empty() => {
                            Ok((name.trim().to_owned(), value.trim().to_owned()))
                        }
                        // (not shown: it may hold the value, a secret)
                        _ => Err(anyhow::anyhow!(
                            "--backend-header number {}: write it as `Name: value` (a colon after the header's name)",
                            n + 1
                        )),
                    })
                    .collect::<anyhow::Result<_>>()?;
                signpost::proxy::Backend::Url { url: url.clone(), token, headers }
            }
        };
        let timeout = std::time::Duration::from_secs(self.backend_timeout_secs);
        Ok(Some(signpost::proxy::Command { backend, timeout, read_only: self.read_only.clone() }))
    }

    /// [`BackendArgs::command`], which a proxy needs.
    pub(super) fn required(&self) -> anyhow::Result<signpost::proxy::Command> {
        self.command()?.ok_or_else(|| {
            anyhow::anyhow!(
                "no backend: give its COMMAND after `--` (signpost proxy -- npx -y @modelcontextprotocol/server-memory), or --backend-url URL"
            )
        })
    }
}

#[derive(clap::Args, Clone)]
pub(super) struct ServeArgs {
    /// A graph file: a SCIP index, the signpost JSON format or a snapshot,
    /// told apart by content (default: the embedded sample graph). Give it
    /// several times to serve a workspace; symbols join by SCIP symbol. The
    /// files are watched: a new version that loads replaces the graph.
    #[arg(long, value_name = "PATH")]
    pub(super) graph: Vec<PathBuf>,
    /// Serve a repository as its code stands now: index it (Java, Kotlin, Go,
    /// C#, C, C++, Ruby, PHP, Swift and Scala at once with the built-in indexer; Rust, TypeScript and Python with
    /// their SCIP indexers in the background), then follow its edits. The
    /// indexes live in $XDG_CACHE_HOME/signpost/projects/.
    #[arg(long, value_name = "DIR")]
    pub(super) project: Option<PathBuf>,
    /// Trust the project's tree: its SCIP indexers may run, which run the
    /// project's own code (build scripts, cargo configuration, the build
    /// tool's plugins). Without it (or `signpost trust DIR`), the built-in
    /// indexer reads every language and nothing of the tree runs.
    #[arg(long, requires = "project")]
    pub(super) trust: bool,
    /// `LANG=builtin`: the built-in indexer reads LANG (rust, typescript,
    /// python, java, go, …) even where its SCIP indexer could run
    /// (repeatable; the configuration's `[indexer]` table says it for all
    /// projects: `rust = "builtin"`).
    #[arg(long, value_name = "LANG=builtin", requires = "project", value_parser = builtin_choice)]
    pub(super) indexer: Vec<String>,
    /// A policy component (default: the embedded default policy): a file,
    /// watched, or an OCI artifact, `oci://REGISTRY/REPO:TAG` (its tag
    /// polled) or `…@sha256:DIGEST`, verified with --policy-key. A new
    /// version that passes every check replaces the live one.
    #[arg(long, value_name = "PATH|oci://…")]
    pub(super) policy: Option<PolicySource>,
    /// The public key (PEM, ECDSA P-256 or Ed25519, as `cosign.pub`) that
    /// an OCI policy, canary or shadow must carry a cosign signature by;
    /// an unsigned one, or one signed by another key, is never served.
    #[arg(long, value_name = "FILE")]
    pub(super) policy_key: Option<PathBuf>,
    /// Serve OCI policies without a signature, on the registry's word alone.
    #[arg(long, conflicts_with = "policy_key")]
    pub(super) policy_unsigned: bool,
    /// Seconds between two polls of an OCI policy's tag (a digest never moves).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(super) policy_poll_secs: u64,
    /// The largest policy component pulled from a registry, in bytes.
    #[arg(long, default_value_t = signpost::oci::DEFAULT_MAX_COMPONENT, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub(super) policy_max_bytes: u64,
    /// Seconds each registry request may take, its body read included.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub(super) registry_timeout_secs: u64,
    /// A registry reached over plain HTTP (HOST:PORT; a loopback one always
    /// is), repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    pub(super) registry_plain_http: Vec<String>,
    /// Golden cases (a directory of `signpost policy test` case files)
    /// every policy file must pass, strictly, before it serves: at start,
    /// on every swap, and for a canary or a shadow.
    #[arg(long, value_name = "DIR")]
    pub(super) policy_cases: Option<PathBuf>,
    /// List each tool's output schema in `tools/list` (16 KB more, about
    /// 4,000 tokens every agent reads before its first question). Results
    /// carry the same `structuredContent` either way; turn this on for a
    /// client that validates results against a declared schema.
    #[arg(long)]
    pub(super) output_schemas: bool,
    /// Do not watch the policy and graph files (SIGHUP still reloads the policy).
    #[arg(long)]
    pub(super) no_watch: bool,
    /// Where compiled policies are cached [default: $XDG_CACHE_HOME/signpost or ~/.cache/signpost].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile policies every time; never read or write the cache.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
    /// Serve MCP over streamable HTTP at this address (`PORT` or `HOST:PORT`;
    /// a bare port binds loopback) instead of stdio. The endpoint is `/mcp`,
    /// the health check `/healthz`.
    #[arg(long, value_name = "ADDR")]
    pub(super) http: Option<String>,
    /// File holding a bearer token every HTTP request must carry (also read
    /// from the SIGNPOST_TOKEN environment variable).
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Another accepted `Host` header value (loopback names are always accepted).
    #[arg(long, value_name = "HOST")]
    pub(super) allowed_host: Vec<String>,
    /// Another accepted `Origin` (e.g. `https://app.example.com:443`; loopback origins are always accepted).
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Vec<String>,
    /// Largest HTTP request body, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1024..=(64 << 20)))]
    max_body_bytes: u64,
    /// Most concurrent HTTP MCP sessions.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_sessions: u64,
    /// Close an HTTP connection whose request headers are not all read
    /// within this many seconds (a client that stops half-way).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout_secs: u64,
    /// Close HTTP sessions idle for this many seconds.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    session_idle_secs: u64,
    /// Deadline of one policy function call, in milliseconds.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    policy_timeout_ms: u64,
    /// Linear memory limit of a policy instance, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    policy_memory_mib: u64,
    /// Do not count follow-through (the status shows none, /metrics answers
    /// 404). Ignored with --record, --canary and --shadow, which need it.
    #[arg(long)]
    no_metrics: bool,
    /// Serve Prometheus metrics at this address (`PORT` or `HOST:PORT`; a
    /// bare port binds loopback), path `/metrics`, in stdio mode. (Over
    /// HTTP, `/metrics` is always beside `/mcp`.)
    #[arg(long, value_name = "ADDR", conflicts_with = "http")]
    pub(super) metrics: Option<String>,
    /// Write a decision log (JSON Lines, one line per tool call: what the
    /// agent sent, an outcome summary, the hints offered, the policy) into
    /// DIR, for `signpost policy replay`. Off by default.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Begin a new decision log file past this size, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    record_max_mib: u64,
    /// Decision log files kept in the record directory; older ones are deleted.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    record_files: u64,
    /// A canary policy component: it serves --canary-share of the sessions
    /// (each session stays with one policy), after the same checks as a hot
    /// swap. Promote or drop it with SIGUSR1 / SIGUSR2 or `signpost canary`;
    /// it is dropped on its own when it faults or its follow-through falls
    /// clearly below the live policy's (docs/metrics.md).
    #[arg(long, value_name = "FILE|oci://…")]
    pub(super) canary: Option<PolicySource>,
    /// The share of sessions the canary serves, from 0 to 1.
    #[arg(long, default_value_t = 0.1, value_parser = share, requires = "canary")]
    pub(super) canary_share: f64,
    /// Forget a trail (the state handle that carries a client's history
    /// between calls; docs/tools.md) unused for this many seconds.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=7 * 86_400))]
    pub(super) trail_idle_secs: u64,
    /// Most trails in use, and most new ones on probation (until a call
    /// continues them); the one unused longest goes first.
    #[arg(long, default_value_t = signpost::trails::DEFAULT_MAX as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub(super) max_trails: u64,
    /// Keep trails in this Redis (or Valkey), shared by every replica
    /// pointed at it, so any replica serves any call of a trail:
    /// redis://[:PASSWORD@]HOST[:PORT][/DB]. Without it, trails live in
    /// this process. Also read from SIGNPOST_STATE, which keeps a
    /// password out of the process list.
    #[arg(long, value_name = "URL")]
    pub(super) state: Option<String>,
    /// A shadow policy component: it computes hints for every call, after
    /// the response is sent, which agents never see; the metrics compare
    /// them with what agents did next.
    #[arg(long, value_name = "FILE|oci://…")]
    pub(super) shadow: Option<PolicySource>,
}

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{}` is not a share from 0 to 1 (0.1 is 10% of the sessions)", signpost::clip(s))),
    }
}

impl ServeArgs {
    pub(super) fn http_options(&self, addr: &str) -> anyhow::Result<signpost::http::HttpOptions> {
        let addr = socket_addr("--http", addr)?;
        Ok(signpost::http::HttpOptions {
            addr,
            token: self.token()?,
            allowed_hosts: self.allowed_host.clone(),
            allowed_origins: self.allowed_origin.clone(),
            max_body_bytes: self.max_body_bytes as usize,
            max_sessions: self.max_sessions as usize,
            session_idle: Duration::from_secs(self.session_idle_secs),
            header_timeout: Duration::from_secs(self.header_timeout_secs),
        })
    }

    pub(super) fn evidence(&self) -> anyhow::Result<signpost::service::Evidence> {
        let recorder = match &self.record {
            Some(dir) => Some(signpost::record::Recorder::start(signpost::record::RecordOptions {
                dir: dir.clone(),
                max_file_bytes: self.record_max_mib << 20,
                max_files: self.record_files as usize,
            })?),
            None => None,
        };
        // `Signpost` turns metrics back on for --record, --canary and --shadow.
        let metrics = (!self.no_metrics).then(Arc::default);
        Ok(signpost::service::Evidence { metrics, recorder })
    }

    /// The bearer token: `--token-file`, else `SIGNPOST_TOKEN`.
    pub(super) fn token(&self) -> anyhow::Result<Option<String>> {
        let token = match (&self.token_file, std::env::var("SIGNPOST_TOKEN")) {
            (Some(path), _) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("reading token file {}", path.display()))?
                    .trim()
                    .to_owned(),
            ),
            (None, Ok(token)) => Some(token.trim().to_owned()),
            (None, Err(_)) => None,
        };
        if token.as_ref().is_some_and(|t| t.len() < 16) {
            anyhow::bail!("the bearer token is shorter than 16 characters; use a long random one");
        }
        Ok(token)
    }

    pub(super) fn engine(&self) -> anyhow::Result<PolicyEngine> {
        let engine = PolicyEngine::new(self.limits())?;
        if self.no_cache {
            return Ok(engine);
        }
        match self.cache_root() {
            Some(dir) => match engine.clone().with_cache(dir.clone()) {
                Ok(engine) => Ok(engine),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "compiled-policy cache disabled");
                    Ok(engine)
                }
            },
            None => Ok(engine),
        }
    }

    /// The cache's directory (compiled policies; OCI artifacts under
    /// `oci/`): --cache-dir, else `$XDG_CACHE_HOME/signpost` or
    /// `~/.cache/signpost`; none with --no-cache.
    fn cache_root(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache_dir.clone().or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("signpost"))
        })
    }

    /// How registries are reached (--registry-*, --policy-max-bytes).
    pub(super) fn oci_access(&self) -> signpost::oci::Access {
        signpost::oci::Access {
            timeout: Duration::from_secs(self.registry_timeout_secs),
            max_component: self.policy_max_bytes,
            plain_http: self.registry_plain_http.clone(),
            auth: None,
        }
    }

    /// A follower of `reference` with the key, bounds and cache given.
    pub(super) fn follower(&self, reference: &signpost::oci::PolicyRef) -> anyhow::Result<Arc<Follower>> {
        let trust = match (&self.policy_key, self.policy_unsigned) {
            (Some(key), _) => Trust::Key(signpost::oci::sign::VerifyingKey::read(key)?),
            (None, true) => Trust::Unsigned,
            (None, false) => anyhow::bail!(
                "{reference}: an OCI policy is served only when signed: give --policy-key PUB (the public key its \
                 cosign signature must verify with), or --policy-unsigned to serve it on the registry's word alone"
            ),
        };
        let cache = self.cache_root().map(|d| d.join("oci"));
        Ok(Arc::new(Follower::new(reference.clone(), self.oci_access(), trust, cache)?))
    }

    /// The poll interval of OCI tags.
    pub(super) fn policy_poll(&self) -> Duration {
        Duration::from_secs(self.policy_poll_secs)
    }

    fn limits(&self) -> Limits {
        Limits {
            memory_bytes: (self.policy_memory_mib as usize) << 20,
            timeout: Duration::from_millis(self.policy_timeout_ms),
            ..Limits::default()
        }
    }
}

/// `PORT` (loopback) or `HOST:PORT`.
pub(super) fn socket_addr(flag: &str, addr: &str) -> anyhow::Result<std::net::SocketAddr> {
    match addr.parse::<u16>() {
        Ok(port) => Ok((std::net::Ipv4Addr::LOCALHOST, port).into()),
        Err(_) => addr.parse().with_context(|| format!("{flag} {addr}: expected PORT or HOST:PORT")),
    }
}

/// `--indexer LANG=builtin` for a server: a language of the built-in indexer's.
fn builtin_choice(flag: &str) -> Result<String, String> {
    let names: Vec<&str> = signpost_treesitter::languages::LANGUAGES.iter().map(|l| l.name).collect();
    match flag.split_once('=') {
        Some((lang, "builtin")) if names.contains(&lang) => Ok(flag.to_owned()),
        Some((lang, "builtin")) => Err(format!("`{lang}` is not one of {}", names.join(", "))),
        _ => Err("give LANG=builtin, e.g. rust=builtin (a server's only choice of indexer)".into()),
    }
}
