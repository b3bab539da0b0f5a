#!/usr/bin/env bash
# OS-runtime calls are kept when at least --osrt-threshold long: the target
# sleeps 5 ms three times and 100 us twenty times.
. "$(dirname "$0")/lib.sh"
profile -o t3 --osrt-threshold 3ms -- "$GS_TARGET" osrt
expect_eq "$(ndump t3.gpuscope osrt 'func=nanosleep')" 3 "nanosleeps >= 3 ms"
profile -o t50 --osrt-threshold 50us -- "$GS_TARGET" osrt
expect_eq "$(ndump t50.gpuscope osrt 'func=nanosleep')" 23 "nanosleeps >= 50 us"
profile -o t1s --osrt-threshold 1s -- "$GS_TARGET" osrt
expect_eq "$(count t1s.gpuscope 'os runtime calls')" 0 "calls >= 1 s"
profile -o nvtxonly --trace=nvtx -- "$GS_TARGET" osrt
expect_eq "$(count nvtxonly.gpuscope 'os runtime calls')" 0 "--trace=nvtx records no osrt"
echo ok
