#!/usr/bin/env bash
# The README's second command: every test.
#  1. build and run all tests (unit + end-to-end) in build/
#  2. build with AddressSanitizer + UndefinedBehaviorSanitizer and run the unit tests,
#     then the bad-input matrix (every command on every kind of bad input) on that build
#  3. fuzz the report reader (and importers) for a bounded time with libFuzzer
# Prints the ctest summaries and closes with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
failed=0; passed=0
step() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); echo "== $name: ok"; else failed=$((failed + 1)); echo "== $name: FAILED"; fi
}
step "build" bash scripts/build.sh build
step "tests" ctest --test-dir build --output-on-failure -j2 --timeout 300
step "build (asan+ubsan)" bash scripts/build.sh build-asan -DGS_SANITIZE=ON
step "unit tests (asan+ubsan)" env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L unit --output-on-failure -j2 --timeout 300
# UBSan stops at its first report (-fno-sanitize-recover) and ASan exits 1, so
# any report in a command fails the matrix row that ran it (a row expects 0 or 2)
step "bad-input matrix (asan+ubsan)" env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -R '^cli_(bad_input|matrix|info_dump)$' --output-on-failure -j2 --timeout 300
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  step "build (fuzz)" bash scripts/build.sh build-fuzz -DGS_FUZZ=ON -DCMAKE_C_COMPILER=clang
  step "fuzz" bash tests/fuzz/run.sh build-fuzz "$FUZZ_SECONDS"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
