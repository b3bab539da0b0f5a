#!/usr/bin/env bash
# The collector holds state per thread alive, not per thread ever created
# (issue 19, item 3): 20,000 short-lived threads, created and joined one
# after another, each with an NVTX range.  Before, each kept about 14 KB
# (288 MB for 20,000).  The peak resident size profiled may exceed the
# unprofiled one by the collector's fixed cost (its staging buffer, zstd,
# the writer and sampler threads: about 10 MB here) and the blocks that
# ended threads handed to the writer between two of its passes, not by a
# cost per thread: SLACK_KB (24 MB) is well below the 288 MB of the bug and
# above what 100 threads cost profiled plus the blocks in flight.
. "$(dirname "$0")/lib.sh"
SLACK_KB=24576
N=20000
plain=$("$GS_TARGET" churn $N)
profile -o c -- "$GS_TARGET" churn $N >prof.txt
expect_eq "$rc" 0 status
prof=$(cat prof.txt)
expect_le "$prof" $((plain + SLACK_KB)) "peak RSS (kB) profiled, $N threads (unprofiled: $plain kB)"
profile -o few -- "$GS_TARGET" churn 100 >few.txt
few=$(cat few.txt)
# per-thread cost: 20,000 threads against 100, both profiled (< 0.4 KB a thread)
expect_le "$prof" $((few + 8192)) "peak RSS (kB) for $N threads against 100 ($few kB)"
expect_eq "$(count c.gpuscope 'nvtx ranges')" $N "ranges recorded"
echo ok
