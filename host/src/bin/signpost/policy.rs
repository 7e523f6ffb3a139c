//! `signpost policy …`: check, test, replay and export policy components.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use signpost::policy::{Interface, Limits, PolicyEngine};
use signpost::reload;
use signpost::validate::HintValidator;

pub(super) fn check(file: &Path, backend: Option<signpost::proxy::Command>) -> anyhow::Result<ExitCode> {
    let engine = PolicyEngine::new(Limits::default())?;
    let validator = HintValidator::new()?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    println!("policy   {}", file.display());
    match reload::prepare(&engine, &validator, &bytes, &file.display().to_string(), &|| false) {
        Ok((policy, report)) => {
            let id = policy.identity();
            println!("identity {} {}", id.name, id.version);
            println!("sha256   {}", id.sha256);
            let served: Vec<&str> = Interface::ALL.iter().map(|i| i.version()).collect();
            println!("exports  {} (this host serves signpost:policy@{})", policy.interface(), served.join(", @"));
            println!("check    {report}");
            if policy.interface() >= Interface::V0_2 {
                print_rules("Signpost's tools", &policy, signpost::tools::tool_set());
                if let Some(backend) = backend {
                    let runtime = tokio::runtime::Runtime::new()?;
                    let upstream = runtime.block_on(signpost::proxy::Upstream::start(backend))?;
                    print_rules("the backend's tools", &policy, upstream.catalogue().tool_set());
                }
            } else if backend.is_some() {
                println!("rules    none: a {} policy declares no rules", policy.interface());
            }
            println!("ok: {} {} would be accepted", id.name, id.version);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAILED: {e}");
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
    println!("rules    for {what} ({} listed): {} declared", tools.tools().len(), declared.len());
    for (tool, rule) in declared {
        let references: Vec<String> = rule.references.iter().map(ToString::to_string).collect();
        let changes = match rule.changes_state {
            Some(true) => "; changes state",
            Some(false) => "; changes nothing",
            None => "",
        };
        println!("           {tool}: references [{}]{changes}", references.join(", "));
    }
    for why in rules.skipped() {
        println!("         left out: {why}");
    }
}

pub(super) fn test_cases(
    file: &Path,
    cases: &Path,
    backend: Option<signpost::proxy::Command>,
) -> anyhow::Result<ExitCode> {
    let engine = PolicyEngine::new(Limits::default())?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    let policy = engine.load(&bytes, &file.display().to_string())?;
    println!("policy {} {} ({})", policy.identity().name, policy.identity().version, file.display());
    let results = match backend {
        None => signpost::golden::run(policy, cases),
        Some(backend) => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(signpost::golden::run_backend(policy, cases, backend))
        }
    }
    .map_err(anyhow::Error::msg)?;
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

pub(super) fn replay(
    logs: &[PathBuf],
    policies: &[PathBuf],
    graph: &[PathBuf],
    json: bool,
    diffs: usize,
) -> anyhow::Result<ExitCode> {
    use signpost::replay;
    let log = replay::read_logs(logs)?;
    let graph = std::sync::Arc::new(signpost::live_graph::load_sources(graph).context("loading the graph")?);
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

pub(super) fn export_default(file: &Path) -> anyhow::Result<ExitCode> {
    std::fs::write(file, signpost::DEFAULT_POLICY).with_context(|| format!("writing {}", file.display()))?;
    println!("{}  {}", signpost::policy::sha256_hex(signpost::DEFAULT_POLICY), file.display());
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
    println!("{} (package signpost:policy@{})", file.display(), interface.version());
    Ok(ExitCode::SUCCESS)
}
