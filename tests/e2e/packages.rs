//! The packages operators install, built from the suite's binary by
//! `packaging/build.py`: the Python wheel installed into a fresh virtual
//! environment with pip, the npm packages packed and installed into an
//! empty prefix with npm, each installed command driven over MCP on a
//! project, and `signpost setup` run from each writing what an agent must
//! run to start it again; the MCP Bundle's manifest checked by the
//! validator its authors publish (`@anthropic-ai/mcpb`) and its server
//! started as a desktop client starts it; the registry's `server.json`
//! naming the packages built and holding to the registry's schema.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::swap::Scratch;
use crate::common::toolchain::{Node, require, run_ok};
use crate::common::{BIN, Client};

/// The largest package allowed (the bound).
const MAX_BYTES: u64 = 30 * 1024 * 1024;

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/treesitter/go")
}

/// The installed command, serving the Go fixture over MCP, resolves one of
/// its symbols; its `--version` is the suite's binary's.
async fn serves(command: &Path, cache: &Path) {
    let version = run_ok(Command::new(command).arg("--version")).unwrap_or_else(|e| panic!("{e}"));
    let (_, ours) = crate::common::run_cli(&["--version"]);
    assert_eq!(String::from_utf8_lossy(&version.stdout), ours, "{}", command.display());
    let mut cmd = tokio::process::Command::new(command);
    cmd.arg("--project").arg(project()).env("XDG_CACHE_HOME", cache);
    let client = Client::spawn_command(cmd, Stdio::null()).await;
    let r = client.call("resolve", json!({"identifier": "service.Service"})).await;
    assert_eq!(r.structured["status"], "one", "{}: {}", command.display(), r.text);
    client.close().await;
}

/// `COMMAND setup --client cursor` in a repository of its own: the entry
/// written for Cursor.
fn setup_entry(command: &Path, scratch: &Scratch, name: &str) -> Value {
    let repo = scratch.path(name);
    std::fs::create_dir_all(repo.join(".git")).unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(command);
    cmd.args(["setup", "--client", "cursor"]).current_dir(&repo).env("HOME", scratch.path("home"));
    run_ok(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(repo.join(".cursor/mcp.json")).unwrap_or_else(|e| panic!("{e}"));
    let config: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let repo = repo.canonicalize().unwrap_or_else(|e| panic!("{e}")).display().to_string();
    let entry = config["mcpServers"]["signpost"].clone();
    assert_eq!(entry["args"].as_array().and_then(|a| a.last()), Some(&json!(repo)), "{text}");
    entry
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wheel_and_the_npm_packages_install_into_a_clean_prefix_and_serve() {
    let scratch = Scratch::new("packages");
    let out = scratch.path("dist");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/build.py");
    let built = run_ok(Command::new("python3").arg(&script).arg("--binary").arg(BIN).arg("--out").arg(&out))
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = String::from_utf8_lossy(&built.stdout).into_owned();
    let wheel = out.join(format!("signpost_mcp-{}-py3-none-manylinux_2_", env!("CARGO_PKG_VERSION")));
    let wheel = listed
        .lines()
        .filter_map(|l| l.split('\t').next())
        .map(PathBuf::from)
        .find(|p| {
            p.display().to_string().starts_with(&wheel.display().to_string())
                && p.extension().is_some_and(|e| e == "whl")
        })
        .unwrap_or_else(|| panic!("no wheel made: {listed}"));
    assert!(wheel.display().to_string().ends_with(&format!("_{}.whl", std::env::consts::ARCH)), "{}", wheel.display());

    // The wheel, into a fresh virtual environment, from the file alone.
    let venv = scratch.path("venv");
    run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv)).unwrap_or_else(|e| panic!("{e}"));
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--no-index", "--quiet", "--disable-pip-version-check"])
            .arg(&wheel),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for command in ["signpost-mcp", "signpost"] {
        serves(&venv.join("bin").join(command), &scratch.path("cache")).await;
    }
    // The name the MCP registry checks the package's ownership by.
    let metadata = run_ok(
        Command::new(venv.join("bin/python"))
            .args(["-c", "import importlib.metadata as m; print(m.metadata('signpost-mcp').get_payload())"]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(String::from_utf8_lossy(&metadata.stdout).contains("mcp-name: io.github.signpost-mcp/signpost\n"));
    let entry = setup_entry(&venv.join("bin/signpost-mcp"), &scratch, "repo-pip");
    let program = PathBuf::from(entry["command"].as_str().unwrap_or_default());
    assert!(program.starts_with(venv.canonicalize().unwrap_or_default()), "the installed binary: {entry}");
    assert!(program.is_file(), "{entry}");

    // The npm packages, packed and installed into an empty prefix (its
    // path holds `_npx`, as npx's cache does).
    let Some(node) = require("Node 18 and npm", Node::find(18)) else { return };
    let packed = scratch.path("packed");
    std::fs::create_dir_all(&packed).unwrap_or_else(|e| panic!("{e}"));
    let mut tarballs = Vec::new();
    for package in [format!("signpost-mcp-linux-{}", npm_cpu()), "signpost-mcp".to_owned()] {
        let mut pack = node.npm();
        pack.args(["pack", "--silent", "--pack-destination"]).arg(&packed).current_dir(out.join("npm").join(&package));
        let name = run_ok(&mut pack).unwrap_or_else(|e| panic!("{e}"));
        let name = String::from_utf8_lossy(&name.stdout).lines().last().unwrap_or_default().trim().to_owned();
        tarballs.push(packed.join(name));
    }
    for file in tarballs.iter().chain([&wheel]) {
        let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or_default();
        assert!(size > 0 && size <= MAX_BYTES, "{}: {size} bytes", file.display());
    }
    let prefix = scratch.path("_npx/5d1f9c");
    std::fs::create_dir_all(&prefix).unwrap_or_else(|e| panic!("{e}"));
    let mut install = node.npm();
    install.args(["install", "--no-audit", "--no-fund", "--offline", "--prefix"]).arg(&prefix).args(&tarballs);
    run_ok(&mut install).unwrap_or_else(|e| panic!("{e}"));
    let bin = prefix.join("node_modules/.bin");
    for command in ["signpost-mcp", "signpost"] {
        serves(&bin.join(command), &scratch.path("cache")).await;
    }
    let entry = setup_entry(&bin.join("signpost-mcp"), &scratch, "repo-npx");
    assert_eq!(entry["command"], "npx", "run from npx's cache, the agents run npx: {entry}");
    assert_eq!((&entry["args"][0], &entry["args"][1]), (&json!("-y"), &json!("signpost-mcp")), "{entry}");
}

/// The MCP Bundle and the registry entry made beside the packages.
#[tokio::test(flavor = "multi_thread")]
async fn the_bundle_validates_and_serves_and_the_registry_entry_names_the_packages() {
    let scratch = Scratch::new("bundle");
    let out = scratch.path("dist");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/build.py");
    run_ok(Command::new("python3").arg(&script).arg("--binary").arg(BIN).arg("--out").arg(&out))
        .unwrap_or_else(|e| panic!("{e}"));
    let version = env!("CARGO_PKG_VERSION");

    // The manifest lists the tools the server serves, and the bundle's
    // authors' validator passes it (and fails one made wrong).
    let manifest_path = out.join("mcpb/manifest.json");
    let text = std::fs::read_to_string(&manifest_path).unwrap_or_else(|e| panic!("{e}"));
    let manifest: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let tools: Vec<&str> =
        manifest["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(tools, signpost::tools::Tool::NAMES, "{text}");
    assert_eq!(manifest["version"], version);
    if let Some((node, dir)) = require(MCPB, crate::common::toolchain::npm_tools("mcpb", 18, None, &[MCPB])) {
        let cli = dir.join("node_modules/@anthropic-ai/mcpb/dist/cli/cli.js");
        let validate = |path: &Path| Command::new(&node.node).arg(&cli).arg("validate").arg(path).output();
        let passed = validate(&manifest_path).unwrap_or_else(|e| panic!("{e}"));
        let said = String::from_utf8_lossy(&passed.stdout).into_owned() + &String::from_utf8_lossy(&passed.stderr);
        assert!(passed.status.success() && said.contains("validation passes"), "{said}");
        let wrong = scratch.file("wrong.json", text.replace("\"binary\"", "\"rust\"").as_bytes());
        let failed = validate(&wrong).unwrap_or_else(|e| panic!("{e}"));
        assert!(!failed.status.success(), "the validator passes a server of type rust");
    }
    // Unpacked, its server starts as its `mcp_config` says.
    let bundle = out.join(format!("signpost-{version}-linux-{}.mcpb", npm_cpu()));
    let unpacked = scratch.path("unpacked");
    run_ok(Command::new("python3").args(["-m", "zipfile", "-e"]).arg(&bundle).arg(&unpacked))
        .unwrap_or_else(|e| panic!("{e}"));
    let server = unpacked.join("server/signpost");
    run_ok(Command::new("chmod").arg("+x").arg(&server)).unwrap_or_else(|e| panic!("{e}"));
    let config = &manifest["server"]["mcp_config"];
    let program =
        config["command"].as_str().unwrap_or_default().replace("${__dirname}", &unpacked.display().to_string());
    let mut cmd = tokio::process::Command::new(program);
    for arg in config["args"].as_array().into_iter().flatten() {
        let project = project().display().to_string();
        cmd.arg(arg.as_str().unwrap_or_default().replace("${user_config.project}", &project));
    }
    cmd.env("XDG_CACHE_HOME", scratch.path("cache"));
    let client = Client::spawn_command(cmd, Stdio::null()).await;
    let r = client.call("resolve", json!({"identifier": "service.Service"})).await;
    assert_eq!(r.structured["status"], "one", "{}", r.text);
    client.close().await;

    // The registry entry names the packages built, by the name each carries.
    let entry: Value = serde_json::from_str(&std::fs::read_to_string(out.join("server.json")).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let name = entry["name"].as_str().unwrap_or_default();
    assert!(name.split('/').count() == 2 && entry["description"].as_str().is_some_and(|d| d.len() <= 100), "{entry}");
    let npm: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("npm/signpost-mcp/package.json")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(npm["mcpName"], name);
    let registries: Vec<(&str, &str, &str)> = entry["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["registryType"].as_str().unwrap_or(""),
                p["identifier"].as_str().unwrap_or(""),
                p["version"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(registries, [("pypi", "signpost-mcp", version), ("npm", "signpost-mcp", version)]);
    assert_eq!(npm["name"], "signpost-mcp");

    // The entry holds to the rules of the registry's published schema
    // (2025-09-29), and an entry that breaks one is refused by the check.
    let registry = jsonschema::validator_for(&registry_rules()).unwrap_or_else(|e| panic!("{e}"));
    let broken: Vec<String> = registry.iter_errors(&entry).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(broken.is_empty(), "{broken:?}\n{entry}");
    for (pointer, wrong) in [
        ("/name", json!("signpost")),
        ("/description", json!("x".repeat(101))),
        ("/packages/0/version", json!("latest")),
        ("/packages/1/transport", json!({"type": "pipe"})),
        ("/packages/0/packageArguments/0/type", json!("flag")),
    ] {
        let mut bad = entry.clone();
        *bad.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer} in {entry}")) = wrong;
        assert!(!registry.is_valid(&bad), "{pointer} broken, yet valid");
    }
}

/// The rules the MCP registry's `server.schema.json` (2025-09-29) sets for
/// what an entry of packages holds, as a JSON Schema. Neither the schema's
/// address nor the registry's own validator (`mcp-publisher validate`, a Go
/// program) can be reached from these machines' package registries.
fn registry_rules() -> Value {
    let input = json!({
        "type": "object",
        "properties": {
            "description": {"type": "string"}, "isRequired": {"type": "boolean"},
            "format": {"enum": ["string", "number", "boolean", "filepath"]},
            "value": {"type": "string"}, "isSecret": {"type": "boolean"}, "default": {"type": "string"},
            "isRepeated": {"type": "boolean"},
        },
    });
    let argument = json!({"anyOf": [
        {"allOf": [input, {"required": ["type"], "properties": {"type": {"enum": ["positional"]}},
                           "anyOf": [{"required": ["valueHint"]}, {"required": ["value"]}]}]},
        {"allOf": [input, {"required": ["type", "name"],
                           "properties": {"type": {"enum": ["named"]}, "name": {"type": "string"}}}]},
    ]});
    json!({
        "type": "object",
        "required": ["name", "description", "version"],
        "properties": {
            "$schema": {"type": "string", "format": "uri"},
            "name": {"type": "string", "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$", "minLength": 3, "maxLength": 200},
            "description": {"type": "string", "minLength": 1, "maxLength": 100},
            "version": {"type": "string", "maxLength": 255},
            "repository": {"type": "object", "required": ["url", "source"],
                           "properties": {"url": {"type": "string", "format": "uri"}, "source": {"type": "string"}}},
            "packages": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["registryType", "identifier", "version", "transport"],
                "properties": {
                    "registryType": {"type": "string"},
                    "registryBaseUrl": {"type": "string", "format": "uri"},
                    "identifier": {"type": "string"},
                    "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
                    "fileSha256": {"type": "string", "pattern": "^[a-f0-9]{64}$"},
                    "runtimeHint": {"type": "string"},
                    "transport": {"type": "object", "required": ["type"],
                                  "properties": {"type": {"enum": ["stdio", "streamable-http", "sse"]}}},
                    "runtimeArguments": {"type": "array", "items": argument},
                    "packageArguments": {"type": "array", "items": argument},
                    "environmentVariables": {"type": "array", "items": {"allOf": [input, {"required": ["name"]}]}},
                },
            }},
        },
    })
}

/// The MCP Bundle tools, whose `validate` checks a manifest.
const MCPB: &str = "@anthropic-ai/mcpb@2.1.2";

/// npm's name for this machine's architecture.
fn npm_cpu() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    }
}
