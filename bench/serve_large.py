#!/usr/bin/env python3
"""A large tree served by `signpost --project DIR`, as a new user meets it
(over MCP stdio, a fresh cache): for issue 47's large-tree figures.

Prints, from the spawn:
- the first answer: `resolve SYMBOL` finds it (definitions are served
  before the edges), with the server's resident memory then;
- the whole index: an answer no longer says the index is being built,
  with the resident memory then and 3 s later (`--settle`: what it holds
  once quiet, not what the index just freed; its parts are saved after
  5 s of quiet, and what it keeps is compacted after that);
- queries on the whole graph, p50 and p99 of each: `resolve SYMBOL`,
  `describe` and `neighbors` (callers) of its first candidate, and a broad
  `search` (`--search`);
- N one-file edits (a method appended to the first Java file, as
  `bench/project_edits.py --kind method` does, or to each `--edit
  LANG:FILE` in turn, for a tree of several languages): from the write
  until `resolve` finds it, p50 and max;
- the resident memory after (as long after the last edit), and the peak
  (Linux); each time, what the server says its graphs hold (the graph
  served, and with the per-language parts it is merged from). Every call
  made
  meanwhile must succeed.

With `--cache DIR`, the server serves from that cache and it is kept: run
once to fill it, then again for a restart's figures (the first answer from
the saved graph, edits patched into the restored parts).

With `--timeline FILE`, the server's resident memory is sampled every
100 ms from the spawn (`seconds MiB` a line) and, with `--log FILE`, its
log written there (`RUST_LOG` as set, `warn` by default): when the peak
comes, and what the server was doing then.

Usage: bench/serve_large.py --project DIR --symbol NAME [--bin target/release/signpost]
                            [--edits 5] [--queries 50] [--search Admin]
                            [--edit LANG:FILE ...] [--cache DIR] [--settle 3]
                            [--timeline FILE] [--log FILE]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

from mcp_stdio import Session
from project_edits import first_file, function, placed
from project_restart import rss


def memory(pid):
    m = rss(pid)
    return f"{m['VmRSS']} MiB resident, peak {m['VmHWM']} MiB"


def resident_by_kind(pid):
    """The resident memory by what holds it (/proc/PID/smaps): the
    anonymous mappings (the heaps, and the stacks of threads other than
    the main one), the binary, the libraries mapped from files."""
    kinds, kind = {}, None
    binary = os.path.realpath(f"/proc/{pid}/exe")
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else ""
                kind = ("stack" if name.startswith("[stack") else
                        "heap (brk)" if name == "[heap]" else
                        "anonymous" if not name or name.startswith("[anon") else
                        "binary" if name == binary else
                        "other files" if name.startswith("/") else name)
            elif head[0] == "Rss:":
                kinds[kind] = kinds.get(kind, 0) + int(head[1])
    return ", ".join(f"{k} {v // 1024} MiB" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]) if v >= 1024)


def graph_memory(s):
    """What the server says its graphs hold (`signpost://graph`): the graph
    served, and with the per-language parts it is merged from."""
    r = s.request("resources/read", {"uri": "signpost://graph"})
    try:
        status = json.loads(r["contents"][0]["text"])
    except (KeyError, IndexError, ValueError):
        return f"graph status unread: {r}"
    parts = status.get("with_parts_mib")
    beside = f", with its parts {parts:.0f} MiB" if parts is not None else ", its parts not counted now"
    return f"graph served {status.get('memory_mib', 0):.0f} MiB{beside} ({status.get('nodes')} symbols)"


def sample(proc, started, path):
    """The resident memory of `proc` every 100 ms until it exits."""
    with open(path, "w") as out:
        spawned = time.time() - (time.monotonic() - started)
        out.write(f"# seconds from the spawn ({time.strftime('%H:%M:%S', time.gmtime(spawned))} UTC), MiB resident\n")
        while proc.poll() is None:
            try:
                out.write(f"{time.monotonic() - started:.1f} {rss(proc.pid)['VmRSS']}\n")
                out.flush()
            except (OSError, KeyError):
                return
            time.sleep(0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--project", required=True)
    p.add_argument("--symbol", required=True)
    p.add_argument("--edits", type=int, default=5)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--search", default="Admin")
    p.add_argument("--smaps", action="store_true", help="also say what holds the resident memory once quiet")
    p.add_argument("--settle", type=float, default=3.0,
                   help="seconds of quiet before the memory is read, after the index and after the edits")
    p.add_argument("--cache", help="the cache to serve from and keep (a restart's figures); default: a fresh one, removed")
    p.add_argument("--edit", action="append", default=[],
                   help="LANG:FILE, a file to add functions to (repeatable; default: the first Java file)")
    p.add_argument("--pause", type=float, default=0.0,
                   help="seconds between an edit seen and the next one written (0: back to back, so what the "
                        "server does after a swap is charged to the next edit; an agent's edits come seconds apart)")
    p.add_argument("--timeline", help="a file to sample the resident memory into, every 100 ms")
    p.add_argument("--log", help="a file to write the server's log into")
    a = p.parse_args()
    cache = a.cache or tempfile.mkdtemp(prefix="signpost-large-")
    env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn"), "XDG_CACHE_HOME": cache}
    started = time.monotonic()
    log = open(a.log, "w") if a.log else subprocess.DEVNULL
    s = Session([a.bin, "--project", a.project], env, name="serve-large", stderr=log)
    failed = 0
    if a.timeline:
        threading.Thread(target=sample, args=(s.proc, started, a.timeline), daemon=True).start()

    def call(name, args):
        nonlocal failed
        r = s.request("tools/call", {"name": name, "arguments": args})
        failed += bool(r.get("isError"))
        return r

    def text(r):
        return "".join(c.get("text", "") for c in r.get("content", []))

    def found(name):
        r = call("resolve", {"identifier": name})
        return r, r.get("structuredContent", {}).get("status") in ("one", "many")

    try:
        while not found(a.symbol)[1]:
            time.sleep(0.05)
        print(f"first answer after {time.monotonic() - started:.1f} s; {memory(s.proc.pid)}")
        while True:
            r, ok = found(a.symbol)
            if ok and "being built" not in text(r):
                break
            time.sleep(0.5)
        print(f"whole index after {time.monotonic() - started:.1f} s; {memory(s.proc.pid)}")
        # What the server holds once quiet, not what the index just freed.
        time.sleep(a.settle)
        print(f"{a.settle:g} s later, nothing asked: {memory(s.proc.pid)}")
        if a.smaps:
            print(f"  by kind: {resident_by_kind(s.proc.pid)}")
        print(f"  {graph_memory(s)}")
        first = r["structuredContent"]["candidates"][0]["id"]
        asks = {
            "resolve": ("resolve", {"identifier": a.symbol}),
            "describe": ("describe", {"id": first}),
            "neighbors (callers)": ("neighbors", {"ids": [first], "direction": "in", "edge_types": ["CALLS"]}),
            f"search {a.search!r}": ("search", {"query": a.search}),
        }
        for label, (tool, args) in asks.items():
            times = []
            for _ in range(a.queries):
                t0 = time.perf_counter()
                call(tool, args)
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"{label}: p50 {statistics.median(times):.2f} ms, p99 {p99:.2f} ms ({a.queries} calls, round trip)")
        edits = ([e.split(":", 1) for e in a.edit] or [("java", first_file(a.project, ".java"))]) if a.edits > 0 else []
        for lang, target in edits:
            original = open(target).read()
            latencies = []
            try:
                for n in range(a.edits):
                    name = f"editedLarge{n}"
                    with open(target, "w") as f:
                        f.write(placed(lang, original, function(lang, name)))
                    t0 = time.monotonic()
                    while (seen := call("resolve", {"identifier": name}).get("structuredContent", {})).get("status") != "one":
                        if time.monotonic() - t0 > 120:
                            raise SystemExit(f"{lang}: edit {n} of {target} never visible; the last answer: {json.dumps(seen)[:2000]}")
                        time.sleep(0.01)
                    latencies.append((time.monotonic() - t0) * 1000)
                    time.sleep(a.pause)
            finally:
                with open(target, "w") as f:
                    f.write(original)
            # The restored file swaps in before the next language's edits.
            time.sleep(2)
            print(f"{lang} method edit visible over {len(latencies)} edits: p50 {statistics.median(latencies):.0f} ms, "
                  f"max {max(latencies):.0f} ms ({os.path.relpath(target, a.project)})")
        time.sleep(max(0.0, a.settle - 2) if edits else 0.0)
        print(f"after: {memory(s.proc.pid)}; failed calls {failed}")
        if a.smaps:
            print(f"  by kind: {resident_by_kind(s.proc.pid)}")
        print(f"  {graph_memory(s)}")
    finally:
        s.proc.kill()
        if not a.cache:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
