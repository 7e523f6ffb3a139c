//! Trails kept in Redis (or Valkey), so that any replica serves any call
//! of a trail (`--state redis://…`).
//!
//! A trail is one hash, `{signpost}:v1:trail:<id>`: its version `v` and its
//! state `s` (owner, call count, history; JSON), expiring after the idle
//! lifetime. A call reads it when it starts and writes it back when it
//! ends, with a check-and-set on the version (one Lua script), so two
//! replicas serving one trail at once never lose a step: the later write
//! reads the trail again and adds its step to what it finds. Two sorted
//! sets bound the count as the in-process store does: new trails on
//! probation (oldest out first), continued trails in use (least recently
//! used out). Every key shares the hash tag `{signpost}`, so the script's
//! keys sit in one slot (standalone Redis ≥ 5 or Valkey; no cluster
//! routing). The replicas share the key that signs handles
//! (`{signpost}:v1:key`, set by whichever replica starts first), so a
//! handle one replica minted is good on all; a replica that finds it gone
//! or changed (Redis restarted without saving, a failover) sets or adopts
//! the one Redis holds.
//!
//! A store that fails or stalls never holds a call up for long: every
//! command has a deadline, and after a failure the store is left alone for
//! a moment (calls run without it, saying so) instead of each call waiting
//! on it again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde::{Deserialize, Serialize};

use super::{Id, Owner};
use crate::session::History;

const PREFIX: &str = "{signpost}:v1:";
/// How long a command may take before the call goes on without the store.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(500);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// After a failure, how long calls go on without trying the store.
const BACK_OFF: Duration = Duration::from_secs(2);
/// Largest stored state read (a full history is about 45 KiB).
const MAX_STATE_BYTES: usize = 256 * 1024;
/// What a client is told when the store fails (the details are logged).
pub const UNAVAILABLE: &str = "the trail store is unavailable";

/// Why the store did not answer as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It failed, stalled, or failed moments ago (the details are logged).
    Unavailable,
    /// It answered with a trail this build cannot take: why.
    Unreadable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unavailable => f.write_str(UNAVAILABLE),
            Failure::Unreadable(why) => f.write_str(why),
        }
    }
}

/// One trail's version and state, its size asked first. KEYS: the trail.
/// ARGV: the largest state read. Returns `{version, state}`, or `{version,
/// size}` when the state is larger (it never leaves the store), or a
/// WRONGTYPE error when the key holds something else than a trail.
const LOAD: &str = r"
local n = redis.pcall('HSTRLEN', KEYS[1], 's')
if type(n) == 'table' then return redis.error_reply('WRONGTYPE the trail key holds another type') end
if n > tonumber(ARGV[1]) then return {redis.call('HGET', KEYS[1], 'v'), n} end
return redis.call('HMGET', KEYS[1], 'v', 's')
";

/// Check-and-set of one trail, and the bounds. KEYS: the trail, probation,
/// in use. ARGV: the version read (0: none), the state, the lifetime in ms,
/// the bound, the trail's member name, the prefix of trail keys, the
/// largest state sent back. Returns `{new version, 0, ''}`; or, when
/// another call wrote first, `{-1, version, state}` of what it wrote
/// (`{-1, 0, ''}`: the trail is gone; `{-1, version, size}`: a state
/// larger than the largest, not sent).
const SAVE: &str = r"
local cur = redis.call('HMGET', KEYS[1], 'v', 's')
local v = tonumber(cur[1] or '0')
if v ~= tonumber(ARGV[1]) then
  local s = cur[2] or ''
  if #s > tonumber(ARGV[7]) then return {-1, v, #s} end
  return {-1, v, s}
end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle, max = tonumber(ARGV[3]), tonumber(ARGV[4])
local function trim(set)
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now - idle)
  local over = redis.call('ZCARD', set) - (max - 1)
  if over > 0 then
    local out = redis.call('ZPOPMIN', set, over)
    for i = 1, #out, 2 do redis.call('DEL', ARGV[6] .. out[i]) end
  end
end
-- Room first, so the trail just written is never the one pushed out.
if v == 1 then
  redis.call('ZREM', KEYS[3], ARGV[5])
  trim(KEYS[2])
  redis.call('ZADD', KEYS[2], now, ARGV[5])
else
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('ZREM', KEYS[3], ARGV[5])
  trim(KEYS[3])
  redis.call('ZADD', KEYS[3], now, ARGV[5])
end
return {v, 0, ''}
";

/// What a trail store holds for one trail.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    /// Whose it is.
    pub owner: Owner,
    /// Calls made on it.
    pub calls: u64,
    /// What they did.
    pub history: History,
}

impl State {
    /// A new trail's.
    pub fn of(owner: Owner) -> State {
        State { owner, ..State::default() }
    }
}

/// A trail as read, to write back.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: Id,
    /// The version read; 0 for a trail not written yet.
    pub version: i64,
    pub state: State,
}

/// The connection to the shared store.
pub struct Shared {
    conn: ConnectionManager,
    save: redis::Script,
    /// [`LOAD`].
    load: redis::Script,
    /// Where it is, without credentials, for the logs.
    addr: String,
    /// When this store was connected: the clock of `down_until`.
    epoch: Instant,
    /// Until when (ms since `epoch`) calls go on without the store.
    down_until: AtomicU64,
    /// Commands that failed or timed out.
    pub errors: AtomicU64,
    /// Steps written again because another call wrote the trail first.
    pub rewrites: AtomicU64,
    /// When (ms since `epoch`) the signing key was last compared with
    /// the store's.
    key_checked: AtomicU64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("addr", &self.addr).finish()
    }
}

fn trail_key(id: &Id) -> String {
    format!("{PREFIX}trail:{}", member(id))
}

fn member(id: &Id) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

impl Shared {
    /// Connects to `url` and agrees on the handle-signing key with the
    /// other replicas (the first to start sets it). Must run on the
    /// runtime that serves: the connection's tasks live there.
    pub async fn connect(url: &str) -> anyhow::Result<(Shared, [u8; 64])> {
        // The URL may hold a password: never echoed.
        anyhow::ensure!(
            !url.starts_with("rediss:") && !url.starts_with("valkeys:"),
            "--state: TLS to Redis (rediss://) is not built in; reach it on a private network or through a TLS \
             tunnel, as redis://"
        );
        let client = redis::Client::open(url).map_err(|e| {
            anyhow::anyhow!(
                "--state: not a Redis URL this server can use ({e}); the forms are \
                 redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] and redis+unix:///PATH"
            )
        })?;
        let info = client.get_connection_info();
        let addr = format!("redis://{}/{}", info.addr(), info.redis_settings().db());
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(200));
        let unreachable = || {
            format!(
                "cannot reach the trail store at {addr} (--state): start Redis (or Valkey) there, or leave --state out"
            )
        };
        // (it answers, but not to Signpost: a password, an ACL, a key of
        // another type under Signpost's name)
        let refused = || {
            format!(
                "the trail store at {addr} (--state) answers but refuses Signpost's commands: give its password in \
                 the URL (redis://:PASSWORD@host:port), allow the commands in its ACL, or see what `{PREFIX}key` holds"
            )
        };
        let connected = tokio::time::timeout(CONNECT_TIMEOUT * 3, client.get_connection_manager_with_config(config));
        let mut conn = match connected.await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) if matches!(e.kind(), redis::ErrorKind::AuthenticationFailed) => {
                return Err(anyhow::Error::from(e).context(refused()));
            }
            Ok(Err(e)) => return Err(anyhow::Error::from(e).context(unreachable())),
            Err(_) => return Err(anyhow::anyhow!("timed out").context(unreachable())),
        };
        let mut ours = [0u8; 64];
        super::random(&mut ours);
        let key = Shared::agree_on_key(&mut conn, &ours).await.with_context(refused)?;
        let key = key.with_context(|| {
            format!("the trail store at {addr} holds a key at `{PREFIX}key` that is not 128 hex digits; delete it")
        })?;
        let shared = Shared {
            conn,
            save: redis::Script::new(SAVE),
            load: redis::Script::new(LOAD),
            addr,
            epoch: Instant::now(),
            down_until: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            rewrites: AtomicU64::new(0),
            key_checked: AtomicU64::new(0),
        };
        tracing::info!(store = %shared.addr, "trails are kept in the trail store");
        Ok((shared, key))
    }

    /// The signing key the store holds; `ours` when it holds none.
    async fn agree_on_key(
        conn: &mut ConnectionManager,
        ours: &[u8; 64],
    ) -> redis::RedisResult<anyhow::Result<[u8; 64]>> {
        let name = format!("{PREFIX}key");
        let () =
            redis::cmd("SET").arg(&name).arg(hex(ours)).arg("NX").query_async::<redis::Value>(conn).await.map(drop)?;
        let held: String = redis::cmd("GET").arg(&name).query_async(conn).await?;
        Ok(unhex(&held))
    }

    /// The store's signing key, at most once every few seconds (`None`
    /// between): a replica that finds it gone puts `ours` back.
    pub async fn recheck_key(&self, ours: &[u8; 64]) -> Option<[u8; 64]> {
        const EVERY: Duration = Duration::from_secs(5);
        let now = self.now_ms();
        let last = self.key_checked.load(Ordering::Relaxed);
        if (last != 0 && now < last + EVERY.as_millis() as u64)
            || self.key_checked.compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return None;
        }
        let mut conn = self.conn.clone();
        match self.guard(Shared::agree_on_key(&mut conn, ours)).await {
            Ok(Ok(key)) => Some(key),
            Ok(Err(e)) => {
                tracing::warn!(store = %self.addr, "the trail store's signing key is unreadable: {e}");
                None
            }
            Err(_) => None,
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// A command under the store's deadline; a failure (logged, with its
    /// details) leaves the store alone for [`BACK_OFF`], but for a value
    /// one key holds that this version cannot read: that key's failure
    /// ([`Failure::Unreadable`]), not the store's.
    async fn guard<T>(&self, command: impl Future<Output = redis::RedisResult<T>>) -> Result<T, Failure> {
        if self.now_ms() < self.down_until.load(Ordering::Relaxed) {
            return Err(Failure::Unavailable);
        }
        let failure = match tokio::time::timeout(RESPONSE_TIMEOUT, command).await {
            Ok(Ok(done)) => return Ok(done),
            // What one key holds (another program wrote it, or garbage):
            // that trail is refused, and the store, and every other
            // trail, go on.
            Ok(Err(e)) if e.code() == Some("WRONGTYPE") => {
                tracing::warn!(store = %self.addr, "the trail store holds a value this version cannot read: {e}");
                return Err(Failure::Unreadable(format!("has a stored value this version cannot read ({e})")));
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", RESPONSE_TIMEOUT.as_millis()),
        };
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.down_until.store(self.now_ms() + BACK_OFF.as_millis() as u64, Ordering::Relaxed);
        tracing::warn!(
            store = %self.addr,
            "the trail store failed: {failure}; calls go on without it for {} s",
            BACK_OFF.as_secs()
        );
        Err(Failure::Unavailable)
    }

    /// The trail `id`: its version and state, `None` when there is none.
    pub async fn load(&self, id: &Id) -> Result<Option<(i64, State)>, Failure> {
        let mut conn = self.conn.clone();
        let mut load = self.load.prepare_invoke();
        load.key(trail_key(id)).arg(MAX_STATE_BYTES);
        // (read as it is, not converted by the client: a value of the wrong
        // type is this trail's failure, not the store's)
        let reply: Vec<redis::Value> = self.guard(load.invoke_async(&mut conn)).await?;
        let mut reply = reply.into_iter();
        let version = reply.next();
        let state = state_of(reply.next())?;
        let (Some(version), Some(state)) = (text(version)?, state) else { return Ok(None) };
        Ok(Some((number(&version)?, self.decode(&state)?)))
    }

    /// Writes `state` over the version `stored` read: `Ok(None)` when
    /// written; when another call wrote first, what the trail holds now
    /// (`None`: it is gone).
    pub async fn save(
        &self,
        stored: &Stored,
        state: &State,
        idle: Duration,
        max: usize,
    ) -> Result<Option<Option<(i64, State)>>, Failure> {
        let json =
            serde_json::to_string(state).map_err(|e| Failure::Unreadable(format!("cannot encode the trail: {e}")))?;
        let mut conn = self.conn.clone();
        let mut save = self.save.prepare_invoke();
        save.key(trail_key(&stored.id))
            .key(format!("{PREFIX}trails:new"))
            .key(format!("{PREFIX}trails:used"))
            .arg(stored.version)
            .arg(json)
            .arg(idle.as_millis().max(1) as u64)
            .arg(max)
            .arg(member(&stored.id))
            .arg(format!("{PREFIX}trail:"))
            .arg(MAX_STATE_BYTES);
        let reply: Vec<redis::Value> = self.guard(save.invoke_async(&mut conn)).await?;
        let mut reply = reply.into_iter();
        // (a version Lua cannot read as a number ends its reply early)
        let mut next = || text(reply.next())?.ok_or_else(|| Failure::Unreadable(UNREADABLE_VERSION.into()));
        if number(&next()?)? > 0 {
            return Ok(None);
        }
        self.rewrites.fetch_add(1, Ordering::Relaxed);
        let now = number(&next()?)?;
        if now == 0 {
            return Ok(Some(None));
        }
        let state = state_of(reply.next())?.ok_or_else(|| Failure::Unreadable(UNREADABLE_VERSION.into()))?;
        Ok(Some(Some((now, self.decode(&state)?))))
    }

    fn decode(&self, state: &str) -> Result<State, Failure> {
        if state.len() > MAX_STATE_BYTES {
            return Err(Failure::Unreadable(format!("has a stored state over {} KiB", MAX_STATE_BYTES / 1024)));
        }
        let state: State = serde_json::from_str(state)
            .map_err(|e| Failure::Unreadable(format!("has a stored state this version cannot read ({e})")))?;
        Ok(State { history: state.history.bounded(), ..state })
    }
}

/// A trail's state as the scripts send it: its text, or (a number) the
/// size of a state too large to be sent.
fn state_of(value: Option<redis::Value>) -> Result<Option<String>, Failure> {
    match value {
        Some(redis::Value::Int(size)) => Err(Failure::Unreadable(format!(
            "has a stored state over {} KiB ({size} bytes, not read)",
            MAX_STATE_BYTES / 1024
        ))),
        value => text(value),
    }
}

/// Why a trail whose stored version is not a whole number is refused.
const UNREADABLE_VERSION: &str = "has a stored version this version cannot read (not a whole number)";

/// A field of a reply as text (`None`: it is not there), read as the
/// store sent it (taken, not copied: a state can be large).
fn text(value: Option<redis::Value>) -> Result<Option<String>, Failure> {
    match value {
        None | Some(redis::Value::Nil) => Ok(None),
        Some(redis::Value::BulkString(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Failure::Unreadable("has a stored value that is not UTF-8".into())),
        Some(redis::Value::SimpleString(s)) => Ok(Some(s)),
        Some(redis::Value::Int(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(Failure::Unreadable("has a stored value of another type".into())),
    }
}

/// A stored version: a whole number.
fn number(text: &str) -> Result<i64, Failure> {
    text.parse().map_err(|_| Failure::Unreadable(UNREADABLE_VERSION.into()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> anyhow::Result<[u8; 64]> {
    let mut out = [0u8; 64];
    anyhow::ensure!(s.len() == 128 && s.is_ascii(), "{} characters", s.len());
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)?;
    }
    Ok(out)
}
