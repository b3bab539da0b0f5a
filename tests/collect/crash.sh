#!/usr/bin/env bash
# A crashing target (abort, SIGSEGV) leaves a report with everything it
# recorded: the target marks "tick" every 1 ms for 200 ms and then "last"
# right before it crashes, so every record of the last 100 ms is checked.
. "$(dirname "$0")/lib.sh"
for how in abort segv; do
  export GPUSCOPE_FLUSH_MS=50
  profile -o "$how" -- "$GS_TARGET" "$how"
  [ -f "$how.gpuscope" ] || fail "$how: no report"
  expect_eq "$(ndump "$how.gpuscope" nvtx_mark 'name="tick"')" 200 "$how: tick marks"
  expect_eq "$(ndump "$how.gpuscope" nvtx_mark 'name="last"')" 1 "$how: the mark just before the crash"
  "$GPUSCOPE" info "$how.gpuscope" | grep -q 'did not finish cleanly' || fail "$how: shown as a clean end"
done
echo ok
