"""Native load on both HTTP servers with wrk: throughput and latency of MCP
tools/call at 1 and 8 connections (one MCP session per connection).

Per server: start it on a free 127.0.0.1 port, open and warm up one session
per connection (drive.py's HTTP client: initialize, notifications/initialized,
one pass of the call mix), run wrk with mcp_call.lua cycling through the same
call mix drive.py uses, stop the server.

    python wrk/wrk_bench.py --signpost target/release/signpost [--noop-policy p.wasm] --out DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import drive  # noqa: E402


def run_wrk(url: str, conns: int, seconds: int, bodies: Path, sessions: list[str]) -> dict:
    argv = [
        "wrk",
        "-t",
        str(conns),
        "-c",
        str(conns),
        "-d",
        f"{seconds}s",
        "--timeout",
        "10s",
        "-s",
        str(HERE / "mcp_call.lua"),
        url,
        "--",
        str(bodies),
        drive.PROTOCOL,
        *(s or "-" for s in sessions[:conns]),
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"^WRKJSON (.*)$", out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout}\n{out.stderr}")
    r = json.loads(m.group(1))
    r["wrk_stdout"] = out.stdout
    return r


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--signpost", required=True)
    p.add_argument("--noop-policy")
    p.add_argument("--hints-off-policy")
    p.add_argument("--out", default="target/tmp/peer-bench")
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--conns", default="1,8", help="comma-separated connection counts")
    opts = p.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk not found (apt-get install -y wrk)")
    out = Path(opts.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    bodies = out / "bodies.jsonl"
    with open(bodies, "w") as f:
        for i, (tool, args) in enumerate(drive.call_mix()):
            f.write(json.dumps(drive.rpc(1000 + i, tool, args), separators=(",", ":")) + "\n")
    conns = [int(c) for c in opts.conns.split(",")]
    rows = []
    for spec in drive.specs(opts.signpost, opts.noop_policy, sys.executable, opts.hints_off_policy):
        port = drive.free_port()
        with drive.HttpServer(spec.http(port), port, out / "logs" / f"{spec.label}-wrk.log") as srv:
            sessions = asyncio.run(drive.open_sessions(srv.url, max(conns)))
            for c in conns:
                r = run_wrk(srv.url, c, opts.seconds, bodies, sessions)
                lat = r["latency_us"]
                errors = sum(r["errors"].values())
                row = {
                    "server": spec.label,
                    "conns": c,
                    "requests": r["requests"],
                    "bad": r["bad"],
                    "socket_errors": errors - r["errors"]["status"],
                    "req_per_s": round(r["requests"] / (r["duration_us"] / 1e6), 1),
                    "p50_ms": lat["p50"] / 1000,
                    "p90_ms": lat["p90"] / 1000,
                    "p99_ms": lat["p99"] / 1000,
                    "max_ms": lat["max"] / 1000,
                    "mean_ms": round(lat["mean"] / 1000, 3),
                }
                rows.append(row)
                print(
                    f"wrk {spec.label:<18} c={c}: {row['req_per_s']:>9} req/s  p50 {row['p50_ms']} ms  "
                    f"p99 {row['p99_ms']} ms  bad {row['bad']}",
                    flush=True,
                )
                (out / "logs" / f"wrk-{spec.label}-c{c}.txt").write_text(r["wrk_stdout"])
    ratios = []
    pairs = [("signpost", "peer")]
    if opts.hints_off_policy:
        pairs += [("signpost", "signpost-hints-off")]
    if opts.noop_policy:
        pairs += [("signpost", "signpost-noop"), ("signpost-noop", "peer")]
    by = {(r["server"], r["conns"]): r for r in rows}
    for a, b in pairs:
        for c in conns:
            ra, rb = by.get((a, c)), by.get((b, c))
            if ra and rb and rb["req_per_s"] and rb["p50_ms"]:
                ratios.append(
                    {
                        "ratio": f"{a}/{b}",
                        "conns": c,
                        "throughput_x": round(ra["req_per_s"] / rb["req_per_s"], 2),
                        "p50_latency_x": round(ra["p50_ms"] / rb["p50_ms"], 2),
                        "p99_latency_x": round(ra["p99_ms"] / rb["p99_ms"], 2) if rb["p99_ms"] else None,
                    }
                )
    report = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": opts.seconds,
        "rows": rows,
        "ratios": ratios,
    }
    (out / "wrk.json").write_text(json.dumps(report, indent=2))
    print()
    head = f"{'server':<18} {'conns':>5} {'requests':>9} {'bad':>5} {'req/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['server']:<18} {r['conns']:>5} {r['requests']:>9} {r['bad']:>5} {r['req_per_s']:>9} "
            f"{r['p50_ms']:>8} {r['p90_ms']:>8} {r['p99_ms']:>8} {r['max_ms']:>8}"
        )
    print()
    print(f"{'ratio':<24} {'conns':>5} {'req/s x':>8} {'p50 x':>7} {'p99 x':>7}")
    for r in ratios:
        print(f"{r['ratio']:<24} {r['conns']:>5} {r['throughput_x']:>8} {r['p50_latency_x']:>7} {r['p99_latency_x']:>7}")


if __name__ == "__main__":
    main()
