//! The files of a project, the way git sees them: `.gitignore`d, hidden,
//! build-output and vendored files are left out, and so are copies of
//! source read elsewhere (a minified bundle, a `.d.ts` beside its `.ts`),
//! each for a reason the caller can report. Generated code checked in
//! beside the source (`*.pb.go`, T4's `*.g.cs`, a `Code generated … DO NOT
//! EDIT.` header) is read: it is the only definition of what it defines,
//! and the code written by hand calls it. [`generated_name`] tells it apart
//! by its name, for `describe`'s mark.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use signpost_graph::tree;

use crate::ignores::Ignores;
use crate::languages::{self, Lang};

/// Directories of build outputs, dependencies and tool state, never source.
pub const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "build",
    "dist",
    "out",
    "vendor",
    "bin",
    "obj",
    "__pycache__",
    ".venv",
    "venv",
    ".gradle",
    ".mvn",
    "third_party",
    "bazel-out",
    "bazel-bin",
    // Swift: CocoaPods, Carthage and Xcode's build products.
    "Pods",
    "Carthage",
    "DerivedData",
];

/// How to walk.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Also read build outputs, vendored code and copies of source.
    pub include_generated: bool,
}

/// A walk of `root` as git sees it (`.gitignore`, `.ignore`, hidden files;
/// symlinks not followed), without build-output and dependency
/// directories unless `include_generated`. Ignore files are read by
/// [`Ignores`] (every pattern applies, however many; nothing outside the
/// root is read), not by the `ignore` crate's walker.
fn walker(root: &Path, include_generated: bool) -> (ignore::Walk, Arc<Ignores>) {
    let rules = Arc::new(Ignores::new(root));
    let keep = rules.clone();
    let root_dir = root.to_path_buf();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(true)
        .parents(false)
        .ignore(false)
        .git_ignore(false)
        .git_global(false)
        .git_exclude(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if e.depth() == 0 {
                return true;
            }
            if !include_generated && is_dir && SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()) {
                let rel = e.path().strip_prefix(&root_dir).unwrap_or(e.path()).to_string_lossy().replace('\\', "/");
                if in_skipped_dir(&rel) {
                    return false;
                }
            }
            !keep.ignored(e.path(), is_dir)
        })
        .build();
    (walk, rules)
}

/// The source files under `root`, per language, sorted; plus a note per
/// path that could not be read.
pub fn sources(root: &Path, opts: &WalkOptions) -> (Vec<(&'static Lang, Vec<PathBuf>)>, Vec<String>) {
    let walked = project(root, opts, &[]);
    (walked.sources, walked.notes)
}

/// What one walk of a project finds.
#[derive(Debug, Default)]
pub struct Walked {
    /// The source files, per language, sorted.
    pub sources: Vec<(&'static Lang, Vec<PathBuf>)>,
    /// A note per path that could not be read.
    pub notes: Vec<String>,
    /// The files named one of the marker names asked for: (name, its
    /// directory), sorted. Project roots by their marker files.
    pub marked: Vec<(String, PathBuf)>,
}

/// [`sources`], and the marker files named one of `markers` the same walk
/// meets (a tree of a hundred thousand files takes seconds to walk).
pub fn project(root: &Path, opts: &WalkOptions, markers: &[&str]) -> Walked {
    let mut by_lang: Vec<(&'static Lang, Vec<PathBuf>)> = Vec::new();
    let mut notes = Vec::new();
    let mut found = Vec::new();
    let include = opts.include_generated;
    let (walk, rules) = walker(root, include);
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                notes.push(format!("skipped: {e}"));
                continue;
            }
        };
        let Some(kind) = entry.file_type() else { continue };
        if !kind.is_file() {
            // A source's name on a link, a FIFO, a socket or a device: not
            // read (a link could lead out of the tree, a FIFO would block),
            // and named.
            if !kind.is_dir() && languages::of_path(entry.path()).is_some() {
                let rel = tree::spell(entry.path().strip_prefix(root).unwrap_or(entry.path()));
                let what =
                    if kind.is_symlink() { "a symbolic link (links are not followed)" } else { "not a regular file" };
                notes.push(format!("{rel}: {what}; skipped"));
            }
            continue;
        }
        if let Some(name) = entry.file_name().to_str().filter(|n| markers.contains(n))
            && let Some(dir) = entry.path().parent()
        {
            found.push((name.to_owned(), dir.to_path_buf()));
        }
        let path = entry.into_path();
        let Some(lang) = languages::of_path(&path) else { continue };
        if !include && is_copy(root, &path) {
            continue;
        }
        match by_lang.iter_mut().find(|(l, _)| std::ptr::eq(*l, lang)) {
            Some((_, v)) => v.push(path),
            None => by_lang.push((lang, vec![path])),
        }
    }
    for (_, v) in &mut by_lang {
        v.sort();
    }
    notes.extend(rules.notes());
    found.sort();
    Walked { sources: by_lang, notes, marked: found }
}

/// Whether a file's name says its generator wrote it (`*.pb.go`,
/// `*_pb2.py`, `*.g.cs`, `*.designer.cs`, `*_generated.go`,
/// `zz_generated.*.go`).
pub fn generated_name(name: &str) -> bool {
    [".pb.go", "_pb2.py", "_pb2_grpc.py", ".g.cs", ".designer.cs", "_generated.go"].iter().any(|s| name.ends_with(s))
        || name.starts_with("zz_generated.")
}

/// Whether a file is a copy of source read elsewhere, told by its name (no
/// file is opened; a `.d.ts` is looked up beside): a minified bundle, or a
/// `.d.ts` beside the `.ts` it was made from. Left out: its definitions
/// would stand twice.
pub fn is_copy(root: &Path, path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if name.ends_with(".min.js") {
        return true;
    }
    if let Some(stem) = name.strip_suffix(".d.ts") {
        return ["ts", "tsx"].iter().any(|e| tree::is_file(root, &path.with_file_name(format!("{stem}.{e}"))));
    }
    false
}

/// Whether the file at `rel` (relative to `root`) is left out by default:
/// under a build-output, dependency or hidden directory, or a copy of
/// source read elsewhere. (Applied to what other indexers wrote, where the
/// walk did not choose.)
pub fn excluded(root: &Path, rel: &str) -> bool {
    let dir = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
    in_skipped_dir(dir) || is_copy(root, &root.join(rel))
}

/// Whether `rel` (relative to the root, `/`-separated) is, or lies in, a
/// build-output, dependency or hidden directory.
pub fn in_skipped_dir(rel: &str) -> bool {
    // Inside a JVM source tree (`src/main/java/…`), a directory is a
    // package: `com/example/build` is source, not a build output.
    let mut package = false;
    for d in rel.split('/') {
        if (SKIPPED_DIRS.contains(&d) && !package) || (d.starts_with('.') && d != "." && d != "..") {
            return true;
        }
        package |= matches!(d, "java" | "kotlin" | "scala" | "groovy");
    }
    false
}

/// The directories the walk of `root` goes into, `root` first (what a
/// watcher of its sources watches): no build-output, dependency, hidden or
/// ignored directory, and no symlink followed.
pub fn directories(root: &Path) -> Vec<PathBuf> {
    walker(root, false)
        .0
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(|e| e.into_path())
        .collect()
}

/// The name a directory's `package.json` gives its package (`.` when it
/// gives none, as scip-typescript writes an unnamed package).
pub fn npm_package(root: &Path, dir: &Path) -> Option<String> {
    let text = tree::read_text(root, &dir.join("package.json"))?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(json.get("name").and_then(|n| n.as_str()).filter(|n| !n.trim().is_empty()).unwrap_or(".").to_owned())
}

/// The package name a directory's `Cargo.toml` gives in its `[package]`
/// table (none for a workspace's virtual manifest).
pub fn cargo_package(root: &Path, dir: &Path) -> Option<String> {
    let text = tree::read_text(root, &dir.join("Cargo.toml"))?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('='))
        {
            let name = value.trim().trim_matches(['"', '\'']);
            return (!name.is_empty()).then(|| name.to_owned());
        }
    }
    None
}

/// The module path a directory's `go.mod` declares.
pub fn go_module(root: &Path, dir: &Path) -> Option<String> {
    let text = tree::read_text(root, &dir.join("go.mod"))?;
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with(char::is_whitespace)).then(|| m.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One walk finds the sources and the marker files, under the same
    /// ignore rules (a build output's and an ignored directory's left out),
    /// and the sources [`sources`] finds.
    #[test]
    fn one_walk_finds_the_sources_and_the_markers() {
        let root = std::env::temp_dir().join(format!("signpost-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
        };
        write(".gitignore", "ignored/\n");
        write("Cargo.toml", "[package]\n");
        write("src/main.rs", "fn main() {}\n");
        write("web/package.json", "{}\n");
        write("web/src/a.ts", "export const a = 1;\n");
        write("svc/A.java", "class A {}\n");
        write("ignored/package.json", "{}\n");
        write("ignored/B.java", "class B {}\n");
        write("node_modules/x/package.json", "{}\n");
        let root = std::fs::canonicalize(&root).unwrap_or_else(|e| panic!("{e}"));
        let markers = ["Cargo.toml", "package.json"];
        let one = project(&root, &WalkOptions::default(), &markers);
        let (sources, notes) = sources(&root, &WalkOptions::default());
        let files = |s: &[(&'static Lang, Vec<PathBuf>)]| -> Vec<(String, Vec<PathBuf>)> {
            s.iter().map(|(l, f)| (l.name.to_owned(), f.clone())).collect()
        };
        assert_eq!(files(&one.sources), files(&sources));
        assert_eq!(one.notes, notes);
        let rel = |p: &PathBuf| p.strip_prefix(&root).unwrap_or(p).to_path_buf();
        let found: Vec<(String, Vec<PathBuf>)> =
            files(&one.sources).into_iter().map(|(l, f)| (l, f.iter().map(rel).collect())).collect();
        let mut want = vec![
            ("java".to_owned(), vec![PathBuf::from("svc/A.java")]),
            ("rust".to_owned(), vec![PathBuf::from("src/main.rs")]),
            ("typescript".to_owned(), vec![PathBuf::from("web/src/a.ts")]),
        ];
        let mut found = found;
        found.sort();
        want.sort();
        assert_eq!(found, want);
        let names: Vec<(&str, PathBuf)> =
            one.marked.iter().map(|(n, d)| (n.as_str(), d.strip_prefix(&root).unwrap_or(d).to_path_buf())).collect();
        assert_eq!(names, [("Cargo.toml", PathBuf::new()), ("package.json", PathBuf::from("web"))]);
        assert!(one.sources.iter().all(|(_, f)| f.iter().all(|p| !p.starts_with(root.join("ignored")))));
        let _ = std::fs::remove_dir_all(&root);
    }
}
