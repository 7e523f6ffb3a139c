//! Hot-swap costs, measured in one run so they compare as ratios:
//!
//! 1. `Reloader::reload` alone (read, hash, compile or cache, link, identify,
//!    self-check, publish): cold (no cache) vs. cached;
//! 2. file write → new policy serving, through the file watcher (adds the
//!    debounce): cold vs. cached;
//! 3. in-process tool calls per second on 2 threads, without swaps and with a
//!    swap every 100 ms.
//!
//! Run: `cargo bench --bench swap`. Results: BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use signpost::graph::Graph;
use signpost::policy::{Limits, PolicyEngine};
use signpost::reload::Reloader;
use signpost::service::Signpost;
use signpost::session::SessionContext;
use signpost::tools::Tool;

const DEFAULT: &str = env!("SIGNPOST_DEFAULT_POLICY");
const STRICT: &str = env!("SIGNPOST_STRICT_POLICY");

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn install(path: &Path, from: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::copy(from, &tmp).expect("copy");
    std::fs::rename(&tmp, path).expect("rename");
}

fn setup(dir: &Path, cache: bool) -> (Arc<Signpost>, Arc<Reloader>, PathBuf) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("dir");
    let mut engine = PolicyEngine::new(Limits::default()).expect("engine");
    if cache {
        engine = engine.with_cache(dir.join("cache")).expect("cache");
    }
    let path = dir.join("policy.wasm");
    install(&path, DEFAULT);
    let policy = engine.load(&std::fs::read(&path).expect("read"), "bench").expect("load");
    let signpost = Arc::new(Signpost::new(Graph::sample(), policy).expect("signpost"));
    let reloader = Arc::new(Reloader::new(signpost.clone(), engine, path.clone()));
    (signpost, reloader, path)
}

fn main() {
    let root = std::env::temp_dir().join(format!("signpost-bench-swap-{}", std::process::id()));

    // 1. reload() alone.
    for cache in [false, true] {
        let (_sp, reloader, path) = setup(&root.join(format!("reload-{cache}")), cache);
        let mut times = Vec::new();
        for i in 0..12 {
            install(&path, if i % 2 == 0 { STRICT } else { DEFAULT });
            let started = Instant::now();
            let record = reloader.reload();
            let took = started.elapsed();
            assert_eq!(format!("{:?}", record.result), "Published", "{}", record.message);
            if !cache || i >= 2 {
                // With the cache, the first two swaps fill it.
                times.push(took);
            }
        }
        let label = if cache { "cached" } else { "cold (compile)" };
        println!(
            "reload, {label}: median {:.1} ms over {} swaps",
            median(times.clone()).as_secs_f64() * 1e3,
            times.len()
        );
    }

    // 2. file write → serving, through the watcher.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
    for cache in [false, true] {
        let (sp, reloader, path) = setup(&root.join(format!("watch-{cache}")), cache);
        runtime.block_on(async { reloader.clone().start(true).expect("start") });
        std::thread::sleep(Duration::from_millis(300));
        let mut times = Vec::new();
        for i in 0..10 {
            let (file, name) = if i % 2 == 0 { (STRICT, "strict") } else { (DEFAULT, "signpost-default") };
            let started = Instant::now();
            install(&path, file);
            while sp.policy().identity().name != name {
                assert!(started.elapsed() < Duration::from_secs(30), "swap {i} did not happen");
                std::thread::sleep(Duration::from_micros(200));
            }
            if !cache || i >= 2 {
                times.push(started.elapsed());
            }
        }
        let label = if cache { "cached" } else { "cold (compile)" };
        println!(
            "file write -> serving, {label}: median {:.1} ms over {} swaps (includes the {} ms debounce)",
            median(times.clone()).as_secs_f64() * 1e3,
            times.len(),
            signpost::reload::DEBOUNCE.as_millis()
        );
    }

    // 3. Throughput without and with swaps. Swaps alternate between two
    // copies of the default policy that differ only by a custom section, so
    // both sides of the ratio run the same policy code.
    let (sp, reloader, path) = setup(&root.join("load"), true);
    let twin = root.join("default-twin.wasm");
    let mut bytes = std::fs::read(DEFAULT).expect("read");
    let name = b"signpost-bench";
    bytes.extend_from_slice(&[0x00, (1 + name.len() + 1) as u8, name.len() as u8]);
    bytes.extend_from_slice(name);
    bytes.push(0x01);
    std::fs::write(&twin, &bytes).expect("twin");
    let twin = twin.display().to_string();
    let ctrl = sp.graph().find_named("OrderController").expect("sample").id();
    let mut rates = Vec::new();
    for swapping in [false, true] {
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (sp, stop, calls, ctrl) = (sp.clone(), stop.clone(), calls.clone(), ctrl.clone());
                std::thread::spawn(move || {
                    let history = SessionContext::new();
                    let args = json!({"id": ctrl}).as_object().cloned().expect("object");
                    while !stop.load(Ordering::Relaxed) {
                        let r = sp.call(Tool::Describe, args.clone(), &history);
                        assert!(!r.is_error);
                        calls.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let started = Instant::now();
        let mut swaps = 0;
        while started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(100));
            if swapping {
                install(&path, if swaps % 2 == 0 { twin.as_str() } else { DEFAULT });
                let record = reloader.reload();
                assert_eq!(format!("{:?}", record.result), "Published", "{}", record.message);
                swaps += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().expect("worker");
        }
        let rate = calls.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
        println!(
            "describe calls/s on 2 threads, {}: {rate:.0}",
            if swapping { format!("{swaps} swaps (every 100 ms)") } else { "no swaps".into() }
        );
        rates.push(rate);
    }
    println!("throughput with swaps / without: {:.2}", rates[1] / rates[0]);
    let _ = std::fs::remove_dir_all(&root);
}
