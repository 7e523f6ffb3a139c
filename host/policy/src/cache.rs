//! The compiled-policy cache: precompiled components on disk.
//!
//! Loading precompiled code is `unsafe` in wasmtime because the bytes are
//! trusted to be native code wasmtime produced. This module is the one place
//! that does it, and only for files it wrote itself: in a 0700 directory,
//! owned by this user, not writable by group or others, named by content
//! hash and engine compatibility hash.

use std::io::Write;
use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::Component;

/// Whether `path` is a cache entry this process may trust: a regular file
/// and its directory owned by us and writable by nobody else.
pub fn trusted(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (Ok(file), Some(Ok(dir))) = (std::fs::symlink_metadata(path), path.parent().map(std::fs::metadata)) else {
            return false;
        };
        file.is_file() && file.uid() == dir.uid() && file.mode() & 0o022 == 0 && dir.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Loads a cache entry that [`trusted`] accepted.
#[allow(unsafe_code)]
pub fn load(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: `path` passed `trusted`: a file this user wrote with `store`
    // from `Component::serialize` of this engine configuration (the file name
    // carries the engine's compatibility hash; wasmtime checks it again),
    // in a directory no other user can write to.
    unsafe { Component::deserialize_file(engine, path) }
}

/// Writes a cache entry atomically (temp file + rename), mode 0600.
pub fn store(path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache entry without a directory"))?;
    let tmp = dir.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(compiled)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}
