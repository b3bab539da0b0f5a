# lib.sh - helpers for the GPU test scripts (sourced by t_*.sh).
#   GPUSCOPE  the gpuscope binary          (default: $GS_BUILD_DIR/gpuscope)
#   GPU_BIN   the GPU test programs        (default: $GS_BUILD_DIR/tests/gpu)
#   CHECK     cuda_report_check            (default: $GS_BUILD_DIR/cuda_report_check)
#   WORK      scratch directory for reports (default: a new temporary one)
#   KEEP      when set, reports named in keep() are copied there
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${GS_BUILD_DIR:=$here/../../build}"
: "${GPUSCOPE:=$GS_BUILD_DIR/gpuscope}"
: "${GPU_BIN:=$GS_BUILD_DIR/tests/gpu}"
: "${CHECK:=$GS_BUILD_DIR/cuda_report_check}"
: "${WORK:=$(mktemp -d)}"
mkdir -p "$WORK"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
die() { echo "FAIL: $*"; exit 1; }

# profile NAME [profile options] -- PROGRAM ARGS: sets REPORT
profile() {
	local name=$1 rc
	shift
	rm -f "$WORK/$name" "$WORK/$name".gpuscope
	timeout 300 "$GPUSCOPE" profile -o "$WORK/$name" "$@" >"$WORK/$name.out" 2>&1
	rc=$?
	cat "$WORK/$name.out"
	[ "$rc" = 0 ] || die "gpuscope profile ($name) exited $rc"
	if [ -f "$WORK/$name.gpuscope" ]; then REPORT="$WORK/$name.gpuscope"; else REPORT="$WORK/$name"; fi
	[ -f "$REPORT" ] || die "no report for $name"
	"$CHECK" "$REPORT" "${CHECK_ARGS[@]}" >"$WORK/$name.facts"
	CHECK_RC=$?
	"$GPUSCOPE" info --format json "$REPORT" >"$WORK/$name.info.json" || die "info failed on $REPORT"
	FACTS="$WORK/$name.facts"
	INFO="$WORK/$name.info.json"
	sed 's/^/  fact: /' "$FACTS"
}

# fact KEY: the value printed by cuda_report_check for KEY (keys may hold spaces)
fact() {
	awk -v k="$1" '{ v = $NF; $NF = ""; sub(/ $/, ""); if ($0 == k) print v }' "$FACTS"
}

# expect KEY OP VALUE  (OP: -eq -ge -le -gt)
expect() {
	local v
	v=$(fact "$1")
	[ -n "$v" ] || { fail "no fact '$1'"; return; }
	[ "$v" "$2" "$3" ] || fail "$1 = $v, expected $2 $3"
}

# info_get PYTHON-EXPR over the parsed `info --format json` as j
info_get() {
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$INFO"
}

expect_no_drops() {
	local d
	d=$(info_get 'sum(j["drops"].values())')
	[ "$d" = 0 ] || fail "dropped records: $(info_get 'j["drops"]')"
}

expect_no_cuda_warning() {
	local w
	w=$(info_get '"|".join(x for x in j["warnings"] if "CUDA" in x)')
	[ -z "$w" ] || fail "warning: $w"
}

expect_launch_order() {
	[ "$CHECK_RC" = 0 ] || fail "a kernel or copy starts before its launch API call"
	expect kernels_before_launch -eq 0
	expect copies_before_api -eq 0
}

# gpu_profiler's kernels: exactly the 20 inside_kernels of its middle part were kept
# (CHECK_ARGS=("${PROFILER_KERNELS[@]}") for the facts)
PROFILER_KERNELS=(--kernel before_kernel --kernel inside_kernel --kernel between_kernel --kernel after_kernel)
expect_middle_only() {
	expect "kernel[inside_kernel]" -eq 20
	expect "kernel[before_kernel]" -eq 0
	expect "kernel[between_kernel]" -eq 0
	expect "kernel[after_kernel]" -eq 0
	expect_launch_order
}

# keep NAME: copy the current report to $KEEP/NAME.gpuscope
keep() {
	[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$REPORT" "$KEEP/$1.gpuscope"
	return 0
}

finish() {
	if [ "$failures" -gt 0 ]; then
		echo "$failures expectation(s) failed"
		exit 1
	fi
	echo "all expectations met"
	exit 0
}
