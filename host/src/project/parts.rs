//! The parts of a project and their index files: where the cache is
//! ([`default_cache`]), the SCIP projects under the root and what each part
//! is called, the files the built-in indexer reads beside them
//! ([`uncovered`]), a SCIP indexer's run rewritten for the workspace
//! ([`index_scip_part`]), and index files written whole.

use std::path::{Path, PathBuf};

use anyhow::Context;
use signpost_graph::indexer;
use signpost_treesitter::languages::Lang;
use signpost_treesitter::walk;

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

/// What a part of the workspace under `root` is called: its language, and
/// its directory when it is not the root (`python.services-api`).
pub fn part_name(lang: &str, dir: &Path, root: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().replace(['/', '\\'], "-");
    if rel.is_empty() { lang.to_owned() } else { format!("{lang}.{rel}") }
}

/// The language name and directory of each SCIP project, as
/// [`uncovered`] reads them.
pub fn scip_roots(projects: &[(indexer::Language, PathBuf)]) -> Vec<(String, PathBuf)> {
    projects.iter().map(|(l, d)| (l.name().to_owned(), d.clone())).collect()
}

/// `files` of `lang` that no SCIP project of the same language covers
/// (`scip_roots`: each project's language name and directory).
pub fn uncovered(lang: &Lang, files: &[PathBuf], scip_roots: &[(String, PathBuf)]) -> Vec<PathBuf> {
    files.iter().filter(|f| !scip_roots.iter().any(|(l, r)| l == lang.name && f.starts_with(r))).cloned().collect()
}

/// Runs the SCIP indexer of `lang` on the project at `dir` (inside the
/// workspace `root`) into `partial`, then rewrites it for the workspace:
/// paths relative to `root`, build outputs and copies of source (a `.d.ts`
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

/// Whether `path` holds an index other than `empty` (the placeholder a
/// SCIP project's part starts from): its indexer's, from an earlier run.
pub(super) fn has_index(path: &Path, empty: &[u8]) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.len() != empty.len() as u64 => m.is_file(),
        Ok(_) => std::fs::read(path).is_ok_and(|b| b != empty),
        Err(_) => false,
    }
}

/// The bytes of `file`, a file of the cache that Signpost wrote for a
/// later start, when it is the user's own ([`private`]); none when there is
/// none, why not otherwise.
pub(super) fn read_own(file: &Path) -> Option<Result<Vec<u8>, String>> {
    if let Err(why) = private(file) {
        return Some(Err(why));
    }
    match signpost_graph::tree::read(file.parent()?, file, u64::MAX) {
        Ok(bytes) => Some(Ok(bytes)),
        Err(signpost_graph::tree::TreeError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

/// Whether `file` (when it exists) is the user's own, as the saver writes
/// it: owned by the cache directory's owner and writable by nobody else.
/// A file another user could have written is never read.
fn private(file: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let (Ok(meta), Some(Ok(dir))) = (std::fs::symlink_metadata(file), file.parent().map(std::fs::metadata)) else {
        // Missing: said as such by the read.
        return Ok(());
    };
    if !meta.is_file() || meta.uid() != dir.uid() || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a regular file of the cache's owner writable by nobody else (mode {:o}): not trusted",
            file.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Whether the file at `path` is a regular file that holds `bytes`
/// (nothing else is opened: a FIFO would block).
pub(super) fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|held| held == bytes)
}

/// Writes `bytes` beside `path` and renames it into place: a watcher of
/// `path` only ever sees a whole file.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_whole_as(path, bytes, 0o666)
}

/// [`write_whole`], the file created with `mode` (less the umask).
pub(super) fn write_whole_as(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    use std::io::Write;
    write_streamed_as(path, mode, |file| file.write_all(bytes).map_err(Into::into))
}

/// [`write_whole_as`] of what `fill` writes, as it writes it (to the
/// file, buffered: it may seek in it): a large graph's snapshot is never
/// held whole in memory first. What `fill` gives, once the file is in
/// place; nothing is left beside `path` when it fails.
pub(super) fn write_streamed_as<T>(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let partial = indexer::partial_of(path);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&partial)
        .with_context(|| format!("writing {}", partial.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    let written = fill(&mut out).and_then(|t| out.flush().map(|()| t).map_err(Into::into));
    drop(out);
    let written = written.with_context(|| format!("writing {}", partial.display()));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    let written = written?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(written)
}
