"""Drive Signpost and the Python peer with the same MCP tool-call mix, over
stdio and over streamable HTTP, in one run; report latency and throughput.

Both servers are spoken to by the same minimal clients defined here (raw
JSON-RPC lines on stdio; httpx on HTTP), not by an SDK client, so that client
cost is identical for both and small. The protocol version is pinned to
2025-11-25 (initialize handshake, Mcp-Session-Id sessions), which both SDKs
serve; each client is one MCP session.

Phases per server and transport:
  seq   one client, calls one after another        -> p50/p99 latency, calls/s
  conc  K clients calling concurrently (asyncio tasks in this one process;
        stdio: K server processes, one per client, as K agents would have;
        HTTP: K sessions on K connections to one server) -> p50/p99, calls/s
Each phase stops after N calls per client or a time cap, whichever first.

Usage (run.sh calls it):
  python drive.py bench --signpost target/release/signpost [--noop-policy p.wasm] --out DIR
  python drive.py bodies FILE          # the call mix as JSON-RPC bodies (for wrk)
  python drive.py sessions URL COUNT   # open COUNT warmed-up sessions, print their ids (for wrk)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import port as peer  # noqa: E402  (the peer's own graph code builds the call mix)

PROTOCOL = "2025-11-25"
CLIENT_INFO = {"name": "signpost-peer-bench", "version": "0.1.0"}
SAMPLE_SYMBOLS = peer.SAMPLE_SYMBOLS
call_mix = peer.call_mix


def rpc(req_id: int, tool: str, args: dict) -> dict:
    return {"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": {"name": tool, "arguments": args}}


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": CLIENT_INFO},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# ---- clients ---------------------------------------------------------------------


class StdioClient:
    """One MCP session over a child process's stdin/stdout (newline-delimited JSON-RPC)."""

    def __init__(self, argv: list[str], log: Path):
        self.argv, self.log = argv, log
        self.next_id = 1

    async def start(self) -> None:
        self.log_file = open(self.log, "ab")
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log_file,
            limit=16 << 20,
        )
        await self._request(INIT)
        await self._send(INITIALIZED)

    async def _send(self, msg: dict) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        await self.proc.stdin.drain()

    async def _request(self, msg: dict) -> dict:
        await self._send(msg)
        assert self.proc.stdout
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.argv[0]} closed stdout (see {self.log})")
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:  # skip notifications and logs
                return reply

    async def call(self, tool: str, args: dict) -> dict:
        self.next_id += 1
        return await self._request(rpc(self.next_id, tool, args))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.proc.stdin
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self.log_file.close()


def parse_http_reply(resp: httpx.Response, req_id: int) -> dict:
    """The JSON-RPC reply from a JSON body or an SSE stream (data: lines)."""
    ctype = resp.headers.get("content-type", "")
    if ctype.startswith("application/json"):
        return resp.json()
    for block in resp.text.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
        if data:
            msg = json.loads(data)
            if msg.get("id") == req_id:
                return msg
    raise RuntimeError(f"no reply to request {req_id} in HTTP {resp.status_code} {ctype}: {resp.text[:200]}")


class HttpClient:
    """One MCP session over streamable HTTP, one keep-alive connection."""

    def __init__(self, url: str):
        self.url = url
        self.next_id = 1
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
        }
        self.session_id: str | None = None

    async def start(self) -> None:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.http = httpx.AsyncClient(limits=limits, timeout=30.0)
        resp = await self.http.post(self.url, json=INIT, headers=self.headers)
        resp.raise_for_status()
        parse_http_reply(resp, 0)
        self.session_id = resp.headers.get("mcp-session-id")
        if self.session_id:  # stateless servers hand out none
            self.headers["Mcp-Session-Id"] = self.session_id
        resp = await self.http.post(self.url, json=INITIALIZED, headers=self.headers)
        if resp.status_code not in (200, 202):
            raise RuntimeError(f"initialized notification: HTTP {resp.status_code}")

    async def call(self, tool: str, args: dict) -> dict:
        self.next_id += 1
        resp = await self.http.post(self.url, json=rpc(self.next_id, tool, args), headers=self.headers)
        if resp.status_code != 200:
            raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:200]}")
        return parse_http_reply(resp, self.next_id)

    async def close(self) -> None:
        if self.session_id:  # end the session politely, as a real client would
            with contextlib.suppress(Exception):
                await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()


# ---- servers ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ServerSpec:
    """How to start one server under test."""

    label: str  # e.g. "signpost", "signpost-noop", "peer"
    stdio_argv: list[str]
    http_argv: Any  # callable(port) -> argv

    def http(self, port: int) -> list[str]:
        return self.http_argv(port)


def specs(signpost: str, noop_policy: str | None, python: str, hints_off: str | None = None) -> list[ServerSpec]:
    out = [
        ServerSpec("signpost", [signpost], lambda p: [signpost, "--http", f"127.0.0.1:{p}"]),
    ]
    if hints_off:
        off = ["--policy", hints_off, "--no-watch"]
        out.append(
            ServerSpec("signpost-hints-off", [signpost, *off], lambda p: [signpost, *off, "--http", f"127.0.0.1:{p}"])
        )
    if noop_policy:
        pol = ["--policy", noop_policy, "--no-watch"]
        out.append(
            ServerSpec("signpost-noop", [signpost, *pol], lambda p: [signpost, *pol, "--http", f"127.0.0.1:{p}"])
        )
    srv = str(HERE / "server.py")
    out.append(ServerSpec("peer", [python, srv], lambda p: [python, srv, "--http", str(p)]))
    return out


class HttpServer:
    """A server process listening on 127.0.0.1:port; always terminated on exit."""

    def __init__(self, argv: list[str], port: int, log: Path):
        self.argv, self.port, self.log = argv, port, log
        self.url = f"http://127.0.0.1:{port}/mcp"

    def __enter__(self) -> HttpServer:
        self.log_file = open(self.log, "ab")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.log_file, stderr=self.log_file)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.argv} exited with {self.proc.returncode}; see {self.log}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return self
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"{self.argv} did not listen on {self.port} within 30 s")

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: both servers shut down cleanly on it
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


# ---- measurement -----------------------------------------------------------------


@dataclass
class Phase:
    server: str
    transport: str
    mode: str  # seq | conc
    clients: int
    latencies_ns: list[int] = field(default_factory=list)
    errors: int = 0
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ns)
        n = len(lat)

        def pct(p: float) -> float:
            return lat[min(n - 1, int(p * n))] / 1e6 if n else float("nan")

        return {
            "server": self.server,
            "transport": self.transport,
            "mode": self.mode,
            "clients": self.clients,
            "calls": n,
            "errors": self.errors,
            "wall_s": round(self.wall_s, 3),
            "calls_per_s": round(n / self.wall_s, 1) if self.wall_s else 0.0,
            "p50_ms": round(pct(0.50), 3),
            "p99_ms": round(pct(0.99), 3),
            "mean_ms": round(statistics.fmean(lat) / 1e6, 3) if n else float("nan"),
        }


async def run_client(client, mix, n_calls: int, deadline: float, phase: Phase, offset: int = 0) -> None:
    for i in range(n_calls):
        if time.monotonic() >= deadline:
            return
        tool, args = mix[(i + offset) % len(mix)]
        t0 = time.perf_counter_ns()
        reply = await client.call(tool, args)
        phase.latencies_ns.append(time.perf_counter_ns() - t0)
        if "result" not in reply or reply["result"].get("isError"):
            phase.errors += 1


async def measure(make_client, label: str, transport: str, mix, n: int, clients: int, cap_s: float) -> Phase:
    phase = Phase(label, transport, "seq" if clients == 1 else "conc", clients)
    cs = [make_client(i) for i in range(clients)]
    await asyncio.gather(*(c.start() for c in cs))
    try:
        # Warm-up: one pass of the mix per client (also makes the session
        # "see" the ids, so no prerequisite advice on later calls).
        await asyncio.gather(*(run_client(c, mix, len(mix), time.monotonic() + 60, Phase("", "", "", 1)) for c in cs))
        t0 = time.perf_counter()
        deadline = time.monotonic() + cap_s
        await asyncio.gather(*(run_client(c, mix, n, deadline, phase, offset=7 * k) for k, c in enumerate(cs)))
        phase.wall_s = time.perf_counter() - t0
    finally:
        await asyncio.gather(*(c.close() for c in cs), return_exceptions=True)
    return phase


def strip_volatile(result: dict) -> dict:
    return {k: v for k, v in (result.get("structuredContent") or {}).items() if k != "hints"}


async def compare_outputs(spec_a: ServerSpec, spec_b: ServerSpec, mix, logdir: Path) -> dict[str, Any]:
    """Same results? Same hints? Same text? One stdio session each, the mix once."""
    a = StdioClient(spec_a.stdio_argv, logdir / f"{spec_a.label}-stdio.log")
    b = StdioClient(spec_b.stdio_argv, logdir / f"{spec_b.label}-stdio.log")
    await a.start()
    await b.start()
    same_result = same_hints = same_text = same_tag = 0
    diffs = []
    try:
        for tool, args in mix:
            ra, rb = (await a.call(tool, args))["result"], (await b.call(tool, args))["result"]
            sa, sb = ra.get("structuredContent") or {}, rb.get("structuredContent") or {}
            ta, tb = ra["content"][0]["text"], rb["content"][0]["text"]
            same_result += strip_volatile(ra) == strip_volatile(rb)
            same_hints += sa.get("hints") == sb.get("hints")
            same_tag += ta.split("]", 1)[0] == tb.split("]", 1)[0]
            same_text += ta == tb
            if ta != tb and len(diffs) < 3:
                diffs.append({"call": [tool, args], spec_a.label: ta, spec_b.label: tb})
    finally:
        await a.close()
        await b.close()
    n = len(mix)
    return {
        "calls": n,
        "same_structured_result": same_result,
        "same_hints": same_hints,
        "same_state_tag": same_tag,
        "same_text": same_text,
        "first_text_differences": diffs,
    }


# ---- report ----------------------------------------------------------------------


def table(rows: list[dict[str, Any]]) -> str:
    head = ["server", "transport", "mode", "clients", "calls", "errors", "calls/s", "p50 ms", "p99 ms"]
    keys = ["server", "transport", "mode", "clients", "calls", "errors", "calls_per_s", "p50_ms", "p99_ms"]
    body = [[str(r[k]) for k in keys] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.rjust(w) if i >= 3 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths]), *map(fmt, body)])


def progress(r: dict[str, Any]) -> None:
    print(
        f"{r['server']:<18} {r['transport']:<5} {r['mode']:<4} x{r['clients']:<2} {r['calls']:>6} calls "
        f"{r['errors']:>3} errors {r['calls_per_s']:>9} calls/s  p50 {r['p50_ms']} ms  p99 {r['p99_ms']} ms",
        flush=True,
    )


def ratios(rows: list[dict[str, Any]], num: str, den: str) -> list[dict[str, Any]]:
    """num/den per (transport, mode): throughput ratio and latency ratios."""
    out = []
    by = {(r["server"], r["transport"], r["mode"]): r for r in rows}
    for (srv, transport, mode), r in by.items():
        d = by.get((den, transport, mode))
        if srv != num or d is None or not d["calls_per_s"] or not d["p50_ms"]:
            continue
        out.append(
            {
                "ratio": f"{num}/{den}",
                "transport": transport,
                "mode": mode,
                "throughput_x": round(r["calls_per_s"] / d["calls_per_s"], 2),
                "p50_latency_x": round(r["p50_ms"] / d["p50_ms"], 2),
                "p99_latency_x": round(r["p99_ms"] / d["p99_ms"], 2),
            }
        )
    return out


def ratio_table(rs: list[dict[str, Any]]) -> str:
    lines = [f"{'ratio':<24} {'transport':<9} {'mode':<5} {'calls/s x':>9} {'p50 x':>7} {'p99 x':>7}"]
    for r in rs:
        lines.append(
            f"{r['ratio']:<24} {r['transport']:<9} {r['mode']:<5} {r['throughput_x']:>9} "
            f"{r['p50_latency_x']:>7} {r['p99_latency_x']:>7}"
        )
    return "\n".join(lines)


async def bench(opts: argparse.Namespace) -> dict[str, Any]:
    out = Path(opts.out)
    logdir = out / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    mix = call_mix()
    servers = specs(opts.signpost, opts.noop_policy, sys.executable, opts.hints_off_policy)
    report: dict[str, Any] = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "protocol_version": PROTOCOL,
        "mix": [[t, a] for t, a in mix],
        "settings": {"n_per_client": opts.n, "concurrency": opts.concurrency, "cap_s": opts.cap},
    }
    print(f"call mix: {len(mix)} calls ({', '.join(SAMPLE_SYMBOLS)})", flush=True)
    report["equivalence"] = await compare_outputs(servers[0], servers[-1], mix, logdir)
    eq = report["equivalence"]
    print(
        f"equivalence signpost vs peer over the mix: results {eq['same_structured_result']}/{eq['calls']}, "
        f"hints {eq['same_hints']}/{eq['calls']}, state tags {eq['same_state_tag']}/{eq['calls']}, "
        f"text {eq['same_text']}/{eq['calls']}",
        flush=True,
    )
    rows = []
    for spec in servers:
        for clients in (1, opts.concurrency):
            ph = await measure(
                lambda i, s=spec: StdioClient(s.stdio_argv, logdir / f"{s.label}-stdio.log"),
                spec.label,
                "stdio",
                mix,
                opts.n,
                clients,
                opts.cap,
            )
            rows.append(ph.summary())
            progress(rows[-1])
        port = free_port()
        with HttpServer(spec.http(port), port, logdir / f"{spec.label}-http.log") as srv:
            for clients in (1, opts.concurrency):
                ph = await measure(lambda i, u=srv.url: HttpClient(u), spec.label, "http", mix, opts.n, clients, opts.cap)
                rows.append(ph.summary())
                progress(rows[-1])
    report["rows"] = rows
    report["ratios"] = ratios(rows, "signpost", "peer")
    if opts.hints_off_policy:
        report["ratios"] += ratios(rows, "signpost", "signpost-hints-off")
    if opts.noop_policy:
        report["ratios"] += ratios(rows, "signpost", "signpost-noop")
        report["ratios"] += ratios(rows, "signpost-noop", "peer")
    (out / "drive.json").write_text(json.dumps(report, indent=2))
    print()
    print(table(rows))
    print()
    print(ratio_table(report["ratios"]))
    print("(throughput_x > 1: first is faster; latency_x < 1: first is faster)")
    return report


async def open_sessions(url: str, count: int) -> list[str]:
    """Sessions for wrk: opened, warmed with the mix once, left open."""
    mix = call_mix()
    ids = []
    for _ in range(count):
        c = HttpClient(url)
        await c.start()
        await run_client(c, mix, len(mix), time.monotonic() + 60, Phase("", "", "", 1))
        ids.append(c.session_id or "")
        await c.http.aclose()  # keep the session: no DELETE
    return ids


def main() -> None:
    p = argparse.ArgumentParser(description="Signpost vs Python-SDK peer: MCP tool-call benchmark")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--signpost", required=True)
    b.add_argument("--noop-policy", help="also run Signpost with --policy FILE --no-watch")
    b.add_argument(
        "--hints-off-policy",
        help="also run the default policy built with its hints-off feature (what the hints cost)",
    )
    b.add_argument("--out", default="target/tmp/peer-bench")
    b.add_argument("--n", type=int, default=600, help="calls per client per phase (after warm-up)")
    b.add_argument("--concurrency", type=int, default=8)
    b.add_argument("--cap", type=float, default=8.0, help="time cap per phase, seconds")
    bo = sub.add_parser("bodies")
    bo.add_argument("file")
    se = sub.add_parser("sessions")
    se.add_argument("url")
    se.add_argument("count", type=int)
    opts = p.parse_args()
    if opts.cmd == "bench":
        asyncio.run(bench(opts))
    elif opts.cmd == "bodies":
        with open(opts.file, "w") as f:
            for i, (tool, args) in enumerate(call_mix()):
                f.write(json.dumps(rpc(1000 + i, tool, args), separators=(",", ":")) + "\n")
    elif opts.cmd == "sessions":
        print(" ".join(asyncio.run(open_sessions(opts.url, opts.count))))


if __name__ == "__main__":
    main()
