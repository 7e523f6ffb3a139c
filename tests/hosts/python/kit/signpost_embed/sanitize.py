"""The sanitiser: a port of Signpost's `host/src/sanitize.rs`.

Every text that leaves an embedding server goes through here. Three
audiences, three functions (as in Rust):

- the agent's text (:func:`agent_text`): invisible and reordering characters
  removed, every kind of line break made a real ``\\n``, and no call shown
  unless it is one the host validated;
- the log and the terminal (:func:`escape`): anything that is not plainly
  printable is written as ``\\u{...}``;
- single-line fields (:func:`line`; :func:`safe_line` for a teaching message,
  :func:`has_call` for a hint's reason).

What reads as a call (same rules as Rust): the text is normalised the way a
reader sees it (NFKC, invisible characters removed, ``\\"`` read as ``"``).
A line holds a call wherever a tool name stands, case-insensitively,
followed (after at most four spaces, ``:``, ``=``, ``(``, quotes or
backticks) by ``{``, and wherever a ``tool`` key names a tool. A call is
allowed when its arguments parse as a JSON object equal to a validated
actionable hint (or the validated teaching example), or when it is a
template (some argument string is a whole ``<placeholder>``).

What happens to a line: every call allowed, it stays; it looks like a hint
line (first word ``next`` then ``:``, a dash, an arrow, ``>`` or ``=``) it
stays only if it holds at least one call and all are allowed; otherwise
each unallowed call is replaced by :data:`REDACTED`, or the line is dropped
where that cannot be done exactly. A line that cannot be analysed cheaply is
dropped: the filter fails closed.

Each function names the Rust function it mirrors. Positions are Python
string indices (code points) where Rust uses byte offsets; both index the
same string, so the cuts are the same. Differences that remain, all on the
strict side, are noted where they occur.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

__all__ = [
    "MAX_TEXT",
    "REDACTED",
    "TOOL_NAMES",
    "Allowed",
    "agent_text",
    "escape",
    "has_call",
    "is_invisible",
    "is_line_break",
    "is_template",
    "json_equal",
    "line",
    "loads_object",
    "safe_line",
]

#: Signpost's tools (``tools::TOOL_NAMES``); every function here takes the
#: server's own tool names and defaults to these.
TOOL_NAMES: tuple[str, ...] = ("resolve", "describe", "find", "search", "neighbors")

#: Longest text an agent receives, in bytes (``sanitize::MAX_TEXT``).
MAX_TEXT = 256 << 10
#: ``{`` positions per line that may fail to parse before the line is dropped.
MAX_FAILED_PARSES = 64
#: What replaces an unvalidated call inside a line (``sanitize::REDACTED``).
REDACTED = "[unvalidated call removed]"


@dataclass(frozen=True)
class Allowed:
    """A call the host validated: the only calls a text may show
    (``sanitize::Allowed``)."""

    tool: str
    args: Mapping[str, Any]


# ---- character classes -------------------------------------------------------

# Rust's `char::is_whitespace` is the Unicode White_Space property; Python's
# `str.isspace` differs (it counts U+001C..U+001F), so the set is spelled out.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x85\u2028\u2029")

_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x0600, 0x0605), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x115F, 0x115F), (0x1160, 0x1160),
    (0x17B4, 0x17B4), (0x17B5, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)

_ARROW_RANGES = (
    (0x2190, 0x21FF), (0x27F0, 0x27FF), (0x2900, 0x297F), (0x2B00, 0x2BFF),
    (0x2794, 0x27BF), (0x1F800, 0x1F8FF), (0x00BB, 0x00BB), (0x203A, 0x203A),
)


def is_invisible(c: str) -> bool:
    """Characters that show nothing or reorder what follows
    (mirrors ``sanitize::is_invisible``)."""
    o = ord(c)
    if o < 0xAD:
        return False
    return any(lo <= o <= hi for lo, hi in _INVISIBLE_RANGES)


def is_line_break(c: str) -> bool:
    """Characters a terminal or client may show as a line break
    (mirrors ``sanitize::is_line_break``)."""
    return c in _LINE_BREAKS


def _is_whitespace(c: str) -> bool:
    """Rust's ``char::is_whitespace``."""
    return c in _WHITE_SPACE


def _is_space(c: str) -> bool:
    """Whitespace other than a line break (mirrors ``sanitize::is_space``)."""
    return c in _WHITE_SPACE and c not in _LINE_BREAKS


def _is_control(c: str) -> bool:
    """Rust's ``char::is_control`` (general category Cc)."""
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F


def _is_alphanumeric(c: str) -> bool:
    """Rust's ``char::is_alphanumeric`` (Alphabetic or Numeric), as near as
    Python's tables get: Python has no Other_Alphabetic property, so a few
    combining marks Rust calls alphabetic are not alphanumeric here. Where
    this is used (the start of a hint line, the end of a tool name) that
    only makes the Python side stricter."""
    return c.isalpha() or c.isnumeric()


def _is_arrow(c: str) -> bool:
    """The Unicode arrow blocks, and ``»`` ``›`` (mirrors ``sanitize::is_arrow``)."""
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _ARROW_RANGES)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(s: str) -> str:
    """Rust's ``str::to_ascii_lowercase``: ASCII letters only, same length."""
    return s.translate(_ASCII_LOWER)


def _trim_start(s: str) -> str:
    """Rust's ``str::trim_start`` (White_Space)."""
    i = 0
    while i < len(s) and s[i] in _WHITE_SPACE:
        i += 1
    return s[i:]


def _utf8_len(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


# ---- JSON, read the way serde_json reads it ------------------------------------


class _NotJson(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotJson("number out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _has_surrogate(value: Any, depth: int = 0) -> bool:
    """A lone surrogate escape (``"\\ud800"``): serde_json refuses it,
    Python's json accepts it; refusing keeps the two in step."""
    if depth > 200:
        return True
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k, depth + 1) or _has_surrogate(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v, depth + 1) for v in value)
    return False


def _parse_object_at(s: str, at: int) -> Optional[tuple[dict, int]]:
    """The JSON object starting at ``s[at] == '{'`` and where it ends, or
    ``None``: serde_json's ``StreamDeserializer`` over ``&s[at..]``, whose
    ``byte_offset`` gives the end. NaN, infinities and lone surrogates are
    refused as serde_json refuses them."""
    try:
        value, end = _DECODER.raw_decode(s, at)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or _has_surrogate(value):
        return None
    return value, end


def loads_object(text: str) -> Optional[dict]:
    """``serde_json::from_str::<Value>(text)`` when it is an object, else
    ``None`` (surrounding whitespace allowed, nothing else)."""
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or _has_surrogate(value):
        return None
    return value


def dumps(value: Any) -> str:
    """``serde_json::to_string``: compact, keys sorted (serde_json's ``Map``
    is a ``BTreeMap`` in Signpost's build), non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def json_equal(a: Any, b: Any) -> bool:
    """``serde_json::Value`` equality: unlike Python's ``==``, ``true`` is not
    ``1`` and ``1`` is not ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and a == b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, float) and isinstance(b, float) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


# ---- single lines and escapes --------------------------------------------------


def line(s: str, max_chars: int) -> str:
    """One line for an agent: line breaks, spaces and control characters
    become spaces, invisible characters go, at most ``max_chars`` characters
    (cut with ``…``). Mirrors ``sanitize::line``."""
    out: list[str] = []
    cut = False
    for c in s:
        if is_line_break(c) or _is_space(c) or _is_control(c):
            c = " "
        if is_invisible(c):
            continue
        if len(out) == max_chars:
            cut = True
            break
        out.append(c)
    if cut:
        if out:
            out.pop()
        out.append("…")
    return "".join(out)


def escape(s: str, max_chars: int) -> str:
    """Text for the log or a terminal: printable characters as they are,
    everything else as ``\\u{…}``; at most ``max_chars`` characters of input.
    Mirrors ``sanitize::escape``."""
    out: list[str] = []
    for i, c in enumerate(s):
        if i == max_chars:
            out.append("…")
            break
        if _is_control(c) or is_invisible(c) or is_line_break(c) or (_is_space(c) and c != " ") \
                or 0xD800 <= ord(c) <= 0xDFFF:
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    return "".join(out)


def _clean_text(s: str) -> str:
    """Multi-line text as the agent will see it: every line break a ``\\n``
    (``\\r\\n`` one break), spaces plain, control and invisible characters
    gone, at most :data:`MAX_TEXT` bytes. Mirrors ``sanitize::clean_text``."""
    out: list[str] = []
    size = 0
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        i += 1
        if size >= MAX_TEXT:
            out.append("\n… (truncated)")
            break
        o = ord(c)
        if 0x21 <= o <= 0x7E or c == " ":
            pass
        elif is_line_break(c):
            if c == "\r" and i < n and s[i] == "\n":
                i += 1
            c = "\n"
        elif _is_space(c):
            c = " "
        elif _is_control(c) or is_invisible(c) or 0xD800 <= o <= 0xDFFF:
            # (A lone surrogate cannot occur in a Rust string; dropped here.)
            continue
        out.append(c)
        size += 1 if ord(c) < 0x80 else _utf8_len(c)
    return "".join(out)


def _fold(s: str) -> str:
    """The form a reader sees: NFKC, invisible characters removed, ``\\"`` as
    ``"``. Mirrors ``sanitize::fold`` (its ASCII/quick-check shortcut gives
    the same string). Python's ``unicodedata`` may be a Unicode version
    behind Rust's ``unicode-normalization``: characters added since then
    are not folded here."""
    if not s.isascii():
        s = "".join(c for c in unicodedata.normalize("NFKC", s) if not is_invisible(c))
    return s.replace('\\"', '"') if '\\"' in s else s


# ---- finding calls ----------------------------------------------------------


class _Tools:
    """The tool names a text is read against, with their case-folded forms."""

    def __init__(self, names: Iterable[str]):
        self.names = tuple(names)
        self.by_lower = {_ascii_lower(t): t for t in self.names}
        # Longest first, so that a name that ends another (`find`,
        # `refind`) is read as the longer one. Signpost's five names have
        # no such pair, where the order cannot matter.
        self.longest_first = sorted(self.names, key=len, reverse=True)


_DEFAULT_TOOLS = _Tools(TOOL_NAMES)


def _tools(names: Optional[Iterable[str]]) -> _Tools:
    if names is None:
        return _DEFAULT_TOOLS
    if isinstance(names, _Tools):
        return names
    return _Tools(names)


@dataclass
class _Found:
    """A call found in a text (``sanitize::Found``): tool and arguments when
    they parse as a JSON object; where it stands, when that is known."""

    call: Optional[tuple[str, dict]]
    span: Optional[tuple[int, int]]

    def is_allowed(self, allowed: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
        if self.call is None:
            return False
        tool, args = self.call
        return is_template(args) or any(t == tool and json_equal(a, args) for t, a in allowed)


def is_template(args: Mapping[str, Any]) -> bool:
    """Some argument string is a whole ``<placeholder>``: a call to adapt,
    not to send. Mirrors ``sanitize::is_template``."""

    def placeholder(v: Any) -> bool:
        if isinstance(v, str):
            return _utf8_len(v) > 2 and v.startswith("<") and v.endswith(">")
        if isinstance(v, list):
            return any(placeholder(x) for x in v)
        return False

    return any(placeholder(v) for v in args.values())


#: Most bytes between a tool's name and the ``{`` of its arguments
#: (``sanitize::MAX_CALL_GAP``).
MAX_CALL_GAP = 48
#: Most words between them, each of at most 10 letters (``MAX_CALL_WORDS``).
MAX_CALL_WORDS = 2


def _is_call_separator(c: str) -> bool:
    return _is_whitespace(c) or c in ":=(`\"',->—–" or _is_arrow(c)


def _tool_before(s: str, at: int, tools: _Tools) -> Optional[tuple[str, int]]:
    """The tool named right before ``s[at]`` (a ``{``) and where its name
    starts: after any run of spaces, quotes, ``:``, ``=``, ``(``, commas,
    dashes and arrows (``describe {``, ``describe      {``, ``describe → {``),
    and after up to two short words (``describe with {``), within 48 bytes;
    glued to what precedes it too. Mirrors ``sanitize::tool_before`` (on
    ``&s[..at]``, without copying it)."""
    end = at
    for words in range(MAX_CALL_WORDS + 1):
        while end > 0 and _is_call_separator(s[end - 1]):
            end -= 1
        if len(s[end:at].encode("utf-8")) > MAX_CALL_GAP:
            return None
        for t in tools.longest_first:
            start = end - len(t)
            if start < 0:
                continue
            tail = s[start:end]
            if tail.isascii() and _ascii_lower(tail) == _ascii_lower(t):
                return t, start
        if words == MAX_CALL_WORDS:
            return None
        word_end = end
        while end > 0 and s[end - 1].isalpha():
            end -= 1
        if end == word_end or word_end - end > 10:
            return None
    return None


def _skip_quotes_spaces(lower: str, i: int) -> int:
    while i < len(lower) and (_is_whitespace(lower[i]) or lower[i] in "\"'"):
        i += 1
    return i


def _tool_key_mentions(folded: str, tools: _Tools) -> int:
    """How often ``tool`` stands as a key naming a tool (``"tool": "describe"``,
    ``tool=describe``, …). Mirrors ``sanitize::tool_key_mentions``."""
    lower = _ascii_lower(folded)
    mentions = 0
    frm = 0
    names = [_ascii_lower(t) for t in tools.names]
    while True:
        at = lower.find("tool", frm)
        if at < 0:
            break
        frm = at + 4
        i = _skip_quotes_spaces(lower, frm)
        if i >= len(lower) or lower[i] not in ":=":
            continue
        i = _skip_quotes_spaces(lower, i + 1)
        for t in names:
            if lower.startswith(t, i):
                after = i + len(t)
                if not (after < len(lower) and (_is_alphanumeric(lower[after]) or lower[after] == "_")):
                    mentions += 1
                    break
    return mentions


def _calls_in_value(v: Any, found: list[_Found], depth: int, tools: _Tools) -> Optional[int]:
    """Calls inside a parsed JSON value: objects ``{"tool": <tool>, "args":
    {…}}`` (counted: the hint records found), and calls written inside its
    strings. Mirrors ``sanitize::calls_in_value``."""
    if depth > 8:
        return None
    records = 0
    if isinstance(v, dict):
        tool = v.get("tool")
        if isinstance(tool, str) and _ascii_lower(tool) in tools.by_lower:
            records += 1
            args = v.get("args")
            name = tools.by_lower[_ascii_lower(tool)]
            found.append(_Found(call=(name, args) if isinstance(args, dict) else None, span=None))
        for item in v.values():
            r = _calls_in_value(item, found, depth + 1, tools)
            if r is None:
                return None
            records += r
    elif isinstance(v, list):
        for item in v:
            r = _calls_in_value(item, found, depth + 1, tools)
            if r is None:
                return None
            records += r
    elif isinstance(v, str) and ("{" in v or "tool" in _ascii_lower(v)):
        inner = _calls_in(_fold(v), tools)
        if inner is None:
            return None
        found.extend(_Found(call=f.call, span=None) for f in inner)
    return records


def _calls_in(folded: str, tools: _Tools) -> Optional[list[_Found]]:
    """Every call in a folded line; ``None`` when the line cannot be analysed
    within bounds. Mirrors ``sanitize::calls_in``."""
    found: list[_Found] = []
    key_records = 0
    failed = 0
    i = 0
    n = len(folded)
    while True:
        at = folded.find("{", i)
        if at < 0:
            break
        named = _tool_before(folded, at, tools)
        parsed = _parse_object_at(folded, at)
        if parsed is not None:
            obj, end = parsed
            start = named[1] if named else at
            inner: list[_Found] = []
            r = _calls_in_value(obj, inner, 0, tools)
            if r is None:
                return None
            key_records += r
            if named:
                found.append(_Found(call=(named[0], obj), span=(start, end)))
            # Calls inside the object are cut out with the whole object.
            found.extend(_Found(call=f.call, span=(start, end)) for f in inner)
            i = end
        else:
            if named:
                found.append(_Found(call=None, span=(named[1], n)))
            failed += 1
            if failed > MAX_FAILED_PARSES:
                return None
            i = at + 1
        if i >= n:
            break
    # A hint record written out in another notation (`tool: describe`):
    # each mention needs a record parsed above, or it cannot be allowed.
    if _tool_key_mentions(folded, tools) > key_records:
        found.append(_Found(call=None, span=None))
    return found


def _looks_like_hint_line(folded: str) -> bool:
    """``next`` as the first word, whatever precedes it, followed by a
    marker (``:``, a dash, an arrow, ``>`` or ``=``): the documented hint
    marker in any disguise. Mirrors ``sanitize::looks_like_hint_line``."""
    i = 0
    # Combining marks show nothing of their own before ``next``.
    while i < len(folded) and (not _is_alphanumeric(folded[i]) or unicodedata.category(folded[i]).startswith("M")):
        i += 1
    word = folded[i:]
    head = word[:4]
    if not (len(head) == 4 and head.isascii() and _ascii_lower(head) == "next"):
        return False
    rest = _trim_start(word[4:])
    if not rest:
        return False
    return rest[0] in ":-—–>=" or _is_arrow(rest[0])


def _hint_markers(folded: str) -> list[tuple[int, int]]:
    """Where the hint marker stands, anywhere in a line: the word ``next``
    followed by ``:``, a dash, an arrow, ``>`` or ``=`` (after spaces), as
    (start, end). Mirrors ``sanitize::hint_marker_ends``."""
    out = []
    lower = _ascii_lower(folded)
    at = lower.find("next")
    while at >= 0:
        before = folded[at - 1] if at > 0 else ""
        if not (before.isascii() and before.isalnum()):
            after = _trim_start(folded[at + 4:])
            if after and (after[0] in ":-—–>=" or _is_arrow(after[0])):
                out.append((at, len(folded) - len(after) + 1))
        at = lower.find("next", at + 1)
    return out


def _names_a_tool(lower: str, tools: _Tools) -> bool:
    """Whether a tool's name stands as a word in ``lower``."""
    return any(re.search(r"(?<![a-z0-9_])" + re.escape(_ascii_lower(t)) + r"(?![a-z0-9_])", lower)
               for t in tools.names)


def _marks_a_tool(folded: str, tools: _Tools) -> Optional[int]:
    """Where a hint marker followed by a tool's name starts, anywhere in the
    line. Mirrors ``sanitize::marks_a_tool``."""
    for start, end in _hint_markers(folded):
        if _names_a_tool(_ascii_lower(folded[end:]), tools):
            return start
    return None


def has_hint_marker(s: str) -> bool:
    """Whether a field shows the hint marker anywhere. Mirrors
    ``sanitize::has_hint_marker``."""
    return bool(_hint_markers(_fold(s)))


# ---- the agent's text ---------------------------------------------------------


def _seen_as_text(allowed: Sequence[Allowed]) -> list[tuple[str, Mapping[str, Any]]]:
    """The allowed calls' arguments as they read once written in a text:
    cleaned and folded like the text itself. Mirrors ``sanitize::seen_as_text``."""
    out = []
    for a in allowed:
        try:
            written = dumps(a.args)
        except (TypeError, ValueError):
            written = ""
        shown = _fold(_clean_text(written))
        args: Mapping[str, Any] = a.args
        if shown != written:
            parsed = loads_object(shown)
            if parsed is not None:
                args = parsed
        out.append((a.tool, args))
    return out


def _redact(l: str, allowed: Sequence[tuple[str, Mapping[str, Any]]], tools: _Tools) -> Optional[str]:
    """A line with its unvalidated calls replaced by :data:`REDACTED`;
    ``None`` when it must be dropped. Mirrors ``sanitize::redact``."""
    try:
        folded = _fold(l)
        calls = _calls_in(folded, tools)
        if calls is None:
            return None
        ok = [c for c in calls if c.is_allowed(allowed)]
        bad = [c for c in calls if not c.is_allowed(allowed)]
        # A hint line shows one call: a second marker is a hint of its own.
        markers = len(_hint_markers(folded))
        if _looks_like_hint_line(folded):
            return l if (not bad and ok and markers <= 1) else None
        # A hint marker later in the line, naming a tool: cut from it on,
        # unless it is the one validated hint of the line.
        cut = _marks_a_tool(folded, tools)
        if cut is not None:
            if not bad and ok and markers <= 1:
                return l
            if folded != l:
                return None
            kept = l[:cut]
            while kept and (_is_whitespace(kept[-1]) or _is_arrow(kept[-1])):
                kept = kept[:-1]
            return f"{kept} {REDACTED}"
        if not bad:
            return l
        if folded != l:
            return None
        spans = [c.span for c in bad]
        if any(s is None for s in spans):
            return None
        spans.sort(key=lambda r: r[0])
        out: list[str] = []
        at = 0
        for start, end in spans:
            if start >= at:
                out.append(l[at:start])
                out.append(REDACTED)
                at = end
            else:
                at = max(at, end)
        out.append(l[min(at, len(l)):])
        kept = "".join(out)
        # What is left must hold no unvalidated call either.
        rest = _calls_in(kept, tools)
        if rest is None or not all(c.is_allowed(allowed) for c in rest):
            return None
        return kept
    except RecursionError:
        return None  # fails closed, like a line that cannot be analysed


def agent_text(text: str, allowed: Sequence[Allowed], tool_names: Optional[Iterable[str]] = None) -> tuple[str, int]:
    """The agent's text: cleaned, every unvalidated call in a line replaced
    by :data:`REDACTED` (or the line dropped where that cannot be done
    safely); with the number of lines changed or dropped. Mirrors
    ``sanitize::agent_text``. (Rust counts a line as changed when its byte
    length changed; here when its text did, which also counts the rare
    redaction whose marker has the cut call's exact length.)"""
    tools = _tools(tool_names)
    cleaned = _clean_text(text)
    seen = _seen_as_text(allowed)
    kept_lines: list[str] = []
    changed = 0
    for l in cleaned.split("\n"):
        kept = _redact(l, seen, tools)
        if kept is None:
            changed += 1
            continue
        if kept != l:
            changed += 1
        kept_lines.append(kept)
    return "\n".join(kept_lines), changed


def safe_line(l: str, max_chars: int, allowed: Sequence[Allowed],
              tool_names: Optional[Iterable[str]] = None) -> Optional[str]:
    """One line for an agent, single-line fields included (a teaching
    message): cleaned like :func:`line`, then its unvalidated calls
    redacted; ``None`` when the line must go whole. Mirrors
    ``sanitize::safe_line``."""
    return _redact(line(l, max_chars), _seen_as_text(allowed), _tools(tool_names))


def has_call(s: str, tool_names: Optional[Iterable[str]] = None) -> bool:
    """Whether ``s`` (one line) shows any call at all, allowed or not, or
    cannot be analysed. Mirrors ``sanitize::has_call``."""
    try:
        calls = _calls_in(_fold(s), _tools(tool_names))
    except RecursionError:
        return True
    return calls is None or len(calls) > 0
