//! `signpost index`: find which languages a project uses, run each one's
//! SCIP indexer, and check that what it wrote loads.
//!
//! | marker files | indexer | installed with |
//! |---|---|---|
//! | `Cargo.toml` | `rust-analyzer scip` | `rustup component add rust-analyzer rust-src` |
//! | `package.json`, `tsconfig.json` | `scip-typescript index` | npm, into signpost's tools directory |
//! | `pyproject.toml`, `setup.py`, `requirements.txt` | `scip-python index` | npm, into signpost's tools directory |

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// scip-typescript release installed when none is found.
pub const SCIP_TYPESCRIPT: &str = "@sourcegraph/scip-typescript@0.4.0";
/// scip-python release installed when none is found.
pub const SCIP_PYTHON: &str = "@sourcegraph/scip-python@0.6.6";

/// A language signpost can index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Cargo projects.
    Rust,
    /// TypeScript and JavaScript.
    TypeScript,
    /// Python.
    Python,
}

impl Language {
    /// Lower-case name, used in file names (`index.rust.scip`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Python => "python",
        }
    }

    /// The program that indexes it.
    pub fn program(self) -> &'static str {
        match self {
            Language::Rust => "rust-analyzer",
            Language::TypeScript => "scip-typescript",
            Language::Python => "scip-python",
        }
    }

    /// What its indexer runs or reads of the tree it indexes: why it does
    /// not run on a tree that is not trusted (docs/security.md).
    pub fn reaches(self) -> &'static str {
        match self {
            Language::Rust => {
                "it runs `cargo metadata` and `cargo check`: build scripts, proc macros, and the `rustc`, wrappers, \
                 runners and `[env]` a `.cargo/config.toml` names; the rustup launcher honours a \
                 `rust-toolchain.toml`"
            }
            Language::TypeScript => {
                "it reads whatever a `tsconfig.json` `extends`, `include`s or references, outside the tree too"
            }
            Language::Python => {
                "it runs the interpreter of the virtual environment a `pyrightconfig.json` names, and reads the \
                 `extraPaths` it lists, outside the tree too"
            }
        }
    }

    fn markers(self) -> &'static [&'static str] {
        match self {
            Language::Rust => &["Cargo.toml"],
            Language::TypeScript => &["tsconfig.json", "package.json"],
            Language::Python => &["pyproject.toml", "setup.py", "requirements.txt"],
        }
    }
}

/// Every language with a SCIP indexer here.
pub const LANGUAGES: [Language; 3] = [Language::Rust, Language::TypeScript, Language::Python];

/// The languages `dir` holds, by their marker files at its top.
pub fn detect(dir: &Path) -> Vec<Language> {
    LANGUAGES.into_iter().filter(|l| l.markers().iter().any(|m| dir.join(m).is_file())).collect()
}

/// Every marker file name, of every language.
pub fn markers() -> Vec<&'static str> {
    LANGUAGES.iter().flat_map(|l| l.markers().iter().copied()).collect()
}

/// The projects under a directory from its marker files (`(file name,
/// directory)`, as a walk found them): per language, each directory with
/// one of its markers, except one inside another project of the same
/// language (a Cargo workspace's members, a package's sub-packages: the
/// outer project's indexer covers them). Sorted by directory.
pub fn projects(marked: &[(String, PathBuf)]) -> Vec<(Language, PathBuf)> {
    let mut out = Vec::new();
    for lang in LANGUAGES {
        let mut dirs: Vec<&PathBuf> =
            marked.iter().filter(|(name, _)| lang.markers().contains(&name.as_str())).map(|(_, d)| d).collect();
        dirs.sort();
        dirs.dedup();
        let mut kept: Vec<&PathBuf> = Vec::new();
        for d in dirs {
            if !kept.iter().any(|k| d.starts_with(k)) {
                kept.push(d);
            }
        }
        out.extend(kept.into_iter().map(|d| (lang, d.clone())));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.name().cmp(b.0.name())));
    out
}

/// Where a new version of the index file `path` is written before it is
/// renamed into place: a name of its own per writer, as two servers of
/// one project (two agents) share its cache.
pub fn partial_of(path: &Path) -> PathBuf {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    path.with_extension(format!("scip.{}-{n}.partial", std::process::id()))
}

/// Removes from `dir` the partial files ([`partial_of`]) of writes that
/// will never finish: a server killed while saving leaves its partial file,
/// and each large one is a copy of a saved index (a 3.3M-line tree's: tens
/// of megabytes each). One is left over when the process that wrote it has
/// exited (where `/proc` tells) or, where it cannot be told, when it was
/// last written an hour ago or more; a live server's writes are kept.
/// Returns how many files and bytes were removed.
pub fn sweep_partials(dir: &Path) -> (usize, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    let proc_tells = Path::new("/proc/self").exists();
    let mut removed = (0, 0);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(writer_of) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let left = if pid == std::process::id() {
            false
        } else if proc_tells {
            !Path::new("/proc").join(pid.to_string()).exists()
        } else {
            meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age >= Duration::from_secs(3600))
        };
        if left && meta.is_file() && std::fs::remove_file(entry.path()).is_ok() {
            removed.0 += 1;
            removed.1 += meta.len();
        }
    }
    removed
}

/// The process that writes the partial file `name` (`….scip.PID-N.partial`).
fn writer_of(name: &str) -> Option<u32> {
    let (_, tail) = name.strip_suffix(".partial")?.rsplit_once(".scip.")?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Rewrites the SCIP index at `path` for a workspace rooted above the
/// project that was indexed: each document's path gets `prefix` (the
/// project's directory under the workspace root, `/`-separated; empty for
/// none), the root becomes `root`, and documents `keep` refuses (given the
/// prefixed path) are dropped. So are documents outside the root, whatever
/// the indexer was told by a configuration file in the tree (a
/// `tsconfig.json` that `extends` or `include`s files elsewhere): an
/// absolute path, a `..` that climbs out, a symlink on the way
/// ([`crate::tree::is_inside`]); they are counted and logged. Returns how
/// many documents were dropped in all.
pub fn tidy(path: &Path, prefix: &str, root: &Path, keep: &dyn Fn(&str) -> bool) -> anyhow::Result<usize> {
    use protobuf::Message;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut index = scip::types::Index::parse_from_bytes(&bytes)
        .map_err(|e| crate::scip::ScipError::Protobuf(e.to_string()))
        .with_context(|| format!("reading {}", path.display()))?;
    drop(bytes);
    let prefix = prefix.trim_matches('/');
    let before = index.documents.len();
    for d in &mut index.documents {
        if !prefix.is_empty() {
            d.relative_path = format!("{prefix}/{}", d.relative_path);
        }
    }
    index.documents.retain(|d| crate::tree::is_inside(root, &d.relative_path));
    let outside = before - index.documents.len();
    if outside > 0 {
        tracing::warn!(
            documents = outside,
            root = %root.display(),
            "the indexer read files outside the project root (a configuration file in the tree named them): left out"
        );
    }
    index.documents.retain(|d| keep(&d.relative_path));
    let dropped = before - index.documents.len();
    if let Some(m) = index.metadata.as_mut() {
        m.project_root = format!("file://{}", root.to_string_lossy().trim_end_matches('/'));
    }
    if dropped > 0 || !prefix.is_empty() {
        std::fs::write(path, index.write_to_bytes()?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(dropped)
}

/// Where signpost installs indexers it needs: `$XDG_CACHE_HOME/signpost/tools`
/// or `~/.cache/signpost/tools` (`SIGNPOST_TOOLS_DIR` overrides).
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SIGNPOST_TOOLS_DIR") {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("signpost").join("tools")
}

/// The program called `program` on PATH, if any.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

/// Runs `cmd` with no input; its failure carries the last lines it wrote,
/// on whichever stream it wrote them (scip-typescript prints its errors on
/// stdout).
pub fn run_quiet(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let out = cmd.stdin(Stdio::null()).output().with_context(|| format!("running {what}"))?;
    if !out.status.success() {
        let (err, outs) = (String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        let mut why = tail(err.trim_end(), 20);
        if !outs.trim().is_empty() {
            if !why.is_empty() {
                why.push('\n');
            }
            why.push_str(&tail(outs.trim_end(), 20));
        }
        if why.trim().is_empty() {
            why = "(it wrote nothing on stdout or stderr)".into();
        }
        bail!("{what} failed ({}):\n{why}", out.status);
    }
    Ok(())
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// rust-analyzer, installed with rustup when missing (with rust-src, which
/// it needs to resolve the standard library).
fn rust_analyzer() -> anyhow::Result<PathBuf> {
    let works = |p: &Path| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success());
    if let Some(p) = on_path("rust-analyzer").filter(|p| works(p)) {
        return Ok(p);
    }
    let added = run_quiet(
        Command::new("rustup").args(["component", "add", "rust-analyzer", "rust-src"]),
        "rustup component add",
    );
    // rustup refuses ("detected conflict") while another process installs
    // the same component: what counts is that it runs, once that install
    // is done (up to three minutes).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let out = Command::new("rustup").args(["which", "rust-analyzer"]).output()?;
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && works(&path) {
            if added.is_ok() {
                eprintln!("installed rust-analyzer (rustup component add rust-analyzer rust-src)");
            }
            return Ok(path);
        }
        if added.is_ok() || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    added.context("rust-analyzer is missing; install it with `rustup component add rust-analyzer rust-src`")?;
    bail!("rust-analyzer is still not runnable after `rustup component add rust-analyzer`")
}

/// An npm-distributed indexer: on PATH, in signpost's tools directory, or
/// installed there with npm.
///
/// Each package has a prefix of its own (`TOOLS/<package>@<version>/`), so
/// installing one never rearranges another's `node_modules` under an
/// indexer that runs from it; and installs take a lock file beside it
/// (another process installing the same package is waited for, then its
/// install is used), so servers and `signpost index` runs started together
/// on a machine's first use do not run npm over each other.
fn npm_tool(bin: &str, package: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = on_path(bin) {
        return Ok(p);
    }
    let tools = tools_dir();
    let dir = tools.join(package.trim_start_matches('@').replace('/', "+"));
    let local = dir.join("node_modules").join(".bin").join(bin);
    if local.is_file() {
        return Ok(local);
    }
    if on_path("npm").is_none() {
        bail!("{bin} is missing and npm is not installed; install Node.js, then run `npm install -g {package}`");
    }
    std::fs::create_dir_all(&tools).with_context(|| format!("creating {}", tools.display()))?;
    let lock_path = tools.join(format!(".{}.lock", package.trim_start_matches('@').replace('/', "+")));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        eprintln!("waiting for another process installing {package} into {}", dir.display());
        lock.lock().with_context(|| format!("locking {}", lock_path.display()))?;
    }
    if local.is_file() {
        return Ok(local);
    }
    eprintln!("installing {package} into {}", dir.display());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    run_quiet(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&dir)
            .arg(package),
        &format!("npm install {package}"),
    )
    .with_context(|| format!("{bin} is missing; install it with `npm install -g {package}`"))?;
    drop(lock);
    if !local.is_file() {
        bail!("npm installed {package} but {} is not there", local.display());
    }
    Ok(local)
}

/// How to index.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rust: every cargo feature on (rust-analyzer's `cargo.features = "all"`).
    pub all_features: bool,
}

/// Signpost's own directory for what an indexer run writes besides its
/// index (cargo's build outputs, a configuration file), one per project:
/// never the project's tree.
fn scratch_of(dir: &Path) -> PathBuf {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let hash: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    tools_dir().with_file_name("scratch").join(hash)
}

/// Runs the indexer of `lang` on `dir`, writing `out` (absolute). Whatever
/// else it writes (cargo's `target/`) goes into Signpost's cache, not the
/// project. Only on a trusted tree: it runs the project's code
/// ([`Language::reaches`]).
pub fn index(lang: Language, dir: &Path, out: &Path, opts: &Options) -> anyhow::Result<()> {
    let scratch = scratch_of(dir);
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let config = scratch.join(format!("rust-analyzer.{}.json", std::process::id()));
    let mut cmd = match lang {
        Language::Rust => {
            let mut c = Command::new(rust_analyzer()?);
            c.arg("scip").arg(dir).arg("--output").arg(out);
            // `cargo check` writes build outputs: into the cache, not the tree.
            c.env("CARGO_TARGET_DIR", scratch.join("target"));
            if opts.all_features {
                std::fs::write(&config, r#"{"cargo":{"features":"all"}}"#)
                    .with_context(|| format!("writing {}", config.display()))?;
                c.arg("--config-path").arg(&config);
            }
            c
        }
        Language::TypeScript => {
            let program = npm_tool("scip-typescript", SCIP_TYPESCRIPT)?;
            let typescript = |project: Option<&Path>| {
                let mut c = Command::new(&program);
                c.args(["index", "--no-progress-bar", "--cwd"]).arg(dir).arg("--output").arg(out);
                c.args(project);
                c.current_dir(dir);
                c
            };
            // Without a tsconfig.json, or with one that cannot be used (it
            // extends a package that is not installed, say), a standalone
            // one Signpost writes in its cache: `--infer-tsconfig` would
            // write one into the project.
            let standalone = scratch.join("tsconfig.json");
            let write_standalone = || {
                std::fs::write(&standalone, standalone_tsconfig(dir))
                    .with_context(|| format!("writing {}", standalone.display()))
            };
            let what = "typescript indexer";
            let label = format!("indexing {} with the {what}", dir.display());
            let result = if tree_file(dir, "tsconfig.json") {
                with_progress(&label, || run_quiet(&mut typescript(None), what)).or_else(|own| {
                    write_standalone()?;
                    with_progress(&label, || run_quiet(&mut typescript(Some(&standalone)), what)).map_err(|e| {
                        e.context(format!(
                            "retried with a standalone configuration, as the project's tsconfig.json could not be used \
                             ({})",
                            first_line(&own)
                        ))
                    })?;
                    tracing::info!(
                        dir = %dir.display(),
                        why = first_line(&own),
                        "the project's tsconfig.json could not be used: indexed with a standalone configuration"
                    );
                    Ok(())
                })
            } else {
                write_standalone()?;
                with_progress(&label, || run_quiet(&mut typescript(Some(&standalone)), what))
            };
            let _ = std::fs::remove_file(&standalone);
            return result;
        }
        Language::Python => {
            let name = python_project_name(dir, dir)
                .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "project".into());
            let mut c = Command::new(npm_tool("scip-python", SCIP_PYTHON)?);
            // The version only appears inside symbol strings, and signpost's
            // ids leave it out; a fixed one keeps the index reproducible.
            c.args(["index", "--quiet", "--project-name", &name, "--project-version", "0", "--output"]).arg(out);
            c
        }
    };
    cmd.current_dir(dir);
    let what = format!("{} indexer", lang.name());
    let result = with_progress(&format!("indexing {} with the {what}", dir.display()), || run_quiet(&mut cmd, &what));
    let _ = std::fs::remove_file(&config);
    result
}

/// Whether `name` is a regular file directly in `dir` (no link followed).
fn tree_file(dir: &Path, name: &str) -> bool {
    crate::tree::is_file(dir, &dir.join(name))
}

/// An error's first line.
fn first_line(e: &anyhow::Error) -> String {
    format!("{e:#}").lines().take(2).collect::<Vec<_>>().join(" ")
}

/// A tsconfig for the project at `dir` that names nothing outside it: its
/// TypeScript and JavaScript files, with build outputs and dependencies
/// left out.
fn standalone_tsconfig(dir: &Path) -> String {
    let root = dir.to_string_lossy().trim_end_matches('/').to_owned();
    let at = |p: &str| serde_json::Value::String(format!("{root}/{p}"));
    let config = serde_json::json!({
        "compilerOptions": {"allowJs": true, "checkJs": false, "noEmit": true, "skipLibCheck": true, "types": []},
        "include": [at("**/*")],
        "exclude": [at("**/node_modules"), at("**/dist"), at("**/build"), at("**/out"), at("**/.*")],
    });
    config.to_string()
}

/// The distribution name from `pyproject.toml`'s `[project]` table: what
/// other projects know the package by, so ids do not depend on the
/// directory a checkout happens to be in. Signpost gives it to scip-python
/// as the package name of its symbols (and the built-in indexer spells
/// Python symbols alike). Read as a file of the tree at `root`
/// ([`crate::tree`]).
pub fn python_project_name(root: &Path, dir: &Path) -> Option<String> {
    let text = crate::tree::read_text(root, &dir.join("pyproject.toml"))?;
    let mut in_project = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_project = line == "[project]";
        } else if in_project
            && let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('='))
        {
            let name = value.trim().trim_matches(['"', '\'']);
            return (!name.is_empty()).then(|| name.to_owned());
        }
    }
    None
}

/// Runs `work` with a spinner on stderr (when it is a terminal) that shows
/// after a second.
pub fn with_progress<T>(message: &str, work: impl FnOnce() -> T) -> T {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    bar.set_message(message.to_owned());
    let shown = bar.clone();
    let started = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let ticker = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(1)).is_err() {
            shown.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            shown.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_millis(120)) {
                shown.tick();
            }
        }
    });
    let result = work();
    let _ = tx.send(());
    let _ = ticker.join();
    bar.finish_and_clear();
    if started.elapsed() > Duration::from_secs(1) {
        eprintln!("{message}: {:.1} s", started.elapsed().as_secs_f64());
    }
    result
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn each_write_of_an_index_has_a_partial_file_of_its_own() {
        // Two servers of one project share its cache: a fixed name made one
        // rename the other's file away.
        let path = Path::new("/cache/signpost/projects/shop/index.go.tree-sitter.scip");
        let (a, b) = (super::partial_of(path), super::partial_of(path));
        assert_ne!(a, b);
        assert!(a.to_string_lossy().contains(&format!(".{}-", std::process::id())), "{}", a.display());
        assert_eq!(a.parent(), path.parent());
    }

    /// A server killed while saving leaves its partial file; the next one
    /// removes it, not a live writer's, nor anything else.
    #[test]
    fn the_partial_files_of_writers_that_exited_are_swept() {
        let dir = std::env::temp_dir().join(format!("signpost-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let saved = dir.join("saved.java");
        let mine = super::partial_of(&saved);
        // A process that has exited: a child waited for.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let theirs = dir.join(format!("whole.scip.{gone}-3.partial"));
        let kept = [
            saved.clone(),
            mine.clone(),
            dir.join("notes.partial"),
            dir.join(format!("whole.scip.{gone}-x.partial")),
            dir.join("index.toml.partial"),
        ];
        for f in kept.iter().chain([&theirs]) {
            std::fs::write(f, b"0123456789").unwrap();
        }
        assert_eq!(super::sweep_partials(&dir), (1, 10));
        assert!(!theirs.exists());
        for f in &kept {
            assert!(f.exists(), "{} was removed", f.display());
        }
        assert_eq!(super::sweep_partials(&dir.join("absent")), (0, 0));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(super::writer_of("saved.scip.526-17.partial"), Some(526));
        assert_eq!(super::writer_of("a.b.scip.7-0.partial"), Some(7));
        assert_eq!(super::writer_of("saved.526-17.partial"), None);
    }
}
