#!/usr/bin/env bash
# bench/overhead/lockstep.py --lifetime: processes are replaced beside the
# rounds, a known difference is read through the turnover, and --reread
# gives the summary again from the blocks.  The workload spins a loop
# (ls_spin.py): "slow" spins 10% more turns a step than "none" and "none2".
set -eu
src=${GS_SOURCE_DIR:?}
py=/usr/bin/python3
lockstep=$src/bench/overhead/lockstep.py
spin=$src/tests/ondemand/ls_spin.py
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

$py "$lockstep" --config "none=$py $spin 3000" --config "none2=$py $spin 3000" \
	--config "slow=$py $spin 3300" --copies 2 --lifetime 40 --seconds 12 --rounds 100000 \
	--out "$out/run" >"$out/log" 2>&1 || fail "lockstep.py failed: $(tail -3 "$out/log")"
s=$out/run/lockstep.txt
head -1 "$s" | grep -Eq '^lockstep: [0-9]+ rounds, 3 configurations x 2 processes at a time, [0-9]+ in all, each for 40 rounds' ||
	fail "the summary does not say the turnover: $(head -1 "$s")"
total=$(head -1 "$s" | sed -E 's/.* ([0-9]+) in all.*/\1/')
[ "$total" -ge 24 ] || fail "only $total processes were compared (4 a slot or more expected)"
# every process ended well, and each slot but at the start had its process
grep -qx 'exit: all 0' "$s" || fail "a process failed: $(tail -1 "$s")"
n=$(find "$out/run" -name 'slow.*.log' | wc -l)
[ "$n" -ge 8 ] || fail "only $n slow processes started"
$py - "$out/run/blocks.csv" <<'PY' || fail "rounds lacked processes"
import collections, sys
rows = [l.split(",") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
per = collections.Counter(r[0] for r in rows)
full = sum(1 for v in per.values() if v == 6)
print("rounds %d, with all 6 slots %d" % (len(per), full))
sys.exit(0 if full >= 0.9 * len(per) else 1)
PY
# the 10% more loop turns are read as about 10% (the step is the loop), the A/A as about 0
row() { grep -m1 "^  $1 " "$s" | sed -E 's/.*; vs none ([+-][0-9.]+)% .*/\1/'; }
$py -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 6 <= a <= 14 and abs(b) <= 3 else 1)" \
	"$(row slow)" "$(row none2)" || fail "slow read $(row slow)%, the A/A $(row none2)%"
grep -m1 '^  slow ' "$s" | grep -q 'blocks trimmed +' || fail "no trimmed comparison: $(grep -m1 '^  slow ' "$s")"
# the same blocks give the same summary again
$py "$lockstep" --reread "$out/run/blocks.csv" --configs none,none2,slow --lifetime 40 >"$out/again"
diff <(head -n -1 "$s") "$out/again" >"$out/diff" || fail "--reread differs: $(head -5 "$out/diff")"
# a reference that is not the run's first configuration
$py "$lockstep" --reread "$out/run/blocks.csv" --configs slow,none --lifetime 40 | grep -Eq '^  none .*; vs slow -' ||
	fail "none is not read faster than slow"
$py "$lockstep" --reread "$out/run/blocks.csv" --configs none,nosuch >"$out/err" 2>&1 && fail "a missing configuration was compared"
grep -q 'has no blocks of nosuch' "$out/err" || fail "the missing configuration is not said: $(cat "$out/err")"
# bad input: a missing file, a truncated one, one that is no blocks.csv
$py "$lockstep" --reread "$out/nosuch.csv" --configs none,slow >"$out/err" 2>&1 && fail "a missing file was read"
grep -q '^lockstep: cannot read .*nosuch.csv' "$out/err" || fail "the missing file is not said: $(cat "$out/err")"
xz -c "$out/run/blocks.csv" | head -c 5000 >"$out/trunc.csv.xz"
$py "$lockstep" --reread "$out/trunc.csv.xz" --configs none,slow >"$out/err" 2>&1 && fail "a truncated file was read"
grep -q '^lockstep: cannot read .*trunc.csv.xz' "$out/err" || fail "the truncated file is not said: $(cat "$out/err")"
$py "$lockstep" --reread "$s" --configs none,slow >"$out/err" 2>&1 && fail "a summary was read as blocks"
grep -q 'is not a blocks.csv' "$out/err" || fail "the wrong file is not said: $(cat "$out/err")"
echo ok
