#!/usr/bin/env bash
# check_zoo.sh - structure check of the bottleneck zoo (examples/zoo).
#
# Every case id (issue 5's and the host-bound case) has one source (.cu or .py) with a broken and a
# fixed variant, is in record.sh and the README; the .cu cases are built when
# the build found nvcc; the programs reject bad usage; the Python cases
# compile; the result line has the documented format.  Where a GPU is
# visible, each case also runs a few steps and must print its result line.
set -u
src=${GS_SOURCE_DIR:?}/examples/zoo
build=${GS_BUILD_DIR:?}
zoo_bin=$build/examples/zoo
cases="dataloader launch-bound host-bound sync pageable serial-copy tensor-core underfill alloc-churn comm-wait mem-leak mem-oom mem-fragmentation"
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# Did this build find nvcc?  Then the .cu cases must have been built.
built=0
if grep -q '^GS_NVCC:FILEPATH=.*nvcc$' "$build/CMakeCache.txt" 2>/dev/null; then
	built=1
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
have_torch=0
python3 -c 'import torch' 2>/dev/null && have_torch=1
line_re() { echo "^zoo: case=$1 variant=$2 step_ms=[0-9]+\\.[0-9]{4} steps=$3\$"; }

# record.sh lists exactly these cases.
listed=$(sed -n 's/^ALL_CASES="\(.*\)"$/\1/p' "$src/record.sh")
[ "$listed" = "$cases" ] && ok "record.sh lists all cases" || fail "record.sh lists '$listed'"

for c in $cases; do
	n=0
	[ -f "$src/$c.cu" ] && n=$((n + 1))
	[ -f "$src/$c.py" ] && n=$((n + 1))
	[ $n -eq 1 ] || { fail "$c: expected one of $c.cu / $c.py, found $n"; continue; }
	f=$(ls "$src/$c".cu "$src/$c".py 2>/dev/null)
	# Both variants exist and the fix is marked in the code.
	grep -q 'BROKEN' "$f" && grep -q 'FIXED' "$f" &&
		grep -q '^[ *#]*broken:' "$f" && grep -q '^[ *#]*fixed:' "$f" &&
		ok "$c: broken and fixed variants documented" ||
		fail "$c: $f lacks a BROKEN/FIXED marker or the broken:/fixed: description"
	grep -q "\"$c\"" "$f" || fail "$c: $f does not name its case id \"$c\""
	grep -q "^### .*\`$c\`" "$src/README.md" || fail "$c: no section in README.md"

	if [ "${f##*.}" = py ]; then
		PYTHONPYCACHEPREFIX=$tmp/pyc python3 -m py_compile "$f" && ok "$c: py_compile" ||
			fail "$c: py_compile"
		if [ $have_torch = 1 ]; then
			python3 "$f" bogus >/dev/null 2>"$tmp/err"
			[ $? -eq 2 ] && grep -q '^usage:' "$tmp/err" && ok "$c: bad usage exits 2" ||
				fail "$c: bad usage not rejected"
		fi
		cmd=(python3 "$f")
		[ $have_torch = 1 ] || cmd=()
	else
		grep -qw "$c" "$src/CMakeLists.txt" || fail "$c: not in examples/zoo/CMakeLists.txt"
		if [ $built = 0 ]; then
			echo "skip: $c: no nvcc in this build"
			continue
		fi
		[ -x "$zoo_bin/zoo-$c" ] || { fail "$c: $zoo_bin/zoo-$c not built"; continue; }
		"$zoo_bin/zoo-$c" bogus >/dev/null 2>"$tmp/err"
		[ $? -eq 2 ] && grep -q '^usage:' "$tmp/err" && ok "$c: bad usage exits 2" ||
			fail "$c: bad usage not rejected"
		ZOO_STEPS=0 "$zoo_bin/zoo-$c" broken >/dev/null 2>"$tmp/err"
		[ $? -eq 2 ] && grep -q 'bad ZOO_STEPS' "$tmp/err" && ok "$c: bad ZOO_STEPS exits 2" ||
			fail "$c: ZOO_STEPS=0 not rejected"
		if [ "$gpus" -eq 0 ]; then
			"$zoo_bin/zoo-$c" broken >"$tmp/out" 2>"$tmp/err"
			[ $? -eq 1 ] && grep -q "^zoo: $c: no CUDA device" "$tmp/err" &&
				ok "$c: no GPU: one-line error, exit 1" || fail "$c: no-GPU error"
		fi
		cmd=("$zoo_bin/zoo-$c")
	fi

	# On a GPU machine: a few steps of each variant print the result line.
	if [ "$gpus" -ge 1 ] && [ ${#cmd[@]} -gt 0 ]; then
		if [ "$c" = comm-wait ] && [ "$gpus" -lt 2 ]; then
			echo "skip: $c: needs 2 GPUs"
			continue
		fi
		for v in broken fixed; do
			ZOO_STEPS=3 ZOO_WARMUP=2 timeout 120 "${cmd[@]}" "$v" >"$tmp/out" 2>"$tmp/err"
			rc=$?
			if [ $rc -eq 0 ] && grep -Eq "$(line_re "$c" "$v" 3)" "$tmp/out"; then
				ok "$c $v: $(grep '^zoo: case=' "$tmp/out")"
			else
				fail "$c $v: exit $rc, output: $(head -c 400 "$tmp/out" "$tmp/err")"
			fi
		done
	fi
done

# The Python cases print the same line as zoo_line.h (test_zoo_line.c checks
# the C side against the same literal).
got=$(cd "$src" && PYTHONDONTWRITEBYTECODE=1 python3 -c \
	'import zoo_common; print(zoo_common.format_line("sync", "broken", 6.17034, 60))')
[ "$got" = "zoo: case=sync variant=broken step_ms=6.1703 steps=60" ] &&
	ok "python result line format" || fail "python result line: '$got'"
(cd "$src" && PYTHONDONTWRITEBYTECODE=1 ZOO_STEPS=7 python3 -c \
	'import zoo_common; print(zoo_common.parse_args("x", 30, argv=["p", "fixed"]))') >"$tmp/out" 2>&1
grep -qx "('fixed', 3, 7)" "$tmp/out" && ok "python ZOO_STEPS" || fail "python parse_args: $(cat "$tmp/out")"
(cd "$src" && PYTHONDONTWRITEBYTECODE=1 python3 -c \
	'import zoo_common; zoo_common.parse_args("x", 30, argv=["p", "slow"])') >/dev/null 2>&1
[ $? -eq 2 ] && ok "python bad variant exits 2" || fail "python bad variant"

# record.sh: syntax, usage, and it carries on past failing and unknown cases.
bash -n "$src/record.sh" && ok "record.sh syntax" || fail "record.sh syntax"
bash "$src/record.sh" >/dev/null 2>&1
[ $? -eq 2 ] && ok "record.sh usage exits 2" || fail "record.sh without arguments"
bash "$src/record.sh" "$tmp/no-such-dir" >/dev/null 2>&1
[ $? -eq 2 ] && ok "record.sh bad build dir exits 2" || fail "record.sh bad build dir"
if [ "$gpus" -eq 0 ] && [ $built = 1 ]; then
	ZOO_RUNS=1 ZOO_CASES="bogus-case sync comm-wait" bash "$src/record.sh" "$build" "$tmp/rec" >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "record.sh with failing cases: exit $rc, expected 1"
	grep -q 'record: bogus-case: unknown case' "$tmp/out" || fail "record.sh: unknown case not reported"
	grep -q 'record: sync broken: run failed' "$tmp/out" || fail "record.sh: failed run not reported"
	grep -q 'record: comm-wait: skipped, needs 2 GPUs' "$tmp/out" || fail "record.sh: comm-wait not skipped"
	grep -q 'record: failed: bogus-case sync' "$tmp/out" || fail "record.sh: no failure summary"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert set(d) == {"machine", "date"}, d' \
		"$tmp/rec/timings.json" || fail "record.sh: timings.json"
	[ -s "$tmp/rec/record.log" ] || fail "record.sh: no record.log"
	ok "record.sh continues past failing cases ($(tail -n 1 "$tmp/out"))"
fi

if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all zoo checks passed"
