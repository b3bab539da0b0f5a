#!/usr/bin/env bash
# gpu-round.sh - everything one session runs on the GPU machine, in one command.
#
# Build here first (scripts/build.sh build; bench/overhead/build.sh build;
# bench/sampler/build.sh build), pack the part the machine needs
# (scripts/device-pack.sh build .device/b), carry .device/b (and
# .device/tools.txz for the "where" part: perf and strace with their
# libraries), then on the GPU machine:
#   B=.device/b PARTS="..." bash scripts/gpu-round.sh      # results under $OUT
#
# The parts run one after another, in this order, each alone on the machine:
# an overhead measurement that shares the CPUs or the other GPU with another
# workload is not worth having (session 2's round 3: the untraced launch-bound
# step ran slower than every traced one while ResNet trained beside it).
#   comm     the 2-GPU zoo case, and a second profile of its fixed variant  ~100 s
#   tests    tests/gpu                                                      ~30 s
#   zoo      the 1-GPU zoo cases (ZOO_CASES picks some)                     ~250 s
#   sampler  the NVML sampler's CPU cost (bench_sampler 8)                  ~40 s
#   topo     workload (a) untraced and under the CUPTI floor, pinned four ways ~60 s
#   diag     overhead breakdown by CUPTI kind, workload b (DIAG_CONFIGS)    ~300 s
#   diaga    the same breakdown, workload a (DIAGA_CONFIGS)                 ~80 s
#   ab       the overhead benchmark, workloads a and b (AB_W, AB_CONFIGS)   ~200 s
#   c        the overhead benchmark, ResNet-50 (C_CONFIGS)                  ~250 s
#   apimode  workload b: API records from callbacks against CUPTI's API
#            activity records (and hybrid: syncs from callbacks), the
#            SYNCHRONIZATION kind off in all, with the floor and the floor
#            with empty launch callbacks (pinned)                           ~300 s
#   where    perf/strace profiles of the overhead, workload b               ~150 s
#   pm       the cost of PM sampling (--pm-sampling at its default 1 ms and
#            at 250 us) beside a plain profile, workloads a, b and c
#            (issue 24: measured only on gpu_kmetrics so far)             ~280 s
#   ondemand the idle cost of profile --on-demand (never triggered) beside
#            unprofiled and a plain profile, workloads a, b and c (issue 23) ~270 s
#   odb      the idle cost of --on-demand on workload b alone, pinned, each run
#            the median of 20 timed blocks (B_BLOCKS), with and without the
#            Python allocator hook (issue 23: round 1 and 2 gave no valid
#            figure, the untraced runs spread 459-774 us)                  ~220 s
#   lsb      the idle cost of --on-demand, workload b, configurations in
#            lockstep (bench/overhead/lockstep.sh: none, none2 (A/A),
#            ondemand, capture, profile; LS_COPIES processes each, LS_RUN_S;
#            LS_STOP=0: processes not stopped between their turns;
#            LS_HEAP_RANDOM=B: random heap offsets in every process;
#            LS_MAP_RANDOM=KB: a random 0..KB KiB mapping first in every one;
#            LS_LIFETIME=M: each process replaced after M turns)           ~200 s
#   lsc      the same on ResNet-50 (workload c)                            ~200 s
#   irq      the interrupts workload b's pinned CPU and the others take, per
#            second, unprofiled, --on-demand idle and its parts
#            (bench/overhead/irqs.py; IRQ_STEPS steps a run)                ~60 s
#   layout   where torch's and CUDA's libraries land from libc's, unprofiled,
#            --on-demand and --on-demand with GPUSCOPE_KEEP_LAYOUT=0
#            (bench/overhead/map_offset.py --cuda, LAYOUT_RUNS each)       ~60 s
#   hooks    where the launch-bound step's idle cost could go: the
#            launching thread's calls per step into the collector's
#            OS-runtime wrappers (hookcount.so), what one lock wrapper
#            costs (bench/nvtx mutex, rwlock), and perf profiles of the
#            launching thread unprofiled and under --on-demand (needs
#            .device/tools.txz: scripts/device-tools.sh)                   ~150 s
# ("overhead" means "ab c".)  A device call is at most 10 minutes: split the
# parts over calls, e.g. PARTS="tests ab", then PARTS="c sampler".
# Each part packs its results into $OUT/NAME.tgz (and every part's log into
# $OUT/logs.tgz) as soon as it ends and runs under a time limit (LIMIT_S,
# default 300 s), so a command stopped at the device's limit still returns
# what finished: $OUT is emptied by the next call.
set -u
cd "$(dirname "$0")/.."
B=$(cd "${B:-build}" && pwd) || exit 2
OUT=${OUT:-/tmp/gpu-round}
PARTS=${PARTS:-tests ab}
PARTS=${PARTS//overhead/ab c}
# the work folder is outside $OUT: only the packed results come back (a device
# call returns at most 8 files)
w=${WORK:-/tmp/gpu-round-work}
mkdir -p "$w/logs" "$OUT"
log=$OUT/round.log
has() { [[ " $PARTS " == *" $1 "* ]]; }
LIMIT_S=${LIMIT_S:-300}
pack() {     # pack NAME DIR...: $OUT/NAME.tgz from the directories under $w that exist
	local name=$1 d; shift
	local have=()
	for d in "$@"; do [ -e "$w/$d" ] && have+=("$d"); done
	[ ${#have[@]} -gt 0 ] && (cd "$w" && tar czf "$OUT/$name.tgz" "${have[@]}")
}
say() { echo "$*" | tee -a "$log"; }
# part NAME: run the function part_NAME under the time limit, log to $OUT/NAME.log
part() {
	local t=$(date +%s)
	has "$1" || return 0
	say "== $1 ($(date -u +%T))"
	"part_$1" >"$w/logs/$1.log" 2>&1
	tail -25 "$w/logs/$1.log" >>"$log"
	pack logs logs
	say "== $1 done in $(( $(date +%s) - t )) s"
}
ovh() {     # ovh NAME W CONFIGS ROUNDS BUDGET_S [VAR=VALUE...]: bench/overhead/run.sh into $w/NAME
	local name=$1 wl=$2 configs=$3 rounds=$4 budget=$5
	shift 5
	env "$@" BUILD="$B" OUT="$w/$name" ROUNDS="$rounds" W="$wl" BUDGET_S="$budget" \
		CONFIGS="$(echo $configs)" timeout "$LIMIT_S" bash bench/overhead/run.sh
	pack "$name" "$name"
}

say "== gpu round $(date -u +%FT%TZ) on $(hostname), parts: $PARTS"
nvidia-smi --query-gpu=index,name,driver_version,temperature.gpu,clocks.sm --format=csv,noheader | tee -a "$log"
ngpu=$(nvidia-smi -L | wc -l)
t0=$(date +%s)

part_comm() {
	if [ "$ngpu" -lt 2 ]; then
		echo "comm-wait needs 2 GPUs ($ngpu here): skipped"
		return
	fi
	ZOO_CASES=comm-wait ZOO_RUNS=${COMM_RUNS:-5} ZOO_TIMEOUT=45 timeout "${COMM_LIMIT_S:-200}" \
		bash examples/zoo/record.sh "$B" "$w/zoo-comm"
	ZOO_STEPS=${ZOO_PROFILE_STEPS:-5} timeout 45 "$B/gpuscope" profile -o "$w/zoo-comm/comm-wait.fixed.run2" \
		--force -- python3 "$PWD/examples/zoo/comm-wait.py" fixed
	pack zoo-comm zoo-comm
}

part_tests() {
	export CUDA_VISIBLE_DEVICES=0
	GS_BUILD_DIR=$B WORK=$w/gputests KEEP=$w/gputests-keep timeout "$LIMIT_S" bash tests/gpu/run.sh
	pack gputests gputests-keep gputests/logs
}

part_zoo() {
	export CUDA_VISIBLE_DEVICES=0
	ZOO_CASES="${ZOO_CASES:-dataloader launch-bound host-bound sync pageable serial-copy tensor-core underfill alloc-churn}" \
		timeout "$LIMIT_S" bash examples/zoo/record.sh "$B" "$w/zoo"
	pack zoo zoo
}

part_sampler() {
	mkdir -p "$w/sampler"
	timeout 60 "$B/bench_sampler" 8 | tee "$w/sampler/sampler.txt"
	pack sampler sampler
}

# the breakdown: which CUPTI activity kind costs what (API records off), then
# the defaults with API records
c=gpuscope+--trace=cuda
k=$c+GPUSCOPE_CUPTI_API_MODE=off+GPUSCOPE_CUPTI_KINDS
diag_configs="none floor $k=kernel $k=kernel,memcpy,memset $k=kernel,sync $k=kernel,memory
 $c+GPUSCOPE_CUPTI_API_MODE=off $c"

part_topo() {
	export CUDA_VISIBLE_DEVICES=0
	BUILD=$B OUT=$w/topo ROUNDS=${ROUNDS_TOPO:-3} timeout "$LIMIT_S" bash bench/overhead/topo.sh
	pack topo topo
}

part_diag() {
	export CUDA_VISIBLE_DEVICES=0
	ovh diag b "${DIAG_CONFIGS:-$diag_configs}" "${ROUNDS_DIAG:-5}" "${DIAG_BUDGET_S:-260}" \
		B_STEPS="${B_STEPS:-1000}"
}

part_diaga() {
	export CUDA_VISIBLE_DEVICES=0
	ovh diaga a "${DIAGA_CONFIGS:-${DIAG_CONFIGS:-$diag_configs}}" "${ROUNDS_DIAGA:-3}" \
		"${DIAGA_BUDGET_S:-150}" A_LAUNCHES=100000 PIN="${PIN_A:-}"
}

part_ab() {
	export CUDA_VISIBLE_DEVICES=0
	ovh overhead-ab "${AB_W:-a b}" "${AB_CONFIGS:-none gpuscope floor torchprof}" "${ROUNDS_AB:-6}" \
		"${AB_BUDGET_S:-230}" PIN="${PIN:-}"
}

part_c() {
	export CUDA_VISIBLE_DEVICES=0
	ovh overhead-c c "${C_CONFIGS:-none gpuscope floor torchprof}" "${ROUNDS_C:-5}" "${C_BUDGET_S:-230}" \
		PIN="${PIN_C:-}"
}

part_pm() {
	export CUDA_VISIBLE_DEVICES=0
	ovh pm "${PM_W:-a b c}" "none gpuscope gpuscope+--pm-sampling gpuscope+--pm-sampling=250" \
		"${ROUNDS_PM:-4}" "${PM_BUDGET_S:-270}" PIN="${PIN:-}"
}

part_ondemand() {
	export CUDA_VISIBLE_DEVICES=0
	ovh ondemand "${OD_W:-a b c}" "none gpuscope+--on-demand gpuscope" "${ROUNDS_OD:-6}" \
		"${OD_BUDGET_S:-250}" PIN="${PIN:-}"
}

part_odb() {
	export CUDA_VISIBLE_DEVICES=0
	ovh odb b "${ODB_CONFIGS:-none gpuscope+--on-demand gpuscope+--on-demand+--no-gpu-metrics}" "${ROUNDS_ODB:-12}" \
		"${ODB_BUDGET_S:-230}" B_STEPS="${B_STEPS:-2000}" B_BLOCKS="${B_BLOCKS:-20}" B_CALIBRATE="${B_CALIBRATE:-1}" \
		PIN="${PIN:-$(bash bench/overhead/cpus.sh 4)}"
	python3 bench/overhead/runs_summary.py "$w/odb/runs.txt" | tee "$w/odb/summary.md"
	pack odb odb
}

lockstep() {     # lockstep NAME W: bench/overhead/lockstep.sh into $w/NAME
	export CUDA_VISIBLE_DEVICES=0
	BUILD="$B" OUT="$w/$1" W="$2" COPIES="${LS_COPIES:-4}" RUN_S="${LS_RUN_S:-150}" PER="${LS_PER:-}" \
		STOP="${LS_STOP:-1}" HEAP_RANDOM="${LS_HEAP_RANDOM:-0}" MAP_RANDOM="${LS_MAP_RANDOM:-0}" \
		LIFETIME="${LS_LIFETIME:-0}" \
		CONFIGS="${LS_CONFIGS:-none none2 ondemand capture profile}" \
		timeout "$LIMIT_S" bash bench/overhead/lockstep.sh
	rm -f "$w/$1"/*.gpuscope
	pack "$1" "$1"
}
part_lsb() { lockstep lsb b; }

part_layout() {
	export CUDA_VISIBLE_DEVICES=0
	local c i prog="python3 bench/overhead/map_offset.py --cuda"
	mkdir -p "$w/layout"
	for i in $(seq "${LAYOUT_RUNS:-3}"); do
		for c in none ondemand od_spread; do
			case $c in
			none)      $prog ;;
			ondemand)  "$B/gpuscope" profile --on-demand -o "$w/layout/x" -f -- $prog ;;
			od_spread) GPUSCOPE_KEEP_LAYOUT=0 "$B/gpuscope" profile --on-demand -o "$w/layout/x" -f -- $prog ;;
			esac 2>&1 | grep "^map_offset" | sed "s/^/$c /"
		done
	done | tee "$w/layout/map-offsets.txt"
	rm -f "$w/layout"/*.gpuscope
	pack layout layout
}
part_lsc() { lockstep lsc c; }

part_irq() {
	export CUDA_VISIBLE_DEVICES=0 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
	local cpu off="GPUSCOPE_TORCH_MEM=0 $B/gpuscope profile --on-demand -t none --no-gpu-metrics --cpu-sample-hz 0"
	cpu=$(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[min(3, len(c) - 1)])')
	mkdir -p "$w/irq"
	irq_cmd() {   # CONFIG STEPS [ARGS...]: workload b under CONFIG
		local prog="python3 bench/overhead/torch_step.py --steps $2 --pin-cpu $cpu ${*:3}"
		case $1 in
		none)       echo "$prog" ;;
		ondemand)   echo "$B/gpuscope profile --on-demand -o $w/irq/x -f -- $prog" ;;
		od_off)     echo "env $off -o $w/irq/x -f -- $prog" ;;
		od_offslow) echo "env GPUSCOPE_FLUSH_MS=1000 $off -o $w/irq/x -f -- $prog" ;;
		esac
	}
	for round in 1 2; do
		for c in none ondemand od_off od_offslow; do
			# shellcheck disable=SC2046
			timeout 120 python3 bench/overhead/irqs.py --cpu "$cpu" --label "$c.$round" -- \
				$(irq_cmd "$c" "${IRQ_STEPS:-20000}" --blocks 20)
		done
	done 2>&1 | tee "$w/irq/irqs.txt"
	# the system calls that make other CPUs take interrupts, per step: the
	# difference between a run of 2,300 steps and one of 300 (start-up cancels)
	if [ -f .device/tools.txz ]; then
		mkdir -p /tmp/gstools && tar xJf .device/tools.txz -C /tmp/gstools
		for c in none od_off; do
			for n in 300 2300; do
				# shellcheck disable=SC2046
				timeout 120 /tmp/gstools/tools/strace -f -c -e trace=%memory,futex,ioctl,ppoll,poll \
					-o "$w/irq/strace-$c-$n.txt" env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
					$(irq_cmd "$c" "$n")
			done
		done
	fi
	rm -f "$w/irq"/x*
	pack irq irq
}

part_hooks() {
	export CUDA_VISIBLE_DEVICES=0
	mkdir -p "$w/hooks"
	for _ in 1 2; do
		LD_PRELOAD=$B/bench/hookcount.so python3 bench/overhead/torch_step.py --count-hooks --steps 300
	done 2>&1 | tee "$w/hooks/count-b.txt"
	CASES="mutex rwlock" timeout 120 bash bench/nvtx/run.sh "$B" 5 2>&1 | tee "$w/hooks/nvtx.txt"
	if [ -f .device/tools.txz ]; then
		mkdir -p /tmp/gstools && tar xJf .device/tools.txz -C /tmp/gstools
		PERF=/tmp/gstools/tools/perf STRACE=/tmp/gstools/tools/strace BUILD=$B OUT=$w/hooks/where \
			CONFIGS="${HOOKS_CONFIGS:-none gpuscope+--on-demand}" COMM=python3 STEPS=${HOOKS_STEPS:-15000} \
			STRACE_STEPS=300 \
			timeout "$LIMIT_S" bash bench/overhead/where.sh
	fi
	pack hooks hooks
}

part_apimode() {
	export CUDA_VISIBLE_DEVICES=0
	local kinds=GPUSCOPE_CUPTI_KINDS=kernel,memcpy,memset,memory
	ovh apimode b "none floor floor+FLOOR_CB=launch gpuscope+$kinds
		gpuscope+GPUSCOPE_CUPTI_API_MODE=activity+$kinds gpuscope+GPUSCOPE_CUPTI_API_MODE=hybrid+$kinds" \
		"${ROUNDS_APIMODE:-12}" \
		"${APIMODE_BUDGET_S:-280}" B_STEPS=500 PIN="${PIN:-$(bash bench/overhead/cpus.sh 4)}"
}

part_where() {
	export CUDA_VISIBLE_DEVICES=0
	if [ ! -f .device/tools.txz ]; then
		echo "no .device/tools.txz (perf and strace): skipped"
		return
	fi
	mkdir -p /tmp/gstools && tar xJf .device/tools.txz -C /tmp/gstools
	PERF=/tmp/gstools/tools/perf STRACE=/tmp/gstools/tools/strace \
		BUILD=$B OUT=$w/where CONFIGS=${WHERE_CONFIGS:-none floor gpuscope+--trace=cuda} \
		timeout "$LIMIT_S" bash bench/overhead/where.sh
	pack where where
}

# PIN=cores:N (or PIN_A, PIN_C): N logical CPUs on N different physical cores
case ${PIN:-} in cores:*) PIN=$(bash bench/overhead/cpus.sh "${PIN#cores:}"); say "PIN=$PIN" ;; esac
case ${PIN_A:-} in cores:*) PIN_A=$(bash bench/overhead/cpus.sh "${PIN_A#cores:}"); say "PIN_A=$PIN_A" ;; esac
case ${PIN_C:-} in cores:*) PIN_C=$(bash bench/overhead/cpus.sh "${PIN_C#cores:}"); say "PIN_C=$PIN_C" ;; esac

for p in comm tests zoo sampler topo diag diaga ab c pm ondemand odb irq layout lsb lsc hooks apimode where; do
	part "$p"
done
say "== total $(( $(date +%s) - t0 )) s"
ls -la "$OUT" | tee -a "$log"
