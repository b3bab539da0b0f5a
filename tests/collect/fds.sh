#!/usr/bin/env bash
# A program that closes every descriptor and dup2()s onto all of them keeps
# its report whole: the collector's part file survives (close refused, dup2
# moves it), nothing of the collector closes the program's descriptors, and
# the program's own close() of a number it took over works.
. "$(dirname "$0")/lib.sh"
profile -o fds -- "$GS_TARGET" fds >out
expect_eq "$rc" 0 status
# the program's dup2()s onto the collector's descriptors made those numbers its
# own: its close() of them works; only the part file (moved there) stays
left=$(awk '$1 == "left" { print $2 }' out)
[ -n "$left" ] && [ "$left" -le 1 ] || fail "descriptors left open after the program closed them: '$left'"
# ... also when it closes them at once, before the CPU sampler looks again
profile -o quick -- "$GS_TARGET" fds quick >out
expect_eq "$rc" 0 "status (quick)"
left=$(awk '$1 == "left" { print $2 }' out)
[ -n "$left" ] && [ "$left" -le 1 ] || fail "descriptors left open, closed at once: '$left'"
expect_eq "$(ndump fds.gpuscope nvtx_mark 'name="fd"')" 50 "marks after the descriptors were replaced"
"$GPUSCOPE" info fds.gpuscope >info.txt
grep -q 'did not finish cleanly' info.txt && fail "stream not ended: $(cat info.txt)"
grep -qiE 'truncated|damaged|skipped|bad chunk' info.txt && fail "report damaged: $(cat info.txt)"
echo ok
