#!/usr/bin/env bash
# The idle cost that docs/always-on.md and bench/RESULTS.md state for the
# launch-bound step is what the lockstep summaries on file pool to
# (bench/overhead/lockstep_pool.py over bench/results/lockstep-b-h200-2026-12-02/,
# r9 by its noted figures: its summary was lost), and the pool reads a run
# given by its figures as it reads a summary.
set -eu
src=${GS_SOURCE_DIR:?}
d=$src/bench/results/lockstep-b-h200-2026-12-02
pool() { /usr/bin/python3 "$src/bench/overhead/lockstep_pool.py" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

got=$(pool ondemand "$d"/r7-*.txt "$d"/r8-t_ondemand-idle.txt r9:+0.66:+0.11:+1.30 "$d"/r11-*.txt \
	"$d"/r13-*.txt "$d"/r14-*.txt "$d"/r15-*.txt "$d"/r16-*.txt | tail -1)
[ "$got" = "pooled over 8 runs: +0.96% (95% +0.75% to +1.18%)" ] || fail "the eight runs pool to: $got"
grep -q 'pooled +0.96%, 95% interval +0.75% to +1.18%' "$src/docs/always-on.md" ||
	fail "docs/always-on.md does not state the pooled idle cost"
grep -q '\*\*+0.96%\*\* (95% +0.75% to +1.18%)' "$src/bench/RESULTS.md" ||
	fail "bench/RESULTS.md does not state the pooled idle cost"

# a run by its figures weighs as its summary does: r14 both ways
a=$(pool ondemand "$d"/r14-*.txt | tail -1)
b=$(pool ondemand r14:+1.44:+0.83:+2.04 | tail -1)
[ "$a" = "$b" ] || fail "r14 by its summary ($a) and by its figures ($b) differ"
[ "$a" = "pooled over 1 runs: +1.44% (95% +0.83% to +2.04%)" ] || fail "one run pools to: $a"
# a configuration a summary lacks is said, not pooled
pool nosuch "$d"/r14-*.txt >"$out" 2>&1 && fail "pooled nothing without an error: $(cat "$out")"
grep -q 'no row for nosuch' "$out" || fail "the missing row is not said: $(cat "$out")"
echo ok
