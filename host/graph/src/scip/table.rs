//! The symbol table of an import: every symbol string met, interned once to
//! a dense id, and by that id what the phases know of the symbol (its parse,
//! what its `SymbolInformation` says, what became of it). Owned and compact:
//! the documents it was read from are gone by the time it is read.

use scip::types::SymbolInformation;

use super::HashMap;
use super::symbols::{Info, Sym, SymId, kind_name, split_docs};
use crate::{GraphError, NodeIx};

/// What became of a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// Met (described, the target of a relationship, referenced), not
    /// defined, not (yet) a node.
    Met,
    /// Defined in a document (its first definition is in the import's
    /// definitions), not (yet) a node.
    Defined,
    /// A definition kept as a node.
    Node(NodeIx),
    /// Referenced but defined elsewhere: an `external` node.
    External(NodeIx),
    /// Referenced, but no node (a parameter, a local variable, …).
    Skipped,
}

impl Info {
    /// What `s` says; the targets of its relationships are interned in
    /// `table`.
    fn read(s: &SymbolInformation, table: &mut Table) -> Result<Info, GraphError> {
        let (mut signature, doc) = split_docs(&s.documentation);
        if signature.is_empty() {
            signature = s.signature_documentation.text.clone();
        }
        let mut implements = Vec::new();
        for rel in &s.relationships {
            if rel.is_implementation && !rel.symbol.is_empty() {
                implements.push(table.intern(&rel.symbol)?);
            }
        }
        Ok(Info {
            kind: s.kind.enum_value().ok().and_then(kind_name),
            display_name: s.display_name.trim().into(),
            signature,
            doc,
            implements,
        })
    }
}

/// Every symbol string met, interned; the vectors are indexed by
/// [`SymId`].
#[derive(Default)]
pub(super) struct Table {
    /// Each key (a global's symbol string, a local's `"{doc}\0{symbol}"`)
    /// to its id.
    ids: HashMap<Box<str>, SymId>,
    /// Each symbol parsed, once it is defined or referenced.
    pub(super) syms: Vec<Option<Sym>>,
    /// The packages their parses share.
    pub(super) packages: super::symbols::Packages,
    /// The descriptor paths their parses share.
    pub(super) paths: super::paths::Paths,
    /// Each symbol's information (the first given for it wins: documents
    /// first, then external symbols).
    pub(super) info: Vec<Option<Box<Info>>>,
    /// What became of each symbol.
    pub(super) slot: Vec<Slot>,
    /// Symbols that do not parse (left out, the rest served): how many, and
    /// the first few as `document: symbol`.
    pub(super) unparsed: (usize, Vec<String>),
}

impl Table {
    /// The id of `key`, if met.
    pub(super) fn get(&self, key: &str) -> Option<SymId> {
        self.ids.get(key).copied()
    }

    /// The id of `key`, a new one when it is met for the first time.
    pub(super) fn intern(&mut self, key: &str) -> Result<SymId, GraphError> {
        if let Some(&id) = self.ids.get(key) {
            return Ok(id);
        }
        let id = SymId::try_from(self.slot.len()).map_err(|_| GraphError::Invalid {
            at: "SCIP symbols".into(),
            problem: "more than 4 billion distinct symbols".into(),
        })?;
        self.ids.insert(key.into(), id);
        self.syms.push(None);
        self.info.push(None);
        self.slot.push(Slot::Met);
        Ok(id)
    }

    /// Records what `s` says of the symbol `key`, unless something was
    /// recorded for it already (the first wins).
    pub(super) fn describe(&mut self, key: &str, s: &SymbolInformation) -> Result<(), GraphError> {
        let id = self.intern(key)?;
        if self.info[id as usize].is_none() {
            let info = Info::read(s, self)?;
            self.info[id as usize] = Some(Box::new(info));
        }
        Ok(())
    }

    /// The node of a definition kept as one.
    pub(super) fn node(&self, id: SymId) -> Option<NodeIx> {
        match self.slot[id as usize] {
            Slot::Node(ix) => Some(ix),
            _ => None,
        }
    }

    /// Every key by its id (a delta import's few lookups the other way).
    pub(super) fn names(&self) -> HashMap<SymId, &str> {
        self.ids.iter().map(|(k, &id)| (id, &**k)).collect()
    }

    /// The node of a symbol, defined here or external.
    pub(super) fn target(&self, id: SymId) -> Option<NodeIx> {
        match self.slot[id as usize] {
            Slot::Node(ix) | Slot::External(ix) => Some(ix),
            _ => None,
        }
    }
}

/// Whether `e` is a symbol that does not parse: one occurrence or symbol to
/// leave out, not a reason to refuse the index.
pub(super) fn unparsed(e: &crate::GraphError) -> bool {
    matches!(e, crate::GraphError::Scip(super::ScipError::Symbol { .. }))
}

impl Table {
    /// Parses symbol `id` (its text `symbol`, met in `doc`) unless it was:
    /// false when it does not parse, and is left out ([`Table::leave_out`]:
    /// one symbol that does not parse costs that symbol, not the index).
    pub(super) fn parsed(&mut self, id: SymId, symbol: &str, doc: &str) -> Result<bool, GraphError> {
        match super::symbols::parse(&mut self.syms, &mut self.packages, &mut self.paths, id, symbol, Some(doc)) {
            Ok(_) => Ok(true),
            Err(e) if unparsed(&e) => {
                self.leave_out(id, doc, symbol);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Leaves symbol `id` out (its text `symbol`, met in `doc`): counted,
    /// and the first few kept to name.
    pub(super) fn leave_out(&mut self, id: SymId, doc: &str, symbol: &str) {
        self.slot[id as usize] = Slot::Skipped;
        self.unparsed.0 += 1;
        if self.unparsed.1.len() < 3 {
            let shown: String = symbol.chars().take(120).collect();
            self.unparsed.1.push(format!("{doc}: `{shown}`"));
        }
    }
}
