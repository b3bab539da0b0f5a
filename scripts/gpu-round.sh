#!/usr/bin/env bash
# gpu-round.sh - everything one session runs on the GPU machine, in one command.
#
# Build here first (scripts/build.sh build; bench/overhead/build.sh build;
# bench/sampler/build.sh build), pack the part the machine needs
# (scripts/device-pack.sh build .device/b), carry .device/b (and
# .device/tools.txz for the "where" part: perf and strace with their
# libraries), then on the GPU machine:
#   B=.device/b bash scripts/gpu-round.sh        # results under $OUT
# PARTS selects, in this order:
#   comm     the 2-GPU zoo case (both GPUs; first, alone on the machine)
#   tests    tests/gpu                       (GPU 1 when there are 2)
#   zoo      the 1-GPU zoo cases             (GPU 1)
#   sampler  the NVML sampler's CPU cost     (GPU 1)
#   where    perf/strace profiles of the overhead (GPU 1)
#   diag     overhead breakdown by knob, workload b (GPU 0)
#   diaga    the same breakdown, workload a      (GPU 1)
#   overhead the overhead benchmark a, b, c  (GPU 0)
# Each part packs its results into $OUT as soon as it ends and runs under a
# time limit, so a command stopped at the device's limit still returns what
# finished: $OUT is emptied by the next call.
set -u
cd "$(dirname "$0")/.."
B=$(cd "${B:-build}" && pwd) || exit 2
OUT=${OUT:-/tmp/gpu-round}
PARTS=${PARTS:-comm tests zoo sampler overhead}
w=$OUT/work
mkdir -p "$w"
exec > >(tee -a "$OUT/round.log") 2>&1
has() { [[ " $PARTS " == *" $1 "* ]]; }
LIMIT_S=${LIMIT_S:-240}
pack() {     # pack NAME DIR...: $OUT/NAME.tgz from the directories under $w that exist
	local name=$1 d; shift
	local have=()
	for d in "$@"; do [ -e "$w/$d" ] && have+=("$d"); done
	[ ${#have[@]} -gt 0 ] && (cd "$w" && tar czf "$OUT/$name.tgz" "${have[@]}")
}
echo "== gpu round $(date -u +%FT%TZ) on $(hostname), parts: $PARTS"
nvidia-smi --query-gpu=index,name,driver_version,temperature.gpu,clocks.sm --format=csv,noheader
ngpu=$(nvidia-smi -L | wc -l)
second=$(( ngpu > 1 ? 1 : 0 ))
t0=$(date +%s)

if has comm && [ "$ngpu" -ge 2 ]; then
	echo "== zoo comm-wait (2 GPUs)"
	ZOO_CASES=comm-wait ZOO_RUNS=${COMM_RUNS:-5} ZOO_TIMEOUT=45 timeout "${COMM_LIMIT_S:-200}" \
		bash examples/zoo/record.sh "$B" "$w/zoo-comm" >"$w/comm.log" 2>&1
	# a second profiled run of the fixed variant: diff's noise on real data
	ZOO_STEPS=${ZOO_PROFILE_STEPS:-5} timeout 45 "$B/gpuscope" profile -o "$w/zoo-comm/comm-wait.fixed.run2" \
		--force -- python3 "$PWD/examples/zoo/comm-wait.py" fixed >>"$w/comm.log" 2>&1
	tail -5 "$w/comm.log"
	mv "$w/comm.log" "$w/zoo-comm/" 2>/dev/null
	pack zoo-comm zoo-comm
	echo "== comm done after $(( $(date +%s) - t0 )) s"
fi

# the breakdown: which CUPTI activity kind costs what (API records off), then
# the defaults with API records
c=gpuscope+--trace=cuda
k=$c+GPUSCOPE_CUPTI_API_MODE=off+GPUSCOPE_CUPTI_KINDS
diag_configs="none floor $k=kernel $k=kernel,memcpy,memset $k=kernel,sync $k=kernel,memory
 $c+GPUSCOPE_CUPTI_API_MODE=off $c"

side_a() {   # GPU 0: overhead measurements
	export CUDA_VISIBLE_DEVICES=0
	if has diag; then
		echo "== overhead breakdown (workload b)"
		BUILD=$B OUT=$w/diag ROUNDS=${ROUNDS_DIAG:-5} W=b B_STEPS=${B_STEPS:-1000} BUDGET_S=${DIAG_BUDGET_S:-300} \
		CONFIGS=$(echo ${DIAG_CONFIGS:-$diag_configs}) timeout "${DIAG_LIMIT_S:-420}" bash bench/overhead/run.sh
		pack diag diag
	fi
	if has overhead; then
		echo "== overhead a, b"
		BUILD=$B OUT=$w/overhead-ab ROUNDS=${ROUNDS_AB:-5} W="a b" BUDGET_S=${AB_BUDGET_S:-200} \
		CONFIGS=${AB_CONFIGS:-none gpuscope floor torchprof} timeout "$LIMIT_S" bash bench/overhead/run.sh
		pack overhead overhead-ab
		if [ "$ngpu" -lt 2 ]; then
			echo "== overhead c (resnet-50)"
			BUILD=$B OUT=$w/overhead-c ROUNDS=${ROUNDS_C:-5} W=c BUDGET_S=${C_BUDGET_S:-200} \
			CONFIGS=${C_CONFIGS:-none gpuscope torchprof floor} timeout "$LIMIT_S" bash bench/overhead/run.sh
			pack overhead overhead-ab overhead-c
		fi
	fi
}

side_b() {   # GPU 1 (or 0): GPU tests, the zoo, the sampler, profiles
	export CUDA_VISIBLE_DEVICES=$second
	if has tests; then
		echo "== tests/gpu"
		GS_BUILD_DIR=$B WORK=$w/gputests KEEP=$w/gputests-keep timeout "$LIMIT_S" bash tests/gpu/run.sh
		pack gputests gputests-keep gputests/logs
	fi
	if has zoo; then
		echo "== zoo (1 GPU cases)"
		ZOO_CASES="dataloader launch-bound sync pageable serial-copy tensor-core underfill alloc-churn" \
			timeout "$LIMIT_S" bash examples/zoo/record.sh "$B" "$w/zoo"
		pack zoo zoo
	fi
	if has overhead && [ "$ngpu" -ge 2 ]; then
		echo "== overhead c (resnet-50), beside a and b on GPU 0"
		BUILD=$B OUT=$w/overhead-c ROUNDS=${ROUNDS_C:-5} W=c BUDGET_S=${C_BUDGET_S:-200} \
		CONFIGS=${C_CONFIGS:-none gpuscope torchprof floor} timeout "$LIMIT_S" bash bench/overhead/run.sh
		pack overhead-c overhead-c
	fi
	if has diaga; then
		echo "== overhead breakdown (workload a)"
		BUILD=$B OUT=$w/diaga ROUNDS=${ROUNDS_DIAGA:-3} W=a A_LAUNCHES=100000 BUDGET_S=150 \
		CONFIGS=$(echo ${DIAG_CONFIGS:-$diag_configs}) timeout 200 bash bench/overhead/run.sh
		pack diaga diaga
	fi
	if has sampler && [ -x "$B/bench_sampler" ]; then
		echo "== sampler cost"
		timeout 60 "$B/bench_sampler" 8 | tee "$w/sampler.txt"
		mkdir -p "$w/misc" && mv "$w/sampler.txt" "$w/misc/"
		pack misc misc
	fi
	if has where && [ -f .device/tools.txz ]; then
		echo "== where the overhead goes (perf, strace)"
		mkdir -p /tmp/gstools && tar xJf .device/tools.txz -C /tmp/gstools
		export LD_LIBRARY_PATH=/tmp/gstools/tools/lib
		PERF=/tmp/gstools/tools/perf STRACE=/tmp/gstools/tools/strace BUILD=$B OUT=$w/where \
			CONFIGS=${WHERE_CONFIGS:-none floor gpuscope+--trace=cuda} \
			timeout "${WHERE_LIMIT_S:-300}" bash bench/overhead/where.sh
		unset LD_LIBRARY_PATH
		mkdir -p "$w/misc"
		pack misc misc where
	fi
}

# wait for the two sides by pid: a bare `wait` also waits for the tee of
# the exec above, which only ends with this script (the earlier rounds hung
# there until the device's limit)
side_a >"$OUT/side-a.log" 2>&1 &
pa=$!
side_b >"$OUT/side-b.log" 2>&1 &
pb=$!
wait "$pa" "$pb"
echo "== total $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
