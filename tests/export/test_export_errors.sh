#!/usr/bin/env bash
# Write failures are errors with a non-zero exit, never a short file with success.
. "$(dirname "$0")/lib.sh"

"$B/gs_export_gen" "$T/r.gpuscope" 20000 >/dev/null
r=$T/r.gpuscope
# a full disk
for f in perfetto chrome json html; do
	if "$G" export "$r" --format "$f" -o /dev/full 2>"$T/err"; then fail "$f to /dev/full exited 0"; fi
	grep -q "No space left on device" "$T/err" || fail "$f: no disk-full message: $(cat "$T/err")"
done
if "$G" export "$r" --format csv -o - >/dev/full 2>"$T/err"; then fail "csv to a full stdout exited 0"; fi
if "$G" export "$r" --format sqlite -o /dev/full/x.sqlite 2>"$T/err"; then fail "sqlite to /dev/full exited 0"; fi
# a closed pipe: the reader goes away after the first bytes
for f in perfetto chrome; do
	set +o pipefail
	( rc=0; "$G" export "$r" --format "$f" -o - 2>"$T/err" || rc=$?; echo $rc >"$T/rc" ) | head -c 100 >/dev/null
	set -o pipefail
	[ "$(cat "$T/rc")" != 0 ] || fail "$f to a closed pipe exited 0"
	grep -q "Broken pipe" "$T/err" || fail "$f: no broken-pipe message: $(cat "$T/err")"
done
# no partial file is left behind when a write fails after the file was created:
# a file-size limit stands in for a disk that fills up mid-export
( ulimit -f 64; rc=0; "$G" export "$r" --format chrome -o "$T/big.json" 2>"$T/err" || rc=$?; echo $rc >"$T/rc" )
[ "$(cat "$T/rc")" = 1 ] || fail "export past the file-size limit: exit status $(cat "$T/rc"), expected 1"
grep -q "File too large" "$T/err" || fail "no file-too-large message: $(cat "$T/err")"
[ ! -e "$T/big.json" ] || fail "a partial big.json was left behind"
# the same for sqlite (written under temporary names): nothing is left behind
( ulimit -f 256; rc=0; "$G" export "$r" --format sqlite -o "$T/big.sqlite" 2>"$T/err" || rc=$?; echo $rc >"$T/rc" )
[ "$(cat "$T/rc")" = 1 ] || fail "sqlite past the file-size limit: exit status $(cat "$T/rc"), expected 1"
[ -z "$(ls "$T" | grep big.sqlite)" ] || fail "sqlite left files behind: $(ls "$T")"
# bad usage and bad input
set +e
"$G" export "$r" --format nosuch 2>/dev/null; [ $? = 2 ] || fail "unknown format: exit status"
"$G" export 2>/dev/null; [ $? = 2 ] || fail "missing report: exit status"
"$G" export "$T/missing.gpuscope" 2>/dev/null; [ $? = 2 ] || fail "missing file: exit status"
set -e
"$G" export "$r" --format perfetto -o "$T/a.pftrace" 2>/dev/null
if "$G" export "$r" --format perfetto -o "$T/a.pftrace" 2>/dev/null; then fail "overwrote without --force"; fi
"$G" export "$r" --format perfetto -o "$T/a.pftrace" --force 2>/dev/null
# CSV and JSON: one file per stats report and the findings; JSON parses
mkdir "$T/csv"
"$G" export "$r" --format csv -o "$T/csv/run" 2>/dev/null
[ -s "$T/csv/run_cuda_gpu_kern_sum.csv" ] || fail "no kernel summary csv"
[ -s "$T/csv/run_findings.csv" ] || fail "no findings csv"
head -1 "$T/csv/run_findings.csv" | grep -q '^Rank,Rule,Severity' || fail "findings csv header"
"$G" export "$r" --format json -o "$T/s.json" 2>/dev/null
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [t["report"] for t in d["reports"]]
assert "cuda_gpu_kern_sum" in names and "nvtx_sum" in names, names
assert d["analysis"]["findings"], "no findings"
' "$T/s.json" || fail "json export content"
echo ok
