#!/usr/bin/env bash
# The start-up hook with the real CPU-only PyTorch (Debian's python3-torch):
# a training program's output, exit status and exceptions are what they are
# without gpuscope, a sitecustomize already on PYTHONPATH still runs (first,
# as it would), the hook's own directory is not left on sys.path, it never
# imports torch into a program that does not, and without CUDA it records
# nothing.
. "$(dirname "$0")/lib.sh"
"$PY" -c 'import torch' 2>/dev/null || skip "$PY has no torch (Debian package python3-torch)"

mkdir user
cat >user/sitecustomize.py <<'PY'
import sys
MARK = "user-site"
print("user sitecustomize ran, torch imported:", "torch" in sys.modules)
PY
cat >train.py <<'PY'
import os, sys
import sitecustomize
print("sitecustomize:", getattr(sitecustomize, "MARK", None))
print("hook dir on sys.path:", any("gpuscope_site" in p for p in sys.path))
import torch
torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randn(16, 2)
for step in range(5):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, "loss %.6f" % loss.item())
print("cuda initialised:", torch.cuda.is_initialized())
mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "raise":
    def inner():
        raise ValueError("bad batch %d" % 3)
    inner()
if mode == "exit":
    sys.exit(7)
PY
cat >plain.py <<'PY'
import sys
print("torch imported:", "torch" in sys.modules, "ctypes imported:", "ctypes" in sys.modules, "args", sys.argv[1:])
PY

for mode in "" raise exit; do
  rc0=0; PYTHONPATH=user "$PY" train.py $mode >out0 2>err0 || rc0=$?
  PYTHONPATH=user profile -o "t$mode" -- "$PY" train.py $mode >out1 2>err1
  expect_eq "$rc" "$rc0" "exit status (mode '$mode')"
  cmp -s out0 out1 || fail "output changed (mode '$mode'): $(diff out0 out1)"
  own_err err1 >err1.own
  cmp -s err0 err1.own || fail "stderr changed (mode '$mode'): $(diff err0 err1.own)"
  cp err1.own "err.$mode"
  case "$mode" in raise) expect_eq "$rc" 1 "status of an uncaught exception";; exit) expect_eq "$rc" 7 "sys.exit(7)";; esac
  # no CUDA: nothing recorded
  expect_eq "$("$GPUSCOPE" dump --type torch_mem,oom "t$mode.gpuscope" | wc -l)" 0 "torch records without CUDA"
done
expect_eq "$(head -1 out0)" "user sitecustomize ran, torch imported: False" "the user's sitecustomize"
grep -qx 'sitecustomize: user-site' out1 || fail "import sitecustomize is not the user's: $(cat out1)"
grep -qx 'hook dir on sys.path: False' out1 || fail "the hook's directory stayed on sys.path"
grep -qx 'cuda initialised: False' out1 || fail "CUDA initialised under the hook"
# the exception: same traceback, status 1
expect_eq "$(tail -1 err.raise)" "ValueError: bad batch 3" "the exception's last line"
stats=$("$GPUSCOPE" stats --report torch_mem_sum t.gpuscope 2>&1)
echo "$stats" | grep -q 'torch_mem_sum: no PyTorch allocator samples were recorded in this report' ||
  fail "stats without CUDA: $stats"

# a program without torch: neither torch nor ctypes is imported for it, output unchanged
PYTHONPATH=user profile -o p -- "$PY" plain.py a b >out1 2>/dev/null
PYTHONPATH=user "$PY" plain.py a b >out0
cmp -s out0 out1 || fail "plain program's output changed: $(diff out0 out1)"
grep -q 'torch imported: False' out1 || fail "the hook imported torch"

# the hook is on PYTHONPATH for the program (and its child processes); GPUSCOPE_TORCH_MEM=0 leaves it off
profile -o e -- "$PY" -c 'import os; print(os.environ.get("PYTHONPATH", ""))' >out 2>/dev/null
case "$(cat out)" in *gpuscope_site*) ;; *) fail "PYTHONPATH under profile: $(cat out)";; esac
GPUSCOPE_TORCH_MEM=0 profile -o e0 -- "$PY" -c 'import os; print(os.environ.get("PYTHONPATH", ""))' >out 2>/dev/null
expect_eq "$(cat out)" "" "PYTHONPATH with GPUSCOPE_TORCH_MEM=0"
echo ok
