#!/usr/bin/env python3
"""How soon an edit is visible: `signpost --project DIR` over MCP stdio.

Serves DIR (a Go or Java project, e.g. the synthetic ones
`SIGNPOST_BENCH_KEEP=/tmp/tsb cargo bench -p signpost-treesitter --bench
index` leaves), waits until it answers, then N times edits one source file
and measures the wall time from the write until the edit is visible
(polling every 10 ms), while every call made meanwhile must succeed:

- `--kind method` (the default): appends a new function; visible when
  `resolve` finds it;
- `--kind call`: changes the call in one function's body (the functions
  are added before the server starts, so every edit keeps the file's
  definitions, as most edits do); visible when `neighbors` gives the new
  callee its caller.

Prints p50, p90 and max, the graph's size, failed calls, and the server's
resident and peak memory after the edits (Linux).

`SIGNPOST_EDITS_WHOLE=1` in the environment makes the server import each
edited language whole, as before edits were patched per file: the two
paths compared in one build.

The edited file is the first of the language in path order, or `--file`
(for a tree of several projects: one file of each language in turn). A
function is appended at the end of a Go, C, C++ or Kotlin file, before the
last brace of a Java file, and just inside the first class of a C# file
(whose last brace may close a namespace).

Usage: bench/project_edits.py --project DIR [--bin target/release/signpost]
                              [--edits 20] [--lang go|java|kotlin|c|cpp|csharp]
                              [--kind method|call] [--file PATH]
"""

import argparse
import atexit
import json
import os
import re
import statistics
import subprocess
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/signpost")
    p.add_argument("--project", required=True)
    p.add_argument("--edits", type=int, default=20)
    p.add_argument("--lang", default="go", choices=sorted(EXTENSIONS))
    p.add_argument("--kind", default="method", choices=["method", "call"])
    p.add_argument("--file", help="the file to edit (default: the language's first)")
    a = p.parse_args()
    target = a.file or first_file(a.project, EXTENSIONS[a.lang])
    original = open(target).read()
    go = a.lang == "go"
    caller, callee = ("EditedCaller", "EditedCallee") if go else ("editedCaller", "editedCallee")

    def with_caller(n):
        """The file with a caller calling callee `n` (none: no call) and
        every callee."""
        call = None if n is None else f"{callee}{n}"
        added = function(a.lang, caller, call) + "".join(function(a.lang, f"{callee}{i}") for i in range(a.edits))
        return placed(a.lang, original, added)

    def restore():
        with open(target, "w") as f:
            f.write(original)

    atexit.register(restore)
    if a.kind == "call":
        with open(target, "w") as f:
            f.write(with_caller(None))
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

    latencies, failed = [], 0

    def resolved(name):
        nonlocal failed
        r = rpc("tools/call", {"name": "resolve", "arguments": {"identifier": name}})["result"]
        failed += bool(r.get("isError"))
        s = r.get("structuredContent", {})
        return s["candidates"][0]["id"] if s.get("status") == "one" else None

    def called_by_caller(id):
        nonlocal failed
        r = rpc("tools/call", {"name": "neighbors",
                               "arguments": {"ids": [id], "direction": "in", "edge_types": ["CALLS"]}})["result"]
        failed += bool(r.get("isError"))
        return f"{caller}" in json.dumps(r.get("structuredContent", {}))

    try:
        callees = []
        if a.kind == "call":
            # Until the first index is whole: answers say while it is not.
            while True:
                r = rpc("tools/call", {"name": "resolve", "arguments": {"identifier": f"{callee}0"}})["result"]
                text = "".join(c.get("text", "") for c in r.get("content", []))
                if r.get("structuredContent", {}).get("status") == "one" and "being built" not in text:
                    break
                if time.monotonic() - started > 300:
                    raise SystemExit("the first index never finished")
                time.sleep(0.1)
            callees = [resolved(f"{callee}{n}") for n in range(a.edits)]
            if None in callees:
                raise SystemExit("the callees added before the start were not indexed")
        for n in range(a.edits):
            name = f"EditedLater{n}"
            text = with_caller(n) if a.kind == "call" else placed(a.lang, original, function(a.lang, name))
            t0 = time.monotonic()
            with open(target, "w") as f:
                f.write(text)
            while True:
                seen = called_by_caller(callees[n]) if a.kind == "call" else resolved(name) is not None
                if seen:
                    latencies.append(time.monotonic() - t0)
                    break
                if time.monotonic() - t0 > 60:
                    raise SystemExit(f"edit {n} never visible")
                time.sleep(0.01)
        # The server's memory once the last swap has settled.
        time.sleep(2)
        status = open(f"/proc/{server.pid}/status").read() if os.path.exists(f"/proc/{server.pid}/status") else ""
        mem = {l.split(":")[0]: int(l.split()[1]) // 1024 for l in status.splitlines() if l.startswith(("VmRSS", "VmHWM"))}
    finally:
        restore()
        server.kill()
    latencies.sort()
    ms = [x * 1000 for x in latencies]
    print(f"project {a.project}: {nodes} symbols; served after {ready:.1f} s")
    print(f"{a.kind} edit visible over {len(ms)} edits: p50 {statistics.median(ms):.0f} ms, "
          f"p90 {ms[int(len(ms) * 0.9) - 1]:.0f} ms, max {ms[-1]:.0f} ms; failed calls {failed}")
    if mem:
        print(f"server memory after the edits: {mem.get('VmRSS', 0)} MiB resident, peak {mem.get('VmHWM', 0)} MiB")


EXTENSIONS = {"go": ".go", "java": ".java", "kotlin": ".kt", "c": ".c", "cpp": ".cc", "csharp": ".cs"}


def function(lang, name, call=None):
    """A function (a method in Java and C#) called `name`, whose body calls
    `call` when given."""
    body = "" if call is None else f"{call}()"
    if lang == "go":
        return f"\nfunc {name}() {{\n\t{body}\n}}\n"
    if lang == "kotlin":
        return f"\nfun {name}() {{\n    {body}\n}}\n"
    if lang in ("c", "cpp"):
        params = "void" if lang == "c" else ""
        return f"\nvoid {name}({params}) {{\n    {body + ';' if body else ''}\n}}\n"
    return f"\n    public void {name}() {{\n        {body + ';' if body else ''}\n    }}\n"


def placed(lang, original, added):
    """`original` with the functions `added` where the language takes them."""
    if lang == "java":
        return original.rstrip().rstrip("}") + added + "}\n"
    if lang == "csharp":
        m = re.search(r"\bclass\s+\w+[^{;]*\{", original)
        if not m:
            raise SystemExit("no class in the C# file to add methods to")
        return original[:m.end()] + added + original[m.end():]
    return original + added


def first_file(project, ext):
    """The first source file of the language, in path order."""
    for root, dirs, files in os.walk(project):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(ext):
                return os.path.join(root, f)
    raise SystemExit(f"no {ext} file under {project}")


if __name__ == "__main__":
    main()
