#!/usr/bin/env bash
# Configure and build gpuscope into build/ (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGS_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
