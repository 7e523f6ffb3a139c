#!/usr/bin/env python3
"""What an agent reads: the bytes (and estimated tokens, bytes / 4) of
`tools/list`, with and without `--output-schemas`, and of one answer of
each tool on the embedded sample graph, over stdio.

    python3 bench/tool-list-size.py [BINARY]   (default: target/release/signpost)
"""

import json
import subprocess
import sys

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/release/signpost"
CONTROLLER = "721797098567ca69c8d8f724033dc6ec8670d50b"
CALLS = [
    ("resolve", {"identifier": "OrderController"}),
    ("describe", {"id": CONTROLLER}),
    ("find", {"role": "controller", "limit": 5}),
    ("search", {"query": "payment"}),
    ("neighbors", {"ids": [CONTROLLER], "direction": "out", "edge_types": ["DECLARES.EXPOSES"]}),
]


def session(flags):
    """The JSON-RPC lines the server answered, by request id."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    for i, (tool, args) in enumerate(CALLS):
        messages.append({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                         "params": {"name": tool, "arguments": args}})
    sent = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([BINARY, *flags], input=sent, capture_output=True, text=True, timeout=60, check=True)
    answers = {}
    for line in done.stdout.splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if "id" in answer:
            answers[answer["id"]] = line
    return answers


for label, flags in [("default", []), ("--output-schemas", ["--output-schemas"])]:
    size = len(session(flags)[2])
    print(f"tools/list ({label}): {size} bytes, ~{size // 4} tokens")
answers = session([])
for i, (tool, _) in enumerate(CALLS):
    line = answers[10 + i]
    result = json.loads(line)["result"]
    text = sum(len(c.get("text", "")) for c in result.get("content", []))
    structured = len(json.dumps(result.get("structuredContent", {}), separators=(",", ":")))
    print(f"{tool}: {len(line)} bytes (text {text}, structuredContent {structured})")
