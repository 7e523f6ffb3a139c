#!/usr/bin/env python3
"""Packages a built `signpost` binary the ways operators install MCP servers.

    python3 packaging/build.py --binary target/release/signpost --out dist/

writes into OUT:

- `signpost_mcp-VERSION-py3-none-PLATFORM.whl`: a Python wheel that carries
  the binary (`uvx signpost-mcp`, `pipx install signpost-mcp`, `pip
  install`); its `signpost` and `signpost-mcp` commands run it;
- `npm/signpost-mcp/` and `npm/signpost-mcp-PLATFORM/`: the npm package
  (`npx -y signpost-mcp`) and the one per platform that carries the binary,
  found by the first through its optional dependency (the pattern of the
  Rust and Go tools on npm), each packed to a `.tgz` beside it when `npm`
  is on PATH;
- `signpost-VERSION-PLATFORM.mcpb`: a bundle for the desktop clients that
  install MCP Bundles, its `manifest.json` also written beside it in
  `mcpb/`, listing the tools the binary serves (asked over MCP);
- `server.json`: the entry for the MCP registry, naming the PyPI and npm
  packages above (each carries the `mcp-name` the registry checks
  ownership by).

The binary is copied stripped of its debug info and symbols (`strip`), as
`cargo build --profile dist` makes it. Its platform is read from the binary
itself: the ELF machine, and the newest glibc symbol version it needs,
which names the wheel's `manylinux_2_NN` tag (an installer refuses it on an
older glibc instead of failing at run time). The version is the host
crate's. Nothing is downloaded: only the standard library runs here.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "signpost-mcp"
# The server's name in the MCP registry.
MCP_NAME = "io.github.signpost-mcp/signpost"

# ELF e_machine -> (wheel architecture, npm cpu)
MACHINES = {62: ("x86_64", "x64"), 183: ("aarch64", "arm64")}


def metadata():
    """(version, license, repository, description) of the host crate."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        workspace = tomllib.load(f)["workspace"]["package"]
    with open(os.path.join(ROOT, "host", "Cargo.toml"), "rb") as f:
        host = tomllib.load(f)["package"]
    return workspace["version"], workspace["license"], workspace["repository"], host["description"]


def platform_of(binary):
    """(wheel platform tag, npm os, npm cpu) of a Linux ELF binary."""
    with open(binary, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        sys.exit(f"packaging: {binary} is not an ELF binary (only Linux builds are packaged here)")
    machine = int.from_bytes(data[18:20], "little")
    if machine not in MACHINES:
        sys.exit(f"packaging: {binary}: ELF machine {machine} is not one packaged here (x86_64, aarch64)")
    arch, cpu = MACHINES[machine]
    glibc = max((tuple(int(p) for p in v.split(b".")) for v in re.findall(rb"GLIBC_(2\.[0-9]+)\x00", data)),
                default=(2, 17))
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}", "linux", cpu


def stripped(binary, work):
    out = os.path.join(work, "signpost")
    shutil.copyfile(binary, out)
    strip = shutil.which("strip")
    if strip is None:
        sys.exit("packaging: `strip` (binutils) is missing: the binary would carry its debug info")
    subprocess.run([strip, out], check=True)
    os.chmod(out, 0o755)
    return out


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def wheel(binary, meta, tag, out):
    version, license_, repository, summary = meta
    dist = NAME.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    launcher = (
        '"""Runs the Signpost binary this package carries, with the arguments given."""\n\n'
        "import os\nimport sys\n\n\n"
        "def binary():\n"
        '    """The path of the `signpost` binary."""\n'
        '    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "signpost")\n\n\n'
        "def main():\n"
        "    path = binary()\n"
        '    if os.name == "nt":\n'
        "        import subprocess\n\n"
        "        sys.exit(subprocess.call([path, *sys.argv[1:]]))\n"
        "    os.execv(path, [path, *sys.argv[1:]])\n"
    )
    with open(binary, "rb") as f:
        exe = f.read()
    files = [
        (f"{dist}/__init__.py", launcher.encode(), 0o644),
        (f"{dist}/__main__.py", b"from . import main\n\nmain()\n", 0o644),
        (f"{dist}/bin/signpost", exe, 0o755),
        (f"{info}/METADATA", (
            f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\nSummary: {summary}\n"
            f"Home-page: {repository}\nLicense: {license_}\nRequires-Python: >=3.8\n"
            f"Description-Content-Type: text/markdown\n\n{summary}.\n\nmcp-name: {MCP_NAME}\n"
        ).encode(), 0o644),
        (f"{info}/WHEEL", (
            f"Wheel-Version: 1.0\nGenerator: signpost packaging/build.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
        ).encode(), 0o644),
        (f"{info}/entry_points.txt",
         f"[console_scripts]\nsignpost = {dist}:main\n{NAME} = {dist}:main\n".encode(), 0o644),
    ]
    record = [record_line(p, d) for p, d, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    return write_zip(os.path.join(out, f"{dist}-{version}-py3-none-{tag}.whl"), files)


def write_zip(path, files):
    """A zip of (name, bytes, mode) entries, each with its Unix mode (installers
    keep the executable bit) and a fixed date (the same input, the same file)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, mode in files:
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (stat.S_IFREG | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return path


LAUNCHER_JS = r"""#!/usr/bin/env node
// Runs the Signpost binary of this platform's package, with the arguments
// given; its exit code (or signal) is this command's.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const pkg = `signpost-mcp-${process.platform}-${process.arch}`;
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "signpost");
} catch {
  console.error(
    `signpost-mcp: no build for ${process.platform}-${process.arch} (the optional package ${pkg} is not ` +
      `installed). Builds: ${Object.keys(require("../package.json").optionalDependencies).join(", ")}; ` +
      `or build Signpost from source`,
  );
  process.exit(1);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`signpost-mcp: cannot run ${binary}: ${run.error.message}`);
  process.exit(1);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status ?? 1);
"""


def npm(binary, meta, os_name, cpu, out):
    version, license_, repository, summary = meta
    platform_pkg = f"{NAME}-{os_name}-{cpu}"
    top = os.path.join(out, "npm", NAME)
    plat = os.path.join(out, "npm", platform_pkg)
    for d in (top, plat):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "bin"))
    common = {"version": version, "license": license_, "repository": repository}
    with open(os.path.join(top, "package.json"), "w", encoding="utf-8") as f:
        json.dump({"name": NAME, **common, "description": summary, "mcpName": MCP_NAME,
                   "bin": {"signpost": "bin/signpost.js", NAME: "bin/signpost.js"},
                   "files": ["bin"], "engines": {"node": ">=18"},
                   "optionalDependencies": {platform_pkg: version}}, f, indent=2)
    with open(os.path.join(top, "bin", "signpost.js"), "w", encoding="utf-8") as f:
        f.write(LAUNCHER_JS)
    os.chmod(os.path.join(top, "bin", "signpost.js"), 0o755)
    with open(os.path.join(plat, "package.json"), "w", encoding="utf-8") as f:
        json.dump({"name": platform_pkg, **common, "description": f"The Signpost binary for {os_name}-{cpu}",
                   "os": [os_name], "cpu": [cpu], "libc": ["glibc"], "files": ["bin"]}, f, indent=2)
    shutil.copyfile(binary, os.path.join(plat, "bin", "signpost"))
    os.chmod(os.path.join(plat, "bin", "signpost"), 0o755)
    packed = []
    npm_cmd = shutil.which("npm")
    if npm_cmd:
        for d in (plat, top):
            name = subprocess.run([npm_cmd, "pack", "--silent", "--pack-destination", os.path.join(out, "npm")],
                                  cwd=d, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            packed.append(os.path.join(out, "npm", name))
    return top, plat, packed


def tools_of(binary):
    """The tools the binary serves: (name, description) from `tools/list`."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "packaging", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "RUST_LOG": "error"})
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        for line in proc.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                return [(t["name"], t["description"]) for t in reply["result"]["tools"]]
    finally:
        proc.kill()
        proc.wait()
    sys.exit("packaging: the binary listed no tools over MCP")


def bundle(binary, meta, os_name, cpu, out):
    """The MCP Bundle: manifest.json and the binary, zipped."""
    version, license_, repository, summary = meta
    manifest = {
        "manifest_version": "0.3",
        "name": "signpost",
        "display_name": "Signpost",
        "version": version,
        "description": summary,
        "long_description": "A code graph of the repository you choose (symbols, calls, references, "
                            "inheritance), kept up to date as its files change, with hints telling the agent "
                            "which call to make next; the hints run in a sandboxed WebAssembly policy.",
        "author": {"name": "The Signpost authors"},
        "repository": {"type": "git", "url": repository},
        "license": license_,
        "keywords": ["code graph", "code navigation", "mcp"],
        "server": {
            "type": "binary",
            "entry_point": "server/signpost",
            "mcp_config": {"command": "${__dirname}/server/signpost", "args": ["--project", "${user_config.project}"]},
        },
        "tools": [{"name": n, "description": d} for n, d in tools_of(binary)],
        "user_config": {
            "project": {"type": "directory", "title": "Repository",
                        "description": "The repository to serve: its code graph, kept up to date as it changes",
                        "required": True},
        },
        "compatibility": {"platforms": [os_name]},
    }
    stage = os.path.join(out, "mcpb")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "server"))
    with open(os.path.join(stage, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    shutil.copyfile(binary, os.path.join(stage, "server", "signpost"))
    os.chmod(os.path.join(stage, "server", "signpost"), 0o755)
    files = []
    for rel, mode in (("manifest.json", 0o644), ("server/signpost", 0o755)):
        with open(os.path.join(stage, rel), "rb") as f:
            files.append((rel, f.read(), mode))
    return write_zip(os.path.join(out, f"signpost-{version}-{os_name}-{cpu}.mcpb"), files)


def server_json(meta, out):
    """The MCP registry's entry: the PyPI and npm packages."""
    version, _, repository, summary = meta
    project = {"type": "named", "name": "--project", "format": "filepath",
               "description": "The repository to serve", "isRequired": True}
    package = lambda registry, hint: {  # noqa: E731
        "registryType": registry, "identifier": NAME, "version": version, "runtimeHint": hint,
        "transport": {"type": "stdio"}, "packageArguments": [project],
    }
    entry = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
        "name": MCP_NAME,
        "description": summary[:100],
        "repository": {"url": repository, "source": "github"},
        "version": version,
        "packages": [package("pypi", "uvx"), package("npm", "npx")],
    }
    path = os.path.join(out, "server.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(entry, f, indent=2)
        f.write("\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the built signpost binary (target/release/signpost)")
    ap.add_argument("--out", required=True, help="the directory to write the packages in")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    meta = metadata()
    tag, os_name, cpu = platform_of(args.binary)
    with tempfile.TemporaryDirectory() as work:
        exe = stripped(args.binary, work)
        made = [wheel(exe, meta, tag, args.out)]
        made += npm(exe, meta, os_name, cpu, args.out)[2]
        made.append(bundle(exe, meta, os_name, cpu, args.out))
    made.append(server_json(meta, args.out))
    for path in made:
        print(f"{path}\t{os.path.getsize(path)}")


if __name__ == "__main__":
    main()
