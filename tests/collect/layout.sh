#!/usr/bin/env bash
# The collector leaves the program's address-space layout as it would be
# unprofiled (src/collect/layout.c).  Under a normal profile and on demand, a
# library the program dlopen()s after its start lands exactly where it lands
# unprofiled, measured from libc's base (a block table of 80 KiB in the hole
# below libc moved it), and a 16 MiB anonymous mapping made after it within
# 4 MiB (the kernel aligns a large anonymous mapping to 2 MiB, so its
# distance from libc's random base varies by up to 2 MiB run to run; 4 MiB is
# half the smallest thing the collector maps at its start, a thread's stack
# or the 8 MiB stage).  With GPUSCOPE_KEEP_LAYOUT=0 the start-up mappings (the
# 2 GiB block pool first) lie in between: the check must see them.
. "$(dirname "$0")/lib.sh"
lib=libz.so.1
off() { sed -n "s/^anon \(-\{0,1\}[0-9]*\) lib \(-\{0,1\}[0-9]*\)$/\\$1/p" "$2"; }
near() {    # near WHAT GOT WANT: |GOT - WANT| <= 4 MiB
  local d=$(( $2 - $3 ))
  [ "${d#-}" -le $((4 << 20)) ] || fail "$1: $2 bytes from libc, unprofiled $3 ($d apart)"
}
"$GS_TARGET" layout $lib >plain || fail "gs_target layout $lib: $(cat plain)"
for mode in "" --on-demand; do
  profile -f -o l $mode -- "$GS_TARGET" layout $lib >out
  expect_eq "$rc" 0 "status ($mode)"
  near "anonymous mapping ($mode)" "$(off 1 out)" "$(off 1 plain)"
  expect_eq "$(off 2 out)" "$(off 2 plain)" "library's distance from libc ($mode)"
done
GPUSCOPE_KEEP_LAYOUT=0 profile -f -o l --on-demand -- "$GS_TARGET" layout $lib >out
expect_eq "$rc" 0 "status (KEEP_LAYOUT=0)"
d=$(( $(off 1 out) - $(off 1 plain) ))
expect_ge "${d#-}" $((1 << 30)) "anonymous mapping moved without the hold"
# an address-space limit: no placeholder (it would count against the limit),
# the program runs and is recorded as before
(ulimit -v $((6 << 20)); "$GPUSCOPE" profile -f -o lim -- "$GS_TARGET" layout $lib) >out ||
  fail "under ulimit -v: $(cat out)"
[ -n "$(off 2 out)" ] || fail "under ulimit -v: no offsets ($(cat out))"
expect_ge "$(count lim.gpuscope "processes")" 1 "a report under ulimit -v"
# the Python allocator hook's thread is started under the same hold when the
# program imports torch (sitecustomize.py): torch's library lands where it does
# unprofiled, give or take Python's own start-up (where torch lands varies by
# about 2 MiB between runs): within 4 MiB, less than the hook thread's 8 MiB
# stack, which lay in between when its start was not held
py=/usr/bin/python3
if $py -c 'import torch' 2>/dev/null; then
  mo="$GS_SOURCE_DIR/bench/overhead/map_offset.py"
  a=$($py "$mo" | awk '{print $3}')
  profile -o t --on-demand -- $py "$mo" >out
  expect_eq "$rc" 0 "status (torch)"
  b=$(awk '{print $3}' out)
  d=$(( b - a ))
  [ "${d#-}" -le $((4 << 20)) ] || fail "libtorch_cpu: $b from libc, unprofiled $a"
else
  echo "no PyTorch for $py: its part skipped"
fi
echo ok
