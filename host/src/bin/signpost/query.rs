//! The tool commands (`signpost describe …`, `signpost call …`): one call
//! through the same pipeline as MCP, printed for a terminal.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::terminal::{self, Query, Shell};
use signpost::tools::Tool;
use signpost::trails::carry::{self, TRAIL_ARG};
use signpost::trails::{Owner, Trails};

use super::serve::initial_policy;

use super::args::ServeArgs;
use super::{program_name, say};

/// A tool command: one call through the same pipeline as MCP, printed as
/// text or JSON. Exit 0 on a result, 1 on a tool error (or a name that
/// names several symbols), 2 when the command cannot run as given.
pub(super) fn query(mut query: Query, top: &ServeArgs, serve_only: &[String]) -> anyhow::Result<ExitCode> {
    // `signpost --graph g describe X` and `signpost describe X --graph g` alike.
    let options = query.options_mut();
    if options.graph.is_empty() {
        options.graph.clone_from(&top.graph);
    }
    if options.policy.is_none() {
        match &top.policy {
            Some(signpost::oci::PolicySource::File(path)) => options.policy = Some(path.clone()),
            Some(signpost::oci::PolicySource::Oci(r)) => {
                say(&format!("signpost: a tool command reads a policy file, not {r}: serve it, or pull it first"));
                return Ok(ExitCode::from(2));
            }
            None => {}
        }
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
    // No --graph: the repository the command runs in, indexed as `--project`
    // does (the same cache), else the embedded sample; either way, said.
    let mut sources = options.graph.clone();
    let mut whole = None;
    if sources.is_empty() {
        match project_sources() {
            Ok(Some(found)) => {
                let root = found.root.display();
                say(&format!("signpost: answering from the project at {root} (--graph FILE for another)"));
                sources = found.sources;
                whole = found.whole;
            }
            Ok(None) => {
                say("signpost: no project here (no .git or project file above this directory): answering from the \
                 embedded sample graph; run inside a repository, or give --graph FILE")
            }
            Err(e) => return usage(&format!("{e:#}")),
        }
    }
    // The graph a server last saved whole, when it is merged from these
    // parts; otherwise they are read and merged.
    let graph = match whole {
        Some(graph) => Ok(graph),
        None => signpost::live_graph::load_sources(&sources).context("loading the graph"),
    };
    let loaded = graph.and_then(|graph| {
        let engine = top.engine()?;
        Ok((graph, initial_policy(&engine, options.policy.as_ref(), None)?))
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
    let opened = runtime.block_on(signpost.trails().open(sent_trail, owner, own.clone()));
    // Every call of the command runs on that trail, as an MCP call does
    // (and where its policy can run, as a server's: `Signpost::call`).
    let call = |tool: Tool, args: serde_json::Map<String, serde_json::Value>| {
        let on_trail = signpost.trails().run(&opened, tool.name(), async |session| {
            Ok::<_, std::convert::Infallible>(signpost.call(tool, args, &session))
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
    // Without a store each command is a session of its own: the ids on its
    // command line were read off an earlier command's output, so the policy
    // is not told they are unseen.
    if let Some(own) = &own {
        let ids: Vec<String> = args
            .values()
            .flat_map(|v| match v {
                serde_json::Value::Array(a) => a.clone(),
                other => vec![other.clone()],
            })
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        own.saw(&ids);
    }
    let response = call(tool, args);
    let out = match options.format {
        terminal::Format::Text => terminal::text(&response, &named, &shell),
        terminal::Format::Json => terminal::json_text(&terminal::json(&response, &named, &shell)),
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush());
    Ok(if response.is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// A project found above the working directory, indexed into
/// `--project`'s cache as `--project` would.
struct Found {
    root: std::path::PathBuf,
    /// The index files to serve.
    sources: Vec<std::path::PathBuf>,
    /// The graph merged from them as a server last saved it, when it is
    /// ([`signpost::project::Project::take_whole`]).
    whole: Option<signpost::graph::Graph>,
}

/// The repository the working directory is in (the nearest directory above
/// it with `.git`, else with a project file; never the home directory or
/// `/`). None outside any.
fn project_sources() -> anyhow::Result<Option<Found>> {
    let here = std::env::current_dir().context("reading the working directory")?;
    let Some(root) = project_root(&here) else { return Ok(None) };
    let opts = signpost::project::Options {
        trust: signpost::trust::Trust::of(&root, false),
        first_wait: None,
        background: false,
        builtin: signpost::trust::builtin_choices(&[]),
    };
    let mut project = signpost::project::Project::open(&root, &signpost::project::default_cache(&root), &opts)?;
    let whole = project.take_whole();
    Ok(Some(Found { root, sources: project.sources().to_vec(), whole }))
}

/// Files that mark a project's root, of the languages Signpost reads.
const PROJECT_FILES: &[&str] = &[
    "go.mod",
    "Cargo.toml",
    "package.json",
    "tsconfig.json",
    "pyproject.toml",
    "setup.py",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "build.sbt",
    "Package.swift",
    "Gemfile",
    "composer.json",
    "CMakeLists.txt",
    "meson.build",
];

/// The nearest directory at or above `dir` holding `.git`, else the
/// nearest holding a project file; not the home directory, nor `/`.
fn project_root(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let eligible = |d: &std::path::Path| d.parent().is_some() && home.as_deref() != Some(d);
    let has = |d: &std::path::Path, name: &str| std::fs::symlink_metadata(d.join(name)).is_ok();
    let git = dir.ancestors().filter(|d| eligible(d)).find(|d| has(d, ".git"));
    let marked = || {
        dir.ancestors().filter(|d| eligible(d)).find(|d| {
            PROJECT_FILES.iter().any(|f| has(d, f))
                || std::fs::read_dir(d).into_iter().flatten().flatten().any(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.ends_with(".sln") || n.ends_with(".csproj")
                })
        })
    };
    git.or_else(marked).map(std::path::Path::to_path_buf)
}
