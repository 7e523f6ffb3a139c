//! The `signpost` command: serve MCP over stdio, or check a policy component.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use rmcp::ServiceExt;
use signpost::graphs::LiveGraph;
use signpost::policy::{Limits, Policy, PolicyEngine};
use signpost::reload::{self, Reloader};
use signpost::server::Session;
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::terminal::{self, Query, Shell};
use signpost::tools::Tool;
use signpost::trails::carry::{self, TRAIL_ARG};
use signpost::trails::{Owner, Trails};
use signpost::validate::HintValidator;

/// `signpost --version`: the policy interface this host accepts.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\naccepts policy components that export signpost:policy/policy@",
    signpost::wit_version!(),
    " (WIT package signpost:policy@",
    signpost::wit_version!(),
    ")"
);

/// An MCP server for coding agents whose hints run in a sandboxed,
/// hot-swappable WebAssembly policy.
/// Shown under `signpost --help`.
const EXAMPLES: &str = "\
Examples:
  signpost                                  serve MCP on stdio: the sample graph, the default policy
  signpost --graph index.scip --policy my.wasm --http 8080
                                            serve an index over HTTP with your policy (hot-swapped on change)
  signpost index ~/src/shop                 index a project (Rust, TypeScript, Python) into index.scip
  signpost search refund payment            ask from a shell: the same answers as the MCP tools
  signpost neighbors OrderController --direction out --edge-types DECLARES.EXPOSES
  signpost policy check my-policy.wasm      run the checks a hot swap runs

Connect an MCP client over stdio, e.g.: claude mcp add signpost -- signpost --graph /abs/path/index.scip";

#[derive(clap::Parser)]
#[command(version, long_version = LONG_VERSION, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default), or over HTTP with --http.
    #[command(after_help = "Examples:\n  signpost serve --graph index.scip\n  \
                            signpost serve --http 0.0.0.0:8080 --token-file token --allowed-host signpost.internal")]
    Serve(Box<ServeArgs>),
    #[command(flatten)]
    Query(Query),
    /// Work with policy components.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Index a project with its languages' SCIP indexers (rust-analyzer,
    /// scip-typescript, scip-python; installed when missing), then check
    /// that each index loads. Serve the result with `signpost --graph`.
    #[command(
        after_help = "Examples:\n  signpost index ~/src/shop\n  signpost index . -o /tmp/shop.scip --all-features"
    )]
    Index {
        /// The project directory.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Where to write the index (one language) or the directory for
        /// `index.<language>.scip` files (several) [default: DIR].
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        /// Rust: index the code behind every cargo feature, not only the
        /// default ones (a library such as tokio gates most of its code).
        #[arg(long)]
        all_features: bool,
    },
    /// Work with graph files.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Promote or drop the canary of a running HTTP server (a stdio server:
    /// `kill -USR1 PID` promotes, `kill -USR2 PID` drops).
    #[command(after_help = "Examples:\n  signpost canary promote --url http://127.0.0.1:8080 --token-file token")]
    Canary {
        /// What to do.
        #[arg(value_enum)]
        action: CanaryAction,
        /// The server's base URL, e.g. http://127.0.0.1:8080.
        #[arg(long)]
        url: String,
        /// File holding the server's bearer token (also read from SIGNPOST_TOKEN).
        #[arg(long, value_name = "PATH")]
        token_file: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CanaryAction {
    /// Make the canary the live policy.
    Promote,
    /// Stop the canary; its sessions go back to the live policy.
    Drop,
}

#[derive(Subcommand)]
enum GraphCommand {
    /// Convert graph files (SCIP, JSON or snapshot; several are merged into
    /// one workspace) into a snapshot that loads by reading.
    #[command(after_help = "Examples:\n  signpost graph import index.rust.scip index.typescript.scip -o shop.snapshot")]
    Import {
        /// The graph files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The snapshot to write.
        #[arg(short, long, value_name = "PATH")]
        output: PathBuf,
    },
    /// Print symbols with their ids (kind, qualified name, place), to use
    /// in golden cases and scripts; `--name` keeps those whose name
    /// contains it.
    #[command(
        after_help = "Examples:\n  signpost graph symbols --name OrderService\n  signpost graph symbols index.scip --name parse"
    )]
    Symbols {
        /// The graph files (none: the embedded sample graph).
        files: Vec<PathBuf>,
        /// Only symbols whose name contains this (case-insensitive).
        #[arg(long)]
        name: Option<String>,
    },
    /// Load graph files as `--graph` would and print what they hold.
    #[command(after_help = "Examples:\n  signpost graph info index.scip")]
    Info {
        /// The graph files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Write the embedded default policy component to FILE and print its
    /// sha256 (the one `signpost://policy` reports while it serves).
    #[command(after_help = "Examples:\n  signpost policy export-default default.wasm")]
    ExportDefault {
        /// Where to write the component (.wasm).
        file: PathBuf,
    },
    /// Write the WIT package policies implement (`signpost:policy`) into
    /// DIR, to build a policy without a checkout.
    #[command(
        after_help = "Examples:\n  signpost policy wit wit/   (then point wit-bindgen, componentize-py or jco at it)"
    )]
    Wit {
        /// The directory to write `policy.wit` into (created if missing).
        dir: PathBuf,
    },
    /// Run exactly the checks a hot swap runs (compile, link, identify,
    /// self-check) and report; exit non-zero if the policy would be refused.
    #[command(after_help = "Examples:\n  signpost policy check target/wasm32-wasip2/release/my_policy.wasm")]
    Check {
        /// The component file (.wasm).
        file: PathBuf,
    },
    /// Re-run recorded sessions (`signpost --record DIR`) against candidate
    /// policies and report, per policy, how often the agent's actual next
    /// call would have been suggested, hints per response, invalid hints,
    /// text bytes and faults; then the calls whose hints differ from the
    /// first policy's.
    #[command(after_help = "Examples:\n  signpost policy replay records/ --policy default.wasm --policy mine.wasm")]
    Replay {
        /// Decision logs: files, or record directories.
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// A candidate policy component (.wasm); give it once per policy.
        #[arg(long = "policy", value_name = "FILE", required = true)]
        policies: Vec<PathBuf>,
        /// The graph files the sessions ran on (default: the embedded sample graph).
        #[arg(long, value_name = "PATH")]
        graph: Vec<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Diff lines shown per pair of policies in the table.
        #[arg(long, default_value_t = 10)]
        diffs: usize,
    },
    /// Run golden cases (JSON files: calls and what the response must show)
    /// against a component, on the embedded sample graph; exit non-zero if
    /// any fails. The default policy's cases are in hints-component/cases/.
    #[command(after_help = "Examples:\n  signpost policy test mine.wasm --cases cases/")]
    Test {
        /// The component file (.wasm).
        file: PathBuf,
        /// A directory of case files (*.json).
        #[arg(long, value_name = "DIR")]
        cases: PathBuf,
    },
}

#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// A graph file: a SCIP index, the signpost JSON format or a snapshot,
    /// told apart by content (default: the embedded sample graph). Give it
    /// several times to serve a workspace; symbols join by SCIP symbol. The
    /// files are watched: a new version that loads replaces the graph.
    #[arg(long, value_name = "PATH")]
    graph: Vec<PathBuf>,
    /// A policy component (default: the embedded default policy). The file is
    /// watched: a new version that passes every check replaces the live one.
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Do not watch the policy and graph files (SIGHUP still reloads the policy).
    #[arg(long)]
    no_watch: bool,
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
    http: Option<String>,
    /// File holding a bearer token every HTTP request must carry (also read
    /// from the SIGNPOST_TOKEN environment variable).
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Another accepted `Host` header value (loopback names are always accepted).
    #[arg(long, value_name = "HOST")]
    allowed_host: Vec<String>,
    /// Another accepted `Origin` (e.g. `https://app.example.com:443`; loopback origins are always accepted).
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Vec<String>,
    /// Largest HTTP request body, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1024..=(64 << 20)))]
    max_body_bytes: u64,
    /// Most concurrent HTTP MCP sessions.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_sessions: u64,
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
    metrics: Option<String>,
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
    #[arg(long, value_name = "FILE")]
    canary: Option<PathBuf>,
    /// The share of sessions the canary serves, from 0 to 1.
    #[arg(long, default_value_t = 0.1, value_parser = share, requires = "canary")]
    canary_share: f64,
    /// Forget a trail (the state handle that carries a client's history
    /// between calls; docs/tools.md) unused for this many seconds.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=7 * 86_400))]
    trail_idle_secs: u64,
    /// Most trails in use, and most new ones on probation (until a call
    /// continues them); the one unused longest goes first.
    #[arg(long, default_value_t = signpost::trails::DEFAULT_MAX as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_trails: u64,
    /// Keep trails in this Redis (or Valkey), shared by every replica
    /// pointed at it, so any replica serves any call of a trail:
    /// redis://[:PASSWORD@]HOST[:PORT][/DB]. Without it, trails live in
    /// this process. Also read from SIGNPOST_STATE, which keeps a
    /// password out of the process list.
    #[arg(long, value_name = "URL")]
    state: Option<String>,
    /// A shadow policy component: it computes hints for every call, after
    /// the response is sent, which agents never see; the metrics compare
    /// them with what agents did next.
    #[arg(long, value_name = "FILE")]
    shadow: Option<PathBuf>,
}

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{}` is not a share from 0 to 1 (0.1 is 10% of the sessions)", signpost::clip(s))),
    }
}

impl ServeArgs {
    fn http_options(&self, addr: &str) -> anyhow::Result<signpost::http::HttpOptions> {
        let addr = socket_addr("--http", addr)?;
        Ok(signpost::http::HttpOptions {
            addr,
            token: self.token()?,
            allowed_hosts: self.allowed_host.clone(),
            allowed_origins: self.allowed_origin.clone(),
            max_body_bytes: self.max_body_bytes as usize,
            max_sessions: self.max_sessions as usize,
            session_idle: Duration::from_secs(self.session_idle_secs),
        })
    }

    fn evidence(&self) -> anyhow::Result<signpost::service::Evidence> {
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
    fn token(&self) -> anyhow::Result<Option<String>> {
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

    fn engine(&self) -> anyhow::Result<PolicyEngine> {
        let engine = PolicyEngine::new(self.limits())?;
        if self.no_cache {
            return Ok(engine);
        }
        let dir = self.cache_dir.clone().or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("signpost"))
        });
        match dir {
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

    fn limits(&self) -> Limits {
        Limits {
            memory_bytes: (self.policy_memory_mib as usize) << 20,
            timeout: Duration::from_millis(self.policy_timeout_ms),
            ..Limits::default()
        }
    }
}

/// `PORT` (loopback) or `HOST:PORT`.
fn socket_addr(flag: &str, addr: &str) -> anyhow::Result<std::net::SocketAddr> {
    match addr.parse::<u16>() {
        Ok(port) => Ok((std::net::Ipv4Addr::LOCALHOST, port).into()),
        Err(_) => addr.parse().with_context(|| format!("{flag} {addr}: expected PORT or HOST:PORT")),
    }
}

fn main() -> ExitCode {
    // stdout is the MCP channel: every log line goes to stderr.
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Serving logs what it does; the one-shot commands print a report, and
    // log only warnings unless RUST_LOG asks for more.
    let one_shot = matches!(
        cli.command,
        Some(
            Command::Policy(_) | Command::Index { .. } | Command::Graph(_) | Command::Canary { .. } | Command::Query(_)
        )
    );
    let default_level = if one_shot { "warn" } else { "info" };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_level.into()))
        .init();
    let result = match cli.command {
        Some(Command::Policy(PolicyCommand::Check { file })) => check(&file),
        Some(Command::Policy(PolicyCommand::ExportDefault { file })) => export_default(&file),
        Some(Command::Policy(PolicyCommand::Wit { dir })) => export_wit(&dir),
        Some(Command::Policy(PolicyCommand::Test { file, cases })) => test_cases(&file, &cases),
        Some(Command::Policy(PolicyCommand::Replay { logs, policies, graph, json, diffs })) => {
            replay(&logs, &policies, &graph, json, diffs)
        }
        Some(Command::Index { dir, output, all_features }) => index_project(&dir, output.as_deref(), all_features),
        Some(Command::Graph(GraphCommand::Import { files, output })) => graph_import(&files, &output),
        Some(Command::Graph(GraphCommand::Info { files })) => graph_info(&files),
        Some(Command::Graph(GraphCommand::Symbols { files, name })) => graph_symbols(&files, name.as_deref()),
        Some(Command::Canary { action, url, token_file }) => canary(action, &url, token_file.as_deref()),
        Some(Command::Query(q)) => query(q, &cli.serve, &serve_only_flags(&matches)),
        Some(Command::Serve(args)) => serve(*args),
        None => serve(cli.serve),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            say(&format!("signpost: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// How this program was invoked (argv 0), to suggest commands that run as
/// they are (`signpost` when that is not printable UTF-8).
fn program_name() -> String {
    let argv0 = std::env::args_os().next().and_then(|p| p.into_string().ok());
    argv0.filter(|p| !p.is_empty() && !p.chars().any(char::is_control)).unwrap_or_else(|| "signpost".to_owned())
}

/// A line on stderr; a closed stderr is not worth a panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The top-level flags given on the command line that only serving reads.
fn serve_only_flags(matches: &clap::ArgMatches) -> Vec<String> {
    const FOR_QUERIES: [&str; 5] = ["graph", "policy", "cache_dir", "no_cache", "state"];
    let command = <Cli as clap::CommandFactory>::command();
    command
        .get_arguments()
        .filter_map(|arg| arg.get_long().map(|long| (arg.get_id().as_str(), long)))
        .filter(|(id, _)| !FOR_QUERIES.contains(id))
        .filter(|(id, _)| matches!(matches.value_source(id), Some(clap::parser::ValueSource::CommandLine)))
        .map(|(_, long)| format!("--{long}"))
        .collect()
}

/// A tool command: one call through the same pipeline as MCP, printed as
/// text or JSON. Exit 0 on a result, 1 on a tool error (or a name that
/// names several symbols), 2 when the command cannot run as given.
fn query(mut query: Query, top: &ServeArgs, serve_only: &[String]) -> anyhow::Result<ExitCode> {
    // `signpost --graph g describe X` and `signpost describe X --graph g` alike.
    let options = query.options_mut();
    if options.graph.is_empty() {
        options.graph.clone_from(&top.graph);
    }
    if options.policy.is_none() {
        options.policy.clone_from(&top.policy);
    }
    if options.state.is_none() {
        options.state.clone_from(&top.state);
    }
    let options = options.clone();
    let usage = |e: &dyn std::fmt::Display| {
        say(&format!("signpost: {e}"));
        Ok(ExitCode::from(2))
    };
    if let Some(flag) = serve_only.first() {
        return usage(&format!("{flag} is for serving; a tool command takes --graph and --policy (see --help)"));
    }
    let paths = options.graph.iter().chain(&options.policy);
    if let Some(path) = paths.clone().find(|p| p.to_str().is_none_or(|p| p.chars().any(char::is_control))) {
        let path = path.to_string_lossy();
        return usage(&format!(
            "`{}`: a tool command needs printable UTF-8 paths (to suggest commands)",
            signpost::clip(&path)
        ));
    }
    let (tool, mut args) = match query.to_call() {
        Ok(call) => call,
        Err(e) => return usage(&e),
    };
    // A trail: given as an option, or in `call`'s arguments, as MCP sends it
    // (the option wins); never the tool's. `null` and "" are none, as in MCP.
    if let Some(trail) = &options.trail {
        args.insert(TRAIL_ARG.into(), serde_json::Value::String(trail.clone()));
    }
    let sent_trail = args.remove(TRAIL_ARG).filter(|t| !carry::is_none(t));
    let state = options.state.clone().or_else(|| std::env::var("SIGNPOST_STATE").ok().filter(|s| !s.is_empty()));
    // Multi-threaded (one worker), so that a call blocks in place on it as
    // the server's calls do; a shared trail store's connection lives on it.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let trails = match &state {
        None if sent_trail.is_some() => {
            return usage(
                &"--trail: a trail outlives one command only in a shared store: give --state \
                           redis://… (or SIGNPOST_STATE), the store the server uses",
            );
        }
        None => Trails::default(),
        Some(url) => {
            if options.state.as_deref().is_some_and(terminal::has_credentials) {
                say("signpost: the suggested commands leave out --state, which holds a password: set \
                     SIGNPOST_STATE to run them");
            }
            let idle = signpost::trails::DEFAULT_IDLE;
            match runtime.block_on(Trails::connect(url, idle, signpost::trails::DEFAULT_MAX)) {
                Ok(trails) => trails,
                Err(e) => return usage(&format!("{e:#}")),
            }
        }
    };
    let loaded = signpost::graphs::load_sources(&options.graph).context("loading the graph").and_then(|graph| {
        let engine = top.engine()?;
        Ok((graph, initial_policy(&engine, options.policy.as_ref())?))
    });
    let (graph, policy) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => return usage(&format!("{e:#}")),
    };
    let shell = Shell::new(program_name(), options.repeated());
    let mut stdout = anstream::AutoStream::new(std::io::stdout(), options.color.choice());
    let evidence = signpost::service::Evidence { metrics: None, recorder: None };
    let signpost = Signpost::new(graph, policy)?.with_evidence(evidence).with_trails(trails);
    // The token a server on the same store is given owns its trails.
    let token = std::env::var("SIGNPOST_TOKEN").ok().filter(|t| !t.trim().is_empty());
    let owner = token.map(|t| Owner::of_token(t.trim())).unwrap_or_default();
    // Without a store, the command's calls share a history of their own.
    let own = state.is_none().then(|| Arc::new(SessionContext::new()));
    let opened = runtime.block_on(signpost.trails().open(sent_trail, owner, own));
    // Every call of the command runs on that trail, as an MCP call does.
    let call = |tool: Tool, args: serde_json::Map<String, serde_json::Value>| {
        let on_trail = signpost.trails().run(&opened, tool, async |session| {
            Ok::<_, std::convert::Infallible>(tokio::task::block_in_place(|| signpost.call(tool, args, &session)))
        });
        let Ok(response) = runtime.block_on(on_trail);
        response
    };
    let resolve = |name: &str| {
        let args = serde_json::Map::from_iter([("identifier".to_owned(), serde_json::json!(name))]);
        let response = call(Tool::Resolve, args);
        (!response.is_error).then_some(response.structured)
    };
    // `call` sends its arguments as they are; the tool commands read names.
    let named = if matches!(query, Query::Call { .. }) {
        Ok(Vec::new())
    } else {
        terminal::resolve_names(tool, &mut args, resolve)
    };
    let named = match named {
        Ok(named) => named,
        Err(ambiguous) => {
            let out = match options.format {
                terminal::Format::Text => terminal::ambiguous_text(&ambiguous, &shell),
                terminal::Format::Json => terminal::json_text(&terminal::ambiguous_json(&ambiguous, &shell)),
            };
            let _ = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush());
            return Ok(ExitCode::FAILURE);
        }
    };
    let response = call(tool, args);
    let out = match options.format {
        terminal::Format::Text => terminal::text(&response, &named, &shell),
        terminal::Format::Json => terminal::json_text(&terminal::json(&response, &named, &shell)),
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush());
    Ok(if response.is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Loads the policy to start with: the file (through every check a swap
/// runs), or the embedded default.
fn initial_policy(engine: &PolicyEngine, path: Option<&PathBuf>) -> anyhow::Result<Policy> {
    match path {
        Some(path) => checked_policy(engine, path, "policy"),
        None => Ok(engine.load(signpost::DEFAULT_POLICY, "embedded")?),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::graphs::load_sources(&args.graph).context("loading the graph")?;
    tracing::info!(
        graph = graph.name(),
        nodes = graph.node_count(),
        edges = graph.edge_count(),
        ms = started.elapsed().as_millis() as u64,
        "graph loaded"
    );
    let graphs = LiveGraph::new(graph, args.graph.clone(), started.elapsed());
    let engine = args.engine()?;
    let policy = initial_policy(&engine, args.policy.as_ref())?;
    // The runtime first: a shared trail store's connection lives on it.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (idle, max) = (Duration::from_secs(args.trail_idle_secs), args.max_trails as usize);
    let state = args.state.clone().or_else(|| std::env::var("SIGNPOST_STATE").ok().filter(|s| !s.is_empty()));
    let trails = match &state {
        Some(url) => runtime.block_on(signpost::trails::Trails::connect(url, idle, max))?,
        None => signpost::trails::Trails::new(idle, max),
    };
    let mut signpost = Signpost::with_graphs(graphs, policy)?.with_evidence(args.evidence()?).with_trails(trails);
    if let Some(path) = &args.canary {
        signpost = signpost.with_canary(checked_policy(&engine, path, "the canary policy")?, args.canary_share);
    }
    if let Some(path) = &args.shadow {
        signpost = signpost.with_shadow(checked_policy(&engine, path, "the shadow policy")?)?;
    }
    let signpost = Arc::new(signpost);
    runtime.block_on(async move {
        if !args.no_watch {
            signpost.graphs().clone().watch()?;
        }
        canary_signals(signpost.clone())?;
        if let Some(path) = &args.policy {
            Arc::new(Reloader::new(signpost.clone(), engine.clone(), path.clone())).start(!args.no_watch)?;
        }
        // The canary and shadow files are watched too: a new version that
        // passes every check becomes the canary (again, after a promotion or
        // a drop) or the shadow.
        let trials =
            [(&args.canary, reload::Role::Canary { share: args.canary_share }), (&args.shadow, reload::Role::Shadow)];
        for (path, role) in trials {
            if let Some(path) = path {
                let reloader = Reloader::new(signpost.clone(), engine.clone(), path.clone()).with_role(role);
                Arc::new(reloader).start(!args.no_watch)?;
            }
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
            if let Some(p) = &args.policy {
                serve.extend(["--policy".to_owned(), p.display().to_string()]);
            }
            let serve = shlex::try_join(serve.iter().map(String::as_str)).unwrap_or(program.clone());
            let program = shlex::try_quote(&program).map(|p| p.into_owned()).unwrap_or(program);
            say(&format!(
                "signpost: serving MCP on stdin/stdout and waiting for a client; this is a terminal, not one. \
                 Connect a client (e.g. `claude mcp add signpost -- {serve}`), or ask from a shell: \
                 `{program} search <words>` (`{program} --help`). Ctrl-D quits."
            ));
        }
        let session = Session::new(signpost);
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

fn canary(action: CanaryAction, url: &str, token_file: Option<&Path>) -> anyhow::Result<ExitCode> {
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
    println!("{}", shown["done"].as_str().unwrap_or("done"));
    println!(
        "live policy: {} {}",
        shown["live"]["name"].as_str().unwrap_or("?"),
        shown["live"]["version"].as_str().unwrap_or("?")
    );
    Ok(ExitCode::SUCCESS)
}

/// A policy file (the live one, a canary, a shadow: `role`) through every
/// check a swap runs.
fn checked_policy(engine: &PolicyEngine, path: &Path, role: &str) -> anyhow::Result<Policy> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {role} {}", path.display()))?;
    let validator = HintValidator::new()?;
    let (policy, report) = reload::prepare(engine, &validator, &bytes, &path.display().to_string(), &|| false)
        .map_err(|e| anyhow::anyhow!("{role} {} refused: {e}", path.display()))?;
    tracing::info!(%report, "{role} passed its self-check");
    Ok(policy)
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

fn check(file: &Path) -> anyhow::Result<ExitCode> {
    let engine = PolicyEngine::new(Limits::default())?;
    let validator = HintValidator::new()?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    println!("policy   {}", file.display());
    match reload::prepare(&engine, &validator, &bytes, &file.display().to_string(), &|| false) {
        Ok((policy, report)) => {
            let id = policy.identity();
            println!("identity {} {}", id.name, id.version);
            println!("sha256   {}", id.sha256);
            println!(
                "world    {} (host speaks signpost:policy@{})",
                signpost::policy::POLICY_INTERFACE,
                signpost::policy::WIT_VERSION
            );
            println!("check    {report}");
            println!("ok: {} {} would be accepted", id.name, id.version);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAILED: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn test_cases(file: &Path, cases: &Path) -> anyhow::Result<ExitCode> {
    let engine = PolicyEngine::new(Limits::default())?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    let policy = engine.load(&bytes, &file.display().to_string())?;
    println!("policy {} {} ({})", policy.identity().name, policy.identity().version, file.display());
    let results = signpost::cases::run(policy, cases).map_err(anyhow::Error::msg)?;
    let failed = results.iter().filter(|r| !r.failures.is_empty()).count();
    for r in &results {
        let name = r.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if r.failures.is_empty() {
            println!("PASS {name}: {}", r.description);
        } else {
            println!("FAIL {name}: {}", r.description);
            for f in &r.failures {
                for (i, line) in f.lines().enumerate() {
                    println!("{}{line}", if i == 0 { "     - " } else { "       " });
                }
            }
        }
    }
    println!("{} of {} cases passed", results.len() - failed, results.len());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn replay(
    logs: &[PathBuf],
    policies: &[PathBuf],
    graph: &[PathBuf],
    json: bool,
    diffs: usize,
) -> anyhow::Result<ExitCode> {
    use signpost::replay;
    let log = replay::read_logs(logs)?;
    let graph = signpost::graphs::load_sources(graph).context("loading the graph")?;
    let engine = PolicyEngine::new(Limits::default())?;
    let validator = HintValidator::new()?;
    let mut reports = Vec::new();
    for file in policies {
        let source = file.display().to_string();
        let bytes = std::fs::read(file).with_context(|| format!("reading policy {source}"))?;
        // The same checks as a hot swap: a policy that could not go live is not judged.
        reports.push(match reload::prepare(&engine, &validator, &bytes, &source, &|| false) {
            Ok((policy, _)) => replay::replay(&log, &graph, &validator, &policy),
            Err(e) => replay::PolicyReport {
                policy: source.clone(),
                source,
                refused: Some(e.to_string()),
                ..Default::default()
            },
        });
    }
    if json {
        println!("{:#}", replay::to_json(&log, &graph, &reports));
    } else {
        print!("{}", replay::to_table(&log, &graph, &reports, diffs));
    }
    Ok(if reports.iter().any(|r| r.refused.is_some()) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn index_project(dir: &Path, output: Option<&Path>, all_features: bool) -> anyhow::Result<ExitCode> {
    use signpost::indexer;
    let dir = std::fs::canonicalize(dir).with_context(|| format!("no project directory {}", dir.display()))?;
    let langs = indexer::detect(&dir);
    if langs.is_empty() {
        anyhow::bail!(
            "nothing to index in {}: no Cargo.toml (Rust), package.json or tsconfig.json (TypeScript/JavaScript), \
             pyproject.toml, setup.py or requirements.txt (Python) at its top",
            dir.display()
        );
    }
    let mut written = Vec::new();
    for &lang in &langs {
        let out = match (output, langs.len()) {
            (Some(o), 1) => o.to_path_buf(),
            (Some(o), _) => o.join(format!("index.{}.scip", lang.name())),
            (None, 1) => dir.join("index.scip"),
            (None, _) => dir.join(format!("index.{}.scip", lang.name())),
        };
        let out = std::path::absolute(&out)?;
        // Written beside the target and renamed into place, so a server
        // watching the index only ever sees a whole file.
        let partial = out.with_extension("scip.partial");
        indexer::index(lang, &dir, &partial, &indexer::Options { all_features })?;
        let graph = indexer::with_progress(&format!("checking {}", out.display()), || signpost::graph::load(&partial))
            .with_context(|| format!("the {} indexer wrote an index signpost cannot load", lang.name()))?;
        std::fs::rename(&partial, &out).with_context(|| format!("writing {}", out.display()))?;
        println!(
            "{}: {} symbols, {} edges, {} files ({})",
            out.display(),
            graph.node_count(),
            graph.edge_count(),
            graph.file_count(),
            lang.name()
        );
        written.push(out);
    }
    let flags: Vec<String> = written.iter().map(|p| format!("--graph {}", p.display())).collect();
    println!("serve it: signpost {}", flags.join(" "));
    Ok(ExitCode::SUCCESS)
}

fn graph_import(files: &[PathBuf], output: &Path) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::indexer::with_progress("loading", || signpost::graphs::load_sources(files))?;
    let loaded = started.elapsed();
    let bytes = signpost::graph::snapshot::write(&graph);
    let partial = output.with_extension("partial");
    std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, output).with_context(|| format!("writing {}", output.display()))?;
    println!(
        "{}: snapshot v{} of {}: {} symbols, {} edges, {} MB (loaded in {:.1} s)",
        output.display(),
        signpost::graph::snapshot::VERSION,
        graph.name(),
        graph.node_count(),
        graph.edge_count(),
        bytes.len() / 1_000_000,
        loaded.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn graph_info(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let graph = signpost::graphs::load_sources(files)?;
    println!("graph    {}", graph.name());
    println!("symbols  {}", graph.node_count());
    println!("edges    {}", graph.edge_count());
    println!("files    {}", graph.file_count());
    println!("types    {}", graph.edge_types().join(", "));
    println!("loaded   in {:.2} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

fn graph_symbols(files: &[PathBuf], name: Option<&str>) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let graph = signpost::graphs::load_sources(files)?;
    let want = name.map(str::to_lowercase);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for n in graph.iter() {
        if want.as_ref().is_some_and(|w| !n.name().to_lowercase().contains(w.as_str())) {
            continue;
        }
        let place = if n.file().is_empty() { String::new() } else { format!("  {}:{}", n.file(), n.line()) };
        let roles: Vec<&str> = n.roles().collect();
        let roles = if roles.is_empty() { String::new() } else { format!("  [{}]", roles.join(", ")) };
        let line = format!("{}  {:<10} {}{place}{roles}", n.id(), n.kind(), n.fqn());
        if writeln!(out, "{}", signpost::sanitize::escape(&line, 400)).is_err() {
            break; // a closed pipe (`| head`)
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn export_default(file: &Path) -> anyhow::Result<ExitCode> {
    std::fs::write(file, signpost::DEFAULT_POLICY).with_context(|| format!("writing {}", file.display()))?;
    println!("{}  {}", signpost::policy::sha256_hex(signpost::DEFAULT_POLICY), file.display());
    Ok(ExitCode::SUCCESS)
}

fn export_wit(dir: &Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("policy.wit");
    std::fs::write(&file, signpost::POLICY_WIT).with_context(|| format!("writing {}", file.display()))?;
    println!("{} (package signpost:policy@{})", file.display(), signpost::policy::WIT_VERSION);
    Ok(ExitCode::SUCCESS)
}
