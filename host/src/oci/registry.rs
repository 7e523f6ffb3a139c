//! One registry as Signpost reaches it: the deadlines, schemes and
//! credentials ([`Access`]), the bounded reads and the pushes
//! ([`Registry`]).

use std::collections::BTreeMap;
use std::time::Duration;

use oci_client::RegistryOperation;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;

use super::{
    CONFIG_MEDIA_TYPE, DEFAULT_MAX_COMPONENT, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, MAX_MANIFEST, Manifest, OciError,
    PolicyRef, annotation, check_descriptor, digest_of, is_sha256,
};

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

/// What a refusal for want of credentials adds.
const CREDENTIALS: &str = " (credentials: SIGNPOST_REGISTRY_USER and SIGNPOST_REGISTRY_PASSWORD, or \
     SIGNPOST_REGISTRY_TOKEN, or `docker login`)";

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
        let found =
            match (var("SIGNPOST_REGISTRY_USER"), var("SIGNPOST_REGISTRY_PASSWORD"), var("SIGNPOST_REGISTRY_TOKEN")) {
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
        let mut why = signpost_policy::text::escape(&e.to_string(), 400);
        if ["UNAUTHORIZED", "DENIED", "code: 401", "code: 403", "Authentication failure"]
            .iter()
            .any(|m| why.contains(m))
        {
            why.push_str(CREDENTIALS);
        }
        OciError::Unreachable { registry: r.registry().to_owned(), why }
    }

    /// The `Authorization` header for `r` (pull, or push too), from the
    /// token exchange the registry asks for, once per repository and
    /// operation (oci-client keeps the token for its pushes too).
    async fn authorization(&self, r: &PolicyRef, push: bool) -> Result<Option<String>, OciError> {
        let key = (r.repository_path(), push);
        if let Some(known) = self.authorized.lock().await.get(&key) {
            return Ok(known.clone());
        }
        let auth = self.access.registry_auth(r.registry());
        let op = if push { RegistryOperation::Push } else { RegistryOperation::Pull };
        let token = self.with_deadline(r, self.client.auth(r.oci(), &auth, op)).await?;
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
    /// bytes within the deadline. None on 404. A 401 with an authorization
    /// already known (a registry's tokens expire: five minutes on the
    /// large ones, and a tag is polled for days) asks for a new one and
    /// tries once more.
    async fn get(
        &self,
        r: &PolicyRef,
        path: &str,
        accept: &[&str],
        max: u64,
        head: bool,
    ) -> Result<Option<(Vec<u8>, reqwest::header::HeaderMap)>, OciError> {
        match self.get_once(r, path, accept, max, head).await {
            Err(OciError::Status { status: 401, .. }) if self.forget_authorization(r).await => {
                self.get_once(r, path, accept, max, head).await
            }
            other => other,
        }
    }

    /// Drops the authorization known for reading `r`; whether there was one.
    async fn forget_authorization(&self, r: &PolicyRef) -> bool {
        self.authorized.lock().await.remove(&(r.repository_path(), false)).flatten().is_some()
    }

    async fn get_once(
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
            let mut resp = req.send().await.map_err(|e| self.unreachable(r, chain(&e)))?;
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
                let body = if body.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", signpost_policy::text::escape(body.trim(), 300))
                };
                let hint = if matches!(status.as_u16(), 401 | 403) { CREDENTIALS } else { "" };
                return Err(OciError::Status {
                    registry: r.registry().to_owned(),
                    status: status.as_u16(),
                    what: what(),
                    body: format!("{body}{hint}"),
                });
            }
            let too_large = || OciError::TooLarge {
                what: what(),
                max,
                hint: if max == self.access.max_component {
                    "--policy-max-bytes raises the bound"
                } else {
                    "a bound of Signpost's"
                },
            };
            if !head && resp.content_length().is_some_and(|n| n > max) {
                return Err(too_large());
            }
            let mut body = Vec::new();
            if !head {
                while let Some(chunk) = resp.chunk().await.map_err(|e| self.unreachable(r, chain(&e)))? {
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
        let reference = r.oci();
        self.authorization(r, true).await?;
        let exists = self.with_deadline(r, self.client.blob_exists(reference, &digest)).await.unwrap_or(false);
        if !exists {
            self.with_deadline(r, self.client.push_blob(reference, data.to_vec(), &digest)).await?;
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
        let reference = r.oci();
        self.authorization(r, true).await?;
        let content_type = reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE);
        self.with_deadline(r, self.client.push_manifest_raw(reference, bytes, content_type)).await?;
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

/// An error and its causes, `: `-separated (a reqwest error's URL is the
/// registry's, which carries no secret: tokens go in headers).
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
