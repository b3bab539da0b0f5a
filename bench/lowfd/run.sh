#!/usr/bin/env bash
# bench/lowfd/run.sh - does a collector thread ever take the program's lowest
# free descriptor?  Runs tests/collect's target in mode "lowest closerange"
# (close every descriptor from 3, then open and close /dev/null for 300 ms:
# each open must get the same number) under gpuscope profile N times, with
# every CPU kept busy by a spinning shell (the collector's threads then run at
# other moments than on an idle machine), and counts the runs where the
# program found its descriptor taken ("stolen N M").  docs/collector.md says
# what it found.
#
# usage: bench/lowfd/run.sh [BUILD] [N]   (build folder, default build; N runs, default 150)
set -u
BUILD=${1:-build}
N=${2:-150}
T=$BUILD/tests/collect/gs_target
[ -x "$T" ] && [ -x "$BUILD/gpuscope" ] || { echo "bench/lowfd: no $T or $BUILD/gpuscope (build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
	sh -c 'while :; do :; done' &
done
taken=0
for i in $(seq "$N"); do
	out=$("$BUILD/gpuscope" profile -o "$work/r$i" --cpu-sample-hz 1000 -- "$T" lowest closerange 2>/dev/null)
	case $out in
	lowest\ *) ;;
	*) taken=$((taken + 1)); echo "run $i: $out" ;;
	esac
	rm -f "$work/r$i.gpuscope"
done
echo "descriptor taken in $taken of $N runs"
