#!/usr/bin/env bash
# Per-kernel hardware counters recorded on the H200 (tests/data/cuda/h200_kmetrics*.gpuscope,
# session 5, tests/gpu/t_kmetrics.sh): stats reads them back with the values the GPU gave.
set -u
: "${GPUSCOPE:?}" "${GS_SOURCE_DIR:?}"
d=$GS_SOURCE_DIR/tests/data/cuda
fail() { echo "FAIL: $*"; exit 1; }
# value KERNEL COLUMN FILE: the column of the kernel's first instance, from the JSON report
value() {
	"$GPUSCOPE" stats --report cuda_kern_metrics --format json "$3" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
rows = json.load(sys.stdin)[0]["rows"]
v = [r[sys.argv[2]] for r in rows if r["Kernel"].startswith(sys.argv[1]) and r["Instance"] == 0]
print(v[0] if v and v[0] is not None else "-")' "$1" "$2"
}
ge() { /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"; }
le() { /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }
f=$d/h200_kmetrics.gpuscope
t=$(value wmma_peak_bf16 "Tensor Pipe (%)" "$f"); ge "$t" 40 || fail "wmma_peak_bf16 tensor pipe $t < 40"
t=$(value sgemm_fp32 "Tensor Pipe (%)" "$f"); le "$t" 1 || fail "sgemm_fp32 tensor pipe $t > 1"
t=$(value copy_f4 "DRAM Throughput (%)" "$f"); ge "$t" 60 || fail "copy_f4 DRAM throughput $t < 60"
t=$(value wmma_gemm_bf16 "Achieved Occupancy (%)" "$f"); ge "$t" 1 || fail "wmma_gemm_bf16 occupancy $t"
# the 1 GiB copy reads and writes 1073.7 MB (10^6 bytes) of DRAM: the counters see that, within 10%
t=$(value copy_f4 "DRAM Read (MB)" "$f"); ge "$t" 966 && le "$t" 1181 || fail "copy_f4 DRAM read $t MB"
t=$(value copy_f4 "DRAM Written (MB)" "$f"); ge "$t" 966 && le "$t" 1181 || fail "copy_f4 DRAM written $t MB"
# the GMMA pipe metric is not offered on this GPU: unavailable, never 0
t=$(value wmma_peak_bf16 "Tensor GMMA Pipe (%)" "$f"); [ "$t" = - ] || fail "unavailable metric shows '$t'"
"$GPUSCOPE" stats --report cuda_kern_metrics "$f" | grep -q "unavailable on this GPU: tensor_gmma_pct" ||
	fail "the note does not name the unavailable metric"
t=$(value nvjet "Tensor Pipe (%)" "$d/h200_kmetrics_cublas_bf16.gpuscope"); ge "$t" 40 || fail "cuBLAS bf16 tensor pipe $t"
t=$(value sm80_xmma_gemm_f32f32 "Tensor Pipe (%)" "$d/h200_kmetrics_cublas_fp32.gpuscope"); le "$t" 1 ||
	fail "cuBLAS fp32 tensor pipe $t"
# the zoo's tensor-core pair under --kernel-metrics=tensor (session 5): the counters decide.
# broken: cuBLAS SGEMM on the FFMA path, tensor pipes at 0.0%; fixed: TF32, 96.4%
b=$d/h200_kmetrics_tensorcore_broken.gpuscope
t=$(value sm80_xmma_gemm_f32f32_f32f32 "Tensor Pipe (%)" "$b"); le "$t" 1 || fail "zoo broken FP32 GEMM tensor pipe $t"
t=$(value sm90_xmma_gemm_f32f32_tf32f32 "Tensor Pipe (%)" "$d/h200_kmetrics_tensorcore_fixed.gpuscope"); ge "$t" 40 ||
	fail "zoo fixed TF32 GEMM tensor pipe $t"
out=$("$GPUSCOPE" analyze "$b" 2>/dev/null)
grep -q '^1\. .*\[tensor-cores-unused, ' <<<"$out" || fail "zoo broken: top finding is not tensor-cores-unused"
grep -q 'hardware counters decided 1 kernel names: 1 with the tensor pipes busy under 1%' <<<"$out" ||
	fail "zoo broken: the counters did not decide"
"$GPUSCOPE" analyze "$d/h200_kmetrics_tensorcore_fixed.gpuscope" 2>/dev/null | grep -q 'tensor-cores-unused' &&
	fail "zoo fixed: still a tensor-cores-unused finding"
# dump shows every counter record, an unavailable one as such (never 0)
bf=$d/h200_kmetrics_cublas_bf16.gpuscope
"$GPUSCOPE" dump --type kmetric "$bf" >"${TMPDIR:-/tmp}/km.$$" || fail "dump --type kmetric"
grep -q 'key="tensor_gmma_pct" value=unavailable ' "${TMPDIR:-/tmp}/km.$$" || fail "dump: unavailable GMMA metric"
grep -Eq 'key="tensor_pipe_pct" value=9[0-9.]+ metric=' "${TMPDIR:-/tmp}/km.$$" || fail "dump: tensor pipe value"
rm -f "${TMPDIR:-/tmp}/km.$$"
# the profiled launches' kernel records are counted as lost, not silently missing
"$GPUSCOPE" info "$f" 2>/dev/null | grep -Eq "^dropped: +10$" || fail "lost kernel records not counted"
echo ok
