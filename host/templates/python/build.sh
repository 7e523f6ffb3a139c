#!/bin/sh
# Builds the `{{name}}` policy (policy.py) into a WebAssembly component.
#
#     python3 -m pip install componentize-py==0.25.1
#     ./build.sh [OUT.wasm]        (default: policy.wasm next to this script)
#
# componentize-py bundles CPython and policy.py into one component that
# exports signpost:policy/policy@0.3.0 from the world `hints` in wit/.
# Then: signpost policy check policy.wasm, and serve it with --policy.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/policy.wasm}
if ! command -v componentize-py >/dev/null 2>&1; then
    echo "componentize-py not found: python3 -m pip install componentize-py==0.25.1" >&2
    exit 127
fi
exec componentize-py --wit-path "$here/wit" --world hints componentize policy --python-path "$here" --output "$out"
