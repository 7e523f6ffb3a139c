//! The import, phase by phase, over one decoded index: each phase reads
//! what the ones before it left in [`Import`] and adds nodes or edges to
//! its builder.

use scip::types::descriptor::Suffix;
use scip::types::{Descriptor, Index, SymbolInformation};

use super::occurrences::{DEFINITION, Def, IMPORT, Range, TEST, enclosing_of, range_of};
use super::symbols::{
    ATTRIBUTE_ROLES, Dialect, Sym, attribute_role, candidates, canonical_path, describe, fqn_of, id_of, is_callable,
    is_test_path, keep, note_kind, parse, suffix,
};
use super::{HashMap, HashSet, Key, Options, ScipError, key_of};
use crate::builder::EXTERNAL;
use crate::{GraphBuilder, GraphError, NodeIx, NodeSpec};

/// An import under way.
pub(super) struct Import<'a> {
    index: &'a Index,
    dialect: Dialect,
    /// Every symbol string met, parsed once.
    syms: HashMap<Key<'a>, Sym>,
    /// Symbol information: documents first, then external symbols.
    info: HashMap<Key<'a>, &'a SymbolInformation>,
    /// Definitions, in index order.
    defs: Vec<Def<'a>>,
    /// The graph being built.
    pub(super) b: GraphBuilder,
    /// The node of each defined symbol kept as a node.
    node_of: HashMap<Key<'a>, NodeIx>,
    /// The node of each symbol referenced but defined elsewhere.
    external_of: HashMap<Key<'a>, NodeIx>,
    /// Each node's kind, by node index.
    kinds: Vec<&'static str>,
    /// Nodes by canonical descriptor path (enclosing namespaces included).
    by_canonical: HashMap<String, NodeIx>,
}

impl<'a> Import<'a> {
    /// An import of `index`, named by its project root (or `opts.name`).
    pub(super) fn new(index: &'a Index, opts: &Options) -> Import<'a> {
        let meta = index.metadata.as_ref();
        let tool = meta.and_then(|m| m.tool_info.as_ref()).map(|t| t.name.clone()).unwrap_or_default();
        let project = meta.map(|m| m.project_root.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_owned());
        let name = project.filter(|p| !p.is_empty()).unwrap_or_else(|| opts.name.clone());
        Import {
            index,
            dialect: Dialect::of(tool),
            syms: HashMap::default(),
            info: HashMap::default(),
            defs: Vec::new(),
            b: GraphBuilder::new(&name),
            node_of: HashMap::default(),
            external_of: HashMap::default(),
            kinds: Vec::new(),
            by_canonical: HashMap::default(),
        }
    }

    /// Symbol information, and every definition (the first definition of a
    /// symbol wins; rust-analyzer repeats some).
    pub(super) fn definitions(&mut self) -> Result<(), GraphError> {
        let index = self.index;
        // Symbol information: documents first, then external symbols.
        for d in &index.documents {
            for s in &d.symbols {
                if !s.symbol.is_empty() {
                    self.info.entry(key_of(&s.symbol, &d.relative_path)).or_insert(s);
                }
            }
        }
        for s in &index.external_symbols {
            if !s.symbol.is_empty() {
                self.info.entry(Key::Borrowed(&s.symbol)).or_insert(s);
            }
        }

        // Definitions, in index order (the first definition of a symbol wins;
        // rust-analyzer repeats some).
        let mut def_of: HashMap<Key<'a>, usize> = HashMap::default();
        for (di, d) in index.documents.iter().enumerate() {
            let path = d.relative_path.as_str();
            for o in &d.occurrences {
                if o.symbol.is_empty() || o.symbol_roles & DEFINITION == 0 {
                    continue;
                }
                let at = |why: String| ScipError::Range { path: path.to_owned(), why };
                let Some(range) = range_of(o).map_err(at)? else { continue };
                let key = key_of(&o.symbol, path);
                parse(&mut self.syms, &key, &o.symbol, Some(path))?;
                if def_of.contains_key(key.as_ref()) {
                    continue;
                }
                def_of.insert(key.clone(), self.defs.len());
                self.defs.push(Def {
                    key,
                    doc: di,
                    range,
                    enclosing: enclosing_of(o).map_err(at)?,
                    test_bit: o.symbol_roles & TEST != 0,
                });
            }
            // Symbols described in a document are defined there even without
            // a definition occurrence.
            for s in &d.symbols {
                let key = key_of(&s.symbol, path);
                if s.symbol.is_empty() || def_of.contains_key(key.as_ref()) {
                    continue;
                }
                parse(&mut self.syms, &key, &s.symbol, Some(path))?;
                def_of.insert(key.clone(), self.defs.len());
                self.defs.push(Def {
                    key,
                    doc: di,
                    range: Range { start: (-1, 0), end: (-1, 0) },
                    enclosing: None,
                    test_bit: false,
                });
            }
        }
        Ok(())
    }

    /// A node per definition that is kept, with its roles (test, and those
    /// its attributes give).
    pub(super) fn nodes(&mut self) -> Result<(), GraphError> {
        let index = self.index;
        // Attribute evidence per document: (line, role) of attribute references.
        // Each symbol string is judged once.
        let mut attr_lines: Vec<Vec<(i32, &'static str)>> = vec![Vec::new(); index.documents.len()];
        let mut role_of: HashMap<&str, Option<&'static str>> = HashMap::default();
        for (di, d) in index.documents.iter().enumerate() {
            for o in &d.occurrences {
                if o.symbol.is_empty() || o.symbol_roles & DEFINITION != 0 || scip::symbol::is_local_symbol(&o.symbol) {
                    continue;
                }
                // Only a symbol whose last name is an attribute's is parsed.
                let last = o.symbol.trim_end_matches(['.', '(', ')', ':', '!', '#', '/']);
                if !ATTRIBUTE_ROLES.iter().any(|(_, name, _)| last.ends_with(name)) {
                    continue;
                }
                let role = *role_of
                    .entry(o.symbol.as_str())
                    .or_insert_with(|| crate::scip_symbol::parse(&o.symbol).ok().and_then(|sym| attribute_role(&sym)));
                if let Some(role) = role
                    && let Ok(Some(r)) = range_of(o)
                {
                    attr_lines[di].push((r.start.0, role));
                }
            }
        }
        drop(role_of);

        for def in &self.defs {
            let sym = &self.syms[&def.key];
            let node = describe(&self.info, &self.dialect, &def.key, sym);
            if !keep(node.kind, sym) {
                continue;
            }
            let d = &index.documents[def.doc];
            let mut roles: Vec<&str> = Vec::new();
            if def.test_bit || is_test_path(&d.relative_path) {
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
            for &(l, role) in &attr_lines[def.doc] {
                if (first..line).contains(&l) && !roles.contains(&role) {
                    roles.push(role);
                }
            }
            let ix = self.b.merge_node(NodeSpec {
                id: sym.id,
                file: &d.relative_path,
                line: if line >= 0 { line as u32 + 1 } else { 0 },
                roles: &roles,
                ..node.spec()
            })?;
            self.node_of.insert(def.key.clone(), ix);
            note_kind(&mut self.kinds, ix, node.kind);
        }
        Ok(())
    }

    /// Namespaces that enclose a node but have no definition of their own,
    /// and DECLARES along the descriptor hierarchy.
    pub(super) fn declares(&mut self) -> Result<(), GraphError> {
        // Namespaces that enclose a node but have no definition of their own,
        // and DECLARES along the descriptor hierarchy.
        for (key, &ix) in &self.node_of {
            if let Some(s) = self.syms.get(key).filter(|s| !s.local) {
                self.by_canonical.insert(canonical_path(&s.parsed, &s.shape.path), ix);
            }
        }
        let mut declares: Vec<(NodeIx, NodeIx)> = Vec::new();
        let node_keys: Vec<(Key<'_>, NodeIx)> = self.node_of.iter().map(|(k, &v)| (k.clone(), v)).collect();
        for (key, ix) in node_keys {
            let sym = &self.syms[&key];
            if sym.local {
                continue;
            }
            let mut child = ix;
            let mut path = sym.shape.path.clone();
            let mut reached_top = true;
            while path.len() > 1 {
                path.pop();
                let pkey = canonical_path(&sym.parsed, &path);
                let (p, fresh) = match self.by_canonical.get(&pkey) {
                    Some(&p) => (p, false),
                    None => {
                        let ns = matches!(path.last().and_then(suffix), Some(Suffix::Namespace | Suffix::Package));
                        let ty = path.last().and_then(suffix) == Some(Suffix::Type);
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
                if let Some(&r) = self.by_canonical.get(&canonical_path(&sym.parsed, &[d])) {
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

    /// References: CALLS, REFERENCES (and scip-python's base classes) from
    /// the innermost enclosing definition.
    pub(super) fn references(&mut self) -> Result<(), GraphError> {
        let index = self.index;
        // References: attributed to the innermost enclosing definition.
        let mut skipped: HashSet<Key<'_>> = HashSet::default();
        let mut defs_in: Vec<Vec<&Def<'_>>> = vec![Vec::new(); index.documents.len()];
        for def in &self.defs {
            defs_in[def.doc].push(def);
        }
        for (di, d) in index.documents.iter().enumerate() {
            let path = d.relative_path.as_str();
            // Enclosing scopes of this document's node definitions, outermost first.
            let mut scopes: Vec<(Range, NodeIx, Range)> = defs_in[di]
                .iter()
                .filter_map(|def| Some((def.enclosing?, *self.node_of.get(&def.key)?, def.range)))
                .collect();
            scopes.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
            for o in &d.occurrences {
                if o.symbol.is_empty() || o.symbol_roles & (DEFINITION | IMPORT) != 0 {
                    continue;
                }
                let at = |why: String| ScipError::Range { path: path.to_owned(), why };
                let Some(r) = range_of(o).map_err(at)? else { continue };
                if scip::symbol::is_local_symbol(&o.symbol)
                    && !self.node_of.contains_key(key_of(&o.symbol, path).as_ref())
                {
                    continue;
                }
                // The innermost scope containing the reference.
                let upto = scopes.partition_point(|s| s.0.start <= r.start);
                let Some(&(_, from, name_at)) = scopes[..upto].iter().rev().find(|s| s.0.contains(&r)) else {
                    continue;
                };
                let key = key_of(&o.symbol, path);
                let to = match self.node_of.get(key.as_ref()).or_else(|| self.external_of.get(key.as_ref())) {
                    Some(&t) => t,
                    None if skipped.contains(key.as_ref()) => continue,
                    None => {
                        parse(&mut self.syms, &key, &o.symbol, Some(path))?;
                        let sym = &self.syms[&key];
                        let node = describe(&self.info, &self.dialect, &key, sym);
                        if !keep(node.kind, sym) {
                            skipped.insert(key);
                            continue;
                        }
                        let t = self.b.merge_node(NodeSpec { id: sym.id, roles: &[EXTERNAL], ..node.spec() })?;
                        self.external_of.insert(key, t);
                        note_kind(&mut self.kinds, t, node.kind);
                        t
                    }
                };
                if from == to {
                    continue;
                }
                let (a, t) = (self.kinds[from as usize], self.kinds[to as usize]);
                let ty = if is_callable(a) && is_callable(t) {
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
                self.b.add_edge_as(from, ty, to, self.dialect.derivation)?;
            }
        }
        Ok(())
    }

    /// Relationships, and rust-analyzer's impl descriptors: IMPLEMENTS,
    /// EXTENDS, OVERRIDES.
    pub(super) fn relationships(&mut self) -> Result<(), GraphError> {
        // Relationships, and rust-analyzer's impl descriptors.
        let ix_of = |key: &str| self.node_of.get(key).or_else(|| self.external_of.get(key)).copied();
        let mut type_by_name: HashMap<&str, Vec<NodeIx>> = HashMap::default();
        for (key, &ix) in &self.node_of {
            if matches!(self.kinds[ix as usize], "trait" | "interface" | "class" | "struct" | "enum" | "type" | "union")
                && let Some(last) = self.syms[key].shape.path.last()
            {
                type_by_name.entry(last.name.as_str()).or_default().push(ix);
            }
        }
        let key_at: HashMap<NodeIx, &str> = self.node_of.iter().map(|(k, &v)| (v, k.as_ref())).collect();
        let mut relation_edges: Vec<(NodeIx, &'static str, NodeIx)> = Vec::new();
        for (key, &ix) in &self.node_of {
            if let Some(si) = self.info.get(key) {
                for rel in &si.relationships {
                    if !rel.is_implementation {
                        continue;
                    }
                    let Some(target) = ix_of(&rel.symbol) else { continue };
                    let (a, t) = (self.kinds[ix as usize], self.kinds[target as usize]);
                    let ty = if is_callable(a) && is_callable(t) {
                        "OVERRIDES"
                    } else if matches!(t, "interface" | "trait") {
                        "IMPLEMENTS"
                    } else {
                        "EXTENDS"
                    };
                    relation_edges.push((ix, ty, target));
                }
            }
            let sym = &self.syms[key];
            // A member of `impl Trait for Type` OVERRIDES the trait's item of
            // the same name.
            if let (Some(tr), Some(last)) = (&sym.shape.impl_trait, sym.shape.path.last())
                && let [t] = candidates(&type_by_name, tr, &self.kinds, &["trait", "interface"])[..]
                && let Some(tkey) = key_at.get(&t)
            {
                let owner_path = &sym.shape.path[..sym.shape.path.len() - 1];
                if let Some(&owner) = self.by_canonical.get(&canonical_path(&sym.parsed, owner_path)) {
                    relation_edges.push((owner, "IMPLEMENTS", t));
                }
                let ts = &self.syms[*tkey];
                let mut path = ts.shape.path.clone();
                path.push(last.clone());
                if let Some(&target) = self.by_canonical.get(&canonical_path(&ts.parsed, &path)) {
                    relation_edges.push((ix, "OVERRIDES", target));
                }
            }
        }
        // `impl Trait for Type` blocks: Type IMPLEMENTS Trait.
        for def in &self.defs {
            let sym = &self.syms[&def.key];
            if let Some((_, Some(tr))) = &sym.shape.impl_block
                && let Some(&owner) = self.by_canonical.get(&canonical_path(&sym.parsed, &sym.shape.path))
                && let [t] = candidates(&type_by_name, tr, &self.kinds, &["trait", "interface"])[..]
            {
                relation_edges.push((owner, "IMPLEMENTS", t));
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
