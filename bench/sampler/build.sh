#!/usr/bin/env bash
# Build bench_sampler against an existing build tree: bench/sampler/build.sh [BUILD_DIR]
# Output: BUILD_DIR/bench_sampler.  Run it on a machine with an NVIDIA GPU:
#   BUILD_DIR/bench_sampler 10
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc bench/sampler/bench_sampler.c \
  "$b/src/nvml/libgs_nvml.a" "$b/src/trace/libgs_trace.a" "$b/src/util/libgs_util.a" \
  /usr/lib/x86_64-linux-gnu/libyajl_s.a -lzstd -ldl -lpthread -lm -o "$b/bench_sampler"
echo "built $b/bench_sampler"
