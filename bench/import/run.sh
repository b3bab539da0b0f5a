#!/usr/bin/env bash
# Kineto import speed: MB/s of uncompressed JSON and peak RSS of `gpuscope info`.
# usage: bench/import/run.sh [SIZE_MB]   (default 500; writes to a temp dir)
set -euo pipefail
cd "$(dirname "$0")/../.."
size=${1:-500}
g=${GPUSCOPE:-build/gpuscope}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 bench/import/gen_trace.py "$tmp/big.json" "$size" >/dev/null
bytes=$(stat -c %s "$tmp/big.json")
cat "$tmp/big.json" >/dev/null   # page cache warm: measure parsing, not the disk
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for i in 1 2 3; do
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$g" info "$tmp/big.json" >"$tmp/out"
  read -r secs usr sys rss <"$tmp/t"
  events=$(awk '/^events:/{print $2}' "$tmp/out")
  awk -v b="$bytes" -v s="$secs" -v c="$usr + $sys" -v u="$usr" -v y="$sys" -v r="$rss" -v e="$events" 'BEGIN {
    cpu = u + y
    printf "json %.0f MB  wall %.2f s (%.0f MB/s)  cpu %.2f s (%.0f MB/s)  %.2f M rows  peak RSS %.0f MiB\n",
      b/1e6, s, b/1e6/s, cpu, b/1e6/cpu, e/1e6, r/1024 }'
done
gzip -1 -c "$tmp/big.json" >"$tmp/big.json.gz"
/usr/bin/time -f "%e %M" -o "$tmp/t" "$g" info "$tmp/big.json.gz" >/dev/null
read -r secs rss <"$tmp/t"
awk -v b="$bytes" -v s="$secs" -v r="$rss" 'BEGIN {
  printf "gzip: json %.0f MB  time %.2f s  %.0f MB/s of JSON  peak RSS %.0f MiB\n", b/1e6, s, b/1e6/s, r/1024 }'
