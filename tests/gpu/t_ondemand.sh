#!/usr/bin/env bash
# profile --on-demand with CUDA (docs/always-on.md), on the GPU machine:
#  1. a PyTorch loop of NVTX-named steps, triggered mid-run by
#     `gpuscope capture --steps 10 NAME` from this script: every kernel of the
#     report lies inside the capture window, there is at least one kernel in
#     it, and none before it (CUDA was not traced while idle);
#  2. a second capture by pid: two captures listed by `info`, both with rings;
#  3. the idle cost: the launch-bound PyTorch step under --on-demand (never
#     triggered) against unprofiled, by bench/overhead/lockstep.sh (processes
#     of every configuration taking turns block by block; an A/A pair of
#     unprofiled processes checks the method): at most 0.5%, the issue's target
#     (met on the H200 since the collector keeps the program's layout: this
#     test read +0.45% on 2026-12-05, and three runs pool to +0.22%; before,
#     +0.90% over eleven runs; bench/results/lockstep-b-h200-2026-12-02/ r20-r22);
#  4. the cost inside a capture against a normal profile, in lockstep too:
#     within 2% of each other (both pay CUDA tracing's ~20% on this step).
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

# 3 and 4: the costs, measured by bench/overhead/lockstep.sh on the launch-bound PyTorch step
# (workload b): processes of each configuration take turns block by block.  3: unprofiled twice
# (the A/A check) and --on-demand never triggered, LS_COPIES processes each (8: with fewer, one
# slow process moves a configuration's mean by a point or more); 4: --on-demand inside one capture
# open all along against a normal profile, 3 processes each (their difference is judged to 2%).
# The issue's targets: idle <= 0.5% against unprofiled, a capture the same as a normal profile.
lockstep() {   # NAME COPIES RUN_S CONFIGS
  GPUSCOPE=$GPUSCOPE OUT=$WORK/$1 W=b COPIES=$2 RUN_S=$3 CONFIGS="$4" \
    timeout 400 bash "$here/../../bench/overhead/lockstep.sh" || fail "lockstep.sh ($1) exited $?"
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$WORK/$1/lockstep.txt" "$KEEP/$1.txt"
}
lockstep idle "${LS_COPIES:-8}" "${LS_RUN_S:-80}" "none none2 ondemand"
lockstep capt 3 40 "profile capture"
python3 - "$WORK/idle/summary.json" "$WORK/capt/summary.json" <<'PY' || fail "costs (above)"
import json, sys
idle = {k: v["time"] for k, v in json.load(open(sys.argv[1]))["vs_reference"].items()}
capt = json.load(open(sys.argv[2]))["vs_reference"]["capture"]["time"]
def show(what, r):
    print("%s: %+.2f%% (95%% %+.2f%% to %+.2f%%)" % (what, r["pct"], r["lo"], r["hi"]))
show("A/A, unprofiled against unprofiled", idle["none2"])
show("idle cost, --on-demand against unprofiled (target <= 0.5%)", idle["ondemand"])
show("a capture against a normal profile (target: the same)", capt)
bad = 0
if not idle["none2"]["lo"] <= 0 <= idle["none2"]["hi"]:
    print("FAIL: the A/A check reads a difference: this run cannot resolve the idle cost"); bad = 1
if idle["ondemand"]["pct"] > 0.5:
    print("FAIL: idle cost %+.2f%% above 0.5%%" % idle["ondemand"]["pct"]); bad = 1
if abs(capt["pct"]) > 2:
    print("FAIL: a capture costs %+.2f%% against a normal profile" % capt["pct"]); bad = 1
sys.exit(bad)
PY

[ "$failures" = 0 ] && echo ok
exit $((failures > 0))
