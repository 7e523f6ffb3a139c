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
mod reference;
mod registry;
pub mod sign;

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use sha2::Digest;

pub use reference::{PolicyRef, PolicySource};
pub use registry::{Access, Credentials, Registry};

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
/// The largest manifest read (a cosign signature manifest with many
/// signatures is a few KiB).
pub const MAX_MANIFEST: u64 = 1 << 20;
/// The largest signature payload or config read.
pub const MAX_SMALL_BLOB: u64 = 64 << 10;
/// The default bound on a pulled component.
pub const DEFAULT_MAX_COMPONENT: u64 = 64 << 20;
pub(crate) fn is_sha256(d: &str) -> bool {
    d.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
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
                signpost_policy::text::escape(&parsed.config.media_type, 100)
            )));
        }
        let layers: Vec<&OciDescriptor> = parsed.layers.iter().collect();
        let [layer] = layers.as_slice() else {
            return Err(not(format!("it has {} layers, not one component", layers.len())));
        };
        if layer.media_type != LAYER_MEDIA_TYPE {
            return Err(not(format!(
                "its layer is `{}`, not `{LAYER_MEDIA_TYPE}`",
                signpost_policy::text::escape(&layer.media_type, 100)
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

pub(crate) fn parse_manifest(bytes: &[u8]) -> Result<OciImageManifest, OciError> {
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
            signpost_policy::text::escape(t, 100)
        )));
    }
    Ok(parsed)
}

pub(crate) fn check_descriptor(d: &OciDescriptor) -> Result<(), OciError> {
    if !is_sha256(&d.digest) || d.size < 0 {
        return Err(OciError::Invalid(format!(
            "a descriptor with digest `{}` and size {}: expected sha256:HEX and a size",
            signpost_policy::text::escape(&d.digest, 100),
            d.size
        )));
    }
    Ok(())
}
