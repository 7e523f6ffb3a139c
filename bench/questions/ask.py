"""Asks the hand-counted questions of bench/questions/*.json of the real
binary, as an agent would: `signpost --project DIR` over MCP stdio (a
fresh index: its own cache and configuration directories, nothing
trusted), `resolve` with the name as the language's users write it, then
`neighbors` inward. Prints each question's verdict and a table per
language; `--json OUT` writes the figures. See README.md."""

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mcp_stdio import Session  # noqa: E402

EDGES = {
    "callers": ["CALLS"],
    "subtypes": ["EXTENDS", "IMPLEMENTS"],
    "overrides": ["OVERRIDES"],
}


def place(entry):
    """`FILE:LINE NAME` → (file, line, name)."""
    # Paths may hold spaces (`Parsable Types/`); names do not.
    where, _, name = entry.rpartition(" ")
    file, _, line = where.rpartition(":")
    return file, int(line), name.strip()


def alternatives(entry):
    """An expected caller: one place, or a list of places that all count as it."""
    return [place(e) for e in (entry if isinstance(entry, list) else [entry])]


def matches(got, want, reopened=None):
    """Our symbol at `got` is the one at `want`: same file and line, or the
    same file and name within two lines (an annotation or a modifier line
    read as the declaration's), or, where `reopened` says which places
    reopen a class or module (Ruby's `class Thor` in every file of the
    gem: one constant, one symbol, placed at its first part), another
    reopening of it."""
    (gf, gl, gn), (wf, wl, wn) = got, want
    if reopened is not None and gn == wn and (gf, gl) in reopened.get(gn, ()) and (wf, wl) in reopened[gn]:
        return True
    if gf != wf:
        return False
    return gl == wl or (gn == wn.split("(")[0] and abs(gl - wl) <= 2)


def reopenings(directory, language):
    """Ruby's classes and modules by name: every `class NAME` and `module
    NAME` line (`class A::NAME` too), as (file, line). A name written in
    several places is one constant only when its nesting is the same,
    which this does not check: the questions name their places."""
    if language != "ruby":
        return None
    import re
    header = re.compile(r"^\s*(?:class|module)\s+(?:[A-Z]\w*::)*([A-Z]\w*)\b(?!\s*<<)")
    out = defaultdict(set)
    for path in Path(directory).rglob("*.rb"):
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        rel = str(path.relative_to(directory))
        for i, line in enumerate(lines, 1):
            m = header.match(line)
            if m:
                out[m.group(1)].add((rel, i))
    return out


def tool(session, name, args):
    result = session.request("tools/call", {"name": name, "arguments": args})
    return result.get("structuredContent") or {}, result.get("isError", False)


def inward(session, ident, edges):
    """Every symbol along `edges` into `ident`, all pages."""
    out, offset = [], 0
    while True:
        res, err = tool(session, "neighbors",
                        {"ids": [ident], "direction": "in", "edge_types": edges, "limit": 100, "offset": offset})
        if err:
            return out, res
        page = res.get("results", [])
        out.extend(page)
        offset += len(page)
        if not page or offset >= res.get("total", 0):
            return out, res


def outward(session, ident, edges):
    """The first page of symbols along `edges` out of `ident`."""
    res, err = tool(session, "neighbors",
                    {"ids": [ident], "direction": "out", "edge_types": edges, "limit": 100})
    return ([] if err else res.get("results", [])), res


def in_scope(file, scope):
    return not scope or any(file.startswith(s) for s in scope)


def ask(session, project, q):
    scope = project.get("scope", [])
    res, err = tool(session, "resolve", {"identifier": q["name"]})
    cands = res.get("candidates", []) if not err else []
    at = place(q["at"] + " " + q["name"])
    hit = [c for c in cands if matches((c.get("file", ""), c.get("line", 0), c.get("name", "")), at)]
    # A constructor asked by its type's name, as an agent finds it: among
    # the members the type declares (a primary constructor is at the
    # type's own line).
    typed = not hit or hit[0].get("kind") in ("class", "struct", "enum")
    for c in cands if typed and q["ask"] == "callers" else []:
        members, _ = outward(session, c["id"], ["DECLARES"])
        ctors = [m["other"] for m in members if m["other"].get("kind") == "constructor"
                 and m["other"].get("file") == at[0] and m["other"].get("line") == at[1]]
        if ctors:
            hit = ctors
            break
    verdict = {"name": q["name"], "ask": q["ask"], "at": q["at"], "status": res.get("status"),
               "candidates": len(cands), "found": bool(hit)}
    if q["ask"] == "definition":
        verdict["ok"] = bool(hit) and res.get("status") == "one"
        return verdict
    if not hit:
        verdict.update(ok=False, empty=True, recall=0.0, precision=0.0, returned=0, wrong=[],
                       missing=[str(e) for e in q["expect"]])
        return verdict
    got, last = inward(session, hit[0]["id"], EDGES[q["ask"]])
    every = [(n["other"].get("file", ""), n["other"].get("line", 0), n["other"].get("name", "")) for n in got]
    expect = [alternatives(e) for e in q["expect"]]
    ignore = [place(e) for e in q.get("ignore", [])]
    # An expected caller counts at any of its places (an `actual` outside
    # the scope of its `expect`); what is judged wrong is in scope only.
    reopened = project.get("_reopened")
    found = [e for e in expect if any(matches(o, w, reopened) for o in every for w in e)]
    ours = [o for o in every if in_scope(o[0], scope)]
    wrong = [o for o in ours
             if not any(matches(o, w, reopened) for e in expect for w in e)
             and not any(matches(o, w) for w in ignore)]
    judged = [o for o in ours if not any(matches(o, w) for w in ignore)]
    recall = len(found) / len(expect) if expect else 1.0
    precision = (len(judged) - len(wrong)) / len(judged) if judged else (1.0 if not expect else 0.0)
    verdict.update(
        recall=recall, precision=precision, returned=len(judged), wrong=[f"{f}:{l} {n}" for f, l, n in wrong],
        missing=[" | ".join(f"{f}:{l} {n}" for f, l, n in e) for e in expect if e not in found],
        empty=bool(expect) and not judged, ok=recall >= 0.8 and precision >= 0.9,
        unbound=last.get("unbound_calls") if isinstance(last, dict) else None,
        note=" ".join(str(x) for x in (last.get("notes") or [])) if isinstance(last, dict) else "")
    return verdict


def serve(signpost, directory):
    scratch = tempfile.mkdtemp(prefix="signpost-questions-")
    env = dict(os.environ, XDG_CACHE_HOME=f"{scratch}/cache", XDG_CONFIG_HOME=f"{scratch}/config",
               RUST_LOG="warn")
    started = time.monotonic()
    session = Session([signpost, "--project", str(directory)], env, name="questions")
    # The first answer waits for the index, or for a few seconds of it: a
    # larger project is served in part at first, and says so in every
    # answer. The questions wait for the whole index.
    first = None
    while time.monotonic() - started < 300:
        result = session.request("tools/call", {"name": "search", "arguments": {"query": "main"}})
        first = first or time.monotonic() - started
        text = json.dumps(result.get("content", []))
        if "first index is still being built" not in text:
            break
        time.sleep(0.2)
    return session, first


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--signpost", default="target/release/signpost")
    ap.add_argument("--repos", default="/tmp/repos", help="each project checked out at REPOS/PROJECT")
    ap.add_argument("--json", help="write every verdict and the per-language figures here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every question, not only the failures")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    signpost = str(Path(args.signpost).resolve())
    per_lang = defaultdict(lambda: defaultdict(int))
    report = []
    for path in args.files:
        project = json.loads(Path(path).read_text())
        directory = Path(args.repos) / project["project"]
        if not directory.is_dir():
            sys.exit(f"{path}: no checkout at {directory} (git clone {project['repo']} and check out "
                     f"{project['commit']})")
        session, first = serve(signpost, directory)
        project["_reopened"] = reopenings(directory, project["language"])
        print(f"== {project['project']} ({project['language']}, {project['commit'][:10]}): first answer {first:.1f} s")
        fig = per_lang[project["language"]]
        for q in project["questions"]:
            v = ask(session, project, q)
            v["project"] = project["project"]
            report.append(v)
            if q["ask"] == "definition":
                fig["definitions"] += 1
                fig["definitions_ok"] += v["ok"]
            else:
                kind = "callers" if q["ask"] == "callers" else "relations"
                fig[kind] += 1
                fig[f"{kind}_ok"] += v["ok"]
                fig[f"{kind}_empty"] += v["empty"]
                fig["returned"] += v["returned"]
                fig["wrong"] += len(v["wrong"])
            if args.verbose or not v["ok"]:
                mark = "ok  " if v["ok"] else "FAIL"
                line = f"  {mark} {q['ask']:<10} {q['name']} ({q['at']})"
                if q["ask"] != "definition":
                    line += f": recall {v['recall']:.0%}, precision {v['precision']:.0%}, {v['returned']} returned"
                else:
                    line += f": status {v['status']}, {v['candidates']} candidates, found {v['found']}"
                print(line)
                for m in v.get("missing", [])[:5]:
                    print(f"       missing {m}")
                for w in v.get("wrong", [])[:5]:
                    print(f"       wrong   {w}")
        session.close()
    print()
    print("| language | caller questions complete and clean | empty | subtypes/includers | definitions | wrong items |")
    print("|---|---|---|---|---|---|")
    for lang, f in sorted(per_lang.items()):
        print(f"| {lang} | {f['callers_ok']} of {f['callers']} ({f['callers_ok'] / max(f['callers'], 1):.0%}) | "
              f"{f['callers_empty'] + f['relations_empty']} | {f['relations_ok']} of {f['relations']} | "
              f"{f['definitions_ok']} of {f['definitions']} | {f['wrong']} of {f['returned']} "
              f"({f['wrong'] / max(f['returned'], 1):.1%}) |")
    if args.json:
        Path(args.json).write_text(json.dumps({"languages": per_lang, "questions": report}, indent=1))


if __name__ == "__main__":
    main()
