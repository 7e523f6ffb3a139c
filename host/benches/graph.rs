//! The graph at scale: a synthetic code base built through the public
//! `GraphBuilder` (modules, classes, methods with generated names and
//! docs, about 10 edges a symbol, one hub method with up to 100,000
//! callers), then: snapshot write and load time, resident memory, and the
//! tools in-process (`tools::parse` + `tools::execute`, no policy).
//!
//! Run: `cargo bench --bench graph`; `SIGNPOST_BENCH_NODES` sets the size
//! (default 200,000 symbols; BENCHMARKS.md has 10k to 5M). Memory and load
//! figures are printed to stderr before criterion's.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use signpost::graph::{Graph, GraphBuilder, NodeSpec, format_id, snapshot};
use signpost::tools::{self, StrictIds};

const WORDS: [&str; 48] = [
    "order",
    "payment",
    "invoice",
    "customer",
    "account",
    "ledger",
    "shipment",
    "cart",
    "price",
    "tax",
    "refund",
    "stock",
    "warehouse",
    "route",
    "session",
    "token",
    "user",
    "profile",
    "report",
    "audit",
    "event",
    "queue",
    "message",
    "channel",
    "cache",
    "index",
    "query",
    "schema",
    "record",
    "batch",
    "job",
    "task",
    "worker",
    "pool",
    "buffer",
    "stream",
    "parser",
    "lexer",
    "node",
    "graph",
    "edge",
    "policy",
    "hint",
    "rule",
    "config",
    "client",
    "server",
    "handler",
];
const VERBS: [&str; 12] =
    ["get", "set", "load", "save", "build", "find", "apply", "check", "merge", "split", "send", "read"];

fn raw(n: usize) -> [u8; 20] {
    let mut id = [0u8; 20];
    id[12..].copy_from_slice(&(n as u64).to_be_bytes());
    id[0] = 0x5e;
    id
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

/// `nodes` symbols: one module per 100, one class per 10, methods for the
/// rest; every method calls 7 others and references 2 classes; the hub
/// (method index 2) is called by min(100,000, nodes / 4) methods.
fn synthetic(nodes: usize) -> Graph {
    let mut b = GraphBuilder::new("synthetic");
    let (mut module, mut class) = (String::new(), String::new());
    let mut methods = Vec::with_capacity(nodes);
    let mut classes = Vec::with_capacity(nodes / 10);
    let (mut cur_module, mut cur_class) = (0u32, 0u32);
    for n in 0..nodes {
        let w = |k: usize| WORDS[(n.wrapping_mul(2_654_435_761) >> k) % WORDS.len()];
        if n % 100 == 0 {
            module = format!("{}{}", w(3), n / 100);
            let fqn = format!("com.acme.{module}");
            cur_module = b
                .add_node(NodeSpec { id: raw(n), kind: "module", name: &module, fqn: &fqn, ..Default::default() })
                .expect("module");
        } else if n % 10 == 1 {
            class = format!("{}{}{}", cap(w(5)), cap(w(11)), n / 10);
            let (fqn, file, doc) = (
                format!("com.acme.{module}.{class}"),
                format!("src/{module}/{class}.java"),
                format!("Keeps the {} of each {} and its {}.", w(7), w(13), w(17)),
            );
            cur_class = b
                .add_node(NodeSpec {
                    id: raw(n),
                    kind: "class",
                    name: &class,
                    fqn: &fqn,
                    file: &file,
                    line: 1,
                    doc: &doc,
                    ..Default::default()
                })
                .expect("class");
            b.add_edge(cur_module, "DECLARES", cur_class).expect("edge");
            classes.push(cur_class);
        } else {
            let name = format!("{}{}", VERBS[n % VERBS.len()], cap(w(9)));
            let (fqn, file, doc) = (
                format!("com.acme.{module}.{class}.{name}"),
                format!("src/{module}/{class}.java"),
                format!("Returns the {} for a {}.", w(7), w(19)),
            );
            let m = b
                .add_node(NodeSpec {
                    id: raw(n),
                    kind: "method",
                    name: &name,
                    fqn: &fqn,
                    file: &file,
                    line: (n % 10) as u32 * 12,
                    doc: &doc,
                    ..Default::default()
                })
                .expect("method");
            b.add_edge(cur_class, "DECLARES", m).expect("edge");
            methods.push(m);
        }
    }
    let hub = methods[0];
    let hub_callers = (nodes / 4).min(100_000);
    for (i, &m) in methods.iter().enumerate() {
        for k in 1..8 {
            let other = methods[(i.wrapping_mul(7919) + k * 104_729) % methods.len()];
            if other != m {
                b.add_edge(m, "CALLS", other).expect("edge");
            }
        }
        for k in 1..3 {
            b.add_edge(m, "REFERENCES", classes[(i * 31 + k * 7) % classes.len()]).expect("edge");
        }
        if i > 0 && i <= hub_callers {
            b.add_edge(m, "CALLS", hub).expect("edge");
        }
    }
    b.build().expect("synthetic graph")
}

fn run(graph: &Graph, tool: &str, args: &Value) -> Value {
    let args = args.as_object().expect("object");
    tools::execute(graph, tools::parse(graph, tool, args, &mut StrictIds).expect("parse")).expect("execute")
}

/// (VmRSS, VmHWM) in MiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn bench(c: &mut Criterion) {
    let nodes = std::env::var("SIGNPOST_BENCH_NODES").ok().and_then(|n| n.parse().ok()).unwrap_or(200_000);
    let (base, _) = memory();
    let started = Instant::now();
    let built = synthetic(nodes);
    let build_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let bytes = snapshot::write(&built);
    let write_s = started.elapsed().as_secs_f64();
    let (edges, symbols) = (built.edge_count(), built.node_count());
    drop(built);
    let path = std::env::temp_dir().join(format!("signpost-bench-{}.snap", std::process::id()));
    std::fs::write(&path, &bytes).expect("write snapshot");
    let size_mb = bytes.len() as f64 / 1e6;
    drop(bytes);
    let (before, _) = memory();
    let started = Instant::now();
    let graph = signpost::graph::load(&path).expect("load snapshot");
    let load_s = started.elapsed().as_secs_f64();
    let (after, peak) = memory();
    let _ = std::fs::remove_file(&path);
    eprintln!(
        "graph: {symbols} symbols, {edges} edges | build {build_s:.2} s | snapshot {size_mb:.0} MB written in {write_s:.2} s, \
         loaded in {load_s:.2} s | the graph holds {:.0} MiB ({:.0} bytes/symbol with its edges and indexes); \
         process resident {after} MiB, peak {peak} MiB (base {base} MiB, before the load {before} MiB)",
        graph.heap_bytes() as f64 / 1048576.0,
        graph.heap_bytes() as f64 / symbols as f64,
    );

    let hub = format_id(&raw(2));
    let plain = format_id(&raw(nodes / 2 + 5));
    let described = run(&graph, "describe", &json!({"id": hub}));
    eprintln!("hub callers: {}", described["edge_summary"]["in"]["CALLS"]);
    let mut group = c.benchmark_group(format!("graph-{symbols}"));
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
    let class = graph.iter().find(|n| n.kind() == "class").map(|n| n.name().to_owned()).unwrap_or_default();
    for (label, tool, args) in [
        ("resolve/class", "resolve", json!({"identifier": class})),
        ("resolve/qualified-suffix", "resolve", json!({"identifier": format!("{class}.getOrder")})),
        ("search/word", "search", json!({"query": "refund"})),
        ("search/two-words", "search", json!({"query": "ledger audit"})),
        ("search/fuzzy", "search", json!({"query": "ldgraud"})),
        ("find/kind+name", "find", json!({"kind": "class", "name": "ledger"})),
    ] {
        group.bench_function(label, |b| b.iter(|| run(&graph, tool, black_box(&args))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
