//! What a symbol is: its id, its folded descriptor path, its kind, names
//! and docs, and the roles its attributes give.

use scip::types::descriptor::Suffix;
use scip::types::symbol_information::Kind as ScipKind;
use scip::types::{Descriptor, Symbol};
use sha2::{Digest, Sha256};
use std::borrow::Borrow;

use super::paths::{PathId, Paths};
use super::{HashMap, ScipError};
use crate::{Derivation, GraphError, NodeIx, NodeSpec, RawId};

pub(super) fn suffix(d: &Descriptor) -> Option<Suffix> {
    d.suffix.enum_value().ok()
}

/// The id of a symbol with `path` as its descriptors: SHA-256 of its
/// canonical form without the package version, first 20 bytes; `local`
/// symbols also hash their document.
pub(super) fn id_of<D: Borrow<Descriptor>>(sym: &Symbol, path: &[D], local_doc: Option<&str>) -> RawId {
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
pub(super) struct Shape {
    /// Descriptors with rust-analyzer impl blocks folded into their type:
    /// `impl#[Circle][Shape]area().` reads as `Circle#area().`.
    pub(super) path: PathId,
    /// For an impl member: the trait implemented (`Shape`), by name.
    pub(super) impl_trait: Option<Box<str>>,
    /// For an impl block itself (not a node): (self type, trait).
    pub(super) impl_block: Option<Box<(String, Option<String>)>>,
}

/// The shape of `ds`, its folded path interned in `paths`.
pub(super) fn shape(mut ds: Vec<Descriptor>, paths: &mut Paths) -> Result<Shape, GraphError> {
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
                    impl_block = Some(Box::new((self_ty.clone(), tr)));
                } else {
                    impl_trait = tr.map(String::into_boxed_str);
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
    Ok(Shape { path: paths.intern(path)?, impl_trait, impl_block })
}

pub(super) fn kind_name(k: ScipKind) -> Option<&'static str> {
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
pub(super) fn kind_from_signature(sig: &str, member: bool) -> Option<&'static str> {
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
        // A value whose type is a function's (`const f: (a: A) => B`, a
        // generic one `const f: <T>(a: T) => T`) is a function.
        "let" | "var" | "(variable)" | "const" | "(constant)"
            if line.split_once(':').is_some_and(|(_, ty)| {
                let ty = ty.trim_start();
                let ty = match ty.strip_prefix('<') {
                    // Past the type parameters (`<T extends Record<K, V>>`).
                    Some(rest) => {
                        let mut depth = 1;
                        let end = rest.char_indices().find(|&(_, c)| {
                            match c {
                                '<' => depth += 1,
                                '>' => depth -= 1,
                                _ => {}
                            }
                            depth == 0
                        });
                        end.map_or("", |(i, _)| rest[i + 1..].trim_start())
                    }
                    None => ty,
                };
                ty.starts_with('(') && ty.contains("=>")
            }) =>
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
pub(super) fn kind_from_descriptors<D: Borrow<Descriptor>>(path: &[D], rust: bool) -> &'static str {
    let parent_is_type = path.len() >= 2 && suffix(path[path.len() - 2].borrow()) == Some(Suffix::Type);
    match path.last().and_then(|d| suffix(d.borrow())) {
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

pub(super) fn is_callable(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "constructor" | "macro")
}

/// Splits documentation into (signature, doc): an element that is one
/// fenced code block is a signature (the first one kept), the rest is prose.
pub(super) fn split_docs(docs: &[String]) -> (String, String) {
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
pub(super) fn fenced(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("```")?;
    let body = rest.strip_suffix("```")?;
    let nl = body.find('\n')?;
    let inner = &body[nl + 1..];
    (!inner.contains("\n```")).then_some(inner)
}

pub(super) fn is_test_path(path: &str) -> bool {
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
pub(super) const ATTRIBUTE_ROLES: &[(&[&str], &str, &str)] = &[
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

pub(super) fn attribute_role(sym: &Symbol) -> Option<&'static str> {
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
pub(super) struct Sym {
    /// Scheme and package (descriptors moved into `shape`), shared by every
    /// symbol of the package.
    pub(super) parsed: std::sync::Arc<Symbol>,
    /// The number of its package's canonical form ([`Packages`]).
    pub(super) package: u32,
    pub(super) shape: Shape,
    pub(super) id: RawId,
    pub(super) local: bool,
}

/// What a node says about its symbol (see [`describe`]).
pub(super) struct Described {
    pub(super) kind: &'static str,
    pub(super) name: String,
    pub(super) fqn: String,
    pub(super) signature: String,
    pub(super) doc: String,
}

impl Described {
    /// The spec without id, place or roles.
    pub(super) fn spec(&self) -> NodeSpec<'_> {
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

/// How the index names things: which indexer wrote it decides the
/// separator of qualified names and a few readings.
pub(super) struct Dialect {
    /// The indexer's name (`rust-analyzer`, `scip-python`, …).
    pub(super) tool: String,
    pub(super) rust: bool,
    pub(super) python: bool,
    pub(super) fqn_sep: &'static str,
    /// How its references and relationships were found: by name (the
    /// built-in tree-sitter indexer) or by a compiler.
    pub(super) derivation: Derivation,
    /// A class's or module's body runs when it is defined (Ruby's
    /// `default_options max_age: 1`, a Scala object's statements): a call
    /// in it is the type's. Only where the built-in indexer reads a
    /// language no SCIP indexer reads the same way (Python's, TypeScript's
    /// and Rust's module-level calls stay references, as theirs are).
    pub(super) bodies_run: bool,
}

impl Dialect {
    /// The dialect of `tool`'s indexes, whose first document is in
    /// `language`: the built-in indexer's Rust is rust-analyzer's.
    pub(super) fn of(tool: String, language: &str) -> Dialect {
        let rust = tool == "rust-analyzer" || (tool == super::INFERRING_TOOL && language == "rust");
        let python = tool == "scip-python";
        let derivation = if tool == super::INFERRING_TOOL { Derivation::Inferred } else { Derivation::Exact };
        let bodies_run = tool == super::INFERRING_TOOL
            && !matches!(language, "rust" | "python" | "typescript" | "javascript" | "typescriptreact");
        Dialect { rust, python, fqn_sep: if rust { "::" } else { "." }, derivation, tool, bodies_run }
    }
}

/// What a symbol's node says: kind, names, signature and doc, from what
/// its SymbolInformation said when there was one (`info`, docs split once),
/// for definitions and external references alike.
pub(super) fn describe(info: Option<&Info>, dialect: &Dialect, sym: &Sym, paths: &Paths) -> Described {
    let (signature, doc) = info.map(|i| (i.signature.as_str(), i.doc.as_str())).unwrap_or_default();
    let path = paths.get(sym.shape.path);
    let member = path.len() >= 2 && suffix(path[path.len() - 2]) == Some(Suffix::Type);
    let kind = info
        .and_then(|i| i.kind)
        .or_else(|| kind_from_signature(signature, member))
        .unwrap_or_else(|| kind_from_descriptors(&path, dialect.rust));
    Described {
        kind,
        name: display_name(info.map(|i| &*i.display_name), &sym.parsed, &path, &dialect.tool),
        fqn: fqn_of(&sym.parsed, &path, dialect.fqn_sep, dialect.rust),
        signature: one_line(signature),
        doc: doc.to_owned(),
    }
}

/// A signature on one line: every run of whitespace, line breaks included,
/// one space (`pub trait Tracker\nwhere\n    Self: Send,` reads
/// `pub trait Tracker where Self: Send,`, not `Trackerwhere    Self`).
pub(super) fn one_line(signature: &str) -> String {
    signature.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a symbol becomes a node: no parameters, locals or impl blocks.
pub(super) fn keep(kind: &str, sym: &Sym) -> bool {
    !matches!(kind, "parameter" | "type_parameter" | "local" | "meta")
        && sym.shape.impl_block.is_none()
        && !(sym.local && matches!(kind, "variable" | "constant" | "field" | "property" | "symbol"))
}

/// The symbol `id` (written `text`, met in the document `doc`), parsed the
/// first time it is asked for and kept in `syms`.
pub(super) fn parse<'s>(
    syms: &'s mut [Option<Sym>],
    packages: &mut Packages,
    paths: &mut Paths,
    id: SymId,
    text: &str,
    doc: Option<&str>,
) -> Result<&'s Sym, GraphError> {
    let slot = &mut syms[id as usize];
    let sym = match slot.take() {
        Some(sym) => sym,
        None => read_sym(text, doc, packages, paths)?,
    };
    let sym: &'s Sym = slot.insert(sym);
    Ok(sym)
}

/// Each distinct scheme and package met, once: a million symbols share a
/// few packages.
#[derive(Default)]
pub(super) struct Packages {
    shared: HashMap<Box<str>, (std::sync::Arc<Symbol>, u32)>,
    /// Each package's number, by its canonical form (scheme, manager and
    /// name as ids hash them, without the version).
    numbers: HashMap<Box<str>, u32>,
    /// The key being looked up (scheme, manager, name and version), reused:
    /// a symbol of a package already met allocates nothing here.
    key: String,
}

impl Packages {
    /// `parsed` (its descriptors taken), or the same package met before,
    /// with the number of its canonical form: two symbols of one number
    /// and one descriptor path have one canonical form, so one id.
    fn share(&mut self, parsed: Symbol) -> (std::sync::Arc<Symbol>, u32) {
        let p = parsed.package.as_ref();
        self.key.clear();
        for part in [
            parsed.scheme.as_str(),
            p.map_or("", |p| p.manager.as_str()),
            p.map_or("", |p| p.name.as_str()),
            p.map_or("", |p| p.version.as_str()),
        ] {
            self.key.push_str(part);
            self.key.push('\0');
        }
        if let Some(shared) = self.shared.get(self.key.as_str()) {
            return shared.clone();
        }
        let canonical = crate::scip_symbol::canonical::<Descriptor>(&parsed, &[]);
        // Fewer packages than symbols, whose ids are u32 (the table refuses
        // more): the count always fits.
        let next = u32::try_from(self.numbers.len()).unwrap_or(u32::MAX);
        let number = *self.numbers.entry(canonical.into()).or_insert(next);
        let shared = (std::sync::Arc::new(parsed), number);
        self.shared.insert(self.key.as_str().into(), shared.clone());
        shared
    }
}

/// Parses a symbol string: its id (a local's hashes `doc`) and its shape.
fn read_sym(text: &str, doc: Option<&str>, packages: &mut Packages, paths: &mut Paths) -> Result<Sym, GraphError> {
    let parsed = crate::scip_symbol::parse(text).map_err(|e| ScipError::Symbol {
        doc: doc.unwrap_or("external symbols").to_owned(),
        symbol: text.to_owned(),
        why: e.to_string(),
    })?;
    let local = scip::symbol::is_local_symbol(text);
    let id = id_of(&parsed, &parsed.descriptors, local.then_some(doc.unwrap_or("")));
    // The descriptors move into the shape: every later use reads the
    // folded path; `parsed` keeps the scheme and package.
    let mut parsed = parsed;
    let shape = shape(std::mem::take(&mut parsed.descriptors), paths)?;
    let (parsed, package) = packages.share(parsed);
    Ok(Sym { parsed, package, shape, id, local })
}

/// Type nodes named `name` of one of `kinds`, uniquely (none when ambiguous).
pub(super) fn candidates(
    by_name: &HashMap<&str, Vec<NodeIx>>,
    name: &str,
    kinds: &[&str],
    wanted: &[&str],
) -> Vec<NodeIx> {
    let found: Vec<NodeIx> = by_name
        .get(name)
        .map(|v| v.iter().copied().filter(|&i| wanted.contains(&kinds[i as usize])).collect())
        .unwrap_or_default();
    if found.len() == 1 { found } else { Vec::new() }
}

/// Records the kind of node `ix` (nodes come from three places: definitions,
/// enclosing namespaces, external references).
pub(super) fn note_kind(kinds: &mut Vec<&'static str>, ix: NodeIx, kind: &'static str) {
    if kinds.len() <= ix as usize {
        kinds.resize(ix as usize + 1, "");
    }
    kinds[ix as usize] = kind;
}

pub(super) fn canonical_path<D: Borrow<Descriptor>>(sym: &Symbol, path: &[D]) -> String {
    crate::scip_symbol::canonical(sym, path)
}

/// The node's name: the `display_name` given (`given`), else read from the
/// descriptors.
pub(super) fn display_name<D: Borrow<Descriptor>>(given: Option<&str>, sym: &Symbol, path: &[D], tool: &str) -> String {
    let name = given.map(str::trim).filter(|n| !n.is_empty());
    if let Some(n) = name {
        return n.to_owned();
    }
    match path.last().map(|d| d.borrow().name.as_str()) {
        // scip-typescript's and scip-dotnet's constructors.
        Some("<constructor>" | ".ctor") => "constructor".into(),
        // rust-analyzer's crate root is the crate.
        Some("crate") if tool == "rust-analyzer" && path.len() == 1 => {
            sym.package.as_ref().map(|p| p.name.clone()).unwrap_or_else(|| "crate".into())
        }
        // scip-python's modules: `shapes.geometry/` reads as `geometry`.
        Some(n) if tool == "scip-python" && path.last().and_then(|d| suffix(d.borrow())) == Some(Suffix::Namespace) => {
            n.rsplit('.').next().unwrap_or(n).to_owned()
        }
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => "?".into(),
    }
}

/// The qualified name: descriptor names joined by `::` (Rust, after the
/// crate) or `.` (everything else); type parameters and parameters left out.
pub(super) fn fqn_of<D: Borrow<Descriptor>>(sym: &Symbol, path: &[D], sep: &str, rust: bool) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if rust && let Some(p) = sym.package.as_ref().filter(|p| !p.name.is_empty()) {
        parts.push(&p.name);
    }
    for (i, d) in path.iter().map(Borrow::borrow).enumerate() {
        if matches!(suffix(d), Some(Suffix::TypeParameter | Suffix::Parameter | Suffix::Meta))
            || d.name.is_empty()
            || (rust && i == 0 && d.name == "crate")
        {
            continue;
        }
        parts.push(if matches!(d.name.as_str(), "<constructor>" | ".ctor") { "constructor" } else { &d.name });
    }
    parts.join(sep)
}

/// A symbol's id in the import's symbol table (`table::Table`): the order in which it was first met.
pub(super) type SymId = u32;

/// What the import reads from a symbol's `SymbolInformation`, without the
/// rest of the protobuf message.
pub(super) struct Info {
    /// `kind` in Signpost's words, when set and mapped.
    pub(super) kind: Option<&'static str>,
    /// `display_name`, trimmed (empty when unset).
    pub(super) display_name: Box<str>,
    /// The first documentation element that is one fenced block, else
    /// `signature_documentation.text`; as written, line breaks and all (the
    /// kind is read from its first line).
    pub(super) signature: String,
    /// The other documentation elements, joined.
    pub(super) doc: String,
    /// The symbols of its `is_implementation` relationships, as written
    /// (not document-qualified, so a local target finds no node).
    pub(super) implements: Vec<SymId>,
}

impl Info {
    /// Drops what a node was made of (names, signature, docs), once it is
    /// made: its relationships are all the import reads of it again.
    pub(super) fn spent(&mut self) {
        self.display_name = Box::default();
        self.signature = String::new();
        self.doc = String::new();
    }
}
