#!/usr/bin/env bash
# bench/overhead/topo.sh - does thread placement explain the bimodal runs of
# CUPTI-traced workload (a)?  Runs gpu_many untraced and under the bare
# CUPTI floor with four placements, ROUNDS times each, alternating:
#   free  no pinning
#   one   one logical CPU (the launching thread and CUPTI's worker share it)
#   sib   one physical core, both SMT siblings (when the machine has SMT)
#   two   two logical CPUs on two different physical cores
# Writes $OUT/topology.txt (lscpu, siblings) and $OUT/topo.csv; prints
# the medians.  Environment: BUILD, OUT, ROUNDS (3), A_LAUNCHES (100000).
set -u
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$here/../../build}
OUT=${OUT:-$PWD/topo-out}
ROUNDS=${ROUNDS:-3}
A_LAUNCHES=${A_LAUNCHES:-100000}
mkdir -p "$OUT"
sys=/sys/devices/system/cpu
{
	lscpu
	echo
	for d in $(ls -d "$sys"/cpu[0-9]* | sort -V); do
		echo "${d##*/} siblings $(cat "$d/topology/thread_siblings_list") core $(cat "$d/topology/core_id") package $(cat "$d/topology/physical_package_id")"
	done
} >"$OUT/topology.txt" 2>&1
read -r a b < <(bash "$here/cpus.sh" 2 | tr , ' ')
sib=$(cat "$sys/cpu$a/topology/thread_siblings_list" 2>/dev/null)
declare -A pins=([free]="" [one]="$a" [two]="$a,$b")
[ -n "$sib" ] && [ "$sib" != "$a" ] && pins[sib]=$sib
echo "placements: ${!pins[*]} (one=$a two=$a,$b sib=${sib:-none})" | tee "$OUT/placements.txt"
csv=$OUT/topo.csv
echo "config,placement,round,ns_per_launch" >"$csv"
for r in $(seq "$ROUNDS"); do
	for p in "${!pins[@]}"; do
		for c in none floor; do
			pre=()
			[ -n "${pins[$p]}" ] && pre=(taskset -c "${pins[$p]}")
			if [ "$c" = floor ]; then
				v=$(CUDA_INJECTION64_PATH=$BUILD/bench/floor.so "${pre[@]}" "$BUILD/tests/gpu/gpu_many" "$A_LAUNCHES" 2>/dev/null | awk '{ print $4 }')
			else
				v=$("${pre[@]}" "$BUILD/tests/gpu/gpu_many" "$A_LAUNCHES" 2>/dev/null | awk '{ print $4 }')
			fi
			echo "$c,$p,$r,$v" | tee -a "$csv"
		done
	done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = sorted({(r["placement"], r["config"]) for r in rows})
for p, c in keys:
    v = [float(r["ns_per_launch"]) for r in rows if r["placement"] == p and r["config"] == c and r["ns_per_launch"]]
    if v:
        print("%-5s %-6s median %7.1f  runs %s" % (p, c, statistics.median(v), " ".join("%.0f" % x for x in v)))
PY
