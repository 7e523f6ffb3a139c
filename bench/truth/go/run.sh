#!/usr/bin/env bash
# run.sh — build the Go truth extractor (truth.go, standard library only) into
# a temporary directory outside the project and run it on one Go checkout.
#
#   bench/truth/go/run.sh REPO_ROOT OUT.json [extra truth flags...]
#
# Writes OUT.json (the code graph from go/types) and OUT.details.txt (type
# errors, failed imports, skipped files, unresolved calls); prints a one-line
# summary. Needs `go` (Debian: apt-get install -y golang-go); works offline:
# GOPATH mode, no modules, cgo off. Extra flags: -gotool (only `go list ./...`
# packages), -gopath (let third-party imports resolve from GOPATH).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 REPO_ROOT OUT.json [truth flags...]" >&2
  exit 2
fi
repo=$1; out=$2; shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

export GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local
export GOCACHE=${GOCACHE:-/tmp/gotruth/cache}
bindir=/tmp/gotruth
mkdir -p "$bindir" "$(dirname "$out")"
go build -o "$bindir/truth" "$here/truth.go"
"$bindir/truth" "$@" -details "${out%.json}.details.txt" "$repo" "$out"
