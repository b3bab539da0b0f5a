#!/usr/bin/env bash
# The main job on bundled examples:
#  1. profile the demo program (CPU threads, NVTX, OS runtime; CUDA where a GPU is)
#     and show what was recorded;
#  2. diagnose a real report recorded on an H200 (the zoo's data-loading case);
#  3. prove the fix: diff the broken run against its fixed twin.
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
out=$(mktemp -d /tmp/gpuscope-demo.XXXXXX)
zoo=tests/data/zoo
echo "== gpuscope profile -o $out/demo -- $b/examples/demo"
"$b/gpuscope" profile -o "$out/demo" -- "$b/examples/demo"
echo
echo "== gpuscope info $out/demo.gpuscope"
"$b/gpuscope" info "$out/demo.gpuscope"
echo
echo "== gpuscope analyze $zoo/dataloader.broken.gpuscope   (recorded on an NVIDIA H200)"
"$b/gpuscope" analyze "$zoo/dataloader.broken.gpuscope"
echo
echo "== gpuscope diff $zoo/dataloader.broken.gpuscope $zoo/dataloader.fixed.gpuscope"
"$b/gpuscope" diff "$zoo/dataloader.broken.gpuscope" "$zoo/dataloader.fixed.gpuscope"
