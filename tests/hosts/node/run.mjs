// Runs a Signpost policy component in Node.js, transpiled by jco.
//
//     npx jco transpile POLICY.wasm --name policy -o out/ \
//         --map signpost:policy/host=$PWD/host.mjs
//     node run.mjs out/policy.js < probes.json > answers.json
//
// Reads a JSON array of probes, `{"fn": "coerce-ids", "args": [...]}`, calls
// each export of `signpost:policy/policy@0.3.0` and writes the answers as a
// JSON array, both in the JSON form of WIT values described in
// tests/hosts/README.md. A probe of `prerequisites` or `advise` carries the
// session's history as its last argument, as 0.2.0 passed it: host.mjs
// answers the policy's questions about it (`host.has-seen`, `host.history`)
// during that call. jco's own JS mapping differs (camelCase fields,
// `{tag, val}` variants, `undefined` for none, a thrown ComponentError for
// `err`); the conversions below are the whole difference.

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { setHistory } from "./host.mjs";

const camel = (k) => k.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
const kebab = (k) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

// Records: WIT field names <-> camelCase, none <-> undefined.
function toJs(value) {
  if (Array.isArray(value)) return value.map(toJs);
  if (value === null) return undefined;
  if (typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), toJs(v)]));
}

function fromJs(value) {
  if (Array.isArray(value)) return value.map(fromJs);
  if (value === undefined || value === null) return null;
  if (typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [kebab(k), fromJs(v)]));
}

// `outcome` is the world's one variant: {"success": json} -> {tag, val}.
function outcome(value) {
  const [[tag, val]] = Object.entries(value);
  return { tag, val: toJs(val) };
}

// Runs `f` with `session` as the history the host answers for.
function withHistory(session, f) {
  setHistory(session);
  try {
    return f();
  } finally {
    setHistory(null);
  }
}

const { policy } = await import(pathToFileURL(resolve(process.argv[2])).href);

const calls = {
  identity: () => fromJs(policy.identity()),
  "coerce-ids": (call, param) => {
    try {
      return { ok: policy.coerceIds(toJs(call), param) };
    } catch (e) {
      if (e?.payload === undefined) throw e;
      return { err: fromJs(e.payload) };
    }
  },
  prerequisites: (call, session) => withHistory(session, () => fromJs(policy.prerequisites(toJs(call)))),
  advise: (call, out, session) => withHistory(session, () => fromJs(policy.advise(toJs(call), outcome(out)))),
  render: (call, advice) => policy.render(toJs(call), toJs(advice)),
};

// Not readFileSync(0): on a pipe that is not ready yet it fails with EAGAIN.
let input = "";
for await (const chunk of process.stdin.setEncoding("utf8")) input += chunk;
const probes = JSON.parse(input);
const answers = probes.map(({ fn, args }) => {
  if (!(fn in calls)) throw new Error(`signpost:policy/policy@0.3.0 has no function ${JSON.stringify(fn)}`);
  return calls[fn](...args);
});
process.stdout.write(JSON.stringify(answers));
