"""The server's own CPU per request under wrk, hints on against a no-op policy.

Alternates the two servers (default policy, then --policy NOOP) for --pairs
rounds: each is started on a free port, one MCP session opened and warmed,
then wrk drives the call mix at one connection for --seconds while the
server's user and system CPU (/proc/<pid>/stat) are read before and after.
Prints p50 latency and user/system CPU per request for each run, and the
default / no-op ratios of each pair, then the medians over the pairs.
`--policy NAME=PATH` (repeatable) adds a run of another policy component
to each pair (a build of the default policy before a change, say), so a
change is compared with the no-op policy and with itself in one run.
`--transport stdio` does the same over stdio: one server process per run,
the mix driven sequentially by drive.py's client for --seconds (the stdio
rows of run.sh), latency measured in the client around each call.
Linux only (reads /proc).

    python bench/peer/wrk/cpu_per_request.py --signpost target/release/signpost --noop-policy chaos.wasm
    python bench/peer/wrk/cpu_per_request.py ... --pairs 5 --policy before=/tmp/before.wasm
    python bench/peer/wrk/cpu_per_request.py ... --transport stdio
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import drive  # noqa: E402
import wrk_bench  # noqa: E402


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def measure(argv: list[str], bodies: Path, seconds: int, log: Path) -> dict:
    port = drive.free_port()
    with drive.HttpServer([*argv, "--http", f"127.0.0.1:{port}"], port, log) as srv:
        sessions = asyncio.run(drive.open_sessions(srv.url, 1))
        user0, sys0 = cpu_seconds(srv.proc.pid)
        r = wrk_bench.run_wrk(srv.url, 1, seconds, bodies, sessions)
        user1, sys1 = cpu_seconds(srv.proc.pid)
    n = r["requests"]
    return {
        "requests": n,
        "p50_ms": r["latency_us"]["p50"] / 1000,
        "user_us_per_request": round((user1 - user0) / n * 1e6, 1),
        "sys_us_per_request": round((sys1 - sys0) / n * 1e6, 1),
    }


async def measure_stdio(argv: list[str], mix: list, seconds: int, log: Path) -> dict:
    client = drive.StdioClient(argv, log)
    await client.start()
    try:
        warm = drive.Phase("", "", "", 1)
        await drive.run_client(client, mix, len(mix), time.monotonic() + 60, warm)
        phase = drive.Phase("", "stdio", "seq", 1)
        user0, sys0 = cpu_seconds(client.proc.pid)
        await drive.run_client(client, mix, 1 << 30, time.monotonic() + seconds, phase)
        user1, sys1 = cpu_seconds(client.proc.pid)
    finally:
        await client.close()
    if phase.errors or warm.errors:
        raise SystemExit(f"{argv}: {phase.errors + warm.errors} calls failed (see {log})")
    n = len(phase.latencies_ns)
    # run_client sends the mix in order from its start: call k is mix[k % len].
    per_tool: dict[str, list[int]] = {}
    for k, ns in enumerate(phase.latencies_ns):
        per_tool.setdefault(mix[k % len(mix)][0], []).append(ns)
    return {
        "requests": n,
        "p50_ms": statistics.median(phase.latencies_ns) / 1e6,
        "per_tool_p50_ms": {tool: statistics.median(v) / 1e6 for tool, v in per_tool.items()},
        "user_us_per_request": round((user1 - user0) / n * 1e6, 1),
        "sys_us_per_request": round((sys1 - sys0) / n * 1e6, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--signpost", required=True)
    p.add_argument("--noop-policy", required=True)
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--transport", choices=["http", "stdio"], default="http")
    p.add_argument("--policy", action="append", default=[], metavar="NAME=PATH", help="another policy to run in each pair")
    opts = p.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="signpost-cpu-"))
    bodies = logs / "bodies.jsonl"
    mix = drive.call_mix()
    with open(bodies, "w") as f:
        for i, (tool, args) in enumerate(mix):
            f.write(json.dumps(drive.rpc(1000 + i, tool, args), separators=(",", ":")) + "\n")
    runs = {"default": [opts.signpost], "noop": [opts.signpost, "--policy", opts.noop_policy, "--no-watch"]}
    for spec in opts.policy:
        name, sep, path = spec.partition("=")
        if not sep or not name or name in runs or not Path(path).is_file():
            p.error(f"--policy {spec!r}: expected NAME=PATH, a new name and an existing file")
        runs[name] = [opts.signpost, "--policy", path, "--no-watch"]
    every: dict[str, list[dict]] = {label: [] for label in runs}
    for pair in range(opts.pairs):
        got = {}
        for label, argv in runs.items():
            log = logs / f"{label}-{pair}.log"
            if opts.transport == "stdio":
                got[label] = asyncio.run(measure_stdio(argv, mix, opts.seconds, log))
            else:
                got[label] = measure(argv, bodies, opts.seconds, log)
        for label, r in got.items():
            every[label].append(r)
            print(
                f"{label:<9} {r['requests']:>7} requests  p50 {r['p50_ms']:.3f} ms  "
                f"user {r['user_us_per_request']} us/request  sys {r['sys_us_per_request']} us/request"
            )
        d, n = got["default"], got["noop"]
        print(
            f"pair {pair + 1}: p50 {d['p50_ms'] / n['p50_ms']:.2f}x, "
            f"user CPU +{d['user_us_per_request'] - n['user_us_per_request']:.1f} us/request\n",
            flush=True,
        )
    noop_p50 = statistics.median(r["p50_ms"] for r in every["noop"])
    for label, rs in every.items():
        p50 = statistics.median(r["p50_ms"] for r in rs)
        user = statistics.median(r["user_us_per_request"] for r in rs)
        print(f"median of {len(rs)}: {label:<9} p50 {p50:.3f} ms ({p50 / noop_p50:.2f}x no-op)  user {user:.1f} us/request")
    if "hints-off" in every:
        # What the hints themselves cost: the same policy, the same answers,
        # without its hints.
        on, off = every["default"], every["hints-off"]
        p50_x = statistics.median(a["p50_ms"] / b["p50_ms"] for a, b in zip(on, off))
        user = statistics.median(a["user_us_per_request"] - b["user_us_per_request"] for a, b in zip(on, off))
        print(f"hints on / hints off (median of the pairs): p50 {p50_x:.2f}x, user CPU {user:+.1f} us/request")
    if opts.transport == "stdio":
        print("per tool, median of the pairs' p50s:")
        for tool in every["noop"][0]["per_tool_p50_ms"]:
            base = statistics.median(r["per_tool_p50_ms"][tool] for r in every["noop"])
            cells = []
            for label, rs in every.items():
                p50 = statistics.median(r["per_tool_p50_ms"][tool] for r in rs)
                cells.append(f"{label} {p50:.3f} ms ({p50 / base:.2f}x)")
            print(f"  {tool:<10} " + "  ".join(cells))


if __name__ == "__main__":
    main()
