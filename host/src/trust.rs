//! Whether a project tree is trusted: whether Signpost may run programs
//! that execute the tree's own code to index it.
//!
//! The SCIP indexers build the project they index: rust-analyzer runs
//! `cargo check` (build scripts, proc macros, and whatever
//! `.cargo/config.toml` names as `rustc`, wrapper or runner, even for
//! `rustc -vV`), and the rustup launcher honours the tree's
//! `rust-toolchain.toml`; scip-python asks the interpreter of a virtual
//! environment the tree's `pyrightconfig.json` names; scip-java runs the
//! project's Maven, Gradle or sbt build with its plugins; scip-go runs the
//! Go toolchain (`go.mod`'s `toolchain` line can fetch and run another);
//! scip-dotnet runs MSBuild targets; scip-clang and scip-ruby read build
//! configuration; scip-typescript reads whatever a `tsconfig.json`
//! `extends` or `include`s, outside the tree too. So a tree is untrusted
//! unless the operator says otherwise, and then none of them runs: the
//! built-in indexer (which only reads regular files inside the root) reads
//! every language, and a note says which indexer was not run and how to
//! opt in.
//!
//! Trust is given per run (`--trust`) or kept in the user's configuration
//! (`signpost trust DIR` writes the `[trust]` table of
//! `$XDG_CONFIG_HOME/signpost/config.toml`: `trees` trusts each directory
//! listed and everything under it, `all = true` every tree). Nothing in
//! the tree itself can say it is trusted.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Whether a tree's own code may run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// SCIP indexers (which build the project) may run.
    pub trusted: bool,
    /// What decided it, for notes and the log (`--trust`, the
    /// configuration file's entry, or the default).
    pub because: String,
}

impl Trust {
    /// An untrusted tree (the default).
    pub fn untrusted() -> Trust {
        Trust { trusted: false, because: "not trusted (the default)".into() }
    }

    /// A tree trusted for this run.
    pub fn flag() -> Trust {
        Trust { trusted: true, because: "trusted by --trust".into() }
    }

    /// The trust of the tree at `root` (canonical): `--trust` when given,
    /// else the user's configuration; a configuration file that cannot be
    /// read trusts nothing, and says so.
    pub fn of(root: &Path, flag: bool) -> Trust {
        if flag {
            return Trust::flag();
        }
        let path = config_path();
        match Config::read(&path) {
            Ok(config) => config.trust(root, &path),
            Err(e) => {
                tracing::warn!(config = %path.display(), error = %format!("{e:#}"), "the configuration cannot be read: no tree is trusted by it");
                Trust::untrusted()
            }
        }
    }

    /// The note for an indexer that was not run on an untrusted tree.
    pub fn not_run(&self, indexer: &str, what: &str, root: &Path) -> String {
        format!(
            "{indexer} was not run: the tree is {}, and {indexer} would run the project's own code or read \
             outside it ({what}); the built-in indexer read these files instead (inferred edges). To run it: \
             --trust, or `signpost trust {}`",
            self.because,
            shell_word(root)
        )
    }
}

fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    shlex::try_quote(&s).map(|q| q.into_owned()).unwrap_or_else(|_| s.into_owned())
}

/// Where the user's configuration lives: `SIGNPOST_CONFIG`, else
/// `$XDG_CONFIG_HOME/signpost/config.toml`, else
/// `~/.config/signpost/config.toml`.
pub fn config_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SIGNPOST_CONFIG").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(std::env::temp_dir)
        .join("signpost")
        .join("config.toml")
}

/// The user's configuration file, edited in place (comments and other
/// tables kept).
pub struct Config {
    doc: toml_edit::DocumentMut,
}

impl Config {
    /// Reads `path` (a missing file is an empty configuration).
    pub fn read(path: &Path) -> anyhow::Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let doc = text.parse::<toml_edit::DocumentMut>().with_context(|| format!("{} is not TOML", path.display()))?;
        Ok(Config { doc })
    }

    /// The trees listed in `[trust] trees`.
    pub fn trees(&self) -> Vec<PathBuf> {
        self.doc
            .get("trust")
            .and_then(|t| t.get("trees"))
            .and_then(|t| t.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).map(PathBuf::from).collect())
            .unwrap_or_default()
    }

    /// Whether `[trust] all = true`.
    pub fn all(&self) -> bool {
        self.doc.get("trust").and_then(|t| t.get("all")).and_then(|v| v.as_bool()).unwrap_or(false)
    }

    /// The languages `[indexer]` says the built-in indexer reads
    /// (`rust = "builtin"`), whatever the tree's trust.
    pub fn builtin_languages(&self) -> Vec<String> {
        let Some(table) = self.doc.get("indexer").and_then(|t| t.as_table_like()) else { return Vec::new() };
        table.iter().filter(|(_, v)| v.as_str() == Some("builtin")).map(|(k, _)| k.to_owned()).collect()
    }

    /// The trust this configuration (at `path`) gives the tree at `root`.
    pub fn trust(&self, root: &Path, path: &Path) -> Trust {
        if self.all() {
            return Trust { trusted: true, because: format!("trusted by `all = true` in {}", path.display()) };
        }
        match self.trees().into_iter().find(|t| root.starts_with(t)) {
            Some(t) => Trust { trusted: true, because: format!("trusted by {} in {}", t.display(), path.display()) },
            None => Trust::untrusted(),
        }
    }

    /// Adds `tree` to `[trust] trees` (false when it was there).
    pub fn add(&mut self, tree: &Path) -> anyhow::Result<bool> {
        let text = tree.to_str().context("a tree whose path is not UTF-8 cannot be listed in the configuration")?;
        let trees = self.trees_mut()?;
        if trees.iter().any(|v| v.as_str() == Some(text)) {
            return Ok(false);
        }
        trees.push(text);
        Ok(true)
    }

    /// Takes `tree` out of `[trust] trees` (false when it was not there).
    pub fn remove(&mut self, tree: &Path) -> anyhow::Result<bool> {
        let text = tree.to_string_lossy();
        let trees = self.trees_mut()?;
        let before = trees.len();
        trees.retain(|v| v.as_str() != Some(&text));
        Ok(trees.len() != before)
    }

    fn trees_mut(&mut self) -> anyhow::Result<&mut toml_edit::Array> {
        let table =
            self.doc.entry("trust").or_insert(toml_edit::table()).as_table_mut().context("`trust` is not a table")?;
        table
            .entry("trees")
            .or_insert(toml_edit::value(toml_edit::Array::new()))
            .as_array_mut()
            .context("`trust.trees` is not an array")
    }

    /// Writes the configuration to `path` (beside it first, then renamed).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let partial = path.with_extension("toml.partial");
        std::fs::write(&partial, self.doc.to_string()).with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
    }
}

/// Which languages the built-in indexer reads whatever their SCIP indexer,
/// and why: `--indexer LANG=builtin` flags, then the configuration's
/// `[indexer]` table.
pub fn builtin_choices(flags: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = flags
        .iter()
        .filter_map(|f| f.strip_suffix("=builtin"))
        .map(|l| (l.to_owned(), format!("--indexer {l}=builtin")))
        .collect();
    let path = config_path();
    if let Ok(config) = Config::read(&path) {
        for l in config.builtin_languages() {
            if !out.iter().any(|(k, _)| *k == l) {
                let why = format!("`{l} = \"builtin\"` in {}", path.display());
                out.push((l, why));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_tree_and_what_is_under_it_are_trusted_and_comments_stay() {
        let text = "# mine\n[other]\nx = 1 # kept\n";
        let mut c = Config { doc: text.parse().unwrap_or_else(|e| panic!("{e}")) };
        let p = Path::new("/c.toml");
        assert!(!c.trust(Path::new("/src/shop"), p).trusted);
        assert!(c.add(Path::new("/src/shop")).unwrap_or_else(|e| panic!("{e}")));
        assert!(!c.add(Path::new("/src/shop")).unwrap_or_else(|e| panic!("{e}")));
        assert!(c.trust(Path::new("/src/shop"), p).trusted);
        assert!(c.trust(Path::new("/src/shop/api"), p).trusted);
        assert!(!c.trust(Path::new("/src/shopping"), p).trusted);
        assert!(!c.trust(Path::new("/src"), p).trusted);
        let written = c.doc.to_string();
        assert!(written.starts_with("# mine\n[other]\nx = 1 # kept\n"), "{written}");
        assert!(c.remove(Path::new("/src/shop")).unwrap_or_else(|e| panic!("{e}")));
        assert!(!c.trust(Path::new("/src/shop"), p).trusted);
        let all = Config { doc: "[trust]\nall = true\n".parse().unwrap_or_else(|e| panic!("{e}")) };
        assert!(all.trust(Path::new("/anything"), p).trusted);
    }
}
