//! Hints as agents use them: catalogue entries triggered on the sample graph,
//! and a breadth-first walk that sends every actionable hint back verbatim.

use std::collections::{HashSet, VecDeque};

use serde_json::{Value, json};

use crate::common::Client;

#[tokio::test]
async fn catalogue_entries_fire_and_their_hints_work() {
    let client = Client::default().await;
    let route = {
        let r = client.call("resolve", json!({"identifier": "GET /orders/{id}"})).await;
        r.structured["candidates"][0]["id"].as_str().unwrap_or_default().to_owned()
    };
    let base_validate = client.id_of("com.acme.shop.common.BaseEntity.validate").await;
    let place_order = client.id_of("OrderService.placeOrder").await;
    let stripe = client.id_of("StripeClient").await;

    // (call, expected tag, expected hint tool, a predicate on its args)
    type Check = fn(&Value) -> bool;
    let cases: Vec<(&str, Value, &str, &str, Check)> = vec![
        ("resolve", json!({"identifier": "NoSuchThing"}), "not_found", "search", |a| a["query"] == "NoSuchThing"),
        ("resolve", json!({"identifier": "validate"}), "ambiguous", "resolve", |a| {
            a["identifier"].as_str().is_some_and(|i| i.ends_with(".validate") && i.matches('.').count() == 1)
        }),
        ("resolve", json!({"identifier": "status"}), "ambiguous", "resolve", |a| a["kind"] == "enum"),
        ("resolve", json!({"identifier": "placeOrder", "kind": "route"}), "not_found", "resolve", |a| {
            a.get("kind").is_none()
        }),
        ("describe", json!({"id": route}), "record", "neighbors", |a| {
            a["direction"] == "in" && a["edge_types"] == json!(["EXPOSES"])
        }),
        ("describe", json!({"id": base_validate}), "record", "neighbors", |a| {
            a["edge_types"] == json!(["OVERRIDES"]) && a["direction"] == "in"
        }),
        ("describe", json!({"id": place_order}), "record", "neighbors", |a| {
            a["edge_types"] == json!(["CALLS"]) && a["direction"] == "in"
        }),
        ("find", json!({"kind": "method", "limit": 5}), "listing", "find", |a| a["offset"] == 5),
        ("find", json!({"kind": "class", "name": "Nope"}), "empty", "find", |a| a == &json!({"kind": "class"})),
        ("search", json!({"query": "ordctl"}), "weak_results", "find", |a| a["name"] == "ordctl"),
        ("search", json!({"query": "qqq zzz"}), "empty", "find", |_| true),
        (
            "neighbors",
            json!({"ids": [route], "direction": "out", "edge_types": ["EXPOSES"]}),
            "empty",
            "neighbors",
            |a| a["direction"] == "in",
        ),
        (
            "neighbors",
            json!({"ids": [place_order], "direction": "in", "edge_types": ["CALLS"]}),
            "neighbors",
            "neighbors",
            |a| a["direction"] == "in" && a["edge_types"] == json!(["CALLS"]),
        ),
        (
            "neighbors",
            json!({"ids": [stripe], "direction": "out", "edge_types": ["DECLARES.TARGETS"]}),
            "neighbors",
            "describe",
            |_| true,
        ),
    ];
    for (tool, args, tag, hint_tool, check) in cases {
        let r = client.call(tool, args.clone()).await;
        assert_eq!(r.tag(), tag, "{tool} {args}:\n{}", r.text);
        let hint = r
            .actionable()
            .into_iter()
            .find(|(t, a)| t == hint_tool && check(a))
            .unwrap_or_else(|| panic!("{tool} {args}: no matching {hint_tool} hint:\n{}", r.text));
        let next = client.call(&hint.0, hint.1.clone()).await;
        assert!(!next.is_error, "hint {} {} failed:\n{}", hint.0, hint.1, next.text);
    }
    // An ambiguous resolve asks the user.
    let r = client.call("resolve", json!({"identifier": "placeOrder"})).await;
    assert!(r.text.contains("? ask user: which placeOrder is meant"), "{}", r.text);
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
