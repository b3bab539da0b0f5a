#!/usr/bin/env bash
# PyTorch: kernels and launches recorded, trivial calls skipped, nothing dropped.
. "$(dirname "$0")/lib.sh"
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "SKIP: no torch with CUDA"; exit 77; }
cat >"$WORK/torch_step.py" <<'PY'
import torch
x = torch.randn(256, 256, device="cuda")
w = torch.randn(256, 256, device="cuda")
for _ in range(50):
    y = x
    for _ in range(20):
        y = torch.nn.functional.gelu(y @ w)
torch.cuda.synchronize()
print("torch_step: ok", float(y.float().mean()) == float(y.float().mean()))
PY
CHECK_ARGS=(--api cudaGetDevice --api cudaGetLastError --api cudaLaunchKernel --api cuLaunchKernel
	--api cudaStreamIsCapturing)
profile torch -- python3 "$WORK/torch_step.py"
grep -q "torch_step: ok" "$WORK/torch.out" || fail "program output"
expect kernels -ge 2000
expect "api[cudaGetDevice]" -eq 0
expect "api[cudaGetLastError]" -eq 0
expect "api[cudaStreamIsCapturing]" -eq 0
expect_launch_order
expect_no_drops
expect_no_cuda_warning
k=$(fact kernels); m=$(fact kernels_matched)
[ "$m" -eq "$k" ] || fail "kernels with their launch call: $m of $k"
finish
