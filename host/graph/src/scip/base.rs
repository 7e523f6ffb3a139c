//! What a delta import ([`super::delta`]) reaches of the graph it
//! patches: the base's nodes outside the files imported again, added to
//! the delta as stubs that the splice links to the base's own.

use super::symbols::note_kind;
use crate::{GraphBuilder, GraphError, NodeIx};

/// The graph a delta import patches ([`super::delta`]): its nodes outside
/// the files imported again are what those files reach of the rest.
pub(super) struct Base<'b> {
    pub(super) graph: &'b crate::Graph,
    pub(super) files: &'b std::collections::HashSet<String>,
}

impl Base<'_> {
    /// The base's node with id `id`, unless it belongs to the files
    /// imported again.
    pub(super) fn node(&self, id: &crate::RawId) -> Option<NodeIx> {
        let b = self.graph.lookup_raw(id)?;
        let file = self.graph.node(b).file();
        (file.is_empty() || !self.files.contains(file)).then_some(b)
    }
}

/// Adds the base's node `b` to the delta's builder as it is (a stub the
/// splice links to the base's node), its kind noted.
pub(super) fn stub(
    base: &crate::Graph,
    b: NodeIx,
    to: &mut GraphBuilder,
    kinds: &mut Vec<&'static str>,
) -> Result<NodeIx, GraphError> {
    let n = base.node(b);
    let ix = n.merge_into(to)?;
    note_kind(kinds, ix, static_kind(n.kind()));
    Ok(ix)
}

/// The kinds an import gives, as the static strings its rules compare.
fn static_kind(kind: &str) -> &'static str {
    const KINDS: &[&str] = &[
        "class",
        "struct",
        "trait",
        "interface",
        "enum",
        "variant",
        "union",
        "function",
        "method",
        "constructor",
        "field",
        "property",
        "constant",
        "variable",
        "module",
        "macro",
        "type",
        "type_parameter",
        "parameter",
        "object",
        "local",
        "meta",
    ];
    KINDS.iter().find(|k| **k == kind).copied().unwrap_or("symbol")
}
