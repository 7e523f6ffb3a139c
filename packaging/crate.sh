#!/usr/bin/env bash
# Packages the workspace's crates as crates.io would receive them
# (`signpost-mcp`, its library and binary `signpost`, and `signpost-graph`,
# `signpost-policy`, `signpost-treesitter`), and has cargo check that each
# builds from its package alone: `cargo package --workspace --locked`
# unpacks every crate under target/package/ and builds it there with the
# lock file it carries, against the others as packaged.
#
# The policy component's sources are not in the host crate: the default
# policy goes in prebuilt (`host/prebuilt/`, from this repository's release
# build, with its sha256, which the packaged build.rs checks), with its
# golden cases and the index they run on. The `.crate` files are left in
# target/package/.
#
# Usage: packaging/crate.sh   (after `cargo build --release`)
# The check builds every dependency once more, in the dev profile: about
# 10 minutes on 2 cores the first time (BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."

wasm=$(ls -t target/release/build/signpost-mcp-*/out/SIGNPOST_DEFAULT_POLICY.wasm 2>/dev/null | head -1 || true)
if [[ -z "$wasm" ]]; then
    echo "crate.sh: no default policy built: run \`cargo build --release\` first" >&2
    exit 1
fi
trap 'rm -rf host/prebuilt' EXIT
mkdir -p host/prebuilt/cases
cp "$wasm" host/prebuilt/signpost_hints.wasm
sha256sum host/prebuilt/signpost_hints.wasm | cut -d' ' -f1 > host/prebuilt/signpost_hints.wasm.sha256
cp hints-component/cases/*.json host/prebuilt/cases/
cp tests/fixtures/scip/rust/index.scip host/prebuilt/cases-rust-index.scip

# Cargo unpacks the packaged crates of the check into its registry source
# cache (a directory per local registry, named `-<hash>`) and, the version
# being the same, reuses an earlier unpacking; and it fingerprints a crate
# from a registry by its version alone, so what it built from the earlier
# sources is linked again. On a machine that ran this before, a crate
# would be checked against another crate's old sources: the unpackings
# and what was built from them go first (the workspace's own dev builds
# of these crates with them; they are made again when needed).
registry_src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
debug="${CARGO_TARGET_DIR:-target}/debug"
for crate in signpost-graph signpost-policy signpost-treesitter signpost-mcp; do
    rm -rf "$registry_src"/-*/"$crate"-[0-9]* "$debug"/.fingerprint/"$crate"-* "$debug"/build/"$crate"-*
done
rm -f "$debug"/deps/libsignpost-* "$debug"/deps/signpost-* \
    "$debug"/deps/*signpost_graph-* "$debug"/deps/*signpost_policy-* "$debug"/deps/*signpost_treesitter-*

cargo package --workspace --locked --allow-dirty "$@"
ls -l target/package/*.crate
