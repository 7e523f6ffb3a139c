//! `signpost policy …`: check, test, replay and export policy components;
//! its subcommands ([`PolicyCommand`]) and their help.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use signpost::golden::Strictness;
use signpost::policy::{Interface, PolicyEngine};
use signpost::reload;
use signpost::validate::HintValidator;

use super::args::{BackendArgs, ServeArgs};
use super::registry::{self, RegistryArgs};
use super::scaffold;

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
pub(super) enum PolicyCommand {
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
    /// Publish a policy component to an OCI registry, after the checks a
    /// swap runs: the WebAssembly OCI layout (the component as its one
    /// layer), its name, version, sha256 and WIT version in the manifest's
    /// annotations; with --key, signed in cosign's format. Prints the
    /// artifact's reference by digest. Credentials: SIGNPOST_REGISTRY_USER
    /// and SIGNPOST_REGISTRY_PASSWORD, or SIGNPOST_REGISTRY_TOKEN, else
    /// Docker's config.json.
    #[command(after_help = "Examples:\n  signpost policy keygen fleet\n  \
                      signpost policy push policy.wasm oci://registry.example.com/policies/hints:stable --key fleet.key\n  \
                      signpost --policy oci://registry.example.com/policies/hints:stable --policy-key fleet.pub")]
    Push {
        /// The component file (.wasm).
        file: PathBuf,
        /// Where: oci://REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Sign it with this private key (PEM: ECDSA P-256 or Ed25519).
        #[arg(long, value_name = "KEY")]
        key: Option<PathBuf>,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Sign a pushed policy (by tag or digest) in cosign's format: a
    /// signature at tag `sha256-<digest>.sig`, beside any already there,
    /// which `cosign verify --key` checks too.
    #[command(
        after_help = "Examples:\n  signpost policy sign oci://registry.example.com/policies/hints:stable --key fleet.key"
    )]
    Sign {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: String,
        /// The private key (PEM: ECDSA P-256 or Ed25519, PKCS#8).
        #[arg(long, value_name = "KEY")]
        key: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Check a pushed policy as a server would before serving it: a cosign
    /// signature by the key, the WebAssembly layout, the component's
    /// digest and size, then every check a swap runs. Exit 1 if refused.
    #[command(
        after_help = "Examples:\n  signpost policy verify oci://registry.example.com/policies/hints:stable --key fleet.pub"
    )]
    Verify {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: String,
        /// The public key (PEM, as `cosign.pub`).
        #[arg(long, value_name = "PUB")]
        key: PathBuf,
        /// The largest component accepted, in bytes.
        #[arg(long, default_value_t = signpost::oci::DEFAULT_MAX_COMPONENT)]
        max_bytes: u64,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Write a signing key pair: PREFIX.key (PKCS#8 PEM, mode 0600: it signs
    /// policies) and PREFIX.pub (for servers' --policy-key and `cosign
    /// verify --key`).
    #[command(after_help = "Examples:\n  signpost policy keygen fleet\n  signpost policy keygen fleet --ed25519")]
    Keygen {
        /// The files' prefix.
        prefix: PathBuf,
        /// An Ed25519 key instead of ECDSA P-256 (cosign's default kind).
        #[arg(long)]
        ed25519: bool,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
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

/// `signpost policy …`. The commands that load a policy compile it as a
/// server would: under the top-level limits, through the compiled-policy
/// cache (`--cache-dir`, `--no-cache`).
pub(super) fn policy_command(command: PolicyCommand, top: &ServeArgs) -> anyhow::Result<ExitCode> {
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
        PolicyCommand::Push { file, reference, key, registry } => {
            registry::push(&top.engine()?, &file, &reference, key.as_deref(), &registry)
        }
        PolicyCommand::Sign { reference, key, registry } => registry::sign(&reference, &key, &registry),
        PolicyCommand::Verify { reference, key, max_bytes, registry } => {
            registry::verify(&top.engine()?, &reference, &key, max_bytes, &registry)
        }
        PolicyCommand::Keygen { prefix, ed25519, force } => registry::keygen(&prefix, ed25519, force),
    }
}

/// `signpost policy check`: what a swap would run, and its verdict.
pub(super) fn check(
    engine: &PolicyEngine,
    file: &Path,
    backend: Option<signpost::proxy::Command>,
    cases: Option<&Path>,
    explain: bool,
) -> anyhow::Result<ExitCode> {
    let validator = HintValidator::new()?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    outln!("policy   {}", file.display());
    // A backend's tools are probed too: it is started first (and never
    // called by the probes), and the probes run on its runtime.
    let runtime = tokio::runtime::Runtime::new()?;
    let upstream = match backend {
        Some(backend) => Some(runtime.block_on(signpost::proxy::Upstream::start(backend))?),
        None => None,
    };
    let _in_runtime = runtime.enter();
    if explain {
        outln!("probes   the self-check's calls, each through the serving pipeline on the embedded sample graph;");
        outln!("         it fails on any fault, invalid hint, refused coercion, removed text line or missing text:");
        for probe in signpost::selfcheck::explain() {
            outln!("           {probe}");
        }
        if let Some(upstream) = &upstream {
            let tools = upstream.catalogue().tools().len().min(signpost::selfcheck::MAX_BACKEND_TOOLS);
            outln!(
                "         then each of the backend's tools ({tools}), with the arguments its schema requires, answered in \
                 the backend's stead (never called) with a result, an empty result, a tool error, a refusal and no \
                 answer in time"
            );
        }
    }
    let gate = reload::Gate { cases, backend: upstream.as_ref() };
    match reload::prepare(engine, &validator, &bytes, &file.display().to_string(), gate, &|| false) {
        Ok((policy, report)) => {
            let id = policy.identity();
            outln!("identity {} {}", id.name, id.version);
            outln!("sha256   {} (build {})", id.sha256, id.build());
            outln!("cache    {}", if id.from_cache { "compiled code from the cache" } else { "compiled now" });
            let served: Vec<&str> = Interface::ALL.iter().map(|i| i.version()).collect();
            outln!("exports  {} (this host serves signpost:policy@{})", policy.interface(), served.join(", @"));
            outln!("check    {report}");
            if policy.interface() >= Interface::V0_2 {
                print_rules("Signpost's tools", &policy, signpost::tools::tool_set());
                if let Some(upstream) = &upstream {
                    print_rules("the backend's tools", &policy, upstream.catalogue().tool_set());
                }
            } else if upstream.is_some() {
                outln!("rules    none: a {} policy declares no rules", policy.interface());
            }
            outln!("ok: {id} would be accepted");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            outln!("FAILED: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The rules a 0.2.0 or later policy declares for `tools`, and what of them the
/// host left out.
fn print_rules(what: &str, policy: &signpost::policy::Policy, tools: &std::sync::Arc<signpost::policy::ToolSet>) {
    let mut lease = policy.cold_lease();
    lease.tell(tools);
    let rules = lease.rules();
    let mut declared: Vec<(&str, &signpost::policy::rules::ToolRule)> = rules.iter().collect();
    declared.sort_by_key(|(tool, _)| *tool);
    outln!("rules    for {what} ({} listed): {} declared", tools.tools().len(), declared.len());
    for (tool, rule) in declared {
        let references: Vec<String> = rule.references.iter().map(ToString::to_string).collect();
        let changes = match rule.changes_state {
            Some(true) => "; changes state",
            Some(false) => "; changes nothing",
            None => "",
        };
        outln!("           {tool}: references [{}]{changes}", references.join(", "));
    }
    for why in rules.skipped() {
        outln!("         left out: {why}");
    }
}

/// `signpost policy test`: the golden cases in `cases`, each a pass or a
/// failure with what did not hold.
pub(super) fn test_cases(
    engine: &PolicyEngine,
    file: &Path,
    cases: &Path,
    backend: Option<signpost::proxy::Command>,
    strictness: Strictness,
) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    let policy = std::sync::Arc::new(engine.load(&bytes, &file.display().to_string())?);
    outln!("policy {} ({})", policy.identity(), file.display());
    let results = match backend {
        None => signpost::golden::run(policy, cases, strictness),
        Some(backend) => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(signpost::golden::run_backend(policy, cases, backend, strictness))
        }
    }
    .map_err(anyhow::Error::msg)?;
    let failed = results.iter().filter(|r| !r.failures.is_empty()).count();
    for r in &results {
        let name = r.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if r.failures.is_empty() {
            outln!("PASS {name}: {}", r.description);
        } else {
            outln!("FAIL {name}: {}", r.description);
        }
        let lenient = r.failures.is_empty() && !r.corrections.is_empty();
        if lenient {
            outln!("     (passed leniently: the host corrected the policy's answers)");
        }
        let notes = r.failures.iter().cloned().chain(
            lenient
                .then(|| r.corrections.iter().map(|(n, tool, what)| format!("call {n} ({tool}): {what}")))
                .into_iter()
                .flatten(),
        );
        for f in notes {
            for (i, line) in f.lines().enumerate() {
                outln!("{}{line}", if i == 0 { "     - " } else { "       " });
            }
        }
    }
    let mode = match strictness {
        Strictness::Strict => "",
        Strictness::Lenient => " (leniently)",
    };
    outln!("{} of {} cases passed{mode}", results.len() - failed, results.len());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

pub(super) fn replay(
    engine: &PolicyEngine,
    logs: &[PathBuf],
    policies: &[PathBuf],
    graph: &[PathBuf],
    json: bool,
    diffs: usize,
) -> anyhow::Result<ExitCode> {
    use signpost::replay;
    let log = replay::read_logs(logs)?;
    let graph = std::sync::Arc::new(signpost::live_graph::load_sources(graph).context("loading the graph")?);
    let validator = HintValidator::new()?;
    let mut reports = Vec::new();
    for file in policies {
        let source = file.display().to_string();
        let bytes = std::fs::read(file).with_context(|| format!("reading policy {source}"))?;
        // The same checks as a hot swap: a policy that could not go live is not judged.
        reports.push(match reload::prepare(engine, &validator, &bytes, &source, reload::Gate::default(), &|| false) {
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
        outln!("{:#}", replay::to_json(&log, &graph, &reports));
    } else {
        super::write_out(format_args!("{}", replay::to_table(&log, &graph, &reports, diffs)));
    }
    Ok(if reports.iter().any(|r| r.refused.is_some()) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

pub(super) fn export_default(file: &Path, cases: Option<&Path>) -> anyhow::Result<ExitCode> {
    std::fs::write(file, signpost::DEFAULT_POLICY).with_context(|| format!("writing {}", file.display()))?;
    outln!("{}  {}", signpost::policy::sha256_hex(signpost::DEFAULT_POLICY), file.display());
    if let Some(dir) = cases {
        let written = super::scaffold::export_default_cases(dir)?;
        let shown = dir.display();
        outln!("{} files in {shown} (signpost policy test {} --cases {shown})", written.len(), file.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn export_wit(dir: &Path, version: &str) -> anyhow::Result<ExitCode> {
    let interface = Interface::ALL.into_iter().find(|i| i.version() == version).with_context(|| {
        format!("no WIT package signpost:policy@{version} (this host serves 0.3.0, 0.2.0 and 0.1.0)")
    })?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("policy.wit");
    std::fs::write(&file, signpost::policy::wit_of(interface))
        .with_context(|| format!("writing {}", file.display()))?;
    outln!("{} (package signpost:policy@{})", file.display(), interface.version());
    Ok(ExitCode::SUCCESS)
}
