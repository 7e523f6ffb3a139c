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
//! keys sit in one slot. The replicas share the key that signs handles
//! (`{signpost}:v1:key`, set once by whichever replica starts first), so a
//! handle one replica minted is good on all.

use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde::{Deserialize, Serialize};

use super::{Id, Owner};
use crate::session::History;

const PREFIX: &str = "{signpost}:v1:";
/// How long a command may take before the call goes on without the store.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(1);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Check-and-set of one trail, and the bounds. KEYS: the trail, probation,
/// in use. ARGV: the version read (0: none), the state, the lifetime in ms,
/// the bound, the trail's member name, the prefix of trail keys. Returns
/// `{new version, 0, ''}`; or, when another call wrote first, `{-1,
/// version, state}` of what it wrote (`{-1, 0, ''}`: the trail is gone).
const SAVE: &str = r"
local cur = redis.call('HMGET', KEYS[1], 'v', 's')
local v = tonumber(cur[1] or '0')
if v ~= tonumber(ARGV[1]) then return {-1, v, cur[2] or ''} end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle, max = tonumber(ARGV[3]), tonumber(ARGV[4])
local function trim(set)
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now - idle)
  local over = redis.call('ZCARD', set) - max
  if over > 0 then
    local out = redis.call('ZPOPMIN', set, over)
    for i = 1, #out, 2 do redis.call('DEL', ARGV[6] .. out[i]) end
  end
end
if v == 1 then
  redis.call('ZADD', KEYS[2], now, ARGV[5])
  trim(KEYS[2])
else
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('ZADD', KEYS[3], now, ARGV[5])
  trim(KEYS[3])
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
    /// Where it is, without credentials, for the status and the logs.
    addr: String,
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
        let client = redis::Client::open(url).with_context(|| {
            format!("--state {}: not a Redis URL (redis://[:password@]host[:port][/db])", crate::clip(url))
        })?;
        let info = client.get_connection_info();
        let addr = format!("redis://{}/{}", info.addr(), info.redis_settings().db());
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let unreachable = || format!("cannot reach the trail store at {addr} (--state); is Redis running there?");
        let mut conn = tokio::time::timeout(CONNECT_TIMEOUT * 3, client.get_connection_manager_with_config(config))
            .await
            .map_err(|_| anyhow::anyhow!("timed out"))
            .and_then(|c| c.map_err(anyhow::Error::from))
            .with_context(unreachable)?;
        let mut key = [0u8; 64];
        super::random(&mut key);
        let key_name = format!("{PREFIX}key");
        let () = redis::cmd("SET")
            .arg(&key_name)
            .arg(hex(&key))
            .arg("NX")
            .query_async::<redis::Value>(&mut conn)
            .await
            .map(drop)
            .with_context(unreachable)?;
        let shared: String = redis::cmd("GET").arg(&key_name).query_async(&mut conn).await.with_context(unreachable)?;
        let key = unhex(&shared).with_context(|| {
            format!("the trail store at {addr} holds a key at `{key_name}` that is not 128 hex digits; delete it")
        })?;
        Ok((Shared { conn, save: redis::Script::new(SAVE), addr }, key))
    }

    /// Where it is (no credentials).
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The trail `id`: its version and state, `None` when there is none.
    pub async fn load(&self, id: &Id) -> Result<Option<(i64, State)>, String> {
        let mut conn = self.conn.clone();
        let (version, state): (Option<i64>, Option<String>) = redis::cmd("HMGET")
            .arg(trail_key(id))
            .arg("v")
            .arg("s")
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("the trail store at {} failed: {e}", self.addr))?;
        let (Some(version), Some(state)) = (version, state) else { return Ok(None) };
        Ok(Some((version, self.decode(&state)?)))
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
    ) -> Result<Option<Option<(i64, State)>>, String> {
        let json = serde_json::to_string(state).map_err(|e| format!("cannot encode the trail: {e}"))?;
        let mut conn = self.conn.clone();
        let (version, now, now_state): (i64, i64, String) = self
            .save
            .key(trail_key(&stored.id))
            .key(format!("{PREFIX}trails:new"))
            .key(format!("{PREFIX}trails:used"))
            .arg(stored.version)
            .arg(json)
            .arg(idle.as_millis().max(1) as u64)
            .arg(max)
            .arg(member(&stored.id))
            .arg(format!("{PREFIX}trail:"))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| format!("the trail store at {} failed: {e}", self.addr))?;
        if version > 0 {
            return Ok(None);
        }
        if now == 0 {
            return Ok(Some(None));
        }
        Ok(Some(Some((now, self.decode(&now_state)?))))
    }

    fn decode(&self, state: &str) -> Result<State, String> {
        let state: State = serde_json::from_str(state)
            .map_err(|e| format!("its state in the trail store is not one this version reads ({e})"))?;
        Ok(State { history: state.history.bounded(), ..state })
    }
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
