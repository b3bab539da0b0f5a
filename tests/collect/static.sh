#!/usr/bin/env bash
# A statically linked program cannot load the collector: profile says so
# before it runs, the program's output is its own, and the failure to record
# leaves no temporary directory behind.
. "$(dirname "$0")/lib.sh"
printf '#include <stdio.h>\nint main(void) { puts("static-out"); return 0; }\n' >st.c
cc -static -o st st.c || fail "cannot link a static program (libc6-dev provides libc.a)"
mkdir tmp
rc=0; TMPDIR=$T/tmp "$GPUSCOPE" profile -o st -- ./st >out 2>err || rc=$?
expect_eq "$rc" 1 "status without a report"
expect_eq "$(cat out)" static-out "program output"
grep -q "'./st' is statically linked" err || fail "no warning: $(cat err)"
grep -q "kept in" err && fail "claims to keep an empty directory: $(cat err)"
expect_eq "$(ls tmp | wc -l)" 0 "temporary directories left"
# a dynamic program it runs is still recorded
printf '#include <unistd.h>\nint main(void) { execl("/bin/true", "true", (char *)0); return 1; }\n' >st2.c
cc -static -o st2 st2.c || fail "cannot link a static program"
profile -o st2 -- ./st2 2>err
expect_eq "$rc" 0 "status of a static program that runs a dynamic one"
expect_eq "$(count st2.gpuscope 'processes:')" 1 processes
echo ok
