//! Policies as OCI artifacts, against a real registry (Debian's
//! `docker-registry`): push, sign, verify, serve by tag and by digest; two
//! replicas following one tag; every refusal (unsigned, another key, not a
//! component, too large, a tampered layer, a registry that hangs or
//! answers garbage) leaving the old policy serving; a restart without the
//! registry serving the last policy verified, from the cache; a registry
//! that asks for credentials.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use signpost::oci::{Access, PolicyRef, Registry, sign};

use crate::common::agents::{decisions, get, temp_dir};
use crate::common::registry::OciRegistry;
use crate::common::{BIN, Client, DEFAULT_POLICY, free_port, run_cli, sum_samples, toolchain};

/// The default policy with a custom section appended: the same behaviour,
/// another build (`pad` bytes more).
fn variant(tag: &str, pad: usize) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut bytes = std::fs::read(DEFAULT_POLICY).unwrap_or_else(|e| panic!("{e}"));
    let name = b"signpost-test-build";
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name);
    payload.extend_from_slice(tag.as_bytes());
    payload.resize(payload.len() + pad, b'.');
    bytes.push(0);
    leb(payload.len(), &mut bytes);
    bytes.extend_from_slice(&payload);
    bytes
}

struct Keys {
    dir: PathBuf,
}

impl Keys {
    /// `fleet` (ECDSA P-256) and `other` (Ed25519) key pairs.
    fn new(name: &str) -> Keys {
        let dir = temp_dir(&format!("oci-keys-{name}"));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (prefix, kind) in [("fleet", None), ("other", Some("--ed25519"))] {
            let prefix = dir.join(prefix).display().to_string();
            let mut args = vec!["policy", "keygen", &prefix];
            args.extend(kind);
            let (ok, out) = run_cli(&args);
            assert!(ok, "{out}");
        }
        Keys { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    path.display().to_string()
}

/// `signpost policy push FILE REF [--key KEY]`: the digest pushed.
fn push(file: &str, reference: &str, key: Option<&str>) -> String {
    let mut args = vec!["policy", "push", file, reference];
    if let Some(key) = key {
        args.extend(["--key", key]);
    }
    let (ok, out) = run_cli(&args);
    assert!(ok, "push {reference}: {out}");
    let last = out.lines().rev().find(|l| l.contains("@sha256:")).unwrap_or_else(|| panic!("{out}"));
    last.rsplit_once('@').map(|(_, d)| d.trim().to_owned()).unwrap_or_else(|| panic!("{out}"))
}

fn digest(status: &Value) -> String {
    status["active"]["digest"].as_str().unwrap_or("").to_owned()
}

fn last_swap(status: &Value) -> String {
    status["last_swap"]["message"].as_str().unwrap_or("").to_owned()
}

/// The registry's client, as the tests push hostile artifacts with it.
fn registry_of(reference: &str) -> (Registry, PolicyRef) {
    let r: PolicyRef = reference.parse().unwrap_or_else(|e| panic!("{e}"));
    (Registry::new(Access::default(), r.registry()).unwrap_or_else(|e| panic!("{e}")), r)
}

/// Starts `signpost ARGS` expecting it to refuse to start: its stderr.
fn refused_start(args: &[&str]) -> String {
    let out = std::process::Command::new(BIN)
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "started: {args:?}\n{text}");
    text
}

#[tokio::test]
async fn a_policy_pushed_signed_verified_and_served_reports_its_digest() {
    let Some(reg) = toolchain::require("docker-registry", OciRegistry::start()) else { return };
    let keys = Keys::new("serve");
    let (fleet_key, fleet_pub, other_pub) = (keys.path("fleet.key"), keys.path("fleet.pub"), keys.path("other.pub"));
    let stable = reg.reference("policies/hints:stable");
    let d1 = push(DEFAULT_POLICY, &stable, Some(&fleet_key));

    // verify: by the right key, by another, over a bound.
    let (ok, out) = run_cli(&["policy", "verify", &stable, "--key", &fleet_pub]);
    assert!(ok, "{out}");
    assert!(out.contains(&d1) && out.contains("signpost-default") && out.contains("signpost:policy/policy@"), "{out}");
    let (ok, out) = run_cli(&["policy", "verify", &stable, "--key", &other_pub]);
    assert!(!ok && out.contains("none valid by Ed25519 key"), "{out}");
    let (ok, out) = run_cli(&["policy", "verify", &stable, "--key", &fleet_pub, "--max-bytes", "4096"]);
    assert!(!ok && out.contains("larger than 4096 bytes"), "{out}");
    // A private key where a public one belongs, and a file that is no key.
    let (ok, out) = run_cli(&["policy", "verify", &stable, "--key", &fleet_key]);
    assert!(!ok && out.contains("a private key"), "{out}");
    let (ok, out) = run_cli(&["policy", "verify", &stable, "--key", DEFAULT_POLICY]);
    assert!(!ok && out.contains("not a PEM"), "{out}");
    // References that do not parse, or name no registry.
    for bad in ["oci://", "oci://hints:stable", "oci://127.0.0.1:1/x@sha256:zz", "oci://a b/c"] {
        let (ok, out) = run_cli(&["policy", "verify", bad, "--key", &fleet_pub]);
        assert!(!ok && out.contains("is not an OCI reference"), "{bad}: {out}");
    }

    // Served by tag and by digest: the digest in signpost://policy, in
    // /metrics and in the decision log.
    let dir = temp_dir("oci-serve");
    let (cache, record) = (dir.join("cache").display().to_string(), dir.join("record"));
    let record_arg = record.display().to_string();
    let port = free_port().to_string();
    let args = ["--policy", &stable, "--policy-key", &fleet_pub, "--cache-dir", &cache];
    let client = Client::spawn(&[&args[..], &["--metrics", &port, "--record", &record_arg]].concat()).await;
    let status = client.status().await;
    assert_eq!(digest(&status), d1, "{status:#}");
    assert_eq!(status["active"]["source"], format!("{stable}@{d1}"), "{status:#}");
    let (code, text) = get(&format!("http://127.0.0.1:{port}/metrics")).await;
    assert_eq!(code, 200, "{text}");
    let labels = format!("digest=\"{d1}\"");
    assert_eq!(sum_samples(&text, "signpost_policy_serving", &["arm=\"live\"", &labels]), 1.0, "{text}");
    client.call("search", serde_json::json!({"query": "Order"})).await;
    let lines = decisions(&record, 1);
    assert_eq!(lines[0]["policy"]["digest"], d1, "{lines:#?}");
    client.close().await;
    let by_digest = format!("{}@{d1}", reg.reference("policies/hints"));
    let client = Client::spawn(&["--policy", &by_digest, "--policy-key", &fleet_pub, "--no-cache"]).await;
    assert_eq!(digest(&client.status().await), d1);
    client.close().await;

    // Unsigned: refused with a key; served only when asked for explicitly.
    let unsigned = reg.reference("policies/hints:unsigned");
    push(DEFAULT_POLICY, &unsigned, None);
    let err = refused_start(&["--policy", &unsigned, "--policy-key", &fleet_pub, "--no-cache"]);
    assert!(err.contains("is unsigned"), "{err}");
    let err = refused_start(&["--policy", &unsigned, "--no-cache"]);
    assert!(err.contains("--policy-key") && err.contains("--policy-unsigned"), "{err}");
    let client = Client::spawn(&["--policy", &unsigned, "--policy-unsigned", "--no-cache"]).await;
    assert!(digest(&client.status().await).starts_with("sha256:"));
    client.close().await;
    // Signed afterwards, it serves with the key; a second signature by
    // another key is kept beside the first.
    let (ok, out) = run_cli(&["policy", "sign", &unsigned, "--key", &keys.path("other.key")]);
    assert!(ok, "{out}");
    let (ok, out) = run_cli(&["policy", "sign", &unsigned, "--key", &fleet_key]);
    assert!(ok, "{out}");
    for key in [&fleet_pub, &other_pub] {
        let (ok, out) = run_cli(&["policy", "verify", &unsigned, "--key", key]);
        assert!(ok, "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn two_replicas_follow_one_tag_to_a_new_build() {
    let Some(reg) = toolchain::require("docker-registry", OciRegistry::start()) else { return };
    let keys = Keys::new("fleet");
    let (fleet_key, fleet_pub) = (keys.path("fleet.key"), keys.path("fleet.pub"));
    let stable = reg.reference("fleet/hints:stable");
    let d1 = push(DEFAULT_POLICY, &stable, Some(&fleet_key));
    let dir = temp_dir("oci-fleet");
    let mut replicas = Vec::new();
    for n in 0..2 {
        let cache = dir.join(format!("cache-{n}")).display().to_string();
        let args = ["--policy", &stable, "--policy-key", &fleet_pub, "--policy-poll-secs", "1", "--cache-dir", &cache];
        replicas.push(Client::spawn(&args).await);
    }
    for r in &replicas {
        assert_eq!(digest(&r.status().await), d1);
    }
    // A third replica serves the file it was given, and the tag as its
    // canary and its shadow.
    let canary = reg.reference("fleet/hints:canary");
    let dc = push(&write(&dir, "c.wasm", &variant("canary", 0)), &canary, Some(&fleet_key));
    let args = [
        "--policy",
        DEFAULT_POLICY,
        "--canary",
        &canary,
        "--shadow",
        &stable,
        "--policy-key",
        &fleet_pub,
        "--policy-poll-secs",
        "1",
        "--no-cache",
    ];
    let trial = Client::spawn(&args).await;
    let status = trial.status().await;
    assert_eq!(status["canary"]["policy"]["digest"], dc, "{status:#}");
    assert_eq!(status["shadow"]["policy"]["digest"], d1, "{status:#}");
    assert!(status["active"]["digest"].is_null(), "a file has no digest: {status:#}");
    let v2 = write(&dir, "v2.wasm", &variant("v2", 0));
    let d2 = push(&v2, &stable, Some(&fleet_key));
    let moved = Instant::now();
    assert_ne!(d1, d2);
    for r in &replicas {
        let status = r.wait_status(Duration::from_secs(30), |s| digest(s) == d2).await;
        assert_eq!(digest(&status), d2, "{status:#}");
        assert_eq!(status["swaps"]["published"], 1, "{status:#}");
    }
    eprintln!("both replicas served the moved tag {:?} after the push", moved.elapsed());
    let status = trial.wait_status(Duration::from_secs(30), |s| s["shadow"]["policy"]["digest"] == d2).await;
    assert_eq!(status["shadow"]["policy"]["digest"], d2, "the shadow follows its tag: {status:#}");
    for r in replicas.into_iter().chain([trial]) {
        r.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn every_refusal_leaves_the_serving_policy_in_place() {
    let Some(reg) = toolchain::require("docker-registry", OciRegistry::start()) else { return };
    let keys = Keys::new("refusals");
    let (fleet_key, fleet_pub) = (keys.path("fleet.key"), keys.path("fleet.pub"));
    let stable = reg.reference("refused/hints:stable");
    let d1 = push(DEFAULT_POLICY, &stable, Some(&fleet_key));
    let size = std::fs::metadata(DEFAULT_POLICY).map(|m| m.len()).unwrap_or(0);
    let bound = (size + 50_000).to_string();
    let dir = temp_dir("oci-refusals");
    let args = [
        "--policy",
        &stable,
        "--policy-key",
        &fleet_pub,
        "--policy-poll-secs",
        "1",
        "--policy-max-bytes",
        &bound,
        "--registry-timeout-secs",
        "2",
        "--no-cache",
    ];
    let client = Client::spawn(&args).await;
    assert_eq!(digest(&client.status().await), d1);
    let (registry, r) = registry_of(&stable);
    let signer = sign::SigningKey::read(Path::new(&fleet_key)).unwrap_or_else(|e| panic!("{e}"));

    // Each moves the tag to something the replica must refuse.
    let expect = async |what: &str, fragment: &str| {
        let status = client.wait_status(Duration::from_secs(30), |s| last_swap(s).contains(fragment)).await;
        assert!(last_swap(&status).contains(fragment), "{what}: {status:#}");
        assert_eq!(digest(&status), d1, "{what}: the policy serving changed: {status:#}");
    };
    push(&write(&dir, "a.wasm", &variant("unsigned", 0)), &stable, None);
    expect("unsigned", "is unsigned").await;
    push(&write(&dir, "b.wasm", &variant("other", 0)), &stable, Some(&keys.path("other.key")));
    expect("another key", "none valid by ECDSA P-256 key").await;
    push(&write(&dir, "c.wasm", &variant("large", 100_000)), &stable, Some(&fleet_key));
    expect("too large", &format!("larger than {bound} bytes")).await;

    // Not a component: an image's layout, signed by the right key.
    let layer = registry.push_blob(&r, b"not a tar").await.unwrap_or_else(|e| panic!("{e}"));
    let config = registry.push_blob(&r, b"{}").await.unwrap_or_else(|e| panic!("{e}"));
    let image = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config.digest, "size": config.size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer.digest, "size": layer.size}],
    });
    let d = registry.push_manifest_bytes(&r, serde_json::to_vec(&image).unwrap_or_default()).await;
    let d = d.unwrap_or_else(|e| panic!("{e}"));
    sign::sign(&registry, &r, &d, &signer).await.unwrap_or_else(|e| panic!("{e}"));
    expect("an image", "not a policy component in the WebAssembly OCI layout").await;

    // The layout, signed, but its layer is no component: the policy checks refuse it.
    let d = push_raw_policy(&registry, &r, b"\0asm garbage").await;
    sign::sign(&registry, &r, &d, &signer).await.unwrap_or_else(|e| panic!("{e}"));
    expect("not a component", "keeps serving").await;

    // A tampered layer: pushed and signed under another tag, its blob
    // rewritten in the registry's storage, then the tag moved to it.
    let staging = reg.reference("refused/hints:staging");
    let bytes = variant("tampered", 0);
    let d = push(&write(&dir, "t.wasm", &bytes), &staging, Some(&fleet_key));
    let blob = reg.blob_file(&signpost::oci::digest_of(&bytes));
    let mut forged = bytes.clone();
    let at = forged.len() - 1;
    forged[at] ^= 1;
    std::fs::write(&blob, &forged).unwrap_or_else(|e| panic!("{e}"));
    let manifest = registry.manifest_bytes(&r.at(&d)).await.unwrap_or_else(|e| panic!("{e}"));
    registry.push_manifest_bytes(&r, manifest.unwrap_or_default()).await.unwrap_or_else(|e| panic!("{e}"));
    expect("tampered", "tampered with or corrupt").await;

    // A registry that stops answering.
    reg.signal("STOP");
    let status = client.wait_status(Duration::from_secs(30), |s| last_swap(s).contains("within")).await;
    reg.signal("CONT");
    assert!(last_swap(&status).contains("within"), "{status:#}");
    assert_eq!(digest(&status), d1);
    assert_eq!(status["swaps"]["published"], 0, "{status:#}");
    // Still answering, with the first policy.
    let reply = client.call("search", serde_json::json!({"query": "Order"})).await;
    assert!(!reply.is_error, "{:?}", reply.structured);
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A manifest in the policy layout whose one layer is `layer`, at `r`'s tag.
async fn push_raw_policy(registry: &Registry, r: &PolicyRef, layer: &[u8]) -> String {
    let l = registry.push_blob(r, layer).await.unwrap_or_else(|e| panic!("{e}"));
    let c = registry.push_blob(r, br#"{"architecture":"wasm","os":"wasip2"}"#).await.unwrap_or_else(|e| panic!("{e}"));
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": signpost::oci::MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": signpost::oci::CONFIG_MEDIA_TYPE, "digest": c.digest, "size": c.size},
        "layers": [{"mediaType": signpost::oci::LAYER_MEDIA_TYPE, "digest": l.digest, "size": l.size}],
    });
    let bytes = serde_json::to_vec(&manifest).unwrap_or_default();
    registry.push_manifest_bytes(r, bytes).await.unwrap_or_else(|e| panic!("{e}"))
}

/// A registry impostor on a loopback port: each connection gets `answer`
/// (none: the connection is held open and never answered).
fn impostor(answer: Option<Vec<u8>>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            match &answer {
                None => held.push(stream),
                Some(bytes) => {
                    let bytes = bytes.clone();
                    std::thread::spawn(move || {
                        use std::io::{Read, Write};
                        let mut stream = stream;
                        let mut buf = [0u8; 4096];
                        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                        let _ = stream.read(&mut buf);
                        let _ = stream.write_all(&bytes);
                    });
                }
            }
        }
    });
    port
}

#[tokio::test]
async fn hostile_registries_are_refused_with_a_reason() {
    let keys = Keys::new("hostile");
    let fleet_pub = keys.path("fleet.pub");
    let garbage =
        b"HTTP/1.1 200 OK\r\nContent-Length: 23\r\nConnection: close\r\n\r\n{\"schemaVersion\": \"lol\"".to_vec();
    // 100 MB announced, then bytes until the reader gives up.
    let mut huge = b"HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n".to_vec();
    huge.resize(huge.len() + (2 << 20), b'{');
    let cases: [(&str, Option<Vec<u8>>, &str); 3] = [
        ("hangs", None, "within 2s"),
        ("answers garbage", Some(garbage), "not an OCI image manifest"),
        ("answers without end", Some(huge), "larger than 1048576 bytes"),
    ];
    for (what, answer, fragment) in cases {
        let port = impostor(answer);
        let reference = format!("oci://127.0.0.1:{port}/policies/hints:stable");
        let started = Instant::now();
        let (ok, out) = run_cli(&["policy", "verify", &reference, "--key", &fleet_pub, "--registry-timeout-secs", "2"]);
        assert!(!ok && out.contains(fragment), "{what}: {out}");
        assert!(started.elapsed() < Duration::from_secs(60), "{what}: took {:?}", started.elapsed());
        // A server pointed at it does not start on it, and says why.
        let args = ["--policy", &reference, "--policy-key", &fleet_pub, "--registry-timeout-secs", "2", "--no-cache"];
        let err = refused_start(&args);
        assert!(err.contains(fragment), "{what}: {err}");
    }
}

#[tokio::test]
async fn a_restart_without_the_registry_serves_the_last_policy_verified() {
    let Some(mut reg) = toolchain::require("docker-registry", OciRegistry::start()) else { return };
    let keys = Keys::new("restart");
    let (fleet_key, fleet_pub) = (keys.path("fleet.key"), keys.path("fleet.pub"));
    let stable = reg.reference("restart/hints:stable");
    let d1 = push(DEFAULT_POLICY, &stable, Some(&fleet_key));
    let dir = temp_dir("oci-restart");
    let cache = dir.join("cache").display().to_string();
    let args = ["--policy", &stable, "--policy-key", &fleet_pub, "--cache-dir", &cache, "--registry-timeout-secs", "2"];
    let client = Client::spawn(&args).await;
    assert_eq!(digest(&client.status().await), d1);
    client.close().await;
    // A new build pushed while no replica served it is not what a restart
    // without the registry falls back to.
    let v2 = write(&dir, "v2.wasm", &variant("v2", 0));
    push(&v2, &stable, Some(&fleet_key));
    // And a build the checks refuse, signed and at the tag: the restart
    // serves the last one that passed.
    let (registry, r) = registry_of(&stable);
    let signer = sign::SigningKey::read(Path::new(&fleet_key)).unwrap_or_else(|e| panic!("{e}"));
    let bad = push_raw_policy(&registry, &r, b"\0asm garbage").await;
    sign::sign(&registry, &r, &bad, &signer).await.unwrap_or_else(|e| panic!("{e}"));
    let log = dir.join("refused.log");
    let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
    let client = Client::spawn_logging(&args, "warn", file).await;
    let status = client.status().await;
    assert_eq!(digest(&status), d1, "a refused build at the tag falls back to the last served: {status:#}");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("from the cache") && said.contains("refused"), "{said}");
    client.close().await;
    reg.stop();
    let log = dir.join("stderr.log");
    let file = std::fs::File::create(&log).unwrap_or_else(|e| panic!("{e}"));
    let client = Client::spawn_logging(&args, "warn", file).await;
    let status = client.status().await;
    assert_eq!(digest(&status), d1, "{status:#}");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("from the cache") && said.contains(&d1), "{said}");
    client.close().await;
    // The cache is verified again: another key refuses it; a changed
    // component is refused.
    let other = ["--policy", &stable, "--policy-key", &keys.path("other.pub"), "--cache-dir", &cache];
    let err = refused_start(&[&other[..], &["--registry-timeout-secs", "2"]].concat());
    assert!(err.contains("made by another key"), "{err}");
    let entry = Path::new(&cache).join("oci").join(d1.replacen(':', "-", 1)).join("component.wasm");
    std::fs::write(&entry, variant("forged", 0)).unwrap_or_else(|e| panic!("{e}"));
    let err = refused_start(&args);
    assert!(err.contains("does not hash"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The user and password of the registry that asks for them, and their
/// htpasswd line (bcrypt, cost 5: made once with Python's `bcrypt`).
const USER: (&str, &str) = ("fleet", "fleet-secret-1234");
const HTPASSWD: &str = "fleet:$2b$05$bYZnDJizKVDqV6yMSHHTje19HU5e/YERnD.fL9Pnq.47mIA3N.o1i";

#[tokio::test]
async fn a_registry_that_asks_for_credentials_gets_them_from_the_environment() {
    let Some(reg) = toolchain::require("docker-registry", OciRegistry::start_with(Some(HTPASSWD))) else { return };
    let keys = Keys::new("auth");
    let (fleet_key, fleet_pub) = (keys.path("fleet.key"), keys.path("fleet.pub"));
    let stable = reg.reference("private/hints:stable");
    let creds = [("SIGNPOST_REGISTRY_USER", USER.0), ("SIGNPOST_REGISTRY_PASSWORD", USER.1)];
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = std::process::Command::new(BIN).args(args).envs(env.iter().copied()).stdin(Stdio::null()).output();
        let out = out.unwrap_or_else(|e| panic!("{e}"));
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    };
    let push = ["policy", "push", DEFAULT_POLICY, &stable, "--key", &fleet_key];
    let (ok, out) = run(&push, &[]);
    assert!(!ok && out.contains("SIGNPOST_REGISTRY_USER"), "without credentials: {out}");
    let wrong = [("SIGNPOST_REGISTRY_USER", USER.0), ("SIGNPOST_REGISTRY_PASSWORD", "not-the-password")];
    let (ok, out) = run(&push, &wrong);
    assert!(!ok && out.contains("SIGNPOST_REGISTRY_USER"), "a wrong password: {out}");
    let (ok, out) = run(&push, &creds);
    assert!(ok, "{out}");
    let d1 = out.lines().rev().find_map(|l| l.rsplit_once('@')).map(|(_, d)| d.trim().to_owned()).unwrap_or_default();
    let (ok, out) = run(&["policy", "verify", &stable, "--key", &fleet_pub], &[]);
    assert!(!ok && out.contains("answered 401") && out.contains("SIGNPOST_REGISTRY_USER"), "{out}");
    let (ok, out) = run(&["policy", "verify", &stable, "--key", &fleet_pub], &creds);
    assert!(ok, "{out}");
    // A server given the credentials follows the tag; one without is refused at start.
    let args = ["--policy", &stable, "--policy-key", &fleet_pub, "--no-cache"];
    let client = Client::spawn_with(&args, &creds, Stdio::null()).await;
    assert_eq!(digest(&client.status().await), d1);
    client.close().await;
    let err = refused_start(&args);
    assert!(err.contains("answered 401") && err.contains("SIGNPOST_REGISTRY_USER"), "{err}");
}

/// A registry whose bearer tokens expire: `/v2/` asks for a token, the
/// token endpoint gives `tok-1`, `tok-2`, …, and any other request with
/// the first token is refused as expired (401), with a later one answered
/// with a manifest that is garbage. Past the 401, a client took a new token.
fn expiring_tokens() -> u16 {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    let issued = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let issued = issued.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(&stream);
                let (mut first, mut auth) = (String::new(), String::new());
                let _ = reader.read_line(&mut first);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if line.to_ascii_lowercase().starts_with("authorization:") {
                        auth = line.trim().to_owned();
                    }
                }
                let mut words = first.split(' ');
                let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
                let challenge =
                    format!("WWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"t\"");
                let reply = if path == "/v2/" {
                    format!(
                        "HTTP/1.1 401 Unauthorized\r\n{challenge}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                } else if path.starts_with("/token") {
                    let n = issued.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    let body = format!("{{\"token\": \"tok-{n}\"}}");
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
                } else if auth.is_empty() || auth.ends_with("tok-1") {
                    format!(
                        "HTTP/1.1 401 Unauthorized\r\n{challenge}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                } else {
                    let body = if method == "HEAD" { "" } else { "[]" };
                    format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{body}")
                };
                let _ = (&stream).write_all(reply.as_bytes());
            });
        }
    });
    port
}

#[tokio::test]
async fn an_expired_registry_token_is_exchanged_for_a_new_one() {
    let keys = Keys::new("tokens");
    let port = expiring_tokens();
    let reference = format!("oci://127.0.0.1:{port}/policies/hints:stable");
    let (ok, out) = run_cli(&["policy", "verify", &reference, "--key", &keys.path("fleet.pub")]);
    // Past the refusal of the expired token: the garbage manifest is what is
    // refused. (The status as the error says it: the registry's port, in
    // the reference the error names, may hold "401".)
    assert!(!ok && out.contains("not an OCI image manifest") && !out.contains("answered 401"), "{out}");
}
