"""One tool call, end to end: a port of Signpost's ``host/src/pipeline.rs``
(``run``, ``PolicyIds``, ``sanitize_advice``, ``fallback_render``,
``fallback_text``, ``vet_example``) and of the session history of
``host/src/session.rs``.

Per call, in order: the policy's ``prerequisites``; the server's tool, whose
id arguments are read through :meth:`EmbeddingSession.call`'s ``read_ids``
(strictly by the host, and only otherwise by the policy's ``coerce-ids``,
whose answer must name ids the agent sent); the policy's ``advise``; hint
validation; the policy's ``render``; the sanitiser. A policy that faults
(trap, deadline, memory, a wait, a refused answer) costs the response its
hints, never the result: each step has a host fallback.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Container, Iterable, Mapping, Optional, Union

from . import sanitize
from .policy import FaultKind, Policy, PolicyFault, PolicySession
from .sanitize import Allowed
from .types import Advice, Call, CoercionError, ErrorKind, Failure, Hint, Outcome, PastCall, Session, Success, \
    WitToolError
from .validate import HintOut, HintValidator, WorksCheck

__all__ = [
    "MAX_COERCED_IDS",
    "MAX_IDS",
    "Embedding",
    "EmbeddingSession",
    "Response",
    "ToolError",
    "is_id",
    "strict_ids",
]

#: Most detail lines kept from a policy (``pipeline::MAX_DETAILS``).
MAX_DETAILS = 200
#: Longest summary, detail or ask-user line kept, in characters (``pipeline::MAX_LINE``).
MAX_LINE = 500
#: Most ids a coercion may return (``pipeline::MAX_COERCED_IDS``).
MAX_COERCED_IDS = 1024
#: Most ids one call may name (``tools::MAX_IDS``).
MAX_IDS = 256
#: Most recent calls remembered, ids remembered, ids taken from one result
#: (``session::MAX_RECENT``, ``MAX_SEEN``, ``MAX_IDS_PER_CALL``).
MAX_RECENT, MAX_SEEN, MAX_IDS_PER_CALL = 16, 512, 64



def _sent_whole(sent: str, id: str) -> bool:
    """Whether ``id`` stands whole in what the agent sent: not glued to more
    hex digits, so a policy cannot carve an id out of a longer hex string
    (mirrors ``pipeline::sent_whole``)."""
    hexdigits = "0123456789abcdefABCDEF"
    at = sent.find(id)
    while at != -1:
        before = sent[at - 1] if at > 0 else ""
        after = sent[at + len(id)] if at + len(id) < len(sent) else ""
        if (not before or before not in hexdigits) and (not after or after not in hexdigits):
            return True
        at = sent.find(id, at + 1)
    return False

class ToolError(Exception):
    """A failed tool call: what the agent reads, and a call to copy
    (``tools::ToolError``). Raise it from a tool (or let ``read_ids`` raise it)."""

    def __init__(self, kind: ErrorKind, message: str, example: Optional[dict] = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.example = example

    def to_json(self) -> dict:
        out: dict = {"kind": self.kind.snake, "message": self.message}
        if self.example is not None:
            out["example"] = self.example
        return out


def is_id(s: Any) -> bool:
    """A canonical id: 40 lowercase hex characters (``graph::is_id``)."""
    return isinstance(s, str) and len(s) == 40 and all(c in "0123456789abcdef" for c in s)


def strict_ids(tool: str, args: Mapping[str, Any], param: str) -> list[str]:
    """The strict reading (``tools::StrictIds``): a JSON array of canonical
    ids (or, for ``id``, one id string), deduplicated in order; else an
    ``invalid_id`` :class:`ToolError`."""
    value = args.get(param)
    ids: list[str] = []
    if isinstance(value, str) and param == "id":
        ids = [value]
    elif isinstance(value, list) and value:
        ids = list(value) if all(isinstance(v, str) for v in value) else []
    if not ids or len(ids) > MAX_IDS or not all(is_id(i) for i in ids):
        shape = "one id string" if param == "id" else "a JSON array of id strings"
        raise ToolError(ErrorKind.INVALID_ID,
                        f"`{param}` of {tool} must be {shape} (40 lowercase hex characters each, at most {MAX_IDS})")
    return list(dict.fromkeys(ids))


def is_tag(tag: str) -> bool:
    """A well-formed state tag: lower_snake_case, 1 to 32 bytes (``pipeline::is_tag``)."""
    return (1 <= len(tag.encode()) <= 32 and tag[0].isascii() and tag[0].islower()
            and all(c.isascii() and (c.islower() or c.isdigit() or c == "_") for c in tag))


def _plain_tag(ok: bool) -> str:
    return "ok" if ok else "error"


def describe_error_kind(kind: ErrorKind) -> str:
    """What a kind of failure means, in a few words (``tools::describe_error_kind``)."""
    return {
        ErrorKind.INVALID_ID: "an id argument could not be read as 40-hex ids",
        ErrorKind.UNKNOWN_ID: "no symbol has that id",
        ErrorKind.BAD_ARGUMENT: "an argument has the wrong type, value or range",
        ErrorKind.INTERNAL: "the server failed",
    }[kind]


def _wire(s: str) -> str:
    """Text for the guest: a lone surrogate (which a Python JSON parser lets
    through, and a Rust one never) becomes U+FFFD."""
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _trim_empty(s: str) -> bool:
    return not any(not sanitize._is_whitespace(c) for c in s)


def sanitize_advice(advice: Advice, ok: bool) -> list[str]:
    """Makes a policy's advice safe to show: a well-formed tag, single lines
    of bounded length, a bounded number of details (``pipeline::sanitize_advice``).
    Returns what it had to fix."""
    notes = []
    if not is_tag(advice.state_tag):
        notes.append(f"state tag `{sanitize.escape(advice.state_tag, 40)}` is not lower_snake_case")
        advice.state_tag = _plain_tag(ok)
    advice.summary = sanitize.line(advice.summary, MAX_LINE)
    advice.details = [sanitize.line(d, MAX_LINE) for d in advice.details[:MAX_DETAILS]]
    ask = sanitize.line(advice.ask_user, MAX_LINE) if advice.ask_user is not None else None
    advice.ask_user = ask or None
    return notes


def fallback_render(advice: Advice) -> str:
    """The documented layout, rendered by the host when ``render`` failed
    (``pipeline::fallback_render``); it passes the same sanitiser."""
    lines = [f"[{advice.state_tag}] {advice.summary}", *advice.details]
    for h in advice.hints:
        lines.append(f"→ next: {h.tool} {h.args} — {h.reason}" if h.actionable else f"note: {h.reason}")
    if advice.ask_user is not None:
        lines.append(f"? ask user: {advice.ask_user}")
    return "\n".join(lines)


def fallback_text(tool: str, outcome: Union[Any, ToolError]) -> str:
    """The text when the policy could not advise: the result itself,
    unhinted (``pipeline::fallback_text``)."""
    if isinstance(outcome, ToolError):
        example = f"\nSend: {tool} {sanitize.dumps(outcome.example)}" if outcome.example is not None else ""
        return f"[error] {tool} failed: {outcome.message}{example}"
    return f"[ok] {tool} result (no hints: the hint policy failed)\n{sanitize.dumps(outcome)}"


def result_ids(result: Any) -> list[str]:
    """Ids of the records in a tool result (any ``id`` or ``origin`` field
    holding an id, not under ``hints``), at most 64 (``session::result_ids``;
    keys in sorted order, as Rust's ``BTreeMap`` walks them)."""
    out: list[str] = []

    def walk(v: Any, depth: int) -> None:
        if len(out) >= MAX_IDS_PER_CALL or depth > 6:
            return
        if isinstance(v, dict):
            for k in sorted(v):
                x = v[k]
                if isinstance(x, str):
                    if k in ("id", "origin") and is_id(x) and x not in out and len(out) < MAX_IDS_PER_CALL:
                        out.append(x)
                elif isinstance(x, (dict, list)) and k != "hints":
                    walk(x, depth + 1)
        elif isinstance(v, list):
            for item in v:
                walk(item, depth + 1)

    walk(result, 0)
    return out


class History:
    """What one session did so far, bounded (``session::History``)."""

    def __init__(self) -> None:
        self.call_count = 0
        self.recent: deque[PastCall] = deque(maxlen=MAX_RECENT)
        self.seen: deque[str] = deque()

    def record(self, tool: str, ok: bool, result: Optional[Any]) -> None:
        self.call_count = min(self.call_count + 1, 2**32 - 1)
        ids = result_ids(result) if result is not None else []
        for i in ids:
            try:
                self.seen.remove(i)
            except ValueError:
                pass
            if len(self.seen) == MAX_SEEN:
                self.seen.popleft()
            self.seen.append(i)
        self.recent.append(PastCall(tool=tool, ok=ok, ids=tuple(ids)))

    def snapshot(self) -> Session:
        return Session(call_count=self.call_count, recent=tuple(self.recent), seen_ids=tuple(self.seen))


@dataclass
class Response:
    """What a tool call returns to the agent (``pipeline::Response``)."""

    #: Whether the call failed (``isError``).
    is_error: bool
    #: The sanitised text the agent reads.
    text: str
    #: The advice's state tag (``ok``/``error`` when the policy faulted).
    state_tag: str
    #: The result (or ``{"error": …}``) plus ``hints``.
    structured: dict
    #: The hints the response carries (also in ``structured``).
    hints: list[HintOut]
    #: The policy faults this call suffered (each cost it hints, not the result).
    faults: list[PolicyFault] = field(default_factory=list)
    #: What the host refused or repaired (invalid hints, cut lines, …).
    notes: list[str] = field(default_factory=list)


#: ``run_tool(tool, args, read_ids)``: the server's tool. ``read_ids(param)``
#: returns the canonical ids of an id argument or raises :class:`ToolError`.
#: Returns the result (a JSON object) or raises :class:`ToolError`.
RunTool = Callable[[str, dict, Callable[[str], list[str]]], Any]


class Embedding:
    """A policy embedded in a server: what Signpost's host guarantees, kept.

    ``schemas``: ``{tool_name: input_schema}`` of the server's tools.
    ``works(tool, args)``: optional; ``None`` when an actionable hint is a
    call that works (its ids exist, …), else why not.
    ``known``: optional; a set of ids or a ``known(id) -> bool``: an id
    argument whose every id, trimmed and lower-cased, is one of them is read
    by the host and never handed to the policy's coercion; it also tells a
    split id that names a symbol (ids are read in the text as Signpost reads
    them).
    ``strict_templates``: a template the text shows (a call with a
    ``<placeholder>``) may hold only values the agent sent or the result
    holds; keep it for tools that may change state; Signpost's own tools,
    which only read, do without (``Vocabulary::signpost``).
    ``acting``: the tools that may change state (by default every tool with
    ``strict_templates``): after one of their names, a bare value is an
    argument (``delete_entities Alice``), so a text showing one is cut.
    """

    def __init__(self, policy: Policy, schemas: Mapping[str, Mapping[str, Any]], *,
                 works: Optional[WorksCheck] = None,
                 known: Union[None, Container[str], Callable[[str], bool]] = None,
                 strict_templates: bool = True,
                 acting: Optional[Iterable[str]] = None):
        self.policy = policy
        self.validator = HintValidator(schemas, works, strict_templates, acting)
        self.vocabulary = self.validator.vocabulary
        self.tool_names = tuple(schemas)
        if known is None or callable(known):
            self._known = known
        else:
            ids = known
            self._known = lambda i: i in ids

    @property
    def counters(self) -> dict:
        """Calls, faults by kind, hints dropped, lines stripped, …"""
        out = self.policy.counters.snapshot()
        out["policy"] = {"name": self.policy.info.name, "version": self.policy.info.version,
                         "sha256": self.policy.sha256}
        return out

    def session(self) -> "EmbeddingSession":
        """A session for one agent: its own policy instance and history."""
        return EmbeddingSession(self)

    def known(self, i: str) -> bool:
        return bool(self._known and self._known(i))


class EmbeddingSession:
    """One agent's session: :meth:`call` runs a tool call through the
    policy. Calls of one session are serialised."""

    def __init__(self, embedding: Embedding):
        self.embedding = embedding
        self.instance: PolicySession = embedding.policy.session()
        self.history = History()
        self._lock = threading.Lock()

    def close(self) -> None:
        self.instance.close()

    # ---- the pipeline ---------------------------------------------------------

    def call(self, tool: str, args: Mapping[str, Any], run_tool: RunTool) -> Response:
        """One tool call: the whole pipeline (``pipeline::run``)."""
        with self._lock:
            response = self._run(tool, dict(args), run_tool)
            self.history.record(tool, not response.is_error, None if response.is_error else response.structured)
            return response

    def _run(self, tool: str, args: dict, run_tool: RunTool) -> Response:
        emb = self.embedding
        counters = emb.policy.counters
        counters.add("tool_calls")
        instance = self.instance
        faults: list[PolicyFault] = []
        notes: list[str] = []
        session = self.history.snapshot()
        call = Call(tool=tool, args=_wire(sanitize.dumps(args)))

        try:
            hints: list[Hint] = instance.prerequisites(call, session)
        except PolicyFault as fault:
            faults.append(fault)
            hints = []

        def read_ids(param: str) -> list[str]:
            return self._read_ids(call, tool, args, param, faults, notes)

        outcome: Union[Any, ToolError]
        try:
            outcome = run_tool(tool, args, read_ids)
        except ToolError as e:
            outcome = e
        except Exception as e:  # noqa: BLE001 - the server failed: not the agent's fault
            outcome = ToolError(ErrorKind.INTERNAL, f"{tool} failed: {type(e).__name__}")
        if isinstance(outcome, ToolError):
            outcome = self._vet_example(tool, outcome, self._known(args, session, None), notes)
        wit_outcome = self._to_wit_outcome(outcome)
        ok = not isinstance(outcome, ToolError)

        try:
            advice = instance.advise(call, wit_outcome, session)
        except PolicyFault as fault:
            faults.append(fault)
            advice = None
        if advice is not None:
            notes.extend(sanitize_advice(advice, ok))
            hints.extend(advice.hints)
            filtered = emb.validator.filter(hints, lambda why: notes.append(f"invalid hint: {why}"))
            counters.add("hints_emitted", len(filtered.hints))
            counters.add("hints_dropped", filtered.dropped)
            valid = filtered.hints
            advice.hints = [h.to_wit() for h in valid]
            try:
                text = instance.render(call, advice)
                if _trim_empty(text):
                    notes.append("render returned no text")
                    text = fallback_render(advice)
            except PolicyFault as fault:
                faults.append(fault)
                text = fallback_render(advice)
            state_tag = advice.state_tag
        else:
            valid = []
            text = fallback_text(tool, outcome)
            state_tag = _plain_tag(ok)

        allowed = [Allowed(h.tool, h.args) for h in valid if h.actionable]
        if isinstance(outcome, ToolError) and isinstance(outcome.example, dict):
            allowed.append(Allowed(tool, outcome.example))
        known = self._known(args, session, None if isinstance(outcome, ToolError) else outcome)
        safe, changes = sanitize.agent_text(text, allowed, emb.vocabulary, known)
        if changes.lines:
            counters.add("lines_stripped", changes.lines)
            counters.add("ids_replaced", changes.ids)
            notes.append(f"the text had {changes.lines} line(s) showing calls that are not validated hints or ids "
                         f"not in the answer ({changes.calls} call(s) cut out, {changes.ids} id(s) replaced)")
        # Hint reasons reach the agent in `structuredContent` too.
        for h in valid:
            reason, replaced = sanitize.scrub_ids(h.reason, allowed, known)
            if replaced:
                counters.add("ids_replaced", replaced)
                notes.append("a hint's reason showed an id not in the answer (replaced)")
                h.reason = reason

        if isinstance(outcome, ToolError):
            message = sanitize.safe_line(outcome.message, 1000, allowed, emb.vocabulary, known)
            if message is None:
                counters.add("messages_redacted")
                notes.append("the error message showed a call that is not a validated hint (replaced)")
                outcome.message = f"{tool} failed: {describe_error_kind(outcome.kind)}"
            elif message != outcome.message:
                counters.add("messages_redacted")
                notes.append("the error message showed a call that is not a validated hint (cut out)")
                outcome.message = message
            is_error, structured = True, {"error": outcome.to_json()}
        elif isinstance(outcome, dict):
            is_error, structured = False, dict(outcome)
        else:
            is_error, structured = False, {"result": outcome}
        structured["hints"] = [h.to_json() for h in valid]
        if faults:
            counters.add("faulted_tool_calls")
        return Response(is_error=is_error, text=safe, state_tag=state_tag, structured=structured, hints=valid,
                        faults=faults, notes=notes)

    # ---- pieces ----------------------------------------------------------------

    def _known_reading(self, value: Any) -> Optional[list[str]]:
        """The kit's rule on top of Signpost's: ids the graph has are read by
        the host. An id argument whose every id, trimmed and lower-cased, is
        a canonical id the server knows is never handed to the policy (so a
        coercion can never overrule it)."""
        emb = self.embedding
        if emb._known is None:
            return None
        items = [value] if isinstance(value, str) else value if isinstance(value, list) and value else None
        if not items or len(items) > MAX_IDS or not all(isinstance(v, str) for v in items):
            return None
        ids = [sanitize._ascii_lower(v.strip()) for v in items]
        if all(is_id(i) and emb.known(i) for i in ids):
            return list(dict.fromkeys(ids))
        return None

    def _read_ids(self, call: Call, tool: str, args: dict, param: str, faults: list[PolicyFault],
                  notes: list[str]) -> list[str]:
        """Reads ids: strictly when the agent sent canonical ids (the policy
        is not asked, so it can never overrule correct input); otherwise
        through the policy, whose answer must be ids that occur in what the
        agent sent. Anything else from the policy is refused (and counted
        as a fault), and the strict reading's teaching error stands.
        Mirrors ``pipeline::PolicyIds::coerce``."""
        counters = self.embedding.policy.counters
        try:
            return strict_ids(tool, args, param)
        except ToolError as e:
            strict = e
        known = self._known_reading(args.get(param))
        if known is not None:
            return known
        sent = sanitize._ascii_lower(sanitize.dumps(args[param])) if param in args else ""
        counters.add("coercions_asked")
        try:
            answer = self.instance.coerce_ids(call, param)
        except PolicyFault as fault:
            faults.append(fault)
            raise strict from None
        if isinstance(answer, list):
            if answer and len(answer) <= MAX_COERCED_IDS and all(is_id(i) and _sent_whole(sent, i) for i in answer):
                return answer
            shown = [sanitize.escape(i, 48) for i in answer[:3]]
            notes.append(f"coerce-ids({sanitize.escape(sent, 120)}) returned {len(answer)} id(s) the agent did not "
                         f"send, or malformed ones: {shown} (refused)")
            counters.add("coercions_refused")
            self.instance.refuse_answer()
            faults.append(PolicyFault(FaultKind.REFUSED, "coerce-ids", "ids the agent did not send"))
            raise strict from None
        assert isinstance(answer, CoercionError)
        example = sanitize.loads_object(answer.example)
        raise ToolError(ErrorKind.INVALID_ID, sanitize.line(answer.message, 1000), example)

    def _known(self, args: Mapping[str, Any], session: Session, result: Any) -> sanitize.Known:
        """Where the ids a response may show come from: what the agent sent,
        the session's history, the result (when there is one), and the ids
        the graph has, to tell a split id that names a symbol
        (``pipeline::known``)."""
        emb = self.embedding
        history = [session.seen_ids, *(c.ids for c in session.recent)]
        return sanitize.Known(sent=args, result=result, history=history,
                              names_a_symbol=emb.known if emb._known is not None else None)

    def _vet_example(self, tool: str, error: ToolError, known: sanitize.Known, notes: list[str]) -> ToolError:
        """A tool error's ``example`` stays only when every id in it is one
        the agent may be shown and it is a call that works, or a template to
        adapt (``pipeline::vet_example``)."""
        if not isinstance(error.example, dict):
            error.example = None
            return error
        if not all(sanitize.all_known(v, known) for v in error.example.values()):
            notes.append("the error's example names an id the agent has not seen (removed)")
            self.embedding.policy.counters.add("examples_removed")
            error.example = None
            return error
        if sanitize.is_template(error.example) or self.embedding.validator.is_working_call(tool, error.example):
            return error
        notes.append(f"the error's example {sanitize.escape(sanitize.dumps(error.example), 120)} "
                     "is not a working call (removed)")
        self.embedding.policy.counters.add("examples_removed")
        error.example = None
        return error

    @staticmethod
    def _to_wit_outcome(outcome: Union[Any, ToolError]) -> Outcome:
        """A tool's outcome as the WIT ``outcome`` (``pipeline::to_wit_outcome``)."""
        if isinstance(outcome, ToolError):
            example = _wire(sanitize.dumps(outcome.example)) if outcome.example is not None else None
            return Failure(WitToolError(kind=outcome.kind, message=_wire(outcome.message), example=example))
        return Success(_wire(sanitize.dumps(outcome)))
