#!/usr/bin/env bash
# bench/overhead/lockstep.sh - the idle cost of --on-demand, configurations in lockstep.
#
# Runs lockstep.py (its docstring says how and why) on one workload with the
# standard configurations, the first one the reference:
#   none      unprofiled
#   none2     unprofiled again: the A/A check (0 within its interval, or the
#             method reads something that is not there)
#   ondemand  gpuscope profile --on-demand, never triggered (issue 23's idle cost)
#   od_locks  the same with --lock-waits (the collector with its lock wrappers)
#   capture   gpuscope profile --on-demand, one capture open for the whole run
#   profile   gpuscope profile (a normal profile: what a capture should cost)
# and, to find where an idle cost goes, ondemand with one part off:
#   od_nopy     without the Python allocator hook (GPUSCOPE_TORCH_MEM=0)
#   od_hz0      without CPU samples (--cpu-sample-hz 0)
#   od_tnone    without NVTX, OS-runtime and CUDA (-t none: no CUDA injection
#               either)
#   od_nometric without GPU metrics (--no-gpu-metrics)
#   od_noinject without CUDA's injection of the collector (CUDA_INJECTION64_PATH
#               unset in the program: the collector is preloaded only)
#   od_off      all of the five above off at once: the collector's writer thread,
#               its wrappers and profile's process are what is left
#   od_offslow  od_off with the writer waking once a second, not every 50 ms
#               (GPUSCOPE_FLUSH_MS=1000): what the writer's wake-ups cost
#   od_parent   profile's processes only (as od_off, but the program runs
#               without the collector: LD_PRELOAD unset inside profile)
# and od_off with one part back on, the other way to find it:
#   od_py       od_off with the allocator hook (its 100 ms samples)
#   od_hz       od_off with CPU samples (100 a second)
#   od_met      od_off with GPU metrics
#   od_tr       od_off with NVTX, OS-runtime and CUDA's injection (-t default)
#   od_py1s     ondemand with the allocator hook sampling once a second
#               (GPUSCOPE_TORCH_MEM_MS=1000)
#   od_small    ondemand with small reservations: a 64 MiB block pool
#               (GPUSCOPE_MAX_BUFFER_MB) and a 2 MiB ring (--ring-mb 2)
#   shift       unprofiled, with an 8 MiB + 4 KiB anonymous mapping made before
#               torch loads (torch_step.py --map-kb): later mappings land where
#               a collector's start-up mappings (its writer's stack) put them,
#               a layout control
#   early       unprofiled, with a sleeping thread started before torch loads
#               (torch_step.py --early-thread: a collector's writer starts
#               before the program does)
#   mimic       unprofiled, with what a started collector does to the process
#               and nothing else: mappings of the sizes an idle collector makes
#               (a 2 GiB pool and an 8 MiB stage before its writer thread starts,
#               a 64 MiB malloc arena and a 64 MiB ring after), the early thread,
#               and handlers for the fatal signals on an alternate stack
#               (--faulthandler)
#   none_r      unprofiled, with a random mapping of 0-2 MiB first
#               (torch_step.py --map-random-kb 2048): its processes' layouts differ
#               even where the kernel does not randomise them
#   od_r        ondemand, with the same random mapping (TORCH_STEP_MAP_RANDOM_KB)
#   pad1, pad2  unprofiled, with 513 + 1,040 or 513 + 2,576 bytes from malloc first
#               (torch_step.py --heap-pad): every later heap allocation at another
#               offset in its page
#   none_h      unprofiled, with 513 + a random 0-4,096 bytes from malloc first
#               (--heap-random 4096): each process's heap offsets differ
#   od_h        ondemand, with the same random allocation (TORCH_STEP_HEAP_RANDOM_B)
#   gil         unprofiled, with a thread taking the interpreter lock for about
#               20 us every 100 ms (torch_step.py --gil-thread-ms 100), as the
#               allocator hook's periodic sample does
#   od_spread   ondemand with the collector's start-up mappings where the kernel
#               puts them, between the program's first libraries and torch's
#               (GPUSCOPE_KEEP_LAYOUT=0: the layout before session 16; the
#               collector's layout.c says what it keeps)
#   off_spread  od_off the same way
#   preload     the unprofiled program with the collector preloaded and never
#               started (no GPUSCOPE_DIR: no thread, every wrapper a jump): what
#               the library's presence alone costs
#   preload_nl  the same with the build without lock wrappers (what --on-demand
#               preloads)
# Workloads (W): b the launch-bound PyTorch step (torch_step.py, 20-step blocks),
# c ResNet-50 (resnet_step.py, 2-step blocks), bcpu the step of b on the CPU
# (size 32, for a machine without a GPU; its reference runs an idle thread,
# torch_step.py --idle-thread says why).
#
# Environment: BUILD (build), GPUSCOPE, W (b), CONFIGS (all five above),
#   COPIES (processes per configuration, 4), RUN_S (seconds of rounds, 120), ROUNDS (2000),
#   PIN_CPU (the CPU of every launching thread; default: the fourth CPU this
#   script may use, away from CPU 0's interrupts), OUT (./lockstep-out),
#   PYTHON (python3), PER (steps per timed block: the workload's default, 20
#   for b, 2 for c), STOP (1; 0: processes are not stopped between their turns,
#   lockstep.py --no-stop: their background threads run at their own rates,
#   beside the other configurations' blocks).  Between its turns a process is
#   stopped whole, its collector's threads too, so a thread that wakes every
#   P ms does its work at the start of each turn when the turn is shorter
#   than P: with blocks shorter than the collector's longest period (the
#   allocator hook's 100 ms) its cost is counted up to P / turn times;
#   PER=150 on b (about 100 ms) bounds that at 2x.  (A thread holding the
#   interpreter lock 20 us every 100 ms was charged nothing on the CPU: it is
#   done before the turn's untimed steps end; bench/results/
#   lockstep-bcpu-build-2026-12-02/ c5.)  HEAP_RANDOM=B (W b and bcpu; 0):
#   every process of every configuration first takes 513 + a random 0..B
#   bytes from malloc (torch_step.py --heap-random, by
#   TORCH_STEP_HEAP_RANDOM_B), so that each configuration's mean is taken
#   over heap offsets: without it every process of one configuration has the
#   same offsets, and each configuration its own (bench/overhead/heap_offset.py).
#   MAP_RANDOM=KB (W b and bcpu; 0): every process first maps a random 0..KB
#   KiB (torch_step.py --map-random-kb, by TORCH_STEP_MAP_RANDOM_KB), so that
#   what is mapped later (torch's and CUDA's libraries and buffers) lands a
#   further random distance from what was mapped before, in every
#   configuration.  (The kernel already varies it: libtorch_cpu landed
#   0x8872000 to 0x8968000 below libc in three unprofiled processes on the
#   build machine, bench/overhead/map_offset.py; this widens that draw.)
#   LIFETIME=M (0): each process takes M turns (past its first 10) and is
#   replaced by a new one of its configuration (lockstep.py --lifetime, with
#   --start-off-cpu PIN_CPU: a starting process stays off the turns' CPU
#   until it is ready), so that each configuration is measured over many
#   more processes than COPIES.
# Writes $OUT/lockstep.txt (the summary), $OUT/blocks.csv (every block) and
# each process's log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$here/../../build}
GPUSCOPE=${GPUSCOPE:-$BUILD/gpuscope}
W=${W:-b}
CONFIGS=${CONFIGS:-none none2 ondemand capture profile}
COPIES=${COPIES:-4}
RUN_S=${RUN_S:-120}
ROUNDS=${ROUNDS:-2000}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-$PWD/lockstep-out}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
if [ -z "${PIN_CPU:-}" ]; then
	PIN_CPU=$($PYTHON -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[min(3, len(c) - 1)])')
fi
per=${PER:+--per $PER}
HEAP_RANDOM=${HEAP_RANDOM:-0}
if [ "$HEAP_RANDOM" != 0 ]; then
	[ "$W" = c ] && { echo "lockstep.sh: HEAP_RANDOM needs workload b or bcpu (torch_step.py)" >&2; exit 2; }
	export TORCH_STEP_HEAP_RANDOM_B=$HEAP_RANDOM
fi
MAP_RANDOM=${MAP_RANDOM:-0}
if [ "$MAP_RANDOM" != 0 ]; then
	[ "$W" = c ] && { echo "lockstep.sh: MAP_RANDOM needs workload b or bcpu (torch_step.py)" >&2; exit 2; }
	export TORCH_STEP_MAP_RANDOM_KB=$MAP_RANDOM
fi
lsopts=()
[ "${STOP:-1}" = 0 ] && lsopts=(--no-stop)
LIFETIME=${LIFETIME:-0}
# a new process's first 10 turns ran 0.8% slow (median) beside the others'
# on the build machine, its later turns level (lockstep-bcpu-build-2026-12-02/ c8)
[ "$LIFETIME" != 0 ] && lsopts+=(--lifetime "$LIFETIME" --start-off-cpu "$PIN_CPU" --skip 10)
case $W in
b)    prog="$PYTHON $here/torch_step.py --pin-cpu $PIN_CPU $per"; ref="$prog" ;;
bcpu) prog="$PYTHON $here/torch_step.py --device cpu --size 32 --pin-cpu $PIN_CPU $per"
      ref="$prog --idle-thread" ;;
c)    prog="$PYTHON $here/resnet_step.py --pin-cpu $PIN_CPU $per"; ref="$prog" ;;
*)    echo "lockstep.sh: unknown workload '$W' (b, bcpu, c)" >&2; exit 2 ;;
esac
if [ ! -x "$GPUSCOPE" ]; then
	echo "lockstep.sh: no gpuscope at $GPUSCOPE (build first: scripts/build.sh build)" >&2
	exit 2
fi
args=()
# prof NAME [ENV...] [PROFILE-OPTION...] [-- WRAPPER...]: a configuration of $prog under
# gpuscope profile; words before the first option are an env(1) prefix for profile, words after
# "--" wrap the program inside it
prof() {
	local name=$1 pre="" opts="" post=""
	shift
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do pre+="$1 "; shift; done
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+="$1 "; shift; done
	[ $# -gt 0 ] && shift && post="$* "
	args+=(--config "$name=${pre:+env $pre}$GPUSCOPE profile ${opts}-o {dir}/{copy} -- $post$prog")
}
for c in $CONFIGS; do
	case $c in
	none|none2) args+=(--config "$c=$ref") ;;
	ondemand)    prof "$c" --on-demand ;;
	od_locks)    prof "$c" --on-demand --lock-waits ;;
	capture)     prof "$c" --on-demand
	             args+=(--after "$c=$GPUSCOPE capture --duration 36000 {copy}") ;;
	profile)     prof "$c" ;;
	od_nopy)     prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand ;;
	od_hz0)      prof "$c" --on-demand --cpu-sample-hz 0 ;;
	od_tnone)    prof "$c" --on-demand -t none ;;
	od_nometric) prof "$c" --on-demand --no-gpu-metrics ;;
	od_noinject) prof "$c" --on-demand -- env -u CUDA_INJECTION64_PATH ;;
	od_off)      prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand -t none --no-gpu-metrics --cpu-sample-hz 0 ;;
	od_offslow)  prof "$c" GPUSCOPE_TORCH_MEM=0 GPUSCOPE_FLUSH_MS=1000 --on-demand -t none \
	                 --no-gpu-metrics --cpu-sample-hz 0 ;;
	od_parent)   prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand -t none --no-gpu-metrics --cpu-sample-hz 0 \
	                 -- env -u LD_PRELOAD ;;
	od_py)       prof "$c" --on-demand -t none --no-gpu-metrics --cpu-sample-hz 0 ;;
	od_hz)       prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand -t none --no-gpu-metrics ;;
	od_met)      prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand -t none --cpu-sample-hz 0 ;;
	od_tr)       prof "$c" GPUSCOPE_TORCH_MEM=0 --on-demand --no-gpu-metrics --cpu-sample-hz 0 ;;
	od_py1s)     prof "$c" GPUSCOPE_TORCH_MEM_MS=1000 --on-demand ;;
	od_spread)   prof "$c" GPUSCOPE_KEEP_LAYOUT=0 --on-demand ;;
	off_spread)  prof "$c" GPUSCOPE_KEEP_LAYOUT=0 GPUSCOPE_TORCH_MEM=0 --on-demand -t none --no-gpu-metrics \
	                 --cpu-sample-hz 0 ;;
	od_small)    prof "$c" GPUSCOPE_MAX_BUFFER_MB=64 --on-demand --ring-mb 2 ;;
	shift)       args+=(--config "$c=$ref --map-kb 8196") ;;
	early)       args+=(--config "$c=$ref --early-thread") ;;
	mimic)       args+=(--config "$c=$ref --map-kb 2097152,8276 --early-thread --map-late-kb 65536,65536 --faulthandler") ;;
	none_r)      args+=(--config "$c=$ref --map-random-kb 2048") ;;
	od_r)        prof "$c" TORCH_STEP_MAP_RANDOM_KB=2048 --on-demand ;;
	pad1)        args+=(--config "$c=$ref --heap-pad 1040") ;;
	pad2)        args+=(--config "$c=$ref --heap-pad 2576") ;;
	none_h)      args+=(--config "$c=$ref --heap-random 4096") ;;
	od_h)        prof "$c" TORCH_STEP_HEAP_RANDOM_B=4096 --on-demand ;;
	gil)         args+=(--config "$c=$ref --gil-thread-ms 100") ;;
	preload)     args+=(--config "$c=env LD_PRELOAD=$BUILD/libgpuscope-collect.so $ref") ;;
	preload_nl)  args+=(--config "$c=env LD_PRELOAD=$BUILD/libgpuscope-collect-nolock.so $ref") ;;
	*) echo "lockstep.sh: unknown configuration '$c'" >&2; exit 2 ;;
	esac
done
mkdir -p "$OUT"
echo "lockstep.sh: W=$W COPIES=$COPIES RUN_S=$RUN_S PER=${PER:-default} STOP=${STOP:-1} HEAP_RANDOM=$HEAP_RANDOM MAP_RANDOM=$MAP_RANDOM LIFETIME=$LIFETIME PIN_CPU=$PIN_CPU on $(getconf _NPROCESSORS_ONLN) CPUs" | tee "$OUT/setup.txt"
exec $PYTHON "$here/lockstep.py" --copies "$COPIES" --seconds "$RUN_S" --rounds "$ROUNDS" \
	"${lsopts[@]}" --out "$OUT" "${args[@]}"
