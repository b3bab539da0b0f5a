#!/usr/bin/env bash
# PyTorch's caching allocator through the profile hook (docs/memory.md), with CUDA:
#  1. the hook's step samples equal torch.cuda.memory_stats() as the program
#     prints it right after each optimizer.step();
#  2. a provoked OOM (a 1 TiB request, caught by the program) is recorded with
#     the request and the device's capacity, and `analyze` diagnoses it;
#  3. the hook's cost: the time of one sample of every device in use, against
#     the loop's step time (at most 0.5% for the step samples the default
#     GPUSCOPE_TORCH_MEM_STEP_BUDGET allows plus the periodic ones), and the step time with the hook against GPUSCOPE_TORCH_MEM=0
#     (printed, not asserted: two runs differ by more than the hook costs);
#  4. --torch-memory-history's peak snapshots name allocations with the
#     program's stacks and are not counted as OOMs (step time printed).
. "$(dirname "$0")/lib.sh"
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "SKIP: no torch with CUDA"; exit 77; }

cat >"$WORK/mem_prog.py" <<'PY'
import sys, time
import torch
steps = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(512, 2048, device="cuda")
time.sleep(0.5)     # CUDA is up: the hook's thread attaches before the first step
keys = ["allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current",
        "inactive_split_bytes.all.current", "allocation.all.allocated", "allocation.all.freed",
        "num_alloc_retries", "num_ooms", "segment.all.current"]
ends = []
for step in range(steps):
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    s = torch.cuda.memory_stats()
    print("stats", step + 1, " ".join(str(s.get(k, 0)) for k in keys))
    opt.zero_grad(set_to_none=True)
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    ends.append(e)
torch.cuda.synchronize()
ms = sorted(ends[i - 1].elapsed_time(ends[i]) for i in range(1, len(ends)))
print("step_ms %.4f" % ms[len(ms) // 2])
# one sample's cost, as the hook takes it (the allocator's stats of each device in use)
t0 = time.perf_counter()
for _ in range(200):
    torch._C._cuda_memoryStats(0)
print("sample_us %.1f" % ((time.perf_counter() - t0) / 200 * 1e6))
if len(sys.argv) > 2:
    try:
        torch.empty(1 << 40, dtype=torch.uint8, device="cuda")
    except torch.cuda.OutOfMemoryError:
        print("oom caught")
PY

run() { # NAME ARGS...: profile the program (CPU side only: the hook needs no CUDA tracing)
	local name=$1
	shift
	timeout 300 "$GPUSCOPE" profile -o "$WORK/$name" --force --trace=nvtx,osrt -- python3 "$WORK/mem_prog.py" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" || die "profile $name: $(tail -5 "$WORK/$name.err")"
}

# every step sampled for the comparison with memory_stats() (the default budget samples 3.3 ms steps every 2nd or 3rd)
GPUSCOPE_TORCH_MEM_STEP_BUDGET=0 run mem 20 oom
grep -q '^oom caught$' "$WORK/mem.out" || fail "the program did not see its OOM"
# 1. step samples against the program's own memory_stats()
"$GPUSCOPE" dump --type torch_mem "$WORK/mem.gpuscope" | awk '/ kind=step / {
	for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	print "stats", v["step"], v["allocated"], v["reserved"], v["active"], v["inactive_split"], v["allocs"],
	      v["frees"], v["retries"], v["ooms"], v["segments"] }' \
	>"$WORK/hook.txt"
grep '^stats ' "$WORK/mem.out" >"$WORK/prog.txt"
[ "$(wc -l <"$WORK/prog.txt")" = 20 ] || fail "program printed $(wc -l <"$WORK/prog.txt") steps"
diff "$WORK/prog.txt" "$WORK/hook.txt" >"$WORK/diff.txt" && echo "step samples: 20 of 20 equal memory_stats()" ||
	fail "step samples differ from memory_stats(): $(head -10 "$WORK/diff.txt")"
# 2. the OOM
oom=$("$GPUSCOPE" dump --type oom "$WORK/mem.gpuscope")
echo "oom record: $oom"
echo "$oom" | grep -q ' requested=1099511627776 ' || fail "OOM request not recorded"
echo "$oom" | grep -Eq ' total=1[0-9]{11} ' || fail "device capacity not recorded"
"$GPUSCOPE" analyze "$WORK/mem.gpuscope" >"$WORK/an.txt" 2>&1
grep -q 'Out of memory on a batch-sized allocation.*\[out-of-memory, critical\]' "$WORK/an.txt" ||
	fail "analyze: $(grep -A6 'out-of-memory' "$WORK/an.txt" | head -8)"
grep -A8 'out-of-memory' "$WORK/an.txt" | head -9
# 3. cost
step_ms=$(sed -n 's/^step_ms //p' "$WORK/mem.out")
sample_us=$(sed -n 's/^sample_us //p' "$WORK/mem.out")
# with the default step budget (0.25%), a step is sampled at most every sample / 0.0025 ms
cost=$(awk -v s="$step_ms" -v u="$sample_us" 'BEGIN { gap = u / 1000 / 0.0025; if (gap < s) gap = s
	printf "%.3f", 100 * (u / 1000 / gap + u / 1000 / 100) }')
echo "cost: one sample ${sample_us} us, step ${step_ms} ms: ${cost}% (step samples within the 0.25% budget plus periodic samples every 100 ms)"
awk -v c="$cost" 'BEGIN { exit !(c <= 0.5) }' || fail "hook cost ${cost}% > 0.5%"
run on 200
GPUSCOPE_TORCH_MEM=0 run off 200
echo "step time with the hook $(sed -n 's/^step_ms //p' "$WORK/on.out") ms, without $(sed -n 's/^step_ms //p' "$WORK/off.out") ms"
[ "$("$GPUSCOPE" dump --type torch_mem "$WORK/off.gpuscope" | wc -l)" = 0 ] || fail "samples with GPUSCOPE_TORCH_MEM=0"
# 4. --torch-memory-history: peak snapshots (at new highs of allocated memory, from 64 MiB on)
# name the largest live allocations with the program's own stacks; not counted as OOMs
timeout 300 "$GPUSCOPE" profile -o "$WORK/hist" --force --trace=nvtx,osrt --torch-memory-history -- \
	python3 "$WORK/mem_prog.py" 200 >"$WORK/hist.out" 2>"$WORK/hist.err" || die "profile hist: $(tail -5 "$WORK/hist.err")"
"$GPUSCOPE" dump --type oom "$WORK/hist.gpuscope" | grep ' kind=peak ' >"$WORK/peaks.txt"
[ -s "$WORK/peaks.txt" ] || fail "no peak snapshot with --torch-memory-history"
grep -q 'mem_prog.py:' "$WORK/peaks.txt" || fail "peak snapshots without the program's stacks: $(head -c 600 "$WORK/peaks.txt")"
"$GPUSCOPE" stats --report torch_mem_sum "$WORK/hist.gpuscope" 2>&1 | grep -q 'out-of-memory event' &&
	fail "peak snapshots counted as out-of-memory events"
echo "peak snapshots: $(wc -l <"$WORK/peaks.txt"); step time with the history $(sed -n 's/^step_ms //p' "$WORK/hist.out") ms" \
	"(without it $(sed -n 's/^step_ms //p' "$WORK/on.out") ms)"
REPORT="$WORK/mem.gpuscope"
keep torchmem
finish
