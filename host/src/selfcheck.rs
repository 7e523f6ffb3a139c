//! The self-check a policy must pass before it serves: a fixed set of probe
//! calls on the embedded sample graph, on a fresh instance under the normal
//! limits. It passes when nothing faults, coerced ids are canonical, teaching
//! errors carry a JSON example, state tags are well formed, text is rendered,
//! and every actionable hint validates exactly as it would for an agent.

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::graph::{Graph, is_id};
use crate::policy::{self, Policy};
use crate::tools::{self, StrictIds};
use crate::validate::HintValidator;

/// What the self-check ran.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Probe calls made to the policy.
    pub policy_calls: usize,
    /// Hints checked.
    pub hints_checked: usize,
    /// Of which actionable.
    pub actionable_checked: usize,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} probe calls, {} hints checked ({} actionable), all valid",
            self.policy_calls, self.hints_checked, self.actionable_checked
        )
    }
}

fn sessions(seen: &str) -> [policy::Session; 2] {
    [
        policy::Session { call_count: 0, recent: vec![], seen_ids: vec![] },
        policy::Session {
            call_count: 2,
            recent: vec![policy::PastCall { tool: "resolve".into(), ok: true, ids: vec![seen.to_owned()] }],
            seen_ids: vec![seen.to_owned()],
        },
    ]
}

/// Runs the probes. `Err` lists every problem found (the first 10).
pub fn run(policy: &Policy, validator: &HintValidator) -> Result<Report, String> {
    // Parsed once per process: every swap runs a self-check.
    static SAMPLE: OnceLock<Graph> = OnceLock::new();
    let graph = SAMPLE.get_or_init(Graph::sample);
    let id_of = |name: &str| graph.nodes().iter().find(|n| n.name == name).map(|n| n.id.clone()).unwrap_or_default();
    let (ctrl, svc) = (id_of("OrderController"), id_of("OrderService"));
    let mut problems: Vec<String> = Vec::new();
    let mut report = Report::default();
    let mut lease = policy.cold_lease();

    // Coercion probes: any answer is fine, as long as it is well formed.
    let shapes =
        [json!([ctrl, svc]), json!(format!("['{ctrl}']")), json!(ctrl), json!("OrderService"), json!(""), json!([1])];
    for ids in shapes {
        let call = policy::Call {
            tool: "neighbors".into(),
            args: json!({"ids": ids, "direction": "out", "edge_types": ["CALLS"]}).to_string(),
        };
        report.policy_calls += 1;
        match lease.coerce_ids(&call, "ids") {
            Err(fault) => problems.push(format!("coerce-ids({ids}): {fault}")),
            Ok(Ok(list)) if list.is_empty() || !list.iter().all(|i| is_id(i)) => {
                problems.push(format!("coerce-ids({ids}) returned non-canonical ids {list:?}"))
            }
            Ok(Err(e)) if !matches!(serde_json::from_str::<Value>(&e.example), Ok(Value::Object(_))) => {
                problems.push(format!("coerce-ids({ids}): the teaching error's example is not a JSON object"))
            }
            Ok(_) => {}
        }
    }

    // A call per tool on canned outcomes, plus failures.
    let probes = [
        ("resolve", json!({"identifier": "OrderController"})),
        ("resolve", json!({"identifier": "placeOrder"})),
        ("resolve", json!({"identifier": "NoSuchSymbol"})),
        ("describe", json!({"id": ctrl})),
        ("describe", json!({"id": "0".repeat(40)})),
        ("find", json!({"role": "controller", "limit": 2})),
        ("search", json!({"query": "payment"})),
        ("neighbors", json!({"ids": [ctrl], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]})),
        ("neighbors", json!({"ids": [ctrl], "direction": "in", "edge_types": ["EXPOSES"]})),
        ("neighbors", json!({"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]})),
    ];
    for (tool, args) in probes {
        let map = args.as_object().cloned().unwrap_or_default();
        let outcome = tools::parse(graph, tool, &map, &mut StrictIds).and_then(|p| tools::execute(graph, p));
        let wit_outcome = crate::pipeline::to_wit_outcome(&outcome);
        let call = policy::Call { tool: tool.into(), args: args.to_string() };
        for session in sessions(&svc) {
            let what = format!("{tool} {args}");
            let mut check_hints = |origin: &str, hints: &[policy::Hint], problems: &mut Vec<String>| {
                for hint in hints {
                    report.hints_checked += 1;
                    report.actionable_checked += usize::from(hint.actionable);
                    if let Err(why) = validator.check(graph, hint) {
                        problems.push(format!("{origin}({what}) returned an invalid hint: {why}"));
                    }
                }
            };
            report.policy_calls += 3;
            match lease.prerequisites(&call, &session) {
                Ok(hints) => check_hints("prerequisites", &hints, &mut problems),
                Err(fault) => problems.push(format!("prerequisites({what}): {fault}")),
            }
            let advice = match lease.advise(&call, &wit_outcome, &session) {
                Ok(advice) => advice,
                Err(fault) => {
                    problems.push(format!("advise({what}): {fault}"));
                    continue;
                }
            };
            check_hints("advise", &advice.hints, &mut problems);
            if !crate::pipeline::is_tag(&advice.state_tag) {
                problems.push(format!(
                    "advise({what}): state tag {:?} is not lower_snake_case",
                    crate::clip(&advice.state_tag)
                ));
            }
            match lease.render(&call, &advice) {
                Ok(text) if text.trim().is_empty() => problems.push(format!("render({what}) returned no text")),
                Ok(_) => {}
                Err(fault) => problems.push(format!("render({what}): {fault}")),
            }
        }
    }
    if problems.is_empty() {
        return Ok(report);
    }
    let mut message = format!("{} problem(s):", problems.len());
    for p in problems.iter().take(10) {
        let _ = write!(message, "\n  - {p}");
    }
    Err(message)
}
