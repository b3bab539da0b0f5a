#!/usr/bin/env bash
# A replay bomb (issue 19, item 5): an NVML replay file whose second line
# nests 500,000 arrays (and one of 500,000 objects) overflowed the stack of
# `monitor --replay` and `health --replay`.  Each must now refuse the file
# with one error line naming it, the line and the depth limit, status 2.
# A line nested exactly 64 deep is within the limit (it is not a reading, so
# it fails for another reason: it is not a JSON object or lacks "k").
set -u
G=${GPUSCOPE:?}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
hdr='{"format":"gpuscope-nvml-replay","version":1}'
python3 - "$W" "$hdr" <<'PY'
import sys
w, hdr = sys.argv[1], sys.argv[2]
open(w + "/arrays.jsonl", "w").write(hdr + "\n" + '{"k":"tick","r":' + "[" * 500000 + "]" * 500000 + "}\n")
open(w + "/objects.jsonl", "w").write(hdr + "\n" + '{"a":' * 500000 + "1" + "}" * 500000 + "\n")
# 64 levels: the line object and 63 arrays
open(w + "/deep64.jsonl", "w").write(hdr + "\n" + '{"k":"tick","r":' + "[" * 63 + "]" * 63 + "}\n")
PY
for f in arrays objects; do
	for cmd in "monitor --replay $W/$f.jsonl -c 1" "health --replay $W/$f.jsonl"; do
		rc=0
		$G $cmd >"$W/out" 2>"$W/err" || rc=$?
		[ $rc -lt 128 ] || fail "'$cmd' crashed (status $rc)"
		[ $rc = 2 ] || fail "'$cmd' exited $rc, expected 2: $(head -c 300 "$W/err")"
		[ "$(wc -l <"$W/err")" = 1 ] || fail "'$cmd': not one error line: $(head -c 300 "$W/err")"
		grep -q "^gpuscope: error: .*replay '$W/$f.jsonl': line 2: JSON nested deeper than 64 levels" "$W/err" ||
			fail "'$cmd': message: $(head -c 300 "$W/err")"
	done
done
rc=0
$G monitor --replay "$W/deep64.jsonl" -c 1 >"$W/out" 2>"$W/err" || rc=$?
[ $rc -lt 128 ] || fail "64 levels crashed (status $rc)"
grep -q "nested deeper" "$W/err" && fail "64 levels refused as too deep: $(cat "$W/err")"
echo "failures: $fails"
[ $fails = 0 ]
