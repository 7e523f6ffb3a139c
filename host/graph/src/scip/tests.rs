//! The SCIP importer on the fixtures of every indexer, and on broken indexes.

use super::occurrences::DEFINITION;
use super::symbols::id_of;
use super::*;
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
