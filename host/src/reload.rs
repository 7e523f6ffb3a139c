//! Hot swap: replacing the live policy without a restart.
//!
//! A candidate goes live only after it compiled (or came from the cache),
//! linked against the `hints` world, identified itself and passed the
//! [`crate::selfcheck`]. Anything less leaves the serving policy
//! in place and is recorded. Triggers: changes to the `--policy` file
//! (writes, creates and atomic renames, debounced) and SIGHUP. Swaps run one
//! at a time, off the request path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::golden;
use crate::live_policy::{SwapRecord, SwapResult};
use crate::oci::follow::Follower;
use crate::policy::{Identity, LoadError, Policy, PolicyEngine};
use crate::proxy::Upstream;
use crate::sanitize;
use crate::selfcheck::{self, CheckError, Report};
use crate::service::Signpost;
use crate::validate::HintValidator;
use crate::watch::{settled, watch_file};

/// Quiet time after a file event before reloading (editors write in bursts).
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Why a candidate was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// It did not compile, link or identify itself.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// It failed its self-check (or was superseded during it).
    #[error("self-check failed: {0}")]
    Check(#[from] CheckError),
    /// It failed the operator's golden cases (`--policy-cases`), or they
    /// could not be read.
    #[error("golden cases failed: {0}")]
    Cases(String),
}

impl PrepareError {
    /// Whether a newer candidate arrived before this one was judged.
    pub fn superseded(&self) -> bool {
        matches!(self, PrepareError::Check(CheckError::Superseded))
    }
}

/// What a candidate is checked against beyond the self-check on Signpost's
/// own tools.
#[derive(Clone, Copy, Default)]
pub struct Gate<'a> {
    /// Golden cases it must pass, strictly ([`golden::Strictness::Strict`]).
    pub cases: Option<&'a Path>,
    /// A proxy's backend, whose tools the self-check probes too (answered
    /// in the backend's stead: it is never called). Needs a tokio runtime.
    pub backend: Option<&'a Arc<Upstream>>,
}

/// Compiles, links, identifies and self-checks a candidate policy, then
/// runs what `gate` adds: exactly what a swap requires, and what `signpost
/// policy check` runs. `superseded` is asked during the check: a newer
/// candidate stops it.
pub fn prepare(
    engine: &PolicyEngine,
    validator: &HintValidator,
    bytes: &[u8],
    source: &str,
    gate: Gate<'_>,
    superseded: &dyn Fn() -> bool,
) -> Result<(Arc<Policy>, Report), PrepareError> {
    let policy = Arc::new(engine.load(bytes, source)?);
    let mut report = selfcheck::run(&policy, validator, engine.limits().timeout, gate.backend, superseded)?;
    if let Some(dir) = gate.cases {
        let results = golden::run(policy.clone(), dir, golden::Strictness::Strict).map_err(PrepareError::Cases)?;
        let failed: Vec<&golden::CaseResult> = results.iter().filter(|r| !r.failures.is_empty()).collect();
        if let Some(first) = failed.first() {
            let name = first.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // The first failure of the first failing case: `policy test` shows them all.
            let why = first.failures.first().map(|f| sanitize::escape(f, 600)).unwrap_or_default();
            return Err(PrepareError::Cases(format!(
                "{} of {} failed in {}; the first, {name} ({}): {why}",
                failed.len(),
                results.len(),
                dir.display(),
                first.description
            )));
        }
        report.cases = results.len();
    }
    Ok((policy, report))
}

/// What a watched policy file is to the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    /// The live policy (`--policy`).
    Live,
    /// The canary (`--canary`), serving this share of new sessions.
    Canary {
        /// From 0 to 1.
        share: f64,
    },
    /// The shadow (`--shadow`).
    Shadow,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Live => "policy",
            Role::Canary { .. } => "canary",
            Role::Shadow => "shadow",
        }
    }
}

/// Where a reloader reads its candidates.
pub enum Candidates {
    /// A file, watched.
    File(PathBuf),
    /// An OCI reference (`oci://…`), its tag polled every `every`; SIGHUP
    /// polls at once.
    Oci {
        /// Pulls and verifies.
        follower: Arc<Follower>,
        /// The poll interval.
        every: Duration,
    },
}

impl Candidates {
    fn name(&self) -> String {
        match self {
            Candidates::File(path) => path.display().to_string(),
            Candidates::Oci { follower, .. } => follower.reference().to_string(),
        }
    }

    /// The candidate's bytes, how its identity names where it came from,
    /// and its OCI digest.
    fn read(&self) -> Result<(Vec<u8>, String, Option<String>), String> {
        match self {
            Candidates::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
                Ok((bytes, path.display().to_string(), None))
            }
            Candidates::Oci { follower, .. } => match follower.current() {
                Some(p) => Ok((p.component.clone(), p.source.clone(), Some(p.digest.clone()))),
                None => Err("nothing verified has been pulled yet".into()),
            },
        }
    }
}

/// Reloads a policy file (the live policy, the canary or the shadow) into a
/// running [`Signpost`].
pub struct Reloader {
    signpost: Arc<Signpost>,
    engine: PolicyEngine,
    from: Candidates,
    role: Role,
    /// The sha256 of the content this reloader last put in service: only a
    /// change of the file's content acts, so a SIGHUP or a `touch` never
    /// brings back a policy that was rolled back, promoted over or dropped.
    acted: std::sync::Mutex<Option<String>>,
    /// Reload requests seen so far (file events, SIGHUP): a check in
    /// progress stops when this moves, so a slow or hostile candidate never
    /// holds up the one written after it.
    requests: Arc<AtomicU64>,
    /// Golden cases every candidate must pass (`--policy-cases`).
    cases: Option<PathBuf>,
}

impl Reloader {
    /// Watches `path` for `signpost`, compiling with `engine`.
    pub fn new(signpost: Arc<Signpost>, engine: PolicyEngine, path: PathBuf) -> Self {
        Self::from(signpost, engine, Candidates::File(path))
    }

    /// Reads candidates from `from` for `signpost`, compiling with `engine`.
    pub fn from(signpost: Arc<Signpost>, engine: PolicyEngine, from: Candidates) -> Self {
        let acted = std::sync::Mutex::new(Some(signpost.live().current().identity().sha256.clone()));
        let requests = Arc::new(AtomicU64::new(0));
        Reloader { signpost, engine, from, role: Role::Live, acted, requests, cases: None }
    }

    /// Candidates must also pass the golden cases in `dir` (strictly).
    pub fn with_cases(mut self, dir: Option<PathBuf>) -> Self {
        self.cases = dir;
        self
    }

    /// Reloads the file as `role` instead of the live policy: a new canary
    /// (also after the last one was promoted or dropped) or a new shadow.
    pub fn with_role(mut self, role: Role) -> Self {
        self.role = role;
        self.acted = std::sync::Mutex::new(self.serving().map(|id| id.sha256));
        self
    }

    fn acted(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.acted.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The build serving in this reloader's role now, if one does.
    fn serving(&self) -> Option<Identity> {
        match self.role {
            Role::Live => Some(self.signpost.live().current().identity().clone()),
            Role::Canary { .. } => self.signpost.trials().canary_identity(),
            Role::Shadow => self.signpost.trials().shadow_identity(),
        }
    }

    /// Reads the policy file and swaps it in if it is new and passes every
    /// check. Blocking (compilation); the record says what happened.
    pub fn reload(&self) -> SwapRecord {
        let seen = self.requests.load(Ordering::SeqCst);
        self.reload_unless(&|| self.requests.load(Ordering::SeqCst) != seen)
    }

    fn reload_unless(&self, superseded: &dyn Fn() -> bool) -> SwapRecord {
        let started = Instant::now();
        let live = self.signpost.live();
        let (bytes, source, digest) = match self.from.read() {
            Ok(read) => read,
            Err(e) => {
                let record = SwapRecord::new(SwapResult::Rejected, &self.from.name(), None, e);
                live.refuse(record.clone());
                return record;
            }
        };
        // A digest that passed every check and serves is the one a restart
        // without the registry serves.
        let adopted = |this: &Self| {
            if let (Candidates::Oci { follower, .. }, Some(d)) = (&this.from, &digest) {
                follower.adopted(d);
            }
        };
        let sha256 = crate::policy::sha256_hex(&bytes);
        let live_sha = live.current().identity().sha256.clone();
        let serving = self.serving().map(|id| id.sha256);
        // A canary identical to the live policy (say, just promoted) would compare nothing.
        let is_live = matches!(self.role, Role::Canary { .. }) && sha256 == live_sha;
        let seen = self.acted().as_deref() == Some(sha256.as_str());
        if serving.as_deref() == Some(sha256.as_str()) || is_live || seen {
            let why = if seen && serving.as_deref() != Some(sha256.as_str()) {
                "this content was put in service before (then rolled back, promoted over or dropped); write a new version"
            } else {
                "already serving"
            };
            let record = SwapRecord::new(SwapResult::Unchanged, &source, Some(sha256), why.into());
            live.refuse(record.clone());
            return record;
        }
        let gate = Gate { cases: self.cases.as_deref(), backend: self.signpost.upstream() };
        let mut record = match prepare(&self.engine, self.signpost.validator(), &bytes, &source, gate, superseded) {
            Ok((policy, report)) if self.role == Role::Live => {
                let id = policy.identity();
                let mut record =
                    SwapRecord::new(SwapResult::Published, &source, Some(sha256), format!("{id} is live ({report})"));
                record.from_cache = id.from_cache;
                record.duration_ms = started.elapsed().as_millis() as u64;
                live.publish(policy, record.clone());
                *self.acted() = record.sha256.clone();
                adopted(self);
                return record;
            }
            Ok((policy, _)) => {
                let named = policy.identity().to_string();
                let started_trial = match self.role {
                    Role::Canary { share } => {
                        self.signpost.trials().start_canary(policy, share, live);
                        Ok(SwapResult::CanaryStarted)
                    }
                    _ => self.signpost.start_shadow(policy).map(|()| SwapResult::ShadowStarted),
                };
                match started_trial {
                    Ok(result) => {
                        let message = format!("{named} is the {}", self.role.name());
                        *self.acted() = Some(sha256.clone());
                        adopted(self);
                        let mut record = SwapRecord::new(result, &source, Some(sha256), message);
                        record.duration_ms = started.elapsed().as_millis() as u64;
                        return record;
                    }
                    Err(e) => SwapRecord::new(SwapResult::Rejected, &source, Some(sha256), format!("{e:#}")),
                }
            }
            Err(e) if e.superseded() => SwapRecord::new(SwapResult::Superseded, &source, Some(sha256), e.to_string()),
            Err(e) => {
                let build = &sha256[..Identity::BUILD_DIGITS];
                // (named after the check: a rollback may have happened meanwhile)
                let serving = self.serving().map_or_else(|| format!("no {}", self.role.name()), |id| id.to_string());
                let message = format!("build {build} refused; {serving} keeps serving: {e}");
                SwapRecord::new(SwapResult::Rejected, &source, Some(sha256), message)
            }
        };
        record.duration_ms = started.elapsed().as_millis() as u64;
        if self.role != Role::Live {
            record.message = format!("{}: {}", self.role.name(), record.message);
        }
        live.refuse(record.clone());
        record
    }

    /// Starts the triggers: a watcher on the file's directory, or the
    /// poll of an OCI tag (unless `watch` is false), and SIGHUP. Returns
    /// the channel that requests a reload, for other triggers. Needs a
    /// tokio runtime.
    pub fn start(self: Arc<Self>, watch: bool) -> anyhow::Result<mpsc::Sender<()>> {
        let (tx, rx) = mpsc::channel::<()>(16);
        let poll_now = Arc::new(tokio::sync::Notify::new());
        match &self.from {
            Candidates::File(path) if watch => {
                let watcher = watch_file(path, tx.clone(), self.requests.clone(), self.role.name())?;
                // The watcher lives as long as the reload task.
                tokio::spawn(self.clone().run(rx, Some(watcher)));
            }
            Candidates::Oci { follower, every } if watch && follower.polls() => {
                tokio::spawn(self.clone().poll(follower.clone(), *every, tx.clone(), poll_now.clone()));
                tokio::spawn(self.clone().run(rx, None));
            }
            _ => {
                tokio::spawn(self.clone().run(rx, None));
            }
        }
        #[cfg(unix)]
        {
            let tx = tx.clone();
            let requests = self.requests.clone();
            let (name, role) = (self.from.name(), self.role);
            let oci = matches!(self.from, Candidates::Oci { .. });
            let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
            tokio::spawn(async move {
                while hangup.recv().await.is_some() {
                    if oci {
                        tracing::info!(reference = %name, "SIGHUP: asking the registry for the {}", role.name());
                        poll_now.notify_one();
                        continue;
                    }
                    tracing::info!(file = %name, "SIGHUP: reloading the {}", role.name());
                    requests.fetch_add(1, Ordering::SeqCst);
                    if tx.send(()).await.is_err() {
                        break;
                    }
                }
            });
        }
        Ok(tx)
    }

    /// Polls the tag `follower` follows every `every` (or at once when
    /// `now` is notified): a new digest, pulled and verified, is handed to
    /// the reload task; a failure is recorded once until it changes, and
    /// the policy serving stays.
    async fn poll(
        self: Arc<Self>,
        follower: Arc<Follower>,
        every: Duration,
        tx: mpsc::Sender<()>,
        now: Arc<tokio::sync::Notify>,
    ) {
        let mut last_error: Option<String> = None;
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = now.notified() => {}
            }
            match follower.poll().await {
                Ok(Some(p)) => {
                    last_error = None;
                    tracing::info!(reference = %follower.reference(), digest = %p.digest, "a new policy digest; checking it");
                    self.requests.fetch_add(1, Ordering::SeqCst);
                    if tx.send(()).await.is_err() {
                        return;
                    }
                }
                Ok(None) => last_error = None,
                Err(e) => {
                    let message = format!("{}: {e}; the {} serving stays", follower.reference(), self.role.name());
                    if last_error.as_deref() != Some(message.as_str()) {
                        let record = SwapRecord::new(
                            SwapResult::Rejected,
                            &follower.reference().to_string(),
                            None,
                            message.clone(),
                        );
                        self.signpost.live().refuse(record);
                        last_error = Some(message);
                    }
                }
            }
        }
    }

    async fn run(self: Arc<Self>, mut rx: mpsc::Receiver<()>, _watcher: Option<Vec<notify::RecommendedWatcher>>) {
        while settled(&mut rx, DEBOUNCE).await {
            let me = self.clone();
            if let Err(e) = tokio::task::spawn_blocking(move || me.reload()).await {
                tracing::error!(error = %e, "policy reload task failed");
            }
        }
    }
}
