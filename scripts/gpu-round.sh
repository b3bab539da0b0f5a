#!/usr/bin/env bash
# gpu-round.sh - everything one session runs on the GPU machine, in one command.
#
# Build here first (scripts/build.sh build; bench/overhead/build.sh build;
# bench/sampler/build.sh build), carry build/, then on the GPU machine:
#   bash scripts/gpu-round.sh            # results under $OUT
# On a 2-GPU machine the zoo and GPU tests run on GPU 1 while the overhead
# benchmark runs on GPU 0, then the 2-GPU zoo case runs on both.
# PARTS selects: "tests zoo overhead sampler comm" (default all).
# Each part packs its results into $OUT as soon as it ends and runs under a
# time limit (LIMIT_S, default 240 s a part), so a command stopped at the
# device's limit still returns what finished: $OUT is emptied by the next call.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
OUT=${OUT:-/tmp/gpu-round}
PARTS=${PARTS:-tests zoo overhead sampler comm}
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
echo "== gpu round $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=index,name,driver_version,temperature.gpu,clocks.sm --format=csv,noheader
ngpu=$(nvidia-smi -L | wc -l)
second=$(( ngpu > 1 ? 1 : 0 ))
t0=$(date +%s)

side_a() {   # GPU 0: the overhead benchmark
	export CUDA_VISIBLE_DEVICES=0
	if has overhead; then
		echo "== overhead a,b (breakdown)"
		BUILD=$B OUT=$w/overhead-ab ROUNDS=${ROUNDS_AB:-4} W="a b" BUDGET_S=200 \
		CONFIGS="none gpuscope floor torchprof gpuscope+--trace=cuda gpuscope+--trace=cuda+GPUSCOPE_CUPTI_API_MODE=off gpuscope+--trace=cuda+GPUSCOPE_CUPTI_API_MODE=off+GPUSCOPE_CUPTI_KINDS=kernel gpuscope+--trace=nvtx,osrt" \
			timeout "$LIMIT_S" bash bench/overhead/run.sh
		pack overhead overhead-ab
		echo "== overhead c (resnet-50)"
		BUILD=$B OUT=$w/overhead-c ROUNDS=${ROUNDS_C:-3} W="c" BUDGET_S=150 \
		CONFIGS="none gpuscope torchprof floor" timeout "$LIMIT_S" bash bench/overhead/run.sh
		pack overhead overhead-ab overhead-c
	fi
}

side_b() {   # GPU 1 (or 0): GPU tests, the zoo, the sampler
	export CUDA_VISIBLE_DEVICES=$second
	if has tests; then
		echo "== tests/gpu"
		GS_BUILD_DIR=$PWD/$B WORK=$w/gputests KEEP=$w/gputests-keep timeout "$LIMIT_S" bash tests/gpu/run.sh
		pack gputests gputests-keep gputests/logs
	fi
	if has zoo; then
		echo "== zoo (1 GPU cases)"
		ZOO_CASES="dataloader launch-bound sync pageable serial-copy tensor-core underfill alloc-churn" \
			timeout "$LIMIT_S" bash examples/zoo/record.sh "$B" "$w/zoo"
		pack zoo zoo
	fi
	if has sampler && [ -x "$B/bench_sampler" ]; then
		echo "== sampler cost"
		timeout 60 "$B/bench_sampler" 8
	fi
}

side_a >"$OUT/side-a.log" 2>&1 &
side_b >"$OUT/side-b.log" 2>&1 &
wait
echo "== both sides done after $(( $(date +%s) - t0 )) s"
if has comm && [ "$ngpu" -ge 2 ]; then
	unset CUDA_VISIBLE_DEVICES
	echo "== zoo comm-wait (2 GPUs)"
	ZOO_CASES=comm-wait ZOO_TIMEOUT=40 timeout "$LIMIT_S" bash examples/zoo/record.sh "$B" "$w/zoo-comm" \
		>"$OUT/comm.log" 2>&1
	pack zoo-comm zoo-comm
fi
echo "== total $(( $(date +%s) - t0 )) s"
ls -la "$OUT"
