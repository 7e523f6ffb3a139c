"""signpost_embed: run a Signpost policy component (WIT world ``hints``,
exporting ``signpost:policy/policy@0.3.0`` or ``@0.1.0``: ``INTERFACES``)
inside your own Python server, with the guarantees Signpost's Rust host
keeps: a deadline and a memory cap on every call, a fresh instance after any
fault, hints validated against your tools' input schemas, the policy's text
sanitised, and coercion that can never overrule an id the agent sent
correctly. A 0.3.0 policy's questions about the session's history
(``host.has-seen``, ``host.history``) are answered from the ``Session`` the
call is made with; ``host.lookup`` answers an error; ``catalogue`` is never
called and a ``hold`` is not honoured (the call proceeds).

    policy = Policy.load("signpost_hints.wasm")          # deadline_ms=100, memory_mib=64
    embedding = Embedding(policy, {"describe": {...}, ...}, works=..., known=...)
    session = embedding.session()                        # one per agent
    response = session.call("describe", {"id": "..."}, run_tool)

See README.md beside this package for what is and is not guaranteed.
"""

from .pipeline import (
    Embedding,
    EmbeddingSession,
    History,
    Response,
    ToolError,
    is_id,
    result_ids,
    strict_ids,
)
from .policy import FaultKind, Limits, LoadError, Policy, PolicyFault, PolicySession
from .sanitize import (
    REDACTED,
    REPLACED_ID,
    Allowed,
    Changes,
    Known,
    Vocabulary,
    agent_text,
    escape,
    has_call,
    is_template,
    line,
    safe_line,
    scrub_ids,
)
from .types import (
    INTERFACE,
    INTERFACES,
    Advice,
    Call,
    CoercionError,
    ErrorKind,
    Failure,
    Hint,
    Outcome,
    PastCall,
    PolicyInfo,
    Session,
    Success,
    WitToolError,
)
from .validate import MAX_CONSIDERED, MAX_HINT_ARGS, MAX_HINTS, MAX_REASON, Filtered, HintOut, HintValidator, InvalidHint

__version__ = "0.1.0"

__all__ = [
    "INTERFACE", "INTERFACES", "MAX_CONSIDERED", "MAX_HINTS", "MAX_HINT_ARGS", "MAX_REASON", "REDACTED", "REPLACED_ID",
    "Advice", "Allowed", "Call", "Changes", "CoercionError", "Embedding", "EmbeddingSession", "ErrorKind",
    "Failure", "FaultKind", "Filtered", "Hint", "HintOut", "HintValidator", "History", "InvalidHint", "Known",
    "Limits", "LoadError", "Outcome", "PastCall", "Policy", "PolicyFault", "PolicyInfo", "PolicySession",
    "Response", "Session", "Success", "ToolError", "Vocabulary", "WitToolError", "agent_text", "escape",
    "has_call", "is_id", "is_template", "line", "result_ids", "safe_line", "scrub_ids", "strict_ids",
]
