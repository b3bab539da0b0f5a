# lib.sh - shared by the export end-to-end tests (sourced).
set -euo pipefail
G=${GPUSCOPE:?GPUSCOPE not set}
B=${GS_BUILD_DIR:?GS_BUILD_DIR not set}
SRC=${GS_SOURCE_DIR:?GS_SOURCE_DIR not set}
HERE=$SRC/tests/export
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The reports to test: a generated one, plus every real report under tests/data
# (tests/data/cuda, the zoo in tests/data/zoo, ...) when present.
test_reports() {
	"$B/gs_export_gen" "$T/generated.gpuscope" "${GEN_EVENTS:-6000}" >/dev/null
	echo "$T/generated.gpuscope"
	if [ -d "$SRC/tests/data" ]; then
		find "$SRC/tests/data" -name '*.gpuscope' -type f | sort
	fi
	return 0
}

# count REPORT KEY... - the sum of `gpuscope info` counts named KEY...
count() {
	local r=$1; shift
	"$G" info --format json "$r" | python3 -c '
import json, sys
c = json.load(sys.stdin)["counts"]
print(sum(c[k] for k in sys.argv[1:]))' "$@"
}
