//! Policies as OCI artifacts: a component pushed to any OCI registry in
//! the WebAssembly OCI layout (a `application/vnd.wasm.config.v0+json`
//! config, the component as its one `application/wasm` layer), signed in
//! cosign's format ([`sign`]), pulled by tag or digest, verified and kept
//! by digest ([`follow`]).
//!
//! Writes (blobs, manifests) and the registries' token exchange go through
//! `oci-client`. Reads are Signpost's own, on the same `reqwest`: every
//! body is read against a bound and a deadline (`oci-client` reads a
//! manifest whole, however large), and every digest is computed here, not
//! taken from a header. What a registry answers is untrusted: a manifest
//! is checked for the layout, a blob for its digest and size, and the
//! component then goes through every check a local file does.

pub mod follow;
pub mod sign;

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Reference, RegistryOperation};
use sha2::Digest;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type in the WebAssembly OCI layout.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The scheme of a policy reference (`--policy oci://…`).
pub const SCHEME: &str = "oci://";

/// Annotations a pushed manifest carries: the policy's own identity and
/// the policy WIT version it exports.
pub mod annotation {
    /// The policy's name, as it reports itself.
    pub const NAME: &str = "dev.signpost.policy.name";
    /// The policy's version, as it reports itself.
    pub const VERSION: &str = "dev.signpost.policy.version";
    /// The `signpost:policy` WIT version the component exports.
    pub const WIT: &str = "dev.signpost.policy.wit";
    /// The component's sha256 (the build `signpost://policy` names).
    pub const SHA256: &str = "dev.signpost.policy.sha256";
    /// When it was pushed (RFC 3339).
    pub const CREATED: &str = "org.opencontainers.image.created";
    /// The policy's name, for tools that read only standard annotations.
    pub const TITLE: &str = "org.opencontainers.image.title";
}

/// Why a registry operation failed: each says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The reference does not parse.
    #[error("`{0}` is not an OCI reference: {1} (expected oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST)")]
    Reference(String, String),
    /// The registry could not be reached or did not answer in time.
    #[error("registry {registry}: {why}")]
    Unreachable {
        /// Host and port.
        registry: String,
        /// What failed.
        why: String,
    },
    /// The registry refused the request.
    #[error("registry {registry} answered {status} for {what}{body}")]
    Status {
        /// Host and port.
        registry: String,
        /// The HTTP status.
        status: u16,
        /// What was asked.
        what: String,
        /// The start of the body, escaped, or nothing.
        body: String,
    },
    /// A body was larger than its bound.
    #[error("{what} is larger than {max} bytes: refused ({hint})")]
    TooLarge {
        /// What was read.
        what: String,
        /// The bound.
        max: u64,
        /// Which flag raises the bound.
        hint: &'static str,
    },
    /// What the registry sent is not what was asked for, or not a policy.
    #[error("{0}")]
    Invalid(String),
    /// No signature, or none by the key given.
    #[error("{0}")]
    Unverified(String),
    /// The local cache could not be read or written.
    #[error("cache {path}: {why}")]
    Cache {
        /// The file.
        path: String,
        /// What failed.
        why: String,
    },
}

/// How to reach registries.
#[derive(Debug, Clone)]
pub struct Access {
    /// Deadline of each request.
    pub timeout: Duration,
    /// The largest component pulled.
    pub max_component: u64,
    /// Registries (`host:port`) reached over plain HTTP; besides these, a
    /// loopback registry (`localhost`, `127.0.0.1`, `[::1]`) always is.
    pub plain_http: Vec<String>,
    /// Credentials, by registry; the rest are anonymous.
    pub auth: Option<(String, Credentials)>,
}

/// Credentials for one registry.
#[derive(Clone)]
pub enum Credentials {
    /// HTTP basic: user and password.
    Basic(String, String),
    /// A bearer token.
    Token(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Basic(user, _) => write!(f, "Basic({user}, …)"),
            Credentials::Token(_) => write!(f, "Token(…)"),
        }
    }
}

/// The largest manifest read (a cosign signature manifest with many
/// signatures is a few KiB).
pub const MAX_MANIFEST: u64 = 1 << 20;
/// The largest signature payload or config read.
pub const MAX_SMALL_BLOB: u64 = 64 << 10;
/// The default bound on a pulled component.
pub const DEFAULT_MAX_COMPONENT: u64 = 64 << 20;

impl Default for Access {
    fn default() -> Self {
        Access {
            timeout: Duration::from_secs(30),
            max_component: DEFAULT_MAX_COMPONENT,
            plain_http: Vec::new(),
            auth: None,
        }
    }
}

impl Access {
    /// Credentials from the environment: `SIGNPOST_REGISTRY_USER` and
    /// `SIGNPOST_REGISTRY_PASSWORD`, or `SIGNPOST_REGISTRY_TOKEN`, for the
    /// registry of `reference`; else the registry's entry of Docker's
    /// `config.json` (`$DOCKER_CONFIG` or `~/.docker`), as `docker login`
    /// writes it.
    pub fn with_credentials_for(mut self, reference: &PolicyRef) -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let registry = reference.registry().to_owned();
        let found = match (var("SIGNPOST_REGISTRY_USER"), var("SIGNPOST_REGISTRY_PASSWORD"), var("SIGNPOST_REGISTRY_TOKEN")) {
            (Some(user), Some(password), _) => Some(Credentials::Basic(user, password)),
            (_, _, Some(token)) => Some(Credentials::Token(token)),
            _ => docker_credentials(&registry),
        };
        self.auth = found.map(|c| (registry, c));
        self
    }

    fn scheme(&self, registry: &str) -> &'static str {
        let host = registry.rsplit_once(':').map_or(registry, |(h, p)| if p.contains(']') { registry } else { h });
        let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]") || host.starts_with("127.");
        if loopback || self.plain_http.iter().any(|p| p == registry) { "http" } else { "https" }
    }

    fn registry_auth(&self, registry: &str) -> RegistryAuth {
        match &self.auth {
            Some((r, Credentials::Basic(u, p))) if r == registry => RegistryAuth::Basic(u.clone(), p.clone()),
            Some((r, Credentials::Token(t))) if r == registry => RegistryAuth::Bearer(t.clone()),
            _ => RegistryAuth::Anonymous,
        }
    }
}

/// The entry for `registry` in Docker's `config.json`: `auth` (base64 of
/// `user:password`) or `identitytoken`.
fn docker_credentials(registry: &str) -> Option<Credentials> {
    use base64::Engine;
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".docker")))?;
    let text = std::fs::read(dir.join("config.json")).ok()?;
    let config: serde_json::Value = serde_json::from_slice(&text).ok()?;
    let entry = config.get("auths")?.as_object()?.iter().find(|(k, _)| {
        let k = k.trim_start_matches("https://").trim_start_matches("http://");
        k == registry || k.split('/').next() == Some(registry)
    })?;
    if let Some(token) = entry.1.get("identitytoken").and_then(|t| t.as_str()) {
        return Some(Credentials::Token(token.to_owned()));
    }
    let auth = entry.1.get("auth")?.as_str()?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(auth).ok()?;
    let (user, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some(Credentials::Basic(user.to_owned(), password.to_owned()))
}

/// A policy's reference: `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRef {
    inner: Reference,
    /// The tag followed (none for a reference by digest alone).
    tag: Option<String>,
}

impl FromStr for PolicyRef {
    type Err = OciError;

    fn from_str(s: &str) -> Result<Self, OciError> {
        let bad = |why: &str| OciError::Reference(crate::sanitize::escape(s, 200), why.to_owned());
        let rest = s.strip_prefix(SCHEME).unwrap_or(s);
        if rest.is_empty() || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("empty, or spaces or control characters in it"));
        }
        // A registry must be named: a bare `repo:tag` would mean Docker Hub,
        // which a policy is never pulled from by accident.
        let first = rest.split('/').next().unwrap_or("");
        if !rest.contains('/') || !(first.contains('.') || first.contains(':') || first == "localhost") {
            return Err(bad("name the registry: oci://HOST[:PORT]/REPOSITORY:TAG"));
        }
        let inner = Reference::from_str(rest).map_err(|e| bad(&e.to_string()))?;
        if let Some(d) = inner.digest()
            && !is_sha256(d)
        {
            return Err(bad("a digest is sha256: and 64 lowercase hex digits"));
        }
        let tag = if inner.digest().is_some() && !rest.contains(':') || inner.digest().is_some() && inner.tag().is_none()
        {
            None
        } else {
            inner.tag().map(str::to_owned)
        };
        Ok(PolicyRef { inner, tag })
    }
}

impl std::fmt::Display for PolicyRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry(), self.repository())?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = self.inner.digest() {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

fn is_sha256(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
}

/// The manifest digest an OCI source names (`oci://…@sha256:…`, as a
/// policy's identity gives its source), if it is one.
pub fn digest_in(source: &str) -> Option<&str> {
    source.strip_prefix(SCHEME)?.rsplit_once('@').map(|(_, d)| d).filter(|d| is_sha256(d))
}

/// `sha256:` and the hex digest of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&sha2::Sha256::digest(bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl PolicyRef {
    /// Whether a string is meant as an OCI reference (`oci://…`).
    pub fn is_oci(s: &str) -> bool {
        s.starts_with(SCHEME)
    }

    /// The registry (`host[:port]`).
    pub fn registry(&self) -> &str {
        self.inner.resolve_registry()
    }

    /// The repository.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The digest named, if any: then nothing is ever polled.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The tag named (`latest` when neither a tag nor a digest is).
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The same repository at `digest`.
    pub fn at(&self, digest: &str) -> PolicyRef {
        PolicyRef {
            inner: Reference::with_digest(self.registry().to_owned(), self.repository().to_owned(), digest.to_owned()),
            tag: None,
        }
    }

    /// The same repository at tag `tag`.
    pub fn tagged(&self, tag: &str) -> PolicyRef {
        PolicyRef {
            inner: Reference::with_tag(self.registry().to_owned(), self.repository().to_owned(), tag.to_owned()),
            tag: Some(tag.to_owned()),
        }
    }

    /// `registry/repository`, as cosign's payload names it.
    pub fn repository_path(&self) -> String {
        format!("{}/{}", self.registry(), self.repository())
    }

    /// What a manifest request names: the digest, else the tag.
    fn manifest_name(&self) -> &str {
        self.inner.digest().or(self.tag.as_deref()).unwrap_or("latest")
    }
}

/// Where a policy comes from: a file, or an OCI artifact.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicySource {
    /// A component file, watched.
    File(std::path::PathBuf),
    /// `oci://…`: pulled, verified, and its tag polled.
    Oci(PolicyRef),
}

impl FromStr for PolicySource {
    type Err = OciError;

    fn from_str(s: &str) -> Result<Self, OciError> {
        if PolicyRef::is_oci(s) { s.parse().map(PolicySource::Oci) } else { Ok(PolicySource::File(s.into())) }
    }
}

impl std::fmt::Display for PolicySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicySource::File(p) => write!(f, "{}", p.display()),
            PolicySource::Oci(r) => write!(f, "{r}"),
        }
    }
}

/// A verified manifest: its digest and what it holds.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// `sha256:…` of its bytes.
    pub digest: String,
    /// Its bytes, as the registry served them (the digest is of these).
    pub bytes: Vec<u8>,
    /// Parsed.
    pub parsed: OciImageManifest,
}

impl Manifest {
    /// Parses and checks a policy manifest: the WebAssembly layout with one
    /// component layer no larger than `max` bytes.
    pub fn policy(bytes: Vec<u8>, max: u64) -> Result<Manifest, OciError> {
        let digest = digest_of(&bytes);
        let parsed = parse_manifest(&bytes)?;
        let not = |why: String| {
            OciError::Invalid(format!(
                "the artifact {digest} is not a policy component in the WebAssembly OCI layout: {why} \
                 (push one with `signpost policy push FILE oci://…`)"
            ))
        };
        if parsed.config.media_type != CONFIG_MEDIA_TYPE {
            return Err(not(format!(
                "its config is `{}`, not `{CONFIG_MEDIA_TYPE}`",
                crate::sanitize::escape(&parsed.config.media_type, 100)
            )));
        }
        let layers: Vec<&OciDescriptor> = parsed.layers.iter().collect();
        let [layer] = layers.as_slice() else {
            return Err(not(format!("it has {} layers, not one component", layers.len())));
        };
        if layer.media_type != LAYER_MEDIA_TYPE {
            return Err(not(format!(
                "its layer is `{}`, not `{LAYER_MEDIA_TYPE}`",
                crate::sanitize::escape(&layer.media_type, 100)
            )));
        }
        check_descriptor(layer)?;
        if layer.size as u64 > max {
            return Err(OciError::TooLarge {
                what: format!("the component of {digest} ({} bytes)", layer.size),
                max,
                hint: "--policy-max-bytes raises the bound",
            });
        }
        Ok(Manifest { digest, bytes, parsed })
    }

    /// The component layer (after [`Manifest::policy`]).
    pub fn layer(&self) -> &OciDescriptor {
        &self.parsed.layers[0]
    }

    /// An annotation of the manifest.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.parsed.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

fn parse_manifest(bytes: &[u8]) -> Result<OciImageManifest, OciError> {
    let parsed: OciImageManifest = serde_json::from_slice(bytes)
        .map_err(|e| OciError::Invalid(format!("the registry's manifest is not an OCI image manifest: {e}")))?;
    if parsed.schema_version != 2 {
        return Err(OciError::Invalid(format!("manifest schemaVersion {} (expected 2)", parsed.schema_version)));
    }
    if let Some(t) = &parsed.media_type
        && t != MANIFEST_MEDIA_TYPE
    {
        return Err(OciError::Invalid(format!(
            "manifest of type `{}`, not `{MANIFEST_MEDIA_TYPE}`",
            crate::sanitize::escape(t, 100)
        )));
    }
    Ok(parsed)
}

fn check_descriptor(d: &OciDescriptor) -> Result<(), OciError> {
    if !is_sha256(&d.digest) || d.size < 0 {
        return Err(OciError::Invalid(format!(
            "a descriptor with digest `{}` and size {}: expected sha256:HEX and a size",
            crate::sanitize::escape(&d.digest, 100),
            d.size
        )));
    }
    Ok(())
}

/// One registry, as pushes and pulls reach it.
pub struct Registry {
    client: oci_client::Client,
    http: reqwest::Client,
    access: Access,
    /// The authorization header per repository and operation, once known.
    authorized: tokio::sync::Mutex<BTreeMap<(String, bool), Option<String>>>,
}

impl Registry {
    /// A client of `registry` (`host[:port]`) with `access`'s deadlines
    /// and schemes.
    pub fn new(access: Access, registry: &str) -> Result<Registry, OciError> {
        let mut plain: Vec<String> = access.plain_http.clone();
        if access.scheme(registry) == "http" {
            plain.push(registry.to_owned());
        }
        // Each request is bounded by `access.timeout` here; the clients'
        // own deadlines are a second later, so that the message says which.
        let late = access.timeout + Duration::from_secs(1);
        let config = oci_client::client::ClientConfig {
            protocol: oci_client::client::ClientProtocol::HttpsExcept(plain),
            read_timeout: Some(late),
            connect_timeout: Some(late),
            user_agent: concat!("signpost/", env!("CARGO_PKG_VERSION")),
            ..Default::default()
        };
        let http = reqwest::Client::builder()
            .connect_timeout(late)
            .read_timeout(late)
            .timeout(late)
            .user_agent(concat!("signpost/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()
            .map_err(|e| OciError::Unreachable { registry: "(any)".into(), why: format!("no HTTP client: {e}") })?;
        Ok(Registry { client: oci_client::Client::new(config), http, access, authorized: Default::default() })
    }

    /// The bounds and deadlines this registry is read with.
    pub fn access(&self) -> &Access {
        &self.access
    }

    fn unreachable(&self, r: &PolicyRef, e: impl std::fmt::Display) -> OciError {
        OciError::Unreachable { registry: r.registry().to_owned(), why: crate::sanitize::escape(&e.to_string(), 400) }
    }

    /// The `Authorization` header for `r` (pull, or push too), from the
    /// token exchange the registry asks for.
    async fn authorization(&self, r: &PolicyRef, push: bool) -> Result<Option<String>, OciError> {
        let key = (r.repository_path(), push);
        if let Some(known) = self.authorized.lock().await.get(&key) {
            return Ok(known.clone());
        }
        let auth = self.access.registry_auth(r.registry());
        let op = if push { RegistryOperation::Push } else { RegistryOperation::Pull };
        let token = self.with_deadline(r, self.client.auth(&self.oci_ref(r), &auth, op)).await?;
        let header = match (token, &auth) {
            (Some(t), _) => Some(format!("Bearer {t}")),
            (None, RegistryAuth::Basic(u, p)) => {
                use base64::Engine;
                Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))))
            }
            (None, _) => None,
        };
        self.authorized.lock().await.insert(key, header.clone());
        Ok(header)
    }

    /// `r` as oci-client takes it.
    fn oci_ref(&self, r: &PolicyRef) -> Reference {
        r.inner.clone()
    }

    async fn with_deadline<T, E: std::error::Error>(
        &self,
        r: &PolicyRef,
        f: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, OciError> {
        match tokio::time::timeout(self.access.timeout, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.unreachable(r, chain(&e))),
            Err(_) => Err(self.unreachable(r, format!("no answer within {:?}", self.access.timeout))),
        }
    }

    fn url(&self, r: &PolicyRef, path: &str) -> String {
        format!("{}://{}/v2/{}/{path}", self.access.scheme(r.registry()), r.registry(), r.repository())
    }

    /// GET (or HEAD) `path` of `r`'s repository, its body read up to `max`
    /// bytes within the deadline. None on 404.
    async fn get(
        &self,
        r: &PolicyRef,
        path: &str,
        accept: &[&str],
        max: u64,
        head: bool,
    ) -> Result<Option<(Vec<u8>, reqwest::header::HeaderMap)>, OciError> {
        let url = self.url(r, path);
        let auth = self.authorization(r, false).await?;
        let read = async {
            let mut req = if head { self.http.head(&url) } else { self.http.get(&url) };
            if !accept.is_empty() {
                req = req.header(reqwest::header::ACCEPT, accept.join(", "));
            }
            if let Some(a) = &auth {
                req = req.header(reqwest::header::AUTHORIZATION, a);
            }
            let mut resp = req.send().await.map_err(|e| self.unreachable(r, without_url(&e)))?;
            let status = resp.status();
            if status == reqwest::StatusCode::NOT_FOUND {
                return Ok(None);
            }
            let headers = resp.headers().clone();
            let what = || format!("{path} of {}", r.repository_path());
            if !status.is_success() {
                let mut body = Vec::new();
                while let Ok(Some(chunk)) = resp.chunk().await {
                    body.extend_from_slice(&chunk);
                    if body.len() > 300 {
                        break;
                    }
                }
                let body = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
                let body = if body.trim().is_empty() { String::new() } else { format!(": {}", crate::sanitize::escape(body.trim(), 300)) };
                return Err(OciError::Status {
                    registry: r.registry().to_owned(),
                    status: status.as_u16(),
                    what: what(),
                    body,
                });
            }
            let too_large = || OciError::TooLarge {
                what: what(),
                max,
                hint: if max == self.access.max_component { "--policy-max-bytes raises the bound" } else { "a bound of Signpost's" },
            };
            if !head && resp.content_length().is_some_and(|n| n > max) {
                return Err(too_large());
            }
            let mut body = Vec::new();
            if !head {
                while let Some(chunk) = resp.chunk().await.map_err(|e| self.unreachable(r, without_url(&e)))? {
                    if (body.len() + chunk.len()) as u64 > max {
                        return Err(too_large());
                    }
                    body.extend_from_slice(&chunk);
                }
            }
            Ok(Some((body, headers)))
        };
        match tokio::time::timeout(self.access.timeout, read).await {
            Ok(r) => r,
            Err(_) => Err(self.unreachable(r, format!("no whole answer to {path} within {:?}", self.access.timeout))),
        }
    }

    /// The digest `r` names now: its own, or the tag's (by HEAD, else GET
    /// of the manifest). None when the tag does not exist.
    pub async fn resolve(&self, r: &PolicyRef) -> Result<Option<String>, OciError> {
        if let Some(d) = r.digest() {
            return Ok(Some(d.to_owned()));
        }
        let path = format!("manifests/{}", r.manifest_name());
        let accept = [MANIFEST_MEDIA_TYPE];
        let Some((_, headers)) = self.get(r, &path, &accept, MAX_MANIFEST, true).await? else { return Ok(None) };
        match headers.get("docker-content-digest").and_then(|v| v.to_str().ok()) {
            Some(d) if is_sha256(d) => Ok(Some(d.to_owned())),
            _ => Ok(self.manifest_bytes(r).await?.map(|b| digest_of(&b))),
        }
    }

    /// The bytes of `r`'s manifest (by its digest if it names one, which
    /// they must then hash to). None when there is none.
    pub async fn manifest_bytes(&self, r: &PolicyRef) -> Result<Option<Vec<u8>>, OciError> {
        let path = format!("manifests/{}", r.manifest_name());
        let Some((bytes, _)) = self.get(r, &path, &[MANIFEST_MEDIA_TYPE], MAX_MANIFEST, false).await? else {
            return Ok(None);
        };
        if let Some(want) = r.digest()
            && digest_of(&bytes) != want
        {
            return Err(OciError::Invalid(format!(
                "the registry served a manifest for {want} whose bytes hash to {}: refused",
                digest_of(&bytes)
            )));
        }
        Ok(Some(bytes))
    }

    /// The blob `d` of `r`'s repository, no larger than `max` and of the
    /// size and digest `d` says.
    pub async fn blob(&self, r: &PolicyRef, d: &OciDescriptor, max: u64) -> Result<Vec<u8>, OciError> {
        check_descriptor(d)?;
        let max = max.min(d.size as u64);
        let path = format!("blobs/{}", d.digest);
        let Some((bytes, _)) = self.get(r, &path, &[], max, false).await? else {
            return Err(OciError::Invalid(format!("the registry has no blob {} of {}", d.digest, r.repository_path())));
        };
        if bytes.len() as u64 != d.size as u64 || digest_of(&bytes) != d.digest {
            return Err(OciError::Invalid(format!(
                "the blob {} of {} is not what its manifest says ({} bytes hashing to {}; expected {} bytes): \
                 tampered with or corrupt, refused",
                d.digest,
                r.repository_path(),
                bytes.len(),
                digest_of(&bytes),
                d.size
            )));
        }
        Ok(bytes)
    }

    /// Pulls the policy `r` names at `digest`: its manifest (checked for
    /// the layout) and its component (checked for size and digest).
    pub async fn pull(&self, r: &PolicyRef, digest: &str) -> Result<(Manifest, Vec<u8>), OciError> {
        let at = r.at(digest);
        let bytes = self
            .manifest_bytes(&at)
            .await?
            .ok_or_else(|| OciError::Invalid(format!("{at}: the registry has no such manifest")))?;
        let manifest = Manifest::policy(bytes, self.access.max_component)?;
        let component = self.blob(&at, manifest.layer(), self.access.max_component).await?;
        Ok((manifest, component))
    }

    /// Uploads `data` as a blob of `r`'s repository (unless it is there).
    pub async fn push_blob(&self, r: &PolicyRef, data: &[u8]) -> Result<OciDescriptor, OciError> {
        let digest = digest_of(data);
        let reference = self.oci_ref(r);
        self.with_deadline(r, self.client.auth(&reference, &self.access.registry_auth(r.registry()), RegistryOperation::Push))
            .await?;
        let exists = self.with_deadline(r, self.client.blob_exists(&reference, &digest)).await.unwrap_or(false);
        if !exists {
            self.with_deadline(r, self.client.push_blob(&reference, data.to_vec(), &digest)).await?;
        }
        Ok(OciDescriptor {
            media_type: String::new(),
            digest,
            size: data.len() as i64,
            urls: None,
            annotations: None,
            artifact_type: None,
        })
    }

    /// Puts `manifest` (serialized here: its digest is of these bytes) at
    /// `r`'s tag or digest. Its digest.
    pub async fn push_manifest(&self, r: &PolicyRef, manifest: &OciImageManifest) -> Result<String, OciError> {
        let bytes = serde_json::to_vec(manifest).map_err(|e| OciError::Invalid(e.to_string()))?;
        self.push_manifest_bytes(r, bytes).await
    }

    /// Puts manifest bytes as they are (tests push hostile ones).
    pub async fn push_manifest_bytes(&self, r: &PolicyRef, bytes: Vec<u8>) -> Result<String, OciError> {
        let digest = digest_of(&bytes);
        let reference = self.oci_ref(r);
        self.with_deadline(r, self.client.auth(&reference, &self.access.registry_auth(r.registry()), RegistryOperation::Push))
            .await?;
        let content_type = reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE);
        self.with_deadline(r, self.client.push_manifest_raw(&reference, bytes, content_type)).await?;
        Ok(digest)
    }

    /// Pushes `component` as a policy artifact at `r` (a tag), with
    /// `annotations`. The manifest's digest.
    pub async fn push_policy(
        &self,
        r: &PolicyRef,
        component: &[u8],
        exports: &[String],
        imports: &[String],
        annotations: BTreeMap<String, String>,
    ) -> Result<String, OciError> {
        let mut layer = self.push_blob(r, component).await?;
        layer.media_type = LAYER_MEDIA_TYPE.to_owned();
        let created = annotations.get(annotation::CREATED).map(String::as_str);
        let config = wasm_config(&layer.digest, exports, imports, created);
        let mut config_d = self.push_blob(r, &config).await?;
        config_d.media_type = CONFIG_MEDIA_TYPE.to_owned();
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
            config: config_d,
            layers: vec![layer],
            subject: None,
            artifact_type: None,
            annotations: Some(annotations),
        };
        self.push_manifest(r, &manifest).await
    }
}

/// The config of the WebAssembly OCI layout for a component that imports
/// and exports the interfaces named.
fn wasm_config(layer_digest: &str, exports: &[String], imports: &[String], created: Option<&str>) -> Vec<u8> {
    let config = serde_json::json!({
        "created": created.unwrap_or("1970-01-01T00:00:00Z"),
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": {
            "exports": exports,
            "imports": imports,
            "target": null,
        },
    });
    serde_json::to_vec(&config).unwrap_or_default()
}

/// A reqwest error of a read and its causes (its URL is the registry's,
/// which carries no secret: tokens go in headers).
fn without_url(e: &reqwest::Error) -> String {
    chain(e)
}

/// An error and its causes, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

