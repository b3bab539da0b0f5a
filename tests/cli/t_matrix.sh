# The bad-input matrix: every command that reads an input, on every kind of bad
# input, must fail with one error line (`gpuscope: error: ...`, lower case,
# naming the file or option; at most one `usage:` line after it), exit 2 and
# never crash; a report damaged inside a chunk loads with a warning.  Also:
# --help for every command, `profile` on programs and outputs it cannot use,
# and output write failures (a full disk, a closed pipe, unwritable or
# existing outputs).
#
# A closed pipe: commands keep SIGPIPE's default, so a reader that goes away
# ends them quietly by SIGPIPE (status 141), as it does cat or grep; export
# ignores SIGPIPE (it removes a partial output) and reports "Broken pipe" with
# status 1, as does any command started with SIGPIPE ignored.  Either way the
# status is not 0.  A full disk is status 1 with one error line.
. "$(dirname "$0")/lib.sh"
D=$GS_SOURCE_DIR/tests/data
G=$GPUSCOPE
GOOD=$D/zoo/sync.broken.gpuscope
BIG=$D/cuda/h200_torch.gpuscope
KINETO=$D/import/simple_add.json.gz
gunzip -c "$D/import/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" >"$T/saxpy.sqlite"
NSYS=$T/saxpy.sqlite
FORMATS="perfetto chrome sqlite csv json html"
rows=0

# check_err WHAT NAME: $T/err is one 'gpuscope: error: ' line in lower case
# naming NAME (when given), with at most one 'usage:' line after it
check_err() {
  local what=$1 name=$2
  head -n 1 "$T/err" | grep -q '^gpuscope: error: [^A-Z]' ||
    fail "$what: first stderr line is not a lower-case error: $(cat "$T/err")"
  [ "$(wc -l <"$T/err")" -le 2 ] || fail "$what: more than an error and a usage line: $(cat "$T/err")"
  if [ "$(wc -l <"$T/err")" = 2 ]; then
    sed -n 2p "$T/err" | grep -q '^usage: ' || fail "$what: second stderr line is not usage: $(cat "$T/err")"
  fi
  [ -z "$name" ] || head -n 1 "$T/err" | grep -qF -- "$name" ||
    fail "$what: the error does not name '$name': $(cat "$T/err")"
}

# bad CODE NAME CMD...: CMD exits CODE with one error line naming NAME
bad() {
  local want=$1 name=$2 rc=0; shift 2
  rows=$((rows + 1))
  "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
  [ "$rc" -lt 128 ] || fail "'$*' crashed (status $rc): $(cat "$T/err")"
  [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $(cat "$T/err")"
  check_err "$*" "$name"
}

# good_warn NAME CMD...: CMD loads the damaged NAME, says so, and exits 0 (1: check's finding)
good_warn() {
  local name=$1 rc=0; shift
  rows=$((rows + 1))
  "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
  case "$rc" in 0) ;; 1) [ "$2" = check ] || fail "'$*' exited 1: $(cat "$T/err")" ;;
    *) fail "'$*' exited $rc on a damaged report: $(cat "$T/err")" ;; esac
  grep -q "report '.*$name' is damaged" "$T/out" "$T/err" || fail "'$*': no damage warning: $(cat "$T/err")"
  ! grep -q 'error:' "$T/err" || fail "'$*' printed an error for a report it loaded: $(cat "$T/err")"
}

# each_reader CHECK ARGS... INPUT: run CHECK ARGS... on every input-reading command with INPUT
each_reader() {
  local in=${!#} n=$(($# - 1))
  local pre=("${@:1:$n}")
  "${pre[@]}" "$G" info "$in"
  "${pre[@]}" "$G" dump "$in"
  "${pre[@]}" "$G" stats "$in"
  "${pre[@]}" "$G" analyze "$in"
  "${pre[@]}" "$G" diff "$in" "$GOOD"
  "${pre[@]}" "$G" diff "$GOOD" "$in"
  "${pre[@]}" "$G" check --baseline "$GOOD" "$in"
  "${pre[@]}" "$G" check --baseline "$in" "$GOOD"
  for f in $FORMATS; do
    "${pre[@]}" "$G" export "$in" --format "$f" --force -o "$T/exp.$f"
  done
  "${pre[@]}" "$G" merge --force -o "$T/merged" "$in" "$GOOD"
  "${pre[@]}" "$G" baseline --dir "$T/bl" save --force nm "$in"
}

# --- the bad inputs, built in $T ---
size=$(stat -c %s "$GOOD")
mkdir "$T/adir"
: >"$T/empty.gpuscope"
printf 'just some text\n' >"$T/text.gpuscope"
head -c 30 "$GOOD" >"$T/hdrcut.gpuscope"                 # inside the 64-byte file header
head -c $((size * 3 / 5)) "$GOOD" >"$T/chunkcut.gpuscope"  # inside a chunk
cp "$GOOD" "$T/corrupt.gpuscope"                          # one chunk's bytes overwritten
printf '\377\377\377\377\377\377\377\377' |
  dd of="$T/corrupt.gpuscope" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
head -c 4000 /dev/urandom | gzip >"$T/garbage.json.gz"
printf '{"hello": [1, 2, 3], "traceEvent": 1}\n' >"$T/notkineto.json"
sqlite3 "$T/notnsys.sqlite" 'create table t(a integer); insert into t values (1);'
cp "$GOOD" "$T/newer.gpuscope"                            # from a future gpuscope
"$GS_BUILD_DIR/tests/mk_newer" "$T/newer.gpuscope"

for b in missing.gpuscope adir empty.gpuscope text.gpuscope hdrcut.gpuscope \
         newer.gpuscope garbage.json.gz notkineto.json notnsys.sqlite; do
  each_reader bad 2 "$b" "$T/$b"
  for f in $FORMATS; do
    [ ! -e "$T/exp.$f" ] && [ ! -e "$T/exp.${f}_cuda_api_sum.csv" ] || fail "export of $b left an output"
  done
  [ ! -e "$T/merged.gpuscope" ] || fail "merge of $b left an output"
  [ ! -e "$T/bl/nm.baseline" ] || fail "baseline save of $b saved a baseline"
done
# a truncated or damaged chunk: the whole chunks load, with a warning
each_reader good_warn chunkcut.gpuscope "$T/chunkcut.gpuscope"
each_reader good_warn corrupt.gpuscope "$T/corrupt.gpuscope"

# --- reports without events: a bare file header, and issue 19's 96-byte report
# (one stream-end chunk of stream 0xFFFFFFFF).  Every command ends by itself
# with 0, 1 or 2, and under the sanitizer build (scripts/test.sh) with no
# report: `dump` sorted no rows with qsort(NULL, 0), `merge` read out of bounds.
# no_crash CMD...: CMD exits 0, 1 or 2 and prints no sanitizer report
no_crash() {
  local rc=0
  rows=$((rows + 1))
  "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
  [ "$rc" -le 2 ] || fail "'$*' exited $rc: $(head -c 600 "$T/err")"
  ! grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$T/err" || fail "'$*': $(head -c 600 "$T/err")"
}
head -c 64 "$GOOD" >"$T/noevents.gpuscope"
cp "$GS_SOURCE_DIR/tests/fuzz/corpus/merge/regress_stream_max.gpuscope" "$T/max.gpuscope"
for in in "$T/noevents.gpuscope" "$T/max.gpuscope"; do
  each_reader no_crash "$in"
  no_crash "$G" merge --force -o "$T/merged-empty" "$in"
done
rm -f "$T/merged.gpuscope" "$T/merged-empty.gpuscope" "$T"/exp.* "$T/bl/nm.baseline"

# --- valid inputs of every kind load (so the rows above fail for the input) ---
for in in "$GOOD" "$D/cuda/h200_basic.gpuscope" "$KINETO" "$NSYS"; do
  for c in info dump stats analyze; do
    rows=$((rows + 1))
    "$G" "$c" "$in" >/dev/null 2>"$T/err" || fail "$c $in: $(cat "$T/err")"
  done
  for f in $FORMATS; do
    rows=$((rows + 1))
    "$G" export "$in" --format "$f" --force -o "$T/ok.$f" 2>"$T/err" || fail "export $f $in: $(cat "$T/err")"
  done
done

# --- options: unknown, missing value, --help ---
for c in profile info dump stats analyze diff check baseline export monitor health merge; do
  bad 2 "'--no-such-option'" "$G" "$c" --no-such-option "$GOOD"
  bad 2 "'-Z'" "$G" "$c" -Z "$GOOD"
  rows=$((rows + 1))
  "$G" "$c" --help >"$T/out" 2>"$T/err" || fail "$c --help exited $?"
  grep -q '^usage: gpuscope '"$c" "$T/out" || fail "$c --help printed no usage"
  [ ! -s "$T/err" ] || fail "$c --help wrote on stderr: $(cat "$T/err")"
done
bad 2 "'--format'" "$G" info "$GOOD" --format
bad 2 "'--type'" "$G" dump "$GOOD" --type
bad 2 "'--report'" "$G" stats "$GOOD" --report
bad 2 "'--format'" "$G" analyze "$GOOD" --format
bad 2 "'--noise'" "$G" diff "$GOOD" "$GOOD" --noise
bad 2 "'--baseline'" "$G" check "$GOOD" --baseline
bad 2 "'--dir'" "$G" baseline list --dir
bad 2 "'--format'" "$G" export "$GOOD" --format
bad 2 "'-o'" "$G" export "$GOOD" -o
bad 2 "'-o'" "$G" merge "$GOOD" -o
bad 2 "'-o'" "$G" profile -o
bad 2 "'-c'" "$G" monitor -c
bad 2 "'-i'" "$G" health -i
bad 2 "'nosuch'" "$G" nosuch
# options after the report are read as options
"$G" info "$GOOD" --format json | grep -q '"warnings"' || fail "info REPORT --format json"
"$G" dump "$GOOD" --type kernel | grep -q . || fail "dump REPORT --type kernel"
rows=$((rows + 2))

# --- profile: programs and outputs it cannot use; nothing is run or lost ---
cd "$T"
bad 127 "'./no-such-program'" "$G" profile -o "$T/p1" ./no-such-program
bad 127 "'no-such-program-in-path'" "$G" profile -o "$T/p1" no-such-program-in-path
printf 'touch ran\n' >"$T/noexec.sh"
bad 126 "'./noexec.sh'" "$G" profile -o "$T/p1" ./noexec.sh
[ ! -e "$T/p1.gpuscope" ] || fail "profile of a program that did not run left a report"
bad 2 "'/no/such/dir/r.gpuscope'" "$G" profile -o /no/such/dir/r -- touch ran
# an output that cannot be created is bad usage (2) for every command, found before the input is read
bad 2 "'/no/such/dir/s.txt'" "$G" stats -o /no/such/dir/s.txt "$GOOD"
bad 2 "'/no/such/dir/e.json'" "$G" export --format chrome -o /no/such/dir/e.json "$GOOD"
bad 2 "'/no/such/dir/d.txt'" "$G" diff -o /no/such/dir/d.txt "$GOOD" "$GOOD"
bad 2 "'/no/such/dir/m.gpuscope'" "$G" merge -o /no/such/dir/m "$GOOD"
bad 2 "'/dev/null/r.gpuscope'" "$G" profile -o /dev/null/r -- touch ran
printf 'recorded before\n' >"$T/kept.gpuscope"
bad 2 "kept.gpuscope'" "$G" profile -o "$T/kept" -- touch ran
[ ! -e "$T/ran" ] || fail "profile ran the program although its output is unusable"
grep -qx 'recorded before' "$T/kept.gpuscope" || fail "profile changed an existing report"

# --- outputs: existing without --force, unwritable ---
printf 'recorded before\n' >"$T/kept"
for f in perfetto chrome sqlite json html; do
  bad 2 "'$T/kept'" "$G" export "$GOOD" --format "$f" -o "$T/kept"
  grep -qx 'recorded before' "$T/kept" || fail "export $f changed an existing output"
done
printf 'recorded before\n' >"$T/kept_cuda_api_sum.csv"
rows=$((rows + 1)); rc=0
"$G" export "$GOOD" --format csv -o "$T/kept" 2>"$T/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "export csv over an existing output exited $rc"
check_err "export csv over an existing output" "kept_cuda_api_sum.csv'"
grep -qx 'recorded before' "$T/kept_cuda_api_sum.csv" || fail "export csv changed an existing output"
bad 2 "'$T/kept.gpuscope'" "$G" merge -o "$T/kept" "$GOOD" "$GOOD"
grep -qx 'recorded before' "$T/kept.gpuscope" || fail "merge changed an existing report"
"$G" baseline --dir "$T/bl2" save b1 "$GOOD" 2>/dev/null
cp "$T/bl2/b1.baseline" "$T/b1.before"
bad 2 "'b1'" "$G" baseline --dir "$T/bl2" save b1 "$KINETO"
cmp -s "$T/b1.before" "$T/bl2/b1.baseline" || fail "baseline save replaced a baseline without --force"
for args in "stats -o /no/such/dir/x $GOOD" "diff -o /no/such/dir/x $GOOD $GOOD" \
            "merge -o /no/such/dir/x $GOOD $GOOD" "baseline --dir /no/such/dir save x $GOOD"; do
  rows=$((rows + 1)); rc=0
  # shellcheck disable=SC2086
  "$G" $args >/dev/null 2>"$T/err" || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "'$args' exited $rc"
  check_err "$args" "/no/such/dir"
done
for f in $FORMATS; do
  rows=$((rows + 1)); rc=0
  "$G" export "$GOOD" --format "$f" -o /no/such/dir/x 2>"$T/err" || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "export $f to an unwritable path exited $rc"
  check_err "export $f to an unwritable path" "/no/such/dir/x"
done

# --- a disk that fills up mid-write (a file-size limit stands in for it): an
# error, status 1 or 2, no short output left, nothing recorded before lost ---
"$G" baseline --dir "$T/bl4" save b "$GOOD" 2>/dev/null
cp "$T/bl4/b.baseline" "$T/b.before"
printf 'recorded before\n' >"$T/m.gpuscope"
for args in "stats --report cuda_gpu_trace -o $T/f.txt" "stats --format csv --report cuda_gpu_trace,cuda_api_sum -o $T/f" \
            "diff --format html -o $T/f.html $BIG" "merge --force -o $T/f" "merge --force -o $T/m" \
            "export --format chrome -o $T/f.json" "export --format sqlite -o $T/f.sqlite" \
            "baseline --dir $T/bl4 save --force b"; do
  rows=$((rows + 1))
  # shellcheck disable=SC2086
  ( ulimit -f 1; rc=0; "$G" $args "$BIG" >/dev/null 2>"$T/err" || rc=$?; echo "$rc" >"$T/rc" )
  rc=$(cat "$T/rc")
  [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "'$args' past the file-size limit exited $rc: $(cat "$T/err")"
  check_err "$args past the file-size limit" ""
  grep -q 'File too large\|disk I/O error' "$T/err" || fail "'$args': no reason given: $(cat "$T/err")"
done
for f in f.txt f_cuda_gpu_trace.csv f_cuda_api_sum.csv f.html f.gpuscope f.json f.sqlite; do
  [ ! -e "$T/$f" ] || fail "a write past the file-size limit left a short '$f'"
done
grep -qx 'recorded before' "$T/m.gpuscope" || fail "a failed merge --force lost the report it was to replace"
cmp -s "$T/b.before" "$T/bl4/b.baseline" || fail "a failed baseline save --force lost the saved baseline"
! ls "$T/bl4" | grep -v '^b.baseline$' || fail "a failed baseline save left a temporary file"
! ls "$T" | grep '\.tmp' || fail "a failed write left a temporary file"

# --- GPU absent (skipped where a driver is present) ---
rc=0; "$G" health >/dev/null 2>"$T/err" || rc=$?
if [ "$rc" = 2 ]; then
  check_err "health without a GPU" ""
  bad 2 "" "$G" monitor -c 1
  rows=$((rows + 1))
else
  echo "note: an NVIDIA driver is present; the no-GPU rows are skipped"
fi

# --- a full disk: stdout to /dev/full is an error (status 1, one line) ---
if [ -w /dev/full ]; then
  "$G" baseline --dir "$T/bl3" save b "$GOOD" 2>/dev/null
  while IFS= read -r args; do
    rows=$((rows + 1)); rc=0
    # shellcheck disable=SC2086
    eval "\"\$G\" $args" >/dev/full 2>"$T/err" || rc=$?
    [ "$rc" = 1 ] || fail "'$args' to a full disk exited $rc: $(cat "$T/err")"
    check_err "$args to a full disk" ""
    grep -q 'No space left on device' "$T/err" || fail "'$args': no disk-full message: $(cat "$T/err")"
  done <<EOF
info "$GOOD"
info --format json "$GOOD"
dump "$GOOD"
stats "$GOOD"
stats --format csv "$GOOD"
stats --format json "$GOOD"
stats -o - "$GOOD"
analyze "$GOOD"
analyze --format json "$KINETO"
analyze --rules
diff "$GOOD" "$GOOD"
diff --format json "$GOOD" "$GOOD"
diff --format csv "$GOOD" "$GOOD"
diff --format html "$GOOD" "$GOOD"
check --baseline "$GOOD" "$GOOD"
check --format json --baseline "$GOOD" "$GOOD"
baseline --dir "$T/bl3" list
baseline --dir "$T/bl3" show b
export "$GOOD" --format perfetto -o -
export "$GOOD" --format chrome -o -
export "$GOOD" --format csv -o -
export "$GOOD" --format json -o -
export "$GOOD" --format html -o -
health --replay "$D/nvml/h200.cool.jsonl"
--help
--version
info --help
stats --help
EOF
  for f in perfetto chrome json html; do
    bad 1 "" "$G" export "$GOOD" --format "$f" --force -o /dev/full
  done
  bad 1 "" "$G" stats -o /dev/full "$GOOD"
  bad 1 "" "$G" diff -o /dev/full "$GOOD" "$GOOD"
fi

# --- a closed pipe: never status 0; SIGPIPE (quiet) or one "Broken pipe" error ---
set +o pipefail 2>/dev/null || true
for args in "dump $BIG" "stats --report cuda_gpu_trace $BIG" "stats --format csv --report cuda_gpu_trace $BIG" \
            "export $BIG --format chrome -o -" "export $BIG --format perfetto -o -" \
            "export $BIG --format json -o -"; do
  rows=$((rows + 1))
  # shellcheck disable=SC2086
  ( rc=0; "$G" $args 2>"$T/err" || rc=$?; echo "$rc" >"$T/rc" ) | head -c 10 >/dev/null
  rc=$(cat "$T/rc")
  case "$rc" in
    141) [ ! -s "$T/err" ] || fail "'$args' killed by SIGPIPE but printed: $(cat "$T/err")" ;;
    1) check_err "$args to a closed pipe" "Broken pipe" ;;
    *) fail "'$args' to a closed pipe exited $rc: $(cat "$T/err")" ;;
  esac
done

echo "ok: $rows rows"
