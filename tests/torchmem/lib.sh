# lib.sh - helpers of the torchmem tests (sourced).  Environment from ctest:
# GPUSCOPE (the binary), GS_SOURCE_DIR, GS_BUILD_DIR.
set -euo pipefail
: "${GPUSCOPE:?}" "${GS_SOURCE_DIR:?}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-torchmem.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }
[ -x "$PY" ] || skip "no $PY"

# profile ARGS... : gpuscope profile, its status in $rc (never fails the script)
profile() { rc=0; "$GPUSCOPE" profile "$@" || rc=$?; }
# the program's own stderr: profile's lines ("gpuscope: ...") left out
own_err() { grep -v '^gpuscope: ' "$1" || true; }
