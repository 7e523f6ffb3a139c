#!/bin/sh
# Builds the `trail` policy (policy.py) into a WebAssembly component.
#
#     python3 -m pip install componentize-py==0.25.1
#     tests/policies/python/build.sh [OUT.wasm]
#
# componentize-py bundles CPython and policy.py into one component that
# exports signpost:policy/policy@0.3.0 from the world `hints` in wit/ (the
# repository's top-level WIT package).
# Then: signpost policy check OUT.wasm, and swap it in with --policy.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/trail.wasm}
if ! command -v componentize-py >/dev/null 2>&1; then
    echo "componentize-py not found: python3 -m pip install componentize-py==0.25.1" >&2
    exit 127
fi
exec componentize-py --wit-path "$here/../../../wit" --world hints componentize policy --python-path "$here" --output "$out"
