//! `signpost policy …`: check, test, replay and export policy components.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use signpost::golden::Strictness;
use signpost::policy::{Interface, PolicyEngine};
use signpost::reload;
use signpost::validate::HintValidator;

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
