#!/usr/bin/env bash
# Command-line bytes that are not UTF-8 (file names in Latin-1, binary
# arguments) reach the program unchanged, but the report's strings stay
# valid UTF-8: each stray byte is stored as '?'.
. "$(dirname "$0")/lib.sh"
profile -o u -- "$GS_TARGET" return 0 $'\xff\xfe' $'caf\xc3\xa9' $'\xe2\x82' >/dev/null
expect_eq "$rc" 0 status
"$GPUSCOPE" dump --type process u.gpuscope >dump.txt
grep -q 'return 0 ?? café ??"' dump.txt || fail "command line: $(cat dump.txt)"
iconv -f UTF-8 -t UTF-8 dump.txt >/dev/null || fail "dump is not UTF-8"
echo ok
