#!/usr/bin/env bash
# The property campaign: every property test of tests/e2e/properties.rs run
# with many generated cases (default 10,000,000 each), one at a time, timed.
# Usage: bench/fuzz.sh [CASES]   (from the repository root)
#
# Each property runs on one thread, two properties at a time; proptest stops at
# the first failing case and prints its minimal input — that input becomes a
# regression test. Figures: BENCHMARKS.md ("Property campaign").
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-10000000}"
cargo test --release --test e2e --no-run
props=(
    no_forged_call_survives_the_sanitiser
    no_forged_id_or_call_survives_any_notation
    validated_hint_lines_survive
    any_text_is_handled
    coercion_reads_every_lossless_shape
    coercion_never_invents_ids
    tool_arguments_never_break_parsing
    the_graph_loader_never_panics
    the_graph_loader_never_panics_on_bytes
    the_http_body_guard_answers_every_body
)
printf '%-42s %12s %10s %s\n' property cases seconds result
run_one() {
    local p=$1 cases=$2 start end result
    start=$(date +%s.%N)
    if SIGNPOST_PROPTEST_CASES="$cases" cargo test --release --test e2e -q -- --exact "properties::$p" \
        >"target/tmp/fuzz-$p.log" 2>&1; then
        result=ok
    else
        result="FAILED (target/tmp/fuzz-$p.log)"
    fi
    end=$(date +%s.%N)
    printf '%-42s %12s %10.0f %s\n' "$p" "$cases" "$(awk "BEGIN { print $end - $start }")" "$result"
}
export -f run_one
mkdir -p target/tmp
# Two at a time: each property runs on one thread.
printf '%s\n' "${props[@]}" | xargs -P 2 -I{} bash -c "run_one {} $cases"
