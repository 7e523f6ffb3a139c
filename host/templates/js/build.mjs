// Builds the `{{name}}` policy (policy.js) into a WebAssembly component with
// componentize-js (the SpiderMonkey-based engine behind `jco componentize`).
//
//     npm install && node build.mjs [OUT.wasm [WIT_DIR]]
//
// Defaults: policy.wasm and wit/ next to this script. The component bundles
// the JS engine and policy.js and exports signpost:policy/policy@0.3.0 from
// the world `hints`. Then: signpost policy check policy.wasm, and serve it
// with --policy.
//
// (`jco componentize policy.js --wit wit --world-name hints -o policy.wasm`
// is the same build, but jco 1.35 with preview2-shim 0.26 fails before
// building ("failed to get path metadata"): it reads the WIT with no
// filesystem preopened. This script calls the library and preopens `/`.)

import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { componentize } from "@bytecodealliance/componentize-js";
import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "policy.wasm"));
const wit = resolve(process.argv[3] ?? join(here, "wit"));
// componentize-js reads the WIT through WASI, and preview2-shim 0.26 preopens
// nothing by default: let the build tools see the filesystem.
_setPreopens({ "/": "/" });
const { component } = await componentize({
  sourcePath: join(here, "policy.js"),
  witPath: wit,
  worldName: "hints",
  // A policy needs no clock, randomness or HTTP: import none of them.
  disableFeatures: ["clocks", "random", "http", "fetch-event"],
});
await writeFile(out, component);
console.error(`built ${out} (${component.length} bytes)`);
