#!/usr/bin/env python3
"""From a package to an agent's configuration that answers for a repository:
the operator's whole path, timed step by step.

1. `pip install` the wheel (built by packaging/build.py) into a fresh venv;
2. `signpost-mcp setup --client cursor --project REPO` with a home of its own;
3. the command that configuration names, spawned as Cursor spawns it, until
   `resolve SYMBOL` answers over MCP (a cold cache: the index is built).

Usage: bench/install_to_answer.py --wheel dist/signpost_mcp-*.whl --project DIR --symbol NAME
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time


def rpc(proc, ids, method, params, notify=False):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        msg["id"] = next(ids)
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    if notify:
        return None
    while True:
        reply = json.loads(proc.stdout.readline())
        if reply.get("id") == msg["id"]:
            return reply


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--symbol", required=True)
    args = ap.parse_args()
    cursor_dir = os.path.join(args.project, ".cursor")
    had_cursor = os.path.exists(cursor_dir)
    with tempfile.TemporaryDirectory(prefix="signpost-install-") as work:
        env = {**os.environ, "HOME": os.path.join(work, "home"), "XDG_CACHE_HOME": os.path.join(work, "cache"),
               "XDG_CONFIG_HOME": os.path.join(work, "config"), "RUST_LOG": "warn"}
        os.makedirs(env["HOME"])
        venv = os.path.join(work, "venv")
        started = time.monotonic()
        subprocess.run(["python3", "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-index", "--quiet",
                        "--disable-pip-version-check", args.wheel], check=True)
        installed = time.monotonic()
        subprocess.run([os.path.join(venv, "bin", "signpost-mcp"), "setup", "--client", "cursor",
                        "--project", args.project], check=True, env=env, stdout=subprocess.DEVNULL)
        set_up = time.monotonic()
        with open(os.path.join(args.project, ".cursor", "mcp.json"), encoding="utf-8") as f:
            entry = json.load(f)["mcpServers"]["signpost"]
        proc = subprocess.Popen([entry["command"], *entry["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
        ids = iter(range(1, 1 << 30))
        rpc(proc, ids, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "install", "version": "0"}})
        rpc(proc, ids, "notifications/initialized", {}, notify=True)
        while True:
            reply = rpc(proc, ids, "tools/call", {"name": "resolve", "arguments": {"identifier": args.symbol}})
            result = reply.get("result", {})
            if result.get("structuredContent", {}).get("status") in ("one", "many"):
                break
            time.sleep(0.01)
        answered = time.monotonic()
        proc.stdin.close()
        proc.wait(timeout=30)
        # What setup wrote is taken out again: the repository is left as it was.
        subprocess.run([os.path.join(venv, "bin", "signpost-mcp"), "setup", "--client", "cursor", "--remove",
                        "--project", args.project], check=True, env=env, stdout=subprocess.DEVNULL)
    if not had_cursor:
        shutil.rmtree(cursor_dir)
    print(f"pip install: {installed - started:.2f} s; setup: {set_up - installed:.2f} s; "
          f"first answer: {answered - set_up:.2f} s; in all {answered - started:.2f} s")


if __name__ == "__main__":
    main()
