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
    type Check = Box<dyn Fn(&Value) -> bool>;
    let exact = |v: Value| -> Check { Box::new(move |a| *a == v) };
    let rows: Vec<(&str, &str, Value, &str, &str, Check)> = vec![
        // resolve
        (
            "resolve one: type → members",
            "resolve",
            json!({"identifier": "OrderController"}),
            "resolved",
            "neighbors",
            exact(nb(&ctrl, "out", "DECLARES")),
        ),
        (
            "resolve one → describe",
            "resolve",
            json!({"identifier": "OrderController"}),
            "resolved",
            "describe",
            exact(json!({"id": ctrl})),
        ),
        (
            "resolve one: method → callers",
            "resolve",
            json!({"identifier": "OrderService.placeOrder"}),
            "resolved",
            "neighbors",
            exact(nb(&place, "in", "CALLS")),
        ),
        (
            "resolve one: route → handler",
            "resolve",
            json!({"identifier": "GET /orders/{id}"}),
            "resolved",
            "neighbors",
            exact(nb(&route, "in", "EXPOSES")),
        ),
        (
            "resolve one: topic → publishers",
            "resolve",
            json!({"identifier": "kafka:order-events"}),
            "resolved",
            "neighbors",
            exact(nb(&topic, "in", "PUBLISHES")),
        ),
        (
            "resolve many: narrow by kind",
            "resolve",
            json!({"identifier": "status"}),
            "ambiguous",
            "resolve",
            Box::new(|a| a["kind"] == "enum"),
        ),
        (
            "resolve many: unique suffix",
            "resolve",
            json!({"identifier": "validate"}),
            "ambiguous",
            "resolve",
            Box::new(|a| {
                a["identifier"].as_str().is_some_and(|i| i.ends_with(".validate") && i.matches('.').count() == 1)
            }),
        ),
        (
            "resolve many: describe candidates",
            "resolve",
            json!({"identifier": "placeOrder"}),
            "ambiguous",
            "describe",
            exact(json!({"id": place})),
        ),
        (
            "resolve none → search",
            "resolve",
            json!({"identifier": "NoSuchThing"}),
            "not_found",
            "search",
            exact(json!({"query": "NoSuchThing"})),
        ),
        (
            "resolve none → drop kind",
            "resolve",
            json!({"identifier": "placeOrder", "kind": "route"}),
            "not_found",
            "resolve",
            exact(json!({"identifier": "placeOrder"})),
        ),
        (
            "resolve none → find last segment",
            "resolve",
            json!({"identifier": "shop.Nope"}),
            "not_found",
            "find",
            exact(json!({"name": "Nope"})),
        ),
        // describe
        (
            "describe: members' routes",
            "describe",
            json!({"id": ctrl}),
            "record",
            "neighbors",
            exact(nb(&ctrl, "out", "DECLARES.EXPOSES")),
        ),
        (
            "describe: route handler",
            "describe",
            json!({"id": route}),
            "record",
            "neighbors",
            exact(nb(&route, "in", "EXPOSES")),
        ),
        (
            "describe: clients of route",
            "describe",
            json!({"id": reserve}),
            "record",
            "neighbors",
            exact(nb(&reserve, "in", "TARGETS")),
        ),
        (
            "describe: overriders",
            "describe",
            json!({"id": base_validate}),
            "record",
            "neighbors",
            exact(nb(&base_validate, "in", "OVERRIDES")),
        ),
        (
            "describe: client targets",
            "describe",
            json!({"id": charge}),
            "record",
            "neighbors",
            exact(nb(&charge, "out", "TARGETS")),
        ),
        (
            "describe: callers",
            "describe",
            json!({"id": place}),
            "record",
            "neighbors",
            exact(nb(&place, "in", "CALLS")),
        ),
        (
            "describe: callees",
            "describe",
            json!({"id": place}),
            "record",
            "neighbors",
            exact(nb(&place, "out", "CALLS")),
        ),
        (
            "describe: implementations",
            "describe",
            json!({"id": repo}),
            "record",
            "neighbors",
            exact(nb(&repo, "in", "IMPLEMENTS")),
        ),
        (
            "describe: subclasses",
            "describe",
            json!({"id": base_entity}),
            "record",
            "neighbors",
            exact(nb(&base_entity, "in", "EXTENDS")),
        ),
        (
            "describe: topics published",
            "describe",
            json!({"id": publish}),
            "record",
            "neighbors",
            exact(nb(&publish, "out", "PUBLISHES")),
        ),
        (
            "describe: publishers",
            "describe",
            json!({"id": topic}),
            "record",
            "neighbors",
            exact(nb(&topic, "in", "PUBLISHES")),
        ),
        (
            "describe: subscribers",
            "describe",
            json!({"id": topic}),
            "record",
            "neighbors",
            exact(nb(&topic, "in", "SUBSCRIBES")),
        ),
        (
            "describe: members' topics",
            "describe",
            json!({"id": producer}),
            "record",
            "neighbors",
            exact(nb(&producer, "out", "DECLARES.PUBLISHES")),
        ),
        (
            "describe: members",
            "describe",
            json!({"id": stripe}),
            "record",
            "neighbors",
            exact(nb(&stripe, "out", "DECLARES")),
        ),
        (
            "describe: overridden method",
            "describe",
            json!({"id": jpa_save}),
            "record",
            "neighbors",
            exact(nb(&jpa_save, "out", "OVERRIDES")),
        ),
        (
            "describe: interfaces",
            "describe",
            json!({"id": jpa}),
            "record",
            "neighbors",
            exact(nb(&jpa, "out", "IMPLEMENTS")),
        ),
        (
            "describe: superclass",
            "describe",
            json!({"id": order}),
            "record",
            "neighbors",
            exact(nb(&order, "out", "EXTENDS")),
        ),
        (
            "describe: referrers",
            "describe",
            json!({"id": order}),
            "record",
            "neighbors",
            exact(nb(&order, "in", "REFERENCES")),
        ),
        (
            "describe: owner",
            "describe",
            json!({"id": order}),
            "record",
            "neighbors",
            exact(nb(&order, "in", "DECLARES")),
        ),
        (
            "describe: no edges → same file",
            "describe",
            json!({"id": legacy}),
            "record",
            "find",
            Box::new(|a| a["path"].as_str().is_some_and(|p| p.ends_with("LegacyPriceCalculator.java"))),
        ),
        // find
        (
            "find: next page",
            "find",
            json!({"kind": "method", "limit": 5}),
            "listing",
            "find",
            exact(json!({"kind": "method", "limit": 5, "offset": 5})),
        ),
        (
            "find: describe first",
            "find",
            json!({"role": "controller"}),
            "listing",
            "describe",
            Box::new(|a| a["id"].is_string()),
        ),
        (
            "find empty → search name",
            "find",
            json!({"kind": "class", "name": "Nope"}),
            "empty",
            "search",
            exact(json!({"query": "Nope"})),
        ),
        (
            "find empty → drop filter",
            "find",
            json!({"kind": "class", "name": "Nope"}),
            "empty",
            "find",
            exact(json!({"kind": "class"})),
        ),
        ("find empty, one filter → browse", "find", json!({"role": "nope"}), "empty", "find", exact(json!({}))),
        // search
        (
            "search weak → find by kind",
            "search",
            json!({"query": "ordctl"}),
            "weak_results",
            "find",
            Box::new(|a| a["name"] == "ordctl" && a["kind"].is_string()),
        ),
        (
            "search → describe best",
            "search",
            json!({"query": "refund"}),
            "results",
            "describe",
            Box::new(|a| a["id"].is_string()),
        ),
        (
            "search → next page",
            "search",
            json!({"query": "order", "limit": 3}),
            "results",
            "search",
            exact(json!({"query": "order", "limit": 3, "offset": 3})),
        ),
        (
            "search empty, words → one word",
            "search",
            json!({"query": "qqq zzzz"}),
            "empty",
            "search",
            exact(json!({"query": "zzzz"})),
        ),
        ("search empty → find", "search", json!({"query": "qqqzzz"}), "empty", "find", exact(json!({}))),
        // neighbors
        (
            "neighbors empty → other direction",
            "neighbors",
            nb(&route, "out", "EXPOSES"),
            "empty",
            "neighbors",
            exact(nb(&route, "in", "EXPOSES")),
        ),
        (
            "neighbors empty → edges it has",
            "neighbors",
            nb(&legacy, "out", "CALLS"),
            "empty",
            "describe",
            exact(json!({"id": legacy})),
        ),
        (
            "neighbors empty → available type",
            "neighbors",
            nb(&topic, "in", "CALLS"),
            "empty",
            "neighbors",
            Box::new(|a| a["direction"] == "in" && a["edge_types"] != json!(["CALLS"])),
        ),
        (
            "neighbors in CALLS → callers' callers",
            "neighbors",
            nb(&place, "in", "CALLS"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["direction"] == "in" && a["edge_types"] == json!(["CALLS"])),
        ),
        (
            "neighbors out CALLS → callees' callees",
            "neighbors",
            nb(&place, "out", "CALLS"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["direction"] == "out" && a["edge_types"] == json!(["CALLS"])),
        ),
        (
            "neighbors members' routes → clients",
            "neighbors",
            nb(&ctrl, "out", "DECLARES.EXPOSES"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["TARGETS"]) && a["direction"] == "in"),
        ),
        (
            "neighbors targets → handlers",
            "neighbors",
            nb(&stripe, "out", "DECLARES.TARGETS"),
            "neighbors",
            "describe",
            Box::new(|a| a["id"].is_string()),
        ),
        (
            "neighbors out TARGETS → handlers",
            "neighbors",
            nb(&charge, "out", "TARGETS"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["EXPOSES"]) && a["direction"] == "in"),
        ),
        (
            "neighbors handler → its callers",
            "neighbors",
            nb(&route, "in", "EXPOSES"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["CALLS"]) && a["direction"] == "in"),
        ),
        (
            "neighbors overriders → their callers",
            "neighbors",
            nb(&base_validate, "in", "OVERRIDES"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["CALLS"])),
        ),
        (
            "neighbors implementations → members",
            "neighbors",
            nb(&repo, "in", "IMPLEMENTS"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["DECLARES"]) && a["direction"] == "out"),
        ),
        (
            "neighbors topics → subscribers",
            "neighbors",
            nb(&publish, "out", "PUBLISHES"),
            "neighbors",
            "neighbors",
            Box::new(|a| a["edge_types"] == json!(["SUBSCRIBES"])),
        ),
        (
            "neighbors → next page",
            "neighbors",
            json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"], "limit": 2}),
            "neighbors",
            "neighbors",
            exact(json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES"], "limit": 2, "offset": 2})),
        ),
        // errors
        (
            "error: name → resolve",
            "neighbors",
            json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}),
            "invalid_id",
            "resolve",
            exact(json!({"identifier": "OrderService"})),
        ),
        (
            "error: readable ids → same call",
            "neighbors",
            json!({"ids": [ctrl, 5], "direction": "out", "edge_types": ["DECLARES"]}),
            "invalid_id",
            "neighbors",
            exact(nb(&ctrl, "out", "DECLARES")),
        ),
        (
            "error: bad argument → corrected",
            "neighbors",
            nb(&ctrl, "out", "CALLZ"),
            "bad_argument",
            "neighbors",
            exact(nb(&ctrl, "out", "CALLS")),
        ),
        (
            "error: limit → in range",
            "find",
            json!({"kind": "class", "limit": 1000}),
            "bad_argument",
            "find",
            exact(json!({"kind": "class", "limit": 100})),
        ),
    ];
    let advisory: Vec<(&str, &str, Value, &str, &str)> = vec![
        (
            "error: unreadable ids → shape",
            "neighbors",
            json!({"ids": "?!", "direction": "out", "edge_types": ["CALLS"]}),
            "invalid_id",
            "neighbors",
        ),
        ("error: unknown id → advice", "describe", json!({"id": "0".repeat(40)}), "not_found", "search"),
        ("search weak → advice", "search", json!({"query": "ordctl"}), "weak_results", "search"),
    ];
    for (label, tool, args, tag, hint_tool, check) in rows {
        let r = client.call(tool, args.clone()).await;
        assert_eq!(r.tag(), tag, "{label}: {tool} {args}:\n{}", r.text);
        let matching: Vec<Value> =
            r.actionable().into_iter().filter(|(t, a)| t == hint_tool && check(a)).map(|(_, a)| a).collect();
        assert!(!matching.is_empty(), "{label}: no matching {hint_tool} hint for {tool} {args}:\n{}", r.text);
        for next in matching {
            let n = client.call(hint_tool, next.clone()).await;
            assert!(!n.is_error, "{label}: hint {hint_tool} {next} failed:\n{}", n.text);
        }
    }
    for (label, tool, args, tag, hint_tool) in advisory {
        let r = client.call(tool, args.clone()).await;
        assert_eq!(r.tag(), tag, "{label}: {}", r.text);
        let advice = r.hints().into_iter().find(|h| h["actionable"] == false && h["tool"] == hint_tool);
        let advice = advice.unwrap_or_else(|| panic!("{label}: no advisory {hint_tool} hint:\n{}", r.text));
        assert!(!advice["reason"].as_str().unwrap_or_default().is_empty(), "{label}");
        assert!(r.text.contains("note: "), "{label}: advice is shown as a note:\n{}", r.text);
    }
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
