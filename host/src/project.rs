//! `signpost --project DIR`: a repository served as its code stands now.
//!
//! The built-in indexer's languages (Java, Kotlin, Go, C#, C and C++, and
//! Python outside Python projects) are indexed on start (in seconds) and again whenever their files change: a watcher on the tree
//! collects changes for a moment, reads the changed files again, resolves
//! the language's part and imports it in this process, and the served graph
//! swaps that part in whole (calls in flight finish on the old graph; ids
//! of symbols that did not change stay the same, as they are digests of
//! their SCIP symbols). Edits are not written to the cache: a restart
//! indexes again. The languages of
//! the SCIP indexers (Rust, TypeScript, Python) start from the index of the
//! last run, or empty, while their indexer runs in the background; its
//! index swaps in whole when done.
//!
//! The index files live in a cache directory, not in the project:
//! `$XDG_CACHE_HOME/signpost/projects/<name>-<hash of the path>/`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use signpost_graph::indexer;
use signpost_treesitter::languages::{LANGUAGES, Lang};
use signpost_treesitter::walk::{self, WalkOptions};
use signpost_treesitter::{Indexed, Workspace};

use crate::live_graph::LiveGraph;

/// How long the tree must be quiet before changes are read: an editor's
/// save (write, rename, chmod) is one change.
const QUIET: Duration = Duration::from_millis(80);

/// A project being served.
pub struct Project {
    root: PathBuf,
    cache: PathBuf,
    parts: Vec<Workspace>,
    sources: Vec<PathBuf>,
    /// The SCIP projects (language, directory): a built-in language's
    /// files inside one of the same language are its indexer's.
    scip_roots: Vec<(String, PathBuf)>,
}

/// `files` of `lang` that no SCIP project of the same language covers
/// (`scip_roots`: each project's language name and directory).
pub fn uncovered(lang: &Lang, files: &[PathBuf], scip_roots: &[(String, PathBuf)]) -> Vec<PathBuf> {
    files.iter().filter(|f| !scip_roots.iter().any(|(l, r)| l == lang.name && f.starts_with(r))).cloned().collect()
}

/// The language name and directory of each SCIP project, as
/// [`uncovered`] reads them.
pub fn scip_roots(projects: &[(indexer::Language, PathBuf)]) -> Vec<(String, PathBuf)> {
    projects.iter().map(|(l, d)| (l.name().to_owned(), d.clone())).collect()
}

/// Not in signpost's cache, not in `.git`.
fn outside(cache: &Path, p: &Path) -> bool {
    !p.starts_with(cache) && !p.components().any(|c| c.as_os_str() == ".git")
}

/// Extensions of the files SCIP indexers read and the watcher does not
/// re-index (their projects are indexed once, in the background).
const SCIP_EXTENSIONS: &[&str] = &["rs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "py", "pyi"];

/// A changed source file as the graph names it (relative to the project
/// root, `/`-separated), if it is one: what `describe` marks as changed
/// since indexed.
fn graph_path(root: &Path, cache: &Path, p: &Path) -> Option<String> {
    let ext = p.extension()?.to_str()?;
    let known = SCIP_EXTENSIONS.contains(&ext) || signpost_treesitter::languages::of_path(p).is_some();
    let rel = p.strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/");
    // Build outputs, dependencies and generated files are not the graph's.
    (known && outside(cache, p) && !walk::excluded(root, &rel)).then_some(rel)
}

/// Where a project's index files go by default.
pub fn default_cache(root: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "root".into());
    let name: String =
        name.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    base.join("signpost").join("projects").join(format!("{name}-{hash}"))
}

/// The SCIP-indexed projects under `root` (a workspace of several, or one
/// at its top), by their marker files.
pub fn scip_projects(root: &Path) -> Vec<(indexer::Language, PathBuf)> {
    indexer::projects(&walk::marked(root, &indexer::markers()))
}

/// What a part of the workspace under `root` is called: its language, and
/// its directory when it is not the root (`python.services-api`).
pub fn part_name(lang: &str, dir: &Path, root: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().replace(['/', '\\'], "-");
    if rel.is_empty() { lang.to_owned() } else { format!("{lang}.{rel}") }
}

/// Runs the SCIP indexer of `lang` on the project at `dir` (inside the
/// workspace `root`) into `partial`, then rewrites it for the workspace:
/// paths relative to `root`, build outputs and generated files (a `.d.ts`
/// beside its `.ts`, anything under `dist/`, `node_modules/`, …) left out.
/// Returns how many documents were left out.
pub fn index_scip_part(
    lang: indexer::Language,
    dir: &Path,
    root: &Path,
    partial: &Path,
    opts: &indexer::Options,
) -> anyhow::Result<usize> {
    indexer::index(lang, dir, partial, opts)?;
    let prefix = dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().replace('\\', "/");
    indexer::tidy(partial, &prefix, root, &|rel| !walk::excluded(root, rel))
}

/// Writes `bytes` beside `path` and renames it into place: a watcher of
/// `path` only ever sees a whole file.
fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let partial = path.with_extension("scip.partial");
    std::fs::write(&partial, bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

impl Project {
    /// Indexes `root` into `cache` and says which index files to serve.
    pub fn open(root: &Path, cache: &Path) -> anyhow::Result<Project> {
        let root = std::fs::canonicalize(root).with_context(|| format!("no project directory {}", root.display()))?;
        std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
        let cache = std::fs::canonicalize(cache)?;
        let started = Instant::now();
        let (found, notes) = walk::sources(&root, &WalkOptions::default());
        for note in notes {
            tracing::info!(note, "project walk");
        }
        let scip_parts = scip_projects(&root);
        if found.is_empty() && scip_parts.is_empty() {
            anyhow::bail!(
                "nothing to serve in {}: no Cargo.toml, package.json, tsconfig.json, pyproject.toml, setup.py or \
                 requirements.txt under it, and no Java, Kotlin, Go, C#, C, C++ or Python files",
                root.display()
            );
        }
        let scip_roots = scip_roots(&scip_parts);
        let mut project =
            Project { root: root.clone(), cache: cache.clone(), parts: Vec::new(), sources: Vec::new(), scip_roots };
        // Every language of the built-in indexer has its file, empty when the
        // project has none of it yet: a first file of it shows up live.
        for lang in LANGUAGES {
            let files = found.iter().find(|(l, _)| std::ptr::eq(*l, lang)).map(|(_, f)| f.clone()).unwrap_or_default();
            let files = uncovered(lang, &files, &project.scip_roots);
            let (ws, indexed) = Workspace::open(&root, lang, &files, &signpost_treesitter::Options::default());
            let out = project.file_of(lang.name);
            project.write(&out, &indexed)?;
            project.sources.push(out);
            project.parts.push(ws);
        }
        for (lang, dir) in scip_parts {
            let out = project.file_of(&part_name(lang.name(), &dir, &root));
            if !out.is_file() {
                write_whole(&out, &signpost_treesitter::emit::empty(&root)?)?;
            }
            project.sources.push(out.clone());
            let root = root.clone();
            // The precise pass: swapped in whole by the graph's watcher.
            std::thread::spawn(move || {
                let partial = out.with_extension("scip.partial");
                let started = Instant::now();
                let result = index_scip_part(lang, &dir, &root, &partial, &indexer::Options::default())
                    .and_then(|_| Ok(std::fs::rename(&partial, &out)?));
                match result {
                    Ok(()) => tracing::info!(
                        language = lang.name(),
                        dir = %dir.display(),
                        secs = started.elapsed().as_secs_f64(),
                        "the SCIP indexer's index swaps in"
                    ),
                    Err(e) => tracing::warn!(
                        language = lang.name(),
                        dir = %dir.display(),
                        error = %e,
                        "the SCIP indexer failed; the project is served from its last index, if any"
                    ),
                }
            });
        }
        tracing::info!(
            root = %root.display(),
            cache = %cache.display(),
            ms = started.elapsed().as_millis() as u64,
            "project indexed"
        );
        Ok(project)
    }

    /// The index files to serve.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    fn file_of(&self, lang: &str) -> PathBuf {
        self.cache.join(format!("index.{lang}.scip"))
    }

    fn write(&self, out: &Path, indexed: &Indexed) -> anyhow::Result<()> {
        let r = &indexed.report;
        for note in r.notes.iter().take(20) {
            tracing::info!(note = note.as_str(), "indexing");
        }
        tracing::debug!(language = indexed.lang.name, files = r.files, ms = r.elapsed.as_millis() as u64, "indexed");
        write_whole(out, &indexed.to_bytes()?)
    }

    /// Watches the tree and re-indexes what changes into `graphs`, on a
    /// thread of its own for the life of the process.
    pub fn watch(mut self, graphs: std::sync::Arc<LiveGraph>) -> anyhow::Result<()> {
        use notify::{RecursiveMode, Watcher};
        let (tx, rx) = mpsc::channel::<PathBuf>();
        let (root, cache, marks) = (self.root.clone(), self.cache.clone(), graphs.clone());
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if let Ok(event) = event
                && !event.kind.is_access()
            {
                for p in event.paths {
                    // Marked at once, so `describe` says so while the
                    // re-index waits for the writes to settle.
                    if let Some(file) = graph_path(&root, &cache, &p) {
                        marks.mark_changed(file);
                    }
                    let _ = tx.send(p);
                }
            }
        })?;
        watcher.watch(&self.root, RecursiveMode::Recursive)?;
        tracing::info!(root = %self.root.display(), "watching the project's sources");
        std::thread::Builder::new().name("signpost-project".into()).spawn(move || {
            let _watcher = watcher;
            while let Ok(first) = rx.recv() {
                let mut changed = vec![first];
                while let Ok(p) = rx.recv_timeout(QUIET) {
                    changed.push(p);
                }
                // The batch is closed: a change marked from here on is
                // not in it, and stays marked until a later batch.
                let seen = graphs.changes_seen();
                changed.retain(|p| self.is_source_event(p));
                if changed.is_empty() {
                    continue;
                }
                changed.sort();
                changed.dedup();
                if let Err(e) = self.refresh(&changed, &graphs, seen) {
                    tracing::warn!(error = %e, "re-indexing the project failed; the previous graph keeps serving");
                }
            }
        })?;
        Ok(())
    }

    /// Whether a changed path can matter: not the cache, not `.git`, and a
    /// file of a language the built-in indexer reads (or a go.mod).
    fn is_source_event(&self, p: &Path) -> bool {
        outside(&self.cache, p)
            && (signpost_treesitter::languages::of_path(p).is_some() || p.file_name().is_some_and(|n| n == "go.mod"))
    }

    /// Reads the changed files again and swaps in the parts they belong to.
    fn refresh(&mut self, changed: &[PathBuf], graphs: &LiveGraph, seen: u64) -> anyhow::Result<()> {
        let started = Instant::now();
        // Edits to files it knows need no walk; a new or deleted file does.
        let known = changed.iter().all(|c| c.is_file() && self.parts.iter().any(|w| w.knows(c)));
        let found = if known { Vec::new() } else { walk::sources(&self.root, &WalkOptions::default()).0 };
        let mut updates = Vec::new();
        for ws in &mut self.parts {
            let files = if known {
                ws.files()
            } else {
                let all =
                    found.iter().find(|(l, _)| std::ptr::eq(*l, ws.lang())).map_or(&[][..], |(_, f)| f.as_slice());
                uncovered(ws.lang(), all, &self.scip_roots)
            };
            if let Some(indexed) = ws.update(&files, changed) {
                updates.push(indexed);
            }
        }
        for indexed in &updates {
            let opts = signpost_graph::scip::Options { name: indexed.lang.name.to_owned() };
            let graph = signpost_graph::scip::import_index(&indexed.index, &opts)?;
            let record = graphs.replace_part(&self.file_of(indexed.lang.name), graph);
            if record.result == "swapped" {
                // Every file the part holds now, and the changed ones that
                // are gone, is as current as what was read.
                let part = self.parts.iter().find(|w| std::ptr::eq(w.lang(), indexed.lang));
                graphs.mark_indexed(seen, |file| {
                    let path = self.root.join(file);
                    part.is_some_and(|w| w.knows(&path)) || (changed.contains(&path) && !path.exists())
                });
            }
            tracing::info!(
                language = indexed.lang.name,
                changed = changed.len(),
                result = record.result,
                ms = started.elapsed().as_millis() as u64,
                "re-indexed after a change"
            );
        }
        Ok(())
    }
}
