"""Runs a Signpost policy component in wasmtime-py (PyPI `wasmtime`).

    python3 run.py POLICY.wasm < probes.json > answers.json

Reads a JSON array of probes, `{"fn": "coerce-ids", "args": [...]}`, calls
each export of `signpost:policy/policy@0.3.0` on one instance, and writes
the answers as a JSON array, both in the JSON form of WIT values described
in tests/hosts/README.md. Nothing here knows the policy's types by name:
values are converted by walking the function types the component declares.
A probe of `prerequisites` or `advise` carries the session's history as its
last argument, as 0.2.0 passed it; the host functions below answer the
policy's questions about it (`host.has-seen`, `host.history`) during that
call.
"""

import json
import sys

import wasmtime
from wasmtime import component as cm

INTERFACE = "signpost:policy/policy@0.3.0"
HOST = "signpost:policy/host@0.3.0"

#: The history of the session whose call is being judged (JSON form), or None.
history = None


def _cases(ty):
    if isinstance(ty, cm.ResultType):
        return [("ok", ty.ok), ("err", ty.err)]
    if isinstance(ty, cm.OptionType):
        return [("none", None), ("some", ty.payload)]
    return list(ty.cases)


def _classes(ty):
    found = set()
    if ty is None:
        found.add(type(None))
    else:
        ty.add_classes(found)
    return tuple(found)


def _tagged(ty):
    seen = set()
    for _, case_ty in _cases(ty):
        classes = set(_classes(case_ty))
        if classes & seen:
            return True
        seen |= classes
    return False


def to_wit(ty, value):
    """JSON form -> the Python value wasmtime-py lowers for `ty`."""
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


def from_wit(ty, value):
    """The Python value wasmtime-py lifted for `ty` -> JSON form."""
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


def _as_records(value):
    """A JSON form of records and lists as the `cm.Record` values
    wasmtime-py lowers (records' fields by their WIT names)."""
    if isinstance(value, dict):
        record = cm.Record()
        for name, field in value.items():
            setattr(record, name, _as_records(field))
        return record
    if isinstance(value, list):
        return [_as_records(v) for v in value]
    return value


def has_seen(_store, ids):
    seen = set(history["seen-ids"]) if history else set()
    return [i in seen for i in ids]


def history_of(_store):
    return _as_records(history or {"call-count": 0, "recent": [], "seen-ids": []})


def lookup(_store, _tool, _args):
    return cm.Variant("err", "no lookups here: this host serves no tools")


def main():
    global history
    engine = wasmtime.Engine()
    component = cm.Component.from_file(engine, sys.argv[1])
    linker = cm.Linker(engine)
    linker.add_wasip2()
    with linker.root() as root:
        with root.add_instance(HOST) as host:
            host.add_func("has-seen", has_seen)
            host.add_func("history", history_of)
            host.add_func("lookup", lookup)
    store = wasmtime.Store(engine)
    store.set_wasi(wasmtime.WasiConfig())  # nothing granted, like Signpost
    instance = linker.instantiate(store, component)
    interface = instance.get_export_index(store, INTERFACE)
    if interface is None:
        sys.exit(f"{sys.argv[1]} does not export {INTERFACE}")
    answers = []
    for probe in json.load(sys.stdin):
        index = instance.get_export_index(store, probe["fn"], interface)
        func = index and instance.get_func(store, index)
        if func is None:
            sys.exit(f"{INTERFACE} has no function {probe['fn']!r}")
        fty = func.type(store)
        given = probe["args"]
        if probe["fn"] in ("prerequisites", "advise"):
            *given, history = given
        args = [to_wit(ty, arg) for (_, ty), arg in zip(fty.params, given, strict=True)]
        result = func(store, *args)
        history = None
        func.post_return(store)
        answers.append(from_wit(fty.result, result))
    json.dump(answers, sys.stdout, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
