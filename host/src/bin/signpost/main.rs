//! The `signpost` command: the CLI (its arguments and help), and the
//! commands it runs, one module each: serving MCP ([`serve`]), one tool call
//! from a shell ([`query`]), the policy author's commands ([`policy`]) and
//! the graph's ([`graph`]).

/// `println!` for the one-shot commands' reports: a reader that went away
/// (`signpost policy test … | head`) ends the command quietly, as it ends
/// other Unix tools, never with a panic.
macro_rules! outln {
    () => {
        $crate::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod graph;
mod policy;
mod query;
mod scaffold;
mod serve;

use graph::{graph_import, graph_info, graph_symbols, index_project, trust};
use policy::{check, export_default, export_wit, replay, test_cases};
use query::query;
use serve::{canary, serve};

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use signpost::golden::Strictness;
use signpost::policy::{Limits, PolicyEngine};
use signpost::terminal::Query;

/// mimalloc: the re-index after an edit builds and frees millions of
/// small strings and maps, which glibc's allocator spends a quarter of its
/// time on (BENCHMARKS.md, "Edit latency").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `signpost --version`: the policy interfaces this host accepts.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\naccepts policy components that export signpost:policy/policy@",
    signpost::wit_version!(),
    " (WIT package signpost:policy@",
    signpost::wit_version!(),
    "), signpost:policy/policy@0.2.0 or signpost:policy/policy@0.1.0"
);

/// An MCP server for coding agents whose hints run in a sandboxed,
/// hot-swappable WebAssembly policy.
/// Shown under `signpost --help`.
const EXAMPLES: &str = "\
Examples:
  signpost                                  serve MCP on stdio: the sample graph, the default policy
  signpost --project ~/src/shop             serve a repository as it stands, following its edits
  signpost --graph index.scip --policy my.wasm --http 8080
                                            serve an index over HTTP with your policy (hot-swapped on change)
  signpost index ~/src/shop                 index a project (Rust, TypeScript, Python, Java, Go, C++, Ruby…) into index.scip
  signpost search refund payment            ask from a shell: the same answers as the MCP tools
  signpost neighbors OrderController --direction out --edge-types DECLARES.EXPOSES
  signpost policy check my-policy.wasm      run the checks a hot swap runs

Connect an MCP client over stdio, e.g.: claude mcp add signpost -- signpost --project /abs/path/to/repo";

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
    /// Serve another MCP server's tools with hints: Signpost's policy
    /// engine in front of any server, its client over stdio (a command
    /// after `--`) or streamable HTTP (--backend-url).
    #[command(after_help = "Examples:\n  signpost proxy -- npx -y @modelcontextprotocol/server-memory\n  \
                            signpost proxy --policy memory.wasm -- uvx mcp-server-git --repository .\n  \
                            signpost proxy --backend-url https://mcp.example.com/mcp --backend-token-file token\n  \
                            claude mcp add memory -- signpost proxy -- npx -y @modelcontextprotocol/server-memory")]
    Proxy(Box<ProxyArgs>),
    #[command(flatten)]
    Query(Query),
    /// Work with policy components.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Index a project: Rust, TypeScript and Python with their SCIP
    /// indexers (rust-analyzer, scip-typescript, scip-python; installed when
    /// missing), Java, Kotlin, Go, C#, C, C++, Ruby, PHP, Swift and Scala
    /// with the built-in tree-sitter indexer; then check that each index loads. Serve the result with
    /// `signpost --graph`.
    #[command(
        after_help = "Examples:\n  signpost index ~/src/shop\n  signpost index . -o /tmp/shop.scip --all-features\n  \
                      signpost index . --indexer go='scip-go --output {out}'"
    )]
    Index {
        /// The project directory.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Where to write: a file named `*.scip` (a project of one part), or
        /// a directory, created when missing, that gets `index.scip` (one
        /// part) or `index.<part>.scip` files (several) [default: DIR].
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        /// Rust: index the code behind every cargo feature, not only the
        /// default ones (a library such as tokio gates most of its code).
        #[arg(long)]
        all_features: bool,
        /// The SCIP indexer to run for a language the built-in indexer reads,
        /// as `LANG=COMMAND` with `{out}` for the index to write (run in
        /// DIR), e.g. `go='scip-go --output {out}'`. Without it, the
        /// language's SCIP indexer runs when it is on PATH; when it fails,
        /// or is missing, the built-in indexer reads the language.
        #[arg(long, value_name = "LANG=COMMAND")]
        indexer: Vec<String>,
        /// Trust the tree: run its SCIP indexers (rust-analyzer,
        /// scip-typescript, scip-python, and scip-java, scip-go, … when on
        /// PATH), which run the project's own code. Without it (or
        /// `signpost trust DIR`), the built-in indexer reads every language.
        #[arg(long)]
        trust: bool,
    },
    /// Work with graph files.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Trust a project tree (and every directory under it): its SCIP
    /// indexers may run, which run the tree's own code (build scripts,
    /// cargo configuration, the build tool's plugins). Kept in the user's
    /// configuration (`$XDG_CONFIG_HOME/signpost/config.toml`, `[trust]`
    /// `trees`; `all = true` trusts every tree); nothing in a tree can
    /// trust itself.
    #[command(after_help = "Examples:\n  signpost trust ~/src/shop\n  signpost trust --remove ~/src/shop\n  \
                            signpost trust --list")]
    Trust {
        /// The tree.
        #[arg(default_value = ".", conflicts_with = "list")]
        dir: PathBuf,
        /// Take the tree out of the trusted ones.
        #[arg(long)]
        remove: bool,
        /// List the trusted trees.
        #[arg(long)]
        list: bool,
    },
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

/// `signpost policy test --help`: the case format, then examples.
const GOLDEN_HELP: &str = "\
A case file (one JSON object; every `expect` field is optional):
  {
    \"description\": \"a name where an id belongs teaches resolve\",
    \"graph\": \"graph.json\",         a graph file beside the case (default: the sample graph)
    \"before\": [{\"tool\": \"resolve\", \"args\": {\"identifier\": \"OrderService\"}}],
                                     calls made first, in the same session
    \"call\": {\"tool\": \"neighbors\", \"args\": {\"ids\": \"OrderService\", \"direction\": \"out\"}},
    \"expect\": {
      \"is_error\": true,               isError
      \"error_kind\": \"invalid_id\",   structuredContent.error.kind
      \"state_tag\": \"invalid_id\",    the policy's state tag
      \"result\": {\"/error/example/direction\": \"out\"},   JSON pointer -> value
      \"hints_include\": [{\"tool\": \"resolve\", \"args\": {\"identifier\": \"OrderService\"}, \"actionable\": true}],
      \"first_hint\": {\"tool\": \"resolve\"},
      \"max_hints\": 5,
      \"text_contains\": [\"resolve\"]
    }
  }
A hint pattern compares only the fields it names; `args` must be equal. `${NAME}` in a
string is the environment variable NAME (a case that names an unset one fails).
With a backend, `result` pointers read the backend's result (`/content/0/text`) and
the cases run in file order against the one backend.

Examples:
  signpost policy test mine.wasm --cases cases/
  signpost policy test mine.wasm --cases cases/ --lenient
  signpost policy test memory.wasm --cases cases/ -- npx -y @modelcontextprotocol/server-memory";

#[derive(Subcommand)]
enum PolicyCommand {
    /// Write a new policy project into DIR: the code, the WIT it
    /// implements (the newest, signpost:policy@0.3.0), a build script
    /// writing policy.wasm, three golden cases it passes and a README.
    #[command(after_help = "Examples:\n  signpost policy new my-policy --lang python\n  \
                      cd my-policy && ./build.sh && signpost policy check policy.wasm --cases cases/")]
    New {
        /// The project directory (created; if it exists, it must be empty).
        dir: PathBuf,
        /// The language to write the policy in.
        #[arg(long, value_enum, default_value = "rust")]
        lang: scaffold::Lang,
        /// The policy's name (default: the directory's name), as it reports
        /// itself in logs and `signpost://policy`.
        #[arg(long)]
        name: Option<String>,
    },
    /// Write the embedded default policy component to FILE and print its
    /// sha256 (the one `signpost://policy` reports while it serves).
    #[command(after_help = "Examples:\n  signpost policy export-default default.wasm --cases default-cases/")]
    ExportDefault {
        /// Where to write the component (.wasm).
        file: PathBuf,
        /// Also write the default policy's golden cases into DIR (with the
        /// graph four of them run on), for `signpost policy test`.
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
    /// Write the WIT package policies implement (`signpost:policy`) into
    /// DIR, to build a policy without a checkout.
    #[command(
        after_help = "Examples:\n  signpost policy wit wit/   (then point wit-bindgen, componentize-py or jco at it)"
    )]
    Wit {
        /// The directory to write `policy.wit` into (created if missing).
        dir: PathBuf,
        /// The package version to write: the newest, or `0.2.0` or `0.1.0`
        /// (still served) for a policy written against one of them.
        #[arg(long, default_value = signpost::wit_version!(), value_parser = ["0.3.0", "0.2.0", "0.1.0"])]
        version: String,
    },
    /// Run exactly the checks a hot swap runs (compile, link, identify,
    /// self-check, and with --cases the author's golden cases, strictly)
    /// and report; exit non-zero if the policy would be refused.
    #[command(after_help = "Examples:\n  signpost policy check target/wasm32-wasip2/release/my_policy.wasm\n  \
                      signpost policy check policy.wasm --cases cases/ --explain")]
    Check {
        /// The component file (.wasm).
        file: PathBuf,
        /// Golden cases the policy must also pass, strictly (as a server
        /// started with `--policy-cases DIR` runs them on every swap).
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// Print the self-check's probe calls before checking.
        #[arg(long)]
        explain: bool,
        /// With a backend (a command after `--`, or `--backend-url`), a
        /// 0.2.0 or later policy's rules are read for the backend's tools too.
        #[command(flatten)]
        backend: BackendArgs,
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
    /// against a component, on the embedded sample graph or against a real
    /// backend server; exit non-zero if any fails, or if the host had to
    /// correct the policy's answers in any call of a case (a fault, a hint
    /// dropped as invalid, a refused coercion, a removed text line, a
    /// fallback render), unless --lenient. `signpost policy export-default
    /// FILE --cases DIR` writes the default policy's cases.
    #[command(after_help = GOLDEN_HELP)]
    Test {
        /// The component file (.wasm).
        file: PathBuf,
        /// A directory of case files (*.json).
        #[arg(long, value_name = "DIR")]
        cases: PathBuf,
        /// Judge the expectations only: pass a case in which the host
        /// corrected the policy's answers (and list what it corrected).
        #[arg(long)]
        lenient: bool,
        /// With a backend (a command after `--`, or `--backend-url`), the
        /// cases call its tools through the proxy's pipeline, in file order,
        /// against that one backend; without one, Signpost's own tools on
        /// the sample graph (or each case's `graph`).
        #[command(flatten)]
        backend: BackendArgs,
    },
}

#[derive(clap::Args, Clone)]
struct ProxyArgs {
    #[command(flatten)]
    serve: ServeArgs,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Where a proxy's backend is: a command after `--`, or a URL.
#[derive(clap::Args, Clone)]
struct BackendArgs {
    /// Deadline of one call to the backend, in seconds: past it the agent
    /// gets a tool error (with the policy's advice) and the backend is told
    /// to cancel.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    backend_timeout_secs: u64,
    /// The backend as a streamable HTTP endpoint instead of a command,
    /// e.g. `https://mcp.example.com/mcp`.
    #[arg(long, value_name = "URL", conflicts_with = "backend")]
    backend_url: Option<String>,
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
    fn command(&self) -> anyhow::Result<Option<signpost::proxy::Command>> {
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
    fn required(&self) -> anyhow::Result<signpost::proxy::Command> {
        self.command()?.ok_or_else(|| {
            anyhow::anyhow!(
                "no backend: give its COMMAND after `--` (signpost proxy -- npx -y @modelcontextprotocol/server-memory), or --backend-url URL"
            )
        })
    }
}

#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// A graph file: a SCIP index, the signpost JSON format or a snapshot,
    /// told apart by content (default: the embedded sample graph). Give it
    /// several times to serve a workspace; symbols join by SCIP symbol. The
    /// files are watched: a new version that loads replaces the graph.
    #[arg(long, value_name = "PATH")]
    graph: Vec<PathBuf>,
    /// Serve a repository as its code stands now: index it (Java, Kotlin, Go,
    /// C#, C, C++, Ruby, PHP, Swift and Scala at once with the built-in indexer; Rust, TypeScript and Python with
    /// their SCIP indexers in the background), then follow its edits. The
    /// indexes live in $XDG_CACHE_HOME/signpost/projects/.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Trust the project's tree: its SCIP indexers may run, which run the
    /// project's own code (build scripts, cargo configuration, the build
    /// tool's plugins). Without it (or `signpost trust DIR`), the built-in
    /// indexer reads every language and nothing of the tree runs.
    #[arg(long, requires = "project")]
    trust: bool,
    /// `LANG=builtin`: the built-in indexer reads LANG (rust, typescript,
    /// python, java, go, …) even where its SCIP indexer could run
    /// (repeatable; the configuration's `[indexer]` table says it for all
    /// projects: `rust = "builtin"`).
    #[arg(long, value_name = "LANG=builtin", requires = "project", value_parser = builtin_choice)]
    indexer: Vec<String>,
    /// A policy component (default: the embedded default policy). The file is
    /// watched: a new version that passes every check replaces the live one.
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Golden cases (a directory of `signpost policy test` case files)
    /// every policy file must pass, strictly, before it serves: at start,
    /// on every swap, and for a canary or a shadow.
    #[arg(long, value_name = "DIR")]
    policy_cases: Option<PathBuf>,
    /// List each tool's output schema in `tools/list` (16 KB more, about
    /// 4,000 tokens every agent reads before its first question). Results
    /// carry the same `structuredContent` either way; turn this on for a
    /// client that validates results against a declared schema.
    #[arg(long)]
    output_schemas: bool,
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
            header_timeout: Duration::from_secs(self.header_timeout_secs),
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
    let default_level = match &cli.command {
        // A policy command's report names every fault its calls met, and
        // what the policy said as it trapped: no log lines beside it.
        Some(Command::Policy(_)) => "error",
        _ if one_shot => "warn",
        // rmcp logs each session's start with the client's whole
        // `initialize` request, and each end: an operator's log says what
        // Signpost does (RUST_LOG=rmcp=info brings them back).
        _ => "info,rmcp=warn",
    };
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_level.into());
    // A backend URL's query or password shows in the lines rmcp's HTTP
    // client logs when a request fails: those are not logged.
    let backend = match &cli.command {
        Some(Command::Proxy(args)) => Some(&args.backend),
        Some(Command::Policy(PolicyCommand::Check { backend, .. } | PolicyCommand::Test { backend, .. })) => {
            Some(backend)
        }
        _ => None,
    };
    if backend.and_then(|b| b.backend_url.as_deref()).is_some_and(signpost::proxy::url_holds_secrets) {
        for target in signpost::proxy::CLIENT_TRANSPORT_LOGS {
            filter = filter.add_directive(format!("{target}=off").parse().expect("a log directive"));
        }
    }
    // (a log line stderr cannot take is dropped: tracing-subscriber would
    // otherwise say so with `eprintln!`, which panics on a closed stderr)
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .log_internal_errors(false)
        .init();
    let result = match cli.command {
        Some(Command::Policy(command)) => policy_command(command, &cli.serve),
        Some(Command::Index { dir, output, all_features, indexer, trust }) => {
            index_project(&dir, output.as_deref(), all_features, &indexer, trust)
        }
        Some(Command::Graph(GraphCommand::Import { files, output })) => graph_import(&files, &output),
        Some(Command::Graph(GraphCommand::Info { files })) => graph_info(&files),
        Some(Command::Graph(GraphCommand::Symbols { files, name })) => graph_symbols(&files, name.as_deref()),
        Some(Command::Canary { action, url, token_file }) => canary(action, &url, token_file.as_deref()),
        Some(Command::Trust { dir, remove, list }) => trust(&dir, remove, list),
        Some(Command::Query(q)) => query(q, &cli.serve, &serve_only_flags(&matches)),
        Some(Command::Serve(args)) => serve(*args, None),
        Some(Command::Proxy(args)) => args.backend.required().and_then(|backend| serve(args.serve, Some(backend))),
        None => serve(cli.serve, None),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            say(&format!("signpost: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// `signpost policy …`. The commands that load a policy compile it as a
/// server would: under the top-level limits, through the compiled-policy
/// cache (`--cache-dir`, `--no-cache`).
fn policy_command(command: PolicyCommand, top: &ServeArgs) -> anyhow::Result<ExitCode> {
    match command {
        PolicyCommand::Check { file, cases, explain, backend } => {
            let backend = backend.command()?;
            check(&top.engine()?, &file, backend, cases.as_deref(), explain)
        }
        PolicyCommand::New { dir, lang, name } => scaffold::new_policy(&dir, lang, name.as_deref()),
        PolicyCommand::ExportDefault { file, cases } => export_default(&file, cases.as_deref()),
        PolicyCommand::Wit { dir, version } => export_wit(&dir, &version),
        PolicyCommand::Test { file, cases, lenient, backend } => {
            let strictness = if lenient { Strictness::Lenient } else { Strictness::Strict };
            let backend = backend.command()?;
            test_cases(&top.engine()?, &file, &cases, backend, strictness)
        }
        PolicyCommand::Replay { logs, policies, graph, json, diffs } => {
            replay(&top.engine()?, &logs, &policies, &graph, json, diffs)
        }
    }
}

/// How this program was invoked (argv 0), to suggest commands that run as
/// they are (`signpost` when that is not printable UTF-8).
fn program_name() -> String {
    let argv0 = std::env::args_os().next().and_then(|p| p.into_string().ok());
    argv0.filter(|p| !p.is_empty() && !p.chars().any(char::is_control)).unwrap_or_else(|| "signpost".to_owned())
}

/// Writes to stdout ([`outln!`]); a closed or failing stdout ends the
/// process (141, as a shell reports SIGPIPE, when the reader went away).
fn write_out(args: std::fmt::Arguments<'_>) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        say(&format!("signpost: writing to stdout: {e}"));
        std::process::exit(1);
    }
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

/// `--indexer LANG=builtin` for a server: a language of the built-in indexer's.
fn builtin_choice(flag: &str) -> Result<String, String> {
    let names: Vec<&str> = signpost_treesitter::languages::LANGUAGES.iter().map(|l| l.name).collect();
    match flag.split_once('=') {
        Some((lang, "builtin")) if names.contains(&lang) => Ok(flag.to_owned()),
        Some((lang, "builtin")) => Err(format!("`{lang}` is not one of {}", names.join(", "))),
        _ => Err("give LANG=builtin, e.g. rust=builtin (a server's only choice of indexer)".into()),
    }
}

#[cfg(test)]
mod tests {
    use signpost::sanitize::{OTHER_SUBCOMMANDS, is_subcommand};
    use signpost::tools::Tool;

    use super::Cli;

    /// The terminal face drops every line of a policy's text that reads as
    /// `signpost <subcommand>`: the sanitiser's list of subcommands is this
    /// CLI's, one per tool and the others.
    #[test]
    fn the_sanitiser_knows_every_subcommand() {
        let mut command = <Cli as clap::CommandFactory>::command();
        command.build();
        let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
        for name in &names {
            assert!(is_subcommand(name), "`signpost {name}` is not known to the sanitiser");
        }
        for word in Tool::NAMES.iter().chain(&OTHER_SUBCOMMANDS) {
            assert!(names.contains(word), "the sanitiser knows `{word}`, the CLI does not: {names:?}");
        }
    }
}
