//! Hints as agents use them: catalogue entries triggered on the sample graph,
//! and a breadth-first walk that sends every actionable hint back verbatim.

use std::collections::{HashSet, VecDeque};

use serde_json::{Value, json};

use crate::common::Client;

/// Ids of sample-graph symbols by qualified name (or unique name).
async fn ids(client: &Client, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        let r = client.call("resolve", json!({"identifier": name})).await;
        assert_eq!(r.structured["status"], "one", "{name} must be unique: {}", r.text);
        out.push(r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned());
    }
    out
}

fn nb(id: &str, dir: &str, edge: &str) -> Value {
    json!({"ids": [id], "direction": dir, "edge_types": [edge]})
}

/// How a row judges a hint's arguments.
type Check = Box<dyn Fn(&Value) -> bool>;

/// One row of the hint catalogue: the call that triggers it, the state tag
/// it must end in, and the actionable hint it must offer (every matching
/// hint is then sent back verbatim and must succeed).
struct Row {
    /// The row's name, as docs/hints.md lists it.
    name: &'static str,
    tool: &'static str,
    args: Value,
    tag: &'static str,
    /// The hint's tool.
    hint: &'static str,
    /// Which arguments of a `hint` call count as the row's hint.
    check: Check,
}

/// A row whose advice is a note, not a call: an advisory hint of `hint`
/// with a reason, shown as a `note:` line.
struct Advisory {
    name: &'static str,
    tool: &'static str,
    args: Value,
    tag: &'static str,
    hint: &'static str,
}

/// Every row of the catalogue in docs/hints.md: the call that triggers it on
/// the sample graph, the tag, and the hint it must produce (tool + exact
/// args, or a predicate). Every matching actionable hint is then sent back
/// verbatim and must succeed.
#[tokio::test]
async fn every_catalogue_entry_fires_and_its_hint_works() {
    let client = Client::default().await;
    let [
        ctrl,
        place,
        route,
        topic,
        base_validate,
        stripe,
        charge,
        repo,
        base_entity,
        jpa,
        jpa_save,
        producer,
        publish,
        order,
        legacy,
        status_field,
        reserve,
    ] = <[String; 17]>::try_from(
        ids(
            &client,
            &[
                "OrderController",
                "OrderService.placeOrder",
                "GET /orders/{id}",
                "kafka:order-events",
                "BaseEntity.validate",
                "StripeClient",
                "StripeClient.charge",
                "OrderRepository",
                "BaseEntity",
                "JpaOrderRepository",
                "JpaOrderRepository.save",
                "OrderEventProducer",
                "OrderEventProducer.publish",
                "com.acme.shop.orders.Order",
                "LegacyPriceCalculator",
                "Order.status",
                "POST /inventory/reservations",
            ],
        )
        .await,
    )
    .unwrap_or_else(|v| panic!("{v:?}"));
    // `Order.status` (field) and `Order.Status` (enum) differ only in case:
    // the exact-case match wins.
    let r = client.call("describe", json!({"id": status_field})).await;
    assert_eq!(r.structured["record"]["kind"], "field");
    let exact = |v: Value| -> Check { Box::new(move |a| *a == v) };
    let rows: Vec<Row> = vec![
        // resolve
        Row {
            name: "resolve one: type → members",
            tool: "resolve",
            args: json!({"identifier": "OrderController"}),
            tag: "resolved",
            hint: "neighbors",
            check: exact(nb(&ctrl, "out", "DECLARES")),
        },
        Row {
            name: "resolve one → describe",
            tool: "resolve",
            args: json!({"identifier": "OrderController"}),
            tag: "resolved",
            hint: "describe",
            check: exact(json!({"id": ctrl})),
        },
        Row {
            name: "resolve one: method → callers",
            tool: "resolve",
            args: json!({"identifier": "OrderService.placeOrder"}),
            tag: "resolved",
            hint: "neighbors",
            check: exact(nb(&place, "in", "CALLS")),
        },
        Row {
            name: "resolve one: route → handler",
            tool: "resolve",
            args: json!({"identifier": "GET /orders/{id}"}),
            tag: "resolved",
            hint: "neighbors",
            check: exact(nb(&route, "in", "EXPOSES")),
        },
        Row {
            name: "resolve one: topic → publishers",
            tool: "resolve",
            args: json!({"identifier": "kafka:order-events"}),
            tag: "resolved",
            hint: "neighbors",
            check: exact(nb(&topic, "in", "PUBLISHES")),
        },
        Row {
            // Spelled as no symbol is: the fields `status` and the enum
            // `Status` are all candidates.
            name: "resolve many: narrow by kind",
            tool: "resolve",
            args: json!({"identifier": "STATUS"}),
            tag: "ambiguous",
            hint: "resolve",
            check: Box::new(|a| a["kind"] == "enum"),
        },
        Row {
            name: "resolve many: unique suffix",
            tool: "resolve",
            args: json!({"identifier": "validate"}),
            tag: "ambiguous",
            hint: "resolve",
            check: Box::new(|a| {
                a["identifier"].as_str().is_some_and(|i| i.ends_with(".validate") && i.matches('.').count() == 1)
            }),
        },
        Row {
            name: "resolve many: describe candidates",
            tool: "resolve",
            args: json!({"identifier": "placeOrder"}),
            tag: "ambiguous",
            hint: "describe",
            check: exact(json!({"id": place})),
        },
        Row {
            name: "resolve none → search",
            tool: "resolve",
            args: json!({"identifier": "NoSuchThing"}),
            tag: "not_found",
            hint: "search",
            check: exact(json!({"query": "NoSuchThing"})),
        },
        Row {
            name: "resolve none → drop kind",
            tool: "resolve",
            args: json!({"identifier": "placeOrder", "kind": "route"}),
            tag: "not_found",
            hint: "resolve",
            check: exact(json!({"identifier": "placeOrder"})),
        },
        Row {
            name: "resolve none → find last segment",
            tool: "resolve",
            args: json!({"identifier": "shop.Nope"}),
            tag: "not_found",
            hint: "find",
            check: exact(json!({"name": "Nope"})),
        },
        // describe
        Row {
            name: "describe: members' routes",
            tool: "describe",
            args: json!({"id": ctrl}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&ctrl, "out", "DECLARES.EXPOSES")),
        },
        Row {
            name: "describe: route handler",
            tool: "describe",
            args: json!({"id": route}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&route, "in", "EXPOSES")),
        },
        Row {
            name: "describe: clients of route",
            tool: "describe",
            args: json!({"id": reserve}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&reserve, "in", "TARGETS")),
        },
        Row {
            name: "describe: overriders",
            tool: "describe",
            args: json!({"id": base_validate}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&base_validate, "in", "OVERRIDES")),
        },
        Row {
            name: "describe: client targets",
            tool: "describe",
            args: json!({"id": charge}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&charge, "out", "TARGETS")),
        },
        Row {
            name: "describe: callers",
            tool: "describe",
            args: json!({"id": place}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&place, "in", "CALLS")),
        },
        Row {
            name: "describe: callees",
            tool: "describe",
            args: json!({"id": place}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&place, "out", "CALLS")),
        },
        Row {
            name: "describe: implementations",
            tool: "describe",
            args: json!({"id": repo}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&repo, "in", "IMPLEMENTS")),
        },
        Row {
            name: "describe: subclasses",
            tool: "describe",
            args: json!({"id": base_entity}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&base_entity, "in", "EXTENDS")),
        },
        Row {
            name: "describe: topics published",
            tool: "describe",
            args: json!({"id": publish}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&publish, "out", "PUBLISHES")),
        },
        Row {
            name: "describe: publishers",
            tool: "describe",
            args: json!({"id": topic}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&topic, "in", "PUBLISHES")),
        },
        Row {
            name: "describe: subscribers",
            tool: "describe",
            args: json!({"id": topic}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&topic, "in", "SUBSCRIBES")),
        },
        Row {
            name: "describe: members' topics",
            tool: "describe",
            args: json!({"id": producer}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&producer, "out", "DECLARES.PUBLISHES")),
        },
        Row {
            name: "describe: members",
            tool: "describe",
            args: json!({"id": stripe}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&stripe, "out", "DECLARES")),
        },
        Row {
            name: "describe: overridden method",
            tool: "describe",
            args: json!({"id": jpa_save}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&jpa_save, "out", "OVERRIDES")),
        },
        Row {
            name: "describe: interfaces",
            tool: "describe",
            args: json!({"id": jpa}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&jpa, "out", "IMPLEMENTS")),
        },
        Row {
            name: "describe: superclass",
            tool: "describe",
            args: json!({"id": order}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&order, "out", "EXTENDS")),
        },
        Row {
            name: "describe: referrers",
            tool: "describe",
            args: json!({"id": order}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&order, "in", "REFERENCES")),
        },
        Row {
            name: "describe: owner",
            tool: "describe",
            args: json!({"id": order}),
            tag: "record",
            hint: "neighbors",
            check: exact(nb(&order, "in", "DECLARES")),
        },
        Row {
            name: "describe: no edges → same file",
            tool: "describe",
            args: json!({"id": legacy}),
            tag: "record",
            hint: "find",
            check: Box::new(|a| a["path"].as_str().is_some_and(|p| p.ends_with("LegacyPriceCalculator.java"))),
        },
        // find
        Row {
            name: "find: next page",
            tool: "find",
            args: json!({"kind": "method", "limit": 5}),
            tag: "listing",
            hint: "find",
            check: exact(json!({"kind": "method", "limit": 5, "offset": 5})),
        },
        Row {
            name: "find: describe first",
            tool: "find",
            args: json!({"role": "controller"}),
            tag: "listing",
            hint: "describe",
            check: Box::new(|a| a["id"].is_string()),
        },
        Row {
            name: "find empty → search name",
            tool: "find",
            args: json!({"kind": "class", "name": "Nope"}),
            tag: "empty",
            hint: "search",
            check: exact(json!({"query": "Nope"})),
        },
        Row {
            name: "find empty → drop filter",
            tool: "find",
            args: json!({"kind": "class", "name": "Nope"}),
            tag: "empty",
            hint: "find",
            check: exact(json!({"kind": "class"})),
        },
        Row {
            name: "find empty, one filter → browse",
            tool: "find",
            args: json!({"path": "no/such/dir"}),
            tag: "empty",
            hint: "find",
            check: exact(json!({})),
        },
        // search
        Row {
            name: "search weak → find by kind",
            tool: "search",
            args: json!({"query": "ordctl"}),
            tag: "weak_results",
            hint: "find",
            check: Box::new(|a| a["name"] == "ordctl" && a["kind"].is_string()),
        },
        Row {
            name: "search → describe best",
            tool: "search",
            args: json!({"query": "refund"}),
            tag: "results",
            hint: "describe",
            check: Box::new(|a| a["id"].is_string()),
        },
        Row {
            name: "search → next page",
            tool: "search",
            args: json!({"query": "order", "limit": 3}),
            tag: "results",
            hint: "search",
            check: exact(json!({"query": "order", "limit": 3, "offset": 3})),
        },
        Row {
            name: "search empty, words → one word",
            tool: "search",
            args: json!({"query": "qqq zzzz"}),
            tag: "empty",
            hint: "search",
            check: exact(json!({"query": "zzzz"})),
        },
        Row {
            name: "search empty → find",
            tool: "search",
            args: json!({"query": "qqqzzz"}),
            tag: "empty",
            hint: "find",
            check: exact(json!({})),
        },
        // neighbors
        Row {
            name: "neighbors empty → other direction",
            tool: "neighbors",
            args: nb(&route, "out", "EXPOSES"),
            tag: "empty",
            hint: "neighbors",
            check: exact(nb(&route, "in", "EXPOSES")),
        },
        Row {
            name: "neighbors empty → edges it has",
            tool: "neighbors",
            args: nb(&legacy, "out", "CALLS"),
            tag: "empty",
            hint: "describe",
            check: exact(json!({"id": legacy})),
        },
        Row {
            name: "neighbors empty → available type",
            tool: "neighbors",
            args: nb(&topic, "in", "CALLS"),
            tag: "empty",
            hint: "neighbors",
            check: Box::new(|a| a["direction"] == "in" && a["edge_types"] != json!(["CALLS"])),
        },
        Row {
            name: "neighbors in CALLS → callers' callers",
            tool: "neighbors",
            args: nb(&place, "in", "CALLS"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["direction"] == "in" && a["edge_types"] == json!(["CALLS"])),
        },
        Row {
            name: "neighbors out CALLS → callees' callees",
            tool: "neighbors",
            args: nb(&place, "out", "CALLS"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["direction"] == "out" && a["edge_types"] == json!(["CALLS"])),
        },
        Row {
            name: "neighbors members' routes → clients",
            tool: "neighbors",
            args: nb(&ctrl, "out", "DECLARES.EXPOSES"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["TARGETS"]) && a["direction"] == "in"),
        },
        Row {
            name: "neighbors targets → handlers",
            tool: "neighbors",
            args: nb(&stripe, "out", "DECLARES.TARGETS"),
            tag: "neighbors",
            hint: "describe",
            check: Box::new(|a| a["id"].is_string()),
        },
        Row {
            name: "neighbors out TARGETS → handlers",
            tool: "neighbors",
            args: nb(&charge, "out", "TARGETS"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["EXPOSES"]) && a["direction"] == "in"),
        },
        Row {
            name: "neighbors handler → its callers",
            tool: "neighbors",
            args: nb(&route, "in", "EXPOSES"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["CALLS"]) && a["direction"] == "in"),
        },
        Row {
            name: "neighbors overriders → their callers",
            tool: "neighbors",
            args: nb(&base_validate, "in", "OVERRIDES"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["CALLS"])),
        },
        Row {
            name: "neighbors implementations → members",
            tool: "neighbors",
            args: nb(&repo, "in", "IMPLEMENTS"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["DECLARES"]) && a["direction"] == "out"),
        },
        Row {
            name: "neighbors topics → subscribers",
            tool: "neighbors",
            args: nb(&publish, "out", "PUBLISHES"),
            tag: "neighbors",
            hint: "neighbors",
            check: Box::new(|a| a["edge_types"] == json!(["SUBSCRIBES"])),
        },
        Row {
            name: "neighbors → next page",
            tool: "neighbors",
            args: json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"], "limit": 2}),
            tag: "neighbors",
            hint: "neighbors",
            check: exact(
                json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"], "limit": 2, "offset": 2}),
            ),
        },
        // errors
        Row {
            name: "error: name → resolve",
            tool: "neighbors",
            args: json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}),
            tag: "invalid_id",
            hint: "resolve",
            check: exact(json!({"identifier": "OrderService"})),
        },
        Row {
            name: "error: readable ids → same call",
            tool: "neighbors",
            args: json!({"ids": [ctrl, 5], "direction": "out", "edge_types": ["DECLARES"]}),
            tag: "invalid_id",
            hint: "neighbors",
            check: exact(nb(&ctrl, "out", "DECLARES")),
        },
        Row {
            name: "error: bad argument → corrected",
            tool: "neighbors",
            args: nb(&ctrl, "out", "CALLZ"),
            tag: "bad_argument",
            hint: "neighbors",
            check: exact(nb(&ctrl, "out", "CALLS")),
        },
        Row {
            name: "error: limit → in range",
            tool: "find",
            args: json!({"kind": "class", "limit": 1000}),
            tag: "bad_argument",
            hint: "find",
            check: exact(json!({"kind": "class", "limit": 100})),
        },
    ];
    let advisory: Vec<Advisory> = vec![
        Advisory {
            name: "error: unreadable ids → shape",
            tool: "neighbors",
            args: json!({"ids": "?!", "direction": "out", "edge_types": ["CALLS"]}),
            tag: "invalid_id",
            hint: "neighbors",
        },
        Advisory {
            name: "error: unknown id → advice",
            tool: "describe",
            args: json!({"id": "0".repeat(40)}),
            tag: "not_found",
            hint: "search",
        },
        Advisory {
            name: "search weak → advice",
            tool: "search",
            args: json!({"query": "ordctl"}),
            tag: "weak_results",
            hint: "search",
        },
    ];
    // Every row runs; the failures are reported together, by name.
    let mut failures: Vec<String> = Vec::new();
    for Row { name, tool, args, tag, hint, check } in rows {
        let r = client.call(tool, args.clone()).await;
        if r.tag() != tag {
            failures.push(format!("{name}: {tool} {args} ended [{}], not [{tag}]:\n{}", r.tag(), r.text));
            continue;
        }
        let matching: Vec<Value> =
            r.actionable().into_iter().filter(|(t, a)| t == hint && check(a)).map(|(_, a)| a).collect();
        if matching.is_empty() {
            failures.push(format!("{name}: no matching {hint} hint for {tool} {args}:\n{}", r.text));
        }
        for next in matching {
            let n = client.call(hint, next.clone()).await;
            if n.is_error {
                failures.push(format!("{name}: hint {hint} {next} failed:\n{}", n.text));
            }
        }
    }
    for Advisory { name, tool, args, tag, hint } in advisory {
        let r = client.call(tool, args.clone()).await;
        if r.tag() != tag {
            failures.push(format!("{name}: {tool} {args} ended [{}], not [{tag}]:\n{}", r.tag(), r.text));
            continue;
        }
        let advice = r.hints().into_iter().find(|h| h["actionable"] == false && h["tool"] == hint);
        match advice {
            None => failures.push(format!("{name}: no advisory {hint} hint:\n{}", r.text)),
            Some(advice) if advice["reason"].as_str().unwrap_or_default().is_empty() => {
                failures.push(format!("{name}: the advisory hint has no reason"))
            }
            Some(_) if !r.text.contains("note: ") => {
                failures.push(format!("{name}: advice is not shown as a note:\n{}", r.text))
            }
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{} catalogue row(s) failed:\n{}", failures.len(), failures.join("\n"));
    // An ambiguous resolve asks the user.
    let r = client.call("resolve", json!({"identifier": "placeOrder"})).await;
    assert!(r.text.contains("? ask user: which placeOrder is meant"), "{}", r.text);
}

/// Terse text (seed 001): reports the median text size per tool over a
/// fixed set of calls on the sample graph, and holds it under a budget.
#[tokio::test]
async fn text_is_terse() {
    let client = Client::default().await;
    let [ctrl, place, route] = <[String; 3]>::try_from(
        ids(&client, &["OrderController", "OrderService.placeOrder", "GET /orders/{id}"]).await,
    )
    .unwrap_or_else(|v| panic!("{v:?}"));
    let calls: Vec<(&str, Value)> = vec![
        ("resolve", json!({"identifier": "OrderController"})),
        ("resolve", json!({"identifier": "placeOrder"})),
        ("resolve", json!({"identifier": "Nope"})),
        ("describe", json!({"id": ctrl})),
        ("describe", json!({"id": place})),
        ("describe", json!({"id": route})),
        ("find", json!({"role": "controller"})),
        ("find", json!({"kind": "route", "limit": 10})),
        ("find", json!({"name": "client"})),
        ("search", json!({"query": "order"})),
        ("search", json!({"query": "refund payment"})),
        ("search", json!({"query": "ordctl"})),
        ("neighbors", nb(&ctrl, "out", "DECLARES.EXPOSES")),
        ("neighbors", nb(&place, "in", "CALLS")),
        ("neighbors", nb(&route, "out", "EXPOSES")),
    ];
    let mut sizes: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (tool, args) in calls {
        let r = client.call(tool, args).await;
        sizes.entry(tool).or_default().push(r.text.len());
    }
    let mut report = Vec::new();
    for (tool, mut s) in sizes {
        s.sort_unstable();
        let median = s[s.len() / 2];
        report.push(format!("{tool}={median}B"));
        assert!(median <= 2500, "{tool}: median text of {median} bytes is not terse ({s:?})");
    }
    println!("median text size per tool: {}", report.join(" "));
}

#[tokio::test]
async fn breadth_first_walk_of_hints_never_hits_a_broken_call() {
    let client = Client::default().await;
    let starts = vec![
        ("resolve", json!({"identifier": "OrderController"})),
        ("resolve", json!({"identifier": "validate"})),
        ("resolve", json!({"identifier": "Nope"})),
        ("search", json!({"query": "payment"})),
        ("find", json!({"role": "http_client"})),
        ("resolve", json!({"identifier": "kafka:order-events"})),
        ("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]})),
    ];
    let mut queue: VecDeque<(String, Value, u8)> = starts.into_iter().map(|(t, a)| (t.to_owned(), a, 0)).collect();
    let mut seen = HashSet::new();
    let mut executed = 0;
    while let Some((tool, args, depth)) = queue.pop_front() {
        if !seen.insert(format!("{tool} {args}")) {
            continue;
        }
        let r = client.call(&tool, args.clone()).await;
        if depth > 0 {
            executed += 1;
            assert!(!r.is_error, "hint at depth {depth} failed: {tool} {args}\n{}", r.text);
        }
        if depth < 3 {
            for (t, a) in r.actionable() {
                queue.push_back((t, a, depth + 1));
            }
        }
    }
    assert!(executed >= 60, "the walk should exercise many hints, ran {executed}");
}
