#!/usr/bin/env bash
# gpu2-round.sh - the 2-GPU round of issue 25 (device kind nvidia-h200-x2), in one
# command.  Build and pack here as for scripts/gpu-round.sh
# (scripts/device-pack.sh build .device/b), carry .device/b, then on the machine:
#   B=.device/b PARTS="ddp straggler topo" bash scripts/gpu2-round.sh   # results in $OUT
#
# Parts, each alone on the machine, each packed into $OUT/NAME.tgz when it ends
# (a device call returns at most 8 files; every part's log goes into
# $OUT/logs.tgz):
#   ddp        DDP comm-wait (examples/ddp/ddp_train.py): broken (1 MB buckets,
#              gradient copies, buffer broadcasts) and fixed, unprofiled and
#              alternating, DDP_RUNS rounds (default 5) -> timings.json with the
#              medians and the measured gain; then one profile of each under
#              torchrun and analyze's exposed-communication estimate beside
#              the measured gain (ddp/gains.txt)                         ~150 s
#   straggler  tests/gpu/t_ddp.sh: rank 1 computes 30 ms more per step; one
#              profile of torchrun and one gpuscope per rank (-o run_%q{RANK})
#              merged: both must name rank 1 (reports kept)              ~80 s
#   topo       gpuscope topo and health, the raw NVML readings recorded
#              (monitor --record, for tests/data/nvml), and nvidia-smi topo -m
#              and topo -p2p r printed in the same run to check them    ~20 s
# Every program runs with NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# and NVSHMEM_DISABLE_NVLS=1 (no NVLink multicast on shared machines).
set -u
cd "$(dirname "$0")/.."
B=$(cd "${B:-build}" && pwd) || exit 2
OUT=${OUT:-/tmp/gpu2-round}
PARTS=${PARTS:-ddp straggler topo}
LIMIT_S=${LIMIT_S:-280}
G=$B/gpuscope
w=${WORK:-/tmp/gpu2-round-work}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$w/logs" "$OUT"
log=$OUT/round.log
say() { echo "$*" | tee -a "$log"; }
has() { [[ " $PARTS " == *" $1 "* ]]; }
pack() { # NAME DIR: $OUT/NAME.tgz of $w/DIR
	[ -e "$w/$2" ] && (cd "$w" && tar czf "$OUT/$1.tgz" "$2")
}
part() {
	local t=$(date +%s)
	has "$1" || return 0
	say "== $1 ($(date -u +%T))"
	timeout "$LIMIT_S" bash -c "$(declare -f "part_$1" say); part_$1" >"$w/logs/$1.log" 2>&1
	say "== $1: exit $? in $(( $(date +%s) - t )) s"
	tail -20 "$w/logs/$1.log" >>"$log"
	pack "$1" "$1"
	pack logs logs
}
export G w B log OUT

part_ddp() {
	set -u
	local d=$w/ddp prog=examples/ddp/ddp_train.py runs=${DDP_RUNS:-5} steps=${DDP_STEPS:-30}
	mkdir -p "$d"
	for ((i = 1; i <= runs; i++)); do
		for v in broken fixed; do
			torchrun --nproc_per_node 2 "$prog" "$v" "$steps" 2>>"$d/runs.err" |
				grep '^zoo: ' | tee -a "$d/runs.txt"
		done
	done
	for v in broken fixed; do
		"$G" profile --force -o "$d/ddp.$v" -- torchrun --nproc_per_node 2 "$prog" "$v" 8 \
			>"$d/profile.$v.out" 2>&1
		"$G" analyze "$d/ddp.$v.gpuscope" >"$d/analyze.$v.txt" 2>&1
		"$G" analyze --format json "$d/ddp.$v.gpuscope" >"$d/analyze.$v.json" 2>&1
	done
	python3 - "$d" <<'PY'
import json, re, statistics, sys
d = sys.argv[1]
ms = {"broken": [], "fixed": []}
for line in open(d + "/runs.txt"):
    m = re.match(r"zoo: case=ddp variant=(\w+) step_ms=([0-9.]+)", line)
    if m and m.group(1) in ms:
        ms[m.group(1)].append(float(m.group(2)))
t = {"ddp-comm-wait": {"broken_ms": statistics.median(ms["broken"]), "fixed_ms": statistics.median(ms["fixed"]),
                       "runs": min(len(ms["broken"]), len(ms["fixed"]))}}
json.dump(t, open(d + "/timings.json", "w"), indent=1)
meas = 1 - t["ddp-comm-wait"]["fixed_ms"] / t["ddp-comm-wait"]["broken_ms"]
est = sum(f["gain"] for f in json.load(open(d + "/analyze.broken.json"))["findings"]
          if f["id"] == "exposed-communication")
with open(d + "/gains.txt", "w") as f:
    print("ddp comm-wait: measured gain %.1f%% (median step %.3f -> %.3f ms over %d runs), "
          "exposed-communication estimate %.1f%%" % (meas * 100, t["ddp-comm-wait"]["broken_ms"],
          t["ddp-comm-wait"]["fixed_ms"], t["ddp-comm-wait"]["runs"], est * 100), file=f)
PY
	cat "$d/gains.txt"
}

part_straggler() {
	local d=$w/straggler
	mkdir -p "$d"
	GS_BUILD_DIR=$B KEEP=$d WORK=$d/work T=ddp bash tests/gpu/run.sh
	rm -rf "$d/work"
}

part_topo() {
	local d=$w/topo
	mkdir -p "$d"
	nvidia-smi topo -m >"$d/nvidia-smi-topo-m.txt" 2>&1
	nvidia-smi topo -p2p r >"$d/nvidia-smi-topo-p2p-r.txt" 2>&1
	"$G" topo >"$d/topo.txt" 2>&1
	"$G" topo --format json >"$d/topo.json" 2>&1
	"$G" health >"$d/health.txt" 2>&1
	"$G" monitor --count 3 --interval 200 --record "$d/h200x2.topo.jsonl" --force >"$d/monitor.txt" 2>&1
	"$G" topo --replay "$d/h200x2.topo.jsonl" >"$d/topo.replay.txt" 2>&1
	cmp -s "$d/topo.txt" "$d/topo.replay.txt" && echo "topo: the replay prints what the GPUs did" ||
		echo "topo: the replay differs from the live run (see topo.txt, topo.replay.txt)"
	cat "$d/topo.txt" "$d/nvidia-smi-topo-m.txt"
}

say "== gpu2 round $(date -u +%FT%TZ) on $(hostname), parts: $PARTS"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee -a "$log"
[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || { say "fewer than 2 GPUs: this round needs nvidia-h200-x2"; exit 1; }
for p in ddp straggler topo; do
	part "$p"
done
say "== done $(date -u +%T)"
