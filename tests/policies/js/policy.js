// `compass`: a Signpost policy in JavaScript, built with jco componentize
// (componentize-js, StarlingMonkey), for signpost:policy@0.3.0
// (wit/policy.wit). Its philosophy: one direction at a time.
//
// - ids: a JSON array of 40-hex ids, or that array sent as a JSON string
//   (`"[\"...\"]"`); one id string for `describe`. Uppercase is lowered.
// - hints: exactly one, the single best next call, or none.
// - text: `compass: <summary>` and, when there is a hint, `→ <tool> <args>`.
//
// It reads nothing of the session's history, so it imports none of the
// host's functions (they would be `import { hasSeen, history, lookup } from
// "signpost:policy/host@0.3.0"`).

const ID = /^[0-9a-fA-F]{40}$/;
const MAX_IDS = 256;

const hint = (tool, args, reason) => ({ tool, args: JSON.stringify(args), actionable: true, reason });
const list = (value, key) => (Array.isArray(value?.[key]) ? value[key].filter((x) => x && typeof x === "object") : []);
const text = (value, key) => (typeof value?.[key] === "string" ? value[key] : "");

function readIds(value, single) {
  if (typeof value === "string" && single && ID.test(value)) return [value.toLowerCase()];
  if (typeof value === "string" && value.trim().startsWith("[")) {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IDS) return null;
  if (!value.every((v) => typeof v === "string" && ID.test(v))) return null;
  return [...new Set(value.map((v) => v.toLowerCase()))];
}

export const policy = {
  identity() {
    return { name: "compass", version: "0.1.0" };
  },

  catalogue(_tools) {
    return []; // no rules: Signpost's own tools need none
  },

  coerceIds(call, param) {
    let args = {};
    try {
      args = JSON.parse(call.args);
    } catch {}
    const ids = readIds(args?.[param], param === "id");
    if (ids && (param !== "id" || ids.length === 1)) return ids;
    const example =
      param === "id"
        ? { id: "<40-hex id from resolve>" }
        : { ids: ["<40-hex id from resolve>"], direction: "out", edge_types: ["CALLS"] };
    // A thrown value is the `err` of the WIT result.
    throw {
      message: `compass: \`${param}\` of ${call.tool} takes ${param === "id" ? "one 40-hex id" : "a JSON array of 40-hex ids"}`,
      example: JSON.stringify(example),
    };
  },

  prerequisites(_call) {
    return { hints: [], hold: undefined };
  },

  advise(call, outcome) {
    if (outcome.tag === "failure") {
      const e = outcome.val;
      // A template (a `<placeholder>` to fill in) is not a call to send as it is.
      const fix = e.example && !e.example.includes("<") ? [hint(call.tool, JSON.parse(e.example), "the corrected call")] : [];
      return { stateTag: "error", summary: e.message, details: [], hints: fix, askUser: undefined };
    }
    let result = {};
    try {
      result = JSON.parse(outcome.val);
    } catch {}
    let summary = "";
    let next = null;
    if (call.tool === "resolve") {
      const c = list(result, "candidates");
      summary = c.length === 0 ? "no candidates" : `${c.length} candidate(s), first ${text(c[0], "fqn")}`;
      if (c.length > 0) next = hint("describe", { id: text(c[0], "id") }, "the first candidate");
    } else if (call.tool === "describe") {
      const record = result.record ?? {};
      summary = `${text(record, "kind")} ${text(record, "fqn")}`;
      const out = Object.entries(result.edge_summary?.out ?? {}).filter(([, n]) => typeof n === "number");
      out.sort((a, b) => b[1] - a[1]);
      if (out.length > 0) {
        next = hint("neighbors", { ids: [text(record, "id")], direction: "out", edge_types: [out[0][0]] }, "its most common edge");
      }
    } else {
      const rows = list(result, "results");
      summary = `${rows.length} result(s)`;
      const first = call.tool === "neighbors" ? rows[0]?.other : rows[0];
      if (first) next = hint("describe", { id: text(first, "id") }, "the first one");
    }
    return { stateTag: "ok", summary, details: [], hints: next ? [next] : [], askUser: undefined };
  },

  render(_call, advice) {
    const lines = [`compass: ${advice.summary}`];
    for (const h of advice.hints) lines.push(`→ ${h.tool} ${h.args}`);
    return lines.join("\n");
  },
};
