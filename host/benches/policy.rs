//! What the policy costs per tool call: the default policy natively vs. as a
//! sandboxed component (warm pooled instance, and a fresh instance), a whole
//! in-process tool call with and without the policy, and the same policy
//! calls for policies written in other languages.
//!
//! Run: `cargo bench --bench policy`. Compare within one run (ratios): the
//! machines here are shared and noisy. Results: BENCHMARKS.md.
//!
//! `SIGNPOST_BENCH_POLICIES=a.wasm,b.wasm` adds components to the language
//! comparison (the test suite builds the Python and JavaScript examples to
//! `target/tmp/trail.wasm` and `target/tmp/compass.wasm`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use signpost::graph::Graph;
use signpost::policy::{self, Limits, PolicyEngine};
use signpost::record::{RecordOptions, Recorder};
use signpost::sanitize::{self, Allowed, Scope};
use signpost::service::Evidence;
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::tools::{self, StrictIds, Tool};

fn bench(c: &mut Criterion) {
    let engine = PolicyEngine::new(Limits::default()).expect("engine");
    let policy = engine.load(signpost::DEFAULT_POLICY, "embedded").expect("default policy");
    let graph = Graph::sample();
    let ctrl = graph.find_named("OrderController").expect("sample").id();
    let describe_args = json!({"id": ctrl});
    let describe_result = tools::execute(
        &graph,
        tools::parse(&graph, Tool::Describe, describe_args.as_object().expect("object"), &mut StrictIds)
            .expect("parse"),
    )
    .expect("describe");
    let session = std::sync::Arc::new(policy::Session { call_count: 3, recent: vec![], seen_ids: vec![ctrl.clone()] });
    let native_session = signpost_hints::model::Session { call_count: 3, recent: vec![], seen_ids: vec![ctrl.clone()] };

    let ids_raw = format!("['{ctrl}']");
    let coerce_call = policy::Call {
        tool: "neighbors".into(),
        args: json!({"ids": ids_raw, "direction": "out", "edge_types": ["CALLS"]}).to_string(),
    };
    let native_coerce_call = signpost_hints::model::Call::from_json(&coerce_call.tool, &coerce_call.args);
    let mut group = c.benchmark_group("coerce-ids");
    group.bench_function("native", |b| {
        b.iter(|| signpost_hints::coerce::coerce_ids(black_box(&native_coerce_call), "ids"))
    });
    group.bench_function("component-warm", |b| {
        let mut lease = policy.cold_lease();
        b.iter(|| lease.coerce_ids(black_box(&coerce_call), "ids").expect("no fault"))
    });
    group.bench_function("component-fresh-instance", |b| {
        b.iter(|| policy.cold_lease().coerce_ids(black_box(&coerce_call), "ids").expect("no fault"))
    });
    group.finish();

    let call = policy::Call { tool: "describe".into(), args: describe_args.to_string() };
    let outcome = policy::Outcome::Success(describe_result.to_string());
    let native_call = signpost_hints::model::Call::from_json("describe", &call.args);
    let native_outcome = signpost_hints::model::Outcome::Success(describe_result.to_string());
    let mut group = c.benchmark_group("advise+render describe");
    group.bench_function("native", |b| {
        b.iter(|| {
            let advice = signpost_hints::advise::advise(&native_call, black_box(&native_outcome), &native_session);
            signpost_hints::render::render(&native_call, &advice)
        })
    });
    group.bench_function("component-warm", |b| {
        let mut lease = policy.cold_lease();
        b.iter(|| {
            let advice = lease.advise(&call, black_box(&outcome), &session).expect("no fault");
            lease.render(&call, &advice).expect("no fault")
        })
    });
    group.finish();

    // The same calls on policies built from other languages.
    let extra = std::env::var("SIGNPOST_BENCH_POLICIES").unwrap_or_default();
    let paths = std::iter::once(env!("SIGNPOST_STRICT_POLICY")).chain(extra.split(',').filter(|p| !p.is_empty()));
    let others: Vec<(String, policy::Policy)> = paths
        .map(|path| {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let other = engine.load(&bytes, path).unwrap_or_else(|e| panic!("{path}: {e}"));
            (format!("{} ({} KB)", other.identity().name, bytes.len() / 1024), other)
        })
        .collect();
    let languages: Vec<(&str, &policy::Policy)> = std::iter::once(("signpost-default (Rust)", &policy))
        .chain(others.iter().map(|(name, other)| (name.as_str(), other)))
        .collect();
    let mut group = c.benchmark_group("policies: advise+render describe, warm");
    for (name, other) in &languages {
        group.bench_function(*name, |b| {
            let mut lease = other.cold_lease();
            b.iter(|| {
                let advice = lease.advise(&call, black_box(&outcome), &session).expect("no fault");
                lease.render(&call, &advice).expect("no fault")
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("policies: fresh instance + coerce-ids");
    for (name, other) in &languages {
        group.bench_function(*name, |b| {
            b.iter(|| other.cold_lease().coerce_ids(black_box(&coerce_call), "ids").expect("no fault"))
        });
    }
    group.finish();

    let signpost = Signpost::new(Graph::sample(), policy).expect("signpost");
    let history = SessionContext::new();
    let args = describe_args.as_object().cloned().expect("object");
    let mut group = c.benchmark_group("tool call describe");
    group.bench_function("graph only (no policy)", |b| {
        b.iter(|| {
            let parsed =
                tools::parse(&signpost.graph(), Tool::Describe, black_box(&args), &mut StrictIds).expect("parse");
            tools::execute(&signpost.graph(), parsed).expect("ok")
        })
    });
    group.bench_function("whole pipeline", |b| {
        b.iter(|| signpost.call(Tool::Describe, black_box(args.clone()), &history))
    });
    // Instances never cross sessions: a session's first call pays for a
    // fresh instance (what isolation costs when no warm one is kept).
    group.bench_function("whole pipeline, a new session every call", |b| {
        b.iter(|| signpost.call(Tool::Describe, black_box(args.clone()), &SessionContext::new()))
    });
    // A policy that does next to nothing (chaos without markers: no hints,
    // one line of text): what the host's part of the pipeline costs.
    let noop = engine.load(&std::fs::read(env!("SIGNPOST_CHAOS_POLICY")).expect("chaos"), "chaos").expect("chaos");
    let noop = Signpost::new(Graph::sample(), noop).expect("signpost");
    group.bench_function("whole pipeline, no-op policy", |b| {
        b.iter(|| noop.call(Tool::Describe, black_box(args.clone()), &history))
    });
    // The sanitiser alone, on the default policy's `describe` text (what
    // it costs a call; issue 22's budget is 5 µs more than before).
    let session = SessionContext::new();
    // The second call: the id is in the session's history by then.
    signpost.call(Tool::Describe, args.clone(), &session);
    let response = signpost.call(Tool::Describe, args.clone(), &session);
    let snapshot = session.snapshot();
    let allowed: Vec<Allowed<'_>> =
        response.hints.iter().filter(|h| h.actionable).map(|h| Allowed { tool: &h.tool, args: &h.args }).collect();
    group.bench_function("sanitiser only, default policy's text", |b| {
        b.iter(|| {
            let known = signpost::pipeline::known(&graph, &args, &snapshot, Some(&response.structured));
            sanitize::agent_text(black_box(&response.text), &Scope::new(&allowed, known))
        })
    });
    group.finish();

    // The call mix of bench/peer (per sample symbol: resolve, describe,
    // the first `neighbors` hint, search, find), one session each, as the
    // end-to-end ratio sees it: what hints on cost against a no-op policy
    // over every tool, not describe alone.
    let mix = call_mix(&signpost);
    // The no-op policy again, speaking 0.3.0 (it asks the host for nothing),
    // and any component named in SIGNPOST_BENCH_MIX_POLICIES (a build of
    // the default policy before a change, say): each a row of its own.
    let v3 = std::fs::read(env!("SIGNPOST_CHAOS_V3_POLICY")).expect("chaos 0.3.0");
    let noop_v3 =
        Signpost::new(Graph::sample(), engine.load(&v3, "chaos 0.3.0").expect("chaos 0.3.0")).expect("signpost");
    let extra = std::env::var("SIGNPOST_BENCH_MIX_POLICIES").unwrap_or_default();
    let extra: Vec<(String, Signpost)> = extra
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|path| {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let other = engine.load(&bytes, path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let name = format!("whole pipeline, {} ({})", path.rsplit('/').next().unwrap_or(path), other.interface());
            (name, Signpost::new(Graph::sample(), other).expect("signpost"))
        })
        .collect();
    let rows = [
        ("whole pipeline", &signpost),
        ("whole pipeline, no-op policy", &noop),
        ("whole pipeline, no-op policy (0.3.0)", &noop_v3),
    ];
    let rows = rows.into_iter().chain(extra.iter().map(|(name, server)| (name.as_str(), server)));
    for (name, server) in rows {
        // A short session (the mix's own ids), and a long one: an agent's
        // session after a few dozen calls, its history full (the most ids
        // the host keeps, most of them not the mix's).
        for long in [false, true] {
            let session = SessionContext::new();
            if long {
                // A call's ids are taken a bounded number at a time.
                for ids in long_history().chunks(signpost::session::MAX_IDS_PER_CALL) {
                    session.saw(ids);
                }
                assert_eq!(session.snapshot().seen_ids.len(), signpost::session::MAX_SEEN);
            }
            for (tool, args) in &mix {
                server.call(*tool, args.clone(), &session);
            }
            let mut group = c.benchmark_group(if long {
                "the call mix (25 calls), a long session"
            } else {
                "the call mix (25 calls)"
            });
            group.bench_function(name, |b| {
                b.iter(|| {
                    for (tool, args) in &mix {
                        black_box(server.call(*tool, args.clone(), &session));
                    }
                })
            });
            group.finish();
        }
    }
    // The sanitiser alone on the default policy's texts of the whole mix.
    let session = SessionContext::new();
    let answers: Vec<_> = mix.iter().map(|(tool, args)| (args, signpost.call(*tool, args.clone(), &session))).collect();
    let snapshot = session.snapshot();
    let mut group = c.benchmark_group("the call mix (25 calls)");
    group.bench_function("sanitiser only, default policy's texts", |b| {
        b.iter(|| {
            for (args, response) in &answers {
                let allowed: Vec<Allowed<'_>> = response
                    .hints
                    .iter()
                    .filter(|h| h.actionable)
                    .map(|h| Allowed { tool: &h.tool, args: &h.args })
                    .collect();
                let known = signpost::pipeline::known(&graph, args, &snapshot, Some(&response.structured));
                black_box(sanitize::agent_text(black_box(&response.text), &Scope::new(&allowed, known)));
            }
        })
    });
    group.bench_function("sanitiser: ids only", |b| {
        b.iter(|| {
            for (args, response) in &answers {
                let known = signpost::pipeline::known(&graph, args, &snapshot, Some(&response.structured));
                let mut scanner = sanitize::ids::Scanner::default();
                for line in response.text.split('\n') {
                    black_box(sanitize::ids::replace_forged(line, &known, &mut scanner));
                }
            }
        })
    });
    for (name, hint_lines) in
        [("sanitiser: calls only, hint lines", true), ("sanitiser: calls only, other lines", false)]
    {
        group.bench_function(name, |b| {
            b.iter(|| {
                for (_, response) in &answers {
                    for line in response.text.split('\n').filter(|l| l.starts_with("→ next") == hint_lines) {
                        black_box(sanitize::has_call(line));
                    }
                }
            })
        });
    }
    group.finish();

    // What follow-through metrics and the decision log cost a call: the
    // same describe, one session, with both off, metrics on (the default),
    // and metrics plus recording (a line queued to the writer thread).
    let mut group = c.benchmark_group("evidence: tool call describe");
    let record_dir = std::env::temp_dir().join(format!("signpost-bench-record-{}", std::process::id()));
    let setups = [
        ("both off", Evidence { metrics: None, recorder: None }),
        ("metrics", Evidence::default()),
        (
            "metrics + record",
            Evidence {
                metrics: Some(std::sync::Arc::default()),
                recorder: Some(
                    Recorder::start(RecordOptions { dir: record_dir.clone(), max_file_bytes: 64 << 20, max_files: 2 })
                        .expect("recorder"),
                ),
            },
        ),
    ];
    for (name, evidence) in setups {
        let policy = engine.load(signpost::DEFAULT_POLICY, "embedded").expect("default policy");
        let server = Signpost::new(Graph::sample(), policy).expect("signpost").with_evidence(evidence);
        let session = SessionContext::new();
        group.bench_function(name, |b| b.iter(|| server.call(Tool::Describe, black_box(args.clone()), &session)));
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&record_dir);
    let _: Value = describe_result;
}

/// As many ids as a session's history holds, none of them the graph's.
fn long_history() -> Vec<String> {
    (0..signpost::session::MAX_SEEN)
        .map(|i| format!("{:040x}", 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(i as u64 + 1)))
        .collect()
}

/// bench/peer's call mix (`port.py`'s `call_mix`), built from the answers.
fn call_mix(server: &Signpost) -> Vec<(Tool, serde_json::Map<String, Value>)> {
    let session = SessionContext::new();
    let object = |v: Value| v.as_object().cloned().expect("object");
    let mut mix = vec![];
    for ident in ["OrderController", "OrderService.placeOrder", "PaymentService", "StripeClient", "kafka:order-events"]
    {
        let resolve = object(json!({"identifier": ident}));
        let top = server.call(Tool::Resolve, resolve.clone(), &session).structured["candidates"][0].clone();
        let describe = object(json!({"id": top["id"]}));
        let described = server.call(Tool::Describe, describe.clone(), &session);
        let neighbors = described.hints.iter().find(|h| h.tool == "neighbors").map_or_else(
            || object(json!({"ids": [top["id"]], "direction": "in", "edge_types": ["DECLARES"]})),
            |h| h.args.clone(),
        );
        let name = top["name"].as_str().expect("name").to_lowercase();
        let mut find = object(json!({"kind": top["kind"]}));
        if let Some(role) = top["roles"].get(0) {
            find.insert("role".into(), role.clone());
        }
        mix.extend([
            (Tool::Resolve, resolve),
            (Tool::Describe, describe),
            (Tool::Neighbors, neighbors),
            (Tool::Search, object(json!({"query": name}))),
            (Tool::Find, find),
        ]);
    }
    mix
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
