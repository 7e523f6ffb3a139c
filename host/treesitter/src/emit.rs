//! A resolved project → a SCIP index, so that the graph's one SCIP importer
//! makes the graph (same node kinds, ids, DECLARES, edges) whichever
//! indexer read the code.

use scip::types::symbol_information::Kind as ScipKind;
use scip::types::{
    Document, Index, Metadata, Occurrence, Relationship, Signature, SymbolInformation, TextEncoding, ToolInfo,
};

use crate::extract::{Kind, Span, Text};
use crate::languages::Packages;
use crate::resolve::{Project, package_symbol};

/// The `tool_info.name` of indexes this crate writes; the importer marks
/// their CALLS, REFERENCES and header edges as inferred.
pub const TOOL: &str = "signpost-tree-sitter";

const DEFINITION: i32 = 1;

fn range(s: &Span) -> Vec<i32> {
    let (sl, sc) = (s.start.0 as i32, s.start.1 as i32);
    let (el, ec) = (s.end.0 as i32, s.end.1 as i32);
    if sl == el { vec![sl, sc, ec] } else { vec![sl, sc, el, ec] }
}

fn scip_kind(k: Kind, parent: Option<Kind>) -> ScipKind {
    match k {
        Kind::Class => ScipKind::Class,
        Kind::Interface => ScipKind::Interface,
        Kind::Enum => ScipKind::Enum,
        // Rust's enum variants are spelled as types (`Unit#Metric#`).
        Kind::Struct if parent == Some(Kind::Enum) => ScipKind::EnumMember,
        Kind::Struct => ScipKind::Struct,
        Kind::Trait => ScipKind::Trait,
        Kind::Type => ScipKind::Type,
        Kind::Module => ScipKind::Namespace,
        Kind::Method => ScipKind::Method,
        // A function declared in a type is its method (Kotlin, Python…).
        Kind::Function if parent.is_some_and(Kind::is_type) => ScipKind::Method,
        Kind::Function => ScipKind::Function,
        Kind::Constructor => ScipKind::Constructor,
        Kind::Field => ScipKind::Field,
        Kind::Property => ScipKind::Property,
        Kind::Constant if parent == Some(Kind::Enum) => ScipKind::EnumMember,
        Kind::Constant => ScipKind::Constant,
        Kind::Variable => ScipKind::Variable,
        Kind::Macro => ScipKind::Macro,
    }
}

/// The SCIP index of `project`, rooted at `root` (an absolute path). Each
/// file's document is written on its own, in parallel.
pub fn emit(project: &Project, root: &std::path::Path) -> Index {
    emit_files(project, root, None)
}

/// The same, of the documents of files `only` alone (in file order; the
/// documents come in the order the whole index gives them).
pub fn emit_only(project: &Project, root: &std::path::Path, only: &[usize]) -> Index {
    emit_files(project, root, Some(only))
}

/// What writing some of a project's documents needs: which files, in the
/// order the index gives them.
struct Plan {
    files: Vec<usize>,
    declared_apart: std::collections::HashSet<usize>,
}

impl Plan {
    fn of(project: &Project, only: Option<&[usize]>) -> Plan {
        // A member declared in its type and defined apart (C++) is written
        // once, where its body is, so that references in the body belong to
        // it; the declaration's comment and relationships go with it.
        let declared_apart = project.defs.iter().filter_map(|d| d.twin_of()).collect();
        let mut files: Vec<usize> = match only {
            Some(only) => only.to_vec(),
            None => (0..project.sources.len()).collect(),
        };
        // A symbol defined in several documents (Kotlin's `expect` and its
        // `actual`s) is placed at its first definition: the documents that
        // declare `expect`s come first.
        files.sort_by_key(|&f| !project.sources[f].facts.expects);
        Plan { files, declared_apart }
    }

    fn document(&self, project: &Project, fi: usize) -> Document {
        document(project, fi, &self.declared_apart)
    }
}

fn metadata(root: &std::path::Path) -> Metadata {
    let root = root.to_string_lossy();
    Metadata {
        tool_info: Some(ToolInfo {
            name: TOOL.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            ..Default::default()
        })
        .into(),
        project_root: format!("file://{}", root.trim_end_matches('/')),
        text_document_encoding: TextEncoding::UTF8.into(),
        ..Default::default()
    }
}

fn emit_files(project: &Project, root: &std::path::Path, only: Option<&[usize]>) -> Index {
    use rayon::prelude::*;
    let plan = Plan::of(project, only);
    let docs: Vec<Document> = plan.files.par_iter().map(|&fi| plan.document(project, fi)).collect();
    Index { metadata: Some(metadata(root)).into(), documents: docs, ..Default::default() }
}

/// The bytes of [`emit`]'s index, written to `out` as the documents are
/// made, a few hundred at a time: the index is never in memory whole (at
/// 20M lines of Java it is several GB decoded, and its encoding 1.4 GB).
pub fn write(project: &Project, root: &std::path::Path, out: &mut dyn std::io::Write) -> protobuf::Result<()> {
    use rayon::prelude::*;
    // An index is its metadata (field 1), then each document (field 2),
    // as an encoder writes a whole `Index`.
    const BATCH: usize = 512;
    let plan = Plan::of(project, None);
    let mut os = protobuf::CodedOutputStream::new(out);
    os.write_message(1, &metadata(root))?;
    for batch in plan.files.chunks(BATCH) {
        let docs: Vec<Vec<u8>> = batch
            .par_iter()
            .map(|&fi| protobuf::Message::write_to_bytes(&plan.document(project, fi)))
            .collect::<protobuf::Result<_>>()?;
        for doc in docs {
            os.write_bytes(2, &doc)?;
        }
    }
    os.flush()
}

/// File `fi`'s document: its module, its definitions with their
/// relationships, its uses and unbound calls ([`Project::uses_of`],
/// [`Project::unbound_of`]).
fn document(project: &Project, fi: usize, declared_apart: &std::collections::HashSet<usize>) -> Document {
    let src = &project.sources[fi];
    let defs = project.defs_of_file(fi);
    let unbound = project.unbound_of(fi);
    let mut doc = Document {
        language: src.lang.name.to_owned(),
        relative_path: src.path.clone(),
        // The size it ends: a large project's uses are millions.
        occurrences: Vec::with_capacity(defs.len() + project.uses_of(fi).count() + unbound.len() + 1),
        ..Default::default()
    };
    // A file that is its module (Python) defines it: the module node has a
    // place, and what the file's top level does is the module's.
    let crate_root = src.lang.packages == Packages::CratePath && src.package.is_empty();
    if matches!(src.lang.packages, Packages::ModuleFile | Packages::FilePath | Packages::CratePath)
        && (!src.package.is_empty() || crate_root)
    {
        // scip-python defines a module as its `__init__:` meta descriptor;
        // scip-typescript as the file's namespace.
        // rust-analyzer's crate root is `crate/`.
        let symbol = match src.lang.packages {
            Packages::ModuleFile => package_symbol(src) + "__init__:",
            _ if crate_root => package_symbol(src) + "crate/",
            _ => package_symbol(src),
        };
        let lines = src.facts.lines.max(1) as u32;
        let whole = Span { start: (0, 0), end: (lines, 0), bytes: (0, u32::MAX) };
        doc.occurrences.push(Occurrence {
            symbol: symbol.clone(),
            symbol_roles: DEFINITION,
            range: range(&Span { start: (0, 0), end: (0, 0), bytes: (0, 0) }),
            enclosing_range: range(&whole),
            ..Default::default()
        });
        // Python's module `a.b` is called `b`; a script file by its name.
        let name = match src.lang.packages {
            Packages::ModuleFile => src.package.last().map_or("", |p| p.rsplit('.').next().unwrap_or(p)),
            _ if crate_root => src.module.as_str(),
            _ => src.package.last().map_or("", String::as_str),
        };
        doc.symbols.push(SymbolInformation {
            symbol,
            kind: ScipKind::Module.into(),
            display_name: name.to_owned(),
            ..Default::default()
        });
    }
    // The definitions' headers and comments, held packed: this file's, and
    // those of the other files its definitions are twins of (a C++ method
    // defined apart takes its declaration's comment when it has none).
    let texts = src.body.texts.unpack();
    let mut others: std::collections::HashMap<usize, Vec<Text>> = std::collections::HashMap::new();
    let empty = Text::default();
    for ix in defs {
        if declared_apart.contains(&ix) {
            continue;
        }
        let d = &project.defs[ix];
        let text = texts.get(d.at()).unwrap_or(&empty);
        let mut doc_text = text.doc.clone();
        if let Some(t) = d.twin_of().filter(|_| doc_text.is_empty()) {
            let twin = &project.defs[t];
            let theirs = if twin.file() == fi {
                &texts
            } else {
                others.entry(twin.file()).or_insert_with(|| project.sources[twin.file()].body.texts.unpack())
            };
            doc_text = theirs.get(twin.at()).map(|t| t.doc.clone()).unwrap_or_default();
        }
        let f = project.def(ix);
        doc.occurrences.push(Occurrence {
            symbol: project.symbol(ix).to_owned(),
            symbol_roles: DEFINITION,
            range: range(&f.name_span),
            enclosing_range: if crate::resolve::scopes(project, ix) { range(&f.span) } else { Vec::new() },
            ..Default::default()
        });
        let mut info = SymbolInformation {
            symbol: project.symbol(ix).to_owned(),
            kind: scip_kind(f.kind, d.parent().map(|p| project.kind(p))).into(),
            display_name: f.name().to_owned(),
            documentation: if doc_text.is_empty() { Vec::new() } else { vec![doc_text] },
            ..Default::default()
        };
        if !text.signature.is_empty() {
            info.signature_documentation = Some(Signature {
                language: project.sources[d.file()].lang.name.to_owned(),
                text: text.signature.clone(),
                ..Default::default()
            })
            .into();
        }
        let all = project.sources[d.file()].lang.all_supertypes;
        for s in crate::resolve::written_supers(&project.supers, all, ix, d.twin_of()) {
            info.relationships.push(Relationship {
                symbol: project.symbol(s).to_owned(),
                is_implementation: true,
                ..Default::default()
            });
        }
        doc.symbols.push(info);
    }
    // A use that is one of several a call could mean says so with a
    // diagnostic, which the importer reads as an ambiguous edge; a call not
    // bound at all is an occurrence of no symbol whose diagnostic names it,
    // which the importer counts by name.
    let note = |code: &str, message: String| scip::types::Diagnostic {
        severity: scip::types::Severity::Information.into(),
        code: code.to_owned(),
        message,
        source: TOOL.to_owned(),
        ..Default::default()
    };
    for u in project.uses_of(fi) {
        let diagnostics = if u.ambiguous() {
            // Its code says it; a call that fits nine overloads has nine.
            vec![note(signpost_graph::scip::AMBIGUOUS, String::new())]
        } else {
            Vec::new()
        };
        doc.occurrences.push(Occurrence {
            symbol: project.symbol(u.target()).to_owned(),
            range: range(&u.span),
            diagnostics,
            ..Default::default()
        });
    }
    let calls = if unbound.is_empty() { Vec::new() } else { src.body.uses.unpack().calls };
    for c in unbound.iter().filter_map(|u| calls.get(u.call())) {
        doc.occurrences.push(Occurrence {
            range: range(&c.span),
            diagnostics: vec![note(signpost_graph::scip::UNRESOLVED, c.name.clone())],
            ..Default::default()
        });
    }
    // A file the grammar could not read whole says where it stopped
    // reading it as written: an occurrence of no symbol on that line.
    if let Some(line) = src.facts.syntax_errors {
        let row = line.saturating_sub(1) as i32;
        doc.occurrences.push(Occurrence {
            range: vec![row, 0, 0],
            diagnostics: vec![note(signpost_graph::scip::UNREAD, format!("the {} grammar", src.lang.name))],
            ..Default::default()
        });
    }
    doc
}

/// An index of no documents for `root`: what a language's part serves until
/// its indexer has written one.
pub fn empty(root: &std::path::Path) -> Result<Vec<u8>, protobuf::Error> {
    let project = Project::default();
    protobuf::Message::write_to_bytes(&emit(&project, root))
}
