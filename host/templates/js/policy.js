// `{{name}}`: a Signpost hint policy in JavaScript (signpost:policy@0.3.0),
// built with componentize-js (build.mjs).
//
// Signpost calls these functions on every tool call, in this order:
// prerequisites (before the tool runs), coerceIds (only for id arguments
// the host cannot read strictly), then the tool, advise, and render.
// Everything arrives as plain data: JSON travels as text, records are plain
// objects with camelCase fields, an absent `option` is `undefined`, the
// `outcome` variant is `{ tag, val }`, and a `result` error is what a
// function throws.
//
// What this policy does, on Signpost's code-graph tools:
// - ids: reads a JSON array written as a string, or ids separated by commas
//   or spaces; anything else gets a teaching error with an example;
// - hints: after resolve, search, find and neighbors, describe the first
//   symbol the session has not seen yet (it asks the host: `hasSeen`);
//   after describe, follow its most common edge; after a failed call, the
//   error's example when it is a complete call;
// - text: `[state_tag] summary`, the details, a `→ next: TOOL {json}` line
//   per actionable hint and a `note:` line per piece of advice.

// The host's functions: the module is the WIT interface with its version
// (`signpost:policy/host@0.3.0`; without `@0.3.0` the build fails with
// "Error loading module"), each kebab-case function under its camelCase
// name (`has-seen` is `hasSeen`; `lookup` and `history` keep theirs).
import { hasSeen } from "signpost:policy/host@0.3.0";

const NAME = "{{name}}";
const VERSION = "0.1.0";
const MAX_DETAILS = 10;
const MAX_IDS = 256;
const ID = /^[0-9a-fA-F]{40}$/;

// ---- small helpers ----------------------------------------------------------

/** Parses JSON text; anything unreadable reads as an empty object. */
function parse(text) {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** An actionable hint: a complete call the agent can send as it is. */
const call = (tool, args, reason) => ({ tool, args: JSON.stringify(args), actionable: true, reason });
/** Advice that is not a call to send as it is (its args stay `{}`). */
const note = (tool, reason) => ({ tool, args: "{}", actionable: false, reason });
const str = (value, key) => (typeof value?.[key] === "string" ? value[key] : "");
const rows = (value, key) => (Array.isArray(value?.[key]) ? value[key].filter((x) => x && typeof x === "object") : []);
const advice = (stateTag, summary, details = [], hints = []) => ({ stateTag, summary, details, hints, askUser: undefined });

/** The ids in `value`: a JSON array written as a string (`"[\"…\"]"`) or ids
 * separated by commas or spaces; lowercased, deduplicated in order. null
 * when anything else is in it. */
function readIds(value) {
  if (typeof value === "string" && value.trim().startsWith("[")) {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (typeof value === "string") value = value.split(/[\s,]+/).filter((part) => part);
  if (!Array.isArray(value) || value.length === 0) return null;
  if (!value.every((v) => typeof v === "string" && ID.test(v.trim()))) return null;
  return [...new Set(value.map((v) => v.trim().toLowerCase()))];
}

/** A `describe` hint for the first of `symbols` the session has not seen in
 * an earlier result (`hasSeen` answers within advise and prerequisites
 * only), or no hint. */
function describeUnseen(symbols, reason) {
  const ids = symbols.map((s) => str(s, "id")).filter((id) => id);
  if (ids.length === 0) return [];
  const seen = hasSeen(ids);
  const i = seen.findIndex((s) => !s);
  return i < 0 ? [] : [call("describe", { id: ids[i] }, reason)];
}

// ---- what to say after each tool ---------------------------------------------

function resolved(args, result) {
  const candidates = rows(result, "candidates");
  const name = str(args, "identifier");
  const details = candidates.slice(0, MAX_DETAILS).map((c) => `${str(c, "kind")} ${str(c, "fqn")}`);
  if (candidates.length === 0) {
    const hints = name ? [call("search", { query: name }, "nothing has that name; a search may find it")] : [];
    return advice("not_found", `nothing is named '${name}'`, [], hints);
  }
  const hints = describeUnseen(candidates, "see its record and edges");
  if (candidates.length === 1) return advice("resolved", `${name} is ${str(candidates[0], "fqn")}`, details, hints);
  return advice("ambiguous", `${candidates.length} symbols are named '${name}'`, details, hints);
}

function described(result) {
  const record = result.record && typeof result.record === "object" ? result.record : {};
  const edges = result.edge_summary && typeof result.edge_summary === "object" ? result.edge_summary : {};
  const details = [];
  const hints = [];
  for (const direction of ["out", "in"]) {
    const counts = Object.entries(edges[direction] ?? {})
      .filter(([, n]) => Number.isInteger(n))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (counts.length === 0) continue;
    details.push(`${direction}: ` + counts.map(([k, n]) => `${k} ${n}`).join(", "));
    if (hints.length === 0 && str(record, "id")) {
      // The most common edge; the first by name among equals.
      const [edge, n] = counts.reduce((best, c) => (c[1] > best[1] ? c : best));
      const args = { ids: [str(record, "id")], direction, edge_types: [edge] };
      hints.push(call("neighbors", args, `its most common edge (${edge}, ${n})`));
    }
  }
  return advice("record", `${str(record, "kind")} ${str(record, "fqn")}`, details, hints);
}

/** find, search and neighbors: a page of results. */
function listing(tool, result) {
  const found = rows(result, "results");
  const symbols = tool === "neighbors" ? found.map((r) => r.other).filter((o) => o && typeof o === "object") : found;
  const details = found
    .slice(0, MAX_DETAILS)
    .map((r) => (tool === "neighbors" ? `${str(r, "edge")} ${str(r.other, "fqn")}` : `${str(r, "kind")} ${str(r, "fqn")}`));
  const total = Number.isInteger(result.total) ? result.total : found.length;
  if (found.length === 0) {
    const sent = Array.isArray(result.ids) ? result.ids : [];
    const hints =
      tool === "neighbors" && typeof sent[0] === "string"
        ? [call("describe", { id: sent[0] }, "no such edges: see which edges it has")]
        : [];
    return advice("empty", `${tool}: nothing found`, [], hints);
  }
  if (found.length > MAX_DETAILS) details.push(`… ${found.length - MAX_DETAILS} more in structuredContent`);
  return advice("results", `${tool}: ${found.length} of ${total}`, details, describeUnseen(symbols, "the first result not seen yet"));
}

function failed(c, error) {
  const summary = `${c.tool} failed: ${error.message}`;
  const example = error.example ? parse(error.example) : {};
  // A template (an argument that is a whole `<placeholder>`) is advice, not
  // a call to send as it is.
  const complete = Object.keys(example).length > 0 && !error.example.includes("<");
  switch (error.kind) {
    case "invalid-id": {
      const hints = [];
      const sent = parse(c.args)[c.tool === "describe" ? "id" : "ids"];
      if (typeof sent === "string" && sent.trim() && !/[0-9a-fA-F]{40}/.test(sent)) {
        hints.push(call("resolve", { identifier: sent.trim() }, "a name where an id belongs: resolve it"));
      }
      hints.push(note(c.tool, "ids are 40-hex strings from resolve, search or find results"));
      return advice("invalid_id", summary, [], hints);
    }
    case "unknown-id":
      return advice("unknown_id", summary, [], [note("search", "this graph has no such id: search for the symbol")]);
    case "bad-argument":
      return advice("bad_argument", summary, [], complete ? [call(c.tool, example, "the corrected call")] : []);
    default:
      return advice("error", summary); // internal: not the agent's fault
  }
}

// ---- the exported interface ---------------------------------------------------

// One object per exported interface, named after it, camelCase methods.
export const policy = {
  identity() {
    return { name: NAME, version: VERSION };
  },

  catalogue(_tools) {
    // Rules per tool (`tool-rules`: which arguments name things, which
    // tools change state) matter in front of another MCP server
    // (`signpost proxy`). Signpost's own tools need none.
    return [];
  },

  coerceIds(c, param) {
    // Called only when the host could not read `param` itself (a JSON
    // array of ids, or one id for `describe`, never gets here).
    const args = parse(c.args);
    const ids = readIds(args[param]);
    if (ids && ids.length <= MAX_IDS && (param !== "id" || ids.length === 1)) return ids;
    // A template example: the agent's call with the ids to fill in.
    const example = { ...args, [param]: param === "id" ? "<40-hex id>" : ["<40-hex id>"] };
    const wanted = param === "id" ? "one 40-hex id" : "40-hex ids (a JSON array)";
    // A thrown value is the `err` of the WIT result: a coercion-error.
    throw {
      message: `\`${param}\` of ${c.tool} takes ${wanted}: names go through resolve first`,
      example: JSON.stringify(example),
    };
  },

  prerequisites(_call) {
    // No hints before a call, and never hold one.
    return { hints: [], hold: undefined };
  },

  advise(c, outcome) {
    if (outcome.tag === "failure") return failed(c, outcome.val);
    const result = parse(outcome.val);
    if (c.tool === "resolve") return resolved(parse(c.args), result);
    if (c.tool === "describe") return described(result);
    if (["find", "search", "neighbors"].includes(c.tool)) return listing(c.tool, result);
    return advice("ok", `${c.tool} answered`); // a tool this policy does not know
  },

  render(_call, a) {
    // The host removes any call shown in the text that is not a hint it
    // validated: show hints as `TOOL {json}`, with their args as given (on
    // a trail they carry the `trail` argument). It also empties a reason
    // that shows a call.
    const lines = [`[${a.stateTag}] ${a.summary}`, ...a.details];
    for (const h of a.hints) {
      const why = h.reason ? ` — ${h.reason}` : "";
      if (h.actionable) lines.push(`→ next: ${h.tool} ${h.args}${why}`);
      else if (h.reason) lines.push(`note: ${h.reason}`);
    }
    if (a.askUser) lines.push(`? ask user: ${a.askUser}`);
    return lines.join("\n");
  },
};
