#!/usr/bin/env bash
# The start-up hook against a stand-in torch with CUDA (fake_torch/, no GPU
# needed): it waits for CUDA, attaches its step hook and OOM observer, and
# the records carry exactly the allocator's figures; --torch-memory-history
# turns on the history (the module torch imports for it imported by the
# program's thread, not the hook's) and names the allocation's frame; GPUSCOPE_TORCH_MEM=0
# and running outside `profile` leave the program alone.
. "$(dirname "$0")/lib.sh"
FAKE="$HERE/fake_torch"
PROG="$HERE/prog_fake.py"
SITE="$GS_BUILD_DIR/gpuscope_site"
[ -f "$SITE/sitecustomize.py" ] || fail "no hook at $SITE"

export GPUSCOPE_TORCH_MEM_MS=20
# every step sampled (the program's 5 steps come microseconds apart: the default budget samples one)
# peak snapshots from 1 MiB of allocated memory (the stand-in allocates 1 to 6 MiB)
GPUSCOPE_TORCH_MEM_PEAK_MIN_MB=1 GPUSCOPE_TORCH_MEM_STEP_BUDGET=0 PYTHONPATH="$FAKE" \
  profile -o fake --torch-memory-history -- "$PY" "$PROG" >out 2>err
expect_eq "$rc" 0 "status (err: $(own_err err))"
# the history's lazy import is made by the program's thread at a step, never by the hook's
expect_eq "$(tr '\n' ' ' <out)" "history True MainThread done " "the program's output"

"$GPUSCOPE" dump --type torch_mem fake.gpuscope | grep ' kind=step ' | cut -d' ' -f2- | sed 's/pid=[0-9]*/pid=PID/' >steps
# step i (1..5): allocated (1 + i) MiB, reserved twice that, split a quarter, 3 allocations and 1 free a step
: >expect
for i in 1 2 3 4 5; do
  a=$(( (1 + i) << 20 ))
  echo "torch_mem pid=PID device=0 kind=step allocated=$a reserved=$((2 * a)) active=$((a + 4096)) inactive_split=$((a / 4)) allocated_peak=$((a + 1048576)) reserved_peak=$((2 * a + 1048576)) allocs=$((100 + 3 * i)) frees=$((50 + i)) retries=2 ooms=0 segments=$((3 + i)) step=$i" >>expect
done
diff -u expect steps || fail "step samples differ from the allocator's figures"
# the default budget (0.25% of the program's time): a step is sampled when the last step sample's
# cost is at most 0.25% of the time since it began; 5 steps within microseconds of each other, each
# sample taking tens of us, give the first two steps' samples (the gate's cost is the smaller of
# the last two; none is known before them) and none of the next three (unless the machine stalls
# the program for 400 sample lengths between two steps: fewer than 5 in any case)
PYTHONPATH="$FAKE" profile -o rate -- "$PY" "$PROG" >out 2>err
expect_eq "$rc" 0 "status with the default step budget (err: $(own_err err))"
n=$("$GPUSCOPE" dump --type torch_mem rate.gpuscope | grep -c ' kind=step ')
first=$("$GPUSCOPE" dump --type torch_mem rate.gpuscope | grep ' kind=step ' | head -1 | grep -o ' step=[0-9]*')
{ [ "$n" -ge 2 ] && [ "$n" -lt 5 ]; } || fail "default step budget: $n step samples of 5 back-to-back steps"
expect_eq "$first" " step=1" "the first step is sampled"
# the sampling thread: at least the first sample after CUDA came up; one at exit
[ "$("$GPUSCOPE" dump --type torch_mem fake.gpuscope | grep -c ' kind=periodic ')" -ge 1 ] || fail "no periodic sample"
[ "$("$GPUSCOPE" dump --type torch_mem fake.gpuscope | grep -c ' kind=peak ')" -ge 1 ] || fail "no sample at exit"

"$GPUSCOPE" dump --type oom fake.gpuscope | grep ' kind=oom ' | cut -d' ' -f2- | sed 's/pid=[0-9]*/pid=PID/' >oom
# free and total from mem_get_info (3 and 80 MiB); the snapshot's 8 MiB free block; frames with the history
expect_eq "$(cat oom)" 'oom pid=PID device=0 kind=oom requested=52428800 free=3145728 total=83886080 allocated=6291456 reserved=12582912 inactive_split=1572864 largest_free=8388608 blocks=41943040,16777216 detail="67108864 segment\n41943040 allocated train.py:12:forward\n16777216 allocated"' "oom record"

"$GPUSCOPE" analyze fake.gpuscope >an 2>&1 || fail "analyze: $(cat an)"
grep -q '\[out-of-memory, critical\]' an || fail "no out-of-memory finding: $(cat an)"
grep -q '\[memory-leak, critical\]' an || fail "no memory-leak finding: $(cat an)"
grep -q '40.0 MiB allocated train.py:12:forward' an || fail "the OOM does not name the allocation: $(cat an)"
# the peak snapshots (--torch-memory-history): at least the first periodic sample's (1 MiB or more
# allocated), each at least 10% above the one before, requested 0, not counted as OOMs
"$GPUSCOPE" dump --type oom fake.gpuscope | grep ' kind=peak ' >peaks || fail "no peak snapshot"
grep -q ' requested=0 .*detail="67108864 segment\\n41943040 allocated train.py:12:forward' peaks || fail "peak record: $(cat peaks)"
"$PY" - peaks <<'PY' || fail "peak snapshots not 10% apart: $(cat peaks)"
import re, sys
a = [int(re.search(r" allocated=(\d+)", l).group(1)) for l in open(sys.argv[1])]
assert a and a[0] >= 1 << 20 and all(y >= x * 1.1 for x, y in zip(a, a[1:])), a
PY
"$GPUSCOPE" stats --report torch_mem_sum fake.gpuscope >st 2>&1
grep -q '^note: 1 out-of-memory event;' st || fail "peak snapshots counted as OOMs: $(cat st)"
# the leak names what the highest snapshot held
grep -q 'at the highest snapshot (.* allocated at .*--torch-memory-history) the largest live allocations were:' an ||
  fail "the leak does not name the peak's allocations: $(cat an)"

# switched off: the hook does not attach (the program says so and exits 3)
GS_FAKE_WAIT_S=1 GPUSCOPE_TORCH_MEM=0 PYTHONPATH="$FAKE" profile -o off -- "$PY" "$PROG" >out 2>err
expect_eq "$rc" 3 "status with GPUSCOPE_TORCH_MEM=0"
expect_eq "$("$GPUSCOPE" dump --type torch_mem,oom off.gpuscope | wc -l)" 0 "records with GPUSCOPE_TORCH_MEM=0"
# the hook on the path but no collector preloaded (outside profile): inert
rc=0; GS_FAKE_WAIT_S=1 PYTHONPATH="$SITE:$FAKE" "$PY" "$PROG" >out 2>&1 || rc=$?
expect_eq "$rc" 3 "status outside profile"
echo ok
