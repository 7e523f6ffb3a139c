#!/usr/bin/env python3
"""How soon `signpost --project DIR` answers: cold, restarted, and restarted
after an edit made while it was stopped (over MCP stdio, each with the same
cache directory).

For each of the three starts: the wall time from the spawn until `resolve`
finds SYMBOL (polling every 10 ms), the server's resident memory then and
its peak, and for the third start the time until the edit made while
stopped (a method added to the first source file of --lang) is visible.
Every call made meanwhile must succeed.

Usage: bench/project_restart.py --project DIR --symbol NAME
                                [--bin target/release/signpost] [--lang java|go]
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time


def rss(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) // 1024
    return out


class Server:
    def __init__(self, binary, project, cache):
        env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn"), "XDG_CACHE_HOME": cache,
               "SIGNPOST_SAVE_QUIET_MS": "100"}
        self.started = time.monotonic()
        self.proc = subprocess.Popen([binary, "--project", project], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(os.environ.get("RESTART_LOG", os.devnull), "a"), env=env)
        self.ids = iter(range(1, 1 << 30))
        self.failed = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "restart", "version": "0"}})
        self.rpc("notifications/initialized", {}, notify=True)

    def rpc(self, method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            msg["id"] = next(self.ids)
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == msg["id"]:
                return reply

    def until_found(self, name):
        """Seconds from the spawn until `resolve` finds `name`."""
        while True:
            r = self.rpc("tools/call", {"name": "resolve", "arguments": {"identifier": name}})["result"]
            self.failed += bool(r.get("isError"))
            if r.get("structuredContent", {}).get("status") == "one":
                return time.monotonic() - self.started
            if time.monotonic() - self.started > 300:
                raise SystemExit(f"{name} never appeared")
            time.sleep(0.01)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def saved(cache):
    for root, _, files in os.walk(cache):
        if any(f.startswith("saved.") for f in files):
            return True
    return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--project", required=True)
    p.add_argument("--symbol", required=True)
    p.add_argument("--lang", default="java", choices=["java", "go"])
    a = p.parse_args()
    cache = tempfile.mkdtemp(prefix="signpost-restart-")
    ext = "." + a.lang
    target = None
    for root, dirs, files in os.walk(a.project):
        dirs.sort()
        target = next((os.path.join(root, f) for f in sorted(files) if f.endswith(ext)), None)
        if target:
            break
    original = open(target).read()
    try:
        rows = []
        s = Server(a.bin, a.project, cache)
        rows.append(("cold", s.until_found(a.symbol), rss(s.proc.pid), s))
        # Let the parts be saved, then stop.
        deadline = time.monotonic() + 120
        while not saved(cache) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3)
        s.stop()
        s = Server(a.bin, a.project, cache)
        rows.append(("restart, unchanged", s.until_found(a.symbol), rss(s.proc.pid), s))
        time.sleep(3)
        s.stop()
        name = "EditedWhileStopped"
        if a.lang == "go":
            text = original + f"\nfunc {name}() int {{\n\treturn 1\n}}\n"
        else:
            text = original.rstrip().rstrip("}") + f"\n    public int {name}() {{\n        return 1;\n    }}\n}}\n"
        with open(target, "w") as f:
            f.write(text)
        s = Server(a.bin, a.project, cache)
        first = s.until_found(a.symbol)
        memory = rss(s.proc.pid)
        edit = s.until_found(name)
        rows.append(("restart, one file edited", first, memory, s))
        s.stop()
        for what, t, m, srv in rows:
            print(f"{what}: first answer {t:.2f} s; RSS {m.get('VmRSS')} MiB (peak {m.get('VmHWM')}); "
                  f"failed calls {srv.failed}")
        print(f"the edit made while stopped visible after {edit:.2f} s")
    finally:
        with open(target, "w") as f:
            f.write(original)
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
