//! The built-in indexer at scale: a synthetic Java project and a synthetic
//! Go module of about `SIGNPOST_BENCH_LINES` lines each (default 200,000),
//! written to a temporary directory, then indexed on one thread and on
//! every core. Prints lines per second, resolution rates and the process's
//! peak resident memory; then criterion times one mid-sized file.
//!
//! Run: `cargo bench -p signpost-treesitter --bench index`;
//! `SIGNPOST_BENCH_LINES=1000000` for the million-line figure;
//! `SIGNPOST_BENCH_KEEP=DIR` keeps the projects in `DIR/java` and `DIR/go`
//! (for `bench/project_edits.py`, which serves one and edits it).
//!
//! Then edits: one language's workspace is opened, and one file is edited
//! again and again (a comment added: nothing it declares changes; a method
//! added: a new name), each followed by `Workspace::update`, timed against
//! opening the workspace whole. `SIGNPOST_BENCH_PROJECT=DIR` (with
//! `SIGNPOST_BENCH_LANG`, default java) times the edits on a real project
//! instead of the synthetic ones; `SIGNPOST_BENCH_FILE` (relative to the
//! project) edits that file instead of the largest.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use signpost_treesitter::extract::Reader;
use signpost_treesitter::languages;

/// Classes per package; each class has 6 methods calling into others.
const PER_PACKAGE: usize = 40;

fn java_class(pkg: usize, c: usize, classes: usize) -> String {
    let next = (c + 1) % classes;
    let (npkg, ncls) = (next / PER_PACKAGE, next);
    let mut s = String::new();
    let _ = writeln!(s, "package com.bench.p{pkg};\n");
    let _ =
        writeln!(s, "import com.bench.p{npkg}.Service{ncls};\nimport java.util.List;\nimport java.util.ArrayList;\n");
    let _ = writeln!(s, "/** Service number {c}: it calls service {ncls}. */");
    let base = if c.is_multiple_of(5) { String::new() } else { format!(" extends Service{}", c - c % 5) };
    let _ = writeln!(s, "public class Service{c}{base} implements Handler{} {{", c % 3);
    let _ = writeln!(s, "    private final Service{ncls} next = new Service{ncls}();");
    let _ = writeln!(s, "    private final List<String> log = new ArrayList<>();\n");
    for m in 0..6 {
        let _ = writeln!(s, "    /** Step {m}. */\n    public int step{m}(int x, String why) {{");
        let _ = writeln!(s, "        int y = x * {m} + 1;");
        let _ = writeln!(s, "        log.add(why);");
        let _ = writeln!(
            s,
            "        if (y > 100) {{\n            return next.step{}(y - 1, why);\n        }}",
            (m + 1) % 6
        );
        let _ = writeln!(s, "        return helper{m}(y) + this.helper{}(x);\n    }}\n", (m + 2) % 6);
        let _ = writeln!(s, "    private int helper{m}(int v) {{\n        return v + {m};\n    }}\n");
    }
    let _ = writeln!(s, "    @Override\n    public void handle(String event) {{\n        step0(1, event);\n    }}\n}}");
    s
}

fn go_file(pkg: usize, c: usize, classes: usize) -> String {
    let next = (c + 1) % classes;
    let npkg = next / PER_PACKAGE;
    let mut s = String::new();
    let _ = writeln!(s, "package p{pkg}\n");
    let alias = if npkg == pkg { String::new() } else { format!("p{npkg}.") };
    if npkg != pkg {
        let _ = writeln!(s, "import (\n\t\"fmt\"\n\n\t\"bench.example/p{npkg}\"\n)\n");
    } else {
        let _ = writeln!(s, "import \"fmt\"\n");
    }
    let _ = writeln!(
        s,
        "// Service{c} calls Service{next}.\ntype Service{c} struct {{\n\tnext *{alias}Service{next}\n\tname string\n}}\n"
    );
    let _ = writeln!(
        s,
        "// NewService{c} makes one.\nfunc NewService{c}() *Service{c} {{\n\treturn &Service{c}{{name: \"s{c}\"}}\n}}\n"
    );
    for m in 0..6 {
        let _ = writeln!(s, "// Step{m} is step {m}.\nfunc (s *Service{c}) Step{m}(x int, why string) int {{");
        let _ = writeln!(s, "\ty := x*{m} + 1\n\tif y > 100 {{\n\t\treturn s.next.Step{}(y-1, why)\n\t}}", (m + 1) % 6);
        let _ = writeln!(s, "\tfmt.Println(why)\n\treturn s.helper{m}(y) + helper(x)\n}}\n");
        let _ = writeln!(s, "func (s *Service{c}) helper{m}(v int) int {{\n\treturn v + {m}\n}}\n");
    }
    let _ = writeln!(s, "func helper{c}(v int) int {{\n\treturn v\n}}");
    s
}

/// Writes a project of about `lines` lines; returns its files.
fn write_project(root: &Path, lang: &str, lines: usize) -> Vec<PathBuf> {
    let sample = if lang == "java" { java_class(0, 1, 2) } else { go_file(0, 1, 2) };
    let classes = (lines / sample.lines().count()).max(2);
    let mut files = Vec::new();
    if lang == "go" {
        std::fs::create_dir_all(root).expect("mkdir");
        std::fs::write(root.join("go.mod"), "module bench.example\n\ngo 1.22\n").expect("go.mod");
    }
    for c in 0..classes {
        let pkg = c / PER_PACKAGE;
        let (dir, name, text) = if lang == "java" {
            let extra = if c.is_multiple_of(PER_PACKAGE) {
                (0..3).map(|h| (format!("Handler{h}.java"), format!("package com.bench.p{pkg};\n\npublic interface Handler{h} {{\n    void handle(String event);\n}}\n"))).collect()
            } else {
                Vec::new()
            };
            let dir = root.join(format!("src/main/java/com/bench/p{pkg}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            for (n, t) in extra {
                std::fs::write(dir.join(&n), t).expect("write");
                files.push(dir.join(n));
            }
            (dir, format!("Service{c}.java"), java_class(pkg, c, classes))
        } else {
            let dir = root.join(format!("p{pkg}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            if c.is_multiple_of(PER_PACKAGE) {
                std::fs::write(
                    dir.join("helper.go"),
                    format!("package p{pkg}\n\nfunc helper(v int) int {{\n\treturn v\n}}\n"),
                )
                .expect("write");
                files.push(dir.join("helper.go"));
            }
            (dir, format!("service{c}.go"), go_file(pkg, c, classes))
        };
        std::fs::write(dir.join(&name), text).expect("write");
        files.push(dir.join(name));
    }
    files
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Opens `lang`'s workspace of `files` under `root`, then edits its largest
/// file: five comments, five new methods, each followed by an update.
fn edits(root: &Path, lang: &str, files: &[PathBuf]) {
    let l = languages::by_name(lang).expect("a language");
    let opts = signpost_treesitter::Options::default();
    let (mut ws, opened) = signpost_treesitter::Workspace::open(root, l, files, &opts);
    let whole = opened.report.elapsed.as_secs_f64() * 1000.0;
    // The graph an edit patches, as the server keeps it.
    let gopts = signpost_graph::scip::Options { name: lang.to_owned() };
    let mut graph = signpost_graph::scip::import_index(&opened.index, &gopts).expect("an import");
    let mut memo = signpost_graph::scip::Memo::of(&opened.index);
    let mut generation = opened.generation;
    // The largest file, or the one `SIGNPOST_BENCH_FILE` names.
    let edited = match std::env::var_os("SIGNPOST_BENCH_FILE") {
        Some(f) => root.join(f),
        None => files.iter().max_by_key(|f| std::fs::metadata(f).map_or(0, |m| m.len())).expect("files").clone(),
    };
    let original = std::fs::read_to_string(&edited).expect("read");
    let mut text = original.clone();
    for (kind, n) in (0..5).map(|n| ("a comment", n)).chain((0..5).map(|n| ("a method", n))) {
        text = if kind == "a comment" {
            format!("{text}\n// edited {n}\n")
        } else {
            match lang {
                "go" => format!("{text}\nfunc EditedLater{n}() int {{\n\treturn {n}\n}}\n"),
                _ => {
                    let at = text.rfind('}').unwrap_or(text.len());
                    format!("{}    public int editedLater{n}() {{ return {n}; }}\n{}", &text[..at], &text[at..])
                }
            }
        };
        std::fs::write(&edited, &text).expect("write");
        // As the server asks: only the documents that changed, when known.
        let indexed = ws.update_in_part(files, std::slice::from_ref(&edited)).expect("an update");
        let only = indexed.changed.as_ref().is_some_and(|c| c.only);
        let written = if only { ws.written() } else { indexed.index.clone() };
        let at = std::time::Instant::now();
        // What the workspace knows changed since the index patched, as the
        // server passes it on.
        let changed = indexed.changed.as_ref().filter(|c| c.since == generation).map(|c| c.documents.as_slice());
        generation = indexed.generation;
        let (patch, next) =
            signpost_graph::scip::delta_known(&graph, &memo, &indexed.index, changed, &gopts).expect("a delta");
        let delta_ms = at.elapsed().as_secs_f64() * 1000.0;
        let at = std::time::Instant::now();
        memo = next;
        match patch {
            signpost_graph::scip::Patch::Delta(d) => graph = graph.spliced(&d, &|_| None).expect("a splice"),
            signpost_graph::scip::Patch::Unchanged => {}
            signpost_graph::scip::Patch::Whole(why) => {
                eprintln!("{lang}: imported whole: {why}");
                graph = signpost_graph::scip::import_index(&written, &gopts).expect("an import");
                memo = signpost_graph::scip::Memo::of(&written);
            }
        }
        let splice_ms = at.elapsed().as_secs_f64() * 1000.0;
        let at = std::time::Instant::now();
        let imported = signpost_graph::scip::import_index(&written, &gopts).expect("an import");
        let import_ms = at.elapsed().as_secs_f64() * 1000.0;
        assert_eq!((imported.node_count(), imported.edge_count()), (graph.node_count(), graph.edge_count()));
        eprintln!(
            "{lang}: the graph patched: delta {delta_ms:.0} ms (memo, import of the files), splice {splice_ms:.0} ms; \
             a whole import {import_ms:.0} ms"
        );
        let r = &indexed.report;
        eprintln!(
            "{lang}: {kind} added to one of {} files: updated in {:.0} ms ({:.2}x of opening whole, {whole:.0} ms); \
             uses of {} file(s) resolved again, {} kept{}",
            r.files,
            r.elapsed.as_secs_f64() * 1000.0,
            r.elapsed.as_secs_f64() * 1000.0 / whole,
            r.again.resolved,
            r.again.kept,
            r.again.all_because.map(|w| format!(" (every file: {w})")).unwrap_or_default()
        );
    }
    std::fs::write(&edited, original).expect("restore");
}

/// `SIGNPOST_BENCH_WHOLE=DIR:LANG[,DIR:LANG…]`: each project indexed whole
/// by the built-in indexer on one thread, nine times: the median wall time
/// (to compare two builds of this benchmark, run one after the other).
fn whole_cost(spec: &str) {
    for one in spec.split(',') {
        let Some((dir, lang)) = one.rsplit_once(':') else { continue };
        let dir = Path::new(dir);
        let (found, _) = signpost_treesitter::walk::sources(dir, &Default::default());
        let files = found.into_iter().find(|(l, _)| l.name == lang).map(|(_, f)| f).unwrap_or_default();
        let l = languages::by_name(lang).expect("a language");
        let opts = signpost_treesitter::Options { threads: 1, ..Default::default() };
        let mut ms: Vec<f64> = (0..9)
            .map(|_| {
                let started = std::time::Instant::now();
                std::hint::black_box(signpost_treesitter::index(dir, l, &files, &opts));
                started.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        eprintln!("whole {lang} {}: {} files, median {:.1} ms (min {:.1})", dir.display(), files.len(), ms[4], ms[0]);
    }
}

/// `SIGNPOST_BENCH_MACROS=DIR`: every Rust file of DIR read on one thread
/// with its macros expanded and as written (`signpost_treesitter::macros`),
/// alternately, seven times each: the medians and their ratio.
fn macros_cost(dir: &Path) {
    use std::sync::atomic::Ordering;
    let (found, _) = signpost_treesitter::walk::sources(dir, &Default::default());
    let files = found.into_iter().find(|(l, _)| l.name == "rust").map(|(_, f)| f).unwrap_or_default();
    let texts: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let l = languages::by_name("rust").expect("rust");
    let mut reader = Reader::new(l, Duration::from_secs(5)).expect("the query compiles");
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..7 {
        for (k, on) in [true, false].into_iter().enumerate() {
            signpost_treesitter::macros::EXPAND.store(on, Ordering::Relaxed);
            let started = std::time::Instant::now();
            for t in &texts {
                std::hint::black_box(reader.read(t).ok());
            }
            times[k].push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    signpost_treesitter::macros::EXPAND.store(true, Ordering::Relaxed);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (on, off) = (median(&mut times[0]), median(&mut times[1]));
    eprintln!(
        "rust, {} files of {}: read with macros expanded {on:.1} ms, as written {off:.1} ms: {:.2}x",
        texts.len(),
        dir.display(),
        on / off
    );
}

fn bench(c: &mut Criterion) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    if let Ok(spec) = std::env::var("SIGNPOST_BENCH_WHOLE") {
        whole_cost(&spec);
        return;
    }
    if let Some(dir) = std::env::var_os("SIGNPOST_BENCH_MACROS").map(PathBuf::from) {
        macros_cost(&dir);
        return;
    }
    if let Some(dir) = std::env::var_os("SIGNPOST_BENCH_PROJECT").map(PathBuf::from) {
        let lang = std::env::var("SIGNPOST_BENCH_LANG").unwrap_or_else(|_| "java".into());
        let (found, _) = signpost_treesitter::walk::sources(&dir, &Default::default());
        let files = found.into_iter().find(|(l, _)| l.name == lang).map(|(_, f)| f).unwrap_or_default();
        edits(&dir, &lang, &files);
        return;
    }
    let lines: usize = std::env::var("SIGNPOST_BENCH_LINES").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let keep = std::env::var_os("SIGNPOST_BENCH_KEEP").map(PathBuf::from);
    let tmp =
        keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("signpost-ts-bench-{}", std::process::id())));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for lang in ["java", "go"] {
        let root = tmp.join(lang);
        let files = write_project(&root, lang, lines);
        let l = languages::by_name(lang).expect("a language");
        for threads in [1, cores] {
            let opts = signpost_treesitter::Options { threads, ..Default::default() };
            let out = signpost_treesitter::index(&root, l, &files, &opts);
            let r = &out.report;
            let secs = r.elapsed.as_secs_f64();
            eprintln!(
                "{lang}: {} files, {} lines, {} definitions, {threads} thread(s): {secs:.2} s = {:.0} lines/s ({:.0} per thread); calls resolved {}/{} ({:.1}%); peak RSS so far {:.0} MB",
                r.files,
                r.lines,
                r.definitions,
                r.lines as f64 / secs,
                r.lines as f64 / secs / threads as f64,
                r.counts.calls_resolved,
                r.counts.calls,
                100.0 * r.counts.calls_resolved as f64 / r.counts.calls.max(1) as f64,
                peak_rss_mb()
            );
        }
        edits(&root, lang, &files);
        let largest = files.iter().max_by_key(|f| std::fs::metadata(f).map_or(0, |m| m.len())).expect("files");
        let one = std::fs::read(largest).expect("read");
        let mut reader = Reader::new(l, Duration::from_secs(5)).expect("the query compiles");
        c.bench_function(&format!("{lang}: read one {}-line file", one.iter().filter(|&&b| b == b'\n').count()), |b| {
            b.iter(|| std::hint::black_box(reader.read(&one).expect("reads")))
        });
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
