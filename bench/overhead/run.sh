#!/usr/bin/env bash
# bench/overhead/run.sh - collection overhead on the GPU machine.
#
# Workloads: a) A_LAUNCHES empty kernel launches (gpu_many, CUDA C),
#            b) launch-bound PyTorch step 20 x (256x256 matmul + GELU),
#            c) torchvision ResNet-50 training step, batch 64, cudnn.benchmark off.
# Configurations: none, gpuscope (gpuscope profile), torchprof (torch.profiler
# CPU+CUDA; b and c only), floor (bare CUPTI kernels-only injection, floor.so);
# gpuscope_cb (API records from callbacks instead of activity records) on request,
# any variant "gpuscope+ENV=VALUE+--profile-option..." (to find where overhead goes),
# and "floor+FLOOR_CB=launch|launch-driver|domain" (empty CUPTI API callbacks, floor.c).
# Runs alternate (the order rotates every round), ROUNDS of each; medians.
# Also: bytes of report per kernel, gpuscope vs torch.profiler JSON (workload b).
#
# Environment: GPUSCOPE, GPU_MANY, FLOOR, CHECK (paths; defaults from BUILD=build),
#   OUT (results directory, default ./overhead-out), ROUNDS (5), W ("a b c"),
#   CONFIGS ("none gpuscope torchprof floor"), A_LAUNCHES (200000),
#   B_STEPS (300), B_BLOCKS (unset: one timing of all steps; K: the median of K
#   blocks, see torch_step.py), B_FIELD (us_per_step; cpu_us_per_step with
#   B_BLOCKS: the launching thread's CPU time), B_CALIBRATE (1: a CPU-only
#   calibration block before each block, torch_step.py's norm_step), C_STEPS (20), BUDGET_S (340: no new round starts after it),
#   PIN (CPUs for taskset -c; unset: no pinning).
# Writes $OUT/overhead.md (the table), $OUT/overhead.csv (every run),
# $OUT/runs.txt (each run's lines of figures: a run's spread with B_BLOCKS), and the
# first gpuscope report of each workload as $OUT/report_W.gpuscope with its
# `gpuscope info` in $OUT/info_W.txt (dropped records, counts).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/configs.sh"
BUILD=${BUILD:-$here/../../build}
GPUSCOPE=${GPUSCOPE:-$BUILD/gpuscope}
GPU_MANY=${GPU_MANY:-$BUILD/tests/gpu/gpu_many}
FLOOR=${FLOOR:-$BUILD/bench/floor.so}
CHECK=${CHECK:-$BUILD/cuda_report_check}
OUT=${OUT:-$PWD/overhead-out}
ROUNDS=${ROUNDS:-5}
W=${W:-a b c}
CONFIGS=${CONFIGS:-none gpuscope torchprof floor}
A_LAUNCHES=${A_LAUNCHES:-200000}
B_STEPS=${B_STEPS:-300}
B_BLOCKS=${B_BLOCKS:-}
B_FIELD=${B_FIELD:-us_per_step}
C_STEPS=${C_STEPS:-20}
BUDGET_S=${BUDGET_S:-340}
# Noise control, the same for every configuration: numpy's OpenBLAS threads
# spin on idle cores (38% of all CPU samples of workload b on the H200 VM)
# and the launching thread then competes with them; one thread each.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# PIN=CPUS (e.g. 4-7): every run on the same CPUs (taskset -c), the profiled
# program and gpuscope's threads alike, against run-to-run placement noise.
pin=""
[ -n "${PIN:-}" ] && pin="taskset -c $PIN"
mkdir -p "$OUT"
if [ ! -f "$FLOOR" ] && [[ " $CONFIGS " == *" floor "* ]]; then
	bash "$here/build.sh" "$BUILD" >/dev/null || echo "warning: cannot build floor.so" >&2
fi
tmp=$(mktemp -d)
csv=$OUT/overhead.csv
echo "workload,config,round,value" >"$csv"
t_start=$(date +%s)

cmd_of() {   # workload config round -> command words on stdout, one per line
	local w=$1 c=$2 r=$3 prof=""
	case $c in
	torchprof)
		[ "$w" = a ] && return 1
		if [ "$w" = b ] && [ "$r" = 1 ]; then prof="$tmp/torchprof_b.json"; else prof="-"; fi
		;;
	esac
	case $w in
	a) echo "$GPU_MANY"; echo "$A_LAUNCHES" ;;
	b) echo python3; echo "$here/torch_step.py"; echo --steps; echo "$B_STEPS"
	   [ -n "$B_BLOCKS" ] && { echo --blocks; echo "$B_BLOCKS"; }
	   [ -n "${B_CALIBRATE:-}" ] && echo --calibrate
	   [ -n "$prof" ] && { echo --torch-profiler; echo "$prof"; } ;;
	c) echo python3; echo "$here/resnet_step.py"; echo --steps; echo "$C_STEPS"
	   [ -n "$prof" ] && { echo --torch-profiler; echo "$prof"; } ;;
	esac
	return 0
}

steal() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }   # all CPUs' steal time, in ticks (USER_HZ 100)
run_one() {   # workload config round -> prints the metric
	local w=$1 c=$2 r=$3 out="$tmp/out.$w.$c" rc st0
	st0=$(steal)
	local -a cmd
	mapfile -t cmd < <(cmd_of "$w" "$c" "$r") || return 1
	[ "${#cmd[@]}" -gt 0 ] || return 1
	case $c in
	none|torchprof) $pin timeout 300 "${cmd[@]}" >"$out" 2>&1 ;;
	floor*)
		# variants: floor+ENV=VALUE (FLOOR_CB, see floor.c)
		config_split "$c"
		env "${cfg_envs[@]}" CUDA_INJECTION64_PATH="$FLOOR" $pin timeout 300 "${cmd[@]}" >"$out" 2>&1 ;;
	gpuscope*)
		# variants: gpuscope+ENV=VALUE+--profile-option...
		config_split "$c"
		local -a opts=("${cfg_opts[@]}") envs=("${cfg_envs[@]}")
		[ "$c" = gpuscope_cb ] && envs+=(GPUSCOPE_CUPTI_API_MODE=callback)
		rm -f "$tmp/rep_$w.gpuscope" "$tmp/rep_$w"
		env "${envs[@]}" $pin timeout 300 "$GPUSCOPE" profile "${opts[@]}" -o "$tmp/rep_$w" -- "${cmd[@]}" >"$out" 2>&1
		rc=$?
		[ "$rc" = 0 ] || { echo "gpuscope run failed ($w): $(tail -3 "$out")" >&2; return 1; }
		if [ "$r" = 1 ] && [ "$c" = gpuscope ]; then
			for f in "$tmp/rep_$w.gpuscope" "$tmp/rep_$w"; do
				[ -f "$f" ] && cp "$f" "$tmp/keep_$w.gpuscope" && break
			done
		fi
		;;
	esac
	awk -v t="$w $c $r" -v st="$st0 $(steal)" \
		'$1 ~ /^(launches|us_per_step|cpu_us_per_step|norm_step|collector_cpu_permille|ms_per_step|blocks_us|threads_cpu_ms)$/ { print t ": " $0 }
		 END { split(st, s, " "); print t ": steal_ms " (s[2] - s[1]) * 10 }' "$out" >>"$OUT/runs.txt"
	case $w in
	a) awk '$1 == "launches" { print $4 }' "$out" | tail -1 ;;
	b) awk -v f="$B_FIELD" '$1 == f { print $2 }' "$out" | tail -1 ;;
	c) awk '$1 == "ms_per_step" { print $2 }' "$out" | tail -1 ;;
	esac
}

read -r -a configs <<<"$CONFIGS"
nc=${#configs[@]}
rounds_done=0
for r in $(seq 1 "$ROUNDS"); do
	if [ $(( $(date +%s) - t_start )) -gt "$BUDGET_S" ]; then
		echo "budget reached: stopped after $rounds_done rounds"
		break
	fi
	for w in $W; do
		for i in $(seq 0 $((nc - 1))); do
			c=${configs[$(( (i + r - 1) % nc ))]}
			[ "$w" = a ] && [ "$c" = torchprof ] && continue
			v=$(run_one "$w" "$c" "$r")
			if [ -n "$v" ]; then
				echo "$w,\"$c\",$r,$v" >>"$csv"   # quoted: configs hold commas
				echo "round $r $w $c $v"
			else
				echo "round $r $w $c: no result"
			fi
		done
	done
	rounds_done=$r
done

# bytes per kernel (workload b): gpuscope report vs torch.profiler JSON
bytes_line=""
if [ -f "$tmp/keep_b.gpuscope" ] && [ -f "$tmp/torchprof_b.json" ]; then
	gk=$("$CHECK" "$tmp/keep_b.gpuscope" | awk '$1 == "kernels" { print $2 }')
	gb=$(stat -c %s "$tmp/keep_b.gpuscope")
	read -r tk tb < <(python3 -c '
import json, os, sys
p = sys.argv[1]
j = json.load(open(p))
ev = j["traceEvents"] if isinstance(j, dict) else j
print(sum(1 for e in ev if e.get("cat") == "kernel"), os.path.getsize(p))' "$tmp/torchprof_b.json")
	bytes_line=$(python3 -c 'import sys; gk,gb,tk,tb=map(float,sys.argv[1:]); print("| bytes per kernel (workload b) | gpuscope %.1f (%d B / %d kernels) | torch.profiler JSON %.1f (%d B / %d kernels) | ratio %.1fx |" % (gb/gk, gb, gk, tb/tk, tb, tk, (tb/tk)/(gb/gk)))' "$gk" "$gb" "$tk" "$tb")
fi

# the first gpuscope report of each workload, with its info (drops, counts)
for w in a b c; do
	f=$tmp/keep_$w.gpuscope
	[ -f "$f" ] || continue
	cp "$f" "$OUT/report_$w.gpuscope"
	"$GPUSCOPE" info "$f" >"$OUT/info_$w.txt" 2>&1
done

python3 - "$csv" "$OUT/overhead.md" "$A_LAUNCHES" "$rounds_done" "$bytes_line" <<'PY'
import csv, statistics, sys, datetime
rows = list(csv.DictReader(open(sys.argv[1])))
out, launches, rounds, bytes_line = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
unit = {"a": "ns per launch", "b": "us per step", "c": "ms per step"}
title = {"a": "a) %s empty kernel launches" % launches,
         "b": "b) PyTorch 20 x (256x256 matmul + GELU)",
         "c": "c) ResNet-50 training step, batch 64"}
target = {"a": ("abs_us", 1.0), "b": ("pct", 10.0), "c": ("pct", 2.0)}
lines = ["# Collection overhead (%s, %s rounds, medians)" % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), rounds), "",
         "paired: the median over rounds of each run's ratio to the same round's untraced run. "
         "lower quartile: of each configuration's runs, against the untraced runs' lower quartile "
         "(this machine's noise only ever adds time; 4 runs or more).", "",
         "| workload | config | runs | median | all runs | overhead vs none | paired | lower quartile | target |",
         "|---|---|---|---|---|---|---|---|---|"]
notes = []
for w in "abc":
    vals, by_round = {}, {}
    for r in rows:
        if r["workload"] == w:
            vals.setdefault(r["config"], []).append(float(r["value"]))
            by_round.setdefault(r["config"], {})[r["round"]] = float(r["value"])
    if not vals:
        continue
    base = statistics.median(vals["none"]) if "none" in vals else None
    def q1(v):
        return statistics.quantiles(v, n=4)[0] if len(v) >= 4 else None
    def lower(c):
        a, b = q1(vals[c]), q1(vals.get("none", []))
        if a is None:
            return ""
        if c == "none" or b is None:
            return "%.1f" % a
        if w == "a":
            return "%.1f (%+.2f us)" % (a, (a - b) / 1000.0)
        return "%.1f (%+.1f%%)" % (a, (a / b - 1) * 100)
    def paired(c):
        none = by_round.get("none", {})
        ratios = [v / none[k] for k, v in by_round[c].items() if none.get(k)]
        return "%+.1f%%" % ((statistics.median(ratios) - 1) * 100) if ratios else ""
    order = ["none", "gpuscope"] + sorted(c for c in vals if c not in ("none", "gpuscope", "floor", "torchprof")) + ["floor", "torchprof"]
    for c in order:
        if c not in vals:
            continue
        med = statistics.median(vals[c])
        ov, tg = "", ""
        if base and c != "none":
            if w == "a":
                d = (med - base) / 1000.0
                ov = "%+.2f us per launch (%+.1f%%)" % (d, (med / base - 1) * 100)
                if c == "gpuscope":
                    tg = "<= +1 us: %s" % ("met" if d <= 1.0 else "MISSED")
            else:
                p = (med / base - 1) * 100
                ov = "%+.1f%%" % p
                if c == "gpuscope":
                    tg = "<= %g%%: %s" % (target[w][1], "met" if p <= target[w][1] else "MISSED")
        lines.append("| %s | %s | %d | %.1f %s | %s | %s | %s | %s | %s |" % (
            title[w], c, len(vals[c]), med, unit[w], " ".join("%.1f" % v for v in vals[c]), ov,
            paired(c) if c != "none" else "", lower(c), tg))
    # a tracer cannot make a program faster: a traced configuration well below
    # the untraced runs means those were disturbed, and the workload's row is void
    fast = [c for c in vals if c != "none" and base and statistics.median(vals[c]) < base * 0.95]
    if fast:
        notes.append("note: %s: %s ran more than 5%% faster than the untraced runs: they were "
                     "disturbed; this workload's overheads are not valid" % (title[w], ", ".join(fast)))
if notes:
    lines += [""] + notes
if bytes_line:
    lines += ["", "| measure | gpuscope | torch.profiler | |", "|---|---|---|---|", bytes_line]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -rf "$tmp"
echo "total $(( $(date +%s) - t_start )) s"
