//! The SCIP importer on the fixtures of every indexer, and on broken indexes.

use super::occurrences::DEFINITION;
use super::symbols::id_of;
use super::*;
use protobuf::Message;
use scip::types::Occurrence;

use crate::{Direction, EXTERNAL};

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
    assert!(has(&edges(&g, "shapes::geometry::total_area", Direction::Out), "CALLS", "shapes::geometry::Shape::area"));
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
    assert!(!g.iter().any(|n| n.kind() == "meta" || n.kind() == "parameter"), "attributes and locals are not nodes");
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
    assert!(has(&edges(&g, "shapes.geometry.Circle.area", Direction::Out), "OVERRIDES", "shapes.geometry.Shape.area"));
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
    let g = import(&index.write_to_bytes().unwrap_or_default(), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let role = |name: &str| g.iter().find(|n| n.name() == name).map(|n| n.has_role("test"));
    assert_eq!(role("a"), Some(true));
    assert_eq!(role("helper"), Some(false), "the attribute above `a` is not `helper`'s");
}

/// A type defined in two files (Kotlin's `expect` class and its `actual`
/// one, a C# `partial` class): one node, and what the second file's part
/// calls, that part's symbol calls; a second definition in the same file
/// (rust-analyzer repeats some) is no scope of its own.
#[test]
fn a_symbol_defined_in_two_documents_encloses_the_references_of_both() {
    let occ = |symbol: &str, roles: i32, range: Vec<i32>, enclosing: Vec<i32>| {
        let mut o = Occurrence::new();
        (o.symbol, o.symbol_roles, o.range, o.enclosing_range) = (symbol.into(), roles, range, enclosing);
        o
    };
    let (read, drain, other) = (
        "scip-java maven . . io/Source#read().",
        "scip-java maven . . io/Drain#drain().",
        "scip-java maven . . io/Other#",
    );
    let mut index = Index::new();
    let mut common = scip::types::Document::new();
    common.relative_path = "common/Source.kt".into();
    common.occurrences = vec![
        occ("scip-java maven . . io/Source#", DEFINITION, vec![0, 13, 19], vec![0, 0, 3, 1]),
        occ(read, DEFINITION, vec![1, 8, 12], vec![1, 4, 1, 30]),
        occ(drain, DEFINITION, vec![2, 8, 13], vec![2, 4, 2, 30]),
    ];
    let mut jvm = scip::types::Document::new();
    jvm.relative_path = "jvm/Source.kt".into();
    jvm.occurrences = vec![
        occ("scip-java maven . . io/Source#", DEFINITION, vec![0, 13, 19], vec![0, 0, 9, 1]),
        occ(read, DEFINITION, vec![1, 15, 19], vec![1, 4, 3, 5]),
        occ(drain, 0, vec![2, 8, 13], vec![]),
        occ(other, DEFINITION, vec![5, 10, 15], vec![5, 4, 8, 5]),
        // A repeat within one document: the first one's scope only.
        occ(other, DEFINITION, vec![10, 10, 15], vec![10, 4, 10, 40]),
        occ(drain, 0, vec![10, 20, 25], vec![]),
    ];
    index.documents.extend([common, jvm]);
    let g = import(&index.write_to_bytes().unwrap_or_default(), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.iter().filter(|n| n.fqn() == "io.Source.read").count(), 1, "one node");
    assert!(has(&edges(&g, "io.Source.read", Direction::Out), "CALLS", "io.Drain.drain"));
    let from_other = edges(&g, "io.Other", Direction::Out);
    assert!(!from_other.iter().any(|(_, to)| to == "io.Drain.drain"), "{from_other:?}");
}

/// The hierarchy joins symbols by their canonical form, which has no
/// version: a member written with another version of its type's package
/// is still the type's (DECLARES, and OVERRIDES through an impl), and a
/// namesake in another package is not.
#[test]
fn the_hierarchy_joins_versions_of_one_package_and_keeps_packages_apart() {
    let occ = |symbol: &str, range: Vec<i32>| {
        let mut o = Occurrence::new();
        (o.symbol, o.symbol_roles, o.range) = (symbol.into(), DEFINITION, range);
        o
    };
    let mut index = Index::new();
    index.metadata.mut_or_insert_default().tool_info.mut_or_insert_default().name = "rust-analyzer".into();
    let mut doc = scip::types::Document::new();
    doc.relative_path = "src/lib.rs".into();
    doc.occurrences = vec![
        occ("rust-analyzer cargo shapes 0.1.0 geometry/", vec![0, 4, 12]),
        occ("rust-analyzer cargo shapes 0.1.0 geometry/Shape#", vec![1, 10, 15]),
        occ("rust-analyzer cargo shapes 0.1.0 geometry/Shape#area().", vec![2, 7, 11]),
        occ("rust-analyzer cargo shapes 0.1.0 geometry/Circle#", vec![3, 11, 17]),
        // Written with another version of the package.
        occ("rust-analyzer cargo shapes 0.2.0 geometry/Circle#radius.", vec![4, 4, 10]),
        occ("rust-analyzer cargo shapes 0.2.0 geometry/impl#[Circle][Shape]area().", vec![5, 7, 11]),
        // The same path in another package.
        occ("rust-analyzer cargo other 0.1.0 geometry/Circle#", vec![6, 11, 17]),
        occ("rust-analyzer cargo other 0.1.0 geometry/Circle#side.", vec![7, 4, 8]),
    ];
    let mut shape = scip::types::SymbolInformation::new();
    shape.symbol = "rust-analyzer cargo shapes 0.1.0 geometry/Shape#".into();
    shape.kind = scip::types::symbol_information::Kind::Trait.into();
    doc.symbols.push(shape);
    index.documents.push(doc);
    let g = import(&index.write_to_bytes().unwrap_or_default(), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let circle = edges(&g, "shapes::geometry::Circle", Direction::Out);
    assert!(has(&circle, "DECLARES", "shapes::geometry::Circle::radius"), "{circle:?}");
    assert!(has(&circle, "DECLARES", "shapes::geometry::Circle::area"), "{circle:?}");
    assert!(has(&circle, "IMPLEMENTS", "shapes::geometry::Shape"), "{circle:?}");
    let area = edges(&g, "shapes::geometry::Circle::area", Direction::Out);
    assert!(has(&area, "OVERRIDES", "shapes::geometry::Shape::area"), "{area:?}");
    assert!(!circle.iter().any(|(_, to)| to.ends_with("::side")), "another package's member: {circle:?}");
    let other = edges(&g, "other::geometry::Circle", Direction::Out);
    assert!(has(&other, "DECLARES", "other::geometry::Circle::side"), "{other:?}");
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
    // A symbol that does not parse is left out; the index is served.
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
    let served = import(&bad.write_to_bytes().unwrap_or_default(), &Options::default()).expect("served");
    assert_eq!(served.node_count(), 0);
    // A malformed range names the document.
    let mut odd = bad.clone();
    odd.documents[0].occurrences[0].symbol = "rust-analyzer cargo x 1 a#".into();
    odd.documents[0].occurrences[0].range = vec![1, 2];
    let e = err(&odd.write_to_bytes().unwrap_or_default());
    assert!(e.contains("src/x.rs") && e.contains("2 elements"), "{e}");
}

#[test]
fn signatures_read_on_one_line_with_their_breaks_as_spaces() {
    use super::symbols::one_line;
    assert_eq!(
        one_line("pub trait ProgressTracker\nwhere\n    Self: Send + Sync,"),
        "pub trait ProgressTracker where Self: Send + Sync,"
    );
    assert_eq!(one_line("  fn  f(\r\n\ta: u8,\n) "), "fn f( a: u8, )");
    // Every signature the fixtures give is on one line.
    for lang in ["rust", "ts", "py"] {
        let g = fixture(lang);
        for n in g.iter() {
            assert!(
                !n.signature().contains(['\n', '\t']) && !n.signature().contains("  "),
                "{lang}: {:?}",
                n.signature()
            );
        }
    }
}

/// Every node of a graph, in index order, each followed by its out-edges
/// (type, target id, derivation): all a graph says, one line each.
fn dump(g: &Graph) -> Vec<String> {
    let mut out = Vec::with_capacity(g.node_count());
    for n in g.iter() {
        let roles: Vec<&str> = n.roles().collect();
        out.push(format!(
            "{} {} {:?} {:?} {}:{} {roles:?} doc={:?} signature={:?}",
            n.id(),
            n.kind(),
            n.name(),
            n.fqn(),
            n.file(),
            n.line(),
            n.doc(),
            n.signature()
        ));
        for (t, m, how) in g.out_edges(n.ix()) {
            out.push(format!("  {} {} {how:?}", g.types[t as usize], g.node(m).id()));
        }
    }
    out
}

/// Every checked-in fixture index (`tests/fixtures/scip/*/index.scip`).
fn fixture_paths() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/scip");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<std::path::PathBuf> =
        entries.filter_map(|e| Some(e.ok()?.path().join("index.scip"))).filter(|p| p.is_file()).collect();
    paths.sort();
    paths
}

/// Bytes, a file read as it goes, and a decoded index give the same graph,
/// node for node and edge for edge; so does `load`, which streams the file.
#[test]
fn bytes_files_and_decoded_indexes_import_alike() {
    let paths = fixture_paths();
    assert!(paths.len() >= 3, "{paths:?}");
    for path in &paths {
        let at = path.display();
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{at}: {e}"));
        let opts = Options { name: "fixture".into() };
        let index = Index::parse_from_bytes(&bytes).unwrap_or_else(|e| panic!("{at}: {e}"));
        let decoded = import_index(&index, &opts).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(decoded.node_count() > 5 && decoded.edge_count() > 5, "{at}: {}", decoded.node_count());
        let want = dump(&decoded);
        for (how, g) in [("bytes", import(&bytes, &opts)), ("file", import_file(path, &opts))] {
            let g = g.unwrap_or_else(|e| panic!("{at} ({how}): {e}"));
            assert_eq!(g.name(), decoded.name(), "{at}: {how}");
            assert_eq!(dump(&g), want, "{at}: {how}");
        }
        let loaded = crate::load(path).unwrap_or_else(|e| panic!("{at} (load): {e}"));
        assert_eq!(dump(&loaded), want, "{at}: load");
        // Twice the same: no hash order decides anything.
        assert_eq!(dump(&import(&bytes, &opts).unwrap_or_else(|e| panic!("{at}: {e}"))), want, "{at}: again");
    }
}

/// Two indexes written one after the other are one index to protobuf (the
/// later metadata replaces the earlier, documents add up): the streaming
/// readers agree with the decoder.
#[test]
fn concatenated_indexes_read_as_the_decoder_reads_them() {
    let doc = |path: &str, symbol: &str| {
        let mut d = scip::types::Document::new();
        d.relative_path = path.into();
        let mut o = Occurrence::new();
        (o.symbol, o.symbol_roles, o.range) = (symbol.into(), DEFINITION, vec![0, 3, 4]);
        d.occurrences.push(o);
        d
    };
    let mut a = Index::new();
    a.metadata.mut_or_insert_default().tool_info.mut_or_insert_default().name = "rust-analyzer".into();
    a.documents.push(doc("src/a.rs", "rust-analyzer cargo x 1 a()."));
    let mut b = Index::new();
    b.metadata.mut_or_insert_default().project_root = "file:///work/second".into();
    b.documents.push(doc("src/b.rs", "rust-analyzer cargo x 1 b()."));
    let mut bytes = a.write_to_bytes().unwrap_or_default();
    bytes.extend(b.write_to_bytes().unwrap_or_default());
    let decoded = Index::parse_from_bytes(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let want = import_index(&decoded, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let got = import(&bytes, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.name(), "second");
    assert_eq!(got.name(), want.name());
    assert_eq!(dump(&got), dump(&want));
    assert_eq!(got.iter().filter(|n| n.name() == "a" || n.name() == "b").count(), 2, "{:?}", dump(&got));
}

/// A top-level field: its tag byte, its length (a varint), its bytes.
fn field(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let mut n = body.len();
    while n >= 0x80 {
        out.push(((n & 0x7f) as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(body);
    out
}

/// Why `bytes` are refused, read from memory and from a file (refused the
/// same way both times).
fn refusal(name: &str, bytes: &[u8]) -> ScipError {
    let path = std::env::temp_dir().join(format!("signpost-scip-{}-{name}.scip", std::process::id()));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let from_file = import_file(&path, &Options::default());
    let _ = std::fs::remove_file(&path);
    let scip_error = |r: Result<Graph, GraphError>| match r {
        Err(GraphError::Scip(e)) => e,
        Err(e) => panic!("{name}: not a SCIP error: {e}"),
        Ok(g) => panic!("{name}: imported ({} nodes)", g.node_count()),
    };
    let (a, b) = (scip_error(import(bytes, &Options::default())), scip_error(from_file));
    assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b), "{name}: {a} / {b}");
    a
}

/// Truncated, oversized, unknown and malformed fields: each refused with
/// the reason the decoder of the whole index gave, from bytes and from a
/// file alike, and never with a panic or an allocation the input's length
/// asks for.
#[test]
fn hostile_streams_are_refused_without_panics_or_large_allocations() {
    let mut index = Index::new();
    index.metadata.mut_or_insert_default().tool_info.mut_or_insert_default().name = "rust-analyzer".into();
    let mut doc = scip::types::Document::new();
    doc.relative_path = "src/lib.rs".into();
    for (line, name) in ["alpha", "beta", "gamma"].into_iter().enumerate() {
        let mut o = Occurrence::new();
        (o.symbol, o.symbol_roles, o.range) =
            (format!("rust-analyzer cargo x 1 {name}()."), DEFINITION, vec![line as i32, 3, 8]);
        doc.occurrences.push(o);
    }
    let meta = index.write_to_bytes().unwrap_or_default();
    let doc_bytes = doc.write_to_bytes().unwrap_or_default();
    index.documents.push(doc);
    let good = index.write_to_bytes().unwrap_or_default();
    assert_eq!(good, [meta.clone(), field(0x12, &doc_bytes)].concat(), "metadata, then the document");
    assert_eq!(import(&good, &Options::default()).map(|g| g.node_count()).ok(), Some(3));
    let with = |tail: &[u8]| [good.as_slice(), tail].concat();

    // Cut anywhere: an error or (cut between fields) a smaller index, never a panic.
    for cut in 0..good.len() {
        match import(&good[..cut], &Options::default()) {
            Ok(_) | Err(GraphError::Scip(_)) => {}
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
    // The document's length runs past the end of the bytes.
    let e = refusal("cut-document", &good[..good.len() - 5]);
    assert!(matches!(&e, ScipError::Protobuf(why) if why.contains("runs past the end")), "{e}");
    // A document whose length is right, cut inside an occurrence.
    let cut_inside = [meta.clone(), field(0x12, &doc_bytes[..doc_bytes.len() - 3])].concat();
    assert!(matches!(refusal("cut-inside", &cut_inside), ScipError::Protobuf(_)));
    // Lengths near 2^31 and 2^32 with a byte after them: refused before
    // anything is allocated for them.
    let e = refusal("huge-length", &with(&[0x12, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00]));
    assert!(matches!(&e, ScipError::Protobuf(why) if why.contains("runs past the end")), "{e}");
    let e = refusal("u32-length", &with(&[0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]));
    assert!(matches!(&e, ScipError::Protobuf(why) if why.contains("runs past the end")), "{e}");
    // An unknown field 9 (a varint, or bytes), after the documents or before them.
    assert_eq!(refusal("field-9", &with(&[0x48, 0x01])), ScipError::UnknownFields);
    assert_eq!(refusal("field-9-bytes", &with(&[0x4a, 0x02, 0x00, 0x00])), ScipError::UnknownFields);
    assert_eq!(refusal("field-9-first", &[&[0x48, 0x01][..], good.as_slice()].concat()), ScipError::UnknownFields);
    // A group is skipped and not kept, as the decoder does; one without its
    // end is refused.
    let group = with(&[0x4b, 0x08, 0x01, 0x4c]);
    let decoded = Index::parse_from_bytes(&group).unwrap_or_else(|e| panic!("{e}"));
    assert!(decoded.special_fields.unknown_fields().iter().next().is_none());
    assert_eq!(import(&group, &Options::default()).map(|g| g.node_count()).ok(), Some(3));
    assert!(matches!(refusal("open-group", &with(&[0x4b, 0x08, 0x01])), ScipError::Protobuf(_)));
    // Field 2 as a varint is no document: an unknown field, as the decoder has it.
    assert_eq!(refusal("document-varint", &with(&[0x10, 0x01])), ScipError::UnknownFields);
    // Wire types 6 and 4 (no such type; a group's end without its start),
    // field 0, and a tag cut short.
    let tails: [(&str, &[u8]); 4] =
        [("wire-6", &[0x16][..]), ("end-group", &[0x14][..]), ("field-0", &[0x02, 0x00][..]), ("cut-tag", &[0x80][..])];
    for (name, tail) in tails {
        assert!(matches!(refusal(name, &with(tail)), ScipError::Protobuf(_)), "{name}");
    }
    // Another protocol version, from a file too.
    let mut newer = index.clone();
    newer.metadata.mut_or_insert_default().version = protobuf::EnumOrUnknown::from_i32(7);
    assert_eq!(refusal("version", &newer.write_to_bytes().unwrap_or_default()), ScipError::Version(7));
    // Nothing at all, and metadata alone.
    assert_eq!(refusal("empty", b""), ScipError::Empty);
    assert_eq!(import(&meta, &Options::default()).map(|g| g.node_count()).ok(), Some(0));
    // A symbol that does not parse costs that symbol, not the index: the
    // rest is served. The decoder's refusal still comes first: a symbol
    // that does not parse, then an unknown field, is refused for the field.
    let mut bad = index.clone();
    let lost = bad.documents[0].occurrences[0].symbol.clone();
    bad.documents[0].occurrences[0].symbol = "rust-analyzer cargo".into();
    let whole = import(&index.write_to_bytes().unwrap_or_default(), &Options::default()).expect("imports");
    let bad = bad.write_to_bytes().unwrap_or_default();
    let served = import(&bad, &Options::default()).expect("served, minus the symbol that does not parse");
    assert!(served.node_count() > 0 && served.node_count() <= whole.node_count(), "{lost}");
    let bad_then_field_9 = [bad.as_slice(), &[0x48, 0x01][..]].concat();
    assert_eq!(refusal("bad-symbol-field-9", &bad_then_field_9), ScipError::UnknownFields);
}

/// An index rewritten between the two walks (an indexer writing it in
/// place while it is read): the import refuses it with the reason, instead
/// of giving one document's references another's scopes.
#[test]
fn an_index_that_changes_between_the_walks_is_refused() {
    /// A source whose second walk meets other documents.
    struct Rewritten {
        walks: [Index; 2],
        walk: usize,
    }
    impl stream::Source for Rewritten {
        fn documents(&mut self, f: &mut stream::Visit<'_>) -> Result<(), GraphError> {
            let index = &self.walks[self.walk.min(1)];
            self.walk += 1;
            for (i, d) in index.documents.iter().enumerate() {
                f(i, d)?;
            }
            Ok(())
        }
        fn metadata(&self) -> Option<&scip::types::Metadata> {
            self.walks[0].metadata.as_ref()
        }
        fn external_symbols(&self) -> &[scip::types::SymbolInformation] {
            &self.walks[0].external_symbols
        }
    }
    let path = fixture_paths().into_iter().next().expect("a fixture");
    let index = Index::parse_from_bytes(&std::fs::read(&path).expect("reads")).expect("parses");
    assert!(index.documents.len() >= 2, "{}", path.display());
    let opts = Options { name: "fixture".into() };
    // Documents in another order, then one fewer.
    let mut reordered = index.clone();
    reordered.documents.reverse();
    let mut shorter = index.clone();
    shorter.documents.pop();
    for second in [reordered, shorter] {
        let mut source = Rewritten { walks: [index.clone(), second], walk: 0 };
        let err = run(&mut source, &opts, None).expect_err("refused");
        assert!(err.to_string().contains("changed while it was read"), "{err}");
    }
    // The same index twice is read as ever.
    let mut same = Rewritten { walks: [index.clone(), index.clone()], walk: 0 };
    assert_eq!(
        run(&mut same, &opts, None).expect("reads").node_count(),
        import_index(&index, &opts).expect("reads").node_count()
    );
}

/// A path that cannot be read as a file says so, not "truncated".
#[test]
fn a_directory_is_no_index_and_the_error_says_why() {
    let dir = std::env::temp_dir();
    let err = import_file(&dir, &Options { name: "x".into() }).expect_err("a directory");
    let text = err.to_string();
    assert!(!text.contains("truncated"), "{text}");
}

#[test]
fn a_value_of_a_function_type_is_a_function_and_only_that() {
    use super::symbols::kind_from_signature;
    // scip-typescript's signatures of `const f = <T>(a: T) => a` and kin.
    assert_eq!(kind_from_signature("const f: <T>(a: T) => T", false), Some("function"));
    assert_eq!(kind_from_signature("const f: <T extends Record<K, V>>(a: T) => T", false), Some("function"));
    assert_eq!(kind_from_signature("let g: (a: A) => B", false), Some("function"));
    // A value of a named type (even a callable alias: the index does not
    // say) and of a type with an arrow inside stay values.
    assert_eq!(kind_from_signature("var createStore: CreateStore", false), Some("variable"));
    assert_eq!(kind_from_signature("const n: number", false), Some("constant"));
    assert_eq!(kind_from_signature("const m: Map<string, () => void>", false), Some("constant"));
}
