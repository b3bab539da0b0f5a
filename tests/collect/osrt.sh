#!/usr/bin/env bash
# OS-runtime calls are kept when at least --osrt-threshold long: the target
# sleeps 40 ms three times and 100 us twenty times (a 100 us sleep of a
# loaded machine may last a few ms, never 25).
. "$(dirname "$0")/lib.sh"
profile -o t25 --osrt-threshold 25ms -- "$GS_TARGET" osrt
expect_eq "$(ndump t25.gpuscope osrt 'func=nanosleep')" 3 "nanosleeps >= 25 ms"
profile -o t50 --osrt-threshold 50us -- "$GS_TARGET" osrt
expect_eq "$(ndump t50.gpuscope osrt 'func=nanosleep')" 23 "nanosleeps >= 50 us"
profile -o t1s --osrt-threshold 1s -- "$GS_TARGET" osrt
expect_eq "$(count t1s.gpuscope 'os runtime calls')" 0 "calls >= 1 s"
profile -o nvtxonly --trace=nvtx -- "$GS_TARGET" osrt
expect_eq "$(count nvtxonly.gpuscope 'os runtime calls')" 0 "--trace=nvtx records no osrt"
# locks: the uncontended lock is not timed (the hook tries it first); the three
# waits of about 40 ms for a mutex another thread holds are recorded
profile -o lock --osrt-threshold 1ms -- "$GS_TARGET" lock
expect_eq "$(ndump lock.gpuscope osrt 'func=pthread_mutex_lock')" 3 "contended mutex waits"
echo ok
