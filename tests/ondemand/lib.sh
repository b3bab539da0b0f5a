# lib.sh - helpers for the on-demand end-to-end tests (sourced).
# From ctest: GPUSCOPE (the binary), OD_TARGET (od_target.c).
set -euo pipefail
: "${GPUSCOPE:?}" "${OD_TARGET:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-od.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT
cd "$T"
# a private trigger directory of this test, not the user's own
export GPUSCOPE_CTL_DIR=$T/ctl

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }
expect_ge() { [ "$1" -ge "$2" ] || fail "$3: got $1, expected at least $2"; }
expect_le() { [ "$1" -le "$2" ] || fail "$3: got $1, expected at most $2"; }
expect_grep() { grep -qE -- "$1" "$2" || { cat "$2" >&2; fail "$3: no '$1' in $2"; }; }

# wait_socket N : wait (5 s at most) until N on-demand processes answer
wait_socket() {
  for _ in $(seq 100); do
    [ "$("$GPUSCOPE" capture --list 2>/dev/null | wc -l)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "no trigger socket after 5 s"
}

# count REPORT LABEL : a count from `gpuscope info`
count() {
  "$GPUSCOPE" info "$1" | awk -v l="$2" '
    { line = $0; sub(/^ +/, "", line)
      if (index(line, l) == 1) { v = substr(line, length(l) + 1); gsub(/[^0-9]/, "", v); print v; exit } }'
}

# edges REPORT : the capture edges' times (ns from the report's start), one "start|stop TIME" a line
edges() { "$GPUSCOPE" dump --type capture "$1" | awk '{ w = $0; sub(/.*what=/, "", w); print w, $1 }'; }
# marks REPORT : the "tick" marks' times (ns from the report's start)
marks() { "$GPUSCOPE" dump --type nvtx_mark "$1" | awk '/name="tick"/ { print $1 }'; }
# between FILE LO HI : how many numbers of FILE lie in [LO, HI)
between() { awk -v lo="$2" -v hi="$3" '$1 >= lo && $1 < hi { n++ } END { print n + 0 }' "$1"; }
# reach FILE LO HI : how far (ns) before HI the earliest number of FILE in [LO, HI) lies (0: none)
reach() { awk -v lo="$2" -v hi="$3" '$1 >= lo && $1 < hi && (m == "" || $1 < m) { m = $1 }
  END { print (m == "" ? 0 : hi - m) }' "$1"; }
