//! Trails: the session context carried by a state handle. A client on the
//! 2026-07-28 revision (no sessions, every request on its own) that follows
//! hints gets the same session-aware advice as a stdio client; a handle
//! that was changed, expired or is not a string is refused with a note, and
//! the call still answers. A session client's answers do not change.

use std::time::Duration;

use serde_json::json;

use crate::common::Client;
use crate::common::http::HttpServer;
use crate::common::trails::{ORDER_CONTROLLER, UNSEEN, hint_args, session_call, stateless_call, text_of, trail_of};

#[tokio::test]
async fn a_sessionless_client_that_follows_hints_keeps_its_history() {
    let server = HttpServer::start(&[], &[]);
    let resolved = stateless_call(&server.url, "resolve", json!({"identifier": "OrderController"})).await;
    let trail = trail_of(&resolved);
    // Every actionable hint carries the trail, in the structured hints and in the text.
    for h in resolved["structuredContent"]["hints"].as_array().into_iter().flatten() {
        assert_eq!(h["args"]["trail"], trail, "{h}");
    }
    assert!(text_of(&resolved).contains(&format!("\"trail\":\"{trail}\"")), "{}", text_of(&resolved));
    assert!(!resolved.to_string().contains(signpost::trails::carry::STAND_IN), "{resolved}");

    // Without the trail, each request is a new history: the id is unseen.
    let cold = stateless_call(&server.url, "describe", json!({"id": ORDER_CONTROLLER})).await;
    assert!(text_of(&cold).contains(UNSEEN), "{}", text_of(&cold));
    assert_ne!(trail_of(&cold), trail);
    // Following the hint as sent (trail included): the policy sees the
    // resolve that found the id.
    let followed = stateless_call(&server.url, "describe", hint_args(&resolved, "describe")).await;
    assert!(!text_of(&followed).contains(UNSEEN), "{}", text_of(&followed));
    assert_eq!(trail_of(&followed), trail);
    assert_eq!(followed["structuredContent"]["record"]["id"], ORDER_CONTROLLER);

    // A handle changed by one character, or not a string: refused with a
    // note, and the call still answers, on a new trail.
    let mut changed = trail.clone();
    let last = changed.pop().unwrap_or('A');
    changed.push(if last == 'A' { 'B' } else { 'A' });
    for bad in [json!(changed), json!(42), json!({"trail": trail})] {
        let r = stateless_call(&server.url, "describe", json!({"id": ORDER_CONTROLLER, "trail": bad})).await;
        assert_eq!(r["structuredContent"]["record"]["id"], ORDER_CONTROLLER, "{r}");
        let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
        assert!(notice.contains("started a new trail"), "{r}");
        assert!(text_of(&r).contains(&format!("note: {notice}")), "{}", text_of(&r));
        assert_ne!(trail_of(&r), trail);
    }
    // The trail is still good after the refusals.
    let again = stateless_call(&server.url, "describe", json!({"id": ORDER_CONTROLLER, "trail": trail})).await;
    assert!(again["structuredContent"]["trail_notice"].is_null() && !text_of(&again).contains(UNSEEN), "{again}");
}

#[tokio::test]
async fn a_session_keeps_its_history_without_a_trail_and_takes_one_when_sent() {
    let server = HttpServer::start(&[], &[]);
    let client = server.client(None).await.unwrap_or_else(|e| panic!("{e}"));
    // A session: its own history, and nothing in its answers changes.
    let (text, structured) = session_call(&client, "resolve", json!({"identifier": "OrderController"})).await;
    assert!(structured["trail"].is_null() && !text.contains("trail"), "{text}");
    let (text, _) = session_call(&client, "describe", json!({"id": ORDER_CONTROLLER})).await;
    assert!(!text.contains(UNSEEN), "{text}");
    // A trail a sessionless request started, continued in the session: the
    // call runs on that trail's history, which has not seen the id.
    let elsewhere = stateless_call(&server.url, "search", json!({"query": "refund"})).await;
    let trail = trail_of(&elsewhere);
    let (text, structured) = session_call(&client, "describe", json!({"id": ORDER_CONTROLLER, "trail": trail})).await;
    assert_eq!(structured["trail"], trail.as_str());
    assert!(text.contains(UNSEEN), "{text}");
    // And the session's own history is still its own; `null` or `""` is no
    // trail (models fill optional arguments so), and a handle that cannot be
    // used leaves the call on the session's history, with a note.
    for absent in [json!(null), json!("")] {
        let (text, structured) =
            session_call(&client, "describe", json!({"id": ORDER_CONTROLLER, "trail": absent})).await;
        assert!(!text.contains(UNSEEN) && structured["trail_notice"].is_null(), "{absent}: {text}");
    }
    let (text, structured) =
        session_call(&client, "describe", json!({"id": ORDER_CONTROLLER, "trail": "tr_forged"})).await;
    let notice = structured["trail_notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("not a trail this server issued") && notice.contains("this session's own history"),
        "{structured}"
    );
    assert!(!text.contains(UNSEEN) && structured["trail"].is_null(), "{text}");
    let _ = client.cancel().await;
    // stdio: the same, one session per process.
    let stdio = Client::default().await;
    let resolved = stdio.call("resolve", json!({"identifier": "OrderController"})).await;
    assert!(resolved.structured["trail"].is_null(), "{}", resolved.structured);
    let next = stdio.call("describe", json!({"id": ORDER_CONTROLLER})).await;
    assert!(!next.text.contains(UNSEEN), "{}", next.text);
    stdio.close().await;
}

#[tokio::test]
async fn an_unused_trail_expires_and_says_so() {
    let server = HttpServer::start(&["--trail-idle-secs", "1"], &[]);
    let resolved = stateless_call(&server.url, "resolve", json!({"identifier": "OrderController"})).await;
    let trail = trail_of(&resolved);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let late = stateless_call(&server.url, "describe", hint_args(&resolved, "describe")).await;
    let notice = late["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
    assert!(notice.contains("expired"), "{late}");
    assert!(text_of(&late).contains(UNSEEN), "a new trail is a new history: {}", text_of(&late));
    assert_ne!(trail_of(&late), trail);
}
