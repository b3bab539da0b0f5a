#!/usr/bin/env bash
# A program that closes every descriptor and dup2()s onto all of them keeps
# its report whole: the collector's part file survives (close refused, dup2
# moves it), and nothing of the collector closes the program's descriptors.
. "$(dirname "$0")/lib.sh"
profile -o fds -- "$GS_TARGET" fds
expect_eq "$rc" 0 status
expect_eq "$(ndump fds.gpuscope nvtx_mark 'name="fd"')" 50 "marks after the descriptors were replaced"
"$GPUSCOPE" info fds.gpuscope >info.txt
grep -q 'did not finish cleanly' info.txt && fail "stream not ended: $(cat info.txt)"
grep -qiE 'truncated|damaged|skipped|bad chunk' info.txt && fail "report damaged: $(cat info.txt)"
echo ok
