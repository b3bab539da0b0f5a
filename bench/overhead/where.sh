#!/usr/bin/env bash
# bench/overhead/where.sh - where the collection overhead goes: CPU profiles
# (perf, cpu-clock samples, no call graphs) and syscall counts (strace -c) of
# the launch-bound PyTorch step (workload b) under several configurations.
#
# Environment: BUILD (build folder), OUT (results), PERF / STRACE (tools),
#   STEPS (3000), STRACE_STEPS (300), CONFIGS ("none floor gpuscope+--trace=cuda"),
#   COMM (only the threads of this name in the by-library and by-symbol
#   reports: python3 is the launching thread), STEP_ARGS (more torch_step.py
#   arguments, e.g. "--pin-cpu 3").
# Writes per configuration: $OUT/<config>.dso.txt (self time by library),
#   <config>.sym.txt (top symbols of libcupti, libcuda, the collector, the
#   kernel), <config>.top.txt (the top symbols of every library),
#   <config>.comm.txt (by thread name), <config>.strace.txt.
# The program runs with the LD_LIBRARY_PATH this script was given (the
# tools of scripts/device-tools.sh set their own for themselves only).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/configs.sh"
BUILD=${BUILD:-$here/../../build}
OUT=${OUT:-$PWD/where-out}
PERF=${PERF:-perf}
STRACE=${STRACE:-strace}
STEPS=${STEPS:-3000}
STRACE_STEPS=${STRACE_STEPS:-300}
CONFIGS=${CONFIGS:-none floor gpuscope+--trace=cuda}
COMM=${COMM:-}
comm=()
[ -n "$COMM" ] && comm=(--comms "$COMM")
ldlp=${LD_LIBRARY_PATH-}
mkdir -p "$OUT"
tmp=$(mktemp -d)

# config -> command prefix words, one per line
prefix() {
	local c=$1 item
	case $c in
	none) ;;
	floor) echo env; echo "CUDA_INJECTION64_PATH=$BUILD/bench/floor.so" ;;
	gpuscope*)
		config_split "$c"
		echo env
		for item in "${cfg_envs[@]}"; do echo "$item"; done
		echo "$BUILD/gpuscope"; echo profile; echo --force
		for item in "${cfg_opts[@]}"; do echo "$item"; done
		echo -o; echo "$tmp/rep"; echo --
		;;
	esac
}

for c in $CONFIGS; do
	name=$(echo "$c" | tr -c 'A-Za-z0-9._\n-' '_')
	mapfile -t pre < <(prefix "$c")
	# shellcheck disable=SC2206
	cmd=(env "LD_LIBRARY_PATH=$ldlp" "${pre[@]}" python3 "$here/torch_step.py" ${STEP_ARGS:-} --steps "$STEPS")
	echo "== $c"
	timeout 120 "$PERF" record -F 2999 -o "$tmp/perf.data" -- "${cmd[@]}" >"$OUT/$name.run.txt" 2>&1
	tail -2 "$OUT/$name.run.txt"
	timeout 120 "$PERF" report -i "$tmp/perf.data" --no-children "${comm[@]}" --sort dso --stdio 2>/dev/null |
		grep -v '^$' | head -40 >"$OUT/$name.dso.txt"
	timeout 120 "$PERF" report -i "$tmp/perf.data" --no-children --sort comm --stdio 2>/dev/null |
		grep -v '^$' | head -30 >"$OUT/$name.comm.txt"
	timeout 120 "$PERF" report -i "$tmp/perf.data" --no-children "${comm[@]}" --sort dso,sym --stdio 2>/dev/null |
		grep -v '^$' | head -70 >"$OUT/$name.top.txt"
	timeout 180 "$PERF" report -i "$tmp/perf.data" --no-children "${comm[@]}" --sort dso,sym --stdio \
		--dsos "libcupti.so.13,libcuda.so.1,libgpuscope-collect.so,[kernel.kallsyms],libc.so.6" 2>/dev/null |
		grep -v '^$' | head -80 >"$OUT/$name.sym.txt"
	head -25 "$OUT/$name.dso.txt"
	cmd[${#cmd[@]}-1]=$STRACE_STEPS
	timeout 120 "$STRACE" -f -c -o "$OUT/$name.strace.txt" "${cmd[@]}" >/dev/null 2>&1
	head -25 "$OUT/$name.strace.txt"
	rm -f "$tmp/perf.data" "$tmp/rep.gpuscope"
done
rm -rf "$tmp"
