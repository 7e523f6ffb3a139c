#!/usr/bin/env python3
"""A misbehaving MCP server over stdio, for `signpost proxy`'s tests.

It answers `initialize` and `tools/list` (one tool, `echo`, taking `text`)
like any server, then misbehaves on `tools/call` as its argument says:
  hang      never answers a call;
  garbage   answers with a line that is not JSON, then a result that is no
            tool result;
  exit      exits on the first call (the proxy restarts it; it counts its
            starts in the file named by ROGUE_STARTS);
  echo      answers properly (the text back), except for these texts:
              progress  three progress notifications (under the call's
                        progress token), then the answer;
              log       one log message at each level, then the answer;
              change    announces that its resources and prompts changed;
              wait      no answer (until the call is cancelled);
              ask       asks for input (2026-07-28 MRTR: roots), and answers
                        the retry that carries it with what it got.
              touch:URI announces that resource URI was updated (whether
                        or not anyone subscribed: the proxy must pass it on
                        only to the sessions that did).
              task      answers with a task handle (resultType "task"),
                        which the proxy never asked for.
              meta      answers with `_meta` keys of Signpost's own
                        (`signpost/trail`, `signpost/coerced`, …), forged,
                        beside one of its own (`rogue/said`).
The tool's description is ROGUE_DESCRIPTION's, if set; it is marked
read-only (annotations.readOnlyHint) if ROGUE_READ_ONLY is set.
Its tools/list misbehaves as these say, if set:
  ROGUE_PAGES=endless  pages on forever (a new cursor each page, no more
                       tools); =repeat gives the same cursor again;
  ROGUE_OVERSIZED      lists, beside `echo`, a tool whose description is
                       300 KB and one whose name is 200 bytes long;
  ROGUE_FLOOD          announces its tools changed after every tools/list.
A subscription to a resource `res://refuse…` is refused, half a second on.
Each tools/list it answers is noted in the file named by ROGUE_LISTS, if
set (`list <cursor>`, `list -` for the first page).
Each call's text is appended to the file named by ROGUE_CALLS, if set (a
test sees what reached the backend), and so are the cancellations it is
sent (`cancelled <id>`), the log levels it is asked for (`level <l>`) and
the resources it is subscribed to and unsubscribed from (`subscribe <uri>`,
`unsubscribe <uri>`).
"""
import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "echo"
starts = os.environ.get("ROGUE_STARTS")
calls = os.environ.get("ROGUE_CALLS")
if starts:
    with open(starts, "a") as f:
        f.write("start\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def note(line):
    if calls:
        with open(calls, "a") as f:
            f.write(line + "\n")


LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        if method == "notifications/cancelled":
            note("cancelled %s" % json.dumps(request.get("params", {}).get("requestId")))
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {
                "tools": {},
                "logging": {},
                "resources": {"listChanged": True, "subscribe": True},
                "prompts": {"listChanged": True},
            },
            "serverInfo": {"name": "rogue", "version": "1.0.0"},
        }})
    elif method == "tools/list":
        cursor = (request.get("params") or {}).get("cursor")
        if os.environ.get("ROGUE_LISTS"):
            with open(os.environ["ROGUE_LISTS"], "a") as f:
                f.write("list %s\n" % (cursor or "-"))
        pages = os.environ.get("ROGUE_PAGES")
        tool = {
            "name": "echo",
            "description": os.environ.get("ROGUE_DESCRIPTION", "Says the text back"),
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }
        if os.environ.get("ROGUE_READ_ONLY"):
            tool["annotations"] = {"readOnlyHint": True}
        tools = [tool] if cursor is None else []
        if os.environ.get("ROGUE_OVERSIZED") and cursor is None:
            schema = {"type": "object"}
            tools.append({"name": "wordy", "description": "word " * 60000, "inputSchema": schema})
            tools.append({"name": "n" * 200, "description": "a long name", "inputSchema": schema})
        result = {"tools": tools}
        if pages == "endless":
            result["nextCursor"] = "page-%d" % (int((cursor or "page-0")[5:]) + 1)
        elif pages == "repeat":
            result["nextCursor"] = "again"
        send({"jsonrpc": "2.0", "id": rid, "result": result})
        if os.environ.get("ROGUE_FLOOD"):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    elif method == "resources/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resources": []}})
    elif method == "prompts/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"prompts": []}})
    elif method in ("resources/subscribe", "resources/unsubscribe"):
        uri = request["params"].get("uri")
        note("%s %s" % (method.split("/")[1], uri))
        if uri.startswith("res://refuse"):
            # Slowly, so that other sessions ask meanwhile.
            time.sleep(0.5)
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no updates for " + uri}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "logging/setLevel":
        note("level %s" % request["params"].get("level"))
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/call":
        text = request["params"].get("arguments", {}).get("text", "")
        note(json.dumps(text))
        if mode == "hang" or text == "wait":
            continue
        if text == "ask":
            params = request["params"]
            if "inputResponses" not in params:
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "resultType": "input_required",
                    "inputRequests": {"roots": {"method": "roots/list"}},
                    "requestState": "rogue-state-1"}})
            else:
                got = {"inputResponses": params["inputResponses"], "requestState": params.get("requestState")}
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "content": [{"type": "text", "text": "answered " + json.dumps(got, sort_keys=True)}]}})
            continue
        if text == "meta":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": "meta"}],
                "_meta": {"signpost/trail": "trFORGED", "signpost/trail_notice": "FORGED notice",
                          "signpost/coerced": [{"path": "text", "sent": "x", "used": "FORGED"}],
                          "signpost/state": "FORGED", "rogue/said": "its own"}}})
            continue
        if text == "task":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "resultType": "task", "taskId": "rogue-task-1", "status": "working",
                "createdAt": "2026-11-26T00:00:00Z", "lastUpdatedAt": "2026-11-26T00:00:00Z", "ttlMs": None}})
            continue
        if text == "progress":
            token = request["params"].get("_meta", {}).get("progressToken")
            for step in (1, 2, 3):
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": step, "total": 3, "message": "step %d of 3" % step}})
        elif text == "log":
            for level in LEVELS:
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": level, "logger": "rogue", "data": {"said": level}}})
        elif text.startswith("touch:"):
            send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": text[6:]}})
        elif text == "change":
            send({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
            send({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
        if mode == "garbage":
            sys.stdout.write("this is not JSON-RPC\n")
            send({"jsonrpc": "2.0", "id": rid, "result": {"unexpected": [1, 2, 3]}})
        elif mode == "exit":
            sys.exit(3)
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
