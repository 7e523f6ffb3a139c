//! The graph's own tests: ids, loading, the sample, edges and their kinds.

use super::*;

fn id(n: u8) -> String {
    format!("{n:040x}")
}

fn small() -> Graph {
    let node = |n: u8, kind: &str, name: &str| serde_json::json!({"id": id(n), "kind": kind, "name": name, "fqn": format!("x.{name}"), "file": "x.java"});
    let doc = serde_json::json!({
        "nodes": [node(1, "class", "C"), node(2, "method", "m"), node(3, "route", "GET /"), node(4, "method", "caller")],
        "edges": [
            {"src": id(1), "dst": id(2), "type": "DECLARES"},
            {"src": id(2), "dst": id(3), "type": "EXPOSES"},
            {"src": id(4), "dst": id(2), "type": "CALLS"},
            {"src": id(4), "dst": id(2), "type": "CALLS"}
        ]
    });
    Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn composed_keys_walk_both_ways() {
    let g = small();
    let key = g.parse_edge_key("DECLARES.EXPOSES").ok().flatten().unwrap_or_default();
    assert_eq!(g.walk(0, Direction::Out, &key), vec![2]);
    assert_eq!(g.walk(2, Direction::In, &key), vec![0]);
    assert_eq!(g.edge_count(), 3, "duplicate edges collapse");
    let s = g.edge_summary(&[0]);
    assert_eq!(s.out.get("DECLARES.EXPOSES"), Some(&1));
    assert_eq!(s.out.get("DECLARES.CALLS"), None);
    let s = g.edge_summary(&[2]);
    assert_eq!(s.inn.get("DECLARES.EXPOSES"), Some(&1));
}

#[test]
fn ids_round_trip_and_lookups_take_either_case() {
    let g = small();
    let raw = parse_id(&id(3)).unwrap_or_default();
    assert_eq!(format_id(&raw), id(3));
    assert_eq!(g.lookup(&id(3).to_uppercase()), Some(2));
    assert_eq!(g.lookup(&id(9)), None);
    assert_eq!(g.lookup("not an id"), None);
}

#[test]
fn formats_are_told_apart_by_content() {
    assert_eq!(Format::detect(b"  \n{\"nodes\":[]}"), Some(Format::Json));
    assert_eq!(Format::detect(snapshot::MAGIC_PREFIX), Some(Format::Snapshot));
    assert_eq!(Format::detect(&[0x0a, 0x05]), Some(Format::Scip));
    assert_eq!(Format::detect(b"not json"), Some(Format::Json), "text gets JSON's error");
    assert_eq!(Format::detect(b"\x89PNG\r\n"), Some(Format::Scip));
    // Metadata of exactly 123 bytes: the length byte is `{`.
    assert_eq!(Format::detect(&[0x0a, 0x7b, 0x12, 0x0f, 0x0a, 0x0d]), Some(Format::Scip));
    assert_eq!(Format::detect(b"   "), None);
}

#[test]
fn merge_joins_by_id_and_a_definition_beats_a_placeholder() {
    let a = small();
    let ext = serde_json::json!({
        "nodes": [{"id": id(2), "kind": "method", "name": "m", "roles": ["external"]},
                  {"id": id(7), "kind": "function", "name": "user"}],
        "edges": [{"src": id(7), "dst": id(2), "type": "CALLS"}]
    });
    let b = Graph::from_json(&ext.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let m = merge("ws", &[b, a]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.node_count(), 5);
    let ix = m.lookup(&id(2)).unwrap_or_default();
    assert_eq!(m.node(ix).fqn(), "x.m", "the definition's record wins");
    assert!(!m.node(ix).has_role("external"));
    // A node without a source file (a namespace an importer made up) is
    // a placeholder too: a later graph's definition replaces it.
    let made_up = serde_json::json!({"nodes": [{"id": id(1), "kind": "module", "name": "C"}]});
    let made_up = Graph::from_json(&made_up.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let m2 = merge("ws", &[made_up, small()]).unwrap_or_else(|e| panic!("{e}"));
    let c = m2.lookup(&id(1)).unwrap_or_default();
    assert_eq!((m2.node(c).kind(), m2.node(c).file()), ("class", "x.java"));
    let calls = m.parse_edge_key("CALLS").ok().flatten().unwrap_or_default();
    assert_eq!(m.walk(ix, Direction::In, &calls).len(), 2, "callers from both graphs");
}

/// A merged graph reads its parts' strings where they are (no copy).
#[test]
fn a_merge_shares_its_parts_strings() {
    let (a, b) = (small(), Graph::sample());
    let m = merge("ws", [&a, &b]).unwrap_or_else(|e| panic!("{e}"));
    for part in [&a, &b] {
        for n in part.iter() {
            let x = m.node(m.lookup_raw(n.raw_id()).unwrap_or_default());
            assert_eq!((x.name(), x.fqn(), x.doc(), x.signature()), (n.name(), n.fqn(), n.doc(), n.signature()));
        }
    }
    assert_eq!(m.text.len(), a.text.len() + b.text.len(), "each part's strings once, none copied");
    for part in [&a, &b] {
        assert!(!part.text.arenas().is_empty());
        assert!(part.text.arenas().iter().all(|p| m.text.arenas().contains(p)), "the parts' arenas, shared");
    }
    // Held together, the strings are counted once; apart, twice.
    let whole = |g: &Graph| g.heap_bytes();
    let text = a.text.capacity() + b.text.capacity();
    assert_eq!(m.text.capacity(), text);
    assert_eq!(Graph::heap_bytes_together([&a, &b, &m]), whole(&a) + whole(&b) + whole(&m) - text);
    assert_eq!(Graph::heap_bytes_together([&m]), whole(&m));
}

#[test]
fn query_indexes_are_made_at_the_first_query_or_warm_as_built() {
    let g = Graph::sample();
    assert!(!g.is_warm(), "a graph built makes its indexes by id and file only");
    assert!(g.lookup(&g.node(3).id()).is_some(), "found by id with no query index made");
    assert!(!g.is_warm());
    let (found, _) = query::resolve(&g, "OrderService", None, 10);
    assert!(!found.is_empty() && g.is_warm(), "the first query makes them");
    assert!(g.indexes_are_fresh());
    let cold = Graph::sample();
    assert!(cold.indexes_are_fresh() && !cold.is_warm(), "checked, not made");
    let h = Graph::sample();
    h.warm();
    assert!(h.is_warm());
    assert_eq!(g.index, h.index, "made at a query or warmed: the same");
    assert!(Graph::sample().heap_bytes() < h.heap_bytes(), "a graph never queried holds less");
    let mut g = g;
    g.forget_query_indexes();
    assert!(!g.is_warm() && g.lookup(&g.node(3).id()).is_some());
}

#[test]
fn sample_graph_is_realistic() {
    let g = Graph::sample();
    assert!(g.node_count() >= 150, "{}", g.node_count());
    let types = g.edge_types();
    for t in [
        "CALLS",
        "DECLARES",
        "EXPOSES",
        "EXTENDS",
        "IMPLEMENTS",
        "OVERRIDES",
        "REFERENCES",
        "TARGETS",
        "PUBLISHES",
        "SUBSCRIBES",
    ] {
        assert!(types.contains(&t), "{t} missing from the sample graph");
    }
    for kind in ["class", "interface", "method", "field", "module", "route", "topic"] {
        assert!(g.iter().any(|n| n.kind() == kind), "no {kind}");
    }
    for role in ["controller", "service", "repository", "entity", "http_client", "producer", "consumer"] {
        assert!(g.iter().any(|n| n.has_role(role)), "no {role}");
    }
}

/// Queries that arrive together at a graph served before its query
/// indexes are made (a project's first index) wait for one thread to make
/// them, not each make a copy.
#[test]
fn callers_outside_rayon_wait_for_one_build_of_the_query_indexes() {
    let mut b = GraphBuilder::new("many");
    for n in 0..60_000u32 {
        let mut id = [0u8; 20];
        id[..4].copy_from_slice(&n.to_be_bytes());
        let (name, fqn, doc) =
            (format!("n{n}"), format!("p{}.q{}.n{n}", n % 97, n % 13), format!("doc {n} of {}", n % 7));
        let spec =
            NodeSpec { id, kind: "method", name: &name, fqn: &fqn, file: "f.src", doc: &doc, ..NodeSpec::default() };
        b.add_node(spec).unwrap_or_else(|e| panic!("{e}"));
    }
    let g = b.build().unwrap_or_else(|e| panic!("{e}"));
    // Another test's graph may have had this address before.
    let address = &g as *const Graph as usize;
    let built = || {
        index::BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().filter(|&&a| a == address).count()
    };
    let before = built();
    let start = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                start.wait();
                g.build_query_indexes();
            });
        }
    });
    assert_eq!(built() - before, 1, "the indexes made once");
}
