//! Handles, owners, expiry and the bound on trails, in this process.

use super::*;

/// Runs one of the store's futures (the in-process store never waits).
fn now<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(f)
}

#[test]
fn a_trail_is_found_again_by_its_owner_only() {
    let trails = Trails::default();
    let alice = Owner::of_token("alice's long token");
    let first = now(trails.start(alice));
    let handle = first.handle.clone().unwrap_or_default();
    assert!(handle.starts_with(PREFIX) && handle.len() == HANDLE_LEN, "{handle}");
    let again = now(trails.open(Some(serde_json::json!(&handle)), alice, None));
    assert!(again.notice.is_none() && Arc::ptr_eq(&again.context, &first.context));
    // The token as the header carries it, however it is spaced.
    let again = now(trails.open(
        Some(serde_json::json!(&handle)),
        Owner::of_authorization("bearer   alice's long token "),
        None,
    ));
    assert!(again.notice.is_none(), "{:?}", again.notice);
    let mallory = now(trails.open(Some(serde_json::json!(&handle)), Owner::of_token("mallory's token"), None));
    assert!(!Arc::ptr_eq(&mallory.context, &first.context));
    assert!(mallory.notice.as_deref().is_some_and(|n| n.contains("other credentials")), "{:?}", mallory.notice);
}

#[test]
fn tampered_and_expired_handles_are_told_apart() {
    let trails = Trails::new(Duration::from_millis(50), 100);
    let owner = Owner::default();
    let t = now(trails.start(owner));
    let handle = t.handle.clone().unwrap_or_default();
    let mut chars: Vec<char> = handle.chars().collect();
    let last = chars.len() - 1;
    chars[last] = if chars[last] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    for bad in [tampered.as_str(), "tr_", "tr_!!!!", &handle[..handle.len() - 1], "x".repeat(10_000).as_str()] {
        let o = now(trails.open(Some(serde_json::json!(bad)), owner, None));
        assert!(o.notice.as_deref().is_some_and(|n| n.contains("not a trail this server issued")), "{bad}");
    }
    // `""` and `null` are no trail (models fill optional arguments so):
    // a new one, with nothing to refuse; a number is refused.
    for none in [serde_json::json!(""), serde_json::Value::Null] {
        let o = now(trails.open(Some(none), owner, None));
        assert!(o.notice.is_none() && o.handle.is_some() && o.handle != t.handle, "{:?}", o.notice);
    }
    let o = now(trails.open(Some(serde_json::json!(42)), owner, None));
    assert!(o.notice.as_deref().is_some_and(|n| n.contains("takes the string")), "{:?}", o.notice);
    // Another server's handle (another key) is not this server's.
    let other = now(Trails::default().start(owner));
    let other = other.handle.unwrap_or_default();
    assert!(
        now(trails.open(Some(serde_json::json!(&other)), owner, None))
            .notice
            .is_some_and(|n| n.contains("not a trail"))
    );
    std::thread::sleep(Duration::from_millis(80));
    let o = now(trails.open(Some(serde_json::json!(&handle)), owner, None));
    assert!(o.notice.as_deref().is_some_and(|n| n.contains("expired")), "{:?}", o.notice);
    assert_ne!(o.handle, t.handle);
}

#[test]
fn the_stand_in_looks_like_a_handle_and_is_none() {
    assert_eq!(carry::STAND_IN.len(), HANDLE_LEN);
    assert!(
        carry::STAND_IN.starts_with(PREFIX) && carry::STAND_IN.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    );
    assert!(now(Trails::default().find(carry::STAND_IN, Owner::default())).is_err());
}

#[test]
fn a_flood_of_new_trails_never_pushes_out_one_in_use() {
    let trails = Trails::new(DEFAULT_IDLE, 3);
    let owner = Owner::default();
    let followed = now(trails.start(owner)).handle.unwrap_or_default();
    let untouched = now(trails.start(owner)).handle.unwrap_or_default();
    assert!(now(trails.find(&followed, owner)).is_ok(), "continued once: in use");
    for _ in 0..100 {
        now(trails.start(owner));
    }
    assert!(trails.len() <= 3 + 3, "{}", trails.len());
    assert!(now(trails.find(&followed, owner)).is_ok(), "a trail in use survives the flood");
    let gone = now(trails.find(&untouched, owner)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(gone.contains("pushed out"), "{gone}");
}
