#!/usr/bin/env bash
# device-tools.sh - perf and strace for the GPU machine (it has neither, and
# nothing can be installed there): this machine's binaries with the shared
# libraries they need that a newer Ubuntu may lack, in one archive to carry.
#   bash scripts/device-tools.sh [DEST]        (default .device/tools.txz)
# The archive holds tools/perf and tools/strace, wrappers that run the
# binaries in tools/bin with LD_LIBRARY_PATH=tools/lib, and tools/lib.  A
# program the tool starts inherits that LD_LIBRARY_PATH: bench/overhead/where.sh
# runs its program under `env LD_LIBRARY_PATH=<its own value>`.  glibc's own
# libraries, libgcc_s and libstdc++ stay out: the machine's newer ones run
# binaries built against older ones, and ours would not run its loader.
set -eu
dest=${1:-.device/tools.txz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools/bin" "$tmp/tools/lib"
for t in perf strace; do
	p=$(command -v "$t") || { echo "device-tools: no $t here (apt-get install linux-perf strace)" >&2; exit 2; }
	cp -L "$p" "$tmp/tools/bin/$t"
	ldd "$p" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
		case $(basename "$lib") in
		libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*) ;;
		*) cp -L "$lib" "$tmp/tools/lib/" ;;
		esac
	done
	cat >"$tmp/tools/$t" <<WRAP
#!/bin/sh
d=\$(cd "\$(dirname "\$0")" && pwd)
LD_LIBRARY_PATH=\$d/lib exec "\$d/bin/$t" "\$@"
WRAP
	chmod +x "$tmp/tools/$t"
done
mkdir -p "$(dirname "$dest")"
tar cJf "$dest" -C "$tmp" tools
ls -la "$dest"
