//! `signpost setup` against fixture configurations of every client it
//! knows, each with other servers, comments and a layout of its own: the
//! exact files written, a second run that changes nothing, the backups,
//! `--remove` giving back each file as it was, a file that cannot be read
//! left untouched, and the server an agent's configuration names answering
//! over MCP. Every run has a home, a configuration directory and a Codex
//! home of its own, so nothing of the machine's is read or written.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::swap::Scratch;
use crate::common::{BIN, Client};

/// A home with every client's configuration, and a repository.
struct Machine {
    _scratch: Scratch,
    home: PathBuf,
    repo: PathBuf,
}

const CLAUDE: &str = "{\n  \"numStartups\": 12,\n  \"projects\": {\n    \"/elsewhere\": {\"mcpServers\": {}}\n  },\n  \"theme\": \"dark\"\n}\n";
const CODEX: &str =
    "# my Codex\nmodel = \"o3\"   # the model\n\n[mcp_servers.git]\ncommand = \"uvx\"\nargs = [\"mcp-server-git\"]\n";
const CURSOR: &str = "{\n    // the team's servers\n    \"mcpServers\": {\n        \"memory\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]},\n    },\n}\n";
const VSCODE: &str = "{\n\t\"inputs\": [],\n\t/* servers */ \"servers\": {\n\t\t\"fetch\": { \"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"] }\n\t}\n}";
const AGENTS: &str = "# Agents\n\nRun `make test` before a commit.\n";

impl Machine {
    fn new(name: &str) -> Machine {
        let scratch = Scratch::new(&format!("setup-{name}"));
        let home = scratch.path("home");
        let repo = scratch.path("repo");
        for dir in [
            home.join(".codex"),
            home.join(".config/Claude"),
            repo.join(".git"),
            repo.join(".cursor"),
            repo.join(".vscode"),
            repo.join("src"),
        ] {
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        }
        let home = home.canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let repo = repo.canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let m = Machine { _scratch: scratch, home, repo };
        m.write(".claude.json", CLAUDE);
        m.write(".codex/config.toml", CODEX);
        m.write("repo/.cursor/mcp.json", CURSOR);
        m.write("repo/.vscode/mcp.json", VSCODE);
        m.write("repo/AGENTS.md", AGENTS);
        m.write("repo/src/Shop.java", "package shop;\n\npublic class Shop {\n    public void checkout() {}\n}\n");
        m
    }

    /// A file under the home (`repo/…`: under the repository).
    fn path(&self, rel: &str) -> PathBuf {
        match rel.strip_prefix("repo/") {
            Some(rel) => self.repo.join(rel),
            None => self.home.join(rel),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// `signpost setup ARGS` in the repository: (success, stdout + stderr).
    fn setup(&self, args: &[&str]) -> (bool, String) {
        let out = std::process::Command::new(BIN)
            .arg("setup")
            .args(args)
            .current_dir(self.repo.join("src"))
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("CODEX_HOME", self.home.join(".codex"))
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("panicked"), "{args:?} panicked:\n{text}");
        (out.status.success(), text)
    }

    /// Every file setup may touch, as it is (`None`: not there).
    fn files(&self) -> Vec<(&'static str, Option<String>)> {
        const FILES: [&str; 7] = [
            ".claude.json",
            ".codex/config.toml",
            ".config/Claude/claude_desktop_config.json",
            "repo/.cursor/mcp.json",
            "repo/.vscode/mcp.json",
            "repo/AGENTS.md",
            "repo/.claude/skills/signpost/SKILL.md",
        ];
        FILES.iter().map(|f| (*f, std::fs::read_to_string(self.path(f)).ok())).collect()
    }
}

fn bin() -> String {
    Path::new(BIN).canonicalize().unwrap_or_else(|e| panic!("{e}")).display().to_string()
}

/// Every client set up: each file exactly as expected, the rest of it as it
/// was; run again, nothing changes; `--remove` gives every file back as it
/// was and deletes what setup created.
#[test]
fn setup_edits_every_clients_file_in_place_and_remove_gives_each_back() {
    let m = Machine::new("all");
    let (bin, repo) = (bin(), m.repo.display().to_string());
    let (ok, out) = m.setup(&["--yes", "--guide"]);
    assert!(ok, "{out}");

    let claude: Value = serde_json::from_str(&m.read(".claude.json")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        claude,
        json!({"numStartups": 12, "theme": "dark", "projects": {
            "/elsewhere": {"mcpServers": {}},
            repo.as_str(): {"mcpServers": {"signpost": {"type": "stdio", "command": bin, "args": ["--project", repo]}}}
        }})
    );
    assert!(
        m.read(".claude.json")
            .starts_with("{\n  \"numStartups\": 12,\n  \"projects\": {\n    \"/elsewhere\": {\"mcpServers\": {}},\n")
    );
    assert_eq!(
        m.read(".codex/config.toml"),
        format!("{CODEX}\n[mcp_servers.signpost]\ncommand = \"{bin}\"\nargs = [\"--project\", \"{repo}\"]\n")
    );
    assert_eq!(
        m.read("repo/.cursor/mcp.json"),
        format!(
            "{{\n    // the team's servers\n    \"mcpServers\": {{\n        \"memory\": {{\"command\": \"npx\", \"args\": [\"-y\", \
             \"@modelcontextprotocol/server-memory\"]}},\n        \"signpost\": {{\n            \"command\": \"{bin}\",\n            \
             \"args\": [\"--project\", \"{repo}\"],\n        }},\n    }},\n}}\n"
        )
    );
    assert_eq!(
        m.read("repo/.vscode/mcp.json"),
        format!(
            "{{\n\t\"inputs\": [],\n\t/* servers */ \"servers\": {{\n\t\t\"fetch\": {{ \"type\": \"stdio\", \"command\": \"uvx\", \
             \"args\": [\"mcp-server-fetch\"] }},\n\t\t\"signpost\": {{\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"{bin}\",\n\t\t\t\
             \"args\": [\"--project\", \"{repo}\"]\n\t\t}}\n\t}}\n}}"
        ),
        "no newline added at the end of a file that had none"
    );
    assert_eq!(
        m.read(".config/Claude/claude_desktop_config.json"),
        format!(
            "{{\n  \"mcpServers\": {{\n    \"signpost\": {{\n      \"command\": \"{bin}\",\n      \"args\": [\"--project\", \"{repo}\"]\n    }}\n  }}\n}}\n"
        )
    );
    let agents = m.read("repo/AGENTS.md");
    assert!(agents.starts_with(&format!("{AGENTS}\n<!-- signpost:begin")), "{agents}");
    assert!(agents.contains("| Who calls `X`? |") && agents.ends_with("<!-- signpost:end -->\n"), "{agents}");
    assert_eq!(agents.matches("signpost:begin").count(), 1, "Codex, Cursor and VS Code share one section");
    let skill = m.read("repo/.claude/skills/signpost/SKILL.md");
    assert!(skill.starts_with("---\nname: signpost\ndescription: "), "{skill}");
    for tool in ["resolve", "describe", "find", "search", "neighbors"] {
        assert!(skill.contains(&format!("- `{tool}`: ")), "{tool} is not in the skill");
    }
    // A backup of each file that was there, as it was.
    for (file, text) in [(".claude.json", CLAUDE), (".codex/config.toml", CODEX), ("repo/.cursor/mcp.json", CURSOR)] {
        assert_eq!(m.read(&format!("{file}.signpost-backup")), text, "{file}");
    }
    assert!(!m.path(".config/Claude/claude_desktop_config.json.signpost-backup").exists(), "no backup of no file");

    // Again: nothing changes, and it says so.
    let set = m.files();
    let (ok, again) = m.setup(&["--yes", "--guide"]);
    assert!(ok, "{again}");
    assert_eq!(m.files(), set);
    assert_eq!(again.matches("(nothing to change)").count(), 7, "{again}");

    // Removed: every file that was there is back as it was.
    let (ok, removed) = m.setup(&["--remove", "--yes"]);
    assert!(ok, "{removed}");
    assert_eq!(m.read(".claude.json"), CLAUDE);
    assert_eq!(m.read(".codex/config.toml"), CODEX);
    assert_eq!(m.read("repo/.cursor/mcp.json"), CURSOR);
    assert_eq!(m.read("repo/.vscode/mcp.json"), VSCODE);
    assert_eq!(m.read("repo/AGENTS.md"), AGENTS);
    assert!(!m.path("repo/.claude").exists(), "the skill and the directories made for it are gone");
    assert_eq!(m.read(".config/Claude/claude_desktop_config.json"), "{}\n", "a file setup made keeps its empty object");
    let (ok, twice) = m.setup(&["--remove", "--yes"]);
    assert!(ok && !twice.contains("took"), "removing twice changes nothing: {twice}");
}

/// A dry run prints each change as a diff and writes nothing.
#[test]
fn a_dry_run_prints_the_diff_and_writes_nothing() {
    let m = Machine::new("dry");
    let before = m.files();
    let (ok, out) = m.setup(&["--client", "codex", "--client", "cursor", "--dry-run"]);
    assert!(ok, "{out}");
    assert_eq!(m.files(), before);
    assert!(out.contains(&format!("+++ b{}", m.path(".codex/config.toml").display())), "{out}");
    assert!(out.contains("+[mcp_servers.signpost]\n"), "{out}");
    assert!(out.contains("+        \"signpost\": {\n"), "{out}");
    assert!(out.contains("(dry run: nothing written)"), "{out}");
    assert!(!m.path(".codex/config.toml.signpost-backup").exists());
}

/// A file that cannot be read as its format, or is not text, is left as it
/// is with the reason; the other clients are still set up; the run fails.
#[test]
fn a_file_that_cannot_be_read_is_left_untouched_and_the_others_are_set_up() {
    let m = Machine::new("broken");
    let broken: [(&str, &[u8]); 3] = [
        ("repo/.cursor/mcp.json", b"{\"mcpServers\": {\"memory\": {\"command\": \"npx\"}"),
        ("repo/.vscode/mcp.json", b"{\"servers\": \"none\"}"),
        (".config/Claude/claude_desktop_config.json", b"{\"mcpServers\": {}}\xff\xfe"),
    ];
    for (file, bytes) in broken {
        std::fs::write(m.path(file), bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    m.write(".codex/config.toml", "[mcp_servers\ncommand = 1\n");
    let (ok, out) = m.setup(&["--yes"]);
    assert!(!ok, "{out}");
    for (file, bytes) in broken {
        assert_eq!(std::fs::read(m.path(file)).unwrap_or_default(), bytes, "{file} was touched");
        assert!(!m.path(&format!("{file}.signpost-backup")).exists(), "{file}");
    }
    assert_eq!(m.read(".codex/config.toml"), "[mcp_servers\ncommand = 1\n");
    assert!(out.contains("Cursor: ") && out.contains("it is not JSON that can be read"), "{out}");
    assert!(out.contains("VS Code: ") && out.contains("`servers` is not a JSON object"), "{out}");
    assert!(out.contains("Claude Desktop: ") && out.contains("it is not UTF-8 text"), "{out}");
    assert!(out.contains("Codex: ") && out.contains("it is not TOML that can be read"), "{out}");
    assert!(m.read(".claude.json").contains("\"signpost\""), "Claude Code is still set up: {out}");
}

/// Without --client, --yes or a terminal, setup asks nothing, writes
/// nothing, and says what it found; bad flags are refused.
#[test]
fn setup_without_a_choice_or_with_bad_flags_writes_nothing() {
    let m = Machine::new("refused");
    let before = m.files();
    let (ok, out) = m.setup(&[]);
    assert!(!ok, "{out}");
    assert!(out.contains("no terminal to ask on") && out.contains("codex (~/.codex/config.toml)"), "{out}");
    for args in [
        &["--client", "emacs"][..],
        &["--yes", "--name", "../../etc"],
        &["--yes", "--name", ""],
        &["--yes", "--project", "/no/such/dir"],
    ] {
        let (ok, out) = m.setup(args);
        assert!(!ok, "{args:?}: {out}");
    }
    assert_eq!(m.files(), before);
    // Outside any repository, without --project: told how.
    let out = std::process::Command::new(BIN)
        .args(["setup", "--yes"])
        .current_dir(crate::common::outside_any_project())
        .env("HOME", &m.home)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && text.contains("--project DIR"), "{text}");
}

/// A configuration file that is a link (a dotfiles repository's) is
/// edited where it points, and stays a link.
#[cfg(unix)]
#[test]
fn a_linked_configuration_is_edited_where_it_points() {
    let m = Machine::new("linked");
    let real = m.home.join("dotfiles-codex.toml");
    std::fs::write(&real, CODEX).unwrap_or_else(|e| panic!("{e}"));
    let link = m.path(".codex/config.toml");
    std::fs::remove_file(&link).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&real, &link).unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = m.setup(&["--client", "codex"]);
    assert!(ok, "{out}");
    assert!(std::fs::symlink_metadata(&link).is_ok_and(|md| md.file_type().is_symlink()), "still a link");
    assert!(std::fs::read_to_string(&real).unwrap_or_default().contains("[mcp_servers.signpost]"));
}

/// The server a configuration names serves the repository: the entry
/// Cursor would run, run as Cursor runs it, answers over MCP.
#[tokio::test(flavor = "multi_thread")]
async fn the_configured_server_answers_for_the_repository() {
    let m = Machine::new("serves");
    m.write("repo/.cursor/mcp.json", "{}");
    let (ok, out) = m.setup(&["--client", "cursor"]);
    assert!(ok, "{out}");
    let config: Value = serde_json::from_str(&m.read("repo/.cursor/mcp.json")).unwrap_or_else(|e| panic!("{e}"));
    let entry = &config["mcpServers"]["signpost"];
    let mut cmd = tokio::process::Command::new(entry["command"].as_str().unwrap_or_default());
    for arg in entry["args"].as_array().into_iter().flatten() {
        cmd.arg(arg.as_str().unwrap_or_default());
    }
    cmd.env("XDG_CACHE_HOME", m.home.join(".cache")).env("HOME", &m.home);
    let client = Client::spawn_command(cmd, Stdio::null()).await;
    let resolved = client.call("resolve", json!({"identifier": "Shop"})).await;
    assert_eq!(resolved.structured["status"], "one", "{}", resolved.text);
    client.close().await;
}

/// `signpost --version` names the version, the embedded policy by the
/// digest the running server reports for it, and the interfaces accepted.
#[tokio::test(flavor = "multi_thread")]
async fn the_version_names_the_embedded_policy_the_server_runs() {
    let (ok, version) = crate::common::run_cli(&["--version"]);
    assert!(ok, "{version}");
    assert!(version.starts_with(&format!("signpost {}\n", env!("CARGO_PKG_VERSION"))), "{version}");
    let client = Client::default().await;
    let status = client.status().await;
    let digest = status["active"]["sha256"].as_str().unwrap_or_else(|| panic!("no sha256: {status}"));
    assert_eq!(digest.len(), 64);
    assert!(version.contains(&format!("embedded policy: signpost-default, sha256 {digest}\n")), "{version}\n{status}");
    assert!(version.contains("accepts policy components that export signpost:policy/policy@"), "{version}");
    client.close().await;
}

/// On a terminal, setup asks for each agent found, and the answers pick
/// them (`script` gives it a terminal; an empty answer is yes).
#[cfg(unix)]
#[test]
fn on_a_terminal_setup_asks_for_each_agent_found() {
    use std::io::Write;
    let m = Machine::new("asks");
    let before = m.files();
    let mut child = std::process::Command::new("script")
        .args(["-qec", &format!("'{}' setup", BIN.replace('\'', r"'\''")), "/dev/null"])
        .current_dir(&m.repo)
        .env("HOME", &m.home)
        .env("XDG_CONFIG_HOME", m.home.join(".config"))
        .env("CODEX_HOME", m.home.join(".codex"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("script (util-linux) runs setup on a terminal: {e}"));
    // Claude Code no, Codex yes, Cursor (empty) yes, VS Code no, Claude Desktop no.
    child.stdin.take().map(|mut i| i.write_all(b"n\ny\n\nno\nN\n")).transpose().unwrap_or_else(|e| panic!("{e}"));
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches("? [Y/n] ").count(), 5, "one question per agent found: {text}");
    let after = m.files();
    let changed: Vec<&str> = before.iter().zip(&after).filter(|(b, a)| b != a).map(|(b, _)| b.0).collect();
    assert_eq!(changed, [".codex/config.toml", "repo/.cursor/mcp.json"], "{text}");
}
