//! `signpost policy new DIR --lang …`: a buildable policy project on the
//! current contract, and `policy export-default --cases DIR`: the default
//! policy's golden cases.
//!
//! A new project holds the WIT beside the code (`wit/policy.wit`, the
//! package this binary serves as its newest), a build script that writes
//! `policy.wasm`, three golden cases the template passes, and a README of
//! five lines. The templates live in `host/templates/`; `{{name}}` in them
//! is the policy's name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use signpost::policy::Interface;

/// A template file: (path in the project, text, executable).
type File = (&'static str, &'static str, bool);

/// The language a new policy is written in.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum Lang {
    /// Rust, built with cargo for `wasm32-wasip2` (wit-bindgen).
    Rust,
    /// Python, built with componentize-py (bundles CPython: ~18 MB).
    Python,
    /// JavaScript, built with componentize-js (bundles SpiderMonkey).
    Js,
}

impl Lang {
    fn files(self) -> &'static [File] {
        match self {
            Lang::Rust => &[
                ("Cargo.toml", include_str!("../../../templates/rust/Cargo.toml.in"), false),
                ("Cargo.lock", include_str!("../../../templates/rust/Cargo.lock.in"), false),
                ("src/lib.rs", include_str!("../../../templates/rust/src/lib.rs"), false),
                ("build.sh", include_str!("../../../templates/rust/build.sh"), true),
                ("README.md", include_str!("../../../templates/rust/README.md"), false),
                (".gitignore", "/target\n/policy.wasm\n", false),
            ],
            Lang::Python => &[
                ("policy.py", include_str!("../../../templates/python/policy.py"), false),
                ("build.sh", include_str!("../../../templates/python/build.sh"), true),
                ("README.md", include_str!("../../../templates/python/README.md"), false),
                (".gitignore", "__pycache__/\n/policy.wasm\n", false),
            ],
            Lang::Js => &[
                ("policy.js", include_str!("../../../templates/js/policy.js"), false),
                ("build.mjs", include_str!("../../../templates/js/build.mjs"), false),
                ("package.json", include_str!("../../../templates/js/package.json"), false),
                ("build.sh", include_str!("../../../templates/js/build.sh"), true),
                ("README.md", include_str!("../../../templates/js/README.md"), false),
                (".gitignore", "node_modules/\n/policy.wasm\n", false),
            ],
        }
    }
}

/// The golden cases every template passes on the sample graph.
const CASES: &[File] = &[
    (
        "cases/01-resolve-then-describe.json",
        include_str!("../../../templates/cases/01-resolve-then-describe.json"),
        false,
    ),
    (
        "cases/02-search-then-describe.json",
        include_str!("../../../templates/cases/02-search-then-describe.json"),
        false,
    ),
    (
        "cases/03-error-example-is-the-next-call.json",
        include_str!("../../../templates/cases/03-error-example-is-the-next-call.json"),
        false,
    ),
];

/// A policy's name from what the user gave: lowercase letters, digits and
/// `-`, starting with a letter.
fn policy_name(given: &str) -> anyhow::Result<String> {
    let mut name = String::new();
    for c in given.trim().chars() {
        match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => name.push(c),
            _ if !name.is_empty() && !name.ends_with('-') => name.push('-'),
            _ => {}
        }
    }
    let name = name.trim_end_matches('-').to_owned();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) || name.len() > 64 {
        bail!(
            "`{given}` makes no policy name: give --name with letters, digits and `-` (starting with a letter, \
             at most 64)"
        );
    }
    Ok(name)
}

/// Writes a new policy project into `dir` (which must not exist, or be
/// empty): nothing already there is ever overwritten.
pub(super) fn new_policy(dir: &Path, lang: Lang, name: Option<&str>) -> anyhow::Result<ExitCode> {
    let given = match name {
        Some(name) => name.to_owned(),
        None => dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let name = policy_name(&given)?;
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!("{} is not empty: give a new directory (nothing is overwritten)", dir.display());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    }
    let wit = signpost::policy::wit_of(Interface::V0_3);
    let files = lang.files().iter().chain(CASES).copied().chain([("wit/policy.wit", wit, false)]);
    let mut written = Vec::new();
    for (path, text, executable) in files {
        let file = dir.join(path);
        write_new(&file, &text.replace("{{name}}", &name), executable)?;
        written.push(file);
    }
    outln!("policy {name} ({lang:?}, signpost:policy@{}) in {}:", Interface::V0_3.version(), dir.display());
    for file in &written {
        outln!("  {}", file.strip_prefix(dir).unwrap_or(file).display());
    }
    let shown = dir.display();
    outln!("next:\n  {shown}/build.sh\n  signpost policy check {shown}/policy.wasm --cases {shown}/cases");
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to a file that must not exist yet.
fn write_new(file: &Path, text: &str, executable: bool) -> anyhow::Result<()> {
    use std::io::Write;
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, if executable { 0o755 } else { 0o644 });
    let mut out = options.open(file).with_context(|| format!("creating {}", file.display()))?;
    out.write_all(text.as_bytes()).with_context(|| format!("writing {}", file.display()))
}

/// Writes the default policy's golden cases into `dir`, with the Rust index
/// four of them run on beside them (their `graph` pointed at it): they pass
/// as written, wherever `dir` is.
pub(super) fn export_default_cases(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    const INDEX: &str = "rust-index.scip";
    let mut written = Vec::new();
    for (name, text) in signpost::DEFAULT_CASES {
        let mut case: serde_json::Value =
            serde_json::from_str(text).with_context(|| format!("the embedded case {name}"))?;
        if case.get("graph").is_some() {
            case["graph"] = INDEX.into();
        }
        let file = dir.join(name);
        write_new(&file, &format!("{case:#}\n"), false)?;
        written.push(file);
    }
    let index = dir.join(INDEX);
    std::fs::write(&index, signpost::DEFAULT_CASES_RUST_INDEX)
        .with_context(|| format!("writing {}", index.display()))?;
    written.push(index);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_of_what_was_given() {
        assert_eq!(policy_name("My Policy").unwrap(), "my-policy");
        assert_eq!(policy_name("  tour_2 ").unwrap(), "tour-2");
        assert!(policy_name("2fast").is_err());
        assert!(policy_name("../..").is_err());
        assert!(policy_name("").is_err());
    }
}
