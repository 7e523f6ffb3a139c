#!/usr/bin/env python3
"""What `signpost proxy` adds to a call, over stdio, side by side in one run.

Starts the backend twice: once directly, once behind `signpost proxy`
(its default policy unless `--policy`), initializes an MCP session with each
by hand (newline-delimited JSON-RPC, no SDK), then makes calls in pairs (one
direct, one proxied, alternating which goes first) so the machine's noise
falls on both alike. Prints p50/p90/p99 of each and of the per-pair
difference, and the proxy's CPU time per call from /proc.

Usage: bench/proxy_overhead.py [--bin target/release/signpost] [--calls 5000]
           [--tool echo --args '{"text":"hi"}'] [--policy FILE]
           -- BACKEND COMMAND...

Without a backend command it runs `python3 tests/backends/rogue.py echo`
(a server that answers at once). For the memory server:
  bench/proxy_overhead.py --tool read_graph --args '{}' -- npx -y @modelcontextprotocol/server-memory
"""

import argparse
import json
import os
import sys
import time

from mcp_stdio import Session


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--policy")
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--tool", default="echo")
    p.add_argument("--args", default='{"text": "hello"}')
    p.add_argument("backend", nargs="*")
    a = p.parse_args()
    backend = a.backend or [sys.executable, os.path.join(os.path.dirname(__file__), "..", "tests/backends/rogue.py"), "echo"]
    env = {**os.environ, "RUST_LOG": "warn"}
    proxy_cmd = [a.bin, "proxy", "--no-watch"] + (["--policy", a.policy] if a.policy else []) + ["--"] + backend
    direct, proxied = Session(backend, env), Session(proxy_cmd, env)
    params = {"name": a.tool, "arguments": json.loads(a.args)}
    for _ in range(a.warmup):
        direct.request("tools/call", params)
        proxied.request("tools/call", params)
    times = {"direct": [], "proxy": []}
    diffs = []
    cpu_before = cpu_seconds(proxied.proc.pid)
    for i in range(a.calls):
        pair = [("direct", direct), ("proxy", proxied)]
        if i % 2:
            pair.reverse()
        took = {}
        for name, session in pair:
            start = time.perf_counter()
            session.request("tools/call", params)
            took[name] = time.perf_counter() - start
            times[name].append(took[name])
        diffs.append(took["proxy"] - took["direct"])
    cpu = cpu_seconds(proxied.proc.pid) - cpu_before
    ms = lambda s: f"{s * 1000:.3f}"
    print(f"backend: {' '.join(backend)}; tool {a.tool}; {a.calls} pairs after {a.warmup} warm-up pairs")
    print(f"{'':>10} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9}")
    for name, xs in times.items():
        print(f"{name:>10} {ms(percentile(xs, .5)):>9} {ms(percentile(xs, .9)):>9} {ms(percentile(xs, .99)):>9}")
    print(f"{'added':>10} {ms(percentile(diffs, .5)):>9} {ms(percentile(diffs, .9)):>9} {ms(percentile(diffs, .99)):>9}   (per pair)")
    print(f"signpost proxy CPU per call (its own process, not its backend): {ms(cpu / a.calls)} ms")
    direct.close()
    proxied.close()


if __name__ == "__main__":
    main()
