//! The default policy's logic, run natively (fast): coercion, the hint
//! catalogue rules, prerequisites and rendering; and its allocator.

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

    /// The prerequisites' hints count toward the five: the advice keeps
    /// what is left, best first.
    #[test]
    fn the_advice_leaves_room_for_the_prerequisites() {
        let result = json!({
            "record": {"id": A, "kind": "class", "name": "OrderController", "fqn": "shop.OrderController"},
            "edge_summary": {"out": {"DECLARES": 4, "DECLARES.EXPOSES": 3, "CALLS": 2}, "in": {"REFERENCES": 1, "CALLS": 5}}
        });
        let (c, outcome) = (call("describe", json!({"id": A})), Outcome::Success(result.to_string()));
        let all = advise_after(&c, &outcome, 0).hints;
        assert!(all.len() >= 3, "{all:#?}");
        for before in 1..=MAX_HINTS {
            let kept = advise_after(&c, &outcome, before).hints;
            assert_eq!(kept, all[..all.len().min(MAX_HINTS - before)], "{before} before");
        }
        let unseen = advise(&c, &outcome, &Session::default()).hints;
        assert_eq!(unseen, all[..all.len().min(MAX_HINTS - 1)], "one prerequisite: an unseen id");
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

    fn to_wit_session(s: &model::Session) -> std::sync::Arc<policy::Session> {
        std::sync::Arc::new(policy::Session { call_count: s.call_count, recent: vec![], seen_ids: s.seen_ids.clone() })
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
                assert_eq!(prereq.hold, None, "the default policy never holds");
            }
        }
    }
}

/// The default policy's allocator (`hints-component/src/arena.rs`), run
/// natively over the system allocator (driving an allocator takes raw
/// pointers: `unsafe` here only).
#[allow(unsafe_code)]
mod arena {
    use signpost_hints::arena::{ARENA_BYTES, Arena};
    use std::alloc::{GlobalAlloc, Layout, System};

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).expect("a valid layout")
    }

    #[test]
    fn a_call_s_allocations_bump_and_the_arena_restarts_when_all_are_freed() {
        let arena = Arena::new(System);
        unsafe {
            let a = arena.alloc(layout(10, 1));
            let b = arena.alloc(layout(8, 8));
            assert!(arena.holds(a) && arena.holds(b));
            assert_eq!(b as usize % 8, 0, "aligned as asked");
            assert!(b as usize >= a as usize + 10, "no overlap");
            a.write_bytes(1, 10);
            b.write_bytes(2, 8);
            assert_eq!(arena.live(), 2);
            arena.dealloc(a, layout(10, 1));
            assert_eq!(*b, 2, "freeing one leaves the other alone");
            let c = arena.alloc(layout(4, 4));
            assert!(c as usize >= b as usize + 8, "a freed block that is not the last is not reused while others live");
            arena.dealloc(b, layout(8, 8));
            arena.dealloc(c, layout(4, 4));
            assert_eq!(arena.live(), 0);
            assert_eq!(arena.alloc(layout(10, 1)), a, "nothing live: the arena starts again");
        }
    }

    #[test]
    fn the_last_allocation_grows_in_place_and_others_move() {
        let arena = Arena::new(System);
        unsafe {
            let a = arena.alloc(layout(16, 8));
            a.write_bytes(7, 16);
            let grown = arena.realloc(a, layout(16, 8), 4096);
            assert_eq!(grown, a, "the last allocation grows where it is");
            let b = arena.alloc(layout(8, 8));
            let moved = arena.realloc(a, layout(4096, 8), 8192);
            assert_ne!(moved, a, "one that is not the last moves");
            assert!((0..16).all(|i| *moved.add(i) == 7), "and keeps its bytes");
            assert_eq!(arena.live(), 2, "moving frees the old block");
            let shrunk = arena.realloc(b, layout(8, 8), 4);
            assert_eq!(shrunk, b);
            arena.dealloc(moved, layout(8192, 8));
            arena.dealloc(b, layout(4, 8));
            assert_eq!(arena.live(), 0);
        }
    }

    #[test]
    fn what_does_not_fit_goes_to_the_backing_allocator() {
        let arena = Arena::new(System);
        unsafe {
            let big = arena.alloc(layout(ARENA_BYTES + 1, 8));
            assert!(!big.is_null() && !arena.holds(big), "larger than the arena");
            big.write_bytes(0, ARENA_BYTES + 1);
            // Something that outlives its call: the arena fills, then
            // everything goes to the backing allocator until it is freed.
            let kept = arena.alloc(layout(64, 8));
            let mut fillers = Vec::new();
            loop {
                let p = arena.alloc(layout(1024, 8));
                if !arena.holds(p) {
                    arena.dealloc(p, layout(1024, 8));
                    break;
                }
                fillers.push(p);
            }
            assert!(fillers.len() < ARENA_BYTES / 1024, "bounded by the arena's size");
            for p in fillers {
                arena.dealloc(p, layout(1024, 8));
            }
            let grown = arena.realloc(big, layout(ARENA_BYTES + 1, 8), ARENA_BYTES * 2);
            assert!(!grown.is_null() && !arena.holds(grown));
            arena.dealloc(grown, layout(ARENA_BYTES * 2, 8));
            assert_eq!(arena.live(), 1);
            arena.dealloc(kept, layout(64, 8));
            assert_eq!(arena.alloc(layout(64, 8)), kept, "restarted once the last one went");
        }
    }

    #[test]
    fn a_std_workload_round_trips() {
        // Collections on top of the arena keep their contents through
        // growth, moves and frees, as a call's strings and vectors do.
        let arena = Arena::new(System);
        unsafe {
            let mut ptrs: Vec<(*mut u8, Layout, u8)> = Vec::new();
            for round in 0..50u8 {
                for i in 0..40usize {
                    let l = layout(1 + (i * 37 + round as usize) % 200, 1 << (i % 4));
                    let p = arena.alloc(l);
                    p.write_bytes(round, l.size());
                    ptrs.push((p, l, round));
                }
                // Grow every third (up to a bound), free every other.
                for (k, (p, l, fill)) in ptrs.iter_mut().enumerate() {
                    if k % 3 == 0 && l.size() < 4096 {
                        let q = arena.realloc(*p, *l, l.size() * 2);
                        q.add(l.size()).write_bytes(*fill, l.size());
                        *l = layout(l.size() * 2, l.align());
                        *p = q;
                    }
                }
                let mut k = 0;
                ptrs.retain(|(p, l, fill)| {
                    k += 1;
                    assert!((0..l.size()).all(|i| *p.add(i) == *fill), "contents intact");
                    if k % 2 == 0 {
                        arena.dealloc(*p, *l);
                        false
                    } else {
                        true
                    }
                });
            }
            for (p, l, _) in ptrs {
                arena.dealloc(p, l);
            }
            assert_eq!(arena.live(), 0);
        }
    }
}
