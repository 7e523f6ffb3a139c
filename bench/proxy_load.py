#!/usr/bin/env python3
"""Several agents calling `signpost proxy` at once while its policy is
swapped and its backend is killed: is any call lost?

Starts AGENTS proxies, one stdio session each (as each agent's own
`mcpServers` entry would), all watching the same policy file, each in
front of `tests/backends/rogue.py echo`. Each agent calls `echo` as fast as it can. Meanwhile the policy file is
replaced (a swap in every proxy) SWAPS times, and each proxy's backend is
killed (SIGKILL) KILLS times.

A call is **lost** when no answer comes within the deadline (the proxy's
backend timeout plus 5 s) or the answer is a JSON-RPC error. A tool error
that says the backend is not running is an answer: the call is not lost.

Usage: bench/proxy_load.py --policy-a A.wasm --policy-b B.wasm
           [--agents 4] [--seconds 20] [--swaps 4] [--kills 3]
"""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from mcp_stdio import Session

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def children(pid):
    """The child processes of `pid`, whichever of its threads started them."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return found


class Agent(threading.Thread):
    def __init__(self, n, cmd, deadline, stop):
        super().__init__(daemon=True)
        self.n, self.deadline, self.stop = n, deadline, stop
        self.session = Session(cmd, {**os.environ, "RUST_LOG": "error"}, f"agent{n}")
        self.answered = self.tool_errors = self.lost = 0
        self.latencies = []

    def run(self):
        i = 0
        while not self.stop.is_set():
            i += 1
            box = {}
            t = threading.Thread(target=lambda: box.update(m=self.session.exchange(
                "tools/call", {"name": "echo", "arguments": {"text": f"agent {self.n} call {i}"}})), daemon=True)
            start = time.perf_counter()
            t.start()
            t.join(self.deadline)
            took = time.perf_counter() - start
            m = box.get("m")
            if t.is_alive() or m is None or "error" in m:
                self.lost += 1
                if t.is_alive():
                    sys.exit(f"agent {self.n}: call {i} hung past {self.deadline} s")
                continue
            self.answered += 1
            self.latencies.append(took)
            if m["result"].get("isError"):
                self.tool_errors += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target/release/signpost"))
    p.add_argument("--policy-a", required=True)
    p.add_argument("--policy-b", required=True)
    p.add_argument("--agents", type=int, default=4)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--swaps", type=int, default=4)
    p.add_argument("--kills", type=int, default=3)
    p.add_argument("--backend-timeout", type=int, default=5)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="proxy-load-")
    policy = os.path.join(work, "policy.wasm")
    shutil.copy(a.policy_a, policy)
    backend = [sys.executable, os.path.join(ROOT, "tests/backends/rogue.py"), "echo"]
    cmd = [a.bin, "proxy", "--policy", policy, "--backend-timeout-secs", str(a.backend_timeout), "--"] + backend
    stop = threading.Event()
    agents = [Agent(n, cmd, a.backend_timeout + 5, stop) for n in range(a.agents)]
    for agent in agents:
        agent.start()
    events = sorted([(a.seconds * (k + 1) / (a.swaps + 1), "swap") for k in range(a.swaps)]
                    + [(a.seconds * (k + 0.5) / (a.kills + 1), "kill") for k in range(a.kills)])
    began = time.monotonic()
    swaps = kills = 0
    for at, what in events:
        time.sleep(max(0, began + at - time.monotonic()))
        if what == "swap":
            swaps += 1
            staged = policy + ".new"
            shutil.copy(a.policy_b if swaps % 2 else a.policy_a, staged)
            os.replace(staged, policy)
        else:
            for agent in agents:
                for child in children(agent.session.proc.pid):
                    os.kill(child, signal.SIGKILL)
                    kills += 1
    time.sleep(max(0, began + a.seconds - time.monotonic()))
    stop.set()
    published = []
    for agent in agents:
        agent.join(a.backend_timeout + 10)
        status = agent.session.exchange("resources/read", {"uri": "signpost://policy"})
        text = status["result"]["contents"][0]["text"] if status and "result" in status else "{}"
        published.append(json.loads(text).get("swaps", {}).get("published", 0))
        agent.session.proc.stdin.close()
    answered = sum(x.answered for x in agents)
    tool_errors = sum(x.tool_errors for x in agents)
    lost = sum(x.lost for x in agents)
    lat = sorted(l for x in agents for l in x.latencies)
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    print(f"{a.agents} agents, {a.seconds:.0f} s, {swaps} policy file writes, {kills} backend kills")
    print(f"swaps published per proxy: {published}")
    print(f"calls answered: {answered} ({tool_errors} of them tool errors: backend down or restarting)")
    print(f"calls lost (no answer in {a.backend_timeout + 5} s, or a JSON-RPC error): {lost}")
    print(f"latency p50 {pct(.5):.2f} ms, p99 {pct(.99):.2f} ms, max {pct(1):.2f} ms")
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if lost else 0)


if __name__ == "__main__":
    main()
