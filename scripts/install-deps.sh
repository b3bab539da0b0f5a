#!/usr/bin/env bash
# Install the Debian 12 packages gpuscope needs to build and test (as root).
# Safe to run again: apt-get only installs what is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libzstd-dev libsqlite3-dev sqlite3 libyajl-dev libmicrohttpd-dev
      protobuf-compiler curl python3 zlib1g-dev chromium
      python3-torch)  # CPU-only PyTorch 1.13: tests/torchmem (the start-up hook, docs/memory.md)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpuscope: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
