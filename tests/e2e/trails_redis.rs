//! Trails in a shared Redis: two replicas serve one trail as one history; a
//! client following hints across replicas keeps session-aware advice; the
//! store's bounds, expiry, signing key and unreadable states; shell commands
//! and MCP clients on one trail.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::HttpServer;
use crate::common::redis::Redis;
use crate::common::toolchain;
use crate::common::trails::{
    ORDER_CONTROLLER, UNSEEN, hint_args, stateless_call, stateless_call_as, text_of, trail_of,
};
use crate::common::{CHAOS_POLICY, Client};

/// What the chaos policy says it was shown (`chaos:history`): the call
/// count and the recent tools.
fn history_seen(result: &Value) -> (u64, String) {
    let text = text_of(result);
    let at = text.find("history: calls=").unwrap_or_else(|| panic!("no history in {text}"));
    let mut words = text[at + "history: calls=".len()..].split_whitespace();
    let calls = words.next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{text}"));
    let recent = words.next().and_then(|w| w.strip_prefix("recent=")).unwrap_or_else(|| panic!("{text}"));
    (calls, recent.to_owned())
}

/// A call the chaos policy answers with the history it sees.
fn history_call(i: usize) -> (&'static str, Value) {
    match i % 3 {
        0 => ("search", json!({"query": "chaos:history"})),
        1 => ("find", json!({"name": "chaos:history"})),
        _ => ("resolve", json!({"identifier": "chaos:history"})),
    }
}

#[tokio::test]
async fn two_replicas_sharing_redis_serve_one_trail_as_one_history() {
    let Some(mut redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let replica = || HttpServer::start(&["--state", &url, "--policy", CHAOS_POLICY], &[]);
    let (a, b) = (replica(), replica());

    // One trail, its calls alternating between the replicas: the policy
    // sees every earlier call, in order, whichever replica served it.
    let first = stateless_call(&a.url, "search", json!({"query": "chaos:history"})).await;
    let trail = trail_of(&first);
    assert_eq!(history_seen(&first), (0, String::new()));
    let mut tools = vec!["search"];
    for i in 1..=8 {
        let server = if i % 2 == 1 { &b } else { &a };
        let (tool, mut args) = history_call(i);
        args["trail"] = json!(trail);
        let r = stateless_call(&server.url, tool, args).await;
        assert_eq!(trail_of(&r), trail, "{r}");
        assert!(r["structuredContent"]["trail_notice"].is_null(), "{r}");
        assert_eq!(
            history_seen(&r),
            (i as u64, tools.join(",")),
            "call {i}, at replica {}",
            if i % 2 == 1 { "b" } else { "a" }
        );
        tools.push(tool);
    }

    // Calls at once on both replicas: every one of them is in the history
    // after (a replica that wrote second adds its step to the first's).
    let mut at_once = tokio::task::JoinSet::new();
    for i in 0..16 {
        let url = if i % 2 == 0 { a.url.clone() } else { b.url.clone() };
        let args = json!({"query": "chaos:history", "trail": trail});
        at_once.spawn(async move { stateless_call(&url, "search", args).await });
    }
    for r in at_once.join_all().await {
        assert!(r["structuredContent"]["trail_notice"].is_null(), "{r}");
    }
    let after = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": trail})).await;
    assert_eq!(history_seen(&after).0, 9 + 16, "no step of the concurrent calls is lost");

    // A replica that starts later (or restarts) serves the trail too: the
    // history, and the key that signs handles, live in Redis.
    drop(a);
    let c = replica();
    let r = stateless_call(&c.url, "search", json!({"query": "chaos:history", "trail": trail})).await;
    assert_eq!(history_seen(&r).0, 9 + 16 + 1, "{r}");
    let minted_by_c = trail_of(&stateless_call(&c.url, "search", json!({"query": "chaos:history"})).await);
    let r = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": minted_by_c})).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && history_seen(&r).0 == 1, "{r}");

    // Still refused everywhere: a changed handle, and another caller's trail.
    let mut changed = trail.clone();
    let last = changed.pop().unwrap_or('A');
    changed.push(if last == 'A' { 'B' } else { 'A' });
    let r = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": changed})).await;
    let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
    assert!(notice.contains("not a trail this server issued") && history_seen(&r).0 == 0, "{r}");
    let guarded =
        HttpServer::start(&["--state", &url, "--policy", CHAOS_POLICY], &[("SIGNPOST_TOKEN", "a long other token")]);
    let r = stateless_call_as(
        &guarded.url,
        Some("a long other token"),
        "search",
        json!({"query": "chaos:history", "trail": trail}),
    )
    .await;
    let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
    assert!(notice.contains("other credentials") && history_seen(&r).0 == 0, "{r}");

    // Redis hung (stopped, its connections open), then gone: calls answer
    // at once, on their trail, saying its step is not kept; then calls
    // that follow are not held up by it either.
    let calls =
        history_seen(&stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": trail})).await).0;
    for (what, signal) in [("hung", Some("STOP")), ("gone", None)] {
        match signal {
            Some(signal) => redis.signal(signal),
            None => {
                redis.signal("CONT");
                redis.stop();
            }
        }
        for _ in 0..3 {
            let started = std::time::Instant::now();
            let r = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": trail})).await;
            let waited = started.elapsed();
            let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
            assert!(notice.contains("trail store is unavailable") && !notice.contains("127.0.0.1"), "{what}: {r}");
            assert!(text_of(&r).contains("answered by chaos") && trail_of(&r) == trail, "{what}: {r}");
            // A stalled store costs a call its deadline (0.5 s), not more.
            assert!(waited < Duration::from_secs(3), "{what}: a call waited {waited:?}");
        }
    }
    // Redis back (empty: nothing was saved): the replicas use it again
    // once their back-off passes; the old trail is gone, a new one works.
    let _redis = Redis::start_at(redis.port).unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let r = loop {
        let r = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": trail})).await;
        let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default().to_owned();
        if !notice.contains("unavailable") || std::time::Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
    assert!(notice.contains("expired"), "the store is back, without the trail: {r}");
    let fresh = trail_of(&r);
    let r = stateless_call(&b.url, "search", json!({"query": "chaos:history", "trail": fresh})).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && history_seen(&r).0 == 1, "{r}");
    assert!(calls > 0);
}

#[tokio::test]
async fn a_client_following_hints_across_two_replicas_gets_session_aware_advice() {
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let (a, b) = (HttpServer::start(&["--state", &url], &[]), HttpServer::start(&["--state", &url], &[]));
    let resolved = stateless_call(&a.url, "resolve", json!({"identifier": "OrderController"})).await;
    // The hint, followed at the other replica: the resolve that found the
    // id is in the history there (the default policy does not say "not
    // seen in this session").
    let followed = stateless_call(&b.url, "describe", hint_args(&resolved, "describe")).await;
    assert_eq!(followed["structuredContent"]["record"]["id"], ORDER_CONTROLLER, "{followed}");
    assert!(!text_of(&followed).contains(UNSEEN), "{}", text_of(&followed));
    assert_eq!(trail_of(&followed), trail_of(&resolved));
    // The same call without the trail, at either replica: a new history.
    for server in [&a, &b] {
        let cold = stateless_call(&server.url, "describe", json!({"id": ORDER_CONTROLLER})).await;
        assert!(text_of(&cold).contains(UNSEEN), "{}", text_of(&cold));
    }

    // A walk that follows the first actionable hint, ten calls deep: over
    // stdio (one session), and sessionless with calls alternating between
    // the replicas. Every answer is the same, text and structure, but for
    // the trail the sessionless one carries.
    let stdio = Client::default().await;
    let mut step = ("resolve".to_owned(), json!({"identifier": "OrderController"}));
    let mut walk = Vec::new();
    for _ in 0..10 {
        let reply = stdio.call(&step.0, step.1.clone()).await;
        walk.push((step.clone(), reply.text.clone(), reply.structured.clone()));
        let Some(next) = reply.actionable().into_iter().next() else { break };
        step = next;
    }
    stdio.close().await;
    assert!(walk.len() >= 4, "the walk ended early: {walk:?}");
    let mut trail: Option<String> = None;
    for (i, ((tool, args), text, structured)) in walk.iter().enumerate() {
        let mut args = args.clone();
        if let Some(trail) = &trail {
            args["trail"] = json!(trail);
        }
        let server = if i % 2 == 0 { &a } else { &b };
        let r = stateless_call(&server.url, tool, args).await;
        let here = trail_of(&r);
        assert!(trail.as_ref().is_none_or(|t| *t == here), "one trail throughout: {r}");
        let untrailed =
            text_of(&r).replace(&format!(",\"trail\":\"{here}\""), "").replace(&format!("\"trail\":\"{here}\","), "");
        assert_eq!(&untrailed, text, "step {i}, {tool}: the same advice as over stdio");
        let mut same = r["structuredContent"].clone();
        same.as_object_mut().map(|m| m.remove("trail"));
        for hint in same["hints"].as_array_mut().into_iter().flatten() {
            hint["args"].as_object_mut().map(|m| m.remove("trail"));
        }
        assert_eq!(&same, structured, "step {i}, {tool}");
        trail = Some(here);
    }
}

#[test]
fn a_trail_store_that_cannot_be_used_stops_the_server_with_a_clear_error() {
    // (URL, what the error says); the password never reaches the output.
    let cases = [
        ("not a url", "not a Redis URL"),
        ("redis://:hunter2pw@127.0.0.1:1/3", "cannot reach the trail store at redis://127.0.0.1:1/3"),
        ("rediss://:hunter2pw@127.0.0.1:1", "TLS to Redis (rediss://) is not built in"),
        ("http://:hunter2pw@127.0.0.1:1", "not a Redis URL"),
    ];
    for (url, says) in cases {
        let (ok, out) = crate::common::run_cli(&["--http", "127.0.0.1:0", "--state", url]);
        assert!(!ok && out.contains(says) && !out.contains("hunter2pw"), "{url}: {out}");
    }
    // A shell command on a store it cannot reach: the same error, exit 2.
    let (ok, out) = crate::common::run_cli(&["describe", ORDER_CONTROLLER, "--state", "redis://127.0.0.1:1"]);
    assert!(!ok && out.contains("cannot reach the trail store"), "{out}");
}

/// A store that answers but refuses (another program's value under
/// Signpost's key, a password not given or wrong) is not called
/// unreachable: the error says what to look at.
#[test]
fn a_trail_store_that_refuses_says_so() {
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let port = redis.port;
    let refuses = |url: &str| {
        let (ok, out) = crate::common::run_cli(&["--http", "127.0.0.1:0", "--state", url]);
        assert!(!ok && out.contains("answers but refuses") && !out.contains("cannot reach"), "{url}: {out}");
        assert!(!out.contains("hunter2pw"), "{out}");
    };
    assert_eq!(redis_command(&redis, &["RPUSH", "{signpost}:v1:key", "x"]), ":1");
    refuses(&redis.url());
    assert_eq!(redis_command(&redis, &["DEL", "{signpost}:v1:key"]), ":1");
    assert_eq!(redis_command(&redis, &["CONFIG", "SET", "requirepass", "correct-horse"]), "+OK");
    refuses(&format!("redis://127.0.0.1:{port}"));
    refuses(&format!("redis://:hunter2pw@127.0.0.1:{port}"));
}

#[tokio::test]
async fn trails_in_redis_are_bounded_and_expire_as_in_process() {
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let start = |server: &HttpServer| {
        let url = server.url.clone();
        async move { trail_of(&stateless_call(&url, "search", json!({"query": "chaos:history"})).await) }
    };
    let on = |server: &HttpServer, trail: &str| {
        let (url, args) = (server.url.clone(), json!({"query": "chaos:history", "trail": trail}));
        async move { stateless_call(&url, "search", args).await }
    };
    let notice = |r: &Value| r["structuredContent"]["trail_notice"].as_str().unwrap_or_default().to_owned();
    // Two new trails at most, whichever replica started them (a lifetime
    // of an hour: only the bound can remove one): the first of three is
    // pushed out; one continued is kept past two more new ones. One
    // replica is given the store by flag, the other by SIGNPOST_STATE.
    let bounded = ["--policy", CHAOS_POLICY, "--max-trails", "2"];
    let a = HttpServer::start(&[&["--state", &url][..], &bounded].concat(), &[]);
    let b = HttpServer::start(&bounded, &[("SIGNPOST_STATE", &url)]);
    let (first, second) = (start(&a).await, start(&b).await);
    let continued = on(&a, &second).await;
    assert!(notice(&continued).is_empty(), "{continued}");
    let _third = start(&b).await;
    let _fourth = start(&a).await;
    let r = on(&b, &first).await;
    assert!(notice(&r).contains("expired"), "{r}");
    let r = on(&b, &second).await;
    assert!(notice(&r).is_empty() && history_seen(&r).0 == 2, "{r}");
    drop((a, b));
    // Unused past its lifetime: gone from Redis, on every replica.
    let expiring = ["--policy", CHAOS_POLICY, "--trail-idle-secs", "2", "--state", &url];
    let (a, b) = (HttpServer::start(&expiring, &[]), HttpServer::start(&expiring, &[]));
    let trail = start(&a).await;
    let r = on(&b, &trail).await;
    assert!(notice(&r).is_empty() && history_seen(&r).0 == 1, "{r}");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let r = on(&a, &trail).await;
    assert!(notice(&r).contains("expired") && history_seen(&r).0 == 0, "{r}");
}

#[tokio::test]
async fn shell_commands_on_the_store_thread_one_trail_with_mcp_clients() {
    use crate::common::cli::{in_shell, next_commands, signpost};
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let describe_next = |stdout: &str| {
        next_commands(stdout)
            .into_iter()
            .find(|c| c.contains(" describe "))
            .unwrap_or_else(|| panic!("no describe suggested:\n{stdout}"))
    };
    // Without a store, each command is a history of its own; the id on the
    // suggested command's line counts as seen there (it came from this
    // command's output), so the policy does not call it unseen.
    let alone = signpost(&["resolve", "OrderController", "--color", "never"]);
    let next = describe_next(&alone.stdout);
    assert!(!next.contains("--trail"), "{next}");
    assert!(!in_shell(&next).stdout.contains(UNSEEN));
    // With one, the suggested command carries the trail and the store, and
    // the policy sees the resolve the command before it made.
    let first = signpost(&["resolve", "OrderController", "--color", "never", "--state", &url]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let next = describe_next(&first.stdout);
    assert!(next.contains("--trail tr_") && next.contains(&format!("--state {url}")), "{next}");
    let followed = in_shell(&next);
    assert!(followed.code == 0 && !followed.stdout.contains(UNSEEN), "{next}\n{}", followed.stdout);
    assert!(!followed.stdout.contains("note:"), "{}", followed.stdout);
    // The trail is the server's too: an MCP client of a replica on the same
    // store continues it, and a shell continues what the client did.
    let trail = next.split_whitespace().skip_while(|w| *w != "--trail").nth(1).unwrap_or_default().to_owned();
    let server = HttpServer::start(&["--state", &url], &[]);
    let r = stateless_call(&server.url, "describe", json!({"id": ORDER_CONTROLLER, "trail": trail})).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && !text_of(&r).contains(UNSEEN), "{r}");
    let json = signpost(&[
        "call",
        "describe",
        &json!({"id": ORDER_CONTROLLER, "trail": trail}).to_string(),
        "--format",
        "json",
        "--state",
        &url,
    ]);
    let json: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("{e}: {}", json.stdout));
    assert_eq!(json["trail"], trail.as_str(), "{json}");
    assert!(json["trail_notice"].is_null(), "{json}");
    // A trail without a store to keep it, or one changed: said plainly.
    let refused = signpost(&["describe", ORDER_CONTROLLER, "--trail", &trail]);
    assert!(refused.code == 2 && refused.stderr.contains("--state"), "{}", refused.stderr);
    let changed = format!("{}{}", &trail[..trail.len() - 1], if trail.ends_with('x') { 'y' } else { 'x' });
    let r = signpost(&["describe", ORDER_CONTROLLER, "--trail", &changed, "--state", &url, "--color", "never"]);
    assert!(
        r.code == 0 && r.stdout.contains("note: the trail") && r.stdout.contains("started a new trail"),
        "{}",
        r.stdout
    );
}

/// One Redis command, in RESP, on a fresh connection: the reply's first line.
fn redis_command(redis: &Redis, args: &[&str]) -> String {
    use std::io::{BufRead as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port)).unwrap_or_else(|e| panic!("{e}"));
    let mut command = format!("*{}\r\n", args.len());
    for arg in args {
        command.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(command.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let mut reply = String::new();
    std::io::BufReader::new(stream).read_line(&mut reply).unwrap_or_else(|e| panic!("{e}"));
    reply.trim_end().to_owned()
}

/// A number from the store's `INFO` (`total_net_output_bytes`, …).
fn redis_info(redis: &Redis, field: &str) -> u64 {
    use std::io::{BufRead as _, Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port)).unwrap_or_else(|e| panic!("{e}"));
    stream.write_all(b"*1\r\n$4\r\nINFO\r\n").unwrap_or_else(|e| panic!("{e}"));
    let mut reader = std::io::BufReader::new(stream);
    let mut header = String::new();
    reader.read_line(&mut header).unwrap_or_else(|e| panic!("{e}"));
    let len: usize = header.trim_start_matches('$').trim_end().parse().unwrap_or_else(|e| panic!("{header}: {e}"));
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap_or_else(|e| panic!("{e}"));
    let body = String::from_utf8_lossy(&body);
    let line = body.lines().find_map(|l| l.strip_prefix(&format!("{field}:"))).unwrap_or_else(|| panic!("{body}"));
    line.trim().parse().unwrap_or_else(|e| panic!("{field}: {e}"))
}

#[tokio::test]
async fn a_replica_adopts_the_signing_key_the_store_holds() {
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let replica = || HttpServer::start(&["--state", &url, "--policy", CHAOS_POLICY], &[]);
    let call = |server: &HttpServer, trail: Option<&str>| {
        let mut args = json!({"query": "chaos:history"});
        if let Some(trail) = trail {
            args["trail"] = json!(trail);
        }
        let url = server.url.clone();
        async move { stateless_call(&url, "search", args).await }
    };
    let a = replica();
    let old = trail_of(&call(&a, None).await);
    // The store loses the key (evicted, or a failover to a copy without
    // it); a replica that starts then sets another.
    assert_eq!(redis_command(&redis, &["DEL", "{signpost}:v1:key"]), ":1");
    let b = replica();
    let b_first = trail_of(&call(&b, None).await);
    // A's trail from before is still A's (its old key, its owner)…
    let r = call(&a, Some(&old)).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && history_seen(&r).0 == 1, "{r}");
    // …and once A has looked again (at most every 5 s), the trails it
    // starts are signed with the store's key, good at B; B's are good at A.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    let fresh = trail_of(&call(&a, None).await);
    let r = call(&b, Some(&fresh)).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && history_seen(&r).0 == 1, "{r}");
    let r = call(&a, Some(&b_first)).await;
    assert!(r["structuredContent"]["trail_notice"].is_null() && history_seen(&r).0 == 1, "{r}");
}

#[tokio::test]
async fn a_trail_whose_stored_state_cannot_be_read_is_refused_not_stuck() {
    use base64::Engine as _;
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let server = HttpServer::start(&["--state", &redis.url(), "--policy", CHAOS_POLICY], &[]);
    let first = stateless_call(&server.url, "search", json!({"query": "chaos:history"})).await;
    let trail = trail_of(&first);
    // A trail's key: its id, the handle's first 16 bytes.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let key_of = |trail: &str| {
        let bytes = b64.decode(trail.trim_start_matches("tr_")).unwrap_or_else(|e| panic!("{e}"));
        format!("{{signpost}}:v1:trail:{}", b64.encode(&bytes[..16]))
    };
    let key = key_of(&trail);
    let huge = format!("{{\"history\":\"{}\"}}", "x".repeat(300 * 1024));
    let enormous = format!("{{\"history\":\"{}\"}}", "x".repeat(60 << 20));
    for garbage in ["not json", "{\"owner\":[1,2]}", huge.as_str(), enormous.as_str()] {
        assert_eq!(redis_command(&redis, &["HSET", &key, "s", garbage]), ":0", "the trail is stored");
        let sent_before = redis_info(&redis, "total_net_output_bytes");
        let r = stateless_call(&server.url, "search", json!({"query": "chaos:history", "trail": trail})).await;
        let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
        assert!(notice.contains("stored state") && notice.contains("started a new trail"), "{r}");
        assert!(history_seen(&r).0 == 0 && trail_of(&r) != trail, "{r}");
        // A state over the bound is refused by its size: it never leaves the store.
        if garbage.len() > 256 * 1024 {
            let sent = redis_info(&redis, "total_net_output_bytes") - sent_before;
            assert!(sent < 64 * 1024, "{sent} bytes sent for a refused state of {}", garbage.len());
            assert!(notice.contains("not read"), "{r}");
        }
    }
    // A version that is no whole number, or the key of another type (what
    // another program wrote there): that trail is refused too, and the
    // store goes on for every other trail (not left alone for a while, as
    // when it fails).
    let healthy = trail_of(&stateless_call(&server.url, "search", json!({"query": "chaos:history"})).await);
    let spoil: [&dyn Fn(&str) -> String; 3] = [
        &|key| redis_command(&redis, &["HSET", key, "v", "abc"]),
        &|key| redis_command(&redis, &["HSET", key, "v", "1.5"]),
        &|key| {
            redis_command(&redis, &["DEL", key]);
            redis_command(&redis, &["SET", key, "plain"])
        },
    ];
    for (case, spoil) in (1..).zip(spoil.iter()) {
        let spoiled = trail_of(&stateless_call(&server.url, "search", json!({"query": "chaos:history"})).await);
        spoil(&key_of(&spoiled));
        let r = stateless_call(&server.url, "search", json!({"query": "chaos:history", "trail": spoiled})).await;
        let notice = r["structuredContent"]["trail_notice"].as_str().unwrap_or_default();
        assert!(notice.contains("cannot read") && notice.contains("started a new trail"), "case {case}: {r}");
        assert!(trail_of(&r) != spoiled, "case {case}: {r}");
        let r = stateless_call(&server.url, "search", json!({"query": "chaos:history", "trail": healthy})).await;
        assert!(r["structuredContent"]["trail_notice"].is_null(), "case {case}: another trail goes on: {r}");
        assert_eq!(history_seen(&r).0, case, "case {case}: its steps are kept: {r}");
    }
}

/// A proxy's call held on one replica goes through when sent again on
/// another: the trail in the store keeps that it was held (and what its
/// results showed), not only that it was made.
#[tokio::test]
async fn a_call_held_on_one_replica_goes_through_on_another() {
    let Some(redis) = toolchain::require("redis-server", Redis::start()) else { return };
    let url = redis.url();
    let dir = crate::common::agents::temp_dir("redis-held");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let calls = dir.join("calls");
    let flags = ["--http", "127.0.0.1:0", "--state", &url, "--policy", crate::common::CHAOS_V3_POLICY];
    let argv = crate::common::proxy_before_rogue(&flags);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let env = [("ROGUE_CALLS", calls.to_str().unwrap_or_default())];
    let (a, b) = (HttpServer::start_argv(&argv, &env), HttpServer::start_argv(&argv, &env));
    let sent = || std::fs::read_to_string(&calls).unwrap_or_default().lines().count();

    let held = stateless_call(&a.url, "echo", json!({"text": "chaos:hold"})).await;
    assert_eq!(held["isError"], true, "{held}");
    assert_eq!(sent(), 0);
    let again = crate::common::trails::proxied_hint_args(&held, "echo");
    for (n, server) in [&b, &a, &b].into_iter().enumerate() {
        let through = stateless_call(&server.url, "echo", again.clone()).await;
        assert_ne!(through["isError"], true, "repeat {}: {through}", n + 1);
        assert_eq!(sent(), n + 1);
    }
}
