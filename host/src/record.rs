//! `--record DIR`: a decision log, one JSON line per tool call, to replay
//! against candidate policies (`signpost policy replay`).
//!
//! A line holds what the agent sent (tool and arguments), a summary of the
//! outcome (its kind, the first ids of its records and how many, never the
//! records), the hints offered, how the call took the previous response's
//! hints, the policy revision and the time spent. docs/metrics.md lists the
//! fields. Arguments over [`MAX_ARGS_BYTES`] are left out (`args: null`).
//!
//! Writing never slows a call: lines go through a bounded queue to a writer
//! thread, and a line that finds the queue full is dropped and counted.
//! Files rotate at a size limit; a process deletes its own oldest files
//! beyond a count. Directory 0700, files 0600: they hold what agents typed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::policy::SessionKey;

/// Largest recorded arguments, in bytes of JSON.
pub const MAX_ARGS_BYTES: usize = 4096;
/// Ids of a result kept in its record.
pub const MAX_RECORDED_IDS: usize = 16;
/// Lines waiting for the writer before new ones are dropped.
const QUEUE: usize = 4096;
/// The version of the record format.
pub const FORMAT: u32 = 1;
/// Prefix of decision log file names.
pub const FILE_PREFIX: &str = "decisions-";

/// One recorded call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    /// Record format version ([`FORMAT`]).
    pub v: u32,
    /// Unix time, milliseconds.
    pub at_ms: u64,
    /// The session (opaque, unique per server process and session).
    pub session: String,
    /// The call's number in its session, from 1.
    pub seq: u64,
    /// The tool.
    pub tool: String,
    /// The arguments as sent, or `None` when larger than [`MAX_ARGS_BYTES`].
    pub args: Option<Map<String, Value>>,
    /// `ok`, `empty` or the error kind.
    pub outcome: String,
    /// The first ids of the result's records.
    pub ids: Vec<String>,
    /// How many ids the result held (counted up to 64).
    pub id_count: usize,
    /// The response's state tag.
    pub state_tag: String,
    /// The hints offered.
    pub hints: Vec<RecordedHint>,
    /// How this call took the previous response's hints (`exact`,
    /// `adapted`, `none`; absent when that offered none).
    pub follow: Option<crate::tools::Follow>,
    /// `live` or `canary`.
    pub arm: String,
    /// The policy that served it.
    pub policy: RecordedPolicy,
    /// The graph it ran on (its name).
    pub graph: String,
    /// Time in the host, microseconds.
    pub latency_us: u64,
    /// Bytes of the text projection.
    pub text_bytes: usize,
}

/// A hint as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedHint {
    /// Tool.
    pub tool: String,
    /// Arguments.
    pub args: Map<String, Value>,
    /// Whether it is a complete call.
    pub actionable: bool,
}

/// A policy revision as recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedPolicy {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its sha256.
    pub sha256: String,
    /// The manifest digest of the OCI artifact it came from, if it did
    /// (`--policy oci://…`): replicas that serve the same build log the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// Where and how much to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The directory the logs go to (created if missing).
    pub dir: PathBuf,
    /// A file is closed and a new one begun past this size.
    pub max_file_bytes: u64,
    /// Files kept; the oldest beyond are deleted.
    pub max_files: usize,
}

/// The recorder: a queue to the writer thread.
#[derive(Debug)]
pub struct Recorder {
    tx: SyncSender<String>,
    written: Arc<AtomicU64>,
    dropped: AtomicU64,
    dir: PathBuf,
}

/// A session's opaque name in the log: its key hashed with a per-process
/// seed, so logs of several runs never share a session.
pub fn session_name(key: SessionKey) -> String {
    use std::hash::BuildHasher;
    static SEED: OnceLock<u64> = OnceLock::new();
    let seed = *SEED.get_or_init(|| {
        let t = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        t ^ (u64::from(std::process::id()) << 32)
    });
    format!("{:016x}", foldhash::quality::FixedState::with_seed(seed).hash_one(key.0))
}

impl Recorder {
    /// Starts the writer thread on `opts.dir`.
    pub fn start(opts: RecordOptions) -> anyhow::Result<Recorder> {
        // The logs hold what agents typed: readable by this user only.
        let mut dir = std::fs::DirBuilder::new();
        dir.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
        dir.create(&opts.dir)
            .map_err(|e| anyhow::anyhow!("--record {}: cannot create the directory: {e}", opts.dir.display()))?;
        // Fail now, not in the writer thread, when the directory is not writable.
        let first = Writer::open(&opts.dir)
            .map_err(|e| anyhow::anyhow!("--record {}: cannot write there: {e}", opts.dir.display()))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let written = Arc::new(AtomicU64::new(0));
        let dir = opts.dir.clone();
        let counter = written.clone();
        std::thread::Builder::new()
            .name("signpost-record".into())
            .spawn(move || write_loop(rx, first, &opts, &counter))?;
        Ok(Recorder { tx, written, dropped: AtomicU64::new(0), dir })
    }

    /// Queues one decision; drops it (counted) when the writer is behind.
    pub fn record(&self, decision: &Decision) {
        let Ok(line) = serde_json::to_string(decision) else { return };
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The recorder's status: where, lines written and dropped.
    pub fn status(&self) -> Value {
        serde_json::json!({
            "dir": self.dir.display().to_string(),
            "written": self.written.load(Ordering::Relaxed),
            "dropped": self.dropped.load(Ordering::Relaxed),
        })
    }
}

struct Writer {
    out: BufWriter<File>,
    bytes: u64,
}

impl Writer {
    fn open(dir: &Path) -> std::io::Result<Writer> {
        static OPENED: AtomicU64 = AtomicU64::new(0);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
        let n = OPENED.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{FILE_PREFIX}{now:020}-{}-{n:06}.jsonl", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.create_new(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path)?;
        Ok(Writer { out: BufWriter::new(file), bytes: 0 })
    }
}

/// The decision logs in `dir`, oldest first (names sort by time).
pub fn log_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(".jsonl"))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn write_loop(rx: Receiver<String>, mut writer: Writer, opts: &RecordOptions, written: &AtomicU64) {
    let mut failed = false;
    // Block for a line, then take what else is queued; flush when the queue
    // is empty, so a line is on disk moments after its call.
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(line) = next.take() {
            if writer.bytes >= opts.max_file_bytes {
                let _ = writer.out.flush();
                match Writer::open(&opts.dir) {
                    Ok(w) => writer = w,
                    Err(e) => tracing::warn!(error = %e, "decision log: cannot begin a new file"),
                }
                prune(&opts.dir, opts.max_files);
            }
            match writer.out.write_all(line.as_bytes()).and_then(|()| writer.out.write_all(b"\n")) {
                Ok(()) => {
                    writer.bytes += line.len() as u64 + 1;
                    written.fetch_add(1, Ordering::Relaxed);
                    failed = false;
                }
                Err(e) if !failed => {
                    tracing::warn!(error = %e, "decision log: write failed (lines are lost until it works again)");
                    failed = true;
                }
                Err(_) => {}
            }
            next = rx.try_recv().ok();
        }
        let _ = writer.out.flush();
    }
}

/// Deletes this process's oldest logs beyond `keep` (several servers may
/// share a directory: each rotates its own files only).
fn prune(dir: &Path, keep: usize) {
    let Ok(files) = log_files(dir) else { return };
    let mine = format!("-{}-", std::process::id());
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(&mine)))
        .collect();
    for old in files.iter().take(files.len().saturating_sub(keep)) {
        if let Err(e) = std::fs::remove_file(old) {
            tracing::warn!(file = %old.display(), error = %e, "decision log: cannot delete an old file");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(seq: u64) -> Decision {
        Decision {
            v: FORMAT,
            at_ms: 0,
            session: "s".into(),
            seq,
            tool: "describe".into(),
            args: Some(serde_json::json!({"id": "a".repeat(40)}).as_object().cloned().unwrap_or_default()),
            outcome: "ok".into(),
            ids: Vec::new(),
            id_count: 0,
            state_tag: "record".into(),
            hints: Vec::new(),
            follow: None,
            arm: "live".into(),
            policy: RecordedPolicy { name: "p".into(), version: "1".into(), sha256: "0".into(), digest: None },
            graph: "g".into(),
            latency_us: 1,
            text_bytes: 1,
        }
    }

    #[test]
    fn logs_rotate_and_the_oldest_are_deleted() {
        let dir = std::env::temp_dir().join(format!("signpost-record-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = RecordOptions { dir: dir.clone(), max_file_bytes: 2000, max_files: 3 };
        let recorder = Recorder::start(opts).unwrap_or_else(|e| panic!("{e}"));
        for seq in 1..=200 {
            recorder.record(&decision(seq));
        }
        let started = std::time::Instant::now();
        while recorder.written.load(Ordering::Relaxed) < 200 && started.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(recorder); // the writer flushes and ends
        std::thread::sleep(std::time::Duration::from_millis(100));
        let files = log_files(&dir).unwrap_or_default();
        assert_eq!(files.len(), 3, "{files:?}");
        let mut seqs = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            assert!(text.len() <= 2000 + 400, "{} bytes in {}", text.len(), f.display());
            for line in text.lines() {
                let d: Decision = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                seqs.push(d.seq);
            }
        }
        // The newest records are kept, whole and in order.
        assert_eq!(seqs.last(), Some(&200));
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
