#!/usr/bin/env bash
# Signpost vs a Python-SDK peer MCP server: one entry point.
#
#   bench/peer/run.sh                                   # uses target/release/signpost
#   SIGNPOST_BIN=path/to/signpost bench/peer/run.sh
#   SIGNPOST_NOOP_POLICY=path/to/noop.wasm bench/peer/run.sh   # another no-op policy
#
# Besides Signpost's default policy and the peer, it runs two policies it
# builds itself (wasm32-wasip2, into target/guest): the default policy with
# its `hints-off` feature (the same answers without the hints a success
# offers: what they cost) and the no-op policy (tests/policies/chaos, 0.3.0:
# a one-line text).
# Then the server's CPU per call: cpu_per_request.py, HTTP and stdio.
#
# Creates target/tmp/peer-venv (pinned requirements), installs wrk if missing
# (apt-get, needs root), runs drive.py (Python clients, stdio + HTTP) and
# wrk/wrk_bench.py (native load, HTTP). Results: $OUT/drive.json, $OUT/wrk.json,
# server logs and raw wrk output under $OUT/logs. About 4-5 minutes.
set -euo pipefail

CALLER_PWD="$PWD"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# A relative path is taken from the caller's directory, else from the repo root.
abspath() {
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) if [ -e "$CALLER_PWD/$1" ]; then printf '%s\n' "$CALLER_PWD/$1"; else printf '%s\n' "$ROOT/$1"; fi ;;
  esac
}

SIGNPOST_BIN="$(abspath "${SIGNPOST_BIN:-target/release/signpost}")"
if [ ! -x "$SIGNPOST_BIN" ]; then
  echo "run.sh: no signpost binary at $SIGNPOST_BIN (cargo build --release, or set SIGNPOST_BIN)" >&2
  exit 1
fi

# The policies it compares with: built from this tree, so that a run is
# reproducible from a clean clone.
GUEST_TARGET="$ROOT/target/guest"
guest() { # crate dir, features, wasm name → the built component's path
  CARGO_TARGET_DIR="$GUEST_TARGET" cargo build -q --release --locked --target wasm32-wasip2 \
    --manifest-path "$ROOT/$1/Cargo.toml" --features "$2" >&2
  cp "$GUEST_TARGET/wasm32-wasip2/release/$3" "$GUEST_TARGET/$2.wasm"
  printf '%s\n' "$GUEST_TARGET/$2.wasm"
}
echo "== building the hints-off and no-op policies"
HINTS_OFF="$(guest hints-component hints-off signpost_hints.wasm)"
if [ -n "${SIGNPOST_NOOP_POLICY:-}" ]; then
  NOOP="$(abspath "$SIGNPOST_NOOP_POLICY")"
  [ -f "$NOOP" ] || { echo "run.sh: SIGNPOST_NOOP_POLICY=$SIGNPOST_NOOP_POLICY is not a file" >&2; exit 1; }
else
  NOOP="$(guest tests/policies/chaos v0_3 signpost_chaos_policy.wasm)"
fi
NOOP_ARGS=(--noop-policy "$NOOP" --hints-off-policy "$HINTS_OFF")

OUT="$(abspath "${OUT:-target/tmp/peer-bench/$(date -u +%Y%m%dT%H%M%SZ)}")"
mkdir -p "$OUT"

VENV="$ROOT/target/tmp/peer-venv"
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV"
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r bench/peer/requirements.txt

if ! command -v wrk >/dev/null 2>&1; then
  echo "== installing wrk (Debian package)"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq wrk >/dev/null
  fi
fi

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) CPUs; signpost: $SIGNPOST_BIN; results: $OUT"
echo "== drive.py: Python clients, stdio and streamable HTTP"
"$VENV/bin/python" bench/peer/drive.py bench --signpost "$SIGNPOST_BIN" ${NOOP_ARGS[@]+"${NOOP_ARGS[@]}"} --out "$OUT"
echo
echo "== wrk: native HTTP load"
"$VENV/bin/python" bench/peer/wrk/wrk_bench.py --signpost "$SIGNPOST_BIN" ${NOOP_ARGS[@]+"${NOOP_ARGS[@]}"} --out "$OUT"
echo
echo "== CPU per call: hints on, hints off, no-op (HTTP under wrk, then stdio)"
"$VENV/bin/python" bench/peer/wrk/cpu_per_request.py --signpost "$SIGNPOST_BIN" --noop-policy "$NOOP" \
  --policy "hints-off=$HINTS_OFF" | tee "$OUT/cpu-http.txt"
"$VENV/bin/python" bench/peer/wrk/cpu_per_request.py --signpost "$SIGNPOST_BIN" --noop-policy "$NOOP" \
  --policy "hints-off=$HINTS_OFF" --transport stdio | tee "$OUT/cpu-stdio.txt"
echo
echo "== results in $OUT (drive.json, wrk.json, cpu-http.txt, cpu-stdio.txt, logs/)"
