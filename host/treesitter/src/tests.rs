//! The built-in indexer on the checked-in fixtures (`tests/fixtures/treesitter`),
//! read back through the graph's SCIP importer as the server reads it.

use std::path::{Path, PathBuf};

use protobuf::Message;
use signpost_graph::{Direction, EXTERNAL, Graph};

use crate::languages;
use crate::walk::{WalkOptions, sources};

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/treesitter").join(name)
}

/// Language `lang` and its files under `dir`, as the walk finds them, with
/// the walk's notes.
fn files_of(dir: &Path, lang: &str) -> (&'static languages::Lang, Vec<PathBuf>, Vec<String>) {
    let lang = languages::by_name(lang).expect("a language");
    let (found, notes) = sources(dir, &WalkOptions::default());
    let files = found.into_iter().find(|(l, _)| std::ptr::eq(*l, lang)).map(|(_, f)| f).unwrap_or_default();
    (lang, files, notes)
}

/// The SCIP symbols the built-in indexer writes for one language of a
/// directory, as its SCIP indexer would spell them.
fn scip_symbols(dir: &Path, lang: &str) -> Vec<String> {
    let (lang, files, _) = files_of(dir, lang);
    let indexed = crate::index(dir, lang, &files, &crate::Options::default());
    indexed.index.documents.iter().flat_map(|d| d.symbols.iter().map(|s| s.symbol.clone())).collect()
}

/// Indexes one language of a directory and imports the index.
fn graph_of(dir: &Path, lang: &str) -> (Graph, crate::Report) {
    let (lang, files, notes) = files_of(dir, lang);
    assert!(notes.is_empty(), "{notes:?}");
    let indexed = crate::index(dir, lang, &files, &crate::Options::default());
    let bytes = indexed.index.write_to_bytes().expect("encodes");
    let g = signpost_graph::scip::import(&bytes, &signpost_graph::scip::Options { name: "fixture".into() })
        .expect("the importer reads what the indexer writes");
    (g, indexed.report)
}

/// A node's label: its qualified name, and for callables its line (overloads
/// share a name).
fn label(g: &Graph, ix: u32) -> String {
    let n = g.node(ix);
    if matches!(n.kind(), "method" | "function" | "constructor") {
        format!("{}:{}", n.fqn(), n.line())
    } else {
        n.fqn().to_owned()
    }
}

/// Every edge as `from -TYPE-> to`, sorted.
fn edges(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for n in g.iter() {
        for t in g.edge_types() {
            let key = g.parse_edge_key(t).ok().flatten().expect("a base type");
            for m in g.walk(n.ix(), Direction::Out, &key) {
                out.push(format!("{} -{t}-> {}", label(g, n.ix()), label(g, m)));
            }
        }
    }
    out.sort();
    out
}

fn assert_edges(all: &[String], want: &[&str], never: &[&str]) {
    let missing: Vec<&&str> = want.iter().filter(|w| !all.iter().any(|e| e == *w)).collect();
    assert!(missing.is_empty(), "missing edges {missing:#?}\nin {all:#?}");
    let wrong: Vec<&&str> = never.iter().filter(|w| all.iter().any(|e| e == *w)).collect();
    assert!(wrong.is_empty(), "wrong edges {wrong:#?}");
}

fn kind(g: &Graph, fqn: &str) -> String {
    g.iter().find(|n| n.fqn() == fqn && !n.has_role(EXTERNAL)).map(|n| n.kind().to_owned()).unwrap_or_default()
}

const SHOP: &str = "com.example.shop";

#[test]
fn java_hierarchy_calls_overloads_and_packages() {
    let (g, report) = graph_of(&fixture_dir("java"), "java");
    assert_eq!((report.files, report.syntax_errors), (10, 0), "{report:?}");
    for (fqn, k) in [
        ("model.Entity", "class"),
        ("model.Priced", "interface"),
        ("model.Item", "class"),
        ("repo.Repository", "interface"),
        ("repo.OrderRepository.orders", "field"),
        ("service.OrderService.placeOrder", "method"),
        ("service.OrderService.<init>", "constructor"),
        ("repo", "module"),
    ] {
        assert_eq!(kind(&g, &format!("{SHOP}.{fk}", fk = fqn)), k, "{fqn}");
    }
    let e = edges(&g);
    let want: Vec<String> = [
        // The type hierarchy, from the headers.
        "model.Order -EXTENDS-> model.Entity",
        "model.Order -IMPLEMENTS-> model.Priced",
        "model.Item -IMPLEMENTS-> model.Priced",
        "repo.OrderRepository -IMPLEMENTS-> repo.Repository",
        "model.Order.total:17 -OVERRIDES-> model.Priced.total:5",
        "repo.OrderRepository.save:16 -OVERRIDES-> repo.Repository.save:7",
        // A package's members.
        "repo -DECLARES-> repo.AuditLog",
        "repo -DECLARES-> repo.OrderRepository",
        "repo.OrderRepository -DECLARES-> repo.OrderRepository.save:11",
        // A call chain across files: controller → service → repository → entity.
        "web.OrderController.create:11 -CALLS-> service.OrderService.placeOrder:16",
        "service.OrderService.placeOrder:16 -CALLS-> repo.OrderRepository.save:16",
        "repo.OrderRepository.save:16 -CALLS-> repo.OrderRepository.save:11",
        "repo.OrderRepository.save:11 -CALLS-> model.Entity.getId:7",
        // Receivers: a field, `this.field`, a loop variable, an inherited method.
        "service.OrderService.placeOrder:16 -CALLS-> repo.AuditLog.save:5",
        "service.OrderService.notifyCustomer:26 -CALLS-> repo.AuditLog.save:5",
        "model.Order.total:17 -CALLS-> model.Item.total:4",
        "service.OrderService.placeOrder:16 -CALLS-> model.Entity.getId:7",
        "service.OrderService.placeOrder:16 -CALLS-> service.OrderService.notifyCustomer:26",
        // `new T(…)` calls its constructor.
        "OrderServiceTest.placesAnOrder:8 -CALLS-> service.OrderService.<init>:12",
    ]
    .iter()
    .map(|w| {
        w.replace("model.", &format!("{SHOP}.model."))
            .replace("repo", &format!("{SHOP}.repo"))
            .replace("service.", &format!("{SHOP}.service."))
            .replace("web.", &format!("{SHOP}.web."))
            .replace("OrderServiceTest", &format!("{SHOP}.OrderServiceTest"))
    })
    .collect();
    let never: Vec<String> = [
        // The overload with one parameter is not the one called with two.
        "service.OrderService.placeOrder:16 -CALLS-> repo.OrderRepository.save:11",
        // `audit.save(…)` is AuditLog's, not the repository's of the same name.
        "service.OrderService.placeOrder:16 -CALLS-> repo.Repository.save:5",
        // `items.add(…)` is java.util.List's, not Order.add.
        "model.Order.add:12 -CALLS-> model.Order.add:12",
    ]
    .iter()
    .map(|w| {
        w.replace("model.", &format!("{SHOP}.model."))
            .replace("repo", &format!("{SHOP}.repo"))
            .replace("service.", &format!("{SHOP}.service."))
    })
    .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&e, &want, &never);
    let test = g.iter().find(|n| n.name() == "OrderServiceTest").expect("the test class");
    assert!(test.has_role("test"));
    let order = g.iter().find(|n| n.fqn() == format!("{SHOP}.model.Order")).expect("Order");
    assert_eq!(order.doc(), "A customer's order.");
    assert_eq!(order.signature(), "public class Order extends Entity implements Priced");
}

#[test]
fn go_methods_interfaces_and_packages() {
    let (g, report) = graph_of(&fixture_dir("go"), "go");
    assert_eq!((report.files, report.syntax_errors), (6, 0), "{report:?}");
    let m = "example.com/shop";
    assert_eq!(kind(&g, &format!("{m}/orders.Store")), "interface");
    assert_eq!(kind(&g, &format!("{m}/orders.MemoryStore")), "struct");
    assert_eq!(kind(&g, &format!("{m}/orders.Order.Total")), "method");
    assert_eq!(kind(&g, &format!("{m}/orders.NewMemoryStore")), "function");
    assert_eq!(kind(&g, &format!("{m}/orders")), "module");
    let e = edges(&g);
    let want: Vec<String> = [
        // Methods belong to their receiver's type, wherever they are declared.
        "orders.Order -DECLARES-> orders.Order.Total:16",
        "orders.MemoryStore -DECLARES-> orders.MemoryStore.Save:22",
        "orders -DECLARES-> orders.NewMemoryStore:17",
        // Interfaces are satisfied implicitly.
        "orders.MemoryStore -IMPLEMENTS-> orders.Store",
        "orders.MemoryStore.Save:22 -OVERRIDES-> orders.Store.Save:7",
        // Calls across packages: a package function, a field's method, a
        // parameter's method, an interface's method.
        "cmd/shop.main:10 -CALLS-> service.New:15",
        "cmd/shop.main:10 -CALLS-> orders.NewMemoryStore:17",
        "service.Service.Place:20 -CALLS-> orders.Order.Total:16",
        "service.Service.Place:20 -CALLS-> audit.Log.Save:11",
        "service.Service.Place:20 -CALLS-> orders.Store.Save:7",
        "service.TestPlace:9 -CALLS-> service.Service.Place:20",
    ]
    .iter()
    .map(|w| {
        w.split(' ')
            .map(|t| if t.starts_with('-') { t.to_owned() } else { format!("{m}/{t}") })
            .collect::<Vec<_>>()
            .join(" ")
    })
    .collect();
    let never: Vec<String> = [
        // `s.log.Save` is the audit log's, not a store's.
        "service.Service.Place:20 -CALLS-> orders.MemoryStore.Save:22",
    ]
    .iter()
    .map(|w| {
        w.split(' ')
            .map(|t| if t.starts_with('-') { t.to_owned() } else { format!("{m}/{t}") })
            .collect::<Vec<_>>()
            .join(" ")
    })
    .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&e, &want, &never);
    let test = g.iter().find(|n| n.name() == "TestPlace").expect("the test");
    assert!(test.has_role("test"));
    let order = g.iter().find(|n| n.fqn() == format!("{m}/orders.Order")).expect("Order");
    assert_eq!(order.signature(), "type Order struct");
    assert_eq!(order.doc(), "Order is a customer's order.");
}

#[test]
fn edges_resolved_by_name_are_marked_inferred_and_declares_exact() {
    assert_eq!(crate::TOOL, signpost_graph::scip::INFERRING_TOOL, "the importer knows this indexer's name");
    let (g, _) = graph_of(&fixture_dir("java"), "java");
    let mut seen = std::collections::BTreeMap::<(String, String), usize>::new();
    for n in g.iter() {
        for t in g.edge_types() {
            let key = g.parse_edge_key(t).ok().flatten().expect("a base type");
            for m in g.walk(n.ix(), Direction::Out, &key) {
                let how = g.step_derivation(n.ix(), Direction::Out, &key, m).expect("a single key");
                // The same edge read from its other end says the same.
                assert_eq!(g.step_derivation(m, Direction::In, &key, n.ix()), Some(how));
                *seen.entry((t.to_owned(), format!("{how:?}"))).or_default() += 1;
            }
        }
    }
    for t in ["CALLS", "REFERENCES", "IMPLEMENTS", "EXTENDS", "OVERRIDES"] {
        assert!(seen.contains_key(&(t.into(), "Inferred".into())), "{t}: {seen:?}");
        assert!(!seen.contains_key(&(t.into(), "Exact".into())), "{t}: {seen:?}");
    }
    assert!(seen.contains_key(&("DECLARES".into(), "Exact".into())), "{seen:?}");
    assert!(!seen.contains_key(&("DECLARES".into(), "Inferred".into())), "{seen:?}");
    // Snapshots and the JSON format keep it; merged with an exact copy of
    // the same edges, exact wins.
    let back = signpost_graph::snapshot::read(&signpost_graph::snapshot::write(&g)).expect("reads back");
    assert!(back.has_inferred_edges());
    let mut json = Vec::new();
    signpost_graph::json::write(&g, &mut json).expect("writes");
    let text = String::from_utf8(json).expect("utf-8");
    assert!(text.contains(r#""derived":"inferred""#));
    let from_json = Graph::from_json(&text).expect("parses");
    assert!(from_json.has_inferred_edges());
    let exact = Graph::from_json(&text.replace(r#","derived":"inferred""#, "")).expect("parses");
    assert!(!exact.has_inferred_edges());
    let merged = signpost_graph::merge("both", &[g, exact]).expect("merges");
    assert!(!merged.has_inferred_edges(), "an exact edge outweighs the same edge inferred");
}

#[test]
fn csharp_hierarchy_calls_overloads_and_namespaces() {
    let (g, report) = graph_of(&fixture_dir("csharp"), "csharp");
    assert_eq!((report.files, report.syntax_errors), (2, 0), "{report:?}");
    assert_eq!(kind(&g, "Shop.Model.IPriced"), "interface");
    assert_eq!(kind(&g, "Shop.Model.Entity.Id"), "property");
    assert_eq!(kind(&g, "Shop.Services.OrderService.PlaceOrder"), "method");
    assert_eq!(kind(&g, "Shop.Services"), "module");
    let e = edges(&g);
    let (m, s) = ("Shop.Model", "Shop.Services");
    let want = [
        format!("{m}.Order -EXTENDS-> {m}.Entity"),
        format!("{m}.Order -IMPLEMENTS-> {m}.IPriced"),
        format!("{s}.OrderRepository -IMPLEMENTS-> {s}.IRepository"),
        format!("{m}.Order.Total:29 -OVERRIDES-> {m}.IPriced.Total:8"),
        format!("{s}.OrderRepository.Save:19 -OVERRIDES-> {s}.IRepository.Save:9"),
        format!("{m} -DECLARES-> {m}.Order"),
        format!("{s}.OrderRepository.Save:19 -CALLS-> {s}.OrderRepository.Save:14"),
        format!("{s}.OrderRepository.Save:14 -CALLS-> {m}.Entity.GetId:16"),
        // A field typed by an interface calls the interface's overload that
        // takes two arguments.
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {s}.IRepository.Save:9"),
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {s}.AuditLog.Save:28"),
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {m}.Order.Total:29"),
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {s}.OrderService.Notify:54"),
        format!("{s}.OrderService.Notify:54 -CALLS-> {s}.AuditLog.Save:28"),
        // `var service = new OrderService(…)`: its constructor, then its method.
        format!("{s}.Program.Main:62 -CALLS-> {s}.OrderService.constructor:37"),
        format!("{s}.Program.Main:62 -CALLS-> {s}.OrderService.PlaceOrder:42"),
    ];
    let never = [
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {s}.IRepository.Save:8"),
        format!("{s}.OrderService.PlaceOrder:42 -CALLS-> {s}.OrderRepository.Save:14"),
        format!("{m}.Order.Add:24 -CALLS-> {m}.Order.Add:24"),
    ];
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&e, &want, &never);
}

#[test]
fn kotlin_hierarchy_calls_overloads_and_packages() {
    let (g, report) = graph_of(&fixture_dir("kotlin"), "kotlin");
    // The twelve sources and build.gradle.kts (a Kotlin script); Layout.kt
    // read laid out as the grammar reads it.
    assert_eq!((report.files, report.syntax_errors), (13, 0), "{report:?}");
    let io = |s: &&str| s.replace("IO", "com.example.shop.io");
    let want: Vec<String> = [
        // Overloads the argument cannot tell apart, all returning a
        // `JsonAdapter<T?>`: the call is marked ambiguous, what it gives
        // is known.
        "IO.Adapters.safe:27 -CALLS-> IO.JsonAdapter.nullSafe:7",
        // An extension function's callers, through the type it extends.
        "IO.Drain.drain:7 -CALLS-> IO.remaining:4",
        // A qualified supertype is the nested class it names; a delegated
        // one (`Closer by c`) is a supertype too.
        "IO.Special -EXTENDS-> IO.Base.Nested",
        "IO.Delegating -IMPLEMENTS-> IO.Closer",
        // A constructor on the line after its header; bodies on one line.
        "IO.Reader.first:11 -CALLS-> IO.Reader.Chunk.bytes:8",
        "IO.Tiny.two:14 -CALLS-> IO.Tiny.one:14",
        "IO.Caller.call:17 -CALLS-> IO.Tiny.two:14",
        // Receivers typed `Link?`, read through `!!`, `?.` and a local
        // typed by its value.
        "IO.Link.splice:11 -CALLS-> IO.Link.push:10",
        "IO.Link.maybe:12 -CALLS-> IO.Link.push:10",
        "IO.Link.grow:13 -CALLS-> IO.Link.push:10",
        // A primary constructor, called.
        "IO.Link.grow:13 -CALLS-> IO.Link.<init>:8",
        "IO.Users.c:28 -CALLS-> IO.Link.<init>:8",
        // Extension functions of types the project does not define, on a
        // typed value and on a string literal.
        "IO.Users.a:26 -CALLS-> IO.canonical:5",
        "IO.Users.b:27 -CALLS-> IO.shout:6",
        // A qualified supertype: the nested interface, not the object itself.
        "IO.Factory -IMPLEMENTS-> IO.Adapter.Factory",
        // In an extension function, the receiver's members are in scope
        // (`head!!.next`, then `push`) and `this` is the receiver.
        "IO.append:19 -CALLS-> IO.Segment.push:5",
        "IO.measure:24 -CALLS-> IO.Chain.size:11",
        // A member that cannot take the arguments leaves the call to the
        // extension function that can; one that can takes it.
        "IO.firstLine:30 -CALLS-> IO.line:28",
        "IO.Reading.read:35 -CALLS-> IO.line:28",
        "IO.anyLine:32 -CALLS-> IO.Chain.line:10",
        // A type named through the one around it; `vararg`, annotations
        // and defaults counted as Kotlin counts them.
        "IO.Asking.options -CALLS-> IO.Names.Options.of:43",
        "IO.Asking.spread:55 -CALLS-> IO.Names.Options.of:43",
        "IO.Asking.one:57 -CALLS-> IO.Names.pick:47",
        "IO.Asking.three:59 -CALLS-> IO.Names.pick:47",
        // An `actual` class's constructor properties, read in its members.
        "IO.Sink.flush:11 -CALLS-> IO.Drain.drain:7",
        // A parameter of a qualified type (`Outer.Inner`).
        "IO.Qualified.size:72 -CALLS-> IO.Outer.Inner.count:64",
        // A call given a trailing lambda, alone or after its arguments (the
        // lambda is an argument); a lambda given to a collection's
        // `forEach`, `map`: `it` and its one named parameter an element.
        "IO.openAll:16 -CALLS-> IO.Vault.withLock:12",
        "IO.openAll:16 -CALLS-> IO.Vault.guarded:13",
        "IO.openAll:16 -CALLS-> IO.Lease.release:4",
    ]
    .iter()
    .map(io)
    .collect();
    // An anonymous object's supertype is not its enclosing class's.
    let never: Vec<String> = [
        // Overloads returning two types: what the call gives is not known.
        "IO.Adapters.either:29 -CALLS-> IO.Picked.run:11",
        "IO.Adapters.either:29 -CALLS-> IO.Other.run:15",
        "IO.Factory -IMPLEMENTS-> IO.Closer",
        "IO.Special -EXTENDS-> IO.Base",
        "IO.Reader.first:11 -CALLS-> IO.Decoy.bytes:20",
        "IO.Tiny.two:14 -CALLS-> IO.Decoy.one:20",
        // `"x".shout()` is String's extension, not Users' own `shout`.
        "IO.Users.b:27 -CALLS-> IO.Users.shout:29",
        // The receiver's member before a top-level function of its name;
        // no member for a call it cannot take, nor an extension for one it
        // can.
        "IO.measure:24 -CALLS-> IO.size:15",
        "IO.firstLine:30 -CALLS-> IO.Chain.line:10",
        "IO.Reading.read:35 -CALLS-> IO.Chain.line:10",
        "IO.anyLine:32 -CALLS-> IO.line:28",
        "IO.Asking.one:57 -CALLS-> IO.Names.pick:49",
        "IO.Asking.three:59 -CALLS-> IO.Names.pick:49",
        "IO.Qualified.size:72 -CALLS-> IO.Outer.count:67",
        "IO.openAll:16 -CALLS-> IO.Permit.release:8",
        // The standard `require(cond) { message }`: two arguments, the
        // lambda one of them, so not the class's own `require(count)`.
        "IO.Guarded.verify:25 -CALLS-> IO.Guarded.require:24",
        // The standard `check(cond) { … }`, in scope nowhere: not another
        // package's `check` of that shape.
        "IO.Guarded.verify:25 -CALLS-> com.example.shop.model.check:3",
    ]
    .iter()
    .map(io)
    .collect();
    assert_edges(
        &edges(&g),
        &want.iter().map(String::as_str).collect::<Vec<_>>(),
        &never.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    // `expect class Source` and its `actual` class, their members in
    // another order: each `read` is one symbol, in both files.
    let reads: Vec<(String, String)> = g
        .iter()
        .filter(|n| n.fqn() == "com.example.shop.io.Source.read")
        .map(|n| (n.id(), n.signature().to_owned()))
        .collect();
    assert_eq!(reads.len(), 2, "{reads:?}");
    let (m, s) = ("com.example.shop.model", "com.example.shop.service");
    assert_eq!(kind(&g, &format!("{m}.Priced")), "interface");
    assert_eq!(kind(&g, &format!("{m}.Order")), "class");
    assert_eq!(kind(&g, &format!("{m}.Order.add")), "method", "a function in a class is a method");
    assert_eq!(kind(&g, &format!("{s}.main")), "function");
    assert_eq!(kind(&g, &format!("{m}.Entity.id")), "property");
    let e = edges(&g);
    let want = [
        format!("{m}.Order -EXTENDS-> {m}.Entity"),
        format!("{m}.Order -IMPLEMENTS-> {m}.Priced"),
        format!("{m}.Item -IMPLEMENTS-> {m}.Priced"),
        format!("{s}.OrderRepository -IMPLEMENTS-> {s}.Repository"),
        format!("{m}.Order.total:25 -OVERRIDES-> {m}.Priced.total:5"),
        format!("{m}.Item.total:14 -OVERRIDES-> {m}.Priced.total:5"),
        format!("{s}.OrderRepository.save:16 -CALLS-> {s}.OrderRepository.save:12"),
        // An inherited method, through a wildcard import's type.
        format!("{s}.OrderRepository.save:12 -CALLS-> {m}.Entity.describe:10"),
        // A constructor property typed by an interface: its two-argument overload.
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {s}.Repository.save:8"),
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {s}.AuditLog.save:23"),
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {m}.Order.total:25"),
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {s}.OrderService.notifyCustomer:40"),
        format!("{s}.OrderService.notifyCustomer:40 -CALLS-> {s}.AuditLog.save:23"),
        // `val service = OrderService(…)`: then its method.
        format!("{s}.main:45 -CALLS-> {s}.OrderService.placeOrder:32"),
    ];
    let never = [
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {s}.Repository.save:7"),
        format!("{s}.OrderService.placeOrder:32 -CALLS-> {s}.OrderRepository.save:12"),
        format!("{m}.Order.add:21 -CALLS-> {m}.Order.add:21"),
    ];
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&e, &want, &never);
}

/// The built-in indexer's graph of a SCIP fixture against the SCIP
/// indexer's own (`tests/fixtures/scip/<fixture>`): each edge type's
/// precision and recall must reach its floor, and at most `known` of the
/// definitions may have another id.
fn against_scip(lang: &str, fixture: &str, floors: &[(&str, f64, f64)], known: usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/scip").join(fixture);
    let bytes = std::fs::read(dir.join("index.scip")).expect("the fixture's SCIP index");
    let truth =
        signpost_graph::scip::import(&bytes, &signpost_graph::scip::Options { name: "truth".into() }).expect("imports");
    let (ours, _) = graph_of(&dir, lang);
    let measured = crate::accuracy::edges(&truth, &ours, "", 20);
    for &(t, precision_floor, recall_floor) in floors {
        let m = measured.iter().find(|m| m.edge == t).cloned().unwrap_or_default();
        eprintln!(
            "{lang} {t}: ours {}, theirs {}, both {}: precision {:.2}, recall {:.2} {:?}",
            m.ours,
            m.theirs,
            m.both,
            m.precision(),
            m.recall(),
            m.examples
        );
        assert!(m.theirs > 0 && m.precision() >= precision_floor && m.recall() >= recall_floor, "{t}: {m:?}");
    }
    let (same, all, differ) = crate::accuracy::ids(&truth, &ours, "");
    eprintln!("{lang} ids: {same} of {all} the same; not: {differ:?}");
    assert!(differ.len() <= known && same > 20, "{differ:?}");
}

/// The built-in Python reading against scip-python's index of the same
/// fixture (edges between definitions both place at the same file and
/// line). The floors are today's figures (BENCHMARKS.md): the one call
/// found here and not by scip-python is a construction (`Square(2.0)`),
/// which scip-python attributes to the class, not its `__init__`.
#[test]
fn python_against_scip_python() {
    let floors = [("CALLS", 0.85, 1.0), ("DECLARES", 1.0, 1.0), ("EXTENDS", 1.0, 1.0), ("OVERRIDES", 1.0, 1.0)];
    // Known: scip-python spells an annotated module variable
    // `REGISTRY.REGISTRY.`.
    against_scip("python", "py", &floors, 1);
}

/// The built-in TypeScript reading against scip-typescript's index of the
/// same fixture (edges between definitions both place at the same file and
/// line). The floors are today's figures (BENCHMARKS.md), loop variables
/// typed by what the collection they walk holds included (`shape` in `for
/// (const shape of shapes)`, `s` in `shapes.map((s) => …)`).
#[test]
fn typescript_against_scip_typescript() {
    let floors = [
        ("CALLS", 1.0, 1.0),
        ("DECLARES", 1.0, 1.0),
        ("EXTENDS", 1.0, 1.0),
        ("IMPLEMENTS", 1.0, 1.0),
        ("OVERRIDES", 1.0, 1.0),
    ];
    // Known: a constructor's parameter property (scip-typescript names it
    // as the parameter).
    against_scip("typescript", "ts", &floors, 2);
}

/// Where a Rust file's module is in its crate.
#[test]
fn rust_module_paths_follow_cargo_targets() {
    for (file, module) in [
        ("src/main.rs", ""),
        ("src/lib.rs", ""),
        ("build.rs", ""),
        ("src/geometry.rs", "geometry"),
        ("src/a/mod.rs", "a"),
        ("src/a/b.rs", "a.b"),
        ("src/a/lib.rs", "a.lib"),
        ("src/bin/tool.rs", ""),
        ("src/bin/tool/main.rs", ""),
        ("src/bin/tool/helper.rs", "helper"),
        ("examples/demo.rs", ""),
        ("examples/demo/main.rs", ""),
        ("examples/demo/util.rs", "util"),
        ("tests/it.rs", ""),
        ("benches/speed.rs", ""),
    ] {
        assert_eq!(crate::rust_module(Path::new(file)).join("."), module, "{file}");
    }
}

/// The built-in Rust reading against rust-analyzer's index of the same
/// fixture. The floors are today's figures (BENCHMARKS.md).
#[test]
fn rust_against_rust_analyzer() {
    let floors = [("CALLS", 1.0, 1.0), ("DECLARES", 1.0, 1.0), ("IMPLEMENTS", 1.0, 1.0), ("OVERRIDES", 1.0, 1.0)];
    against_scip("rust", "rust", &floors, 0);
}

/// TypeScript, JavaScript and TSX in one package: imports across them in
/// every spelling (`./money.js` for `money.js`, `../store/money` without an
/// extension), a class hierarchy with every supertype related, parameter
/// properties, typed fields and parameters as receivers, `super`, and
/// `const f = () => …` as a function.
#[test]
fn typescript_javascript_and_tsx_imports_hierarchy_and_receivers() {
    let (g, report) = graph_of(&fixture_dir("typescript"), "typescript");
    assert_eq!((report.files, report.syntax_errors), (4, 0), "{report:?}");
    let (o, m) = ("src.store.order.ts", "src.store.money.js");
    for (fqn, k) in [
        (format!("{o}.Priced"), "interface"),
        (format!("{o}.Item"), "class"),
        (format!("{o}.Item.name"), "property"),
        (format!("{o}.Item.amount"), "property"),
        (format!("{o}.Orders.ledger"), "property"),
        (format!("{m}.Ledger"), "class"),
        (format!("{m}.format"), "function"),
        ("src.ui.Cart.tsx.Props".into(), "type"),
    ] {
        assert_eq!(kind(&g, &fqn), k, "{fqn}");
    }
    // The package's name is the module field of its symbols, as
    // scip-typescript writes it; the id leaves the version out.
    let item = g.iter().find(|n| n.fqn() == format!("{o}.Item")).expect("Item");
    let symbol = "scip-typescript npm @acme/shop . src/store/`order.ts`/Item#";
    assert_eq!(Ok(item.id()), signpost_graph::scip::symbol_id(symbol), "Item's id is its scip-typescript symbol's");

    let all = edges(&g);
    assert_edges(
        &all,
        &[
            &format!("{o}.Item -IMPLEMENTS-> {o}.Priced"),
            &format!("{o}.Discounted -EXTENDS-> {o}.Item"),
            &format!("{o}.Discounted -IMPLEMENTS-> {o}.Priced"),
            &format!("{o}.Discounted.price:19 -OVERRIDES-> {o}.Item.price:12"),
            &format!("{o}.Discounted.price:19 -OVERRIDES-> {o}.Priced.price:5"),
            &format!("{o}.Item -DECLARES-> {o}.Item.name"),
            // `./money.js` from TypeScript.
            &format!("{o}.Item.price:12 -CALLS-> {m}.cents:4"),
            &format!("{o}.Discounted.price:19 -CALLS-> {o}.Item.price:12"),
            // A typed field and a typed parameter as receivers.
            &format!("{o}.Orders.add:29 -CALLS-> {m}.Ledger.add:16"),
            &format!("{o}.Orders.add:29 -CALLS-> {o}.Item.price:12"),
            &format!("{o}.Orders.add2:34 -CALLS-> {o}.Orders.add:29"),
            &format!("{m}.Ledger.add:16 -CALLS-> {m}.cents:4"),
            &format!("{m}.format:9 -CALLS-> {m}.cents:4"),
            // TSX: `new Item(…)`, a variable typed by it, `../store/money`.
            &format!("src.ui.Cart.tsx.Cart:7 -CALLS-> {o}.Item.constructor:10"),
            &format!("src.ui.Cart.tsx.Cart:7 -CALLS-> {o}.Item.price:12"),
            &format!("src.ui.Cart.tsx.Cart:7 -CALLS-> {m}.format:9"),
        ],
        &[
            // `orders` is destructured, its type not written: `add` is
            // two methods of the project, and stays unresolved.
            &format!("src.ui.Cart.tsx.Cart:7 -CALLS-> {m}.Ledger.add:16"),
            &format!("src.ui.Cart.tsx.Cart:7 -CALLS-> {o}.Orders.add:29"),
        ],
    );
}

/// A call the project has definitions of that name for but that binds to
/// none is written where it is, with its name, for the graph to count: a
/// "nobody calls it" is never silent. Calls before it, bound or not, do
/// not move it.
#[test]
fn an_unbound_call_is_written_with_its_name_and_place() {
    let dir = std::env::temp_dir().join(format!("signpost-unbound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a dir");
    let text = "class Order:\n    def settle(self):\n        return 1\n\n\nclass Bill:\n    def settle(self):\n        return 2\n\n\ndef close(thing):\n    print(len([]))\n    Order().settle()\n    return thing.settle()\n";
    std::fs::write(dir.join("shop.py"), text).expect("written");
    let (lang, files, _) = files_of(&dir, "python");
    let indexed = crate::index(&dir, lang, &files, &crate::Options::default());
    let _ = std::fs::remove_dir_all(&dir);
    let doc = indexed.index.documents.iter().find(|d| d.relative_path == "shop.py").expect("shop.py");
    let unbound: Vec<(Vec<i32>, &str)> = doc
        .occurrences
        .iter()
        .flat_map(|o| o.diagnostics.iter().map(move |d| (o, d)))
        .filter(|(_, d)| d.code == signpost_graph::scip::UNRESOLVED)
        .map(|(o, d)| (o.range.clone(), d.message.as_str()))
        .collect();
    // `thing.settle()`, line 14: `thing`'s type is not written, and
    // `settle` is two methods of the project.
    assert_eq!(unbound, [(vec![13, 17, 23], "settle")], "{:#?}", doc.occurrences);
}

/// C and C++ in one project: namespaces, classes with members declared in
/// the class and defined apart (one node each, where the body is), virtual
/// overrides, overloads told apart by arity, constructions (`new T(…)`,
/// `T x(…)`), and C's structs, typedefs, macros and free functions.
#[test]
fn cpp_and_c_hierarchy_out_of_class_definitions_overloads_and_macros() {
    let (g, report) = graph_of(&fixture_dir("cpp"), "cpp");
    assert_eq!((report.files, report.syntax_errors), (8, 0), "{report:?}");
    for (fqn, k) in [
        ("shapes", "module"),
        ("shapes.Shape", "class"),
        ("shapes.Circle.area", "method"),
        ("shapes.Circle.Circle", "constructor"),
        ("shapes.Square.Square", "constructor"),
        ("shapes.Circle.radius_", "field"),
        ("point", "struct"),
        ("point.x", "field"),
        ("segment_t", "type"),
        ("segment_t.from", "field"),
        ("SQUARE", "function"),
        ("PI", "constant"),
    ] {
        assert_eq!(kind(&g, fqn), k, "{fqn}");
    }
    // Declared in the class, defined in shape.cpp: one node, at its body,
    // with the declaration's comment.
    let area: Vec<_> = g.iter().filter(|n| n.fqn() == "shapes.Circle.area").collect();
    assert_eq!(area.len(), 1, "one node for the declaration and the definition");
    assert_eq!((area[0].file(), area[0].line()), ("src/shape.cpp", 8));
    let shape_area = g.iter().find(|n| n.fqn() == "shapes.Shape.area").expect("Shape::area");
    assert_eq!(shape_area.doc(), "Its area.");
    // The include guard is no constant; a prototype is no definition.
    assert_eq!(kind(&g, "GEOMETRY_H"), "");
    assert_eq!(g.iter().filter(|n| n.fqn() == "square").count(), 1);

    let all = edges(&g);
    assert_edges(
        &all,
        &[
            "shapes -DECLARES-> shapes.Circle",
            "shapes.Circle -DECLARES-> shapes.Circle.area:8",
            "shapes.Circle -DECLARES-> shapes.Circle.Circle:6",
            "shapes.Circle -EXTENDS-> shapes.Shape",
            "shapes.Square -EXTENDS-> shapes.Shape",
            "shapes.Circle.area:8 -OVERRIDES-> shapes.Shape.area:10",
            "shapes.Square.area:28 -OVERRIDES-> shapes.Shape.area:10",
            // The body defined apart calls across files into C.
            "shapes.Circle.area:8 -CALLS-> square:4",
            "shapes.Shape.scaled:12 -CALLS-> shapes.Shape.area:10",
            // Overloads by arity, qualified by their namespace or not.
            "main:11 -CALLS-> shapes.total:16",
            "main:11 -CALLS-> shapes.total:20",
            "shapes.total:20 -CALLS-> shapes.total:16",
            // Receivers typed by a parameter, a pointer, a qualified type.
            "shapes.total:16 -CALLS-> shapes.Shape.area:10",
            "report:7 -CALLS-> shapes.Shape.area:10",
            "main:11 -CALLS-> shapes.Shape.scaled:12",
            // `Circle c(1.0)` and `new shapes::Square(2.0)`.
            "main:11 -CALLS-> shapes.Circle.Circle:6",
            "main:11 -CALLS-> shapes.Square.Square:27",
            // C: a call chain across files, a macro, structs and typedefs.
            "main:11 -CALLS-> origin:8",
            "main:11 -CALLS-> distance:13",
            "length:17 -CALLS-> distance:13",
            "distance:13 -CALLS-> square:4",
            "square:4 -CALLS-> SQUARE:5",
            "point -DECLARES-> point.x",
            "segment_t -DECLARES-> segment_t.from",
            "segment_t.from -REFERENCES-> point",
            "length:17 -REFERENCES-> segment_t",
        ],
        &["shapes.total:16 -CALLS-> shapes.total:20", "shapes.total:20 -CALLS-> shapes.total:20"],
    );
    // `using namespace metric;`: a plain name means metric's, not
    // imperial's, though both namespaces define it.
    assert_edges(
        &all,
        &["measure:21 -CALLS-> metric.scale:4", "measure:21 -CALLS-> metric.Ruler.length:7"],
        &["measure:21 -CALLS-> imperial.scale:12", "measure:21 -CALLS-> imperial.Ruler.length:15"],
    );
    // `std::printf`, `sqrt`: not the project's, no edge.
    assert!(!all.iter().any(|e| e.contains("printf") || e.contains("sqrt")), "{all:#?}");

    // Two overloads with as many parameters, declared in the class and
    // defined apart: paired by their parameters' types, and a call is told
    // apart by its argument's (`set(1)` is `set(int)`).
    assert_edges(
        &all,
        &[
            "shapes.Canvas.set:11 -CALLS-> shapes.Canvas.self:15",
            "shapes.Canvas -DECLARES-> shapes.Canvas.Canvas:5",
            "shapes.Canvas.self:15 -CALLS-> shapes.Canvas.set:7",
        ],
        &["shapes.Canvas.self:15 -CALLS-> shapes.Canvas.set:11"],
    );
    let set_int = all.iter().filter(|e| e.starts_with("shapes.Canvas.self:15 -CALLS-> shapes.Canvas.set")).count();
    assert_eq!(set_int, 1, "one callee, its declaration and definition one symbol: {all:#?}");
    // `std::vector<int> items_`: the project's own `util::vector` is
    // another type; a macro call in a class body is no constructor.
    assert!(!all.iter().any(|e| e.starts_with("shapes") && e.contains("-> util.")), "{all:#?}");
    assert_ne!(kind(&g, "shapes.Canvas.DISALLOW_COPY"), "constructor");
    // A destructor and a reference-returning method defined apart are
    // scopes of their own: nothing in them is credited to the namespace.
    assert_eq!(kind(&g, "shapes.Canvas.~Canvas"), "method");
    assert!(!all.iter().any(|e| e.starts_with("shapes -CALLS") || e.starts_with("shapes -REFERENCES")), "{all:#?}");
}

/// The CALLS edges of one language's inference fixture
/// (`tests/fixtures/treesitter/inference/<dir>`).
fn inferred_calls(dir: &str, lang: &str) -> Vec<String> {
    let (g, report) = graph_of(&fixture_dir("inference").join(dir), lang);
    assert_eq!(report.syntax_errors, 0, "{report:?}");
    edges(&g).into_iter().filter(|e| e.contains(" -CALLS-> ")).collect()
}

#[test]
fn inference_rust_returns_bindings_wrappers_iterators_and_paths() {
    let all = inferred_calls("rust", "rust");
    let at = |e: &str| format!("inference::{}", e.replace(" -> ", " -CALLS-> inference::"));
    let want: Vec<String> = [
        // `Store::open()` returns `Self`; `with_item` does too, chained.
        "run:13 -> shop::Store::open:31",
        "run:13 -> shop::Store::with_item:36",
        // `let filled = …` is typed by its value.
        "run:13 -> shop::Store::total:52",
        // `if let Some(item) = filled.find(3)`: an `Option<&Item>` unwrapped.
        "run:13 -> shop::Store::find:42",
        "run:13 -> shop::Item::price:8",
        // `for it in filled.items()`: `impl Iterator<Item = &Item>`.
        "run:13 -> shop::Store::items:47",
        "run:13 -> shop::Item::cost:13",
        // `.map(|i| i.discount())` on that iterator.
        "run:13 -> shop::Item::discount:18",
        // `Shared` is an alias of `Arc<Mutex<Store>>`: `lock().unwrap()`.
        "run:13 -> shop::Store::count:57",
        // `crate::util::helper()`: a module path.
        "run:13 -> util::helper:2",
    ]
    .iter()
    .map(|e| at(e))
    .collect();
    // `String::new()` is not the project's: its `push_str` is not `Log`'s.
    let never = [at("run:13 -> util::Log::push_str:13")];
    assert_edges(&all, &want.iter().map(String::as_str).collect::<Vec<_>>(), &[never[0].as_str()]);
}

#[test]
fn object_literal_properties_are_the_files_as_scip_typescript_spells_them() {
    let (g, _) = graph_of(&fixture_dir("inference").join("ts"), "typescript");
    for (symbol, line) in [
        ("scip-typescript npm . . `shop.ts`/currency0:", 44),
        ("scip-typescript npm . . `shop.ts`/makeStore0:", 44),
        ("scip-typescript npm . . `shop.ts`/currency1:", 45),
    ] {
        let id = signpost_graph::scip::symbol_id(symbol).expect("a symbol");
        let n = g.lookup(&id).unwrap_or_else(|| panic!("{symbol} is defined"));
        assert_eq!(g.node(n).line(), line, "{symbol}");
    }
    let file = edges(&g).into_iter().filter(|e| e.starts_with("shop.ts -DECLARES-> ")).count();
    assert!(file >= 3, "the file declares its object literals' properties");
}

#[test]
fn inference_typescript_python_go_and_java() {
    let ts = inferred_calls("ts", "typescript");
    let (m, s) = ("main.ts.main:3 -CALLS-> shop.ts.", "shop.ts");
    assert_edges(
        &ts,
        &[
            // A function's declared return, then `this`-returning methods.
            &format!("{m}makeStore:38"),
            &format!("{m}Store.add:20"),
            // `for (const item of store.all())`: elements of `Item[]`.
            &format!("{m}Store.all:25"),
            &format!("{m}Item.price:4"),
            // `.map((i) => i.cost())` on that array.
            &format!("{m}Item.cost:8"),
            // `await store.load()`: a `Promise<Item | undefined>`.
            &format!("{m}Store.load:33"),
            &format!("{m}Item.label:12"),
        ],
        // `new Map()` is not the project's: its `set` is not `Store.set`.
        &[&format!("main.ts.main:3 -CALLS-> {s}.Store.set:29")],
    );
    // A class's attributes and a module's names bound under `try:` are
    // definitions, as scip-python has them.
    let (g, _) = graph_of(&fixture_dir("inference").join("py"), "python");
    assert_eq!(kind(&g, "shop.Item.CURRENCY"), "field");
    assert_eq!(kind(&g, "shop.HAS_JSON"), "variable");
    let py = inferred_calls("py", "python");
    let m = "main.main:6 -CALLS-> shop.";
    assert_edges(
        &py,
        &[
            &format!("{m}make_store:51"),
            &format!("{m}Store.add:34"),
            // `for item in store.all()`: `List[Item]`.
            &format!("{m}Store.all:38"),
            &format!("{m}Item.price:19"),
            // `item.label`: a property read runs its getter.
            &format!("{m}Item.label:26"),
            // `found = store.find(1)`: `Optional[Item]`.
            &format!("{m}Store.find:47"),
            &format!("{m}Item.cost:22"),
        ],
        &[
            // `names = {}` is a dict, whose `update` is not `Store.update`.
            &format!("{m}Store.update:41"),
            // `options` is not typed: `get`, a name every mapping has, is
            // not taken to mean the one project method called so.
            &format!("{m}Store.get:44"),
        ],
    );
    let go = inferred_calls("go", "go");
    let m = "example.com/inference.main:5 -CALLS-> example.com/inference/shop.";
    assert_edges(
        &go,
        &[
            &format!("{m}NewStore:21"),
            // `item, err := s.Get(0)`: the first of `(*Item, error)`.
            &format!("{m}Store.Get:24"),
            &format!("{m}Item.Price:10"),
            // `for _, it := range s.All()`: elements of `[]*Item`.
            &format!("{m}Store.All:27"),
            &format!("{m}Item.Cost:13"),
        ],
        &[],
    );
    let java = inferred_calls("java", "java");
    let m = "shop.Store.sum:15 -CALLS-> shop.";
    assert_edges(
        &java,
        &[
            // `var store = Store.open().add(1)`.
            &format!("{m}Store.open:9"),
            &format!("{m}Store.add:11"),
            &format!("{m}Store.first:13"),
            &format!("{m}Item.price:8"),
            // `items.get(0)` of a `List<Item>` field.
            &format!("{m}Item.cost:10"),
        ],
        &[],
    );
}

#[test]
#[ignore = "a tool: SIGNPOST_DUMP=lang:file prints the file's syntax tree"]
fn dump_tree() {
    let spec = std::env::var("SIGNPOST_DUMP").expect("SIGNPOST_DUMP=lang:file");
    let (lang, file) = spec.split_once(':').expect("lang:file");
    let lang = languages::by_name(lang).expect("a language");
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&(lang.grammar)()).expect("grammar");
    let text = std::fs::read(file).expect("file");
    let tree = parser.parse(&text, None).expect("parses");
    fn walk(n: tree_sitter::Node<'_>, field: Option<&str>, depth: usize, text: &[u8]) {
        let label = field.map(|f| format!("{f}: ")).unwrap_or_default();
        let leaf =
            if n.named_child_count() == 0 { format!(" {:?}", n.utf8_text(text).unwrap_or("")) } else { String::new() };
        if n.is_named() {
            eprintln!("{}{label}({}){leaf}", "  ".repeat(depth), n.kind());
        }
        let mut c = n.walk();
        for (i, ch) in n.children(&mut c).enumerate() {
            walk(ch, n.field_name_for_child(i as u32), depth + 1, text);
        }
    }
    walk(tree.root_node(), None, 0, &text);
}

/// Edges of one fixture directory read as `lang`, with a prefix put
/// before every name of `want` and `never`.
fn assert_fixture(dir: &str, lang: &str, kinds: &[(&str, &str)], want: &[&str], never: &[&str]) {
    let (g, report) = graph_of(&fixture_dir(dir), lang);
    assert_eq!(report.syntax_errors, 0, "{report:?}");
    assert!(report.notes.is_empty(), "{report:?}");
    for (fqn, k) in kinds {
        assert_eq!(kind(&g, fqn), *k, "{fqn}");
    }
    assert_edges(&edges(&g), want, never);
}

#[test]
fn ruby_modules_classes_mixins_implicit_self_and_constructions() {
    assert_fixture(
        "ruby",
        "ruby",
        &[
            ("Shop", "module"),
            ("Shop.Item", "class"),
            ("Shop.Item.initialize", "constructor"),
            ("Shop.Item.price", "method"),
            ("Shop.Item.CURRENCY", "constant"),
        ],
        &[
            "Shop -DECLARES-> Shop.Item",
            "Shop.Item -EXTENDS-> Shop.Priced",
            "Shop.Item.price:19 -OVERRIDES-> Shop.Priced.price:4",
            // `add(…)` in a method is `self.add(…)`; `Item.free` a class
            // method; `new(…)` in it constructs the class.
            "Shop.Cart.add_free:15 -CALLS-> Shop.Cart.add:10",
            "Shop.Cart.add_free:15 -CALLS-> Shop.Item.free:27",
            "Shop.Item.free:27 -CALLS-> Shop.Item.initialize:13",
            // `Shop::Cart.new` (no parentheses) and `Shop::Item.new(…)`,
            // then calls on the values they give, across files.
            "checkout:3 -CALLS-> Shop.Cart.initialize:6",
            "checkout:3 -CALLS-> Shop.Item.initialize:13",
            "checkout:3 -CALLS-> Shop.Cart.add:10",
            "checkout:3 -CALLS-> Shop.Cart.total:19",
            "checkout:3 -CALLS-> Shop.Item.discounted:23",
            // An item's `price` is its own, not the one it overrides.
            "checkout:3 -CALLS-> Shop.Item.price:19",
            // A bare name before a dot is a call; in `class << self` the
            // class method of that name, in an instance method the
            // instance's.
            "Shop.Base.run!:12 -CALLS-> Shop.Base.settings:3",
            "Shop.Base.render:17 -CALLS-> Shop.Base.settings:7",
        ],
        &[
            "checkout:3 -CALLS-> Shop.Priced.price:4",
            "Shop.Base.run!:12 -CALLS-> Shop.Base.settings:7",
            "Shop.Base.render:17 -CALLS-> Shop.Base.settings:3",
        ],
    );
}

#[test]
fn php_namespaces_interfaces_promoted_properties_and_static_calls() {
    let p = "Acme.Shop.";
    let with = |e: &str| e.replace("@", p);
    let want: Vec<String> = [
        "Acme.Shop -DECLARES-> @Item",
        "@Item -IMPLEMENTS-> @Priced",
        "@Item.price:18 -OVERRIDES-> @Priced.price:8",
        "@Item -DECLARES-> @Item.name",
        // `$this->price()`, `new self(…)`.
        "@Item.discounted:23 -CALLS-> @Item.price:18",
        "@Item.free:28 -CALLS-> @Item.__construct:12",
        // A typed field (`$this->ledger`) and a typed parameter (`$item`).
        "@Cart.add:18 -CALLS-> @Ledger.record:33",
        "@Cart.add:18 -CALLS-> @Item.price:18",
        // `use Acme\Shop\Item;`, `Item::free(…)`, `new Cart()`, and the
        // values they give.
        "checkout:6 -CALLS-> @Item.free:28",
        "checkout:6 -CALLS-> @Cart.__construct:13",
        "checkout:6 -CALLS-> @Item.__construct:12",
        "checkout:6 -CALLS-> @Cart.add:18",
        "checkout:6 -CALLS-> @Item.discounted:23",
        "checkout:6 -CALLS-> @Cart.total:25",
    ]
    .iter()
    .map(|e| with(e))
    .collect();
    assert_fixture(
        "php",
        "php",
        &[("Acme.Shop.Item", "class"), ("Acme.Shop.Priced", "interface"), ("Acme.Shop.Item.CURRENCY", "constant")],
        &want.iter().map(String::as_str).collect::<Vec<_>>(),
        &[&with("checkout:6 -CALLS-> @Priced.price:8")],
    );
}

#[test]
fn swift_types_protocols_initializers_and_implicit_self() {
    assert_fixture(
        "swift",
        "swift",
        &[("Item", "class"), ("Cart", "struct"), ("Priced", "interface"), ("Item.init", "constructor")],
        &[
            "Item -IMPLEMENTS-> Priced",
            "Book -EXTENDS-> Item",
            "Item.price:18 -OVERRIDES-> Priced.price:3",
            "Book.price:33 -OVERRIDES-> Item.price:18",
            // `super.price()`, `price()` (implicit self), `Item(name:…)`.
            "Book.price:33 -CALLS-> Item.price:18",
            "Item.discounted:22 -CALLS-> Item.price:18",
            "Item.free:26 -CALLS-> Item.init:12",
            // A property typed by its value (`let ledger = Ledger()`) and a
            // parameter typed `Item`, across files.
            "Cart.add:6 -CALLS-> Ledger.record:18",
            "Cart.add:6 -CALLS-> Item.price:18",
            "checkout:21 -CALLS-> Item.free:26",
            "checkout:21 -CALLS-> Cart.add:6",
            "checkout:21 -CALLS-> Item.discounted:22",
            "checkout:21 -CALLS-> Cart.total:12",
            // Labels name the method (`load(_:for:)`, not `load(_:using:)`);
            // extensions of types the project does not define are found
            // by calls on their values, an unknown one (`error` in a
            // `catch`) by the one method of that full name.
            "Labeller.run:19 -CALLS-> Labeller.load:17",
            "Labeller.run:19 -CALLS-> String.indenting:9",
            "Labeller.run:19 -CALLS-> URLRequest.init:13",
            "Labeller.run:19 -CALLS-> Error.asShopError:4",
            // A parameter of an existential type (`any Convertible`).
            "send:33 -CALLS-> Convertible.asRequest:30",
            // Implicit members (`.value(arg, index: 1)`): the one member of
            // that name taking those labels, a case of an enum.
            "split:16 -CALLS-> Element.value:2",
            "split:16 -CALLS-> Element.value:3",
            "escape:39 -CALLS-> String.shellEscaped:28",
            // `guard let`/`if let` bindings, typed by a cast.
            "providers:10 -CALLS-> Provider.argumentSet:2",
            "parsed:20 -CALLS-> Parsed.argumentSet:6",
            "parsed:20 -CALLS-> Provider.argumentSet:2",
            "Failing.run:32 -CALLS-> Error.asShopError:4",
            "headersOf:46 -CALLS-> Parsed.argumentSet:6",
            "reparsed:63 -CALLS-> ParsedConvertible.asParsed:55",
            "reparsed:63 -CALLS-> Parsed.argumentSet:6",
            "Managed.run:81 -CALLS-> ShopManager.parsed:75",
            "Managed.run:81 -CALLS-> ParsedConvertible.asParsed:55",
            "Managed.run:81 -CALLS-> Parsed.argumentSet:6",
            "fill:98 -CALLS-> Values.set:91",
            "Group.run:118 -CALLS-> Validating.check:108",
            "checkAll:125 -CALLS-> Validating.check:108",
            "Runnable.parse:147 -CALLS-> Helping.helpText:139",
            "Runnable.parse:147 -CALLS-> Runnable.validate:134",
            // A method of the class and one of its extension with as many
            // parameters: two methods, each the scope of its own calls.
            "Request.validate:2 -CALLS-> Request.note:7",
            "Request.validate:11 -CALLS-> Request.note:7",
            // Overloads by their argument's type: an integer literal is an
            // `Int`; a part of a collection (`tail[start...]`) holds its
            // elements; a forced unwrap; labels place the arguments past
            // a parameter with a default value.
            "Arguments.remove:15 -CALLS-> Arguments.remove:14",
            "Arguments.popAfter:18 -CALLS-> Arguments.remove:15",
            "Arguments.marks:26 -CALLS-> Arguments.mark:24",
            // A closure given to `forEach`: its `$0` or first parameter an
            // element of the receiver (a project type's own `Element`).
            "Arguments.removeAll:40 -CALLS-> Arguments.remove:39",
            "Arguments.removeAll:40 -CALLS-> Arguments.remove:15",
            // A type named through another (`Board.Kind`): the nested one,
            // as a supertype and as a reference, not the top-level namesake.
            "Rook -EXTENDS-> Board.Kind",
            "place:10 -REFERENCES-> Board.Piece",
            "loose:11 -REFERENCES-> Piece",
        ],
        &[
            "Request -CALLS-> Request.note:7",
            // Two types' `option(_:)`: not guessed.
            "flag:22 -CALLS-> Element.option:4",
            "flag:22 -CALLS-> Flag.option:13",
            "escape:39 -CALLS-> Array.joinedLines:32",
            "escape:39 -CALLS-> Set.joinedLines:36",
            "checkout:21 -CALLS-> Book.price:33",
            "Labeller.run:19 -CALLS-> Labeller.load:18",
            "Arguments.remove:15 -CALLS-> Arguments.remove:15",
            "Arguments.popAfter:18 -CALLS-> Arguments.remove:14",
            "Arguments.marks:26 -CALLS-> Arguments.mark:25",
            "Arguments.removeAll:40 -CALLS-> Arguments.remove:14",
            "Rook -EXTENDS-> Kind",
            "Rook -EXTENDS-> Board",
            "place:10 -REFERENCES-> Piece",
            "Labeller.run:19 -CALLS-> Error.asShopError:5",
            "providers:10 -CALLS-> Parsed.argumentSet:6",
            "Failing.run:32 -CALLS-> Parsed.argumentSet:6",
            "headersOf:46 -CALLS-> Provider.argumentSet:2",
            "reparsed:63 -CALLS-> Loose.asParsed:59",
            "reparsed:63 -CALLS-> Loose.argumentSet:60",
            "Managed.run:81 -CALLS-> Loose.asParsed:59",
            "fill:98 -CALLS-> Settings.set:95",
            "Group.run:118 -CALLS-> Checked.check:112",
            "checkAll:125 -CALLS-> Checked.check:112",
            "Runnable.parse:147 -CALLS-> Unrelated.helpText:143",
            "Runnable.parse:147 -CALLS-> Helping.validate:138",
        ],
    );
    // Two methods of one name in two extensions of one type, in two files
    // (`load(_:for:)`, `load(_:using:)`): two symbols, both in the graph.
    let (g, _) = graph_of(&fixture_dir("swift"), "swift");
    let mut loads: Vec<String> =
        g.iter().filter(|n| n.fqn() == "Item.load").map(|n| format!("{}:{}", n.file(), n.line())).collect();
    loads.sort();
    assert_eq!(loads, ["Sources/Shop/ItemLoading.swift:3", "Sources/Shop/ItemRates.swift:4"]);
    // Two `fileprivate` properties of one name in two extensions of one
    // type: two symbols, each calling a `StringProtocol` extension's
    // method on a `String`.
    let mut completions: Vec<String> = g
        .iter()
        .filter(|n| n.fqn() == "Item.completion")
        .map(|n| {
            let key = g.parse_edge_key("CALLS").ok().flatten().expect("a base type");
            let calls = g
                .walk(n.ix(), Direction::Out, &key)
                .into_iter()
                .filter(|&m| g.node(m).fqn() == "StringProtocol.indentedShop")
                .count();
            format!("{}:{} calls {calls}", n.file(), n.line())
        })
        .collect();
    completions.sort();
    assert_eq!(
        completions,
        ["Sources/Shop/Completions+Zsh.swift:4 calls 1", "Sources/Shop/Completions.swift:12 calls 1"]
    );
    // A method of an extension of a type the project does not define is
    // that type's, not a top-level function.
    assert_eq!(kind(&g, "String.slug"), "method");
    assert_eq!(kind(&g, "slug"), "");
}

#[test]
fn scala_classes_companions_overloads_and_parameterless_methods() {
    assert_fixture(
        "scala",
        "scala",
        &[
            ("shop.Priced", "trait"),
            ("shop.Item.<init>", "constructor"),
            ("app.Main", "module"),
            // `package shop` then `package data`: `shop.data`.
            ("shop.data.Chain", "class"),
            ("data.Chain", ""),
        ],
        &[
            "shop.Item -IMPLEMENTS-> shop.Priced",
            "shop.Book -EXTENDS-> shop.Item",
            "shop.Book.price:24 -OVERRIDES-> shop.Item.price:11",
            "shop.Book.price:24 -CALLS-> shop.Item.price:11",
            // Overloads told apart by their number of arguments.
            "shop.Item.discounted:15 -CALLS-> shop.Item.discounted:13",
            "app.Main.checkout:6 -CALLS-> shop.Item.discounted:13",
            "app.Main.checkout:6 -CALLS-> shop.Item.discounted:15",
            // The companion object's `Item.free`, `new Item(…)`.
            "app.Main.checkout:6 -CALLS-> shop.Item.free:19",
            "shop.Item.free:19 -CALLS-> shop.Item.<init>:9",
            "app.Main.checkout:6 -CALLS-> shop.Item.<init>:9",
            "app.Main.checkout:6 -CALLS-> shop.Cart.add:10",
            "app.Main.checkout:6 -CALLS-> shop.Cart.total:16",
            // `item.price`: a method without parentheses runs when read.
            "shop.Cart.add:10 -CALLS-> shop.Item.price:11",
            "shop.Cart.add:10 -CALLS-> shop.Ledger.record:20",
            // The outer clause's names are in scope in the inner one.
            "shop.data.Chain.link:6 -CALLS-> shop.Item.price:11",
            // `Coupon.take(…)` on the class's name: the companion's.
            "shop.Till.ring:12 -CALLS-> shop.Coupon.take:8",
            // A supertype named by the enclosing clause: the trait, not
            // its companion object; an infix type's operator.
            "shop.data.SetLattice -IMPLEMENTS-> shop.Lattice",
            "shop.Left -EXTENDS-> shop.Both",
            // `Path("~")` without `new`: the companion's `apply` of that
            // arity; `makeDir.all(p)`, a nested object called: its `apply`;
            // an object called by its name.
            "shop.Paths.home:22 -CALLS-> shop.Path.apply:8",
            "shop.Paths.under:23 -CALLS-> shop.Path.apply:9",
            "shop.Paths.make:24 -CALLS-> shop.makeDir.all.apply:15",
            "shop.makeDir.all.apply:15 -CALLS-> shop.makeDir.apply:13",
            // A package object's `type Monoid[A] = shop.kernel.Monoid[A]`
            // (a type by its package's full name) for an implicit
            // parameter's type, and its `val Monoid = shop.kernel.Monoid`
            // for the name read as a value.
            "shop.data.Seqs.fold:7 -CALLS-> shop.kernel.Monoid.combineAll:4",
            "shop.data.Seqs.unit:26 -CALLS-> shop.kernel.Monoid.instance:8",
            // An operator method; generic overloads told apart by their
            // parameters' types (read past the type parameters).
            "shop.data.Seqs.++:10 -CALLS-> shop.data.Seqs.concat:13",
            // Methods without parentheses: a bare name bound to a val, and
            // a receiver (`toSeqs.reversed`).
            "shop.data.Seqs.last:21 -CALLS-> shop.data.Seqs.reversed:19",
            "shop.data.SeqsOps.back:33 -CALLS-> shop.data.Seqs.reversed:19",
            // `extends A with B`: every trait, of a class and of an object,
            // whose methods override the traits'.
            "shop.PathRedirect -IMPLEMENTS-> shop.ProcessInput",
            "shop.PathRedirect -IMPLEMENTS-> shop.ProcessOutput",
            "shop.Inherit -IMPLEMENTS-> shop.ProcessInput",
            "shop.Inherit -IMPLEMENTS-> shop.ProcessOutput",
            "shop.Inherit.redirectTo:8 -OVERRIDES-> shop.ProcessOutput.redirectTo:4",
        ],
        &[
            "shop.data.Seqs.++:10 -CALLS-> shop.data.Seqs.concat:16",
            "shop.data.Seqs -CALLS-> shop.data.Seqs.concat:13",
            "shop.data.Seqs.fold:7 -CALLS-> shop.data.Seqs.combineAll:28",
            "shop.Cart.add:10 -CALLS-> shop.Priced.price:5",
            "shop.Till.ring:12 -CALLS-> shop.Coupon.take:4",
            "shop.Paths.home:22 -CALLS-> shop.Path.apply:9",
            "shop.Paths.home:22 -CALLS-> shop.Path.<init>:3",
        ],
    );
}

/// A class, then a run of unbalanced parentheses: a query over the tree
/// the grammar makes of it takes minutes without a deadline inside it.
fn pathological_java(parens: usize) -> Vec<u8> {
    let mut text = b"package p;\n\nclass Before {\n    void kept() {}\n}\n\nclass Bad { void f() { int x = ".to_vec();
    text.extend(std::iter::repeat_n(b'(', parens));
    text
}

#[test]
fn one_deadline_bounds_parse_and_query_and_keeps_what_came_before() {
    let lang = languages::by_name("java").expect("java");
    let timeout = std::time::Duration::from_millis(300);
    let mut reader = crate::extract::Reader::new(lang, timeout).expect("a reader");
    let started = std::time::Instant::now();
    let facts = reader.read(&pathological_java(150_000));
    let took = started.elapsed();
    // The query stops at the deadline (with slack for a loaded machine), not minutes later.
    assert!(took < timeout * 20, "took {took:?}");
    let facts = match facts {
        Ok(f) => f,
        // The parse itself may use the deadline up: skipped, and said so.
        Err(e) => {
            assert!(e.to_string().contains("parsing ran out of time"), "{e}");
            return;
        }
    };
    let cut = facts.cut.expect("the query was cut at the deadline");
    assert!(cut.line >= 7, "{cut:?}");
    let names: Vec<&str> = facts.defs.iter().map(|d| d.name()).collect();
    assert!(names.contains(&"Before") && names.contains(&"kept"), "{names:?}");
}

#[test]
fn a_cut_file_is_named_in_the_report() {
    let dir = std::env::temp_dir().join(format!("signpost-cut-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a dir");
    let dir = std::fs::canonicalize(&dir).expect("canonical");
    std::fs::write(dir.join("Bad.java"), pathological_java(150_000)).expect("written");
    let lang = languages::by_name("java").expect("java");
    let opts = crate::Options { parse_timeout: std::time::Duration::from_millis(300), ..Default::default() };
    let indexed = crate::index(&dir, lang, &[dir.join("Bad.java")], &opts);
    let notes = indexed.report.notes.join("\n");
    assert!(notes.contains("Bad.java: ") && notes.contains("out of time"), "{notes}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lines_are_counted_alike_for_lf_crlf_and_lone_cr() {
    let lang = languages::by_name("java").expect("java");
    let lf = "package p;\n\nclass A {\n    void m() {}\n}\n";
    for text in [lf.to_owned(), lf.replace('\n', "\r\n"), lf.replace('\n', "\r")] {
        let mut reader = crate::extract::Reader::new(lang, std::time::Duration::from_secs(5)).expect("a reader");
        let facts = reader.read(text.as_bytes()).expect("read");
        let lines: Vec<(String, u32)> = facts.defs.iter().map(|d| (d.name().to_owned(), d.name_span.start.0)).collect();
        assert_eq!(lines, [("A".to_owned(), 2), ("m".to_owned(), 3)], "{text:?}");
        assert_eq!(facts.lines, 5, "{text:?}");
    }
}

/// Every edge of `g` as `from -TYPE-> to`, with `(ambiguous)` after the
/// ones marked so.
fn edges_marked(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for n in g.iter() {
        for t in g.edge_types() {
            let key = g.parse_edge_key(t).ok().flatten().expect("a base type");
            for m in g.walk(n.ix(), Direction::Out, &key) {
                let how = g.step_derivation(n.ix(), Direction::Out, &key, m);
                let mark = if how == Some(signpost_graph::Derivation::Ambiguous) { " (ambiguous)" } else { "" };
                out.push(format!("{} -{t}-> {}{mark}", label(g, n.ix()), label(g, m)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn java_overloads_by_type_outside_receivers_imports_and_constructors_with_decoys() {
    let (g, report) = graph_of(&fixture_dir("rules/java"), "java");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            // Told apart by the argument's type: a typed int, a typed array, a literal.
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:19",
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:23",
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:15",
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:31",
            // `this(…)` and `super(…)`.
            "com.example.app.Document.<init>:12 -CALLS-> com.example.app.Document.<init>:16",
            "com.example.app.Report.<init>:7 -CALLS-> com.example.app.Document.<init>:16",
            // A field initializer's call.
            "com.example.app.Document.TITLE -CALLS-> com.example.text.Texts.render:15",
            // The imported Builder, not the nested one.
            "com.example.app.Document -IMPLEMENTS-> com.example.build.Builder",
            "com.example.app.Report.blank:15 -CALLS-> com.example.text.Texts.isWhitespace:7",
            // Types unknown: each overload of one argument, marked.
            "com.example.app.Report.unknown:11 -CALLS-> com.example.text.Texts.render:11 (ambiguous)",
            "com.example.app.Report.unknown:11 -CALLS-> com.example.text.Texts.render:15 (ambiguous)",
            // A class's overloads and its inherited ones, told apart by type.
            "com.example.levels.Derived.fill:11 -CALLS-> com.example.levels.Base.put:4",
            "com.example.levels.Derived.fill:11 -CALLS-> com.example.levels.Derived.put:9",
        ],
        &[
            // No call of `put` is ambiguous.
            "com.example.levels.Derived.fill:11 -CALLS-> com.example.levels.Base.put:4 (ambiguous)",
            "com.example.levels.Derived.fill:11 -CALLS-> com.example.levels.Derived.put:9 (ambiguous)",
            // `Character.isWhitespace` is the JDK's.
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.isWhitespace:7",
            // Arrays of another element type, a two-argument overload.
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:27",
            "com.example.app.Document.show:25 -CALLS-> com.example.text.Texts.render:11",
            "com.example.app.Document -IMPLEMENTS-> com.example.app.Document.Builder",
            "com.example.app.Document -EXTENDS-> com.example.app.Document.Builder",
            "com.example.text.Texts.joinOne:44 -CALLS-> com.example.text.Texts.join:36",
            "com.example.text.Texts.joinOne:44 -CALLS-> com.example.text.Texts.join:36 (ambiguous)",
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:51",
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:53",
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:51 (ambiguous)",
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:53 (ambiguous)",
            // A static method hides, it does not override; an override is of
            // the overload its parameters take.
            "com.example.style.JsonStyle.of:5 -OVERRIDES-> com.example.style.Style.of:4",
            "com.example.style.JsonStyle.append:9 -OVERRIDES-> com.example.style.Style.append:6",
            // Importing Style does not import its nested Builder.
            "com.example.style.Uses -IMPLEMENTS-> com.example.style.Style.Builder",
        ],
    );
    assert_edges(
        &all,
        &[
            "com.example.style.JsonStyle.append:9 -OVERRIDES-> com.example.style.Style.append:8",
            "com.example.style.Uses -IMPLEMENTS-> com.example.build.Builder",
            // In an anonymous class's body, the members of the type it extends.
            "com.example.style.Styles.QUOTED -CALLS-> com.example.style.Style.setUseClassName:10",
            "com.example.style.Styles.append:15 -OVERRIDES-> com.example.style.Style.append:6",
            // A variadic parameter takes one element too.
            "com.example.text.Texts.joinOne:44 -CALLS-> com.example.text.Texts.join:40",
            // A cast, an array's element.
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:49",
            "com.example.text.Texts.pickAll:57 -CALLS-> com.example.text.Texts.pick:55",
            // A member imported by name (`import static`).
            "com.example.style.Styles.blank:18 -CALLS-> com.example.text.Texts.isWhitespace:7",
        ],
        &[],
    );
    assert!(report.counts.calls_ambiguous >= 1, "{:?}", report.counts);
}

#[test]
fn go_imports_method_sets_promotion_assertions_and_recursion_with_decoys() {
    let (g, _) = graph_of(&fixture_dir("rules/go"), "go");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/store.Open:40",
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/store.Store.Put:6",
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/store.Base.Name:13",
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/store.Walk:45",
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/app.handler:19",
            "example.com/rules/v2/store.Walk:45 -CALLS-> example.com/rules/v2/store.Walk:45",
            "example.com/rules/v2/store.Memory -IMPLEMENTS-> example.com/rules/v2/store.Store",
        ],
        &[
            "example.com/rules/v2/app.Run:10 -CALLS-> example.com/rules/v2/files.Open:4",
            "example.com/rules/v2/store.Cache -IMPLEMENTS-> example.com/rules/v2/store.Store",
        ],
    );
}

#[test]
fn c_and_cpp_vendored_namesakes_export_macros_macro_bodies_and_nested_namespaces() {
    let (g, _) = graph_of(&fixture_dir("rules/c"), "cpp");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            "serve:3 -CALLS-> dictFind:4",
            "miniLookup:6 -CALLS-> dictFind:2",
            // Through the macro, to what it expands to.
            "lookupTwice:10 -CALLS-> dictFind:4",
            // Through a header's macro, from another file.
            "serveAgain:7 -CALLS-> dictFind:4",
            // A class declared with an export macro, and its base.
            "lib.console_sink -EXTENDS-> lib.sink",
            "lib.console_sink.log:21 -CALLS-> lib.detail.clamp:7",
            // What a macro's block calls, its function calls.
            "array_sum:7 -CALLS-> number_of:17",
            // A function returning a pointer to a pointer.
            "after_render:51 -CALLS-> names_of:21",
            // Past a conditional that opens a brace another one closes.
            "render:25 -CALLS-> number_of:17",
            "after_render:51 -CALLS-> render:25",
            // A conditional in an initializer: read as code.
            "scaled:56 -CALLS-> number_of:17",
            "use_scaled:68 -CALLS-> scaled:56",
        ],
        &["serve:3 -CALLS-> dictFind:2", "miniLookup:6 -CALLS-> dictFind:4"],
    );
    assert_eq!(kind(&g, "lib.sink"), "class");
    assert_eq!(kind(&g, "array_sum.array_foreach"), "");
}

#[test]
fn csharp_generic_arity_partial_classes_and_constructor_ids() {
    let (g, report) = graph_of(&fixture_dir("rules/csharp"), "csharp");
    assert_eq!(report.syntax_errors, 0, "{report:?}");
    let all = edges_marked(&g);
    const NS: &str = "Acme.Validation";
    let e = |s: &str| s.replace("NS", NS);
    let want: Vec<String> = [
        // `IValidator` and `IValidator<T>` are two types, each with its own implementors.
        "NS.AnyValidator -IMPLEMENTS-> NS.IValidator",
        "NS.OrderValidator -IMPLEMENTS-> NS.IValidator`1",
        "NS.IValidator`1 -EXTENDS-> NS.IValidator",
        // The same, each in a file of its own: the header's name finds the
        // file's own type first, which it cannot mean.
        "NS.ICommand`1 -EXTENDS-> NS.ICommand",
        "NS.Result`1 -EXTENDS-> NS.Result",
        "NS.Runner.Run:35 -CALLS-> NS.IValidator.Validate:5",
        "NS.Runner.Run:35 -CALLS-> NS.Result`1.constructor:30",
        // A partial class's halves are one type.
        "NS.Runner.Run:35 -CALLS-> NS.Ledger.Post:6",
        "NS.Runner.Run:35 -CALLS-> NS.Ledger.Close:5",
        "NS.Ledger.Close:5 -CALLS-> NS.Ledger.Post:6",
        "NS.Ledger -IMPLEMENTS-> NS.IValidator",
        // An overload in the other part, told apart by its argument count.
        "NS.Ledger.Settle:8 -CALLS-> NS.Ledger.Post:7",
        // Read past a directive between attributes and their member.
        "NS.Casing.Title:13 -CALLS-> NS.Casing.Lower:11",
        // Extension methods of built-in types, on a parameter and on a
        // cast; a `var` typed by what the method it calls returns.
        "NS.Words.Use:15 -CALLS-> NS.Words.Shout:12",
        "NS.Words.Spell:14 -CALLS-> NS.Words.Spell:13",
        "NS.Words.Use:15 -CALLS-> NS.IFormatter.Unit:3",
        // A subclass's overload that cannot take the call (a string for
        // its bool) leaves it to the base class's; one that can takes it.
        "NS.Recipient.SetProperty:14 -CALLS-> NS.Observable.SetProperty:5",
        "NS.Recipient.Count:19 -CALLS-> NS.Recipient.SetProperty:14",
        "NS.Recipient.Count:19 -CALLS-> NS.Observable.SetProperty:5",
        // A field declared in the other part of a partial class.
        "NS.Ledger.Record:10 -CALLS-> NS.Journal.Write:12",
        // Default values and `params` counted: the overload whose
        // parameters take an enum and fewer arguments than it declares; a
        // `params` array's elements; none given, the one that needs none.
        "NS.Numbers.ToWords:26 -CALLS-> NS.Numbers.ToWords:31",
        "NS.Numbers.All:37 -CALLS-> NS.Numbers.Join:33",
        "NS.Numbers.Short:39 -CALLS-> NS.Numbers.ToWords:29",
        // Strings from the standard library's members, a LINQ lambda's
        // parameter; an extension called without a receiver.
        "NS.Humanizing.Dehumanize:12 -CALLS-> NS.Humanizing.Humanize:8",
        "NS.Humanizing.Named:19 -CALLS-> NS.Humanizing.Humanize:8",
        "NS.EnumWords.Say:36 -CALLS-> NS.EnumWords.Say:38",
        "NS.EnumWords.Say:40 -CALLS-> NS.EnumWords.Say:42",
        "NS.EnumWords.Say:42 -CALLS-> NS.EnumWords.Say:38",
        // An indexer calling on `this`; a method's parameter past a local
        // function's namesake; a type parameter bounded by a class.
        "NS.Grouped.this:52 -CALLS-> NS.Grouped.Find:54",
        "NS.Grouping.Insert:63 -CALLS-> NS.Grouped.Find:54",
        "NS.Tasks.Monitor:78 -CALLS-> NS.Tasks.Awaitable:74",
    ]
    .iter()
    .map(|s| e(s))
    .collect();
    let never: Vec<String> = [
        "NS.OrderValidator -IMPLEMENTS-> NS.IValidator",
        "NS.AnyValidator -IMPLEMENTS-> NS.IValidator`1",
        "NS.Result -EXTENDS-> NS.Result",
        "NS.Ledger.Settle:8 -CALLS-> NS.Ledger.Post:6",
        "NS.Ledger.Close:5 -CALLS-> NS.Ledger.Post:7",
        // `#if false`'s code is not read.
        "NS.Casing.Dead:15 -CALLS-> NS.Casing.Lower:11",
        // `(long)number` is a long: not the int overload itself.
        "NS.Words.Spell:14 -CALLS-> NS.Words.Spell:14",
        "NS.Recipient.SetProperty:14 -CALLS-> NS.Recipient.SetProperty:14",
        // An enum is no `IFormatter`; three strings are no `int`.
        "NS.Numbers.ToWords:26 -CALLS-> NS.Numbers.ToWords:29",
        "NS.Numbers.All:37 -CALLS-> NS.Numbers.Join:35",
        "NS.Numbers.Short:39 -CALLS-> NS.Numbers.ToWords:31",
        "NS.Humanizing.Dehumanize:12 -CALLS-> NS.Counting.Humanize:28",
        "NS.Humanizing.Named:19 -CALLS-> NS.Counting.Humanize:28",
        "NS.EnumWords.Say:36 -CALLS-> NS.EnumWords.Say:42",
        "NS.EnumWords.Say:40 -CALLS-> NS.EnumWords.Say:38",
        "NS.EnumWords.Say:42 -CALLS-> NS.EnumWords.Say:42",
        "NS.Grouped.this:52 -CALLS-> NS.Grouping.Find:59",
        "NS.Grouped -CALLS-> NS.Grouped.Find:54",
    ]
    .iter()
    .map(|s| e(s))
    .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&all, &want, &never);
    // Spelled as scip-dotnet spells them, where it spells them apart.
    let symbols = scip_symbols(&fixture_dir("rules/csharp"), "csharp");
    for s in [
        "scip-dotnet nuget . . Acme/Validation/IValidator#",
        "scip-dotnet nuget . . Acme/Validation/`IValidator``1`#",
        "scip-dotnet nuget . . Acme/Validation/`Result``1`#",
        "scip-dotnet nuget . . Acme/Validation/AnyValidator#",
        "scip-dotnet nuget . . Acme/Validation/Ledger#Post().",
    ] {
        assert!(symbols.iter().any(|have| have == s), "{s} in {symbols:#?}");
    }
    assert!(symbols.iter().any(|s| s.ends_with("`Result``1`#`.ctor`().")), "{symbols:#?}");
}

#[test]
fn rust_impl_of_an_imported_type_functions_as_values_and_a_namesake_of_a_std_wrapper_with_decoys() {
    let (g, _) = graph_of(&fixture_dir("rules/rust"), "rust");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            // `impl Error` in `error.rs` is the crate root's `Error`.
            "rules::run:7 -CALLS-> rules::error::Error::construct:21",
            // Stored in a struct's fields: turbofished, and by name.
            "rules::error::Error::construct:21 -CALLS-> rules::error::object_drop:8",
            "rules::error::Error::construct:21 -CALLS-> rules::error::describe:10",
            // The project's own `Ref`, though the standard library has one.
            "rules::ptr::object_ref:16 -CALLS-> rules::ptr::Ref<'a, T>::cast:7",
            "rules::ptr::object_ref:16 -CALLS-> rules::ptr::Ref<'a, T>::as_ptr:11",
            // A field's type and a struct literal named through a module.
            "rules::builder::Builder::limit:9 -CALLS-> rules::parse::Builder::limit:6",
            "rules::builder::make:20 -CALLS-> rules::parse::Set::go:16",
            // Through a function pointer's result, a match arm and the `let`
            // bound to the match.
            "rules::vtable::downcast:12 -CALLS-> rules::ptr::Ref<'a, T>::cast:7",
            "rules::vtable::downcast:12 -CALLS-> rules::ptr::Ref<'a, T>::as_ptr:11",
        ],
        &[
            "rules::error::report:14 -CALLS-> rules::code:12",
            "rules::error::Error::construct:21 -CALLS-> rules::code:12",
            // `use std::cell::Ref`: the standard library's.
            "rules::cell::borrowed:4 -CALLS-> rules::ptr::Ref<'a, T>::as_ptr:11",
            // The file's own namesakes.
            "rules::builder::Builder::limit:9 -CALLS-> rules::builder::Builder::limit:9",
            "rules::builder::make:20 -CALLS-> rules::builder::Set::go:17",
            "rules::vtable::downcast:12 -CALLS-> rules::vtable::as_ptr:23",
        ],
    );
    // Impls spelled as rust-analyzer spells them.
    let symbols = scip_symbols(&fixture_dir("rules/rust"), "rust");
    for s in [
        "aliased/impl#[Oops][Error]description().",
        "aliased/impl#[Oops][`AsRef<dyn Error + 'static>`]as_ref().",
        "aliased/local/impl#[Oops][StdError]own().",
    ] {
        assert!(symbols.iter().any(|have| have.ends_with(s)), "{s} in {symbols:#?}");
    }
}

#[test]
fn csharp_usings_aliases_static_imports_and_nullable_types() {
    let (g, _) = graph_of(&fixture_dir("rules/csusing"), "csharp");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            // `using Toolkit.Core;` wins over a top-level namesake.
            "App.Ui.Button -EXTENDS-> Toolkit.Core.Widget",
            "App.Ui.Button.Draw:9 -OVERRIDES-> Toolkit.Core.Widget.Draw:5",
            // `using W = Toolkit.Core.Widget;`.
            "App.Ui.Panel -EXTENDS-> Toolkit.Core.Widget",
            // `IStore? store`: the overloads told apart by their arguments.
            "App.Ui.Button.Save:11 -CALLS-> Toolkit.Core.IStore.Put:10",
            "App.Ui.Button.Save:11 -CALLS-> Toolkit.Core.IStore.Put:11",
            // `using static Toolkit.Core.Helpers;`.
            "App.Ui.Button.Save:11 -CALLS-> Toolkit.Core.Helpers.Twice:16",
            // An extension method, called on a value of the type it extends.
            "App.Ui.Saver.Keep:25 -CALLS-> Toolkit.Core.StoreExtensions.PutAll:22",
            // A generated part (`*.g.cs`, `<auto-generated/>`) checked in is
            // read: an array goes to the overload of arrays, a cast to
            // `ICollection<T>` to its own.
            "App.Checks.Guard.HasSize:9 -CALLS-> App.Checks.Guard.ThrowHelper.ForSize:9",
            "App.Checks.Guard.HasSize:14 -CALLS-> App.Checks.Guard.ThrowHelper.ForSize:10",
        ],
        &[
            "App.Ui.Button -EXTENDS-> Widget",
            "App.Ui.Button.Draw:9 -OVERRIDES-> Widget.Draw:5",
            // A receiver of unknown type: the one method of that name only
            // if it takes as many arguments.
            "App.Ui.Saver.Drop:27 -CALLS-> App.Ui.Saver.Flush:26",
            "App.Checks.Guard.HasSize:9 -CALLS-> App.Checks.Guard.ThrowHelper.ForSize:10",
        ],
    );
}

#[test]
fn ruby_lexical_nesting_compact_reopenings_and_mixins() {
    let (g, _) = graph_of(&fixture_dir("rules/ruby"), "ruby");
    assert_eq!(kind(&g, "Shop.Gift"), "class", "`class Shop::Gift` is Shop's");
    assert_eq!(kind(&g, "Gift"), "");
    assert_eq!(kind(&g, "Tool.Runner"), "class", "`class Tool::Runner` in a class Tool is Tool's");
    assert_eq!(kind(&g, "Runner"), "");
    assert_edges(
        &edges_marked(&g),
        &[
            // `class Item < Base` in `Shop::Admin`: Shop::Base, by nesting.
            "Shop.Admin.Item -EXTENDS-> Shop.Base",
            "Shop.Admin.Item.store:20 -CALLS-> Shop.Base.save:4",
            // `include Sortable`: a mixin, read as a supertype (EXTENDS).
            "Shop.Admin.Item -EXTENDS-> Shop.Sortable",
            "Shop.Gift -EXTENDS-> Shop.Base",
            "Shop.Gift.wrap:12 -CALLS-> Shop.Base.save:4",
            // `module Shop` reopened in another file: one namespace.
            "Shop.Report -EXTENDS-> Shop.Base",
            "Shop.Report.print:4 -CALLS-> Shop.Base.save:4",
            // A module extending a module; a class body's call, its
            // keyword arguments one hash (the class method, not the
            // instance method of that name).
            "Guard.Common -EXTENDS-> Guard.Loader",
            "Guard.Strict -CALLS-> Guard.Base.default_options:13",
            // A module's body runs: what it calls, the module calls (a
            // module method called bare in its own body; another's, through
            // a constant found by nesting, in a reopening elsewhere).
            "Tool.Delegator -CALLS-> Tool.Delegator.delegate:27",
            "Tool -CALLS-> Tool.Delegator.delegate:27",
            // `self` in a class body, `self.class`, the class's name: the
            // class method; an instance: the instance method.
            "Tool.App -CALLS-> Tool.App.settings:35",
            "Tool.App.settings:39 -CALLS-> Tool.App.settings:35",
            "Tool.App.outside:45 -CALLS-> Tool.App.settings:35",
            "Tool.App.outside:45 -CALLS-> Tool.App.settings:39",
            // `class Tool::Runner` where Tool is a class reopened in several
            // files; `Tool::Util`, a module in it, and its `class << self`
            // method; `include Tool::Base` where Base is in another part.
            "Tool.Runner -EXTENDS-> Tool",
            "Tool.Runner.root:12 -CALLS-> Tool.Util.root:14",
            "Tool -EXTENDS-> Tool.Base",
            // `extend Loader` in one part of a module, a bare call in
            // another.
            "Tool.Plugins -EXTENDS-> Tool.Loader",
            "Tool.Plugins -CALLS-> Tool.Loader.autoload:21",
        ],
        &[
            // Another module's method is no bare call's elsewhere (Rack's
            // `autoload` is `Module#autoload`).
            "Rack.Guarded -CALLS-> Tool.Loader.autoload:21",
            // The ambiguous pair, and `self.class` in a module's method,
            // whose class is not known.
            "Tool.App -CALLS-> Tool.App.settings:39",
            "Tool.App.settings:39 -CALLS-> Tool.App.settings:39",
            "Tool.Base.settings:7 -CALLS-> Tool.Base.settings:3",
            "Shop.Admin.Item -EXTENDS-> Other.Base",
            "Shop.Gift.wrap:12 -CALLS-> Other.Base.save:4",
            "Shop.Admin.Item.store:20 -CALLS-> Other.Base.save:4",
            "Shop.Admin.Item.rename:25 -CALLS-> Shop.Base.save:4",
            "Shop.Admin.Item.keep:29 -CALLS-> Shop.Base.save:4",
            "Shop.Report -EXTENDS-> Other.Base",
            "Guard.Strict -CALLS-> Guard.Base.default_options:17",
        ],
    );
}

#[test]
fn php_traits_used_in_a_class() {
    // A class related to a trait IMPLEMENTS it, as Rust's types do.
    let (g, _) = graph_of(&fixture_dir("rules/php"), "php");
    assert_edges(
        &edges_marked(&g),
        &[
            "Acme.Http.Client -IMPLEMENTS-> Acme.Log.Loggable",
            "Acme.Http.Client.send:11 -CALLS-> Acme.Log.Loggable.log:7",
            // A promoted constructor property's type, read through it.
            "Acme.Log.Processor.__invoke:9 -CALLS-> Acme.Log.Level.isLowerThan:9",
            // Docblock types where the code writes none or `array`: a
            // parameter's `@param list<\Acme\Log\Handler>`, a property's
            // `@var Handler[]` and `@var list<Level>` (without a written
            // type), a method's `@return Handler[]`, an assignment's
            // `@var Handler $one`, each through `foreach`.
            "Acme.Log.Group.__construct:22 -CALLS-> Acme.Log.Handler.handle:7",
            "Acme.Log.Group.handle:31 -CALLS-> Acme.Log.Handler.handle:7",
            "Acme.Log.Group.lowest:39 -CALLS-> Acme.Log.Level.isLowerThan:9",
            "Acme.Log.Group.first:52 -CALLS-> Acme.Log.Handler.handle:7",
            "Acme.Log.Group.one:59 -CALLS-> Acme.Log.Handler.handle:7",
        ],
        // A docblock naming another variable, a plain `array`: nothing.
        &[
            "Acme.Log.Group.decoy:66 -CALLS-> Acme.Log.Handler.handle:7",
            "Acme.Log.Group.decoy:66 -CALLS-> Acme.Log.Group.handle:31",
        ],
    );
}

/// Every fixture, every language in it: no two different callables share
/// a symbol (one id, one definition). A callable defined twice under one
/// symbol is one entity by its language's rules, with the same parameters
/// (Kotlin's `expect` and `actual`); C's and C++'s declaration and
/// definition apart are paired by the resolver and not checked here.
#[test]
fn no_two_definitions_share_an_id_in_any_fixture() {
    let root = fixture_dir("");
    let mut dirs: Vec<PathBuf> = Vec::new();
    for group in std::fs::read_dir(&root).expect("fixtures") {
        let group = group.expect("an entry").path();
        if group.file_name().is_some_and(|n| n == "inference" || n == "rules") {
            dirs.extend(std::fs::read_dir(&group).expect("a group").map(|e| e.expect("an entry").path()));
        } else {
            dirs.push(group);
        }
    }
    dirs.retain(|d| d.is_dir());
    assert!(dirs.len() >= 20, "{dirs:?}");
    // A signature's parameters: from its first `(` to its last `)`.
    let params = |sig: &str| match (sig.find('('), sig.rfind(')')) {
        (Some(a), Some(b)) if a < b => sig[a..=b].split_whitespace().collect::<Vec<_>>().join(" "),
        _ => String::new(),
    };
    let mut checked = 0;
    for dir in dirs {
        let (found, _) = sources(&dir, &WalkOptions::default());
        for (lang, files) in found {
            if matches!(lang.name, "c" | "cpp") {
                continue;
            }
            let index = crate::index(&dir, lang, &files, &crate::Options::default()).index;
            let mut defined: std::collections::BTreeMap<&str, Vec<(String, String)>> = Default::default();
            for doc in &index.documents {
                for info in doc.symbols.iter().filter(|i| i.symbol.ends_with(").")) {
                    let sig = info.signature_documentation.as_ref().map_or("", |s| s.text.as_str());
                    defined.entry(&info.symbol).or_default().push((doc.relative_path.clone(), params(sig)));
                }
            }
            checked += defined.len();
            let clash: Vec<_> = defined.iter().filter(|(_, at)| at.iter().any(|(_, p)| *p != at[0].1)).collect();
            assert!(clash.is_empty(), "{} ({}): one id, different definitions: {clash:#?}", dir.display(), lang.name);
        }
    }
    assert!(checked > 200, "{checked} callables");
}

#[test]
fn rust_macro_rules_expanded_std_macros_read_and_cfg_alternatives_with_decoys() {
    let (g, report) = graph_of(&fixture_dir("rules/macros"), "rust");
    assert_eq!((report.syntax_errors, report.macros), (0, (4, 0)), "{report:?}");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            // Methods a macro generates in an impl, named where they are written.
            "macros::Info -DECLARES-> macros::Info::is_utf8:26",
            "macros::Info -DECLARES-> macros::Info::set_empty:27",
            // Calls in `format!`'s arguments, with their receivers.
            "macros::Info::summary:29 -CALLS-> macros::Info::is_utf8:26",
            "macros::Info::summary:29 -CALLS-> macros::helper:34",
            // Test functions generated by a macro invoking itself and another.
            "macros -DECLARES-> macros::one_literal:69",
            "macros::one_literal:69 -CALLS-> macros::parse:42",
            "macros::one_literal:69 -CALLS-> macros::escape:38",
            "macros::no_literal:70 -CALLS-> macros::Info::is_empty:27",
            // In `assert_eq!`: the method, and the free function of the same name.
            "macros::run:90 -CALLS-> macros::Info::is_empty:27",
            "macros::run:90 -CALLS-> macros::other::is_empty:3",
            // The build with the crate's default features.
            "macros::run:90 -CALLS-> macros::speed:78",
            "macros::speed:78 -CALLS-> macros::fast_path:86",
            // A value of a type parameter a trait bounds: the trait's method.
            "macros::visit:107 -CALLS-> macros::Visitor::start:97",
            "macros::walk:111 -CALLS-> macros::Visitor::start:97",
            // What a variant's pattern binds: the variant's field, of the
            // type `Info`, not the variant `Info` itself.
            "macros::describe:123 -CALLS-> macros::Info::summary:29",
            // `use super::*` in an inline module: its parent's names.
            "macros::other::tests::empty:12 -CALLS-> macros::other::is_empty:3",
            // `impl … for &'a Info`: Info's, `self` an Info.
            "macros::&'a Info::into_iter:134 -CALLS-> macros::Info::summary:29",
        ],
        &[
            "macros::Info::summary:29 -CALLS-> macros::other::is_empty:3",
            "macros::speed:74 -CALLS-> macros::slow_path:82",
            "macros::run:90 -CALLS-> macros::speed:74",
            "macros::visit:107 -CALLS-> macros::Clock::start:104",
            "macros::other::tests::empty:12 -CALLS-> macros::helper:34",
        ],
    );
    assert_eq!(kind(&g, "macros::Info::is_utf8"), "method");
}

#[test]
fn typescript_and_python_overloads_private_members_and_local_objects_with_decoys() {
    let (g, report) = graph_of(&fixture_dir("rules/overloads-ts"), "typescript");
    assert_eq!(report.syntax_errors, 0, "{report:?}");
    let all = edges_marked(&g);
    let s = "src.server.ts";
    let want: Vec<String> = [
        // Overload signatures and their implementation: one function, at the first.
        "@.createServer:7 -CALLS-> @.listen:13",
        "@.Server -DECLARES-> @.Server.close:24",
        // `this.#drain()`: the private member, not the public `drain`.
        "@.Server.close:24 -CALLS-> @.Server.#drain:30",
        // An object literal's method inside a function: the function calls.
        "@.withStorage:39 -CALLS-> @.sleep:17",
        // `import * as util`: the module's function, not this file's namesake.
        "@.serverName:54 -CALLS-> src.util.ts.slugify:1",
        // `import Engine from "./core"`: that module's default export.
        "@.boot:58 -CALLS-> src.core.ts.Engine.start:2",
        // Through an index file's re-exports: `export *`, `export { boot }`.
        "src.app.ts.run:3 -CALLS-> src.util.ts.Engine.start:12",
        "src.app.ts.run:3 -CALLS-> @.boot:58",
        // A re-export under a new name (`export { serverName as nameOfServer }`).
        "src.app.ts.run:3 -CALLS-> @.serverName:54",
        // A shorthand property's read is the function's around it.
        "@.withReplacer:63 -CALLS-> @.slugify:50",
    ]
    .iter()
    .map(|e| e.replace('@', s))
    .collect();
    let never: Vec<String> = [
        "@.Server -DECLARES-> @.Server.close:25",
        "@.Server -DECLARES-> @.Server.close:26",
        "@.Server.close:24 -CALLS-> @.Server.drain:36",
        "@.serverName:54 -CALLS-> @.slugify:50",
        // A runtime global, not the project's namesake.
        "@.sleep:17 -CALLS-> src.util.ts.setTimeout:6",
        "@.boot:58 -CALLS-> src.util.ts.Engine.start:12",
        "src.app.ts.run:3 -CALLS-> src.core.ts.boot:6",
    ]
    .iter()
    .map(|e| e.replace('@', s))
    .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&all, &want, &never);
    assert!(!all.iter().any(|e| e.contains(".getItem") && e.contains("-CALLS->")), "{all:?}");

    let (g, _) = graph_of(&fixture_dir("rules/overloads-py"), "python");
    let all = edges_marked(&g);
    assert_edges(
        &all,
        &[
            // Two `@overload` stubs and the implementation: one function, at the first stub.
            "shop.jar.jar_from_dict:14 -CALLS-> shop.jar.Jar.set_cookie:5",
            "shop.jar.jar_from_dict:14 -CALLS-> shop.jar.create_cookie:9",
            "shop.jar.merge:29 -CALLS-> shop.jar.jar_from_dict:14",
            // Decorators are their function's: `@cli.command()` is a use of `cli` by `push`.
            "shop.jar.cli:38 -CALLS-> shop.jar.group:33",
            "shop.jar.push:43 -CALLS-> shop.jar.cli:38",
            "shop.jar.push:43 -CALLS-> shop.jar.merge:29",
            // A nested definition is in its function's scope, before a builtin.
            "shop.jar.local:52 -CALLS-> shop.jar.local.open:53",
        ],
        &[
            "shop.jar.merge:29 -CALLS-> shop.jar.jar_from_dict:14 (ambiguous)",
            // A builtin, not the project's namesake in another module.
            "shop.jar.read:47 -CALLS-> shop.files.open:4",
        ],
    );
    assert_eq!(g.iter().filter(|n| n.name() == "jar_from_dict").count(), 1);
}

#[test]
fn python_src_layout_relative_imports_decorated_functions_and_typed_splats_with_decoys() {
    let (g, report) = graph_of(&fixture_dir("rules/src-layout-py"), "python");
    assert_eq!(report.syntax_errors, 0, "{report:?}");
    let all = edges_marked(&g);
    let t = "tests.test_cli";
    let want: Vec<String> = [
        // `import kit` in a test is the project's `src/kit`, and `kit.group`
        // the function its `__init__` re-exports relatively.
        "@.cli:6 -CALLS-> src.kit.decorators.group:10",
        // `kit.echo` through `from .utils import echo as echo`.
        "@.sub:12 -CALLS-> src.kit.utils.echo:1",
        // `from kit import option` through `from .decorators import *`.
        "@.sub:12 -CALLS-> src.kit.decorators.option:21",
        // `cli` is what `@kit.group()` gives applied to it: a `Group`.
        "@.sub:12 -CALLS-> src.kit.core.Group.command:5",
        // `single` is what `@kit.decorators.command()` gives: a `Command`.
        "@.test_sub:21 -CALLS-> src.kit.core.Command.invoke:10",
        // `from . import utils`; typed `*args: str, **kwargs: str` take any number.
        "src.kit.decorators.group:10 -CALLS-> src.kit.utils.style:5",
    ]
    .iter()
    .map(|e| e.replace('@', t))
    .collect();
    let never: Vec<String> = [
        // The test module's own `echo` is no member of `kit`.
        "@.sub:12 -CALLS-> @.echo:25",
        // `cli` is a `Group`, not what the decorator's own name says.
        "@.sub:12 -CALLS-> src.kit.core.Command.command:13",
    ]
    .iter()
    .map(|e| e.replace('@', t))
    .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_edges(&all, &want, &never);
    // Spelled as scip-python spells them.
    let symbols = scip_symbols(&fixture_dir("rules/src-layout-py"), "python");
    let core = "scip-python python kit . `src.kit.core`/";
    for s in [
        // An annotated variable at the module's top level: twice.
        "HOOKS.HOOKS.",
        "PLAIN.",
        // In an `if` block: once.
        "Alias.",
        // A function nested in a method: the class's member.
        "Runner#step().",
        // Two of one name in one class: each under its method.
        "Runner#first().twice().",
        "Runner#second().twice().",
    ] {
        let s = format!("{core}{s}");
        assert!(symbols.contains(&s), "{s} in {symbols:#?}");
    }
}

/// Indexes `files` (path, text) of `lang` in a scratch directory on a
/// thread of its own, and fails, instead of hanging, when that takes more
/// than a few minutes: the shapes given here take well under a second.
fn indexed_within_minutes(name: &str, lang: &str, files: &[(String, String)]) -> (Graph, crate::Report) {
    let dir = std::env::temp_dir().join(format!("signpost-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a dir");
        std::fs::write(path, text).expect("written");
    }
    let dir = std::fs::canonicalize(&dir).expect("canonical");
    let (tx, rx) = std::sync::mpsc::channel();
    let (at, lang) = (dir.clone(), lang.to_owned());
    std::thread::spawn(move || {
        // The receiver gone (it gave up waiting): nothing to tell.
        let _ = tx.send(Box::new(graph_of(&at, &lang)));
    });
    let done = rx.recv_timeout(std::time::Duration::from_secs(300));
    let _ = std::fs::remove_dir_all(&dir);
    *done.unwrap_or_else(|_| panic!("{name}: indexing did not finish in 5 minutes"))
}

#[test]
fn namespaces_that_all_use_each_other_resolve_at_once() {
    // Thirty C# namespaces of four files, each file `using` all thirty,
    // naming types and calling methods no namespace defines. A `using` is
    // the file's own, never a name of its namespace: followed as a
    // re-export, each name no namespace defines fanned out as files ×
    // imports per hop (minutes for Newtonsoft.Json, whose 190k lines
    // stalled every language of a tree behind them).
    const N: usize = 30;
    let usings: String = (0..N).map(|k| format!("using N{k};\n")).collect();
    let mut files = Vec::new();
    for k in 0..N {
        for j in 0..4 {
            let class = format!(
                "{usings}namespace N{k}\n{{\n    public class C{k}x{j} : IMissing{j}\n    {{\n        public static void \
                 Make() {{ }}\n        public void Run() {{ Missing(); new Absent(); Gone.Away(); C{}x0.Make(); }}\n    \
                 }}\n}}\n",
                (k + 1) % N
            );
            files.push((format!("N{k}/C{k}x{j}.cs"), class));
        }
    }
    let (g, report) = indexed_within_minutes("usings", "csharp", &files);
    assert_eq!(report.files, N * 4);
    let all = edges(&g);
    assert_edges(&all, &["N0.C0x0.Run:36 -CALLS-> N1.C1x0.Make:35", "N29.C29x3.Run:36 -CALLS-> N0.C0x0.Make:35"], &[]);
}

#[test]
fn python_reexports_are_followed_once_each_through_cycles() {
    // Thirty packages whose `__init__` imports every package's names (a
    // cycle through all of them), one of which re-exports a function
    // from a module of its own: found through two hops, each package
    // visited once, however many paths lead to it.
    const N: usize = 30;
    let stars: String = (0..N).map(|k| format!("from p{k} import *\n")).collect();
    let mut files = Vec::new();
    for k in 0..N {
        let own = if k == 3 { "from p3.mod import f3\n" } else { "" };
        files.push((format!("p{k}/__init__.py"), format!("{stars}{own}")));
        files.push((format!("p{k}/mod.py"), format!("def f{k}():\n    return {k}\n")));
    }
    let calls: String = (0..40).map(|i| format!("    p0.missing{i}()\n")).collect();
    files.push(("main.py".into(), format!("import p0\n\n\ndef main():\n{calls}    return p0.f3()\n")));
    let (g, _) = indexed_within_minutes("reexports", "python", &files);
    let all = edges(&g);
    let found = all.iter().any(|e| e.starts_with("main.main:") && e.contains("-CALLS-> p3.mod.f3:"));
    assert!(found, "main() calls p3.mod.f3 through p0 and p3's re-exports: {all:#?}");
}

#[test]
fn an_index_written_as_it_is_made_is_the_index_encoded() {
    // Kotlin's `expect` documents come first; C++ writes members defined
    // apart once; Java is the plain case.
    for lang in ["kotlin", "cpp", "java", "go"] {
        let dir = fixture_dir(lang);
        let (l, files, _) = files_of(&dir, lang);
        let whole = crate::index(&dir, l, &files, &crate::Options::default());
        let mut streamed = Vec::new();
        let report = crate::index_to(&dir, l, &files, &crate::Options::default(), &mut streamed).expect("written");
        assert!(whole.index.documents.len() > 2, "{lang}");
        assert!(streamed == whole.to_bytes().expect("encodes"), "{lang}: the bytes differ");
        assert_eq!(
            (report.files, report.counts.calls_resolved),
            (whole.report.files, whole.report.counts.calls_resolved)
        );
    }
    // A writer that fails says so.
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let dir = fixture_dir("java");
    let (l, files, _) = files_of(&dir, "java");
    let err = crate::index_to(&dir, l, &files, &crate::Options::default(), &mut Full).expect_err("a full disk");
    assert!(err.to_string().contains("disk full"), "{err}");
}
