//! The terminal face's unit tests: every rendering parses back to its call.

use std::path::PathBuf;

use clap::Parser;
use serde_json::{Map, Value, json};

use super::shell::hidden;
use super::*;
use crate::response::Response;
use crate::tools::{HintOut, Tool};
use crate::trails::carry::TRAIL_ARG;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    query: Query,
}

fn parse_back(command: &str) -> (Tool, Map<String, Value>, QueryOptions) {
    let words = shlex::split(command).expect("a shell command line");
    assert_eq!(words[0], "/opt/sign post/signpost");
    let mut cli = Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{command}: {e}"));
    let (tool, mut args) = cli.query.to_call().expect("a call");
    let options = cli.query.options_mut().clone();
    // The trail goes as an option, and comes back as MCP sends it.
    if let Some(trail) = &options.trail {
        args.insert(TRAIL_ARG.into(), json!(trail));
    }
    (tool, args, options)
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("an object")
}

#[test]
fn every_command_parses_back_to_its_call() {
    let options = QueryOptions {
        graph: vec!["my graph.scip".into(), "b.json".into()],
        policy: Some("p.wasm".into()),
        format: Format::Json,
        color: Color::Auto,
        trail: None,
        state: Some("redis://h:1/2".into()),
    };
    let shell = Shell::new("/opt/sign post/signpost", options.repeated());
    let id = "721797098567ca69c8d8f724033dc6ec8670d50b";
    let calls = [
        ("resolve", json!({"identifier": "OrderService"})),
        ("resolve", json!({"identifier": "it's a \"name\"; rm -rf /", "kind": "class"})),
        ("resolve", json!({"identifier": "--help"})),
        ("describe", json!({"id": id})),
        ("find", json!({"kind": "class", "role": "controller", "limit": 2, "offset": 2})),
        ("find", json!({})),
        ("find", json!({"name": "-x", "path": "src/$(touch x)/`id`"})),
        ("search", json!({"query": "refund  payment", "limit": 10})),
        ("search", json!({"query": "-v"})),
        ("search", json!({"query": ""})),
        ("neighbors", json!({"ids": [id, id], "direction": "in", "edge_types": ["TARGETS", "DECLARES.CALLS"]})),
        ("neighbors", json!({"ids": ["-a"], "direction": "out", "edge_types": ["CALLS"], "offset": 25})),
        ("neighbors", json!({"ids": [id], "direction": "in", "edge_types": ["-CALLS", "--help"]})),
        ("find", json!({"kind": "--", "role": "=", "name": "'", "path": "\\"})),
        ("resolve", json!({"identifier": "--", "kind": "-h"})),
        // Do not fit the tool commands: `call`.
        ("neighbors", json!({"ids": id, "direction": "out", "edge_types": ["CALLS"]})),
        ("neighbors", json!({"ids": [id], "direction": "out", "edge_types": ["A,B"]})),
        ("find", json!({"limit": -1})),
        ("find", json!({"limit": 1.5})),
        ("describe", json!({"id": id, "extra": true})),
        ("describe", json!({})),
        ("resolve", json!({"identifier": "x\ny\u{202e}z"})),
        // A trail is an option of every command, `call` too.
        ("describe", json!({"id": id, "trail": "tr_abc"})),
        ("search", json!({"query": "x", "trail": "-tr; rm"})),
        ("describe", json!({"id": id, "extra": true, "trail": "tr_x"})),
        ("describe", json!({"id": id, "trail": "tr\u{202e}x"})),
        ("describe", json!({"id": id, "trail": 42})),
    ];
    for (tool, args) in calls {
        let args = obj(args);
        let command = shell.command(tool, &args);
        let (t, a, o) = parse_back(&command);
        assert_eq!((t.name(), &a), (tool, &args), "{command}");
        assert_eq!(o.graph, options.graph, "{command}");
        assert_eq!((o.policy, o.format), (options.policy.clone(), Format::Json), "{command}");
        assert_eq!(o.state, options.state, "{command}");
    }
    let plain = Shell::new("signpost", Vec::new());
    let command = plain.command("neighbors", &obj(json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})));
    assert_eq!(command, format!("signpost neighbors {id} --direction out --edge-types CALLS"));
    assert_eq!(plain.command("search", &obj(json!({"query": "a b"}))), "signpost search 'a b'");
    assert_eq!(plain.command("describe", &obj(json!({}))), "signpost call describe '{}'");
}

#[test]
fn a_store_url_with_a_password_is_not_repeated() {
    for url in ["redis://:pw@h:1/2", "redis://user:pw@h", "redis+unix:///run/r.sock?db=1&pass=pw"] {
        assert!(has_credentials(url), "{url}");
        let options = QueryOptions { state: Some(url.into()), ..QueryOptions::default() };
        assert!(!options.repeated().iter().any(|w| w.contains("pw")), "{url}");
    }
    for url in ["redis://h:6379/0", "redis+unix:///run/a@b/r.sock", "redis://h/0"] {
        assert!(!has_credentials(url), "{url}");
        let options = QueryOptions { state: Some(url.into()), ..QueryOptions::default() };
        assert_eq!(options.repeated(), ["--state", url], "{url}");
    }
}

proptest::proptest! {
    /// Any strings and numbers an agent or a policy could put in a
    /// hint's arguments make a command that parses back to the call.
    #[test]
    fn any_call_parses_back(
        text in proptest::collection::vec("[^\\x00]{0,12}", 3),
        graph in "[^\\x00]{1,12}",
        edge in proptest::collection::vec("[^\\x00,]{1,6}", 1..3),
        ids in proptest::collection::vec("[^\\x00]{1,8}", 1..3),
        limit in proptest::option::of(0u64..1_000_000),
        which in 0usize..5,
    ) {
        let shell = Shell::new("/opt/sign post/signpost", QueryOptions { graph: vec![graph.clone().into()], ..QueryOptions::default() }.repeated());
        let mut args = match which {
            0 => json!({"identifier": text[0], "kind": text[1]}),
            1 => json!({"id": text[0]}),
            2 => json!({"kind": text[0], "role": text[1], "name": text[2]}),
            3 => json!({"query": text[0]}),
            _ => json!({"ids": ids, "direction": "in", "edge_types": edge}),
        };
        if let (Some(limit), 2..) = (limit, which) {
            args["limit"] = json!(limit);
        }
        let args = obj(args);
        let tool = Tool::NAMES[which];
        let command = shell.command(tool, &args);
        let (t, a, o) = parse_back(&command);
        proptest::prop_assert_eq!((t.name(), &a), (tool, &args), "{}", command);
        proptest::prop_assert_eq!(o.graph, vec![PathBuf::from(&graph)], "{}", command);
    }
}

fn response(text: &str, hints: &[(&str, Value)]) -> Response {
    let hints: Vec<HintOut> = hints
        .iter()
        .map(|(tool, args)| HintOut {
            tool: (*tool).into(),
            args: obj(args.clone()),
            actionable: true,
            reason: "why".into(),
            shape: None,
        })
        .collect();
    Response {
        is_error: false,
        text: text.into(),
        state_tag: "ok".into(),
        structured: json!({"results": [1], "hints": hints}),
        shape: None,
        hints,
        backend: None,
        held: None,
    }
}

fn plain(s: &str) -> String {
    anstream::adapter::strip_str(s).to_string()
}

#[test]
fn hint_lines_are_the_hints_as_commands() {
    let shell = Shell::new("signpost", Vec::new());
    let id = "721797098567ca69c8d8f724033dc6ec8670d50b";
    let hints = [("describe", json!({"id": id})), ("search", json!({"query": "a b"}))];
    // The policy's own hint lines, whatever surrounds their calls, give way
    // to the hints, where the first of them stood.
    let text = format!(
        "[ok] found\nline {id}\n→ next: describe {{\"id\":\"{id}\"}} $(touch x)\n→ next: junk\n? ask user: which?"
    );
    let out = plain(&super::text(&response(&text, &hints), &[], &shell));
    let expected = format!(
        "[ok] found\nline {id}\n→ next: signpost describe {id}\n  — why\n→ next: signpost search 'a b'\n  — why\n? ask user: which?\n"
    );
    assert_eq!(out, expected);
    // No hint line in the text: the hints go before the ask-user line.
    let out = plain(&super::text(&response("[ok] found\n? ask user: which?", &hints[..1]), &[], &shell));
    assert_eq!(out, format!("[ok] found\n→ next: signpost describe {id}\n  — why\n? ask user: which?\n"));
    // …or at the end.
    let out = plain(&super::text(&response("[ok] found", &hints[..1]), &[], &shell));
    assert!(out.ends_with(&format!("→ next: signpost describe {id}\n  — why\n")), "{out}");
}

#[test]
fn only_the_host_writes_commands_on_a_terminal() {
    let shell = Shell::new("./target/release/signpost", Vec::new());
    let id = "721797098567ca69c8d8f724033dc6ec8670d50b";
    // The program's commands in the policy's text, in every form a shell
    // or a script runs them: continued over lines, as an argument vector,
    // options first.
    let text = "[ok] found\nrun ./target/release/signpost \\\n  find \\\n  --kind class\nthen [\"./signpost\", \"find\", \"--kind\", \"class\"]\n`signpost --color never find --kind class`\nkept";
    let out = plain(&super::text(&response(text, &[]), &[], &shell));
    assert_eq!(out, "[ok] found\nkept\n", "{out}");
    // A hint's reason that reads as a command is not shown under it.
    let mut r = response("[ok] found", &[("describe", json!({"id": id}))]);
    for reason in ["$ signpost find --kind class", "./signpost \\   find \\   --kind class"] {
        r.hints[0].reason = reason.into();
        let out = plain(&super::text(&r, &[], &shell));
        assert!(!out.contains("--kind"), "{out}");
        assert!(out.contains("(its reason reads as a shell command: not shown)"), "{out}");
    }
    // Prose naming the program stays.
    let out = plain(&super::text(&response("[ok] Signpost, the hint engine - at your service", &[]), &[], &shell));
    assert_eq!(out, "[ok] Signpost, the hint engine - at your service\n");
}

#[test]
fn hidden_characters_never_reach_a_command_or_json() {
    let shell = Shell::new("signpost", Vec::new());
    for s in ["a\u{202e}b", "a\u{2028}b", "a\u{200b}b", "a\u{7f}b", "a\nb", "a\u{85}b", "a\u{e0041}b"] {
        let args = obj(json!({"path": s}));
        let command = shell.command("find", &args);
        assert!(!command.chars().any(hidden), "{command:?}");
        assert!(command.starts_with("signpost call find "), "{command}");
        // It still parses back to the same call.
        let words = shlex::split(&command).unwrap_or_default();
        let back: Value = serde_json::from_str(&words[3]).unwrap_or_default();
        assert_eq!(back, Value::Object(args.clone()), "{command}");
        let printed = json_text(&json!({"path": s, "list": [s]}));
        assert!(!printed.trim_end().chars().any(|c| hidden(c) && c != '\n'), "{printed:?}");
        assert_eq!(serde_json::from_str::<Value>(&printed).unwrap_or_default()["path"], json!(s));
    }
}

#[test]
fn call_arguments_must_be_an_object() {
    for (text, needle) in [("[1]", "must be a JSON object"), ("{nope", "not JSON")] {
        let cli = Cli::try_parse_from(["signpost", "call", "find", text]).expect("parses");
        let err = cli.query.to_call().expect_err(text);
        assert!(err.contains(needle) && err.contains("find"), "{err}");
    }
    assert!(Cli::try_parse_from(["signpost", "call", "delete", "{}"]).is_err());
}
