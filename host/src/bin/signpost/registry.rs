//! `signpost policy push | sign | verify | keygen`: policies published to
//! an OCI registry and signed in cosign's format (the server's side is
//! `--policy oci://…`, [`signpost::oci::follow`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use signpost::oci::sign::{SigningKey, VerifyingKey};
use signpost::oci::{Access, PolicyRef, Registry, annotation};
use signpost::policy::PolicyEngine;
use signpost::reload;
use signpost::validate::HintValidator;

/// How a command reaches a registry. Credentials come from the
/// environment (`SIGNPOST_REGISTRY_USER` and `SIGNPOST_REGISTRY_PASSWORD`,
/// or `SIGNPOST_REGISTRY_TOKEN`), else from Docker's `config.json`.
#[derive(clap::Args, Clone, Debug)]
pub(super) struct RegistryArgs {
    /// Seconds each registry request may take.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    registry_timeout_secs: u64,
    /// A registry reached over plain HTTP (HOST:PORT; a loopback one always
    /// is), repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    registry_plain_http: Vec<String>,
}

impl RegistryArgs {
    fn registry(&self, r: &PolicyRef) -> anyhow::Result<Registry> {
        let access = Access {
            timeout: Duration::from_secs(self.registry_timeout_secs),
            plain_http: self.registry_plain_http.clone(),
            ..Access::default()
        }
        .with_credentials_for(r);
        Ok(Registry::new(access, r.registry())?)
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

fn parse_ref(s: &str) -> anyhow::Result<PolicyRef> {
    Ok(s.parse::<PolicyRef>()?)
}

/// The interfaces a component imports and exports (its own, not those
/// of the components and modules nested in it).
fn interfaces(bytes: &[u8]) -> (Vec<String>, Vec<String>) {
    use wasmparser::Payload;
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload {
            Ok(Payload::ComponentImportSection(r)) if depth == 0 => {
                imports.extend(r.into_iter().flatten().map(|i| i.name.name.to_owned()));
            }
            Ok(Payload::ComponentExportSection(r)) if depth == 0 => {
                exports.extend(r.into_iter().flatten().map(|e| e.name.name.to_owned()));
            }
            Ok(Payload::ModuleSection { .. } | Payload::ComponentSection { .. }) => depth += 1,
            Ok(Payload::End(_)) => depth = depth.saturating_sub(1),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    (imports, exports)
}

/// `signpost policy push FILE REF`: the checks a swap runs, then the
/// artifact, then (with a key) its signature. Prints the pushed reference
/// by digest.
pub(super) fn push(
    engine: &PolicyEngine,
    file: &Path,
    reference: &str,
    key: Option<&Path>,
    registry: &RegistryArgs,
) -> anyhow::Result<ExitCode> {
    let r = parse_ref(reference)?;
    if r.digest().is_some() {
        anyhow::bail!("{r}: push to a tag (a digest is what the registry gives the artifact)");
    }
    let key = key.map(SigningKey::read).transpose()?;
    let bytes = std::fs::read(file).with_context(|| format!("reading policy {}", file.display()))?;
    let validator = HintValidator::new()?;
    let source = file.display().to_string();
    let (policy, report) = reload::prepare(engine, &validator, &bytes, &source, reload::Gate::default(), &|| false)
        .map_err(|e| anyhow::anyhow!("{source} refused, not pushed: {e}"))?;
    let id = policy.identity().clone();
    let (imports, exports) = interfaces(&bytes);
    let created = chrono_now();
    let annotations = BTreeMap::from([
        (annotation::NAME.to_owned(), id.name.clone()),
        (annotation::VERSION.to_owned(), id.version.clone()),
        (annotation::SHA256.to_owned(), id.sha256.clone()),
        (annotation::WIT.to_owned(), policy.interface().name().to_owned()),
        (annotation::TITLE.to_owned(), id.name.clone()),
        (annotation::CREATED.to_owned(), created),
        ("org.opencontainers.image.version".to_owned(), id.version.clone()),
    ]);
    let client = registry.registry(&r)?;
    let rt = runtime()?;
    let digest = rt.block_on(client.push_policy(&r, &bytes, &exports, &imports, annotations))?;
    outln!("pushed   {id} ({report})");
    outln!("         {}", r.at(&digest));
    if let Some(key) = key {
        rt.block_on(signpost::oci::sign::sign(&client, &r, &digest, &key))?;
        outln!("signed   by {}", key.verifying().fingerprint());
    }
    outln!("{}", r.at(&digest));
    Ok(ExitCode::SUCCESS)
}

/// `signpost policy sign REF --key KEY`.
pub(super) fn sign(reference: &str, key: &Path, registry: &RegistryArgs) -> anyhow::Result<ExitCode> {
    let r = parse_ref(reference)?;
    let key = SigningKey::read(key)?;
    let client = registry.registry(&r)?;
    let rt = runtime()?;
    let digest =
        rt.block_on(client.resolve(&r))?.ok_or_else(|| anyhow::anyhow!("{r}: no such artifact in the registry"))?;
    rt.block_on(signpost::oci::sign::sign(&client, &r, &digest, &key))?;
    outln!("signed   {} by {}", r.at(&digest), key.verifying().fingerprint());
    Ok(ExitCode::SUCCESS)
}

/// `signpost policy verify REF --key PUB`: the signature, the layout, the
/// component's digest; then the checks a swap runs. Exit 1 when refused.
pub(super) fn verify(
    engine: &PolicyEngine,
    reference: &str,
    key: &Path,
    max_bytes: u64,
    registry: &RegistryArgs,
) -> anyhow::Result<ExitCode> {
    let r = parse_ref(reference)?;
    let key = VerifyingKey::read(key)?;
    let mut client = registry.registry(&r)?;
    if max_bytes != signpost::oci::DEFAULT_MAX_COMPONENT {
        let access = Access { max_component: max_bytes, ..client.access().clone() };
        client = Registry::new(access, r.registry())?;
    }
    let rt = runtime()?;
    let started = std::time::Instant::now();
    let checked = rt.block_on(async {
        let digest = client
            .resolve(&r)
            .await?
            .ok_or_else(|| signpost::oci::OciError::Invalid(format!("{r}: no such artifact in the registry")))?;
        let signature = signpost::oci::sign::verify(&client, &r, &digest, &key).await?;
        let (manifest, component) = client.pull(&r, &digest).await?;
        Ok::<_, signpost::oci::OciError>((digest, signature, manifest, component))
    });
    let (digest, signature, manifest, component) = match checked {
        Ok(c) => c,
        Err(e) => {
            super::say(&format!("refused  {r}: {e}"));
            return Ok(ExitCode::FAILURE);
        }
    };
    let fetched = started.elapsed();
    outln!("artifact {}", r.at(&digest));
    outln!("signed   by {}", signature.key);
    outln!(
        "fetched  in {:.1} ms: the tag resolved, the signature verified, the manifest and the component ({} bytes) \
         pulled and hashed",
        fetched.as_secs_f64() * 1000.0,
        component.len()
    );
    let validator = HintValidator::new()?;
    let source = r.at(&digest).to_string();
    match reload::prepare(engine, &validator, &component, &source, reload::Gate::default(), &|| false) {
        Ok((policy, report)) => {
            outln!("policy   {} ({report})", policy.identity());
            if let Some(wit) = manifest.annotation(annotation::WIT) {
                outln!("wit      {wit}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            super::say(&format!("refused  {source}: the component fails the checks a swap runs: {e}"));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `signpost policy keygen PREFIX`: PREFIX.key (mode 0600) and PREFIX.pub.
pub(super) fn keygen(prefix: &Path, ed25519: bool, force: bool) -> anyhow::Result<ExitCode> {
    let key = SigningKey::generate(ed25519)?;
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", prefix.display()));
    let (private, public) = (with("key"), with("pub"));
    for p in [&private, &public] {
        if p.exists() && !force {
            anyhow::bail!("{} exists; give --force to replace it", p.display());
        }
    }
    write_private(&private, key.to_pem()?.as_bytes())?;
    std::fs::write(&public, key.verifying().to_pem()?).with_context(|| format!("writing {}", public.display()))?;
    outln!("private  {} (keep it secret: it signs policies)", private.display());
    outln!("public   {} (give it to servers: --policy-key)", public.display());
    outln!("key      {}", key.verifying().fingerprint());
    Ok(ExitCode::SUCCESS)
}

fn write_private(path: &Path, pem: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path).with_context(|| format!("writing {}", path.display()))?;
    f.write_all(pem).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Now in RFC 3339 (UTC, seconds).
fn chrono_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
