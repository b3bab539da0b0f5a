#!/usr/bin/env bash
# close_range() and closefrom() over every descriptor (Python's
# os.closerange, daemons) close the program's descriptors but not the
# collector's part file: the report stays whole and nothing is printed.
. "$(dirname "$0")/lib.sh"
profile -o cr -- "$GS_TARGET" closerange 2>err
expect_eq "$rc" 0 status
grep -v "^gpuscope: wrote" err && fail "unexpected output on stderr"
expect_eq "$(ndump cr.gpuscope nvtx_mark 'name="fd"')" 50 "marks after close_range"
"$GPUSCOPE" info cr.gpuscope >info.txt
grep -q 'did not finish cleanly' info.txt && fail "stream not ended: $(cat info.txt)"
command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh installs it)"
profile -o py -- python3 -c 'import os; os.closerange(3, 65536); print("ok")' >out 2>err
expect_eq "$rc" 0 "python status"
expect_eq "$(cat out)" ok "python output"
grep -v "^gpuscope: wrote" err && fail "unexpected output on stderr (python)"
"$GPUSCOPE" info py.gpuscope | grep -q 'did not finish cleanly' && fail "python: stream not ended"
# the collector's own descriptors survive it too: the CPU sampler, at 1 kHz,
# does not open them again (each for a moment at the lowest free number)
# while the program opens and closes one for 300 ms after its close_range
profile -o lowest --cpu-sample-hz 1000 -- "$GS_TARGET" lowest closerange >out
expect_eq "$rc" 0 "status after close_range ($(cat out))"
echo ok
