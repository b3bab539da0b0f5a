#!/usr/bin/env bash
# The collector's entry points for PyTorch's allocator, called through ctypes
# from /usr/bin/python3 inside a profiled run (as the start-up hook calls
# them), read back with `dump` and `stats --report torch_mem_sum`; outside
# `profile` the entry points are not there, so the hook records nothing.
. "$(dirname "$0")/lib.sh"

cat >rec.py <<'PY'
import ctypes, sys
lib = ctypes.CDLL(None)          # the preloaded collector
u64 = ctypes.c_uint64
print("abi", lib.gpuscope_torch_mem_abi())
f = lib.gpuscope_torch_mem_sample
f.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int64, ctypes.POINTER(u64),
              ctypes.c_uint32, ctypes.c_uint32]
# allocated reserved active inactive_split allocated_peak reserved_peak allocs frees retries ooms segments
full = (u64 * 11)(1000, 4000, 1500, 900, 2000, 5000, 70, 30, 2, 1, 6)
print("full", f(1, 2, 7, full, 11, 15))
# only allocated and reserved (what Kineto has): the rest is unknown, whatever the flags say
part = (u64 * 2)(111, 222)
print("part", f(0, 1, -1, part, 2, 15))
o = lib.gpuscope_torch_oom
o.argtypes = [ctypes.c_uint32, ctypes.POINTER(u64), ctypes.c_uint32, ctypes.POINTER(u64),
              ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32]
ov = (u64 * 7)(52428800, 1048576, 85899345920, 80000000000, 85000000000, 3000000000, 20971520)
blocks = (u64 * 3)(40000000000, 20000000000, 1000)
print("oom", o(1, ov, 7, blocks, 3, b"40000000000 allocated train.py:12:forward", 15))
# a peak snapshot (flag 16): not an out-of-memory, requested 0
pv = (u64 * 7)(0, 1048576, 85899345920, 70000000000, 75000000000, 1000, 0)
print("peak", o(1, pv, 7, blocks, 2, b"40000000000 allocated train.py:12:forward", 16 | 11))
print("bad", f(0, 1, 0, None, 3, 0))
PY
profile -o rec --trace=osrt -- "$PY" rec.py >out 2>err
expect_eq "$rc" 0 "status of the ctypes program"
expect_eq "$(tr '\n' ' ' <out)" "abi 1 full 1 part 1 oom 1 peak 1 bad -1 " "entry points' answers"

"$GPUSCOPE" dump --type torch_mem,oom rec.gpuscope | cut -d' ' -f2- >dump
cat >expect <<'EOF2'
torch_mem pid=PID device=1 kind=step allocated=1000 reserved=4000 active=1500 inactive_split=900 allocated_peak=2000 reserved_peak=5000 allocs=70 frees=30 retries=2 ooms=1 segments=6 step=7
torch_mem pid=PID device=0 kind=periodic allocated=111 reserved=222 active=- inactive_split=- allocated_peak=- reserved_peak=- allocs=- frees=- retries=- ooms=- segments=- step=-
oom pid=PID device=1 kind=oom requested=52428800 free=1048576 total=85899345920 allocated=80000000000 reserved=85000000000 inactive_split=3000000000 largest_free=20971520 blocks=40000000000,20000000000,1000 detail="40000000000 allocated train.py:12:forward"
oom pid=PID device=1 kind=peak requested=0 free=1048576 total=85899345920 allocated=70000000000 reserved=75000000000 inactive_split=1000 largest_free=- blocks=- detail="40000000000 allocated train.py:12:forward"
EOF2
sed -i 's/pid=[0-9]*/pid=PID/' dump
diff -u expect dump || fail "dumped records differ from what the program passed"

"$GPUSCOPE" stats --report torch_mem_sum --format csv rec.gpuscope >st 2>&1 || fail "stats: $(cat st)"
# MB are 10^6 bytes; fragmentation 900 / 4000 = 22.5%; device 0's peaks, split and counters unknown
grep -q '^[0-9]*,1,profile hook,1,1,0.001,0.001,0.004,0.004,0.002,0.005,0.001,22.5,2,1,6$' st ||
  fail "device 1 row: $(cat st)"
grep -q '^[0-9]*,0,profile hook,1,0,0.000,0.000,0.000,0.000,-,-,-,-,-,-,-$' st ||
  fail "device 0 row (unknown is -, not 0): $(cat st)"
"$GPUSCOPE" stats --report torch_mem_sum rec.gpuscope >st2 2>&1
grep -q '1 out-of-memory event; the first: pid [0-9]* device 1 asked for 52.4 MB with 1.0 MB free' st2 ||
  fail "stats note: $(cat st2)"

# analyze: the OOM is diagnosed (a cache with 5 GB free but no block of 50 MiB: fragmentation)
"$GPUSCOPE" analyze rec.gpuscope >an 2>&1 || fail "analyze: $(cat an)"
grep -q 'Out of memory, with the cache fragmented.*\[out-of-memory, critical\]' an || fail "analyze: $(cat an)"
grep -q 'expandable_segments:True' an || fail "analyze fix: $(cat an)"

# counter tracks in the Chrome export: allocated of both samples, reserved of both (each known)
"$GPUSCOPE" export rec.gpuscope --format chrome -o rec.json >/dev/null 2>&1 || fail "export chrome"
"$PY" - rec.json >tracks <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
for e in ev:
    if e.get("ph") == "C" and " torch " in e.get("name", ""):
        print(e["name"].split(" pid ")[0], e["args"]["value"])
PY
expect_eq "$(sort tracks | tr '\n' ';')" "GPU 0 torch allocated 111;GPU 0 torch reserved 222;GPU 1 torch allocated 1000;GPU 1 torch reserved 4000;" "Chrome counter tracks"
"$GPUSCOPE" export rec.gpuscope -o rec.pftrace >/dev/null 2>&1 || fail "export perfetto"

# outside profile the entry points do not exist: the hook finds nothing to call
"$PY" -c 'import ctypes; print(hasattr(ctypes.CDLL(None), "gpuscope_torch_mem_sample"))' >plain
expect_eq "$(cat plain)" "False" "entry points outside profile"
echo "ok"
