//! The build's reading digest: what a saved reading of a project
//! (`saved.rs`) was made by. Any change to how files are read, resolved or
//! imported (this crate's sources and queries, the graph crate's) makes a
//! different digest, and a reading saved by another build is read again
//! from the files rather than trusted.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dirs = [here.join("src"), here.join("queries"), here.join("../graph/src")];
    let mut all = Vec::new();
    for dir in &dirs {
        println!("cargo:rerun-if-changed={}", dir.display());
        files(dir, &mut all);
    }
    all.sort();
    // DefaultHasher::new has fixed keys: the same sources, the same digest.
    let mut hasher = DefaultHasher::new();
    hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
    for path in &all {
        hasher.write(path.strip_prefix(&here).unwrap_or(path).to_string_lossy().as_bytes());
        hasher.write(&std::fs::read(path).unwrap_or_default());
    }
    println!("cargo:rustc-env=SIGNPOST_READING_DIGEST={:016x}-{}", hasher.finish(), all.len());
}
