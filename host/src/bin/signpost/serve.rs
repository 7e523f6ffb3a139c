//! `signpost` (and `signpost serve`): MCP over stdio or HTTP, with hot swap,
//! canary and shadow, and `signpost canary` to steer a running server's canary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;
use signpost::live_graph::LiveGraph;
use signpost::oci::PolicySource;
use signpost::policy::{Policy, PolicyEngine};
use signpost::reload::{self, Candidates, Reloader};
use signpost::server::Handler;
use signpost::service::Signpost;
use signpost::validate::HintValidator;

use super::args::{ServeArgs, socket_addr};
use super::{program_name, say};

/// Loads the policy to start with: the file (through every check a swap
/// runs), or the embedded default.
pub(super) fn initial_policy(
    engine: &PolicyEngine,
    path: Option<&PathBuf>,
    cases: Option<&Path>,
) -> anyhow::Result<Arc<Policy>> {
    match path {
        Some(path) => checked_policy(engine, path, "policy", cases),
        None => Ok(Arc::new(engine.load(signpost::DEFAULT_POLICY, "embedded")?)),
    }
}

/// Serves the graph, or with `backend`, another server's tools (`signpost proxy`).
pub(super) fn serve(args: ServeArgs, backend: Option<signpost::proxy::Command>) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    if backend.is_some() && (!args.graph.is_empty() || args.project.is_some()) {
        anyhow::bail!(
            "`signpost proxy` serves its backend's tools, not a code graph: drop --graph and --project \
             (serve a graph with `signpost --graph FILE`)"
        );
    }
    if backend.is_some() && args.policy_cases.is_some() {
        anyhow::bail!(
            "--policy-cases runs golden cases on Signpost's own tools; a proxy's cases call its backend for real, \
             so they do not run on every swap: run them against a test instance of the backend with \
             `signpost policy test FILE --cases DIR -- SERVER…` (the self-check already probes the backend's tools \
             without calling it)"
        );
    }
    let mut sources = args.graph.clone();
    let project = match &args.project {
        Some(dir) => {
            let root = std::fs::canonicalize(dir).with_context(|| format!("no project directory {}", dir.display()))?;
            let opts = signpost::project::Options {
                trust: signpost::trust::Trust::of(&root, args.trust),
                // Without a watcher, nothing would swap a late first index in.
                first_wait: (!args.no_watch).then_some(signpost::project::FIRST_WAIT),
                background: true,
                builtin: signpost::trust::builtin_choices(&args.indexer),
            };
            let project = signpost::project::Project::open(&root, &signpost::project::default_cache(&root), &opts)?;
            sources.extend(project.sources().iter().cloned());
            Some(project)
        }
        None => None,
    };
    let mut project = project;
    // (Only when the project's parts are every source: a `--graph` beside
    // them is not in the whole graph the project saved.)
    let reading = std::time::Instant::now();
    let whole = project.as_mut().filter(|_| args.graph.is_empty()).and_then(signpost::project::Project::take_whole);
    let graphs = match whole {
        Some(whole) => LiveGraph::open_whole(sources, whole, reading.elapsed()),
        None => {
            let built = project.as_ref().map(signpost::project::Project::built).unwrap_or_default();
            LiveGraph::open_with(sources, built).context("loading the graph")?
        }
    };
    let graph = graphs.current();
    tracing::info!(
        graph = graph.name(),
        nodes = graph.node_count(),
        edges = graph.edge_count(),
        ms = started.elapsed().as_millis() as u64,
        "graph loaded"
    );
    // (Publishing also lets the project read its restored languages again.)
    if let Some(project) = project.as_mut() {
        project.publish(&graphs);
    }
    let engine = args.engine()?;
    let cases = args.policy_cases.as_deref();
    // The runtime first: a shared trail store's connection and a registry's
    // pulls live on it.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (policy, live_from) = match &args.policy {
        Some(source) => {
            let (policy, from) = start_policy(&args, &engine, source, "policy", cases, &runtime)?;
            (policy, Some(from))
        }
        None => (initial_policy(&engine, None, cases)?, None),
    };
    let (idle, max) = (Duration::from_secs(args.trail_idle_secs), args.max_trails as usize);
    let state = args.state.clone().or_else(|| std::env::var("SIGNPOST_STATE").ok().filter(|s| !s.is_empty()));
    let trails = match &state {
        Some(url) => runtime.block_on(signpost::trails::Trails::connect(url, idle, max))?,
        None => signpost::trails::Trails::new(idle, max),
    };
    let mut signpost = Signpost::with_graphs(graphs, policy)?.with_evidence(args.evidence()?).with_trails(trails);
    if !args.output_schemas {
        signpost = signpost.without_output_schemas();
    }
    if let Some(backend) = backend {
        let upstream = runtime.block_on(signpost::proxy::Upstream::start(backend))?;
        tracing::info!(backend = %upstream.describe(), tools = upstream.catalogue().tools().len(), "proxying");
        signpost = signpost.with_upstream(upstream);
    }
    let mut trials = Vec::new();
    if let Some(source) = &args.canary {
        let (policy, from) = start_policy(&args, &engine, source, "the canary policy", cases, &runtime)?;
        signpost = signpost.with_canary(policy, args.canary_share);
        trials.push((from, reload::Role::Canary { share: args.canary_share }));
    }
    if let Some(source) = &args.shadow {
        let (policy, from) = start_policy(&args, &engine, source, "the shadow policy", cases, &runtime)?;
        signpost = signpost.with_shadow(policy)?;
        trials.push((from, reload::Role::Shadow));
    }
    let signpost = Arc::new(signpost);
    runtime.block_on(async move {
        if !args.no_watch {
            signpost.graphs().clone().watch()?;
            if let Some(project) = project {
                project.watch(signpost.graphs().clone())?;
            }
        }
        canary_signals(signpost.clone())?;
        if let Some(from) = live_from {
            let reloader = Reloader::from(signpost.clone(), engine.clone(), from);
            Arc::new(reloader.with_cases(args.policy_cases.clone())).start(!args.no_watch)?;
        }
        // The canary and shadow are followed too: a new version that
        // passes every check becomes the canary (again, after a promotion or
        // a drop) or the shadow.
        for (from, role) in trials {
            let reloader = Reloader::from(signpost.clone(), engine.clone(), from)
                .with_role(role)
                .with_cases(args.policy_cases.clone());
            Arc::new(reloader).start(!args.no_watch)?;
        }
        if let Some(addr) = &args.http {
            let opts = args.http_options(addr)?;
            return signpost::http::serve(signpost, opts, signpost::http::shutdown_signal()).await;
        }
        if let Some(addr) = &args.metrics {
            let addr = socket_addr("--metrics", addr)?;
            signpost::http::serve_metrics(signpost.clone(), addr, args.token()?, &args.allowed_host).await?;
        }
        if std::io::stdin().is_terminal() {
            let program = program_name();
            let mut serve = vec![program.clone()];
            for g in &args.graph {
                serve.extend(["--graph".to_owned(), g.display().to_string()]);
            }
            if let Some(p) = &args.project {
                serve.extend(["--project".to_owned(), p.display().to_string()]);
            }
            if let Some(p) = &args.policy {
                serve.extend(["--policy".to_owned(), p.to_string()]);
            }
            let serve = shlex::try_join(serve.iter().map(String::as_str)).unwrap_or(program.clone());
            let program = shlex::try_quote(&program).map(|p| p.into_owned()).unwrap_or(program);
            say(&format!(
                "signpost: serving MCP on stdin/stdout and waiting for a client; this is a terminal, not one. \
                 Connect a client (e.g. `claude mcp add signpost -- {serve}`), or ask from a shell: \
                 `{program} search <words>` (`{program} --help`). Ctrl-D quits."
            ));
        }
        let session = Handler::new(signpost);
        let served = match stdio_pipes() {
            Some(pipes) => session.serve(pipes).await,
            None => session.serve(rmcp::transport::stdio()).await,
        };
        let service = match served {
            Ok(service) => service,
            // Ctrl-D on a terminal, or a client that left before initializing: a quiet end.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("stdin closed before a client initialized; exiting");
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        tracing::info!("serving MCP on stdio");
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(super) enum CanaryAction {
    /// Make the canary the live policy.
    Promote,
    /// Stop the canary; its sessions go back to the live policy.
    Drop,
}

pub(super) fn canary(action: CanaryAction, url: &str, token_file: Option<&Path>) -> anyhow::Result<ExitCode> {
    let path = match action {
        CanaryAction::Promote => signpost::http::CANARY_PROMOTE_PATH,
        CanaryAction::Drop => signpost::http::CANARY_DROP_PATH,
    };
    let token = match (token_file, std::env::var("SIGNPOST_TOKEN")) {
        (Some(p), _) => Some(std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?),
        (None, Ok(t)) => Some(t),
        (None, Err(_)) => None,
    };
    let endpoint = format!("{}{path}", url.trim_end_matches('/').trim_end_matches(signpost::http::MCP_PATH));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (status, body) = runtime.block_on(async {
        let mut request = reqwest::Client::new().post(&endpoint).timeout(Duration::from_secs(30));
        if let Some(t) = &token {
            request = request.bearer_auth(t.trim());
        }
        let response = request.send().await.with_context(|| format!("POST {endpoint}"))?;
        anyhow::Ok((response.status(), response.text().await.unwrap_or_default()))
    })?;
    let shown: serde_json::Value = serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body));
    if !status.is_success() {
        let message = shown["error"]["message"].as_str().map_or_else(|| shown.to_string(), str::to_owned);
        anyhow::bail!("{endpoint}: {status}: {}", signpost::sanitize::line(&message, 300));
    }
    outln!("{}", shown["done"].as_str().unwrap_or("done"));
    outln!(
        "live policy: {} {}",
        shown["live"]["name"].as_str().unwrap_or("?"),
        shown["live"]["version"].as_str().unwrap_or("?")
    );
    Ok(ExitCode::SUCCESS)
}

/// A policy file (the live one, a canary, a shadow: `role`) through every
/// check a swap runs.
pub(super) fn checked_policy(
    engine: &PolicyEngine,
    path: &Path,
    role: &str,
    cases: Option<&Path>,
) -> anyhow::Result<Arc<Policy>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {role} {}", path.display()))?;
    checked_bytes(engine, &bytes, &path.display().to_string(), role, cases)
}

/// A component's bytes, from `source`, through every check a swap runs.
fn checked_bytes(
    engine: &PolicyEngine,
    bytes: &[u8],
    source: &str,
    role: &str,
    cases: Option<&Path>,
) -> anyhow::Result<Arc<Policy>> {
    let validator = HintValidator::new()?;
    let gate = reload::Gate { cases, backend: None };
    let (policy, report) = reload::prepare(engine, &validator, bytes, source, gate, &|| false)
        .map_err(|e| anyhow::anyhow!("{role} {source} refused: {e}"))?;
    tracing::info!(%report, "{role} passed its self-check");
    Ok(policy)
}

/// The policy to start with in `role` from `source`, through every check a
/// swap runs, and where its later versions come from: the file, or the
/// OCI artifact (pulled and verified; the last one verified, from the
/// cache, when the registry does not give one).
fn start_policy(
    args: &ServeArgs,
    engine: &PolicyEngine,
    source: &PolicySource,
    role: &str,
    cases: Option<&Path>,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<(Arc<Policy>, Candidates)> {
    match source {
        PolicySource::File(path) => Ok((checked_policy(engine, path, role, cases)?, Candidates::File(path.clone()))),
        PolicySource::Oci(reference) => {
            let follower = args.follower(reference)?;
            let mut pulled = runtime.block_on(follower.start()).with_context(|| format!("{role} {reference}"))?;
            let policy = match checked_bytes(engine, &pulled.component, &pulled.source, role, cases) {
                Ok(policy) => policy,
                // What the tag names now is refused: the last build that
                // passed, if the cache holds it, serves instead.
                Err(e) => match follower.fall_back(&format!("{e:#}")) {
                    Ok(Some(last)) => {
                        let policy = checked_bytes(engine, &last.component, &last.source, role, cases)
                            .with_context(|| format!("{e:#}; and the last one served"))?;
                        pulled = last;
                        policy
                    }
                    Ok(None) => return Err(e),
                    Err(c) => return Err(e.context(format!("and the cache: {c}"))),
                },
            };
            follower.adopted(&pulled.digest);
            let signer = pulled.signature.as_ref().map_or("nobody (--policy-unsigned)", |s| s.key.as_str());
            match &pulled.from_cache {
                Some(why) => say(&format!(
                    "signpost: {role} {}: the registry did not give a policy that passes ({why}); serving the last \
                     one verified, from the cache, signed by {signer}",
                    pulled.source
                )),
                None => tracing::info!(source = %pulled.source, signed_by = signer, "{role} pulled and verified"),
            }
            Ok((policy, Candidates::Oci { follower, every: args.policy_poll() }))
        }
    }
}

/// SIGUSR1 promotes the canary, SIGUSR2 drops it.
fn canary_signals(signpost: Arc<Signpost>) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (mut promote, mut drop_it) = (signal(SignalKind::user_defined1())?, signal(SignalKind::user_defined2())?);
        tokio::spawn(async move {
            loop {
                let done = tokio::select! {
                    s = promote.recv() => s.map(|()| signpost.trials().promote_canary(signpost.live())),
                    s = drop_it.recv() => s.map(|()| signpost.trials().drop_canary(signpost.live())),
                };
                match done {
                    Some(true) => {}
                    Some(false) => tracing::warn!("no canary to promote or drop"),
                    None => break,
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = signpost;
    Ok(())
}

/// stdin and stdout as pipes the runtime polls itself, when they are pipes
/// (as when a client spawns the server) and stdout does not share its pipe
/// with stderr (which is then made non-blocking too). Tokio's own stdio
/// reads and writes on its blocking pool: two thread hand-offs a call, which
/// cost more CPU than the call.
#[cfg(unix)]
fn stdio_pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let file = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok().map(std::fs::File::from);
    let (input, output) = (file(std::io::stdin().as_fd())?, file(std::io::stdout().as_fd())?);
    let (in_meta, out_meta) = (input.metadata().ok()?, output.metadata().ok()?);
    // Both, or neither: making one non-blocking and then falling back to
    // tokio's blocking stdio would leave it failing every read with EAGAIN
    // (`signpost < pipe > file`).
    if !in_meta.file_type().is_fifo() || !out_meta.file_type().is_fifo() {
        return None;
    }
    let err_meta = std::fs::metadata("/dev/stderr").ok();
    if err_meta.is_some_and(|e| e.dev() == out_meta.dev() && e.ino() == out_meta.ino()) {
        return None;
    }
    let input = tokio::net::unix::pipe::Receiver::from_file(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_file(output).ok()?;
    Some((input, output))
}

#[cfg(not(unix))]
fn stdio_pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}
