#!/usr/bin/env bash
# --capture-range=nvtx:NAME with stop and repeat; --delay and --duration.
. "$(dirname "$0")/lib.sh"
profile -o stop --capture-range=nvtx:profile -- "$GS_TARGET" capture
expect_eq "$rc" 0 status
expect_eq "$(ndump stop.gpuscope nvtx_range 'name="profile"')" 1 "stop: profile ranges"
expect_eq "$(ndump stop.gpuscope nvtx_range 'name="inner"')" 3 "stop: inner ranges"
expect_eq "$(ndump stop.gpuscope nvtx_range 'name="(warmup|between|after)"')" 0 "stop: outside ranges"
expect_eq "$(count stop.gpuscope 'capture edges')" 2 "stop: capture edges"

profile -o rep --capture-range=nvtx:profile --capture-range-end=repeat -- "$GS_TARGET" capture
expect_eq "$(ndump rep.gpuscope nvtx_range 'name="profile"')" 2 "repeat: profile ranges"
expect_eq "$(ndump rep.gpuscope nvtx_range 'name="inner"')" 6 "repeat: inner ranges"
expect_eq "$(ndump rep.gpuscope nvtx_range 'name="(warmup|between|after)"')" 0 "repeat: outside ranges"
expect_eq "$(count rep.gpuscope 'capture edges')" 4 "repeat: capture edges"

profile -o dom --capture-range=nvtx:profile@other -- "$GS_TARGET" capture
expect_eq "$(count dom.gpuscope 'nvtx ranges')" 0 "a domain that never matches"

# marks every 10 ms, payload = ms since the target started; keep 200..400 ms
profile -o timed --delay 0.2 --duration 0.2 -- "$GS_TARGET" timed
"$GPUSCOPE" dump --type nvtx_mark timed.gpuscope | sed -E 's/.*payload=([0-9]+).*/\1/' | sort -n >p
n=$(wc -l <p)
expect_ge "$n" 5 "marks in the window"
expect_le "$n" 21 "marks in the window"
expect_ge "$(head -1 p)" 150 "first mark's time (ms)"
expect_le "$(tail -1 p)" 400 "last mark's time (ms)"
expect_eq "$(count timed.gpuscope 'capture edges')" 2 "delay/duration edges"
echo ok
