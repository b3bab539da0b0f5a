#!/usr/bin/env bash
# The README's first command: install what the build needs, build, and run the
# main job on a bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
bash scripts/demo.sh build
