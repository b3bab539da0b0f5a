#!/usr/bin/env bash
# Kineto's [memory] events (torch.profiler with profile_memory=True) as
# samples of the caching allocator: a small trace written here in Kineto's
# format (Debian's torch is built without Kineto, so none can be recorded on
# CI) where the allocated memory at the end of each ProfilerStep grows, and
# its twin where every step frees what it allocated; then a real H100 trace
# from the shared validation corpus, whose figures Python reads from the same
# JSON.  The shared corpus is found at $GS_SHARED_DIR, else
# $GS_SOURCE_DIR/../shared, else /work/shared; without it that part is skipped.
. "$(dirname "$0")/lib.sh"

# gen LEAK OUT: 6 steps of 10 ms; each allocates 64 MiB of activations and frees them, and with
# LEAK=1 keeps 16 MiB more (a loss kept with its graph); a CPU [memory] event too (not the GPU's)
gen() {
  "$PY" - "$1" "$2" <<'PY'
import json, sys
leak, out = int(sys.argv[1]), sys.argv[2]
MiB = 1 << 20
ev, alloc, res, addr = [], 512 * MiB, 1024 * MiB, 0x7f0000000000
def mem(ts, b, dev=0, typ=1):
    global alloc
    if typ == 1:
        alloc += b
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
               "ts": ts, "args": {"Total Reserved": res if typ == 1 else 0, "Total Allocated": alloc if typ == 1 else 4096,
                                  "Bytes": b, "Addr": addr, "Device Id": dev, "Device Type": typ}})
for s in range(6):
    t = 1000.0 + s * 10000.0
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 7, "tid": 7,
               "ts": t, "dur": 9900.0, "args": {}})
    mem(t + 100, 64 * MiB)
    if leak:
        mem(t + 200, 16 * MiB)
    mem(t + 9000, -64 * MiB)
    mem(t + 9100, 4096, -1, 0)
json.dump({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
           "totalGlobalMem": 85045477376, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
           "traceEvents": ev}, open(out, "w"))
PY
}
gen 1 leak.json
gen 0 steady.json
"$GPUSCOPE" dump --type torch_mem leak.json | head -2 | cut -d' ' -f2- >d
cat >expect <<'EOF2'
torch_mem pid=7 device=0 kind=alloc allocated=603979776 reserved=1073741824 active=- inactive_split=- allocated_peak=- reserved_peak=- allocs=- frees=- retries=- ooms=- segments=- step=- delta=67108864
torch_mem pid=7 device=0 kind=alloc allocated=620756992 reserved=1073741824 active=- inactive_split=- allocated_peak=- reserved_peak=- allocs=- frees=- retries=- ooms=- segments=- step=- delta=16777216
EOF2
diff -u expect d || fail "Kineto [memory] events as samples"
# 18 GPU events (the CPU ones are not the CUDA allocator's)
expect_eq "$("$GPUSCOPE" dump --type torch_mem leak.json | wc -l)" 18 "samples from the GPU's [memory] events"

"$GPUSCOPE" analyze leak.json >an 2>&1 || fail "analyze: $(cat an)"
grep -q '\[memory-leak, warning\]' an || fail "no leak in the growing trace: $(cat an)"
grep -q 'allocated memory at the end of each of 6 steps (steps 1 to 6) grew from 528.0 MiB to 608.0 MiB, rising in 5 of 5' an ||
  fail "leak evidence: $(cat an)"
"$GPUSCOPE" analyze steady.json >an 2>&1 || fail "analyze: $(cat an)"
grep -q 'memory-leak' an && fail "a leak in the steady trace: $(cat an)"
# 1 GiB reserved of 79.2 GiB: headroom (no step samples: the bound covers all allocated memory)
grep -q '\[memory-headroom, info\]' an || fail "no headroom in the steady trace: $(cat an)"

shared=${GS_SHARED_DIR:-}
[ -n "$shared" ] || { [ -d "$GS_SOURCE_DIR/../shared" ] && shared="$GS_SOURCE_DIR/../shared"; } || true
[ -n "$shared" ] || shared=/work/shared
real="$shared/validation/real/tracelens__h100_timesformer_inference.json.gz"
if [ ! -f "$real" ]; then
  echo "ok (the shared corpus is absent: $real not checked)"
  exit 0
fi
"$PY" - "$real" >want <<'PY'
import gzip, json, sys
ev = [e for e in json.load(gzip.open(sys.argv[1]))["traceEvents"] if e.get("name") == "[memory]"]
gpu = [e["args"] for e in ev if e["args"].get("Device Type") == 1]
print("%d,%d,%.3f,%.3f" % (len(gpu), gpu[0]["Device Id"], max(a["Total Allocated"] for a in gpu) / 1e6,
                           max(a["Total Reserved"] for a in gpu) / 1e6))
PY
"$GPUSCOPE" stats --report torch_mem_sum --format csv "$real" | awk -F, 'NR == 2 { print $4 "," $2 "," $6 "," $8 }' >got
diff -u want got || fail "the real trace's allocator figures (samples, device, allocated max, reserved max)"
echo ok
