"""The records, enums and variants of ``signpost:policy`` (0.1.0 and 0.3.0: the same) as Python
dataclasses, and their conversion to and from wasmtime-py component values.

Conversion goes through the JSON form of WIT values that the suite's other
hosts use (tests/hosts/README.md: records keyed by their WIT field names,
enums as case names, variants and results as one-key objects, options as
``None``): each dataclass has ``to_wit_json``/``from_wit_json``, and
:func:`to_wit`/:func:`from_wit` walk the component's declared function types
to build the values wasmtime-py lowers (the same walk as
``tests/hosts/python/run.py``), so wasmtime-py's rules for tagging variants
never leak into the typed API.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from wasmtime import component as cm

__all__ = [
    "Advice",
    "Call",
    "CoercionError",
    "ErrorKind",
    "Failure",
    "Hint",
    "Outcome",
    "PastCall",
    "PolicyInfo",
    "Session",
    "Success",
    "WitToolError",
    "from_wit",
    "to_wit",
]

#: The newest exported interface this kit speaks.
INTERFACE = "signpost:policy/policy@0.3.0"
#: Every exported interface this kit speaks, newest first: 0.3.0 asks the
#: host for the session's history (``host.has-seen``, ``host.history``),
#: 0.1.0 is passed it. (0.2.0's catalogue, holds and lookups are a proxy's:
#: the kit serves its own tools, as 0.1.0 does.)
INTERFACES = (INTERFACE, "signpost:policy/policy@0.1.0")
#: The interface a 0.3.0 policy imports from its host.
HOST = "signpost:policy/host@0.3.0"


@dataclass(frozen=True)
class PolicyInfo:
    """``policy-info``: a policy's identity."""

    name: str
    version: str

    def to_wit_json(self) -> dict:
        return {"name": self.name, "version": self.version}

    @classmethod
    def from_wit_json(cls, v: dict) -> "PolicyInfo":
        return cls(name=v["name"], version=v["version"])


@dataclass(frozen=True)
class Call:
    """``call``: a tool call as the agent made it; ``args`` is JSON text."""

    tool: str
    args: str

    def to_wit_json(self) -> dict:
        return {"tool": self.tool, "args": self.args}

    @classmethod
    def from_wit_json(cls, v: dict) -> "Call":
        return cls(tool=v["tool"], args=v["args"])


@dataclass(frozen=True)
class Hint:
    """``hint``: a suggested next call; ``args`` is JSON text."""

    tool: str
    args: str
    actionable: bool
    reason: str

    def to_wit_json(self) -> dict:
        return {"tool": self.tool, "args": self.args, "actionable": self.actionable, "reason": self.reason}

    @classmethod
    def from_wit_json(cls, v: dict) -> "Hint":
        return cls(tool=v["tool"], args=v["args"], actionable=v["actionable"], reason=v["reason"])


class ErrorKind(enum.Enum):
    """``error-kind``. The value is the WIT case name; :attr:`snake` is the
    name tool results use (``structuredContent.error.kind``)."""

    INVALID_ID = "invalid-id"
    UNKNOWN_ID = "unknown-id"
    BAD_ARGUMENT = "bad-argument"
    INTERNAL = "internal"

    @property
    def snake(self) -> str:
        return self.value.replace("-", "_")


@dataclass(frozen=True)
class WitToolError:
    """``tool-error``: a failed tool call as the policy sees it; ``example``
    is JSON text."""

    kind: ErrorKind
    message: str
    example: Optional[str] = None

    def to_wit_json(self) -> dict:
        return {"kind": self.kind.value, "message": self.message, "example": self.example}

    @classmethod
    def from_wit_json(cls, v: dict) -> "WitToolError":
        return cls(kind=ErrorKind(v["kind"]), message=v["message"], example=v["example"])


@dataclass(frozen=True)
class Success:
    """``outcome::success``: the tool's result as JSON text."""

    json: str


@dataclass(frozen=True)
class Failure:
    """``outcome::failure``."""

    error: WitToolError


#: ``outcome``: how a tool call ended.
Outcome = Union[Success, Failure]


def outcome_to_wit_json(o: Outcome) -> dict:
    if isinstance(o, Success):
        return {"success": o.json}
    return {"failure": o.error.to_wit_json()}


def outcome_from_wit_json(v: dict) -> Outcome:
    ((tag, payload),) = v.items()
    return Success(payload) if tag == "success" else Failure(WitToolError.from_wit_json(payload))


@dataclass(frozen=True)
class PastCall:
    """``past-call``: one earlier call of this session."""

    tool: str
    ok: bool
    ids: tuple[str, ...] = ()

    def to_wit_json(self) -> dict:
        return {"tool": self.tool, "ok": self.ok, "ids": list(self.ids)}

    @classmethod
    def from_wit_json(cls, v: dict) -> "PastCall":
        return cls(tool=v["tool"], ok=v["ok"], ids=tuple(v["ids"]))


@dataclass(frozen=True)
class Session:
    """``session``: a bounded summary of what the session did before."""

    call_count: int = 0
    recent: tuple[PastCall, ...] = ()
    seen_ids: tuple[str, ...] = ()

    def to_wit_json(self) -> dict:
        return {
            "call-count": self.call_count,
            "recent": [p.to_wit_json() for p in self.recent],
            "seen-ids": list(self.seen_ids),
        }

    @classmethod
    def from_wit_json(cls, v: dict) -> "Session":
        return cls(
            call_count=v["call-count"],
            recent=tuple(PastCall.from_wit_json(p) for p in v["recent"]),
            seen_ids=tuple(v["seen-ids"]),
        )


@dataclass
class Advice:
    """``advice``: what the policy says about a finished call. Mutable: the
    host cleans it before rendering (as ``pipeline::sanitize_advice`` does)."""

    state_tag: str
    summary: str
    details: list[str] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    ask_user: Optional[str] = None

    def to_wit_json(self) -> dict:
        return {
            "state-tag": self.state_tag,
            "summary": self.summary,
            "details": list(self.details),
            "hints": [h.to_wit_json() for h in self.hints],
            "ask-user": self.ask_user,
        }

    @classmethod
    def from_wit_json(cls, v: dict) -> "Advice":
        return cls(
            state_tag=v["state-tag"],
            summary=v["summary"],
            details=list(v["details"]),
            hints=[Hint.from_wit_json(h) for h in v["hints"]],
            ask_user=v["ask-user"],
        )


@dataclass(frozen=True)
class CoercionError:
    """``coercion-error``: why an id argument could not be read; ``example``
    is JSON text."""

    message: str
    example: str

    def to_wit_json(self) -> dict:
        return {"message": self.message, "example": self.example}

    @classmethod
    def from_wit_json(cls, v: dict) -> "CoercionError":
        return cls(message=v["message"], example=v["example"])


# ---- wasmtime-py values, by walking the declared types (as run.py does) ---------


def _cases(ty: Any) -> list:
    if isinstance(ty, cm.ResultType):
        return [("ok", ty.ok), ("err", ty.err)]
    if isinstance(ty, cm.OptionType):
        return [("none", None), ("some", ty.payload)]
    return list(ty.cases)


def _classes(ty: Any) -> tuple:
    found: set = set()
    if ty is None:
        found.add(type(None))
    else:
        ty.add_classes(found)
    return tuple(found)


def _tagged(ty: Any) -> bool:
    """Whether wasmtime-py represents this variant/result as a tagged
    ``Variant`` (its cases' Python types overlap) or as the bare payload."""
    seen: set = set()
    for _, case_ty in _cases(ty):
        classes = set(_classes(case_ty))
        if classes & seen:
            return True
        seen |= classes
    return False


def to_wit(ty: Any, value: Any) -> Any:
    """JSON form -> the Python value wasmtime-py lowers for ``ty``."""
    if isinstance(ty, cm.ListType):
        return [to_wit(ty.element, v) for v in value]
    if isinstance(ty, cm.RecordType):
        record = cm.Record()
        for name, field_ty in ty.fields:
            setattr(record, name, to_wit(field_ty, value[name]))
        return record
    if isinstance(ty, cm.OptionType):
        return None if value is None else to_wit(ty.payload, value)
    if isinstance(ty, (cm.VariantType, cm.ResultType)):
        ((tag, payload),) = value.items()
        case_ty = dict(_cases(ty))[tag]
        lowered = None if case_ty is None else to_wit(case_ty, payload)
        return cm.Variant(tag, lowered) if _tagged(ty) else lowered
    return value  # strings, bools, numbers, enum cases


def from_wit(ty: Any, value: Any) -> Any:
    """The Python value wasmtime-py lifted for ``ty`` -> JSON form."""
    if isinstance(ty, cm.ListType):
        return [from_wit(ty.element, v) for v in value]
    if isinstance(ty, cm.RecordType):
        return {name: from_wit(field_ty, getattr(value, name)) for name, field_ty in ty.fields}
    if isinstance(ty, cm.OptionType):
        return None if value is None else from_wit(ty.payload, value)
    if isinstance(ty, (cm.VariantType, cm.ResultType)):
        if _tagged(ty):
            tag, payload = value.tag, value.payload
        else:
            tag, payload = next((t, value) for t, c in _cases(ty) if isinstance(value, _classes(c)))
        case_ty = dict(_cases(ty))[tag]
        return {tag: None if case_ty is None else from_wit(case_ty, payload)}
    return value
