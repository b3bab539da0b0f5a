#!/usr/bin/env bash
# Graceful degradation: `gpuscope profile --trace=cuda,osrt` of a CPU-only
# program that runs the CUDA injection entry point.  Without a driver (CI)
# the report holds one "CUDA tracing off" warning and the CPU data; on a GPU
# machine CUPTI starts and there is no such warning.
set -u
: "${GPUSCOPE:?}" "${GS_BUILD_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$GPUSCOPE" profile -o "$tmp/nd" --trace=cuda,osrt -- "$GS_BUILD_DIR/cpu_inject" >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "profile exited $?"; }
cat "$tmp/out"
grep -q "cpu_inject: ok" "$tmp/out" || fail "the program did not run to its end"
grep -q "InitializeInjection returned 1" "$tmp/out" || fail "InitializeInjection must return 1"
rep="$tmp/nd.gpuscope"
[ -f "$rep" ] || rep="$tmp/nd"
"$GPUSCOPE" info "$rep" >"$tmp/info" || fail "info failed"
cat "$tmp/info"
grep -q "pid .*cpu_inject" "$tmp/info" || fail "the process is not in the report"
"$GPUSCOPE" dump --type osrt "$rep" >"$tmp/osrt" || fail "dump failed"
grep -q "func=nanosleep" "$tmp/osrt" || fail "no OS-runtime records (CPU side lost)"
if [ -e /dev/nvidiactl ]; then
	grep -q "CUDA tracing off" "$tmp/info" && fail "CUDA tracing off with a driver present"
else
	n=$(grep -c "CUDA tracing off: " "$tmp/info")
	[ "$n" = 1 ] || fail "expected one 'CUDA tracing off' warning, found $n"
	grep -q "CUDA tracing off: .*driver" "$tmp/info" || fail "the warning does not say why"
fi
echo "ok"
