//! Reading a project tree that Signpost does not trust.
//!
//! A repository an agent is pointed at is input like any other: a file in it
//! may be a symlink to `/etc/shadow` or to a FIFO, a device, a socket, or a
//! file of gigabytes. Everything the indexers read *from the tree* (sources,
//! the module files that name packages, ignore files) goes through
//! [`open`], which:
//!
//! - opens only a path under the root, reached without following any
//!   symlink (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on
//!   Linux; elsewhere each component is checked with `lstat` and the last is
//!   opened with `O_NOFOLLOW`), so no file outside the root is ever read,
//!   whatever a link or a `..` in the tree names;
//! - opens with `O_NONBLOCK` and keeps the file only when `fstat` says it is
//!   a regular file: a FIFO returns at once instead of blocking until a
//!   writer appears, and is refused;
//! - reads at most a given number of bytes ([`read`]).
//!
//! The walk never follows symlinks either (`walk.rs` in the built-in
//! indexer), so what it finds and what this opens agree.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a file of the tree was not read.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The path is not under the root, or climbs out of it (`..`).
    #[error("outside the project root")]
    Outside,
    /// Reached through a symbolic link (never followed in a tree).
    #[error("a symbolic link (links are not followed inside a project)")]
    Symlink,
    /// Not a regular file: a FIFO, a socket, a device or a directory.
    #[error("not a regular file (a {0})")]
    NotRegular(&'static str),
    /// Larger than the limit.
    #[error("{size} bytes, over the {limit}-byte limit for one file (generated code?)")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The system refused (missing, unreadable, …).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// `path` relative to `root`, with only normal components (no `..`, no
/// root, no prefix): what may be opened beneath the root.
fn beneath(root: &Path, path: &Path) -> Result<PathBuf, TreeError> {
    let rel = if path.is_absolute() { path.strip_prefix(root).map_err(|_| TreeError::Outside)? } else { path };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return Err(TreeError::Outside),
        }
    }
    Ok(out)
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "device"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// Opens the regular file `path` (absolute under `root`, or relative to it)
/// for reading, never following a symlink and never leaving the root, and
/// never blocking on a FIFO.
pub fn open(root: &Path, path: &Path) -> Result<File, TreeError> {
    let rel = beneath(root, path)?;
    if rel.as_os_str().is_empty() {
        return Err(TreeError::NotRegular("directory"));
    }
    let file = open_beneath(root, &rel)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(TreeError::NotRegular(kind_of(meta.file_type())));
    }
    Ok(file)
}

/// A root directory opened with `O_PATH`: its path, device and inode.
#[cfg(target_os = "linux")]
type OpenRoot = (PathBuf, (u64, u64), rustix::fd::OwnedFd);

#[cfg(target_os = "linux")]
thread_local! {
    /// The last root opened on this thread (a walk or an index reads many
    /// files of one root): one `open` of it, not one per file.
    /// (Kept with the root's device and inode: a root moved away and
    /// replaced by another directory is opened again.)
    static ROOT: std::cell::RefCell<Option<OpenRoot>> = const { std::cell::RefCell::new(None) };
}

#[cfg(target_os = "linux")]
fn open_beneath(root: &Path, rel: &Path) -> Result<File, TreeError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let opened = ROOT.with_borrow_mut(|cached| {
        let id = |s: rustix::fs::Stat| (s.st_dev, s.st_ino);
        let now = rustix::fs::stat(root).map(id)?;
        if cached.as_ref().is_none_or(|(p, id, _)| p != root || *id != now) {
            let dir = rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
            let opened = rustix::fs::fstat(&dir).map(id)?;
            *cached = Some((root.to_path_buf(), opened, dir));
        }
        let (_, _, dir) = cached.as_ref().ok_or(rustix::io::Errno::BADF)?;
        Ok(rustix::fs::openat2(dir, rel, flags, Mode::empty(), how))
    });
    let opened = opened.map_err(|e: rustix::io::Errno| TreeError::Io(e.into()))?;
    match opened {
        Ok(fd) => Ok(File::from(fd)),
        // A link on the way (NO_SYMLINKS), or a path that climbs out.
        Err(rustix::io::Errno::LOOP) => Err(TreeError::Symlink),
        Err(rustix::io::Errno::XDEV) => Err(TreeError::Outside),
        // No openat2 (a kernel before 5.6, or a seccomp filter that refuses it).
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => open_checked(root, rel),
        Err(e) => Err(TreeError::Io(e.into())),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(root: &Path, rel: &Path) -> Result<File, TreeError> {
    open_checked(root, rel)
}

/// Without `openat2`: every component's `lstat` says it is no link, and the
/// last one is opened with `O_NOFOLLOW` (a link swapped in after the check
/// fails to open).
fn open_checked(root: &Path, rel: &Path) -> Result<File, TreeError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut at = root.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at)?.file_type().is_symlink() {
            return Err(TreeError::Symlink);
        }
    }
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    Ok(std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(&at)?)
}

/// What a file was when it was read: a later [`stamp`] that differs means
/// it changed since (or was replaced). Saved with a reading that a later
/// process restores (`signpost_treesitter::saved`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    modified: (i64, i64),
    changed: (i64, i64),
    len: u64,
    inode: u64,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
            len: m.len(),
            inode: m.ino(),
        }
    }
}

/// The stamp of `path` now (its link, not followed), none when it is gone.
pub fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
}

/// The whole regular file `path` of the tree, refused when larger than
/// `limit` bytes (by its size, before it is read, and by what it gives,
/// should it grow while read).
pub fn read(root: &Path, path: &Path, limit: u64) -> Result<Vec<u8>, TreeError> {
    read_stamped(root, path, limit).map(|(bytes, _)| bytes)
}

/// [`read`], with the file's stamp taken before it was read.
pub fn read_stamped(root: &Path, path: &Path, limit: u64) -> Result<(Vec<u8>, Stamp), TreeError> {
    let file = open(root, path)?;
    let meta = file.metadata()?;
    let size = meta.len();
    if size > limit {
        return Err(TreeError::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(TreeError::TooLarge { size: bytes.len() as u64, limit });
    }
    Ok((bytes, Stamp::of(&meta)))
}

/// A small text file of the tree (a `go.mod`, a `package.json`, a
/// `pyproject.toml`: at most 1 MiB), or none when it is missing, not a
/// regular file, reached through a link, too large or not UTF-8.
pub fn read_text(root: &Path, path: &Path) -> Option<String> {
    String::from_utf8(read(root, path, 1 << 20).ok()?).ok()
}

/// The first `n` bytes of the regular file `path` of the tree (fewer when
/// it is shorter), or none when it cannot be read.
pub fn head(root: &Path, path: &Path, n: usize) -> Option<Vec<u8>> {
    let file = open(root, path).ok()?;
    let mut bytes = Vec::with_capacity(n);
    file.take(n as u64).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether `path` is a regular file of the tree, reached without following
/// a link (no file is opened).
pub fn is_file(root: &Path, path: &Path) -> bool {
    let Ok(rel) = beneath(root, path) else { return false };
    let mut at = root.to_path_buf();
    let mut last = None;
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if !m.file_type().is_symlink() => last = Some(m),
            _ => return false,
        }
    }
    last.is_some_and(|m| m.file_type().is_file())
}

/// Whether a path an indexer wrote into its index (relative to `root`, `/`
/// separated) names a file inside the root: not absolute, no `..` that
/// climbs out, and no symlink on the way to it. What a configuration file
/// in the tree points at (a `tsconfig.json` that `extends` or `include`s
/// files elsewhere) must not enter the graph.
/// A path Signpost's own indexer wrote is a [`spell`]ing, quoted or not.
pub fn is_inside(root: &Path, rel: &str) -> bool {
    let path = unspell(rel);
    !rel.is_empty()
        && !path.is_absolute()
        && (rel.starts_with('"') || !rel.contains('\\'))
        && beneath(root, &path).is_ok()
        && {
            let mut at = root.to_path_buf();
            path.components().all(|c| {
                at.push(c);
                std::fs::symlink_metadata(&at).is_ok_and(|m| !m.file_type().is_symlink())
            })
        }
}

/// A path under a project root as the graph spells it: its components
/// joined by `/`, exact for every file name the system allows. A name that
/// is UTF-8 without a control character or a backslash, and does not start
/// with `"`, is itself (`src/café.rs`); any other is quoted the way git
/// quotes paths (`"src/caf\351.rs"`: in double quotes, `\\`, `\"`, `\t`,
/// `\n`, `\r` and three octal digits for any other control or non-UTF-8
/// byte). [`unspell`] gives the path back, byte for byte: what `describe`
/// or `find` shows can be opened again.
pub fn spell(rel: &Path) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    for c in rel.components() {
        if let Component::Normal(name) = c {
            if !bytes.is_empty() {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(&os_bytes(name));
        }
    }
    let plain = std::str::from_utf8(&bytes)
        .ok()
        .filter(|s| !s.starts_with('"') && !s.bytes().any(|b| b == b'\\' || b < 0x20 || b == 0x7f));
    if let Some(s) = plain {
        return s.to_owned();
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\{:03o}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\{b:03o}"));
        }
    }
    out.push('"');
    out
}

/// The path a [`spell`]ing names, relative to the root: a quoted spelling
/// decoded byte for byte, any other string as it is. An escape that
/// [`spell`] never writes is kept as written.
pub fn unspell(spelled: &str) -> PathBuf {
    let Some(inner) = spelled.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return PathBuf::from(spelled);
    };
    let raw = inner.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        let next = raw.get(i + 1).copied();
        let octal = raw
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|x| (b'0'..=b'7').contains(x)) && d[0] <= b'3')
            .map(|d| (d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
        match (b, next, octal) {
            (b'\\', _, Some(v)) => {
                bytes.push(v);
                i += 4;
            }
            (b'\\', Some(e @ (b'"' | b'\\' | b't' | b'n' | b'r')), _) => {
                bytes.push(match e {
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'r' => b'\r',
                    e => e,
                });
                i += 2;
            }
            _ => {
                bytes.push(b);
                i += 1;
            }
        }
    }
    from_bytes(bytes)
}

#[cfg(unix)]
fn os_bytes(name: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Borrowed(std::os::unix::ffi::OsStrExt::as_bytes(name))
}

#[cfg(not(unix))]
fn os_bytes(name: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    match name.to_string_lossy() {
        std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
        std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
    }
}

#[cfg(unix)]
fn from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes))
}

#[cfg(not(unix))]
fn from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> PathBuf {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("signpost-tree-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::canonicalize(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_regular_file_inside_is_read_and_nothing_else_is() {
        let root = tree();
        let outside = root.with_extension("secret");
        std::fs::write(&outside, "secret").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("src/a.go"), "package a").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&outside, root.join("src/link.go")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root.join("src"), root.join("srclink")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(&root, &root.join("src/a.go"), 100).ok().as_deref(), Some(&b"package a"[..]));
        assert_eq!(read(&root, Path::new("src/a.go"), 100).ok().as_deref(), Some(&b"package a"[..]));
        assert!(matches!(read(&root, &root.join("src/link.go"), 100), Err(TreeError::Symlink)));
        // A link in a directory on the way, even to a directory inside.
        assert!(matches!(read(&root, &root.join("srclink/a.go"), 100), Err(TreeError::Symlink)));
        assert!(matches!(read(&root, &outside, 100), Err(TreeError::Outside)));
        assert!(matches!(read(&root, Path::new("src/../../x"), 100), Err(TreeError::Outside)));
        assert!(matches!(read(&root, &root.join("src/a.go"), 3), Err(TreeError::TooLarge { size: 9, limit: 3 })));
        assert!(is_file(&root, &root.join("src/a.go")));
        assert!(!is_file(&root, &root.join("src/link.go")));
        assert!(!is_file(&root, &root.join("src")));
        assert!(is_inside(&root, "src/a.go"));
        for bad in ["src/link.go", "srclink/a.go", "../x", "/etc/passwd", "src/../../x", ""] {
            assert!(!is_inside(&root, bad), "{bad}");
        }
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_file(&outside);
    }

    #[test]
    fn every_file_name_is_spelled_exactly_and_read_back() {
        use std::os::unix::ffi::OsStrExt;
        let cases: [(&[u8], &str); 9] = [
            (b"src/a.rs", "src/a.rs"),
            ("src/café.rs".as_bytes(), "src/café.rs"),
            (b"src/caf\xe9.rs", r#""src/caf\351.rs""#),
            (b"a\\b.go", r#""a\\b.go""#),
            (b"\"q.py", r#""\"q.py""#),
            (b"x\"y.py", "x\"y.py"),
            (b"tab\there\n.c", r#""tab\there\n.c""#),
            (b"bell\x07\xff\xfe.c", r#""bell\007\377\376.c""#),
            (b"\xc3\xa9\\\xff", r#""é\\\377""#),
        ];
        for (raw, want) in cases {
            let path = Path::new(std::ffi::OsStr::from_bytes(raw));
            let spelled = spell(path);
            assert_eq!(spelled, want, "{path:?}");
            assert_eq!(unspell(&spelled), path, "{spelled}");
        }
        // Every byte value in a name, one at a time, round-trips.
        for b in 1..=255u8 {
            if b == b'/' {
                continue;
            }
            let raw = [b'a', b, b'z'];
            let path = Path::new(std::ffi::OsStr::from_bytes(&raw));
            assert_eq!(unspell(&spell(path)), path, "byte {b}");
        }
        // What spell never writes is taken as written.
        assert_eq!(unspell(r#""a\q\9""#), Path::new(r"a\q\9"));
        assert_eq!(unspell("\""), Path::new("\""));
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let root = tree();
        let fifo = root.join("src/pipe.java");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to check
        }
        std::os::unix::fs::symlink(&fifo, root.join("src/via.java")).unwrap_or_else(|e| panic!("{e}"));
        let started = std::time::Instant::now();
        assert!(matches!(read(&root, &fifo, 100), Err(TreeError::NotRegular("FIFO"))));
        assert!(matches!(read(&root, &root.join("src/via.java"), 100), Err(TreeError::Symlink)));
        assert!(head(&root, &fifo, 10).is_none());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(matches!(read(&root, &root.join("src"), 100), Err(TreeError::NotRegular("directory"))));
        let _ = std::fs::remove_dir_all(&root);
    }
}
