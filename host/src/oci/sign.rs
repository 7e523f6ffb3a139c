//! Signatures in cosign's format, so that `cosign verify --key` checks
//! what `signpost policy sign` wrote and Signpost checks what `cosign
//! sign --key` wrote: a manifest at tag `sha256-<digest>.sig` of the same
//! repository whose layers are *simple signing* payloads naming the signed
//! manifest's digest, each with its signature (base64) in the annotation
//! `dev.cosignproject.cosign/signature`.
//!
//! Keys are PEM files: an ECDSA P-256 key (cosign's own kind; the
//! signature is ASN.1 DER over the payload's SHA-256) or an Ed25519 key.
//! Private keys are PKCS#8 (`-----BEGIN PRIVATE KEY-----`) or, for P-256,
//! SEC1 (`EC PRIVATE KEY`); public keys SubjectPublicKeyInfo (`PUBLIC
//! KEY`, as `cosign.pub` is). cosign's password-encrypted private key
//! format is not read: `signpost policy keygen` writes a key pair.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::{Deserialize, Serialize};

use super::{MANIFEST_MEDIA_TYPE, MAX_SMALL_BLOB, OciError, PolicyRef, Registry, digest_of};

/// A signature layer's media type.
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";
/// Signature layers read at most from one signature manifest.
const MAX_SIGNATURES: usize = 32;

/// A key that signs.
pub enum SigningKey {
    /// ECDSA P-256 with SHA-256.
    P256(p256::ecdsa::SigningKey),
    /// Ed25519.
    Ed25519(ed25519_dalek::SigningKey),
}

/// A key that verifies.
#[derive(Clone, Debug)]
pub enum VerifyingKey {
    /// ECDSA P-256 with SHA-256.
    P256(p256::ecdsa::VerifyingKey),
    /// Ed25519.
    Ed25519(ed25519_dalek::VerifyingKey),
}

fn key_error(path: &Path, why: impl std::fmt::Display) -> OciError {
    OciError::Invalid(format!("key {}: {why}", path.display()))
}

fn read_pem(path: &Path) -> Result<String, OciError> {
    let bytes = std::fs::read(path).map_err(|e| key_error(path, e))?;
    if bytes.len() > 64 << 10 {
        return Err(key_error(path, "larger than 64 KiB: not a PEM key"));
    }
    String::from_utf8(bytes).map_err(|_| key_error(path, "not a PEM text file"))
}

const ENCRYPTED: &str = "cosign's password-encrypted key format is not read; use an unencrypted PKCS#8 key \
     (`signpost policy keygen PREFIX` writes a pair, or `openssl genpkey -algorithm ed25519 -out KEY`)";

impl SigningKey {
    /// Reads a private key file.
    pub fn read(path: &Path) -> Result<SigningKey, OciError> {
        use p256::pkcs8::DecodePrivateKey;
        let pem = read_pem(path)?;
        if pem.contains("ENCRYPTED") {
            return Err(key_error(path, ENCRYPTED));
        }
        if let Ok(k) = p256::ecdsa::SigningKey::from_pkcs8_pem(&pem) {
            return Ok(SigningKey::P256(k));
        }
        if let Ok(k) = p256::SecretKey::from_sec1_pem(&pem) {
            return Ok(SigningKey::P256(k.into()));
        }
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_pem(&pem) {
            return Ok(SigningKey::Ed25519(k));
        }
        Err(key_error(path, "not an ECDSA P-256 or Ed25519 private key in PEM (PKCS#8, or SEC1 for P-256)"))
    }

    /// A new key: P-256, or Ed25519 with `ed25519`.
    pub fn generate(ed25519: bool) -> Result<SigningKey, OciError> {
        loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| OciError::Invalid(format!("no random bytes: {e}")))?;
            if ed25519 {
                return Ok(SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&bytes)));
            }
            // Out of the curve's range once in 2^32 draws: draw again.
            if let Ok(k) = p256::ecdsa::SigningKey::from_slice(&bytes) {
                return Ok(SigningKey::P256(k));
            }
        }
    }

    /// The private key as PKCS#8 PEM.
    pub fn to_pem(&self) -> Result<String, OciError> {
        use p256::pkcs8::{EncodePrivateKey, LineEnding};
        let pem = match self {
            SigningKey::P256(k) => k.to_pkcs8_pem(LineEnding::LF),
            SigningKey::Ed25519(k) => k.to_pkcs8_pem(LineEnding::LF),
        };
        pem.map(|p| p.to_string()).map_err(|e| OciError::Invalid(format!("cannot encode the key: {e}")))
    }

    /// Its public half.
    pub fn verifying(&self) -> VerifyingKey {
        match self {
            SigningKey::P256(k) => VerifyingKey::P256(*k.verifying_key()),
            SigningKey::Ed25519(k) => VerifyingKey::Ed25519(k.verifying_key()),
        }
    }

    /// Signs `payload`: DER for P-256, the 64 bytes for Ed25519.
    pub fn sign(&self, payload: &[u8]) -> Vec<u8> {
        use p256::ecdsa::signature::Signer;
        match self {
            SigningKey::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign(payload);
                s.to_der().as_bytes().to_vec()
            }
            SigningKey::Ed25519(k) => k.sign(payload).to_bytes().to_vec(),
        }
    }
}

impl VerifyingKey {
    /// Reads a public key file (SubjectPublicKeyInfo PEM, as `cosign.pub`).
    pub fn read(path: &Path) -> Result<VerifyingKey, OciError> {
        use p256::pkcs8::DecodePublicKey;
        let pem = read_pem(path)?;
        if pem.contains("PRIVATE KEY") {
            return Err(key_error(path, "a private key: give the public key (its `.pub`) to verify with"));
        }
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(&pem) {
            return Ok(VerifyingKey::P256(k));
        }
        if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_pem(&pem) {
            return Ok(VerifyingKey::Ed25519(k));
        }
        Err(key_error(path, "not an ECDSA P-256 or Ed25519 public key in PEM (`-----BEGIN PUBLIC KEY-----`)"))
    }

    /// The key as SubjectPublicKeyInfo PEM.
    pub fn to_pem(&self) -> Result<String, OciError> {
        use p256::pkcs8::{EncodePublicKey, LineEnding};
        let pem = match self {
            VerifyingKey::P256(k) => k.to_public_key_pem(LineEnding::LF),
            VerifyingKey::Ed25519(k) => k.to_public_key_pem(LineEnding::LF),
        };
        pem.map_err(|e| OciError::Invalid(format!("cannot encode the key: {e}")))
    }

    /// `sha256:` and the first 16 hex digits of the key's DER encoding: how
    /// messages name a key.
    pub fn fingerprint(&self) -> String {
        use p256::pkcs8::EncodePublicKey;
        let der = match self {
            VerifyingKey::P256(k) => k.to_public_key_der().map(|d| d.into_vec()),
            VerifyingKey::Ed25519(k) => k.to_public_key_der().map(|d| d.into_vec()),
        };
        let digest = digest_of(&der.unwrap_or_default());
        format!("{} key {}", self.kind(), &digest[..7 + 16])
    }

    fn kind(&self) -> &'static str {
        match self {
            VerifyingKey::P256(_) => "ECDSA P-256",
            VerifyingKey::Ed25519(_) => "Ed25519",
        }
    }

    /// Whether `signature` is this key's over `payload`.
    pub fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier;
        match self {
            VerifyingKey::P256(k) => {
                let Ok(s) = p256::ecdsa::Signature::from_der(signature) else { return false };
                k.verify(payload, &s).is_ok()
            }
            VerifyingKey::Ed25519(k) => {
                let Ok(s) = ed25519_dalek::Signature::from_slice(signature) else { return false };
                k.verify_strict(payload, &s).is_ok()
            }
        }
    }
}

/// cosign's simple signing payload.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    critical: Critical,
    optional: Option<BTreeMap<String, serde_json::Value>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Critical {
    identity: PayloadIdentity,
    image: PayloadImage,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct PayloadIdentity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct PayloadImage {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

/// The payload cosign signs for `digest` of `repository` (`registry/repo`).
pub fn payload(repository: &str, digest: &str) -> Vec<u8> {
    let p = Payload {
        critical: Critical {
            identity: PayloadIdentity { docker_reference: repository.to_owned() },
            image: PayloadImage { docker_manifest_digest: digest.to_owned() },
            kind: PAYLOAD_TYPE.to_owned(),
        },
        optional: None,
    };
    serde_json::to_vec(&p).unwrap_or_default()
}

/// A signature checked: what was signed, by which key.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verified {
    /// The payload, base64.
    pub payload: String,
    /// The signature, base64.
    pub signature: String,
    /// The key that made it ([`VerifyingKey::fingerprint`]).
    pub key: String,
}

/// Checks that `signature` (base64) is `key`'s over `payload` and that the
/// payload names `digest`.
pub fn check(payload: &[u8], signature: &str, digest: &str, key: &VerifyingKey) -> Result<Verified, String> {
    let sig = base64::engine::general_purpose::STANDARD
        .decode(signature.trim())
        .map_err(|_| "its signature annotation is not base64".to_owned())?;
    if !key.verifies(payload, &sig) {
        return Err("made by another key".to_owned());
    }
    let p: Payload =
        serde_json::from_slice(payload).map_err(|e| format!("its payload is not cosign's simple signing JSON: {e}"))?;
    if p.critical.kind != PAYLOAD_TYPE {
        return Err(format!("its payload's type is `{}`", signpost_policy::text::escape(&p.critical.kind, 80)));
    }
    if p.critical.image.docker_manifest_digest != digest {
        return Err(format!(
            "it signs {}, not {digest}",
            signpost_policy::text::escape(&p.critical.image.docker_manifest_digest, 80)
        ));
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    Ok(Verified { payload: b64.encode(payload), signature: signature.trim().to_owned(), key: key.fingerprint() })
}

/// The tag of `digest`'s signatures: `sha256-<hex>.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// Verifies that `digest` of `r`'s repository carries a signature by
/// `key`; the first that does.
pub async fn verify(
    registry: &Registry,
    r: &PolicyRef,
    digest: &str,
    key: &VerifyingKey,
) -> Result<Verified, OciError> {
    let tag = r.tagged(&signature_tag(digest));
    let Some(bytes) = registry.manifest_bytes(&tag).await? else {
        return Err(OciError::Unverified(format!(
            "{} is unsigned: no cosign signature at {tag} (sign it: `signpost policy sign {} --key KEY`)",
            r.at(digest),
            r.at(digest)
        )));
    };
    let manifest = super::parse_manifest(&bytes)?;
    let mut why: Vec<String> = Vec::new();
    for layer in manifest.layers.iter().filter(|l| l.media_type == SIMPLE_SIGNING).take(MAX_SIGNATURES) {
        let Some(sig) = layer.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION)) else {
            why.push(format!("{}: no signature annotation", layer.digest));
            continue;
        };
        let payload = match registry.blob(&tag, layer, MAX_SMALL_BLOB).await {
            Ok(p) => p,
            Err(e) => {
                why.push(e.to_string());
                continue;
            }
        };
        match check(&payload, sig, digest, key) {
            Ok(v) => return Ok(v),
            Err(e) => why.push(e),
        }
    }
    let n = manifest.layers.iter().filter(|l| l.media_type == SIMPLE_SIGNING).count();
    Err(OciError::Unverified(format!(
        "{} has {n} signature(s) at {tag}, none valid by {}: {}",
        r.at(digest),
        key.fingerprint(),
        if why.is_empty() { "no simple signing layer".to_owned() } else { why.join("; ") }
    )))
}

/// Signs `digest` of `r`'s repository with `key`, adding the signature to
/// those already at its signature tag (as cosign does). The signature
/// manifest's digest.
pub async fn sign(registry: &Registry, r: &PolicyRef, digest: &str, key: &SigningKey) -> Result<String, OciError> {
    let tag = r.tagged(&signature_tag(digest));
    let body = payload(&r.repository_path(), digest);
    let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&body));
    let mut layers: Vec<OciDescriptor> = match registry.manifest_bytes(&tag).await? {
        Some(bytes) => super::parse_manifest(&bytes)?.layers,
        None => Vec::new(),
    };
    let mut layer = registry.push_blob(&tag, &body).await?;
    layer.media_type = SIMPLE_SIGNING.to_owned();
    layer.annotations = Some(BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature)]));
    // The same key signs the same payload once (P-256 signatures are
    // deterministic here; an Ed25519 one always is).
    layers.retain(|l| l.digest != layer.digest || l.annotations != layer.annotations);
    layers.push(layer);
    if layers.len() > MAX_SIGNATURES {
        return Err(OciError::Invalid(format!("{tag} holds {} signatures already", layers.len() - 1)));
    }
    let diff_ids: Vec<&str> = layers.iter().map(|l| l.digest.as_str()).collect();
    let config = serde_json::json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {},
    });
    let config = serde_json::to_vec(&config).unwrap_or_default();
    let mut config_d = registry.push_blob(&tag, &config).await?;
    config_d.media_type = "application/vnd.oci.image.config.v1+json".to_owned();
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: config_d,
        layers,
        subject: None,
        artifact_type: None,
        annotations: None,
    };
    registry.push_manifest(&tag, &manifest).await
}
