//! Snapshots: a graph with its indexes, laid out for loading by reading
//! (`signpost graph import FILE -o OUT`). The format is in
//! `docs/snapshot-format.md`:
//!
//! ```text
//! "SIGNPOST-GRAPH\0" (15 bytes)  version: u32  payload length: u64  CRC-32 of payload: u32
//! payload: sections, each  tag: 4 bytes  length: u64  bytes
//! ```
//!
//! All integers are little-endian. A snapshot of another version, a wrong
//! length or checksum, or a section that breaks an invariant (an index out
//! of range, a span off a character boundary) is refused as a whole with
//! what is wrong; nothing is read half-way.

use std::io::{Seek, SeekFrom, Write};

use super::index::{Csr, Index, Indexes};
use super::{Adjacency, Graph, GraphError, RawId, Rec};

/// The bytes every snapshot starts with.
pub const MAGIC_PREFIX: &[u8] = b"SIGNPOST-GRAPH\0";
/// The version this build writes (it reads versions 2 and 3 too: no
/// ambiguous edges and no unbound call sites before 3, no files read in
/// part before 4).
pub const VERSION: u32 = 4;
const HEADER: usize = 15 + 4 + 8 + 4;

/// What a snapshot written holds: its length and the CRC-32 of all its
/// bytes (header and payload), as [`crc32fast::hash`] of them gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Its length in bytes.
    pub len: u64,
    /// The CRC-32 of its bytes.
    pub crc: u32,
}

/// Writes `graph` as a snapshot.
pub fn write(graph: &Graph) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    // A `Vec` takes every write.
    write_to(graph, &mut out).expect("writing to memory does not fail");
    out.into_inner()
}

/// Writes `graph` as a snapshot to `out`, from where it stands, as it is
/// made: nothing but a buffer of 64 KiB is held beside the graph (a
/// large graph's snapshot is hundreds of megabytes). The header, which
/// says the payload's length and checksum, is written last, in its
/// place; `out` is left at the snapshot's end.
pub fn write_to<W: Write + Seek>(graph: &Graph, out: &mut W) -> std::io::Result<Written> {
    let start = out.stream_position()?;
    out.write_all(&[0; HEADER])?;
    let payload = payload(graph, &mut *out)?;
    let head = header(&payload);
    out.seek(SeekFrom::Start(start))?;
    out.write_all(&head)?;
    out.seek(SeekFrom::Start(start + (HEADER as u64) + payload.total_len()))?;
    Ok(summed(&head, &payload))
}

/// What [`write`] would give `graph`, with nothing written or held.
pub fn summary(graph: &Graph) -> Written {
    let payload = payload(graph, std::io::sink()).expect("writing to nothing does not fail");
    summed(&header(&payload), &payload)
}

/// The header of a snapshot of `payload`.
fn header(payload: &crc32fast::Hasher) -> [u8; HEADER] {
    let mut head = [0; HEADER];
    head[..15].copy_from_slice(MAGIC_PREFIX);
    head[15..19].copy_from_slice(&VERSION.to_le_bytes());
    head[19..27].copy_from_slice(&payload.total_len().to_le_bytes());
    head[27..].copy_from_slice(&payload.clone().finalize().to_le_bytes());
    head
}

/// The length and checksum of `head` then `payload`.
fn summed(head: &[u8; HEADER], payload: &crc32fast::Hasher) -> Written {
    let mut all = crc32fast::Hasher::new();
    all.update(head);
    all.combine(payload);
    Written { len: HEADER as u64 + payload.total_len(), crc: all.finalize() }
}

/// Writes `graph`'s payload (every section) to `out`: its checksum, which
/// counts its length too.
fn payload(graph: &Graph, out: impl Write) -> std::io::Result<crc32fast::Hasher> {
    let mut w = Writer { out: std::io::BufWriter::with_capacity(1 << 16, Summed::new(out)) };
    w.strings(*b"NAME", std::slice::from_ref(&graph.name))?;
    w.section(*b"TEXT", graph.text.len(), |o| graph.text.pieces().try_for_each(|piece| o.write_all(piece.as_bytes())))?;
    w.section(*b"IDS_", graph.ids.len() * 20, |o| graph.ids.iter().try_for_each(|id| o.write_all(id)))?;
    w.section(*b"RECS", graph.recs.len() * Rec::WORDS * 4, |o| {
        graph.recs.iter().flat_map(|r| r.to_words()).try_for_each(|x| o.write_all(&x.to_le_bytes()))
    })?;
    w.strings(*b"KIND", &graph.kinds)?;
    w.strings(*b"FILE", &graph.files)?;
    w.strings(*b"ROLE", &graph.roles)?;
    w.strings(*b"TYPE", &graph.types)?;
    w.u16s(*b"RLST", &graph.role_lists)?;
    for (tag, adj) in [(*b"OUT_", &graph.out), (*b"IN__", &graph.inn)] {
        w.u32s(tag, &adj.offsets)?;
        w.u32s(tag, &adj.targets)?;
        w.u16s(tag, &adj.types)?;
    }
    w.u64s(*b"INFR", &graph.inferred)?;
    w.u64s(*b"AMBG", &graph.ambiguous)?;
    let (names, counts) = named(&graph.unresolved);
    w.strings(*b"UNRN", &names)?;
    w.u32s(*b"UNRC", &counts)?;
    let (files, lines) = named(&graph.unread);
    w.strings(*b"UNRF", &files)?;
    w.u32s(*b"UNRL", &lines)?;
    // A graph never queried (a language's part) has its query indexes
    // made for the snapshot alone, not kept.
    let made;
    let ix = match graph.index.query.get() {
        Some(ix) => ix,
        None => {
            made = Index::build(graph);
            &made
        }
    };
    w.u32s(*b"BYID", &graph.index.by_id)?;
    w.bytes(*b"LNAM", ix.lower_names.as_bytes())?;
    w.u32s(*b"NSTA", &ix.name_starts)?;
    w.u32s(*b"BYNM", &ix.by_name)?;
    w.u32s(*b"BYFQ", &ix.by_fqn)?;
    w.u32s(*b"BYTL", &ix.by_tail)?;
    w.u32s(*b"RANK", &ix.fqn_rank)?;
    w.bytes(*b"CONT", ix.containers.as_bytes())?;
    w.u32s(*b"CSTA", &ix.container_starts)?;
    w.csr(*b"MEMB", &ix.members)?;
    w.u64s(*b"DOCW", &ix.doc_words)?;
    w.csr(*b"DOCN", &ix.doc_nodes)?;
    w.csr(*b"KIND", &ix.by_kind)?;
    w.csr(*b"ROLE", &ix.by_role)?;
    w.csr(*b"FILE", &graph.index.by_file)?;
    Ok(w.out.into_inner().map_err(std::io::IntoInnerError::into_error)?.crc)
}

/// Counted names (unbound calls, files read in part) as two columns.
fn named(v: &[(String, u32)]) -> (Vec<&str>, Vec<u32>) {
    v.iter().map(|(s, n)| (s.as_str(), *n)).unzip()
}

/// A writer that passes what it is given on, counting and checksumming
/// it.
pub struct Summed<W> {
    out: W,
    crc: crc32fast::Hasher,
}

impl<W> Summed<W> {
    /// `out`, nothing passed on yet.
    pub fn new(out: W) -> Summed<W> {
        Summed { out, crc: crc32fast::Hasher::new() }
    }

    /// How many bytes were passed on.
    pub fn len(&self) -> u64 {
        self.crc.total_len()
    }

    /// Whether nothing was.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The CRC-32 of what was passed on.
    pub fn crc(&self) -> u32 {
        self.crc.clone().finalize()
    }

    /// The writer, once done.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Why a snapshot cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Not a snapshot, or a corrupt, truncated or extended one: what is wrong.
    #[error("not a usable signpost snapshot: {0}")]
    Unusable(String),
    /// A snapshot of another format version.
    #[error(
        "snapshot format version {found}, but this signpost reads version {VERSION}: re-create it with `signpost \
         graph import <index> -o <snapshot>`"
    )]
    Version {
        /// The version the file has.
        found: u32,
    },
}

/// Reads a snapshot, checking every invariant the graph relies on.
pub fn read(bytes: &[u8]) -> Result<Graph, GraphError> {
    let bad = |what: String| GraphError::from(SnapshotError::Unusable(what));
    if !bytes.starts_with(MAGIC_PREFIX) {
        return Err(bad("it does not start with the snapshot magic bytes".into()));
    }
    if bytes.len() < HEADER {
        return Err(bad(format!("truncated header ({} bytes)", bytes.len())));
    }
    let le32 = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = le32(15);
    if !(2..=VERSION).contains(&version) {
        return Err(SnapshotError::Version { found: version }.into());
    }
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[19..27]);
    let len = u64::from_le_bytes(len8);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != len {
        return Err(bad(format!(
            "the payload is {} bytes, the header says {len} (truncated or extended)",
            payload.len()
        )));
    }
    if crc32fast::hash(payload) != le32(27) {
        return Err(bad("checksum mismatch (the file is corrupt)".into()));
    }
    let mut r = Reader { rest: payload };
    let name = r.strings(*b"NAME")?.pop().unwrap_or_default();
    let text = r.string(*b"TEXT")?;
    let raw_ids = r.take(*b"IDS_")?;
    if raw_ids.len() % 20 != 0 {
        return Err(bad("the id section is not a whole number of ids".into()));
    }
    let ids: Vec<RawId> = raw_ids.chunks_exact(20).map(|c| c.try_into().unwrap_or([0; 20])).collect();
    let words = r.u32s(*b"RECS")?;
    if words.len() != ids.len() * Rec::WORDS {
        return Err(bad("the record section does not match the id count".into()));
    }
    let recs: Vec<Rec> = words.chunks_exact(Rec::WORDS).map(Rec::from_words).collect();
    let kinds = r.strings(*b"KIND")?;
    let files = r.strings(*b"FILE")?;
    let roles = r.strings(*b"ROLE")?;
    let types = r.strings(*b"TYPE")?;
    let role_lists = r.u16s(*b"RLST")?;
    let mut adj = |tag: [u8; 4]| -> Result<Adjacency, GraphError> {
        Ok(Adjacency { offsets: r.u32s(tag)?, targets: r.u32s(tag)?, types: r.u16s(tag)? })
    };
    let (out, inn) = (adj(*b"OUT_")?, adj(*b"IN__")?);
    let inferred = r.u64s(*b"INFR")?;
    let (ambiguous, unresolved) = if version >= 3 {
        let ambiguous = r.u64s(*b"AMBG")?;
        let (names, counts) = (r.strings(*b"UNRN")?, r.u32s(*b"UNRC")?);
        if names.len() != counts.len() || names.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad("the unbound call sites are not sorted by name, one count each".into()));
        }
        (ambiguous, names.into_iter().zip(counts).collect())
    } else {
        (Vec::new(), Vec::new())
    };
    let unread = if version >= 4 {
        let (files, lines) = (r.strings(*b"UNRF")?, r.u32s(*b"UNRL")?);
        if files.len() != lines.len() || files.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad("the files read in part are not sorted, one line each".into()));
        }
        files.into_iter().zip(lines).collect()
    } else {
        Vec::new()
    };
    let by_id = r.u32s(*b"BYID")?;
    let query = Index {
        lower_names: r.string(*b"LNAM")?,
        name_starts: r.u32s(*b"NSTA")?,
        by_name: r.u32s(*b"BYNM")?,
        distinct: Default::default(),
        by_fqn: r.u32s(*b"BYFQ")?,
        by_tail: r.u32s(*b"BYTL")?,
        fqn_rank: r.u32s(*b"RANK")?,
        containers: r.string(*b"CONT")?,
        container_starts: r.u32s(*b"CSTA")?,
        members: r.csr(*b"MEMB")?,
        doc_words: r.u64s(*b"DOCW")?,
        doc_nodes: r.csr(*b"DOCN")?,
        by_kind: r.csr(*b"KIND")?,
        by_role: r.csr(*b"ROLE")?,
    };
    let index = Indexes { by_id, by_file: r.csr(*b"FILE")?, query: query.into() };
    if !r.rest.is_empty() {
        return Err(bad(format!("{} bytes after the last section", r.rest.len())));
    }
    let graph = Graph {
        name,
        text: text.into(),
        ids,
        recs,
        kinds,
        files,
        roles,
        types,
        role_lists,
        out,
        inn,
        inferred,
        ambiguous,
        unresolved,
        unread,
        index,
    };
    check(&graph).map_err(bad)?;
    // Made from what was just checked (not stored: one pass of the names).
    graph.warm();
    Ok(graph)
}

/// Every invariant that indexing relies on, so a crafted snapshot with a
/// valid checksum still cannot make a lookup panic.
fn check(g: &Graph) -> Result<(), String> {
    let n = g.recs.len();
    let nodes_ok = |what: &str, v: &[u32]| match v.iter().find(|&&x| x as usize >= n) {
        Some(x) => Err(format!("{what} names node {x} of {n}")),
        None => Ok(()),
    };
    let offsets_ok = |what: &str, offsets: &[u32], keys: usize, items: usize| {
        if offsets.len() != keys + 1
            || offsets.windows(2).any(|w| w[0] > w[1])
            || offsets.last() != Some(&(items as u32))
        {
            Err(format!("{what}: malformed offsets"))
        } else {
            Ok(())
        }
    };
    let text_ok = |what: &str, text: &str, starts: &[u32]| {
        if starts.first() != Some(&0)
            || starts.windows(2).any(|w| w[0] > w[1])
            || starts.iter().any(|&s| !text.is_char_boundary(s as usize))
            || starts.last().is_some_and(|&s| s as usize != text.len())
            || starts.windows(2).any(|w| w[0] == w[1] || text.as_bytes()[w[1] as usize - 1] != 0)
        {
            Err(format!("{what}: malformed string table"))
        } else {
            Ok(())
        }
    };
    if g.ids.len() != n {
        return Err("id and record counts differ".into());
    }
    if g.text.len() > u32::MAX as usize {
        return Err("the text arena exceeds 4 GiB".into());
    }
    for (i, r) in g.recs.iter().enumerate() {
        for s in [r.name, r.fqn, r.doc, r.signature] {
            if !g.text.fits(s) {
                return Err(format!("node {i}: a string span is out of range"));
            }
        }
        if r.kind as usize >= g.kinds.len()
            || r.file as usize >= g.files.len()
            || r.roles_start as usize + r.roles_len as usize > g.role_lists.len()
        {
            return Err(format!("node {i}: kind, file or roles out of range"));
        }
        if r.name.len == 0 || g.kinds[r.kind as usize].is_empty() {
            return Err(format!("node {i}: empty name or kind"));
        }
    }
    if g.role_lists.iter().any(|&r| r as usize >= g.roles.len()) {
        return Err("a role index is out of range".into());
    }
    for (what, adj) in [("out-edges", &g.out), ("in-edges", &g.inn)] {
        offsets_ok(what, &adj.offsets, n, adj.targets.len())?;
        nodes_ok(what, &adj.targets)?;
        if adj.types.len() != adj.targets.len() || adj.types.iter().any(|&t| t as usize >= g.types.len()) {
            return Err(format!("{what}: edge types out of range"));
        }
    }
    if !g.inferred.is_empty() && g.inferred.len() != g.out.targets.len().div_ceil(64) {
        return Err("the inferred-edge bits do not match the edge count".into());
    }
    if !g.ambiguous.is_empty() && (g.ambiguous.len() != g.out.targets.len().div_ceil(64) || g.inferred.is_empty()) {
        return Err("the ambiguous-edge bits do not match the edge count".into());
    }
    if g.out.targets.len() != g.inn.targets.len() {
        return Err("out- and in-edge counts differ".into());
    }
    let ix = g.index();
    for (what, v, len) in [
        ("the id index", &g.index.by_id, Some(n)),
        ("the name index", &ix.by_name, Some(n)),
        ("the qualified-name index", &ix.by_fqn, None),
        ("the tail index", &ix.by_tail, None),
        ("the rank table", &ix.fqn_rank, Some(n)),
    ] {
        nodes_ok(what, v)?;
        if len.is_some_and(|l| l != v.len()) {
            return Err(format!("{what} has the wrong length"));
        }
    }
    if g.index.by_id.windows(2).any(|w| g.ids[w[0] as usize] >= g.ids[w[1] as usize]) {
        return Err("the id index is not sorted or ids repeat".into());
    }
    if ix.name_starts.len() != n + 1 {
        return Err("the name table has the wrong length".into());
    }
    text_ok("names", &ix.lower_names, &ix.name_starts)?;
    crate::index::Names::sorted_ok(ix)?;
    text_ok("containers", &ix.containers, &ix.container_starts)?;
    let containers = ix.container_starts.len().saturating_sub(1);
    for (what, csr, keys) in [
        ("container members", &ix.members, containers),
        ("doc words", &ix.doc_nodes, ix.doc_words.len()),
        ("kinds", &ix.by_kind, g.kinds.len()),
        ("roles", &ix.by_role, g.roles.len()),
        ("files", &g.index.by_file, g.files.len()),
    ] {
        offsets_ok(what, &csr.offsets, keys, csr.items.len())?;
        nodes_ok(what, &csr.items)?;
    }
    Ok(())
}

/// Sections written one after the other to a buffered, checksummed
/// writer.
struct Writer<W: Write> {
    out: std::io::BufWriter<Summed<W>>,
}

type Out<'a, W> = &'a mut std::io::BufWriter<Summed<W>>;

impl<W: Write> Writer<W> {
    /// A section of `len` bytes, which `fill` writes.
    fn section(
        &mut self,
        tag: [u8; 4],
        len: usize,
        fill: impl FnOnce(Out<'_, W>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.out.write_all(&tag)?;
        self.out.write_all(&(len as u64).to_le_bytes())?;
        let before = self.out.get_ref().len() + self.out.buffer().len() as u64;
        fill(&mut self.out)?;
        let after = self.out.get_ref().len() + self.out.buffer().len() as u64;
        debug_assert_eq!(after - before, len as u64, "section {}", String::from_utf8_lossy(&tag));
        Ok(())
    }
    fn bytes(&mut self, tag: [u8; 4], b: &[u8]) -> std::io::Result<()> {
        self.section(tag, b.len(), |o| o.write_all(b))
    }
    fn u16s(&mut self, tag: [u8; 4], v: &[u16]) -> std::io::Result<()> {
        self.section(tag, v.len() * 2, |o| v.iter().try_for_each(|x| o.write_all(&x.to_le_bytes())))
    }
    fn u32s(&mut self, tag: [u8; 4], v: &[u32]) -> std::io::Result<()> {
        self.section(tag, v.len() * 4, |o| v.iter().try_for_each(|x| o.write_all(&x.to_le_bytes())))
    }
    fn u64s(&mut self, tag: [u8; 4], v: &[u64]) -> std::io::Result<()> {
        self.section(tag, v.len() * 8, |o| v.iter().try_for_each(|x| o.write_all(&x.to_le_bytes())))
    }
    fn strings<S: AsRef<str>>(&mut self, tag: [u8; 4], v: &[S]) -> std::io::Result<()> {
        let len = v.iter().map(|s| 4 + s.as_ref().len()).sum();
        self.section(tag, len, |o| {
            v.iter().try_for_each(|s| {
                let s = s.as_ref();
                o.write_all(&(s.len() as u32).to_le_bytes())?;
                o.write_all(s.as_bytes())
            })
        })
    }
    fn csr(&mut self, tag: [u8; 4], c: &Csr) -> std::io::Result<()> {
        self.u32s(tag, &c.offsets)?;
        self.u32s(tag, &c.items)
    }
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, tag: [u8; 4]) -> Result<&'a [u8], GraphError> {
        let bad = |what: String| GraphError::from(SnapshotError::Unusable(what));
        let name = String::from_utf8_lossy(&tag).into_owned();
        if self.rest.len() < 12 {
            return Err(bad(format!("section {name} is missing (truncated)")));
        }
        if self.rest[..4] != tag {
            return Err(bad(format!("expected section {name}, found {}", String::from_utf8_lossy(&self.rest[..4]))));
        }
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&self.rest[4..12]);
        let len = u64::from_le_bytes(len8);
        let body = &self.rest[12..];
        if len > body.len() as u64 {
            return Err(bad(format!("section {name} runs past the end of the file")));
        }
        let (data, rest) = body.split_at(len as usize);
        self.rest = rest;
        Ok(data)
    }
    fn fixed<const N: usize>(&mut self, tag: [u8; 4]) -> Result<impl Iterator<Item = [u8; N]> + 'a, GraphError> {
        let data = self.take(tag)?;
        if data.len() % N != 0 {
            return Err(SnapshotError::Unusable(format!(
                "section {} has a partial element",
                String::from_utf8_lossy(&tag)
            ))
            .into());
        }
        Ok(data.chunks_exact(N).map(|c| c.try_into().unwrap_or([0; N])))
    }
    fn u16s(&mut self, tag: [u8; 4]) -> Result<Vec<u16>, GraphError> {
        Ok(self.fixed::<2>(tag)?.map(u16::from_le_bytes).collect())
    }
    fn u32s(&mut self, tag: [u8; 4]) -> Result<Vec<u32>, GraphError> {
        Ok(self.fixed::<4>(tag)?.map(u32::from_le_bytes).collect())
    }
    fn u64s(&mut self, tag: [u8; 4]) -> Result<Vec<u64>, GraphError> {
        Ok(self.fixed::<8>(tag)?.map(u64::from_le_bytes).collect())
    }
    fn string(&mut self, tag: [u8; 4]) -> Result<String, GraphError> {
        let data = self.take(tag)?;
        String::from_utf8(data.to_vec()).map_err(|_| {
            GraphError::from(SnapshotError::Unusable(format!("section {} is not UTF-8", String::from_utf8_lossy(&tag))))
        })
    }
    fn strings(&mut self, tag: [u8; 4]) -> Result<Vec<String>, GraphError> {
        let mut data = self.take(tag)?;
        let bad = || {
            GraphError::from(SnapshotError::Unusable(format!("section {} is malformed", String::from_utf8_lossy(&tag))))
        };
        let mut out = Vec::new();
        while !data.is_empty() {
            let len = u32::from_le_bytes(data.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
            let s = data.get(4..4 + len).ok_or_else(bad)?;
            out.push(String::from_utf8(s.to_vec()).map_err(|_| bad())?);
            data = &data[4 + len..];
        }
        Ok(out)
    }
    fn csr(&mut self, tag: [u8; 4]) -> Result<Csr, GraphError> {
        Ok(Csr { offsets: self.u32s(tag)?, items: self.u32s(tag)? })
    }
}

#[cfg(test)]
mod tests;
