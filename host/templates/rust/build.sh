#!/bin/sh
# Builds this policy into a WebAssembly component: ./build.sh [OUT.wasm]
# (default: policy.wasm here). Needs Rust's wasm32-wasip2 target, added
# through rustup when missing. Then: signpost policy check policy.wasm
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/policy.wasm}
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi
cargo build --release --target wasm32-wasip2 --manifest-path "$here/Cargo.toml" --target-dir "$here/target"
cp "$here/target/wasm32-wasip2/release/$(echo '{{name}}' | tr - _).wasm" "$out"
echo "built $out" >&2
