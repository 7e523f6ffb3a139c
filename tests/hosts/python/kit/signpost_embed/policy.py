"""The policy sandbox: a policy component run by wasmtime-py under limits.
The Python side of Signpost's ``host/policy/`` (the ``signpost-policy`` crate).

What each call runs under (and how it differs from Signpost):

- **time**: epoch interruption. A ticker thread moves the engine's epoch
  every 5 ms (``policy::TICK``), and every call, and every instantiation,
  gets ``deadline_ms / 5 + 1`` ticks (``PolicyEngine::deadline_ticks``): a
  guest that computes past its deadline traps with ``interrupt``
  (:attr:`FaultKind.TIMEOUT`).
- **waits in the host**: the epoch cannot interrupt a guest blocked in a
  host call, and wasmtime-py cannot bound such a wait the way Signpost does
  (Signpost gives ``wasi:io/poll``'s ``poll`` and ``pollable.block`` the
  call's deadline). Here those two functions are replaced by ones that
  refuse at once: any sleep, clock wait or poll traps immediately
  (:attr:`FaultKind.HOST_WAIT`). Stricter than Signpost (even a zero-length
  wait fails), never slower.
- **memory**: ``store.set_limits``: at most ``memory_mib`` per linear
  memory and ``max_memories`` (default 1) memories, so by default all of an
  instance's linear memory is within the cap, as in Signpost. Tables are
  capped per table (``memory_mib`` MiB / 16 bytes of elements each, 16
  tables) rather than inside the same budget: wasmtime-py has no custom
  limiter. A guest whose allocation is refused traps; when what it wrote on
  stderr during the call says so (Rust's ``memory allocation of N bytes
  failed``, ``out of memory``, ``MemoryError``) the fault is
  :attr:`FaultKind.MEMORY`, otherwise :attr:`FaultKind.TRAP`. Signpost also
  retires an instance before it reaches the cap (three quarters used); the
  instance's footprint is not visible through wasmtime-py, so here a
  leaking policy reaches the cap, faults once, and gets a fresh instance.
- **WASI**: nothing granted (``WasiConfig()``: no files, environment,
  arguments; wasmtime's default WASI context refuses every socket address
  and name lookup, where Signpost turns sockets off). The guest's stdout
  and stderr go to memory (64 KiB each per instance), then to the
  ``signpost_embed.guest`` logger, escaped; never to this process's stdout,
  which an MCP stdio server speaks on.
- **instances**: a :class:`PolicySession` holds one instance for one
  session (one agent), like Signpost's per-session pool: never share a
  session between users. An instance that faulted (any kind), whose answer
  was refused, that served ``max_uses`` calls or wrote more than half its
  output budget is dropped; the next call instantiates a fresh one. A
  store that trapped is never called again.
- **threads**: wasmtime-py keeps the last Python exception of a host call in
  a module global, so guest calls are serialised process-wide (one lock).
  Each call is short (the deadline), but a server with many concurrent
  sessions waits its turn here, unlike Signpost's.
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import logging
import os
import threading
import weakref
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional, Union

import wasmtime
from wasmtime import component as cm

from . import sanitize
from .types import (
    HOST,
    INTERFACE,
    INTERFACES,
    Advice,
    Call,
    CoercionError,
    Hint,
    Outcome,
    PolicyInfo,
    Session,
    from_wit,
    outcome_to_wit_json,
    to_wit,
)

__all__ = ["FaultKind", "Limits", "LoadError", "Policy", "PolicyFault", "PolicySession"]

log = logging.getLogger("signpost_embed")
guest_log = logging.getLogger("signpost_embed.guest")

#: Epoch tick: the resolution of the per-call deadline (``policy::TICK``).
TICK_S = 0.005
#: The WASI interface whose host calls can wait, as wasmtime 50's linker
#: names it (its newest 0.2.x; components importing an older 0.2.x resolve
#: to it). Checked by the kit's tests: a ``chaos:sleep`` call must fault at once.
WASI_POLL = "wasi:io/poll@0.2.12"
#: Keep this much of a guest's latest stderr to classify a trap.
_STDERR_TAIL = 4096
_MEMORY_SIGNS = (b"memory allocation of", b"out of memory", b"memoryerror", b"rangeerror: out of memory")

FUNCTIONS = ("identity", "coerce-ids", "prerequisites", "advise", "render")

#: The history of the session whose call a 0.3.0 policy is judging (set
#: around ``prerequisites`` and ``advise`` under ``_WASM_LOCK``; ``None``
#: in any other function: an empty history), as ``host.has-seen`` and
#: ``host.history`` answer for it.
_HISTORY: list[Optional[Session]] = [None]


#: Most ids one ``host.has-seen`` asks about (``policy::MAX_HAS_SEEN``).
MAX_HAS_SEEN = 4096


def _has_seen(_store: Any, ids: list[str]) -> list[bool]:
    if len(ids) > MAX_HAS_SEEN:
        raise ValueError(f"host.has-seen: {len(ids)} ids, at most {MAX_HAS_SEEN} a call")
    seen = set(_HISTORY[0].seen_ids) if _HISTORY[0] else set()
    return [i in seen for i in ids]


def _as_records(value: Any) -> Any:
    """A JSON form of records and lists (``Session.to_wit_json``) as the
    ``cm.Record`` values wasmtime-py lowers: records' fields by their WIT
    names."""
    if isinstance(value, dict):
        record = cm.Record()
        for name, field in value.items():
            setattr(record, name, _as_records(field))
        return record
    if isinstance(value, list):
        return [_as_records(v) for v in value]
    return value


def _history(_store: Any) -> cm.Record:
    return _as_records((_HISTORY[0] or Session()).to_wit_json())


def _lookup(_store: Any, _tool: str, _args: str) -> cm.Variant:
    return cm.Variant("err", "no lookups here: this host serves no backend's tools")


class FaultKind(str, Enum):
    """Why a policy call did not return normally."""

    #: Ran past its deadline (epoch interruption).
    TIMEOUT = "timeout"
    #: Tried to wait in a host call (sleep, clock wait, poll): refused at once.
    HOST_WAIT = "host_wait"
    #: Trapped after the memory cap refused it memory (judged from its stderr).
    MEMORY = "memory"
    #: Any other trap (panic, unreachable, stack overflow, …).
    TRAP = "trap"
    #: Could not be instantiated (a limit, a start function that failed).
    INSTANTIATE = "instantiate"
    #: Returned an answer the host refused (coercion ids the agent did not send).
    REFUSED = "refused"


class PolicyFault(Exception):
    """A policy call that did not return normally. It costs the response its
    hints, never the response itself: the embedding falls back (see
    :mod:`signpost_embed.pipeline`). ``detail`` is one escaped line."""

    def __init__(self, kind: FaultKind, function: str, detail: str = ""):
        self.kind = kind
        self.function = function
        self.detail = detail
        super().__init__(str(self))

    def __str__(self) -> str:
        what = {
            FaultKind.TIMEOUT: "policy call timed out",
            FaultKind.HOST_WAIT: "policy call tried to wait in the host (refused)",
            FaultKind.MEMORY: "policy ran out of memory",
            FaultKind.TRAP: "policy trapped",
            FaultKind.INSTANTIATE: "policy could not be instantiated",
            FaultKind.REFUSED: "policy answer refused",
        }[self.kind]
        return f"{self.function}: {what}" + (f": {self.detail}" if self.detail else "")


class LoadError(Exception):
    """A component that cannot serve: not a component, links what the
    sandbox does not grant, does not export the interface, or fails its
    identity call."""


class _HostWaitRefused(Exception):
    """Raised by the replaced ``wasi:io/poll`` functions; ends the guest call."""


def _refuse_wait(_store: Any, *_args: Any) -> None:
    raise _HostWaitRefused("the policy tried to wait in a host call")


@dataclass(frozen=True)
class Limits:
    """The limits every policy call runs under (Signpost's defaults)."""

    #: Wall-clock budget of one policy function call (``--policy-timeout-ms``).
    deadline_ms: int = 100
    #: Linear memory per instance, in MiB (``--policy-memory-mib``).
    memory_mib: int = 64
    #: Linear memories an instance may have; with 1 the cap is the whole
    #: footprint of its memories. Raising it makes the cap per memory.
    max_memories: int = 1
    #: Bytes of stdout and of stderr an instance may write (kept for the log).
    output_bytes: int = 64 << 10
    #: Calls after which an instance is retired (``policy::MAX_USES``).
    max_uses: int = 10_000

    def deadline_ticks(self) -> int:
        return max(1, int(self.deadline_ms / 1000 / TICK_S)) + 1


class Counters:
    """Counters of one loaded policy and of the embedding using it; thread
    safe. :meth:`snapshot` gives them as a dict."""

    NAMES = (
        "calls", "instances", "instances_retired", "tool_calls", "faulted_tool_calls",
        "hints_emitted", "hints_dropped", "coercions_asked", "coercions_refused",
        "lines_stripped", "ids_replaced", "messages_redacted", "examples_removed",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._n = {name: 0 for name in self.NAMES}
        self._faults = {k.value: 0 for k in FaultKind}

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._n[name] += n

    def fault(self, kind: FaultKind) -> None:
        with self._lock:
            self._faults[kind.value] += 1

    def snapshot(self) -> dict:
        with self._lock:
            out: dict = dict(self._n)
            out["faults"] = dict(self._faults)
            out["faults_total"] = sum(self._faults.values())
            return out


# wasmtime-py keeps a raised host exception in a module global: one guest
# call at a time in this process.
_WASM_LOCK = threading.RLock()
_LIVE: "weakref.WeakSet[Policy]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Stores whose WASI output goes to Python callbacks must be dropped
    # before the interpreter finalises (wasmtime's runtime thread would call
    # into a finalising interpreter).
    for policy in list(_LIVE):
        policy.close()
    gc.collect()


class _Output:
    """A guest output stream, kept in memory: what is still to be logged
    (bounded), the latest bytes (to classify a trap), and the total."""

    def __init__(self, limit: int):
        self.limit = limit
        self.total = 0
        self.pending = bytearray()
        self.logged_total = 0
        self.tail = b""

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - self.logged_total - len(self.pending)
        if room > 0:
            self.pending += data[:room]
        self.tail = (self.tail + data)[-_STDERR_TAIL:]

    def since(self, mark: int) -> bytes:
        n = min(self.total - mark, len(self.tail))
        return self.tail[-n:] if n > 0 else b""

    def drain(self, policy: str, stream: str) -> None:
        if not self.pending:
            return
        text = bytes(self.pending).decode("utf-8", "replace")
        self.logged_total += len(self.pending)
        self.pending.clear()
        for l in text.split("\n"):
            if l.strip():
                guest_log.info("%s %s: %s", policy, stream, sanitize.escape(l, 1000))


class _Slot:
    """One instance: its store, its functions, its uses and output."""

    def __init__(self, store: wasmtime.Store, instance: cm.Instance, interface: str, out: _Output, err: _Output):
        self.store = store
        self.instance = instance
        self.interface = interface
        self.out = out
        self.err = err
        self.uses = 0
        self._funcs: dict[str, tuple[Any, Any]] = {}
        self._iface = instance.get_export_index(store, interface)

    def func(self, name: str) -> tuple[Any, Any]:
        if name not in self._funcs:
            index = self._iface and self.instance.get_export_index(self.store, name, self._iface)
            func = index and self.instance.get_func(self.store, index)
            if func is None:
                raise LoadError(f"{self.interface} has no function {name!r}")
            self._funcs[name] = (func, func.type(self.store))
        return self._funcs[name]


def _last_line(e: BaseException) -> str:
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    return lines[-1] if lines else type(e).__name__


def _describe(e: BaseException) -> str:
    """One escaped line: the error's own message (a trap code, or the
    host's error), as ``policy::describe_error`` gives it (without the
    backtrace's guest-chosen names)."""
    return sanitize.escape(_last_line(e), 300)


class Policy:
    """A compiled policy component, ready to run. Load with :meth:`load`;
    open one :meth:`session` per agent."""

    def __init__(self, *, engine: wasmtime.Engine, linker: cm.Linker, component: cm.Component,
                 limits: Limits, sha256: str, source: str, stop: threading.Event):
        self._engine = engine
        self._linker = linker
        self._component = component
        self.limits = limits
        self.sha256 = sha256
        self.source = source
        self.counters = Counters()
        self.info = PolicyInfo(name="", version="")
        #: The exported interface the policy is called through (the newest of
        #: :data:`INTERFACES` it implements).
        self.interface = INTERFACE
        self._stop = stop
        self._closed = False
        self._sessions: "weakref.WeakSet[PolicySession]" = weakref.WeakSet()
        weakref.finalize(self, stop.set)
        _LIVE.add(self)

    # ---- loading -------------------------------------------------------------

    @classmethod
    def load(cls, source: Union[str, os.PathLike, bytes, bytearray], *, deadline_ms: int = 100,
             memory_mib: int = 64, max_memories: int = 1, output_bytes: int = 64 << 10,
             max_uses: int = 10_000) -> "Policy":
        """Compiles, links and identifies a policy component (a path or its
        bytes). Raises :class:`LoadError` when it cannot serve."""
        limits = Limits(deadline_ms=deadline_ms, memory_mib=memory_mib, max_memories=max_memories,
                        output_bytes=output_bytes, max_uses=max_uses)
        if isinstance(source, (bytes, bytearray)):
            data, name = bytes(source), "bytes"
        else:
            with open(source, "rb") as f:
                data = f.read()
            name = os.fspath(source)
        if not data.startswith(b"\0asm"):
            raise LoadError("not a WebAssembly component (no \\0asm header)")
        config = wasmtime.Config()
        config.epoch_interruption = True
        config.wasm_component_model = True
        config.max_wasm_stack = 1 << 20
        engine = wasmtime.Engine(config)
        try:
            component = cm.Component(engine, data)
        except wasmtime.WasmtimeError as e:
            raise LoadError(f"not a valid WebAssembly component: {sanitize.escape(str(e), 600)}") from None
        exports = [n for n in component.type.exports(engine)]
        interface = next((i for i in INTERFACES if i in exports), None)
        if interface is None:
            shown = ", ".join(sanitize.escape(n, 80) for n in exports[:20])
            wanted = " or ".join(INTERFACES)
            raise LoadError(f"the component implements neither {wanted}; it exports: [{shown}]")
        linker = cm.Linker(engine)
        linker.add_wasip2()
        # Waits in the host cannot be interrupted by the epoch: refuse them.
        linker.allow_shadowing = True
        with linker.root() as root:
            with root.add_instance(WASI_POLL) as poll:
                poll.add_func("poll", _refuse_wait)
                poll.add_func("[method]pollable.block", _refuse_wait)
            # What a 0.3.0 policy may ask of its host.
            with root.add_instance(HOST) as host:
                host.add_func("has-seen", _has_seen)
                host.add_func("history", _history)
                host.add_func("lookup", _lookup)
        linker.allow_shadowing = False

        stop = threading.Event()

        def tick(engine: wasmtime.Engine = engine) -> None:
            while not stop.wait(TICK_S):
                engine.increment_epoch()

        threading.Thread(target=tick, name="signpost-embed-epoch", daemon=True).start()
        policy = cls(engine=engine, linker=linker, component=component, limits=limits,
                     sha256=hashlib.sha256(data).hexdigest(), source=name, stop=stop)
        policy.interface = interface
        cold = policy.session()
        try:
            info = cold.identity()
        except PolicyFault as fault:
            policy.close()
            raise LoadError(f"the component failed its identity call: {fault}") from None
        except LoadError:
            policy.close()
            raise
        finally:
            cold.close()
        policy.info = PolicyInfo(name=sanitize.line(info.name, 80), version=sanitize.line(info.version, 80))
        log.info("policy loaded: %s %s sha256 %s from %s", policy.info.name, policy.info.version,
                 policy.sha256, sanitize.escape(name, 200))
        return policy

    def session(self) -> "PolicySession":
        """A new session: one instance (created at its first call), for one
        agent's calls only."""
        s = PolicySession(self)
        self._sessions.add(s)
        return s

    def close(self) -> None:
        """Drops every instance and stops the epoch ticker; later calls
        fault (kind ``instantiate``) rather than run without a deadline."""
        self._closed = True
        for s in list(self._sessions):
            s.close()
        self._stop.set()

    # ---- instances -------------------------------------------------------------

    def _instantiate(self) -> _Slot:
        if self._closed:
            raise PolicyFault(FaultKind.INSTANTIATE, "instantiate", "the policy was closed")
        limits = self.limits
        cap = limits.memory_mib << 20
        out, err = _Output(limits.output_bytes), _Output(limits.output_bytes)
        wasi = wasmtime.WasiConfig()  # nothing granted: no files, env, args
        wasi.stdout_custom = out.write
        wasi.stderr_custom = err.write
        store = wasmtime.Store(self._engine)
        store.set_wasi(wasi)
        store.set_limits(memory_size=cap, table_elements=cap // 16, instances=16, tables=16,
                         memories=limits.max_memories)
        store.set_epoch_deadline(limits.deadline_ticks())  # instantiation runs guest code too
        self.counters.add("instances")
        try:
            instance = self._linker.instantiate(store, self._component)
        except _HostWaitRefused:
            self.counters.fault(FaultKind.HOST_WAIT)
            raise PolicyFault(FaultKind.HOST_WAIT, "instantiate") from None
        except Exception as e:  # noqa: BLE001 - any failure of guest code or limits
            text = str(e)
            kind = FaultKind.INSTANTIATE
            if "wasm trap: interrupt" in text:
                kind = FaultKind.TIMEOUT
            elif "resource limit exceeded" in text or any(s in err.since(0).lower() for s in _MEMORY_SIGNS):
                kind = FaultKind.MEMORY
            self.counters.fault(kind)
            raise PolicyFault(kind, "instantiate", _describe(e)) from None
        slot = _Slot(store, instance, self.interface, out, err)
        missing = [f for f in FUNCTIONS if slot._iface is None
                   or instance.get_export_index(store, f, slot._iface) is None]
        if missing:
            raise LoadError(f"{self.interface} lacks {', '.join(missing)}")
        return slot


class PolicySession:
    """The typed functions of the world, on one instance serving one
    session. Each raises :class:`PolicyFault` when the call did not return
    normally; the instance is then dropped, never called again."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self._slot: Optional[_Slot] = None
        #: Faults of this session so far (a caller may reset it per tool call).
        self.faults = 0

    def close(self) -> None:
        with _WASM_LOCK:
            self._slot = None

    def refuse_answer(self) -> None:
        """Counts an answer the host refused as a fault and drops the
        instance (``Lease::refuse_answer``)."""
        with _WASM_LOCK:
            self.faults += 1
            self._slot = None
        self.policy.counters.fault(FaultKind.REFUSED)

    # ---- the world's functions --------------------------------------------------

    def identity(self) -> PolicyInfo:
        return PolicyInfo.from_wit_json(self._run("identity"))

    def coerce_ids(self, call: Call, param: str) -> Union[list[str], CoercionError]:
        """The ids (``result::ok``) or the policy's teaching error (``err``)."""
        answer = self._run("coerce-ids", call.to_wit_json(), param)
        if "ok" in answer:
            return list(answer["ok"])
        return CoercionError.from_wit_json(answer["err"])

    def prerequisites(self, call: Call, session: Session) -> list[Hint]:
        """The hints before a call (a 0.3.0 policy's ``hold`` is not
        honoured: the kit's tools are its own, and a call it does not hold
        is the safe side of every guarantee)."""
        if self.policy.interface == INTERFACE:
            answer = self._run("prerequisites", call.to_wit_json(), history=session)
            return [Hint.from_wit_json(h) for h in answer["hints"]]
        return [Hint.from_wit_json(h) for h in self._run("prerequisites", call.to_wit_json(), session.to_wit_json())]

    def advise(self, call: Call, outcome: Outcome, session: Session) -> Advice:
        if self.policy.interface == INTERFACE:
            return Advice.from_wit_json(
                self._run("advise", call.to_wit_json(), outcome_to_wit_json(outcome), history=session))
        return Advice.from_wit_json(
            self._run("advise", call.to_wit_json(), outcome_to_wit_json(outcome), session.to_wit_json()))

    def render(self, call: Call, advice: Advice) -> str:
        return self._run("render", call.to_wit_json(), advice.to_wit_json())

    # ---- running one call -------------------------------------------------------

    def _run(self, name: str, *args: Any, history: Optional[Session] = None) -> Any:
        policy = self.policy
        limits = policy.limits
        counters = policy.counters
        with _WASM_LOCK:
            slot, self._slot = self._slot, None
            if slot is None:
                try:
                    slot = policy._instantiate()
                except PolicyFault:
                    self.faults += 1
                    raise
            try:
                func, fty = slot.func(name)
                lowered = [to_wit(ty, a) for (_, ty), a in zip(fty.params, args, strict=True)]
            except Exception:
                self._slot = slot  # the host's own error: the instance did not run
                raise
            counters.add("calls")
            err_mark = slot.err.total
            slot.store.set_epoch_deadline(limits.deadline_ticks())
            # (saved and put back: a call within a call keeps the outer one's)
            outer, _HISTORY[0] = _HISTORY[0], history
            try:
                result = func(slot.store, *lowered)
                func.post_return(slot.store)
                value = from_wit(fty.result, result) if fty.result is not None else None
            except _HostWaitRefused:
                fault = PolicyFault(FaultKind.HOST_WAIT, name)
            except Exception as e:  # noqa: BLE001 - every way a guest call can fail
                fault = self._classify(name, e, slot.err.since(err_mark))
            else:
                fault = None
            finally:
                _HISTORY[0] = outer
                slot.uses += 1
                slot.out.drain(policy.info.name or "policy", "stdout")
                slot.err.drain(policy.info.name or "policy", "stderr")
            if fault is not None:
                self.faults += 1
                counters.fault(fault.kind)
                log.warning("policy %s: %s; instance discarded", policy.info.name, fault)
                raise fault
            spent = max(slot.out.total, slot.err.total)
            if slot.uses >= limits.max_uses or spent > limits.output_bytes // 2:
                counters.add("instances_retired")
            else:
                self._slot = slot
            return value

    @staticmethod
    def _classify(name: str, e: BaseException, stderr: bytes) -> PolicyFault:
        trap_code = getattr(e, "trap_code", None)
        if "wasm trap: interrupt" in str(e) or (trap_code is not None and trap_code.name == "INTERRUPT"):
            return PolicyFault(FaultKind.TIMEOUT, name)
        if any(s in stderr.lower() for s in _MEMORY_SIGNS):
            return PolicyFault(FaultKind.MEMORY, name, _describe(e))
        return PolicyFault(FaultKind.TRAP, name, _describe(e))
