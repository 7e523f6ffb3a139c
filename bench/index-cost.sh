#!/usr/bin/env bash
# Whole-process cost of `signpost index DIR` for two binaries, run in turn
# (A B A B …, so that the machine's drift falls on both alike): median CPU
# (perf's task-clock) and median peak RSS of each, and their ratios.
#
#   bench/index-cost.sh OLD_BINARY NEW_BINARY DIR [RUNS]
#
# Needs perf (linux-perf) and GNU time. Outputs go to a scratch directory.
set -euo pipefail
old=$1 new=$2 dir=$3 runs=${4:-7}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for _ in $(seq "$runs"); do
    for which in old new; do
        bin=${!which}
        /usr/bin/time -f "%M" -o "$scratch/rss" \
            perf stat -e task-clock -x, -o "$scratch/perf" "$bin" index "$dir" -o "$scratch/out-$which" >/dev/null 2>&1
        echo "$which $(grep task-clock "$scratch/perf" | cut -d, -f1) $(cat "$scratch/rss")"
    done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    which, ms, kb = line.split()
    runs.setdefault(which, ([], []))
    runs[which][0].append(float(ms))
    runs[which][1].append(int(kb))
(to, mo), (tn, mn) = [(statistics.median(runs[w][0]), statistics.median(runs[w][1])) for w in ("old", "new")]
print(f"cpu {to:.0f} -> {tn:.0f} ms ({tn / to:.2f}x); peak RSS {mo / 1024:.0f} -> {mn / 1024:.0f} MiB ({mn / mo:.2f}x)")
'
