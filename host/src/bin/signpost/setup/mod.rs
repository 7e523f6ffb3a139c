//! `signpost setup`: adds Signpost to the MCP configuration of the agents
//! found on this machine or in the project ([`clients`]), serving the
//! repository it runs in; with `--guide`, tells each agent when to use it
//! ([`guide`]); with `--remove`, takes out what it added.
//!
//! Each file is edited in place ([`edit`]): the other servers, comments and
//! layout stay. A file that would not change is not written; one that
//! would is first copied beside itself (`FILE.signpost-backup`; not one
//! deleted, which held only what setup wrote), then replaced whole by a
//! rename, so that an agent reading it never sees half a file. A file that cannot be read as its format is left untouched, with
//! the reason, and the other clients are still set up.

mod clients;
mod edit;
mod guide;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clients::{Client, Guide, Places, Run, Servers};

/// `signpost setup`'s flags.
#[derive(clap::Args)]
pub struct SetupArgs {
    /// The agent to set up: claude-code, codex, cursor, vscode or
    /// claude-desktop; repeat for several. Without it (and without --yes),
    /// setup asks for each agent it finds, on a terminal.
    #[arg(long = "client", value_name = "NAME", value_enum)]
    clients: Vec<Client>,
    /// Every agent found, without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Print each change as a diff; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Take Signpost out of the agents' configuration (and the guidance it
    /// added) instead.
    #[arg(long)]
    remove: bool,
    /// Also tell each agent when to reach for Signpost instead of reading
    /// files: a skill for Claude Code, a section of the project's AGENTS.md
    /// for Codex, Cursor and VS Code.
    #[arg(long)]
    guide: bool,
    /// The repository to serve [default: the one the current directory is
    /// in].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The server's name in the agents' configuration.
    #[arg(long, default_value = "signpost", value_parser = server_name)]
    name: String,
    /// The program the agents run [default: this signpost binary].
    #[arg(long, value_name = "PATH", conflicts_with = "launcher")]
    command: Option<PathBuf>,
    /// Have the agents start Signpost through a package runner, `uvx
    /// signpost-mcp` or `npx -y signpost-mcp`, instead of a binary's path;
    /// `none` for this binary's path. [default: the runner this binary was
    /// started from, when it runs from uv's or npm's cache; else none]
    #[arg(long, value_enum)]
    launcher: Option<Launcher>,
}

/// A package runner the agents can start Signpost with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Launcher {
    /// `uvx signpost-mcp`: the PyPI package, run by uv.
    Uvx,
    /// `npx -y signpost-mcp`: the npm package, run by npm.
    Npx,
    /// This binary's own path.
    None,
}

impl Launcher {
    /// The runner a binary at `exe` was started from: one in npm's `_npx`
    /// cache or uv's cache is gone when that cache is cleaned, so the
    /// agents had better run the package again than its path.
    fn of(exe: &Path) -> Launcher {
        let parts: Vec<String> = exe.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let within = |a: &str, b: &str| parts.windows(2).any(|w| w[0] == a && w[1] == b);
        if parts.iter().any(|p| p == "_npx") {
            Launcher::Npx
        } else if within(".cache", "uv") || parts.iter().any(|p| p.starts_with("archive-v")) {
            Launcher::Uvx
        } else {
            Launcher::None
        }
    }
}

/// A name an agent's configuration can key a server by.
fn server_name(s: &str) -> Result<String, String> {
    let ok = !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok { Ok(s.to_owned()) } else { Err("letters, digits, `-` and `_` only, at most 64".to_owned()) }
}

/// One file's change: its text before (`None`: not there) and after
/// (`None`: deleted).
struct Change {
    file: PathBuf,
    before: Option<String>,
    after: Option<String>,
    /// What the change does, for the report.
    what: String,
}

pub fn setup(args: SetupArgs) -> anyhow::Result<ExitCode> {
    let root = project_root(args.project.as_deref())?;
    let run = match &args.command {
        Some(c) => Run { program: c.to_string_lossy().into_owned(), args: Vec::new() },
        None => {
            let exe = std::env::current_exe().and_then(|p| p.canonicalize()).context("finding this program's path")?;
            match args.launcher.unwrap_or_else(|| Launcher::of(&exe)) {
                Launcher::Uvx => Run { program: "uvx".into(), args: vec!["signpost-mcp".into()] },
                Launcher::Npx => Run { program: "npx".into(), args: vec!["-y".into(), "signpost-mcp".into()] },
                Launcher::None => Run { program: exe.to_string_lossy().into_owned(), args: Vec::new() },
            }
        }
    };
    let places = Places::from_env(root)?;
    let chosen = choose(&args, &places)?;
    let mut failed = false;
    // A file two clients share (AGENTS.md) is changed once.
    let mut planned = std::collections::HashSet::new();
    for client in chosen {
        if args.guide && client.guide(&places).is_none() {
            outln!("{}: no guidance (it reads no project's files)", client.label());
        }
        let changes = plan(client, &args, &places, &run);
        for change in changes {
            if let Ok(c) = &change
                && !planned.insert(c.file.clone())
            {
                outln!("{}: {} (as above)", client.label(), shown(&c.file));
                continue;
            }
            match change.and_then(|c| apply(&c, args.dry_run).map(|done| (c, done))) {
                Ok((c, true)) => outln!("{}: {} {}", client.label(), c.what, shown(&c.file)),
                Ok((c, false)) => outln!("{}: {} (nothing to change)", client.label(), shown(&c.file)),
                Err(e) => {
                    failed = true;
                    crate::say(&format!("signpost setup: {}: {e:#}", client.label()));
                }
            }
        }
    }
    if args.dry_run {
        outln!("(dry run: nothing written)");
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The repository served: `--project`, else the one the current directory
/// is in (the nearest directory above it with a `.git`).
fn project_root(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = given {
        let dir = dir.canonicalize().with_context(|| format!("--project {}", dir.display()))?;
        anyhow::ensure!(dir.is_dir(), "--project {}: not a directory", dir.display());
        return Ok(dir);
    }
    let cwd = std::env::current_dir()?.canonicalize()?;
    cwd.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf).ok_or_else(|| {
        anyhow::anyhow!(
            "{} is in no repository (no .git above it): run setup inside the repository to serve, or name it \
             with --project DIR",
            cwd.display()
        )
    })
}

/// The clients to set up: those named, else every one found with --yes,
/// else those the user picks on a terminal.
fn choose(args: &SetupArgs, places: &Places) -> anyhow::Result<Vec<Client>> {
    if !args.clients.is_empty() {
        let mut chosen = args.clients.clone();
        chosen.dedup();
        return Ok(chosen);
    }
    let found: Vec<Client> = Client::ALL.into_iter().filter(|c| c.found(places)).collect();
    let names = || Client::ALL.map(Client::name).join(", ");
    anyhow::ensure!(!found.is_empty(), "no agent found (no configuration of {}): name one with --client NAME", names());
    if args.yes {
        return Ok(found);
    }
    let listed = || found.iter().map(|c| format!("{} ({})", c.name(), shown(&c.file(places)))).collect::<Vec<_>>();
    anyhow::ensure!(
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        "no terminal to ask on: name the agents with --client NAME, or --yes for every one found: {}",
        listed().join(", ")
    );
    let verb = if args.remove { "Take Signpost out of" } else { "Add Signpost to" };
    let mut chosen = Vec::new();
    let mut lines = std::io::stdin().lock();
    for client in found {
        eprint!("{verb} {} ({})? [Y/n] ", client.label(), shown(&client.file(places)));
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        if lines.read_line(&mut answer)? == 0 {
            break;
        }
        if matches!(answer.trim().to_ascii_lowercase().as_str(), "" | "y" | "yes") {
            chosen.push(client);
        }
    }
    Ok(chosen)
}

/// The changes for one client: its configuration, and its guidance when
/// asked for (or, on removal, when there is some).
fn plan(client: Client, args: &SetupArgs, at: &Places, run: &Run) -> Vec<anyhow::Result<Change>> {
    let mut changes = vec![config_change(client, args, at, run)];
    if let Some(guide) = client.guide(at).filter(|_| args.guide || args.remove) {
        changes.push(guide_change(&guide, args));
    }
    changes
}

fn config_change(client: Client, args: &SetupArgs, at: &Places, run: &Run) -> anyhow::Result<Change> {
    let file = client.file(at);
    let before = read(&file)?;
    let text = before.as_deref().unwrap_or("");
    let unreadable = |e: String| anyhow::anyhow!("{} left as it is: {e}", shown(&file));
    let after = match (client.servers(at), args.remove) {
        (Servers::Json(path), false) => {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            Some(edit::json_set(text, &path, &args.name, &client.fields(run, &at.root)).map_err(unreadable)?)
        }
        (Servers::Toml(table), false) => {
            Some(edit::toml_set(text, table, &args.name, &client.fields(run, &at.root)).map_err(unreadable)?)
        }
        (Servers::Json(path), true) => {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            edit::json_remove(text, &path, &args.name).map_err(unreadable)?.or_else(|| before.clone())
        }
        (Servers::Toml(table), true) => {
            edit::toml_remove(text, table, &args.name).map_err(unreadable)?.or_else(|| before.clone())
        }
    };
    let what = if args.remove { "took the server out of" } else { "set the server in" };
    Ok(Change { file, before, after, what: what.to_owned() })
}

fn guide_change(guide: &Guide, args: &SetupArgs) -> anyhow::Result<Change> {
    match guide {
        Guide::Skill(file) => {
            let before = read(file)?;
            let after = if args.remove {
                // Only a skill setup wrote is deleted.
                before.clone().filter(|t| !guide::is_our_skill(t))
            } else {
                Some(guide::skill(&args.name))
            };
            let what = if args.remove { "deleted the skill" } else { "wrote the skill" };
            Ok(Change { file: file.clone(), before, after, what: what.to_owned() })
        }
        Guide::Agents(file) => {
            let before = read(file)?;
            let text = before.as_deref().unwrap_or("");
            let after = if args.remove {
                match guide::agents_remove(text) {
                    // A file that held nothing else goes.
                    Some(rest) if rest.trim().is_empty() => None,
                    Some(rest) => Some(rest),
                    None => before.clone(),
                }
            } else {
                Some(guide::agents_set(text, &args.name))
            };
            let what = if args.remove { "took the guidance out of" } else { "set the guidance in" };
            Ok(Change { file: file.clone(), before, after, what: what.to_owned() })
        }
    }
}

/// A file's text; `None` when it is not there.
fn read(file: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read(file) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{} left as it is: it is not UTF-8 text", shown(file))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{} left as it is: {e}", shown(file))),
    }
}

/// Makes the change (a dry run prints it as a diff): whether there was one.
fn apply(change: &Change, dry_run: bool) -> anyhow::Result<bool> {
    if change.before == change.after {
        return Ok(false);
    }
    let name = change.file.display().to_string();
    if dry_run {
        let before = change.before.as_deref().unwrap_or("");
        let after = change.after.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(before, after);
        let a = if change.before.is_some() { format!("a{name}") } else { "/dev/null".to_owned() };
        let b = if change.after.is_some() { format!("b{name}") } else { "/dev/null".to_owned() };
        crate::write_out(format_args!("{}", diff.unified_diff().header(&a, &b)));
        return Ok(true);
    }
    // A file deleted held only what setup wrote (its skill, its section):
    // no backup of that.
    if let (Some(before), Some(_)) = (&change.before, &change.after) {
        let backup = backup_of(&change.file);
        std::fs::write(&backup, before).with_context(|| format!("writing the backup {}", backup.display()))?;
    }
    match &change.after {
        Some(text) => write_whole(&change.file, text)?,
        None => {
            std::fs::remove_file(&change.file).with_context(|| format!("deleting {name}"))?;
            // The directories made for the skill go with it, each while
            // nothing else is in it.
            for dir in change.file.ancestors().skip(1).take(3) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
    Ok(true)
}

fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".signpost-backup");
    file.with_file_name(name)
}

/// Writes `text` beside `file`, with its permissions, then renames it over
/// (over the file a link points to: the link stays).
fn write_whole(file: &Path, text: &str) -> anyhow::Result<()> {
    let linked = std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink());
    let target = if linked {
        file.canonicalize().with_context(|| format!("following {}", file.display()))?
    } else {
        file.to_path_buf()
    };
    let file = target.as_path();
    let dir = file.parent().context("a file with no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut partial = file.as_os_str().to_os_string();
    partial.push(format!(".signpost-{}", std::process::id()));
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&partial, meta.permissions());
    }
    std::fs::rename(&partial, file).with_context(|| format!("writing {}", file.display()))
}

/// A path as the report shows it: `~/…` under the home directory.
fn shown(path: &Path) -> String {
    match std::env::var_os("HOME").map(PathBuf::from).and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_is_told_from_the_cache_the_binary_runs_from() {
        let cases = [
            ("/home/a/.npm/_npx/5d1f9c/node_modules/signpost-mcp-linux-x64/bin/signpost", Launcher::Npx),
            ("/home/a/.cache/uv/archive-v0/Xy12/lib/python3.12/site-packages/signpost_mcp/bin/signpost", Launcher::Uvx),
            ("/home/a/.local/share/pipx/venvs/signpost-mcp/bin/signpost", Launcher::None),
            ("/work/signpost/target/release/signpost", Launcher::None),
            ("/opt/uv/signpost", Launcher::None),
        ];
        for (path, launcher) in cases {
            assert_eq!(Launcher::of(Path::new(path)), launcher, "{path}");
        }
    }

    #[test]
    fn server_names_are_keys_an_agent_can_use() {
        for ok in ["signpost", "signpost-shop", "sp_2"] {
            assert!(server_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/b", "../x", "a b", "é", &"x".repeat(65)] {
            assert!(server_name(bad).is_err(), "{bad}");
        }
    }
}
