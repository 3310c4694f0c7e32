#!/usr/bin/env bash
# Installs the optic build into a temporary prefix, then builds and runs a tiny
# consumer twice: with find_package(optic CONFIG) (shared and static targets)
# and with `pkg-config --cflags --libs optic` (shared, and --static).
# usage: run.sh CMAKE BUILD_DIR CONSUMER_SRC_DIR CC
set -euo pipefail
cmake=$1 build=$2 src=$3 cc=$4
work=$build/consumer-test
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { echo "== $*"; }
trap 'echo "FAIL install_consumer (step above); reproduce: $0 $*"' ERR

step "install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null

step "find_package(optic CONFIG)"
"$cmake" -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer_shared"
"$work/cmake-build/consumer_static"
# The shared consumer really uses the installed liboptic.so, not a copy. (grep
# without -q: -q exits at the first match, ldd then fails writing, and
# pipefail turns that into a spurious failure.)
ldd "$work/cmake-build/consumer_shared" | grep "$prefix/.*liboptic.so" >/dev/null

step "pkg-config optic"
libdir=$(dirname "$(find "$prefix" -name optic.pc -print -quit)")
export PKG_CONFIG_PATH=$libdir
"$cc" "$src/main.c" -o "$work/pc_shared" $(pkg-config --cflags --libs optic) -Wl,-rpath,"$(pkg-config --variable=libdir optic)"
"$work/pc_shared"
static_libs=$(pkg-config --static --libs optic | sed 's/-loptic\b/-Wl,-Bstatic -loptic -Wl,-Bdynamic/')
"$cc" "$src/main.c" -o "$work/pc_static" $(pkg-config --cflags optic) $static_libs
! ldd "$work/pc_static" | grep liboptic.so >/dev/null
"$work/pc_static"
echo "1 passed, 0 failed"
