#!/usr/bin/env python3
"""A misbehaving MCP server over stdio, for `signpost proxy`'s tests.

It answers `initialize` and `tools/list` (one tool, `echo`, taking `text`)
like any server, then misbehaves on `tools/call` as its argument says:
  hang      never answers a call;
  garbage   answers with a line that is not JSON, then a result that is no
            tool result;
  exit      exits on the first call (the proxy restarts it; it counts its
            starts in the file named by ROGUE_STARTS);
  echo      answers properly (the text back).
Each call's text is appended to the file named by ROGUE_CALLS, if set (a
test sees what reached the backend).
"""
import json
import os
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "echo"
starts = os.environ.get("ROGUE_STARTS")
calls = os.environ.get("ROGUE_CALLS")
if starts:
    with open(starts, "a") as f:
        f.write("start\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "rogue", "version": "1.0.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "echo",
            "description": "Says the text back",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }]}})
    elif method == "tools/call":
        text = request["params"].get("arguments", {}).get("text", "")
        if calls:
            with open(calls, "a") as f:
                f.write(json.dumps(text) + "\n")
        if mode == "hang":
            continue
        if mode == "garbage":
            sys.stdout.write("this is not JSON-RPC\n")
            send({"jsonrpc": "2.0", "id": rid, "result": {"unexpected": [1, 2, 3]}})
        elif mode == "exit":
            sys.exit(3)
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
