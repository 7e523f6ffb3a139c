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
) -> anyhow::Result<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_owned());
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        let relevant = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_))
            && event.paths.iter().any(|p| p.file_name() == name.as_deref());
        if relevant {
            requests.fetch_add(1, Ordering::SeqCst);
            let _ = tx.try_send(());
        }
    })?;
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    tracing::info!(dir = %dir.display(), file = %path.display(), "watching the {what} file");
    Ok(watcher)
}
