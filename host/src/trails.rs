//! Trails: session context as a state handle, for clients without sessions.
//!
//! MCP 2026-07-28 removes protocol sessions (SEP-2567, SEP-2575): state
//! travels in handles the server mints and the client sends back as
//! ordinary tool arguments. A **trail** is Signpost's: a result on a trail
//! carries it (`structuredContent.trail`), and so does every actionable
//! hint, in its `args`, so an agent that follows hints threads its own
//! history without knowing it. A sessionless call without one starts a new
//! trail; a call in an MCP session (stdio, session-mode HTTP) without one
//! uses the session's own history, as it always did, and its text is
//! unchanged. Either way the history is one [`SessionContext`]: a trail is
//! a handle to one.
//!
//! A handle is `tr_` and 32 base64url characters: 16 random bytes (the
//! trail's id, from the OS's CSPRNG) and an 8-byte HMAC-SHA256 tag over
//! them under this server's key, so a handle this server did not mint is
//! told from one that expired. A trail belongs to the credentials that
//! started it (the bearer token's digest; none on stdio) and lives while it
//! is used: idle longer than its lifetime, or pushed out by newer trails
//! beyond the store's bound, it is gone. A handle that is tampered with,
//! expired or another caller's is refused with a note saying so, and the
//! call runs on a new trail: an agent never loses an answer to a stale
//! handle.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::session::SessionContext;

/// The argument (and result field) that carries a trail.
pub const TRAIL_ARG: &str = "trail";
/// How a handle starts.
pub const PREFIX: &str = "tr_";
/// Idle lifetime of a trail by default.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(3600);
/// Trails kept by default; the one unused longest goes first.
pub const DEFAULT_MAX: usize = 10_000;

const ID_BYTES: usize = 16;
const TAG_BYTES: usize = 8;
/// Length of a handle: the prefix and base64url of id and tag.
const HANDLE_LEN: usize = PREFIX.len() + (ID_BYTES + TAG_BYTES) * 4 / 3;

type Id = [u8; ID_BYTES];

/// Who a trail belongs to: a digest of the caller's bearer token (all
/// zeros without one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Owner([u8; 16]);

impl Owner {
    /// The owner for a bearer token.
    pub fn of_token(token: &str) -> Owner {
        let digest = Sha256::digest(token.as_bytes());
        let mut owner = [0u8; 16];
        owner.copy_from_slice(&digest[..16]);
        Owner(owner)
    }
}

/// A trail's state: the session context the pipeline reads and updates.
struct Entry {
    context: Arc<SessionContext>,
    owner: Owner,
    used: Instant,
}

/// The trails of this process.
pub struct Trails {
    key: [u8; 32],
    idle: Duration,
    max: usize,
    entries: Mutex<HashMap<Id, Entry>>,
}

/// A trail opened for one call.
#[derive(Clone)]
pub struct Opened {
    /// Its handle, to return and to put in hints.
    pub handle: String,
    /// Its session context.
    pub context: Arc<SessionContext>,
    /// Why the handle the call sent was not used (a new trail was started).
    pub notice: Option<String>,
}

impl std::fmt::Debug for Trails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trails").field("idle", &self.idle).field("max", &self.max).field("live", &self.len()).finish()
    }
}

impl Default for Trails {
    fn default() -> Self {
        Trails::new(DEFAULT_IDLE, DEFAULT_MAX)
    }
}

impl Trails {
    /// A store whose trails live `idle` after their last use, at most `max`.
    pub fn new(idle: Duration, max: usize) -> Trails {
        let mut key = [0u8; 32];
        random(&mut key);
        Trails { key, idle, max: max.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// Trails held now.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How long an unused trail lives.
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// A new trail for `owner`.
    pub fn start(&self, owner: Owner) -> Opened {
        let mut id = [0u8; ID_BYTES];
        random(&mut id);
        let handle = self.handle(&id);
        let context = Arc::new(SessionContext::for_trail(handle.clone()));
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        entries.retain(|_, e| now.duration_since(e.used) <= self.idle);
        if entries.len() >= self.max
            && let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.used).map(|(id, _)| *id)
        {
            entries.remove(&oldest);
        }
        entries.insert(id, Entry { context: context.clone(), owner, used: now });
        Opened { handle, context, notice: None }
    }

    /// The trail `handle` names, for `owner`; a new one (with a notice
    /// saying why) when it cannot be used.
    pub fn open(&self, handle: &str, owner: Owner) -> Opened {
        let refused = match self.id_of(handle) {
            None => "is not a trail this server issued (changed, truncated, or from another deployment)",
            Some(id) => {
                let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
                match entries.get_mut(&id) {
                    Some(e) if e.owner != owner => "belongs to other credentials",
                    Some(e) if e.used.elapsed() <= self.idle => {
                        e.used = Instant::now();
                        return Opened { handle: handle.to_owned(), context: e.context.clone(), notice: None };
                    }
                    _ => "expired (unused too long, or the server restarted)",
                }
            }
        };
        let mut fresh = self.start(owner);
        fresh.notice = Some(format!(
            "the trail `{}` {refused}; this call started a new trail, {}: send it (it is in every hint) to keep \
             the history",
            crate::clip(handle),
            fresh.handle
        ));
        fresh
    }

    fn handle(&self, id: &Id) -> String {
        let mut bytes = [0u8; ID_BYTES + TAG_BYTES];
        bytes[..ID_BYTES].copy_from_slice(id);
        bytes[ID_BYTES..].copy_from_slice(&self.tag(id));
        format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The id in a handle this server minted, its tag checked.
    fn id_of(&self, handle: &str) -> Option<Id> {
        let body = handle.strip_prefix(PREFIX).filter(|_| handle.len() == HANDLE_LEN)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body).ok()?;
        let (id, tag) = bytes.split_at_checked(ID_BYTES)?;
        let id: Id = id.try_into().ok()?;
        let mut mac = self.mac();
        mac.update(&id);
        mac.verify_truncated_left(tag).ok()?;
        Some(id)
    }

    fn tag(&self, id: &Id) -> [u8; TAG_BYTES] {
        let mut mac = self.mac();
        mac.update(id);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&full[..TAG_BYTES]);
        tag
    }

    fn mac(&self) -> Hmac<Sha256> {
        // An HMAC key of any length is accepted.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
    }
}

/// Bytes from the operating system's CSPRNG.
fn random(buf: &mut [u8]) {
    if let Err(e) = getrandom::fill(buf) {
        // No entropy source is no state to hand out safely.
        panic!("the operating system's random source failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trail_is_found_again_by_its_owner_only() {
        let trails = Trails::default();
        let alice = Owner::of_token("alice's long token");
        let first = trails.start(alice);
        assert!(first.handle.starts_with(PREFIX) && first.handle.len() == HANDLE_LEN, "{}", first.handle);
        let again = trails.open(&first.handle, alice);
        assert!(again.notice.is_none() && Arc::ptr_eq(&again.context, &first.context));
        let mallory = trails.open(&first.handle, Owner::of_token("mallory's token"));
        assert!(!Arc::ptr_eq(&mallory.context, &first.context));
        assert!(mallory.notice.as_deref().is_some_and(|n| n.contains("other credentials")), "{:?}", mallory.notice);
    }

    #[test]
    fn tampered_and_expired_handles_are_told_apart() {
        let trails = Trails::new(Duration::from_millis(50), 100);
        let owner = Owner::default();
        let t = trails.start(owner);
        let mut chars: Vec<char> = t.handle.chars().collect();
        let last = chars.len() - 1;
        chars[last] = if chars[last] == 'A' { 'B' } else { 'A' };
        let tampered: String = chars.into_iter().collect();
        for bad in
            [tampered.as_str(), "tr_", "", "tr_!!!!", &t.handle[..t.handle.len() - 1], "x".repeat(10_000).as_str()]
        {
            let o = trails.open(bad, owner);
            assert!(o.notice.as_deref().is_some_and(|n| n.contains("not a trail this server issued")), "{bad}");
        }
        // Another server's handle (another key) is not this server's.
        let other = Trails::default().start(owner);
        assert!(trails.open(&other.handle, owner).notice.is_some_and(|n| n.contains("not a trail")));
        std::thread::sleep(Duration::from_millis(80));
        let o = trails.open(&t.handle, owner);
        assert!(o.notice.as_deref().is_some_and(|n| n.contains("expired")), "{:?}", o.notice);
        assert_ne!(o.handle, t.handle);
    }

    #[test]
    fn the_store_is_bounded() {
        let trails = Trails::new(DEFAULT_IDLE, 3);
        let owner = Owner::default();
        let first = trails.start(owner);
        for _ in 0..10 {
            trails.start(owner);
        }
        assert_eq!(trails.len(), 3);
        assert!(trails.open(&first.handle, owner).notice.is_some_and(|n| n.contains("expired")));
    }
}
