# The option tables (src/cli/options.c): help for every command, `help CMD`,
# typo hints, unique prefixes, nsys's spellings, and the man pages and shell
# completion generated from the same tables.
. "$(dirname "$0")/lib.sh"
D=$GS_SOURCE_DIR/tests/data
G=$GPUSCOPE
R=$D/zoo/sync.broken.gpuscope
DEMO=$GS_BUILD_DIR/examples/demo

# --help of every command: a usage line, a line per option, an example
for c in profile info dump stats analyze diff check baseline export monitor health merge; do
  "$G" "$c" --help >"$T/h" || fail "$c --help exited non-zero"
  grep -q "^usage: gpuscope $c" "$T/h" || fail "$c --help: no usage line"
  grep -q '^Options:' "$T/h" || fail "$c --help: no options"
  grep -q -- '^  -h, --help' "$T/h" || fail "$c --help: no --help line"
  grep -q '^Example' "$T/h" || fail "$c --help: no example"
  "$G" help "$c" >"$T/h2" || fail "help $c exited non-zero"
  expect_cmp "$T/h" "$T/h2"
done
grep -q -- '--critical-path  *the critical path' <("$G" help analyze) || fail "help analyze lacks --critical-path"

# typos: the nearest option or command, on the error line
expect_fail 2 "$G" stats --fromat json "$R"
grep -q "unknown option '--fromat' (did you mean '--format'?)" "$T/err" || fail "no hint: $(cat "$T/err")"
expect_fail 2 "$G" statz "$R"
grep -q "unknown command 'statz' (did you mean 'stats'?)" "$T/err" || fail "no command hint: $(cat "$T/err")"
expect_fail 2 "$G" analyze --zzzzzzzz "$R"
grep -q "did you mean" "$T/err" && fail "a hint for a word near nothing: $(cat "$T/err")"
expect_fail 2 "$G" stats --fo json "$R"
grep -q "option '--fo' is ambiguous (--format, --force" "$T/err" || fail "ambiguity: $(cat "$T/err")"
expect_fail 2 "$G" info --format
grep -q "option '--format' needs a value" "$T/err" || fail "missing value: $(cat "$T/err")"

# a unique prefix is the option (getopt_long); nsys's names of formats and units
"$G" stats --form json -r cuda_gpu_kern_sum "$R" >"$T/j1"
"$G" stats --format json -r cuda_gpu_kern_sum "$R" >"$T/j2"
expect_cmp "$T/j2" "$T/j1"
head -c 1 "$T/j1" | grep -q '\[' || fail "--form json is not JSON"
"$G" stats --timeunit usec -r cuda_gpu_kern_sum "$R" >"$T/u1"
"$G" stats --timeunit us -r cuda_gpu_kern_sum "$R" >"$T/u2"
expect_cmp "$T/u2" "$T/u1"
"$G" stats -f column -r cuda_gpu_kern_sum "$R" >"$T/c1"
"$G" stats -r cuda_gpu_kern_sum "$R" >"$T/c2"
expect_cmp "$T/c2" "$T/c1"
# tsv: the csv's fields split at tabs, the same number of rows
"$G" stats --format=tsv -r cuda_gpu_kern_sum "$R" >"$T/t"
"$G" stats --format=csv -r cuda_gpu_kern_sum "$R" >"$T/csv"
[ "$(wc -l <"$T/t")" = "$(wc -l <"$T/csv")" ] || fail "tsv and csv differ in rows"
head -n 1 "$T/t" | grep -q "$(printf 'Time (%%)\tTotal Time (ns)\tInstances')" || fail "tsv header: $(head -n 1 "$T/t")"
"$G" stats --help-reports >"$T/r"
grep -q '^  cuda_gpu_kern_sum ' "$T/r" || fail "--help-reports lacks cuda_gpu_kern_sum"

# profile: nsys's -t, -y, -d, -f true, --stats=true, -c nvtx -p, and -o patterns
if [ -x "$DEMO" ]; then
  cd "$T"
  "$G" profile -t cuda,nvtx,osrt -y 0 -d 30 -o p1 -- "$DEMO" >/dev/null 2>"$T/e" || fail "profile -t -y -d: $(cat "$T/e")"
  [ -f p1.gpuscope ] || fail "no p1.gpuscope"
  "$G" profile -f true --stats=true -o p1 -- "$DEMO" >"$T/out" 2>"$T/e" || fail "profile -f true --stats=true: $(cat "$T/e")"
  grep -q 'OS Runtime Summary\|osrt_sum\|Num Calls' "$T/out" || fail "--stats=true printed no stats"
  expect_fail 2 "$G" profile -o p1 -- "$DEMO"   # exists, no --force
  "$G" profile -f false -o p1 -- "$DEMO" >/dev/null 2>&1 && fail "-f false overwrote"
  GSTEST_RANK=3 "$G" profile -o 'r%q{GSTEST_RANK}_%p' -- "$DEMO" >/dev/null 2>&1 || fail "-o %q{VAR}_%p"
  ls r3_[0-9]*.gpuscope >/dev/null || fail "no r3_PID.gpuscope: $(ls)"
  "$G" profile -o 'n%n' -- "$DEMO" >/dev/null 2>&1 && "$G" profile -o 'n%n' -- "$DEMO" >/dev/null 2>&1 ||
    fail "-o n%n"
  [ -f n1.gpuscope ] && [ -f n2.gpuscope ] || fail "%n did not give n1 and n2: $(ls)"
  expect_fail 2 "$G" profile -o 'x%z' -- "$DEMO"
  grep -q "unknown pattern '%z'" "$T/err" || fail "bad pattern: $(cat "$T/err")"
  expect_fail 2 "$G" profile -c nvtx -- "$DEMO"
  grep -q -- "-p NAME" "$T/err" || fail "-c nvtx without -p: $(cat "$T/err")"
  # a capture range that never starts: a warning at the end, kept in the report
  "$G" profile -c nvtx -p no_such_range -o cap -- "$DEMO" >/dev/null 2>"$T/e" || fail "profile -c nvtx -p: $(cat "$T/e")"
  tail -n 1 "$T/e" | grep -q "warning: --capture-range=nvtx:no_such_range: the range never started" ||
    fail "no warning at the end: $(cat "$T/e")"
  "$G" info cap.gpuscope | grep -q "the range never started" || fail "the report holds no warning"
  # --report-html follows --force, and a failed HTML step is a failed profile
  "$G" profile -o h --report-html -- "$DEMO" >/dev/null 2>&1 || fail "profile --report-html"
  "$G" profile -o h --force --report-html -- "$DEMO" >/dev/null 2>"$T/e" || fail "second --force --report-html: $(cat "$T/e")"
  rm h.gpuscope
  rc=0; "$G" profile -o h --report-html -- "$DEMO" >/dev/null 2>"$T/e" || rc=$?
  [ "$rc" -ne 0 ] || fail "an HTML step that failed (h.html exists) exited 0"
  grep -q "h.html' exists" "$T/e" || fail "no message for the HTML step: $(cat "$T/e")"
  cd - >/dev/null
else
  echo "note: no $DEMO, profile spellings not tested"
fi

# colour: severities and verdicts with --color=always, none with never, NO_COLOR or a pipe
esc=$(printf '\033')
"$G" analyze --color=always "$R" >"$T/a" || fail "analyze --color=always"
grep -q "\[synchronization, ${esc}\[31mcritical${esc}\[m\]" "$T/a" || fail "no red 'critical': $(grep -a 'est. gain' "$T/a" | head -2)"
"$G" analyze --color=never "$R" >"$T/a1"
"$G" analyze "$R" >"$T/a2"
NO_COLOR=1 "$G" analyze "$R" >"$T/a3"
for f in a1 a2 a3; do grep -q "$esc" "$T/$f" && fail "colour in $f"; done
expect_cmp "$T/a1" "$T/a2"
"$G" diff --color=always "$R" "$D/zoo/sync.fixed.gpuscope" >"$T/d"
grep -q "${esc}\[32mbetter${esc}\[m" "$T/d" || fail "no green 'better' in diff"
sed "s/${esc}\[[0-9]*m//g" "$T/d" >"$T/d1"
"$G" diff "$R" "$D/zoo/sync.fixed.gpuscope" >"$T/d2"
expect_cmp "$T/d2" "$T/d1"
expect_fail 2 "$G" analyze --color=sometimes "$R"

# man pages and completion, generated by the build from the same tables
GEN=$GS_BUILD_DIR/gen
for c in profile info dump stats analyze diff check baseline export monitor health merge; do
  [ -s "$GEN/man1/gpuscope-$c.1" ] || fail "no man page for $c"
done
grep -q '^\.TH GPUSCOPE-STATS 1' "$GEN/man1/gpuscope-stats.1" || fail "man page header"
grep -q 'timeunit' "$GEN/man1/gpuscope-stats.1" || fail "man page lacks --timeunit"
if command -v man >/dev/null && command -v groff >/dev/null; then
  MANWIDTH=80 man -l "$GEN/man1/gpuscope-profile.1" 2>/dev/null | grep -q 'capture-range' || fail "man -l renders no --capture-range"
fi
bash -n "$GEN/completion/gpuscope" || fail "bash completion does not parse"
out=$(bash -c '. "$1"; COMP_WORDS=(gpuscope stats --tim); COMP_CWORD=2; _gpuscope; echo "${COMPREPLY[*]}"' _ "$GEN/completion/gpuscope")
[ "$out" = "--timeunit" ] || fail "bash completion of --tim: '$out'"
out=$(bash -c '. "$1"; COMP_WORDS=(gpuscope stats -f ""); COMP_CWORD=3; _gpuscope; echo "${COMPREPLY[*]}"' _ "$GEN/completion/gpuscope")
[ "$out" = "table column csv tsv json" ] || fail "bash completion of -f: '$out'"
if command -v zsh >/dev/null; then zsh -n "$GEN/completion/_gpuscope" || fail "zsh completion does not parse"; fi
"$G" __complete fish >/dev/null 2>&1 && fail "__complete fish succeeded"

# a value of a fixed set (OPT_CHOICE) is checked by the table, the same words as the completion
expect_fail 2 "$G" info --format xml "$R"
grep -q "unknown format 'xml' (text or json)" "$T/err" || fail "info --format xml: $(cat "$T/err")"
expect_fail 2 "$G" stats -f yaml "$R"
grep -q "unknown format 'yaml' (table, column, csv, tsv or json)" "$T/err" || fail "stats -f yaml: $(cat "$T/err")"
expect_fail 2 "$G" monitor --format xml --replay "$D/nvml/h200.load.jsonl"
grep -q "unknown format 'xml' (table, csv or json)" "$T/err" || fail "monitor --format xml: $(cat "$T/err")"
"$G" stats --form=column -r cuda_api_sum "$R" >/dev/null 2>&1 || fail "stats --form=column refused"
echo ok
