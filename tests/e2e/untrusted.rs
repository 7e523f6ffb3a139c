//! Hostile trees, built at test time: what `signpost index` and `signpost
//! --project` do with a repository that was made to attack them. Nothing
//! in an untrusted tree runs (build scripts, cargo's wrappers, toolchain
//! files, virtual environments, package scripts, a SCIP indexer on PATH),
//! nothing outside it is read (links, a `go.mod` that is a link, a
//! `tsconfig.json` that extends a file elsewhere), no file stalls the index
//! or the watcher (a pathological file, a FIFO), every ignore pattern
//! applies, a change made while the first index runs is caught, and the
//! policy runs under an address-space limit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::swap::Scratch;
use crate::common::{BIN, Client};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap_or(path)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
}

/// Every path under `dir` (links not followed), relative.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(dir).unwrap_or(&p).to_path_buf());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    out
}

/// The markers the tree's programs left in `marks`.
fn marks(marks: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(marks)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// A Rust crate, a Python project, an npm package and a Go module in one
/// tree, each with a way to run the tree's code that writes a file into
/// `marks` when it runs: a build script, cargo's `rustc-wrapper`, a
/// toolchain file whose `path` is a directory of the tree, a virtual
/// environment `pyrightconfig.json` names, npm lifecycle scripts.
fn hostile_tree(at: &Path, marks: &Path) {
    let m = marks.display();
    let t = at.display();
    write(&at.join("Cargo.toml"), "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(&at.join("build.rs"), &format!("fn main() {{ std::fs::write(\"{m}/build-script\", \"ran\").unwrap(); }}\n"));
    write(&at.join("src/lib.rs"), "/// Defined in the hostile crate.\npub fn hostile_fn() -> u32 {\n    1\n}\n");
    write(&at.join(".cargo/config.toml"), "[build]\nrustc-wrapper = \"./wrap.sh\"\n");
    executable(&at.join("wrap.sh"), &format!("#!/bin/sh\necho ran > '{m}/rustc-wrapper'\nexec \"$@\"\n"));
    write(&at.join("rust-toolchain.toml"), &format!("[toolchain]\npath = \"{t}/toolchain\"\n"));
    for tool in ["rust-analyzer", "cargo", "rustc"] {
        executable(
            &at.join("toolchain/bin").join(tool),
            &format!("#!/bin/sh\necho ran > '{m}/toolchain-{tool}'\nexit 1\n"),
        );
    }
    write(&at.join("pyproject.toml"), "[project]\nname = \"hostile-py\"\nversion = \"0\"\n");
    write(&at.join("pyrightconfig.json"), "{\"venvPath\": \".\", \"venv\": \"venv\"}\n");
    executable(&at.join("venv/bin/python"), &format!("#!/bin/sh\necho ran > '{m}/venv-python'\nexit 1\n"));
    write(&at.join("app.py"), "def hostile_py() -> int:\n    return 1\n");
    write(
        &at.join("package.json"),
        &format!(
            "{{\"name\": \"hostile-js\", \"scripts\": {{\"preinstall\": \"echo ran > '{m}/npm-preinstall'\", \
             \"prepare\": \"echo ran > '{m}/npm-prepare'\"}}}}\n"
        ),
    );
    write(&at.join("web/index.ts"), "export function hostileTs(): number {\n    return 1;\n}\n");
    write(&at.join("go.mod"), "module example.com/hostile\n\ngo 1.19\n\ntoolchain go1.99.0\n");
    write(&at.join("cmd/main.go"), "package main\n\nfunc HostileGo() int { return 1 }\n");
}

/// A directory with a stand-in `scip-go` that writes a marker when it runs.
fn scip_go_on_path(scratch: &Scratch, marks: &Path) -> String {
    let bin = scratch.path("bin");
    executable(&bin.join("scip-go"), &format!("#!/bin/sh\necho ran > '{}/scip-go'\nexit 1\n", marks.display()));
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&inherited)))
        .unwrap_or_else(|e| panic!("{e}"));
    path.to_string_lossy().into_owned()
}

/// Runs `signpost ARGS` with `env`, killed (and the test failed) past
/// `limit`: a hang detector, not a timing assertion. Success and output.
fn run_bounded(args: &[&str], env: &[(&str, &str)], limit: Duration) -> (bool, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap_or_else(|e| panic!("{e}")).is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("signpost {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// The environment of a run that trusts nothing by configuration and keeps
/// its cache in `scratch`.
fn isolated(scratch: &Scratch) -> Vec<(String, String)> {
    vec![
        ("SIGNPOST_CONFIG".into(), scratch.path("config.toml").display().to_string()),
        ("XDG_CACHE_HOME".into(), scratch.path("cache").display().to_string()),
        ("SIGNPOST_TOOLS_DIR".into(), signpost::graph::indexer::tools_dir().display().to_string()),
    ]
}

fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn names_of(g: &signpost::graph::Graph) -> BTreeSet<String> {
    g.iter().map(|n| n.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_of_an_untrusted_tree_runs_in_index_or_project() {
    let scratch = Scratch::new("untrusted-runs");
    let (tree, m) = (scratch.path("tree"), scratch.path("marks"));
    std::fs::create_dir_all(&m).unwrap_or_else(|e| panic!("{e}"));
    hostile_tree(&tree, &m);
    let before = files_under(&tree);
    let mut env = isolated(&scratch);
    env.push(("PATH".into(), scip_go_on_path(&scratch, &m)));
    let out = scratch.path("out");
    let (ok, text) = run_bounded(
        &["index", &tree.display().to_string(), "-o", &out.display().to_string()],
        &pairs(&env),
        Duration::from_secs(300),
    );
    assert!(ok, "{text}");
    for indexer in ["rust-analyzer", "scip-typescript", "scip-python", "scip-go"] {
        assert!(text.contains(&format!("note: {indexer} was not run")), "{indexer}: {text}");
    }
    assert!(text.contains("--trust") && text.contains("signpost trust"), "how to opt in: {text}");
    // The built-in indexer read every language instead.
    let parts: Vec<signpost::graph::Graph> = std::fs::read_dir(&out)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| signpost::graph::load(&e.path()).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let names: BTreeSet<String> = parts.iter().flat_map(names_of).collect();
    for name in ["hostile_fn", "hostile_py", "hostileTs", "HostileGo"] {
        assert!(names.contains(name), "{name}: {names:?}");
    }
    assert_eq!(marks(&m), Vec::<String>::new(), "the tree's code ran during `signpost index`");
    assert_eq!(files_under(&tree), before, "`signpost index` wrote into the tree");

    // `--project`: the same, in the background, before any tool call.
    let client = Client::spawn_with(&["--project", &tree.display().to_string()], &pairs(&env), Stdio::null()).await;
    let r = client.call("resolve", json!({"identifier": "hostile_fn"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    let graph = client.resource("signpost://graph").await;
    let notes = graph["notes"].to_string();
    for indexer in ["rust-analyzer", "scip-typescript", "scip-python", "scip-go"] {
        assert!(notes.contains(&format!("{indexer} was not run")), "{indexer}: {graph:#}");
    }
    // Long enough for any indexer started at open to have run the tree's code.
    tokio::time::sleep(Duration::from_secs(4)).await;
    client.close().await;
    assert_eq!(marks(&m), Vec::<String>::new(), "the tree's code ran under --project");
    assert_eq!(files_under(&tree), before, "--project wrote into the tree");
}

/// Trusted (`--trust`, or `signpost trust DIR`), the SCIP indexer runs, and
/// with it the tree's code (which is why it needs trust); its build outputs
/// still go into Signpost's cache, not the tree.
#[test]
fn a_trusted_tree_runs_its_indexer_and_is_still_not_written_to() {
    let scratch = Scratch::new("trusted-runs");
    let (tree, m) = (scratch.path("tree"), scratch.path("marks"));
    std::fs::create_dir_all(&m).unwrap_or_else(|e| panic!("{e}"));
    write(&tree.join("Cargo.toml"), "[package]\nname = \"trusted\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    let mark = m.join("build-script").display().to_string();
    write(&tree.join("build.rs"), &format!("fn main() {{ std::fs::write(\"{mark}\", \"ran\").unwrap(); }}\n"));
    write(&tree.join("src/lib.rs"), "pub fn trusted_fn() -> u32 {\n    1\n}\n");
    let before = files_under(&tree);
    let env = isolated(&scratch);
    let t = tree.display().to_string();
    // Trusted by the configuration file, as `signpost trust` writes it.
    let (ok, text) = run_bounded(&["trust", &t], &pairs(&env), Duration::from_secs(30));
    assert!(ok && text.contains("trusted from now on"), "{text}");
    let config = std::fs::read_to_string(scratch.path("config.toml")).unwrap_or_default();
    assert!(
        config.contains("[trust]")
            && config.contains(&*std::fs::canonicalize(&tree).unwrap_or_default().to_string_lossy()),
        "{config}"
    );
    let out = scratch.path("trusted.scip");
    let (ok, text) =
        run_bounded(&["index", &t, "-o", &out.display().to_string()], &pairs(&env), Duration::from_secs(600));
    let Some(()) = crate::common::toolchain::require("rust-analyzer", if ok { Ok(()) } else { Err(text.clone()) })
    else {
        return;
    };
    if text.contains("the rust indexer failed") {
        crate::common::toolchain::require::<()>("rust-analyzer", Err(text.clone()));
        return;
    }
    assert!(!text.contains("was not run"), "{text}");
    assert!(marks(&m).contains(&"build-script".to_owned()), "trusted: the indexer ran the build script: {text}");
    assert_eq!(files_under(&tree), before, "the trusted indexer wrote into the tree (cargo's target/?)");
    let (ok, text) = run_bounded(&["trust", "--remove", &t], &pairs(&env), Duration::from_secs(30));
    assert!(ok && text.contains("no longer trusted"), "{text}");
    let (ok, text) = run_bounded(&["trust", "--list"], &pairs(&env), Duration::from_secs(30));
    assert!(ok && !text.contains(&t), "{text}");
}

/// `--indexer rust=builtin` (or `[indexer] rust = "builtin"` in the
/// configuration) chooses the built-in indexer even on a trusted tree: the
/// tree's build script never runs, and the choice and its reason are said.
#[tokio::test(flavor = "multi_thread")]
async fn the_built_in_indexer_chosen_on_a_trusted_tree_runs_nothing_and_says_so() {
    let scratch = Scratch::new("trusted-builtin");
    let (tree, m) = (scratch.path("tree"), scratch.path("marks"));
    std::fs::create_dir_all(&m).unwrap_or_else(|e| panic!("{e}"));
    write(&tree.join("Cargo.toml"), "[package]\nname = \"chosen\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    let mark = m.join("build-script").display().to_string();
    write(&tree.join("build.rs"), &format!("fn main() {{ std::fs::write(\"{mark}\", \"ran\").unwrap(); }}\n"));
    write(&tree.join("src/lib.rs"), "pub fn chosen_fn() -> u32 {\n    helper()\n}\n\nfn helper() -> u32 {\n    1\n}\n");
    let env = isolated(&scratch);
    let t = tree.display().to_string();
    let out = scratch.path("chosen.scip").display().to_string();
    let (ok, text) = run_bounded(
        &["index", &t, "--trust", "--indexer", "rust=builtin", "-o", &out],
        &pairs(&env),
        Duration::from_secs(120),
    );
    assert!(ok, "{text}");
    assert!(
        text.contains("rust is read by the built-in indexer, not rust-analyzer (--indexer rust=builtin)"),
        "{text}"
    );
    assert!(text.contains("(rust, tree-sitter)") && !text.contains("rust indexer failed"), "{text}");
    let g = signpost::graph::load(Path::new(&out)).unwrap_or_else(|e| panic!("{e}"));
    assert!(g.iter().any(|n| n.name() == "chosen_fn"), "the crate is read");
    // A server on the same tree, trusted, with the choice in the configuration.
    write(&scratch.path("config.toml"), "[indexer]\nrust = \"builtin\"\n");
    let client = Client::spawn_with(&["--project", &t, "--trust"], &pairs(&env), Stdio::null()).await;
    let r = client.call("resolve", json!({"identifier": "chosen_fn"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    let graph = client.resource("signpost://graph").await;
    let notes = graph["notes"].to_string();
    assert!(notes.contains("rust is read by the built-in indexer, not rust-analyzer"), "{graph:#}");
    assert!(notes.contains("config.toml"), "the reason names where the choice was made: {graph:#}");
    // Long enough for an indexer started at open to have run the build script.
    tokio::time::sleep(Duration::from_secs(4)).await;
    client.close().await;
    assert_eq!(marks(&m), Vec::<String>::new(), "the build script ran although the built-in indexer was chosen");
}

#[test]
fn nothing_outside_the_tree_enters_the_graph() {
    let scratch = Scratch::new("untrusted-outside");
    let (tree, outside) = (scratch.path("tree"), scratch.path("outside"));
    write(&outside.join("Secret.java"), "package leak;\npublic class OutsideSecret {}\n");
    write(&outside.join("go.mod"), "module leaked.example/secret\n\ngo 1.19\n");
    write(&outside.join("lib.ts"), "export class OutsideTs {}\n");
    write(&outside.join("base.json"), &format!("{{\"include\": [\"{}/**/*\"]}}\n", outside.display()));
    write(&tree.join("src/Inside.java"), "package inside;\npublic class InsideJava {}\n");
    write(&tree.join("cmd/main.go"), "package main\n\nfunc InsideGo() int { return 1 }\n");
    write(&tree.join("src/inside.ts"), "export class InsideTs {}\n");
    write(&tree.join("tsconfig.json"), &format!("{{\"extends\": \"{}/base.json\"}}\n", outside.display()));
    std::os::unix::fs::symlink(outside.join("Secret.java"), tree.join("src/Link.java"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&outside, tree.join("src/linked")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(outside.join("go.mod"), tree.join("go.mod")).unwrap_or_else(|e| panic!("{e}"));
    let env = isolated(&scratch);
    let out = scratch.path("out");
    // Trusted, scip-typescript follows the tsconfig, which names only files
    // outside: none of them is served (nor, then, any TypeScript).
    let check = |out: &Path, text: &str, typescript: bool| {
        let mut names = BTreeSet::new();
        for e in std::fs::read_dir(out).unwrap_or_else(|e| panic!("{e}")).flatten() {
            let g = signpost::graph::load(&e.path()).unwrap_or_else(|e| panic!("{e}"));
            for n in g.iter() {
                names.insert(n.name().to_owned());
                let (file, fqn) = (n.file(), n.fqn());
                assert!(!file.starts_with('/') && !file.contains(".."), "{file}: {text}");
                assert!(!fqn.contains("leaked") && !fqn.contains(&*outside.to_string_lossy()), "{fqn}: {text}");
            }
        }
        for inside in ["InsideJava", "InsideGo", "InsideTs"] {
            assert!(names.contains(inside) || (inside == "InsideTs" && !typescript), "{inside}: {names:?} {text}");
        }
        for leaked in ["OutsideSecret", "OutsideTs"] {
            assert!(!names.contains(leaked), "{leaked} from outside the tree is served: {text}");
        }
    };
    let (ok, text) = run_bounded(
        &["index", &tree.display().to_string(), "-o", &out.display().to_string()],
        &pairs(&env),
        Duration::from_secs(300),
    );
    assert!(ok, "{text}");
    check(&out, &text, true);
    // Trusted, scip-typescript reads what the tsconfig names; what is outside is left out.
    let trusted = scratch.path("trusted");
    let (ok, text) = run_bounded(
        &["index", &tree.display().to_string(), "-o", &trusted.display().to_string(), "--trust"],
        &pairs(&env),
        Duration::from_secs(900),
    );
    assert!(ok, "{text}");
    if text.contains("indexer failed") {
        crate::common::toolchain::require::<()>("scip-typescript", Err(text.clone()));
        return;
    }
    assert!(text.contains("outside the project root"), "{text}");
    check(&trusted, &text, false);
}

/// A class, then a run of unbalanced parentheses the query spends minutes on.
fn pathological_java(class: &str, bytes: usize) -> String {
    let mut text =
        format!("package p;\n\npublic class {class} {{\n    void before() {{}}\n}}\n\nclass Bad {{ int x = ");
    text.extend(std::iter::repeat_n('(', bytes));
    text
}

#[test]
fn a_pathological_file_is_cut_at_the_deadline_and_named() {
    let scratch = Scratch::new("untrusted-pathological");
    let tree = scratch.path("tree");
    // Just under the 2 MiB limit for one file.
    write(&tree.join("src/Parens.java"), &pathological_java("KeptBefore", 2_000_000));
    write(&tree.join("src/Fine.java"), "package p;\npublic class Fine {}\n");
    let env = isolated(&scratch);
    // Eight minutes and more before; a few seconds now.
    let (ok, text) = run_bounded(&["index", &tree.display().to_string()], &pairs(&env), Duration::from_secs(120));
    assert!(ok, "{text}");
    assert!(text.contains("src/Parens.java") && text.contains("out of time"), "the file is named: {text}");
    let g = signpost::graph::load(&tree.join("index.scip")).unwrap_or_else(|e| panic!("{e}"));
    let names = names_of(&g);
    assert!(names.contains("Fine"), "{names:?}");
    if !text.contains("parsing ran out of time") {
        assert!(names.contains("KeptBefore") && names.contains("before"), "what came before is kept: {names:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_first_index_does_not_hold_initialize_and_edits_made_meanwhile_are_caught() {
    let scratch = Scratch::new("untrusted-slow-first");
    let tree = scratch.path("tree");
    write(&tree.join("src/a/Alpha.java"), "package a;\npublic class Alpha {}\n");
    // Each takes the whole per-file deadline (5 s): the first index takes
    // far longer than the start waits.
    for i in 0..8 {
        write(&tree.join(format!("src/z/Slow{i}.java")), &pathological_java(&format!("Slow{i}"), 400_000));
    }
    let env = isolated(&scratch);
    let started = Instant::now();
    let client = Client::spawn_with(&["--project", &tree.display().to_string()], &pairs(&env), Stdio::null()).await;
    let took = started.elapsed();
    // A hang detector with room for a loaded machine, far under the ~20 s
    // the first index takes on two cores.
    assert!(took < Duration::from_secs(15), "initialize waited {took:?} for the first index");
    let graph = client.resource("signpost://graph").await;
    let building = graph["building"].as_str().unwrap_or_default().to_owned();
    // An edit made while the first index runs, to a file it has read.
    write(&tree.join("src/a/Alpha.java"), "package a;\npublic class Alpha {}\nclass AddedMeanwhile {}\n");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let r = client.call("resolve", json!({"identifier": "AddedMeanwhile"})).await;
        assert!(!r.is_error || r.structured["status"] == "none", "{}", r.text);
        if r.structured["status"] == "one" {
            break;
        }
        assert!(Instant::now() < deadline, "the edit made during the first index never showed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let graph = client.resource("signpost://graph").await;
    if !building.is_empty() {
        assert!(graph.get("building").is_none(), "done building: {graph:#}");
        let notes = graph["notes"].to_string();
        assert!(notes.contains("src/z/Slow0.java") && notes.contains("out of time"), "{graph:#}");
    }
    let r = client.call("resolve", json!({"identifier": "Slow7"})).await;
    assert_eq!(r.structured["status"], "one", "what came before the bad part is served: {}", r.text);
    client.close().await;
}

/// A large part serves the definitions of its first files (those read so
/// far, in path order, about every second) while the rest is read: a
/// class there answers, says the index is still being built and how many
/// of the part's files its answer comes from, with the id it keeps once
/// the whole part is served.
#[tokio::test(flavor = "multi_thread")]
async fn a_large_part_serves_its_first_files_definitions_while_the_rest_is_read() {
    let scratch = Scratch::new("untrusted-first-files");
    let tree = scratch.path("tree");
    let count = signpost_treesitter::EARLY_FILES;
    for i in 0..count {
        write(
            &tree.join(format!("src/a/F{i:04}.java")),
            &format!("package a;\npublic class F{i:04} {{\n    void run() {{}}\n    void run(int n) {{}}\n}}\n"),
        );
    }
    // Last in path order, each taking the whole per-file deadline (5 s).
    for i in 0..2 {
        write(&tree.join(format!("src/z/Slow{i}.java")), &pathological_java(&format!("Slow{i}"), 400_000));
    }
    let env = isolated(&scratch);
    let client = Client::spawn_with(&["--project", &tree.display().to_string()], &pairs(&env), Stdio::null()).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    let (building, early) = loop {
        let building = client.resource("signpost://graph").await["building"].as_str().map(str::to_owned);
        let r = client.call("resolve", json!({"identifier": "F0001.run"})).await;
        if r.structured["status"] != "none" {
            break (building, r);
        }
        assert!(Instant::now() < deadline, "F0001.run never showed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let building = building.unwrap_or_else(|| panic!("F0001 came only with the whole index: {}", early.text));
    let total = count + 2;
    // Some of the first files (the slow ones are last): how many is told.
    let first: usize = building
        .split_once("java's first ")
        .and_then(|(_, rest)| rest.split_once(&format!(" of {total} files")))
        .and_then(|(k, _)| k.parse().ok())
        .unwrap_or_else(|| panic!("how many files is not said: {building}"));
    assert!(first > 0 && first <= count, "{building}");
    assert!(building.contains("the rest being read"), "{building}");
    assert!(early.text.contains("still being built"), "every answer says so: {}", early.text);
    // A class of the last files is not there yet, and the answer says it
    // may not be final.
    let late = client.call("resolve", json!({"identifier": "F1999"})).await;
    if late.structured["status"] == "none" {
        assert!(late.text.contains("may not be final"), "{}", late.text);
    }
    // Whole: the same ids.
    let ids = |r: &crate::common::Reply| -> BTreeSet<String> {
        let c = r.structured["candidates"].as_array().cloned().unwrap_or_default();
        c.iter().filter_map(|c| c["id"].as_str().map(str::to_owned)).collect()
    };
    loop {
        let r = client.call("resolve", json!({"identifier": "Slow1"})).await;
        if r.structured["status"] == "one" && client.resource("signpost://graph").await.get("building").is_none() {
            let whole = client.call("resolve", json!({"identifier": "F0001.run"})).await;
            assert_eq!(ids(&early), ids(&whole), "{}\n{}", early.text, whole.text);
            assert_eq!(ids(&whole).len(), 2, "both overloads: {}", whole.text);
            break;
        }
        assert!(Instant::now() < deadline, "the first index never landed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    client.close().await;
}

/// While a slow first index is built, each language's part serves as soon
/// as it is read: a fast language's symbols and callers answer while a slow
/// one is still being read, every answer says that the index is still
/// being built (an empty one may not be final), and the note is gone once
/// it is done.
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // `resources/subscribe`: the legacy protocol's, which agents still speak
async fn a_slow_first_index_serves_each_language_as_soon_as_it_is_read_and_says_so() {
    let scratch = Scratch::new("untrusted-early");
    let tree = scratch.path("tree");
    write(
        &tree.join("src/a/Alpha.java"),
        "package a;\npublic class Alpha {\n    void pay() {}\n    void checkout() { pay(); }\n}\n",
    );
    // Scala is read after Java; each file takes the whole per-file
    // deadline (5 s).
    for i in 0..6 {
        let mut text =
            format!("package z\n\nobject Slow{i} {{\n  def before(): Unit = {{}}\n}}\n\nobject Bad{i} {{\n  val x = ");
        text.extend(std::iter::repeat_n('(', 400_000));
        write(&tree.join(format!("src/z/Slow{i}.scala")), &text);
    }
    let env = isolated(&scratch);
    let client = Client::spawn_with(&["--project", &tree.display().to_string()], &pairs(&env), Stdio::null()).await;
    // The graph's status announces its changes to a session subscribed.
    let subscribe = rmcp::model::SubscribeRequestParams::new("signpost://graph");
    client.service().subscribe(subscribe).await.expect("subscribing to the graph's status");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut early = None;
    loop {
        let building = client.resource("signpost://graph").await["building"].as_str().map(str::to_owned);
        let r = client.call("resolve", json!({"identifier": "Alpha.pay"})).await;
        if r.structured["status"] == "one" {
            if let Some(building) = building {
                let id = r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned();
                let callers =
                    client.call("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["CALLS"]})).await;
                early = Some((building, r.text, callers));
            }
            break;
        }
        assert!(Instant::now() < deadline, "Alpha.pay never showed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (building, text, callers) = early.unwrap_or_else(|| panic!("the Java part came only with the whole index"));
    assert!(building.contains("java served whole"), "{building}");
    assert!(text.contains("note: the project's first index is still being built"), "every answer says so: {text}");
    assert!(callers.text.contains("checkout") && callers.text.contains("still being built"), "{}", callers.text);
    // Done: the slow language is served, and no answer carries the note.
    loop {
        let r = client.call("resolve", json!({"identifier": "Slow5"})).await;
        if r.structured["status"] == "one" && client.resource("signpost://graph").await.get("building").is_none() {
            let r = client.call("resolve", json!({"identifier": "Alpha.pay"})).await;
            assert!(!r.text.contains("still being built"), "{}", r.text);
            break;
        }
        assert!(Instant::now() < deadline, "the first index never landed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Its end was told as a log message (info, the default level) and as an
    // update of the subscribed status.
    let built = |c: &Client| {
        c.logs().iter().any(|l| l["logger"] == "signpost.graph" && l["data"]["what"] == "built")
            && c.notices().contains(&json!({"updated": "signpost://graph"}))
    };
    while !built(&client) {
        assert!(
            Instant::now() < deadline,
            "no notice of the first index's end: {:?} {:?}",
            client.logs(),
            client.notices()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_in_the_tree_never_stops_the_watcher() {
    let scratch = Scratch::new("untrusted-fifo");
    let tree = scratch.path("tree");
    write(&tree.join("go.mod"), "module example.com/shop\n\ngo 1.19\n");
    write(&tree.join("orders/order.go"), "package orders\n\nfunc Total() int { return 1 }\n");
    let env = isolated(&scratch);
    let client = Client::spawn_with(&["--project", &tree.display().to_string()], &pairs(&env), Stdio::null()).await;
    let fifo = tree.join("orders/pipe.go");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap_or_else(|e| panic!("{e}"));
    assert!(made.success());
    std::os::unix::fs::symlink(&fifo, tree.join("orders/via.go")).unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    write(
        &tree.join("orders/order.go"),
        "package orders\n\nfunc Total() int { return 1 }\n\nfunc AfterFifo() int { return 2 }\n",
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = client.call("resolve", json!({"identifier": "AfterFifo"})).await;
        if r.structured["status"] == "one" {
            break;
        }
        assert!(Instant::now() < deadline, "an edit after a FIFO appeared was never indexed: {}", r.text);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let graph = client.resource("signpost://graph").await;
    let notes = graph["notes"].to_string();
    assert!(notes.contains("orders/pipe.go: not a regular file"), "the FIFO is named: {graph:#}");
    assert!(notes.contains("orders/via.go: a symbolic link"), "the link is named: {graph:#}");
    client.close().await;
}

#[test]
fn a_gitignore_too_large_for_one_matcher_still_applies() {
    let scratch = Scratch::new("untrusted-gitignore");
    let tree = scratch.path("tree");
    let mut ignore: String = (0..20_000).map(|i| format!("*generated_{i}_*.tmp?\n")).collect();
    ignore.push_str("ignored/\n");
    write(&tree.join(".gitignore"), &ignore);
    write(&tree.join("src/Kept.java"), "package p;\npublic class Kept {}\n");
    write(&tree.join("ignored/Hidden.java"), "package p;\npublic class HiddenByGitignore {}\n");
    let env = isolated(&scratch);
    let (ok, text) = run_bounded(&["index", &tree.display().to_string()], &pairs(&env), Duration::from_secs(120));
    assert!(ok, "{text}");
    let names = names_of(&signpost::graph::load(&tree.join("index.scip")).unwrap_or_else(|e| panic!("{e}")));
    assert!(names.contains("Kept"), "{names:?}");
    assert!(!names.contains("HiddenByGitignore"), "the .gitignore stopped applying: {names:?}");
}

#[test]
fn index_output_is_checked_before_indexing_and_leaves_nothing_partial() {
    let scratch = Scratch::new("untrusted-output");
    let tree = scratch.path("tree");
    write(&tree.join("src/A.java"), "package p;\npublic class A {}\n");
    write(&tree.join("cmd/main.go"), "package main\n\nfunc Main() {}\n");
    let env = isolated(&scratch);
    let t = tree.display().to_string();
    let file = scratch.path("one.scip").display().to_string();
    let (ok, text) = run_bounded(&["index", &t, "-o", &file], &pairs(&env), Duration::from_secs(60));
    assert!(!ok && text.contains("2 parts") && text.contains("java, go"), "{text}");
    assert!(!text.contains("symbols"), "refused before anything was indexed: {text}");
    let odd = scratch.path("graph.json").display().to_string();
    let (ok, text) = run_bounded(&["index", &t, "-o", &odd], &pairs(&env), Duration::from_secs(60));
    assert!(!ok && text.contains("*.scip"), "{text}");
    // A directory that does not exist yet is made.
    let dir = scratch.path("made/here");
    let (ok, text) =
        run_bounded(&["index", &t, "-o", &dir.display().to_string()], &pairs(&env), Duration::from_secs(60));
    assert!(ok && dir.join("index.go.scip").is_file() && dir.join("index.java.scip").is_file(), "{text}");
    let partial: Vec<PathBuf> =
        files_under(&scratch.dir).into_iter().filter(|p| p.to_string_lossy().contains("partial")).collect();
    assert!(partial.is_empty(), "{partial:?}");
}

/// Under an address-space limit of 3 GiB (`ulimit -v`, as sandboxes and
/// agent runners set), the policy still runs: hints come back. (The
/// default reservation, 4 GiB and guards per memory, did not even start.)
#[tokio::test(flavor = "multi_thread")]
async fn the_policy_runs_under_an_address_space_limit() {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "ulimit -v 3145728 && exec \"$0\" \"$@\"", BIN]).env("RUST_LOG", "warn");
    let client = Client::spawn_command(cmd, Stdio::null()).await;
    for _ in 0..3 {
        let r = client.call("search", json!({"query": "order"})).await;
        assert!(!r.text.contains("the hint policy failed"), "{}", r.text);
        assert!(!r.hints().is_empty(), "{}", r.text);
    }
    client.close().await;
}
