"""Peer MCP server for the Signpost benchmark: the same five code-graph tools,
written the way most MCP servers are written -- Python, the official SDK
(`mcp`, whose FastMCP is called `MCPServer` since mcp 2), hints computed
in-process by plain Python.

It serves port.py, which ports Signpost's tool semantics (host/src/tools/, host/graph/src/)
and the default policy's advice (hints-component/src/advise.rs, render.rs)
closely enough that both servers return the same records, the same state
tags, text of the same shape and, for the calls the benchmark makes, the same
hints. What it deliberately does NOT do (so read ratios with that in mind):

* no sandbox: the policy is ordinary Python in the request path, while
  Signpost runs it in a wasmtime component with fuel/deadline limits;
* no hint validation pass: hints are valid by construction here, while
  Signpost re-parses every actionable hint against the tool schema and graph;
* no output schemas in tools/list, and simpler id coercion (lists, bare ids,
  JSON/Python-style list strings, comma/space separated).

Usage:
    python server.py                    # MCP over stdio
    python server.py --http 8765        # streamable HTTP at http://127.0.0.1:8765/mcp
    python server.py --http 8765 --stateless --json-response
"""

from __future__ import annotations

import argparse
import sys
import weakref
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from port import DEFAULT_GRAPH, Graph, History, answer, run_describe, run_find, run_neighbors, run_resolve, run_search

# One History per MCP connection (stdio: one; HTTP: one per Mcp-Session-Id, or
# one per request when stateless). In mcp 2 `ctx.session` is a per-request
# proxy; the connection behind it is what lives as long as the MCP session,
# and the SDK exposes it to MCPServer tools only as `ServerSession._connection`.
# Weak keys: a closed connection's history goes with it.
_histories: weakref.WeakKeyDictionary[Any, History] = weakref.WeakKeyDictionary()


def history_for(ctx: Context | None) -> History:
    session = getattr(ctx, "session", None) if ctx is not None else None
    conn = getattr(session, "_connection", None)
    if conn is None:
        return History()
    try:
        h = _histories.get(conn)
        if h is None:
            h = _histories[conn] = History()
        return h
    except TypeError:  # not weak-referenceable: behave like a fresh session
        return History()


# ---- MCP wiring ------------------------------------------------------------------

GRAPH = Graph({"nodes": []})  # replaced by the real graph in main(), before serving


def respond(tool: str, args: dict, ctx: Context | None, run) -> CallToolResult:
    """One call end to end (`port.answer`), as an MCP result."""
    structured, text, is_error = answer(GRAPH, tool, args, history_for(ctx), run)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, is_error=is_error)


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

mcp = MCPServer(
    name="signpost-peer",
    version="0.1.0",
    instructions="Code graph tools (peer of Signpost): resolve a name to get 40-hex ids, then describe an id or "
    "walk its neighbors. Every result carries `hints`: suggested next calls.",
    log_level="WARNING",
)


def _given(**kw: Any) -> dict:
    # The call's arguments as the agent sent them (None = not sent), which the
    # advice reads like Signpost's policy reads `call.args`.
    return {k: v for k, v in kw.items() if v is not None}


@mcp.tool(
    annotations=READ_ONLY,
    description="Find the symbol(s) an identifier names: exact name, qualified name, qualified suffix or id. "
    "Returns status one|many|none with candidates; start here to get ids.",
)
def resolve(identifier: str, kind: str | None = None, ctx: Context = None) -> CallToolResult:  # type: ignore[assignment]
    return respond("resolve", _given(identifier=identifier, kind=kind), ctx, lambda: run_resolve(GRAPH, identifier, kind))


@mcp.tool(
    annotations=READ_ONLY,
    description="The full record of one symbol by id, with counts of its edges per type and direction "
    "(composed keys such as DECLARES.EXPOSES count what its members connect to).",
)
def describe(id: str | list[str], ctx: Context = None) -> CallToolResult:  # type: ignore[assignment]
    return respond("describe", {"id": id}, ctx, lambda: run_describe(GRAPH, id))


@mcp.tool(annotations=READ_ONLY, description="Browse symbols by exact kind and role and by name or path substring, paged.")
def find(
    kind: str | None = None,
    role: str | None = None,
    name: str | None = None,
    path: str | None = None,
    limit: int = 25,
    offset: int = 0,
    ctx: Context = None,  # type: ignore[assignment]
) -> CallToolResult:
    sent = _given(kind=kind, role=role, name=name, path=path)
    full = dict(kind=kind, role=role, name=name, path=path, limit=limit, offset=offset)
    # Paging hints copy the call's arguments; include limit/offset only if sent
    # differently from the default, as Signpost only sees what was sent.
    if limit != 25:
        sent["limit"] = limit
    if offset != 0:
        sent["offset"] = offset
    return respond("find", sent, ctx, lambda: run_find(GRAPH, full, sent))


@mcp.tool(
    annotations=READ_ONLY,
    description="Ranked fuzzy lookup over names, qualified names and docs, paged, with scores 0..1.",
)
def search(query: str, limit: int = 10, offset: int = 0, ctx: Context = None) -> CallToolResult:  # type: ignore[assignment]
    sent = {"query": query}
    if limit != 10:
        sent["limit"] = limit
    if offset != 0:
        sent["offset"] = offset
    return respond("search", sent, ctx, lambda: run_search(GRAPH, query, limit, offset))


@mcp.tool(
    annotations=READ_ONLY,
    description="Symbols adjacent to the given ids along the given edge types, in or out, paged. "
    "Dotted edge types chain edges: DECLARES.EXPOSES = routes exposed by members.",
)
def neighbors(
    ids: list[str] | str,
    direction: Literal["out", "in"],
    edge_types: list[str],
    limit: int = 25,
    offset: int = 0,
    ctx: Context = None,  # type: ignore[assignment]
) -> CallToolResult:
    sent: dict[str, Any] = {"ids": ids, "direction": direction, "edge_types": edge_types}
    if limit != 25:
        sent["limit"] = limit
    if offset != 0:
        sent["offset"] = offset
    return respond(
        "neighbors", sent, ctx, lambda: run_neighbors(GRAPH, ids, direction, edge_types, limit, offset)
    )


def main() -> None:
    global GRAPH
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", type=Path, default=DEFAULT_GRAPH, help="graph JSON (default: Signpost's sample)")
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT at /mcp")
    p.add_argument("--stateless", action="store_true", help="HTTP: no sessions (a fresh context per request)")
    p.add_argument(
        "--json-response",
        action="store_true",
        help="HTTP: answer POSTs with application/json instead of an SSE stream",
    )
    opts = p.parse_args()
    GRAPH = Graph.load(opts.graph)
    if opts.http is None:
        mcp.run("stdio")
        return
    import uvicorn

    # Defaults match Signpost's HTTP mode (rmcp defaults): stateful sessions
    # (Mcp-Session-Id) and tools/call answered as a one-event SSE stream.
    app = mcp.streamable_http_app(stateless_http=opts.stateless, json_response=opts.json_response, host="127.0.0.1")
    # access_log off: Signpost logs nothing per request at its default level.
    uvicorn.run(app, host="127.0.0.1", port=opts.http, log_level="warning", access_log=False)


if __name__ == "__main__":
    sys.exit(main())
