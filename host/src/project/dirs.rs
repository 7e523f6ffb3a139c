//! The project's directories watched: each one the walk goes into, on
//! its own (not recursively), at first on a thread of its own while the
//! server answers already.

use std::path::{Path, PathBuf};

use signpost_treesitter::walk;

/// Watches each of `dirs`, not recursively (the walk chose them: no build
/// output, dependency, hidden directory or symlink). One that cannot be
/// watched (unreadable, or past the system's limit of watches) is logged
/// and left out, and the others are watched: how many were left out.
fn watch_dirs(watcher: &mut impl notify::Watcher, dirs: &[PathBuf]) -> usize {
    const LOGGED: usize = 5;
    let mut failed = 0;
    for dir in dirs {
        if let Err(e) = watcher.watch(dir, notify::RecursiveMode::NonRecursive) {
            failed += 1;
            if failed <= LOGGED {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch a directory of the project: edits in it are not followed");
            }
        }
    }
    if failed > LOGGED {
        tracing::warn!(failed, "directories of the project not watched in all");
    }
    failed
}

/// Watches each directory the walk of `root` goes into with `watcher`.
pub(super) fn watch_tree(root: &Path, watcher: &mut impl notify::Watcher) {
    let dirs = walk::directories(root);
    let unwatched = watch_dirs(watcher, dirs.get(1..).unwrap_or_default());
    tracing::info!(root = %root.display(), directories = dirs.len() - unwatched, unwatched, "watching the project's sources");
}

/// The watcher of the project's directories, watching them all on a thread
/// of its own at first.
pub(super) enum Watching<W> {
    Now(W),
    Started(std::thread::JoinHandle<W>),
    /// Its thread panicked: edits are not followed.
    Lost,
}

impl<W: notify::Watcher + Send + 'static> Watching<W> {
    /// `watcher`, watching every directory under `root` (when there is
    /// one) on a thread of its own (or this one, if none starts).
    pub(super) fn start(mut watcher: W, root: Option<PathBuf>) -> Watching<W> {
        let Some(root) = root else { return Watching::Now(watcher) };
        // Sent once the thread starts: kept here should it not.
        let (tx, rx) = std::sync::mpsc::channel::<W>();
        let under = root.clone();
        let spawned = std::thread::Builder::new().name("signpost-watch-dirs".into()).spawn(move || {
            let mut watcher = rx.recv().expect("the watcher is sent as soon as the thread starts");
            watch_tree(&under, &mut watcher);
            watcher
        });
        match spawned {
            Ok(thread) => {
                let _ = tx.send(watcher);
                Watching::Started(thread)
            }
            Err(e) => {
                tracing::debug!(error = %e, "no thread to watch the directories: they are watched now");
                watch_tree(&root, &mut watcher);
                Watching::Now(watcher)
            }
        }
    }

    /// Once every directory is watched.
    pub(super) fn wait(&mut self) {
        if let Watching::Started(_) = self {
            let Watching::Started(thread) = std::mem::replace(self, Watching::Lost) else { unreachable!() };
            match thread.join() {
                Ok(watcher) => *self = Watching::Now(watcher),
                Err(_) => tracing::error!("watching the project's directories panicked: edits are not followed"),
            }
        }
    }

    /// Watches `dir` and the directories under it too.
    pub(super) fn add(&mut self, dir: &Path) {
        self.wait();
        if let Watching::Now(watcher) = self {
            watch_dirs(watcher, &walk::directories(dir));
        }
    }
}
