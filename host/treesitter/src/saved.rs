//! A language's reading of a project, saved between runs: every file's
//! facts with what the file was when read (its [`Stamp`]), so that a later
//! process reads again only the files that changed since
//! ([`crate::Workspace::restore`]) instead of the whole tree.
//!
//! A reading is trusted only by the build that wrote it: its header names
//! the build's digest (this crate's sources and queries, the graph
//! crate's), the language and the options it was read with, and the
//! modules (`go.mod`, `package.json`, …) its packages were named from. Any
//! difference, or bytes that do not decode, and the files are read again.
//!
//! Layout: `SIGNPOST-READING`, a format version (u32, little-endian), the
//! header's length (u64), the CRC-32 of what follows (u32), the header,
//! then the files' facts in the header's order (both postcard).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use signpost_graph::tree::{self, Stamp};

use crate::extract::{Body, Facts, Packed, Shelf};
use crate::languages::Lang;
use crate::resolve::Source;

const MAGIC: &[u8; 16] = b"SIGNPOST-READING";

/// The layout's version: a reading of another layout is read again.
const VERSION: u32 = 7;

/// What read the files: readings of another build are not trusted.
pub const DIGEST: &str = env!("SIGNPOST_READING_DIGEST");

/// Whether a file was read, and how far its reading can be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    digest: String,
    lang: String,
    max_file_bytes: u64,
    parse_timeout_ms: u64,
    /// The modules the files' packages were named from (directory, name).
    modules: Vec<(PathBuf, String)>,
    /// Every file (relative to the root), with what it was when read.
    files: Vec<(PathBuf, Option<Stamp>)>,
}

/// A file's facts as written (borrowed from the workspace); its body as
/// it is held, packed.
#[derive(Serialize)]
struct SourceRef<'a> {
    path: &'a str,
    facts: &'a Facts,
    uses: PackedBytes<'a, crate::extract::Uses>,
    vars: PackedBytes<'a, Vec<crate::extract::Var>>,
    texts: PackedBytes<'a, Vec<crate::extract::Text>>,
    calls: usize,
    package: &'a [String],
    module: &'a str,
}

/// A file's facts as read back.
#[derive(Deserialize)]
struct SourceOwned {
    path: String,
    facts: Facts,
    uses: Bytes,
    vars: Bytes,
    texts: Bytes,
    calls: usize,
    package: Vec<String>,
    module: String,
}

impl SourceOwned {
    /// The file, once its packed body is checked to unpack (and put on
    /// `shelf`, given one).
    fn source(self, lang: &'static Lang, shelf: Option<&Arc<Shelf>>) -> Result<Source, String> {
        let why = |e: crate::extract::Unpack| format!("{}: its packed facts do not decode: {e}", self.path);
        let body = Body {
            uses: Packed::checked(self.uses.0).map_err(why)?,
            vars: Packed::checked(self.vars.0).map_err(why)?,
            texts: Packed::checked(self.texts.0).map_err(why)?,
            calls: self.calls,
        };
        let body = if let Some(shelf) = shelf { body.shelved(shelf) } else { body };
        Ok(Source { path: self.path, lang, facts: self.facts, body, package: self.package, module: self.module })
    }
}

/// Bytes read as one run (postcard: their length, then themselves), not
/// one element at a time.
struct Bytes(Vec<u8>);

/// A packed value's bytes, written as one run (read back from its shelf
/// as they are written, when they are on one).
struct PackedBytes<'a, T>(&'a Packed<T>);

impl<T> Serialize for PackedBytes<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        self.0.with_bytes(|bytes| s.serialize_bytes(bytes)).map_err(S::Error::custom)?
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        d.deserialize_byte_buf(Visit).map(Bytes)
    }
}

/// A workspace's reading, held apart from it (its files' facts are
/// shared), to be written on another thread.
pub struct Reading {
    header: Header,
    reads: Vec<crate::Read>,
}

impl Reading {
    pub(crate) fn new(
        lang: &Lang,
        opts: &crate::Options,
        modules: Vec<(PathBuf, String)>,
        files: Vec<(PathBuf, Option<Stamp>, crate::Read)>,
    ) -> Reading {
        let mut header = Header {
            digest: DIGEST.to_owned(),
            lang: lang.name.to_owned(),
            max_file_bytes: opts.max_file_bytes,
            parse_timeout_ms: opts.parse_timeout.as_millis() as u64,
            modules,
            files: Vec::with_capacity(files.len()),
        };
        let mut reads = Vec::with_capacity(files.len());
        for (path, stamp, read) in files {
            header.files.push((path, stamp));
            reads.push(read);
        }
        Reading { header, reads }
    }

    /// Files in it.
    pub fn files(&self) -> usize {
        self.header.files.len()
    }

    /// The reading as bytes ([`Saved::read`] reads them back).
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_to(&mut out)?;
        Ok(out.into_inner())
    }

    /// Writes the reading to `out` from where it stands, as it is made
    /// (the bytes [`Reading::to_bytes`] gives, none of them held: a large
    /// part's reading is tens of megabytes); `out` is left at its end.
    pub fn write_to<W: std::io::Write + std::io::Seek>(&self, out: &mut W) -> Result<(), String> {
        use std::io::{SeekFrom, Write};
        let header = postcard::to_stdvec(&self.header).map_err(|e| e.to_string())?;
        let body: Vec<Result<SourceRef<'_>, &str>> = self
            .reads
            .iter()
            .map(|r| match r {
                Ok(s) => Ok(SourceRef {
                    path: &s.path,
                    facts: &s.facts,
                    uses: PackedBytes(&s.body.uses),
                    vars: PackedBytes(&s.body.vars),
                    texts: PackedBytes(&s.body.texts),
                    calls: s.body.calls,
                    package: &s.package,
                    module: &s.module,
                }),
                Err(note) => Err(note.as_str()),
            })
            .collect();
        let io = |e: std::io::Error| e.to_string();
        let start = out.stream_position().map_err(io)?;
        out.write_all(MAGIC).map_err(io)?;
        out.write_all(&VERSION.to_le_bytes()).map_err(io)?;
        out.write_all(&(header.len() as u64).to_le_bytes()).map_err(io)?;
        // The checksum of the header and the body, once they are written.
        let crc_at = start + (MAGIC.len() + 12) as u64;
        out.write_all(&[0; 4]).map_err(io)?;
        let mut summed = std::io::BufWriter::with_capacity(1 << 16, signpost_graph::snapshot::Summed::new(&mut *out));
        summed.write_all(&header).map_err(io)?;
        let summed = postcard::to_io(&body, summed).map_err(|e| e.to_string())?;
        let summed = summed.into_inner().map_err(|e| e.into_error().to_string())?;
        let (crc, end) = (summed.crc(), crc_at + 4 + summed.len());
        out.seek(SeekFrom::Start(crc_at)).map_err(io)?;
        out.write_all(&crc.to_le_bytes()).map_err(io)?;
        out.seek(SeekFrom::Start(end)).map_err(io)?;
        Ok(())
    }
}

/// A saved reading: its header read, its facts not yet.
pub struct Saved<'a> {
    header: Header,
    body: &'a [u8],
}

/// How a saved reading stands against the tree now.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Files changed since it was saved, or new (absolute paths).
    pub changed: Vec<PathBuf>,
    /// Files it holds that are no longer among the language's files
    /// (absolute paths).
    pub gone: Vec<PathBuf>,
    /// Files it holds as they are now.
    pub kept: usize,
}

impl Drift {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.gone.is_empty()
    }
}

impl<'a> Saved<'a> {
    /// Reads the header of `bytes`; the facts are read by
    /// [`crate::Workspace::restore`].
    pub fn read(bytes: &'a [u8]) -> Result<Saved<'a>, String> {
        let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or("not a saved reading")?;
        let (version, rest) = rest.split_at_checked(4).ok_or("truncated")?;
        let version = u32::from_le_bytes(version.try_into().map_err(|_| "truncated")?);
        if version != VERSION {
            return Err(format!("a reading of layout {version}, not {VERSION}"));
        }
        let (len, rest) = rest.split_at_checked(8).ok_or("truncated")?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| "truncated")?);
        let len = usize::try_from(len).map_err(|_| "truncated")?;
        let (crc, rest) = rest.split_at_checked(4).ok_or("truncated")?;
        if crc32fast::hash(rest).to_le_bytes() != crc {
            return Err("its checksum does not match: damaged".into());
        }
        let (header, body) = rest.split_at_checked(len).ok_or("truncated")?;
        let header: Header = postcard::from_bytes(header).map_err(|e| format!("its header does not decode: {e}"))?;
        Ok(Saved { header, body })
    }

    /// Whether it was read by this build, for `lang`, with `opts`: why not.
    pub fn fits(&self, lang: &Lang, opts: &crate::Options) -> Result<(), String> {
        let h = &self.header;
        if h.digest != DIGEST {
            return Err(format!("read by another build of signpost ({}, this one is {DIGEST})", h.digest));
        }
        if h.lang != lang.name {
            return Err(format!("a reading of {}, not {}", h.lang, lang.name));
        }
        if h.max_file_bytes != opts.max_file_bytes || h.parse_timeout_ms != opts.parse_timeout.as_millis() as u64 {
            return Err("read with other limits".into());
        }
        Ok(())
    }

    /// How it stands against `files` (the language's files under `root`
    /// now): each one's stamp looked at, no file read.
    pub fn drift(&self, root: &Path, files: &[PathBuf]) -> Drift {
        let saved: std::collections::HashMap<&Path, Option<&Stamp>> =
            self.header.files.iter().map(|(p, s)| (p.as_path(), s.as_ref())).collect();
        let mut drift = Drift::default();
        let mut seen = std::collections::HashSet::new();
        for f in files {
            let rel = f.strip_prefix(root).unwrap_or(f);
            seen.insert(rel);
            match saved.get(rel) {
                Some(Some(stamp)) if tree::stamp(f).as_ref() == Some(*stamp) => drift.kept += 1,
                _ => drift.changed.push(f.clone()),
            }
        }
        drift.gone =
            self.header.files.iter().filter(|(p, _)| !seen.contains(p.as_path())).map(|(p, _)| root.join(p)).collect();
        drift
    }

    /// The modules its packages were named from.
    pub(crate) fn modules(&self) -> &[(PathBuf, String)] {
        &self.header.modules
    }

    /// Its files' readings, with their stamps, by path relative to the
    /// root; `lang` is the language they are of, and their packed bodies
    /// go on `shelf`, given one.
    pub(crate) fn files(
        self,
        lang: &'static Lang,
        shelf: Option<&Arc<Shelf>>,
    ) -> Result<std::collections::HashMap<PathBuf, crate::Stamped>, String> {
        let body: Vec<Result<SourceOwned, String>> =
            postcard::from_bytes(self.body).map_err(|e| format!("its facts do not decode: {e}"))?;
        if body.len() != self.header.files.len() {
            return Err(format!("{} files named, {} read", self.header.files.len(), body.len()));
        }
        use rayon::prelude::*;
        self.header
            .files
            .into_par_iter()
            .zip(body)
            .map(|((path, stamp), read)| {
                let read = match read {
                    Ok(s) => Ok(Arc::new(s.source(lang, shelf)?)),
                    Err(note) => Err(note),
                };
                Ok((path, (read, stamp)))
            })
            .collect()
    }
}
