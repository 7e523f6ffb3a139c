#!/usr/bin/env bash
# C / C++ ground truth for Signpost's code graph, from libclang: makes a
# virtualenv under /tmp with the `libclang` wheel (the parser) and the
# `clang-tidy` wheel (only for clang 18's own stddef.h/stdatomic.h/... headers,
# which the libclang wheel lacks) if it is missing, then runs truth.py, which
# parses the repository one file at a time and writes OUT.json, plus
# OUT.stats.json (call-site categories with examples, per-file errors, flags).
#
#   bench/truth/clang/run.sh REPO_ROOT LANG OUT.json [truth.py options]
#   e.g. bench/truth/clang/run.sh /tmp/repos/redis c /tmp/truth/redis.json
#   LANG is c or cpp.  CLANGTRUTH_VENV overrides the virtualenv path.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 REPO_ROOT {c|cpp} OUT.json [--flags '-DX -Idir'] [--no-profile] [-v]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
venv=${CLANGTRUTH_VENV:-/tmp/clangtruth-venv}

if ! "$venv/bin/python" -c 'import clang.cindex, clang_tidy' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'libclang==18.1.1' 'clang-tidy==18.1.8'
fi

root=$1 lang=$2 out=$3
shift 3
mkdir -p "$(dirname "$out")"
exec "$venv/bin/python" "$here/truth.py" "$root" "$lang" "$out" \
  --stats "${out%.json}.stats.json" "$@"
