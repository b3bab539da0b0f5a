#!/usr/bin/env bash
# t_ddp.sh - two ranks of DistributedDataParallel on two GPUs (issue 25; skipped
# with fewer): the straggler variant of examples/ddp/ddp_train.py (rank 1
# computes 30 ms more on the CPU before each backward) under one profile of
# torchrun: analyze must name rank 1 the straggler, with rank 0's time in the
# collectives counted as waiting; then one gpuscope per rank (-o run_%q{RANK})
# and merge: the merged report names the same straggler.
. "$(dirname "$0")/lib.sh"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 2 ] || { echo "SKIP: needs 2 GPUs ($ngpu here)"; exit 77; }
python3 -c 'import torch; assert torch.cuda.device_count() >= 2' 2>/dev/null || { echo "SKIP: no torch with 2 GPUs"; exit 77; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
prog=$here/../../examples/ddp/ddp_train.py

straggler_of() { # REPORT: "RANK WAITING_S_OF_RANK_0" from analyze's JSON
	"$GPUSCOPE" analyze --format json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = [f for f in d["findings"] if f["id"] == "straggler"]
rows = {r["rank"]: r for r in (d.get("ranks") or {}).get("rows", [])}
print(s[0]["title"].split()[1] if s else "-", rows.get(0, {}).get("waiting_s", 0))'
}

profile ddp_straggler -- torchrun --nproc_per_node 2 "$prog" straggler 10
keep ddp_straggler
read -r who wait0 <<<"$(straggler_of "$REPORT")"
[ "$who" = 1 ] || fail "one report: straggler '$who', want rank 1"
python3 -c "import sys; sys.exit(0 if float('$wait0') > 0.010 else 1)" ||
	fail "one report: rank 0 waited $wait0 s in collectives over 10 steps of 30 ms lag (want > 10 ms)"

cd "$WORK" || exit 1
rm -f run_0.gpuscope run_1.gpuscope
timeout 300 torchrun --nproc_per_node 2 --no-python "$GPUSCOPE" profile -o 'run_%q{RANK}' -- \
	python3 "$prog" straggler 10 >"$WORK/perrank.out" 2>&1 || fail "per-rank profiles: $(tail -3 "$WORK/perrank.out")"
if [ -f run_0.gpuscope ] && [ -f run_1.gpuscope ]; then
	"$GPUSCOPE" merge --force --align -o merged run_0.gpuscope run_1.gpuscope || fail "merge"
	read -r who wait0 <<<"$(straggler_of merged.gpuscope)"
	[ "$who" = 1 ] || fail "merged per-rank reports: straggler '$who', want rank 1"
	[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp run_0.gpuscope run_1.gpuscope merged.gpuscope "$KEEP/"
else
	fail "no per-rank reports (files: $(ls))"
fi
finish
