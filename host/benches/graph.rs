//! Tools on a synthetic graph with hub symbols: a method that 59,000 others
//! call (the shape that made `describe` quadratic), against an ordinary
//! method, through `tools::parse` + `tools::execute` (no policy).
//!
//! Run: `cargo bench --bench graph`. `SIGNPOST_BENCH_NODES` sets the graph
//! size (default 200,000 symbols, ~5 edges each). Results: BENCHMARKS.md.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use signpost::graph::Graph;
use signpost::tools::{self, StrictIds};

/// Callers of the hub method.
const HUB_CALLERS: usize = 59_000;

fn id(n: usize) -> String {
    format!("{n:040x}")
}

/// Classes of 4 methods each; every method calls 4 others (a fixed
/// pseudo-random pattern), and the first `HUB_CALLERS` methods also call
/// the hub (method 1).
fn synthetic(nodes: usize) -> Graph {
    let classes = nodes / 5;
    let mut doc = String::with_capacity(nodes * 300);
    doc.push_str(r#"{"name":"synthetic","nodes":["#);
    let mut first = true;
    let mut node = |doc: &mut String, n: usize, kind: &str, name: String, fqn: String| {
        if !first {
            doc.push(',');
        }
        first = false;
        let _ = write!(
            doc,
            r#"{{"id":"{}","kind":"{kind}","name":"{name}","fqn":"{fqn}","file":"src/C{}.java"}}"#,
            id(n),
            n / 5
        );
    };
    for c in 0..classes {
        node(&mut doc, c * 5, "class", format!("C{c}"), format!("com.example.C{c}"));
        for m in 1..5 {
            node(&mut doc, c * 5 + m, "method", format!("m{m}"), format!("com.example.C{c}.m{m}"));
        }
    }
    doc.push_str(r#"],"edges":["#);
    let methods: Vec<usize> = (0..classes).flat_map(|c| (1..5).map(move |m| c * 5 + m)).collect();
    let mut first = true;
    let mut edge = |doc: &mut String, src: usize, dst: usize, ty: &str| {
        if !first {
            doc.push(',');
        }
        first = false;
        let _ = write!(doc, r#"{{"src":"{}","dst":"{}","type":"{ty}"}}"#, id(src), id(dst));
    };
    for c in 0..classes {
        for m in 1..5 {
            edge(&mut doc, c * 5, c * 5 + m, "DECLARES");
        }
    }
    for (i, &m) in methods.iter().enumerate() {
        for k in 1..5 {
            let other = methods[(i * 7919 + k * 104_729) % methods.len()];
            if other != m {
                edge(&mut doc, m, other, "CALLS");
            }
        }
        if i < HUB_CALLERS && m != 1 {
            edge(&mut doc, m, 1, "CALLS");
        }
    }
    doc.push_str("]}");
    Graph::from_json(&doc).expect("synthetic graph")
}

fn run(graph: &Graph, tool: &str, args: &Value) -> Value {
    let args = args.as_object().expect("object");
    tools::execute(graph, tools::parse(graph, tool, args, &mut StrictIds).expect("parse")).expect("execute")
}

fn bench(c: &mut Criterion) {
    let nodes = std::env::var("SIGNPOST_BENCH_NODES").ok().and_then(|n| n.parse().ok()).unwrap_or(200_000);
    let graph = synthetic(nodes);
    eprintln!("graph: {} symbols, {} edges", graph.node_count(), graph.edge_count());
    let hub = id(1);
    let plain = id(nodes / 2 + 1);
    let described = run(&graph, "describe", &json!({"id": hub}));
    assert!(described["edge_summary"]["in"]["CALLS"].as_u64().unwrap_or(0) >= HUB_CALLERS as u64 - 1);
    let mut group = c.benchmark_group("tools");
    group.sample_size(20);
    for (label, target) in [("hub", &hub), ("plain", &plain)] {
        group.bench_function(format!("describe/{label}"), |b| {
            b.iter(|| run(&graph, "describe", black_box(&json!({"id": target}))))
        });
        group.bench_function(format!("neighbors-in-calls-page/{label}"), |b| {
            let args = json!({"ids": [target], "direction": "in", "edge_types": ["CALLS"], "limit": 25});
            b.iter(|| run(&graph, "neighbors", black_box(&args)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
