#!/usr/bin/env bash
# Records lost to a file-size limit are counted as write drops, with a
# warning (issue 19, item 8).  The program runs under `ulimit -f` (dash: 512-byte
# blocks, here 100 KB), far less than its 200,000 ranges need; profile itself
# is not limited, so the merged report holds what the part kept plus the
# counts.  Every range is either kept or counted: kept + dropped lies within
# the few other records (4 threads' start and end, strings, the processes:
# fewer than 50 with no CPU sampling) of 200,000.
. "$(dirname "$0")/lib.sh"
profile -o w --trace=nvtx --cpu-sample-hz 0 -- /bin/sh -c 'ulimit -f 200; exec "$0" nvtx 4 50000' "$GS_TARGET"
expect_eq "$rc" 0 "status (no SIGXFSZ)"
kept=$(count w.gpuscope 'nvtx ranges')
dropped=$(count w.gpuscope 'dropped:')
expect_ge "$dropped" 1 "records dropped"
expect_le "$kept" 199999 "ranges kept"
expect_ge "$((kept + dropped))" 200000 "ranges kept + records dropped"
expect_le "$((kept + dropped))" 200050 "ranges kept + records dropped"
"$GPUSCOPE" info w.gpuscope >info.txt
grep -Eq '^ +write +[0-9]+' info.txt || fail "no write drops in info: $(cat info.txt)"
grep -q 'records were not written to the part file' info.txt || fail "no warning: $(cat info.txt)"
grep -q 'did not finish cleanly' info.txt && fail "stream not ended"
echo ok
