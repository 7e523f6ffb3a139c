//! Resolving again after an edit gives what resolving from scratch gives:
//! every fixture project, copied, edited at random many times over (lines
//! deleted, duplicated and swapped, names replaced by other names of the
//! project, files removed and added), each edit followed by
//! [`crate::Workspace::update`] and compared, SCIP document by document,
//! with a workspace opened afresh on the edited tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::walk::{WalkOptions, sources};

/// A small deterministic generator (xorshift64*): the same edits on every
/// run, and a seed printed with any failure.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(entry.file_name()));
        } else if path.file_name().is_some_and(|n| n != "index.scip") {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// The index with every repeated field in one order: what two resolves of
/// the same code must agree on.
fn canonical(index: &scip::types::Index) -> Vec<String> {
    let mut out = Vec::new();
    let mut docs: Vec<&scip::types::Document> = index.documents.iter().collect();
    docs.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    for d in docs {
        let mut occ: Vec<String> = d
            .occurrences
            .iter()
            .map(|o| {
                let said: Vec<String> = o.diagnostics.iter().map(|g| format!("{} {}", g.code, g.message)).collect();
                format!("{:?} {} {} {said:?}", o.range, o.symbol, o.symbol_roles)
            })
            .collect();
        occ.sort();
        let mut syms: Vec<String> = d
            .symbols
            .iter()
            .map(|s| {
                let mut rel: Vec<String> = s
                    .relationships
                    .iter()
                    .map(|r| {
                        format!("{} {} {} {}", r.symbol, r.is_implementation, r.is_reference, r.is_type_definition)
                    })
                    .collect();
                rel.sort();
                // The header and comment too: a file whose header's wording
                // alone changed keeps the last resolve's definitions, and its
                // document must still say the new header.
                let signature = s.signature_documentation.as_ref().map_or("", |g| g.text.as_str());
                format!("{} {:?} {} {:?} {signature:?} {:?}", s.symbol, s.kind, s.display_name, rel, s.documentation)
            })
            .collect();
        syms.sort();
        out.push(format!("document {}", d.relative_path));
        out.extend(occ.into_iter().map(|o| format!("  {o}")));
        out.extend(syms.into_iter().map(|s| format!("  symbol {s}")));
    }
    out
}

/// The first lines where two canonical indexes differ.
fn difference(a: &[String], b: &[String]) -> String {
    let (sa, sb): (std::collections::BTreeSet<&String>, std::collections::BTreeSet<&String>) =
        (a.iter().collect(), b.iter().collect());
    let only_a: Vec<&&String> = sa.difference(&sb).take(8).collect();
    let only_b: Vec<&&String> = sb.difference(&sa).take(8).collect();
    format!("only resolved again: {only_a:#?}\nonly from scratch: {only_b:#?}")
}

/// The identifiers of a text.
fn words(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// One random edit of the tree at `root` among `files`; returns what it
/// did and the paths it touched.
fn edit(rng: &mut Rng, root: &Path, files: &[PathBuf], step: usize) -> (String, Vec<PathBuf>) {
    let file = files[rng.below(files.len())].clone();
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut lines: Vec<&str> = text.lines().collect();
    let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
    let pool: Vec<String> = {
        let all = files.iter().map(|f| std::fs::read_to_string(f).unwrap_or_default()).collect::<Vec<_>>().join("\n");
        let mut w: Vec<String> = words(&all).into_iter().map(|(a, b)| all[a..b].to_owned()).collect();
        w.sort();
        w.dedup();
        w
    };
    let write = |t: String| std::fs::write(&file, t).unwrap_or_else(|e| panic!("{e}"));
    match rng.below(10) {
        0 | 1 if !lines.is_empty() => {
            let at = rng.below(lines.len());
            let gone = lines.remove(at).to_owned();
            write(lines.join("\n") + "\n");
            (format!("{shown}: line {} deleted: {gone:?}", at + 1), vec![file])
        }
        2 | 3 if !lines.is_empty() => {
            let at = rng.below(lines.len());
            let twice = lines[at];
            lines.insert(at, twice);
            write(lines.join("\n") + "\n");
            (format!("{shown}: line {} doubled: {twice:?}", at + 1), vec![file])
        }
        4 if lines.len() > 1 => {
            let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(a, b);
            write(lines.join("\n") + "\n");
            (format!("{shown}: lines {} and {} swapped", a + 1, b + 1), vec![file])
        }
        5..=7 => {
            let ws = words(&text);
            if ws.is_empty() || pool.is_empty() {
                return (format!("{shown}: nothing to rename"), vec![file]);
            }
            let (a, b) = ws[rng.below(ws.len())];
            let to = if rng.below(4) == 0 { format!("Fresh{step}") } else { pool[rng.below(pool.len())].clone() };
            let from = text[a..b].to_owned();
            write(format!("{}{to}{}", &text[..a], &text[b..]));
            (format!("{shown}: {from} at byte {a} renamed {to}"), vec![file])
        }
        8 if files.len() > 1 => {
            std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{e}"));
            (format!("{shown}: removed"), vec![file])
        }
        _ => {
            // A copy of the file, one of its names renamed throughout.
            let ext = file.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            let stem = file.file_stem().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            let copy = file.with_file_name(format!("{stem}Copy{step}.{ext}"));
            let ws = words(&text);
            let renamed = match ws.get(rng.below(ws.len())) {
                Some(&(a, b)) => text.replace(&text[a..b], &format!("{}{step}", &text[a..b])),
                None => text.clone(),
            };
            std::fs::write(&copy, renamed).unwrap_or_else(|e| panic!("{e}"));
            (format!("{shown}: copied to {}", copy.display()), vec![copy])
        }
    }
}

/// The files of each language under `root`.
fn languages_of(root: &Path) -> BTreeMap<&'static str, (&'static crate::languages::Lang, Vec<PathBuf>)> {
    let (found, _) = sources(root, &WalkOptions::default());
    found.into_iter().map(|(l, f)| (l.name, (l, f))).collect()
}

/// Each fixture project copied under `scratch` (its number, where it is,
/// and its copy's root).
fn copied_fixtures(scratch: &Path) -> impl Iterator<Item = (usize, PathBuf, PathBuf)> {
    fixtures().into_iter().enumerate().map(move |(n, fixture)| {
        let root = scratch.join(n.to_string());
        let _ = std::fs::remove_dir_all(&root);
        copy_tree(&fixture, &root);
        let root = std::fs::canonicalize(&root).unwrap_or_else(|e| panic!("{e}"));
        (n, fixture, root)
    })
}

/// Every fixture project under `tests/fixtures`, for the built-in
/// indexer's languages.
fn fixtures() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut out = Vec::new();
    for group in ["treesitter", "treesitter/inference", "treesitter/rules", "scip"] {
        let Ok(dir) = std::fs::read_dir(base.join(group)) else { continue };
        for e in dir.flatten() {
            let p = e.path();
            let nested = ["inference", "rules"].iter().any(|n| p.ends_with(n));
            if p.is_dir() && !nested {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn resolving_again_after_any_edit_gives_what_resolving_from_scratch_gives() {
    const STEPS: usize = 40;
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let scratch = std::env::temp_dir().join(format!("signpost-again-{}", std::process::id()));
    // Every other fixture's workspace shelves its packed bodies once
    // compacted, as a served project's does.
    let shelves = std::env::temp_dir().join(format!("signpost-again-shelves-{}", std::process::id()));
    std::fs::create_dir_all(&shelves).expect("a scratch directory");
    let shelving = crate::Options { spill: Some(shelves.clone()), ..opts.clone() };
    // Edits after a compaction that put bodies on a shelf, and shelves
    // made again (most of one's bodies gone).
    let (mut after_shelving, mut shelves_made_again) = (0usize, 0usize);
    // Workspaces opened to shelve, and those whose bodies were on the
    // shelf as soon as read, before any compaction.
    let (mut opened_shelving, mut shelved_when_read) = (0usize, 0usize);
    let (mut kept, mut edits, mut all) = (0usize, 0usize, BTreeMap::<&str, usize>::new());
    let mut warm = 0usize;
    // Edits that changed definitions and kept the other files' symbols.
    let mut respelled = 0usize;
    // Edits that changed definitions and still told what changed.
    let mut told_moved = 0usize;
    let mut patches = BTreeMap::<&str, usize>::new();
    // Edits after the workspace was compacted, and those of them that
    // kept some files' uses (which only a compaction that keeps the
    // readings shared allows).
    let (mut after_compacting, mut kept_after_compacting) = (0usize, 0usize);
    // The first part of the last project and language, under other paths:
    // merged with each part edited, as a server merges a project's parts.
    let mut other: Option<signpost_graph::Graph> = None;
    for (n, fixture, root) in copied_fixtures(&scratch) {
        for (name, (lang, files)) in languages_of(&root) {
            let seed = 0x9e37_79b9_7f4a_7c15 ^ (n as u64) << 8 ^ name.len() as u64;
            let mut rng = Rng(seed);
            let ws_opts = if n % 2 == 1 { &shelving } else { &opts };
            let (mut ws, first) = crate::Workspace::open(&root, lang, &files, ws_opts);
            let mut shelf: Option<std::sync::Arc<crate::extract::Shelf>> = None;
            if n % 2 == 1 {
                opened_shelving += 1;
                shelved_when_read += usize::from(ws.shelf.as_ref().is_some_and(|s| ws.shelved_bytes(s) > 0));
            }
            let elsewhere = elsewhere(&first.index);
            let mut served = Some(patched_from(&first));
            let mut merged = other.as_ref().map(|o| merge_with(&served.as_ref().unwrap().0, o));
            let mut files = files;
            let mut log = Vec::new();
            let next_other = Some(elsewhere);
            for step in 0..STEPS {
                if files.is_empty() {
                    break;
                }
                // Every other edit meets a workspace compacted, as a
                // served project's is once quiet.
                let compacted = step % 2 == 1 && ws.compact();
                assert!(!compacted || !ws.compact(), "compacted again with no resolve between");
                if let Some(now) = ws.shelf.clone().filter(|s| compacted && ws.shelved_bytes(s) > 0) {
                    after_shelving += 1;
                    shelves_made_again +=
                        usize::from(shelf.as_ref().is_some_and(|before| !std::sync::Arc::ptr_eq(before, &now)));
                    shelf = Some(now);
                }
                let (what, touched) = edit(&mut rng, &root, &files, step);
                log.push(what);
                files = languages_of(&root).remove(name).map(|(_, f)| f).unwrap_or_default();
                // As the server asks: only what changed, when known.
                let update = if signpost_graph::scip::patches_language(name) {
                    ws.update_in_part(&files, &touched)
                } else {
                    ws.update(&files, &touched)
                };
                let Some(again) = update else { continue };
                let only = again.changed.as_ref().is_some_and(|c| c.only);
                let whole = if only { ws.written() } else { again.index.clone() };
                let (_, fresh) = crate::Workspace::open(&root, lang, &files, &opts);
                let (a, b) = (canonical(&whole), canonical(&fresh.index));
                assert!(
                    a == b,
                    "{} ({name}, seed {seed:#x}): after edit {step}, resolving again differs from scratch\n\
                     edits:\n  {}\n{}",
                    fixture.display(),
                    log.join("\n  "),
                    difference(&a, &b)
                );
                let what = || {
                    format!("{} ({name}, seed {seed:#x}): after edit {step}\n  {}", fixture.display(), log.join("\n  "))
                };
                let (next, d) = patch_equals_fresh(served.take(), &again, &whole, &fresh.index, &mut patches, what);
                let d = d.as_deref();
                if let (Some(m), Some(o)) = (merged.take(), &other) {
                    merged = Some(merged_patch_equals_merge(m, o, &next.0, d, &mut patches, what));
                }
                served = Some(next);
                edits += 1;
                kept += usize::from(again.report.again.kept > 0);
                after_compacting += usize::from(compacted);
                kept_after_compacting += usize::from(compacted && again.report.again.kept > 0);
                warm += usize::from(again.report.again.definitions_kept);
                respelled += usize::from(!again.report.again.definitions_kept && again.report.again.symbols_kept);
                told_moved += usize::from(!again.report.again.definitions_kept && again.changed.is_some());
                if let Some(why) = again.report.again.all_because {
                    *all.entry(why).or_default() += 1;
                }
            }
            other = next_other;
        }
    }
    assert!(patches.get("merged, spliced").copied().unwrap_or(0) > 100, "few merged graphs spliced: {patches:?}");
    let _ = std::fs::remove_dir_all(&scratch);
    let left: Vec<_> = std::fs::read_dir(&shelves).expect("the directory").collect();
    assert!(left.is_empty(), "shelves leave nothing named: {left:?}");
    let _ = std::fs::remove_dir_all(&shelves);
    eprintln!(
        "{edits} edits compared; {kept} kept some files' uses, {warm} every definition, {respelled} the other \
         files' symbols, {told_moved} changed some and told which documents moved; every file resolved again: \
         {all:?}; graph patches: {patches:?}; {kept_after_compacting} of {after_compacting} edits after a \
         compaction kept some files' uses; {after_shelving} after bodies were shelved, {shelves_made_again} \
         shelves made again"
    );
    if cfg!(target_os = "linux") {
        assert!(
            shelved_when_read * 2 > opened_shelving,
            "bodies shelved as read in only {shelved_when_read} of {opened_shelving} workspaces"
        );
        assert!(
            after_shelving * 8 > edits && shelves_made_again > 10,
            "{after_shelving} of {edits} edits after bodies were shelved, {shelves_made_again} shelves made again"
        );
    }
    assert!(
        after_compacting * 3 > edits && kept_after_compacting * 2 > after_compacting,
        "a compacted workspace kept some files' uses after {kept_after_compacting} of {after_compacting} edits"
    );
    // (each checked against spelling every symbol: `symbols/kept.rs`)
    assert!(respelled * 20 > edits, "the other files' symbols kept after only {respelled} of {edits} edits");
    assert!(told_moved * 5 > edits, "few edits of definitions told which documents moved: {told_moved} of {edits}");
    assert!(warm * 5 > edits, "every definition kept after only {warm} of {edits} edits");
    let told = patches.get("told what changed, written in part").copied().unwrap_or(0);
    assert!(told * 5 > edits, "few patches told what changed and written in part: {patches:?}");
    assert!(patches.get("spliced").copied().unwrap_or(0) * 2 > edits, "few edits spliced: {patches:?}");
    assert!(edits > 200, "{edits} edits compared");
    assert!(kept * 2 > edits, "resolving again kept files' uses after only {kept} of {edits} edits ({all:?})");
}

/// A graph, the memo of the index it was made from, and that index's
/// generation.
type Served = (signpost_graph::Graph, signpost_graph::scip::Memo, u64);

fn graph_opts() -> signpost_graph::scip::Options {
    signpost_graph::scip::Options { name: "fixture".into() }
}

fn patched_from(indexed: &crate::Indexed) -> Served {
    #[allow(clippy::unwrap_used)]
    let graph = signpost_graph::scip::import_index(&indexed.index, &graph_opts()).unwrap();
    (graph, signpost_graph::scip::Memo::of(&indexed.index), indexed.generation)
}

/// The import of `index` with every document moved under `elsewhere/`:
/// another part, with files of its own and the same external symbols.
#[allow(clippy::unwrap_used)]
fn elsewhere(index: &scip::types::Index) -> signpost_graph::Graph {
    let mut moved = index.clone();
    for d in &mut moved.documents {
        d.relative_path = format!("elsewhere/{}", d.relative_path);
    }
    signpost_graph::scip::import_index(&moved, &graph_opts()).unwrap()
}

#[allow(clippy::unwrap_used)]
fn merge_with(part: &signpost_graph::Graph, other: &signpost_graph::Graph) -> signpost_graph::Graph {
    signpost_graph::merge("merged", [part, other]).unwrap()
}

/// The graph merged from the part and `other`, patched with the part's
/// delta (merged again when the splice refuses, as the server does),
/// equals the merge of the patched part and `other`.
#[allow(clippy::unwrap_used)]
fn merged_patch_equals_merge(
    merged: signpost_graph::Graph,
    other: &signpost_graph::Graph,
    part: &signpost_graph::Graph,
    delta: Option<&signpost_graph::Delta>,
    counts: &mut BTreeMap<&'static str, usize>,
    what: impl Fn() -> String,
) -> signpost_graph::Graph {
    let fallback = |id: &signpost_graph::RawId| other.lookup_raw(id).map(|n| other.node(n).to_node());
    // The merged graph serves: its query indexes are made, and patched.
    merged.warm();
    let (how, graph) = match delta.map(|d| merged.spliced(d, &fallback)) {
        Some(Ok(g)) => ("merged, spliced", g),
        Some(Err(_)) => ("merged, merged again", merge_with(part, other)),
        None => ("merged, whole", merge_with(part, other)),
    };
    *counts.entry(how).or_default() += 1;
    let (got, want) = (graph.canonical_lines(), merge_with(part, other).canonical_lines());
    assert!(graph.indexes_are_fresh(), "{}: the merged graph's indexes are not those of its nodes", what());
    if got != want {
        panic!("{}: the merged graph patched ({how}) differs from a merge\n{}", what(), only_in(&got, &want));
    }
    graph
}

/// The lines only in `got`, and those only in `want` (a dozen of each).
fn only_in(got: &[String], want: &[String]) -> String {
    let only = |a: &[String], b: &[String]| {
        let b: std::collections::HashSet<&String> = b.iter().collect();
        a.iter().filter(|l| !b.contains(l)).take(12).cloned().collect::<Vec<_>>().join("\n    ")
    };
    format!("  only patched:\n    {}\n  only fresh:\n    {}", only(got, want), only(want, got))
}

/// The served graph patched with `again`'s changes equals `fresh`'s
/// import; the patched graph and its memo, for the next edit, and the
/// delta spliced, if one was.
#[allow(clippy::unwrap_used)]
fn patch_equals_fresh(
    served: Option<Served>,
    indexed: &crate::Indexed,
    whole: &scip::types::Index,
    fresh: &scip::types::Index,
    counts: &mut BTreeMap<&'static str, usize>,
    what: impl Fn() -> String,
) -> (Served, Option<Box<signpost_graph::Delta>>) {
    use signpost_graph::scip::{Patch, delta_known, import_index};
    let whole_of = |index: &scip::types::Index| {
        let graph = import_index(index, &graph_opts()).unwrap();
        (graph, signpost_graph::scip::Memo::of(index), indexed.generation)
    };
    let Some((base, memo, generation)) = served else { return (whole_of(whole), None) };
    // What the workspace knows changed, as the server passes it on.
    let changed = indexed.changed.as_ref().filter(|c| c.since == generation);
    let only = changed.is_some_and(|c| c.only);
    if changed.is_some() {
        *counts.entry(if only { "told what changed, written in part" } else { "told what changed" }).or_default() += 1;
    }
    let changed = changed.map(|c| c.documents.as_slice());
    let (patch, memo) = delta_known(&base, &memo, &indexed.index, changed, &graph_opts()).unwrap();
    // A part served alone has its query indexes made, and patched; one
    // served merged with others never makes them: the first edits splice
    // a part never queried, those from the first even generation on (made
    // once, a splice keeps them) a queried one.
    if generation % 2 == 0 {
        base.warm();
    }
    let queried = base.is_warm();
    let (how, graph, memo, d) = match patch {
        Patch::Unchanged => ("unchanged", base, memo, None),
        Patch::Delta(d) => {
            let graph = base.spliced(&d, &|_| None).unwrap();
            assert_eq!(graph.is_warm(), queried, "{}: a splice makes query indexes as its base had them", what());
            ("spliced", graph, memo, Some(d))
        }
        // The server's whole import: of the workspace's whole index.
        Patch::Whole(why) => {
            let (graph, of_whole, _) = whole_of(whole);
            (why, graph, if only { of_whole } else { memo }, None)
        }
    };
    *counts.entry(how).or_default() += 1;
    assert!(graph.indexes_are_fresh(), "{}: the patched graph's indexes are not those of its nodes", what());
    let want = import_index(fresh, &graph_opts()).unwrap().canonical_lines();
    let got = graph.canonical_lines();
    if got != want {
        panic!("{}: the graph patched ({how}) differs from a fresh import\n{}", what(), only_in(&got, &want));
    }
    ((graph, memo, indexed.generation), d)
}

/// The edits random ones rarely make, each on a small project whose
/// unchanged files' calls go through what the changed file declares or
/// imports: a field's type, a method's return type, a method added under a
/// name another file calls, a Go field's type, a Python attribute rebound,
/// a C# field's generic arity, a Rust wildcard re-export, a Go type
/// renamed under the methods another file declares for it, the order of a
/// Python class's bases, a rebinding's order.
#[test]
fn what_another_file_declares_moves_the_calls_through_it() {
    type Case = (&'static str, &'static [(&'static str, &'static str)], &'static str, &'static str);
    const SHOP: &str = "package p;\nclass Shop { Repo repo; Repo make() { return null; } }\nclass Repo { void save() {} }\nclass Other { void save() {} void keep() {} }\n";
    const CLIENT: &str =
        "package p;\nclass Client { void run(Shop s) { s.repo.save(); s.make().save(); s.make().keep(); } }\n";
    let cases: &[Case] = &[
        ("java", &[("Shop.java", SHOP), ("Client.java", CLIENT)], "Shop.java", "Repo repo;|Other repo;"),
        ("java", &[("Shop.java", SHOP), ("Client.java", CLIENT)], "Shop.java", "Repo make()|Other make()"),
        (
            "java",
            &[
                ("Shop.java", "package p;\nclass Shop { Repo repo; }\nclass Repo { void save() {} }\n"),
                ("Client.java", "package p;\nclass Client { void run(Shop s) { s.repo.store(); } }\n"),
            ],
            "Shop.java",
            "void save() {}|void save() {} void store() {}",
        ),
        (
            "go",
            &[
                (
                    "shop.go",
                    "package p\n\ntype Shop struct { repo *Repo }\ntype Repo struct{}\ntype Other struct{}\n\nfunc (r *Repo) Save() {}\nfunc (o *Other) Save() {}\n",
                ),
                ("client.go", "package p\n\nfunc run(s *Shop) { s.repo.Save() }\n"),
            ],
            "shop.go",
            "repo *Repo|repo *Other",
        ),
        (
            "python",
            &[
                (
                    "shop.py",
                    "class Repo:\n    def save(self):\n        pass\n\nclass Other:\n    def save(self):\n        pass\n\nclass Shop:\n    def __init__(self):\n        self.repo = Repo()\n",
                ),
                ("client.py", "from shop import Shop\n\ndef run(s: Shop):\n    s.repo.save()\n"),
            ],
            "shop.py",
            "self.repo = Repo()|self.repo = Other()",
        ),
        (
            "csharp",
            &[
                (
                    "Validators.cs",
                    "namespace P {\n  interface IValidator { void Validate(); }\n  interface IValidator<T> { void Validate(); }\n  class Order {}\n}\n",
                ),
                ("Svc.cs", "namespace P {\n  class Svc { public IValidator<Order> V; }\n}\n"),
                ("Client.cs", "namespace P {\n  class Client { void Run(Svc s) { s.V.Validate(); } }\n}\n"),
            ],
            "Svc.cs",
            "IValidator<Order> V|IValidator V",
        ),
        (
            "rust",
            &[
                ("Cargo.toml", "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
                ("src/cart.rs", "pub fn checkout() {}\n"),
                ("src/prelude.rs", "// nothing yet\n"),
                ("src/main.rs", "mod cart;\nmod prelude;\nuse crate::prelude::checkout;\nfn main() { checkout(); }\n"),
            ],
            "src/prelude.rs",
            "// nothing yet|pub use crate::cart::*;",
        ),
        (
            "go",
            &[
                ("a.go", "package p\n\ntype Repo struct{}\n"),
                ("b.go", "package p\n\nfunc (r *Repo) Save() {}\n"),
                ("c.go", "package p\n\nvar repo = load()\n\nfunc run() { repo.Save() }\n"),
            ],
            "a.go",
            "type Repo struct{}|type Store struct{}",
        ),
        (
            "python",
            &[
                (
                    "base.py",
                    "class B1:\n    def run(self):\n        pass\n\nclass B2:\n    def run(self):\n        pass\n",
                ),
                ("a.py", "from base import B1, B2\n\nclass A(B1, B2):\n    pass\n"),
                ("client.py", "from a import A\n\ndef f(x: A):\n    x.run()\n"),
            ],
            "a.py",
            "class A(B1, B2)|class A(B2, B1)",
        ),
        // Every definition kept but for its place: a Python module
        // variable moved off column 0 is spelled otherwise.
        (
            "python",
            &[
                (
                    "hooks.py",
                    "TYPE_CHECKING = False

HOOKS: list[str] = []
",
                ),
                (
                    "client.py",
                    "from hooks import HOOKS

def run():
    return len(HOOKS)
",
                ),
            ],
            "hooks.py",
            "HOOKS: list[str] = []|if TYPE_CHECKING:\n    HOOKS: list[str] = []",
        ),
        // Every definition kept, a comment changed: a C++ member declared
        // in a header and defined in a source file carries the header's
        // comment in the source file's document.
        (
            "cpp",
            &[
                ("shape.h", "class Shape {\n public:\n  // The area, old.\n  double area() const;\n};\n"),
                ("shape.cpp", "#include \"shape.h\"\n\ndouble Shape::area() const { return 1.0; }\n"),
            ],
            "shape.h",
            "// The area, old.|// The area, new.",
        ),
        // Every definition kept, a macro's body changed: a file that calls
        // the macro keeps its own uses, but its call expands to the new
        // body's callees.
        (
            "cpp",
            &[
                ("dict.h", "void *dictFind(void *d);\nvoid *dictScan(void *d);\n#define DICT_GET(d) dictFind((d))\n"),
                (
                    "dict.c",
                    "#include \"dict.h\"\nvoid *dictFind(void *d) { return d; }\nvoid *dictScan(void *d) { return d; }\n",
                ),
                ("server.c", "#include \"dict.h\"\nvoid *serve(void *d) { return DICT_GET(d); }\n"),
            ],
            "dict.h",
            "#define DICT_GET(d) dictFind((d))|#define DICT_GET(d) dictScan((d))",
        ),
        // A definition added ahead of a kept file's macro: what the macro's
        // body calls, kept with the file's uses, is renumbered with them.
        (
            "cpp",
            &[
                ("dict.h", "void *dictFind(void *d);\nvoid *dictScan(void *d);\n#define DICT_GET(d) dictFind((d))\n"),
                (
                    "dict.c",
                    "#include \"dict.h\"\nvoid *dictFind(void *d) { return d; }\nvoid *dictScan(void *d) { return d; }\n",
                ),
                ("server.c", "#include \"dict.h\"\nvoid *serve(void *d) { return DICT_GET(d); }\n"),
            ],
            "dict.c",
            "void *dictScan(void *d) { return d; }|void *dictScan(void *d) { return d; }\nvoid *dictNew(void) { return 0; }",
        ),
    ];
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let scratch = std::env::temp_dir().join(format!("signpost-again-cases-{}", std::process::id()));
    let mut patches = BTreeMap::<&str, usize>::new();
    for (n, (lang, files, changed, change)) in cases.iter().enumerate() {
        let root = scratch.join(n.to_string());
        let _ = std::fs::remove_dir_all(&root);
        for (name, text) in *files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let root = std::fs::canonicalize(&root).unwrap_or_else(|e| panic!("{e}"));
        let (l, all) = languages_of(&root).remove(lang).unwrap_or_else(|| panic!("{lang} files"));
        let (mut ws, before) = crate::Workspace::open(&root, l, &all, &opts);
        let (from, to) = change.split_once('|').unwrap_or_default();
        let text = files.iter().find(|(name, _)| name == changed).map_or("", |(_, t)| t);
        assert!(text.contains(from), "{from}");
        std::fs::write(root.join(changed), text.replace(from, to)).unwrap_or_else(|e| panic!("{e}"));
        // As the server asks, and patched as it patches.
        let served = patched_from(&before);
        let changed = [root.join(changed)];
        let again = if signpost_graph::scip::patches_language(lang) {
            ws.update_in_part(&all, &changed)
        } else {
            ws.update(&all, &changed)
        };
        let again = again.unwrap_or_else(|| panic!("{lang}: an update"));
        let whole = if again.changed.as_ref().is_some_and(|c| c.only) { ws.written() } else { again.index.clone() };
        let (_, fresh) = crate::Workspace::open(&root, l, &all, &opts);
        let (a, b) = (canonical(&whole), canonical(&fresh.index));
        assert!(a == b, "{lang}, {change}: resolving again differs from scratch\n{}", difference(&a, &b));
        // (A comment is not in the canonical lines; it is in the index.)
        assert!(
            canonical(&before.index) != b || before.index != fresh.index,
            "{lang}, {change}: the edit changes nothing"
        );
        let what = || format!("{lang}, {change}");
        patch_equals_fresh(Some(served), &again, &whole, &fresh.index, &mut patches, what);
    }
    assert!(patches.contains_key("told what changed"), "{patches:?}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A namespace block in every file (C++, C#) is spliced per file: an edit
/// of one of its files patches that file alone, whether it is the
/// namespace's first file or another; and the edits that move where the
/// namespace's node comes from (its first file leaving it, a file before
/// it joining it) still give what a fresh import gives.
#[test]
fn a_namespace_in_every_file_is_patched_per_file() {
    type Edit = (&'static str, &'static str, &'static str, Option<usize>);
    let cpp = |i: usize| {
        let call = if i > 0 { format!(" int c{i}() {{ return f{}(1); }}", i - 1) } else { String::new() };
        (format!("a{i}.cpp"), format!("namespace db {{\nint f{i}(int x) {{ return x + {i}; }}{call}\n}}\n"))
    };
    let csharp = |i: usize| {
        let call = if i > 0 { format!(" int C() {{ return new K{}().F(); }}", i - 1) } else { String::new() };
        (
            format!("A{i}.cs"),
            format!("namespace Db {{\n  class K{i} {{ public int F() {{ return {i}; }}{call} }}\n}}\n"),
        )
    };
    type Case = (&'static str, Vec<(String, String)>, Vec<Edit>);
    let cases: Vec<Case> = vec![
        (
            "cpp",
            std::iter::once(("0.cpp".to_owned(), "namespace other {\nint h() { return 0; }\n}\n".to_owned()))
                .chain((0..8).map(cpp))
                .chain([("z.cpp".to_owned(), "namespace solo {\nint s() { return 1; }\n}\n".to_owned())])
                .collect(),
            vec![
                // Another file: a function added, a call changed.
                ("a5.cpp", "int f5(int x)", "int g5() { return f2(1); }\nint f5(int x)", Some(1)),
                ("a6.cpp", "return f5(1);", "return f3(1);", Some(1)),
                // The namespace's first file.
                ("a0.cpp", "int f0(int x)", "int g0() { return 0; }\nint f0(int x)", Some(1)),
                // A file ahead of the first joins the namespace; the first
                // leaves it.
                ("0.cpp", "namespace other", "namespace db", None),
                ("0.cpp", "namespace db", "namespace other", None),
                ("a0.cpp", "namespace db", "namespace moved", None),
                ("a3.cpp", "int f3(int x)", "int g3() { return 3; }\nint f3(int x)", Some(1)),
                // A file ahead of a namespace of one file opens it too.
                ("0.cpp", "namespace other", "namespace solo", None),
                ("a2.cpp", "int f2(int x)", "int g2() { return 2; }\nint f2(int x)", Some(1)),
            ],
        ),
        (
            "csharp",
            (0..8).map(csharp).collect(),
            vec![
                ("A4.cs", "public int F()", "public int G() { return 4; } public int F()", Some(1)),
                ("A0.cs", "public int F()", "public int G() { return 0; } public int F()", Some(1)),
                ("A6.cs", "new K5()", "new K2()", Some(1)),
            ],
        ),
    ];
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let scratch = std::env::temp_dir().join(format!("signpost-namespaces-{}", std::process::id()));
    let mut patches = BTreeMap::<&str, usize>::new();
    for (n, (lang, files, edits)) in cases.iter().enumerate() {
        let root = scratch.join(n.to_string());
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
        let root = std::fs::canonicalize(&root).unwrap_or_else(|e| panic!("{e}"));
        let (l, all) = languages_of(&root).remove(lang).unwrap_or_else(|| panic!("{lang} files"));
        let (mut ws, before) = crate::Workspace::open(&root, l, &all, &opts);
        let mut served = Some(patched_from(&before));
        for (file, from, to, alone) in edits {
            let path = root.join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(text.contains(from), "{file}: {from}");
            std::fs::write(&path, text.replacen(from, to, 1)).unwrap_or_else(|e| panic!("{e}"));
            let again = ws.update_in_part(&all, std::slice::from_ref(&path));
            let again = again.unwrap_or_else(|| panic!("{lang}: an update"));
            let whole = if again.changed.as_ref().is_some_and(|c| c.only) { ws.written() } else { again.index.clone() };
            let (_, fresh) = crate::Workspace::open(&root, l, &all, &opts);
            let what = || format!("{lang}, {file}: {from} -> {to}");
            let (next, delta) = patch_equals_fresh(served.take(), &again, &whole, &fresh.index, &mut patches, what);
            if let Some(alone) = alone {
                let files = delta.as_ref().map(|d| d.files.len());
                assert_eq!(files, Some(*alone), "{}: the files patched", what());
            }
            served = Some(next);
        }
    }
    assert!(patches.get("spliced").copied().unwrap_or(0) >= 7, "{patches:?}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A reading saved by one process and restored by the next, after edits
/// made while nothing watched (lines changed, files removed and added),
/// gives what reading the edited tree from scratch gives; only the changed
/// files are read again; bytes that are not a whole reading of this build
/// are refused with a reason, never trusted.
#[test]
fn a_saved_reading_restored_after_edits_gives_what_reading_from_scratch_gives() {
    const EDITS: usize = 3;
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let scratch = std::env::temp_dir().join(format!("signpost-saved-{}", std::process::id()));
    let mut restored = 0;
    for (n, fixture, root) in copied_fixtures(&scratch) {
        for (name, (lang, files)) in languages_of(&root) {
            let (ws, _) = crate::Workspace::open(&root, lang, &files, &opts);
            let bytes = ws.reading().to_bytes().unwrap_or_else(|e| panic!("{e}"));
            drop(ws);
            // Unchanged: every file kept, none read.
            let (_, same, drift) = crate::Workspace::restore(&root, lang, &files, &opts, &bytes)
                .unwrap_or_else(|e| panic!("{} ({name}): {e}", fixture.display()));
            assert!(drift.is_empty() && drift.kept == files.len(), "{} ({name}): {drift:?}", fixture.display());
            let (_, fresh) = crate::Workspace::open(&root, lang, &files, &opts);
            assert_eq!(canonical(&same.index), canonical(&fresh.index), "{} ({name})", fixture.display());
            // Edited while stopped.
            let mut rng = Rng(0x5eed ^ (n as u64) << 8 ^ name.len() as u64);
            let mut now = files.clone();
            let mut log = Vec::new();
            for step in 0..EDITS {
                if now.is_empty() {
                    break;
                }
                log.push(edit(&mut rng, &root, &now, step).0);
                now = languages_of(&root).remove(name).map(|(_, f)| f).unwrap_or_default();
            }
            let (_, again, drift) = crate::Workspace::restore(&root, lang, &now, &opts, &bytes)
                .unwrap_or_else(|e| panic!("{} ({name}): {e}", fixture.display()));
            assert!(drift.kept + drift.changed.len() == now.len(), "{drift:?}");
            let (_, fresh) = crate::Workspace::open(&root, lang, &now, &opts);
            let (a, b) = (canonical(&again.index), canonical(&fresh.index));
            assert!(
                a == b,
                "{} ({name}): restored after edits differs from scratch\nedits:\n  {}\n{}",
                fixture.display(),
                log.join("\n  "),
                difference(&a, &b)
            );
            // Not a whole reading of this build: refused, whatever the damage.
            for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
                assert!(crate::Workspace::restore(&root, lang, &now, &opts, &bytes[..cut]).is_err());
            }
            let mut flipped = bytes.clone();
            let at = flipped.len() - 1 - rng.below(flipped.len() / 2);
            flipped[at] ^= 0x20;
            let why = crate::Workspace::restore(&root, lang, &now, &opts, &flipped).err();
            assert!(why.as_deref().is_some_and(|w| w.contains("checksum")), "{why:?}");
            let other = crate::languages::LANGUAGES.iter().find(|l| l.name != lang.name).unwrap_or(lang);
            assert!(crate::Workspace::restore(&root, other, &now, &opts, &bytes).is_err());
            let slower = crate::Options { parse_timeout: opts.parse_timeout * 2, ..opts.clone() };
            assert!(crate::Workspace::restore(&root, lang, &now, &slower, &bytes).is_err());
            restored += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(restored > 20, "{restored} readings restored");
}

/// An index's definitions: (document, symbol) of each occurrence that
/// defines.
fn definitions(index: &scip::types::Index) -> std::collections::BTreeSet<(String, String)> {
    let mut out = std::collections::BTreeSet::new();
    for d in &index.documents {
        for o in d.occurrences.iter().filter(|o| o.symbol_roles & 1 == 1) {
            out.insert((d.relative_path.clone(), o.symbol.clone()));
        }
    }
    out
}

/// The definitions given early (before any use is resolved) are the whole
/// part's, with the same symbols (ids), and nothing else: no reference, no
/// relationship. What resolve, find and search answer from them stays true
/// once the whole part comes.
#[test]
fn the_definitions_given_early_are_the_whole_parts_and_only_them() {
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let mut parts = 0;
    for fixture in fixtures() {
        for (name, (lang, files)) in languages_of(&fixture) {
            let mut early = None;
            let (_, whole) = crate::Workspace::open_early(&fixture, lang, &files, &opts, Some(|i| early = Some(i)));
            let early = early.unwrap_or_else(|| panic!("{} ({name}): no definitions given early", fixture.display()));
            let (a, b) = (definitions(&early.index), definitions(&whole.index));
            assert!(!a.is_empty() && a == b, "{} ({name}): {:?}", fixture.display(), a.symmetric_difference(&b));
            for d in &early.index.documents {
                // (a file read in part says where, as an occurrence of no symbol)
                let reference = |o: &&scip::types::Occurrence| o.symbol_roles & 1 == 0 && !o.symbol.is_empty();
                assert!(!d.occurrences.iter().any(|o| reference(&o)), "{}: a reference early", d.relative_path);
                assert!(
                    d.symbols.iter().all(|s| s.relationships.is_empty()),
                    "{}: a relationship early",
                    d.relative_path
                );
            }
            parts += 1;
        }
    }
    assert!(parts > 20, "{parts} parts");
}

/// A part's whole index given encoded (as the first index hands a large
/// part over, and a restart a restored one) is the one given decoded:
/// imported a document at a time, it is the same graph, and the patch memo
/// read from it is the same memo, whether its bytes are in a nameless file
/// ([`crate::Options::spill`]) or in memory. The definitions given early
/// are handed over encoded alike.
#[test]
fn a_part_given_encoded_is_the_part_given_decoded() {
    use signpost_graph::scip::{Memo, import_encoded, import_index};
    let spill = std::env::temp_dir().join(format!("signpost-spill-{}", std::process::id()));
    std::fs::create_dir_all(&spill).expect("a scratch directory");
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let spilled = crate::Options { spill: Some(spill.clone()), ..opts.clone() };
    let mut parts = 0;
    for fixture in fixtures() {
        for (name, (lang, files)) in languages_of(&fixture) {
            let what = || format!("{} ({name})", fixture.display());
            let mut early_decoded = None;
            let (ws, decoded) =
                crate::Workspace::open_early(&fixture, lang, &files, &opts, Some(|i| early_decoded = Some(i)));
            let reading = ws.reading().to_bytes().unwrap_or_else(|e| panic!("{}: {e}", what()));
            drop(ws);
            let mut early_encoded = None;
            let (_, encoded) = crate::Workspace::open_early_encoded(
                &fixture,
                lang,
                &files,
                &spilled,
                Some(|i| early_encoded = Some(i)),
            );
            // The definitions given early, encoded as the whole part is.
            let (early_d, early_e) = (early_decoded.expect("definitions early"), early_encoded.expect("early"));
            let early_bytes = early_e.encoded.as_ref().unwrap_or_else(|| panic!("{}: early, not encoded", what()));
            assert!(!cfg!(target_os = "linux") || early_bytes.on_disk(), "{}: early, not in a file", what());
            assert!(early_e.index.documents.is_empty() && early_d.encoded.is_none(), "{}", what());
            let a = import_encoded(early_bytes, &graph_opts()).unwrap_or_else(|e| panic!("{}: {e}", what()));
            let b = import_index(&early_d.index, &graph_opts()).unwrap_or_else(|e| panic!("{e}"));
            assert!(a.canonical_lines() == b.canonical_lines(), "{}: the early graph differs", what());
            let bytes = encoded.encoded.as_ref().unwrap_or_else(|| panic!("{}: not encoded", what()));
            assert!(!cfg!(target_os = "linux") || bytes.on_disk(), "{}: not in a file", what());
            assert!(encoded.index.documents.is_empty(), "{}: decoded too", what());
            assert!(decoded.encoded.is_none(), "{}: encoded when not asked", what());
            let (a, b) = (import_encoded(bytes, &graph_opts()), import_index(&decoded.index, &graph_opts()));
            let (a, b) = (a.unwrap_or_else(|e| panic!("{}: {e}", what())), b.unwrap_or_else(|e| panic!("{e}")));
            let (got, want) = (a.canonical_lines(), b.canonical_lines());
            assert!(got == want, "{}: the graph differs\n{}", what(), only_in(&got, &want));
            let memo = Memo::of_encoded(bytes).unwrap_or_else(|e| panic!("{}: {e}", what()));
            assert!(memo == Memo::of(&decoded.index), "{}: the memo differs", what());
            // A restart's part, restored from the saved reading, the same
            // (its bytes in memory: no place to write them was given).
            let (_, restored, drift) = crate::Workspace::restore_encoded(&fixture, lang, &files, &opts, &reading)
                .unwrap_or_else(|e| panic!("{}: {e}", what()));
            assert!(drift.is_empty(), "{}: {drift:?}", what());
            let again = restored.encoded.as_ref().unwrap_or_else(|| panic!("{}: restored, not encoded", what()));
            assert!(!again.on_disk(), "{}: restored into a file when none was given", what());
            assert!(restored.index.documents.is_empty(), "{}: restored decoded too", what());
            let c = import_encoded(again, &graph_opts()).unwrap_or_else(|e| panic!("{}: {e}", what()));
            let got = c.canonical_lines();
            assert!(got == want, "{}: the restored graph differs\n{}", what(), only_in(&got, &want));
            let memo = Memo::of_encoded(again).unwrap_or_else(|e| panic!("{}: {e}", what()));
            assert!(memo == Memo::of(&decoded.index), "{}: the restored memo differs", what());
            parts += 1;
        }
    }
    assert!(parts > 20, "{parts} parts");
    let left: Vec<_> = std::fs::read_dir(&spill).expect("the directory").collect();
    assert!(left.is_empty(), "the index files are gone with their parts: {left:?}");
    let _ = std::fs::remove_dir_all(&spill);
}

/// The definitions of a part's first files, given before the rest is read,
/// are spelled as the whole part spells them: every one's symbol (id) is
/// one the whole part defines, in the same file but for a C++ member
/// declared in a header, whose body a later file holds (the whole part
/// puts its definition there). Where that cannot hold (a Go method whose
/// type a later file may define), none are given until every file is read.
#[test]
fn the_definitions_of_a_parts_first_files_are_the_whole_parts() {
    let opts = crate::Options { threads: 1, ..crate::Options::default() };
    let (mut given, mut held) = (Vec::new(), Vec::new());
    for fixture in fixtures() {
        for (name, (lang, files)) in languages_of(&fixture) {
            if files.len() < 3 {
                continue;
            }
            // Cut in thirds: the first third's definitions, the first two
            // thirds', then all.
            let firsts = [files.len() / 3, files.len() * 2 / 3];
            let mut early: Vec<crate::Indexed> = Vec::new();
            let (_, whole) = crate::Workspace::open_early_after(
                &fixture,
                lang,
                &files,
                &opts,
                crate::Schedule::At(&firsts),
                Some(|i| early.push(i)),
            );
            let whole = definitions(&whole.index);
            let label = format!("{} ({name})", fixture.display());
            let Some((all, parts)) = early.split_last() else { panic!("{label}: no definitions given") };
            assert_eq!(all.report.pending, 0, "{label}");
            if parts.is_empty() {
                held.push(label);
                continue;
            }
            // Each given first files of its own, and none but the first
            // given where the first was held.
            assert!(parts.len() <= firsts.len(), "{label}: {} given early", parts.len());
            for (part, upto) in parts.iter().zip(firsts) {
                assert_eq!(part.report.pending, files.len() - upto, "{label}");
                let part = definitions(&part.index);
                let symbols: std::collections::BTreeSet<&String> = whole.iter().map(|(_, s)| s).collect();
                let moved: Vec<_> = part.difference(&whole).collect();
                assert!(!part.is_empty() && moved.iter().all(|(_, s)| symbols.contains(s)), "{label}: {moved:?}");
                let declared =
                    |(path, _): &&(String, String)| [".h", ".hpp", ".hh", ".hxx"].iter().any(|x| path.ends_with(x));
                assert!(moved.iter().all(declared), "{label}: {moved:?}");
            }
            given.push(label);
        }
    }
    // Java's given early, and languages spelled whole (Kotlin, C#…) held.
    assert!(given.iter().any(|l| l.contains("(java)")), "given: {given:?}");
    assert!(held.iter().any(|l| l.contains("(kotlin)")), "held: {held:?}");
}
