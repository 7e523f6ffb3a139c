//! The default policy's logic, run natively (fast): coercion, the hint
//! catalogue rules, prerequisites and rendering.

mod coerce {
    use serde_json::{Map, Value, json};
    use signpost_hints::coerce::*;
    use signpost_hints::model::Call;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    fn neighbors(ids: Value) -> Call {
        let mut args = Map::new();
        args.insert("ids".into(), ids);
        args.insert("direction".into(), json!("in"));
        args.insert("edge_types".into(), json!(["CALLS"]));
        Call { tool: "neighbors".into(), args }
    }

    fn ok(ids: Value) -> Vec<String> {
        coerce_ids(&neighbors(ids.clone()), "ids").unwrap_or_else(|e| panic!("{ids} refused: {}", e.message))
    }

    fn problem(ids: Value) -> Problem {
        match analyze(&neighbors(ids.clone()), "ids") {
            Ok(list) => panic!("{ids} accepted as {list:?}"),
            Err((p, _)) => p,
        }
    }

    #[test]
    fn lossless_shapes_are_accepted() {
        let upper = A.to_ascii_uppercase();
        let cases = [
            json!([A, B]),
            json!(format!("{A}, {B}")),
            json!(format!("[\"{A}\", \"{B}\"]")),
            json!(format!("['{A}', '{B}']")),
            json!(format!("('{A}', '{B}')")),
            json!(format!("[{A}, {B}]")),
            json!(format!("  `['{A}','{B}']`  ")),
            json!(format!("{A} {B}")),
            json!([upper, B, A]),
            json!(format!("\"['{A}', '{B}',]\"")),
        ];
        for case in cases {
            assert_eq!(ok(case), vec![A, B]);
        }
        assert_eq!(ok(json!(A)), vec![A]);
        assert_eq!(ok(json!(format!("('{A}',)"))), vec![A]);
        assert_eq!(ok(json!(format!("'{A}'"))), vec![A]);
    }

    #[test]
    fn lossy_shapes_are_refused() {
        assert_eq!(problem(json!("")), Problem::Empty);
        assert_eq!(problem(json!([])), Problem::Empty);
        assert_eq!(problem(json!("[]")), Problem::Empty);
        assert!(matches!(problem(json!([1, 2])), Problem::WrongType(_)));
        assert!(matches!(problem(json!([[A]])), Problem::WrongType(_)));
        assert!(matches!(problem(json!({"id": A})), Problem::WrongType(_)));
        assert!(matches!(problem(json!(&A[..12])), Problem::WrongLength(_)));
        assert!(matches!(problem(json!(format!("['{A}'"))), Problem::Unbalanced(_)));
        assert!(matches!(problem(json!(format!("['{A}]"))), Problem::Unbalanced(_)));
        assert_eq!(problem(json!(format!("{A}\u{0007}"))), Problem::ControlChar);
        assert_eq!(problem(json!("OrderService")), Problem::Name("OrderService".into()));
        assert_eq!(problem(json!(true)), Problem::WrongType("a boolean".into()));
        assert_eq!(problem(Value::Null), Problem::Missing);
    }

    #[test]
    fn huge_input_is_bounded() {
        let many: Vec<String> = (0..MAX_IDS + 1).map(|i| format!("{i:040x}")).collect();
        assert!(matches!(problem(json!(many)), Problem::TooLarge(_)));
        let long = "a".repeat(MAX_INPUT_BYTES + 1);
        assert!(matches!(problem(json!(long)), Problem::TooLarge(_)));
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(coerce_ids(&neighbors(json!(deep)), "ids").is_err());
    }

    #[test]
    fn teaching_error_shows_a_correct_call() {
        let err = coerce_ids(&neighbors(json!(format!("{A}, Foo"))), "ids").unwrap_err();
        assert_eq!(err.example, json!({"ids": [A], "direction": "in", "edge_types": ["CALLS"]}));
        assert!(err.message.contains("resolve"), "{}", err.message);
        assert!(err.message.contains(&err.example.to_string()));
    }

    #[test]
    fn describe_takes_one_id() {
        let call = Call { tool: "describe".into(), args: json!({"id": [A]}).as_object().cloned().unwrap_or_default() };
        assert_eq!(coerce_ids(&call, "id").map_err(|e| e.message), Ok(vec![A.to_owned()]));
        let call =
            Call { tool: "describe".into(), args: json!({"id": [A, B]}).as_object().cloned().unwrap_or_default() };
        let err = coerce_ids(&call, "id").unwrap_err();
        assert_eq!(err.example, json!({"id": A}));
    }
}

mod advise {
    use serde_json::{Value, json};
    use signpost_hints::advise::*;
    use signpost_hints::model::{Call, ErrorKind, Hint, Outcome, Session, ToolError};

    const A: &str = "0123456789abcdef0123456789abcdef01234567";

    fn call(tool: &str, args: Value) -> Call {
        Call { tool: tool.into(), args: args.as_object().cloned().unwrap_or_default() }
    }

    #[test]
    fn describe_with_exposing_members_points_at_routes_first() {
        let result = json!({
            "record": {"id": A, "kind": "class", "name": "OrderController", "fqn": "shop.OrderController"},
            "edge_summary": {"out": {"DECLARES": 4, "DECLARES.EXPOSES": 3}, "in": {"REFERENCES": 1}}
        });
        let advice =
            advise(&call("describe", json!({"id": A})), &Outcome::Success(result.to_string()), &Session::default());
        assert_eq!(advice.state_tag, "record");
        let first = &advice.hints[0];
        assert_eq!(first.tool, "neighbors");
        assert_eq!(first.args, json!({"ids": [A], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]}));
        assert!(first.actionable);
    }

    #[test]
    fn hints_are_bounded_deduplicated_and_short() {
        let h = |r: &str| Hint::call("find", json!({"kind": "class"}), r);
        let long = "x".repeat(300);
        let mut hints = vec![h(&long), h("dup")];
        hints.extend((0..10).map(|i| Hint::call("find", json!({"offset": i}), "page")));
        let tidy = tidy(hints);
        assert_eq!(tidy.len(), MAX_HINTS);
        assert_eq!(tidy[0].reason.chars().count(), MAX_REASON);
        assert_eq!(tidy[1].args, json!({"offset": 0}));
    }

    #[test]
    fn name_in_ids_teaches_resolve() {
        let c = call("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}));
        let err = ToolError { kind: ErrorKind::InvalidId, message: "x".into(), example: None };
        let advice = advise(&c, &Outcome::Failure(err), &Session::default());
        assert_eq!(advice.hints[0].args, json!({"identifier": "OrderService"}));
        assert!(advice.hints[0].actionable);
    }

    #[test]
    fn unseen_ids_get_a_non_blocking_prerequisite() {
        let c = call("describe", json!({"id": A}));
        let hints = prerequisites(&c, &Session::default());
        assert_eq!(hints.len(), 1);
        assert!(!hints[0].actionable);
        let seen = Session { seen_ids: vec![A.into()], ..Session::default() };
        assert!(prerequisites(&c, &seen).is_empty());
    }
}

mod render {
    use serde_json::json;
    use signpost_hints::model::{Advice, Call, Hint};
    use signpost_hints::render::*;

    #[test]
    fn layout_is_tag_details_next_ask() {
        let advice = Advice {
            state_tag: "ambiguous".into(),
            summary: "Foo matches 2 symbols".into(),
            details: vec!["a".into(), "b".into()],
            hints: vec![
                Hint::call("describe", json!({"id": "x"}), "candidate"),
                Hint::advice("search", json!({}), "narrow it"),
            ],
            ask_user: Some("which Foo?".into()),
        };
        let call = Call::from_json("resolve", "{}");
        assert_eq!(
            render(&call, &advice),
            "[ambiguous] Foo matches 2 symbols\na\nb\n→ next: describe {\"id\":\"x\"} — candidate\nnote: narrow it\n? ask user: which Foo?"
        );
    }
}

/// The same inputs through the native build and the component give the same
/// answers: the native unit tests above speak for the component too.
mod component_agrees_with_native {
    use serde_json::{Value, json};
    use signpost::graph::Graph;
    use signpost::policy::{self, Limits, PolicyEngine};
    use signpost::tools::{self, StrictIds, Tool};
    use signpost_hints::model;

    fn to_wit_session(s: &model::Session) -> policy::Session {
        policy::Session { call_count: s.call_count, recent: vec![], seen_ids: s.seen_ids.clone() }
    }

    #[test]
    fn coercion_advice_and_text_match() {
        let engine = PolicyEngine::new(Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        let policy = engine.load(signpost::DEFAULT_POLICY, "embedded").unwrap_or_else(|e| panic!("{e}"));
        let mut lease = policy.cold_lease();
        let graph = Graph::sample();
        let id = |name: &str| graph.find_named(name).map(|n| n.id()).unwrap_or_default();
        let (ctrl, svc) = (id("OrderController"), id("OrderService"));
        let calls = [
            ("resolve", json!({"identifier": "placeOrder"})),
            ("resolve", json!({"identifier": "Nope", "kind": "class"})),
            ("describe", json!({"id": ctrl})),
            ("find", json!({"role": "service", "limit": 2})),
            ("search", json!({"query": "ordctl"})),
            ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]})),
            ("neighbors", json!({"ids": [svc], "direction": "in", "edge_types": ["EXPOSES"]})),
            ("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]})),
            ("neighbors", json!({"ids": format!("('{svc}', '{ctrl}',)"), "direction": "out", "edge_types": ["CALLS"]})),
            ("describe", json!({"id": [ctrl, svc]})),
        ];
        let sessions =
            [model::Session::default(), model::Session { call_count: 4, recent: vec![], seen_ids: vec![ctrl.clone()] }];
        for (tool, args) in calls {
            let call = policy::Call { tool: tool.into(), args: args.to_string() };
            let native_call = model::Call::from_json(tool, &call.args);
            // Coercion.
            for param in ["id", "ids"] {
                let wasm = lease.coerce_ids(&call, param).unwrap_or_else(|e| panic!("{e}"));
                let native = signpost_hints::coerce::coerce_ids(&native_call, param);
                match (wasm, native) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{tool} {args}"),
                    (Err(a), Err(b)) => {
                        assert_eq!(a.message, b.message, "{tool} {args}");
                        assert_eq!(serde_json::from_str::<Value>(&a.example).ok(), Some(b.example));
                    }
                    (a, b) => panic!("{tool} {args} {param}: component {:?} vs native {:?}", a.is_ok(), b.is_ok()),
                }
            }
            // Advice and text, for success and failure outcomes alike.
            let outcome = tools::parse(
                &graph,
                Tool::from_name(tool).expect("a tool"),
                args.as_object().unwrap_or(&Default::default()),
                &mut StrictIds,
            )
            .and_then(|p| tools::execute(&graph, p));
            let (wit_outcome, native_outcome) = match &outcome {
                Ok(v) => (policy::Outcome::Success(v.to_string()), model::Outcome::Success(v.to_string())),
                Err(e) => (
                    policy::Outcome::Failure(policy::WitToolError {
                        kind: policy::WitErrorKind::InvalidId,
                        message: e.message.clone(),
                        example: e.example.as_ref().map(Value::to_string),
                    }),
                    model::Outcome::Failure(model::ToolError {
                        kind: model::ErrorKind::InvalidId,
                        message: e.message.clone(),
                        example: e.example.clone(),
                    }),
                ),
            };
            for session in &sessions {
                let native = signpost_hints::advise::advise(&native_call, &native_outcome, session);
                let wasm =
                    lease.advise(&call, &wit_outcome, &to_wit_session(session)).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(wasm.state_tag, native.state_tag, "{tool} {args}");
                assert_eq!(wasm.summary, native.summary);
                assert_eq!(wasm.details, native.details);
                assert_eq!(wasm.ask_user, native.ask_user);
                let wasm_hints: Vec<(String, Value, bool, String)> = wasm
                    .hints
                    .iter()
                    .map(|h| {
                        (
                            h.tool.clone(),
                            serde_json::from_str(&h.args).unwrap_or_default(),
                            h.actionable,
                            h.reason.clone(),
                        )
                    })
                    .collect();
                let native_hints: Vec<(String, Value, bool, String)> = native
                    .hints
                    .iter()
                    .map(|h| (h.tool.clone(), h.args.clone(), h.actionable, h.reason.clone()))
                    .collect();
                assert_eq!(wasm_hints, native_hints, "{tool} {args}");
                let text = lease.render(&call, &wasm).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(text, signpost_hints::render::render(&native_call, &native), "{tool} {args}");
                let prereq = lease.prerequisites(&call, &to_wit_session(session)).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(prereq.hints.len(), signpost_hints::advise::prerequisites(&native_call, session).len());
                assert_eq!(prereq.hold, None, "a 0.1.0 policy never holds");
            }
        }
    }
}
