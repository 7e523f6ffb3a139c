"""Hint validation: a port of Signpost's ``host/src/validate.rs``.

A hint survives when its tool is one of the server's tools and its pieces
are bounded; an actionable one must also validate against the tool's input
JSON Schema **and** (when the server gives a ``works`` check) parse as a
working call, for Signpost: through the same parser that runs real calls,
with ids read strictly and looked up in the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

import jsonschema

from . import sanitize
from .types import Hint

__all__ = ["MAX_CONSIDERED", "MAX_HINTS", "MAX_HINT_ARGS", "MAX_REASON", "Filtered", "HintOut", "HintValidator",
           "InvalidHint"]

#: Most hints in one response, whatever the policy returns (``validate::MAX_HINTS``).
MAX_HINTS = 8
#: Longest hint reason kept, in characters (``validate::MAX_REASON``).
MAX_REASON = 200
#: Longest serialized hint arguments kept, in bytes (``validate::MAX_HINT_ARGS``).
MAX_HINT_ARGS = 4096
#: Hints looked at per response; any beyond are dropped unread (``validate::MAX_CONSIDERED``).
MAX_CONSIDERED = 32

#: ``works(tool, args)``: ``None`` when the call works, else why not (one line).
WorksCheck = Callable[[str, dict], Optional[str]]


class InvalidHint(ValueError):
    """Why a hint was dropped."""


@dataclass
class HintOut:
    """A hint as it appears in ``structuredContent.hints`` (``tools::HintOut``)."""

    tool: str
    args: dict
    actionable: bool
    reason: str

    def to_json(self) -> dict:
        return {"tool": self.tool, "args": self.args, "actionable": self.actionable, "reason": self.reason}

    def to_wit(self) -> Hint:
        """The hint as a WIT record for ``render`` (``validate::to_wit``)."""
        return Hint(tool=self.tool, args=sanitize.dumps(self.args), actionable=self.actionable, reason=self.reason)


@dataclass
class Filtered:
    """The hints that survived validation, and how many did not."""

    hints: list[HintOut] = field(default_factory=list)
    dropped: int = 0


class HintValidator:
    """Compiled input schemas of the server's tools (``validate::HintValidator``).

    ``schemas`` maps each tool name to its input JSON Schema (take them from
    the server's own tool list, so they are the schemas clients see).
    ``works``, optional, checks that an actionable hint is a call that works
    on the server's data (ids exist, …); without it, schema validation is
    all, and you lose the half of Signpost's guarantee that reads
    "parsed as a working call on the graph".
    ``strict_templates`` and ``acting``: see :class:`sanitize.Vocabulary`
    (the tools' names and parameters, which the sanitiser reads calls by).
    """

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]], works: Optional[WorksCheck] = None,
                 strict_templates: bool = True, acting: Optional[Iterable[str]] = None):
        self.tool_names = tuple(schemas)
        self.vocabulary = sanitize.Vocabulary(schemas, strict_templates, acting)
        self._validators = {}
        for name, schema in schemas.items():
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError as e:
                raise ValueError(f"input schema of {name} does not compile: {e.message}") from None
            self._validators[name] = cls(schema)
        self._works = works

    def check(self, hint: Hint) -> HintOut:
        """Checks one hint: the hint as shown, or :class:`InvalidHint` saying
        why it is dropped (``HintValidator::check``)."""
        if hint.tool not in self._validators:
            raise InvalidHint(f"unknown tool `{sanitize.escape(hint.tool, 40)}`")
        tool = hint.tool
        # A reason explains; a call inside it would reach the agent unvalidated.
        reason = sanitize.line(hint.reason, MAX_REASON)
        if sanitize.has_call(reason, self.vocabulary) or sanitize.has_hint_marker(reason):
            reason = ""
        args = None
        if len(hint.args.encode("utf-8", "surrogatepass")) <= MAX_HINT_ARGS:
            args = sanitize.loads_object(hint.args)
        if not hint.actionable:
            return HintOut(tool=tool, args=args or {}, actionable=False, reason=reason)
        if args is None:
            raise InvalidHint(f"{tool}: args are not a JSON object of at most {MAX_HINT_ARGS} bytes")
        error = next(iter(self._validators[tool].iter_errors(args)), None)
        if error is not None:
            raise InvalidHint(f"{tool} {sanitize.escape(hint.args, 120)}: does not match the input schema: "
                              f"{sanitize.escape(error.message, 200)}")
        if self._works is not None:
            why = self._works(tool, args)
            if why is not None:
                raise InvalidHint(f"{tool} {sanitize.escape(hint.args, 120)}: not a working call: "
                                  f"{sanitize.escape(why, 200)}")
        return HintOut(tool=tool, args=args, actionable=True, reason=reason)

    def is_working_call(self, tool: str, args: dict) -> bool:
        """Whether ``tool`` + ``args`` would pass :meth:`check` as an
        actionable hint (used to vet a teaching example)."""
        try:
            self.check(Hint(tool=tool, args=sanitize.dumps(args), actionable=True, reason=""))
            return True
        except InvalidHint:
            return False

    def filter(self, hints: Iterable[Hint], why: Optional[Callable[[str], None]] = None) -> Filtered:
        """Keeps the valid hints (at most :data:`MAX_HINTS`, deduplicated,
        from the first :data:`MAX_CONSIDERED`); every other one is dropped,
        and ``why`` hears why for each invalid one (``HintValidator::filter``)."""
        hints = list(hints)
        out: list[HintOut] = []
        dropped = 0
        total = len(hints)
        if total > MAX_CONSIDERED:
            dropped += total - MAX_CONSIDERED
            if why:
                why(f"{total} hints in one response; only the first {MAX_CONSIDERED} are read")
        for hint in hints[:MAX_CONSIDERED]:
            if len(out) == MAX_HINTS:
                dropped += 1
                continue
            try:
                h = self.check(hint)
            except InvalidHint as e:
                dropped += 1
                if why:
                    why(str(e))
                continue
            if not any(o.tool == h.tool and sanitize.json_equal(o.args, h.args) and o.actionable == h.actionable
                       for o in out):
                out.append(h)
        return Filtered(hints=out, dropped=dropped)
