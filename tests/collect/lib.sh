# lib.sh - helpers for the collector's end-to-end tests (sourced).
# Environment from ctest: GPUSCOPE (the binary), GS_TARGET (gs_target),
# GS_DEMO (the demo), GS_SOURCE_DIR.
set -euo pipefail
: "${GPUSCOPE:?}" "${GS_TARGET:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }
expect_ge() { [ "$1" -ge "$2" ] || fail "$3: got $1, expected at least $2"; }
expect_le() { [ "$1" -le "$2" ] || fail "$3: got $1, expected at most $2"; }

# profile ARGS... : run gpuscope profile, keep its status in $rc (never fails the script)
profile() { rc=0; "$GPUSCOPE" profile "$@" || rc=$?; }

# count REPORT LABEL : a count from `gpuscope info` ("nvtx ranges", "dropped", ...)
count() {
  "$GPUSCOPE" info "$1" | awk -v l="$2" '
    { line = $0; sub(/^ +/, "", line)
      if (index(line, l) == 1) { v = substr(line, length(l) + 1); gsub(/[^0-9]/, "", v); print v; exit } }'
}

# ndump REPORT TYPE PATTERN : how many dumped events of TYPE match PATTERN (grep -E)
ndump() { "$GPUSCOPE" dump --type "$2" "$1" | { grep -cE -- "$3" || true; }; }
