#!/bin/sh
# Builds the `git` policy (policy.py) into a WebAssembly component.
#
#     python3 -m pip install componentize-py==0.25.1
#     tests/policies/git/build.sh [OUT.wasm]
#
# componentize-py bundles CPython and policy.py into one component that
# exports signpost:policy/policy@0.2.0 from the world `hints` in wit/0.2.0/
# (catalogue rules, references, holds, the session's history passed by
# value; the host serves it beside 0.3.0). It is written for
# the official git MCP server (tests/backends/git):
#     signpost proxy --policy OUT.wasm -- mcp-server-git --repository REPO
# Check it first: signpost policy check OUT.wasm.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/git.wasm}
if ! command -v componentize-py >/dev/null 2>&1; then
    echo "componentize-py not found: python3 -m pip install componentize-py==0.25.1" >&2
    exit 127
fi
exec componentize-py --wit-path "$here/../../../wit/0.2.0" --world hints componentize policy --python-path "$here" --output "$out"
