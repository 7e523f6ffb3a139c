"""`trail`: a Signpost policy in Python, built with componentize-py, for
signpost:policy@0.3.0 (wit/policy.wit).

Its philosophy differs from the two Rust policies:

- ids: anything that contains 40-hex ids is accepted (a JSON list, a list
  written as text, commas, spaces, quotes); every 40-hex run is taken,
  lowercased and deduplicated in order. Nothing else is guessed.
- hints: at most three, and each one leads somewhere new: a symbol already
  shown to the agent in this session (the host's `seen-ids`) is not
  suggested again (the policy asks the host: `host.has_seen`).
- text: one `trail:` line, the details indented, then `then:` lines.
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host
from wit_world.imports.types import (
    Advice,
    BeforeCall,
    CoercionError,
    Hint,
    Outcome_Failure,
    PolicyInfo,
)

NAME = "trail"
VERSION = "0.1.0"
MAX_HINTS = 3
MAX_IDS = 256
ID = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{40}(?![0-9A-Fa-f])")


def _hint(tool, args, reason):
    return Hint(tool=tool, args=json.dumps(args, separators=(",", ":")), actionable=True, reason=reason)


def _field(value, key):
    got = value.get(key) if isinstance(value, dict) else None
    return got if isinstance(got, str) else ""


def _items(value, key):
    got = value.get(key) if isinstance(value, dict) else None
    return [item for item in got if isinstance(item, dict)] if isinstance(got, list) else []


def _ids_in(value):
    """Every 40-hex id in `value` (a string or a list of strings), lowercased, in order."""
    if isinstance(value, str):
        found = ID.findall(value)
        rest = ID.sub("", value)
        # Ids must be all there is: separators, brackets and quotes only.
        if re.search(r"[^\s,;\[\]()'\"`]", rest):
            return None
        return [i.lower() for i in found]
    if isinstance(value, list):
        out = []
        for item in value:
            if not isinstance(item, str):
                return None
            ids = _ids_in(item)
            if ids is None or len(ids) != 1:
                return None
            out.extend(ids)
        return out
    return None


class Policy(exports.Policy):
    def identity(self):
        return PolicyInfo(name=NAME, version=VERSION)

    def catalogue(self, tools):
        return []  # no rules: Signpost's own tools need none

    def coerce_ids(self, call, param):
        try:
            args = json.loads(call.args)
        except (ValueError, RecursionError):  # not JSON, or nested too deep
            args = {}
        ids = _ids_in(args.get(param) if isinstance(args, dict) else None)
        if ids:
            unique = list(dict.fromkeys(ids))
            if param != "id" or len(unique) == 1:
                if len(unique) <= MAX_IDS:
                    return unique
        if param == "id":
            example = {"id": "<40-hex id from resolve>"}
            wanted = "one 40-hex id"
        else:
            example = {"ids": ["<40-hex id from resolve>"], "direction": "out", "edge_types": ["CALLS"]}
            wanted = f"1 to {MAX_IDS} 40-hex ids"
        raise Err(
            CoercionError(
                message=f"trail: `{param}` of {call.tool} must hold {wanted}; names go through resolve first",
                example=json.dumps(example, separators=(",", ":")),
            )
        )

    def prerequisites(self, call):
        return BeforeCall(hints=[], hold=None)

    def advise(self, call, outcome):
        if isinstance(outcome, Outcome_Failure):
            return Advice(
                state_tag="error",
                summary=f"{call.tool} failed: {outcome.value.message}",
                details=[],
                hints=[],
                ask_user=None,
            )
        try:
            result = json.loads(outcome.value)
        except (ValueError, RecursionError):  # not JSON, or nested too deep
            result = {}
        # The symbols of this answer the session saw in an earlier result:
        # one host call, about the ids this answer could suggest.
        rows = _items(result, "candidates") + _items(result, "results")
        shown = [_field(r, "id") for r in rows] + [_field(r.get("other"), "id") for r in rows]
        shown = [i for i in dict.fromkeys(shown) if i]
        seen = {i for i, was in zip(shown, host.has_seen(shown)) if was} if shown else set()
        hints = []
        details = []

        def visit(node, reason):
            node_id = _field(node, "id")
            if node_id and node_id not in seen and len(hints) < MAX_HINTS:
                seen.add(node_id)
                hints.append(_hint("describe", {"id": node_id}, reason))

        if call.tool == "resolve":
            candidates = _items(result, "candidates")
            for c in candidates:
                details.append(f"{_field(c, 'id')} {_field(c, 'fqn')}")
                visit(c, "unvisited candidate")
            if not candidates and _field(result, "identifier"):
                hints.append(_hint("search", {"query": _field(result, "identifier")}, "no symbol by that name"))
            summary = f"{len(candidates)} candidate(s)"
        elif call.tool == "describe":
            record = result.get("record") if isinstance(result, dict) else None
            record = record if isinstance(record, dict) else {}
            summary = f"{_field(record, 'kind')} {_field(record, 'fqn')}"
            edges = result.get("edge_summary") if isinstance(result, dict) else None
            for direction in ("out", "in"):
                counts = edges.get(direction) if isinstance(edges, dict) else None
                if isinstance(counts, dict) and counts and len(hints) < MAX_HINTS:
                    key = max(counts, key=lambda k: counts[k] if isinstance(counts[k], int) else 0)
                    details.append(f"{direction}: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
                    args = {"ids": [_field(record, "id")], "direction": direction, "edge_types": [key]}
                    way = "outgoing" if direction == "out" else "incoming"
                    hints.append(_hint("neighbors", args, f"follow its {way} {key} edges"))
        elif call.tool == "neighbors":
            rows = _items(result, "results")
            for row in rows:
                other = row.get("other") if isinstance(row.get("other"), dict) else {}
                details.append(f"{_field(row, 'edge')} {_field(other, 'id')} {_field(other, 'fqn')}")
                visit(other, "next stop on the trail")
            summary = f"{len(rows)} neighbor(s)"
        else:
            rows = _items(result, "results")
            for row in rows:
                details.append(f"{_field(row, 'id')} {_field(row, 'fqn')}")
                visit(row, "unvisited result")
            summary = f"{len(rows)} result(s)"
        tag = "ok" if details else "empty"
        return Advice(state_tag=tag, summary=summary, details=details, hints=hints[:MAX_HINTS], ask_user=None)

    def render(self, call, advice):
        lines = [f"trail: [{advice.state_tag}] {advice.summary}"]
        lines += [f"  {d}" for d in advice.details]
        lines += [f"then: {h.tool} {h.args}  # {h.reason}" for h in advice.hints]
        return "\n".join(lines)
