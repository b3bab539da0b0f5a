#!/usr/bin/env bash
# run.sh - run every tests/gpu/t_*.sh (on a GPU machine) and print a pass/fail table.
# Environment: as lib.sh (GPUSCOPE, GPU_BIN, CHECK, WORK, KEEP); T=pattern to select tests.
here=$(cd "$(dirname "$0")" && pwd)
export WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK/logs"
pass=0 failn=0 skip=0
rows=()
for t in "$here"/t_${T:-*}.sh; do
	name=$(basename "$t" .sh)
	start=$(date +%s.%N)
	timeout 600 bash "$t" >"$WORK/logs/$name.log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) res=pass; pass=$((pass + 1)) ;;
	77) res=skip; skip=$((skip + 1)) ;;
	*) res=FAIL; failn=$((failn + 1)) ;;
	esac
	rows+=("$(printf '%-22s %-5s %6ss' "$name" "$res" "$secs")")
	if [ "$res" = FAIL ]; then
		grep -E '^FAIL' "$WORK/logs/$name.log" | head -20 | sed 's/^/    /'
		tail -5 "$WORK/logs/$name.log" | sed 's/^/    | /'
	fi
done
printf '%-22s %-5s %7s\n' test result time
for r in "${rows[@]}"; do echo "$r"; done
echo "passed $pass, failed $failn, skipped $skip"
[ "$failn" = 0 ]
