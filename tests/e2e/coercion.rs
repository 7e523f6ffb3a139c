//! Id coercion through the real MCP path: every accepted shape yields the
//! canonical ids; every refused shape is a teaching error with a valid example.

use serde_json::{Value, json};

use crate::common::Client;

#[tokio::test]
async fn every_lossless_shape_is_accepted() {
    let client = Client::default().await;
    let a = client.id_of("OrderService").await;
    let b = client.id_of("OrderController").await;
    let up = a.to_uppercase();
    let shapes = [
        json!([a, b]),
        json!([a, b, a]),
        json!([up, b]),
        json!(format!("[\"{a}\", \"{b}\"]")),
        json!(format!("['{a}', '{b}']")),
        json!(format!("('{a}', '{b}')")),
        json!(format!("[{a}, {b}]")),
        json!(format!("{a}, {b}")),
        json!(format!("{a},{b}")),
        json!(format!("{a} {b}")),
        json!(format!("  `['{a}', '{b}']`\n")),
        json!(format!("\"['{a}','{b}',]\"")),
        json!([format!(" {a} "), format!("'{b}'")]),
        // Serialised twice, three times: still lossless.
        json!(json!(json!([a, b]).to_string()).to_string()),
        json!(json!(json!(json!([a, b]).to_string()).to_string()).to_string()),
        json!(json!(format!("['{a}', '{b}']")).to_string()),
    ];
    for ids in shapes {
        let r = client.call("neighbors", json!({"ids": ids, "direction": "out", "edge_types": ["DECLARES"]})).await;
        assert!(!r.is_error, "{ids} refused:\n{}", r.text);
        assert_eq!(r.structured["ids"], json!([a, b]), "{ids}");
    }
    for one in [json!(a), json!(format!("`{a}`")), json!(format!("['{a}']")), json!(up), json!([a])] {
        let r = client.call("describe", json!({"id": one})).await;
        assert!(!r.is_error, "describe {one} refused:\n{}", r.text);
        assert_eq!(r.structured["record"]["id"], a.as_str());
    }
}

#[tokio::test]
async fn every_lossy_shape_is_refused_with_a_correct_example() {
    let client = Client::default().await;
    let a = client.id_of("OrderService").await;
    let cases = [
        (json!(""), "holds no id"),
        (json!([]), "holds no id"),
        (json!("[]"), "holds no id"),
        (json!([1, 2]), "a number"),
        (json!([[a]]), "nested list"),
        (json!(format!("[['{a}']]")), "nested list"),
        (json!({"id": a}), "an object"),
        (json!(&a[..12]), "truncated"),
        (json!(format!("['{a}'")), "do not pair up"),
        (json!(format!("['{a}]")), "do not pair up"),
        (json!(format!("{a}\u{7}")), "control characters"),
        (json!(true), "a boolean"),
        (json!("OrderService"), "is a name"),
        (json!("?!*"), "is not an id"),
    ];
    for (ids, needle) in cases {
        let r = client.call("neighbors", json!({"ids": ids, "direction": "in", "edge_types": ["CALLS"]})).await;
        assert!(r.is_error, "{ids} accepted:\n{}", r.text);
        assert_eq!(r.error_kind(), "invalid_id", "{ids}");
        assert!(r.text.contains(needle), "{ids}: `{needle}` missing:\n{}", r.text);
        let example = &r.structured["error"]["example"];
        assert!(example["ids"].is_array(), "{ids}: example must be a JSON call: {example}");
        assert_eq!(example["direction"], "in", "the example keeps what was right");
        assert!(r.text.contains(&format!("Send: neighbors {example}")), "{}", r.text);
    }
    // Huge input is bounded, and answered.
    let many: Vec<String> = (0..300).map(|i| format!("{i:040x}")).collect();
    let r = client.call("neighbors", json!({"ids": many, "direction": "out", "edge_types": ["CALLS"]})).await;
    assert_eq!(r.error_kind(), "invalid_id");
    assert!(r.text.contains("too large"), "{}", r.text);
    // A readable id among bad ones: the example is a working call, offered as a hint.
    let r = client.call("neighbors", json!({"ids": [a, 7], "direction": "in", "edge_types": ["CALLS"]})).await;
    assert_eq!(r.hint_to("neighbors"), Some(json!({"ids": [a], "direction": "in", "edge_types": ["CALLS"]})));
    // describe takes one id.
    let b = client.id_of("OrderController").await;
    let r = client.call("describe", json!({"id": [a, b]})).await;
    assert_eq!(r.error_kind(), "invalid_id");
    assert_eq!(r.structured["error"]["example"], json!({"id": a}));
    let _: Value = r.structured;
}
