#!/usr/bin/env bash
# Thread names: pthread_setname_np on itself, on another thread, nvtxNameOsThread.
. "$(dirname "$0")/lib.sh"
profile -o names -- "$GS_TARGET" names
expect_eq "$rc" 0 status
"$GPUSCOPE" info names.gpuscope >info.txt
for n in self-named outside-named nvtx-named; do
  grep -q " $n\$" info.txt || fail "thread '$n' not named: $(cat info.txt)"
done
# each named thread's mark is on the thread with that name
for n in self-named outside-named nvtx-named; do
  tid=$(grep " $n\$" info.txt | sed -E 's/.*tid ([0-9]+).*/\1/')
  expect_eq "$(ndump names.gpuscope nvtx_mark "tid=$tid name=\"in $n\"")" 1 "mark on '$n'"
done
echo ok
