//! Builds the policy components from source for `wasm32-wasip2` with a nested
//! cargo: the default policy (`hints-component/`, embedded in the binary)
//! and the test policies under `tests/policies/` (`chaos`: hostile; `strict`:
//! an alternative policy; `memory`: for the MCP memory server behind
//! `signpost proxy`).
//!
//! The nested builds share one target directory of their own (`guest/` in
//! the outer target directory, beside `debug/` and `release/`), so they never
//! wait on the outer build's lock and build their common dependencies
//! (wit-bindgen and the rest) once for every guest, every feature set and
//! both outer profiles. Each artifact is copied into `OUT_DIR` under the name
//! of the variable that exports its path: `SIGNPOST_DEFAULT_POLICY` (for
//! `include_bytes!` and the tests), `SIGNPOST_CHAOS_POLICY`, and so on.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use sha2::Digest;

const TARGET: &str = "wasm32-wasip2";

fn main() -> anyhow::Result<()> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let root = manifest_dir.parent().context("host/ has a parent")?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed={}", root.join("wit").display());
    // A packaged crate (`cargo package`, `cargo install signpost-mcp`) has
    // no policy sources beside it: it carries the default policy prebuilt.
    if !root.join("hints-component/Cargo.toml").is_file() {
        return prebuilt(&manifest_dir, &out_dir);
    }
    ensure_target()?;

    // (crate dir, features, wasm file name, exported env var)
    let guests = [
        ("hints-component", "", "signpost_hints.wasm", "SIGNPOST_DEFAULT_POLICY"),
        ("tests/policies/chaos", "", "signpost_chaos_policy.wasm", "SIGNPOST_CHAOS_POLICY"),
        ("tests/policies/chaos", "always-garbage", "signpost_chaos_policy.wasm", "SIGNPOST_GARBAGE_POLICY"),
        ("tests/policies/chaos", "always-sleep", "signpost_chaos_policy.wasm", "SIGNPOST_SLEEPY_POLICY"),
        ("tests/policies/chaos", "always-forge", "signpost_chaos_policy.wasm", "SIGNPOST_FORGER_POLICY"),
        ("tests/policies/chaos", "outcome-bugs", "signpost_chaos_policy.wasm", "SIGNPOST_OUTCOME_BUGS_POLICY"),
        ("tests/policies/chaos", "v0_3", "signpost_chaos_policy.wasm", "SIGNPOST_CHAOS_V3_POLICY"),
        ("tests/policies/strict", "", "signpost_strict_policy.wasm", "SIGNPOST_STRICT_POLICY"),
        ("tests/policies/memory", "", "signpost_memory_policy.wasm", "SIGNPOST_MEMORY_POLICY"),
    ];
    let target = guest_target_dir(&out_dir);
    for (dir, features, file, var) in guests {
        let guest = root.join(dir);
        for path in ["src", "Cargo.toml", "Cargo.lock"] {
            println!("cargo:rerun-if-changed={}", guest.join(path).display());
        }
        // The same crate built with other features overwrites its artifact in
        // the shared target dir: each build's is copied out at once.
        let built = build_guest(&guest, &target, features, file)?;
        let wasm = out_dir.join(format!("{var}.wasm"));
        std::fs::copy(&built, &wasm).with_context(|| format!("copying {} to {}", built.display(), wasm.display()))?;
        println!("cargo:rustc-env={var}={}", wasm.display());
        if var == "SIGNPOST_DEFAULT_POLICY" {
            // For `signpost --version`: the digest the policy status reports.
            println!("cargo:rustc-env=SIGNPOST_DEFAULT_POLICY_SHA256={}", sha256_hex(&std::fs::read(&wasm)?));
        }
    }
    cases_index(&root.join("tests/fixtures/scip/rust/index.scip"))?;
    default_cases(&root.join("hints-component/cases"), &out_dir)
}

/// The Rust index the default policy's cases run on, for `include_bytes!`.
fn cases_index(path: &Path) -> anyhow::Result<()> {
    println!("cargo:rerun-if-changed={}", path.display());
    anyhow::ensure!(path.is_file(), "{}: the default policy's cases' index is missing", path.display());
    println!("cargo:rustc-env=SIGNPOST_CASES_RUST_INDEX={}", path.display());
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The packaged crate's build: the default policy from `prebuilt/` (put
/// there by `packaging/crate.sh` from a build of the repository), checked
/// against the digest written beside it, and its golden cases with the
/// index they run on; no test policies (the tests are not packaged).
fn prebuilt(manifest_dir: &Path, out_dir: &Path) -> anyhow::Result<()> {
    let dir = manifest_dir.join("prebuilt");
    println!("cargo:rerun-if-changed={}", dir.display());
    let wasm = dir.join("signpost_hints.wasm");
    let bytes = std::fs::read(&wasm).with_context(|| {
        format!(
            "{}: neither the policy's sources (../hints-component) nor the prebuilt policy are here",
            wasm.display()
        )
    })?;
    let want = std::fs::read_to_string(dir.join("signpost_hints.wasm.sha256"))?;
    let got = sha256_hex(&bytes);
    if got != want.trim() {
        bail!("{}: sha256 {got}, not the {} written beside it", wasm.display(), want.trim());
    }
    let out = out_dir.join("SIGNPOST_DEFAULT_POLICY.wasm");
    std::fs::write(&out, &bytes)?;
    println!("cargo:rustc-env=SIGNPOST_DEFAULT_POLICY={}", out.display());
    println!("cargo:rustc-env=SIGNPOST_DEFAULT_POLICY_SHA256={got}");
    cases_index(&dir.join("cases-rust-index.scip"))?;
    default_cases(&dir.join("cases"), out_dir)
}

/// The guests' target directory: `guest/` in the outer target directory
/// (`OUT_DIR` is `<target>/<profile>/build/<pkg>-<hash>/out`, one level
/// deeper under `--target`), found by its `CACHEDIR.TAG`; `OUT_DIR` itself
/// when the layout is not the one expected.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .skip(4)
        .take(2)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map_or_else(|| out_dir.join("guest-target"), |dir| dir.join("guest"))
}

/// `default_cases.rs` in `OUT_DIR`: the default policy's golden cases
/// (`hints-component/cases/*.json`), embedded for `signpost policy
/// export-default --cases DIR`, as `(file name, text)` in name order.
fn default_cases(dir: &Path, out_dir: &Path) -> anyhow::Result<()> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut code = String::from(
        "/// The default policy's golden cases: (file name, text).\npub const DEFAULT_CASES: &[(&str, &str)] = &[\n",
    );
    for file in &files {
        let name = file.file_name().context("a case file has a name")?.to_string_lossy();
        code.push_str(&format!("    ({name:?}, include_str!({:?})),\n", file.display().to_string()));
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("default_cases.rs"), code)?;
    Ok(())
}

/// Installs the wasm32-wasip2 standard library through rustup when missing.
fn ensure_target() -> anyhow::Result<()> {
    let sysroot = Command::new(rustc()).args(["--print", "sysroot"]).output()?;
    let sysroot = PathBuf::from(String::from_utf8(sysroot.stdout)?.trim());
    if sysroot.join("lib/rustlib").join(TARGET).exists() {
        return Ok(());
    }
    println!("cargo:warning=installing the {TARGET} target with rustup (one time)");
    let status = Command::new("rustup").args(["target", "add", TARGET]).status();
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => bail!(
            "`rustup target add {TARGET}` failed ({s}). Signpost's default policy is a \
             WebAssembly component and needs this target: run that command by hand and \
             read its error (network? a toolchain not managed by rustup?)"
        ),
        Err(e) => bail!(
            "the {TARGET} target is missing and rustup could not be run ({e}). Install it with \
             your toolchain manager (e.g. `rustup target add {TARGET}`)"
        ),
    }
}

fn build_guest(guest: &Path, target_dir: &Path, features: &str, file: &str) -> anyhow::Result<PathBuf> {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(guest)
        .args(["build", "--release", "--locked", "--target", TARGET])
        .env("CARGO_TARGET_DIR", target_dir);
    if !features.is_empty() {
        cmd.args(["--features", features]);
    }
    // Settings of the outer (host) build must not leak into the guest build.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_ENCODED_RUSTFLAGS")
            || key == "RUSTFLAGS"
            || key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_PROFILE_")
            || key.starts_with("CARGO_BUILD_")
            || key == "RUSTC_WORKSPACE_WRAPPER"
            || key == "CARGO_MAKEFLAGS"
        {
            cmd.env_remove(&key);
        }
    }
    let status = cmd.status().context("running cargo for the policy component")?;
    if !status.success() {
        bail!("building {} for {TARGET} failed ({status}); see the cargo output above", guest.display());
    }
    let wasm = target_dir.join(TARGET).join("release").join(file);
    if !wasm.exists() {
        bail!("the guest build succeeded but {} is missing", wasm.display());
    }
    Ok(wasm)
}

fn rustc() -> String {
    env::var("RUSTC").unwrap_or_else(|_| "rustc".into())
}
