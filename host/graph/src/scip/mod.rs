//! SCIP indexes → the graph. Every rule is in `docs/scip.md`; in short:
//!
//! - a node per global symbol defined in the index, plus each referenced
//!   symbol defined elsewhere (role `external`), plus each namespace that
//!   encloses a node but has no definition of its own; local variables and
//!   parameters are not nodes;
//! - ids: the first 20 bytes of SHA-256 over the symbol string *without its
//!   package version* (a version bump keeps every id); locals hash their
//!   document path too;
//! - `DECLARES` from the descriptor hierarchy (impl blocks fold into their
//!   type), `CALLS`/`REFERENCES` from reference occurrences attributed to the
//!   innermost enclosing definition, `IMPLEMENTS`/`EXTENDS`/`OVERRIDES` from
//!   relationships and from rust-analyzer's impl descriptors.

mod import;
mod occurrences;
mod symbols;
#[cfg(test)]
mod tests;

use std::collections::HashMap as StdHashMap;

use protobuf::Message;
use scip::types::Index;

use crate::{Graph, GraphError};
use import::Import;

/// Hash maps keyed by symbol strings: millions of lookups, so a fast hash
/// (the keys come from the index, not from an adversary who could flood
/// them, and the index is already the whole input).
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// A map key for a symbol: a global's own string, borrowed from the
/// decoded index; a local's document-qualified string.
type Key<'a> = std::borrow::Cow<'a, str>;

/// Locals are keyed by document too; globals by their symbol string,
/// borrowed (the reference loop meets millions of them).
fn key_of<'a>(sym: &'a str, doc: &str) -> Key<'a> {
    if scip::symbol::is_local_symbol(sym) { format!("{doc}\0{sym}").into() } else { sym.into() }
}

/// The `tool_info.name` of indexes whose references and relationships
/// were resolved by name (signpost's built-in tree-sitter indexer): their
/// CALLS, REFERENCES, IMPLEMENTS, EXTENDS and OVERRIDES edges are marked
/// [`Derivation::Inferred`](crate::Derivation); DECLARES, read from the
/// syntax, stays exact.
pub const INFERRING_TOOL: &str = "signpost-tree-sitter";

/// Why a SCIP index cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScipError {
    /// The bytes are no protobuf message.
    #[error("the protobuf does not parse ({0}); is the file truncated?")]
    Protobuf(String),
    /// A protobuf with fields SCIP's schema does not have.
    #[error("it has fields a SCIP index does not have: not a SCIP index, or one from a newer SCIP schema")]
    UnknownFields,
    /// Another SCIP protocol version.
    #[error(
        "SCIP protocol version {0}: this signpost reads version 0; upgrade signpost or re-index with an older indexer"
    )]
    Version(i32),
    /// Neither metadata nor documents.
    #[error("no metadata and no documents: not a SCIP index")]
    Empty,
    /// An occurrence whose range cannot be read.
    #[error("{path}: {why}")]
    Range {
        /// The document.
        path: String,
        /// What is wrong with the range.
        why: String,
    },
    /// A symbol string that does not parse.
    #[error("{doc}: symbol `{symbol}` does not parse: {why}")]
    Symbol {
        /// The document (or `external symbols`).
        doc: String,
        /// The symbol string.
        symbol: String,
        /// The parser's error.
        why: String,
    },
}

/// Import options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The graph's name when the index does not give a project.
    pub name: String,
}

/// Imports a SCIP index (protobuf bytes).
pub fn import(bytes: &[u8], opts: &Options) -> Result<Graph, GraphError> {
    let mut phase = Phases::default();
    let index = read(bytes)?;
    phase.done("protobuf parse");
    import_index(&index, opts)
}

/// Imports a decoded SCIP index (an indexer in the same process: no
/// protobuf round trip).
pub fn import_index(index: &Index, opts: &Options) -> Result<Graph, GraphError> {
    let mut phase = Phases::default();
    let mut import = Import::new(index, opts);
    import.definitions()?;
    phase.done("definitions");
    import.nodes()?;
    phase.done("nodes");
    import.declares()?;
    phase.done("declares");
    import.references()?;
    phase.done("references");
    import.relationships()?;
    phase.done("relationships");
    let graph = import.b.build();
    phase.done("build");
    graph
}

/// Decodes the protobuf, and refuses what is not a SCIP index this reads.
fn read(bytes: &[u8]) -> Result<Index, GraphError> {
    let index = Index::parse_from_bytes(bytes).map_err(|e| ScipError::Protobuf(e.to_string()))?;
    if index.special_fields.unknown_fields().iter().next().is_some() {
        return Err(ScipError::UnknownFields.into());
    }
    let meta = index.metadata.as_ref();
    if let Some(m) = meta
        && let Err(v) = m.version.enum_value()
    {
        return Err(ScipError::Version(v).into());
    }
    if meta.is_none() && index.documents.is_empty() {
        return Err(ScipError::Empty.into());
    }
    Ok(index)
}

/// Time per import phase, logged at debug level (`RUST_LOG=signpost=debug`).
struct Phases(std::time::Instant);

impl Default for Phases {
    fn default() -> Self {
        Phases(std::time::Instant::now())
    }
}

impl Phases {
    fn done(&mut self, phase: &str) {
        tracing::debug!(phase, ms = self.0.elapsed().as_millis() as u64, "scip import");
        self.0 = std::time::Instant::now();
    }
}
