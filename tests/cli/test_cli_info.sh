#!/usr/bin/env bash
# The CLI's exit codes (0 ok, 2 usage) and `optic info` facts, text and JSON.
# usage: test_cli_info.sh PATH/TO/optic
set -u
optic=$1
fails=0; passes=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err
fail() { echo "FAIL $*"; echo "  reproduce: $0 $optic"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }

expect_exit() { # expected-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, expected $want"; fi
}

expect_exit 0 "optic --help" "$optic" --help
grep -q "usage: optic" "$out" || fail "--help prints usage on stdout"
expect_exit 0 "optic --version" "$optic" --version
expect_exit 2 "optic with no command" "$optic"
expect_exit 2 "optic --bogus" "$optic" --bogus
grep -q "unknown option '--bogus'" "$err" && grep -q "usage: optic" "$err" \
  || fail "--bogus: message and usage on stderr"
expect_exit 2 "optic bogus" "$optic" bogus
grep -q "unknown command 'bogus'" "$err" || fail "bogus: message on stderr"
expect_exit 2 "optic info --bogus" "$optic" info --bogus
grep -q "usage: optic info" "$err" || fail "info --bogus: usage on stderr"
expect_exit 2 "optic info extra" "$optic" info extra
expect_exit 0 "optic info --help" "$optic" info --help

expect_exit 0 "optic info" "$optic" info
for word in "^optic " "^cpu " "^isa " "^kernels  *binary: " "^openmp " "^openblas " "core " "^openssl " "^mpi "; do
  grep -q "$word" "$out" || fail "optic info lacks '$word'"
done

expect_exit 0 "optic info --json" "$optic" info --json
python3 - "$out" <<'PY' && pass "info --json facts" || fail "info --json facts"
import json, os, sys
d = json.load(open(sys.argv[1]))
for k in ("version", "compiler", "cpu", "isa", "openmp", "openblas", "openssl", "mpi"):
    assert k in d, k
assert d["isa"]["selected"] in ("scalar", "avx2", "avx512", "neon")
assert d["openmp"]["max_threads"] >= 1
assert d["openblas"]["corename"], "no OpenBLAS core name"
assert d["openblas"]["parallel"] == "openmp", "not the OpenMP OpenBLAS: " + d["openblas"]["parallel"]
env = os.environ.get("OPENBLAS_CORETYPE")
if env:
    assert d["openblas"]["corename"].lower() == env.lower(), (d["openblas"]["corename"], env)
order = ["scalar", "avx2", "avx512"]
if d["openblas"]["core_isa"] in order and d["isa"]["best"] in order:
    weaker = order.index(d["openblas"]["core_isa"]) < order.index(d["isa"]["best"])
    assert (d["openblas"]["warning"] is not None) == weaker, d["openblas"]
assert d["openssl"].startswith("OpenSSL"), d["openssl"]
kernels = d["kernels"]
assert any(k["family"] == "binary" and k["op"] == "ADD" and k["variant"] == "vv" for k in kernels), kernels
for k in kernels:  # each op runs the selected ISA's kernel or the scalar fallback, nothing else
    assert k["isa"] in (d["isa"]["selected"], "scalar"), k
    assert k["function"].endswith("__" + k["isa"]), k
if d["isa"]["selected"] != "scalar":
    add = [k for k in kernels if k["family"] == "binary" and k["op"] == "ADD" and k["variant"] == "vv"][0]
    assert add["isa"] == d["isa"]["selected"], add
flags = open("/proc/cpuinfo").read()
if " avx512f " in flags.replace("\n", " ") + " " and " avx512bw " in flags and " avx512vl " in flags and " avx512dq " in flags:
    assert d["isa"]["best"] == "avx512", d["isa"]
PY

OPTIC_ISA=scalar "$optic" info --json >"$out" 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['isa']['selected']=='scalar', d['isa']; \
assert all(k['isa']=='scalar' for k in d['kernels']), d['kernels']" \
  "$out" && pass "OPTIC_ISA=scalar is honoured" || fail "OPTIC_ISA=scalar is honoured"

# Streaming-store threshold (kernels/stream.h): the LLC size from sysfs by
# default, OPTIC_STREAM_STORES=off or a byte count overrides, junk is reported.
stream_case() { # env-value expected-bytes(python literal) expected-source
  OPTIC_STREAM_STORES=$1 "$optic" info --json >"$out" 2>&1
  python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['stream_stores']; \
assert s['min_footprint_bytes']==$2 and s['source']=='$3', s" "$out" \
    && pass "OPTIC_STREAM_STORES='$1'" || fail "OPTIC_STREAM_STORES='$1' (want $2 from $3)"
}
stream_case off None env
stream_case 1048576 1048576 env
stream_case 0 0 env
# The LLC, capped at 4 L2s per online CPU (source "l2" when the cap applies).
llc=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || true)
l2=$(cat /sys/devices/system/cpu/cpu0/cache/index2/size 2>/dev/null || true)
if [ -n "$llc" ] && [ -n "$l2" ] && [ "${llc%K}" != "$llc" ] && [ "${l2%K}" != "$l2" ]; then
  want=$(( ${llc%K} * 1024 )) src=llc cap=$(( ${l2%K} * 1024 * 4 * $(getconf _NPROCESSORS_ONLN) ))
  [ "$cap" -lt "$want" ] && want=$cap src=l2
  stream_case "" "$want" "$src"
  stream_case 12abc "$want" env-invalid
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
