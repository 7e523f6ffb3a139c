//! The graph served, saved whole beside the parts' states (`whole.saved`):
//! a restart whose parts are the ones it was merged from serves it at
//! once, instead of merging them again (0.7 s for the 310,000 symbols of
//! seven repositories, BENCHMARKS.md), and reads the parts beside it.
//!
//! Its key names each part the graph was merged from: the part's source
//! (its file name in the cache) and what it held, the length and CRC-32 of
//! its snapshot as the part's state has them (none for a part without
//! symbols). One part that differs, one more or one less, and the file is
//! not used. It is written, like the states, by the saver's thread, and
//! read only when it is the user's own ([`super::parts::read_own`]).
//!
//! Layout: `SIGNPOST-WHOLE\0\0`, a layout version (u32, little-endian),
//! the build that saved it (its length, u32, and its name: the version
//! and the digest the states are checked against), the number of parts
//! (u32), for each its name's length (u32), its name
//! (UTF-8), its snapshot's length (u64) and CRC-32 (u32); then the
//! graph's snapshot, which carries its own length and checksum.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use signpost_graph::Graph;

const MAGIC: &[u8; 16] = b"SIGNPOST-WHOLE\0\0";
const VERSION: u32 = 1;

/// The file's name in the project's cache.
pub(super) const FILE: &str = "whole.saved";

/// What a part held: its snapshot's length and CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ident {
    pub len: u64,
    pub crc: u32,
}

impl Ident {
    /// A part without symbols (it takes no part in a merge).
    pub const EMPTY: Ident = Ident { len: 0, crc: 0 };

    /// What the snapshot `bytes` hold.
    #[cfg(test)]
    pub fn of_snapshot(bytes: &[u8]) -> Ident {
        Ident { len: bytes.len() as u64, crc: crc32fast::hash(bytes) }
    }

    /// What `graph` holds (its snapshot is made for it, unless it is
    /// empty).
    pub fn of(graph: &Graph) -> Ident {
        if graph.node_count() == 0 { Ident::EMPTY } else { signpost_graph::snapshot::summary(graph).into() }
    }
}

impl From<signpost_graph::snapshot::Written> for Ident {
    fn from(w: signpost_graph::snapshot::Written) -> Ident {
        Ident { len: w.len, crc: w.crc }
    }
}

/// The parts a whole graph was merged from, in the order they serve: each
/// source's file name and what it held.
pub(super) type Key = [(String, Ident)];

/// A source's name in the key.
pub(super) fn name_of(source: &Path) -> String {
    source.file_name().map_or_else(|| source.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The build a whole graph was saved by: the version, and the digest of
/// the indexer's and graph's sources the states are checked against.
fn build() -> String {
    format!("{}-{}", env!("CARGO_PKG_VERSION"), signpost_treesitter::saved::DIGEST)
}

/// Writes the file of `graph`, merged from the parts `key` names, to
/// `out` (its head, then its snapshot, as it is made): its length.
fn write_to<W: std::io::Write + std::io::Seek>(out: &mut W, key: &Key, graph: &Graph) -> std::io::Result<u64> {
    let build = build();
    let mut head = Vec::with_capacity(64 + build.len() + key.len() * 64);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(build.len() as u32).to_le_bytes());
    head.extend_from_slice(build.as_bytes());
    head.extend_from_slice(&(key.len() as u32).to_le_bytes());
    for (name, ident) in key {
        head.extend_from_slice(&(name.len() as u32).to_le_bytes());
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(&ident.len.to_le_bytes());
        head.extend_from_slice(&ident.crc.to_le_bytes());
    }
    out.write_all(&head)?;
    Ok(head.len() as u64 + signpost_graph::snapshot::write_to(graph, out)?.len)
}

/// [`write_to`], in memory.
#[cfg(test)]
fn bytes_of(key: &Key, graph: &Graph) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    write_to(&mut out, key, graph).expect("writing to memory does not fail");
    out.into_inner()
}

/// The graph in `bytes` if its key is `key`; why not otherwise.
fn read(bytes: &[u8], key: &Key) -> Result<Graph, String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let got = at.checked_add(n).and_then(|end| bytes.get(at..end)).ok_or("truncated")?;
        at += n;
        Ok(got)
    };
    let word = |b: &[u8]| b.iter().rev().fold(0u64, |v, b| v << 8 | u64::from(*b));
    if take(16)? != MAGIC {
        return Err("not a whole graph saved".into());
    }
    let version = word(take(4)?);
    if version != u64::from(VERSION) {
        return Err(format!("a whole graph of layout {version}, not {VERSION}"));
    }
    let n = word(take(4)?) as usize;
    let by = take(n)?;
    if by != build().as_bytes() {
        return Err(format!(
            "saved by another build of signpost ({}, this one is {})",
            String::from_utf8_lossy(by),
            build()
        ));
    }
    let parts = word(take(4)?) as usize;
    if parts != key.len() {
        return Err(format!("merged from {parts} part(s), not the {} serving now", key.len()));
    }
    for (name, ident) in key {
        let n = word(take(4)?) as usize;
        let saved = take(n)?;
        let (len, crc) = (word(take(8)?), word(take(4)?) as u32);
        if saved != name.as_bytes() || (Ident { len, crc }) != *ident {
            return Err(format!("merged from another {name} than the one serving now"));
        }
    }
    signpost_graph::snapshot::read(&bytes[at..]).map_err(|e| format!("its snapshot: {e}"))
}

/// Saves `graph`, merged from the parts `key` names, in `file`.
pub(super) fn write(file: &Path, key: &Key, graph: &Graph) -> anyhow::Result<u64> {
    super::parts::write_streamed_as(file, 0o600, |out| Ok(write_to(out, key, graph)?))
}

/// The graph saved in `file`, if it is the user's own, whole, and merged
/// from the parts `key` names; why not otherwise (none when none is
/// saved).
pub(super) fn load(file: &Path, key: &Key) -> Option<Result<Graph, String>> {
    Some(super::parts::read_own(file)?.and_then(|bytes| read(&bytes, key)))
}

impl super::Project {
    /// The graph merged from the parts served at the start, as the last
    /// run saved it, when those parts are the ones it was merged from
    /// (every source a built-in language's part of the last run, or
    /// empty): served whole at once, the parts read beside it
    /// ([`crate::live_graph::LiveGraph::open_whole`]), instead of merged again. Taken once.
    pub fn take_whole(&mut self) -> Option<signpost_graph::Graph> {
        let key: Option<Vec<(String, Ident)>> = self
            .sources
            .iter()
            .map(|s| self.restored.iter().find(|(p, _)| p == s).map(|(p, ident)| (name_of(p), *ident)))
            .collect();
        let key = key?;
        let started = Instant::now();
        // One that is not there or not of these parts is saved again at once.
        self.whole_owed = true;
        match load(&self.cache.join(FILE), &key)? {
            Ok(graph) => {
                self.whole_owed = false;
                tracing::info!(
                    nodes = graph.node_count(),
                    ms = started.elapsed().as_millis() as u64,
                    "the whole graph the last run served serves at once; its parts are read beside it"
                );
                Some(graph)
            }
            Err(why) => {
                tracing::info!(
                    why = why.as_str(),
                    "the whole graph the last run saved is not used: its parts are merged"
                );
                None
            }
        }
    }
}

/// What the saver knows of the parts it saved: what each held, so that a
/// whole graph's key does not make their snapshots again.
#[derive(Default)]
pub(super) struct Known(Vec<(Arc<Graph>, Ident)>);

impl Known {
    /// Notes that `graph` holds `ident`; forgets the graphs no one else
    /// holds any more (a part replaced since).
    pub fn note(&mut self, graph: &Arc<Graph>, ident: Ident) {
        self.0.retain(|(g, _)| !Arc::ptr_eq(g, graph) && Arc::strong_count(g) > 1);
        self.0.push((graph.clone(), ident));
    }

    /// The key of `parts` (each part's snapshot made unless known), and
    /// only those parts known from now on.
    pub fn key(&mut self, parts: &[(std::path::PathBuf, Arc<Graph>)]) -> Vec<(String, Ident)> {
        let key = parts
            .iter()
            .map(|(path, graph)| {
                let known = self.0.iter().find(|(g, _)| Arc::ptr_eq(g, graph)).map(|(_, i)| *i);
                (name_of(path), known.unwrap_or_else(|| Ident::of(graph)))
            })
            .collect::<Vec<_>>();
        let idents: Vec<(Arc<Graph>, Ident)> =
            parts.iter().zip(&key).map(|((_, graph), (_, ident))| (graph.clone(), *ident)).collect();
        self.0 = idents;
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(name: &str, symbols: &[&str]) -> Graph {
        let mut b = signpost_graph::GraphBuilder::new(name);
        for (i, s) in symbols.iter().enumerate() {
            let mut id = [0u8; 20];
            id[..8].copy_from_slice(&crc32fast::hash(s.as_bytes()).to_le_bytes().repeat(2));
            id[19] = i as u8;
            let spec = signpost_graph::NodeSpec {
                id,
                kind: "function",
                name: s.rsplit("::").next().unwrap_or(s),
                fqn: s,
                file: "src/lib.rs",
                line: 1 + i as u32,
                roles: &[],
                doc: "",
                signature: "",
            };
            b.add_node(spec).unwrap_or_else(|e| panic!("{e}"));
        }
        b.build().unwrap_or_else(|e| panic!("{e}"))
    }

    /// A whole graph is read back only under the key it was saved with,
    /// only whole: another part, one more or one less, any flipped or cut
    /// byte is refused with a reason.
    #[test]
    fn a_whole_graph_is_read_only_under_its_key_and_only_whole() {
        let (a, b) = (graph("p", &["a::one", "a::two"]), graph("p", &["b::three"]));
        let merged = signpost_graph::merge("p", [&a, &b]).unwrap_or_else(|e| panic!("{e}"));
        let key = vec![("index.a".to_owned(), Ident::of(&a)), ("index.b".to_owned(), Ident::of(&b))];
        assert_ne!(key[0].1, Ident::EMPTY);
        let bytes = bytes_of(&key, &merged);
        let back = read(&bytes, &key).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.node_count(), 3);
        assert_eq!(back.canonical_lines(), merged.canonical_lines());
        // Another part b, a part less, a part more, the parts' order.
        let other = vec![key[0].clone(), ("index.b".to_owned(), Ident::of(&graph("p", &["b::four"])))];
        let fewer = vec![key[0].clone()];
        let more = vec![key[0].clone(), key[1].clone(), ("index.c".to_owned(), Ident::EMPTY)];
        let swapped = vec![key[1].clone(), key[0].clone()];
        for wrong in [other, fewer, more, swapped] {
            assert!(read(&bytes, &wrong).is_err(), "read under {wrong:?}");
        }
        for at in [0, 17, 21, 30, bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x01;
            assert!(read(&damaged, &key).is_err(), "a flipped byte at {at} was read");
            assert!(read(&bytes[..at], &key).is_err(), "a cut at {at} was read");
        }
    }

    /// The key of parts the saver saved is what their snapshots hold, made
    /// or known; parts no longer served are forgotten.
    #[test]
    fn a_key_is_what_the_parts_snapshots_hold() {
        let (a, b) = (Arc::new(graph("p", &["a::one"])), Arc::new(graph("p", &["b::two"])));
        let empty = Arc::new(graph("p", &[]));
        let mut known = Known::default();
        known.note(&a, Ident::of(&a));
        let parts = vec![("/c/index.a".into(), a.clone()), ("/c/index.b".into(), b.clone()), ("/c/e".into(), empty)];
        let key = known.key(&parts);
        let names: Vec<&str> = key.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["index.a", "index.b", "e"]);
        assert_eq!(key[1].1, Ident::of_snapshot(&signpost_graph::snapshot::write(&b)));
        assert_eq!(key[2].1, Ident::EMPTY);
        let key = known.key(&parts[1..]);
        assert_eq!(key.len(), 2);
        assert!(!known.0.iter().any(|(g, _)| Arc::ptr_eq(g, &a)), "a part no longer served is kept");
        // A part no one holds any more is forgotten when another is noted.
        let c = Arc::new(graph("p", &["c::three"]));
        known.note(&c, Ident::of(&c));
        drop(parts);
        let d = Arc::new(graph("p", &["d::four"]));
        known.note(&d, Ident::of(&d));
        assert_eq!(known.0.len(), 3, "b, c and d held elsewhere, kept");
        assert!(known.0.iter().all(|(g, _)| g.node_count() > 0), "the empty part no one holds is kept");
    }
}
