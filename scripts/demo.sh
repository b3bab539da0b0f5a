#!/usr/bin/env bash
# The main job on bundled examples: profile the demo program and show what
# was recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
out=$(mktemp -d /tmp/gpuscope-demo.XXXXXX)
echo "== gpuscope profile -o $out/demo -- $b/examples/demo"
"$b/gpuscope" profile -o "$out/demo" -- "$b/examples/demo"
echo "== gpuscope info $out/demo.gpuscope"
"$b/gpuscope" info "$out/demo.gpuscope"
