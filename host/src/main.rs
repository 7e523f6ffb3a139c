//! The `signpost` command: serve MCP over stdio, or check a policy component.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use rmcp::ServiceExt;
use signpost::graph::Graph;
use signpost::pipeline::Signpost;
use signpost::policy::{Limits, PolicyEngine};
use signpost::server::Session;

/// An MCP server for coding agents whose hints run in a sandboxed,
/// hot-swappable WebAssembly policy.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default).
    Serve(ServeArgs),
    /// Work with policy components.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Compile, link and identify a policy component; exit non-zero if it fails.
    Check {
        /// The component file (.wasm).
        file: PathBuf,
    },
}

#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// A graph in the signpost JSON format (default: the embedded sample graph).
    #[arg(long, value_name = "PATH")]
    graph: Option<PathBuf>,
    /// A policy component (default: the embedded default policy).
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Deadline of one policy function call, in milliseconds.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    policy_timeout_ms: u64,
    /// Linear memory limit of a policy instance, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    policy_memory_mib: u64,
}

impl ServeArgs {
    fn limits(&self) -> Limits {
        Limits {
            memory_bytes: (self.policy_memory_mib as usize) << 20,
            timeout: Duration::from_millis(self.policy_timeout_ms),
            ..Limits::default()
        }
    }
}

fn main() -> ExitCode {
    // stdout is the MCP channel: every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Policy(PolicyCommand::Check { file })) => check(&file),
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("signpost: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn load_policy(engine: &PolicyEngine, path: Option<&PathBuf>) -> anyhow::Result<signpost::policy::Policy> {
    match path {
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("reading policy {}", path.display()))?;
            Ok(engine
                .load(&bytes, &path.display().to_string())
                .with_context(|| format!("loading policy {}", path.display()))?)
        }
        None => Ok(engine.load(signpost::DEFAULT_POLICY, "embedded")?),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let graph = match &args.graph {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading graph {}", path.display()))?;
            Graph::from_json(&text).with_context(|| format!("loading graph {}", path.display()))?
        }
        None => Graph::sample(),
    };
    tracing::info!(graph = graph.name(), nodes = graph.node_count(), edges = graph.edge_count(), "graph loaded");
    let engine = PolicyEngine::new(args.limits())?;
    let policy = load_policy(&engine, args.policy.as_ref())?;
    let signpost = Arc::new(Signpost::new(graph, policy)?);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let service = Session::new(signpost).serve(rmcp::transport::stdio()).await?;
        tracing::info!("serving MCP on stdio");
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn check(file: &PathBuf) -> anyhow::Result<ExitCode> {
    let engine = PolicyEngine::new(Limits::default())?;
    match load_policy(&engine, Some(file)) {
        Ok(policy) => {
            let id = policy.identity();
            println!("ok: {} {} (sha256 {})", id.name, id.version, id.sha256);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAILED: {e:#}");
            Ok(ExitCode::FAILURE)
        }
    }
}
