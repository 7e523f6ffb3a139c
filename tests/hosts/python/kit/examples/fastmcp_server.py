#!/usr/bin/env python3
"""An MCP server (the official Python SDK's FastMCP, stdio) serving
Signpost's five tools on a code graph, with a Signpost policy component
embedded through ``signpost_embed``.

    python3 examples/fastmcp_server.py --policy signpost_hints.wasm [--graph GRAPH.json]

``--policy``: a component of ``signpost:policy/policy@0.1.0`` (default:
``$SIGNPOST_POLICY``, else ``signpost_hints.wasm`` in the current directory,
which ``signpost policy export-default signpost_hints.wasm`` writes).
``--graph``: a graph in Signpost's JSON format (default: ``$SIGNPOST_GRAPH``,
else the sample graph the Rust host embeds, read from this repository:
``host/data/sample-graph.json``).

Each tool call goes through the kit: the policy's prerequisites, id
arguments read strictly or coerced by the policy (never overruling an id
the graph has), the tool, the policy's advice, its hints validated against
the input schemas this server lists (taken from FastMCP's own tool list)
and parsed as working calls on the graph, its text sanitised. The resource
``signpost://policy`` shows the policy and the kit's counters.

FastMCP registers the tools (names, descriptions, input schemas, the
functions that compute results); ``KitFastMCP.call_tool`` hands each call's
raw arguments to the kit, so that a sloppy id (a name, an upper-case id)
reaches the policy's coercion instead of FastMCP's own argument checks,
and the tool function receives canonical arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from sample_graph import Graph
from signpost_embed import Embedding, EmbeddingSession, LoadError, Policy

HERE = Path(__file__).resolve().parent
REPO_GRAPH = HERE.parents[4] / "host" / "data" / "sample-graph.json"

INSTRUCTIONS = (
    "Serves a code graph. Start with resolve (a name) or search (words) to get 40-hex ids, then describe an id "
    "or walk its neighbors. Every result carries `hints`: actionable ones are complete calls you can send as "
    "they are. Text results start with [state_tag]; `→ next:` lines are those calls."
)
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)

Limit = Annotated[int, Field(ge=1, le=100, description="Page size, 1 to 100.")]
Offset = Annotated[int, Field(ge=0, le=1_000_000, description="Results to skip, for paging.")]


class KitFastMCP(FastMCP):
    """FastMCP whose tool calls run through a ``signpost_embed`` session."""

    kit_session: Optional[EmbeddingSession] = None
    graph: Optional[Graph] = None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None or self.kit_session is None:
            return await super().call_tool(name, arguments)
        # Policy calls block (each bounded by its deadline): off the event loop.
        response = await anyio.to_thread.run_sync(self._serve, name, dict(arguments or {}))
        return CallToolResult(content=[TextContent(type="text", text=response.text)],
                              structuredContent=response.structured, isError=response.is_error)

    def _serve(self, name: str, arguments: dict):
        assert self.kit_session is not None and self.graph is not None
        graph = self.graph

        def run_tool(tool: str, args: dict, read_ids):
            parsed = graph.parse(tool, args, read_ids)  # teaching errors, coercion, ids looked up
            return self._tool_manager.get_tool(tool).fn(**parsed.kwargs)

        return self.kit_session.call(name, arguments, run_tool)


mcp = KitFastMCP("signpost-embed-example", instructions=INSTRUCTIONS, log_level="WARNING")


def _graph() -> Graph:
    assert mcp.graph is not None
    return mcp.graph


# The functions compute results from canonical arguments; their signatures
# give the input schemas clients see (and hints are validated against).


@mcp.tool(name="resolve", annotations=READ_ONLY, structured_output=False,
          description="Find the symbol(s) an identifier names: exact name, qualified name, qualified suffix or id. "
                      "Returns status one|many|none with candidates; start here to get ids.")
def resolve(
    identifier: Annotated[str, Field(description="A name (`OrderService`), a qualified name "
                                                 "(`com.acme.shop.orders.OrderService`), a qualified suffix "
                                                 "(`OrderService.placeOrder`) or a 40-hex id.")],
    kind: Annotated[Optional[str], Field(description="Only symbols of this kind: class, interface, method, "
                                                     "field, module, route, topic, …")] = None,
) -> dict:
    return _graph().resolve(identifier, kind)


@mcp.tool(name="describe", annotations=READ_ONLY, structured_output=False,
          description="The full record of one symbol by id, with counts of its edges per type and direction "
                      "(composed keys such as DECLARES.EXPOSES count what its members connect to).")
def describe(
    id: Annotated[str, Field(description="The symbol's 40-hex id, as returned by resolve, search, find or "
                                         "neighbors.")],
) -> dict:
    return _graph().describe(id)


@mcp.tool(name="find", annotations=READ_ONLY, structured_output=False,
          description="Browse symbols by exact kind and role and by name or path substring, paged.")
def find(
    kind: Annotated[Optional[str], Field(description="Exact kind: class, interface, method, field, module, "
                                                     "route, topic, …")] = None,
    role: Annotated[Optional[str], Field(description="Exact role: controller, service, repository, entity, dto, "
                                                     "http_client, producer, consumer, handler, …")] = None,
    name: Annotated[Optional[str], Field(description="Case-insensitive substring of the symbol's name.")] = None,
    path: Annotated[Optional[str], Field(description="Substring of the symbol's file path.")] = None,
    limit: Limit = 25,
    offset: Offset = 0,
) -> dict:
    return _graph().find(kind, role, name, path, limit, offset)


@mcp.tool(name="search", annotations=READ_ONLY, structured_output=False,
          description="Ranked fuzzy lookup over names, qualified names and docs, paged, with scores 0..1.")
def search(
    query: Annotated[str, Field(description="Words to look for in names, qualified names and docs; fuzzy.")],
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict:
    return _graph().search(query, limit, offset)


@mcp.tool(name="neighbors", annotations=READ_ONLY, structured_output=False,
          description="Symbols adjacent to the given ids along the given edge types, in or out, paged. Dotted edge "
                      "types chain edges: DECLARES.EXPOSES = routes exposed by members.")
def neighbors(
    ids: Annotated[list[str], Field(min_length=1, description="Ids of the symbols to start from: a JSON array of "
                                                              "40-hex id strings.")],
    direction: Annotated[Literal["out", "in"], Field(description="`out` follows edges from the symbols, `in` "
                                                                 "follows edges into them.")],
    edge_types: Annotated[list[str], Field(min_length=1, description="Edge types to follow: CALLS, DECLARES, "
                                           "REFERENCES, IMPLEMENTS, EXTENDS, OVERRIDES, EXPOSES, TARGETS, PUBLISHES, "
                                           "SUBSCRIBES, or dotted chains such as DECLARES.EXPOSES (members' "
                                           "routes).")],
    limit: Limit = 25,
    offset: Offset = 0,
) -> dict:
    return _graph().neighbors(ids, direction, edge_types, limit, offset)


@mcp.resource("signpost://policy", name="policy", mime_type="application/json",
              description="The embedded policy (name, version, sha256) and the kit's counters: calls, faults by "
                          "kind, hints dropped, lines stripped.")
def policy_status() -> str:
    assert mcp.kit_session is not None
    return json.dumps(mcp.kit_session.embedding.counters, indent=2)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default=os.environ.get("SIGNPOST_POLICY", "signpost_hints.wasm"),
                    help="policy component (default: $SIGNPOST_POLICY or ./signpost_hints.wasm)")
    ap.add_argument("--graph", default=os.environ.get("SIGNPOST_GRAPH", str(REPO_GRAPH)),
                    help="graph JSON (default: $SIGNPOST_GRAPH or the repository's sample graph)")
    ap.add_argument("--deadline-ms", type=int, default=100, help="deadline of one policy call [100]")
    ap.add_argument("--memory-mib", type=int, default=64, help="linear memory cap per policy instance [64]")
    opts = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")

    graph = Graph.load(opts.graph)
    try:
        policy = Policy.load(opts.policy, deadline_ms=opts.deadline_ms, memory_mib=opts.memory_mib)
    except (OSError, LoadError) as e:
        print(f"cannot load policy {opts.policy}: {e}", file=sys.stderr)
        return 2
    # Every object may carry only the properties its schema lists (as
    # Signpost's schemas say, and as its parser enforces).
    for name in ("resolve", "describe", "find", "search", "neighbors"):
        mcp._tool_manager.get_tool(name).parameters["additionalProperties"] = False
    # The schemas clients see, from FastMCP's own tool list.
    schemas = {t.name: t.inputSchema for t in anyio.run(mcp.list_tools)}
    embedding = Embedding(policy, schemas, works=graph.works, known=graph.has_id, strict_templates=False)
    mcp.graph = graph
    mcp.kit_session = embedding.session()  # stdio: one client, one session
    mcp.run(transport="stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
