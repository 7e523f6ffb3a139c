#!/bin/sh
# Builds the `{{name}}` policy (policy.js) into a WebAssembly component:
#
#     ./build.sh [OUT.wasm [WIT_DIR]]    (default: policy.wasm and wit/ here)
#
# Installs componentize-js (npm install, from package.json) first when
# node_modules is missing. Then: signpost policy check policy.wasm.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules" ]; then
    (cd "$here" && npm install --no-audit --no-fund)
fi
exec node "$here/build.mjs" "$@"
