//! Follow-through, outcomes and bounds of the metrics, on hand-made calls.

use super::*;

fn shape(tool: &str, key: &str, ids: &[&str]) -> CallShape {
    CallShape { tool: tool.to_owned(), key: key.into(), ids: ids.iter().map(|s| (*s).to_owned()).collect() }
}

fn obs<'a>(tool: &'a str, s: &'a CallShape, outcome: Outcome, offered: Vec<CallShape>) -> Observation<'a> {
    Observation {
        seq: 0,
        tool,
        shape: Some(s),
        outcome,
        tag: "found",
        offered,
        notes: 0,
        text_bytes: 10,
        hint_bytes: 5,
        faulted: false,
        latency: Duration::from_micros(100),
    }
}

fn rev(n: usize) -> Revision {
    Revision { policy: format!("p{n}@1").into(), sha: format!("{n:012}").into() }
}

#[test]
fn follow_through_is_counted_on_the_offering_row() {
    let m = Metrics::new();
    let offered = Mutex::new(Offered::default());
    let mut seq = 0;
    let mut next = |tool, s, outcome, offered| {
        seq += 1;
        Observation { seq, ..obs(tool, s, outcome, offered) }
    };
    let a = shape("describe", "", &["a"]);
    let b = shape("neighbors", "out|CALLS|20|0", &["a"]);
    let b2 = shape("neighbors", "in|CALLS|20|0", &["a"]);
    let r = rev(1);
    assert_eq!(m.observe(Arm::Live, &r, &offered, next("describe", &a, Outcome::Ok, vec![b.clone()])), None);
    assert_eq!(
        m.observe(Arm::Live, &r, &offered, next("neighbors", &b, Outcome::Ok, vec![b2.clone()])),
        Some(Follow::Exact)
    );
    assert_eq!(
        m.observe(Arm::Live, &r, &offered, next("neighbors", &b, Outcome::Empty, vec![])),
        Some(Follow::Adapted)
    );
    // Nothing offered: the next call is not judged, and a repeat counts.
    assert_eq!(m.observe(Arm::Live, &r, &offered, next("describe", &a, Outcome::Ok, vec![])), None);
    let s = m.summary();
    assert_eq!(s[0]["responses"], 4, "{s:#}");
    assert_eq!(s[0]["calls_after_hints"], 2);
    assert_eq!(s[0]["followed"], 1);
    assert_eq!(s[0]["adapted"], 1);
    assert_eq!(s[0]["follow_rate"], 1.0);
    assert_eq!(s[0]["followed_ok_rate"], 0.5);
    assert_eq!(s[0]["dead_end_rate"], 0.25);
    assert_eq!(s[0]["repeat_rate"], 0.5);
    assert_eq!(s[0]["by_tool"]["describe"]["followed"], 1);
    assert_eq!(m.follow_of(Arm::Live, &r), (2, 4));
    let text = m.prometheus(Extra::default());
    assert!(text.contains("signpost_hints_followed_total{arm=\"live\",policy=\"p1@1\",revision=\"000000000001\",tool=\"describe\",state_tag=\"found\",follow=\"exact\"} 1"), "{text}");
    assert!(text.contains("signpost_tool_call_duration_seconds_bucket"), "{text}");
}

#[test]
fn a_call_is_judged_only_against_the_call_just_before_it() {
    let m = Metrics::new();
    let offered = Mutex::new(Offered::default());
    let (a, b) = (shape("describe", "", &["a"]), shape("neighbors", "out|CALLS|20|0", &["a"]));
    let r = rev(1);
    let first = Observation { seq: 1, ..obs("describe", &a, Outcome::Ok, vec![b.clone()]) };
    assert_eq!(m.observe(Arm::Live, &r, &offered, first), None);
    // Call 2 is still running (or its shadow job was dropped): call 3 did
    // not follow call 1's hints, whatever it is.
    let third = Observation { seq: 3, ..obs("neighbors", &b, Outcome::Ok, vec![b.clone()]) };
    assert_eq!(m.observe(Arm::Live, &r, &offered, third), None);
    let second = Observation { seq: 2, ..obs("neighbors", &b, Outcome::Ok, vec![]) };
    assert_eq!(m.observe(Arm::Live, &r, &offered, second), None);
    assert_eq!(m.summary()[0]["calls_after_hints"], 0);
}

#[test]
fn the_revision_in_use_is_never_forgotten() {
    let m = Metrics::new();
    let offered = Mutex::new(Offered::default());
    let a = shape("describe", "", &["a"]);
    for n in 0..(3 * MAX_REVISIONS) {
        m.observe(Arm::Shadow, &rev(n), &offered, obs("describe", &a, Outcome::Ok, vec![]));
        m.observe(Arm::Live, &rev(1000), &offered, obs("describe", &a, Outcome::Ok, vec![]));
    }
    let s = m.summary();
    let live = s.as_array().and_then(|rows| rows.iter().find(|r| r["arm"] == "live")).cloned();
    assert_eq!(live.map(|r| r["responses"].clone()), Some(json!(3 * MAX_REVISIONS)), "{s:#}");
}

#[test]
fn tags_and_revisions_are_bounded() {
    let m = Metrics::new();
    let offered = Mutex::new(Offered::default());
    let a = shape("describe", "", &["a"]);
    for n in 0..(MAX_REVISIONS + 4) {
        for t in 0..(MAX_TAGS + 10) {
            let tag = format!("t{t}");
            let mut o = obs("describe", &a, Outcome::Ok, vec![]);
            o.tag = &tag;
            m.observe(Arm::Live, &rev(n), &offered, o);
        }
    }
    let table = m.table();
    assert_eq!(table.revisions.len(), MAX_REVISIONS);
    assert_eq!(table.rows.len(), MAX_REVISIONS * (MAX_TAGS + 1));
    assert!(table.rows.keys().any(|k| &*k.tag == "other"));
}
