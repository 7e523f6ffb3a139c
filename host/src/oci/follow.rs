//! A policy followed in a registry (`--policy oci://…`): pulled, verified
//! against the operator's key, kept by digest on disk, and polled when
//! the reference is a tag. A new digest is handed to the reloader, which
//! runs every check a local file gets; the cache's pointer for a tag moves
//! only once a digest has passed them and served ([`Follower::adopted`]),
//! so a restart without the registry serves the last policy that did.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::sign::{self, Verified, VerifyingKey};
use super::{Access, Manifest, OciError, PolicyRef, Registry, digest_of};

/// A verified artifact, ready for the policy checks.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// Its manifest's digest.
    pub digest: String,
    /// How the policy's identity names where it came from:
    /// `oci://REGISTRY/REPO:TAG@sha256:…`.
    pub source: String,
    /// The component.
    pub component: Vec<u8>,
    /// Its manifest.
    pub manifest: Manifest,
    /// The signature that verified it (none when unsigned policies are
    /// allowed and no key is configured).
    pub signature: Option<Verified>,
    /// Why it came from the cache rather than the registry, if it did.
    pub from_cache: Option<String>,
}

/// What to trust.
#[derive(Debug, Clone)]
pub enum Trust {
    /// Only artifacts signed by this key.
    Key(VerifyingKey),
    /// Anything (`--policy-unsigned`): the registry's word alone.
    Unsigned,
}

/// One followed reference.
pub struct Follower {
    reference: PolicyRef,
    registry: Registry,
    trust: Trust,
    cache: Option<PathBuf>,
    current: Mutex<Option<Arc<Pulled>>>,
}

impl Follower {
    /// Follows `reference` with `access`, trusting per `trust`, caching
    /// under `cache` (none: no cache).
    pub fn new(
        reference: PolicyRef,
        access: Access,
        trust: Trust,
        cache: Option<PathBuf>,
    ) -> Result<Follower, OciError> {
        let access = access.with_credentials_for(&reference);
        let registry = Registry::new(access, reference.registry())?;
        Ok(Follower { reference, registry, trust, cache, current: Mutex::new(None) })
    }

    /// The reference followed.
    pub fn reference(&self) -> &PolicyRef {
        &self.reference
    }

    /// Whether it is polled: a tag moves, a digest never does.
    pub fn polls(&self) -> bool {
        self.reference.digest().is_none()
    }

    /// The artifact to serve now, if one was pulled.
    pub fn current(&self) -> Option<Arc<Pulled>> {
        self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn set_current(&self, p: Arc<Pulled>) {
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(p);
    }

    fn source(&self, digest: &str) -> String {
        match self.reference.digest() {
            Some(_) => self.reference.to_string(),
            None => format!("{}@{digest}", self.reference),
        }
    }

    /// The first artifact: from the registry, else (unreachable, or what it
    /// serves now refused) the last one served from this reference, from
    /// the cache, verified again; an error when neither.
    pub async fn start(&self) -> Result<Arc<Pulled>, OciError> {
        match self.fetch().await {
            Ok(p) => Ok(p),
            Err(e) => match self.cached(&e.to_string()) {
                Ok(Some(p)) => {
                    tracing::warn!(
                        reference = %self.reference,
                        digest = %p.digest,
                        error = %e,
                        "the registry did not give a policy; serving the last one verified, from the cache"
                    );
                    self.set_current(p.clone());
                    Ok(p)
                }
                Ok(None) => Err(e),
                Err(c) => Err(OciError::Invalid(format!("{e}; and the cache: {c}"))),
            },
        }
    }

    /// The last artifact served from this reference, from the cache and
    /// verified again, when it is not the one pulled now (which `why`
    /// says was refused): it becomes [`Follower::current`]. None when the
    /// cache holds no other.
    pub fn fall_back(&self, why: &str) -> Result<Option<Arc<Pulled>>, OciError> {
        let now = self.current().map(|c| c.digest.clone());
        match self.cached(why)? {
            Some(p) if Some(&p.digest) != now.as_ref() => {
                self.set_current(p.clone());
                Ok(Some(p))
            }
            _ => Ok(None),
        }
    }

    /// Asks the registry what the reference names now; a new digest is
    /// pulled and verified and becomes [`Follower::current`]. Some when it
    /// did, none when nothing changed.
    pub async fn poll(&self) -> Result<Option<Arc<Pulled>>, OciError> {
        let digest = self.resolve().await?;
        if self.current().is_some_and(|c| c.digest == digest && c.from_cache.is_none()) {
            return Ok(None);
        }
        if let Some(c) = self.current().filter(|c| c.digest == digest) {
            // Served from the cache at start; the registry now confirms it.
            let fresh = Arc::new(Pulled { from_cache: None, ..(*c).clone() });
            self.set_current(fresh);
            return Ok(None);
        }
        self.pull(&digest).await.map(Some)
    }

    async fn fetch(&self) -> Result<Arc<Pulled>, OciError> {
        let digest = self.resolve().await?;
        self.pull(&digest).await
    }

    async fn resolve(&self) -> Result<String, OciError> {
        self.registry.resolve(&self.reference).await?.ok_or_else(|| {
            OciError::Invalid(format!(
                "{}: no such tag in the registry (push one: `signpost policy push`)",
                self.reference
            ))
        })
    }

    async fn pull(&self, digest: &str) -> Result<Arc<Pulled>, OciError> {
        let signature = match &self.trust {
            Trust::Key(key) => Some(sign::verify(&self.registry, &self.reference, digest, key).await?),
            Trust::Unsigned => None,
        };
        let (manifest, component) = self.registry.pull(&self.reference, digest).await?;
        let pulled = Arc::new(Pulled {
            digest: digest.to_owned(),
            source: self.source(digest),
            component,
            manifest,
            signature,
            from_cache: None,
        });
        if let Err(e) = self.store(&pulled) {
            tracing::warn!(error = %e, "the policy pulled is served but not cached");
        }
        self.set_current(pulled.clone());
        Ok(pulled)
    }

    /// Records that `digest` passed every check and serves: a restart
    /// without the registry serves it.
    pub fn adopted(&self, digest: &str) {
        let Some(dir) = &self.cache else { return };
        let path = dir.join("refs").join(ref_file(&self.reference));
        if let Err(e) = write_atomic(&path, digest.as_bytes()) {
            tracing::warn!(error = %e, "the cache's pointer to the policy served was not written");
        }
    }

    fn entry(&self, digest: &str) -> Option<PathBuf> {
        Some(self.cache.as_ref()?.join(digest.replacen(':', "-", 1)))
    }

    fn store(&self, p: &Pulled) -> Result<(), OciError> {
        let Some(dir) = self.entry(&p.digest) else { return Ok(()) };
        write_atomic(&dir.join("manifest.json"), &p.manifest.bytes)?;
        write_atomic(&dir.join("component.wasm"), &p.component)?;
        if let Some(sig) = &p.signature {
            let text = serde_json::to_vec_pretty(sig).unwrap_or_default();
            write_atomic(&dir.join("signature.json"), &text)?;
        }
        Ok(())
    }

    /// The artifact the cache holds for this reference (its digest, or the
    /// last digest adopted for its tag), verified again as if pulled: the
    /// manifest's digest, the component's, the signature by the key.
    fn cached(&self, why: &str) -> Result<Option<Arc<Pulled>>, OciError> {
        let Some(cache) = &self.cache else { return Ok(None) };
        let digest = match self.reference.digest() {
            Some(d) => d.to_owned(),
            None => match std::fs::read_to_string(cache.join("refs").join(ref_file(&self.reference))) {
                Ok(d) => d.trim().to_owned(),
                Err(_) => return Ok(None),
            },
        };
        let Some(dir) = self.entry(&digest) else { return Ok(None) };
        if !dir.join("manifest.json").is_file() {
            return Ok(None);
        }
        let read = |name: &str| {
            std::fs::read(dir.join(name))
                .map_err(|e| OciError::Cache { path: dir.join(name).display().to_string(), why: e.to_string() })
        };
        let manifest_bytes = read("manifest.json")?;
        let stale = |what: &str| OciError::Cache { path: dir.display().to_string(), why: format!("{what}: refused") };
        if digest_of(&manifest_bytes) != digest {
            return Err(stale("the manifest does not hash to its digest"));
        }
        let manifest = Manifest::policy(manifest_bytes, self.registry.access().max_component)?;
        let component = read("component.wasm")?;
        if digest_of(&component) != manifest.layer().digest {
            return Err(stale("the component does not hash to its manifest's layer digest"));
        }
        let signature = match &self.trust {
            Trust::Key(key) => {
                let text =
                    read("signature.json").map_err(|_| stale("no signature kept for it, and a key is configured"))?;
                let kept: Verified =
                    serde_json::from_slice(&text).map_err(|_| stale("its signature record does not parse"))?;
                use base64::Engine;
                let payload = base64::engine::general_purpose::STANDARD
                    .decode(&kept.payload)
                    .map_err(|_| stale("its signature record does not parse"))?;
                let v = sign::check(&payload, &kept.signature, &digest, key)
                    .map_err(|e| stale(&format!("its signature: {e}")))?;
                Some(v)
            }
            Trust::Unsigned => None,
        };
        Ok(Some(Arc::new(Pulled {
            source: self.source(&digest),
            digest,
            component,
            manifest,
            signature,
            from_cache: Some(why.to_owned()),
        })))
    }
}

/// A file name for a reference: its text with every character but
/// letters, digits, `.`, `-` and `_` as `_`, and a hash against clashes.
fn ref_file(r: &PolicyRef) -> String {
    let text = r.to_string();
    let plain: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
    let digest = digest_of(text.as_bytes());
    format!("{}-{}", &plain[..plain.len().min(120)], &digest[7..19])
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OciError> {
    let err = |e: std::io::Error| OciError::Cache { path: path.display().to_string(), why: e.to_string() };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(".{}.{}", path.file_name().and_then(|n| n.to_str()).unwrap_or("f"), std::process::id()));
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}
