#!/usr/bin/env bash
# run.sh: the javac "truth" code graph of a Java source tree (Truth.java
# here): defs and CALLS/EXTENDS/IMPLEMENTS/OVERRIDES edges as javac's own
# attribution resolves them, written as one JSON file, to measure Signpost's
# built-in indexer against.
#
#   bench/truth/java/run.sh REPO_ROOT SOURCE_DIR OUT.json
#
# SOURCE_DIR is relative to REPO_ROOT (or absolute): e.g.
#   bench/truth/java/run.sh /tmp/repos/gson gson/src/main/java /tmp/truth/gson.json
#   bench/truth/java/run.sh /tmp/repos/commons-lang src/main/java /tmp/truth/commons-lang.json
#
# Truth.java is compiled into a temporary directory (removed on exit), never
# inside the project. Needs a JDK 11+ (17 used): $JAVAC and $JAVA override
# the javac and java found on PATH. Prints a one-line summary on stdout and
# javac's diagnostics figures on stderr. See README.md for the conventions.
set -euo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 REPO_ROOT SOURCE_DIR OUT.json" >&2
    exit 2
fi
root=$1 src=$2 out=$3
JAVAC=${JAVAC:-javac}
JAVA=${JAVA:-java}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -d "$root" ] || { echo "no such directory: $root" >&2; exit 1; }
case "$src" in
    /*) srcdir=$src ;;
    *) srcdir=$root/$src ;;
esac
[ -d "$srcdir" ] || { echo "no such directory: $srcdir" >&2; exit 1; }
mkdir -p "$(dirname "$out")"

build=$(mktemp -d "${TMPDIR:-/tmp}/truth-java.XXXXXX")
trap 'rm -rf "$build"' EXIT

"$JAVAC" -nowarn -d "$build" "$here/Truth.java"
# A bigger thread stack: javac recurses on deep trees (long `a + b + ...`).
"$JAVA" -Xss16m -cp "$build" Truth "$root" "$src" "$out"
