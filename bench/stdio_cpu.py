#!/usr/bin/env python3
"""Server CPU per tool call over MCP stdio, from the kernel's own accounting.

Spawns `signpost` (optionally with `--policy FILE`), initializes one MCP
session by hand (newline-delimited JSON-RPC, no SDK), makes WARMUP calls,
then reads the server's utime+stime from /proc/PID/stat around N sequential
calls of one tool. CPU time per call is what the server process spent on
each call (rmcp, the pipeline, the policy, serialisation), independent of how
fast this client is.

Usage: bench/stdio_cpu.py [--bin target/release/signpost] [--policy FILE]
                          [--graph FILE] [--args JSON]
                          [--calls 20000] [--tool describe]
                          [--server-arg=--no-metrics ...]

With `--graph` (any graph file; ARGS' ids are the sample graph's, so give
`--args`) it measures the tools on a large graph; the per-call wall times
give p50 and p99 as the client sees them over the pipe.

With `--seen N` the session first pages through `find` (`--fill`, default
`{"kind": "method"}`, 100 a page) until its results held N distinct ids: a
long session, whose history (the ids it has seen, at most 512 kept) the
policy is given on every call. It needs a graph with that many symbols of
the kind (`--graph`).
"""

import argparse
import json
import os
import subprocess
import time

CTRL = "721797098567ca69c8d8f724033dc6ec8670d50b"
ARGS = {
    "describe": {"id": CTRL},
    "neighbors": {"ids": [CTRL], "direction": "out", "edge_types": ["DECLARES"]},
    "resolve": {"identifier": "OrderService"},
    "search": {"query": "order payment"},
    "find": {"role": "controller"},
}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--policy")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--tool", default="describe", choices=sorted(ARGS))
    p.add_argument("--graph")
    p.add_argument("--args", help="the tool's arguments, as JSON")
    p.add_argument("--seen", type=int, default=0, help="fill the session's history with this many ids first")
    p.add_argument("--fill", default='{"kind": "method"}', help="the find arguments paged to fill it, as JSON")
    p.add_argument("--server-arg", action="append", default=[], help="another server flag (repeatable), e.g. --server-arg=--no-metrics")
    a = p.parse_args()
    cmd = [a.bin] + (["--policy", a.policy] if a.policy else []) + (["--graph", a.graph] if a.graph else [])
    cmd += ["--no-watch"] if a.policy or a.graph else []
    cmd += a.server_arg
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "warn"})
    ids = iter(range(1, 1 << 30))

    def request(method, params):
        msg = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        server.stdin.write((json.dumps(msg) + "\n").encode())
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if "id" in reply:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    def notify(method):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        server.stdin.flush()

    try:
        request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "stdio-cpu", "version": "0"}})
        notify("notifications/initialized")
        seen, offset = set(), 0
        while len(seen) < a.seen:
            page = request("tools/call", {"name": "find", "arguments": {**json.loads(a.fill), "limit": 100, "offset": offset}})
            found = {r["id"] for r in page.get("structuredContent", {}).get("results", [])}
            if not found:
                raise SystemExit(f"--seen {a.seen}: the graph ran out after {len(seen)} ids of {a.fill}")
            seen |= found
            offset += 100
        call = {"name": a.tool, "arguments": json.loads(a.args) if a.args else ARGS[a.tool]}
        for _ in range(a.warmup):
            request("tools/call", call)
        before, started = cpu_seconds(server.pid), time.perf_counter()
        each = []
        for _ in range(a.calls):
            t = time.perf_counter()
            result = request("tools/call", call)
            each.append(time.perf_counter() - t)
        wall, cpu = time.perf_counter() - started, cpu_seconds(server.pid) - before
        each.sort()
        assert not result.get("isError"), result
        print(json.dumps({
            "tool": a.tool, "policy": a.policy or "embedded default", "calls": a.calls, "seen": len(seen),
            "server_cpu_us_per_call": round(cpu / a.calls * 1e6, 1),
            "wall_us_per_call": round(wall / a.calls * 1e6, 1),
            "p50_us": round(each[len(each) // 2] * 1e6, 1),
            "p99_us": round(each[len(each) * 99 // 100] * 1e6, 1),
        }))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
