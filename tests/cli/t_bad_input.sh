# Bad input: one-line errors and non-zero exits, for every command that reads a report.
. "$(dirname "$0")/lib.sh"
"$GS_BUILD_DIR/tests/mk_sample" "$T/s.gpuscope"
expect_fail 2 "$GPUSCOPE" info "$T/missing.gpuscope"
grep -q "missing.gpuscope" "$T/err" || fail "error does not name the file"
echo "just text" >"$T/text.txt"
expect_fail 2 "$GPUSCOPE" info "$T/text.txt"
expect_fail 2 "$GPUSCOPE" info "$T"
: >"$T/empty"
expect_fail 2 "$GPUSCOPE" info "$T/empty"
head -c 20 "$T/s.gpuscope" >"$T/short.gpuscope"
expect_fail 2 "$GPUSCOPE" info "$T/short.gpuscope"
expect_fail 2 "$GPUSCOPE" info --bogus "$T/s.gpuscope"
expect_fail 2 "$GPUSCOPE" dump --type nosuch "$T/s.gpuscope"
expect_fail 2 "$GPUSCOPE" nosuchcommand
expect_fail 2 "$GPUSCOPE" merge -o "$T/s" "$T/s.gpuscope"   # exists, no --force
# a truncated report still loads, with a warning
size=$(stat -c %s "$T/s.gpuscope")
head -c $((size - 40)) "$T/s.gpuscope" >"$T/trunc.gpuscope"
"$GPUSCOPE" info "$T/trunc.gpuscope" >"$T/out" 2>&1 || fail "truncated report did not load"
grep -q "damaged" "$T/out" || fail "no damage warning for a truncated report"
# a write error on stdout is an error
if [ -w /dev/full ]; then
  rc=0; "$GPUSCOPE" dump "$T/s.gpuscope" >/dev/full 2>"$T/err" || rc=$?
  [ $rc -ne 0 ] || fail "dump to /dev/full exited 0"
fi
# a window after the end of the report: one line, not an empty analysis of a negative window
expect_fail 2 "$GPUSCOPE" analyze --start 1000 "$GS_SOURCE_DIR/tests/data/cuda/h200_basic.gpuscope"
grep -q "after the end of the report" "$T/err" || fail "analyze --start past the end: $(cat "$T/err")"
echo ok
