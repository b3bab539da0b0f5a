#!/usr/bin/env bash
# Build the floor tracer (floor.so), the hook counter (hookcount.so) and bench/nvtx's
# program (bench_nvtx, for a machine without a compiler) next to the gpuscope build:
#   build.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build}/bench
cuda=${CUDA_ROOT:-/usr/local/cuda}
mkdir -p "$out"
gcc -O2 -shared -fPIC -Wall -Wextra -o "$out/floor.so" "$here/floor.c" -I"$cuda/include" \
	-L"$cuda/targets/x86_64-linux/lib" -lcupti -Wl,-rpath,"$cuda/targets/x86_64-linux/lib"
echo "$out/floor.so"
gcc -O2 -shared -fPIC -Wall -Wextra -o "$out/hookcount.so" "$here/hookcount.c" -ldl
echo "$out/hookcount.so"
gcc -O2 -std=c11 -D_GNU_SOURCE -I"$cuda/include" -o "$out/bench_nvtx" "$here/../nvtx/bench_nvtx.c" -ldl
echo "$out/bench_nvtx"
