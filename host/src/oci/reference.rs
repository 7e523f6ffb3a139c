//! A policy's reference (`oci://REGISTRY/REPO:TAG`, `…@sha256:…`) and
//! where a policy comes from (a file, or a reference).

use std::str::FromStr;

use oci_client::Reference;

use super::{OciError, SCHEME, is_sha256};

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
        let bad = |why: &str| OciError::Reference(signpost_policy::text::escape(s, 200), why.to_owned());
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
        // oci-spec names `latest` when neither a tag nor a digest is given.
        let tag = inner.tag().map(str::to_owned);
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

impl PolicyRef {
    /// Whether a string is meant as an OCI reference (`oci://…`).
    pub fn is_oci(s: &str) -> bool {
        s.starts_with(SCHEME)
    }

    /// As oci-client takes it.
    pub(super) fn oci(&self) -> &Reference {
        &self.inner
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
    pub(super) fn manifest_name(&self) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_print_back() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let cases = [
            ("oci://127.0.0.1:5000/p/hints:stable".to_owned(), Some("stable"), false),
            ("oci://registry.example.com/p/hints".to_owned(), Some("latest"), false),
            (format!("oci://localhost/hints@sha256:{a}"), None, true),
            (format!("oci://ghcr.io/o/p:v1@sha256:{b}"), Some("v1"), true),
        ];
        for (text, tag, digest) in cases {
            let r: PolicyRef = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(r.tag(), tag, "{text}");
            assert_eq!(r.digest().is_some(), digest, "{text}");
            let shown = r.to_string();
            let want = if tag == Some("latest") { format!("{text}:latest") } else { text.clone() };
            assert_eq!(shown, want);
            assert_eq!(shown.parse::<PolicyRef>().ok().as_ref(), Some(&r), "{text} -> {shown}");
        }
        for bad in ["", "oci://", "oci://hints:stable", "oci://a b/c", "oci://h.io/x@sha256:AB", "oci://h.io/x\n"] {
            assert!(bad.parse::<PolicyRef>().is_err(), "{bad:?}");
        }
    }
}
