//! The `signpost` command: the CLI (its arguments and help), and the
//! commands it runs, one module each: serving MCP ([`serve`]), one tool call
//! from a shell ([`query`]), the policy author's commands ([`policy`]) and
//! the graph's ([`graph`]), each with its own subcommands; the flags of
//! serving and of a proxy's backend, and what they make, in [`args`].

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

mod args;
mod graph;
mod policy;
mod query;
mod registry;
mod scaffold;
mod serve;
mod setup;

use args::{ProxyArgs, ServeArgs};
use graph::{GraphCommand, graph_import, graph_info, graph_symbols, index_project, trust};
use policy::{PolicyCommand, policy_command};
use query::query;
use serve::{CanaryAction, canary, serve};

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use signpost::terminal::Query;

/// mimalloc: the re-index after an edit builds and frees millions of
/// small strings and maps, which glibc's allocator spends a quarter of its
/// time on (BENCHMARKS.md, "Edit latency").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `signpost --version`: the version, the embedded policy (by the digest
/// `signpost://policy` reports) and the policy interfaces this host accepts.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\nembedded policy: signpost-default, sha256 ",
    env!("SIGNPOST_DEFAULT_POLICY_SHA256"),
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
#[command(name = "signpost", version, long_version = LONG_VERSION, about, after_help = EXAMPLES)]
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
    /// Add Signpost to the agents on this machine (Claude Code, Codex,
    /// Cursor, VS Code, Claude Desktop), serving the repository it runs in:
    /// each configuration edited in place (other servers, comments and
    /// layout kept; a backup beside it); --remove undoes it.
    #[command(after_help = "Examples:\n  signpost setup                          ask for each agent found\n  \
                            signpost setup --client claude-code --guide\n  \
                            signpost setup --yes --dry-run           show the changes as a diff\n  \
                            signpost setup --remove --yes")]
    Setup(setup::SetupArgs),
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

fn main() -> ExitCode {
    // stdout is the MCP channel: every log line goes to stderr.
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Serving logs what it does; the one-shot commands print a report, and
    // log only warnings unless RUST_LOG asks for more.
    let one_shot = matches!(
        cli.command,
        Some(
            Command::Policy(_)
                | Command::Index { .. }
                | Command::Graph(_)
                | Command::Canary { .. }
                | Command::Query(_)
                | Command::Setup(_)
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
        Some(Command::Setup(args)) => setup::setup(args),
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
