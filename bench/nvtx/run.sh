#!/usr/bin/env bash
# run.sh - collector overhead per NVTX push/pop pair and per traced blocking
# call, against the same program without the collector.
#
#   bash bench/nvtx/run.sh [BUILD_DIR] [RUNS]      (defaults: build, 7)
#   CASES="mutex rwlock" bash bench/nvtx/run.sh     only these cases
#
# For each case the plain and the profiled program run alternately RUNS
# times; the medians and their difference (the overhead per operation) are
# printed.  "osrt>=thr" profiles with --osrt-threshold 0, so every call is
# recorded; "osrt<thr" uses the default 1 us threshold, under which a 0-byte
# read is timed but not recorded.  A third program, "on-demand idle", runs
# alternately with the two: the same profile with --on-demand and no
# trigger (docs/always-on.md): hooks record into the flight recorder's ring,
# nothing is written but the ring at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
runs=${2:-7}
g=$b/gpuscope
[ -x "$g" ] || { echo "run.sh: build gpuscope first (bash scripts/build.sh $b)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/gs-bench-nvtx.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# a machine without a compiler (the GPU machine) takes the one bench/overhead/build.sh built
if [ -x "$b/bench/bench_nvtx" ]; then
  cp "$b/bench/bench_nvtx" "$tmp/bench"
else
  cc -O2 -std=c11 -D_GNU_SOURCE -I/usr/local/cuda/include bench/nvtx/bench_nvtx.c -ldl -o "$tmp/bench"
fi

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

one() { # CASE N MODE -> ns per op
  local c=$1 n=$2 mode=$3
  case $mode in
    plain) "$tmp/bench" "$c" "$n" ;;
    prof) "$g" profile --force -o "$tmp/r" --no-gpu-metrics --trace=nvtx,osrt -- "$tmp/bench" "$c" "$n" 2>/dev/null ;;
    prof0) "$g" profile --force -o "$tmp/r" --no-gpu-metrics --trace=nvtx,osrt --osrt-threshold 0 -- "$tmp/bench" "$c" "$n" 2>/dev/null ;;
    od) GPUSCOPE_CTL_DIR=$tmp/ctl "$g" profile --force -o "$tmp/r" --on-demand --trace=nvtx,osrt -- "$tmp/bench" "$c" "$n" 2>/dev/null ;;
    od0) GPUSCOPE_CTL_DIR=$tmp/ctl "$g" profile --force -o "$tmp/r" --on-demand --trace=nvtx,osrt --osrt-threshold 0 -- "$tmp/bench" "$c" "$n" 2>/dev/null ;;
  esac
}

bench() { # LABEL CASE N PROFMODE
  local label=$1 c=$2 n=$3 pm=$4
  [[ " ${CASES:-pushpop read0 nsleep0 mutex rwlock} " == *" $c "* ]] || return 0
  local om=od; [ "$pm" = prof0 ] && om=od0
  : >"$tmp/p"; : >"$tmp/q"; : >"$tmp/o"
  for _ in $(seq "$runs"); do
    one "$c" "$n" plain >>"$tmp/p"
    one "$c" "$n" "$pm" >>"$tmp/q"
    one "$c" "$n" "$om" >>"$tmp/o"
  done
  printf '%-26s' "$label"
  for col in 2 3 4; do  # thread CPU, process CPU, wall
    local mp mq mo
    mp=$(awk -v k=$col '{ print $k }' "$tmp/p" | median)
    mq=$(awk -v k=$col '{ print $k }' "$tmp/q" | median)
    mo=$(awk -v k=$col '{ print $k }' "$tmp/o" | median)
    printf ' | %7.1f %7.1f %+7.1f %7.1f %+7.1f' "$mp" "$mq" "$(awk -v a="$mq" -v b="$mp" 'BEGIN { print a - b }')" \
      "$mo" "$(awk -v a="$mo" -v b="$mp" 'BEGIN { print a - b }')"
  done
  echo
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $runs alternating runs each, medians"
echo "# ns per operation: plain, profiled, its overhead, on-demand idle, its overhead; for thread CPU | process CPU | wall"
printf '%-26s | %39s | %39s | %39s\n' case "thread CPU" "process CPU" wall
bench "nvtx push/pop pair" pushpop 2000000 prof
bench "read(fd,buf,0) osrt<thr" read0 500000 prof
bench "read(fd,buf,0) osrt>=thr" read0 500000 prof0
bench "nanosleep(0) osrt>=thr" nsleep0 100000 prof0
bench "mutex lock/unlock pair" mutex 5000000 prof
bench "rwlock rdlock/unlock pair" rwlock 5000000 prof
