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
//!
//! Memory: the documents are read one at a time, in two walks
//! (`stream.rs`): the first reads symbol information, definitions and
//! attribute evidence; nodes and DECLARES follow from those; the second
//! reads references. What is kept between them is compact and owned
//! (`table.rs`: each symbol string interned once, with what its information
//! says), so an import peaks at the graph plus that table, not at the
//! decoded index.

mod base;
mod encoded;
mod import;
mod occurrences;
mod patch;
mod paths;
mod stream;
mod symbols;
mod table;
#[cfg(test)]
mod tests;

use std::collections::HashMap as StdHashMap;
use std::fs::File;
use std::path::Path;

use scip::types::{Document, Index};

use crate::{Graph, GraphError};
pub use encoded::{Encoded, nameless_in};
use import::{FirstPass, Import};
pub use patch::{Memo, Patch, delta, delta_known, patches_language};
use stream::Source;

/// Hash maps keyed by symbol strings: millions of lookups, so a fast hash
/// (the keys come from the index, not from an adversary who could flood
/// them, and the index is already the whole input).
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;

/// A symbol's key in the symbol table: a global's own string, borrowed
/// from the document being read; a local's document-qualified string.
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

/// The code of an occurrence diagnostic that says a reference is one of
/// several definitions a call could mean (overloads name resolution could
/// not tell apart): its edge is [`Derivation::Ambiguous`](crate::Derivation).
pub const AMBIGUOUS: &str = "signpost/ambiguous";

/// The code of an occurrence diagnostic, on an occurrence with no symbol,
/// that says a call site named the diagnostic's message could not be bound
/// to one definition ([`crate::Graph::unresolved_calls`]).
pub const UNRESOLVED: &str = "signpost/unresolved";

/// The code of an occurrence diagnostic, on an occurrence with no symbol,
/// that says the indexer could not read its document's syntax from the
/// occurrence's line on (what it read is indexed; what follows may be
/// missing): [`crate::Graph::unread`].
pub const UNREAD: &str = "signpost/unread";

/// Whether occurrence `o` carries the diagnostic `code`.
pub(crate) fn has_diagnostic(o: &scip::types::Occurrence, code: &str) -> bool {
    o.diagnostics.iter().any(|d| d.code == code)
}

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

/// Imports a SCIP index (protobuf bytes), decoding one document at a time.
pub fn import(bytes: &[u8], opts: &Options) -> Result<Graph, GraphError> {
    run(&mut stream::Bytes::new(bytes), opts, None)
}

/// Imports an index handed over encoded ([`Encoded`]), decoding one
/// document at a time.
pub fn import_encoded(encoded: &Encoded, opts: &Options) -> Result<Graph, GraphError> {
    run(&mut *encoded.source()?, opts, None)
}

/// Imports the SCIP index in the file at `path`, reading it as it goes:
/// neither the file nor the decoded index is ever in memory whole.
pub fn import_file(path: &Path, opts: &Options) -> Result<Graph, GraphError> {
    import_open_file(File::open(path)?, opts)
}

/// [`import_file`] on a file already open (at any position: it is read
/// from the start).
pub(crate) fn import_open_file(file: File, opts: &Options) -> Result<Graph, GraphError> {
    run(&mut stream::FileSource::new(file)?, opts, None)
}

/// Imports a decoded SCIP index (an indexer in the same process: no
/// protobuf round trip). Unlike the protobuf readers, it takes the index
/// as it is: no check of its version or of unknown fields.
pub fn import_index(index: &Index, opts: &Options) -> Result<Graph, GraphError> {
    run(&mut stream::Decoded(index), opts, None)
}

/// The id (`format_id` spelling) a global SCIP symbol's node gets, by the
/// rule in the module docs; an error for a string that is not a global
/// symbol. Two indexers that spell a symbol alike give it one id.
pub fn symbol_id(symbol: &str) -> Result<String, String> {
    if scip::symbol::is_local_symbol(symbol) {
        return Err(format!("`{symbol}` is a local symbol: its id depends on its document"));
    }
    let parsed = crate::scip_symbol::parse(symbol)?;
    Ok(crate::format_id(&symbols::id_of(&parsed, &parsed.descriptors, None)))
}

/// The import, over any source: a first walk over the documents (symbol
/// information, definitions, attribute evidence), then nodes and DECLARES
/// from what it kept, then a second walk (references), then relationships.
/// A delta import ([`delta`]) gives the graph it patches as `base`: what
/// its documents reach outside themselves is that graph's.
fn run(source: &mut dyn Source, opts: &Options, base: Option<base::Base<'_>>) -> Result<Graph, GraphError> {
    let mut phase = Phases::default();
    let mut first = FirstPass::default();
    // A document's error waits for the end of the walk, so that an index
    // the decoder refuses (truncated, unknown fields, another version) is
    // refused for that first, as when the whole index was decoded before
    // the import began.
    let mut failed: Option<GraphError> = None;
    source.documents(&mut |_: usize, d: &Document| -> Result<(), GraphError> {
        if failed.is_none()
            && let Err(e) = first.document(d)
        {
            failed = Some(e);
        }
        Ok(())
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    first.external_symbols(source.external_symbols())?;
    phase.done("definitions");
    let mut import = Import::new(first, source.metadata(), opts, base);
    import.nodes()?;
    phase.done("nodes");
    import.declares()?;
    phase.done("declares");
    source.documents(&mut |di: usize, d: &Document| -> Result<(), GraphError> { import.references(di, d) })?;
    import.walked_all()?;
    phase.done("references");
    import.relationships()?;
    phase.done("relationships");
    // Only the builder is needed from here: the symbol table goes before
    // the graph is laid out, so the two never share the peak.
    let graph = import.into_builder().build();
    phase.done("build");
    graph
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
        if tracing::enabled!(tracing::Level::DEBUG) {
            let (rss_mib, peak_mib) = crate::memory_mib();
            tracing::debug!(phase, ms = self.0.elapsed().as_millis() as u64, rss_mib, peak_mib, "scip import");
        }
        self.0 = std::time::Instant::now();
    }
}
