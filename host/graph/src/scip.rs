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

use std::collections::HashMap as StdHashMap;

/// Hash maps keyed by symbol strings: millions of lookups, so a fast hash
/// (the keys come from the index, not from an adversary who could flood
/// them, and the index is already the whole input).
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

use protobuf::Message;
use scip::types::descriptor::Suffix;
use scip::types::symbol_information::Kind as ScipKind;
use scip::types::{
    Descriptor, Index, MultiLineRange, Occurrence, SingleLineRange, Symbol, SymbolInformation, occurrence,
};
use sha2::{Digest, Sha256};

use super::builder::EXTERNAL;
use super::{Graph, GraphBuilder, GraphError, NodeIx, NodeSpec, RawId};

/// Import options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The graph's name when the index does not give a project.
    pub name: String,
}

const DEFINITION: i32 = 1;
const IMPORT: i32 = 2;
const TEST: i32 = 32;

/// A source range: (line, character) start and end, 0-based, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Range {
    start: (i32, i32),
    end: (i32, i32),
}

impl Range {
    fn contains(&self, other: &Range) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

fn packed(v: &[i32]) -> Result<Option<Range>, String> {
    match *v {
        [] => Ok(None),
        [l, s, e] => Ok(Some(Range { start: (l, s), end: (l, e) })),
        [l, s, el, e] => Ok(Some(Range { start: (l, s), end: (el, e) })),
        _ => Err(format!("a range has {} elements (3 or 4 expected)", v.len())),
    }
}

impl From<&SingleLineRange> for Range {
    fn from(r: &SingleLineRange) -> Range {
        Range { start: (r.line, r.start_character), end: (r.line, r.end_character) }
    }
}

impl From<&MultiLineRange> for Range {
    fn from(r: &MultiLineRange) -> Range {
        Range { start: (r.start_line, r.start_character), end: (r.end_line, r.end_character) }
    }
}

/// The occurrence's range: the typed fields when present, else the
/// deprecated packed `range`.
fn range_of(o: &Occurrence) -> Result<Option<Range>, String> {
    use occurrence::Typed_range as T;
    match &o.typed_range {
        Some(T::SingleLineRange(r)) => Ok(Some(r.into())),
        Some(T::MultiLineRange(r)) => Ok(Some(r.into())),
        _ => packed(&o.range),
    }
}

/// The same for the enclosing range.
fn enclosing_of(o: &Occurrence) -> Result<Option<Range>, String> {
    use occurrence::Typed_enclosing_range as T;
    match &o.typed_enclosing_range {
        Some(T::SingleLineEnclosingRange(r)) => Ok(Some(r.into())),
        Some(T::MultiLineEnclosingRange(r)) => Ok(Some(r.into())),
        _ => packed(&o.enclosing_range),
    }
}

fn suffix(d: &Descriptor) -> Option<Suffix> {
    d.suffix.enum_value().ok()
}

/// The id of a symbol with `path` as its descriptors: SHA-256 of its
/// canonical form without the package version, first 20 bytes; `local`
/// symbols also hash their document.
fn id_of(sym: &Symbol, path: &[Descriptor], local_doc: Option<&str>) -> RawId {
    let canonical = canonical_path(sym, path);
    let mut h = Sha256::new();
    if let Some(doc) = local_doc {
        h.update(doc.as_bytes());
        h.update([0]);
    }
    h.update(canonical.as_bytes());
    let digest = h.finalize();
    let mut id = [0u8; 20];
    id.copy_from_slice(&digest[..20]);
    id
}

/// What a descriptor chain says about a symbol.
struct Shape {
    /// Descriptors with rust-analyzer impl blocks folded into their type:
    /// `impl#[Circle][Shape]area().` reads as `Circle#area().`.
    path: Vec<Descriptor>,
    /// For an impl member: the trait implemented (`Shape`), by name.
    impl_trait: Option<String>,
    /// For an impl block itself (not a node): (self type, trait).
    impl_block: Option<(String, Option<String>)>,
}

fn shape(mut ds: Vec<Descriptor>) -> Shape {
    let mut path = Vec::with_capacity(ds.len());
    let mut impl_trait = None;
    let mut impl_block = None;
    let mut i = 0;
    while i < ds.len() {
        let d = &ds[i];
        let is_impl = suffix(d) == Some(Suffix::Type) && d.name == "impl";
        if is_impl {
            // impl#[SelfType][Trait]? — type parameters name the parts.
            let mut params = Vec::new();
            let mut j = i + 1;
            while j < ds.len() && suffix(&ds[j]) == Some(Suffix::TypeParameter) {
                params.push(ds[j].name.clone());
                j += 1;
            }
            if let Some(self_ty) = params.first() {
                let mut t = Descriptor::new();
                t.name = self_ty.clone();
                t.suffix = Suffix::Type.into();
                path.push(t);
                let tr = params.get(1).cloned();
                if j == ds.len() {
                    impl_block = Some((self_ty.clone(), tr));
                } else {
                    impl_trait = tr;
                }
                i = j;
                continue;
            }
        }
        // scip-typescript's parameter properties: `Circle#<constructor>().(radius)`
        // is the field `Circle#radius.`.
        if suffix(d) == Some(Suffix::Method)
            && d.name == "<constructor>"
            && i + 2 == ds.len()
            && suffix(&ds[i + 1]) == Some(Suffix::Parameter)
        {
            let mut t = Descriptor::new();
            t.name = ds[i + 1].name.clone();
            t.suffix = Suffix::Term.into();
            path.push(t);
            break;
        }
        // scip-python: `pkg.mod/__init__:` is the module `pkg.mod/` itself.
        if suffix(d) == Some(Suffix::Meta) && d.name == "__init__" && i + 1 == ds.len() && !path.is_empty() {
            break;
        }
        // scip-python doubles annotated module variables: `REGISTRY.REGISTRY.`.
        if let Some(prev) = path.last()
            && suffix(d) == Some(Suffix::Term)
            && suffix(prev) == Some(Suffix::Term)
            && prev.name == d.name
        {
            i += 1;
            continue;
        }
        path.push(std::mem::take(&mut ds[i]));
        i += 1;
    }
    Shape { path, impl_trait, impl_block }
}

fn kind_name(k: ScipKind) -> Option<&'static str> {
    use ScipKind as K;
    Some(match k {
        K::Class | K::SingletonClass | K::Object => "class",
        K::Struct => "struct",
        K::Trait | K::Protocol | K::TypeClass | K::Mixin => "trait",
        K::Interface => "interface",
        K::Enum => "enum",
        K::EnumMember => "variant",
        K::Union => "union",
        K::Function => "function",
        K::Method
        | K::AbstractMethod
        | K::StaticMethod
        | K::TraitMethod
        | K::ProtocolMethod
        | K::PureVirtualMethod
        | K::TypeClassMethod
        | K::SingletonMethod
        | K::MethodSpecification
        | K::Getter
        | K::Setter
        | K::Accessor => "method",
        K::Constructor => "constructor",
        K::Field | K::StaticField | K::StaticDataMember => "field",
        K::Property | K::StaticProperty => "property",
        K::Constant => "constant",
        K::Variable | K::StaticVariable => "variable",
        K::Module | K::Namespace | K::Package | K::PackageObject | K::Library | K::File => "module",
        K::Macro => "macro",
        K::Type | K::TypeAlias | K::AssociatedType => "type",
        K::TypeParameter => "type_parameter",
        K::Parameter | K::SelfParameter | K::ThisParameter | K::ParameterLabel => "parameter",
        _ => return None,
    })
}

/// The kind a signature's first words name (`class Foo`, `interface Shape`,
/// `def area(self)`, `(method) Circle.area(): number`).
fn kind_from_signature(sig: &str, member: bool) -> Option<&'static str> {
    // Python signatures start with their decorators.
    let line = sig.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('@'))?;
    let mut words = line
        .split_whitespace()
        .filter(|w| !matches!(*w, "export" | "declare" | "abstract" | "async" | "default" | "static" | "readonly"));
    Some(match words.next()? {
        "class" | "(class)" => "class",
        "interface" => "interface",
        "enum" => "enum",
        "(enum" => "variant",
        "type" => "type",
        "function" | "(function)" => "function",
        "def" if member => "method",
        "def" => "function",
        "(method)" | "method" => "method",
        "constructor" | "(constructor)" => "constructor",
        "(property)" | "property" => "property",
        "let" | "var" | "(variable)" | "const" | "(constant)"
            if line.split_once(':').is_some_and(|(_, ty)| ty.trim_start().starts_with('(') && ty.contains("=>")) =>
        {
            "function"
        }
        "const" | "(constant)" => "constant",
        "let" | "var" | "(variable)" => "variable",
        "module" | "(module)" | "namespace" => "module",
        "(parameter)" => "parameter",
        _ => return None,
    })
}

/// The kind the descriptors say: `/` module, `#` type, `().` method under a
/// type and function elsewhere, `.` field under a type and variable
/// elsewhere, `!` macro.
fn kind_from_descriptors(path: &[Descriptor], rust: bool) -> &'static str {
    let parent_is_type = path.len() >= 2 && suffix(&path[path.len() - 2]) == Some(Suffix::Type);
    match path.last().and_then(suffix) {
        Some(Suffix::Namespace | Suffix::Package) => "module",
        // rust-analyzer always gives kinds; the others name classes `#`.
        Some(Suffix::Type) if rust => "type",
        Some(Suffix::Type) => "class",
        Some(Suffix::Method) if parent_is_type => "method",
        Some(Suffix::Method) => "function",
        Some(Suffix::Term) if parent_is_type => "field",
        Some(Suffix::Term) => "variable",
        Some(Suffix::Macro) => "macro",
        Some(Suffix::TypeParameter) => "type_parameter",
        Some(Suffix::Parameter) => "parameter",
        Some(Suffix::Local) => "local",
        // Attributes and derives (`core … macros/builtin/test:`).
        Some(Suffix::Meta) => "meta",
        _ => "symbol",
    }
}

fn is_callable(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "constructor" | "macro")
}

/// Splits documentation into (signature, doc): an element that is one
/// fenced code block is a signature (the first one kept), the rest is prose.
fn split_docs(docs: &[String]) -> (String, String) {
    let mut sig = String::new();
    let mut prose: Vec<&str> = Vec::new();
    for d in docs {
        let t = d.trim();
        if let Some(body) = fenced(t).or_else(|| t.starts_with("(module) ").then_some(t)) {
            if sig.is_empty() {
                sig = body.trim().to_owned();
            }
        } else if !t.is_empty() {
            prose.push(t);
        }
    }
    (sig, prose.join("\n\n"))
}

/// The inside of a text that is exactly one ``` fenced block.
fn fenced(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("```")?;
    let body = rest.strip_suffix("```")?;
    let nl = body.find('\n')?;
    let inner = &body[nl + 1..];
    (!inner.contains("\n```")).then_some(inner)
}

fn is_test_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    let file = p.rsplit('/').next().unwrap_or(&p);
    p.split('/').any(|seg| matches!(seg, "tests" | "test" | "__tests__" | "spec"))
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// Roles an attribute or decorator right above a definition gives it:
/// (the attribute's package names, its last descriptor name, the role).
const ATTRIBUTE_ROLES: &[(&[&str], &str, &str)] = &[
    (&[], "test", "test"),
    (&["pytest"], "fixture", "test"),
    (&["fastapi", "flask", "starlette"], "get", "handler"),
    (&["fastapi", "flask", "starlette"], "post", "handler"),
    (&["fastapi", "flask", "starlette"], "put", "handler"),
    (&["fastapi", "flask", "starlette"], "delete", "handler"),
    (&["fastapi", "flask", "starlette"], "patch", "handler"),
    (&["fastapi", "flask", "starlette"], "route", "handler"),
    (&["fastapi", "flask", "starlette"], "api_route", "handler"),
    (&["@nestjs/common"], "Controller", "controller"),
    (&["@nestjs/common"], "Injectable", "service"),
];

fn attribute_role(sym: &Symbol) -> Option<&'static str> {
    let last = sym.descriptors.last()?;
    let package = sym.package.as_ref().map(|p| p.name.as_str()).unwrap_or("");
    // Without a package to check, only an attribute counts: rust-analyzer
    // writes `#[test]` as a reference to `core … macros/builtin/test:`.
    let macro_ = matches!(suffix(last), Some(Suffix::Macro | Suffix::Meta));
    ATTRIBUTE_ROLES
        .iter()
        .find(|(pkgs, name, _)| *name == last.name && if pkgs.is_empty() { macro_ } else { pkgs.contains(&package) })
        .map(|(_, _, role)| *role)
}

/// A symbol met in the index, parsed once.
struct Sym {
    parsed: Symbol,
    shape: Shape,
    id: RawId,
    local: bool,
}

/// A map key for a symbol: a global's own string, borrowed from the
/// decoded index; a local's document-qualified string.
type Key<'a> = std::borrow::Cow<'a, str>;

/// What a node says about its symbol (see `describe` in [`import`]).
struct Described {
    kind: &'static str,
    name: String,
    fqn: String,
    signature: String,
    doc: String,
}

impl Described {
    /// The spec without id, place or roles.
    fn spec(&self) -> NodeSpec<'_> {
        NodeSpec {
            kind: self.kind,
            name: &self.name,
            fqn: &self.fqn,
            doc: &self.doc,
            signature: &self.signature,
            ..Default::default()
        }
    }
}

/// One definition: where, and what it encloses.
struct Def<'a> {
    key: Key<'a>,
    doc: usize,
    range: Range,
    enclosing: Option<Range>,
    test_bit: bool,
}

fn parse<'a>(syms: &mut HashMap<Key<'a>, Sym>, key: &Key<'a>, text: &str, doc: Option<&str>) -> Result<(), GraphError> {
    if syms.contains_key(key.as_ref()) {
        return Ok(());
    }
    let parsed = super::scip_symbol::parse(text).map_err(|e| {
        GraphError::Scip(format!("{}: symbol `{text}` does not parse: {e}", doc.unwrap_or("external symbols")))
    })?;
    let local = scip::symbol::is_local_symbol(text);
    let id = id_of(&parsed, &parsed.descriptors, local.then_some(doc.unwrap_or("")));
    // The descriptors move into the shape: every later use reads the
    // folded path; `parsed` keeps the scheme and package.
    let mut parsed = parsed;
    let shape = shape(std::mem::take(&mut parsed.descriptors));
    syms.insert(key.clone(), Sym { parsed, shape, id, local });
    Ok(())
}

/// Imports a SCIP index (protobuf bytes).
pub fn import(bytes: &[u8], opts: &Options) -> Result<Graph, GraphError> {
    let mut phase = Phases::default();
    let index = Index::parse_from_bytes(bytes)
        .map_err(|e| GraphError::Scip(format!("the protobuf does not parse ({e}); is the file truncated?")))?;
    if index.special_fields.unknown_fields().iter().next().is_some() {
        return Err(GraphError::Scip(
            "it has fields a SCIP index does not have: not a SCIP index, or one from a newer SCIP schema".into(),
        ));
    }
    let meta = index.metadata.as_ref();
    if let Some(m) = meta
        && let Err(v) = m.version.enum_value()
    {
        return Err(GraphError::Scip(format!(
            "SCIP protocol version {v}: this signpost reads version 0; upgrade signpost or re-index with an older indexer"
        )));
    }
    if meta.is_none() && index.documents.is_empty() {
        return Err(GraphError::Scip("no metadata and no documents: not a SCIP index".into()));
    }
    let tool = meta.and_then(|m| m.tool_info.as_ref()).map(|t| t.name.clone()).unwrap_or_default();
    let rust = tool == "rust-analyzer";
    let python = tool == "scip-python";
    let fqn_sep = if rust { "::" } else { "." };

    phase.done("protobuf parse");
    // Every symbol string, parsed once.
    let mut syms: HashMap<Key<'_>, Sym> = HashMap::default();
    // Locals are keyed by document too; globals by their symbol string,
    // borrowed (the reference loop meets millions of them).
    fn key_of<'a>(sym: &'a str, doc: &str) -> Key<'a> {
        if scip::symbol::is_local_symbol(sym) { format!("{doc}\0{sym}").into() } else { sym.into() }
    }

    // Symbol information: documents first, then external symbols.
    let mut info: HashMap<Key<'_>, &SymbolInformation> = HashMap::default();
    for d in &index.documents {
        for s in &d.symbols {
            if !s.symbol.is_empty() {
                info.entry(key_of(&s.symbol, &d.relative_path)).or_insert(s);
            }
        }
    }
    for s in &index.external_symbols {
        if !s.symbol.is_empty() {
            info.entry(Key::Borrowed(&s.symbol)).or_insert(s);
        }
    }

    // Definitions, in index order (the first definition of a symbol wins;
    // rust-analyzer repeats some).
    let mut defs: Vec<Def<'_>> = Vec::new();
    let mut def_of: HashMap<Key<'_>, usize> = HashMap::default();
    for (di, d) in index.documents.iter().enumerate() {
        let path = d.relative_path.as_str();
        for o in &d.occurrences {
            if o.symbol.is_empty() || o.symbol_roles & DEFINITION == 0 {
                continue;
            }
            let at = |e: String| GraphError::Scip(format!("{path}: {e}"));
            let Some(range) = range_of(o).map_err(at)? else { continue };
            let key = key_of(&o.symbol, path);
            parse(&mut syms, &key, &o.symbol, Some(path))?;
            if def_of.contains_key(key.as_ref()) {
                continue;
            }
            def_of.insert(key.clone(), defs.len());
            defs.push(Def {
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
            parse(&mut syms, &key, &s.symbol, Some(path))?;
            def_of.insert(key.clone(), defs.len());
            defs.push(Def {
                key,
                doc: di,
                range: Range { start: (-1, 0), end: (-1, 0) },
                enclosing: None,
                test_bit: false,
            });
        }
    }

    let project = meta.map(|m| m.project_root.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_owned());
    let name = project.filter(|p| !p.is_empty()).unwrap_or_else(|| opts.name.clone());
    let mut b = GraphBuilder::new(&name);
    let mut node_of: HashMap<Key<'_>, NodeIx> = HashMap::default();
    let mut kinds: Vec<&'static str> = Vec::new();

    phase.done("definitions");
    // What a symbol's node says: kind, names, signature and doc, from its
    // SymbolInformation when there is one (docs split once), for
    // definitions and external references alike.
    let describe = |key: &str, sym: &Sym| -> Described {
        let si = info.get(key).copied();
        let (mut signature, doc) = si.map(|s| split_docs(&s.documentation)).unwrap_or_default();
        if signature.is_empty()
            && let Some(s) = si
        {
            signature = s.signature_documentation.text.clone();
        }
        let path = &sym.shape.path;
        let member = path.len() >= 2 && suffix(&path[path.len() - 2]) == Some(Suffix::Type);
        let kind = si
            .and_then(|s| s.kind.enum_value().ok())
            .and_then(kind_name)
            .or_else(|| kind_from_signature(&signature, member))
            .unwrap_or_else(|| kind_from_descriptors(path, rust));
        Described {
            kind,
            name: display_name(si, &sym.parsed, path, &tool),
            fqn: fqn_of(&sym.parsed, path, fqn_sep, rust),
            signature,
            doc,
        }
    };
    let keep = |kind: &str, sym: &Sym| {
        !matches!(kind, "parameter" | "type_parameter" | "local" | "meta")
            && sym.shape.impl_block.is_none()
            && !(sym.local && matches!(kind, "variable" | "constant" | "field" | "property" | "symbol"))
    };

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
                .or_insert_with(|| super::scip_symbol::parse(&o.symbol).ok().and_then(|sym| attribute_role(&sym)));
            if let Some(role) = role
                && let Ok(Some(r)) = range_of(o)
            {
                attr_lines[di].push((r.start.0, role));
            }
        }
    }
    drop(role_of);

    for def in &defs {
        let sym = &syms[&def.key];
        let node = describe(&def.key, sym);
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
        let ix = b.merge_node(NodeSpec {
            id: sym.id,
            file: &d.relative_path,
            line: if line >= 0 { line as u32 + 1 } else { 0 },
            roles: &roles,
            ..node.spec()
        })?;
        node_of.insert(def.key.clone(), ix);
        note_kind(&mut kinds, ix, node.kind);
    }

    phase.done("nodes");
    // Namespaces that enclose a node but have no definition of their own,
    // and DECLARES along the descriptor hierarchy.
    let mut by_canonical: HashMap<String, NodeIx> = HashMap::default();
    for (key, &ix) in &node_of {
        if let Some(s) = syms.get(key).filter(|s| !s.local) {
            by_canonical.insert(canonical_path(&s.parsed, &s.shape.path), ix);
        }
    }
    let mut declares: Vec<(NodeIx, NodeIx)> = Vec::new();
    let node_keys: Vec<(Key<'_>, NodeIx)> = node_of.iter().map(|(k, &v)| (k.clone(), v)).collect();
    for (key, ix) in node_keys {
        let sym = &syms[&key];
        if sym.local {
            continue;
        }
        let mut child = ix;
        let mut path = sym.shape.path.clone();
        let mut reached_top = true;
        while path.len() > 1 {
            path.pop();
            let pkey = canonical_path(&sym.parsed, &path);
            let (p, fresh) = match by_canonical.get(&pkey) {
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
                    let fqn = fqn_of(&sym.parsed, &path, fqn_sep, rust);
                    let external = [EXTERNAL];
                    let p = b.merge_node(NodeSpec {
                        id: id_of(&sym.parsed, &path, None),
                        kind,
                        name: &name,
                        fqn: &fqn,
                        roles: if ty { &external } else { &[] },
                        ..Default::default()
                    })?;
                    by_canonical.insert(pkey, p);
                    note_kind(&mut kinds, p, kind);
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
        if rust && reached_top && path.len() == 1 && path[0].name != "crate" {
            let mut d = Descriptor::new();
            d.name = "crate".into();
            d.suffix = Suffix::Namespace.into();
            if let Some(&r) = by_canonical.get(&canonical_path(&sym.parsed, &[d])) {
                declares.push((r, child));
            }
        }
    }
    for (p, c) in declares {
        if p != c {
            b.add_edge(p, "DECLARES", c)?;
        }
    }

    phase.done("declares");
    // References: attributed to the innermost enclosing definition.
    let mut external_of: HashMap<Key<'_>, NodeIx> = HashMap::default();
    let mut skipped: HashSet<Key<'_>> = HashSet::default();
    let mut defs_in: Vec<Vec<&Def<'_>>> = vec![Vec::new(); index.documents.len()];
    for def in &defs {
        defs_in[def.doc].push(def);
    }
    for (di, d) in index.documents.iter().enumerate() {
        let path = d.relative_path.as_str();
        // Enclosing scopes of this document's node definitions, outermost first.
        let mut scopes: Vec<(Range, NodeIx, Range)> =
            defs_in[di].iter().filter_map(|def| Some((def.enclosing?, *node_of.get(&def.key)?, def.range))).collect();
        scopes.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
        for o in &d.occurrences {
            if o.symbol.is_empty() || o.symbol_roles & (DEFINITION | IMPORT) != 0 {
                continue;
            }
            let at = |e: String| GraphError::Scip(format!("{path}: {e}"));
            let Some(r) = range_of(o).map_err(at)? else { continue };
            if scip::symbol::is_local_symbol(&o.symbol) && !node_of.contains_key(key_of(&o.symbol, path).as_ref()) {
                continue;
            }
            // The innermost scope containing the reference.
            let upto = scopes.partition_point(|s| s.0.start <= r.start);
            let Some(&(_, from, name_at)) = scopes[..upto].iter().rev().find(|s| s.0.contains(&r)) else { continue };
            let key = key_of(&o.symbol, path);
            let to = match node_of.get(key.as_ref()).or_else(|| external_of.get(key.as_ref())) {
                Some(&t) => t,
                None if skipped.contains(key.as_ref()) => continue,
                None => {
                    parse(&mut syms, &key, &o.symbol, Some(path))?;
                    let sym = &syms[&key];
                    let node = describe(&key, sym);
                    if !keep(node.kind, sym) {
                        skipped.insert(key);
                        continue;
                    }
                    let t = b.merge_node(NodeSpec { id: sym.id, roles: &[EXTERNAL], ..node.spec() })?;
                    external_of.insert(key, t);
                    note_kind(&mut kinds, t, node.kind);
                    t
                }
            };
            if from == to {
                continue;
            }
            let (a, t) = (kinds[from as usize], kinds[to as usize]);
            let ty = if is_callable(a) && is_callable(t) {
                "CALLS"
            } else if python && a == "class" && t == "class" && r.start.0 == name_at.start.0 && r.start > name_at.end {
                // `class Circle(Shape):` — scip-python records no
                // relationship for a base class; the header is the evidence.
                "EXTENDS"
            } else {
                "REFERENCES"
            };
            b.add_edge(from, ty, to)?;
        }
    }

    phase.done("references");
    // Relationships, and rust-analyzer's impl descriptors.
    let ix_of = |key: &str| node_of.get(key).or_else(|| external_of.get(key)).copied();
    let mut type_by_name: HashMap<&str, Vec<NodeIx>> = HashMap::default();
    for (key, &ix) in &node_of {
        if matches!(kinds[ix as usize], "trait" | "interface" | "class" | "struct" | "enum" | "type" | "union")
            && let Some(last) = syms[key].shape.path.last()
        {
            type_by_name.entry(last.name.as_str()).or_default().push(ix);
        }
    }
    let key_at: HashMap<NodeIx, &str> = node_of.iter().map(|(k, &v)| (v, k.as_ref())).collect();
    let mut relation_edges: Vec<(NodeIx, &'static str, NodeIx)> = Vec::new();
    for (key, &ix) in &node_of {
        if let Some(si) = info.get(key) {
            for rel in &si.relationships {
                if !rel.is_implementation {
                    continue;
                }
                let Some(target) = ix_of(&rel.symbol) else { continue };
                let (a, t) = (kinds[ix as usize], kinds[target as usize]);
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
        let sym = &syms[key];
        // A member of `impl Trait for Type` OVERRIDES the trait's item of
        // the same name.
        if let (Some(tr), Some(last)) = (&sym.shape.impl_trait, sym.shape.path.last())
            && let [t] = candidates(&type_by_name, tr, &kinds, &["trait", "interface"])[..]
            && let Some(tkey) = key_at.get(&t)
        {
            let owner_path = &sym.shape.path[..sym.shape.path.len() - 1];
            if let Some(&owner) = by_canonical.get(&canonical_path(&sym.parsed, owner_path)) {
                relation_edges.push((owner, "IMPLEMENTS", t));
            }
            let ts = &syms[*tkey];
            let mut path = ts.shape.path.clone();
            path.push(last.clone());
            if let Some(&target) = by_canonical.get(&canonical_path(&ts.parsed, &path)) {
                relation_edges.push((ix, "OVERRIDES", target));
            }
        }
    }
    // `impl Trait for Type` blocks: Type IMPLEMENTS Trait.
    for def in &defs {
        let sym = &syms[&def.key];
        if let Some((_, Some(tr))) = &sym.shape.impl_block
            && let Some(&owner) = by_canonical.get(&canonical_path(&sym.parsed, &sym.shape.path))
            && let [t] = candidates(&type_by_name, tr, &kinds, &["trait", "interface"])[..]
        {
            relation_edges.push((owner, "IMPLEMENTS", t));
        }
    }
    for (a, ty, t) in relation_edges {
        if a != t {
            b.add_edge(a, ty, t)?;
        }
    }
    phase.done("relationships");
    let graph = b.build();
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
        tracing::debug!(phase, ms = self.0.elapsed().as_millis() as u64, "scip import");
        self.0 = std::time::Instant::now();
    }
}

/// Type nodes named `name` of one of `kinds`, uniquely (none when ambiguous).
fn candidates(by_name: &HashMap<&str, Vec<NodeIx>>, name: &str, kinds: &[&str], wanted: &[&str]) -> Vec<NodeIx> {
    let found: Vec<NodeIx> = by_name
        .get(name)
        .map(|v| v.iter().copied().filter(|&i| wanted.contains(&kinds[i as usize])).collect())
        .unwrap_or_default();
    if found.len() == 1 { found } else { Vec::new() }
}

/// Records the kind of node `ix` (nodes come from three places: definitions,
/// enclosing namespaces, external references).
fn note_kind(kinds: &mut Vec<&'static str>, ix: NodeIx, kind: &'static str) {
    if kinds.len() <= ix as usize {
        kinds.resize(ix as usize + 1, "");
    }
    kinds[ix as usize] = kind;
}

fn canonical_path(sym: &Symbol, path: &[Descriptor]) -> String {
    super::scip_symbol::canonical(sym, path)
}

fn display_name(si: Option<&SymbolInformation>, sym: &Symbol, path: &[Descriptor], tool: &str) -> String {
    let name = si.map(|s| s.display_name.trim()).filter(|n| !n.is_empty());
    if let Some(n) = name {
        return n.to_owned();
    }
    match path.last().map(|d| d.name.as_str()) {
        // scip-typescript's constructors.
        Some("<constructor>") => "constructor".into(),
        // rust-analyzer's crate root is the crate.
        Some("crate") if tool == "rust-analyzer" && path.len() == 1 => {
            sym.package.as_ref().map(|p| p.name.clone()).unwrap_or_else(|| "crate".into())
        }
        // scip-python's modules: `shapes.geometry/` reads as `geometry`.
        Some(n) if tool == "scip-python" && path.last().and_then(suffix) == Some(Suffix::Namespace) => {
            n.rsplit('.').next().unwrap_or(n).to_owned()
        }
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => "?".into(),
    }
}

/// The qualified name: descriptor names joined by `::` (Rust, after the
/// crate) or `.` (everything else); type parameters and parameters left out.
fn fqn_of(sym: &Symbol, path: &[Descriptor], sep: &str, rust: bool) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if rust && let Some(p) = sym.package.as_ref().filter(|p| !p.name.is_empty()) {
        parts.push(&p.name);
    }
    for (i, d) in path.iter().enumerate() {
        if matches!(suffix(d), Some(Suffix::TypeParameter | Suffix::Parameter | Suffix::Meta))
            || d.name.is_empty()
            || (rust && i == 0 && d.name == "crate")
        {
            continue;
        }
        parts.push(if d.name == "<constructor>" { "constructor" } else { &d.name });
    }
    parts.join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    fn fixture(lang: &str) -> Graph {
        let path = format!("{}/../../tests/fixtures/scip/{lang}/index.scip", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        import(&bytes, &Options { name: lang.into() }).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `(edge type, fqn)` of every edge out of (or into) the node `fqn`.
    fn edges(g: &Graph, fqn: &str, dir: Direction) -> Vec<(String, String)> {
        let n = g.iter().find(|n| n.fqn() == fqn && !n.has_role(EXTERNAL)).unwrap_or_else(|| panic!("no {fqn}"));
        let mut out = Vec::new();
        for t in g.edge_types() {
            let key = g.parse_edge_key(t).ok().flatten().unwrap_or_default();
            out.extend(g.walk(n.ix(), dir, &key).into_iter().map(|m| (t.to_owned(), g.node(m).fqn().to_owned())));
        }
        out
    }

    fn has(edges: &[(String, String)], ty: &str, fqn: &str) -> bool {
        edges.iter().any(|(t, f)| t == ty && f == fqn)
    }

    fn kind_of(g: &Graph, fqn: &str) -> String {
        g.iter().find(|n| n.fqn() == fqn).map(|n| n.kind().to_owned()).unwrap_or_default()
    }

    #[test]
    fn rust_analyzer_traits_impls_calls_and_modules() {
        let g = fixture("rust");
        assert_eq!(kind_of(&g, "shapes::geometry::Shape"), "trait");
        assert_eq!(kind_of(&g, "shapes::geometry::Circle"), "struct");
        let implementors = edges(&g, "shapes::geometry::Shape", Direction::In);
        assert!(has(&implementors, "IMPLEMENTS", "shapes::geometry::Circle"), "{implementors:?}");
        assert!(has(&implementors, "IMPLEMENTS", "shapes::geometry::Square"), "{implementors:?}");
        // impl blocks fold into their type; trait methods are overridden.
        let circle = edges(&g, "shapes::geometry::Circle", Direction::Out);
        assert!(has(&circle, "DECLARES", "shapes::geometry::Circle::new"), "{circle:?}");
        assert!(has(&circle, "DECLARES", "shapes::geometry::Circle::area"), "{circle:?}");
        let area = edges(&g, "shapes::geometry::Circle::area", Direction::Out);
        assert!(has(&area, "OVERRIDES", "shapes::geometry::Shape::area"), "{area:?}");
        // The call chain main → report → total_area → Shape::area.
        assert!(has(&edges(&g, "shapes::main", Direction::Out), "CALLS", "shapes::report"));
        assert!(has(&edges(&g, "shapes::report", Direction::Out), "CALLS", "shapes::geometry::total_area"));
        assert!(has(
            &edges(&g, "shapes::geometry::total_area", Direction::Out),
            "CALLS",
            "shapes::geometry::Shape::area"
        ));
        // Modules declare their items; the crate root its modules.
        let geometry = edges(&g, "shapes::geometry", Direction::Out);
        for item in ["Shape", "Circle", "Square", "total_area", "Unit", "PI", "square"] {
            assert!(has(&geometry, "DECLARES", &format!("shapes::geometry::{item}")), "{item}: {geometry:?}");
        }
        assert!(has(&edges(&g, "shapes", Direction::Out), "DECLARES", "shapes::geometry"));
        // #[test] gives the test role; std symbols are external.
        let t = g.iter().find(|n| n.name() == "total_area_adds_up").map(|n| n.has_role("test"));
        assert_eq!(t, Some(true));
        assert!(g.iter().any(|n| n.fqn() == "alloc::string::String" && n.has_role(EXTERNAL)));
        assert!(
            !g.iter().any(|n| n.kind() == "meta" || n.kind() == "parameter"),
            "attributes and locals are not nodes"
        );
    }

    #[test]
    fn scip_typescript_kinds_from_signatures_and_relationships() {
        let g = fixture("ts");
        assert_eq!(kind_of(&g, "src.shapes.ts.Shape"), "interface");
        assert_eq!(kind_of(&g, "src.shapes.ts.Circle"), "class");
        assert_eq!(kind_of(&g, "src.shapes.ts.totalArea"), "function");
        let circle = edges(&g, "src.shapes.ts.Circle", Direction::Out);
        assert!(has(&circle, "IMPLEMENTS", "src.shapes.ts.Shape"), "{circle:?}");
        assert!(has(&circle, "EXTENDS", "src.shapes.ts.Base"), "{circle:?}");
        assert!(has(&circle, "DECLARES", "src.shapes.ts.Circle.radius"), "parameter property: {circle:?}");
        assert!(has(&edges(&g, "src.shapes.ts.Circle.area", Direction::Out), "OVERRIDES", "src.shapes.ts.Shape.area"));
        assert!(has(&edges(&g, "src.report.ts.report", Direction::Out), "CALLS", "src.shapes.ts.totalArea"));
        assert!(has(&edges(&g, "src.shapes.ts.totalArea", Direction::Out), "CALLS", "src.shapes.ts.Shape.area"));
        assert!(g.iter().any(|n| n.name() == "testTotalArea" && n.has_role("test")));
    }

    #[test]
    fn scip_python_modules_bases_and_calls() {
        let g = fixture("py");
        assert_eq!(kind_of(&g, "shapes.geometry"), "module");
        assert_eq!(kind_of(&g, "shapes.geometry.Shape"), "class", "no SymbolInformation: from the descriptor");
        assert_eq!(kind_of(&g, "shapes.geometry.Circle.area"), "method");
        let circle = edges(&g, "shapes.geometry.Circle", Direction::Out);
        assert!(has(&circle, "EXTENDS", "shapes.geometry.Shape"), "{circle:?}");
        assert!(has(
            &edges(&g, "shapes.geometry.Circle.area", Direction::Out),
            "OVERRIDES",
            "shapes.geometry.Shape.area"
        ));
        assert!(has(&edges(&g, "shapes.geometry", Direction::Out), "DECLARES", "shapes.geometry.total_area"));
        assert!(has(&edges(&g, "shapes.geometry.total_area", Direction::Out), "CALLS", "shapes.geometry.Shape.area"));
        assert!(g.iter().any(|n| n.name() == "test_total_area" && n.has_role("test")));
        assert!(g.iter().any(|n| n.fqn() == "shapes.geometry.REGISTRY"), "doubled descriptors collapse");
    }

    /// `#[test] fn a() {}` then `fn helper() {}` on the next line: the
    /// attribute belongs to `a` only.
    #[test]
    fn an_attribute_gives_its_role_to_its_own_definition_only() {
        let occ = |symbol: &str, roles: i32, range: Vec<i32>, enclosing: Vec<i32>| {
            let mut o = Occurrence::new();
            (o.symbol, o.symbol_roles, o.range, o.enclosing_range) = (symbol.into(), roles, range, enclosing);
            o
        };
        let mut index = Index::new();
        index.metadata.mut_or_insert_default().tool_info.mut_or_insert_default().name = "rust-analyzer".into();
        let mut doc = scip::types::Document::new();
        doc.relative_path = "src/lib.rs".into();
        doc.occurrences = vec![
            occ("rust-analyzer cargo core 1 macros/builtin/test:", 0, vec![0, 2, 6], vec![]),
            occ("rust-analyzer cargo x 1 a().", DEFINITION, vec![1, 3, 4], vec![0, 0, 1, 9]),
            occ("rust-analyzer cargo x 1 helper().", DEFINITION, vec![2, 3, 9], vec![2, 0, 2, 14]),
            // A crafted line near i32::MIN must not overflow the window.
            occ("rust-analyzer cargo x 1 low().", DEFINITION, vec![i32::MIN, 0, 1], vec![]),
        ];
        index.documents.push(doc);
        let g =
            import(&index.write_to_bytes().unwrap_or_default(), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let role = |name: &str| g.iter().find(|n| n.name() == name).map(|n| n.has_role("test"));
        assert_eq!(role("a"), Some(true));
        assert_eq!(role("helper"), Some(false), "the attribute above `a` is not `helper`'s");
    }

    #[test]
    fn ids_ignore_versions_and_locals_hash_their_document() {
        let parse = |s: &str| super::super::scip_symbol::parse(s).unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (
            parse("rust-analyzer cargo shapes 0.1.0 geometry/Circle#"),
            parse("rust-analyzer cargo shapes 0.2.0 geometry/Circle#"),
        );
        assert_eq!(id_of(&a, &a.descriptors, None), id_of(&b, &b.descriptors, None));
        let l = parse("local 3");
        assert_ne!(id_of(&l, &l.descriptors, Some("a.rs")), id_of(&l, &l.descriptors, Some("b.rs")));
    }

    #[test]
    fn bad_indexes_are_refused_with_the_reason() {
        let good = std::fs::read(format!("{}/../../tests/fixtures/scip/rust/index.scip", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_default();
        let err = |b: &[u8]| import(b, &Options::default()).map(|_| ()).unwrap_err().to_string();
        assert!(err(&good[..good.len() / 2]).contains("does not parse"), "truncated");
        assert!(err(b"\x08\x01").contains("not a SCIP index") || err(b"\x08\x01").contains("does not parse"));
        // metadata.version = 7: a protocol version this build does not know.
        let mut newer = Index::new();
        newer.metadata.mut_or_insert_default().version = protobuf::EnumOrUnknown::from_i32(7);
        let bytes = newer.write_to_bytes().unwrap_or_default();
        assert!(err(&bytes).contains("protocol version 7"), "{}", err(&bytes));
        // A symbol that does not parse names the document.
        let mut bad = Index::new();
        bad.metadata.mut_or_insert_default();
        let mut doc = scip::types::Document::new();
        doc.relative_path = "src/x.rs".into();
        let mut occ = Occurrence::new();
        occ.symbol = "rust-analyzer cargo".into();
        occ.symbol_roles = DEFINITION;
        occ.range = vec![0, 0, 1];
        doc.occurrences.push(occ);
        bad.documents.push(doc);
        let e = err(&bad.write_to_bytes().unwrap_or_default());
        assert!(e.contains("src/x.rs") && e.contains("does not parse"), "{e}");
        // A malformed range too.
        let mut odd = bad.clone();
        odd.documents[0].occurrences[0].symbol = "rust-analyzer cargo x 1 a#".into();
        odd.documents[0].occurrences[0].range = vec![1, 2];
        let e = err(&odd.write_to_bytes().unwrap_or_default());
        assert!(e.contains("src/x.rs") && e.contains("2 elements"), "{e}");
    }
}
