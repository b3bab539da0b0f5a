#!/bin/bash
# e2e_ddp_cpu.sh - the 2-GPU round's DDP program (examples/ddp/ddp_train.py) on
# the CPU with gloo, the parts of issue 25 that need no GPU: two ranks under
# one profile carry ranks 0 and 1 (the launcher's variables, read by
# procinfo.c); one gpuscope per rank with -o run_%q{RANK} writes run_0 and
# run_1, and merge puts them into one report with both ranks; the straggler
# variant's rank 0 prints the result line.  Real PyTorch (Debian's
# python3-torch, CPU only), real processes; skipped where torch is missing.
set -u
G=${GPUSCOPE:?}
A=${DIST_ATTR:?}
SRC=${GS_SOURCE_DIR:?}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "SKIP: no PyTorch for $PY"; exit 77; }
launch=$SRC/examples/ddp/launch.sh
prog=$SRC/examples/ddp/ddp_train.py
cd "$T" || exit 1

ranks() { # REPORT: the distinct known ranks of its processes, sorted, space-separated
	"$A" "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "rank" && $(i + 1) >= 0) print $(i + 1) }' | sort -un | tr '\n' ' '
}

# 1. both ranks under one profile
timeout 300 "$G" profile -o one -- bash "$launch" 2 "$PY" "$prog" straggler 3 >one.out 2>one.err ||
	fail "profile of two ranks exited $?: $(tail -3 one.err)"
grep -q '^zoo: case=ddp variant=straggler step_ms=[0-9.]* steps=3$' one.out ||
	fail "no result line from rank 0: $(cat one.out)"
[ "$(ranks one.gpuscope)" = "0 1 " ] || fail "one report: ranks '$(ranks one.gpuscope)', want '0 1 '"
"$A" one.gpuscope | grep -q "world 2 launcher torchrun" || fail "one report: world size 2 under torchrun's variables"

# 2. one gpuscope per rank, then merge
timeout 300 bash "$launch" 2 "$G" profile -o 'run_%q{RANK}' -- "$PY" "$prog" fixed 3 >per.out 2>per.err ||
	fail "per-rank profiles exited $?: $(tail -3 per.err)"
for r in 0 1; do
	[ -f "run_$r.gpuscope" ] || fail "no run_$r.gpuscope (files: $(ls))"
done
if [ -f run_0.gpuscope ] && [ -f run_1.gpuscope ]; then
	[ "$(ranks run_1.gpuscope)" = "1 " ] || fail "run_1: ranks '$(ranks run_1.gpuscope)'"
	"$G" merge -o merged run_0.gpuscope run_1.gpuscope >merge.out 2>&1 || fail "merge: $(cat merge.out)"
	[ "$(ranks merged.gpuscope)" = "0 1 " ] || fail "merged: ranks '$(ranks merged.gpuscope)', want '0 1 '"
	"$G" stats -r rank_sum merged.gpuscope >rank_sum.out 2>&1 || fail "stats rank_sum: $(cat rank_sum.out)"
fi
[ "$fails" = 0 ] && echo "e2e_ddp_cpu: ok"
exit $((fails > 0))
