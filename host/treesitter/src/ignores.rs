//! The ignore files of a project, read the way the walk reads sources: as
//! untrusted input.
//!
//! The `ignore` crate's own handling of `.gitignore` drops a whole file
//! when its patterns do not fit in one matcher (a few thousand patterns
//! exceed globset's 10 MiB automaton limit, and then not even its `build/`
//! line applies, silently); it opens each ignore file with a plain `open`
//! (a FIFO named `.gitignore` blocks the walk for good); and it reads the
//! ignore files of the directories *above* the root. Here:
//!
//! - each directory's `.ignore` and `.gitignore` (and the root's
//!   `.git/info/exclude`) are read with [`signpost_graph::tree`]: regular
//!   files inside the root only, at most [`MAX_IGNORE_FILE`] bytes;
//! - a file's patterns are built in parts of at most [`PART`] lines, a
//!   part too large for one matcher split again, so every pattern that
//!   parses applies; matching asks the parts from the last one back (the
//!   last matching pattern wins, as in git);
//! - precedence is the `ignore` crate's: an `.ignore` of any directory
//!   above a path beats a `.gitignore`, nearer directories beat farther
//!   ones, then the repository's exclude file, then the user's global one;
//! - what could not apply (a file unreadable, too large, a pattern that
//!   does not parse) is a note that names it, never silence.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use signpost_graph::tree;

/// Largest ignore file read (a larger one is named in a note and does not
/// apply).
pub const MAX_IGNORE_FILE: u64 = 8 << 20;

/// Lines per matcher.
const PART: usize = 256;

/// One ignore file's patterns, in matchers of at most [`PART`] lines, in
/// file order.
type Parts = Vec<Gitignore>;

/// A directory's own ignore files.
#[derive(Default)]
struct Dir {
    ignore: Parts,
    gitignore: Parts,
}

/// The ignore files that apply in a directory: those of the directories
/// from it up to the root that have any, nearest first.
type Chain = Vec<Arc<Dir>>;

/// The ignore rules of a tree, read once per directory as the walk goes.
pub struct Ignores {
    root: PathBuf,
    /// Each directory met, by its path's bytes (as the walk spells it:
    /// hashed whole, not component by component), with its chain.
    dirs: Mutex<HashMap<OsString, Arc<Chain>, foldhash::fast::RandomState>>,
    exclude: Parts,
    global: Parts,
    notes: Mutex<Vec<String>>,
}

impl Ignores {
    /// The rules of the tree at `root` (the root's exclude file and the
    /// user's global one read now, each directory's files when first asked).
    pub fn new(root: &Path) -> Ignores {
        let mut notes = Vec::new();
        let exclude = parts(root, root, &root.join(".git/info/exclude"), &mut notes);
        // The user's own global excludes file (git's `core.excludesFile`):
        // the operator's configuration, not the tree's.
        let global = ignore::gitignore::gitconfig_excludes_path()
            .and_then(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
            .map(|(p, text)| build(root, &p, &text, &mut notes))
            .unwrap_or_default();
        Ignores {
            root: root.to_path_buf(),
            dirs: Mutex::new(HashMap::default()),
            exclude,
            global,
            notes: Mutex::new(notes),
        }
    }

    /// Whether `path` (under the root; `is_dir` says whether it is a
    /// directory) is ignored.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else { return false };
        if rel.as_os_str().is_empty() {
            return false;
        }
        // The directories above the path, nearest first: those with rules.
        let Some(dirs) = path.parent().map(|d| self.chain(d)) else { return false };
        let decided = |pick: fn(&Dir) -> &Parts| dirs.iter().find_map(|d| decide(pick(d), path, is_dir));
        decided(|d| &d.ignore)
            .or_else(|| decided(|d| &d.gitignore))
            .or_else(|| decide(&self.exclude, path, is_dir))
            .or_else(|| decide(&self.global, path, is_dir))
            .unwrap_or(false)
    }

    /// What could not apply, one note each.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// The chain of directory `dir` (the root or under it): its own ignore
    /// files read the first time it is asked, then its parent's chain.
    fn chain(&self, dir: &Path) -> Arc<Chain> {
        let key: &OsStr = dir.as_os_str();
        if let Some(c) = self.dirs.lock().ok().and_then(|m| m.get(key).cloned()) {
            return c;
        }
        let mut notes = Vec::new();
        let own = Dir {
            ignore: parts(&self.root, dir, &dir.join(".ignore"), &mut notes),
            gitignore: parts(&self.root, dir, &dir.join(".gitignore"), &mut notes),
        };
        if let Ok(mut all) = self.notes.lock() {
            all.extend(notes);
        }
        let mut chain: Chain = Vec::new();
        if !own.ignore.is_empty() || !own.gitignore.is_empty() {
            chain.push(Arc::new(own));
        }
        let up = dir.parent().filter(|_| dir != self.root).filter(|p| p.starts_with(&self.root));
        if let Some(up) = up {
            chain.extend(self.chain(up).iter().cloned());
        }
        let chain = Arc::new(chain);
        if let Ok(mut m) = self.dirs.lock() {
            m.insert(key.to_owned(), chain.clone());
        }
        chain
    }
}

/// The verdict of one file's parts on `path`: the last part with a match
/// decides (ignored, or whitelisted by a `!` pattern).
fn decide(parts: &Parts, path: &Path, is_dir: bool) -> Option<bool> {
    parts.iter().rev().find_map(|g| match g.matched(path, is_dir) {
        Match::None => None,
        Match::Ignore(_) => Some(true),
        Match::Whitelist(_) => Some(false),
    })
}

/// The ignore file `file` of directory `dir`, read from the tree; none
/// when it is missing.
fn parts(root: &Path, dir: &Path, file: &Path, notes: &mut Vec<String>) -> Parts {
    let shown = || signpost_graph::tree::spell(file.strip_prefix(root).unwrap_or(file));
    match tree::read(root, file, MAX_IGNORE_FILE) {
        Ok(bytes) => build(dir, file, &String::from_utf8_lossy(&bytes), notes),
        Err(tree::TreeError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        // `.git` a file (a worktree's): no exclude file either.
        Err(tree::TreeError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => Vec::new(),
        Err(e) => {
            notes.push(format!("{}: {e}; its ignore patterns do not apply", shown()));
            Vec::new()
        }
    }
}

/// Matchers for the patterns of `text` (the file `from`, anchored at
/// `dir`), [`PART`] lines each; a part too large for one matcher is split
/// in two, down to one line, and a line that still cannot be built is
/// named in a note.
fn build(dir: &Path, from: &Path, text: &str, notes: &mut Vec<String>) -> Parts {
    let lines: Vec<(usize, &str)> = text.lines().enumerate().collect();
    let mut out = Vec::new();
    let mut todo: Vec<&[(usize, &str)]> = lines.chunks(PART).rev().collect();
    while let Some(chunk) = todo.pop() {
        let mut b = GitignoreBuilder::new(dir);
        for (n, line) in chunk {
            if let Err(e) = b.add_line(Some(from.to_path_buf()), line) {
                notes.push(format!("{}:{}: {e}; that pattern does not apply", from.display(), n + 1));
            }
        }
        match b.build() {
            Ok(g) => out.push(g),
            Err(_) if chunk.len() > 1 => {
                let (a, b) = chunk.split_at(chunk.len() / 2);
                todo.push(b);
                todo.push(a);
            }
            Err(e) => notes.push(format!("{}:{}: {e}; that pattern does not apply", from.display(), chunk[0].0 + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("signpost-ignores-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::canonicalize(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_gitignore_of_thousands_of_patterns_applies_whole() {
        let root = tree_dir("large");
        // Patterns whose globs need the regex engine: the `ignore` crate
        // gives up on the whole file past its automaton limit.
        let mut text: String = (0..20_000).map(|i| format!("*generated_{i}_*.tmp?\n")).collect();
        text.push_str("build/\n*.log\n!keep.log\n");
        std::fs::write(root.join(".gitignore"), &text).unwrap_or_else(|e| panic!("{e}"));
        let old = ignore::gitignore::GitignoreBuilder::new(&root);
        let mut old = old;
        for l in text.lines() {
            let _ = old.add_line(None, l);
        }
        assert!(old.build().is_err(), "one matcher holds it now: the test no longer tests parts");
        let rules = Ignores::new(&root);
        assert!(rules.ignored(&root.join("build"), true));
        assert!(rules.ignored(&root.join("sub/x.log"), false));
        assert!(!rules.ignored(&root.join("sub/keep.log"), false));
        assert!(rules.ignored(&root.join("gen/a/generated_19999_x.tmp7"), false));
        assert!(!rules.ignored(&root.join("gen/a/generated_19999_x.tmp"), false));
        assert!(!rules.ignored(&root.join("src/Main.java"), false));
        assert!(rules.notes().is_empty(), "{:?}", rules.notes());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn nearer_files_and_dot_ignore_win_and_a_fifo_is_named() {
        let root = tree_dir("precedence");
        std::fs::write(root.join(".gitignore"), "*.gen.go\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("sub/.gitignore"), "!keep.gen.go\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join(".ignore"), "sub/secret.go\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("sub/.ignore"), "!sub.go\n").unwrap_or_else(|e| panic!("{e}"));
        let rules = Ignores::new(&root);
        assert!(rules.ignored(&root.join("a.gen.go"), false));
        assert!(!rules.ignored(&root.join("sub/keep.gen.go"), false));
        assert!(rules.ignored(&root.join("sub/other.gen.go"), false));
        assert!(rules.ignored(&root.join("sub/secret.go"), false));
        let fifo = root.join("sub/deeper");
        std::fs::create_dir_all(&fifo).unwrap_or_else(|e| panic!("{e}"));
        if std::process::Command::new("mkfifo").arg(fifo.join(".gitignore")).status().is_ok_and(|s| s.success()) {
            let rules = Ignores::new(&root);
            assert!(!rules.ignored(&fifo.join("x.go"), false));
            assert!(rules.notes().iter().any(|n| n.contains("sub/deeper/.gitignore") && n.contains("FIFO")));
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
