//! Real code: SCIP indexes served over MCP, several graphs as one
//! workspace, snapshots, live graph swaps under load, `signpost index` with
//! the real indexers, and hostile graph files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::projects::{copy_dir, walk_hints};
use crate::common::swap::Scratch;
use crate::common::{Client, run_cli};

fn fixture(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scip").join(lang)
}

fn index_of(lang: &str) -> String {
    fixture(lang).join("index.scip").display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scip_index_is_served_and_every_hint_works_verbatim() {
    for (lang, name, starts) in [
        ("rust", "Shape", vec!["Circle", "total_area", "geometry"]),
        ("ts", "Shape", vec!["Circle", "totalArea", "report"]),
        ("py", "Shape", vec!["Circle", "total_area", "geometry"]),
    ] {
        let client = Client::spawn(&["--graph", &index_of(lang)]).await;
        let reply = client.call("resolve", json!({"identifier": name})).await;
        assert_eq!(reply.structured["status"], "one", "{lang}: {}", reply.text);
        let mut first: Vec<(String, Value)> =
            starts.iter().map(|s| ("resolve".to_owned(), json!({"identifier": s}))).collect();
        first.push(("search".into(), json!({"query": "area"})));
        first.extend(reply.actionable());
        let calls = walk_hints(&client, first, 60).await;
        assert!(calls >= 20, "{lang}: only {calls} calls: the hints lead nowhere");
        // The graph status names the source and its counts.
        let status = client.resource("signpost://graph").await;
        assert!(status["sources"][0].as_str().unwrap_or("").ends_with("index.scip"), "{status}");
        assert!(status["nodes"].as_u64().unwrap_or(0) > 20, "{status}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn implementors_members_and_callers_come_from_the_index() {
    let client = Client::spawn(&["--graph", &index_of("rust")]).await;
    let shape = client.call("resolve", json!({"identifier": "geometry::Shape"})).await;
    let id = shape.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(shape.structured["candidates"][0]["kind"], "trait", "{}", shape.text);
    let names = |r: &crate::common::Reply| -> BTreeSet<String> {
        r.structured["results"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n["other"]["name"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let implementors =
        client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["IMPLEMENTS"]})).await;
    assert_eq!(names(&implementors), BTreeSet::from(["Circle".into(), "Square".into()]), "{}", implementors.text);
    let members = client.call("neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["DECLARES"]})).await;
    assert_eq!(names(&members), BTreeSet::from(["area".into(), "name".into()]));
    // Describing the trait offers a hint that leads to its implementors.
    let described = client.call("describe", json!({"id": id})).await;
    let to_impls = described.actionable().into_iter().any(|(tool, args)| {
        tool == "neighbors" && args["direction"] == "in" && args["edge_types"].to_string().contains("IMPLEMENTS")
    });
    assert!(to_impls, "no hint to the implementors:\n{}", described.text);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn several_graphs_serve_as_one_workspace() {
    let client = Client::spawn(&["--graph", &index_of("rust"), "--graph", &index_of("py")]).await;
    for name in ["total_area", "geometry"] {
        let r = client.call("resolve", json!({"identifier": name})).await;
        let fqns: Vec<&str> = r.structured["candidates"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["fqn"].as_str()).collect())
            .unwrap_or_default();
        assert!(fqns.iter().any(|f| f.starts_with("shapes::")), "{name}: {fqns:?}");
        assert!(fqns.iter().any(|f| f.starts_with("shapes.")), "{name}: {fqns:?}");
    }
    let status = client.resource("signpost://graph").await;
    assert_eq!(status["sources"].as_array().map(Vec::len), Some(2), "{status}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_serves_the_same_graph_and_a_damaged_one_is_refused() {
    let scratch = Scratch::new("snapshot");
    let snap = scratch.file("graph.snap", b"");
    let (ok, out) = run_cli(&["graph", "import", &index_of("ts"), "-o", &snap.display().to_string()]);
    assert!(ok, "{out}");
    let (ok, scip_info) = run_cli(&["graph", "info", &index_of("ts")]);
    assert!(ok, "{scip_info}");
    let (ok, snap_info) = run_cli(&["graph", "info", &snap.display().to_string()]);
    assert!(ok, "{snap_info}");
    let (ok, symbols) = run_cli(&["graph", "symbols", &index_of("ts"), "--name", "shape"]);
    assert!(ok && symbols.lines().any(|l| l.contains("interface") && l.contains("src.shapes.ts.Shape")), "{symbols}");
    let counts = |s: &str| {
        s.lines().filter(|l| l.starts_with("symbols") || l.starts_with("edges")).collect::<Vec<_>>().join(";")
    };
    assert_eq!(counts(&scip_info), counts(&snap_info));

    let client = Client::spawn(&["--graph", &snap.display().to_string()]).await;
    let r = client.call("resolve", json!({"identifier": "totalArea"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    client.close().await;

    let mut bytes = std::fs::read(&snap).unwrap_or_default();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    let bad = scratch.file("bad.snap", &bytes);
    let (ok, out) = run_cli(&["--graph", &bad.display().to_string()]);
    assert!(!ok && out.contains("bad.snap") && out.contains("checksum"), "{out}");
    bytes[15] = 99;
    let other = scratch.file("other.snap", &bytes);
    let (ok, out) = run_cli(&["graph", "info", &other.display().to_string()]);
    assert!(!ok && out.contains("version 99") && out.contains("graph import"), "{out}");
}

#[test]
fn hostile_graph_files_get_a_clear_error_naming_the_file() {
    let scratch = Scratch::new("hostile-graphs");
    let index = std::fs::read(index_of("rust")).unwrap_or_default();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.scip", Vec::new(), "empty"),
        ("truncated.scip", index[..index.len() * 2 / 3].to_vec(), "does not parse"),
        ("random.bin", (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect(), "SCIP"),
        ("not-json.json", b"{\"nodes\": [".to_vec(), "JSON"),
        ("png.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(), "SCIP"),
        ("snapshot-head", b"SIGNPOST-GRAPH\0\x01\0\0\0".to_vec(), "truncated"),
    ];
    for (name, bytes, needle) in cases {
        let path = scratch.file(name, &bytes);
        let (ok, out) = run_cli(&["graph", "info", &path.display().to_string()]);
        assert!(!ok, "{name} loaded:\n{out}");
        assert!(out.contains(name) && out.contains(needle), "{name}: {out}");
        assert!(out.lines().count() < 12, "{name}: a short message, not a dump:\n{out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn graph_swaps_under_load_fail_no_call_and_keep_ids() {
    let scratch = Scratch::new("graph-swap");
    let path = scratch.path("graph.scip");
    let install = |bytes: &[u8]| {
        let tmp = scratch.file(".graph.tmp", bytes);
        std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("{e}"));
    };
    let rust = std::fs::read(index_of("rust")).unwrap_or_default();
    install(&rust);
    let client = std::sync::Arc::new(Client::spawn(&["--graph", &path.display().to_string()]).await);
    let circle = client.call("resolve", json!({"identifier": "geometry::Circle"})).await;
    let id = circle.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();

    // Callers hammer describe while the file changes three times.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (client, stop, id) = (client.clone(), stop.clone(), id.clone());
        workers.push(tokio::spawn(async move {
            let mut calls = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = client.call_any_policy("describe", json!({"id": id})).await;
                assert!(!r.is_error, "a call failed during a swap: {}", r.text);
                calls += 1;
            }
            calls
        }));
    }
    let swaps = |s: &Value| s["swaps"].as_u64().unwrap_or(0);
    let wait = |n: u64, refused: u64| {
        let client = client.clone();
        async move {
            for _ in 0..200 {
                let s = client.resource("signpost://graph").await;
                if swaps(&s) >= n && s["refused"].as_u64().unwrap_or(0) >= refused {
                    return s;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            client.resource("signpost://graph").await
        }
    };
    // 1. The same code indexed again (a new file, same content): swapped.
    install(&rust);
    let s = wait(1, 0).await;
    assert_eq!(swaps(&s), 1, "{s}");
    // 2. A truncated index: refused, the old graph serves on.
    install(&rust[..rust.len() / 2]);
    let s = wait(1, 1).await;
    assert_eq!(s["last_reload"]["result"], "refused", "{s}");
    assert!(s["last_reload"]["detail"].as_str().unwrap_or("").contains("previous graph keeps serving"), "{s}");
    // 3. The index again: swapped; the id an agent holds still resolves.
    install(&rust);
    let s = wait(2, 1).await;
    assert_eq!(swaps(&s), 2, "{s}");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = 0;
    for w in workers {
        total += w.await.unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(total > 20, "only {total} calls ran during the swaps");
    let again = client.call("describe", json!({"id": id})).await;
    assert_eq!(again.structured["record"]["name"], "Circle", "{}", again.text);
}

/// `signpost index` on copies of the fixtures, with the real indexers
/// (installed when missing). Ids of unchanged symbols survive a re-index.
#[test]
fn signpost_index_runs_each_indexer_and_ids_survive_reindexing() {
    let scratch = Scratch::new("index-cmd");
    let tools = std::env::var_os("SIGNPOST_TEST_TOOLS").map(PathBuf::from).unwrap_or_else(|| scratch.path("tools"));
    let index = |dir: &Path| {
        // A tree of ours: its indexers may run.
        std::process::Command::new(crate::common::BIN)
            .args(["index", "--trust"])
            .arg(dir)
            .env("SIGNPOST_TOOLS_DIR", &tools)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    for lang in ["rust", "ts", "py"] {
        let dir = scratch.path(lang);
        copy_dir(&fixture(lang), &dir);
        let _ = std::fs::remove_file(dir.join("index.scip"));
        let out = index(&dir);
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let Some(()) = crate::common::toolchain::require(
            &format!("the {lang} indexer"),
            if out.status.success() { Ok(()) } else { Err(text.clone()) },
        ) else {
            continue;
        };
        assert!(text.contains("symbols") && text.contains("serve it: signpost --graph"), "{lang}: {text}");
        let first = ids_by_fqn(&dir.join("index.scip"));
        assert!(first.len() > 20, "{lang}: {} symbols", first.len());
        if lang == "py" {
            // Add a function and index again: every old id is unchanged.
            let report = dir.join("shapes/report.py");
            let mut src = std::fs::read_to_string(&report).unwrap_or_default();
            src.push_str("\n\ndef added_later() -> int:\n    return 1\n");
            std::fs::write(&report, src).unwrap_or_else(|e| panic!("{e}"));
            let out = index(&dir);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let second = ids_by_fqn(&dir.join("index.scip"));
            assert!(second.contains_key("shapes.report.added_later"), "{second:?}");
            for (fqn, id) in &first {
                assert_eq!(second.get(fqn), Some(id), "{fqn} changed id across re-indexing");
            }
        }
    }
    // One project in two languages: one index each, served together.
    let both = scratch.path("both");
    copy_dir(&fixture("rust"), &both);
    copy_dir(&fixture("py"), &both);
    let _ = std::fs::remove_file(both.join("index.scip"));
    let out = index(&both);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if crate::common::toolchain::require("the indexers", if out.status.success() { Ok(()) } else { Err(text.clone()) })
        .is_some()
    {
        let (rust, python) = (both.join("index.rust.scip"), both.join("index.python.scip"));
        assert!(rust.is_file() && python.is_file(), "{text}");
        let serve = text.lines().find(|l| l.starts_with("serve it: signpost ")).unwrap_or_default();
        let both = [&rust, &python].iter().all(|p| serve.contains(&format!("--graph {}", p.display())));
        assert!(both, "the serve line names both: {text}");
        let (ok, info) = run_cli(&["graph", "info", &rust.display().to_string(), &python.display().to_string()]);
        assert!(ok && info.contains("graph    both\n"), "named once: {info}");
    }
    let (ok, out) = run_cli(&["index", &scratch.path("nowhere").display().to_string()]);
    assert!(!ok && out.contains("no project directory"), "{out}");
    let empty = scratch.path("empty");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(empty.join("README.md"), "# notes\n").unwrap_or_else(|e| panic!("{e}"));
    let (ok, out) = run_cli(&["index", &empty.display().to_string()]);
    assert!(
        !ok && out.contains("nothing to index") && out.contains(".java") && out.contains("signpost --graph"),
        "{out}"
    );
}

fn ids_by_fqn(index: &Path) -> std::collections::BTreeMap<String, String> {
    let g = signpost::graph::load(index).unwrap_or_else(|e| panic!("{}: {e}", index.display()));
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    for n in g.iter() {
        *count.entry(n.fqn()).or_default() += 1;
    }
    // Unique qualified names only: overloads and same-named externals
    // cannot be told apart by name.
    g.iter().filter(|n| !n.fqn().is_empty() && count[n.fqn()] == 1).map(|n| (n.fqn().to_owned(), n.id())).collect()
}

/// Signpost's own repository, indexed by rust-analyzer (build scripts
/// replaced by `true`: this runs inside `cargo test`, which holds the
/// build directory), served over MCP: an agent that starts from a few
/// names and follows every actionable hint verbatim never hits an error.
#[tokio::test(flavor = "multi_thread")]
async fn signposts_own_index_serves_hints_that_all_work() {
    let scratch = Scratch::new("own-index");
    let Some(ra) = crate::common::toolchain::require("rust-analyzer", rust_analyzer()) else { return };
    let config = scratch.file("ra.json", br#"{"cargo":{"buildScripts":{"overrideCommand":["true"]}}}"#);
    let index = scratch.path("index.scip");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new(ra)
        .arg("scip")
        .arg(&root)
        .arg("--output")
        .arg(&index)
        .arg("--config-path")
        .arg(&config)
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "rust-analyzer scip failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let client = Client::spawn(&["--graph", &index.display().to_string()]).await;
    let status = client.resource("signpost://graph").await;
    assert!(status["nodes"].as_u64().unwrap_or(0) > 1000, "{status}");
    let starts = ["GraphBuilder", "Signpost", "sanitize::agent_text", "LiveGraph", "import"]
        .iter()
        .map(|s| ("resolve".to_owned(), json!({"identifier": s})))
        .chain([("search".to_owned(), json!({"query": "snapshot"}))])
        .collect();
    let calls = walk_hints(&client, starts, 150).await;
    assert!(calls >= 100, "only {calls} calls: the hints lead nowhere");
    // Rust paths resolve on the real index too.
    let r = client.call("resolve", json!({"identifier": "builder::GraphBuilder"})).await;
    assert_eq!(r.structured["candidates"][0]["kind"], "struct", "{}", r.text);
    client.close().await;
}

/// rust-analyzer on PATH, or installed with rustup.
fn rust_analyzer() -> Result<PathBuf, String> {
    let works = |p: &Path| std::process::Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success());
    if works(Path::new("rust-analyzer")) {
        return Ok(PathBuf::from("rust-analyzer"));
    }
    let added = crate::common::toolchain::run_ok(std::process::Command::new("rustup").args([
        "component",
        "add",
        "rust-analyzer",
        "rust-src",
    ]));
    // `signpost index` in another test may be installing it at the same
    // time (rustup then says "detected conflict", and `which` fails until
    // that install is done): what counts is that it runs, within minutes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let which =
            crate::common::toolchain::run_ok(std::process::Command::new("rustup").args(["which", "rust-analyzer"]));
        if let Ok(out) = &which {
            let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if works(&path) {
                return Ok(path);
            }
        }
        if std::time::Instant::now() > deadline {
            added?;
            return which.and_then(|_| Err("rust-analyzer does not run after it was installed".to_owned()));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// No response grows past what clients accept (Claude Code caps a tool
/// result at 25,000 tokens): a page of huge symbols is shortened, its
/// `limit` says so and the next-page hint continues after it; a huge doc
/// is clipped in `describe`.
#[tokio::test(flavor = "multi_thread")]
async fn responses_stay_under_the_client_token_cap() {
    let scratch = Scratch::new("token-cap");
    let id = |n: usize| format!("{n:040x}");
    let long = "segment".repeat(300);
    let nodes: Vec<Value> = (1..=150)
        .map(|n| {
            json!({"id": id(n), "kind": "method", "name": format!("handler{n}"),
                   "fqn": format!("com.{long}.Huge.handler{n}"), "file": format!("src/{long}/Huge.java"),
                   "doc": "word ".repeat(20_000)})
        })
        .collect();
    let graph = scratch.file("huge.json", json!({"nodes": nodes}).to_string().as_bytes());
    let client = Client::spawn(&["--graph", &graph.display().to_string()]).await;
    let budget = |r: &crate::common::Reply| r.text.len() + r.structured.to_string().len();
    let page = client.call("find", json!({"name": "handler", "limit": 100})).await;
    assert!(budget(&page) < 100_000, "{} bytes is over 25,000 tokens", budget(&page));
    let shown = page.structured["results"].as_array().map_or(0, Vec::len);
    assert!(shown > 0 && shown < 100, "{shown} results");
    assert_eq!(page.structured["limit"], shown, "limit says the page size used");
    let next = page.hint_to("find").unwrap_or_default();
    assert_eq!(next["offset"], shown, "the next page starts after this one: {next}");
    let described = client.call("describe", json!({"id": id(7)})).await;
    assert!(budget(&described) < 100_000, "{} bytes", budget(&described));
    assert!(described.structured["record"]["doc"].as_str().unwrap_or("").ends_with("more characters)"));
    client.close().await;
}
