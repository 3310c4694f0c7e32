#!/usr/bin/env bash
# Cross-builds core/, kernels/ and their tests for aarch64 (OPTIC_KERNELS_ONLY)
# and runs them under qemu-aarch64, so the NEON kernels are tested on x86 hosts.
# usage: run.sh CMAKE SOURCE_DIR BUILD_DIR
set -euo pipefail
cmake=$1 src=$2 build=$3
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "neon_qemu: $tool not found (scripts/install-deps installs it)"; exit 1; }
done
trap 'echo "FAIL neon_qemu; reproduce: $0 $*"' ERR
"$cmake" -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-aarch64.cmake" -DOPTIC_KERNELS_ONLY=ON >/dev/null
"$cmake" --build "$build" -j "$(nproc)" >/dev/null
cd "$build"
ctest --output-on-failure -j "$(nproc)"
