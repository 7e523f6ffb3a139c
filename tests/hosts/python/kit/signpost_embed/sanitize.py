"""The sanitiser: a port of Signpost's ``host/src/sanitize/`` (``mod.rs``,
``ids.rs``, ``calls.rs`` and ``calls/``, ``fold.rs``) as of commit 4fd14c4.

Every text that leaves an embedding server goes through here. Three
audiences, as in Rust:

- the agent's text (:func:`agent_text`): invisible and reordering characters
  removed, every kind of line break made a real ``\\n``, no id the agent may
  not be shown (:class:`Known`), and no call shown unless it is one the host
  validated;
- the log and the terminal (:func:`escape`): anything that is not plainly
  printable is written as ``\\u{...}``;
- single-line fields (:func:`line`; :func:`safe_line` for a teaching message,
  :func:`has_call` and :func:`scrub_ids` for a hint's reason).

Two layers, as in Rust: **no invented ids** (every id-shaped token, also
split, escaped, full-width or in look-alike letters, and over line breaks,
must be one the agent sent, the result holds, a validated hint carries or
the session's history holds; any other becomes :data:`REPLACED_ID`), then
**no unvalidated call** in any notation :class:`Vocabulary` reads (JSON after
a tool's name, records naming a tool, argument lists of other notations,
the program's shell form, names spelled otherwise, XML, tables, a tool and
its arguments on two lines, JSON over several lines, a tool named in prose
with an object of its parameters a few lines on). A call is allowed when its
arguments are a validated hint's, or it is a template; a call whose text
stands verbatim in the result or in what the agent sent is the code's text
and stays; every other call is cut out (:data:`REDACTED`) or its line
dropped. Lines are read as a reader sees them (:func:`_fold`: NFKC, invisible
characters and markup that shows nothing gone, escapes of letters decoded,
marks on letters dropped, look-alike letters as Latin).

Each function names the Rust function it mirrors. Positions are Python
string indices (code points) where Rust uses byte offsets; both index the
same string, so the cuts are the same; bounds Rust counts in bytes are
counted in bytes here too. Differences that remain are noted where they
occur and in README.md.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union

__all__ = [
    "MAX_TEXT",
    "REDACTED",
    "REPLACED_ID",
    "TOOL_NAMES",
    "Allowed",
    "Changes",
    "Known",
    "Vocabulary",
    "agent_text",
    "all_known",
    "escape",
    "forged_spans",
    "has_call",
    "has_hint_marker",
    "is_invisible",
    "is_line_break",
    "is_subcommand",
    "is_template",
    "json_equal",
    "line",
    "loads_object",
    "replace_forged",
    "safe_line",
    "scrub_ids",
    "template_allowed",
    "tool_named",
]

#: Signpost's tools (``tools::TOOL_NAMES``); every function here takes the
#: server's own tools (a :class:`Vocabulary`) and defaults to these.
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


def _trim(s: str) -> str:
    """Rust's ``str::trim`` (White_Space)."""
    start, end = 0, len(s)
    while start < end and s[start] in _WHITE_SPACE:
        start += 1
    while end > start and s[end - 1] in _WHITE_SPACE:
        end -= 1
    return s[start:end]


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


# ---- the form a reader sees (fold.rs) -------------------------------------------

#: Characters that read as one ASCII letter or digit (Unicode confusables,
#: UTS #39, as the ``unicode-security`` 0.1.3 crate behind
#: ``fold::latin`` has them: each entry whose prototype is one ASCII letter
#: or digit and whose key is NFKC), keyed by that letter or digit, as
#: hexadecimal code points. ``|`` (7c) reads as ``l`` too.
_LOOKALIKES: dict[str, str] = {
    "2": "1a7 3e8 10c7 14bf 1616 1cb7 a644 a6ef a75a 1ccf2",
    "3": "1b7 21c 417 4e0 545 969 ae9 1702 1c95 2c9c 2cc4 2ccc a76a a7ab 118ca 16f3b 1ccf3 1d206",
    "4": "13ce ab9e 118af 16e82 1ccf4",
    "5": "1bc 118bb 1ccf5",
    "6": "3ec 431 13ee 2cd2 2cd3 2cdc a543 abbe 118d5 1ccf6",
    "7": "172a 1c84 104d2 118c6 16e8a 1ccf7 1d1fe 1d212",
    "8": "222 223 9ea a6a b03 a589 1031a 11445 169fe 1ccf8 1e8cb",
    "9": "9ed a67 b68 d6d 2cca 2ccb a76e a76f 118ac 118cc 118d6 169c1 1ccf9 1e2f2",
    "A": "391 410 13aa 15c5 a4ee 102a0 16f40 1ccd6 1df6a",
    "B": "392 412 13f4 15f7 2c82 a4d0 a557 a7b4 10282 102a1 10301 1ccd7",
    "C": "421 13df 2ca4 a4da 102a2 10302 10415 1051b 118e9 118f2 1ccd8 1f74c",
    "D": "13a0 15de 15ea a4d3 1ccd9",
    "E": "395 415 13ac 22ff 2d39 a4f0 a5cb 10286 118a6 118ae 1ccda 1df81",
    "F": "3dc 7d3 15b4 a4dd a798 10287 102a5 10525 118a2 118c2 1ccdb 1d213",
    "G": "50c 13c0 13f3 a4d6 1ccdc",
    "H": "397 41d 13bb 157c 2c8e a4e7 102cf 1ccdd",
    "J": "37f 408 13ab 148d a4d9 a7b2 1ccdf",
    "K": "39a 41a 13e6 16d5 2c94 a4d7 10518 1cce0",
    "L": "13de 14aa 2cd0 a4e1 1041b 10526 118a3 118b2 16f16 1cce1 1d22a",
    "M": "39c 3fa 41c 13b7 15f0 16d6 2c98 a4df 102b0 10311 10c21 1cce2",
    "N": "39d 2c9a a4e0 10513 11abe 1cce3",
    "O": ("39f 41e 555 7c0 b20 ce6 12d0 1cbf 2c9e 2d54 3007 a4f3 10292 102ab 1030f 10404 104c2 10516 10c17 "
          "118b5 118e0 11de0 16ae9 1cce4 1ccf0 1e140 1e2f0"),
    "P": "3a1 420 13e2 146d 2ca2 2cce a4d1 10295 1cce5",
    "Q": "51a 2d55 1cce6",
    "R": "1a6 24c 13a1 13d2 1587 a4e3 104b4 16f35 1cce7 1d216",
    "S": "405 54f 10bd 10fd 13d5 13da 1cbd a4e2 a576 10296 10420 16ad6 16f3a 1cce8",
    "T": ("3a4 422 7e0 13a2 22a4 27d9 2ca6 3112 4e05 a4d4 a50b 10297 102b1 10315 118bc 16f0a 1cce9 1d373 "
          "1f768"),
    "U": "54d 1200 144c 222a 22c3 a4f4 104ce 118b8 16f42 1ccea",
    "V": "474 667 6f7 13d9 142f 2d38 a4e6 a6df 1051d 10c1f 118a0 16f08 1cceb 1cefc 1d20d 1e145",
    "W": "51c 13b3 13d4 a4ea 118e6 118ef 1ccec 1d20c",
    "X": ("3a7 425 166d 16b7 1cf5 2573 2cac 2d5d a4eb a7b3 10290 102b4 10317 10322 10527 10c13 10c82 10cfc "
          "118ec 1cced"),
    "Y": "3a5 423 4ae 7cc 13a9 13bd 2ca8 311a 4e2b a4ec 102b2 10c20 118a4 16f43 1ccee",
    "Z": "396 10cd 13c3 2c6b 2c8c a4dc a6c9 102f5 10507 118a9 118e5 11abc 1ccef",
    "a": "251 3b1 430 237a ab64 1df5a",
    "b": "184 42c 7d5 13cf 1472 15af 1031c 16eb6 1d207",
    "c": "441 1004 105a 1c83 1d04 2ca5 abaf 1043d 1d134",
    "d": "501 13e7 146f a4d2 1018b",
    "e": "435 4bd 212e ab32",
    "f": "192 284 584 1e9d a799 ab35 1017e",
    "g": "18d 261 581 1d83",
    "h": "4ba 4bb 570 10b9 13c2",
    "i": "a1 131 269 26a 3b9 456 582 13a5 2373 2c93 a647 ab75 118c3",
    "j": "237 3f3 458 575",
    "l": ("7c 196 1c0 399 406 4c0 4cf 5c0 5d5 5df 627 661 6f1 7ca 964 104a 16c1 16d0 21bf 2223 23fd 2502 "
          "2503 2c92 2d4a 2d4f a4f2 a56f a781 a7ae a7fe a830 a8ce aa5d 1028a 10309 10320 1050e 10926 10c3e "
          "10ca5 10cfa 11047 110c0 11141 111c5 113d4 1144b 115c5 11641 11c41 11dda 11de1 16d63 16eaa 16f28 "
          "1ccde 1ccf1 1d100 1d377 1e141 1e8c7 1ed01"),
    "n": "578 57c",
    "o": ("3bf 3c3 3ed 43e 585 5e1 647 665 6be 6c1 6d5 6f5 7cb 840 966 9e6 a66 ae6 b66 be6 c02 c66 c82 d02 "
          "d20 d66 d82 e50 ed0 101d 1040 10ff 110b 11bc 17e0 1a45 1a80 1a90 1bea 1c82 1d0f 1d11 2c9f ab3d "
          "1042c 104ea 1092c 10d07 11124 11302 114d0 118c8 118d7"),
    "p": "fe 1bf 3c1 3f8 440 2374 2ca3 2ccf",
    "q": "51b 563 566",
    "r": "433 1d26 2c85 ab47 ab48 ab81 16a19",
    "s": "1bd 455 d1f a731 abaa 10448 118c1",
    "u": "28b 3c5 57d 1d1c a79f ab4e ab52 104f6 118d8",
    "v": "3bd 475 5d8 1d20 2228 22c1 aba9 11706 118c0",
    "w": "26f 448 461 51d 561 1d21 29e2 2cbd a7fa ab83 aba4 1170a 1170e 1170f 1df7d",
    "x": "d7 445 1541 157d 166e 1763 1bec 292b 292c 2a2f 10cc2",
    "y": "263 28f 3b3 443 4af 10e7 1d8c 1eff 2ca9 ab5a 118c4 118dc",
    "z": "1d22 2c6c 2c8d 2d2d ab93",
}
_LOOKS_LIKE: dict[str, str] = {chr(int(h, 16)): a for a, cs in _LOOKALIKES.items() for h in cs.split()}


def _latin(c: str) -> Optional[str]:
    """The ASCII letter or digit a non-ASCII character reads as, if it reads
    as exactly one: ``ｄ`` and ``𝐝`` (NFKC), Cyrillic ``е`` (confusables).
    Mirrors ``fold::latin``."""
    plain = unicodedata.normalize("NFKC", c)
    if len(plain) != 1:
        return None
    if plain.isascii() and plain.isalnum():
        return plain
    return _LOOKS_LIKE.get(plain)


def _is_symbol(c: str) -> bool:
    """Dashes, quotes, bullets and arrows: none of them a letter or digit
    (mirrors ``fold::is_symbol``)."""
    o = ord(c)
    return 0x2010 <= o <= 0x205F or 0x2190 <= o <= 0x21FF or 0x2500 <= o <= 0x25FF


def _lookalike(c: str) -> bool:
    """A letter or digit outside ASCII: only those may read as Latin ones
    (``lookalike`` in ``fold::fold_chars``)."""
    return not c.isascii() and not _is_symbol(c) and _is_alphanumeric(c)


#: Markup that shows nothing where it stands (``EMPTY`` in ``fold::unseen_at``).
_UNSEEN_MARKUP = ("<wbr>", "<wbr/>", "<wbr />", "&shy;", "&#173;", "&#xad;")
#: Longest empty element read as showing nothing, in bytes
#: (``fold::MAX_EMPTY_ELEMENT``).
MAX_EMPTY_ELEMENT = 200


def _unseen_at(s: str, at: int) -> Optional[int]:
    """The length of markup at ``s[at:]`` that shows nothing: an HTML
    comment (to its end, or to the end of ``s`` when unclosed), ``<wbr>``, a
    soft hyphen written ``&shy;``, or an element with nothing in it
    (``<span></span>``, ``<b class="x"></b>``). Mirrors ``fold::unseen_at``."""
    if s.startswith("<!--", at):
        end = s.find("-->", at + 4)
        return len(s) - at if end < 0 else end + 3 - at
    mark = next((m for m in _UNSEEN_MARKUP if _ascii_lower(s[at:at + len(m)]) == m), None)
    if mark is not None:
        return len(mark)
    # `<name attributes></name>`
    if not s.startswith("<", at):
        return None
    tag = at + 1
    name_end = _lstrip(s, _is_ascii_alnum, tag)
    if name_end == tag or not (s[tag].isascii() and s[tag].isalpha()):
        return None
    j, size = name_end, 0
    while j < len(s) and s[j] not in "<>":
        size += _utf8_len(s[j])
        if size >= MAX_EMPTY_ELEMENT:
            return None
        j += 1
    attributes = s[name_end:j]
    if j >= len(s) or s[j] != ">" or not (attributes == "" or attributes.startswith(" ")):
        return None
    if not s.startswith("</", j + 1):
        return None
    close = j + 3
    name = s[tag:name_end]
    if close + len(name) > len(s) or _ascii_lower(s[close:close + len(name)]) != _ascii_lower(name):
        return None
    end = _lstrip(s, lambda c: c == " ", close + len(name))
    return end + 1 - at if s.startswith(">", end) else None


def _unseen_markup(l: str) -> str:
    """``l`` without markup that shows nothing (:func:`_unseen_at`).
    Mirrors ``fold::unseen_markup``."""
    if "<" not in l and "&" not in l:
        return l
    out: list[str] = []
    removed = False
    i, n = 0, len(l)
    while i < n:
        at = min((p for p in (l.find("<", i), l.find("&", i)) if p >= 0), default=-1)
        if at < 0:
            break
        out.append(l[i:at])
        size = _unseen_at(l, at)
        if size is not None:
            i = at + size
            removed = True
        else:
            out.append(l[at])
            i = at + 1
    if not removed:
        return l
    out.append(l[i:])
    return "".join(out)


def _fold(s: str) -> str:
    """The form a reader sees: markup that shows nothing gone, NFKC,
    invisible characters removed, letters of other scripts that look like
    Latin ones as those. Mirrors ``fold::fold``. Python's ``unicodedata``
    may be a Unicode version behind Rust's ``unicode-normalization``:
    characters added since then are not folded here."""
    s = _letter_escapes(_unseen_markup(s))
    if s.isascii():
        return s

    # Marks on letters (`é`, an underline `d̲`) are read past.
    def marked(c: str) -> bool:
        return _is_mark(c) or (_lookalike(c) and any(_is_mark(d) for d in unicodedata.normalize("NFD", c)))

    if unicodedata.is_normalized("NFKC", s) and not any(
            not c.isascii() and (is_invisible(c) or marked(c) or (_lookalike(c) and _latin(c) is not None))
            for c in s):
        return s
    return "".join(_latin(c) or c if _lookalike(c) else c
                   for c in unicodedata.normalize("NFKD", s) if not is_invisible(c) and not _is_mark(c))


#: HTML's named character references for printable ASCII, and for the
#: spaces, dashes, arrows and quotes that stand between words
#: (``fold::named_reference``).
_NAMED_REFERENCES = {
    "amp": "&", "AMP": "&", "lt": "<", "LT": "<", "gt": ">", "GT": ">", "quot": '"', "QUOT": '"',
    "apos": "'", "lpar": "(", "rpar": ")", "lsqb": "[", "lbrack": "[", "rsqb": "]", "rbrack": "]",
    "lcub": "{", "lbrace": "{", "rcub": "}", "rbrace": "}", "colon": ":", "comma": ",", "equals": "=",
    "quest": "?", "num": "#", "sol": "/", "bsol": "\\", "period": ".", "semi": ";", "excl": "!",
    "lowbar": "_", "dollar": "$", "percnt": "%", "ast": "*", "midast": "*", "plus": "+", "vert": "|",
    "verbar": "|", "VerticalLine": "|", "grave": "`", "Hat": "^", "tilde": "~",
    "Tab": "\t", "nbsp": "\u00a0", "NonBreakingSpace": "\u00a0", "ensp": "\u2002", "emsp": "\u2003",
    "thinsp": "\u2009", "ThinSpace": "\u2009", "hairsp": "\u200a", "zwsp": "\u200b",
    "ZeroWidthSpace": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "ndash": "\u2013", "mdash": "\u2014",
    "hellip": "\u2026", "middot": "\u00b7", "bull": "\u2022", "rarr": "\u2192", "larr": "\u2190",
    "harr": "\u2194", "rArr": "\u21d2", "lsquo": "\u2018", "rsquo": "\u2019", "ldquo": "\u201c",
    "rdquo": "\u201d", "laquo": "\u00ab", "raquo": "\u00bb",
}


def _named_reference(s: str, at: int) -> Optional[tuple[str, int]]:
    """``&name;`` at ``s[at]`` (``_NAMED_REFERENCES``), and its length."""
    head = s[at + 1:at + 15]
    semi = head.find(";")
    if semi < 0:
        return None
    c = _NAMED_REFERENCES.get(head[:semi])
    return (c, semi + 2) if c is not None else None


def _is_control(c: str) -> bool:
    """Rust's ``char::is_control``: Unicode's Cc category."""
    return unicodedata.category(c) == "Cc"


def _printable(c: str) -> bool:
    return len(c) == 1 and (c == " " or "!" <= c <= "~")


def _letter_escapes(l: str) -> str:
    """Escapes decoded as a reader decodes them: an HTML character reference
    (``&#40;``, ``&lpar;``, ``&nbsp;``) as the character it stands for but
    a control character other than a tab; a percent-escape (``%28``) as the
    printable ASCII character it stands for; a backslash escape (``\\u0064``) only where it
    writes a letter, a digit or ``_``. Mirrors ``fold::escapes``."""
    if "&" not in l and "\\" not in l and "%" not in l:
        return l
    out: list[str] = []
    i, n = 0, len(l)
    while i < n:
        c = l[i]
        if c in "&\\%":
            got = _unescape(l, i)
            if c == "&" and got is None:
                got = _named_reference(l, i)
            if c == "\\":
                ok = got is not None and (_is_ascii_alnum(got[0]) or got[0] == "_")
            elif c == "&":
                ok = got is not None and len(got[0]) == 1 and (got[0] == "\t" or not _is_control(got[0]))
            else:
                ok = got is not None and _printable(got[0])
            if ok:
                out.append(got[0])
                i += got[1]
                continue
        out.append(c)
        i += 1
    return "".join(out)


# ---- no invented ids (ids.rs) ---------------------------------------------------

#: What replaces an id the agent may not be shown (``ids::REPLACED_ID``).
REPLACED_ID = "[id not in this answer]"
#: Most separator characters between two hex groups of one split token
#: (``ids::MAX_JOIN``).
MAX_JOIN = 12
#: Hex digits in an id (``ids::ID_LEN``).
ID_LEN = 40
#: Hex groups looked at per chain (``ids::MAX_GROUPS``).
MAX_GROUPS = 256
#: Lines read as one around a line break for ids split over it
#: (``sanitize::MAX_ID_LINES``).
MAX_ID_LINES = 8

_HEX = frozenset("0123456789abcdefABCDEF")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{40,}")
#: ``joined_by`` after a break (Rust's ``usize::MAX``).
_BROKEN = 1 << 64


def _is_hex(c: str) -> bool:
    """Rust's ``u8::is_ascii_hexdigit`` on one character."""
    return c in _HEX


def _is_ascii_alnum(c: str) -> bool:
    """Rust's ``char::is_ascii_alphanumeric``."""
    return c.isascii() and c.isalnum()


def _has_token_any_case(haystack: str, hexs: str) -> bool:
    """Whether ``hexs`` stands in ``haystack`` (any case) not glued to more
    hex digits. Mirrors ``ids::has_token_any_case``."""
    lower = _ascii_lower(haystack)
    at = lower.find(hexs)
    while at >= 0:
        end = at + len(hexs)
        if not (at > 0 and _is_hex(haystack[at - 1])) and not (end < len(haystack) and _is_hex(haystack[end])):
            return True
        at = lower.find(hexs, at + 1)
    return False


def _value_has(v: Any, hexs: str) -> bool:
    """Whether ``hexs`` stands whole in a string of ``v`` (``ids::value_has``)."""
    if isinstance(v, str):
        return len(v) >= len(hexs) and _has_token_any_case(v, hexs)
    if isinstance(v, list):
        return any(_value_has(i, hexs) for i in v)
    if isinstance(v, dict):
        return any(_value_has(i, hexs) for i in v.values())
    return False


def _hex_runs(v: Any, out: set[str]) -> set[str]:
    """The id-long hex tokens of a JSON value, its strings and keys: their
    maximal runs of :data:`ID_LEN` or more hex digits, lower-case. Mirrors
    ``ids::HexRuns`` (a set where Rust keeps a sorted list)."""
    if isinstance(v, str):
        if len(v) >= ID_LEN:
            out.update(_ascii_lower(m.group()) for m in _HEX_RUN.finditer(v))
    elif isinstance(v, list):
        for i in v:
            _hex_runs(i, out)
    elif isinstance(v, dict):
        for k, i in v.items():
            _hex_runs(k, out)
            _hex_runs(i, out)
    return out


class Known:
    """Where the ids an agent may be shown come from (``ids::Known``): what
    it sent in this call (``sent``), the tool's result (``result``), the
    validated hints' arguments (``hints``), the session's history
    (``history``: lists of ids), and, to tell a split token that names a
    symbol, ``names_a_symbol(hex) -> bool`` (Rust: the graph). The hex runs
    of ``sent`` and ``result`` are read once, when first needed."""

    def __init__(self, *, sent: Optional[Mapping[str, Any]] = None, result: Any = None,
                 hints: Iterable[Mapping[str, Any]] = (), history: Iterable[Sequence[str]] = (),
                 names_a_symbol: Optional[Callable[[str], bool]] = None):
        self.sent = sent
        self.result = result
        self.hints = list(hints)
        self.history = [list(ids) for ids in history]
        self._names_a_symbol = names_a_symbol
        self._sent_runs: Optional[set[str]] = None
        self._result_runs: Optional[set[str]] = None

    def with_hints(self, hints: Iterable[Mapping[str, Any]]) -> "Known":
        """The same sources, with more validated hints' arguments
        (``Known::hint``, as ``Scope::new`` adds each allowed call's)."""
        known = Known(sent=self.sent, result=self.result, hints=[*self.hints, *hints], history=self.history,
                      names_a_symbol=self._names_a_symbol)
        known._sent_runs, known._result_runs = self._sent_runs, self._result_runs
        return known

    def contains(self, hexs: str) -> bool:
        """Whether ``hexs`` (lower-case hex digits) stands whole in something
        the agent may know (``Known::contains``)."""
        if any(_value_has(v, hexs) for h in self.hints for v in h.values()):
            return True
        if self.sent is not None:
            if self._sent_runs is None:
                self._sent_runs = _hex_runs(dict(self.sent), set())
            if hexs in self._sent_runs:
                return True
        if any(_ascii_lower(i) == hexs for ids in self.history for i in ids):
            return True
        if self.result is not None:
            if self._result_runs is None:
                self._result_runs = _hex_runs(self.result, set())
            return hexs in self._result_runs
        return False

    def quotes(self, text: str) -> bool:
        """Whether ``text`` stands verbatim in a string the agent sent or the
        result holds: text the policy did not invent (``Known::quotes``)."""

        def walk(v: Any) -> bool:
            if isinstance(v, str):
                return text in v
            if isinstance(v, list):
                return any(walk(i) for i in v)
            if isinstance(v, dict):
                return any(walk(i) for i in v.values())
            return False

        # A JSON value written whole that is the result or a value in it
        # (the host's own fallback text shows the result): its data.
        def holds(v: Any, value: Any) -> bool:
            if json_equal(v, value):
                return True
            if isinstance(v, list):
                return any(holds(i, value) for i in v)
            if isinstance(v, dict):
                return any(holds(i, value) for i in v.values())
            return False

        def whole() -> bool:
            try:
                value = _DECODER.decode(text)
            except (ValueError, RecursionError):
                return False
            # (serde_json reads no lone surrogate)
            if not isinstance(value, (dict, list)) or _has_surrogate(value):
                return False
            return (self.result is not None and holds(self.result, value)) or (
                self.sent is not None and (any(holds(v, value) for v in self.sent.values())
                                           or (isinstance(value, dict) and json_equal(value, dict(self.sent)))))

        text = _trim(text.rstrip("…"))
        return bool(text) and ((self.sent is not None and any(walk(v) for v in self.sent.values()))
                               or (self.result is not None and walk(self.result))
                               or (text[:1] in ("{", "[") and whole()))

    def names_a_symbol(self, hexs: str) -> bool:
        """Whether ``hexs`` is the id of a symbol (``Known::names_a_symbol``)."""
        return bool(self._names_a_symbol and self._names_a_symbol(hexs))


@dataclass
class _Group:
    """A run of hex digits with nothing between them (``ids::Group``):
    its digits in the line's digit buffer, where it stands, how many join
    characters precede it, and whether it is part of a word."""

    digits: tuple[int, int]
    span: tuple[int, int]
    joined_by: int
    in_word: bool


#: The first code point of each run of ten decimal digits outside ASCII
#: (``ids::DIGIT_ZEROS``: Unicode's ``Nd`` digits whose value is 0).
DIGIT_ZEROS = (
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20,
    0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0,
    0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
)


def _is_mark(c: str) -> bool:
    """Rust's ``unicode_normalization::char::is_combining_mark``."""
    return unicodedata.category(c)[0] == "M"


def _is_numeric(c: str) -> bool:
    """Rust's ``char::is_numeric`` (general categories ``N*``)."""
    return unicodedata.category(c)[0] == "N"


def _enclosed(c: str) -> Optional[str]:
    """The letter or digit an enclosed or marked character shows (``⑺``
    ``(7)``, ``⒈`` ``1.``, ``⒝`` ``(b)``, ``é``): its compatibility form
    less brackets, the dot and marks (``ids::enclosed``)."""
    inner = [d for d in unicodedata.normalize("NFKD", c) if d not in "()." and not _is_mark(d)]
    if len(inner) != 1 or not _is_ascii_alnum(inner[0]):
        return None
    return inner[0]


def _hex_of(c: str) -> Optional[str]:
    """The hex digit a reader sees in ``c``, a letter or digit outside
    ASCII, if any (other scripts' decimal digits, NFKC, enclosed forms,
    confusables; ``О`` for 0, ``І`` for 1). Mirrors ``ids::hex_of``."""
    o = ord(c)
    zero = next((z for z in reversed(DIGIT_ZEROS) if z <= o), None)
    if zero is not None and o - zero < 10 and _is_numeric(chr(zero)) and _is_numeric(c):
        return str(o - zero)
    plain = _latin(c) or _enclosed(c)
    if plain is None:
        return None
    if plain in "Oo":
        return "0"
    if plain in "lI":
        return "1"
    return _ascii_lower(plain) if _is_hex(plain) else None


def _rust_u32(digits: str, radix: int) -> Optional[int]:
    """Rust's ``u32::from_str_radix`` (and ``str::parse::<u32>`` for base
    10): an optional ``+``, then ASCII digits of the base; ``None`` past
    ``u32::MAX``. (Python's ``int`` also takes spaces, ``_`` and other
    scripts' digits.)"""
    body = digits[1:] if digits.startswith("+") else digits
    allowed = "0123456789abcdefABCDEF"[: radix if radix == 10 else 22]
    if not body or any(c not in allowed for c in body):
        return None
    value = int(body, radix)
    return value if value <= 0xFFFFFFFF else None


def _char(code: Optional[int]) -> Optional[str]:
    """Rust's ``char::from_u32``."""
    if code is None or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code)


def _escaped_byte(s: str, at: int) -> Optional[tuple[str, int]]:
    """The byte an escape at ``s[at]`` writes in hex (``%73``, ``\\x73``,
    ``&#x73;``, ``\\u0073``, ``\\u{73}``), as its two hex digits (lower
    case), and the escape's length. Mirrors ``ids::escaped_byte``."""
    first = s[at]
    if first == "%":
        digits, size = s[at + 1:at + 3], 3
        if len(digits) != 2:
            return None
    elif first == "&":
        if not (s.startswith("&#x", at) or s.startswith("&#X", at)):
            return None
        head = s[at + 3:at + 9]
        end = head.find(";")
        # (Rust looks at 6 bytes: a body that is not ASCII fails either way)
        if end < 0 or not head[:end].isascii():
            return None
        digits, size = head[:end], 3 + end + 1
    elif first == "\\":
        j = at
        while j < len(s) and s[j] == "\\":
            j += 1
        slashes = j - at
        kind = s[j:j + 1]
        if kind == "x":
            digits, size = s[j + 1:j + 3], slashes + 3
            if len(digits) != 2:
                return None
        elif kind == "u" and s[j + 1:j + 2] == "{":
            close = s.find("}", j + 2)
            if close < 0:
                return None
            digits, size = s[j + 2:close], close + 1 - at
        elif kind == "u":
            digits, size = s[j + 1:j + 5], slashes + 5
            if len(digits) != 4:
                return None
        else:
            return None
    else:
        return None
    value = _rust_u32(digits, 16)
    if value is None or value > 0xFF or not digits:
        return None
    return f"{value:02x}", size


def _unescape(s: str, at: int) -> Optional[tuple[str, int]]:
    """The character an escape at ``s[at]`` stands for, and its length:
    ``\\u0037``, ``\\u{37}``, ``\\U00000037``, ``\\x37``, ``\\x{37}``,
    ``\\067``, ``%37``, ``%u0037``, ``&#55;``, ``&#x37;`` (any number of
    backslashes before ``u``/``x``). Mirrors ``ids::unescape``."""

    def hex_at(frm: int, n: int) -> Optional[int]:
        digits = s[frm:frm + n]
        return int(digits, 16) if len(digits) == n and all(_is_hex(d) for d in digits) else None

    first = s[at]
    if first == "\\":
        j = at
        while j < len(s) and s[j] == "\\":
            j += 1
        kind = s[j:j + 1]
        if kind in ("u", "x") and s[j + 1:j + 2] == "{":
            close = s.find("}", j + 2, j + 10)
            code = s[j + 2:close] if close >= 0 else ""
            if not 1 <= _utf8_len(code) <= 6:
                return None
            c = _char(_rust_u32(code, 16))
            return (c, close + 1 - at) if c is not None else None
        if kind in ("u", "x", "U"):
            n = {"u": 4, "x": 2, "U": 8}[kind]
            c = _char(hex_at(j + 1, n))
            return (c, j + 1 + n - at) if c is not None else None
        if kind in ("0", "1", "2", "3"):
            digits = s[j:j + 3]
            c = _char(_rust_u32(digits, 8)) if len(digits) == 3 and all(d in "01234567" for d in digits) else None
            return (c, j + 3 - at) if c is not None else None
        return None
    if first == "%" and s[at + 1:at + 2] in ("u", "U"):
        c = _char(hex_at(at + 2, 4))
        return (c, 6) if c is not None else None
    if first == "%":
        c = _char(hex_at(at + 1, 2))
        return (c, 3) if c is not None else None
    if first == "&" and s[at + 1:at + 2] == "#":
        head = s[at + 2:at + 12]
        semi = head.find(";")
        # (Rust looks at 10 bytes: a body that is not ASCII fails either way.)
        if semi < 0 or not head[:semi].isascii():
            return None
        body = head[:semi]
        code = _rust_u32(body[1:], 16) if body[:1] in ("x", "X") else _rust_u32(body, 10)
        c = _char(code)
        return (c, semi + 3) if c is not None else None
    return None


def _add_digits(current: Optional[_Group], buf: list[str], digits: Iterable[str], span: tuple[int, int],
                joined_by: int, in_word: bool) -> _Group:
    """``digits``, read from ``span`` of the line, added to the group being
    read, or to a new one joined as ``joined_by`` and ``in_word`` say
    (``ids::add_digits``)."""
    if current is None:
        current = _Group((len(buf), len(buf)), (span[0], span[0]), joined_by, in_word)
    buf.extend(digits)
    current.digits = (current.digits[0], len(buf))
    current.span = (current.span[0], span[1])
    return current


def _groups(l: str, as_bytes: bool = False) -> tuple[str, list[_Group]]:
    """The hex groups of a line, in order, with how each joins the previous
    one; and their digits (lower case). With ``as_bytes``, an escape that
    writes a byte in hex counts as the two hex digits it is written with
    (:func:`_escaped_byte`). Mirrors ``ids::groups``."""
    buf: list[str] = []
    out: list[_Group] = []
    current: Optional[_Group] = None
    joins = _BROKEN
    after_break = False
    # The separator just read: a run of one (spaces, dots) counts once.
    last_join: Optional[str] = None
    i, n = 0, len(l)
    while i < n:
        b = l[i]
        escaped = _escaped_byte(l, i) if as_bytes and b in "%\\&" else None
        if escaped is not None:
            digits, size = escaped
            current = _add_digits(current, buf, digits, (i, i + size), joins, after_break)
            last_join = None
            i += size
            continue
        # `0x` before hex digits, not glued to a word: a prefix a reader
        # skips, as a separator.
        if b == "0" and l[i + 1:i + 2] in ("x", "X") and i + 2 < n and _is_hex(l[i + 2]) \
                and not (i > 0 and _is_ascii_alnum(l[i - 1])):
            if current is not None:
                out.append(current)
                current = None
                joins = 0
            joins += 2
            after_break = False
            last_join = None
            i += 2
            continue
        # Markup that shows nothing (`<span></span>`, a comment, `&shy;`)
        # is not there for a reader: what stands on either side is one.
        unseen = _unseen_at(l, i) if b in "<&" else None
        if unseen is not None:
            i += unseen
            continue
        if _is_hex(b):
            end = i
            while end < n and _is_hex(l[end]):
                end += 1
            current = _add_digits(current, buf, _ascii_lower(l[i:end]), (i, end), joins, after_break)
            last_join = None
            i = end
            continue
        c, size = (_unescape(l, i) or (b, 1)) if b in "\\%&" else (b, 1)
        # A mark belongs to the character before it: nothing of its own.
        if _is_mark(c):
            i += size
            continue
        unit: Optional[str]  # a hex digit, "" for a join, None for a break
        if c.isascii():
            unit = _ascii_lower(c) if _is_hex(c) else None if c.isalnum() else ""
        elif _is_symbol(c):
            unit = ""
        else:
            h = _hex_of(c)
            unit = h if h is not None else None if _is_alphanumeric(c) else ""
        if unit:
            current = _add_digits(current, buf, unit, (i, i + size), joins, after_break)
            last_join = None
        elif unit == "":
            if current is not None:
                out.append(current)
                current = None
                joins = 0
            if last_join != c:
                joins += 1
            last_join = c
            after_break = False
        else:
            last_join = None
            if current is not None:
                current.in_word = True
                out.append(current)
                current = None
            joins = _BROKEN
            after_break = True
        i += size
    if current is not None:
        out.append(current)
    return "".join(buf), out


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping spans merged (``ids::merge``)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda r: r[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def forged_spans(l: str, known: Known) -> list[tuple[int, int]]:
    """The spans of ``l`` that show an id the agent may not be shown: a
    token of :data:`ID_LEN` or more hex digits not known, or a split token
    (groups joined by at most :data:`MAX_JOIN` separators, none part of a
    word, :data:`ID_LEN` digits in all, holding a letter and a digit or
    naming a symbol) not known. Mirrors ``ids::forged_spans``."""
    if sum(1 for c in l if _is_hex(c) or not c.isascii()) < ID_LEN:
        return []
    spans = _forged_in(l, False, known)
    # Escapes read a second way: as the hex digits of the bytes they write.
    if "%" in l or "\\" in l or "&#" in l:
        spans.extend(_forged_in(l, True, known))
    return _merge(spans)


#: Most numbered labels (``(1/2):``, ``2)``) a split token's chain passes
#: over (``ids::MAX_LABELS``).
MAX_LABELS = 3


def _forged_in(l: str, as_bytes: bool, known: Known) -> list[tuple[int, int]]:
    """:func:`forged_spans` of one reading of the line's escapes
    (``ids::forged_in``)."""
    buf, groups = _groups(l, as_bytes)

    def label(g: _Group) -> bool:
        # A short run of decimal digits: a label between chunks, or a chunk.
        return g.digits[1] - g.digits[0] <= 3 and buf[g.digits[0]:g.digits[1]].isdigit()

    spans: list[tuple[int, int]] = []
    for i, g in enumerate(groups):
        size = g.digits[1] - g.digits[0]
        if size >= ID_LEN:
            if not known.contains(buf[g.digits[0]:g.digits[1]]):
                spans.append(g.span)
            continue
        if g.in_word:
            continue
        for skip_labels in (False, True):
            digits = buf[g.digits[0]:g.digits[1]]
            skipped = 0
            for nxt in groups[i + 1:i + 1 + MAX_GROUPS]:
                more = nxt.digits[1] - nxt.digits[0]
                if nxt.joined_by > MAX_JOIN or nxt.in_word or more >= ID_LEN:
                    break
                if skip_labels and label(nxt) and skipped < MAX_LABELS:
                    skipped += 1
                    continue
                if len(digits) + more > ID_LEN:
                    break
                digits += buf[nxt.digits[0]:nxt.digits[1]]
                if len(digits) == ID_LEN:
                    mixed = any(d.isdigit() for d in digits) and any(d.isalpha() for d in digits)
                    if (mixed or known.names_a_symbol(digits)) and not known.contains(digits):
                        spans.append((g.span[0], nxt.span[1]))
                    break
    return spans


def replace_forged(l: str, known: Known) -> tuple[str, int]:
    """``l`` with every id the agent may not be shown replaced in place by
    :data:`REPLACED_ID`, and how many were (``ids::replace_forged``)."""
    spans = forged_spans(l, known)
    if not spans:
        return l, 0
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(l[at:start])
        out.append(REPLACED_ID)
        at = end
    out.append(l[at:])
    return "".join(out), len(spans)


def all_known(v: Any, known: Known) -> bool:
    """Whether every id-shaped token in the strings of ``v`` is one the
    agent may be shown (``ids::all_known``)."""
    if isinstance(v, str):
        return not forged_spans(v, known)
    if isinstance(v, list):
        return all(all_known(i, known) for i in v)
    if isinstance(v, dict):
        return all(all_known(i, known) for i in v.values())
    return True


def _ids_over_lines(text: str, known: Known) -> tuple[str, int, int]:
    """``text`` with the ids it forges over line breaks replaced: wherever a
    line ends in a run of hex digits shorter than an id and the next starts
    with one, those lines (up to :data:`MAX_ID_LINES`) are read as one; with
    the ids replaced and the lines changed. Mirrors
    ``sanitize::ids_over_lines``."""

    def ends_short(l: str) -> bool:
        end = len(l)
        while end > 0 and not _is_ascii_alnum(l[end - 1]):
            end -= 1
        t = l[:end]
        run = len(t) - len(t.rstrip("0123456789abcdefABCDEF"))
        token = not (len(t) > run and _is_alphanumeric(t[len(t) - run - 1]))
        return _utf8_len(l[len(t):]) <= MAX_JOIN and 1 <= run < ID_LEN and token

    def starts_short(l: str) -> bool:
        start = 0
        while start < len(l) and not _is_ascii_alnum(l[start]):
            start += 1
        t = l[start:]
        run = len(t) - len(t.lstrip("0123456789abcdefABCDEF"))
        token = not (run < len(t) and _is_alphanumeric(t[run]))
        return _utf8_len(l[:len(l) - len(t)]) <= MAX_JOIN and 1 <= run < ID_LEN and token

    lines = text.split("\n")

    # The line that continues line `k`'s id, past up to two blank lines.
    def following(k: int) -> Optional[int]:
        j = next((j for j in range(k + 1, min(len(lines), k + 4)) if _trim(lines[j])), None)
        return j if j is not None and ends_short(lines[k]) and starts_short(lines[j]) else None

    out: list[str] = []
    ids = changed = 0
    i = 0
    while i < len(lines):
        j = following(i)
        if j is None:
            out.append(lines[i])
            i += 1
            continue
        while j - i + 1 < MAX_ID_LINES:
            k = following(j)
            if k is None:
                break
            j = k
        read, n = replace_forged("\n".join(lines[i:j + 1]), known)
        if n:
            ids += n
            changed += j - i + 1
        out.append(read)
        i = j + 1
    return "\n".join(out), ids, changed


# ---- the tools a text may call (calls.rs: Vocabulary) ----------------------------

#: The trail argument every Signpost tool takes (``carry::TRAIL_ARG``): a
#: parameter's name in every vocabulary.
TRAIL_ARG = "trail"
#: Most bytes between a tool's name and its arguments (``calls::MAX_CALL_GAP``).
MAX_CALL_GAP = 48
#: Most words between them, each of at most 10 letters (``calls::MAX_CALL_WORDS``).
MAX_CALL_WORDS = 2
#: Most tool names spelled otherwise in one line (``calls::MAX_SPELLED``).
MAX_SPELLED = 8
#: The program's subcommands besides one per tool (``calls::OTHER_SUBCOMMANDS``).
OTHER_SUBCOMMANDS = ("call", "policy", "index", "graph", "canary", "serve", "proxy", "help")
#: Keys that name a tool in a record (``calls::TOOL_KEYS``).
TOOL_KEYS = ("tool", "tool_name", "toolname", "function", "function_name", "recipient_name")
#: Keys that hold a call's arguments in a record (``calls::ARG_KEYS``).
ARG_KEYS = ("args", "arguments", "input", "parameters", "params", "kwargs", "tool_input")
#: Keys that name a tool outside JSON only when their value is exactly one
#: (``calls::NAMING_KEYS``).
NAMING_KEYS = ("name", "action", "method")
#: Keys under which a record says which call to make (``calls::VERB_KEYS``).
VERB_KEYS = ("method", "action", "call", "op", "operation", "command", "cmd", "invoke", "execute", "run", "use", "do")

#: Signpost's tools and their parameters, as its input schemas list them.
SIGNPOST_PARAMS: dict[str, tuple[str, ...]] = {
    "resolve": ("identifier", "kind", "trail"),
    "describe": ("id", "trail"),
    "find": ("kind", "limit", "name", "offset", "path", "role", "trail"),
    "search": ("limit", "offset", "query", "trail"),
    "neighbors": ("direction", "edge_types", "ids", "limit", "offset", "trail"),
}


class Vocabulary:
    """The tools a text may call, as the sanitiser reads them: their names
    and their parameters' names (``calls::Vocabulary``). ``tools`` maps each
    tool's name to its input JSON Schema (its ``properties`` are the
    parameters). ``strict_templates``: a template (a call with a
    ``<placeholder>``) may show only values the agent sent or the result
    holds; for tools that may change state (``Vocabulary::new``; Signpost's
    own read-only tools, :meth:`signpost`, do without). ``acting``: the
    tools that may change state (``Vocabulary::acting``), after whose names
    a bare value is an argument (``delete_entities Alice``); by default every
    tool with ``strict_templates``, none without."""

    def __init__(self, tools: Mapping[str, Mapping[str, Any]], strict_templates: bool = True,
                 acting: Optional[Iterable[str]] = None):
        names: list[str] = []
        params = [TRAIL_ARG]
        #: Each tool's own parameters and its required ones (lower-case), by its name.
        self.params_of: dict[str, list[str]] = {}
        self.required_of: dict[str, list[str]] = {}
        for name, schema in tools.items():
            name = _ascii_lower(_trim(name))
            properties = schema.get("properties") if isinstance(schema, Mapping) else None
            own = [_ascii_lower(k) for k in properties] if isinstance(properties, Mapping) else []
            required = schema.get("required") if isinstance(schema, Mapping) else None
            params.extend(own)
            if name:
                self.params_of[name] = own
                self.required_of[name] = [_ascii_lower(r) for r in required if isinstance(r, str)] \
                    if isinstance(required, list) else []
                names.append(name)
        #: Lower-case, longest first (a name that ends another is tried after it).
        self.names: list[str] = sorted(set(names), key=lambda n: (-_utf8_len(n), n))
        self._names = frozenset(self.names)
        params += [p.replace("_", "-") for p in params if "_" in p]
        self.params = frozenset(p for p in params if p)
        # Each parameter's letters and digits (`same_skeleton`), with the
        # lengths of the names that have them.
        self._param_skeletons: dict[str, set[int]] = {}
        for p in self.params:
            skeleton = "".join(c for c in p if _is_ascii_alnum(c))
            if skeleton:
                self._param_skeletons.setdefault(skeleton, set()).add(_utf8_len(p))
        word = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        word.update(c for n in self.names for c in n if c.isascii())
        self.word = frozenset(word)
        self._words = re.compile("[" + "".join(re.escape(c) for c in sorted(word)) + "]+")
        self.last = frozenset(n[-1] for n in self.names)
        self.skeletons: list[tuple[str, str, str]] = []
        for n in self.names:
            skeleton = "".join(c for c in n if _is_ascii_alnum(c))
            if len(skeleton) >= 4:
                self.skeletons.append((skeleton[0], skeleton, n))
        self.skeleton_starts = frozenset(s[0] for s in self.skeletons)
        self.strict_templates = strict_templates
        if acting is None:
            acting = self.names if strict_templates else ()
        self.acting = frozenset(_ascii_lower(_trim(t)) for t in acting)

    @staticmethod
    def signpost() -> "Vocabulary":
        """Signpost's own tools (``Vocabulary::signpost``)."""
        return _SIGNPOST

    def find(self, word: str) -> Optional[str]:
        """The tool ``word`` is (any ASCII case), as the vocabulary spells it."""
        lower = _ascii_lower(word)
        return lower if lower in self._names else None

    def named(self, word: str) -> Optional[tuple[str, int]]:
        """The tool a word names, and where its name starts in the word: the
        whole word (less ``-``, ``.``, ``/``, ``:`` at either end), or a name
        ending it after a separator (``mcp__signpost__describe``,
        ``functions.search``). Mirrors ``Vocabulary::named``."""
        if not word:
            return None
        if not self._ends_a_name(word[-1]) and word[-1] not in "-./:":
            return None
        start = len(word) - len(word.lstrip("-./:"))
        word = word[start:].rstrip("-./:")
        if not word or not self._ends_a_name(word[-1]):
            return None
        name = self.find(word)
        if name is not None:
            return name, start
        if not any(c in word for c in "_./:-"):
            return None
        for name in self.names:
            at = len(word) - len(name)
            if at >= 0 and _ascii_lower(word[at:]) == name and word[:at].endswith(("_", ".", "/", ":", "-")):
                return name, start + at
        return None

    def _ends_a_name(self, c: str) -> bool:
        return _ascii_lower(c) in self.last

    def is_param(self, key: str) -> bool:
        """Whether ``key`` is a parameter's name (any ASCII case)."""
        if not key:
            return False
        if _ascii_lower(key) in self.params:
            return True
        skeleton = "".join(_ascii_lower(c) for c in key if _is_ascii_alnum(c))
        lengths = self._param_skeletons.get(skeleton) if skeleton else None
        return lengths is not None and any(abs(n - _utf8_len(key)) <= 4 for n in lengths)

    def is_argument_key(self, key: str) -> bool:
        """A parameter's name, or a key that holds arguments (:data:`ARG_KEYS`)."""
        return self.is_param(key) or _ascii_lower(key) in ARG_KEYS

    def is_key(self, key: str) -> bool:
        """:meth:`is_argument_key`, or a key that names a tool (:data:`TOOL_KEYS`)."""
        return self.is_argument_key(key) or _ascii_lower(key) in TOOL_KEYS

    def words(self, s: str) -> Iterator[tuple[int, int]]:
        """The runs of ASCII letters and ``_`` (and of what tool names hold)
        in a line: the words a tool name, a record key or the program's
        name can be. Mirrors ``calls::words``."""
        return (m.span() for m in self._words.finditer(s))


#: Signpost's tools' required parameters, as its input schemas list them.
SIGNPOST_REQUIRED: dict[str, tuple[str, ...]] = {
    "resolve": ("identifier",),
    "describe": ("id",),
    "search": ("query",),
    "neighbors": ("ids", "direction", "edge_types"),
}

_SIGNPOST = Vocabulary({name: {"properties": dict.fromkeys(params), "required": list(SIGNPOST_REQUIRED.get(name, ()))}
                        for name, params in SIGNPOST_PARAMS.items()}, strict_templates=False)


def _vocabulary(v: Union[None, Vocabulary, Mapping[str, Mapping[str, Any]], Iterable[str]]) -> Vocabulary:
    """A vocabulary from what a caller gives: Signpost's by default, tool
    schemas by name, or bare tool names (no parameters then)."""
    if v is None:
        return _SIGNPOST
    if isinstance(v, Vocabulary):
        return v
    if isinstance(v, Mapping):
        return Vocabulary(v)
    return Vocabulary({name: {} for name in v})


def is_subcommand(word: str) -> bool:
    """Whether ``word`` is one of the program's subcommands (``calls::is_subcommand``)."""
    return word in TOOL_NAMES or word in OTHER_SUBCOMMANDS


def tool_named(name: str, vocab: Vocabulary) -> Optional[str]:
    """The tool ``name`` names, with or without a namespace
    (``calls::tool_named``)."""
    named = vocab.named(_trim(name))
    return named[0] if named else None


# ---- finding calls (calls.rs) ------------------------------------------------------

Quoted = Callable[[str], bool]


def _never_quoted(_: str) -> bool:
    return False


@dataclass
class _Found:
    """A call found in a line (``calls::Found``): tool and arguments when
    they are a JSON object; where it stands in the folded line, when known."""

    call: Optional[tuple[str, dict]]
    span: Optional[tuple[int, int]]

    def verdict(self, folded: str, allowed: Sequence[tuple[str, Mapping[str, Any]]], known: Known,
                vocab: Vocabulary) -> str:
        """``"allowed"`` (a validated hint or a template), ``"quoted"`` (its
        text stands verbatim in the result or in what the agent sent: the
        code's own text, neither allowed nor cut) or ``"unvalidated"``.
        Mirrors ``sanitize::verdict``."""
        if self.call is not None:
            tool, args = self.call
            if template_allowed(args, known, vocab) or any(
                    _ascii_lower(t) == _ascii_lower(tool) and json_equal(a, args) for t, a in allowed):
                return "allowed"
        if self.span is not None and known.quotes(folded[self.span[0]:self.span[1]]):
            return "quoted"
        return "unvalidated"


def is_template(args: Mapping[str, Any]) -> bool:
    """Some argument string, at any depth, is a whole ``<placeholder>``: a
    call to adapt, not to send. Mirrors ``sanitize::is_template``."""

    def holds_one(v: Any) -> bool:
        if isinstance(v, str):
            return _placeholder(v) is not None
        if isinstance(v, list):
            return any(holds_one(x) for x in v)
        if isinstance(v, dict):
            return any(holds_one(x) for x in v.values())
        return False

    return any(holds_one(v) for v in args.values())


def _placeholder(s: str) -> Optional[str]:
    """What a whole ``<placeholder>`` string holds between its brackets
    (``sanitize::placeholder``)."""
    return s[1:-1] if len(s) > 2 and s.startswith("<") and s.endswith(">") else None


def _describes(inner: str) -> bool:
    """Whether a placeholder's text describes a value (``<name>``,
    ``<entityName>``): some word of it starts with a lower-case letter and
    has two or more (or is all of it: ``<x>``), and none starts with a
    capital; ``<Alice>``, ``<the Alice entity>`` are values. Mirrors
    ``sanitize::describes``."""
    words = [w for w in re.split(r"[^\w]|_", inner) if w]
    return all(not w[0].isupper() for w in words) \
        and any((len(w) >= 2 or len(w) == len(inner)) and w[0].islower() for w in words)


def template_allowed(args: Mapping[str, Any], known: Known, vocab: Vocabulary) -> bool:
    """Whether a call with ``args`` may be shown as a template: it is one,
    and, for a vocabulary with strict templates, every other value in it
    stands in what the agent sent or the result holds, and each placeholder
    describes a value (:func:`_describes`). Mirrors
    ``sanitize::template_allowed``."""

    def shown(v: Any) -> bool:
        if isinstance(v, str):
            inner = _placeholder(v)
            if inner is not None:
                return _describes(inner)
            return not v or known.quotes(v)
        if isinstance(v, bool) or v is None:
            return True
        if isinstance(v, (int, float)):
            return known.quotes(dumps(v))
        if isinstance(v, list):
            return all(shown(i) for i in v)
        if isinstance(v, dict):
            return all(shown(i) for i in v.values())
        return True

    return is_template(args) and (not vocab.strict_templates or all(shown(v) for v in args.values()))


def _lstrip(s: str, pred: Callable[[str], bool], start: int = 0) -> int:
    """The index of the first character of ``s`` from ``start`` on that
    ``pred`` does not hold for (Rust's ``trim_start_matches``)."""
    while start < len(s) and pred(s[start]):
        start += 1
    return start


def _rstrip(s: str, pred: Callable[[str], bool], end: Optional[int] = None) -> int:
    """The index past the last character of ``s[:end]`` that ``pred`` does
    not hold for (Rust's ``trim_end_matches``)."""
    end = len(s) if end is None else end
    while end > 0 and pred(s[end - 1]):
        end -= 1
    return end


def _split_whitespace(s: str) -> list[str]:
    """Rust's ``str::split_whitespace`` (White_Space)."""
    return [w for w in re.split(_WS_RUN, s) if w]


_WS_RUN = "[" + "".join(re.escape(c) for c in sorted(_WHITE_SPACE)) + "]+"
_TOKENS = re.compile("[^" + "".join(re.escape(c) for c in sorted(_WHITE_SPACE)) + ",;]+")


def _calls_in(folded: str, vocab: Vocabulary, quoted: Quoted = _never_quoted) -> Optional[list[_Found]]:
    """Every call in a folded line; ``None`` when the line cannot be analysed
    within bounds (or its JSON nests past Python's recursion limit).
    Mirrors ``calls::calls_in``."""
    try:
        found = _calls_as_spelled(folded, vocab, quoted)
        if found is None:
            return None
        spelled = _spelled_calls(folded, vocab, quoted)
        return None if spelled is None else found + spelled
    except RecursionError:
        return None


def _spelled_calls(folded: str, vocab: Vocabulary, quoted: Quoted) -> Optional[list[_Found]]:
    """Calls to a tool whose name is spelled otherwise (``delete-entities``,
    ``deleteEntities``, ``Delete Entities``, ``f-i-n-d``), each cut to the
    end of the line. Mirrors ``calls::spelled_calls``."""
    found: list[_Found] = []
    seen = 0
    for at, c in enumerate(folded):
        first = _ascii_lower(c)
        if first not in vocab.skeleton_starts or (at > 0 and _is_ascii_alnum(folded[at - 1])):
            continue
        for start, skeleton, name in vocab.skeletons:
            if start != first:
                continue
            end = _spelled_at(folded, at, skeleton, name)
            if end is None:
                continue
            seen += 1
            if seen > MAX_SPELLED:
                return None
            calls = _calls_as_spelled(name + folded[end:], vocab, quoted)
            if calls is None:
                return None
            call = next((f for f in calls if f.span is not None and f.span[0] == 0), None)
            if call is not None:
                found.append(_Found(call.call, (at, len(folded))))
    return found


def _spelled_at(s: str, at: int, skeleton: str, name: str) -> Optional[int]:
    """Where ``name`` (its letters and digits ``skeleton``) ends when it is
    spelled otherwise from ``at`` on; ``None`` where it is not, or is
    spelled as it is. Mirrors ``calls::spelled_at``."""
    i = at
    for n, want in enumerate(skeleton):
        if n > 0:
            i += _name_gap(s, i)
        if i >= len(s) or _ascii_lower(s[i]) != want:
            return None
        i += 1
    as_named = _ascii_lower(s[at:i]) == name
    return i if not as_named and not (i < len(s) and _is_ascii_alnum(s[i])) else None


#: Longest markup tag read inside a name (``<b>``, ``</span>``), in bytes
#: (``notations::MAX_TAG_IN_NAME``).
MAX_TAG_IN_NAME = 12

_NAME_SPLITS = frozenset("-_ ./\\*`~+·\u2010\u2011\u2012\u2013\u2014\u2015\u2027\u203f\u2040\u2054\u2212"
                         "\u2e0f\u30fb\ufe33\ufe34\ufe4d\ufe4e\ufe4f\ufe58\ufe63")


def _name_gap(s: str, at: int) -> int:
    """How much of ``s[at:]`` may split the letters of a name a reader still
    reads as one: ``-``, ``_``, spaces, ``.``, ``/``, ``\\``, ``*``,
    backticks, ``~``, ``+``, the middle dot, Unicode's dashes and
    connectors, and markup tags (``<b>``). Mirrors ``notations::name_gap``."""
    i, n = at, len(s)
    while i < n:
        c = s[i]
        if c in _NAME_SPLITS:
            i += 1
            continue
        if c != "<":
            break
        end = s.find(">", i, i + MAX_TAG_IN_NAME)
        inside = s[i + 1:end].lstrip("/") if end > i else ""
        if not (inside and inside.isascii() and all(_is_ascii_alnum(d) for d in inside)):
            break
        i = end + 1
    return i - at


@dataclass
class _Signs:
    """What a line holds that a call is made of (``calls::Signs``)."""

    brace: bool = False
    tool: bool = False
    key: bool = False
    program: bool = False


def _may_hold_call(folded: str, vocab: Vocabulary) -> _Signs:
    """Whether a line can hold a call at all: a ``{``, or a word that is a
    tool name, a key that names one, or the program's name. Mirrors
    ``calls::may_hold_call``."""
    signs = _Signs(brace="{" in folded)
    for start, end in vocab.words(folded):
        # A word glued to a digit (the letters of a hex id) is none of these.
        if (start > 0 and folded[start - 1].isdigit() and folded[start - 1].isascii()) \
                or (end < len(folded) and folded[end].isdigit() and folded[end].isascii()):
            continue
        word = folded[start:end]
        signs.tool = signs.tool or vocab.named(word) is not None
        lower = _ascii_lower(word)
        signs.key = signs.key or lower in TOOL_KEYS or lower in NAMING_KEYS
        signs.program = signs.program or lower == "signpost"
    return signs


def _calls_as_spelled(folded: str, vocab: Vocabulary, quoted: Quoted) -> Optional[list[_Found]]:
    """:func:`_calls_in` of names spelled as the vocabulary spells them.
    Mirrors ``calls::calls_as_spelled``."""
    signs = _may_hold_call(folded, vocab)
    if not (signs.brace or signs.tool or signs.key or signs.program):
        return []
    lower = _ascii_lower(folded)
    found: Optional[list[_Found]] = []
    if signs.brace or signs.key:
        found = _json_calls(folded, lower, signs.key, vocab, quoted)
        if found is None:
            return None
    if signs.tool:
        _named_calls(folded, lower, vocab, found)
    if signs.program:
        _shell_calls(lower, found)
    extra = []
    if signs.tool and "|" in folded:
        extra.append(_flattened_table(folded, vocab))
    if signs.tool and ("<td" in lower or "<th" in lower):
        extra.append(_html_cells(lower, vocab))
    if signs.tool and signs.key:
        extra.append(_header_then_tool(lower, vocab))
    found.extend(f for f in extra if f is not None)
    return found


def _header_then_tool(lower: str, vocab: Vocabulary) -> Optional[_Found]:
    """A table without pipes flattened onto one line: a key naming a tool,
    parameters' names, then a tool's name and its values; from the key on.
    Mirrors ``calls::header_then_tool``."""
    words = ((m.start(), m.group().strip("\"'`*")) for m in _TOKENS.finditer(lower))
    start = next((at for at, w in words if w in TOOL_KEYS), None)
    if start is None:
        return None
    params = 0
    for _, w in words:
        if vocab.is_key(w):
            params += vocab.is_param(w)
        else:
            return _Found(None, (start, len(lower))) if params > 0 and vocab.find(w) is not None else None
    return None


def _html_cells(lower: str, vocab: Vocabulary) -> Optional[_Found]:
    """An HTML table's cells on one line: one naming a tool and one naming a
    parameter make it a call, from its first cell on. Mirrors
    ``calls::html_cells``."""
    cells: list[str] = []
    first: Optional[int] = None
    at = lower.find("<t")
    while at >= 0:
        tag = at + 1
        if (lower.startswith("td", tag) or lower.startswith("th", tag)) and lower[tag + 2:tag + 3] in (">", " ") \
                and lower[tag + 2:tag + 3]:
            close = lower.find(">", tag)
            if close >= 0:
                body_end = lower.find("<", close + 1)
                cells.append(_trim(lower[close + 1:body_end if body_end >= 0 else len(lower)]))
                first = at if first is None else first
        at = lower.find("<t", at + 1)
    named = any(tool_named(c, vocab) is not None for c in cells)
    keyed = any(vocab.is_argument_key(c) for c in cells)
    return _Found(None, (first or 0, len(lower))) if named and keyed else None


def _flattened_table(folded: str, vocab: Vocabulary) -> Optional[_Found]:
    """A Markdown table written on one line: a delimiter cell, a cell naming
    a tool and one naming a parameter make it a call, from its first ``|``
    on. Mirrors ``calls::flattened_table``."""
    cells = _cells(folded, "pipes")
    delimiter = any(("---" in c or "===" in c) and all(x in "-:+= " for x in c) for c in cells)
    named = any(tool_named(c, vocab) is not None for c in cells)
    keyed = any(vocab.is_argument_key(c) for c in cells)
    start = folded.find("|")
    return _Found(None, (start, len(folded))) if start >= 0 and delimiter and named and keyed else None


def _json_calls(folded: str, lower: str, keys: bool, vocab: Vocabulary, quoted: Quoted) -> Optional[list[_Found]]:
    """Calls written as a JSON object after a tool name, and records inside
    any JSON object of the line. Mirrors ``calls::json_calls``."""
    found: list[_Found] = []
    records = failed = 0
    parsed: list[tuple[int, int]] = []
    i = 0
    n = len(folded)
    while True:
        at = folded.find("{", i)
        if at < 0:
            break
        named = _tool_before(folded, at, vocab)
        obj = _parse_object_at(folded, at)
        if obj is not None:
            args, end = obj
            parsed.append((at, end))
            # A tool named anywhere before it on the line (past the last
            # object) is its name too, however far or wordy the gap.
            if named is None:
                before = _named_before(lower[i:at], vocab)
                named = (before[0], i + before[1]) if before else None
            start = named[1] if named else at
            inner: list[_Found] = []
            r = _calls_in_map(args, inner, 0, vocab, quoted)
            if r is None:
                return None
            records += r
            after = None if named else _tool_after(folded, end, vocab)
            if named:
                found.append(_Found((named[0], args), (start, end)))
            elif after is not None and _is_arguments(args, after[0], vocab):
                # The arguments first, then the tool they are for
                # (`Pass {"id": …} to neighbors`).
                found.append(_Found((after[0], args), (at, after[1])))
            # Calls inside the object are cut out with the whole object.
            found.extend(_Found(f.call, (start, end)) for f in inner)
            i = end
        else:
            if named:
                found.append(_Found(None, (named[1], n)))
            failed += 1
            if failed > MAX_FAILED_PARSES:
                return None
            i = at + 1
        if i >= n:
            break
    # A record written out in another notation (`tool: describe`): each
    # mention needs a record parsed above (cut from the first mention on).
    mentions = _tool_key_mentions(lower, vocab, parsed) if keys else []
    if len(mentions) > records:
        found.append(_Found(None, (mentions[0], n)))
    return found


def _calls_in_value(v: Any, found: list[_Found], depth: int, vocab: Vocabulary, quoted: Quoted) -> Optional[int]:
    """Calls inside a parsed JSON value (records naming a tool, and calls
    written inside its strings); the number of records found. Mirrors
    ``calls::calls_in_value``."""
    if depth > 8:
        return None
    records = 0
    if isinstance(v, dict):
        r = _calls_in_map(v, found, depth, vocab, quoted)
        if r is None:
            return None
        records += r
    elif isinstance(v, list):
        for item in v:
            r = _calls_in_value(item, found, depth + 1, vocab, quoted)
            if r is None:
                return None
            records += r
    elif isinstance(v, str):
        # Too short to hold a call, or a single word (an id, a name).
        if _utf8_len(v) < 6 or not any(c.isascii() and c.isalpha() for c in v) \
                or all(_is_ascii_alnum(c) or c == "_" for c in v):
            return records
        calls = _calls_in(_fold(v), vocab, quoted)
        if calls is None:
            return None
        # A string of the result itself (a signature) is the code's text.
        if calls and not quoted(v):
            found.extend(_Found(f.call, None) for f in calls)
    return records


def _calls_in_map(m: Mapping[str, Any], found: list[_Found], depth: int, vocab: Vocabulary,
                  quoted: Quoted) -> Optional[int]:
    """:func:`_calls_in_value` of an object: a record naming a tool, and the
    calls inside its values. Mirrors ``calls::calls_in_map``."""
    records = 0
    arg_key = next((k for k in ARG_KEYS if k in m), None)
    names = [m[k] for k in TOOL_KEYS if k in m] + ([m["name"]] if "name" in m and arg_key is not None else [])
    tool = next((t for t in (tool_named(v, vocab) if isinstance(v, str) else None for v in names) if t), None)
    if tool is not None:
        records += 1
        args = _args_of(m[arg_key]) if arg_key is not None else None
        found.append(_Found((tool, args) if args is not None else None, None))
    elif len(m) > 1 and _tool_beside_arguments(m, vocab):
        # A tool's name under any key, beside its arguments
        # (`{"fn": "delete_entities", "entityNames": […]}`).
        records += 1
        found.append(_Found(None, None))
    elif len(m) > 1 and _names_a_call(m, vocab):
        # A tool's name under a key that says what to do, or under `name`
        # beside arguments by another key.
        found.append(_Found(None, None))
    # A member named after a tool (`{"describe": {"id": …}}`).
    for key in sorted(m):
        tool = tool_named(key, vocab)
        if tool is not None:
            args = _args_of(m[key])
            found.append(_Found((tool, args) if args is not None else None, None))
    for key in sorted(m):
        r = _calls_in_value(m[key], found, depth + 1, vocab, quoted)
        if r is None:
            return None
        records += r
    return records


def _tool_beside_arguments(m: Mapping[str, Any], vocab: Vocabulary) -> bool:
    """Whether the first key (in order) holding a tool's name holds it
    beside that tool's arguments (a branch of ``calls_in_map``)."""
    for key in sorted(m):
        v = m[key]
        tool = tool_named(v, vocab) if isinstance(v, str) else None
        if tool is not None:
            return _is_arguments({k: x for k, x in m.items() if k != key}, tool, vocab)
    return False


def _args_of(value: Any) -> Optional[dict]:
    """A record's arguments: an object, or a string holding one (``calls::args_of``)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, str):
        return loads_object(value)
    return None


def _names_a_call(m: Mapping[str, Any], vocab: Vocabulary) -> bool:
    """Whether a record names a call other than by :data:`TOOL_KEYS`: a
    tool's name, exactly, under a :data:`VERB_KEYS` key, or under ``name``
    beside a key holding arguments by another spelling. Mirrors
    ``calls::names_a_call``."""

    def is_tool(v: Any) -> bool:
        return isinstance(v, str) and vocab.find(_trim(v)) is not None

    def argument_key(k: str) -> bool:
        k = _ascii_lower(k)
        return k == "with" or any(a in k for a in ("arg", "input", "param"))

    verb = any(_ascii_lower(k) in VERB_KEYS and is_tool(v) for k, v in m.items())
    return verb or ("name" in m and is_tool(m["name"]) and any(argument_key(k) for k in m))


def _is_separator(c: str) -> bool:
    """What may stand between a tool's name and its ``{`` (``calls::is_separator``)."""
    return _is_whitespace(c) or c in ":=(`\"',->—–" or _is_arrow(c)


def _tool_before(s: str, at: int, vocab: Vocabulary) -> Optional[tuple[str, int]]:
    """The tool named right before ``s[at]`` (a ``{``) and where its name
    starts: after any run of spaces, quotes, ``:``, ``=``, ``(``, commas,
    dashes and arrows, and after up to two short words, within 48 bytes;
    glued to what precedes it too. Mirrors ``calls::tool_before`` (on
    ``&s[..at]``, without copying it)."""
    end = at
    for words in range(MAX_CALL_WORDS + 1):
        end = _rstrip(s, _is_separator, end)
        if _utf8_len(s[end:at]) > MAX_CALL_GAP:
            return None
        for t in vocab.names:
            start = end - len(t)
            if start >= 0 and _ascii_lower(s[start:end]) == t:
                return t, start
        if words == MAX_CALL_WORDS:
            return None
        word = _rstrip(s, _is_alphabetic, end)
        if word == end or end - word > 10:
            return None
        end = word
    return None


def _tool_after(s: str, at: int, vocab: Vocabulary) -> Optional[tuple[str, int]]:
    """The tool named right after an object ending at ``s[at]``, and where
    its name ends (in ``s``): past separators (and ``|``, ``.``, ``;``) and
    up to two short words, within 48 bytes, as a word of its own. Mirrors
    ``json::tool_after`` (on ``&s[at..]``)."""
    rest = at
    n = len(s)
    for words in range(MAX_CALL_WORDS + 1):
        rest = _lstrip(s, lambda c: _is_separator(c) or c in "|.;", rest)
        if _utf8_len(s[at:rest]) > MAX_CALL_GAP:
            return None
        word = rest
        while word < n and s[word] in vocab.word:
            word += 1
        named = vocab.named(s[rest:word])
        if named is not None and named[1] == 0:
            return named[0], word
        if words == MAX_CALL_WORDS or word == rest or word - rest > 10 \
                or not all(c.isascii() and c.isalpha() for c in s[rest:word]):
            return None
        rest = word
    return None


def _is_alphabetic(c: str) -> bool:
    """Rust's ``char::is_alphabetic``, as near as Python gets (``str.isalpha``)."""
    return c.isalpha()


def _named_before(lower: str, vocab: Vocabulary) -> Optional[tuple[str, int]]:
    """The last tool named as a word in ``lower``, and where its name starts
    (``calls::named_before``)."""
    words = _tool_words(lower, vocab)
    if not words:
        return None
    start, end = words[-1]
    tool = vocab.find(lower[start:end])
    return (tool, start) if tool else None


def _calls_in_json(value: Any, named: Optional[str], vocab: Vocabulary, quoted: Quoted) -> Optional[list[_Found]]:
    """Every call in a JSON value that spans several lines, ``named`` the
    tool written right before it, if any. Mirrors ``calls::calls_in_json``."""
    found: list[_Found] = []
    try:
        if _calls_in_value(value, found, 0, vocab, quoted) is None:
            return None
    except RecursionError:
        return None
    tool = vocab.find(named) if named else None
    if tool is not None and isinstance(value, dict):
        found.append(_Found((tool, dict(value)), None))
    return found


def _quote_or_space(c: str) -> bool:
    return _is_whitespace(c) or c in "\"'"


def _tool_key_mentions(lower: str, vocab: Vocabulary, parsed: Sequence[tuple[int, int]]) -> list[int]:
    """Where a key that names a tool stands before a tool name outside JSON:
    ``tool: describe``, ``function=describe``, ``<invoke name="describe">``,
    ``Action: describe``, ``<name>describe</name>``, ``| tool | describe |``,
    ``Tool ..... describe``. Mirrors ``calls::tool_key_mentions``."""
    mentions: list[int] = []
    parsed_ends = [b for _, b in parsed]
    previous = (0, 0)
    for start, end in vocab.words(lower):
        key = lower[start:end]
        invoke_name = key == "name" and lower[previous[0]:previous[1]] == "invoke"
        previous = (start, end)
        # (inside a JSON object parsed on the line, the record rules read it)
        # (`parsed` lies in order, one after another: by binary search)
        if key in NAMING_KEYS:
            k = bisect.bisect_right(parsed_ends, start)
            name = not (k < len(parsed) and parsed[k][0] <= start < parsed[k][1])
        else:
            name = False
        if not (key in TOOL_KEYS or invoke_name or name) or (start > 0 and lower[start - 1] in "0123456789"):
            continue
        after = _lstrip(lower, _quote_or_space, end)
        element = start > 0 and lower[start - 1] == "<"
        if lower[after:after + 1] in (":", "=", "|") and after < len(lower):
            value = after + 1
        elif lower[after:after + 1] == ">" and element:
            value = after + 1
        elif lower.startswith("..", after):
            value = _lstrip(lower, lambda c: c == ".", after + 2)
        else:
            continue
        value = _lstrip(lower, _quote_or_space, value)
        stop = value
        while stop < len(lower) and (_is_ascii_alnum(lower[stop]) or lower[stop] in "_./:-"):
            stop += 1
        word = lower[value:stop]
        names = vocab.find(word) is not None if name and not invoke_name else tool_named(word, vocab) is not None
        if names:
            mentions.append(start)
    return mentions


_GAPS = frozenset(":=\\->—–―`*?,|];/≔«‹⟨「『〈《")


def _is_gap(c: str) -> bool:
    """Characters between a tool's name and its arguments (``calls::is_gap``)."""
    return _is_whitespace(c) or c in _GAPS or _is_arrow(c)


def _tool_words(lower: str, vocab: Vocabulary) -> list[tuple[int, int]]:
    """Tool names standing as words in the line (``mcp__signpost__describe``
    and ``functions.describe`` included): where they stand. Mirrors
    ``calls::tool_words``."""
    out = []
    for ws, we in vocab.words(lower):
        named = vocab.named(lower[ws:we])
        if named is None:
            continue
        name, at = named
        start, end = ws + at, ws + at + len(name)
        glued = start > 0 and lower[start - 1] in "0123456789"
        if not glued and not (end < len(lower) and _is_alphanumeric(lower[end])):
            out.append((start, end))
    return out


def _argument_list(s: str, at: int, vocab: Vocabulary, with_quote: bool, with_id: bool, with_colon: bool,
                   with_bare: bool) -> Optional[int]:
    """The end (an index of ``s``) of an argument list that starts at
    ``s[at]`` (right after the gap); ``None`` when what follows is no
    argument list. Mirrors ``calls::argument_list`` (on ``&s[at..]``,
    without copying it)."""
    if at >= len(s):
        return None
    first = s[at]
    if first == "<" and _param_element(s, at, vocab):
        return len(s)
    if first in "([<":
        close = _matching(s, at)
        # (read as far as brackets are looked into: past that many
        # characters, the closing bracket is cut away with the rest)
        inner = s[at + 1:min(close, at + 2 + MAX_BRACKETED)]
        if inner and inner[-1] in ")]>}" and close <= at + 2 + MAX_BRACKETED:
            inner = inner[:-1]
        if inner.isascii():
            inner = inner[:MAX_BRACKETED]
        elif _utf8_len(inner) > MAX_BRACKETED:
            cut, size = 0, 0
            while size + _utf8_len(inner[cut]) <= MAX_BRACKETED:
                size += _utf8_len(inner[cut])
                cut += 1
            inner = inner[:cut]
        if first == "<" and not _arglike(inner, vocab):
            return None  # `describe <id>`: a placeholder to adapt, not a call
        return close if (close == at + 2 and first == "(") or _arglike(inner, vocab) else None
    # Lisp's quoted list: `'("Alice" "Bob")`.
    if first == "'" and s[at + 1:at + 2] in ("(", "["):
        return _argument_list(s, at + 1, vocab, False, False, False, False)
    if first in "\"'“‘`" and with_quote:
        end = s.find({"“": "”", "‘": "’"}.get(first, first), at + 1)
        return end + 1 if end > at + 1 else None
    end = _key_value(s, at, vocab, with_colon, with_bare)
    if end is not None:
        return end
    return len(s) if with_id and _lstrip(s, _is_hex, at) - at >= ID_LEN else None


def _param_element(s: str, at: int, vocab: Vocabulary) -> bool:
    """Whether ``s[at:]`` opens an element named after a parameter or an
    argument key (``calls::param_element``)."""
    if not s.startswith("<", at):
        return False
    n = _lstrip(s, lambda c: _is_ascii_alnum(c) or c in "_-", at + 1)
    return n > at + 1 and s[n:n + 1] in (">", " ", "/") and s[n:n + 1] != "" and vocab.is_argument_key(s[at + 1:n])


def _plain_value(s: str, at: int) -> bool:
    """A value plainly a value at ``s[at:]``: quoted, bracketed or a number."""
    t = _lstrip(s, _is_whitespace, at)
    return t < len(s) and (s[t] in "\"'[{(" or s[t] in "0123456789")


def _key_value(s: str, at: int, vocab: Vocabulary, with_colon: bool, bare_ok: bool) -> Optional[int]:
    """``key=value``, ``key: value`` or ``--key value`` with a parameter
    name at ``s[at]``, and with ``bare_ok`` ``key value`` too, the value a
    bare word: the arguments run to the end of the line (its end is
    returned). Mirrors ``calls::key_value``."""
    if s.startswith("--", at):
        body, flag = at + 2, True
    elif s[at:at + 1] in ("-", ":", "/", "#", "&", "?", ".") and at < len(s):
        body, flag = at + 1, True
    else:
        body, flag = at, False
    key_end = _lstrip(s, lambda c: _is_ascii_alnum(c) or c in "_-", body)
    if not vocab.is_param(s[body:key_end]):
        return None
    after = key_end
    value: Optional[int]
    if flag:
        value = after + 1 if s[after:after + 1] in (" ", "=", ":") and after < len(s) else None
    else:
        spaced = _lstrip(s, lambda c: c == " ", after)
        bare = _lstrip(s, _is_gap, after)
        if s.startswith("=", spaced):
            value = spaced + 1
        elif s.startswith(":", after) and (with_colon or _plain_value(s, after + 1)):
            value = after + 1
        elif s.startswith(" ", after) and _plain_value(s, after + 1):
            value = after + 1
        elif bare_ok and bare > after and bare < len(s) and _is_alphanumeric(s[bare]):
            value = bare
        else:
            value = None
    if value is None:
        return None
    value = _lstrip(s, lambda c: c == " ", value)
    return len(s) if value < len(s) and not _is_whitespace(s[value]) else None


def _arglike(inner: str, vocab: Vocabulary) -> bool:
    """Whether bracketed text holds arguments rather than prose: quotes,
    ``=``, nested brackets, a list, ``key:``, an id, or a single name.
    Mirrors ``calls::arglike``."""
    inner = _trim(inner)
    if not inner:
        return False
    if any(c in inner for c in "\"'={[(`,“‘"):
        return True
    if sum(1 for c in inner if _is_hex(c)) >= ID_LEN:
        return True
    lower = _ascii_lower(inner)
    for p in vocab.params:
        at = lower.find(p)
        while at >= 0:
            if lower.startswith(":", at + len(p)):
                return True
            at = lower.find(p, at + len(p))
    pair = _split_whitespace(lower)
    if pair and vocab.is_param(pair[0].rstrip(":")) and len(pair) > 1:
        return True
    words = _split_whitespace(inner)
    return len(words) == 1 and _is_alphabetic(words[0][0]) \
        and all(_is_alphanumeric(c) or c in "_." for c in words[0])


def _matching(s: str, at: int) -> int:
    """The index just past the bracket that closes the one at ``s[at]``
    (quote-aware, nested); the end of ``s`` when it does not close.
    Mirrors ``calls::matching``."""
    depth = 0
    quote: Optional[str] = None
    size = 0
    for i in range(at, len(s)):
        c = s[i]
        # (a bracket left open that far runs to the end of the line)
        if size >= MAX_BRACKETED:
            break
        size += 1 if c.isascii() else _utf8_len(c)
        if quote is not None:
            if c == quote:
                quote = None
            continue
        if c in "\"'":
            quote = c
        elif c in "([<{":
            depth += 1
        elif c in ")]>}":
            depth = max(0, depth - 1)
            if depth == 0:
                return i + 1
    return len(s)


#: The quote that closes a quote of another script (``notations::closing_quote``).
_CLOSING_QUOTES = {"«": "»", "‹": "›", "「": "」", "『": "』", "〈": "〉", "《": "》", "⟨": "⟩"}

#: Most bytes read for the bracket that closes an argument list, and of
#: what it holds (``notations::MAX_BRACKETED``).
MAX_BRACKETED = 1024


#: Words that end the clause a tool's name opens (``notations::CLAUSE_ENDS``).
_CLAUSE_ENDS = frozenset((
    "after", "although", "because", "before", "but", "if", "instead", "once", "rather", "since", "than",
    "unless", "until", "while",
))

#: Most words of a clause read for a value after a tool's name (``notations::MAX_CLAUSE_WORDS``).
MAX_CLAUSE_WORDS = 16

#: Words of prose that may follow a tool's name: never a value, capitalised
#: too (``notations::PROSE``).
_PROSE = frozenset((
    "a", "about", "after", "again", "all", "already", "also", "although", "always", "an", "and", "answer",
    "answered", "any", "anyway", "api", "are", "as", "at", "be", "because", "been", "before", "being",
    "blocked", "both", "but", "by", "call", "calls", "can", "cannot", "cli", "confirm", "confirmed", "could",
    "csv", "denied", "deprecated", "destructive", "did", "do", "does", "done", "each", "either", "else",
    "error", "errors", "even", "ever", "every", "example", "failed", "first", "for", "from", "had", "has",
    "have", "he", "here", "how", "http", "i", "id", "ids", "if", "in", "input", "instead", "into",
    "irreversible", "is", "it", "its", "json", "just", "last", "later", "less", "like", "limit", "llm", "may",
    "mcp", "might", "more", "most", "must", "never", "next", "no", "nor", "not", "note", "nothing", "now",
    "of", "ok", "on", "once", "one", "only", "optional", "or", "other", "our", "out", "output", "over",
    "pending", "per", "read", "recommended", "required", "result", "results", "same", "she", "should", "since",
    "skipped", "so", "some", "sql", "step", "still", "success", "successful", "such", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "though", "timeout", "tip", "to",
    "todo", "too", "tools", "ui", "under", "unless", "until", "up", "url", "use", "very", "via", "warning",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whose", "why", "will", "with",
    "without", "would", "write", "yaml", "yes", "yet", "you", "your",
))

#: The quote that closes one a value may open with (``notations::closing_of``).
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "‚": "‘", "«": "»", "‹": "›", "「": "」"}
_BARE_END = re.compile(r'[\s,;!?()\[\]"{<]')
_TOKEN_END = re.compile(r'[\s,;:!?()\[\]{<"”]')


def _alnum(c: str) -> bool:
    """Rust's ``char::is_alphanumeric``."""
    return c.isalnum()


def _trim_non_alnum(s: str) -> str:
    i, j = 0, len(s)
    while i < j and not _alnum(s[i]):
        i += 1
    while j > i and not _alnum(s[j - 1]):
        j -= 1
    return s[i:j]


def _bare_value(s: str, vocab: Vocabulary, sentence: bool) -> bool:
    """Whether ``s`` starts with a bare value, as a name stands after a
    verb: a quoted string, a capitalised word that is no word of prose, a
    name in a script without case; not a lower-case word, a number,
    symbols, a tool's or a parameter's name. With ``sentence``, a
    capitalised word that a lower-case one follows opens a sentence.
    Mirrors ``notations::bare_value``."""
    if s[:1] in _QUOTES:
        # (a tool's or a parameter's name in a code span is prose about it)
        close = _QUOTES[s[0]]
        end = s.find(close, 1)
        inner = _trim(s[1:end]) if end > 0 else ""
        return end > 0 and any(_alnum(c) for c in inner) and vocab.named(inner) is None \
            and not vocab.is_param(inner)
    m = _BARE_END.search(s)
    end = m.start() if m else len(s)
    word = s[:end].rstrip(".:…")
    core = _trim_non_alnum(word)
    if not core:
        return False
    if vocab.named(core) is not None or vocab.is_param(core):
        return False
    first = core[0]
    if first.islower():
        return False
    if "0" <= first <= "9":
        return False
    if not first.isupper():
        return True
    if all(c.isascii() and c.isalpha() for c in core) and _ascii_lower(core) in _PROSE:
        return False
    if sentence:
        nxt = s[end:].lstrip()
        nxt = nxt[1:].lstrip() if nxt.startswith(",") else nxt
        n = 0
        while n < len(nxt) and nxt[n].isalpha():
            n += 1
        nxt = nxt[:n]
        return not (nxt[:1].islower() and nxt not in ("and", "or", "nor"))
    return True


def _names_a_value(rest: str, vocab: Vocabulary, opens: bool) -> bool:
    """Whether the clause that starts ``rest`` (right after a tool's name)
    names a value (:func:`_bare_value`). Mirrors ``notations::names_a_value``."""
    if rest.startswith("</"):
        close = rest.find(">", 2)
        if 0 <= close - 2 <= 12:
            rest = rest[close + 1:]
    at = 0
    for n in range(MAX_CLAUSE_WORDS):
        s = rest[at:]
        word_at = next((i for i, c in enumerate(s)
                        if _alnum(c) or (c in _QUOTES and (c not in "'`" or i == 0 or not _alnum(s[i - 1])))),
                       len(s))
        gap = s[:word_at]
        if gap.count(".") == 1 or any(c in gap for c in ";!?{"):
            return False
        opens = opens or any(c in gap for c in ":—–―") or "-" in gap.split()
        word = s[word_at:]
        if not word:
            return False
        m = _TOKEN_END.search(word)
        end = max(m.start(), 1) if m else len(word)
        token = word[:end]
        core = _trim_non_alnum(token)
        lower = _ascii_lower(core)
        # A verb right after the name, the tool its subject.
        plain = bool(core) and all("a" <= c <= "z" for c in core)
        after = word[end:].lstrip(" \t")
        reports = plain and len(core) > 4 and core.endswith("ed") and core not in ("named", "called")
        verb = plain and len(core) > 3 and core.endswith("s") and not core.endswith("ss") and after[:1].islower()
        if vocab.named(core) is not None or lower in _CLAUSE_ENDS or (n == 0 and (reports or verb)):
            return False
        if _bare_value(word, vocab, opens):
            return True
        opens = False
        at += word_at + end
        if token.endswith(".") and lower not in ("e.g", "i.e", "etc", "vs", "cf"):
            return False
    return False

def _named_calls(folded: str, lower: str, vocab: Vocabulary, found: list[_Found]) -> None:
    """Calls of the other notations: a tool name standing as a word, then
    (after a gap and up to two short words) an argument list. Mirrors
    ``calls::named_calls``."""
    for start, end in _tool_words(lower, vocab):
        at = end
        # A name in quotes (`"describe": …`) ends with its closing quote.
        if start > 0 and at < len(lower) and lower[start - 1] == lower[at] and lower[at] in "\"'`":
            at += 1
        # A tool that may change state, then a value in the same clause: to
        # the end of the line.
        if lower[start:end] in vocab.acting and _names_a_value(folded[end:], vocab, False):
            found.append(_Found(None, (start, len(folded))))
            continue
        # Whether every word skipped so far is a label of the arguments.
        labels = True
        for word_index in range(MAX_CALL_WORDS + 1):
            # (an ellipsis is a gap, a lone `.` is not: `find . -name x`)
            after = _lstrip(lower, _is_gap, at)
            while lower.startswith("..", after):
                after = _lstrip(lower, lambda c: c == "." or _is_gap(c), after + 2)
            gap = lower[at:after]
            # A shell flag (`--direction out`, `-kind class`) starts the arguments.
            if gap.endswith("--"):
                gap = gap[:-2]
            elif gap.endswith(" -"):
                gap = gap[:-1]
            # A backtick after a space opens a code span: a quoted argument.
            if gap.endswith("`") and gap[:-1].endswith((" ", ":", "=")):
                gap = gap[:-1]
            args = at + len(gap)
            if _utf8_len(gap) > MAX_CALL_GAP or lower.startswith("{", args):
                break
            spaced = bool(gap) and any(c in gap for c in " :=\t")
            first = word_index == 0 or labels
            # A quote of another script opened in the gap (`search «x»`).
            close = _CLOSING_QUOTES.get(gap[-1]) if gap and first else None
            end = lower.find(close, args) if close is not None else -1
            if end > args:
                found.append(_Found(None, (start, min(end + 1, len(folded)))))
                break
            arg_end = _argument_list(lower, args, vocab, spaced and first, spaced, first, first)
            if arg_end is not None:
                found.append(_Found(None, (start, min(arg_end, len(folded)))))
                break
            # Up to two short words between (`describe with id=…`).
            word = _lstrip(lower, lambda c: c.isascii() and (c.isalpha() or c == "_"), args) - args
            if not gap or word == 0 or word > 10:
                break
            labels = labels and (lower[args:args + word] in ARG_KEYS or lower[args:args + word] == "with")
            at = args + word


def _shell_calls(lower: str, found: list[_Found]) -> None:
    """``signpost <subcommand> …`` (any path to the program, ``.exe``): a
    shell command, to the end of the line. Mirrors ``calls::shell_calls``."""
    for m in re.finditer("signpost", lower):
        at, end = m.span()
        # (a word of Signpost's vocabulary: letters and `_`)
        if (at > 0 and (lower[at - 1].isascii() and (lower[at - 1].isalpha() or lower[at - 1] == "_"))) \
                or (end < len(lower) and lower[end].isascii() and (lower[end].isalpha() or lower[end] == "_")):
            continue
        if at > 0 and (_is_alphanumeric(lower[at - 1]) or lower[at - 1] == "-"):
            continue
        rest = end + 4 if lower.startswith(".exe", end) else end
        if lower[rest:rest + 1] not in (" ", "\t") or rest >= len(lower):
            continue
        rest = _lstrip(lower, _is_whitespace, rest + 1)
        word = lower[rest:_lstrip(lower, lambda c: (c.isascii() and c.isalpha()) or c == "-", rest)]
        if is_subcommand(word):
            # The path before the program name is part of the command.
            cut = _rstrip(lower, lambda c: not (_is_whitespace(c) or c in "`\"'$"), at)
            found.append(_Found(None, (cut, len(lower))))


def _dangling_tool(folded: str, vocab: Vocabulary) -> Optional[tuple[int, int]]:
    """A tool name that ends its line (nothing but a gap, a closing quote or
    ``:`` after it): its span, to pair with arguments on the next line.
    Mirrors ``calls::dangling_tool``."""
    # (a comment after it: `describe   # the record`)
    hash_at = folded.find(" #")
    body = folded[:hash_at] if hash_at >= 0 and _trim(folded[:hash_at]) else folded
    end = _rstrip(body, lambda c: _is_gap(c) or c in "\"'(,]).\\;")
    start = _rstrip(folded, lambda c: c.isascii() and c in vocab.word, end)
    named = vocab.named(folded[start:end]) is not None
    glued = start > 0 and _is_alphanumeric(folded[start - 1])
    return (start, end) if named and not glued else None


def _cells(l: str, kind: str) -> list[str]:
    """A table line's cells (``kind``: ``pipes``, ``commas``, ``semicolons``, ``spaces``
    for two or more, ``words`` for one or more), trimmed of spaces and
    inline markup. Mirrors ``calls::cells``."""
    t = _trim(l)
    if kind == "pipes":
        t = t[1:] if t.startswith("|") else t
        raw = (t[:-1] if t.endswith("|") else t).split("|")
    elif kind == "commas":
        raw = t.split(",")
    elif kind == "semicolons":
        raw = t.split(";")
    elif kind == "spaces":
        raw = [c for c in t.split("  ") if _trim(c)]
    else:
        raw = _split_whitespace(t)
    return [_trim(_trim(c).strip("`*_\"'")) for c in raw]


def _is_delimiter(l: str) -> bool:
    """``|---|---|`` of Markdown; ``+----+`` and ``+====+`` of grid tables."""
    t = _trim(l)
    return any(c in t for c in "|+") and any(c in t for c in "-=") and all(c in "|+-=: \t" for c in t)


def _table_calls(lines: Sequence[str], vocab: Vocabulary, quoted: Quoted) -> set[int]:
    """The rows of tables that call a tool: a cell naming one, and a value in
    a column whose header is a parameter's name or an argument key
    (Markdown, grid, comma-separated, aligned by spaces), unless every cell
    of the row stands in the result or the agent's arguments. Mirrors
    ``calls::table_calls``."""
    rows: set[int] = set()
    # Each delimiter's body runs to the end of its block (the lines holding
    # `|`); the rows a header's argument columns call are read once per
    # block and columns, from the first such delimiter on (the same rows as
    # reading each delimiter's body, without Rust's quadratic rereading).
    delimiters = [_is_delimiter(l) for l in lines]
    block_end = [len(lines)] * (len(lines) + 1)
    for r in range(len(lines) - 1, -1, -1):
        block_end[r] = block_end[r + 1] if "|" in lines[r] or delimiters[r] else r
    first_under: dict[tuple[int, tuple[int, ...]], int] = {}
    for d in range(1, len(lines)):
        if delimiters[d] and "|" in lines[d - 1]:
            columns = tuple(_argument_columns(_cells(lines[d - 1], "pipes"), vocab))
            first_under.setdefault((block_end[d + 1], columns), d)
    for (end, columns), d in first_under.items():
        body = ((r, _cells(lines[r], "pipes")) for r in range(d + 1, end) if not delimiters[r])
        rows.update(_calling_rows_under(columns, body, vocab, quoted))
    for kind in ("commas", "semicolons", "spaces", "words"):
        h = 0
        while h < len(lines):
            l = lines[h]
            separated = "," in l if kind == "commas" else ";" in l if kind == "semicolons" \
                else "  " in _trim(l) if kind == "spaces" else " " in l
            keyed = separated and "|" not in l \
                and (kind != "words" or all(vocab.is_key(c) for c in _cells(l, kind))) \
                and any(vocab.is_param(c) for c in _cells(l, kind))
            header = _cells(l, kind) if keyed else []
            if len(header) < 2:
                h += 1
                continue
            body = []
            for r in range(h + 1, len(lines)):
                cells = _cells(lines[r], kind)
                if len(cells) != len(header):
                    break
                body.append((r, cells))
            h += len(body) + 1
            rows.update(_calling_rows(header, body, vocab, quoted))
    return rows


def _is_label(folded: str) -> bool:
    """Whether a line is only a label of arguments to come (``Arguments:``;
    ``calls::is_label``)."""
    # (`with:` of a CI step: `uses: srv/delete_entities`, `with:`, then them)
    t = _ascii_lower(_trim(_trim(folded).rstrip(":")))
    return t in ARG_KEYS or t == "with"


def _argument_columns(header: Sequence[str], vocab: Vocabulary) -> list[int]:
    """The columns whose header is a parameter's name or an argument key."""
    return [i for i, h in enumerate(header) if vocab.is_argument_key(h)]


def _calling_rows(header: Sequence[str], body: Iterable[tuple[int, list[str]]], vocab: Vocabulary,
                  quoted: Quoted) -> list[int]:
    """The rows with a cell naming a tool and a value in an argument column,
    unless every cell stands in the result or the agent's arguments.
    Mirrors ``calls::calling_rows``."""
    return _calling_rows_under(_argument_columns(header, vocab), body, vocab, quoted)


def _calling_rows_under(columns: Sequence[int], body: Iterable[tuple[int, list[str]]], vocab: Vocabulary,
                        quoted: Quoted) -> list[int]:
    """:func:`_calling_rows` of a header's argument ``columns``."""
    if not columns:
        return []
    out = []
    for r, cells in body:
        named = [i for i, c in enumerate(cells) if tool_named(c, vocab) is not None]
        valued = any(a < len(cells) and cells[a] and a not in named for a in columns)
        if named and valued and not all(quoted(c) for c in cells if c):
            out.append(r)
    return out


def _named_alone(folded: str, vocab: Vocabulary, quoted: Quoted,
                 calls: Callable[[], Optional[list[_Found]]]) -> Optional[tuple[str, int]]:
    """A tool named as a word in a line, not by a call of that line and not
    inside a word the result or the agent's arguments hold: the tool and
    where its name starts. Mirrors ``calls::named_alone``."""
    lower = _ascii_lower(folded)
    words = _tool_words(lower, vocab)
    if not words:
        return None
    found = calls()
    if found is None:
        return None
    for start, end in words:
        if _within_a_call(found, (start, end)):
            continue
        # (the whitespace-separated token the name stands in)
        left = _rstrip(folded, lambda c: not _is_whitespace(c), start)
        right = _lstrip(folded, lambda c: not _is_whitespace(c), end)
        if not quoted(folded[left:right]):
            tool = vocab.find(lower[start:end])
            return (tool, start) if tool else None
    return None


def _within_a_call(calls: Sequence[_Found], r: tuple[int, int]) -> bool:
    """Whether ``r`` lies inside the span of one of ``calls`` (``calls::within_a_call``)."""
    return any(c.span is not None and c.span[0] <= r[0] and r[1] <= c.span[1] for c in calls)


def _is_arguments(m: Mapping[str, Any], tool: str, vocab: Vocabulary) -> bool:
    """Whether a record reads as arguments of ``tool``: every key of it one
    of its parameters or the trail, or it holds every parameter the tool
    requires (an agent sends the extra keys along). Mirrors
    ``calls::is_arguments``."""
    own = vocab.params_of.get(tool)
    if own is None:
        return False
    required = vocab.required_of.get(tool, [])
    keys = {_ascii_lower(k) for k in m}
    return bool(m) and (all(k == TRAIL_ARG or k in own for k in keys) or (bool(required) and all(
        r in keys for r in required)))


def _keyed_object(folded: str, tool: str, vocab: Vocabulary, quoted: Quoted,
                  calls: Optional[list[_Found]]) -> Optional[int]:
    """A JSON object on a line that reads as arguments of ``tool``, not part
    of a call of the line and not text the result holds: where it starts.
    Mirrors ``calls::keyed_object``."""
    if "{" not in folded or calls is None:
        return None
    tried = 0
    frm = 0
    while True:
        at = folded.find("{", frm)
        if at < 0:
            return None
        tried += 1
        if tried > MAX_FAILED_PARSES:
            return at
        obj = _parse_object_at(folded, at)
        if obj is None:
            frm = at + 1
            continue
        args, end = obj
        if _is_arguments(args, tool, vocab) and not _within_a_call(calls, (at, end)) \
                and not quoted(folded[at:end]):
            return at
        frm = end


def _decoration(c: str) -> bool:
    return _is_whitespace(c) or c in "`>-*•?:" or _is_arrow(c)


def _leading_args(folded: str, vocab: Vocabulary) -> Optional[tuple[int, int]]:
    """An argument list opening a line (an object, bracketed arguments,
    ``key=value``, a parameter's name as a YAML or TOML key): its span, for
    a tool named at the end of the line before. Mirrors
    ``calls::leading_args``."""
    lower = _ascii_lower(folded)
    args = lower[_lstrip(lower, _decoration):]
    quoted_key = args.lstrip("\"'")
    key = _lstrip(quoted_key, lambda c: _is_ascii_alnum(c) or c in "_-")
    after = _trim_start(quoted_key[key:].lstrip("\"'"))
    keyed = key > 0 and vocab.is_argument_key(quoted_key[:key]) and after[:1] in (":", "=") and bool(after)
    if keyed or _param_element(args, 0, vocab):
        return len(lower) - len(args), len(lower)
    # Up to two short labels before them (`Send:`, `1.`, `Action Input:`).
    for _ in range(2):
        label = _lstrip(args, lambda c: _is_ascii_alnum(c) or c == " ")
        if args[label:label + 1] in (":", ".") and args[label:label + 1] and 1 <= label <= 20 \
                and len(args[:label].split(" ")) <= 3:
            rest = args[label + 1:]
            args = rest[_lstrip(rest, _decoration):]
        else:
            break
    start = len(lower) - len(args)
    if args.startswith("{"):
        return start, len(lower)
    if args.startswith("<"):
        return None
    end = _argument_list(lower, start, vocab, False, False, True, True)
    return (start, end) if end is not None else None


_MARKERS = frozenset("-*•+–—·▪▸◦>|→⁃‣")


def _leading_value(word: str, folded: str, vocab: Vocabulary) -> Optional[tuple[int, int]]:
    """After ``word``, a tool that may change state ending its line (or
    before a ``:`` ending it), a list item or a line that names a value
    (``- Alice``, ``2. Bob``, ``Alice, Bob``): the value's span. Mirrors
    ``calls::leading_value``."""
    named = vocab.named(word)
    if named is None or named[0] not in vocab.acting:
        return None
    body = folded.lstrip()
    if body[:1] and (body[0] in _MARKERS or "\u2460" <= body[0] <= "\u24ff"):
        item = body[1:]
    else:
        label = len(body) - len(body.lstrip("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        digits = len(body) - len(body.lstrip("0123456789"))
        if 1 <= label <= 3 and body[label:label + 1] in (".", ")") and body[label + 1:label + 2] == " ":
            item = body[label + 1:]
        elif 1 <= digits <= 3 and body[digits:digits + 1] == " ":
            item = body[digits:]
        else:
            item = body
    item = item.lstrip()
    for box in ("[ ]", "[x]", "[X]"):
        if item.startswith(box):
            item = item[len(box):].lstrip()
            break
    return (len(folded) - len(item), len(folded)) if _names_a_value(item, vocab, True) else None


def _acting_before_colon(folded: str, vocab: Vocabulary) -> Optional[tuple[int, int]]:
    """A tool that may change state named in a line that ends with ``:`` a
    few words after it: the name's span. Mirrors ``calls::acting_before_colon``."""
    body = folded.rstrip()
    if not body.endswith(":"):
        return None
    body = body[:-1]
    lower = _ascii_lower(body)
    acting = [w for w in _tool_words(lower, vocab) if lower[w[0]:w[1]] in vocab.acting]
    if not acting:
        return None
    start, end = acting[-1]
    return (start, end) if _utf8_len(body[end:]) <= MAX_CALL_GAP else None


# ---- hint lines (sanitize/mod.rs) -----------------------------------------------------


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


def _marks_a_tool(folded: str, vocab: Vocabulary) -> Optional[int]:
    """Where a hint marker followed by a tool's name starts, anywhere in the
    line. Mirrors ``sanitize::marks_a_tool``."""
    # (where the last tool's name starts, read once for every marker)
    words = _tool_words(_ascii_lower(folded), vocab)
    if not words:
        return None
    last = words[-1][0]
    return next((start for start, end in _hint_markers(folded) if end <= last), None)


def has_hint_marker(s: str) -> bool:
    """Whether a field shows the hint marker anywhere. Mirrors
    ``sanitize::has_hint_marker``."""
    return bool(_hint_markers(_fold(s)))


# ---- the agent's text (sanitize/mod.rs) ---------------------------------------------

#: Non-blank lines after a tool named in prose that are read for its
#: arguments (``sanitize::MAX_ARG_LINES``).
MAX_ARG_LINES = 6
#: Most JSON values read over several lines in one text
#: (``sanitize::MAX_SPANNING``).
MAX_SPANNING = 32


def _writes_ascii(v: Any) -> bool:
    """Whether JSON writes ``v`` in printable ASCII (``sanitize::value_writes_ascii``)."""
    if isinstance(v, str):
        return v.isascii() and "\x7f" not in v
    if isinstance(v, list):
        return all(_writes_ascii(i) for i in v)
    if isinstance(v, dict):
        return all(_writes_ascii(k) and _writes_ascii(i) for k, i in v.items())
    return True


def _seen_as_text(allowed: Sequence[Allowed]) -> list[tuple[str, Mapping[str, Any]]]:
    """The allowed calls' arguments as they read once written in a text:
    cleaned and folded like the text itself (arguments written in
    printable ASCII read as they are). Mirrors ``sanitize::seen_as_text``."""
    out = []
    for a in allowed:
        args: Mapping[str, Any] = a.args
        if not _writes_ascii(dict(a.args)):
            try:
                written = dumps(a.args)
            except (TypeError, ValueError):
                written = ""
            shown = _fold(_clean_text(written))
            parsed = loads_object(shown)
            if parsed is not None and shown != written:
                args = parsed
        out.append((a.tool, args))
    return out


def _says_something(l: str) -> bool:
    """Not blank, not a code fence (``sanitize::says_something``)."""
    t = _trim_start(l)
    return bool(_trim(l)) and not (t.startswith("```") or t.startswith("~~~"))


def _left_open(l: str) -> Optional[int]:
    """Where a JSON value opens on ``l`` and is left open at its end: the
    first ``{`` or ``[`` not closed on it (strings skipped). Mirrors
    ``sanitize::left_open``."""
    opened: list[int] = []
    in_string = escaped = False
    for i, c in enumerate(l):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c in "{[":
            opened.append(i)
        elif c in "}]" and opened:
            opened.pop()
    return opened[0] if opened else None


@dataclass
class _Scope:
    """What a response may show (``sanitize::Scope``): the validated calls
    as the text shows them, where its ids come from, the tools."""

    allowed: list[tuple[str, Mapping[str, Any]]]
    known: Known
    vocab: Vocabulary


def _scope(allowed: Sequence[Allowed], known: Optional[Known], vocab: Any) -> _Scope:
    """``Scope::new``: each allowed call's ids are known too."""
    known = (known or Known()).with_hints(a.args for a in allowed)
    return _Scope(_seen_as_text(allowed), known, _vocabulary(vocab))


def _multiline_calls(folded: Sequence[str], scope: _Scope,
                     calls_of: Callable[[int], Optional[list[_Found]]]) -> set[int]:
    """The lines of a JSON value written over several lines that holds a
    call the host did not validate: every line it spans, and the line
    before it when that is where its tool is named. Mirrors
    ``sanitize::multiline_calls``."""
    vocab, quoted = scope.vocab, scope.known.quotes
    dropped: set[int] = set()
    joined = "\n".join(folded)
    starts = []
    at = 0
    for l in folded:
        starts.append(at)
        at += len(l) + 1
    tried = 0
    n = 0
    while n < len(folded):
        col = _left_open(folded[n])
        if col is None:
            n += 1
            continue
        if tried >= MAX_SPANNING:
            dropped.add(n)
            n += 1
            continue
        opened = starts[n] + col
        try:
            value, end = _DECODER.raw_decode(joined, opened)
            if _has_surrogate(value):
                raise _NotJson("lone surrogate")
        except json.JSONDecodeError as e:
            # Code's braces fail at once; a long run of JSON that fails
            # late counts as an attempt, as a value read does.
            tried += joined.count("\n", opened, e.pos) + 1 > 2
            n += 1
            continue
        except (ValueError, RecursionError):
            n += 1
            continue
        tried += 1
        last = max(0, bisect.bisect_right(starts, end - 1) - 1)
        # Its tool: named before it on its line, or on the line before
        # when nothing but decoration precedes it.
        before = _ascii_lower(folded[n][:col])
        first = n
        named_before = _named_before(before, vocab)
        named = named_before[0] if named_before else None
        if named is None and not any(_is_alphanumeric(c) for c in before):
            above = next((k for k in range(n - 1, max(n - 3, 0) - 1, -1) if _says_something(folded[k])), None)
            dangling = _dangling_tool(folded[above], vocab) if above is not None else None
            if above is not None and dangling is not None:
                named = tool_named(folded[above][dangling[0]:dangling[1]], vocab)
                first = above
        # (a tool named in prose a few lines above, the object keyed by
        # its parameters)
        if named is None and isinstance(value, dict):
            above_lines = [k for k in range(n - 1, max(n - MAX_ARG_LINES - 2, 0) - 1, -1) if _trim(folded[k])]
            prose = None
            for k in above_lines[:MAX_ARG_LINES]:
                alone = _named_alone(folded[k], vocab, quoted, lambda k=k: calls_of(k))
                if alone is not None:
                    prose = (k, alone[0])
                    break
            if prose is not None and _is_arguments(value, prose[1], vocab):
                first, named = prose
        block = joined[opened:end]
        calls = _calls_in_json(value, named, vocab, quoted)
        unvalidated = calls is None or (not scope.known.quotes(block) and any(
            c.verdict("", scope.allowed, scope.known, vocab) == "unvalidated" for c in calls))
        if unvalidated:
            dropped.update(range(first, last + 1))
        n = max(last, n) + 1
    return dropped


def _redact(l: str, folded: str, scope: _Scope, split: Sequence[tuple[int, int]],
            calls: Optional[list[_Found]]) -> Optional[str]:
    """A line (its ids already replaced) with its unvalidated calls replaced
    by :data:`REDACTED`; ``None`` when it must be dropped. ``calls`` are the
    calls in ``folded``; ``split`` the spans (in ``folded``) of a call that
    continues on another line. Mirrors ``sanitize::redact``."""
    if calls is None:
        return None
    calls = calls + [_Found(None, s) for s in split]
    verdicts = [c.verdict(folded, scope.allowed, scope.known, scope.vocab) for c in calls]
    ok = verdicts.count("allowed")
    bad = [c for c, v in zip(calls, verdicts) if v == "unvalidated"]
    # A hint line shows one call: a second marker is a hint of its own.
    markers = len(_hint_markers(folded))
    if _looks_like_hint_line(folded):
        return l if (not bad and ok and markers <= 1) else None
    # A hint marker later in the line, naming a tool: cut from it on,
    # unless it is the one validated hint of the line.
    cut = _marks_a_tool(folded, scope.vocab) if markers else None
    if cut is not None:
        if not bad and ok and markers <= 1:
            return l
        if folded != l:
            return None
        kept = l[:_rstrip(l, lambda c: _is_whitespace(c) or _is_arrow(c), cut)]
        return f"{kept} {REDACTED}"
    if not bad:
        return l
    if folded != l:
        return None
    spans = [c.span for c in bad]
    if any(s is None for s in spans):
        return None
    out: list[str] = []
    at = 0
    for start, end in sorted(spans, key=lambda r: r[0]):  # type: ignore[index]
        if start >= at:
            out.append(l[at:start])
            out.append(REDACTED)
            at = end
        else:
            at = max(at, end)
    out.append(l[min(at, len(l)):])
    kept = "".join(out)
    # What is left must hold no unvalidated call either.
    rest = _calls_in(kept, scope.vocab, scope.known.quotes)
    if rest is None or any(c.verdict(kept, scope.allowed, scope.known, scope.vocab) == "unvalidated" for c in rest):
        return None
    return kept


@dataclass
class Changes:
    """What the sanitiser changed in a text (``sanitize::Changes``): lines
    changed or dropped, ids replaced by :data:`REPLACED_ID`, calls cut out
    or lines dropped for showing a call that is not validated."""

    lines: int = 0
    ids: int = 0
    calls: int = 0


VocabularyLike = Union[None, Vocabulary, Mapping[str, Mapping[str, Any]], Iterable[str]]


def agent_text(text: str, allowed: Sequence[Allowed], vocabulary: VocabularyLike = None,
               known: Optional[Known] = None) -> tuple[str, Changes]:
    """The agent's text: cleaned; every id the agent may not be shown
    (``known``, plus the allowed calls' arguments) replaced in place by
    :data:`REPLACED_ID`, ids split over line breaks included; every
    unvalidated call replaced by :data:`REDACTED` (or the line dropped where
    that cannot be done safely), a call split over two lines, a JSON value
    over several lines, a table row and a tool named in prose with its
    arguments a few lines on included; with what changed. ``vocabulary``:
    the tools (Signpost's by default; a :class:`Vocabulary`, input schemas
    by tool, or names). Mirrors ``sanitize::agent_text``."""
    scope = _scope(allowed, known, vocabulary)
    vocab, quoted = scope.vocab, scope.known.quotes
    cleaned, ids, lines_changed = _ids_over_lines(_clean_text(text), scope.known)
    changes = Changes(lines=lines_changed, ids=ids)
    lines: list[tuple[str, bool]] = []
    for l in cleaned.split("\n"):
        scrubbed, n = replace_forged(l, scope.known)
        changes.ids += n
        lines.append((scrubbed, n > 0))
    folded = [_fold(l) for l, _ in lines]
    # A tool named at the end of one line, its arguments opening the next.
    split: list[tuple[int, tuple[int, int]]] = []
    # The last line read as an item of a list of values: a line inside a
    # list opens none of its own (each line is read once).
    listed = -1
    for i, f in enumerate(folded):
        dangling = _dangling_tool(f, vocab)
        name = dangling if dangling is not None else _acting_before_colon(f, vocab)
        if name is None:
            continue
        j = next((j for j in range(i + 1, len(folded)) if _says_something(folded[j]) and not _is_label(folded[j])),
                 None)
        if j is None:
            continue
        args = _leading_args(folded[j], vocab) if dangling is not None else None
        if args is not None:
            split += [(i, (name[0], len(f))), (j, args)]
            continue
        # (`delete_entities:`, then a list of names: every item of it, past blank lines)
        if i <= listed:
            continue
        word = f[name[0]:name[1]]
        value = _leading_value(word, folded[j], vocab)
        if value is None:
            continue
        split += [(i, (name[0], len(f))), (j, value)]
        listed = j
        for k in range(j + 1, len(folded)):
            if not _says_something(folded[k]):
                continue
            value = _leading_value(word, folded[k], vocab)
            if value is None:
                break
            split.append((k, value))
            listed = k
    # Each line's calls, read once when first needed.
    line_calls: dict[int, Optional[list[_Found]]] = {}

    def calls_of(i: int) -> Optional[list[_Found]]:
        if i not in line_calls:
            line_calls[i] = _calls_in(folded[i], vocab, quoted)
        return line_calls[i]

    spanned = _multiline_calls(folded, scope, calls_of)
    spanned |= _table_calls(folded, vocab, quoted)

    # A name broken over a line at a `_` or `-` (`delete_`, then
    # `entities {…}` on the next): the two lines read as one.
    def unvalidated(line: str, calls: Optional[list[_Found]]) -> float:
        if calls is None:
            return math.inf
        return sum(1 for c in calls if c.verdict(line, scope.allowed, scope.known, vocab) == "unvalidated")

    for i in range(len(folded) - 1):
        a, b = folded[i], folded[i + 1]
        if not (len(a) >= 2 and a[-1] in "_-" and _is_ascii_alnum(a[-2]) and b[:1].isascii() and b[:1].isalpha()):
            continue
        joined = a + b
        alone = unvalidated(a, calls_of(i)) + unvalidated(b, calls_of(i + 1))
        if unvalidated(joined, _calls_in(joined, vocab, quoted)) > alone:
            spanned |= {i, i + 1}
    # A tool named in prose, an object of its arguments a few lines on (or
    # a few lines above it).
    for i in range(len(folded)):
        if i in spanned:
            continue
        name = _named_alone(folded[i], vocab, quoted, lambda: calls_of(i))
        if name is None:
            continue
        following = (j for j in range(i + 1, len(folded)) if _says_something(folded[j]) and j not in spanned)
        for j in itertools.islice(following, MAX_ARG_LINES):
            at = _keyed_object(folded[j], name[0], vocab, quoted, calls_of(j))
            if at is not None:
                split += [(i, (name[1], len(folded[i]))), (j, (at, len(folded[j])))]
                break
        else:
            before = (j for j in range(i - 1, -1, -1) if _says_something(folded[j]) and j not in spanned)
            for j in itertools.islice(before, MAX_ARG_LINES):
                at = _keyed_object(folded[j], name[0], vocab, quoted, calls_of(j))
                if at is not None:
                    split += [(j, (at, len(folded[j]))), (i, (name[1], len(folded[i])))]
                    break
    parts: dict[int, list[tuple[int, int]]] = {}
    for line_no, span in split:
        parts.setdefault(line_no, []).append(span)
    out: list[str] = []
    for n, ((l, scrubbed), f) in enumerate(zip(lines, folded)):
        if n in spanned:
            changes.lines += 1
            changes.calls += 1
            continue
        kept = _redact(l, f, scope, parts.get(n, []), calls_of(n))
        if kept is None:
            changes.lines += 1
            changes.calls += 1
            continue
        cut = kept != l
        changes.calls += cut
        changes.lines += cut or scrubbed
        out.append(kept)
    return "\n".join(out), changes


def safe_line(l: str, max_chars: int, allowed: Sequence[Allowed], vocabulary: VocabularyLike = None,
              known: Optional[Known] = None) -> Optional[str]:
    """One line for an agent, single-line fields included (a teaching
    message): cleaned like :func:`line`, ids the agent may not be shown
    replaced, then its unvalidated calls redacted; ``None`` when the line
    must go whole. Mirrors ``sanitize::safe_line``."""
    scope = _scope(allowed, known, vocabulary)
    scrubbed, _ = replace_forged(line(l, max_chars), scope.known)
    folded = _fold(scrubbed)
    return _redact(scrubbed, folded, scope, [], _calls_in(folded, scope.vocab, scope.known.quotes))


def scrub_ids(s: str, allowed: Sequence[Allowed], known: Optional[Known] = None) -> tuple[str, int]:
    """``s`` with every id the agent may not be shown replaced (a hint's
    reason), and how many were. Mirrors ``sanitize::scrub_ids``."""
    return replace_forged(s, (known or Known()).with_hints(a.args for a in allowed))


def has_call(s: str, vocabulary: VocabularyLike = None) -> bool:
    """Whether ``s`` (one line) shows any call at all, allowed or not, or
    cannot be analysed. Mirrors ``sanitize::has_call_to``."""
    calls = _calls_in(_fold(s), _vocabulary(vocabulary))
    return calls is None or len(calls) > 0
