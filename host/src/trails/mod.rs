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
//!
//! The trails live in this process by default. With `--state redis://…`
//! they live in Redis ([`redis`]), and any replica serves any call of a
//! trail: a call reads the trail when it starts and writes its step back
//! when it ends ([`Trails::run`]). Each replica still keeps a context
//! per trail it served, for what is its own: the policy instances, the
//! canary pin (the same on every replica: both follow from the trail's
//! id) and the follow-through metrics.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::policy::SessionKey;
use crate::response::Response;
use crate::session::{SessionContext, Step};

pub mod carry;
mod redis;

use carry::NOTICE_FIELD;

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Owner([u8; 16]);

impl Owner {
    /// The owner for the value of an `Authorization` header: its bearer
    /// token, read as the token check reads it (scheme and spaces aside).
    pub fn of_authorization(header: &str) -> Owner {
        let header = header.trim();
        let token = match header.split_once(char::is_whitespace) {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => header,
        };
        Owner::of_token(token)
    }

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

/// The trails of this process, in two segments: a new trail waits on
/// probation (first in, first out) until a call continues it, and only
/// then joins the trails in use (least recently used out). A flood of
/// one-off sessionless calls, each starting a trail, churns probation and
/// never pushes out a trail an agent is following.
pub struct Trails {
    /// The key that signs new handles, then older ones still accepted
    /// (a shared store's key can change under a replica).
    keys: std::sync::RwLock<Vec<[u8; 64]>>,
    idle: Duration,
    max: usize,
    store: Mutex<Store>,
    /// The shared store, when trails live there; `store` is then this
    /// replica's cache of contexts.
    shared: Option<redis::Shared>,
}

#[derive(Default)]
struct Store {
    probation: HashMap<Id, Entry>,
    /// Probation in the order trails were started.
    order: std::collections::VecDeque<Id>,
    in_use: HashMap<Id, Entry>,
}

impl Store {
    fn take(&mut self, id: &Id) -> Option<Entry> {
        self.in_use.remove(id).or_else(|| self.probation.remove(id))
    }
}

/// A trail opened for one call.
#[derive(Clone)]
pub struct Opened {
    /// Its handle, to return and to put in hints; `None` for an MCP
    /// session's own history, which is no trail.
    pub handle: Option<String>,
    /// Its session context.
    pub context: Arc<SessionContext>,
    /// Why the handle the call sent was not used.
    pub notice: Option<String>,
    /// The trail as the shared store held it when the call started.
    stored: Option<redis::Stored>,
}

impl Opened {
    /// An MCP session's own history: no trail.
    pub fn of_session(context: Arc<SessionContext>) -> Opened {
        Opened { handle: None, context, notice: None, stored: None }
    }
}

/// Why a trail handle a call sent cannot be used (the call then runs on a
/// new trail, or on its session's own history, and the agent is told).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not signed by this server: changed, truncated, or minted elsewhere.
    #[error(
        "is not a trail this server issued (changed, truncated, from another deployment, or from before the server \
         restarted)"
    )]
    NotIssued,
    /// Unused for longer than the idle lifetime, or pushed out by newer trails.
    #[error("expired (unused for over {} s, or pushed out by newer trails)", .idle.as_secs())]
    Gone {
        /// The idle lifetime.
        idle: Duration,
    },
    /// Unused for longer than the idle lifetime (seen before it was swept).
    #[error("expired (unused for over {} s)", .idle.as_secs())]
    Expired {
        /// The idle lifetime.
        idle: Duration,
    },
    /// Started by another bearer token.
    #[error("belongs to other credentials")]
    NotYours,
    /// The shared store holds a state this build cannot read.
    #[error("{0}")]
    Unreadable(String),
}

impl std::fmt::Debug for Trails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trails")
            .field("idle", &self.idle)
            .field("max", &self.max)
            .field("live", &self.len())
            .field("shared", &self.shared)
            .finish()
    }
}

impl Default for Trails {
    fn default() -> Self {
        Trails::new(DEFAULT_IDLE, DEFAULT_MAX)
    }
}

impl Trails {
    /// A store whose trails live `idle` after their last use; at most `max`
    /// in use, and at most `max` on probation.
    pub fn new(idle: Duration, max: usize) -> Trails {
        let mut key = [0u8; 64];
        random(&mut key);
        Trails { keys: vec![key].into(), idle, max: max.max(1), store: Mutex::new(Store::default()), shared: None }
    }

    /// A store whose trails live in the Redis (or Valkey) at `url`, shared
    /// by every replica pointed at it. Connects, and agrees on the key that
    /// signs handles; must run on the runtime that serves.
    pub async fn connect(url: &str, idle: Duration, max: usize) -> anyhow::Result<Trails> {
        let (shared, key) = redis::Shared::connect(url).await?;
        Ok(Trails { keys: vec![key].into(), shared: Some(shared), ..Trails::new(idle, max) })
    }

    /// What the status resource says of the trails.
    pub fn status(&self) -> serde_json::Value {
        match &self.shared {
            None => serde_json::json!({"store": "in-process", "live": self.len(), "idle_secs": self.idle.as_secs()}),
            Some(shared) => serde_json::json!({
                "store": "redis",
                "cached_here": self.len(),
                "idle_secs": self.idle.as_secs(),
                "store_errors": shared.errors.load(std::sync::atomic::Ordering::Relaxed),
                "rewrites": shared.rewrites.load(std::sync::atomic::Ordering::Relaxed),
            }),
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Trails held now (in use and on probation).
    pub fn len(&self) -> usize {
        let store = self.store();
        store.in_use.len() + store.probation.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How long an unused trail lives.
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// A new trail for `owner`, on probation.
    pub async fn start(&self, owner: Owner) -> Opened {
        if let Some(shared) = &self.shared {
            // Sign with the key the other replicas check (at most every few
            // seconds: is it still the store's?).
            self.recheck_key(shared).await;
        }
        let key = self.keys.read().unwrap_or_else(PoisonError::into_inner)[0];
        let mut id = [0u8; ID_BYTES];
        random(&mut id);
        let handle = handle_with(&key, &id);
        let context = Arc::new(SessionContext::for_trail(handle.clone(), SessionKey::of_trail(&id)));
        let stored = self.shared.as_ref().map(|_| redis::Stored {
            id,
            version: 0,
            state: redis::State::of(seal_with(&key, owner)),
        });
        let mut store = self.store();
        while store.order.len() >= self.max {
            match store.order.pop_front() {
                Some(old) => {
                    store.probation.remove(&old);
                }
                None => break,
            }
        }
        store.probation.insert(id, Entry { context: context.clone(), owner, used: Instant::now() });
        store.order.push_back(id);
        Opened { handle: Some(handle), context, notice: None, stored }
    }

    /// The trail `handle` names, for `owner`; `Err` with the reason when it
    /// cannot be used (the caller decides what runs instead).
    pub async fn find(&self, handle: &str, owner: Owner) -> Result<Opened, Refusal> {
        let mut id = self.id_of(handle);
        if id.is_none()
            && let Some(shared) = &self.shared
        {
            // Signed under a key the store has now and this replica not yet?
            self.recheck_key(shared).await;
            id = self.id_of(handle);
        }
        let Some(id) = id else {
            return Err(Refusal::NotIssued);
        };
        if let Some(shared) = &self.shared {
            return self.find_shared(shared, id, handle, owner).await;
        }
        let mut store = self.store();
        let Some(entry) = store.take(&id) else {
            return Err(Refusal::Gone { idle: self.idle });
        };
        if entry.owner != owner {
            store.in_use.insert(id, entry);
            return Err(Refusal::NotYours);
        }
        if entry.used.elapsed() > self.idle {
            return Err(Refusal::Expired { idle: self.idle });
        }
        let context = self.keep_in_use(&mut store, id, entry);
        Ok(Opened { handle: Some(handle.to_owned()), context, notice: None, stored: None })
    }

    /// [`Trails::find`] in the shared store: the trail as stored, on this
    /// replica's context for it.
    async fn find_shared(&self, shared: &redis::Shared, id: Id, handle: &str, owner: Owner) -> Result<Opened, Refusal> {
        let found = match shared.load(&id).await {
            Ok(Some(found)) => Some(found),
            Ok(None) => {
                return Err(Refusal::Gone { idle: self.idle });
            }
            // The store unreachable now: the call keeps its trail, on what
            // this replica holds of it (the handle is genuine: signed).
            Err(redis::Failure::Unavailable) => None,
            // A state it cannot read: refused, as an expired one is (a new
            // trail, with a note), never a trail stuck on it.
            Err(unreadable) => return Err(Refusal::Unreadable(unreadable.to_string())),
        };
        // Sealed under the key the trail was started with: any held.
        if found.as_ref().is_some_and(|(_, state)| !self.keys().iter().any(|k| seal_with(k, owner) == state.owner)) {
            return Err(Refusal::NotYours);
        }
        let fresh = || Entry {
            context: Arc::new(SessionContext::for_trail(handle.to_owned(), SessionKey::of_trail(&id))),
            owner,
            used: Instant::now(),
        };
        let mut store = self.store();
        let handle = Some(handle.to_owned());
        let Some((version, state)) = found else {
            // Unconfirmed: this replica's copy, if the caller owns it; else
            // an empty history it does not keep (a leaked handle must not
            // make the copy another caller's).
            let notice = format!(
                "{}: this call kept its trail but ran on what this server holds of it, and its step is not kept",
                redis::UNAVAILABLE
            );
            let context = match store.take(&id) {
                Some(entry) if entry.owner == owner => self.keep_in_use(&mut store, id, entry),
                Some(entry) => {
                    store.in_use.insert(id, entry);
                    return Err(Refusal::NotYours);
                }
                None => fresh().context,
            };
            return Ok(Opened { handle, context, notice: Some(notice), stored: None });
        };
        // Confirmed by the store, which decides whose it is.
        let entry = store.take(&id).map(|e| Entry { owner, ..e }).unwrap_or_else(fresh);
        let context = self.keep_in_use(&mut store, id, entry);
        drop(store);
        context.restore(&state.history, state.calls);
        let stored = Some(redis::Stored { id, version, state });
        Ok(Opened { handle, context, notice: None, stored })
    }

    /// Adopts the shared store's signing key when it is not this
    /// replica's (at most every few seconds): the one it had stays good.
    async fn recheck_key(&self, shared: &redis::Shared) {
        let current = self.keys.read().unwrap_or_else(PoisonError::into_inner)[0];
        let Some(held) = shared.recheck_key(&current).await else { return };
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        if keys[0] != held {
            tracing::warn!("the trail store holds another signing key (it lost this one, or failed over): adopting it");
            keys.retain(|k| *k != held);
            keys.insert(0, held);
            keys.truncate(4);
        }
    }

    /// Puts a continued trail among those in use, making room by the least
    /// recently used after dropping the idle ones.
    fn keep_in_use(&self, store: &mut Store, id: Id, mut entry: Entry) -> Arc<SessionContext> {
        entry.used = Instant::now();
        let context = entry.context.clone();
        if store.in_use.len() >= self.max {
            let idle = self.idle;
            store.in_use.retain(|_, e| e.used.elapsed() <= idle);
        }
        if store.in_use.len() >= self.max
            && let Some(oldest) = store.in_use.iter().min_by_key(|(_, e)| e.used).map(|(id, _)| *id)
        {
            store.in_use.remove(&oldest);
        }
        store.in_use.insert(id, entry);
        context
    }

    /// The history a call continues: the trail it sends; else `own`, an
    /// MCP session's own history, which its hints need not carry; else
    /// (no session) a new trail. `null` or `""` is no trail (models fill
    /// optional arguments so). A handle that cannot be used is reported in
    /// the notice, and the call runs on `own`, or on a new trail.
    pub async fn open(
        &self,
        sent: Option<serde_json::Value>,
        owner: Owner,
        own: Option<Arc<SessionContext>>,
    ) -> Opened {
        let why = match sent.filter(|sent| !carry::is_none(sent)) {
            None => None,
            Some(serde_json::Value::String(handle)) => match self.find(&handle, owner).await {
                Ok(trail) => return trail,
                Err(why) => Some(format!("the trail `{}` {why}", crate::clip(&handle))),
            },
            Some(other) => Some(format!(
                "`trail` takes the string an earlier result gave, not {}",
                crate::policy::text::escape(&other.to_string(), 40)
            )),
        };
        let mut opened = match own {
            Some(own) => Opened::of_session(own),
            None => self.start(owner).await,
        };
        opened.notice = why.map(|why| match &opened.handle {
            Some(fresh) => format!("{why}; this call started a new trail, {fresh}: send it (hints carry it)"),
            None => format!("{why}; this call used this session's own history"),
        });
        opened
    }

    /// Runs one call of `tool` on the trail `opened` (from [`Trails::open`]):
    /// `call` serves it on the trail's history; then the call's step goes
    /// back to the trail (in a shared store), and the response says what
    /// became of the trail the agent sent and of this step. The one
    /// sequence for a call on a trail: the MCP server and the terminal both
    /// run their calls through it.
    pub async fn run<E>(
        &self,
        opened: &Opened,
        tool: &str,
        call: impl AsyncFnOnce(Arc<SessionContext>) -> Result<Response, E>,
    ) -> Result<Response, E> {
        let mut response = call(opened.context.clone()).await?;
        let kept = self.finish(opened, || Step::of(tool, &response)).await;
        add_notice(&mut response, opened.notice.clone(), kept);
        Ok(response)
    }

    /// Ends a call on `opened`: in the shared store, adds the call's step
    /// to the trail (to what it holds now, when another call wrote since
    /// this one read it). A notice when the step could not be kept. In
    /// this process there is nothing to do: the pipeline recorded it.
    async fn finish(&self, opened: &Opened, step: impl FnOnce() -> Step) -> Option<String> {
        // Each failed attempt means another call's step was written: with
        // this many calls on one trail at once, some wait long.
        const ATTEMPTS: u32 = 64;
        let (Some(shared), Some(stored)) = (&self.shared, &opened.stored) else { return None };
        // (the whole step: whether the call was held and what its result
        // showed, not only the call, or a held call would be held again)
        let step = step();
        let mut base = stored.clone();
        for attempt in 0..ATTEMPTS {
            let mut next = base.state.clone();
            next.history.take(step.clone());
            next.calls = next.calls.saturating_add(1);
            match shared.save(&base, &next, self.idle, self.max).await {
                Ok(None) => {
                    opened.context.restore(&next.history, next.calls);
                    return None;
                }
                // Another call wrote first: add this step to what it wrote.
                Ok(Some(Some((version, state)))) => base = redis::Stored { version, state, ..base },
                // Gone meanwhile (expired or pushed out): written anew.
                Ok(Some(None)) => base.version = 0,
                Err(e) => return Some(format!("this call's step may be missing from the trail's history: {e}")),
            }
            if attempt >= 2 {
                // Many at once: spread the next attempts out.
                let mut jitter = [0u8; 1];
                random(&mut jitter);
                tokio::time::sleep(Duration::from_micros(u64::from(jitter[0]) * 8)).await;
            }
        }
        Some(format!(
            "this call is not in the trail's history: {ATTEMPTS} other calls on the trail wrote first; send fewer \
             calls at once on one trail"
        ))
    }

    /// The signing keys held: the one new handles use first.
    fn keys(&self) -> Vec<[u8; 64]> {
        self.keys.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The id in a handle this server minted, its tag checked.
    fn id_of(&self, handle: &str) -> Option<Id> {
        let body = handle.strip_prefix(PREFIX).filter(|_| handle.len() == HANDLE_LEN)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body).ok()?;
        let (id, tag) = bytes.split_at_checked(ID_BYTES)?;
        let id: Id = id.try_into().ok()?;
        self.keys()
            .iter()
            .any(|key| {
                let mut mac = mac(key);
                mac.update(&id);
                mac.verify_truncated_left(tag).is_ok()
            })
            .then_some(id)
    }
}

/// A handle for `id`, signed with `key`.
fn handle_with(key: &[u8; 64], id: &Id) -> String {
    let mut mac = mac(key);
    mac.update(id);
    let mut bytes = [0u8; ID_BYTES + TAG_BYTES];
    bytes[..ID_BYTES].copy_from_slice(id);
    bytes[ID_BYTES..].copy_from_slice(&mac.finalize().into_bytes()[..TAG_BYTES]);
    format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The owner as a shared store keeps it: keyed, so that reading Redis does
/// not let a weak token be guessed offline from its digest.
fn seal_with(key: &[u8; 64], owner: Owner) -> Owner {
    let mut mac = mac(key);
    mac.update(b"owner:");
    mac.update(&owner.0);
    let mut sealed = [0u8; 16];
    sealed.copy_from_slice(&mac.finalize().into_bytes()[..16]);
    Owner(sealed)
}

fn mac(key: &[u8; 64]) -> Hmac<Sha256> {
    // A key of SHA-256's block size: HMAC takes it as it is.
    <Hmac<Sha256> as hmac::digest::KeyInit>::new(hmac::digest::generic_array::GenericArray::from_slice(key))
}

/// Tells the agent what became of the trail it sent (`opened`) and of
/// this call's step (`kept`): a `note:` line, and `trail_notice`.
fn add_notice(response: &mut Response, opened: Option<String>, kept: Option<String>) {
    let notice = match (opened, kept) {
        (Some(a), Some(b)) => format!("{a}; {b}"),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return,
    };
    response.text.push_str(&format!("\nnote: {notice}"));
    if let serde_json::Value::Object(map) = &mut response.structured {
        map.insert(NOTICE_FIELD.into(), serde_json::json!(notice));
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
mod tests;
