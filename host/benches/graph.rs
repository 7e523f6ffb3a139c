//! The graph at scale: a synthetic code base built through the public
//! `GraphBuilder` (modules, classes, methods with generated names and
//! docs, about 10 edges a symbol, one hub method with up to 100,000
//! callers), then: snapshot write and load time, resident memory, and the
//! tools in-process (`tools::parse` + `tools::execute`, no policy).
//!
//! Run: `cargo bench --bench graph`; `SIGNPOST_BENCH_NODES` sets the size
//! (default 200,000 symbols; BENCHMARKS.md has 10k to 5M). Memory and load
//! figures are printed to stderr before criterion's. `SIGNPOST_BENCH_KEEP=FILE`
//! keeps the snapshot, to serve it (`bench/stdio_cpu.py --graph FILE`).
//!
//! `SIGNPOST_BENCH_GRAPH=FILE` benches a real graph's snapshot instead (a
//! served project's, say: BENCHMARKS.md says how one is kept): `search`
//! for each of `SIGNPOST_BENCH_QUERIES` (comma-separated; default
//! `Admin,client,zzqqxx`: a broad word, a broader one, none).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use signpost::graph::{Graph, GraphBuilder, NodeSpec, format_id, snapshot};
use signpost::tools::{self, StrictIds, Tool};

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

/// The same code base as a SCIP index, as scip-java would write it: one
/// document per class, typed ranges, `SymbolInformation` with kinds, and
/// every call and class reference as an occurrence inside its method's
/// enclosing range. Protobuf bytes.
fn synthetic_scip(nodes: usize) -> Vec<u8> {
    use protobuf::Message;
    use scip::types::{Document, Index, Occurrence, SymbolInformation, occurrence, symbol_information};
    let prefix = "scip-java maven acme 1.0.0 com/acme/";
    let mut symbols = Vec::with_capacity(nodes);
    let mut methods = Vec::new();
    let mut classes = Vec::new();
    let (mut module, mut class) = (String::new(), String::new());
    for n in 0..nodes {
        let w = |k: usize| WORDS[(n.wrapping_mul(2_654_435_761) >> k) % WORDS.len()];
        if n % 100 == 0 {
            module = format!("{}{}", w(3), n / 100);
            symbols.push(format!("{prefix}{module}/"));
        } else if n % 10 == 1 {
            class = format!("{}{}{}", cap(w(5)), cap(w(11)), n / 10);
            classes.push(symbols.len());
            symbols.push(format!("{prefix}{module}/{class}#"));
        } else {
            methods.push(symbols.len());
            symbols.push(format!("{prefix}{module}/{class}#{}{}().", VERBS[n % VERBS.len()], cap(w(9))));
        }
    }
    let range = |line: i32, end_line: i32| {
        let mut r = scip::types::MultiLineRange::new();
        (r.start_line, r.start_character, r.end_line, r.end_character) = (line, 0, end_line, 1);
        r
    };
    let occ = |symbol: &str, roles: i32, at: i32, enclosing: Option<(i32, i32)>| {
        let mut o = Occurrence::new();
        o.symbol = symbol.to_owned();
        o.symbol_roles = roles;
        o.typed_range = Some(occurrence::Typed_range::MultiLineRange(range(at, at)));
        if let Some((a, b)) = enclosing {
            o.typed_enclosing_range = Some(occurrence::Typed_enclosing_range::MultiLineEnclosingRange(range(a, b)));
        }
        o
    };
    let method_pos: std::collections::HashMap<usize, usize> =
        methods.iter().enumerate().map(|(i, &m)| (m, i)).collect();
    let hub_callers = (nodes / 4).min(100_000);
    let mut index = Index::new();
    index.metadata.mut_or_insert_default().tool_info.mut_or_insert_default().name = "scip-java".into();
    let mut doc = Document::new();
    let mut line = 0;
    for (n, sym) in symbols.iter().enumerate() {
        let mut info = SymbolInformation::new();
        info.symbol = sym.clone();
        if n % 100 == 0 {
            info.kind = symbol_information::Kind::Package.into();
            index.external_symbols.push(info);
            continue;
        }
        if n % 10 == 1 {
            if !doc.relative_path.is_empty() {
                index.documents.push(std::mem::take(&mut doc));
            }
            doc.relative_path = format!("src/{}.java", sym.trim_end_matches('#').replace(prefix, ""));
            info.kind = symbol_information::Kind::Class.into();
            info.documentation = vec!["A class.".into()];
            doc.occurrences.push(occ(sym, 1, 0, Some((0, 1000))));
            line = 1;
        } else {
            info.kind = symbol_information::Kind::Method.into();
            info.documentation = vec!["```java\nvoid m()\n```".into(), "Returns a value.".into()];
            let i = method_pos[&n];
            doc.occurrences.push(occ(sym, 1, line, Some((line, line + 12))));
            for k in 1..8 {
                let other = methods[(i.wrapping_mul(7919) + k * 104_729) % methods.len()];
                doc.occurrences.push(occ(&symbols[other], 0, line + k as i32, None));
            }
            for k in 1..3 {
                doc.occurrences.push(occ(
                    &symbols[classes[(i * 31 + k * 7) % classes.len()]],
                    0,
                    line + 8 + k as i32,
                    None,
                ));
            }
            if i > 0 && i <= hub_callers {
                doc.occurrences.push(occ(&symbols[methods[0]], 0, line + 11, None));
            }
            line += 13;
        }
        doc.symbols.push(info);
    }
    index.documents.push(doc);
    index.write_to_bytes().expect("encode the synthetic index")
}

fn run(graph: &Graph, tool: Tool, args: &Value) -> Value {
    let args = args.as_object().expect("object");
    tools::execute(graph, tools::parse(graph, tool, args, &mut StrictIds).expect("parse")).expect("execute")
}

/// (VmRSS, VmHWM) in MiB.
fn memory() -> (u64, u64) {
    signpost::graph::memory_mib()
}

fn bench(c: &mut Criterion) {
    let nodes = std::env::var("SIGNPOST_BENCH_NODES").ok().and_then(|n| n.parse().ok()).unwrap_or(200_000);
    // SIGNPOST_BENCH_SCIP=1: time the SCIP importer on the same code base
    // (RUST_LOG=signpost=debug adds its phases).
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .try_init();
    }
    if std::env::var("SIGNPOST_BENCH_SCIP").is_ok_and(|v| v == "1") {
        let started = Instant::now();
        let bytes = synthetic_scip(nodes);
        eprintln!("scip: {} MB generated in {:.1} s", bytes.len() / 1_000_000, started.elapsed().as_secs_f64());
        // SIGNPOST_BENCH_SCIP_OUT=FILE keeps the index, to import it in a
        // process of its own (`/usr/bin/time -v signpost graph import FILE`):
        // the import's peak memory without the generator's.
        if let Some(out) = std::env::var_os("SIGNPOST_BENCH_SCIP_OUT") {
            std::fs::write(&out, &bytes).expect("writing SIGNPOST_BENCH_SCIP_OUT");
            eprintln!("scip: written to {}", std::path::Path::new(&out).display());
            return;
        }
        let started = Instant::now();
        let g = signpost::graph::scip::import(&bytes, &signpost::graph::scip::Options { name: "synthetic".into() })
            .expect("import");
        let (_, peak) = memory();
        eprintln!(
            "scip import: {} symbols, {} edges in {:.1} s; process peak {peak} MiB (the index bytes included)",
            g.node_count(),
            g.edge_count(),
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(file) = std::env::var_os("SIGNPOST_BENCH_GRAPH") {
        return bench_served(c, std::path::Path::new(&file));
    }
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
    // SIGNPOST_BENCH_KEEP=FILE keeps the snapshot (for bench/stdio_cpu.py).
    match std::env::var_os("SIGNPOST_BENCH_KEEP") {
        Some(keep) => std::fs::rename(&path, &keep).expect("keep the snapshot"),
        None => std::fs::remove_file(&path).unwrap_or_default(),
    }
    eprintln!(
        "graph: {symbols} symbols, {edges} edges | build {build_s:.2} s | snapshot {size_mb:.0} MB written in {write_s:.2} s, \
         loaded in {load_s:.2} s | the graph holds {:.0} MiB ({:.0} bytes/symbol with its edges and indexes); \
         process resident {after} MiB, peak {peak} MiB (base {base} MiB, before the load {before} MiB)",
        graph.heap_bytes() as f64 / 1048576.0,
        graph.heap_bytes() as f64 / symbols as f64,
    );
    let parts: Vec<String> =
        graph.heap_breakdown().iter().map(|(part, b)| format!("{part} {:.0}", *b as f64 / 1048576.0)).collect();
    eprintln!("graph: MiB by part: {}", parts.join(", "));

    let hub = format_id(&raw(2));
    let plain = format_id(&raw(nodes / 2 + 5));
    let described = run(&graph, Tool::Describe, &json!({"id": hub}));
    eprintln!("hub callers: {}", described["edge_summary"]["in"]["CALLS"]);
    let mut group = c.benchmark_group(format!("graph-{symbols}"));
    group.sample_size(20);
    for (label, target) in [("hub", &hub), ("plain", &plain)] {
        group.bench_function(format!("describe/{label}"), |b| {
            b.iter(|| run(&graph, Tool::Describe, black_box(&json!({"id": target}))))
        });
        group.bench_function(format!("neighbors-in-calls-page/{label}"), |b| {
            let args = json!({"ids": [target], "direction": "in", "edge_types": ["CALLS"], "limit": 25});
            b.iter(|| run(&graph, Tool::Neighbors, black_box(&args)))
        });
    }
    let class = graph.iter().find(|n| n.kind() == "class").map(|n| n.name().to_owned()).unwrap_or_default();
    for (label, tool, args) in [
        ("resolve/class", Tool::Resolve, json!({"identifier": class})),
        ("resolve/qualified-suffix", Tool::Resolve, json!({"identifier": format!("{class}.getOrder")})),
        ("search/word", Tool::Search, json!({"query": "refund"})),
        ("search/two-words", Tool::Search, json!({"query": "ledger audit"})),
        ("search/fuzzy", Tool::Search, json!({"query": "ldgraud"})),
        ("find/kind+name", Tool::Find, json!({"kind": "class", "name": "ledger"})),
    ] {
        group.bench_function(label, |b| b.iter(|| run(&graph, tool, black_box(&args))));
    }
    group.finish();
}

/// `search` on a real graph's snapshot (`SIGNPOST_BENCH_GRAPH`).
fn bench_served(c: &mut Criterion, file: &std::path::Path) {
    let started = Instant::now();
    let graph = signpost::graph::load(file).expect("load SIGNPOST_BENCH_GRAPH");
    eprintln!(
        "graph: {} symbols, {} edges, loaded in {:.2} s",
        graph.node_count(),
        graph.edge_count(),
        started.elapsed().as_secs_f64()
    );
    let queries = std::env::var("SIGNPOST_BENCH_QUERIES").unwrap_or_else(|_| "Admin,client,zzqqxx".into());
    let mut group = c.benchmark_group(format!("served-{}", graph.node_count()));
    group.sample_size(20);
    for q in queries.split(',') {
        let args = json!({"query": q});
        let found = run(&graph, Tool::Search, &args);
        eprintln!("search {q:?}: {} matches", found["total"]);
        group.bench_function(format!("search/{q}"), |b| b.iter(|| run(&graph, Tool::Search, black_box(&args))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
