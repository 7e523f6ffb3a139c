//! A SCIP index as protobuf bytes, handed from the thread that wrote it to
//! the one that imports it: in a file of its own that no path names, or in
//! memory where no such file can be made.
//!
//! A large part's index waits for its import for seconds while other
//! languages are read, then is read three times (the import's two walks and
//! the memo's): 60-85 MB each for C++ or Java on the 3.96M-line tree of
//! BENCHMARKS.md. In memory those bytes are resident the whole time, and
//! they sit under the import's own peak; in a file they are the kernel's
//! page cache, which it can write out and drop, and the file is gone with
//! the value (or the process, however it ends): nothing is left on disk.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use super::stream::{Bytes, FileSource, ReadAt, Source};

/// A SCIP index's protobuf bytes, in memory or in a nameless file.
#[derive(Debug)]
pub enum Encoded {
    /// In memory.
    Memory(Vec<u8>),
    /// A file no path names (Linux's `O_TMPFILE`), read from the start
    /// with positioned reads: readers never share an offset.
    File(File),
}

impl Encoded {
    /// What `fill` writes, in a nameless file in `dir` when one can be
    /// made there and written whole, else in memory (then `fill` is called
    /// again from the start). `fill`'s error when it fails in memory.
    pub fn write<E: From<std::io::Error>>(
        dir: Option<&Path>,
        mut fill: impl FnMut(&mut dyn Write) -> Result<(), E>,
    ) -> Result<Encoded, E> {
        if let Some(dir) = dir {
            match nameless_in(dir) {
                Ok(file) => {
                    let mut out = BufWriter::with_capacity(1 << 16, file);
                    let written = fill(&mut out).and_then(|()| out.flush().map_err(E::from));
                    match (written, out.into_inner()) {
                        (Ok(()), Ok(file)) => return Ok(Encoded::File(file)),
                        // A full disk, say: written again to memory (an
                        // encoding error fails there too, and is returned).
                        _ => {
                            tracing::debug!(dir = %dir.display(), "an index could not be written to disk: kept in memory")
                        }
                    }
                }
                Err(e) => {
                    tracing::debug!(dir = %dir.display(), error = %e, "no nameless file for an index: kept in memory")
                }
            }
        }
        let mut bytes = Vec::new();
        fill(&mut bytes)?;
        Ok(Encoded::Memory(bytes))
    }

    /// How many bytes the index is.
    pub fn len(&self) -> u64 {
        match self {
            Encoded::Memory(bytes) => bytes.len() as u64,
            Encoded::File(file) => file.metadata().map_or(0, |m| m.len()),
        }
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes are in a file, not in memory.
    pub fn on_disk(&self) -> bool {
        matches!(self, Encoded::File(_))
    }

    /// All the bytes, read into memory.
    pub fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        match self {
            Encoded::Memory(bytes) => Ok(bytes.clone()),
            Encoded::File(file) => {
                let mut bytes = Vec::new();
                ReadAt::start(file).read_to_end(&mut bytes)?;
                Ok(bytes)
            }
        }
    }

    /// The index, read one document at a time.
    pub(super) fn source(&self) -> Result<Box<dyn Source + '_>, crate::GraphError> {
        Ok(match self {
            Encoded::Memory(bytes) => Box::new(Bytes::new(bytes)),
            Encoded::File(file) => Box::new(FileSource::new(file.try_clone()?)?),
        })
    }
}

/// A file in `dir` that no path names, open to read and write: gone when
/// it is closed. Only where the system makes one (Linux's `O_TMPFILE`; not
/// every filesystem has it): a named file that a killed process would
/// leave behind is never made.
#[cfg(target_os = "linux")]
pub fn nameless_in(dir: &Path) -> std::io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(dir, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, Mode::RUSR | Mode::WUSR)?;
    Ok(File::from(fd))
}

#[cfg(not(target_os = "linux"))]
pub fn nameless_in(_dir: &Path) -> std::io::Result<File> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no nameless files here"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("signpost-encoded-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn what_is_written_reads_back_from_a_file_that_no_path_names() {
        let dir = scratch("file");
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let encoded = Encoded::write::<std::io::Error>(Some(&dir), |out| out.write_all(&bytes)).expect("written");
        if cfg!(target_os = "linux") {
            assert!(encoded.on_disk(), "a nameless file where the system makes one");
        }
        assert_eq!(encoded.len(), bytes.len() as u64);
        assert!(encoded.to_vec().expect("read back") == bytes);
        // Read twice, as an import reads it: each time from the start.
        assert!(encoded.to_vec().expect("read again") == bytes);
        let left: Vec<_> = std::fs::read_dir(&dir).expect("the directory").collect();
        assert!(left.is_empty(), "nothing named is left in the directory: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn where_no_file_can_be_made_the_bytes_stay_in_memory() {
        let missing = std::env::temp_dir().join(format!("signpost-encoded-none-{}", std::process::id()));
        let mut calls = 0;
        let encoded = Encoded::write::<std::io::Error>(Some(&missing), |out| {
            calls += 1;
            out.write_all(b"bytes")
        })
        .expect("written");
        assert!(!encoded.on_disk());
        assert_eq!(calls, 1, "no file: written once, to memory");
        assert_eq!(encoded.to_vec().expect("the bytes"), b"bytes");
        let none = Encoded::write::<std::io::Error>(None, |out| out.write_all(b"")).expect("written");
        assert!(none.is_empty() && !none.on_disk());
    }

    #[test]
    fn a_writer_that_fails_fails_in_memory_too() {
        let dir = scratch("fails");
        let failed = Encoded::write::<std::io::Error>(Some(&dir), |out| {
            out.write_all(b"half")?;
            Err(std::io::Error::other("the encoder's error"))
        });
        assert_eq!(failed.expect_err("refused").to_string(), "the encoder's error");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
