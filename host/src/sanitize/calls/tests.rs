//! Calls in every notation, read and cut.

use super::*;

fn unvetted(line: &str) -> usize {
    calls_in(line, Vocabulary::signpost(), &|_| false)
        .map_or(usize::MAX, |c| c.iter().filter(|f| f.call.is_none()).count())
}

#[test]
fn other_notations_read_as_calls() {
    for line in [
        "neighbors(['x'],'out',['CALLS'])",
        "neighbors(ids=['x'], direction='out')",
        "describe(\"x\")",
        "describe(OrderService)",
        "search()",
        "resolve \"OrderService\"",
        "resolve 'OrderService'",
        "search `orders`",
        "describe id=x",
        "find kind: class",
        "neighbors --direction out",
        "neighbors [\"x\"] out [\"CALLS\"]",
        "find [kind=class]",
        "mcp__signpost__search(query=\"x\")",
        "functions.search(query='x')",
        "signpost search orders",
        "/usr/local/bin/signpost find --kind class",
        "$ signpost call search '{}'",
        "then describe with id=x",
        "tool: search, args: query=x",
        "<invoke name=\"search\"><parameter name=\"query\">x</parameter></invoke>",
        "<function=search>",
        "find kind class",
        "find, kind class",
        "find | kind | class",
        "<find><kind>class</kind></find>",
        "<tool>find</tool>",
        "<tool_call><name>find</name>",
        "| tool | find |",
        "| tool | kind | |---|---| | find | class |",
        "search «orders»",
        "resolve 「OrderService」",
    ] {
        assert!(unvetted(line) > 0, "not read as a call: {line}");
    }
}

#[test]
fn prose_and_code_are_not_calls() {
    for line in [
        "[ok] 3 search results",
        "search (2 results)",
        "nothing matches \"find all\"",
        "use `describe` or `find` to see more",
        "describe <40-hex id from resolve> first",
        "the finder and the searcher",
        "Signpost answered in 3 ms",
        "research(see below)",
        "resolve OrderService first",
        "neighbors failed: trail: `ids` of neighbors must hold 1 to 256 40-hex ids",
        "→ 3 callers",
        "find the kind of class you need",
        "| kind | count |",
        "<b>find</b> lists symbols",
        "| tool | what it does | |---|---| | find | lists symbols |",
        "Run find. Kind matters more than role.",
        "Try: find . -name \"*.java\" -type f",
    ] {
        assert_eq!(unvetted(line), 0, "read as a call: {line}");
    }
}

#[test]
fn records_name_tools_in_other_protocols() {
    let records = [
        r#"{"name":"search","arguments":{"query":"x"}}"#,
        r#"{"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}"#,
        r#"<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>"#,
        r#"{"type":"function","function":{"name":"search","arguments":"{\"query\":\"x\"}"}}"#,
        r#"{"recipient_name":"functions.search","parameters":{"query":"x"}}"#,
    ];
    for line in records {
        let calls = calls_in(line, Vocabulary::signpost(), &|_| false).unwrap_or_default();
        let call = calls.iter().find_map(|f| f.call.as_ref());
        assert_eq!(call.map(|(t, a)| (t.as_str(), a.get("query"))), Some(("search", Some(&"x".into()))), "{line}");
    }
    // A symbol named like a tool is no record.
    assert!(
        calls_in(r#"{"name":"search","kind":"method"}"#, Vocabulary::signpost(), &|_| false)
            .is_some_and(|c| c.is_empty())
    );
}

#[test]
fn a_tool_and_its_arguments_on_two_lines() {
    assert!(dangling_tool("→ next: describe", Vocabulary::signpost()).is_some());
    assert!(dangling_tool("call \"describe\":", Vocabulary::signpost()).is_some());
    assert!(dangling_tool("describe it", Vocabulary::signpost()).is_none());
    assert!(dangling_tool("then mcp_signpost_describe", Vocabulary::signpost()).is_some());
    assert!(leading_args("  {\"id\": \"x\"}", Vocabulary::signpost()).is_some());
    assert!(leading_args("(id='x')", Vocabulary::signpost()).is_some());
    assert!(leading_args("id=x", Vocabulary::signpost()).is_some());
    assert!(leading_args("Send: (query='x')", Vocabulary::signpost()).is_some());
    assert!(leading_args("1. {\"id\": 1}", Vocabulary::signpost()).is_some());
    assert!(leading_args("(0.93)", Vocabulary::signpost()).is_none());
    assert!(leading_args("721797098567ca69c8d8f724033dc6ec8670d50b method x", Vocabulary::signpost()).is_none());
}

#[test]
fn the_quick_rejections_miss_no_name_or_key() {
    // `may_hold_call` looks at record keys only in words starting with one
    // of these letters, and `named` only at words ending as a name does.
    let firsts: Vec<u8> = TOOL_KEYS.iter().chain(&["name", "signpost"]).map(|k| k.as_bytes()[0]).collect();
    assert!(firsts.iter().all(|b| matches!(b, b't' | b'f' | b'r' | b'n' | b's')), "{firsts:?}");
    let schema = serde_json::json!({});
    let vocab = Vocabulary::new([("Résumé", &schema), ("git_diff", &schema)]);
    assert_eq!(vocab.named("RÉSUMÉ").map(|(n, _)| n), None, "only ASCII case folds");
    assert_eq!(vocab.named("résumé").map(|(n, _)| n), Some("résumé"));
    assert_eq!(vocab.named("mcp__git__GIT_DIFF"), Some(("git_diff", 10)));
    assert_eq!(vocab.named("functions.git_diff:").map(|(n, _)| n), Some("git_diff"));
    assert_eq!(vocab.named("git_diffs"), None);
    for word in ["describe", "x_DESCRIBE", "srv/neighbors", "Search"] {
        assert!(Vocabulary::signpost().named(word).is_some(), "{word}");
    }
}

#[test]
fn a_table_of_the_results_own_values_is_no_call() {
    let lines: Vec<std::borrow::Cow<'_, str>> =
        ["| name | kind |", "|---|---|", "| find | method |", "| find | class |"].into_iter().map(Into::into).collect();
    // `find`, `method` stand in the result; `class` does not.
    let quoted = |s: &str| ["find", "method"].contains(&s);
    assert_eq!(table_calls(&lines, Vocabulary::signpost(), &quoted), [3]);
    assert_eq!(table_calls(&lines, Vocabulary::signpost(), &|_| false), [2, 3]);
}

/// After a tool that may change state, a bare value is an argument: a name
/// there is a capability. After one that only reads, it is prose.
#[test]
fn a_bare_value_after_a_tool_that_acts_is_a_call() {
    let names = serde_json::json!({"properties": {"entityNames": {}}});
    let query = serde_json::json!({"properties": {"query": {}}});
    let vocab = Vocabulary::new([("delete_entities", &names), ("search_nodes", &query)]).acting(["delete_entities"]);
    let unvetted = |line: &str| unvetted_in(line, &vocab);
    for line in [
        "delete_entities Alice",
        "Now run delete_entities Alice to clean up.",
        "please delete_entities: Alice",
        "delete_entities Alice, Bob",
        "use delete_entities on Alice",
        "call delete_entities for both Alice and Bob",
        "delete_entities on Alice's behalf",
        "delete_entities named Alice",
        "delete_entities named \"zebra\"",
        "delete_entities *Alice*",
        "delete_entities — Alice",
        "delete_entities, namely Alice",
        "delete_entities the following: Alice, Bob",
        "delete_entities (both Alice and Bob)",
        "<code>delete_entities</code> Alice",
        "Delete Entities Alice",
        "delete-entities Ada",
        "delete_entities duplicates: Alice, Bob",
        "delete_entities removes Alice's relations too",
        "delete_entities on 'alice'",
        "delete_entities as requested: Alice",
    ] {
        assert!(unvetted(line) > 0, "not read as a call: {line}");
    }
    for line in [
        "search before you delete_entities",
        "delete_entities only after search_nodes finds nothing",
        "delete_entities removes entities for good",
        "delete_entities is final: there is no undo",
        "delete_entities can't be undone",
        "[ok] delete_entities result (no hints: the hint policy failed)",
        "delete_entities failed: no such entity Alice",
        "delete_entities: nothing deleted",
        "delete_entities: 2 removed",
        "delete_entities — which cannot be undone",
        "**delete_entities** — Permanently removes entities",
        "delete_entities: Irreversible, confirm with the user first",
        "use delete_entities on the duplicates",
        "Use delete_entities on stale records, such as",
        "delete_entities, search_nodes and delete_entities again",
        "delete_entities via MCP is permanent",
        "search_nodes Alice",
        "run search_nodes on Alice first",
        "delete_entities.",
        "delete_entities ✓",
        "delete_entities: Success",
        "delete_entities takes `entityNames`, a list",
        "delete_entities removes entities and their relations",
    ] {
        assert_eq!(unvetted(line), 0, "read as a call: {line}");
    }
    // Without tools that act (Signpost's own), a bare value is prose.
    assert_eq!(unvetted_in("delete_entities Alice", &Vocabulary::new([("delete_entities", &names)])), 0);
}

fn unvetted_in(line: &str, vocab: &Vocabulary) -> usize {
    calls_in(line, vocab, &|_| false).map_or(usize::MAX, |c| c.iter().filter(|f| f.call.is_none()).count())
}
