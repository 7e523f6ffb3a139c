//! Reading a graph from a file or bytes in any of its formats (told apart
//! by content), and merging several into one workspace.

use std::io::Read;
use std::path::Path;

use crate::{Graph, GraphBuilder, GraphError, NodeIx, json, scip, snapshot};

/// Bytes read first to tell the format ([`Format::detect`] reads 1 KiB).
const HEAD: u64 = 4096;

/// Reads a graph file in any of the formats, told apart by content: a
/// snapshot by its magic bytes, JSON by its first non-blank byte `{`, and
/// anything else that parses as a SCIP protobuf index. A SCIP index is
/// imported as it is read, one document at a time
/// ([`scip::import_file`]); the other formats are read whole.
pub fn load(path: &Path) -> Result<Graph, GraphError> {
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.by_ref().take(HEAD).read_to_end(&mut bytes)?;
    // What a prefix detects as SCIP, the whole file does too; anything else
    // is told again from the whole file.
    if Format::detect(&bytes) == Some(Format::Scip) {
        return scip::import_open_file(file, &scip::Options { name: name.into() });
    }
    file.read_to_end(&mut bytes)?;
    from_bytes(&bytes, name)
}

/// Which format `bytes` are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `docs/graph-format.md`.
    Json,
    /// A SCIP index (protobuf).
    Scip,
    /// A `signpost graph import` snapshot.
    Snapshot,
}

impl Format {
    /// Detects the format from content. `None` for empty input. Text (a
    /// UTF-8 start without control characters) is read as JSON, so a
    /// mistyped JSON file gets JSON's error, not protobuf's; SCIP indexes
    /// start with a protobuf tag byte, a control character.
    pub fn detect(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(snapshot::MAGIC_PREFIX) {
            return Some(Format::Snapshot);
        }
        bytes.iter().position(|b| !b.is_ascii_whitespace())?;
        // Control characters first: a SCIP index starts with a tag byte
        // and its metadata holds more (`0x08`, `0x12`, `0x1a`), whatever
        // its length byte happens to be (123 is `{`). JSON has none.
        let head = &bytes[..bytes.len().min(1024)];
        if head.iter().any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | b' ')) {
            return Some(Format::Scip);
        }
        let text = match std::str::from_utf8(head) {
            Ok(_) => true,
            // A character cut by the 1 KiB window is still text.
            Err(e) => e.error_len().is_none() && e.valid_up_to() + 4 > head.len(),
        };
        Some(if text { Format::Json } else { Format::Scip })
    }
}

/// Reads a graph from bytes in any format; `name` names it when the
/// content does not.
pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Graph, GraphError> {
    match Format::detect(bytes) {
        None => Err(GraphError::Format("the file is empty".into())),
        Some(Format::Snapshot) => snapshot::read(bytes),
        Some(Format::Json) => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| GraphError::Format(format!("starts like JSON but is not UTF-8 text ({e})")))?;
            json::parse(text)
        }
        Some(Format::Scip) => scip::import(bytes, &scip::Options { name: name.into() }),
    }
}

/// Joins several graphs into one (a workspace of repositories). Nodes with
/// the same id are one node: a definition wins over a placeholder (a symbol
/// another repository only references, or a namespace with no source file
/// of its own), otherwise the first graph given wins. Edges of every graph
/// are kept.
pub fn merge<'a>(name: &str, parts: impl IntoIterator<Item = &'a Graph>) -> Result<Graph, GraphError> {
    let parts: Vec<&Graph> = parts.into_iter().collect();
    // The builder says which limit a merge passes.
    crate::concat::merged(name, &parts).map_or_else(|| merged_by_builder(name, &parts), Ok)
}

/// [`merge`] through the builder: nodes joined by id.
pub(crate) fn merged_by_builder(name: &str, parts: &[&Graph]) -> Result<Graph, GraphError> {
    let mut b = GraphBuilder::new(name);
    for g in parts.iter().copied() {
        // The part's strings are shared, not copied: its records are
        // moved by where its text starts.
        let at = b.adopt_text(&g.text)?;
        let mut map = Vec::with_capacity(g.node_count());
        for n in g.iter() {
            map.push(n.merge_into_at(&mut b, Some(at))?);
        }
        for n in 0..g.node_count() as NodeIx {
            for (t, m, how) in g.out_edges(n) {
                b.add_edge_as(map[n as usize], &g.types[t as usize], map[m as usize], how)?;
            }
        }
        for (name, count) in g.unresolved() {
            b.add_unresolved(name, *count);
        }
        for (file, line) in g.unread() {
            b.add_unread(file, *line);
        }
    }
    b.build()
}
