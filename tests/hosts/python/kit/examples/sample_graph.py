"""The five code-graph tools of Signpost, in plain Python, on a graph in
Signpost's JSON format (``host/data/sample-graph.json`` is the sample graph
the Rust host embeds).

Simpler than ``host/src/tools/`` and ``host/graph/src/search.rs`` (no indexes,
a rougher search ranking), but with the same arguments, result shapes,
error kinds and teaching examples (docs/tools.md). As in Rust, a call runs
in two steps: :meth:`Graph.parse` reads and checks the arguments (asking a
``read_ids`` function for id arguments) and :meth:`Graph.execute` runs it;
hint validation uses the same :meth:`Graph.parse` with ids read strictly,
so "valid hint" and "call that works" are one definition.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Optional

from signpost_embed import ErrorKind, ToolError, is_id, strict_ids

TOOL_NAMES = ("resolve", "describe", "find", "search", "neighbors")
MAX_LIMIT = 100
MAX_OFFSET = 1_000_000
MAX_TEXT = 1024
MAX_CANDIDATES = 20
MAX_RESULT_BYTES = 48 * 1024
MAX_DOC_CHARS = 8_000
MAX_COMPOSED = 3
MIN_SCORE = 0.2


def _bad(message: str, example: Optional[dict] = None) -> ToolError:
    return ToolError(ErrorKind.BAD_ARGUMENT, message, example)


def example_for(tool: str) -> dict:
    """A generic correct call per tool, for teaching messages (``tools::example_for``)."""
    return {"resolve": {"identifier": "OrderService"}, "find": {"kind": "class", "role": "controller"},
            "search": {"query": "order"}}.get(tool, {})


# ---- arguments, read as serde reads them (deny_unknown_fields) -----------------

# field -> (type, default); type is one of str, opt_str, u32, any, direction, list_str
_FIELDS: dict[str, dict[str, tuple[str, Any]]] = {
    "resolve": {"identifier": ("str", ...), "kind": ("opt_str", None)},
    "describe": {"id": ("any", ...)},
    "find": {"kind": ("opt_str", None), "role": ("opt_str", None), "name": ("opt_str", None),
             "path": ("opt_str", None), "limit": ("u32", 25), "offset": ("u32", 0)},
    "search": {"query": ("str", ...), "limit": ("u32", 10), "offset": ("u32", 0)},
    "neighbors": {"ids": ("any", ...), "direction": ("direction", ...), "edge_types": ("list_str", ...),
                  "limit": ("u32", 25), "offset": ("u32", 0)},
}


def _shown(v: Any) -> str:
    if isinstance(v, bool):
        return f"boolean `{str(v).lower()}`"
    if isinstance(v, int):
        return f"integer `{v}`"
    if isinstance(v, float):
        return f"floating point `{v}`"
    if isinstance(v, str):
        return f"string {json.dumps(v)}"
    if v is None:
        return "null"
    return "a sequence" if isinstance(v, list) else "a map"


def _read(tool: str, args: dict) -> dict:
    fields = _FIELDS[tool]
    out: dict = {}

    def fail(why: str) -> ToolError:
        example = example_for(tool) or None
        return _bad(f"bad arguments for {tool}: {why}.", example)

    for key in sorted(args):
        if key not in fields:
            expected = ", ".join(f"`{f}`" for f in fields)
            raise fail(f"unknown field `{key}`, expected one of {expected}")
        kind, _ = fields[key]
        v = args[key]
        if kind == "str" and not isinstance(v, str):
            raise fail(f"invalid type: {_shown(v)}, expected a string")
        if kind == "opt_str" and not (v is None or isinstance(v, str)):
            raise fail(f"invalid type: {_shown(v)}, expected a string")
        if kind == "u32":
            if isinstance(v, bool) or not isinstance(v, int):
                raise fail(f"invalid type: {_shown(v)}, expected u32")
            if not 0 <= v <= 0xFFFFFFFF:
                raise fail(f"invalid value: {_shown(v)}, expected u32")
        if kind == "direction":
            if not isinstance(v, str):
                raise fail(f"invalid type: {_shown(v)}, expected `out` or `in`")
            if v not in ("out", "in"):
                raise fail(f"unknown variant `{v}`, expected `out` or `in`")
        if kind == "list_str":
            if not isinstance(v, list):
                raise fail(f"invalid type: {_shown(v)}, expected a sequence")
            bad = next((x for x in v if not isinstance(x, str)), None)
            if bad is not None or any(not isinstance(x, str) for x in v):
                raise fail(f"invalid type: {_shown(bad)}, expected a string")
        out[key] = v
    for key, (kind, default) in fields.items():
        if key not in out:
            if default is ...:
                raise fail(f"missing field `{key}`")
            out[key] = default
    return out


def _check_text(name: str, text: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT:
        raise _bad(f"`{name}` is {size} bytes; at most {MAX_TEXT}")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text):
        raise _bad(f"`{name}` contains control characters")


def _check_page(tool: str, limit: int, offset: int, example: dict) -> None:
    if limit == 0 or limit > MAX_LIMIT:
        fixed = dict(example)
        fixed["limit"] = min(max(limit, 1), MAX_LIMIT)
        raise _bad(f"`limit` of {tool} must be 1 to {MAX_LIMIT}, got {limit}", fixed)
    if offset > MAX_OFFSET:
        raise _bad(f"`offset` must be at most {MAX_OFFSET}")


def _is_edge_type(s: str) -> bool:
    return 0 < len(s) <= 64 and "A" <= s[0] <= "Z" and all(c.isascii() and (c.isupper() or c.isdigit() or c == "_")
                                                          for c in s)


def _tail_start(s: str) -> int:
    one = max(s.rfind(c) for c in "./# ") + 1
    two = s.rfind("::")
    return max(one, two + 2 if two >= 0 else 0)


def _ends_with_segment(fqn: str, suffix: str) -> bool:
    if not (len(fqn) > len(suffix) and fqn.endswith(suffix)):
        return False
    head = fqn[: len(fqn) - len(suffix)]
    return head.endswith((".", "/", "#", " ", "::"))


def _kind_rank(kind: str) -> int:
    if kind in ("class", "interface", "struct", "trait", "enum"):
        return 0
    if kind in ("method", "function"):
        return 1
    if kind in ("route", "topic"):
        return 2
    return 3 if kind == "module" else 4


@dataclass
class Parsed:
    """A call whose arguments were read and checked: the tool and the
    canonical keyword arguments of its implementation."""

    tool: str
    kwargs: dict


class Graph:
    """A code graph in Signpost's JSON format, with the five tools."""

    def __init__(self, doc: dict):
        self.name = doc.get("name", "graph")
        self.nodes: list[dict] = []
        self.by_id: dict[str, int] = {}
        for n in doc.get("nodes", []):
            nid = str(n["id"]).lower()
            if nid in self.by_id:
                continue
            self.by_id[nid] = len(self.nodes)
            self.nodes.append({
                "id": nid, "kind": n.get("kind", ""), "name": n.get("name", ""), "fqn": n.get("fqn", ""),
                "file": n.get("file", ""), "line": int(n.get("line", 0)), "roles": list(n.get("roles", [])),
                "doc": n.get("doc", ""), "signature": n.get("signature", ""),
            })
        self.types: list[str] = []
        out: dict[tuple[str, int], set[int]] = defaultdict(set)
        inn: dict[tuple[str, int], set[int]] = defaultdict(set)
        for e in doc.get("edges", []):
            s, d, t = self.by_id.get(str(e["src"]).lower()), self.by_id.get(str(e["dst"]).lower()), e["type"]
            if s is None or d is None:
                continue
            if t not in self.types:
                self.types.append(t)
            out[(t, s)].add(d)
            inn[(t, d)].add(s)
        self.out = {k: sorted(v) for k, v in out.items()}
        self.inn = {k: sorted(v) for k, v in inn.items()}
        self.out_edges: dict[int, list[tuple[str, int]]] = defaultdict(list)
        self.in_edges: dict[int, list[tuple[str, int]]] = defaultdict(list)
        for (t, s), ds in sorted(self.out.items(), key=lambda kv: (kv[0][1], self.types.index(kv[0][0]))):
            self.out_edges[s].extend((t, d) for d in ds)
        for (t, d), ss in sorted(self.inn.items(), key=lambda kv: (kv[0][1], self.types.index(kv[0][0]))):
            self.in_edges[d].extend((t, s) for s in ss)

    @classmethod
    def load(cls, path: str) -> "Graph":
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def has_id(self, i: str) -> bool:
        return i in self.by_id

    def edge_types(self) -> list[str]:
        return sorted(self.types)

    # ---- records -----------------------------------------------------------------

    def symbol(self, ix: int) -> dict:
        n = self.nodes[ix]
        return {k: n[k] for k in ("id", "kind", "name", "fqn", "file", "line", "roles")}

    def record(self, ix: int) -> dict:
        n = self.nodes[ix]
        rec = self.symbol(ix)
        rec["doc"] = _clip_doc(n["doc"])
        if n["signature"]:
            rec["signature"] = _clip_doc(n["signature"])
        return rec

    # ---- edges ---------------------------------------------------------------------

    def _adj(self, direction: str) -> dict:
        return self.out if direction == "out" else self.inn

    def parse_edge_key(self, key: str) -> tuple[bool, Optional[list[str]]]:
        """(well-formed, base types or None when this graph lacks one)."""
        parts = key.split(".")
        if len(parts) > MAX_COMPOSED or not all(_is_edge_type(p) for p in parts):
            return False, None
        return True, (parts if all(p in self.types for p in parts) else None)

    def walk(self, origin: int, direction: str, key: list[str]) -> list[int]:
        adj = self._adj(direction)
        steps = key if direction == "out" else list(reversed(key))
        if len(steps) == 1:
            return list(adj.get((steps[0], origin), []))
        frontier = [origin]
        for t in steps:
            seen: set[int] = set()
            nxt = []
            for n in frontier:
                for m in adj.get((t, n), []):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
        return frontier

    def edge_summary(self, origins: list[int]) -> dict:
        """Edge counts per key and direction, with the composed
        ``DECLARES.<type>`` keys (``Graph::edge_summary``)."""
        summary: dict = {"out": {}, "in": {}}
        for direction in ("out", "in"):
            reach: dict[tuple[bool, str], list[int]] = defaultdict(list)
            edges = self.out_edges if direction == "out" else self.in_edges
            for o in origins:
                for t, m in edges.get(o, []):
                    reach[(False, t)].append(m)
                if "DECLARES" not in self.types:
                    continue
                if direction == "out":
                    for m in self.out.get(("DECLARES", o), []):
                        for t, x in self.out_edges.get(m, []):
                            if t != "DECLARES":
                                reach[(True, t)].append(x)
                else:
                    via = sorted({(m, t) for t, m in self.in_edges.get(o, []) if t != "DECLARES"})
                    for m, t in via:
                        for x in self.inn.get(("DECLARES", m), []):
                            reach[(True, t)].append(x)
            counts = {}
            for (composed, t), nodes in reach.items():
                n = len(set(nodes)) if (composed or len(origins) > 1) else len(nodes)
                counts[f"DECLARES.{t}" if composed else t] = n
            summary[direction] = dict(sorted(counts.items()))
        return summary

    # ---- parsing ----------------------------------------------------------------

    def lookup_all(self, tool: str, ids: list[str]) -> list[int]:
        unknown = [i for i in ids if i.lower() not in self.by_id]
        if unknown:
            more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
            raise ToolError(ErrorKind.UNKNOWN_ID,
                            f"{tool}: no symbol has id {', '.join(unknown[:3])}{more}. Ids come from resolve, search, "
                            "find or neighbors results of this graph.")
        return [self.by_id[i.lower()] for i in ids]

    def parse(self, tool: str, args: dict, read_ids: Callable[[str], list[str]]) -> Parsed:
        """Reads and checks a call's arguments (``tools::parse``)."""
        if tool not in _FIELDS:
            raise _bad(f"unknown tool `{tool[:80]}`; tools: {', '.join(TOOL_NAMES)}")
        a = _read(tool, args)
        if tool == "resolve":
            _check_text("identifier", a["identifier"])
            if not a["identifier"].strip():
                raise _bad("`identifier` is empty: pass a symbol name, qualified name or id", example_for(tool))
            if a["kind"] is not None:
                _check_text("kind", a["kind"])
            return Parsed(tool, {"identifier": a["identifier"], "kind": a["kind"]})
        if tool == "describe":
            found = read_ids("id")
            if len(found) != 1:
                raise ToolError(ErrorKind.INVALID_ID, f"describe takes one id, got {len(found)}: call it once per id",
                                {"id": found[0]} if found else None)
            self.lookup_all(tool, found)
            return Parsed(tool, {"id": found[0]})
        if tool == "find":
            for name in ("kind", "role", "name", "path"):
                if a[name] is not None:
                    _check_text(name, a[name])
            _check_page(tool, a["limit"], a["offset"], dict(args))
            return Parsed(tool, a)
        if tool == "search":
            _check_text("query", a["query"])
            if not a["query"].strip():
                raise _bad("`query` is empty: pass words to look for", example_for(tool))
            _check_page(tool, a["limit"], a["offset"], dict(args))
            return Parsed(tool, a)
        # neighbors
        found = read_ids("ids")
        self.lookup_all(tool, found)
        direction, raw_types = a["direction"], a["edge_types"]
        if not raw_types or len(raw_types) > 16:
            raise _bad("`edge_types` must list 1 to 16 edge types",
                       {"ids": found, "direction": direction, "edge_types": ["CALLS"]})
        keys: list[str] = []
        unknown = []
        for raw in raw_types:
            _check_text("edge_types", raw)
            key = raw.strip().upper()
            ok, parts = self.parse_edge_key(key)
            if ok and parts is not None:
                if key not in keys:
                    keys.append(key)
            else:
                unknown.append(raw)
        if unknown:
            fixed = keys or ["CALLS"]
            raise _bad(f"unknown edge type {', '.join(f'`{u[:80]}`' for u in unknown)}; this graph has "
                       f"{', '.join(self.edge_types())} (chain with dots, e.g. DECLARES.EXPOSES)",
                       {"ids": found, "direction": direction, "edge_types": fixed})
        _check_page(tool, a["limit"], a["offset"], {"ids": found, "direction": direction, "edge_types": raw_types})
        return Parsed(tool, {"ids": found, "direction": direction, "edge_types": keys, "limit": a["limit"],
                             "offset": a["offset"]})

    def works(self, tool: str, args: dict) -> Optional[str]:
        """``None`` when ``tool`` + ``args`` is a working call (ids read
        strictly), else why not: what hint validation asks."""
        try:
            self.parse(tool, args, lambda param: strict_ids(tool, args, param))
            return None
        except ToolError as e:
            return e.message

    # ---- the tools ----------------------------------------------------------------

    def resolve(self, identifier: str, kind: Optional[str] = None) -> dict:
        ident = identifier.strip()
        kind = kind.strip() if kind is not None and kind.strip() else None

        def keep(ix: int) -> bool:
            return kind is None or self.nodes[ix]["kind"].lower() == kind.lower()

        lower = ident.lower()
        hits: list[int] = []
        if is_id(lower) and lower in self.by_id:
            hits = [self.by_id[lower]]
        if not hits:
            hits = [i for i, n in enumerate(self.nodes) if n["fqn"].lower() == lower and keep(i)]
        if not hits:
            tail = lower[_tail_start(lower):]
            hits = [i for i, n in enumerate(self.nodes)
                    if n["fqn"].lower()[_tail_start(n["fqn"].lower()):] == tail
                    and _ends_with_segment(n["fqn"].lower(), lower) and keep(i)]
        if not hits:
            hits = [i for i, n in enumerate(self.nodes) if n["name"].lower() == lower and keep(i)]
        hits = [h for h in hits if keep(h)]
        if len(hits) > 1:
            exact = [h for h in hits if self.nodes[h]["name"] == ident or self.nodes[h]["fqn"] == ident
                     or _ends_with_segment(self.nodes[h]["fqn"], ident)]
            if len(exact) == 1:
                hits = exact
        hits.sort(key=lambda ix: ("external" in self.nodes[ix]["roles"], _kind_rank(self.nodes[ix]["kind"]),
                                  len(self.nodes[ix]["fqn"]), self.nodes[ix]["fqn"], ix))
        total = len(hits)
        status = "none" if total == 0 else "one" if total == 1 else "many"
        return {"status": status, "identifier": ident, "kind": kind,
                "candidates": [self.symbol(h) for h in hits[:MAX_CANDIDATES]]}

    def describe(self, id: str) -> dict:
        ix = self.by_id[id]
        return {"record": self.record(ix), "edge_summary": self.edge_summary([ix])}

    def find(self, kind: Optional[str] = None, role: Optional[str] = None, name: Optional[str] = None,
             path: Optional[str] = None, limit: int = 25, offset: int = 0) -> dict:
        def lc(v: Optional[str]) -> Optional[str]:
            return v.strip().lower() if v is not None and v.strip() else None

        kind, role, name, path = lc(kind), lc(role), lc(name), lc(path)
        hits = [i for i, n in enumerate(self.nodes)
                if (kind is None or n["kind"].lower() == kind)
                and (role is None or role in (r.lower() for r in n["roles"]))
                and (name is None or name in n["name"].lower())
                and (path is None or path in n["file"].lower())]
        results = [self.symbol(i) for i in hits[offset: offset + limit]]
        return _fit_page({"results": results, "total": len(hits), "limit": limit, "offset": offset})

    def search(self, query: str, limit: int = 10, offset: int = 0) -> dict:
        terms = [t for t in query.strip().lower().replace(",", " ").split() if t]
        scored: list[tuple[int, float]] = []
        for i, n in enumerate(self.nodes):
            per_term = [self._score(n, t) for t in terms]
            score = sum(per_term) / len(per_term) if per_term else 0.0
            if score >= MIN_SCORE:
                scored.append((i, round(score, 3)))
        scored.sort(key=lambda s: (-s[1], len(self.nodes[s[0]]["fqn"]), s[0]))
        results = [dict(self.symbol(i), score=s) for i, s in scored[offset: offset + limit]]
        return _fit_page({"query": query, "results": results, "total": len(scored), "limit": limit,
                          "offset": offset})

    @staticmethod
    def _score(n: dict, q: str) -> float:
        name, fqn = n["name"].lower(), n["fqn"].lower()
        if name == q or fqn == q:
            return 1.0
        if _ends_with_segment(fqn, q):
            return 0.95
        if q in name:
            return (0.7 if name.startswith(q) else 0.6) + 0.2 * len(q) / max(len(name), 1)
        if q in fqn:
            return 0.55
        if q in (w.lower() for w in "".join(c if c.isalnum() else " " for c in n["doc"]).split()):
            return 0.45
        return 0.0

    def neighbors(self, ids: list[str], direction: str, edge_types: list[str], limit: int = 25,
                  offset: int = 0) -> dict:
        origins = [self.by_id[i] for i in ids]
        start, end = offset, offset + limit
        total = 0
        window = []
        for o in origins:
            for key in edge_types:
                walked = self.walk(o, direction, key.split("."))
                n = len(walked)
                if total < end and total + n > start:
                    lo = max(start - total, 0)
                    hi = min(end - total, n)
                    window.extend((o, key, other) for other in walked[lo:hi])
                total += n
        result = {
            "ids": [self.nodes[o]["id"] for o in origins], "direction": direction, "edge_types": edge_types,
            "results": [{"origin": self.nodes[o]["id"], "edge": key, "other": self.symbol(other)}
                        for o, key, other in window],
            "total": total, "limit": limit, "offset": offset,
        }
        if total == 0:
            result["available"] = self.edge_summary(origins)
        return _fit_page(result)


def _clip_doc(s: str) -> str:
    if len(s) > MAX_DOC_CHARS:
        return s[:MAX_DOC_CHARS] + f"… ({len(s) - MAX_DOC_CHARS} more characters)"
    return s


def _fit_page(v: dict) -> dict:
    """Shortens a paged result to 48 KiB, at least one result kept
    (``tools::fit_page``)."""
    def size(x: Any) -> int:
        return len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode())

    whole = size(v)
    if whole <= MAX_RESULT_BYTES or not v.get("results"):
        return v
    sizes = [size(r) + 1 for r in v["results"]]
    used = whole - sum(sizes)
    keep = 0
    for s in sizes:
        used += s
        if used > MAX_RESULT_BYTES:
            break
        keep += 1
    keep = max(keep, 1)
    v["results"] = v["results"][:keep]
    v["limit"] = keep
    return v
