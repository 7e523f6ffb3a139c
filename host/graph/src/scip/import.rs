//! The import, phase by phase. The first walk over the documents
//! ([`FirstPass`]) keeps what the later phases need of them in a compact,
//! owned form: the symbol table, the definitions, each document's path and
//! attribute evidence. [`Import`] then makes the nodes and DECLARES from
//! that alone, reads references on a second walk, one document at a time,
//! and relationships last. Each phase reads what the ones before it left
//! and adds nodes or edges to the builder.

use scip::types::descriptor::Suffix;
use scip::types::{Descriptor, Document, Metadata, SymbolInformation};

use super::base::{Base, stub};
use super::occurrences::{DEFINITION, Def, IMPORT, Range, TEST, enclosing_of, range_of};
use super::paths::{PathId, Paths};
use super::symbols::{
    ATTRIBUTE_ROLES, Dialect, SymId, attribute_role, candidates, describe, fqn_of, id_of, is_callable, is_test_path,
    keep, note_kind, suffix,
};
use super::table::{Slot, Table};
use super::{HashMap, Options, ScipError, key_of};
use crate::builder::EXTERNAL;
use crate::{GraphBuilder, GraphError, NodeIx, NodeSpec};

/// Attribute evidence of one document: (line, role) of each reference to
/// an attribute that gives a role.
type AttrLines = Vec<(i32, &'static str)>;

/// What the first walk over the documents keeps of them.
#[derive(Default)]
pub(super) struct FirstPass {
    /// Every symbol met, with its information and parse.
    table: Table,
    /// Definitions, in index order (so grouped by document, in order).
    defs: Vec<Def>,
    /// Definitions of a symbol already defined in an earlier document (a
    /// C# `partial` class's other parts, Kotlin's `actual` class beside
    /// its `expect`, a Ruby class reopened), in index order: no node of
    /// their own, but the scope of the references in their range.
    parts: Vec<Def>,
    /// The symbols the document being read defines.
    here: std::collections::HashSet<SymId, foldhash::fast::RandomState>,
    /// Each document's path, by position.
    paths: Vec<String>,
    /// Each document's attribute evidence, by position.
    attr_lines: Vec<AttrLines>,
    /// The role each attribute-like symbol string gives (judged once).
    role_of: HashMap<Box<str>, Option<&'static str>>,
    /// The first document's language (the built-in indexer writes one
    /// language per index, and spells Rust as rust-analyzer does).
    language: String,
}

impl FirstPass {
    /// Reads the next document: its symbol information, its definitions
    /// (the first definition of a symbol wins; rust-analyzer repeats some),
    /// and its attribute evidence.
    pub(super) fn document(&mut self, d: &Document) -> Result<(), GraphError> {
        let di = self.paths.len();
        if di == 0 {
            self.language = d.language.to_ascii_lowercase();
        }
        let path = d.relative_path.as_str();
        self.paths.push(d.relative_path.clone());
        self.attr_lines.push(Vec::new());

        // Symbol information (documents first, then external symbols).
        for s in &d.symbols {
            if !s.symbol.is_empty() {
                self.table.describe(&key_of(&s.symbol, path), s)?;
            }
        }

        // Definitions, in index order.
        self.here.clear();
        for o in &d.occurrences {
            if o.symbol.is_empty() || o.symbol_roles & DEFINITION == 0 {
                continue;
            }
            let at = |why: String| ScipError::Range { path: path.to_owned(), why };
            let Some(range) = range_of(o).map_err(at)? else { continue };
            let id = self.table.intern(&key_of(&o.symbol, path))?;
            if self.table.slot[id as usize] == Slot::Skipped {
                continue;
            }
            if !self.table.parsed(id, &o.symbol, path)? {
                continue;
            }
            if self.table.slot[id as usize] == Slot::Defined {
                if !self.here.contains(&id)
                    && let Some(enclosing) = enclosing_of(o).map_err(at)?
                {
                    self.parts.push(Def { sym: id, doc: di, range, enclosing: Some(enclosing), test_bit: false });
                }
                continue;
            }
            self.table.slot[id as usize] = Slot::Defined;
            self.here.insert(id);
            self.defs.push(Def {
                sym: id,
                doc: di,
                range,
                enclosing: enclosing_of(o).map_err(at)?,
                test_bit: o.symbol_roles & TEST != 0,
            });
        }
        // Symbols described in a document are defined there even without
        // a definition occurrence.
        for s in &d.symbols {
            if s.symbol.is_empty() {
                continue;
            }
            let id = self.table.intern(&key_of(&s.symbol, path))?;
            if matches!(self.table.slot[id as usize], Slot::Defined | Slot::Skipped) {
                continue;
            }
            if !self.table.parsed(id, &s.symbol, path)? {
                continue;
            }
            self.table.slot[id as usize] = Slot::Defined;
            self.defs.push(Def {
                sym: id,
                doc: di,
                range: Range { start: (-1, 0), end: (-1, 0) },
                enclosing: None,
                test_bit: false,
            });
        }

        // Attribute evidence: (line, role) of attribute references.
        for o in &d.occurrences {
            if o.symbol.is_empty() || o.symbol_roles & DEFINITION != 0 || scip::symbol::is_local_symbol(&o.symbol) {
                continue;
            }
            // Only a symbol whose last name is an attribute's is parsed.
            let last = o.symbol.trim_end_matches(['.', '(', ')', ':', '!', '#', '/']);
            if !ATTRIBUTE_ROLES.iter().any(|(_, name, _)| last.ends_with(name)) {
                continue;
            }
            let role = match self.role_of.get(o.symbol.as_str()) {
                Some(&role) => role,
                None => {
                    let role = crate::scip_symbol::parse(&o.symbol).ok().and_then(|sym| attribute_role(&sym));
                    self.role_of.insert(o.symbol.as_str().into(), role);
                    role
                }
            };
            if let Some(role) = role
                && let Ok(Some(r)) = range_of(o)
            {
                self.attr_lines[di].push((r.start.0, role));
            }
        }
        Ok(())
    }

    /// The index's external symbols: their information, where no document
    /// gave any.
    pub(super) fn external_symbols(&mut self, symbols: &[SymbolInformation]) -> Result<(), GraphError> {
        for s in symbols {
            if !s.symbol.is_empty() {
                self.table.describe(&s.symbol, s)?;
            }
        }
        Ok(())
    }
}

/// The edge a relationship from a node of kind `a` to one of kind `t` is.
fn relation_type(a: &str, t: &str) -> &'static str {
    // An interface that names another (Java's `interface A extends B`,
    // Go's embedding) extends it; a class implements it.
    if is_callable(a) && is_callable(t) {
        "OVERRIDES"
    } else if matches!(t, "interface" | "trait") && !matches!(a, "interface" | "trait") {
        "IMPLEMENTS"
    } else {
        "EXTENDS"
    }
}

/// An import under way, after the first walk.
pub(super) struct Import<'b> {
    dialect: Dialect,
    /// Every symbol met: parse, information, and what became of it.
    table: Table,
    /// Definitions, in index order (grouped by document, in order).
    defs: Vec<Def>,
    /// Later documents' definitions of symbols already defined, in index
    /// order: scopes of references only.
    parts: Vec<Def>,
    /// Each document's path, by position.
    paths: Vec<String>,
    /// Documents the second walk has met.
    walked: usize,
    /// Each document's attribute evidence, by position (until the nodes
    /// are made).
    attr_lines: Vec<AttrLines>,
    /// The graph being built.
    pub(super) b: GraphBuilder,
    /// Each node's kind, by node index.
    kinds: Vec<&'static str>,
    /// Nodes by canonical form (enclosing namespaces included): package
    /// number and descriptor path.
    by_canonical: HashMap<(u32, PathId), NodeIx>,
    /// The graph patched, for a delta import.
    base: Option<Base<'b>>,
}

impl<'b> Import<'b> {
    /// The graph builder, the rest dropped (the symbol table is most of
    /// the import's memory).
    pub(super) fn into_builder(self) -> GraphBuilder {
        let (n, first) = &self.table.unparsed;
        if *n > 0 {
            tracing::warn!(
                symbols = n,
                first = first.join("; "),
                "symbols of the index that do not parse were left out; the rest is served"
            );
        }
        self.b
    }

    /// The import of what `first` read, named by the project root of
    /// `meta` (or `opts.name`).
    pub(super) fn new(first: FirstPass, meta: Option<&Metadata>, opts: &Options, base: Option<Base<'b>>) -> Import<'b> {
        let tool = meta.and_then(|m| m.tool_info.as_ref()).map(|t| t.name.clone()).unwrap_or_default();
        let project = meta.map(|m| m.project_root.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_owned());
        let name = project.filter(|p| !p.is_empty()).unwrap_or_else(|| opts.name.clone());
        let FirstPass { table, defs, parts, here: _, paths, attr_lines, role_of: _, language } = first;
        Import {
            dialect: Dialect::of(tool, &language),
            table,
            defs,
            parts,
            paths,
            walked: 0,
            attr_lines,
            b: GraphBuilder::new(&name),
            kinds: Vec::new(),
            by_canonical: HashMap::default(),
            base,
        }
    }

    /// A node per definition that is kept, with its roles (test, and those
    /// its attributes give).
    pub(super) fn nodes(&mut self) -> Result<(), GraphError> {
        for def in &self.defs {
            // Always there: a definition's symbol is parsed when it is read.
            let Some(sym) = self.table.syms[def.sym as usize].as_ref() else { continue };
            let node = describe(self.table.info[def.sym as usize].as_deref(), &self.dialect, sym, &self.table.paths);
            if !keep(node.kind, sym) {
                continue;
            }
            let file = self.paths[def.doc].as_str();
            let mut roles: Vec<&str> = Vec::new();
            if def.test_bit || is_test_path(file) {
                roles.push("test");
            }
            let line = def.range.start.0;
            // Attributes sit between the start of the definition's enclosing
            // range (rust-analyzer and scip-python include them) and its name;
            // without an enclosing range, only on the line above the name.
            let first = match def.enclosing {
                Some(e) if e.start.0 < line => e.start.0,
                _ => line.saturating_sub(1),
            };
            for &(l, role) in &self.attr_lines[def.doc] {
                if (first..line).contains(&l) && !roles.contains(&role) {
                    roles.push(role);
                }
            }
            let ix = self.b.merge_node(NodeSpec {
                id: sym.id,
                file,
                line: if line >= 0 { line as u32 + 1 } else { 0 },
                roles: &roles,
                ..node.spec()
            })?;
            self.table.slot[def.sym as usize] = Slot::Node(ix);
            note_kind(&mut self.kinds, ix, node.kind);
            // The node holds its names and docs now: the table's copies go
            // (only the relationships are read again).
            if let Some(info) = self.table.info[def.sym as usize].as_deref_mut() {
                info.spent();
            }
        }
        // Nothing reads the attribute evidence any more.
        self.attr_lines = Vec::new();
        Ok(())
    }

    /// Namespaces that enclose a node but have no definition of their own,
    /// and DECLARES along the descriptor hierarchy. Nodes are visited in
    /// definition order, so the namespaces made up here get their indexes
    /// in an order that does not change from one run to the next.
    pub(super) fn declares(&mut self) -> Result<(), GraphError> {
        for def in &self.defs {
            if let Some(ix) = self.table.node(def.sym)
                && let Some(s) = self.table.syms[def.sym as usize].as_ref().filter(|s| !s.local)
            {
                self.by_canonical.insert((s.package, s.shape.path), ix);
            }
        }
        let mut declares: Vec<(NodeIx, NodeIx)> = Vec::new();
        for def in &self.defs {
            let Slot::Node(ix) = self.table.slot[def.sym as usize] else { continue };
            let Some(sym) = self.table.syms[def.sym as usize].as_ref() else { continue };
            if sym.local {
                continue;
            }
            let mut child = ix;
            let mut path = self.table.paths.get(sym.shape.path);
            let mut at = sym.shape.path;
            let mut reached_top = true;
            while path.len() > 1 {
                path.pop();
                at = self.table.paths.parent(at);
                let pkey = (sym.package, at);
                let (p, fresh) = match self.by_canonical.get(&pkey) {
                    Some(&p) => (p, false),
                    // A delta reaches the rest of the graph as it is.
                    None if let Some(base) = &self.base
                        && let Some(b) = base.node(&id_of(&sym.parsed, &path, None)) =>
                    {
                        let p = stub(base.graph, b, &mut self.b, &mut self.kinds)?;
                        self.by_canonical.insert(pkey, p);
                        (p, false)
                    }
                    None => {
                        let ns =
                            matches!(path.last().and_then(|d| suffix(d)), Some(Suffix::Namespace | Suffix::Package));
                        let ty = path.last().and_then(|d| suffix(d)) == Some(Suffix::Type);
                        if !ns && !ty {
                            reached_top = false;
                            break;
                        }
                        let kind = if ns { "module" } else { "type" };
                        let name = path.last().map(|d| d.name.clone()).unwrap_or_default();
                        let fqn = fqn_of(&sym.parsed, &path, self.dialect.fqn_sep, self.dialect.rust);
                        let external = [EXTERNAL];
                        let p = self.b.merge_node(NodeSpec {
                            id: id_of(&sym.parsed, &path, None),
                            kind,
                            name: &name,
                            fqn: &fqn,
                            roles: if ty { &external } else { &[] },
                            ..Default::default()
                        })?;
                        self.by_canonical.insert(pkey, p);
                        note_kind(&mut self.kinds, p, kind);
                        (p, true)
                    }
                };
                declares.push((p, child));
                if !fresh {
                    reached_top = false;
                    break;
                }
                child = p;
            }
            // rust-analyzer's crate root `crate/` declares the top-level items.
            if self.dialect.rust && reached_top && path.len() == 1 && path[0].name != "crate" {
                let mut d = Descriptor::new();
                d.name = "crate".into();
                d.suffix = Suffix::Namespace.into();
                if let Some(root) = self.table.paths.find(Paths::EMPTY, &d)
                    && let Some(&r) = self.by_canonical.get(&(sym.package, root))
                {
                    declares.push((r, child));
                }
            }
        }
        for (p, c) in declares {
            if p != c {
                self.b.add_edge(p, "DECLARES", c)?;
            }
        }
        Ok(())
    }

    /// References in the document `di` (the second walk): CALLS,
    /// REFERENCES (and scip-python's base classes) from the innermost
    /// enclosing definition; a symbol referenced but defined elsewhere
    /// becomes an external node.
    pub(super) fn references(&mut self, di: usize, d: &Document) -> Result<(), GraphError> {
        let path = d.relative_path.as_str();
        // The second walk must meet the documents the first one did: an
        // index rewritten in between would give one document's references
        // another one's scopes.
        if self.paths.get(di).is_none_or(|p| p != path) {
            return Err(changed_while_read());
        }
        self.walked = di + 1;
        // This document's definitions: one run of `defs`, which is in
        // document order.
        let of_doc = |defs: &[Def]| {
            let start = defs.partition_point(|def| def.doc < di);
            let end = defs.partition_point(|def| def.doc <= di);
            start..end
        };
        let (own, parts) = (of_doc(&self.defs), of_doc(&self.parts));
        // Enclosing scopes of this document's node definitions (and of its
        // parts of symbols defined in earlier ones), outermost first.
        let mut scopes: Vec<(Range, NodeIx, Range)> = self.defs[own]
            .iter()
            .chain(&self.parts[parts])
            .filter_map(|def| Some((def.enclosing?, self.table.node(def.sym)?, def.range)))
            .collect();
        scopes.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
        for o in &d.occurrences {
            if o.symbol.is_empty() {
                // A call site name resolution could not bind: counted by name.
                if let Some(d) = o.diagnostics.iter().find(|d| d.code == super::UNRESOLVED) {
                    self.b.add_unresolved(&d.message, 1);
                }
                if o.diagnostics.iter().any(|d| d.code == super::UNREAD) {
                    let line = o.range.first().map_or(1, |&r| r.max(0) as u32 + 1);
                    self.b.add_unread(path, line);
                }
                continue;
            }
            if o.symbol_roles & (DEFINITION | IMPORT) != 0 {
                continue;
            }
            let at = |why: String| ScipError::Range { path: path.to_owned(), why };
            let Some(r) = range_of(o).map_err(at)? else { continue };
            let key = key_of(&o.symbol, path);
            let met = self.table.get(&key);
            if scip::symbol::is_local_symbol(&o.symbol) && met.and_then(|id| self.table.node(id)).is_none() {
                continue;
            }
            // The innermost scope containing the reference.
            let upto = scopes.partition_point(|s| s.0.start <= r.start);
            let Some(&(_, from, name_at)) = scopes[..upto].iter().rev().find(|s| s.0.contains(&r)) else {
                continue;
            };
            let id = match met {
                Some(id) => id,
                None => self.table.intern(&key)?,
            };
            let slot = self.table.slot[id as usize];
            let to = match slot {
                Slot::Node(t) | Slot::External(t) => t,
                Slot::Skipped => continue,
                Slot::Met | Slot::Defined => {
                    if !self.table.parsed(id, &o.symbol, path)? {
                        continue;
                    }
                    // Parsed: there.
                    let Some(sym) = self.table.syms[id as usize].as_ref() else { continue };
                    // A delta reaches the rest of the graph as it is.
                    if slot == Slot::Met
                        && let Some(base) = &self.base
                        && let Some(b) = base.node(&sym.id)
                    {
                        let t = stub(base.graph, b, &mut self.b, &mut self.kinds)?;
                        self.table.slot[id as usize] = Slot::External(t);
                        t
                    } else {
                        let node =
                            describe(self.table.info[id as usize].as_deref(), &self.dialect, sym, &self.table.paths);
                        if !keep(node.kind, sym) {
                            self.table.slot[id as usize] = Slot::Skipped;
                            continue;
                        }
                        let t = self.b.merge_node(NodeSpec { id: sym.id, roles: &[EXTERNAL], ..node.spec() })?;
                        self.table.slot[id as usize] = Slot::External(t);
                        note_kind(&mut self.kinds, t, node.kind);
                        t
                    }
                }
            };
            let (a, t) = (self.kinds[from as usize], self.kinds[to as usize]);
            // A definition's mention of itself is no edge, but a recursive
            // call is a call.
            if from == to && !(is_callable(a) && is_callable(t)) {
                continue;
            }
            // A field's, a constant's or a variable's initializer that calls
            // (`static final String X = lookUp();`) calls.
            let value = matches!(a, "field" | "constant" | "variable" | "property");
            let body = self.dialect.bodies_run && matches!(a, "class" | "module" | "object" | "struct" | "enum");
            let ty = if (is_callable(a) || value || body) && is_callable(t) {
                "CALLS"
            } else if self.dialect.python
                && a == "class"
                && t == "class"
                && r.start.0 == name_at.start.0
                && r.start > name_at.end
            {
                // `class Circle(Shape):` — scip-python records no
                // relationship for a base class; the header is the evidence.
                "EXTENDS"
            } else {
                "REFERENCES"
            };
            let how = if super::has_diagnostic(o, super::AMBIGUOUS) {
                crate::Derivation::Ambiguous
            } else {
                self.dialect.derivation
            };
            self.b.add_edge_as(from, ty, to, how)?;
        }
        Ok(())
    }

    /// Relationships, and rust-analyzer's impl descriptors: IMPLEMENTS,
    /// EXTENDS, OVERRIDES.
    pub(super) fn relationships(&mut self) -> Result<(), GraphError> {
        let table = &self.table;
        let kinds = &self.kinds;
        // Type nodes by their last name, and the symbol of each node (the
        // last definition of a node wins).
        let mut type_by_name: HashMap<&str, Vec<NodeIx>> = HashMap::default();
        let mut sym_at: HashMap<NodeIx, SymId> = HashMap::default();
        for def in &self.defs {
            let Some(ix) = table.node(def.sym) else { continue };
            sym_at.insert(ix, def.sym);
            if matches!(kinds[ix as usize], "trait" | "interface" | "class" | "struct" | "enum" | "type" | "union")
                && let Some(last) = table.syms[def.sym as usize].as_ref().and_then(|s| table.paths.last(s.shape.path))
            {
                type_by_name.entry(last.name.as_str()).or_default().push(ix);
            }
        }
        let mut relation_edges: Vec<(NodeIx, &'static str, NodeIx)> = Vec::new();
        // Relationships to symbols a delta's files neither define nor
        // reference: the base's nodes.
        let mut elsewhere: Vec<(NodeIx, SymId)> = Vec::new();
        for def in &self.defs {
            let Some(ix) = table.node(def.sym) else { continue };
            if let Some(info) = table.info[def.sym as usize].as_deref() {
                for &rel in &info.implements {
                    let Some(target) = table.target(rel) else {
                        if self.base.is_some() && table.slot[rel as usize] == Slot::Met {
                            elsewhere.push((ix, rel));
                        }
                        continue;
                    };
                    relation_edges.push((ix, relation_type(kinds[ix as usize], kinds[target as usize]), target));
                }
            }
            let Some(sym) = table.syms[def.sym as usize].as_ref() else { continue };
            // A member of `impl Trait for Type` OVERRIDES the trait's item of
            // the same name.
            if let (Some(tr), Some(last)) = (&sym.shape.impl_trait, table.paths.last(sym.shape.path))
                && let [t] = candidates(&type_by_name, tr, kinds, &["trait", "interface"])[..]
                && let Some(&tsym) = sym_at.get(&t)
                && let Some(ts) = table.syms[tsym as usize].as_ref()
            {
                if let Some(&owner) = self.by_canonical.get(&(sym.package, table.paths.parent(sym.shape.path))) {
                    relation_edges.push((owner, "IMPLEMENTS", t));
                }
                if let Some(path) = table.paths.find(ts.shape.path, last)
                    && let Some(&target) = self.by_canonical.get(&(ts.package, path))
                {
                    relation_edges.push((ix, "OVERRIDES", target));
                }
            }
        }
        // `impl Trait for Type` blocks: Type IMPLEMENTS Trait.
        for def in &self.defs {
            let Some(sym) = table.syms[def.sym as usize].as_ref() else { continue };
            if let Some((_, Some(tr))) = sym.shape.impl_block.as_deref()
                && let Some(&owner) = self.by_canonical.get(&(sym.package, sym.shape.path))
                && let [t] = candidates(&type_by_name, tr, kinds, &["trait", "interface"])[..]
            {
                relation_edges.push((owner, "IMPLEMENTS", t));
            }
        }
        if let Some(base) = &self.base
            && !elsewhere.is_empty()
        {
            let names = self.table.names();
            for (ix, rel) in elsewhere {
                let Some(&text) = names.get(&rel) else { continue };
                let Ok(parsed) = crate::scip_symbol::parse(text) else { continue };
                let Some(b) = base.node(&id_of(&parsed, &parsed.descriptors, None)) else { continue };
                let target = stub(base.graph, b, &mut self.b, &mut self.kinds)?;
                relation_edges.push((ix, relation_type(self.kinds[ix as usize], self.kinds[target as usize]), target));
            }
        }
        for (a, ty, t) in relation_edges {
            if a != t {
                self.b.add_edge_as(a, ty, t, self.dialect.derivation)?;
            }
        }
        Ok(())
    }
}

/// The index changed between the two walks over it.
fn changed_while_read() -> GraphError {
    GraphError::Format(
        "the SCIP index changed while it was read (an indexer rewriting it?); read it again when it is written".into(),
    )
}

impl Import<'_> {
    /// Checks, after the second walk, that it met every document the
    /// first one did.
    pub(super) fn walked_all(&self) -> Result<(), GraphError> {
        if self.walked == self.paths.len() { Ok(()) } else { Err(changed_while_read()) }
    }
}
