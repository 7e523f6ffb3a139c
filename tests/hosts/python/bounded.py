"""A policy component called from wasmtime-py with Signpost's bounds kept:
a deadline on every call (epoch interruption), a memory cap, and a fresh
instance after any fault (a store that trapped is never reused).

Usage: PYTHONPATH=<wasmtime-py> python3 bounded.py POLICY.wasm
Prints one JSON line per call of `coerce-ids` (a well-behaved call, then
one the chaos policy answers by spinning forever): the answer and the time.
See tests/hosts/README.md ("Outside Signpost") for what else an embedder
must do to keep Signpost's guarantees.
"""

import json
import sys
import threading
import time

import wasmtime
from wasmtime import component as cm

TICK_S = 0.01  # the epoch moves on every 10 ms
DEADLINE_MS = 100  # Signpost's default --policy-timeout-ms
MEMORY_BYTES = 64 << 20  # Signpost's default --policy-memory-mib

config = wasmtime.Config()
config.epoch_interruption = True
engine = wasmtime.Engine(config)


def tick():
    while True:
        time.sleep(TICK_S)
        engine.increment_epoch()


threading.Thread(target=tick, daemon=True).start()
linker = cm.Linker(engine)
linker.add_wasip2()
component = cm.Component.from_file(engine, sys.argv[1])


def fresh():
    store = wasmtime.Store(engine)
    store.set_wasi(wasmtime.WasiConfig())  # nothing granted: no files, env, sockets
    store.set_limits(memory_size=MEMORY_BYTES)
    store.set_epoch_deadline(10)  # instantiation runs guest code too
    return store, linker.instantiate(store, component)


def call(name, *args):
    store, instance = fresh()  # Signpost keeps one per session; a fresh one is the simplest safe choice
    policy = instance.get_export_index(store, "signpost:policy/policy@0.1.0")
    func = instance.get_func(store, instance.get_export_index(store, name, policy))
    store.set_epoch_deadline(max(1, DEADLINE_MS // int(TICK_S * 1000)))
    try:
        result = func(store, *args)
        func.post_return(store)
        return result
    except (wasmtime.Trap, wasmtime.WasmtimeError) as fault:  # a timeout is "wasm trap: interrupt"
        return {"faulted": str(fault).strip().splitlines()[-1].strip()}


def plain(value):
    if isinstance(value, cm.Record):
        return {k: plain(v) for k, v in vars(value).items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


for args in ['{"identifier": "OrderService"}', '{"identifier": "chaos:loop"}']:
    request = cm.Record()
    request.tool, request.args = "resolve", args
    started = time.monotonic()
    answer = call("coerce-ids", request, "identifier")
    print(json.dumps({"args": args, "answer": plain(answer), "seconds": round(time.monotonic() - started, 3)}))
