//! The agents `signpost setup` knows: where each keeps its MCP servers, how
//! it spells an entry, how to tell it is on this machine, and where its
//! guidance goes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// An agent whose MCP configuration `setup` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `~/.claude.json`, the project's own servers (the
    /// "local" scope `claude mcp add` writes by default).
    ClaudeCode,
    /// OpenAI Codex: `$CODEX_HOME/config.toml` (`~/.codex/config.toml`).
    Codex,
    /// Cursor: the project's `.cursor/mcp.json`.
    Cursor,
    /// VS Code: the project's `.vscode/mcp.json`.
    Vscode,
    /// Claude Desktop: its `claude_desktop_config.json`.
    ClaudeDesktop,
}

/// What an agent runs to start Signpost: a program and the arguments
/// before Signpost's own.
pub struct Run {
    pub program: String,
    pub args: Vec<String>,
}

/// Where the servers are in a client's file.
pub enum Servers {
    /// A JSON object, under these keys from the top.
    Json(Vec<String>),
    /// A TOML table of that name.
    Toml(&'static str),
}

/// Where guidance for a client goes.
pub enum Guide {
    /// A skill of its own (a `SKILL.md`), which the client loads when the
    /// task calls for it.
    Skill(PathBuf),
    /// A section of the project's `AGENTS.md`.
    Agents(PathBuf),
}

/// The directories the clients' files are found from.
pub struct Places {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (on macOS, `~/Library/Application Support`).
    pub config: PathBuf,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex: PathBuf,
    /// The repository served.
    pub root: PathBuf,
}

impl Places {
    pub fn from_env(root: PathBuf) -> anyhow::Result<Places> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .ok_or_else(|| anyhow::anyhow!("neither HOME nor USERPROFILE is set: no agent's configuration to find"))?;
        let config = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else if cfg!(windows) {
            var("APPDATA").unwrap_or_else(|| home.join("AppData/Roaming"))
        } else {
            var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"))
        };
        let codex = var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        Ok(Places { home, config, codex, root })
    }
}

impl Client {
    pub const ALL: [Client; 5] =
        [Client::ClaudeCode, Client::Codex, Client::Cursor, Client::Vscode, Client::ClaudeDesktop];

    /// The name `--client` takes.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::ClaudeDesktop => "claude-desktop",
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::ClaudeDesktop => "Claude Desktop",
        }
    }

    /// The file that holds its servers.
    pub fn file(self, at: &Places) -> PathBuf {
        match self {
            Client::ClaudeCode => at.home.join(".claude.json"),
            Client::Codex => at.codex.join("config.toml"),
            Client::Cursor => at.root.join(".cursor/mcp.json"),
            Client::Vscode => at.root.join(".vscode/mcp.json"),
            Client::ClaudeDesktop => at.config.join("Claude/claude_desktop_config.json"),
        }
    }

    /// Where in that file.
    pub fn servers(self, at: &Places) -> Servers {
        match self {
            Client::ClaudeCode => Servers::Json(vec![
                "projects".to_owned(),
                at.root.to_string_lossy().into_owned(),
                "mcpServers".to_owned(),
            ]),
            Client::Codex => Servers::Toml("mcp_servers"),
            Client::Cursor | Client::ClaudeDesktop => Servers::Json(vec!["mcpServers".to_owned()]),
            Client::Vscode => Servers::Json(vec!["servers".to_owned()]),
        }
    }

    /// The fields of its entry that serves `root` with `run`.
    pub fn fields(self, run: &Run, root: &Path) -> Vec<(&'static str, Value)> {
        let command = json!(run.program);
        let mut args = run.args.clone();
        args.extend(["--project".to_owned(), root.to_string_lossy().into_owned()]);
        let args = json!(args);
        match self {
            Client::ClaudeCode | Client::Vscode => vec![("type", json!("stdio")), ("command", command), ("args", args)],
            Client::Codex | Client::Cursor | Client::ClaudeDesktop => vec![("command", command), ("args", args)],
        }
    }

    /// Whether it is on this machine or set up in the project: its
    /// configuration file or directory is there.
    pub fn found(self, at: &Places) -> bool {
        let candidates: Vec<PathBuf> = match self {
            Client::ClaudeCode => vec![at.home.join(".claude.json"), at.home.join(".claude")],
            Client::Codex => vec![at.codex.clone()],
            Client::Cursor => vec![at.root.join(".cursor"), at.home.join(".cursor")],
            Client::Vscode => vec![at.root.join(".vscode"), at.config.join("Code")],
            Client::ClaudeDesktop => vec![at.config.join("Claude")],
        };
        candidates.iter().any(|p| p.exists())
    }

    /// Where its guidance goes: a project skill for Claude Code, the
    /// project's `AGENTS.md` for the agents that read it (Codex, Cursor and
    /// VS Code), none for Claude Desktop, which has no project.
    pub fn guide(self, at: &Places) -> Option<Guide> {
        match self {
            Client::ClaudeCode => Some(Guide::Skill(at.root.join(".claude/skills/signpost/SKILL.md"))),
            Client::Codex | Client::Cursor | Client::Vscode => Some(Guide::Agents(at.root.join("AGENTS.md"))),
            Client::ClaudeDesktop => None,
        }
    }
}
