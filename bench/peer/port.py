"""The peer's port of Signpost, without MCP: the five tools' semantics
(host/src/tools/, host/graph/src/), the default policy's advice
(hints-component/src/advise.rs, render.rs) and the session's seen ids
(host/src/session.rs), as plain Python. `server.py` serves it over MCP;
`drive.py` builds its call mix from it; `tests/e2e` checks that it answers
the call mix exactly as Signpost does (results, hints, state tags), so this
copy cannot drift from the Rust it ports.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal


HERE = Path(__file__).resolve().parent
DEFAULT_GRAPH = HERE.parent.parent / "host" / "data" / "sample-graph.json"

# Limits mirrored from Signpost (tools.rs, advise.rs, render.rs, session.rs).
MAX_LIMIT = 100
MAX_OFFSET = 1_000_000
MAX_TEXT = 1024
MAX_CANDIDATES = 20
MAX_COMPOSED = 3
MAX_HINTS = 5
MAX_REASON = 120
MAX_HINT_IDS = 10
MAX_DETAILS_SHOWN = 25
MIN_SCORE = 0.2
WEAK_SCORE = 0.5
MAX_SEEN = 512
MAX_IDS_PER_CALL = 64

ID_RE = re.compile(r"^[0-9a-f]{40}$")
EDGE_TYPE_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


def is_id(s: str) -> bool:
    return bool(ID_RE.match(s))


def round_half_away(x: float, places: int = 3) -> float:
    # Rust's f64::round rounds half away from zero; Python's round() is
    # banker's rounding. Scores must print identically on both servers.
    m = 10**places
    return math.floor(x * m + 0.5) / m


def is_control(c: str) -> bool:
    # Rust's char::is_control: the Cc category (C0, DEL, C1).
    return ord(c) < 32 or 127 <= ord(c) < 160


def clip60(s: str) -> str:
    out = "".join(c for c in s[:60] if not is_control(c))
    return out + "…" if len(s) > 60 else out


def compact(v: Any) -> str:
    # serde_json without preserve_order sorts object keys and prints compactly;
    # hint args in the text must read exactly like Signpost's.
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


# ---- graph -------------------------------------------------------------------


class Graph:
    """In-memory indexes over the JSON graph format (docs/graph-format.md)."""

    def __init__(self, doc: dict[str, Any]):
        self.name = doc.get("name") or "graph"
        self.nodes: list[dict[str, Any]] = []
        self.by_id: dict[str, int] = {}
        for i, raw in enumerate(doc["nodes"]):
            node = {
                "id": raw["id"].lower(),
                "kind": raw["kind"],
                "name": raw["name"],
                "fqn": raw.get("fqn", ""),
                "file": raw.get("file", ""),
                "line": raw.get("line", 0),
                "roles": list(raw.get("roles", [])),
                "doc": raw.get("doc", ""),
            }
            if not is_id(node["id"]):
                raise ValueError(f"nodes[{i}].id: `{raw['id']}` is not 40 hex characters")
            if node["id"] in self.by_id:
                raise ValueError(f"nodes[{i}].id: duplicate id {node['id']}")
            self.by_id[node["id"]] = i
            self.nodes.append(node)
        n = len(self.nodes)
        # Adjacency as (edge type, other node) in insertion order, like graph.rs.
        self.out: list[list[tuple[str, int]]] = [[] for _ in range(n)]
        self.inn: list[list[tuple[str, int]]] = [[] for _ in range(n)]
        self.types: set[str] = set()
        seen: set[tuple[int, str, int]] = set()
        for i, e in enumerate(doc.get("edges", [])):
            ty = e["type"]
            if not EDGE_TYPE_RE.match(ty):
                raise ValueError(f"edges[{i}].type: `{ty}` is not an edge type")
            src, dst = self.by_id[e["src"].lower()], self.by_id[e["dst"].lower()]
            self.types.add(ty)
            if (src, ty, dst) not in seen:
                seen.add((src, ty, dst))
                self.out[src].append((ty, dst))
                self.inn[dst].append((ty, src))
        self.by_name: dict[str, list[int]] = {}
        self.by_fqn: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            self.by_name.setdefault(node["name"].lower(), []).append(i)
            if node["fqn"]:
                self.by_fqn.setdefault(node["fqn"].lower(), []).append(i)

    @classmethod
    def load(cls, path: Path) -> Graph:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def symbol(self, ix: int) -> dict[str, Any]:
        n = self.nodes[ix]
        return {k: n[k] for k in ("id", "kind", "name", "fqn", "file", "line", "roles")}

    def parse_edge_key(self, key: str) -> list[str] | None:
        """The chain of types of a (possibly dotted) key, or None if unknown."""
        parts = key.split(".")
        if len(parts) > MAX_COMPOSED or not all(EDGE_TYPE_RE.match(p) for p in parts):
            return None
        if not all(p in self.types for p in parts):
            return None
        return parts

    def walk(self, origin: int, direction: str, chain: list[str]) -> list[int]:
        steps = chain if direction == "out" else list(reversed(chain))
        adj = self.out if direction == "out" else self.inn
        frontier = [origin]
        for ty in steps:
            seen: set[int] = set()
            nxt: list[int] = []
            for n in frontier:
                for t, m in adj[n]:
                    if t == ty and m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
        return frontier

    def edge_summary(self, origins: list[int]) -> dict[str, dict[str, int]]:
        """Distinct nodes reached per edge type and direction, plus the
        composed DECLARES.<type> keys (same definition as graph.rs)."""
        summary: dict[str, dict[str, int]] = {}
        for direction in ("out", "in"):
            adj = self.out if direction == "out" else self.inn
            reach: dict[str, set[int]] = {}
            for o in origins:
                for t, m in adj[o]:
                    reach.setdefault(t, set()).add(m)
                if "DECLARES" not in self.types:
                    continue
                if direction == "out":
                    # o -DECLARES-> m -T-> x
                    for t, m in adj[o]:
                        if t != "DECLARES":
                            continue
                        for t2, x in self.out[m]:
                            if t2 != "DECLARES":
                                reach.setdefault(f"DECLARES.{t2}", set()).add(x)
                else:
                    # x -DECLARES-> m -T-> o
                    for t, m in adj[o]:
                        if t == "DECLARES":
                            continue
                        via = [tv for tv, nv in adj[o] if nv == m and tv != "DECLARES"]
                        for t2, x in self.inn[m]:
                            if t2 == "DECLARES":
                                for v in via:
                                    reach.setdefault(f"DECLARES.{v}", set()).add(x)
            summary[direction] = {k: len(v) for k, v in sorted(reach.items())}
        return summary


# ---- tools ---------------------------------------------------------------------


class ToolFailure(Exception):
    def __init__(self, kind: str, message: str, example: dict | None = None):
        super().__init__(message)
        self.kind, self.message, self.example = kind, message, example

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.example is not None:
            out["example"] = self.example
        return out


def check_text(name: str, text: str) -> None:
    if len(text.encode()) > MAX_TEXT:
        raise ToolFailure("bad_argument", f"`{name}` is {len(text.encode())} bytes; at most {MAX_TEXT}")
    if any(is_control(c) for c in text):
        raise ToolFailure("bad_argument", f"`{name}` contains control characters")


def check_page(tool: str, limit: int, offset: int, example: dict) -> None:
    if limit < 1 or limit > MAX_LIMIT:
        fixed = dict(example, limit=min(max(limit, 1), MAX_LIMIT))
        raise ToolFailure("bad_argument", f"`limit` of {tool} must be 1 to {MAX_LIMIT}, got {limit}", fixed)
    if offset < 0 or offset > MAX_OFFSET:
        raise ToolFailure("bad_argument", f"`offset` must be 0 to {MAX_OFFSET}")


_SPLIT = re.compile(r"[\s,]+")


def coerce_ids(value: Any, param: str, tool: str) -> list[str]:
    """Reads ids from the shapes agents send: a JSON array, a bare id, a
    JSON- or Python-style list string, comma/space-separated ids. A subset of
    Signpost's coercion (hints-component/src/coerce.rs)."""
    tokens: list[str]
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise ToolFailure("invalid_id", f"`{param}` items must be id strings")
        tokens = [v.strip().strip("'\"`") for v in value]
    elif isinstance(value, str):
        text = value.strip().strip("`")
        if text[:1] in "[(" and text[-1:] in "])":
            text = text[1:-1]
        tokens = [t.strip().strip("'\"`") for t in _SPLIT.split(text) if t.strip()]
    else:
        raise ToolFailure("invalid_id", f"`{param}` of {tool} must be a JSON array of id strings")
    ids: list[str] = []
    for t in tokens:
        if not t:
            continue
        low = t.lower()
        if not is_id(low):
            raise ToolFailure(
                "invalid_id",
                f"`{t[:60]}` is not a 40-hex id; resolve a name to get its id",
                {"identifier": t} if re.match(r"^[A-Za-z_][\w.:#/]*$", t) else None,
            )
        if low not in ids:
            ids.append(low)
    if not ids:
        raise ToolFailure("invalid_id", f"`{param}` of {tool} is empty: pass ids from resolve or search")
    return ids


def lookup_all(g: Graph, tool: str, ids: list[str]) -> list[int]:
    unknown = [i for i in ids if i not in g.by_id]
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise ToolFailure(
            "unknown_id",
            f"{tool}: no symbol has id {', '.join(unknown[:3])}{more}. "
            "Ids come from resolve, search, find or neighbors results of this graph.",
        )
    return [g.by_id[i] for i in ids]


def kind_rank(kind: str) -> int:
    if kind in ("class", "interface", "struct", "trait", "enum"):
        return 0
    if kind in ("method", "function"):
        return 1
    if kind in ("route", "topic"):
        return 2
    return 3 if kind == "module" else 4


def run_resolve(g: Graph, identifier: str, kind: str | None) -> dict[str, Any]:
    check_text("identifier", identifier)
    ident = identifier.strip()
    if not ident:
        raise ToolFailure(
            "bad_argument",
            "`identifier` is empty: pass a symbol name, qualified name or id",
            {"identifier": "OrderService"},
        )
    if kind is not None:
        check_text("kind", kind)
    k = kind.strip() if kind and kind.strip() else None

    def keep(ix: int) -> bool:
        return k is None or g.nodes[ix]["kind"].lower() == k.lower()

    lower = ident.lower()
    hits: list[int] = []
    if is_id(lower) and lower in g.by_id:
        hits.append(g.by_id[lower])
    by_fqn, by_name = g.by_fqn.get(lower, []), g.by_name.get(lower, [])
    if not hits:
        hits = [i for i in by_fqn if keep(i)]
    if not hits:
        suffixes = (f".{lower}", f"::{lower}", f"/{lower}", f" {lower}")
        hits = [i for i, n in enumerate(g.nodes) if n["fqn"].lower().endswith(suffixes) and keep(i)]
    if not hits:
        hits = [i for i in by_name if keep(i)]
    hits = [i for i in hits if keep(i)]
    if len(hits) > 1:
        # Names that differ only in case: the exact spelling wins if unique.
        dotted = f".{ident}"
        exact = [
            i
            for i in hits
            if g.nodes[i]["name"] == ident or g.nodes[i]["fqn"] == ident or g.nodes[i]["fqn"].endswith(dotted)
        ]
        if len(exact) == 1:
            hits = exact
    hits.sort(key=lambda i: (kind_rank(g.nodes[i]["kind"]), len(g.nodes[i]["fqn"]), g.nodes[i]["fqn"]))
    hits = hits[:MAX_CANDIDATES]
    status = "none" if not hits else "one" if len(hits) == 1 else "many"
    return {"status": status, "identifier": ident, "kind": k, "candidates": [g.symbol(i) for i in hits]}


def run_describe(g: Graph, id_value: Any) -> dict[str, Any]:
    ids = coerce_ids(id_value, "id", "describe")
    if len(ids) != 1:
        raise ToolFailure("invalid_id", f"describe takes one id, got {len(ids)}: call it once per id", {"id": ids[0]})
    ix = lookup_all(g, "describe", ids)[0]
    return {"record": dict(g.nodes[ix]), "edge_summary": g.edge_summary([ix])}


def run_find(g: Graph, args: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    filters = {}
    for name in ("kind", "role", "name", "path"):
        v = args.get(name)
        if v is not None:
            check_text(name, v)
            if v.strip():
                filters[name] = v.strip().lower()
    limit, offset = args["limit"], args["offset"]
    check_page("find", limit, offset, sent)  # the example repeats what was sent
    hits = []
    for i, n in enumerate(g.nodes):
        if "kind" in filters and n["kind"].lower() != filters["kind"]:
            continue
        if "role" in filters and not any(r.lower() == filters["role"] for r in n["roles"]):
            continue
        if "name" in filters and filters["name"] not in n["name"].lower():
            continue
        if "path" in filters and filters["path"] not in n["file"].lower():
            continue
        hits.append(i)
    page = hits[offset : offset + limit]
    return {"results": [g.symbol(i) for i in page], "total": len(hits), "limit": limit, "offset": offset}


def _subsequence(q: str, s: str) -> float | None:
    pos, first, last = 0, None, 0
    for qc in q:
        i = s.find(qc, pos)
        if i < 0:
            return None
        if first is None:
            first = i
        last, pos = i, i + 1
    span = last - (first or 0) + 1
    return max(span / len(q), 1.0)


def _single(q: str, name: str, fqn: str, doc: str) -> float:
    if not q:
        return 0.0
    if name == q or fqn == q:
        return 1.0
    if fqn.endswith("." + q):
        return 0.95
    coverage = len(q) / max(len(name), 1)
    if name.startswith(q):
        return 0.7 + 0.2 * coverage
    if q in name:
        return 0.6 + 0.2 * coverage
    if q in fqn:
        return 0.55
    if q in re.split(r"[^0-9a-z]+", doc):
        return 0.45
    if len(q) < 3:
        return 0.0
    spread = _subsequence(q, name)
    return 0.0 if spread is None else 0.25 + 0.2 * min(coverage, 1.0) / spread


def rank(g: Graph, query: str) -> list[tuple[int, float]]:
    """Same signals and weights as host/graph/src/search.rs."""
    q = query.strip().lower()
    words = [w for w in re.split(r"[\s,]+", q) if w]
    hits = []
    for i, n in enumerate(g.nodes):
        name, fqn = n["name"].lower(), n["fqn"].lower()
        if len(words) > 1:
            doc = n["doc"].lower()
            per = sum(1.0 if w in name else 0.8 if w in fqn else 0.5 if w in doc else 0.0 for w in words)
            score = 0.9 * per / len(words)
        else:
            score = _single(q, name, fqn, n["doc"].lower())
        if score >= MIN_SCORE:
            hits.append((i, round_half_away(score)))
    hits.sort(key=lambda h: (-h[1], len(g.nodes[h[0]]["fqn"]), g.nodes[h[0]]["fqn"]))
    return hits


def run_search(g: Graph, query: str, limit: int, offset: int) -> dict[str, Any]:
    check_text("query", query)
    if not query.strip():
        raise ToolFailure("bad_argument", "`query` is empty: pass words to look for", {"query": "order"})
    check_page("search", limit, offset, {"query": query, "limit": limit, "offset": offset})
    scored = rank(g, query)
    results = [dict(g.symbol(i), score=s) for i, s in scored[offset : offset + limit]]
    return {"query": query, "results": results, "total": len(scored), "limit": limit, "offset": offset}


def run_neighbors(
    g: Graph, ids_value: Any, direction: str, edge_types: list[str], limit: int, offset: int
) -> dict[str, Any]:
    ids = coerce_ids(ids_value, "ids", "neighbors")
    origins = lookup_all(g, "neighbors", ids)
    if not edge_types or len(edge_types) > 16:
        raise ToolFailure(
            "bad_argument",
            "`edge_types` must list 1 to 16 edge types",
            {"ids": ids, "direction": direction, "edge_types": ["CALLS"]},
        )
    keys: list[tuple[str, list[str]]] = []
    unknown = []
    for raw in edge_types:
        check_text("edge_types", raw)
        key = raw.strip().upper()
        chain = g.parse_edge_key(key)
        if chain is None:
            unknown.append(raw)
        elif all(k != key for k, _ in keys):
            keys.append((key, chain))
    if unknown:
        fixed = [k for k, _ in keys] or ["CALLS"]
        raise ToolFailure(
            "bad_argument",
            f"unknown edge type {', '.join(f'`{u[:80]}`' for u in unknown)}; this graph has "
            f"{', '.join(sorted(g.types))} (chain with dots, e.g. DECLARES.EXPOSES)",
            {"ids": ids, "direction": direction, "edge_types": fixed},
        )
    check_page("neighbors", limit, offset, {"ids": ids, "direction": direction, "edge_types": edge_types})
    found = [(o, key, other) for o in origins for key, chain in keys for other in g.walk(o, direction, chain)]
    result: dict[str, Any] = {
        "ids": [g.nodes[o]["id"] for o in origins],
        "direction": direction,
        "edge_types": [k for k, _ in keys],
        "results": [
            {"origin": g.nodes[o]["id"], "edge": key, "other": g.symbol(other)}
            for o, key, other in found[offset : offset + limit]
        ],
        "total": len(found),
        "limit": limit,
        "offset": offset,
    }
    if not found:
        result["available"] = g.edge_summary(origins)
    return result


# ---- advice: the default policy's catalogue, ported from advise.rs -------------


def hint(tool: str, args: dict, reason: str, actionable: bool = True) -> dict[str, Any]:
    return {"tool": tool, "args": args, "actionable": actionable, "reason": reason}


def rec_fqn(r: dict) -> str:
    return r.get("fqn") or r.get("name", "")


def rec_line(r: dict) -> str:
    score = f" ({r['score']:.2f})" if isinstance(r.get("score"), (int, float)) else ""
    return f"{r.get('id', '')} {r.get('kind', '')} {rec_fqn(r)}{score}"


def rec_location(r: dict) -> str | None:
    if not r.get("file"):
        return None
    return f"{r['file']}:{r['line']}" if isinstance(r.get("line"), int) else r["file"]


def describe_hint(r: dict, reason: str) -> list[dict]:
    return [hint("describe", {"id": r["id"]}, reason)] if r.get("id") else []


def neighbors_hint(ids: list[str], direction: str, edge: str, reason: str) -> dict:
    return hint("neighbors", {"ids": ids, "direction": direction, "edge_types": [edge]}, reason)


def next_page(tool: str, args: dict, result: dict) -> list[dict]:
    total, limit, offset = result.get("total", 0), result.get("limit", 0), result.get("offset", 0)
    shown = len(result.get("results", []))
    nxt = offset + shown
    if shown == 0 or nxt >= total:
        return []
    a = dict(args)
    if tool == "neighbors":
        a["ids"] = result.get("ids")
    a["offset"] = nxt
    if limit > 0:
        a["limit"] = limit
    return [hint(tool, a, f"next page: {total - nxt} more")]


def member_or_caller_hint(r: dict) -> list[dict]:
    i, kind = r["id"], r.get("kind")
    if kind in ("class", "interface", "module", "enum", "struct", "trait"):
        return [neighbors_hint([i], "out", "DECLARES", "list its members")]
    if kind in ("method", "function"):
        return [neighbors_hint([i], "in", "CALLS", "who calls it")]
    if kind == "route":
        return [neighbors_hint([i], "in", "EXPOSES", "the handler serving this route")]
    if kind == "topic":
        return [neighbors_hint([i], "in", "PUBLISHES", "who publishes to it")]
    return []


def unique_suffix(fqn: str, all_fqns: list[str]) -> str | None:
    dots = [i for i, c in enumerate(fqn) if c == "."]
    for dot in list(reversed(dots))[1:] + [None]:
        suffix = fqn if dot is None else fqn[dot + 1 :]
        needle = "." + suffix.lower()
        clash = any(o != fqn and (o.lower() == suffix.lower() or o.lower().endswith(needle)) for o in all_fqns)
        if not clash:
            return suffix
    return None


def advise_resolve(args: dict, result: dict) -> dict:
    identifier = args.get("identifier") or ""
    kind = args.get("kind") or None
    cands = result["candidates"]
    hints: list[dict] = []
    if result["status"] == "one" and cands:
        r = cands[0]
        hints += describe_hint(r, "see its record and edge summary")
        hints += member_or_caller_hint(r)
        details = [f"id {r['id']}"] + [x for x in [rec_location(r)] if x]
        return advice("resolved", f"{identifier} → {r['kind']} {rec_fqn(r)}", details, hints)
    if result["status"] == "many":
        kinds = sorted({c["kind"] for c in cands})
        if kind is None and len(kinds) > 1:
            for k in kinds[:2]:
                hints.append(hint("resolve", {"identifier": identifier, "kind": k}, f"narrow to the {k}"))
        fqns = [rec_fqn(c) for c in cands]
        for fqn in fqns[:2]:
            suffix = unique_suffix(fqn, fqns)
            if suffix and suffix.lower() != identifier.lower():
                hints.append(hint("resolve", {"identifier": suffix}, f"narrow by qualifying the name: {suffix}"))
        for c in cands[:3]:
            hints += describe_hint(c, f"candidate: {rec_fqn(c)}")
        names = " or ".join(rec_fqn(c) for c in cands[:4])
        return advice(
            "ambiguous",
            f"{identifier} matches {len(cands)} symbols",
            [rec_line(c) for c in cands],
            hints,
            ask_user=f"which {identifier} is meant: {names}?",
        )
    if identifier:
        hints.append(hint("search", {"query": identifier}, "no exact match — try ranked fuzzy lookup"))
        if kind:
            hints.append(hint("resolve", {"identifier": identifier}, f"nothing of kind {kind}; drop the kind filter"))
        last = next((s for s in reversed(re.split(r"[.:/#]", identifier)) if s), identifier)
        hints.append(hint("find", {"name": last}, "browse symbols whose name contains it"))
    return advice(
        "not_found",
        f"no symbol named {identifier}",
        ["resolve matches exact names, qualified names or ids"],
        hints,
    )


# (direction, key, reason) in the default policy's priority order.
DESCRIBE_SIGNS = [
    ("out", "DECLARES.EXPOSES", "routes exposed by its members"),
    ("in", "EXPOSES", "the handler serving this route"),
    ("in", "OVERRIDES", "overridden by"),
    ("out", "TARGETS", "endpoints this client calls"),
    ("in", "TARGETS", "clients that call this route"),
    ("in", "CALLS", "callers"),
    ("in", "IMPLEMENTS", "implementations"),
    ("in", "EXTENDS", "subclasses"),
    ("out", "PUBLISHES", "topics it publishes to"),
    ("in", "PUBLISHES", "publishers of this topic"),
    ("in", "SUBSCRIBES", "subscribers of this topic"),
    ("out", "DECLARES.PUBLISHES", "topics its members publish to"),
    ("out", "DECLARES", "members"),
    ("out", "CALLS", "calls"),
    ("out", "OVERRIDES", "the method it overrides"),
    ("out", "IMPLEMENTS", "interfaces it implements"),
    ("out", "EXTENDS", "its superclass"),
    ("in", "REFERENCES", "referenced by"),
    ("in", "DECLARES", "declared in"),
]


def advise_describe(result: dict) -> dict:
    r = result["record"]
    summary = result["edge_summary"]
    hints = []
    for direction, key, why in DESCRIBE_SIGNS:
        n = summary.get(direction, {}).get(key, 0)
        if n > 0:
            hints.append(neighbors_hint([r["id"]], direction, key, f"{why} ({n})"))
    if not hints and r.get("file"):
        hints.append(hint("find", {"path": r["file"]}, "no edges; other symbols in the same file"))
    details = [f"id {r['id']}"] + [x for x in [rec_location(r)] if x]
    if r.get("roles"):
        details.append(f"roles: {', '.join(r['roles'])}")
    if r.get("doc"):
        details.append(f"doc: {clip60(r['doc'])}")
    for direction in ("out", "in"):
        side = summary.get(direction, {})
        if side:
            details.append(f"{direction}: {', '.join(f'{k} {n}' for k, n in sorted(side.items()))}")
    return advice("record", f"{r['kind']} {rec_fqn(r)}", details, hints)


def advise_find(args: dict, result: dict) -> dict:
    results = result["results"]
    filters = [f"{k}={args[k]}" for k in ("kind", "role", "name", "path") if args.get(k)]
    filter_text = " ".join(filters) if filters else "no filter"
    hints = next_page("find", args, result)
    if results:
        hints += describe_hint(results[0], f"inspect {rec_fqn(results[0])}")
        return advice(
            "listing",
            f"{len(results)} of {result['total']} symbols match {filter_text}",
            [rec_line(x) for x in results],
            hints,
        )
    if args.get("name"):
        hints.append(hint("search", {"query": args["name"]}, "no name contains it; try fuzzy search"))
    for drop in ("path", "name", "role", "kind"):
        if args.get(drop) and len(filters) > 1:
            narrower = {k: args[k] for k in ("kind", "role", "name", "path") if k != drop and args.get(k)}
            hints.append(hint("find", narrower, f"nothing matched; drop the {drop} filter"))
            break
    if not hints:
        hints.append(hint("find", {}, "nothing matched; browse without filters"))
    return advice("empty", f"no symbols match {filter_text}", [], hints)


def advise_search(args: dict, result: dict) -> dict:
    query = args.get("query") or ""
    results = result["results"]
    hints: list[dict] = []
    if results:
        first = results[0]
        top = first.get("score", 0.0)
        tag = "results"
        if top < WEAK_SCORE:
            tag = "weak_results"
            hints.append(
                hint(
                    "search",
                    {},
                    "results look weak — use a more specific name, or find with a kind/role filter",
                    actionable=False,
                )
            )
            if first.get("kind"):
                hints.append(
                    hint(
                        "find",
                        {"kind": first["kind"], "name": query},
                        f"browse {first['kind']}s whose name contains the query",
                    )
                )
        hints += describe_hint(first, f"best match: {rec_fqn(first)}")
        if len(results) > 1 and top - results[1].get("score", 0.0) < 0.05:
            hints += describe_hint(results[1], f"close second: {rec_fqn(results[1])}")
        hints += next_page("search", args, result)
        summary = f'{len(results)} of {result["total"]} matches for "{clip60(query)}"'
    else:
        tag = "empty"
        words = query.split()
        if len(words) > 1:
            longest = max(words, key=len)
            hints.append(hint("search", {"query": longest}, "nothing matched all words; try the most specific one"))
        hints.append(hint("find", {}, "nothing matched; browse symbols instead"))
        summary = f'nothing matches "{clip60(query)}"'
    return advice(tag, summary, [rec_line(x) for x in results], hints)


# Continuations: after neighbors along (edge, direction), the next natural step.
CONTINUATIONS = {
    ("CALLS", "in"): ("in", "CALLS", "callers of these callers"),
    ("CALLS", "out"): ("out", "CALLS", "what these call in turn"),
    ("DECLARES.EXPOSES", "out"): ("in", "TARGETS", "clients calling these routes"),
    ("EXPOSES", "out"): ("in", "TARGETS", "clients calling these routes"),
    ("TARGETS", "out"): ("in", "EXPOSES", "handlers serving these routes"),
    ("EXPOSES", "in"): ("in", "CALLS", "callers of this handler"),
    ("OVERRIDES", "in"): ("in", "CALLS", "callers of the overriders"),
    ("IMPLEMENTS", "in"): ("out", "DECLARES", "members of these types"),
    ("EXTENDS", "in"): ("out", "DECLARES", "members of these types"),
    ("PUBLISHES", "out"): ("in", "SUBSCRIBES", "subscribers of these topics"),
}


def advise_neighbors(args: dict, result: dict) -> dict:
    results = result["results"]
    direction = args.get("direction") or "out"
    ids = result["ids"]
    edges = [e for e in args.get("edge_types", []) if isinstance(e, str)]
    edge_text = ",".join(edges)
    if not results:
        hints = corrected_neighbors(result, ids, direction, edges)
        if ids:
            hints.append(hint("describe", {"id": ids[0]}, "see which edges it has"))
        return advice("empty", f"no {direction} {edge_text} edges", [], hints)
    hints = next_page("neighbors", args, result)
    others = [x["other"] for x in results]
    other_ids: list[str] = []
    for o in others:
        # Rust's Vec::dedup removes consecutive duplicates only.
        if o["id"] and (not other_ids or other_ids[-1] != o["id"]):
            other_ids.append(o["id"])
    other_ids = other_ids[:MAX_HINT_IDS]
    for edge in edges:
        cont = CONTINUATIONS.get((edge, direction))
        if cont and other_ids:
            hints.append(neighbors_hint(other_ids, *cont))
    hints += describe_hint(others[0], f"inspect {rec_fqn(others[0])}")
    arrow = "<-" if direction == "in" else "->"
    details = [f"{arrow}{x['edge']} {rec_line(x['other'])}" for x in results]
    return advice(
        "neighbors", f"{len(results)} of {result['total']} {direction} {edge_text} neighbors", details, hints
    )


def corrected_neighbors(result: dict, ids: list[str], direction: str, edges: list[str]) -> list[dict]:
    available = result.get("available")
    if not available:
        return []

    def side(d: str) -> list[tuple[str, int]]:
        return sorted(available.get(d, {}).items(), key=lambda kv: (-kv[1], kv[0]))

    flipped = "out" if direction == "in" else "in"
    hints = []
    in_flipped = [k for k, _ in side(flipped) if k in edges]
    if in_flipped:
        hints.append(
            hint(
                "neighbors",
                {"ids": ids, "direction": flipped, "edge_types": in_flipped},
                f"these edges run {flipped}, not {direction}",
            )
        )
    here = side(direction)
    if here:
        key, n = here[0]
        have = ", ".join(f"{k} {c}" for k, c in here[:4])
        hints.append(
            hint(
                "neighbors",
                {"ids": ids, "direction": direction, "edge_types": [key]},
                f"no such edges; {direction} edges here: {have} ({n} {key})",
            )
        )
    return hints


def advise_failure(tool: str, err: ToolFailure) -> dict:
    hints = []
    tag = {"invalid_id": "invalid_id", "unknown_id": "not_found", "bad_argument": "bad_argument"}.get(err.kind, "error")
    if err.kind == "invalid_id" and err.example and "identifier" in err.example:
        hints.append(hint("resolve", err.example, "a name where an id belongs: resolve it to get the id"))
    elif err.kind == "unknown_id":
        hints.append(
            hint(
                "search",
                {},
                "no symbol has this id; ids come from resolve, search or find results of this graph",
                actionable=False,
            )
        )
    elif err.kind == "bad_argument" and err.example:
        hints.append(hint(tool, err.example, "a corrected call"))
    return advice(tag, f"{tool} failed: {err.message}", [], hints)


def advice(tag: str, summary: str, details: list[str], hints: list[dict], ask_user: str | None = None) -> dict:
    return {"state_tag": tag, "summary": summary, "details": details, "hints": hints, "ask_user": ask_user}


def tidy(hints: list[dict], budget: int) -> list[dict]:
    """At most `budget` hints, no duplicate tool+args, reasons cut to MAX_REASON."""
    out: list[dict] = []
    keys: set[tuple] = set()
    for h in hints:
        key = (h["tool"], compact(h["args"]), h["actionable"])
        if key in keys:
            continue
        keys.add(key)
        if len(h["reason"]) > MAX_REASON:
            h = dict(h, reason=h["reason"][: MAX_REASON - 1] + "…")
        out.append(h)
        if len(out) >= budget:
            break
    return out


def render(a: dict) -> str:
    """The terse text, same layout as hints-component/src/render.rs."""
    lines = [f"[{a['state_tag']}] {a['summary']}"]
    lines += a["details"][:MAX_DETAILS_SHOWN]
    if len(a["details"]) > MAX_DETAILS_SHOWN:
        lines.append(f"… {len(a['details']) - MAX_DETAILS_SHOWN} more in structuredContent")
    for h in a["hints"]:
        if h["actionable"]:
            lines.append(f"→ next: {h['tool']} {compact(h['args'])}" + (f" — {h['reason']}" if h["reason"] else ""))
        else:
            lines.append(f"note: {h['reason']}")
    if a.get("ask_user"):
        lines.append(f"? ask user: {a['ask_user']}")
    return "\n".join(lines)


# ---- sessions: which ids an agent has seen (session.rs) -----------------------


class History:
    def __init__(self) -> None:
        self.seen: OrderedDict[str, None] = OrderedDict()

    def record(self, result: dict | None) -> None:
        for i in result_ids(result) if result else []:
            self.seen.pop(i, None)
            if len(self.seen) >= MAX_SEEN:
                self.seen.popitem(last=False)
            self.seen[i] = None


def result_ids(result: Any) -> list[str]:
    out: list[str] = []

    def walk(v: Any, depth: int) -> None:
        if len(out) >= MAX_IDS_PER_CALL or depth > 6:
            return
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, str):
                    if k in ("id", "origin") and is_id(x) and x not in out and len(out) < MAX_IDS_PER_CALL:
                        out.append(x)
                elif isinstance(x, (dict, list)) and k != "hints":
                    walk(x, depth + 1)
        elif isinstance(v, list):
            for x in v:
                walk(x, depth + 1)

    walk(result, 0)
    return out


def prerequisites(tool: str, args: dict, history: History) -> list[dict]:
    param = {"describe": "id", "neighbors": "ids"}.get(tool)
    if param is None:
        return []
    try:
        ids = coerce_ids(args.get(param), param, tool)
    except ToolFailure:
        return []
    unseen = sum(1 for i in ids if i not in history.seen)
    if unseen == 0:
        return []
    what = "this id" if len(ids) == 1 else f"{unseen} of these ids"
    return [
        hint(
            "resolve",
            {},
            f"{what} not seen in this session; ids come from resolve/search/find",
            actionable=False,
        )
    ]


# ---- one call, as Signpost's pipeline answers it ---------------------------------


def run_tool(g: Graph, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's result for the arguments an agent sent (defaults as the
    MCP tools declare them)."""
    if tool == "resolve":
        return run_resolve(g, args["identifier"], args.get("kind"))
    if tool == "describe":
        return run_describe(g, args["id"])
    if tool == "find":
        full = {k: args.get(k) for k in ("kind", "role", "name", "path")}
        full.update(limit=args.get("limit", 25), offset=args.get("offset", 0))
        return run_find(g, full, args)
    if tool == "search":
        return run_search(g, args["query"], args.get("limit", 10), args.get("offset", 0))
    if tool == "neighbors":
        return run_neighbors(
            g, args["ids"], args["direction"], args["edge_types"], args.get("limit", 25), args.get("offset", 0)
        )
    raise ValueError(f"unknown tool {tool}")


def answer(g: Graph, tool: str, args: dict, history: History, run=None) -> tuple[dict, str, bool]:
    """One call end to end: prerequisites, the tool, advice, text; the same
    response shape as Signpost's pipeline (result or {error} plus hints):
    (structured content, text, is_error)."""
    pre = prerequisites(tool, args, history)
    try:
        result = run() if run is not None else run_tool(g, tool, args)
    except ToolFailure as err:
        a = advise_failure(tool, err)
        a["hints"] = pre + tidy(a["hints"], MAX_HINTS - len(pre))
        history.record(None)
        return {"error": err.as_json(), "hints": a["hints"]}, render(a), True
    a = ADVISE[tool](args, result)
    a["hints"] = pre + tidy(a["hints"], MAX_HINTS - len(pre))
    history.record(result)
    return dict(result, hints=a["hints"]), render(a), False


ADVISE = {
    "resolve": advise_resolve,
    "describe": lambda args, result: advise_describe(result),
    "find": advise_find,
    "search": advise_search,
    "neighbors": advise_neighbors,
}

# Sample symbols: a controller, a qualified method, a service, an HTTP client,
# a topic and an ambiguous name, so the mix touches every hint family.
SAMPLE_SYMBOLS = [
    "OrderController",
    "OrderService.placeOrder",
    "PaymentService",
    "StripeClient",
    "kafka:order-events",
    "validate",
]


def call_mix() -> list[tuple[str, dict[str, Any]]]:
    """Per sample symbol: resolve, describe, neighbors (the default policy's
    first suggestion after describe), search, find. Built once from the graph
    so both servers receive byte-identical arguments."""
    g = Graph.load(DEFAULT_GRAPH)
    mix: list[tuple[str, dict[str, Any]]] = []
    for ident in SAMPLE_SYMBOLS:
        mix.append(("resolve", {"identifier": ident}))
        res = run_resolve(g, ident, None)
        top = res["candidates"][0]
        mix.append(("describe", {"id": top["id"]}))
        desc = run_describe(g, top["id"])
        first = next((h for h in advise_describe(desc)["hints"] if h["tool"] == "neighbors"), None)
        if first is None:
            first = {"args": {"ids": [top["id"]], "direction": "in", "edge_types": ["DECLARES"]}}
        mix.append(("neighbors", first["args"]))
        mix.append(("search", {"query": top["name"].lower()}))
        role = (top["roles"] or [None])[0]
        mix.append(("find", {"kind": top["kind"], **({"role": role} if role else {})}))
    return mix


def main() -> None:
    """`python port.py`: the call mix answered in one session, as JSON lines
    of {tool, args, structured, text, is_error} (what tests/e2e compares)."""
    g = Graph.load(DEFAULT_GRAPH)
    history = History()
    for tool, args in call_mix():
        structured, text, is_error = answer(g, tool, args, history)
        print(json.dumps({"tool": tool, "args": args, "structured": structured, "text": text, "is_error": is_error}))


if __name__ == "__main__":
    main()
