//! Watching a file that is served (the policy, a graph): its events become
//! reload requests, and a burst of them is one reload. Used by both
//! reloaders ([`crate::reload`] for the policy, [`crate::live_graph`] for the graph).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;

/// Waits for a reload request, then until none has come for `quiet` (a
/// burst of file events is one reload). `false` once the senders are gone.
pub async fn settled(rx: &mut mpsc::Receiver<()>, quiet: Duration) -> bool {
    if rx.recv().await.is_none() {
        return false;
    }
    while let Ok(Some(())) = tokio::time::timeout(quiet, rx.recv()).await {}
    true
}

/// Watches the directory of `path` (so atomic renames are seen) and asks for
/// a reload when an event names the file.
pub fn watch_file(
    path: &Path,
    tx: mpsc::Sender<()>,
    requests: Arc<AtomicU64>,
    what: &'static str,
) -> anyhow::Result<Vec<notify::RecommendedWatcher>> {
    watch_files(std::slice::from_ref(&path.to_path_buf()), tx, requests, what)
}

/// Watches the directories of `paths`, one watcher per directory (so atomic
/// renames are seen), and asks for a reload when an event names one of the
/// files. One log line says what is watched, however many files.
pub fn watch_files(
    paths: &[PathBuf],
    tx: mpsc::Sender<()>,
    requests: Arc<AtomicU64>,
    what: &'static str,
) -> anyhow::Result<Vec<notify::RecommendedWatcher>> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let mut by_dir: std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<std::ffi::OsString>> =
        std::collections::BTreeMap::new();
    for path in paths {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        by_dir.entry(dir).or_default().extend(path.file_name().map(ToOwned::to_owned));
    }
    let mut watchers = Vec::with_capacity(by_dir.len());
    for (dir, names) in &by_dir {
        let (tx, requests, names) = (tx.clone(), requests.clone(), names.clone());
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            let relevant = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_))
                && event.paths.iter().any(|p| p.file_name().is_some_and(|n| names.contains(n)));
            if relevant {
                requests.fetch_add(1, Ordering::SeqCst);
                let _ = tx.try_send(());
            }
        })?;
        watcher.watch(dir, RecursiveMode::NonRecursive)?;
        watchers.push(watcher);
    }
    match (paths, by_dir.keys().next()) {
        ([path], _) => tracing::info!(file = %path.display(), "watching the {what} file"),
        (_, Some(dir)) if by_dir.len() == 1 => {
            tracing::info!(dir = %dir.display(), files = paths.len(), "watching the {what} files")
        }
        _ => tracing::info!(files = paths.len(), directories = by_dir.len(), "watching the {what} files"),
    }
    Ok(watchers)
}
