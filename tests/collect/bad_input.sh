#!/usr/bin/env bash
# Bad input: a one-line error and a non-zero status, before the program runs.
. "$(dirname "$0")/lib.sh"
mkdir tmp; export TMPDIR=$T/tmp   # where profile's part directories go
one_line() { expect_eq "$(wc -l <"$1")" 1 "lines of error output ($2)"; }

"$GPUSCOPE" profile -o a -- ./no-such-program 2>err && fail "missing program accepted"
rc=0; "$GPUSCOPE" profile -o a -- ./no-such-program 2>err || rc=$?
expect_eq "$rc" 127 "status for a missing program"
grep -q "program './no-such-program' not found" err || fail "message: $(cat err)"
one_line err "missing program"
[ ! -e a.gpuscope ] || fail "report written for a missing program"

rc=0; "$GPUSCOPE" profile --bogus -- true 2>err || rc=$?
expect_eq "$rc" 2 "status for an unknown option"
grep -q "unknown option '--bogus'" err || fail "message: $(cat err)"

rc=0; "$GPUSCOPE" profile -o /nonexistent-dir/r -- touch ran 2>err || rc=$?
expect_eq "$rc" 2 "status for an unwritable output"
grep -q "cannot write '/nonexistent-dir/r.gpuscope'" err || fail "message: $(cat err)"
one_line err "unwritable output"
[ ! -e ran ] || fail "the program ran although the output is unwritable"

"$GPUSCOPE" profile -o exists -- true 2>/dev/null
cp exists.gpuscope before
rc=0; "$GPUSCOPE" profile -o exists -- touch ran 2>err || rc=$?
expect_eq "$rc" 2 "status for an existing report"
grep -q "report 'exists.gpuscope' already exists (use --force to overwrite)" err || fail "message: $(cat err)"
one_line err "existing report"
cmp -s before exists.gpuscope || fail "existing report changed"
[ ! -e ran ] || fail "the program ran although the report exists"
"$GPUSCOPE" profile --force -o exists -- "$GS_TARGET" mark forced 2>/dev/null
expect_eq "$(ndump exists.gpuscope nvtx_mark 'name="forced"')" 1 "--force overwrote"

rc=0; "$GPUSCOPE" profile -o x 2>err || rc=$?
expect_eq "$rc" 2 "status without a program"
rc=0; "$GPUSCOPE" profile --trace=gpu -- true 2>err || rc=$?
expect_eq "$rc" 2 "status for an unknown trace source"
rc=0; "$GPUSCOPE" profile --capture-range=foo -- true 2>err || rc=$?
expect_eq "$rc" 2 "status for a bad capture range"

# a program that is there but cannot run: 126, as shells say
printf 'touch ran\n' >noexec.sh
rc=0; "$GPUSCOPE" profile -o ne -- ./noexec.sh 2>err || rc=$?
expect_eq "$rc" 126 "status for a program that cannot run"
grep -q "cannot run './noexec.sh': Permission denied" err || fail "message: $(cat err)"
one_line err "not runnable"
[ ! -e ran ] && [ ! -e ne.gpuscope ] || fail "a program that cannot run ran or left a report"

# a disk that fills up under the program (a file-size limit stands in for it):
# the collector's writes fail instead of SIGXFSZ ending the program, which
# keeps its own exit status; the collector says so once
rc=0; ( ulimit -f 2; exec "$GPUSCOPE" profile -o full -- "$GS_TARGET" exit 3 ) 2>err || rc=$?
expect_eq "$rc" 3 "status of a program whose report outgrew the file-size limit"
rc=0; ( ulimit -f 2; exec "$GPUSCOPE" profile -o full2 -- "$GS_TARGET" nvtx 2 2000 ) 2>err || rc=$?
expect_eq "$rc" 0 "status of a program whose report outgrew the file-size limit"
expect_eq "$(grep -c 'File too large' err)" 1 "lines saying the collector could not write"
# --force replaces a report only with a whole new one, and leaves no temporary file
"$GPUSCOPE" profile -o forced -- true 2>/dev/null
"$GPUSCOPE" profile --force -o forced -- "$GS_TARGET" mark x 2>/dev/null || fail "profile --force"
"$GPUSCOPE" dump --type nvtx_mark forced.gpuscope | grep -q 'name="x"' || fail "--force did not replace the report"
! ls | grep -q '\.tmp$' || fail "--force left a temporary file: $(ls)"

# no -o: report1, report2, ... never overwritten
"$GPUSCOPE" profile -- true 2>/dev/null
"$GPUSCOPE" profile -- true 2>/dev/null
[ -f report1.gpuscope ] && [ -f report2.gpuscope ] || fail "auto-numbered reports: $(ls)"
# no temporary directory is left behind
expect_eq "$(ls -A tmp | wc -l)" 0 "temporary directories left"
echo ok
