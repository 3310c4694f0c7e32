#!/usr/bin/env bash
# The empty home every test runs with (tests/CMakeLists.txt sets HOME and
# XDG_CONFIG_HOME to DIR/home and DIR/config for each test).
#   test_home.sh setup DIR   empties DIR and creates DIR/home and DIR/config
#   test_home.sh check DIR   fails, listing them, if the tests left files there
set -euo pipefail
mode=$1 dir=$2
case $mode in
  setup)
    rm -rf "$dir"
    mkdir -p "$dir/home" "$dir/config"
    echo "test home: $dir (empty)"
    ;;
  check)
    [ -d "$dir/home" ] && [ -d "$dir/config" ] || { echo "FAIL test home $dir is missing (setup did not run?)"; exit 1; }
    left=$(find "$dir/home" "$dir/config" -mindepth 1 | head -20)
    if [ -n "$left" ]; then
      echo "FAIL tests wrote into their home directory (HOME=$dir/home, XDG_CONFIG_HOME=$dir/config):"
      echo "$left"
      echo "reproduce: ctest --preset release (the test that writes there reads or writes ~ without meaning to)"
      exit 1
    fi
    echo "ok   nothing appeared in $dir/home or $dir/config"
    ;;
  *) echo "usage: $0 setup|check DIR" >&2; exit 2 ;;
esac
