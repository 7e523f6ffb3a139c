// `signpost:policy/host@0.3.0` for a policy transpiled by jco: what the host
// answers while a policy function runs. `jco transpile --map
// signpost:policy/host=<this file>` points the component's import here;
// run.mjs sets the history of each probe's session before the call.

let current = null;

/** The session whose call the next policy function judges (null: none). */
export function setHistory(session) {
  current = session;
}

// WIT `has-seen: func(ids: list<string>) -> list<bool>`.
export function hasSeen(ids) {
  const seen = new Set(current?.["seen-ids"] ?? []);
  return ids.map((id) => seen.has(id));
}

// WIT `history: func() -> session`, in jco's mapping (camelCase fields).
export function history() {
  const s = current ?? { "call-count": 0, recent: [], "seen-ids": [] };
  return {
    callCount: s["call-count"],
    recent: s.recent.map((c) => ({ tool: c.tool, ok: c.ok, ids: c.ids })),
    seenIds: s["seen-ids"],
  };
}

// WIT `lookup: func(tool: string, args: json) -> result<json, string>`: this
// host serves no tools (jco maps `err` to a thrown value).
export function lookup(_tool, _args) {
  throw "no lookups here: this host serves no tools";
}
