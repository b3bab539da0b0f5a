# No overwrite without --force, never through a symbolic link, no partial
# output: stats -o, diff -o, monitor --record (util's output_open/commit) and
# export -o (export's xout_open).
. "$(dirname "$0")/lib.sh"
D=$GS_SOURCE_DIR/tests/data
G=$GPUSCOPE
R=$D/zoo/sync.broken.gpuscope
R2=$D/zoo/sync.fixed.gpuscope

# stats -o: an existing file is refused, then replaced with --force
echo old >"$T/s.txt"
expect_fail 2 "$G" stats -r cuda_gpu_kern_sum -o "$T/s.txt" "$R"
grep -q "output '$T/s.txt' exists (use --force to overwrite)" "$T/err" || fail "message: $(cat "$T/err")"
[ "$(cat "$T/s.txt")" = old ] || fail "stats -o changed an existing file"
"$G" stats -r cuda_gpu_kern_sum -o "$T/s.txt" --force "$R" || fail "stats --force"
grep -q 'Total Time' "$T/s.txt" || fail "stats --force did not write"
ls "$T" | grep -q 'tmp' && fail "a temporary was left: $(ls "$T")"

# a link to a file: refused; with --force the link itself is replaced, its target untouched
echo target >"$T/target"
ln -s "$T/target" "$T/link"
expect_fail 2 "$G" stats -o "$T/link" "$R"
"$G" stats -r cuda_gpu_kern_sum -o "$T/link" --force "$R" || fail "stats --force over a link"
[ "$(cat "$T/target")" = target ] || fail "written through a symbolic link"
[ -L "$T/link" ] && fail "the link is still a link"
# a dangling link: refused, its target never created
ln -s "$T/nowhere" "$T/dangling"
expect_fail 2 "$G" stats -o "$T/dangling" "$R"
[ -e "$T/nowhere" ] && fail "the target of a dangling link was created"

# CSV of several reports: every file checked first, none written when one exists
echo old >"$T/sums_cuda_api_sum.csv"
expect_fail 2 "$G" stats --format csv -r cuda_gpu_kern_sum,cuda_api_sum -o "$T/sums" "$R"
[ -e "$T/sums_cuda_gpu_kern_sum.csv" ] && fail "partial output: the first CSV was written"
"$G" stats --format csv -r cuda_gpu_kern_sum,cuda_api_sum -o "$T/sums" --force "$R" || fail "csv --force"
[ -s "$T/sums_cuda_gpu_kern_sum.csv" ] && grep -q 'Name' "$T/sums_cuda_api_sum.csv" || fail "csv files not written"

# diff -o
echo old >"$T/d.txt"
expect_fail 2 "$G" diff -o "$T/d.txt" "$R" "$R2"
[ "$(cat "$T/d.txt")" = old ] || fail "diff -o changed an existing file"
"$G" diff -o "$T/d.txt" --force "$R" "$R2" || fail "diff --force"
[ "$(cat "$T/d.txt")" != old ] || fail "diff --force did not write"
expect_fail 2 "$G" diff -o "$T/dangling" "$R" "$R2"
[ -e "$T/nowhere" ] && fail "diff created the target of a dangling link"
# standard output and devices are still outputs
"$G" diff -o - "$R" "$R2" >/dev/null || fail "diff -o -"
"$G" stats -o /dev/null "$R" || fail "stats -o /dev/null"

# monitor --record: checked before anything runs
echo old >"$T/rec"
expect_fail 2 "$G" monitor --record "$T/rec" --count 1 --replay "$T/none"
[ "$(cat "$T/rec")" = old ] || fail "monitor --record changed an existing file"
expect_fail 2 "$G" monitor --record "$T/dangling" --count 1 --replay "$T/none"
[ -e "$T/nowhere" ] && fail "monitor created the target of a dangling link"
# merge -o and profile -o: a dangling link is an existing output; --force replaces the link
ln -s "$T/nowhere4.gpuscope" "$T/dm.gpuscope"
expect_fail 2 "$G" merge -o "$T/dm.gpuscope" "$R"
[ -e "$T/nowhere4.gpuscope" ] && fail "merge created the target of a dangling link"
ln -s "$T/nowhere2.gpuscope" "$T/m.gpuscope"
"$G" merge --force -o "$T/m.gpuscope" "$R" 2>/dev/null || fail "merge --force over a dangling link"
[ -e "$T/nowhere2.gpuscope" ] && fail "merge --force wrote through a dangling link"
[ -f "$T/m.gpuscope" ] && [ ! -L "$T/m.gpuscope" ] || fail "merge --force did not replace the link"
# export -o: a link is refused; with --force the link itself is replaced, never its target
ln -s "$T/target" "$T/elink"
expect_fail 2 "$G" export --format json -o "$T/elink" "$R"
"$G" export --format json --force -o "$T/elink" "$R" 2>/dev/null || fail "export --force over a link"
[ "$(cat "$T/target")" = target ] || fail "export --force wrote through a symbolic link"
[ -f "$T/elink" ] && [ ! -L "$T/elink" ] || fail "export --force did not replace the link"
ln -s "$T/nowhere5" "$T/edangling"
"$G" export --format json --force -o "$T/edangling" "$R" 2>/dev/null || fail "export --force over a dangling link"
[ -e "$T/nowhere5" ] && fail "export --force created the target of a dangling link"
DEMO=$GS_BUILD_DIR/examples/demo
if [ -x "$DEMO" ]; then
  ln -s "$T/nowhere3.gpuscope" "$T/p.gpuscope"
  expect_fail 2 "$G" profile -o "$T/p" -- "$DEMO"
  [ -e "$T/nowhere3.gpuscope" ] && fail "profile created the target of a dangling link"
fi
echo ok
