#!/usr/bin/env bash
# Run every fuzz target for a bounded time on its corpus in tests/fuzz/corpus/<name>/.
# usage: run.sh BUILD_DIR SECONDS [each]
#   SECONDS is split over the targets; with "each", every target runs SECONDS
#   (the long run of docs/fuzzing.md: run.sh build-fuzz 600 each).
#   FUZZ_SEED (default 1) fixes libFuzzer's random seed, so that the short
#   run of scripts/test.sh tries the same inputs on every machine and CI
#   does not fail at random on a bug that a change did not touch (the CI of
#   session 6 did: the replay target met a new input in its 10 s); the long
#   run should use FUZZ_SEED=0 (a new seed each run) to explore.
set -uo pipefail
cd "$(dirname "$0")/../.."
b=$1; secs=$2
targets=("$b"/fuzz/fuzz_*)
[ -e "${targets[0]}" ] || { echo "no fuzz targets built in $b/fuzz"; exit 1; }
per=$(( secs / ${#targets[@]} )); [ "${3:-}" = each ] && per=$secs; [ $per -lt 5 ] && per=5
seed=${FUZZ_SEED:-1}
status=0
for t in "${targets[@]}"; do
  name=$(basename "$t"); name=${name#fuzz_}
  corpus=tests/fuzz/corpus/$name
  mkdir -p "$corpus"
  work=$(mktemp -d)
  dict=(); [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  echo "fuzzing $name for ${per}s (corpus $corpus: $(ls "$corpus" | wc -l) files)"
  if ! "$t" "${dict[@]}" -max_total_time="$per" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -seed="$seed" \
       -artifact_prefix="$work/" -print_final_stats=0 "$work" "$corpus" >"$work/log" 2>&1; then
    echo "fuzz target $name failed:"; tail -40 "$work/log"; status=1
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* . 2>/dev/null || true
  else
    grep -E '^(#[0-9]+|Done)' "$work/log" | tail -1
  fi
  rm -rf "$work"
done
exit $status
