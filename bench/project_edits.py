#!/usr/bin/env python3
"""How soon an edit is visible: `signpost --project DIR` over MCP stdio.

Serves DIR (a Go or Java project, e.g. the synthetic ones
`SIGNPOST_BENCH_KEEP=/tmp/tsb cargo bench -p signpost-treesitter --bench
index` leaves), waits until it answers, then N times: appends a new
function to one source file and measures the wall time from the write until
`resolve` finds it (polling every 10 ms), while every call made meanwhile
must succeed. Prints p50, p90 and max, the graph's size, failed calls, and
the server's resident and peak memory after the edits (Linux).

`SIGNPOST_EDITS_WHOLE=1` in the environment makes the server import each
edited language whole, as before edits were patched per file: the two
paths compared in one build.

Usage: bench/project_edits.py --project DIR [--bin target/release/signpost]
                              [--edits 20] [--lang go|java]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--project", required=True)
    p.add_argument("--edits", type=int, default=20)
    p.add_argument("--lang", default="go", choices=["go", "java"])
    a = p.parse_args()
    cache = tempfile.mkdtemp(prefix="signpost-edits-")
    started = time.monotonic()
    server = subprocess.Popen([a.bin, "--project", a.project], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=open(os.environ.get("EDITS_LOG", os.devnull), "w"), env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn"), "XDG_CACHE_HOME": cache})
    ids = iter(range(1, 1 << 30))

    def rpc(method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            msg["id"] = next(ids)
        server.stdin.write((json.dumps(msg) + "\n").encode())
        server.stdin.flush()
        if notify:
            return None
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == msg["id"]:
                return reply

    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "edits", "version": "0"}})
    rpc("notifications/initialized", {}, notify=True)
    ready = time.monotonic() - started
    status = rpc("resources/read", {"uri": "signpost://graph"})["result"]["contents"][0]["text"]
    nodes = json.loads(status)["nodes"]

    # The file to edit: the first source file of the language.
    ext = "." + a.lang
    target = None
    for root, dirs, files in os.walk(a.project):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(ext):
                target = os.path.join(root, f)
                break
        if target:
            break
    original = open(target).read()
    latencies, failed = [], 0
    try:
        for n in range(a.edits):
            name = f"EditedLater{n}"
            if a.lang == "go":
                text = original + f"\nfunc {name}() int {{\n\treturn {n}\n}}\n"
            else:
                cut = original.rstrip().rstrip("}")
                text = cut + f"\n    public int {name}() {{\n        return {n};\n    }}\n}}\n"
            t0 = time.monotonic()
            with open(target, "w") as f:
                f.write(text)
            while True:
                r = rpc("tools/call", {"name": "resolve", "arguments": {"identifier": name}})["result"]
                if r.get("isError"):
                    failed += 1
                if r.get("structuredContent", {}).get("status") == "one":
                    latencies.append(time.monotonic() - t0)
                    break
                if time.monotonic() - t0 > 60:
                    raise SystemExit(f"{name} never appeared")
                time.sleep(0.01)
        # The server's memory once the last swap has settled.
        time.sleep(2)
        status = open(f"/proc/{server.pid}/status").read() if os.path.exists(f"/proc/{server.pid}/status") else ""
        mem = {l.split(":")[0]: int(l.split()[1]) // 1024 for l in status.splitlines() if l.startswith(("VmRSS", "VmHWM"))}
    finally:
        with open(target, "w") as f:
            f.write(original)
        server.kill()
    latencies.sort()
    ms = [x * 1000 for x in latencies]
    print(f"project {a.project}: {nodes} symbols; served after {ready:.1f} s")
    print(f"edit visible to resolve over {len(ms)} edits: p50 {statistics.median(ms):.0f} ms, "
          f"p90 {ms[int(len(ms) * 0.9) - 1]:.0f} ms, max {ms[-1]:.0f} ms; failed calls {failed}")
    if mem:
        print(f"server memory after the edits: {mem.get('VmRSS', 0)} MiB resident, peak {mem.get('VmHWM', 0)} MiB")


if __name__ == "__main__":
    main()
