#!/usr/bin/env bash
# device-pack.sh - the part of a build that the GPU machine needs, in a
# folder small enough to carry (the device takes 64 MiB in all).
#   bash scripts/device-pack.sh [BUILD] [DEST]     (default build .device/b)
# Copies the CLI, the collector, the GPU test and zoo programs, the overhead
# floor and the checkers, keeping the build's layout, so scripts given
# BUILD=DEST (or B=DEST) find everything where they look for it.
set -eu
src=${1:-build}
dest=${2:-.device/b}
[ -x "$src/gpuscope" ] || { echo "device-pack: no $src/gpuscope (build first)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest"
{
	for f in gpuscope libgpuscope-collect.so libgpuscope-collect-nolock.so cuda_report_check bench_sampler bench/floor.so bench/hookcount.so bench/bench_nvtx; do
		[ -e "$src/$f" ] && echo "$f"
	done
	(cd "$src" && find tests/gpu examples/zoo -maxdepth 1 -type f \( -name 'gpu_*' -o -name 'zoo-*' \))
	# the Python start-up hook beside the collector (docs/memory.md)
	(cd "$src" && find gpuscope_site -maxdepth 1 -type f -name '*.py' 2>/dev/null)
} | while read -r f; do
	mkdir -p "$dest/$(dirname "$f")"
	cp -p "$src/$f" "$dest/$f"
done
du -sh "$dest"
