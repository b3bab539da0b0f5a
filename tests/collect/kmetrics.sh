#!/usr/bin/env bash
# --kernel-metrics without a GPU: the program is profiled as usual (its output
# and status are its own, the CPU side is recorded) and `profile` says in one
# line that no kernel metrics were recorded; bad options fail before the
# program runs; the settings reach the program's environment.
. "$(dirname "$0")/lib.sh"

# a CPU program (never calls cuInit): one note, nothing else changes
profile -o cpu --kernel-metrics=full --kernel-filter 'gemm|copy' --kernel-count 3 \
  -- "$GS_TARGET" print >out 2>err
expect_eq "$rc" 0 "status of a CPU program under --kernel-metrics"
"$GS_TARGET" print >plain
cmp -s out plain || fail "the program's output changed under --kernel-metrics"
expect_eq "$(grep -c '^gpuscope: no kernel metrics: ' err)" 1 "note lines"
grep -q '^gpuscope: no kernel metrics: no CUDA kernel was recorded' err || fail "the note does not say why: $(cat err)"
expect_eq "$(grep -c '^gpuscope: wrote' err)" 1 "report line"
expect_ge "$(count cpu.gpuscope 'processes')" 1 "processes in the report"
"$GPUSCOPE" stats --report cuda_kern_metrics cpu.gpuscope >st 2>&1 || fail "stats cuda_kern_metrics failed"
grep -q 'cuda_kern_metrics: no kernel metrics were recorded in this report' st || fail "stats: $(cat st)"

# the CUDA injection entry point without a driver (CI): CUDA tracing is off with
# its one warning, the CPU side stays, and still one note from profile
if [ -x "$GS_BUILD_DIR/cpu_inject" ]; then
  profile -o inj --kernel-metrics --trace=cuda,osrt -- "$GS_BUILD_DIR/cpu_inject" >out 2>err
  expect_eq "$rc" 0 "status of cpu_inject under --kernel-metrics"
  grep -q 'cpu_inject: ok' out || fail "cpu_inject did not run to its end"
  expect_eq "$(grep -c '^gpuscope: no kernel metrics: ' err)" 1 "note lines (cpu_inject)"
  expect_ge "$(ndump inj.gpuscope osrt 'func=nanosleep')" 1 "OS-runtime records under --kernel-metrics"
  if [ ! -e /dev/nvidiactl ]; then
    expect_eq "$("$GPUSCOPE" info inj.gpuscope | grep -c 'CUDA tracing off: ')" 1 "CUDA tracing off warnings"
  fi
fi

# the settings as the collector reads them
profile -o env --kernel-metrics=tensor --kernel-filter '^sgemm' --kernel-count 4 -- \
  /bin/sh -c 'echo "$GPUSCOPE_KERNEL_METRICS|$GPUSCOPE_KERNEL_FILTER|$GPUSCOPE_KERNEL_COUNT"' >out 2>/dev/null
expect_eq "$(cat out)" "tensor|^sgemm|4" "environment of the program"
# --kernel-filter alone means the basic set, one instance per kernel
profile -o env2 --kernel-filter 'x' -- \
  /bin/sh -c 'echo "$GPUSCOPE_KERNEL_METRICS|$GPUSCOPE_KERNEL_COUNT"' >out 2>/dev/null
expect_eq "$(cat out)" "basic|1" "defaults of --kernel-filter alone"
# without the option, nothing of it reaches the program (even when inherited)
GPUSCOPE_KERNEL_METRICS=full profile -o env3 -- /bin/sh -c 'echo "[${GPUSCOPE_KERNEL_METRICS-unset}]"' >out 2>/dev/null
expect_eq "$(cat out)" "[unset]" "GPUSCOPE_KERNEL_METRICS without --kernel-metrics"

# bad options: status 2, one error line, the program does not run
for bad in "--kernel-metrics=bogus" "--kernel-filter=(" "--kernel-count=0" "--kernel-count=x" \
    "--trace=nvtx --kernel-metrics"; do
  # shellcheck disable=SC2086
  profile -o bad $bad -- /bin/sh -c 'echo ran' >out 2>err
  expect_eq "$rc" 2 "status of 'profile $bad'"
  [ ! -s out ] || fail "the program ran despite '$bad'"
  grep -q 'error: ' err || fail "no error line for '$bad': $(cat err)"
done
echo ok
