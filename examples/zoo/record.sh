#!/usr/bin/env bash
# record.sh - record the bottleneck zoo on a GPU machine.
#
#   examples/zoo/record.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a gpuscope build (holds gpuscope and examples/zoo/zoo-<case>);
# OUT_DIR (default BUILD_DIR/zoo-record) receives, laid out as tests/data/zoo/:
#   <case>.broken.gpuscope, <case>.fixed.gpuscope  profiles trimmed to a few steps
#   timings.json   {"<case>": {"broken_ms": median, "fixed_ms": median, "runs": N},
#                   "machine": ..., "date": ...}  unprofiled, median of N runs
#   record.log     every command and its output
#
# For each case it first runs broken and fixed alternately ZOO_RUNS times
# without profiling (each run prints its median step time), then each variant
# once under `gpuscope profile` with ZOO_STEPS=ZOO_PROFILE_STEPS measured
# steps, so that every report stays small (one over 1 MB is recorded again
# with 2 steps; a warning if it is still over).
# comm-wait runs only when at least 2 GPUs are visible.  A failing run or
# case is reported and skipped; the exit status is 1 if anything failed.
#
# Environment:
#   ZOO_RUNS=5            unprofiled runs per variant
#   ZOO_PROFILE_STEPS=5   measured steps in a profiled run
#   ZOO_CASES="..."       the cases to record (default: all)
#   ZOO_TIMEOUT=60        seconds allowed for one run
#   PYTHON=python3
set -u -o pipefail

ALL_CASES="dataloader launch-bound host-bound sync pageable serial-copy tensor-core underfill alloc-churn comm-wait mem-leak mem-oom mem-fragmentation"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: record.sh BUILD_DIR [OUT_DIR]" >&2
	exit 2
fi
build=$(cd "$1" 2>/dev/null && pwd) || { echo "record.sh: no build directory '$1'" >&2; exit 2; }
out=${2:-$build/zoo-record}
here=$(cd "$(dirname "$0")" && pwd)
runs=${ZOO_RUNS:-5}
psteps=${ZOO_PROFILE_STEPS:-5}
cases=${ZOO_CASES:-$ALL_CASES}
limit=${ZOO_TIMEOUT:-60}
py=${PYTHON:-python3}
gpuscope=$build/gpuscope

# No NVLink multicast on shared machines (see comm-wait.py).
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}

mkdir -p "$out" || exit 2
log=$out/record.log
results=$out/.runs.tsv
: >"$log"
: >"$results"
failed=""

say() { echo "record: $*" | tee -a "$log"; }

# Set cmd to the command line of a case (a .cu case's binary or a .py script).
cmd=()
case_cmd() {
	local c=$1
	if [ -f "$here/$c.py" ]; then
		cmd=("$py" "$here/$c.py")
	elif [ -x "$build/examples/zoo/zoo-$c" ]; then
		cmd=("$build/examples/zoo/zoo-$c")
	else
		return 1
	fi
}

gpu_count() {
	local n
	n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ') || n=0
	if [ "$n" -eq 0 ]; then
		n=$($py -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null) || n=0
	fi
	if [ -n "${CUDA_VISIBLE_DEVICES-}" ]; then
		local v
		v=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
		[ "$v" -lt "$n" ] && n=$v
	fi
	echo "$n"
}

# run_once CASE VARIANT: one unprofiled run; appends "case variant ms" to $results.
run_once() {
	local c=$1 v=$2 output ms rc
	case_cmd "$c" || return 1
	echo "+ ${cmd[*]} $v" >>"$log"
	output=$(timeout "$limit" "${cmd[@]}" "$v" 2>&1)
	rc=$?
	echo "$output" >>"$log"
	ms=$(echo "$output" | sed -n "s/^zoo: case=$c variant=$v step_ms=\([0-9.]*\) steps=[0-9]*\$/\1/p" | tail -n 1)
	if [ $rc -ne 0 ] || [ -z "$ms" ]; then
		say "$c $v: run failed (exit $rc)"
		return 1
	fi
	printf '%s\t%s\t%s\n' "$c" "$v" "$ms" >>"$results"
}

# profile_once CASE VARIANT [STEPS]: one profiled run into $out/CASE.VARIANT.gpuscope.
# A report over 1 MB is recorded again with 2 measured steps.
profile_once() {
	local c=$1 v=$2 steps=${3:-$psteps} name=$out/$1.$2 size rc
	case_cmd "$c" || return 1
	rm -f "$name.gpuscope"
	echo "+ ZOO_STEPS=$steps $gpuscope profile -o $name --force -- ${cmd[*]} $v" >>"$log"
	ZOO_STEPS=$steps timeout "$limit" "$gpuscope" profile -o "$name" --force -- "${cmd[@]}" "$v" >>"$log" 2>&1
	rc=$?
	# -o NAME writes NAME.gpuscope; accept NAME itself as well.
	if [ ! -f "$name.gpuscope" ] && [ -f "$name" ]; then
		mv "$name" "$name.gpuscope"
	fi
	if [ $rc -ne 0 ] || [ ! -s "$name.gpuscope" ]; then
		say "$c $v: profile failed (exit $rc)"
		return 1
	fi
	size=$(stat -c %s "$name.gpuscope")
	say "$c $v: profile $(basename "$name").gpuscope, $steps steps, $size bytes"
	if [ "$size" -gt 1048576 ]; then
		if [ "$steps" -gt 2 ]; then
			say "$c $v: report over 1 MB, recording 2 steps instead"
			profile_once "$c" "$v" 2
			return
		fi
		say "$c $v: warning: report over 1 MB even with 2 steps"
	fi
}

start=$(date +%s)
ngpu=$(gpu_count)
machine=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
machine="${ngpu} x ${machine:-unknown GPU}"
say "machine: $machine; build $build; output $out; $runs runs; $psteps profiled steps"
[ -x "$gpuscope" ] || say "warning: no $gpuscope, profiles will fail"

for c in $cases; do
	case " $ALL_CASES " in
	*" $c "*) ;;
	*) say "$c: unknown case"; failed="$failed $c"; continue ;;
	esac
	if [ "$c" = comm-wait ] && [ "$ngpu" -lt 2 ]; then
		say "$c: skipped, needs 2 GPUs ($ngpu visible)"
		continue
	fi
	if ! case_cmd "$c"; then
		say "$c: not built (no $build/examples/zoo/zoo-$c)"
		failed="$failed $c"
		continue
	fi
	t0=$(date +%s)
	ok=1
	for ((r = 0; r < runs; r++)); do
		run_once "$c" broken || ok=0
		run_once "$c" fixed || ok=0
	done
	profile_once "$c" broken || ok=0
	profile_once "$c" fixed || ok=0
	[ $ok = 1 ] || failed="$failed $c"
	say "$c: done in $(($(date +%s) - t0)) s"
done

# timings.json from the per-run medians: the median over runs of each variant.
$py - "$results" "$out/timings.json" "$machine" <<'PYEOF' 2>&1 | tee -a "$log" || { say "could not write timings.json"; failed="$failed timings"; }
import json, sys, time
from collections import defaultdict

rows = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    c, v, ms = line.split()
    rows[c][v].append(float(ms))

def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])

doc = {}
for c, vs in rows.items():
    if vs["broken"] and vs["fixed"]:
        doc[c] = {"broken_ms": round(median(vs["broken"]), 4),
                  "fixed_ms": round(median(vs["fixed"]), 4),
                  "runs": min(len(vs["broken"]), len(vs["fixed"]))}
doc["machine"] = sys.argv[3]
doc["date"] = time.strftime("%Y-%m-%d", time.gmtime())
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
for c in rows:
    if c in doc:
        d = doc[c]
        print(f"record: {c}: broken {d['broken_ms']} ms, fixed {d['fixed_ms']} ms, "
              f"gain {d['broken_ms'] / d['fixed_ms']:.2f}x over {d['runs']} runs")
PYEOF
[ -f "$out/timings.json" ] && $py -c 'import sys; print(open(sys.argv[1]).read())' "$out/timings.json" >>"$log"
rm -f "$results"
say "finished in $(($(date +%s) - start)) s"
if [ -n "$failed" ]; then
	say "failed:$failed"
	exit 1
fi
exit 0
