#!/usr/bin/env bash
# Installs the optic build into a temporary prefix, then builds and runs a small
# consumer (main.c: version, shapes, BLAS, and a graph (a + b) * a built,
# compiled and run, its 4 outputs checked) the ways a user would link it:
#   find_package(optic CONFIG): optic::optic (shared) and optic::optic_static;
#   `pkg-config --cflags --libs optic`: shared, runs without LD_LIBRARY_PATH
#     (the rpath is in Libs);
#   `pkg-config --cflags --libs optic-static`: the static archive;
#   `pkg-config --static --cflags --libs optic` on an install without the
#     shared library (a static-only tree): -loptic is the archive, and --static
#     names everything it needs.
# Each program runs with LD_LIBRARY_PATH unset; the shared ones must load the
# installed liboptic.so, the static ones no liboptic.so at all.
# usage: run.sh CMAKE BUILD_DIR CONSUMER_SRC_DIR CC
set -euo pipefail
cmake=$1 build=$2 src=$3 cc=$4
work=$build/consumer-test
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { echo "== $*"; }
trap 'echo "FAIL install_consumer (step above); reproduce: $0 $*"' ERR
unset LD_LIBRARY_PATH
fail() { echo "FAIL install_consumer: $*"; echo "reproduce: $0 $cmake $build $src $cc"; exit 1; }

# run_checked PROGRAM shared|static: runs it, checks its graph output and
# which liboptic it loaded. (ldd's output is captured first: `ldd | grep -q`
# under pipefail fails at random when grep exits early and ldd gets SIGPIPE.)
run_checked() {
  local prog=$1 kind=$2 out deps
  out=$("$prog") || fail "$prog exited with $?: $out"
  echo "$out"
  grep -q '^consumer: (a + b) \* a = \[2.625 -6 7.3125 0\]$' <<<"$out" || fail "$prog: wrong graph output"
  deps=$(ldd "$prog")
  if [ "$kind" = shared ]; then
    grep -q "liboptic.so.* => $prefix/.*liboptic.so" <<<"$deps" || fail "$prog does not load $prefix's liboptic.so: $deps"
  elif grep -q liboptic.so <<<"$deps"; then
    fail "$prog links liboptic.so, not liboptic.a: $deps"
  fi
}

step "install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name liboptic.a -print -quit)")
[ -f "$libdir/liboptic.a" ] && [ -f "$libdir/pkgconfig/optic.pc" ] && [ -f "$libdir/pkgconfig/optic-static.pc" ] ||
  fail "the install lacks liboptic.a, optic.pc or optic-static.pc in $libdir"

step "find_package(optic CONFIG)"
"$cmake" -S "$src" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
run_checked "$work/cmake-build/consumer_shared" shared
run_checked "$work/cmake-build/consumer_static" static

step "pkg-config --cflags --libs optic"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
"$cc" "$src/main.c" -o "$work/pc_shared" $(pkg-config --cflags --libs optic)
run_checked "$work/pc_shared" shared

step "pkg-config --cflags --libs optic-static"
# shellcheck disable=SC2046
"$cc" "$src/main.c" -o "$work/pc_static" $(pkg-config --cflags --libs optic-static)
run_checked "$work/pc_static" static

step "pkg-config --static --cflags --libs optic, static-only install"
cp -a "$prefix" "$work/prefix-static"
rm -f "$work/prefix-static/${libdir#"$prefix"/}"/liboptic.so*
export PKG_CONFIG_PATH=$work/prefix-static/${libdir#"$prefix"/}/pkgconfig
# shellcheck disable=SC2046
"$cc" "$src/main.c" -o "$work/pc_static_only" $(pkg-config --static --cflags --libs optic)
run_checked "$work/pc_static_only" static
echo "1 passed, 0 failed"
