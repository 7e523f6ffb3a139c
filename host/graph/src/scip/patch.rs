//! An index imported per file against the graph it changes: [`delta`]
//! finds the documents whose content changed since the last import (by a
//! hash of each, kept in a [`Memo`]), widens that set until a splice of
//! them alone gives what a full import would, imports those documents
//! against the base graph and returns the [`Delta`] that
//! [`Graph::spliced`] applies.
//!
//! The set is widened by two rules:
//! - a symbol defined in several documents (a C# partial class's parts,
//!   Kotlin's `expect` and `actual`, a Go package) has one node whose
//!   record comes from the first and whose edges from all: its documents
//!   are imported together, before and after the change. Not when its
//!   definitions after the first scope no reference (a C++ or C#
//!   namespace block) and its first document stays first: then its record
//!   and its edges out are the first document's alone, the `DECLARES` into
//!   its children are theirs, and the splice keeps the node and replaces
//!   those (a namespace in every file of a tree would otherwise make every
//!   patch whole);
//! - a node the files define no more (or define as another kind) loses the
//!   edges into it from other files, or those edges change type: the files
//!   of those edges' sources are imported again too.
//!
//! Rust's impl blocks resolve traits by name over the whole index: a Rust
//! index is imported whole ([`Patch::Whole`]), and so is any change that
//! touches more than a quarter of the documents (a whole import is then
//! about as quick).

use std::collections::HashSet;

use super::HashMap;
use std::hash::{BuildHasher, Hasher};

use scip::types::{Document, Index, Metadata, SymbolInformation};

use super::base::Base;
use super::occurrences::DEFINITION;
use super::stream::{Source, Visit};
use super::{Options, UNRESOLVED};
use crate::splice::Delta;
use crate::{Graph, GraphError};

/// What a patch remembers of the index a graph was imported from.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Memo {
    /// Each document by path: a hash of its content and its unbound call
    /// sites by name.
    docs: HashMap<String, DocMemo>,
    /// Symbols defined in more than one document, with those documents
    /// (in index order: the first gives the node its record).
    shared: HashMap<String, Vec<String>>,
    /// Of those, the ones no definition after the first makes a scope of
    /// references (it has no enclosing range): a C++ or C# namespace.
    unscoped: HashSet<String>,
    /// Symbols one document alone defines, without a scope, with that
    /// document: a namespace of one file, which another may come to open.
    lone: HashMap<String, String>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct DocMemo {
    hash: u64,
    unresolved: Vec<(String, u32)>,
}

/// A hash of what the importer reads of a document (every field of its
/// occurrences and symbols; the text is not read): two documents with the
/// same hash import alike.
fn document_hash(d: &Document) -> u64 {
    let mut h = foldhash::quality::FixedState::with_seed(0x5167_9057).build_hasher();
    let text = |h: &mut foldhash::quality::FoldHasher<'_>, s: &str| {
        h.write_usize(s.len());
        h.write(s.as_bytes());
    };
    let ints = |h: &mut foldhash::quality::FoldHasher<'_>, v: &[i32]| {
        h.write_usize(v.len());
        for &x in v {
            h.write_i32(x);
        }
    };
    text(&mut h, &d.relative_path);
    text(&mut h, &d.language);
    h.write_usize(d.occurrences.len());
    for o in &d.occurrences {
        ints(&mut h, &o.range);
        text(&mut h, &o.symbol);
        h.write_i32(o.symbol_roles);
        h.write_usize(o.override_documentation.len());
        for t in &o.override_documentation {
            text(&mut h, t);
        }
        h.write_i32(o.syntax_kind.value());
        h.write_usize(o.diagnostics.len());
        for x in &o.diagnostics {
            h.write_i32(x.severity.value());
            text(&mut h, &x.code);
            text(&mut h, &x.message);
            text(&mut h, &x.source);
        }
        ints(&mut h, &o.enclosing_range);
        if o.typed_range.is_some() || o.typed_enclosing_range.is_some() {
            text(&mut h, &format!("{:?}{:?}", o.typed_range, o.typed_enclosing_range));
        }
    }
    h.write_usize(d.symbols.len());
    for s in &d.symbols {
        text(&mut h, &s.symbol);
        h.write_usize(s.documentation.len());
        for t in &s.documentation {
            text(&mut h, t);
        }
        h.write_usize(s.relationships.len());
        for r in &s.relationships {
            text(&mut h, &r.symbol);
            h.write_u8(
                u8::from(r.is_reference)
                    | u8::from(r.is_implementation) << 1
                    | u8::from(r.is_type_definition) << 2
                    | u8::from(r.is_definition) << 3,
            );
        }
        h.write_i32(s.kind.value());
        text(&mut h, &s.display_name);
        text(&mut h, s.signature_documentation.as_ref().map_or("", |g| g.text.as_str()));
        text(&mut h, &s.enclosing_symbol);
    }
    h.finish()
}

/// A document's unbound call sites, counted by name.
fn unresolved_in(d: &Document) -> Vec<(String, u32)> {
    let mut unresolved: Vec<(String, u32)> = Vec::new();
    for o in d.occurrences.iter().filter(|o| o.symbol.is_empty()) {
        for diag in o.diagnostics.iter().filter(|x| x.code == UNRESOLVED) {
            match unresolved.iter_mut().find(|(n, _)| *n == diag.message) {
                Some((_, c)) => *c += 1,
                None => unresolved.push((diag.message.clone(), 1)),
            }
        }
    }
    unresolved
}

/// A [`Memo`] made document after document, in index order.
#[derive(Default)]
struct Fold {
    docs: HashMap<String, DocMemo>,
    paths: Vec<String>,
    first: HashMap<String, usize>,
    shared: HashMap<String, Vec<usize>>,
    /// Shared symbols a document after their first scopes references
    /// with, and symbols some definition does not scope with.
    scoped: HashSet<String>,
    unscoping: HashSet<String>,
}

impl Fold {
    /// The next document: its path, its memo, the symbols it defines.
    fn add(&mut self, path: &str, memo: DocMemo, defined: Vec<(&str, Scope)>) {
        let i = self.paths.len();
        self.docs.insert(path.to_owned(), memo);
        self.paths.push(path.to_owned());
        for (sym, scope) in defined {
            if scope == Scope::None && !self.unscoping.contains(sym) {
                self.unscoping.insert(sym.to_owned());
            }
            match self.first.get(sym) {
                None => {
                    self.first.insert(sym.to_owned(), i);
                }
                Some(&j) if j != i => {
                    let v = match self.shared.get_mut(sym) {
                        Some(v) => v,
                        None => self.shared.entry(sym.to_owned()).or_insert_with(|| vec![j]),
                    };
                    // Documents come in order: `i` is the last if held.
                    if v.last() != Some(&i) {
                        v.push(i);
                    }
                    if scope == Scope::Some && !self.scoped.contains(sym) {
                        self.scoped.insert(sym.to_owned());
                    }
                }
                Some(_) => {}
            }
        }
    }

    fn memo(self) -> Memo {
        let Fold { docs, paths, first, shared, scoped, unscoping } = self;
        let unscoped = shared.keys().filter(|s| !scoped.contains(*s)).cloned().collect();
        let path = |i: usize| paths[i].clone();
        let lone = unscoping
            .into_iter()
            .filter(|s| !shared.contains_key(s))
            .filter_map(|s| {
                let at = path(*first.get(&s)?);
                Some((s, at))
            })
            .collect();
        let shared = shared.into_iter().map(|(s, v)| (s, v.into_iter().map(path).collect())).collect();
        Memo { docs, shared, unscoped, lone }
    }
}

impl Memo {
    /// What `index` gives a later patch to compare with.
    pub fn of(index: &Index) -> Memo {
        use rayon::prelude::*;
        let each: Vec<(DocMemo, Vec<(&str, Scope)>)> = index
            .documents
            .par_iter()
            .map(|d| (DocMemo { hash: document_hash(d), unresolved: unresolved_in(d) }, definitions(d)))
            .collect();
        let mut fold = Fold::default();
        for (d, (memo, defined)) in index.documents.iter().zip(each) {
            fold.add(&d.relative_path, memo, defined);
        }
        fold.memo()
    }

    /// [`Memo::of`] the index `encoded`, decoded one document at a time,
    /// as [`super::import_encoded`] reads it: a large index is never in
    /// memory decoded whole. An error where the import's.
    pub fn of_encoded(encoded: &super::Encoded) -> Result<Memo, GraphError> {
        let mut fold = Fold::default();
        encoded.source()?.documents(&mut |_, d: &Document| {
            let memo = DocMemo { hash: document_hash(d), unresolved: unresolved_in(d) };
            fold.add(&d.relative_path, memo, definitions(d));
            Ok(())
        })?;
        Ok(fold.memo())
    }

    /// The memo of `index`, given that only the documents at `changed` may
    /// differ from those of the index `self` remembers, that every document
    /// defines the symbols it did, and that any document `index` does not
    /// hold is the one `self` remembers: only the changed ones are hashed
    /// again. None when `index` lacks one of them or holds one `self` does
    /// not know.
    pub fn again(&self, index: &Index, changed: &[String]) -> Option<Memo> {
        let held: HashSet<&str> = index.documents.iter().map(|d| d.relative_path.as_str()).collect();
        if !changed.iter().all(|c| held.contains(c.as_str())) || !held.iter().all(|h| self.docs.contains_key(*h)) {
            return None;
        }
        let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
        let mut memo = self.clone();
        for d in index.documents.iter().filter(|d| changed.contains(d.relative_path.as_str())) {
            memo.docs.insert(d.relative_path.clone(), DocMemo { hash: document_hash(d), unresolved: unresolved_in(d) });
            memo.defines_again(d);
        }
        Some(memo)
    }

    /// Takes in what the changed document `d` defines now. An unscoped
    /// symbol stays so while each of its documents still defines it
    /// without a scope, and no other comes to define it (where a new one
    /// falls in the order is not known here: the symbol is then shared,
    /// its documents imported together). A lone namespace another document
    /// comes to define is shared from then on.
    fn defines_again(&mut self, d: &Document) {
        let mut here: HashMap<&str, Scope> = HashMap::default();
        for (s, scope) in definitions(d) {
            let at = here.entry(s).or_insert(scope);
            *at = (*at).max(scope);
        }
        let path = d.relative_path.as_str();
        let shared = &mut self.shared;
        self.unscoped.retain(|s| {
            let docs = shared.get(s).map_or(&[][..], Vec::as_slice);
            match (docs.iter().position(|p| p == path), here.get(s.as_str())) {
                (Some(k), Some(&scope)) => k == 0 || scope != Scope::Some,
                (Some(_), None) => false,
                (None, defined) => defined.is_none(),
            }
        });
        for (&s, &scope) in &here {
            if let Some(docs) = shared.get_mut(s) {
                if !docs.iter().any(|p| p == path) {
                    docs.push(path.to_owned());
                }
            } else if let Some(other) = self.lone.get(s).filter(|o| *o != path) {
                shared.insert(s.to_owned(), vec![other.clone(), path.to_owned()]);
                self.lone.remove(s);
            } else if scope == Scope::None {
                self.lone.entry(s.to_owned()).or_insert_with(|| path.to_owned());
            }
        }
    }
}

/// Whether an index of `language` (a SCIP document's language, or a
/// part's name) is patched per document: not Rust's, whose impl blocks
/// bind traits by name over the whole index.
pub fn patches_language(language: &str) -> bool {
    !language.eq_ignore_ascii_case("rust")
}

/// How a definition scopes the references in its range, ordered from
/// least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    /// Described, with no definition occurrence.
    Described,
    /// Defined by an occurrence without an enclosing range: no scope.
    None,
    /// Defined with an enclosing range (or one that does not read, as the
    /// importer would take it).
    Some,
}

/// The global symbols document `d` defines: by an occurrence, or by
/// describing them; each with how that definition scopes references.
fn definitions(d: &Document) -> Vec<(&str, Scope)> {
    let by_occurrence = d.occurrences.iter().filter(|o| o.symbol_roles & DEFINITION != 0).map(|o| {
        let none = matches!(super::occurrences::enclosing_of(o), Ok(None));
        (o.symbol.as_str(), if none { Scope::None } else { Scope::Some })
    });
    by_occurrence
        .chain(d.symbols.iter().map(|s| (s.symbol.as_str(), Scope::Described)))
        .filter(|(s, _)| !s.is_empty() && !scip::symbol::is_local_symbol(s))
        .collect()
}

/// What a new index does to the graph imported from the last one.
pub enum Patch {
    /// No document changed.
    Unchanged,
    /// The change, to splice into the base.
    Delta(Box<Delta>),
    /// Import the index whole, for the reason given.
    Whole(&'static str),
}

/// The documents of `index` at `docs`, in index order.
struct Only<'i> {
    index: &'i Index,
    docs: Vec<usize>,
}

impl Source for Only<'_> {
    fn documents(&mut self, f: &mut Visit<'_>) -> Result<(), GraphError> {
        for (k, &i) in self.docs.iter().enumerate() {
            f(k, &self.index.documents[i])?;
        }
        Ok(())
    }
    fn metadata(&self) -> Option<&Metadata> {
        self.index.metadata.as_ref()
    }
    fn external_symbols(&self) -> &[SymbolInformation] {
        &self.index.external_symbols
    }
}

/// The patch that turns `base`, imported from the index `last` describes,
/// into the import of `index`; and the memo of `index`, for the next one.
pub fn delta(base: &Graph, last: &Memo, index: &Index, opts: &Options) -> Result<(Patch, Memo), GraphError> {
    delta_known(base, last, index, None, opts)
}

/// [`delta`], told which documents may have changed (`changed`, as
/// [`Memo::again`] takes them) where the indexer knows: only those are
/// compared, and `index` may hold only some documents (at least those,
/// and those sharing a symbol with them): one it does not hold is the last
/// index's. A patch that needs a document it does not hold is `Whole`;
/// the memo given with it is of `index` as it is, so a caller that imports
/// another, whole index makes that one's memo.
pub fn delta_known(
    base: &Graph,
    last: &Memo,
    index: &Index,
    changed: Option<&[String]>,
    opts: &Options,
) -> Result<(Patch, Memo), GraphError> {
    let started = std::time::Instant::now();
    let memo = match changed.map(|c| last.again(index, c)) {
        Some(Some(memo)) => memo,
        Some(None) => return Ok((Patch::Whole("the index lacks a document it says changed"), Memo::of(index))),
        None => Memo::of(index),
    };
    tracing::debug!(us = started.elapsed().as_micros() as u64, documents = index.documents.len(), "patch: memo");
    let tool = index.metadata.as_ref().and_then(|m| m.tool_info.as_ref()).map(|t| t.name.as_str()).unwrap_or("");
    let language = index.documents.first().map(|d| d.language.as_str()).unwrap_or_default();
    if tool == "rust-analyzer" || !patches_language(language) {
        return Ok((Patch::Whole("Rust's impl blocks are resolved over the whole index"), memo));
    }
    let mut files: HashSet<String> = HashSet::new();
    for (path, doc) in &memo.docs {
        if last.docs.get(path).is_none_or(|old| old.hash != doc.hash) {
            files.insert(path.clone());
        }
    }
    files.extend(last.docs.keys().filter(|p| !memo.docs.contains_key(*p)).cloned());
    if files.is_empty() {
        return Ok((Patch::Unchanged, memo));
    }
    let most = (memo.docs.len() / 4).max(32);
    let position: HashMap<&str, usize> =
        index.documents.iter().enumerate().map(|(i, d)| (d.relative_path.as_str(), i)).collect();
    loop {
        widen_by_shared(&mut files, last, &memo);
        if files.len() > most {
            return Ok((Patch::Whole("the change touches more than a quarter of the files"), memo));
        }
        // A file the index does not hold is gone, or, when the index
        // holds only some, the last index's: then the patch cannot read it.
        if changed.is_some() && files.iter().any(|f| !position.contains_key(f.as_str()) && memo.docs.contains_key(f)) {
            return Ok((Patch::Whole("the patch needs a document the index does not hold"), memo));
        }
        let mut docs: Vec<usize> = files.iter().filter_map(|f| position.get(f.as_str()).copied()).collect();
        docs.sort_unstable();
        let graph = import_against(base, &files, index, docs, opts)?;
        // Nodes of the files that the delta no longer defines alike: the
        // files of the edges into them are imported again too.
        let mut more: Vec<String> = Vec::new();
        let of_files: Vec<bool> = base.files.iter().map(|f| !f.is_empty() && files.contains(f)).collect();
        for b in 0..base.node_count() as crate::NodeIx {
            if !of_files[base.recs[b as usize].file as usize] {
                continue;
            }
            let node = base.node(b);
            let same = graph.lookup_raw(node.raw_id()).is_some_and(|x| {
                let now = graph.node(x);
                now.kind() == node.kind() && !now.file().is_empty()
            });
            if same {
                continue;
            }
            let mut note = |f: &str| {
                if !f.is_empty() && !files.contains(f) {
                    more.push(f.to_owned());
                }
            };
            for (_, s) in base.inn.edges(b) {
                note(base.node(s).file());
            }
            for (t, c) in base.out.edges(b) {
                if base.types[t as usize] == "DECLARES" {
                    note(base.node(c).file());
                }
            }
        }
        tracing::debug!(
            us = started.elapsed().as_micros() as u64,
            files = files.len(),
            more = more.len(),
            "patch: delta"
        );
        if more.is_empty() {
            let unresolved_before = unresolved_of(last, &files);
            return Ok((Patch::Delta(Box::new(Delta { files, graph, unresolved_before })), memo));
        }
        files.extend(more);
    }
}

/// Adds to `files` every document that shares a symbol with one of them,
/// in the last index or the new one, until none does; but for a symbol
/// unscoped in both whose first document is the same (see the module
/// docs).
fn widen_by_shared(files: &mut HashSet<String>, last: &Memo, now: &Memo) {
    let apart = |s: &str| {
        last.unscoped.contains(s)
            && now.unscoped.contains(s)
            && last.shared.get(s).and_then(|d| d.first()) == now.shared.get(s).and_then(|d| d.first())
    };
    loop {
        let before = files.len();
        for map in [&last.shared, &now.shared] {
            for (s, docs) in map {
                if apart(s) {
                    continue;
                }
                if docs.iter().any(|d| files.contains(d)) {
                    files.extend(docs.iter().cloned());
                }
            }
        }
        if files.len() == before {
            return;
        }
    }
}

/// The unbound call sites the files had in the last index, summed by name.
fn unresolved_of(last: &Memo, files: &HashSet<String>) -> Vec<(String, u32)> {
    let mut by_name: HashMap<&str, u32> = HashMap::default();
    for f in files {
        for (name, n) in last.docs.get(f).map_or(&[][..], |d| &d.unresolved) {
            *by_name.entry(name).or_default() += n;
        }
    }
    by_name.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// The documents at `docs` imported with `base` for what they reach.
fn import_against(
    base: &Graph,
    files: &HashSet<String>,
    index: &Index,
    docs: Vec<usize>,
    opts: &Options,
) -> Result<Graph, GraphError> {
    super::run(&mut Only { index, docs }, opts, Some(Base { graph: base, files }))
}
