# Shared helpers for end-to-end shell tests.  Source it; it sets -eu, a temp dir
# $T removed at exit, and functions that fail the test with a message.
set -eu
: "${GPUSCOPE:?GPUSCOPE must point at the gpuscope binary}"
: "${GS_BUILD_DIR:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_cmp EXPECTED ACTUAL: compare files, show the diff on mismatch
expect_cmp() { diff -u "$1" "$2" || fail "output differs from $1"; }
# expect_fail CODE CMD...: run CMD, check exit status CODE and a one-line 'error:' message
expect_fail() {
  local want=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want (stderr: $(cat "$T/err"))"
  grep -q 'error:' "$T/err" || fail "'$*' printed no error: line"
  [ "$(grep -c . "$T/err")" -le 2 ] || fail "'$*' printed more than a short error: $(cat "$T/err")"
}
