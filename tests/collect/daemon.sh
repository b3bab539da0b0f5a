#!/usr/bin/env bash
# A process that outlives profile (past its wait for the tree) runs on
# unrecorded: what it starts later prints nothing of the collector, and
# profile still reports what the tree recorded.
. "$(dirname "$0")/lib.sh"
start=$(date +%s%N)
profile -o d -- /bin/sh -c '( sleep 3; /bin/true; echo late-done ) >late.out 2>late.err & echo started'
expect_eq "$rc" 0 status
ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect_le "$ms" 2900 "ms profile waited for a process that runs on"
expect_ge "$(count d.gpuscope 'processes:')" 1 processes
for _ in $(seq 60); do grep -q late-done late.out 2>/dev/null && break; sleep 0.1; done
expect_eq "$(cat late.out)" late-done "the late process's output"
expect_eq "$(cat late.err)" "" "the late process's errors"
echo ok
