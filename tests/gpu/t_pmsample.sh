#!/usr/bin/env bash
# --pm-sampling: GPU counters over time through CUPTI's PM sampling.  gpu_kmetrics
# runs 120 rounds of its five kernels; samples that lie wholly inside a kernel must
# show that kernel's character (copy: DRAM; FP32 GEMM: SM), one sample per interval.
# The report goes to $KEEP when set; pm_check.py prints the values and PASS/FAIL.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=()
us=250
profile pmsample --pm-sampling=$us -- "$GPU_BIN/gpu_kmetrics" 120
grep -q "gpu_kmetrics: ok" "$WORK/pmsample.out" || fail "program output"
"$GPUSCOPE" info "$REPORT" 2>&1 | grep -i "pm sampling" || fail "no PM sampling line in info"
"$GPUSCOPE" info "$REPORT" 2>&1 | grep -q "overflowed" && fail "the hardware buffer overflowed at $us us"
"$GPUSCOPE" dump --type kernel,metric "$REPORT" >"$WORK/pm.dump" || fail "dump"
python3 "$here/pm_check.py" "$WORK/pm.dump" $us || fail "PM samples"
[ -n "${KEEP:-}" ] && cp "$REPORT" "$KEEP/pmsample.gpuscope"
# the cost: the same program unprofiled, traced, and traced with PM sampling
for mode in plain trace pm; do
	t0=$(date +%s%N)
	case $mode in
	plain) "$GPU_BIN/gpu_kmetrics" 120 >/dev/null ;;
	trace) "$GPUSCOPE" profile -o "$WORK/cost_trace" --force -- "$GPU_BIN/gpu_kmetrics" 120 >/dev/null 2>&1 ;;
	pm) "$GPUSCOPE" profile -o "$WORK/cost_pm" --force --pm-sampling=$us -- "$GPU_BIN/gpu_kmetrics" 120 >/dev/null 2>&1 ;;
	esac
	echo "cost: $mode $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
# refused together with --kernel-metrics, and without CUDA tracing
"$GPUSCOPE" profile --pm-sampling --kernel-metrics -- true 2>/dev/null && fail "--pm-sampling with --kernel-metrics accepted"
"$GPUSCOPE" profile --pm-sampling --trace=nvtx -- true 2>/dev/null && fail "--pm-sampling without CUDA accepted"
[ "$failures" = 0 ] && echo "t_pmsample: ok"
exit $((failures > 0))
