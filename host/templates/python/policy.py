"""`{{name}}`: a Signpost hint policy in Python (signpost:policy@0.3.0).

Signpost calls these methods on every tool call, in this order:
prerequisites (before the tool runs), coerce_ids (only for id arguments the
host cannot read strictly), then the tool, advise, and render. Everything
arrives as plain data: JSON travels as text, records are dataclasses.

What this policy does, on Signpost's code-graph tools:
- ids: reads a JSON array written as a string, or ids separated by commas
  or spaces; anything else gets a teaching error with an example;
- hints: after resolve, search, find and neighbors, describe the first
  symbol the session has not seen yet (it asks the host: `host.has_seen`);
  after describe, follow its most common edge; after a failed call, the
  error's example when it is a complete call;
- text: `[state_tag] summary`, the details, a `→ next: TOOL {json}` line per
  actionable hint and a `note:` line per piece of advice.

Build: ./build.sh; check: signpost policy check policy.wasm.
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
    ErrorKind,
    Hint,
    Outcome_Failure,
    PolicyInfo,
)

NAME = "{{name}}"
VERSION = "0.1.0"
MAX_DETAILS = 10
MAX_IDS = 256
ID = re.compile(r"^[0-9a-fA-F]{40}$")


# ---- small helpers ----------------------------------------------------------


def _json(text):
    """Parses JSON text; anything unreadable reads as an empty object."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _dump(value):
    return json.dumps(value, separators=(",", ":"))


def _call(tool, args, reason):
    """An actionable hint: a complete call the agent can send as it is."""
    return Hint(tool=tool, args=_dump(args), actionable=True, reason=reason)


def _note(tool, reason):
    """Advice that is not a call to send as it is (its args stay `{}`)."""
    return Hint(tool=tool, args="{}", actionable=False, reason=reason)


def _str(value, key):
    got = value.get(key) if isinstance(value, dict) else None
    return got if isinstance(got, str) else ""


def _rows(value, key):
    got = value.get(key) if isinstance(value, dict) else None
    return [row for row in got if isinstance(row, dict)] if isinstance(got, list) else []


def _advice(tag, summary, details=(), hints=()):
    return Advice(state_tag=tag, summary=summary, details=list(details), hints=list(hints), ask_user=None)


def _read_ids(value):
    """The ids in `value`: a JSON array written as a string (`"[\\"…\\"]"`)
    or ids separated by commas or spaces; lowercased, deduplicated in order.
    None when anything else is in it."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, str) and ID.match(v.strip()) for v in value):
        return None
    return list(dict.fromkeys(v.strip().lower() for v in value))


def _describe_unseen(symbols, reason):
    """A `describe` hint for the first of `symbols` the session has not seen
    in an earlier result (`host.has_seen` answers within advise and
    prerequisites only), or no hint."""
    ids = [_str(s, "id") for s in symbols if _str(s, "id")]
    if not ids:
        return []
    for symbol_id, seen in zip(ids, host.has_seen(ids)):
        if not seen:
            return [_call("describe", {"id": symbol_id}, reason)]
    return []


# ---- what to say after each tool ---------------------------------------------


def _resolve(args, result):
    candidates = _rows(result, "candidates")
    name = _str(args, "identifier")
    details = [f"{_str(c, 'kind')} {_str(c, 'fqn')}" for c in candidates[:MAX_DETAILS]]
    if not candidates:
        hints = [_call("search", {"query": name}, "nothing has that name; a search may find it")] if name else []
        return _advice("not_found", f"nothing is named '{name}'", hints=hints)
    hints = _describe_unseen(candidates, "see its record and edges")
    if len(candidates) == 1:
        return _advice("resolved", f"{name} is {_str(candidates[0], 'fqn')}", details, hints)
    return _advice("ambiguous", f"{len(candidates)} symbols are named '{name}'", details, hints)


def _describe(result):
    record = result.get("record") if isinstance(result.get("record"), dict) else {}
    edges = result.get("edge_summary") if isinstance(result.get("edge_summary"), dict) else {}
    details, hints = [], []
    for direction in ("out", "in"):
        counts = edges.get(direction)
        counts = {k: n for k, n in counts.items() if isinstance(n, int)} if isinstance(counts, dict) else {}
        if counts:
            details.append(f"{direction}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
            if not hints and _str(record, "id"):
                edge = max(sorted(counts), key=lambda k: counts[k])
                args = {"ids": [_str(record, "id")], "direction": direction, "edge_types": [edge]}
                hints.append(_call("neighbors", args, f"its most common edge ({edge}, {counts[edge]})"))
    return _advice("record", f"{_str(record, 'kind')} {_str(record, 'fqn')}", details, hints)


def _listing(tool, result):
    """find, search and neighbors: a page of results."""
    rows = _rows(result, "results")
    if tool == "neighbors":
        symbols = [row.get("other") for row in rows if isinstance(row.get("other"), dict)]
        details = [f"{_str(r, 'edge')} {_str(r.get('other'), 'fqn')}" for r in rows[:MAX_DETAILS]]
    else:
        symbols = rows
        details = [f"{_str(r, 'kind')} {_str(r, 'fqn')}" for r in rows[:MAX_DETAILS]]
    total = result.get("total") if isinstance(result.get("total"), int) else len(rows)
    if not rows:
        hints = []
        sent = result.get("ids") if isinstance(result.get("ids"), list) else []
        if tool == "neighbors" and sent and isinstance(sent[0], str):
            hints = [_call("describe", {"id": sent[0]}, "no such edges: see which edges it has")]
        return _advice("empty", f"{tool}: nothing found", hints=hints)
    if len(rows) > MAX_DETAILS:
        details.append(f"… {len(rows) - MAX_DETAILS} more in structuredContent")
    hints = _describe_unseen(symbols, "the first result not seen yet")
    return _advice("results", f"{tool}: {len(rows)} of {total}", details, hints)


def _failure(call, error):
    summary = f"{call.tool} failed: {error.message}"
    example = _json(error.example) if error.example else {}
    # A template (an argument that is a whole `<placeholder>`) is advice,
    # not a call to send as it is.
    complete = bool(example) and "<" not in error.example
    if error.kind == ErrorKind.INVALID_ID:
        hints = []
        sent = _json(call.args).get("id" if call.tool == "describe" else "ids")
        if isinstance(sent, str) and sent.strip() and not re.search(r"[0-9a-fA-F]{40}", sent):
            hints.append(_call("resolve", {"identifier": sent.strip()}, "a name where an id belongs: resolve it"))
        hints.append(_note(call.tool, "ids are 40-hex strings from resolve, search or find results"))
        return _advice("invalid_id", summary, hints=hints)
    if error.kind == ErrorKind.UNKNOWN_ID:
        return _advice("unknown_id", summary, hints=[_note("search", "this graph has no such id: search for the symbol")])
    if error.kind == ErrorKind.BAD_ARGUMENT:
        hints = [_call(call.tool, example, "the corrected call")] if complete else []
        return _advice("bad_argument", summary, hints=hints)
    return _advice("error", summary)  # internal: not the agent's fault


# ---- the exported interface ---------------------------------------------------


class Policy(exports.Policy):
    def identity(self):
        return PolicyInfo(name=NAME, version=VERSION)

    def catalogue(self, tools):
        # Rules per tool (`ToolRules`: which arguments name things, which
        # tools change state) matter in front of another MCP server
        # (`signpost proxy`). Signpost's own tools need none.
        return []

    def coerce_ids(self, call, param):
        # Called only when the host could not read `param` itself (a JSON
        # array of ids, or one id for `describe`, never gets here).
        args = _json(call.args)
        ids = _read_ids(args.get(param))
        if ids and len(ids) <= MAX_IDS and (param != "id" or len(ids) == 1):
            return ids
        # A template example: the agent's call with the ids to fill in.
        example = dict(args)
        example[param] = "<40-hex id>" if param == "id" else ["<40-hex id>"]
        wanted = "one 40-hex id" if param == "id" else "40-hex ids (a JSON array)"
        raise Err(
            CoercionError(
                message=f"`{param}` of {call.tool} takes {wanted}: names go through resolve first",
                example=_dump(example),
            )
        )

    def prerequisites(self, call):
        # No hints before a call, and never hold one.
        return BeforeCall(hints=[], hold=None)

    def advise(self, call, outcome):
        if isinstance(outcome, Outcome_Failure):
            return _failure(call, outcome.value)
        result = _json(outcome.value)
        if call.tool == "resolve":
            return _resolve(_json(call.args), result)
        if call.tool == "describe":
            return _describe(result)
        if call.tool in ("find", "search", "neighbors"):
            return _listing(call.tool, result)
        return _advice("ok", f"{call.tool} answered")  # a tool this policy does not know

    def render(self, call, advice):
        # The host removes any call shown in the text that is not a hint it
        # validated: show hints as `TOOL {json}`, with their args as given
        # (on a trail they carry the `trail` argument).
        lines = [f"[{advice.state_tag}] {advice.summary}"]
        lines += advice.details
        for h in advice.hints:
            # (the host empties a reason that shows a call)
            why = f" — {h.reason}" if h.reason else ""
            if h.actionable:
                lines.append(f"→ next: {h.tool} {h.args}{why}")
            elif h.reason:
                lines.append(f"note: {h.reason}")
        if advice.ask_user:
            lines.append(f"? ask user: {advice.ask_user}")
        return "\n".join(lines)
