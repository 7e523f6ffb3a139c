"""`git`: a Signpost policy for the official git MCP server (`mcp-server-git`
on PyPI), served with `signpost proxy`, written in Python (componentize-py)
against the 0.2.0 contract (wit/0.2.0/policy.wit), which the host serves
beside 0.3.0.

What it teaches an agent, after seed 001 (terse text with state tags and
`→ next:` lines):
- **look before you commit**: a `git_commit` in a session that has not
  looked at the staged diff since it last staged anything is held once, with
  `git_diff_staged` on the same repository as the prerequisite;
- **names come from what was shown**: the arguments that name things (the
  repository, files, branches, revisions) are declared references, so the
  host drops any hint whose values the agent was not shown; this policy
  only takes them from the agent's arguments and the server's text;
- **next steps from the working tree's state**: `git_status` text is read
  (staged, unstaged, unmerged, untracked) and answered with the diff to look
  at and the files to stage; a staged diff with changes gets a commit
  template (the agent writes the message);
- **advice per failure**: the server reports a path that is not a
  repository with nothing but the path, which this policy recognises.

The server answers in plain text (no structuredContent), as git's own
long-format messages: read them with LC_ALL=C. Text: `[state_tag] summary`,
detail lines, `→ next:` lines for actionable hints, `note:` lines for
templates. Stdlib only, and no function raises (but coerce_ids, by design).
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import (
    Advice,
    BeforeCall,
    CoercionError,
    ErrorKind,
    Hint,
    Outcome_Failure,
    PolicyInfo,
    ToolRules,
)

NAME = "git"
VERSION = "0.1.0"
MAX_HINTS = 4
MAX_FILES = 20
MAX_DETAILS = 8
MAX_ARGS_BYTES = 3500  # the host refuses hint args over 4 KiB

# Tools that only read the repository: never held, whatever the server says.
READS = ("git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_log", "git_show", "git_branch")

# The arguments that name things the agent must have been shown.
REFERENCES = {
    "git_status": ["repo_path"],
    "git_diff_unstaged": ["repo_path"],
    "git_diff_staged": ["repo_path"],
    "git_diff": ["repo_path", "target"],
    "git_commit": ["repo_path"],
    "git_add": ["repo_path", "files"],
    "git_reset": ["repo_path"],
    "git_log": ["repo_path"],
    "git_create_branch": ["repo_path", "base_branch"],
    "git_checkout": ["repo_path", "branch_name"],
    "git_show": ["repo_path", "revision"],
    "git_branch": ["repo_path", "contains", "not_contains"],
}

# The catalogue as the host gave it: tool name -> input schema.
_SCHEMAS = {}

PREFIX = re.compile(r"^Error executing tool [^\s:]+:?\s*")
LOG_ENTRY = re.compile(r"^Commit: ([0-9a-fA-F]{40})\s*\nAuthor: .*\nDate: .*\nMessage: ?(.*)$", re.M)
STATUS_KINDS = (
    "new file", "modified", "deleted", "renamed", "copied", "typechange", "unmerged",
    "both modified", "both added", "both deleted", "added by us", "added by them",
    "deleted by us", "deleted by them",
)
STATUS_ENTRY = re.compile(r"^(" + "|".join(STATUS_KINDS) + r"):\s+(.*)$")
SUBMODULE_NOTE = re.compile(r" \((?:new commits|modified content|untracked content)(?:, [a-z ]+)*\)$")
SECTIONS = {
    "Changes to be committed:": "staged",
    "Changes not staged for commit:": "unstaged",
    "Unmerged paths:": "unmerged",
    "Untracked files:": "untracked",
    "Ignored files:": "ignored",
}
FAILED = {
    ErrorKind.INVALID_ID: "invalid_id",
    ErrorKind.UNKNOWN_ID: "unknown_id",
    ErrorKind.BAD_ARGUMENT: "bad_argument",
    ErrorKind.INTERNAL: "backend_failed",
}
C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


# ---------------------------------------------------------------- helpers


def _dump(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _listed(tool):
    return tool in _SCHEMAS


def _has_param(tool, param):
    schema = _SCHEMAS.get(tool)
    props = schema.get("properties") if isinstance(schema, dict) else None
    return isinstance(props, dict) and param in props


def _hint(tool, args, reason):
    """An actionable hint, or None when the catalogue lacks the tool or the
    arguments are too big to be a hint."""
    if not _listed(tool) or any(v is None for v in args.values()):
        return None
    text = _dump(args)
    if len(text.encode("utf-8")) > MAX_ARGS_BYTES:
        return None
    return Hint(tool=tool, args=text, actionable=True, reason=reason[:200])


def _template(tool, args, reason):
    if not _listed(tool):
        return None
    return Hint(tool=tool, args=_dump(args), actionable=False, reason=reason[:200])


def _args(call):
    try:
        args = json.loads(call.args)
    except (ValueError, TypeError, RecursionError):
        return {}
    return args if isinstance(args, dict) else {}


def _str(args, key):
    value = args.get(key)
    return value if isinstance(value, str) and value else None


def _text(outcome_json):
    """The text blocks of a success outcome, joined."""
    try:
        result = json.loads(outcome_json)
    except (ValueError, TypeError, RecursionError):
        return ""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    texts = [c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def _shown(names, n=5):
    out = ", ".join(names[:n])
    if len(names) > n:
        out += f" and {len(names) - n} more"
    return out


def _advice(tag, summary, details=None, hints=None):
    return Advice(
        state_tag=tag,
        summary=summary[:200],
        details=[d[:200] for d in (details or [])][: MAX_DETAILS + 2],
        hints=[h for h in (hints or []) if h is not None][:MAX_HINTS],
        ask_user=None,
    )


def _unquote(path):
    """A path as git prints it: C-quoted ("caf\\303\\251.txt") when it holds
    bytes git escapes. Returns (readable path, whether it was quoted)."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path, False
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(C_ESCAPES.get(nxt, ord(nxt) & 0xFF))
            i += 2
            continue
        out.extend(c.encode("utf-8"))
        i += 1
    return out.decode("utf-8", errors="replace"), True


def _plain(entries):
    """The paths an agent can send as they were printed (git did not quote them)."""
    return [e["path"] for e in entries if not e["quoted"]][:MAX_FILES]


# ---------------------------------------------------------------- parsers


def _parse_status(text):
    st = {
        "branch": None, "detached": None, "clean": False, "notes": [],
        "staged": [], "unstaged": [], "unmerged": [], "untracked": [], "ignored": [],
    }
    section = None
    for line in text.split("\n"):
        line = line.rstrip("\r")
        stripped = line.strip()
        if line.startswith("\t") and section:
            entry = line[1:]
            kind = ""
            m = STATUS_ENTRY.match(entry)
            if m and section != "untracked":
                kind, entry = m.group(1), m.group(2)
            entry = SUBMODULE_NOTE.sub("", entry)
            if kind in ("renamed", "copied") and " -> " in entry:
                entry = entry.split(" -> ", 1)[1]
            path, quoted = _unquote(entry)
            st[section].append({"kind": kind or "untracked", "path": path, "quoted": quoted})
        elif stripped in SECTIONS:
            section = SECTIONS[stripped]
        elif line.startswith("On branch "):
            st["branch"] = line[len("On branch "):].strip()
        elif line.startswith("HEAD detached ") or line.startswith("Not currently on any branch"):
            st["detached"] = stripped
        elif stripped.startswith("nothing to commit"):
            st["clean"] = "working tree clean" in stripped
        elif line.startswith("Your branch ") or line.startswith("No commits yet"):
            st["notes"].append(stripped)
        elif stripped.startswith("You have unmerged paths") or stripped.startswith("All conflicts fixed"):
            st["notes"].append(stripped)
        elif re.match(r"^(You are currently|interactive rebase|rebase in progress|You are in the middle)", stripped):
            st["notes"].append(stripped)
    return st


def _diff_git_path(rest):
    """The path of a `diff --git a/P b/P` header (rest after `diff --git `)."""
    if rest.startswith('"'):
        m = re.match(r'^"a/((?:[^"\\]|\\.)*)" "b/((?:[^"\\]|\\.)*)"$', rest)
        if m:
            return '"' + m.group(2) + '"'
        return None
    if rest.startswith("a/"):
        body = rest[2:]
        n = (len(body) - 3) // 2
        if n > 0 and body[n : n + 3] == " b/" and body[:n] == body[n + 3 :]:
            return body[:n]
        if " b/" in body:
            return body.split(" b/", 1)[1]
    return None


def _parse_diff(text):
    """Files of a unified diff (git diff output): path, lines added/removed."""
    files, cur, in_hunk = [], None, False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            raw = _diff_git_path(line[len("diff --git "):])
            path, quoted = _unquote(raw) if raw else ("?", True)
            cur = {"path": path, "quoted": quoted, "add": 0, "del": 0, "binary": False}
            files.append(cur)
            in_hunk = False
        elif cur is None:
            continue
        elif line.startswith("@@"):
            in_hunk = True
        elif not in_hunk:
            if line.startswith("Binary files "):
                cur["binary"] = True
            elif line.startswith("rename to "):
                cur["path"], cur["quoted"] = _unquote(line[len("rename to "):])
        elif line.startswith("+"):
            cur["add"] += 1
        elif line.startswith("-"):
            cur["del"] += 1
    return files


def _diff_details(files):
    details = []
    for f in files[:MAX_DETAILS]:
        change = "binary" if f["binary"] else f"+{f['add']} -{f['del']}"
        details.append(f"{f['path']} {change}")
    if len(files) > MAX_DETAILS:
        details.append(f"and {len(files) - MAX_DETAILS} more file(s)")
    return details


def _parse_show_files(text):
    """Files of git_show's commit view: `--- a/X` / `+++ b/X` header pairs."""
    out, lines = [], text.split("\n")
    for i in range(len(lines) - 1):
        old, new = lines[i], lines[i + 1]
        if old.startswith("--- ") and new.startswith("+++ "):
            side = new[4:].rstrip("\t") if new[4:] != "/dev/null" else old[4:].rstrip("\t")
            if side.startswith('"'):
                side = _unquote(side)[0]
            if side[:2] in ("a/", "b/"):
                side = side[2:]
            if side and side not in out:
                out.append(side)
    return out


# ---------------------------------------------------------------- advice per tool


def _status(rp, text):
    st = _parse_status(text)
    staged, unstaged, unmerged, untracked = st["staged"], st["unstaged"], st["unmerged"], st["untracked"]
    where = f"on branch {st['branch']}" if st["branch"] else (st["detached"] or "")
    details = st["notes"][:3]
    for label, entries in (("conflict", unmerged), ("staged", staged), ("unstaged", unstaged)):
        for e in entries[:MAX_DETAILS]:
            details.append(f"{label}: {e['path']} ({e['kind']})")
    if untracked:
        details.append("untracked: " + _shown([e["path"] for e in untracked], 8))
    if any(e["quoted"] for e in staged + unstaged + unmerged + untracked):
        details.append("names git quotes (non-ASCII) are shown decoded, and left out of hints")
    hints = []
    if unmerged:
        hints.append(_hint("git_diff_unstaged", {"repo_path": rp}, "see the conflicts"))
        hints.append(_template(
            "git_add", {"repo_path": rp, "files": ["<file whose conflict you resolved>"]},
            "stage each file once its conflict markers are gone",
        ))
    if staged:
        hints.append(_hint("git_diff_staged", {"repo_path": rp}, "review what the next commit records"))
    if unstaged and not unmerged:
        hints.append(_hint("git_diff_unstaged", {"repo_path": rp}, "see the changes not staged yet"))
        files = _plain(unstaged)
        if files:
            hints.append(_hint("git_add", {"repo_path": rp, "files": files}, "stage the changed files"))
    if untracked:
        files = _plain(untracked)
        if files:
            hints.append(_hint("git_add", {"repo_path": rp, "files": files}, "track the new files"))
    counts = []
    for label, entries in (("conflicted", unmerged), ("staged", staged), ("unstaged", unstaged),
                           ("untracked", untracked)):
        if entries:
            counts.append(f"{len(entries)} {label}")
    if unmerged:
        tag = "conflicts"
    elif staged:
        tag = "staged_changes"
    elif unstaged:
        tag = "unstaged_changes"
    elif untracked:
        tag = "untracked"
    elif st["clean"]:
        tag = "clean"
        hint = {"repo_path": rp, "max_count": 5} if _has_param("git_log", "max_count") else {"repo_path": rp}
        hints.append(_hint("git_log", hint, "nothing to commit: see the recent history"))
    else:
        tag = "status"
    summary = ", ".join(counts) if counts else ("working tree clean" if st["clean"] else "status read")
    if where:
        summary += f" ({where})"
    return _advice(tag, summary, details, hints)


def _diff(tool, rp, args, text):
    body = text.split("\n", 1)[1] if "\n" in text else ""
    files = _parse_diff(body)
    what = {"git_diff_unstaged": "unstaged", "git_diff_staged": "staged"}.get(tool, "")
    target = _str(args, "target")
    if not files:
        if tool == "git_diff_staged":
            hints = [_hint("git_status", {"repo_path": rp}, "nothing is staged: see what changed")]
            return _advice("no_diff", "nothing staged", [], hints)
        if tool == "git_diff_unstaged":
            hints = [_hint("git_status", {"repo_path": rp}, "untracked and staged files do not show here")]
            return _advice("no_diff", "no unstaged changes", [], hints)
        return _advice("no_diff", f"no differences with {target}" if target else "no differences", [], [])
    added = sum(f["add"] for f in files)
    removed = sum(f["del"] for f in files)
    label = f"{what} changes" if what else (f"differences with {target}" if target else "differences")
    summary = f"{label} in {len(files)} file(s), +{added} -{removed}"
    hints = []
    if tool == "git_diff_unstaged":
        plain = _plain(files)
        if plain:
            hints.append(_hint("git_add", {"repo_path": rp, "files": plain}, "stage these changes"))
    elif tool == "git_diff_staged":
        hints.append(_template(
            "git_commit", {"repo_path": rp, "message": "<message>"},
            "commit them with a message that says why",
        ))
    return _advice("diff", summary, _diff_details(files), hints)


def _log(rp, text):
    entries = LOG_ENTRY.findall(text)
    if not entries:
        return _advice("no_commits", "no commits in that range", [], [])
    details = [f"{sha[:8]} {msg.strip()[:80]}" for sha, msg in entries[:MAX_DETAILS]]
    if len(entries) > MAX_DETAILS:
        details.append(f"and {len(entries) - MAX_DETAILS} more")
    newest = entries[0][0]
    hints = [_hint("git_show", {"repo_path": rp, "revision": newest}, "see the newest commit's changes")]
    return _advice("log", f"{len(entries)} commit(s), newest {newest[:8]}", details, hints)


def _show(args, text):
    revision = _str(args, "revision") or ""
    m = re.match(r"^commit ([0-9a-fA-F]{40})\n", text)
    if m:
        lines = text.split("\n")
        subject = ""
        for line in lines[1:]:
            if line.startswith("    "):
                subject = line.strip()
                break
        files = _parse_show_files(text)
        details = [f"changed: {_shown(files, 8)}"] if files else []
        return _advice("commit", f"commit {m.group(1)[:8]}: {subject[:100]}", details, [])
    if ":" in revision:
        entries = [line for line in text.split("\n") if line]
        if revision.endswith(":") or revision.endswith("/"):
            return _advice("tree", f"{len(entries)} entr(ies) in {revision}", [_shown(entries, 10)], [])
        return _advice("file", f"{revision}: {len(text.splitlines())} line(s)", [], [])
    return _advice("shown", f"{revision} shown", [], [])


def _branches(args, text):
    names, current = [], None
    for line in text.split("\n"):
        if not line.strip():
            continue
        mark, name = line[:2], line[2:].strip()
        if "->" in name:  # remotes/origin/HEAD -> origin/main
            continue
        if mark == "* ":
            current = name
        names.append(name)
    kind = _str(args, "branch_type") or "local"
    if not names:
        return _advice("no_branches", f"no {kind} branches (a repository without commits has none)", [], [])
    details = [_shown(names, 12)]
    summary = f"{len(names)} {kind} branch(es)" + (f", current: {current}" if current else "")
    return _advice("branches", summary, details, [])


def _success(tool, args, text):
    rp = _str(args, "repo_path")
    if tool == "git_status":
        return _status(rp, text)
    if tool in ("git_diff_unstaged", "git_diff_staged", "git_diff"):
        return _diff(tool, rp, args, text)
    if tool == "git_log":
        return _log(rp, text)
    if tool == "git_show":
        return _show(args, text)
    if tool == "git_branch":
        return _branches(args, text)
    if tool == "git_commit":
        m = re.search(r"with hash ([0-9a-fA-F]{40})", text)
        sha = m.group(1) if m else ""
        details = [line.strip() for line in text.split("\n")[1:] if line.strip()][:3]  # autostash notes
        log = {"repo_path": rp, "max_count": 1} if _has_param("git_log", "max_count") else {"repo_path": rp}
        hints = [
            _hint("git_log", log, "see it in the history"),
            _hint("git_status", {"repo_path": rp}, "see what is left uncommitted"),
        ]
        return _advice("committed", f"committed {sha}" if sha else "committed", details, hints)
    if tool == "git_add":
        files = args.get("files") if isinstance(args.get("files"), list) else []
        names = [f for f in files if isinstance(f, str)]
        if text.startswith("No changes were staged"):
            hints = [_hint("git_status", {"repo_path": rp}, "see what is modified or untracked")]
            return _advice("no_change", "nothing new to stage in " + _shown(names), [], hints)
        hints = [_hint("git_diff_staged", {"repo_path": rp}, "review what the next commit records")]
        return _advice("staged_changes", "staged " + _shown(names), [], hints)
    if tool == "git_reset":
        hints = [_hint("git_status", {"repo_path": rp}, "see the working tree now")]
        return _advice("reset", "nothing is staged any more (the files keep their changes)", [], hints)
    if tool == "git_create_branch":
        m = re.match(r"^Created branch '(.+)' from '(.+)'", text)
        name = m.group(1) if m else _str(args, "branch_name")
        hints = []
        if name:
            hints.append(_hint("git_checkout", {"repo_path": rp, "branch_name": name}, "switch to it"))
        summary = f"branch {m.group(1)} created from {m.group(2)}" if m else "branch created"
        return _advice("branch_created", summary, [], hints)
    if tool == "git_checkout":
        hints = [_hint("git_status", {"repo_path": rp}, "see the working tree on it")]
        m = re.match(r"^HEAD is now detached at (\S+)", text)
        if m:
            return _advice(
                "detached", f"HEAD detached at {m.group(1)}",
                ["commits made here belong to no branch"], hints,
            )
        m = re.match(r"^Switched to branch '(.+)'", text)
        return _advice("checked_out", f"on branch {m.group(1)}" if m else "checked out", [], hints)
    first = text.strip().split("\n", 1)[0]
    return _advice("ok", first[:160] or "done", [], [])


def _shape(tool, rp, also=None):
    """A template of `tool`'s required arguments (and `also`), from its
    schema; None unless it holds a `<placeholder>` (a call with none is no
    template, and the host would cut it out of the text)."""
    schema = _SCHEMAS.get(tool)
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    shape = {}
    for name in required + ([also] if also in props and also not in required else []):
        if not isinstance(name, str):
            continue
        prop = props.get(name) if isinstance(props.get(name), dict) else {}
        if name == "repo_path" and rp:
            shape[name] = rp
        elif prop.get("type") == "array":
            shape[name] = [f"<{name}>"]
        else:
            shape[name] = f"<{name}>"
    return shape if "<" in _dump(shape) else None


def _is_path_only(rest, rp):
    """The server reports a repo_path that is no repository (or does not
    exist) with nothing but the path."""
    if not rest or not rp:
        return False
    if rest == rp or rest.rstrip("/") == rp.rstrip("/"):
        return True
    tail = rp.strip().lstrip("./").rstrip("/")
    if rest.startswith("/") and tail and rest.rstrip("/").endswith(tail):
        return True
    return rest.startswith("/") and not re.search(r"\s", rest) and rp in (".", "./")


def _failure(tool, args, error):
    rp = _str(args, "repo_path")
    message = error.message or ""
    if error.kind == ErrorKind.INTERNAL:
        return _advice("backend_failed", "the git server did not answer: " + message[:150], [], [])
    rest = PREFIX.sub("", message, count=1).strip()
    if message.strip().startswith("Error executing tool") and not rest:
        return _advice("backend_failed", "the git server crashed on this call (see its log)", [], [])
    status = lambda reason: _hint("git_status", {"repo_path": rp}, reason) if rp else None  # noqa: E731
    local = lambda reason: _hint("git_branch", {"repo_path": rp, "branch_type": "local"}, reason) if rp else None  # noqa: E731

    if "validation error" in rest:
        m = re.search(r"validation errors? for \w+\s+(\S+)\s+(.+?)\s*\[type=", rest)
        why = f"{m.group(1)}: {m.group(2)}" if m else "see the input schema"
        shape = _shape(tool, rp, m.group(1).split(".")[0] if m else None)
        hints = [_template(tool, shape, "the arguments it takes")] if shape else []
        return _advice("bad_argument", "arguments do not fit the tool's schema: " + why[:140], [], hints)
    m = re.search(r"is outside the allowed repository '(.+?)'", rest)
    if m:
        hints = [_hint("git_status", {"repo_path": m.group(1)}, "the server serves this repository only")]
        return _advice("outside_repository", f"this server serves only {m.group(1)}", [], hints)
    if _is_path_only(rest, rp):
        details = ["repo_path must be the top directory of a git working tree (the one holding .git)"]
        hints = [_template("git_status", {"repo_path": "<top directory of the repository>"},
                           "point repo_path at the repository itself")]
        return _advice("not_a_repo", f"{rest} is not a git repository (or does not exist)", details, hints)
    if rest.startswith("No changes staged for commit"):
        return _advice("nothing_staged", "nothing is staged, so nothing was committed", [],
                       [status("see what is modified or untracked")])
    m = re.search(r"pathspec '(.+?)' did not match any files", rest)
    if m:
        return _advice("bad_argument", f"no file matches {m.group(1)}", [],
                       [status("see the exact paths of changed files")])
    m = re.search(r"Path '(.+?)' is outside the repository", rest)
    if m:
        return _advice("bad_argument", f"{m.group(1)} is outside the repository", [],
                       [status("paths are relative to repo_path")])
    m = re.search(r"Reference at '(.+?)' does not exist", rest)
    if m:
        return _advice("no_commits", f"{m.group(1)} has no commits yet", [],
                       [status("see what can be committed first")])
    m = re.search(r"Ref '(.+?)' did not resolve to an object|No item found with id (\S+)|unknown revision", rest)
    if m:
        name = m.group(1) or m.group(2) or "that revision"
        if tool in ("git_show", "git_diff"):
            hints = [_hint("git_log", {"repo_path": rp}, "find a revision in the history")] if rp else []
        else:
            hints = [local("see the branches there are")]
        return _advice("unknown_ref", f"{name} is not a branch or revision here", [], hints)
    m = re.search(r"Blob or Tree named '(.+?)' not found", rest)
    if m:
        hints = [_template("git_show", {"repo_path": rp, "revision": "<revision>:"},
                           "list the revision's top directory to find the path")] if rp else []
        return _advice("unknown_ref", f"{m.group(1)} is not in that revision", [], hints)
    m = re.search(r"Cannot create branch '(.+?)': .* already exists", rest)
    if m:
        hints = []
        if m.group(1) == _str(args, "branch_name"):
            hints.append(_hint("git_checkout", {"repo_path": rp, "branch_name": m.group(1)}, "it exists: switch to it"))
        return _advice("branch_exists", f"branch {m.group(1)} already exists", [], hints)
    if rest.startswith("HEAD is detached"):
        hints = [local("pick a branch to branch from")]
        if rp and _str(args, "branch_name"):
            hints.append(_template(
                "git_create_branch",
                {"repo_path": rp, "branch_name": _str(args, "branch_name"), "base_branch": "<branch>"},
                "name the base branch",
            ))
        return _advice("detached_head", "HEAD is detached: pass a base branch", [], hints)
    if "would be overwritten" in rest or "commit your changes or stash them" in rest:
        m = re.search(r"overwritten by \w+:\s+(.+?)\s+Please", rest, re.S)
        files = m.group(1).split() if m else []
        details = [f"blocking: {_shown(files, 8)}"] if files else []
        hints = [status("see the local changes in the way"),
                 _hint("git_diff_unstaged", {"repo_path": rp}, "see what would be lost") if rp else None]
        return _advice("dirty_tree", "local changes would be overwritten: commit them first", details, hints)
    m = re.search(r"Invalid branch type: (\S+)", rest)
    if m:
        return _advice("bad_argument", f"branch_type {m.group(1)} is not local, remote or all", [],
                       [local("list the local branches")])
    if "cannot start with '-'" in rest or rest.startswith("Invalid ") or rest.startswith("No files provided"):
        shape = _shape(tool, rp)
        hints = [_template(tool, shape, "the arguments it takes")] if shape else []
        return _advice("bad_argument", rest[:160], [], hints)
    m = re.search(r"stderr: '(?:fatal: |error: )?(.+?)'?\s*$", rest)
    if m or rest.startswith("Cmd("):
        return _advice("git_error", "git refused: " + (m.group(1) if m else rest)[:150], [],
                       [status("see the repository's state")])
    if rest.startswith("Unknown tool"):
        return _advice("bad_argument", rest[:160], [], [])
    return _advice("bad_argument", rest[:160] or "the call failed", [], [])


# ---------------------------------------------------------------- the exports


class Policy(exports.Policy):
    def identity(self):
        return PolicyInfo(name=NAME, version=VERSION)

    def catalogue(self, tools):
        rules = []
        try:
            _SCHEMAS.clear()
            for tool in tools:
                try:
                    schema = json.loads(tool.input_schema)
                except (ValueError, TypeError, RecursionError):
                    schema = {}
                _SCHEMAS[tool.name] = schema if isinstance(schema, dict) else {}
            for name in _SCHEMAS:
                refs = [p for p in REFERENCES.get(name, []) if _has_param(name, p)]
                reads = name in READS
                if refs or reads:
                    rules.append(ToolRules(tool=name, references=refs, changes_state=False if reads else None))
        except Exception:  # never fault: no rules is safe
            return rules
        return rules

    def coerce_ids(self, call, param):
        # The git server has no Signpost ids; the host asks only about
        # Signpost's own tools' id arguments.
        try:
            error = CoercionError(
                message=f"`{param}` of {call.tool} takes 40-hex ids, exactly as the schema says",
                example=_dump({param: "<40-hex id>"}),
            )
        except Exception:
            error = CoercionError(message="ids are 40-hex strings", example='{"id":"<40-hex id>"}')
        raise Err(error)

    def prerequisites(self, call, session):
        nothing = BeforeCall(hints=[], hold=None)
        try:
            if call.tool != "git_commit":
                return nothing
            last_add = last_look = -1
            for i, past in enumerate(session.recent):
                if past.ok and past.tool == "git_add":
                    last_add = i
                if past.ok and past.tool == "git_diff_staged":
                    last_look = i
            if last_look >= 0 and last_look > last_add:
                return nothing
            rp = _str(_args(call), "repo_path")
            if not rp:
                return nothing
            hint = _hint("git_diff_staged", {"repo_path": rp}, "review exactly what this commit will record")
            why = ("this session has not looked at the staged diff since it last staged"
                   if last_look >= 0 else "this session has not looked at the staged diff")
            return BeforeCall(hints=[hint] if hint else [], hold=why)
        except Exception:
            return nothing

    def advise(self, call, outcome, session):
        try:
            args = _args(call)
            if not call.tool.startswith("git_"):
                # Not the git server's (the self-check probes Signpost's own
                # tools): a state line, no hints.
                if isinstance(outcome, Outcome_Failure):
                    return _advice(FAILED.get(outcome.value.kind, "failed"), f"{call.tool} failed", [], [])
                return _advice("ok", f"{call.tool} done", [], [])
            if isinstance(outcome, Outcome_Failure):
                return _failure(call.tool, args, outcome.value)
            return _success(call.tool, args, _text(outcome.value))
        except Exception:
            failed = isinstance(outcome, Outcome_Failure)
            return _advice("error" if failed else "ok", "failed" if failed else "done", [], [])

    def render(self, call, advice):
        try:
            lines = [f"[{advice.state_tag}] {advice.summary}"]
            lines += [d for d in advice.details if d]
            if advice.ask_user:
                lines.append(f"ask: {advice.ask_user}")
            for h in advice.hints:
                try:
                    args = _dump(json.loads(h.args))
                except (ValueError, TypeError, RecursionError):
                    args = h.args
                if h.actionable:
                    lines.append(f"→ next: {h.tool} {args} — {h.reason}")
                else:
                    lines.append(f"note: {h.reason} (e.g. {h.tool} {args})")
            return "\n".join(lines)
        except Exception:
            return f"[{getattr(advice, 'state_tag', 'ok')}]"
