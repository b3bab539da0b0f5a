#!/usr/bin/env bash
# --kernel-metrics: per-kernel hardware counters through CUPTI's Range Profiler.
#   gpu_kmetrics (WMMA bf16 GEMM and a WMMA peak loop, FP32 SIMT GEMM, copy, axpy),
#   gpu_kmetrics_cublas bf16 / fp32 (when built), and `ncu` on the same kernels
#   when ncu is installed.  kmetrics_check.py prints the values and PASS/FAIL.
# Reports, stats JSON and ncu CSV go to $KEEP (or $WORK/kmetrics).
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel wmma_gemm_bf16 --kernel copy_f4)
out=${KEEP:-$WORK/kmetrics}
mkdir -p "$out"
# the checker's exit status, not tee's: a failed expectation fails the test
py() {
	python3 "$here/kmetrics_check.py" "$@" >"$WORK/kmetrics.check1"
	local rc=$?
	cat "$WORK/kmetrics.check1" | tee -a "$WORK/kmetrics.checks"
	return $rc
}
: >"$WORK/kmetrics.checks"

profile kmetrics --kernel-metrics=full --kernel-count 2 \
	--kernel-filter 'wmma_gemm_bf16|wmma_peak_bf16|sgemm_fp32|copy_f4|axpy_f32' -- "$GPU_BIN/gpu_kmetrics" 3
grep -q "gpu_kmetrics: ok" "$WORK/kmetrics.out" || fail "program output"
"$GPUSCOPE" stats --report cuda_kern_metrics "$REPORT" || fail "stats cuda_kern_metrics"
"$GPUSCOPE" stats --report cuda_kern_metrics --format json "$REPORT" >"$out/kmetrics.json" ||
	fail "stats --format json"
"$GPUSCOPE" info "$REPORT" | grep -E "kernel metrics" || true
# CUPTI drops the kernel record of a launch that the Range Profiler replays (H200,
# session 5): the report keeps the other launches' records and counts the lost ones
expect "kernel[wmma_gemm_bf16]" -eq 1   # 3 launches, 2 profiled
expect "kernel[copy_f4]" -eq 6          # 8 launches, 2 profiled
"$GPUSCOPE" info "$REPORT" 2>/dev/null | grep -Eq "^dropped: +10$" || fail "the 10 profiled launches' records are not counted as lost"
cp "$REPORT" "$out/kmetrics.gpuscope"
ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
ncu_csv=
if [ -n "$ncu_bin" ]; then
	ncu_csv="$out/ncu_kmetrics.csv"
	timeout 300 "$ncu_bin" --clock-control none --csv --page raw -k 'regex:wmma_peak_bf16|sgemm_fp32|copy_f4' -c 3 \
		--metrics sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
		"$GPU_BIN/gpu_kmetrics" 1 >"$ncu_csv" 2>"$WORK/ncu.err" || { echo "ncu failed:"; tail -5 "$WORK/ncu.err"; ncu_csv=; }
else
	echo "SKIP: no ncu here, no comparison with Nsight Compute"
fi
py kernels "$out/kmetrics.json" "$WORK/kmetrics.out" $ncu_csv || fail "gpu_kmetrics counters"

if [ -x "$GPU_BIN/gpu_kmetrics_cublas" ] && "$GPU_BIN/gpu_kmetrics_cublas" fp32 >/dev/null 2>&1; then
	for v in bf16 fp32; do
		profile "kmetrics_cublas_$v" --kernel-metrics=tensor -- "$GPU_BIN/gpu_kmetrics_cublas" "$v"
		"$GPUSCOPE" stats --report cuda_kern_metrics --format json "$REPORT" >"$out/cublas_$v.json" ||
			fail "stats cublas $v"
		cp "$REPORT" "$out/kmetrics_cublas_$v.gpuscope"
		py "cublas-$v" "$out/cublas_$v.json" || fail "cuBLAS $v counters"
	done
else
	echo "SKIP: gpu_kmetrics_cublas not built or cuBLAS missing here"
fi

# without --kernel-metrics nothing is profiled and the kernels are all there
profile kmetrics_off -- "$GPU_BIN/gpu_kmetrics" 1
n=$("$GPUSCOPE" stats --report cuda_kern_metrics --format json "$REPORT" |
	python3 -c 'import json,sys; print(sum(len(t.get("rows",[])) for t in json.load(sys.stdin)))')
[ "$n" = 0 ] || fail "kernel metrics recorded without --kernel-metrics ($n rows)"
cp "$WORK/kmetrics.checks" "$out/checks.txt"
finish
