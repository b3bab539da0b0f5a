#!/usr/bin/env bash
# A process of the tree that outlives the program by a moment (Python's
# resource tracker, a pipeline's writers) still ends its part cleanly: profile
# waits briefly for it, and reaps it (no zombie).
. "$(dirname "$0")/lib.sh"
profile -o orph -- "$GS_TARGET" orphan
expect_eq "$rc" 0 status
expect_eq "$(ndump orph.gpuscope nvtx_mark 'name="orphan"')" 10 "marks of the orphan"
expect_eq "$(count orph.gpuscope 'processes:')" 2 processes
"$GPUSCOPE" info orph.gpuscope | grep -q 'did not finish cleanly' && fail "orphan's stream not ended"
echo ok
