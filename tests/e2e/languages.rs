//! Languages without a SCIP indexer here (Java, Go, Kotlin, C#, C, C++,
//! Ruby, PHP, Swift, Scala): `signpost index` reads them with the built-in
//! tree-sitter indexer, the server answers about
//! them through MCP, every hint works verbatim, and hostile trees (broken
//! files, huge generated ones, binary files, symlink loops, non-UTF-8
//! names, pathological nesting) are indexed around with a note.
//! A monorepo of five languages is indexed as one workspace, build outputs
//! left out. `signpost --project DIR` serves a tree as it stands and
//! follows its edits.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::projects::{copy_dir, walk_hints};
use crate::common::swap::Scratch;
use crate::common::{BIN, Client, Reply};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/treesitter").join(name)
}

/// Runs `signpost index ARGS`; returns success and stdout + stderr.
fn index_args(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let out = std::process::Command::new(crate::common::BIN).arg("index").args(args).output();
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// Runs `signpost index DIR`; returns success and stdout + stderr.
fn index(dir: &Path) -> (bool, String) {
    let out =
        std::process::Command::new(crate::common::BIN).arg("index").arg(dir).output().unwrap_or_else(|e| panic!("{e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

fn other_names(r: &Reply) -> BTreeSet<String> {
    r.structured["results"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n["other"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Writes `text` to `rel` under `dir`, its directories made.
fn write_under(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap_or(dir)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// The id of the one symbol `identifier` resolves to.
async fn resolve_one(client: &Client, identifier: &str) -> String {
    let r = client.call("resolve", json!({"identifier": identifier})).await;
    assert_eq!(r.structured["status"], "one", "{identifier}: {}", r.text);
    r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_built_in_language_is_indexed_and_served() {
    let scratch = Scratch::new("languages");
    for (lang, better, iface, implementor, callee, caller, starts) in [
        (
            "java",
            "scip-java",
            "Repository",
            "OrderRepository",
            "OrderService.placeOrder",
            "create",
            vec!["OrderService", "OrderController", "Priced", "model"],
        ),
        (
            "go",
            "scip-go",
            "Store",
            "MemoryStore",
            "Service.Place",
            "main",
            vec!["Service", "NewMemoryStore", "Order", "orders"],
        ),
        (
            "kotlin",
            "scip-java",
            "Repository",
            "OrderRepository",
            "OrderService.placeOrder",
            "main",
            vec!["OrderService", "AuditLog", "Priced", "com.example.shop.model"],
        ),
        (
            "csharp",
            "scip-dotnet",
            "IRepository",
            "OrderRepository",
            "OrderService.PlaceOrder",
            "Main",
            vec!["OrderService", "AuditLog", "IPriced", "Shop.Model"],
        ),
        (
            "cpp",
            "scip-clang",
            "Shape",
            "Circle",
            "Shape.scaled",
            "main",
            vec!["Circle", "Shape", "distance", "segment_t", "shapes"],
        ),
        ("ruby", "scip-ruby", "Priced", "Item", "Cart.add", "checkout", vec!["Cart", "Item", "Shop"]),
        ("php", "scip-php", "Priced", "Item", "Cart.add", "checkout", vec!["Cart", "Ledger", "Acme.Shop"]),
        ("swift", "SourceKit", "Priced", "Item", "Cart.add", "checkout", vec!["Cart", "Ledger", "Book"]),
        ("scala", "scip-java", "Recorder", "Ledger", "Cart.add", "checkout", vec!["Cart", "Ledger", "Main"]),
    ] {
        let dir = scratch.path(lang);
        copy_dir(&fixture(lang), &dir);
        let (ok, out) = index(&dir);
        assert!(ok, "{lang}: {out}");
        assert!(out.contains(&format!("({lang}, tree-sitter)")), "the output names the indexer: {out}");
        assert!(out.contains(better), "the output names the better indexer: {out}");
        let graph = dir.join("index.scip");
        assert!(out.contains(&format!("serve it: signpost --graph {}", graph.display())), "{out}");

        let client = Client::spawn(&["--graph", &graph.display().to_string()]).await;
        // The type hierarchy and the callers come from the index.
        let id = resolve_one(&client, iface).await;
        // C++ and Ruby have base classes, not interfaces.
        let supertype = if matches!(lang, "cpp" | "ruby") { "EXTENDS" } else { "IMPLEMENTS" };
        let impls = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": [supertype]})).await;
        assert!(other_names(&impls).contains(implementor), "{lang}: {}", impls.text);
        let id = resolve_one(&client, callee).await;
        let callers = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
        assert!(other_names(&callers).contains(caller), "{lang}: {}", callers.text);
        // Calls resolved by name say so, to the agent and to policies; the
        // members a type declares are read from the syntax, exact.
        let all_inferred = callers.structured["results"]
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|r| r["derived"] == "inferred"));
        assert!(all_inferred, "{lang}: {}", callers.structured);
        assert!(callers.text.contains("<-CALLS (inferred)"), "{lang}: {}", callers.text);
        // A C++ class and its constructors share a name: qualify it.
        let owner =
            resolve_one(&client, &if lang == "cpp" { format!("shapes.{implementor}") } else { implementor.into() })
                .await;
        let members =
            client.call("neighbors", json!({"ids": [owner], "direction": "out", "edge_types": ["DECLARES"]})).await;
        let exact = members.structured["results"]
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|r| r.get("derived").is_none()));
        assert!(exact, "{lang}: {}", members.structured);
        let described = client.call("describe", json!({"id": id})).await;
        assert!(!described.is_error, "{}", described.text);
        // A qualified name as the language's users write it: to `resolve`,
        // to `search`, and to the terminal.
        let native = match lang {
            "ruby" => Some(("Shop::Cart", "Shop.Cart")),
            "php" => Some(("\\Acme\\Shop\\Cart", "Acme.Shop.Cart")),
            "cpp" => Some(("shapes::Circle", "shapes.Circle")),
            _ => None,
        };
        // Go has no inheritance: EXTENDS is a question with an empty
        // answer that says why, not an error.
        if lang == "go" {
            let r = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["EXTENDS"]})).await;
            assert!(!r.is_error, "{}", r.text);
            assert_eq!(r.structured["absent_edge_types"], json!(["EXTENDS"]), "{}", r.text);
            assert!(r.text.contains("this graph has no EXTENDS edges at all"), "{}", r.text);
        }
        // Two methods of one name (Swift's labels differ): each candidate
        // says its parameters, in the text and in the result.
        if lang == "swift" {
            let r = client.call("resolve", json!({"identifier": "Item.load"})).await;
            assert_eq!(r.structured["status"], "many", "{}", r.text);
            for labels in ["(_ cents: Int, for reason: String)", "(_ cents: Int, using rate: Int)"] {
                assert!(r.text.contains(&format!("Item.load{labels} at Sources/Shop/")), "{}", r.text);
            }
            assert!(r.structured["candidates"][0]["signature"].as_str().is_some_and(|s| s.contains("func load")));
            // Its full name, labels and all, is the one method.
            let r = client.call("resolve", json!({"identifier": "Item.load(_:for:)"})).await;
            assert_eq!(r.structured["status"], "one", "{}", r.text);
            assert!(r.text.contains("Sources/Shop/ItemLoading.swift:3"), "{}", r.text);
        }
        // Ruby's `Cart#add`, an instance method as its users write it.
        if lang == "ruby" {
            let r = client.call("resolve", json!({"identifier": "Shop::Cart#add"})).await;
            assert_eq!(r.structured["candidates"][0]["fqn"], "Shop.Cart.add", "{}", r.text);
        }
        if let Some((spelled, stored)) = native {
            let r = client.call("resolve", json!({"identifier": spelled})).await;
            assert_eq!(r.structured["candidates"][0]["fqn"], stored, "{lang}: {}", r.text);
            let r = client.call("search", json!({"query": spelled})).await;
            assert_eq!(r.structured["results"][0]["fqn"], stored, "{lang}: {}", r.text);
            let run = std::process::Command::new(BIN)
                .args(["resolve", spelled, "--graph"])
                .arg(&graph)
                .output()
                .expect("signpost runs");
            let out = String::from_utf8_lossy(&run.stdout);
            assert!(run.status.success() && out.contains(stored), "{lang}: {out}");
        }
        // An agent that follows every hint from a few names never hits an error.
        let mut first: Vec<(String, serde_json::Value)> =
            starts.iter().map(|s| ("resolve".to_owned(), json!({"identifier": s}))).collect();
        first.push(("search".into(), json!({"query": "order"})));
        let calls = walk_hints(&client, first, 60).await;
        assert!(calls >= 20, "{lang}: only {calls} calls: the hints lead nowhere");
        client.close().await;
    }
}

/// A Rust crate read by the built-in indexer (no SCIP indexer runs on an
/// untrusted tree): what its `macro_rules!` generate is served, named where
/// the invocation writes it, with its callers and callees.
#[tokio::test(flavor = "multi_thread")]
async fn macro_generated_rust_items_are_served_with_their_edges() {
    let scratch = Scratch::new("macros");
    let dir = scratch.path("macros");
    copy_dir(&fixture("rules/macros"), &dir);
    let (ok, out) = index(&dir);
    assert!(ok, "{out}");
    assert!(!out.contains("were not expanded"), "every invocation matches a rule: {out}");
    let graph = out
        .lines()
        .find_map(|l| l.strip_prefix("serve it: signpost --graph "))
        .unwrap_or_else(|| panic!("no graph named: {out}"))
        .to_owned();
    let client = Client::spawn(&["--graph", &graph]).await;
    // A method `define_bool!` generates in an impl, at the invocation.
    let r = client.call("resolve", json!({"identifier": "Info::is_utf8"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    assert!(r.text.contains("src/lib.rs:26"), "named where the invocation writes it: {}", r.text);
    let id = r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    let callers = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
    let names = other_names(&callers);
    for caller in ["summary", "one_literal", "no_literal"] {
        assert!(names.contains(caller), "{caller}: {}", callers.text);
    }
    // A test `test_lit!` generates calls what the macro's body calls.
    let id = resolve_one(&client, "one_literal").await;
    let callees = client.call("neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})).await;
    let names = other_names(&callees);
    for callee in ["parse", "escape", "is_utf8"] {
        assert!(names.contains(callee), "{callee}: {}", callees.text);
    }
    client.close().await;
}

#[test]
fn hostile_trees_are_indexed_around_with_a_note() {
    let scratch = Scratch::new("languages-hostile");
    let dir = scratch.path("hostile");
    copy_dir(&fixture("java"), &dir);
    let pkg = dir.join("src/main/java/com/example/shop/hostile");
    std::fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
    let write = |name: &str, bytes: &[u8]| std::fs::write(pkg.join(name), bytes).unwrap_or_else(|e| panic!("{e}"));
    // Not valid Java: the parser recovers, and what it can read is kept.
    write(
        "Broken.java",
        b"package com.example.shop.hostile;\npublic class Broken { void ok() {} void bad( { }\nclass Kept {}\n",
    );
    // A generated file of 3 MB: over the limit, skipped with its size.
    let mut big = b"package com.example.shop.hostile;\npublic class Huge {\n".to_vec();
    while big.len() < 3 << 20 {
        big.extend_from_slice(b"    int field_with_a_long_name_for_bulk = 1;\n");
    }
    big.extend_from_slice(b"}\n");
    write("Huge.java", &big);
    // Binary bytes under a source name.
    write("Blob.java", &[0u8, 159, 146, 150, 0, 1, 2, 3]);
    // Non-UTF-8 contents in a valid file.
    write(
        "Latin.java",
        b"package com.example.shop.hostile;\n/** caf\xe9 */\npublic class Latin { void na\xefve() {} }\n",
    );
    // Nesting deep enough to overflow a recursive walker.
    let mut deep = b"package com.example.shop.hostile;\npublic class Deep { int v = ".to_vec();
    deep.extend(std::iter::repeat_n(b'(', 20_000));
    deep.push(b'1');
    deep.extend(std::iter::repeat_n(b')', 20_000));
    deep.extend_from_slice(b"; void after() {} }\n");
    write("Deep.java", &deep);
    // A symlink loop, and a file whose name is not UTF-8.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let _ = std::os::unix::fs::symlink(&pkg, pkg.join("loop"));
        let name = std::ffi::OsStr::from_bytes(b"Odd\xff.java");
        std::fs::write(pkg.join(name), b"package com.example.shop.hostile;\nclass Odd {}\n")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let (ok, out) = index(&dir);
    assert!(ok, "{out}");
    assert!(out.contains("Huge.java") && out.contains("limit"), "the huge file is named with the limit: {out}");
    assert!(out.contains("Blob.java") && out.contains("not source text"), "the binary file is named: {out}");
    assert!(out.contains("syntax"), "files with syntax errors are counted: {out}");
    let g = signpost::graph::load(&dir.join("index.scip")).unwrap_or_else(|e| panic!("{e}"));
    let names: BTreeSet<&str> = g.iter().map(|n| n.name()).collect();
    for kept in ["OrderService", "Broken", "Kept", "Latin", "Deep", "after"] {
        assert!(names.contains(kept), "{kept} is indexed: {names:?}");
    }
    assert!(!names.contains("Huge"), "the skipped file adds nothing");
    // The file whose name is not UTF-8 is named exactly, the way git
    // quotes it, and that name leads back to the file.
    #[cfg(unix)]
    {
        let odd = g.iter().find(|n| n.name() == "Odd").map(|n| n.file().to_owned()).unwrap_or_default();
        assert!(odd.starts_with('"') && odd.ends_with("/Odd\\377.java\""), "{odd}");
        assert!(dir.join(signpost::graph::tree::unspell(&odd)).is_file(), "{odd}");
    }
}

/// A file whose name is not UTF-8, in a served project: `describe` names it
/// exactly (quoted as git quotes it, each byte that is not UTF-8 in octal),
/// that name opens the file again, and the watcher follows its edits under
/// the same name.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_file_name_that_is_not_utf8_is_named_exactly_and_followed() {
    use std::os::unix::ffi::OsStrExt;
    let scratch = Scratch::new("project-bytes");
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let odd = dir.join("orders").join(std::ffi::OsStr::from_bytes(b"caf\xe9 \\ \"tab\t.go"));
    std::fs::write(&odd, "package orders\n\nfunc Odd() {}\n").unwrap_or_else(|e| panic!("{e}"));
    let cache = scratch.path("cache");
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let client = Client::spawn_with(&["--project", &d], &[("XDG_CACHE_HOME", &c)], std::process::Stdio::null()).await;
    let service = resolve_one(&client, "service.Service").await;
    let id = resolve_one(&client, "orders.Odd").await;
    let described = client.call("describe", json!({"id": id})).await;
    let file = described.structured["record"]["file"].as_str().unwrap_or_default().to_owned();
    assert_eq!(file, r#""orders/caf\351 \\ \"tab\t.go""#, "{}", described.text);
    assert!(described.text.contains(&file), "the text names it as structuredContent does: {}", described.text);
    assert_eq!(dir.join(signpost::graph::tree::unspell(&file)), odd, "the name leads back to the file");
    // Edited, the file is read again under the same name.
    std::fs::write(&odd, "package orders\n\nfunc Odd() {}\n\nfunc Odder() { Odd() }\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let found = until_resolved(&client, "Odder", "one", &service).await;
    let odder = found.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    let described = client.call("describe", json!({"id": odder})).await;
    assert_eq!(described.structured["record"]["file"], file.as_str(), "{}", described.text);
    let callers = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
    assert!(other_names(&callers).contains("Odder"), "{}", callers.text);
    client.close().await;
}

/// A file the grammar reads only in part is named, with the line its
/// reading stopped at, in `signpost://graph` and in `describe` of what it
/// declares (a Kotlin file that ends in a function cut off mid-header).
#[tokio::test(flavor = "multi_thread")]
async fn files_read_in_part_are_named_in_the_status_and_in_describe() {
    let scratch = Scratch::new("read-in-part");
    let dir = scratch.path("shop");
    std::fs::create_dir_all(dir.join("src")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("src/Good.kt"), "package shop\n\nclass Good {\n    fun ok() = 1\n}\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("src/Broken.kt"),
        "package shop\n\nclass Broken {\n    fun fine() = 1\n}\n\nfun tail( = \n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let cache = scratch.path("cache");
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let client = Client::spawn_with(&["--project", &d], &[("XDG_CACHE_HOME", &c)], std::process::Stdio::null()).await;
    let id = resolve_one(&client, "shop.Broken").await;
    let status = client.resource("signpost://graph").await;
    let parts = status["read_in_part"].as_array().cloned().unwrap_or_default();
    assert_eq!(parts.len(), 1, "{status}");
    assert_eq!(parts[0]["file"], "src/Broken.kt", "{status}");
    assert!(parts[0]["from_line"].as_u64().is_some_and(|l| (6..=8).contains(&l)), "{status}");
    let described = client.call("describe", json!({"id": id})).await;
    assert_eq!(described.structured["read_in_part"][0]["file"], "src/Broken.kt", "{}", described.text);
    assert!(described.text.contains("read src/Broken.kt from line"), "{}", described.text);
    // A symbol of a file read whole says nothing of the kind.
    let good = resolve_one(&client, "shop.Good").await;
    let described = client.call("describe", json!({"id": good})).await;
    assert!(described.structured.get("read_in_part").is_none(), "{}", described.text);
    assert!(!described.text.contains("only in part"), "{}", described.text);
    client.close().await;
}

/// Generated code checked in beside the source (a T4 `*.g.cs`, a Go file
/// headed `Code generated … DO NOT EDIT.`) is read like the rest: the
/// code written by hand calls what it defines, and its callers are found.
/// `describe` of a symbol in a file named as generated says where a change
/// belongs; a minified bundle (a copy of source) is still left out.
#[tokio::test(flavor = "multi_thread")]
async fn generated_code_checked_in_is_read_and_marked() {
    let scratch = Scratch::new("generated");
    let dir = scratch.path("kit");
    let write = |rel: &str, text: &str| write_under(&dir, rel, text);
    write(
        "src/Generated/Guard.g.cs",
        "// <auto-generated/>\nnamespace Kit;\n\npublic static partial class Guard\n{\n    public static void \
         IsSmall(int n) { }\n}\n",
    );
    write("src/App.cs", "namespace Kit;\n\npublic class App\n{\n    public void Run() { Guard.IsSmall(1); }\n}\n");
    write(
        "wire/orders.go",
        "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage wire\n\nfunc NewOrder() int { return 1 }\n",
    );
    write("wire/use.go", "package wire\n\nfunc Place() int { return NewOrder() }\n");
    write("web/app.js", "export function readable() {\n    return 1;\n}\n");
    write("web/app.min.js", "function minifiedOnly(){return 1}\n");
    let cache = scratch.path("cache");
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let client = Client::spawn_with(&["--project", &d], &[("XDG_CACHE_HOME", &c)], std::process::Stdio::null()).await;
    let id = resolve_one(&client, "Kit.Guard.IsSmall").await;
    let callers = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
    assert!(other_names(&callers).contains("Run"), "{}", callers.text);
    let described = client.call("describe", json!({"id": id})).await;
    assert_eq!(described.structured["generated"], true, "{}", described.text);
    assert!(described.text.contains("src/Generated/Guard.g.cs is generated code"), "{}", described.text);
    // Marked by its header, not its name: read, its callers found.
    let id = resolve_one(&client, "wire.NewOrder").await;
    let callers = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
    assert!(other_names(&callers).contains("Place"), "{}", callers.text);
    // Code written by hand says nothing of the kind.
    let run = resolve_one(&client, "Kit.App.Run").await;
    let described = client.call("describe", json!({"id": run})).await;
    assert!(described.structured.get("generated").is_none(), "{}", described.text);
    resolve_one(&client, "readable").await;
    let found = client.call("resolve", json!({"identifier": "minifiedOnly"})).await;
    assert_eq!(found.structured["status"], "none", "{}", found.text);
    client.close().await;
}

/// Asks `resolve identifier` until its status is `want` (the watcher and
/// the graph reload run in the background), while another caller keeps
/// describing `steady`: no call may fail during the swaps. Panics after a
/// generous deadline (a correctness wait, not a timing assertion: the
/// latency is measured in BENCHMARKS.md).
async fn until_resolved(client: &Client, identifier: &str, want: &str, steady: &str) -> Reply {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let described = client.call("describe", json!({"id": steady})).await;
        assert!(!described.is_error, "a call failed during a swap: {}", described.text);
        let r = client.call("resolve", json!({"identifier": identifier})).await;
        if r.structured["status"] == want {
            return r;
        }
        assert!(std::time::Instant::now() < deadline, "{identifier} never became {want}: {}", r.text);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `signpost --project` on a copy of the Go fixture in `scratch`: the
/// client, the project's directory and its cache.
async fn served_go_project(scratch: &Scratch) -> (Client, PathBuf, PathBuf) {
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let cache = scratch.path("cache");
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let client = Client::spawn_with(&["--project", &d], &[("XDG_CACHE_HOME", &c)], std::process::Stdio::null()).await;
    (client, dir, cache)
}

/// A served project's root moved away (or deleted) is said, in
/// `signpost://graph` and the log, and the graph is kept as it was: the
/// next event (a write in the moved tree, reported under the old path) no
/// longer empties it. Moved back, the project is read again and followed.
#[tokio::test(flavor = "multi_thread")]
async fn a_served_project_whose_root_moves_away_keeps_its_graph_and_says_so() {
    let scratch = Scratch::new("project-moved");
    let (client, dir, _cache) = served_go_project(&scratch).await;
    let service = resolve_one(&client, "service.Service").await;
    let away = scratch.path("elsewhere");
    std::fs::rename(&dir, &away).unwrap_or_else(|e| panic!("{e}"));
    // A write in the moved tree: its watch still fires, under the old path.
    std::fs::write(
        away.join("orders/late.go"),
        "package orders

func Late() {}
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = client.resource("signpost://graph").await;
        if status["notes"].to_string().contains("is gone") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the root's move is never said: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(resolve_one(&client, "service.Service").await, service, "the graph is kept as it was");
    let r = client.call("resolve", json!({"identifier": "Service.Place"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    // Back where it was: read again (the file written while away is found)
    // and followed.
    std::fs::rename(&away, &dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("orders/later.go"),
        "package orders

func Later() {}
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "Later", "one", &service).await;
    until_resolved(&client, "Late", "one", &service).await;
    let status = client.resource("signpost://graph").await;
    assert!(!status["notes"].to_string().contains("is gone"), "{status}");
    client.close().await;
}

/// What an operator reads when a project starts: one line per fact. One
/// "watching" line for the graph files however many parts the project has,
/// the graph named after the project once, and no warning on normal calls.
#[tokio::test(flavor = "multi_thread")]
async fn a_served_project_starts_with_one_line_per_fact() {
    let scratch = Scratch::new("project-logs");
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let cache = scratch.path("cache");
    let log = scratch.path("server.log");
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
    let env = [("XDG_CACHE_HOME", c.as_str())];
    let mut cmd = tokio::process::Command::new(crate::common::BIN);
    // The operator's default: no RUST_LOG.
    cmd.args(["--project", &d]).env_remove("RUST_LOG").envs(env);
    let client = Client::spawn_command(cmd, file).await;
    for _ in 0..20 {
        let _ = resolve_one(&client, "service.Service").await;
    }
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines = |needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(lines("watching the graph file"), 1, "one line for the graph files:\n{text}");
    assert_eq!(lines("watching the project's sources"), 1, "{text}");
    let loaded = text.lines().find(|l| l.contains("graph loaded")).unwrap_or_default();
    assert!(loaded.contains("graph=shop ") || !loaded.contains('+'), "the graph is named once: {loaded}");
    assert_eq!(lines(" WARN "), 0, "nothing to warn about:\n{text}");
    assert_eq!(lines("InitializeRequestParams"), 0, "no client's request dumped into the log:\n{text}");
    assert!(lines("serving MCP on stdio") == 1, "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_served_project_follows_edits_adds_and_deletes() {
    let scratch = Scratch::new("project");
    let (client, dir, cache) = served_go_project(&scratch).await;
    let c = cache.display().to_string();
    let service = resolve_one(&client, "service.Service").await;
    let place = resolve_one(&client, "Service.Place").await;
    let status = client.resource("signpost://graph").await;
    let sources = status["sources"].to_string();
    assert!(
        sources.contains(&c) && sources.contains("index.go.tree-sitter.snapshot"),
        "the indexes live in the cache: {status}"
    );
    assert!(!dir.join("index.scip").exists(), "nothing is written into the project");

    // A new file: its function is found, with its calls.
    std::fs::write(
        dir.join("orders/discount.go"),
        "package orders\n\n// Discount is a tenth of the total.\nfunc Discount(o *Order) float64 {\n\treturn o.Total() / 10\n}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let found = until_resolved(&client, "Discount", "one", &service).await;
    let id = found.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    let calls = client.call("neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})).await;
    assert!(other_names(&calls).contains("Total"), "{}", calls.text);

    // An edit: a renamed method is found under its new name, the old one is
    // gone, and the ids of what did not change are the same.
    let path = dir.join("service/service.go");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(&path, text.replace("func (s *Service) Place(", "func (s *Service) PlaceOrder("))
        .unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "Service.PlaceOrder", "one", &service).await;
    until_resolved(&client, "Service.Place", "none", &service).await;
    assert_eq!(resolve_one(&client, "service.Service").await, service, "an unchanged symbol keeps its id");
    let gone = client.call("describe", json!({"id": place})).await;
    assert!(gone.is_error, "the old method's id is gone: {}", gone.text);

    // A deleted file: its symbols are gone.
    std::fs::remove_file(dir.join("audit/log.go")).unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "audit.Log", "none", &service).await;
    let status = client.resource("signpost://graph").await;
    assert!(status["swaps"].as_u64().unwrap_or(0) >= 3, "{status}");
    client.close().await;
}

/// Nodes and edges of a fresh `signpost index` of `dir` into `out` (a
/// file, or a directory of parts, merged as a server merges them).
fn fresh_counts(dir: &Path, out: &Path) -> (u64, u64) {
    let (ok, text) = index_args(&[dir.as_os_str(), "--output".as_ref(), out.as_os_str()]);
    assert!(ok, "{text}");
    let parts: Vec<PathBuf> = if out.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(out).into_iter().flatten().flatten().map(|e| e.path()).collect();
        v.sort();
        v
    } else {
        vec![out.to_path_buf()]
    };
    let graphs: Vec<signpost::graph::Graph> =
        parts.iter().map(|p| signpost::graph::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).collect();
    let graph = signpost::graph::merge("fresh", graphs.iter()).unwrap_or_else(|e| panic!("{e}"));
    (graph.node_count() as u64, graph.edge_count() as u64)
}

/// Waits until the served graph has the node and edge counts of a fresh
/// index of `dir` (the last swap may still be under way).
async fn until_fresh(client: &Client, dir: &Path, out: &Path, step: &str) {
    let want = fresh_counts(dir, out);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = client.resource("signpost://graph").await;
        let served = (status["nodes"].as_u64().unwrap_or(0), status["edges"].as_u64().unwrap_or(0));
        if served == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{step}: served {served:?}, a fresh index {want:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The names `id` reaches along `edge` in `direction`.
async fn reached(client: &Client, id: &str, direction: &str, edge: &str) -> BTreeSet<String> {
    let r = client.call("neighbors", json!({"ids": [id], "direction": direction, "edge_types": [edge]})).await;
    assert!(!r.is_error, "{}", r.text);
    other_names(&r)
}

/// Edits across files of a served Java project are patched into the graph
/// per file (the log says so for every one), and after each the served
/// graph is what a fresh index of the tree gives: a new method called from
/// another file, a renamed method whose callers in another file lose and
/// then regain the edge, a renamed base class with its subclass re-linked,
/// a deleted file whose callers lose their edges. Unchanged symbols keep
/// their ids; no call fails meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn edits_across_files_are_patched_in_and_serve_what_a_fresh_index_gives() {
    let scratch = Scratch::new("patched");
    let dir = scratch.path("shop");
    copy_dir(&fixture("java"), &dir);
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh.scip"));
    let client = served_with_log(&dir, &cache, &log).await;
    let model = dir.join("src/main/java/com/example/shop/model");
    let service_file = dir.join("src/main/java/com/example/shop/service/OrderService.java");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let write = |p: &Path, text: String| std::fs::write(p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let service = resolve_one(&client, "OrderService").await;
    let place = resolve_one(&client, "OrderService.placeOrder").await;
    until_fresh(&client, &dir, &out, "served").await;

    // A method added in one file and called from another.
    let order = read(&model.join("Order.java"));
    write(
        &model.join("Order.java"),
        order.replacen(
            "    public void add(",
            "    public double discount() {\n        return total() / 10;\n    }\n\n    public void add(",
            1,
        ),
    );
    let text = read(&service_file);
    write(&service_file, text.replace("notifyCustomer(order);", "notifyCustomer(order);\n        order.discount();"));
    let discount = until_resolved(&client, "Order.discount", "one", &service).await;
    let discount = discount.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    until_fresh(&client, &dir, &out, "a method added").await;
    assert!(reached(&client, &discount, "in", "CALLS").await.contains("placeOrder"));
    assert!(reached(&client, &discount, "out", "CALLS").await.contains("total"));

    // A method renamed: its caller in another file loses the edge, then
    // calls the new name.
    let get_id = resolve_one(&client, "Entity.getId").await;
    let entity = read(&model.join("Entity.java"));
    write(&model.join("Entity.java"), entity.replace("getId()", "identifier()"));
    until_resolved(&client, "Entity.identifier", "one", &service).await;
    until_fresh(&client, &dir, &out, "a method renamed").await;
    assert!(client.call("describe", json!({"id": get_id})).await.is_error, "the old id is gone");
    assert!(!reached(&client, &place, "out", "CALLS").await.contains("getId"));
    let text = read(&service_file);
    write(&service_file, text.replace("order.getId()", "order.identifier()"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !reached(&client, &place, "out", "CALLS").await.contains("identifier") {
        assert!(std::time::Instant::now() < deadline, "the caller never called the new name");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    until_fresh(&client, &dir, &out, "a caller updated").await;

    // A base class renamed with its subclass in another file.
    let entity = read(&model.join("Entity.java"));
    write(&model.join("Entity.java"), entity.replace("class Entity", "class Record"));
    let order = read(&model.join("Order.java"));
    write(&model.join("Order.java"), order.replace("extends Entity", "extends Record"));
    let record = until_resolved(&client, "Record", "one", &service).await;
    let record = record.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    until_resolved(&client, "Entity", "none", &service).await;
    until_fresh(&client, &dir, &out, "a base class renamed").await;
    assert!(reached(&client, &record, "in", "EXTENDS").await.contains("Order"));

    // A file deleted: what called into it loses the edges.
    assert!(reached(&client, &place, "out", "CALLS").await.contains("save"));
    std::fs::remove_file(dir.join("src/main/java/com/example/shop/repo/AuditLog.java"))
        .unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "AuditLog", "none", &service).await;
    until_fresh(&client, &dir, &out, "a file deleted").await;
    assert_eq!(resolve_one(&client, "OrderService").await, service, "an unchanged symbol keeps its id");
    client.close().await;

    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let edits: Vec<&str> = text.lines().filter(|l| l.contains("re-indexed after a change")).collect();
    assert!(edits.len() >= 5, "{text}");
    for line in &edits {
        assert!(line.contains("how=\"patched"), "an edit is patched per file, not re-imported whole: {line}");
    }
    // The caller's edit kept every definition: the last resolve's lookups
    // were kept, and only its document was written.
    assert!(
        edits.iter().any(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            fields.contains(&"definitions_kept=true") && fields.contains(&"documents=1")
        }),
        "no edit kept the definitions and wrote one document: {edits:#?}"
    );
}

/// In a monorepo served as several parts (one a language), an edit
/// patches its language's part and the merged graph with it: what another
/// file calls is found, and the served graph has the counts of a fresh
/// index of the tree, merged.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_in_a_monorepo_patches_the_merged_graph() {
    let scratch = Scratch::new("patched-merged");
    let dir = scratch.path("mono");
    monorepo(&dir);
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh"));
    let client = served_with_log(&dir, &cache, &log).await;
    let service = resolve_one(&client, "OrderService").await;
    until_fresh(&client, &dir, &out, "served").await;
    add_a_discount(&client, &dir, &out, &service, "a method added").await;
    // Served merged, the status says what the graph and its parts hold
    // together (the sum is checked by `live_graph`'s unit test); absent
    // only while a saver or a swap holds the parts.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let status = client.resource("signpost://graph").await;
        let (alone, together) = (status["memory_mib"].as_f64().unwrap_or(-1.0), status["with_parts_mib"].as_f64());
        if let Some(together) = together {
            assert!(together >= alone && alone >= 0.0, "{status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no `with_parts_mib` for a merged graph: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Once quiet, what the edits freed is handed back to the system.
    let returned = "freed memory returned to the system";
    until_logged(&log, "once the project was quiet", |text| text.contains(returned)).await;
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let java: Vec<&str> =
        text.lines().filter(|l| l.contains("re-indexed after a change") && l.contains("language=\"java\"")).collect();
    assert!(!java.is_empty() && java.iter().all(|l| l.contains("how=\"patched")), "{text}");
    assert!(text.contains("(the merged graph patched)"), "several parts are served, merged and patched: {text}");
}

/// Adds `Order.discount()`, which calls `total()`, to the monorepo at
/// `dir` served by `client`; waits until it resolves with that call, and
/// until the graph served has the counts of a fresh index (`step` says
/// which, if not).
async fn add_a_discount(client: &Client, dir: &Path, out: &Path, service: &str, step: &str) {
    let model = dir.join("legacy/src/main/java/com/example/shop/model/Order.java");
    let text = std::fs::read_to_string(&model).unwrap_or_else(|e| panic!("{e}"));
    let text = text.replacen(
        "    public void add(",
        "    public double discount() {\n        return total() / 10;\n    }\n\n    public void add(",
        1,
    );
    std::fs::write(&model, text).unwrap_or_else(|e| panic!("{e}"));
    let found = until_resolved(client, "Order.discount", "one", service).await;
    let discount = found.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert!(reached(client, &discount, "out", "CALLS").await.contains("total"));
    let _ = std::fs::remove_dir_all(out);
    until_fresh(client, dir, out, step).await;
}

/// Serves the project at `dir` on `cache`, its log at info level in `log`
/// (appended; and when freed memory is returned or a part saved, at
/// debug), its parts saved 50 ms after they are made.
async fn served_with_log(dir: &Path, cache: &Path, log: &Path) -> Client {
    served_saving_after(dir, cache, log, "50").await
}

/// [`served_with_log`], its parts saved once quiet for `ms` milliseconds.
async fn served_saving_after(dir: &Path, cache: &Path, log: &Path, ms: &str) -> Client {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = tokio::process::Command::new(crate::common::BIN);
    cmd.arg("--project").arg(dir).env("XDG_CACHE_HOME", cache);
    let debug = "signpost::project::freed=debug,signpost::project::saved=debug,signpost_treesitter=debug";
    cmd.env("RUST_LOG", format!("signpost=info,{debug}"));
    cmd.env("SIGNPOST_SAVE_QUIET_MS", ms);
    Client::spawn_command(cmd, file).await
}

/// What an edit freed goes back to the system once the project is quiet,
/// before its part is saved: a save comes seconds after the last edit
/// (here never, within the test), and the pages would stay resident until
/// then.
#[tokio::test(flavor = "multi_thread")]
async fn what_an_edit_freed_is_given_back_before_its_part_is_saved() {
    let scratch = Scratch::new("freed-before-save");
    let dir = scratch.path("mono");
    monorepo(&dir);
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh"));
    let client = served_saving_after(&dir, &cache, &log, "600000").await;
    let service = resolve_one(&client, "OrderService").await;
    until_fresh(&client, &dir, &out, "served").await;
    add_a_discount(&client, &dir, &out, &service, "a method added").await;
    let (edit, returned) = ("re-indexed after a change", "freed memory returned to the system");
    let text = until_logged(&log, "after the edit, before any save", |text| {
        text.rfind(edit).is_some_and(|at| text[at..].contains(returned))
    })
    .await;
    assert!(!text.contains("part saved for the next start"), "nothing is saved within the test: {text}");
    client.close().await;
}

/// Each language's whole index, read at a cold start while parts are
/// served early, waits for its import in a file of the cache that no path
/// names, not in memory; imported from there, the graph served is what a
/// fresh index makes.
#[tokio::test(flavor = "multi_thread")]
async fn a_cold_starts_parts_wait_for_their_import_on_disk() {
    let scratch = Scratch::new("parts-on-disk");
    let dir = scratch.path("mono");
    monorepo(&dir);
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh"));
    let client = served_with_log(&dir, &cache, &log).await;
    until_fresh(&client, &dir, &out, "served").await;
    let text = until_logged(&log, "once the first index is built", |text| text.contains("indexed language=")).await;
    let handed: Vec<&str> =
        text.lines().filter(|l| l.contains("indexed language=") && !l.contains("encoded_bytes=0")).collect();
    for lang in ["java", "go", "cpp"] {
        assert!(handed.iter().any(|l| l.contains(&format!("language=\"{lang}\""))), "{lang} handed over: {text}");
    }
    assert!(handed.iter().all(|l| l.contains("on_disk=true")), "every part handed over on disk: {handed:#?}");
    client.close().await;
}

/// A served project's readings keep their calls, type names and texts
/// packed on a shelf (a file of the cache that no path names) once its
/// parts are quiet, not in memory; an edit that moves another file's
/// calls reads them back from there, and the graph served is still what
/// a fresh index makes.
#[tokio::test(flavor = "multi_thread")]
async fn a_served_projects_packed_facts_wait_on_a_shelf_and_edits_read_them_back() {
    let scratch = Scratch::new("shelved");
    let dir = scratch.path("mono");
    monorepo(&dir);
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh"));
    let client = served_with_log(&dir, &cache, &log).await;
    let service = resolve_one(&client, "OrderService").await;
    let place = resolve_one(&client, "OrderService.placeOrder").await;
    until_fresh(&client, &dir, &out, "served").await;
    assert!(reached(&client, &place, "out", "CALLS").await.contains("getId"));
    let shelved = "packed bodies on the shelf language=\"java\"";
    let text = until_logged_within(&log, 40, "once the Java part was quiet", |text| text.contains(shelved)).await;
    let line = text.lines().find(|l| l.contains(shelved)).unwrap_or_default();
    let bytes: u64 = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("shelved_bytes="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no shelved_bytes: {line}"));
    assert!(bytes > 1000, "the Java part's bodies are on the shelf: {line}");
    // A method renamed: its caller in another file, whose calls are on
    // the shelf, is resolved again and loses the edge.
    let entity = find_file(&dir.join("legacy"), "Entity.java").unwrap_or_else(|| panic!("no Entity.java"));
    let text = std::fs::read_to_string(&entity).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&entity, text.replace("getId()", "identifier()")).unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "Entity.identifier", "one", &service).await;
    let _ = std::fs::remove_dir_all(&out);
    until_fresh(&client, &dir, &out, "a method renamed").await;
    assert!(!reached(&client, &place, "out", "CALLS").await.contains("getId"));
    client.close().await;
}

/// The server's log at `log` once `found` says it holds what is waited
/// for (within 15 s; `when` says when it should have come, if not).
async fn until_logged(log: &Path, when: &str, found: impl Fn(&str) -> bool) -> String {
    until_logged_within(log, 15, when, found).await
}

/// [`until_logged`], within `secs` seconds.
async fn until_logged_within(log: &Path, secs: u64, when: &str, found: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if found(&text) {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "not logged {when}: {text}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Adds `text` at the end of the file at `path`.
fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap_or_else(|e| panic!("{e}"));
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
}

/// The file `name` under `dir`, at any depth.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let p = e.path();
        if p.is_dir() { find_file(&p, name) } else { p.file_name().is_some_and(|n| n == name).then_some(p) }
    })
}

/// Waits until the part `name` is saved under `cache`, written after
/// `after`; its path.
async fn until_saved(cache: &Path, name: &str, after: std::time::SystemTime) -> PathBuf {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found = find_file(cache, name);
        let modified = found.as_ref().and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        if let (Some(path), Some(m)) = (found, modified)
            && m > after
        {
            return path;
        }
        assert!(std::time::Instant::now() < deadline, "{name} was never saved under {}", cache.display());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A restart serves the last run's parts, edits made while it served
/// included, and reads again only the files changed while it was stopped
/// (one edited, one deleted): their symbols come and go, the others keep
/// their ids. A saved part damaged on disk, or saved by a server that
/// was stopped mid-write, is set aside with the reason, and the files
/// are read again: never a crash, never a wrong graph.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_project_serves_its_saved_parts_and_reads_only_what_changed() {
    let scratch = Scratch::new("restart");
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let (cache, log) = (scratch.path("cache"), scratch.path("server.log"));
    let client = served_with_log(&dir, &cache, &log).await;
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let service = resolve_one(&client, "service.Service").await;
    // Saved once it is made; then again after an edit.
    let first = until_saved(&cache, "saved.go", started).await;
    let edited = std::fs::metadata(&first).and_then(|m| m.modified()).unwrap_or_else(|e| panic!("{e}"));
    append(&dir.join("service/service.go"), "\nfunc EditedWhileServed() int { return 1 }\n");
    until_resolved(&client, "EditedWhileServed", "one", &service).await;
    let saved = until_saved(&cache, "saved.go", edited).await;
    client.close().await;

    // Stopped: one file edited, one deleted; and a save cut short by a
    // kill left its partial file (a live writer's, this test's, stays).
    append(&dir.join("orders/order.go"), "\nfunc AddedWhileStopped() int { return 2 }\n");
    std::fs::remove_file(dir.join("audit/log.go")).unwrap_or_else(|e| panic!("{e}"));
    let mut exited = std::process::Command::new("true").spawn().unwrap_or_else(|e| panic!("{e}"));
    let _ = exited.wait();
    let left = saved.with_file_name(format!("whole.scip.{}-4.partial", exited.id()));
    let live = saved.with_file_name(format!("saved.scip.{}-0.partial", std::process::id()));
    for f in [&left, &live] {
        std::fs::write(f, vec![0u8; 4096]).unwrap_or_else(|e| panic!("{e}"));
    }
    let client = served_with_log(&dir, &cache, &log).await;
    assert_eq!(resolve_one(&client, "service.Service").await, service, "the saved part serves, same ids");
    assert!(!left.exists() && live.exists(), "only the exited writer's partial file is removed");
    let _ = std::fs::remove_file(&live);
    assert_eq!(
        client.call("resolve", json!({"identifier": "EditedWhileServed"})).await.structured["status"],
        "one",
        "an edit made while serving was saved with the part"
    );
    until_resolved(&client, "AddedWhileStopped", "one", &service).await;
    until_resolved(&client, "audit.Log", "none", &service).await;
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let restored: Vec<&str> = text.lines().filter(|l| l.contains("the last run's parts serve at once")).collect();
    assert!(restored.len() == 1 && restored[0].contains("changed=2"), "two files read again:\n{text}");
    // The restored parts serve before their languages are read again (the
    // reading takes the cores the first answer needs).
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().position(|l| l.contains("the last run's parts serve at once")).unwrap_or(0);
    let at = |what: &str| lines[from..].iter().position(|l| l.contains(what));
    let (loaded, again) = (at("graph loaded"), at("their languages are read again"));
    assert!(again.is_some() && loaded < again, "the graph serves first:\n{text}");

    // Damaged on disk, then cut short: set aside, read again, served right.
    let bytes = std::fs::read(&saved).unwrap_or_default();
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    for (what, bytes) in [("checksum does not match", damaged), ("truncated", bytes[..bytes.len() / 3].to_vec())] {
        std::fs::write(&saved, bytes).unwrap_or_else(|e| panic!("{e}"));
        let client = served_with_log(&dir, &cache, &log).await;
        assert_eq!(resolve_one(&client, "service.Service").await, service);
        until_resolved(&client, "AddedWhileStopped", "one", &service).await;
        client.close().await;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.lines().any(|l| l.contains("the saved part is not used") && l.contains(what)),
            "a damaged part is set aside ({what}):\n{text}"
        );
        assert!(!text.contains("panicked"), "{text}");
    }
}

/// A tree served as several parts saves the graph merged from them whole,
/// and a restart serves it at once (the parts read beside it) instead of
/// merging them again: the same ids, the counts of a fresh index, and an
/// edit patched into it. Saved again after the edit, it serves the edit on
/// the next restart. One merged from other parts than those restored (an
/// older one put back), or damaged, is set aside with the reason and the
/// parts are merged: never a graph of other parts.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_monorepo_serves_its_saved_whole_graph_and_patches_it() {
    let scratch = Scratch::new("restart-whole");
    let dir = scratch.path("mono");
    monorepo(&dir);
    // A repository: a command from a shell in it answers from it.
    std::fs::create_dir_all(dir.join(".git")).unwrap_or_else(|e| panic!("{e}"));
    let (cache, log, out) = (scratch.path("cache"), scratch.path("server.log"), scratch.path("fresh"));
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let client = served_with_log(&dir, &cache, &log).await;
    let service = resolve_one(&client, "OrderService").await;
    let whole = until_saved(&cache, "whole.saved", started).await;
    client.close().await;
    let before_edit = std::fs::read(&whole).unwrap_or_default();
    let served_whole = "the whole graph the last run served serves at once";
    let count =
        |what: &str| std::fs::read_to_string(&log).unwrap_or_default().lines().filter(|l| l.contains(what)).count();

    // Restarted: the whole graph serves, and an edit patches it.
    let client = served_with_log(&dir, &cache, &log).await;
    assert_eq!(resolve_one(&client, "OrderService").await, service, "the same ids");
    assert_eq!(count(served_whole), 1, "{}", std::fs::read_to_string(&log).unwrap_or_default());
    until_fresh(&client, &dir, &out, "served whole").await;
    let saved_at = std::fs::metadata(&whole).and_then(|m| m.modified()).unwrap_or_else(|e| panic!("{e}"));
    add_a_discount(&client, &dir, &out, &service, "a method added to the graph served whole").await;
    until_saved(&cache, "whole.saved", saved_at).await;
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("(the merged graph patched)"), "the whole graph is patched, not merged again: {text}");

    // Restarted after the edit: the whole graph saved with it serves.
    let client = served_with_log(&dir, &cache, &log).await;
    let now = client.call("resolve", json!({"identifier": "Order.discount"})).await;
    assert_eq!(now.structured["status"], "one", "the edit is in the whole graph saved: {}", now.text);
    assert_eq!(count(served_whole), 2);
    client.close().await;
    // A command from a shell in the tree answers from it too.
    let shell = std::process::Command::new(crate::common::BIN)
        .args(["resolve", "Order.discount"])
        .current_dir(&dir)
        .env("XDG_CACHE_HOME", &cache)
        .env("SIGNPOST_CONFIG", scratch.path("config.toml"))
        .env("RUST_LOG", "signpost=info")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let (said, logged) = (String::from_utf8_lossy(&shell.stdout), String::from_utf8_lossy(&shell.stderr));
    assert!(shell.status.success() && said.contains("Order.discount"), "{said}{logged}");
    assert!(logged.contains(served_whole), "a command from a shell serves the whole graph: {logged}");

    // One merged before the edit, put back; then one damaged: set aside,
    // the parts merged, the edit served all the same.
    let mut damaged = std::fs::read(&whole).unwrap_or_default();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    for (what, bytes) in [("merged from another", before_edit), ("its snapshot", damaged)] {
        std::fs::write(&whole, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let client = served_with_log(&dir, &cache, &log).await;
        let now = client.call("resolve", json!({"identifier": "Order.discount"})).await;
        assert_eq!(now.structured["status"], "one", "{what}: {}", now.text);
        let _ = std::fs::remove_dir_all(&out);
        until_fresh(&client, &dir, &out, what).await;
        // Set aside, it is saved again once the graph serves.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::fs::read(&whole).unwrap_or_default() == bytes {
            assert!(std::time::Instant::now() < deadline, "{what}: the whole graph set aside is not saved again");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        client.close().await;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.lines().any(|l| l.contains("the whole graph the last run saved is not used") && l.contains(what)),
            "set aside ({what}):\n{text}"
        );
        assert_eq!(count(served_whole), 2, "{what}");
        assert!(!text.contains("panicked"), "{text}");
    }
    // The next restart serves the one saved again.
    let client = served_with_log(&dir, &cache, &log).await;
    resolve_one(&client, "Order.discount").await;
    client.close().await;
    assert_eq!(count(served_whole), 3, "{}", std::fs::read_to_string(&log).unwrap_or_default());
}

/// A 2026-07-28 client that listens to `signpost://graph` hears it updated
/// when an edit swaps the graph.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_listening_to_the_graph_hears_an_edit_swapped_in() {
    use rmcp::model::SubscriptionFilter;
    let scratch = Scratch::new("listen-graph");
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let mut cmd = tokio::process::Command::new(crate::common::BIN);
    cmd.arg("--project").arg(&dir).env("XDG_CACHE_HOME", scratch.path("cache")).env("RUST_LOG", "warn");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let lifecycle =
        rmcp::ClientLifecycleMode::Discover { preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28] };
    let modern = rmcp::ClientServiceExt::serve_with_lifecycle((), transport, lifecycle).await.expect("discovering");
    let filter = SubscriptionFilter::builder().resource_subscription("signpost://graph").build();
    let mut stream = modern.peer().listen(filter).await.expect("listening");
    append(&dir.join("service/service.go"), "\nfunc Heard() int { return 1 }\n");
    let heard = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next()).await.expect("an update");
    match heard {
        Ok(Some(rmcp::model::ServerNotification::ResourceUpdatedNotification(n))) => {
            assert_eq!(n.params.uri, "signpost://graph");
        }
        other => panic!("not the graph's update: {other:?}"),
    }
}

/// A busy tree (a log and a build output written all the time, as while
/// a build or a dev server runs) in which packages come and go: a
/// directory created with its file at once, moved out of the tree, moved
/// back in under another name. Each is followed, while the writes go on.
#[tokio::test(flavor = "multi_thread")]
async fn a_served_project_follows_directories_in_a_busy_tree() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let scratch = Scratch::new("project-busy");
    let (client, dir, _) = served_go_project(&scratch).await;
    let service = resolve_one(&client, "service.Service").await;
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writes = {
        let (stop, dir) = (stop.clone(), dir.clone());
        std::thread::spawn(move || {
            for sub in ["logs", "build"] {
                std::fs::create_dir_all(dir.join(sub)).unwrap_or_else(|e| panic!("{e}"));
            }
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                use std::io::Write as _;
                let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("logs/app.log"));
                let _ = log.and_then(|mut f| writeln!(f, "request {n}"));
                let _ = std::fs::write(dir.join("build/out.bin"), n.to_le_bytes());
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    // A new directory, its file written at once (before any watch of it).
    std::fs::create_dir_all(dir.join("extra/deep")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("extra/deep/thing.go"),
        "package deep\n\n// Thing is new.\nfunc Thing() int {\n\treturn 1\n}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "deep.Thing", "one", &service).await;
    // The directory moved out of the tree: its symbols are gone.
    std::fs::rename(dir.join("extra"), scratch.path("away")).unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "deep.Thing", "none", &service).await;
    // Moved back in under another name: found again, where it is now.
    std::fs::rename(scratch.path("away"), dir.join("more")).unwrap_or_else(|e| panic!("{e}"));
    let found = until_resolved(&client, "deep.Thing", "one", &service).await;
    let file = found.structured["candidates"][0]["file"].as_str().unwrap_or_default().to_owned();
    assert_eq!(file, "more/deep/thing.go", "{}", found.text);
    assert_eq!(resolve_one(&client, "service.Service").await, service, "an unchanged symbol keeps its id");
    stop.store(true, Ordering::Relaxed);
    writes.join().unwrap_or_else(|_| panic!("the writer panicked"));
    client.close().await;
}

/// `signpost --project` with a built-in language's SCIP indexer on PATH:
/// the built-in indexer answers at once, the indexer's index (exact edges)
/// swaps in when it is done, an edit is read at once by the built-in
/// indexer again, and the indexer runs again once edits are quiet (here it
/// fails: the built-in part keeps serving the edit).
#[tokio::test(flavor = "multi_thread")]
async fn a_project_gets_its_languages_scip_index_in_the_background() {
    let scratch = Scratch::new("project-precise");
    let bin = standin_scip_go(&scratch, 1);
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let (d, c) = (dir.display().to_string(), scratch.path("cache").display().to_string());
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&inherited)))
        .unwrap_or_else(|e| panic!("{e}"));
    let env = [
        ("XDG_CACHE_HOME", c.as_str()),
        ("PATH", path.to_str().unwrap_or_default()),
        ("SIGNPOST_PRECISE_QUIET_MS", "300"),
    ];
    let client = Client::spawn_with(&["--project", &d, "--trust"], &env, std::process::Stdio::null()).await;
    let service = resolve_one(&client, "service.Service").await;
    let total = resolve_one(&client, "Order.Total").await;
    // The callers of `Total` become exact when the indexer's index is in.
    let callers_exact = async || {
        let r = client.call("neighbors", json!({"ids": [total], "direction": "in", "edge_types": ["CALLS"]})).await;
        let results = r.structured["results"].as_array().cloned().unwrap_or_default();
        (!results.is_empty(), results.iter().all(|e| e.get("derived").is_none()))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (some, exact) = callers_exact().await;
        if some && exact {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the precise index never swapped in ({} runs)",
            standin_runs(&bin)
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(standin_runs(&bin), 1);
    assert_eq!(resolve_one(&client, "service.Service").await, service, "ids are the same whichever indexer read it");

    // An edit is read at once by the built-in indexer.
    std::fs::write(
        dir.join("orders/discount.go"),
        "package orders\n\n// Discount is a tenth of the total.\nfunc Discount(o *Order) float64 {\n\treturn o.Total() / 10\n}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "Discount", "one", &service).await;
    // Once quiet, the indexer runs again; it fails, and the edit stays served.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while standin_runs(&bin) < 2 {
        assert!(std::time::Instant::now() < deadline, "the indexer did not run again after the edit");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    until_resolved(&client, "Discount", "one", &service).await;
    client.close().await;
}

/// A monorepo assembled from the fixtures: Rust, Python and TypeScript
/// projects (their SCIP indexers) and Java and Go (built in) in
/// subdirectories, with build outputs and dependencies that must be left out.
fn monorepo(at: &Path) {
    let scip = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scip");
    copy_dir(&scip.join("rust"), &at.join("libs/geometry"));
    copy_dir(&scip.join("py"), &at.join("services/report"));
    copy_dir(&scip.join("ts"), &at.join("web"));
    copy_dir(&fixture("go"), &at.join("backend"));
    copy_dir(&fixture("java"), &at.join("legacy"));
    copy_dir(&fixture("cpp"), &at.join("native"));
    for stale in ["libs/geometry/index.scip", "services/report/index.scip", "web/index.scip"] {
        let _ = std::fs::remove_file(at.join(stale));
    }
    let write = |rel: &str, text: &str| write_under(at, rel, text);
    // The TypeScript project compiles everything under it, its build
    // output and a declaration file beside its source included.
    write(
        "web/tsconfig.json",
        r#"{"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": true, "noEmit": true, "lib": ["ES2020"], "types": []}}"#,
    );
    write("web/dist/shapes.d.ts", "export declare class BuiltCircle {\n    area(): number;\n}\n");
    write("web/src/shapes.d.ts", "export declare class SiblingDeclaration {\n    area(): number;\n}\n");
    write("web/src/untyped.d.ts", "export declare class DeclaredOnly {\n    area(): number;\n}\n");
    write("web/node_modules/dep/index.ts", "export function vendored(): number {\n    return 1;\n}\n");
    write("legacy/build/generated/Stub.java", "package gen;\npublic class BuildOutputStub {}\n");
    write("native/build/config.h", "struct CMakeConfigStub { int x; };\n");
    write(
        "backend/orders/order.pb.go",
        "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage orders\n\ntype GeneratedStub struct{}\n",
    );
}

#[test]
fn a_monorepo_is_indexed_as_one_workspace_without_its_build_outputs() {
    let scratch = Scratch::new("monorepo");
    let mono = scratch.path("mono");
    monorepo(&mono);
    let (ok, out) = index_args(&[mono.as_os_str(), "--trust".as_ref()]);
    let Some(()) = crate::common::toolchain::require("the SCIP indexers", if ok { Ok(()) } else { Err(out.clone()) })
    else {
        return;
    };
    for part in ["rust.libs-geometry", "python.services-report", "typescript.web", "go", "java", "cpp"] {
        assert!(mono.join(format!("index.{part}.scip")).is_file(), "index.{part}.scip: {out}");
    }
    assert!(out.contains("rust in libs/geometry") && out.contains("(go, tree-sitter)"), "{out}");
    let graphs: Vec<String> = std::fs::read_dir(&mono)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "scip"))
        .map(|p| p.display().to_string())
        .collect();
    let serve_line = graphs.iter().all(|g| out.contains(&format!("--graph {g}")));
    assert!(serve_line, "the serve line names every part: {out}");
    let parts: Vec<signpost::graph::Graph> =
        graphs.iter().map(|g| signpost::graph::load(Path::new(g)).unwrap_or_else(|e| panic!("{g}: {e}"))).collect();
    let ws = signpost::graph::merge("mono", parts.iter()).unwrap_or_else(|e| panic!("{e}"));
    let names: BTreeSet<&str> = ws.iter().map(|n| n.name()).collect();
    for kept in ["Circle", "total_area", "OrderService", "MemoryStore", "DeclaredOnly", "distance", "GeneratedStub"] {
        assert!(names.contains(kept), "{kept} is indexed: {names:?}");
    }
    for left_out in ["BuiltCircle", "SiblingDeclaration", "vendored", "BuildOutputStub", "CMakeConfigStub"] {
        assert!(!names.contains(left_out), "{left_out} comes from a build output, a dependency or a copy of source");
    }
    // Paths are the monorepo's, so one file is one file across parts.
    let files: BTreeSet<&str> = ws.iter().map(|n| n.file()).filter(|f| !f.is_empty()).collect();
    for prefix in ["libs/geometry/", "services/report/", "web/src/", "backend/", "legacy/src/", "native/lib/"] {
        assert!(files.iter().any(|f| f.starts_with(prefix)), "{prefix}: {files:?}");
    }
    assert!(files.iter().all(|f| !f.starts_with("web/dist/") && !f.contains("node_modules")), "{files:?}");
}

/// Runs `signpost index ARGS` with `path` first on PATH.
fn index_with(args: &[&str], path: &Path) -> (bool, String) {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(path.to_path_buf()).chain(std::env::split_paths(&inherited));
    let out = std::process::Command::new(crate::common::BIN)
        .arg("index")
        .args(args)
        .env("PATH", std::env::join_paths(paths).unwrap_or_else(|e| panic!("{e}")))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// The go fixture's index as the built-in indexer writes it (indexed in a
/// copy under `scratch`).
fn go_fixture_index(scratch: &Scratch) -> scip::types::Index {
    use protobuf::Message;
    let made = scratch.path("made");
    copy_dir(&fixture("go"), &made);
    let (ok, out) = index(&made);
    assert!(ok, "{out}");
    scip::types::Index::parse_from_bytes(&std::fs::read(made.join("index.scip")).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A stand-in `scip-go` in a directory of its own (returned): `scip-go
/// --output OUT` writes the go fixture's index as scip-go names itself (so
/// its edges count as exact) for its first `runs` runs, then fails; each
/// run is a line of `runs` in that directory.
fn standin_scip_go(scratch: &Scratch, runs: usize) -> PathBuf {
    use protobuf::Message;
    let mut idx = go_fixture_index(scratch);
    if let Some(m) = idx.metadata.as_mut()
        && let Some(t) = m.tool_info.as_mut()
    {
        t.name = "scip-go".into();
    }
    let standin = scratch.path("standin.scip");
    std::fs::write(&standin, idx.write_to_bytes().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    let script = bin.join("scip-go");
    let log = bin.join("runs");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$1\" = --output ] || exit 2\necho run >> '{log}'\n\
             [ \"$(wc -l < '{log}')\" -le {runs} ] || {{ echo 'stand-in: no more runs' >&2; exit 1; }}\n\
             cp '{}' \"$2\"\n",
            standin.display(),
            log = log.display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
    }
    bin
}

/// How many times the stand-in ran.
fn standin_runs(bin: &Path) -> usize {
    std::fs::read_to_string(bin.join("runs")).unwrap_or_default().lines().count()
}

#[test]
fn a_scip_indexer_on_path_is_preferred_and_the_built_in_one_is_the_fallback() {
    let scratch = Scratch::new("languages-dispatch");
    let bin = standin_scip_go(&scratch, 1000);
    let dir = scratch.path("shop");
    copy_dir(&fixture("go"), &dir);
    let d = dir.display().to_string();
    // On PATH and the tree trusted: it runs, and its (exact) index is the part served.
    let (ok, out) = index_with(&[&d, "--trust"], &bin);
    assert!(ok && out.contains("(go, scip-go)"), "{out}");
    let g = signpost::graph::load(&dir.join("index.scip")).unwrap_or_else(|e| panic!("{e}"));
    assert!(g.node_count() > 20 && !g.has_inferred_edges(), "the SCIP indexer's edges are exact");
    // One that fails: a note, and the built-in indexer reads the language.
    let (ok, out) = index_with(&[&d, "--indexer", "go=sh -c 'echo broken >&2; exit 3' {out}"], &bin);
    assert!(ok && out.contains("failed") && out.contains("broken") && out.contains("(go, tree-sitter)"), "{out}");
    // Its reason is read from whichever stream it wrote (scip-typescript
    // prints its errors on stdout).
    let (ok, out) = index_with(&[&d, "--indexer", "go=sh -c 'echo cannot-resolve-tsconfig; exit 3' {out}"], &bin);
    assert!(ok && out.contains("failed") && out.contains("cannot-resolve-tsconfig"), "{out}");
    let g = signpost::graph::load(&dir.join("index.scip")).unwrap_or_else(|e| panic!("{e}"));
    assert!(g.has_inferred_edges(), "the built-in indexer's edges are inferred");
    // Flags that cannot work are refused before anything runs.
    for (flag, says) in [
        ("cobol=run {out}", "not one of"),
        ("go=scip-go", "{out}"),
        ("go", "LANG=COMMAND"),
        ("go='unclosed {out}", "does not parse"),
    ] {
        let (ok, out) = index_with(&[&d, "--indexer", flag], &bin);
        assert!(!ok && out.contains(says), "--indexer {flag}: {out}");
    }
}

/// On an offline machine, `signpost index` reads Python, TypeScript and
/// Rust projects with the built-in indexer, and says so.
#[test]
fn python_typescript_and_rust_projects_whose_indexer_cannot_run_are_read_built_in() {
    for (lang, fixture, names) in [
        ("python", "py", ["Circle", "total_area", "report", "geometry"]),
        ("typescript", "ts", ["Circle", "totalArea", "report", "shapes.ts"]),
        ("rust", "rust", ["Circle", "total_area", "report", "geometry"]),
    ] {
        let scratch = Scratch::new(&format!("languages-{lang}-fallback"));
        let dir = scratch.path("shapes");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scip").join(fixture), &dir);
        let _ = std::fs::remove_file(dir.join("index.scip"));
        // No PATH and an empty tools directory: the indexer cannot be found
        // or installed (an offline machine).
        let out = std::process::Command::new(crate::common::BIN)
            .args(["index", "--trust"])
            .arg(&dir)
            .env("PATH", "")
            .env("SIGNPOST_TOOLS_DIR", scratch.path("no-tools"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains(&format!("the {lang} indexer failed")) && text.contains(&format!("({lang}, tree-sitter)")),
            "{text}"
        );
        let g = signpost::graph::load(&dir.join("index.scip")).unwrap_or_else(|e| panic!("{e}"));
        let found: BTreeSet<&str> = g.iter().map(|n| n.name()).collect();
        for name in names {
            assert!(found.contains(name), "{lang} {name}: {found:?}");
        }
        assert!(g.has_inferred_edges(), "{lang}");
    }
}

/// Describes `id` until its answer's `stale` mark is `want`. Panics after a
/// generous deadline (a correctness wait, not a timing assertion).
async fn until_stale(client: &Client, id: &str, want: bool, within: std::time::Duration) -> Reply {
    let deadline = std::time::Instant::now() + within;
    loop {
        let r = client.call("describe", json!({"id": id})).await;
        assert!(!r.is_error, "{}", r.text);
        if r.structured.get("stale").and_then(serde_json::Value::as_bool).unwrap_or(false) == want {
            return r;
        }
        assert!(std::time::Instant::now() < deadline, "{id} never became stale={want}: {}", r.text);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A served project marks what changed since it was indexed: a file of a
/// part the watcher does not re-index (a Python project, indexed once by
/// scip-python in the background) is stale in `describe` from its first
/// change on, in the text and in `structuredContent`; a file of a part it
/// re-indexes (Go, built in) is current again once re-indexed; the others
/// never were stale.
#[tokio::test(flavor = "multi_thread")]
async fn describe_marks_a_symbol_whose_file_changed_since_it_was_indexed() {
    let scratch = Scratch::new("stale");
    let dir = scratch.path("repo");
    let scip = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scip");
    copy_dir(&scip.join("py"), &dir.join("report"));
    let _ = std::fs::remove_file(dir.join("report/index.scip"));
    copy_dir(&fixture("go"), &dir.join("backend"));
    let cache = scratch.path("cache");
    // The indexers signpost installs are shared with the other tests.
    let tools = signpost::graph::indexer::tools_dir().display().to_string();
    let (d, c) = (dir.display().to_string(), cache.display().to_string());
    let env = [("XDG_CACHE_HOME", c.as_str()), ("SIGNPOST_TOOLS_DIR", tools.as_str())];
    // Its stderr shows why, should scip-python's pass fail.
    let client = Client::spawn_with(&["--project", &d, "--trust"], &env, std::process::Stdio::inherit()).await;

    // The Python project is served at once, read by the built-in indexer
    // (inferred edges), and by scip-python's index (exact ones) when
    // scip-python is done; the id is the same.
    let circle = resolve_one(&client, "geometry.Circle").await;
    let supertypes = |derived: bool| {
        let client = &client;
        let circle = circle.clone();
        async move {
            let r =
                client.call("neighbors", json!({"ids": [circle], "direction": "out", "edge_types": ["EXTENDS"]})).await;
            r.structured["results"]
                .as_array()
                .is_some_and(|a| !a.is_empty() && a.iter().all(|e| (e["derived"] == "inferred") == derived))
        }
    };
    let early = supertypes(true).await;
    // scip-python is installed from npm on a machine's first run: minutes
    // on two busy cores.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        if supertypes(false).await {
            break;
        }
        if std::time::Instant::now() > deadline {
            let Some(()) =
                crate::common::toolchain::require("scip-python", Err("scip-python's index never came in".to_owned()))
            else {
                client.close().await;
                return;
            };
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(early, "the built-in indexer's reading is served while scip-python runs");
    assert_eq!(resolve_one(&client, "geometry.Circle").await, circle, "the same id from either indexer");
    let report = resolve_one(&client, "report.report").await;
    let service = resolve_one(&client, "service.Service").await;
    for id in [&circle, &report, &service] {
        let r = client.call("describe", json!({"id": id})).await;
        assert!(r.structured.get("stale").is_none() && !r.text.contains("changed since"), "{}", r.text);
    }

    // An edit to the Python file: stale until it is indexed again, which
    // the watcher does not do for a SCIP-indexed project.
    let geometry = dir.join("report/shapes/geometry.py");
    let mut text = std::fs::read_to_string(&geometry).unwrap_or_default();
    text.push_str("\n# edited while served\n");
    std::fs::write(&geometry, text).unwrap_or_else(|e| panic!("{e}"));
    let stale = until_stale(&client, &circle, true, std::time::Duration::from_secs(30)).await;
    assert!(
        stale.text.contains("note: report/shapes/geometry.py changed since it was indexed"),
        "the text says which file: {}",
        stale.text
    );
    let other = client.call("describe", json!({"id": report})).await;
    assert!(other.structured.get("stale").is_none(), "another file of the project is current: {}", other.text);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    until_stale(&client, &circle, true, std::time::Duration::from_secs(1)).await;

    // An edit to a Go file: re-indexed, so current again.
    let go = dir.join("backend/service/service.go");
    let mut text = std::fs::read_to_string(&go).unwrap_or_default();
    text.push_str("\nfunc Extra() int { return 1 }\n");
    std::fs::write(&go, text).unwrap_or_else(|e| panic!("{e}"));
    until_resolved(&client, "Extra", "one", &report).await;
    until_stale(&client, &service, false, std::time::Duration::from_secs(30)).await;
    let test = resolve_one(&client, "test_total_area").await;
    client.close().await;

    // Served again on the same cache, with a test file deleted meanwhile:
    // the Python project starts from the last run's index, older than the
    // edit made to geometry.py and holding the deleted file, so their
    // symbols are stale from the first call (no change was seen while
    // serving), and current again when scip-python's new index swaps in.
    std::fs::remove_file(dir.join("report/tests/test_geometry.py")).unwrap_or_else(|e| panic!("{e}"));
    let client = Client::spawn_with(&["--project", &d, "--trust"], &env, std::process::Stdio::inherit()).await;
    let stale = client.call("describe", json!({"id": circle})).await;
    assert_eq!(stale.structured["stale"], true, "changed while stopped: {}", stale.text);
    assert!(stale.text.contains("note: report/shapes/geometry.py changed since it was indexed"), "{}", stale.text);
    let gone = client.call("describe", json!({"id": test})).await;
    assert_eq!(gone.structured["stale"], true, "deleted while stopped: {}", gone.text);
    let other = client.call("describe", json!({"id": report})).await;
    assert!(other.structured.get("stale").is_none(), "unchanged while stopped: {}", other.text);
    until_stale(&client, &circle, false, std::time::Duration::from_secs(600)).await;
    client.close().await;
}

/// What the index could not tell is said, never a silent "nobody calls
/// it": a call on a value whose type is not known is counted (and
/// `describe` and the callers' `neighbors` say how many), and a call
/// between overloads it cannot tell apart is an edge to each, marked
/// ambiguous.
#[tokio::test(flavor = "multi_thread")]
async fn unbound_calls_are_counted_and_ambiguous_ones_marked() {
    let scratch = Scratch::new("honest-callers");
    let dir = scratch.path("repo");
    let write = |rel: &str, text: &str| write_under(&dir, rel, text);
    write(
        "shop/orders.py",
        "class Order:\n    def settle(self):\n        return 1\n\n\ndef close(thing):\n    return thing.settle()\n",
    );
    write(
        "src/main/java/p/Texts.java",
        "package p;\npublic class Texts {\n    static String render(String s) { return s; }\n    static String render(Object o) { return \"\"; }\n    static String use() { return render(System.getenv(\"X\")); }\n}\n",
    );
    let (d, c) = (dir.display().to_string(), scratch.path("cache").display().to_string());
    let config = scratch.path("config.toml").display().to_string();
    let env = [("XDG_CACHE_HOME", c.as_str()), ("SIGNPOST_CONFIG", config.as_str())];
    let client = Client::spawn_with(&["--project", &d], &env, std::process::Stdio::null()).await;
    let settle = resolve_one(&client, "Order.settle").await;
    let r = client.call("describe", json!({"id": settle})).await;
    assert_eq!(r.structured["unbound_calls"], 1, "{}", r.text);
    assert!(r.text.contains("note: 1 call site(s) named `settle` were not bound"), "{}", r.text);
    let r = client.call("neighbors", json!({"ids": [settle], "direction": "in", "edge_types": ["CALLS"]})).await;
    assert_eq!(r.structured["unbound_calls"], 1, "{}", r.text);
    assert!(r.text.contains("may be more than the edges show"), "{}", r.text);
    // Both overloads are the call's, each marked.
    let r = client.call("resolve", json!({"identifier": "Texts.render"})).await;
    let ids: Vec<String> = r.structured["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), 2, "{}", r.text);
    for id in ids {
        let r = client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
        let results = r.structured["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(results.len(), 1, "{}", r.text);
        assert_eq!(results[0]["derived"], "ambiguous", "{}", r.text);
        assert!(r.text.contains("(ambiguous)"), "{}", r.text);
    }
    client.close().await;
}

/// A SCIP index with a symbol that does not parse is served without that
/// symbol, not refused whole, and the log names what was left out.
#[tokio::test(flavor = "multi_thread")]
async fn a_scip_index_with_a_malformed_symbol_is_served_without_it() {
    use protobuf::Message;
    let scratch = Scratch::new("languages-malformed-symbol");
    let mut idx = go_fixture_index(&scratch);
    let doc = idx.documents.first_mut().unwrap_or_else(|| panic!("a document"));
    let path = doc.relative_path.clone();
    let bad = "scip-go gomod example.com/shop . `unterminated";
    doc.occurrences.push(scip::types::Occurrence {
        symbol: bad.into(),
        symbol_roles: scip::types::SymbolRole::Definition as i32,
        range: vec![0, 0, 1],
        ..Default::default()
    });
    doc.symbols.push(scip::types::SymbolInformation { symbol: bad.into(), ..Default::default() });
    let file = scratch.path("malformed.scip");
    std::fs::write(&file, idx.write_to_bytes().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
    let log = scratch.path("server.log");
    let stderr = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
    let f = file.display().to_string();
    let client = Client::spawn_with(&["--graph", &f], &[("RUST_LOG", "warn")], stderr).await;
    let r = client.call("resolve", json!({"identifier": "NewMemoryStore"})).await;
    assert_eq!(r.structured["status"], "one", "the rest of the index is served: {}", r.text);
    let r = client.call("find", json!({"name": "unterminated"})).await;
    assert_eq!(r.structured["total"], 0, "{}", r.text);
    client.close().await;
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("do not parse were left out") && logged.contains(&path), "{logged}");
}
