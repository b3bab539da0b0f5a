#!/usr/bin/env bash
# profile --on-demand with CUDA (docs/always-on.md), on the GPU machine:
#  1. a PyTorch loop of NVTX-named steps, triggered mid-run by
#     `gpuscope capture --steps 10 NAME` from this script: every kernel of the
#     report lies inside the capture window, there is at least one kernel in
#     it, and none before it (CUDA was not traced while idle);
#  2. a second capture by pid: two captures listed by `info`, both with rings;
#  3. the idle cost: the loop's median step time under --on-demand (never
#     triggered) against the same loop unprofiled, three runs each,
#     alternating; the issue's target is +0.5% (printed and asserted
#     loosely: a shared GPU machine's run-to-run spread is of that order);
#  4. the cost inside a capture against a normal profile (the same expected).
# Not run in CI (no GPU there).
. "$(dirname "$0")/lib.sh"
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "SKIP: no torch with CUDA"; exit 77; }
export GPUSCOPE_CTL_DIR=$WORK/ctl

cat >"$WORK/od_prog.py" <<'PY'
import sys, time
import torch
import torch.cuda.nvtx as nvtx
seconds = float(sys.argv[1])
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
times = []
t0 = time.time()
step = 0
while time.time() - t0 < seconds:
    s = time.perf_counter()
    nvtx.range_push("ProfilerStep#%d" % step)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    nvtx.range_pop()
    times.append(time.perf_counter() - s)
    step += 1
times.sort()
print("step_ms %.4f" % (times[len(times) // 2] * 1e3))
PY

# 1 and 2: two captures mid-run
rm -f "$WORK/od.gpuscope"
timeout 300 "$GPUSCOPE" profile --on-demand --ring-s 2 -o "$WORK/od" -- python3 "$WORK/od_prog.py" 20 \
  >"$WORK/od.out" 2>&1 &
prof=$!
for _ in $(seq 200); do [ -n "$("$GPUSCOPE" capture --list 2>/dev/null)" ] && break; sleep 0.1; done
sleep 6   # CUDA up, steps running
"$GPUSCOPE" capture --steps 10 od || fail "capture by name"
sleep 4
pid=$("$GPUSCOPE" capture --list | awk '{ print $2; exit }')
"$GPUSCOPE" capture --duration 1 "$pid" || fail "capture by pid"
wait "$prof" || fail "profile --on-demand exited $?"
cat "$WORK/od.out"
"$GPUSCOPE" info "$WORK/od.gpuscope" | tee "$WORK/od.info"
grep -q '^captures: 2$' "$WORK/od.info" || fail "two captures"
"$GPUSCOPE" dump --type capture "$WORK/od.gpuscope" | awk '{ print $1 }' >"$WORK/edges"
"$GPUSCOPE" dump --type kernel "$WORK/od.gpuscope" >"$WORK/kernels"
nk=$(wc -l <"$WORK/kernels")
[ "$nk" -gt 0 ] || fail "no kernels in the captures"
# every kernel inside one of the windows (start, stop pairs)
outside=$(awk 'NR == FNR { e[NR] = $1; n = NR; next }
  { t = $1; ok = 0; for (i = 1; i < n; i += 2) if (t >= e[i] && t <= e[i + 1]) ok = 1; if (!ok) c++ }
  END { print c + 0 }' "$WORK/edges" "$WORK/kernels")
[ "$outside" = 0 ] || fail "$outside of $nk kernels outside the captures"
echo "kernels: $nk, all inside the captures"

# 3: idle cost, alternating
: >"$WORK/plain"; : >"$WORK/idle"
for _ in 1 2 3; do
  python3 "$WORK/od_prog.py" 8 | awk '/^step_ms/ { print $2 }' >>"$WORK/plain"
  rm -f "$WORK/idle.gpuscope"
  "$GPUSCOPE" profile --on-demand -o "$WORK/idle" -- python3 "$WORK/od_prog.py" 8 2>/dev/null |
    awk '/^step_ms/ { print $2 }' >>"$WORK/idle"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
p=$(med "$WORK/plain"); i=$(med "$WORK/idle")
pct=$(awk -v a="$i" -v b="$p" 'BEGIN { printf "%.2f", (a - b) / b * 100 }')
echo "idle cost: step $p ms unprofiled, $i ms on demand (idle): ${pct}% (target <= 0.5%)"
awk -v x="$pct" 'BEGIN { exit !(x <= 3) }' || fail "idle cost ${pct}% above 3% (target 0.5%)"

# 4: the cost during a capture against a normal profile of the same loop, alternating: a capture
# triggered as soon as the collector is listed (before the loop's first step: torch and CUDA take
# seconds to start) spans every step; the issue asks for the same cost as a normal profile
: >"$WORK/normal"; : >"$WORK/capt"
for _ in 1 2 3; do
  rm -f "$WORK/n.gpuscope"
  "$GPUSCOPE" profile -o "$WORK/n" -- python3 "$WORK/od_prog.py" 8 2>/dev/null |
    awk '/^step_ms/ { print $2 }' >>"$WORK/normal"
  rm -f "$WORK/c.gpuscope"
  "$GPUSCOPE" profile --on-demand -o "$WORK/c" -- python3 "$WORK/od_prog.py" 8 >"$WORK/c.out" 2>/dev/null &
  cprof=$!
  for _ in $(seq 200); do [ -n "$("$GPUSCOPE" capture --list 2>/dev/null)" ] && break; sleep 0.1; done
  "$GPUSCOPE" capture --duration 60 c >/dev/null 2>&1 || fail "capture for the cost run"
  wait "$cprof" || true
  awk '/^step_ms/ { print $2 }' "$WORK/c.out" >>"$WORK/capt"
done
n=$(med "$WORK/normal"); k=$(med "$WORK/capt")
cpct=$(awk -v a="$k" -v b="$n" 'BEGIN { printf "%.2f", (a - b) / b * 100 }')
echo "capture cost: step $n ms in a normal profile, $k ms inside a capture: ${cpct}% (the same is the target)"
awk -v x="$cpct" 'BEGIN { exit !(x <= 3 && x >= -3) }' || fail "a capture costs ${cpct}% more than a normal profile"

[ "$failures" = 0 ] && echo ok
exit $((failures > 0))
