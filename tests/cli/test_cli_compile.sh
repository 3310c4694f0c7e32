#!/usr/bin/env bash
# `optic compile FILE.hlo [--opt none|basic|full] [--machine NAME|FILE.json]
# [--no-fusion] [--json]`: exit codes (0 ok, 1 parse/compile/machine error
# with the message on stderr, 2 usage), every reference module at every
# level (the text output still parses as HLO; the JSON is well formed and its
# totals are the sums of its instructions; at --opt none the costs equal
# `optic cost`'s), --no-fusion, machine presets and files.
# usage: test_cli_compile.sh PATH/TO/optic PATH/TO/tests/data/hlo
set -u
optic=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err bad=$tmp/bad.hlo
# The host model must not depend on this user's configuration.
export XDG_CONFIG_HOME=$tmp/config
unset OPTIC_MACHINE
fails=0; passes=0
fail() { echo "FAIL $*"; echo "  reproduce: $0 $optic $data"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }

expect_exit() { # expected-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, expected $want"; cat "$err"; fi
}

f0=$data/add_f32_2x2.hlo
expect_exit 0 "optic compile --help" "$optic" compile --help
grep -q "usage: optic compile FILE.hlo" "$out" && grep -q "tpu-v6e" "$out" || fail "--help prints the usage and presets"
expect_exit 2 "no file" "$optic" compile
grep -q "no HLO file given" "$err" || fail "no file: message"
expect_exit 2 "unknown option" "$optic" compile "$f0" --bogus
grep -q "unknown option '--bogus'" "$err" || fail "--bogus: message"
expect_exit 2 "--opt fast" "$optic" compile "$f0" --opt fast
grep -q "expected none, basic or full" "$err" || fail "--opt: message"
expect_exit 2 "--opt without a value" "$optic" compile "$f0" --opt
expect_exit 2 "--machine tpu-v9" "$optic" compile "$f0" --machine tpu-v9
grep -q "unknown machine 'tpu-v9'" "$err" || fail "--machine: message lists: $(cat "$err")"
expect_exit 2 "two files" "$optic" compile "$f0" "$f0"
expect_exit 1 "missing file" "$optic" compile "$data/no_such_file.hlo"
grep -q "no_such_file.hlo: cannot open" "$err" || fail "missing file: message names the path"
[ -s "$out" ] && fail "missing file: nothing on stdout"
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] foo(p)\n}\n' >"$bad"
expect_exit 1 "unknown opcode" "$optic" compile "$bad"
grep -q "line 4:19: unknown opcode 'foo'" "$err" || fail "parse error: line:col message"
printf '{"name": "h", "peak_flops": -1}' >"$tmp/bad.json"
expect_exit 1 "corrupt machine file" "$optic" compile "$f0" --machine "$tmp/bad.json"
grep -q "bad.json" "$err" || fail "machine file error names the file: $(cat "$err")"
mkdir -p "$XDG_CONFIG_HOME/optic" && echo '{' >"$XDG_CONFIG_HOME/optic/machine.json"
expect_exit 1 "corrupt host machine file" "$optic" compile "$f0"
grep -q "machine.json" "$err" || fail "host file error names the file"
rm -f "$XDG_CONFIG_HOME/optic/machine.json"

# A machine file: 1 flop/ns, 1 byte/ns, no overhead -> add f32[2,2]: 4 flops, 48 bytes = 48 ns.
cat >"$tmp/m.json" <<'EOF'
{"name": "unit", "peak_flops": 1e9, "peak_transcendentals": 1e9, "dram_bandwidth": 1e9,
 "cache_bandwidth": 1e9, "cache_bytes": 0, "op_overhead_ns": 0, "cores": 1, "source": "test"}
EOF
expect_exit 0 "machine file" "$optic" compile "$f0" --machine "$tmp/m.json" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["machine"]["name"]=="unit" and d["est_ns"]==48 and d["flops"]==4, d' "$out" \
  && pass "machine file: add f32[2,2] = 48 ns" || fail "machine file figures"
# --threads N: the model of N of the machine's cores. A 2-core file: 1 flop/ns
# per core, DRAM 1 byte/ns in all but 0.75 on one core (no cache): add f32[2,2]
# (4 flops, 48 bytes) = 64 ns on 1 (DRAM is not per core), and 64 on 2 too: the
# runtime keeps it on one thread (splitting would save 32 ns, less than the default
# 100 ns barrier; optic_split_op), so the estimate does as well.
cat >"$tmp/m2.json" <<'EOF'
{"name": "unit2", "peak_flops": 2e9, "peak_transcendentals": 1e9, "dram_bandwidth": 1e9,
 "core_dram_bandwidth": 0.75e9, "cache_bandwidth": 1e9, "cache_bytes": 0, "op_overhead_ns": 0, "cores": 2}
EOF
while read -r nt want_ns want_cores; do
  expect_exit 0 "--threads $nt" "$optic" compile "$f0" --machine "$tmp/m2.json" --threads "$nt" --json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["machine"]; assert d["est_ns"]==float(sys.argv[2]) and m["cores"]==int(sys.argv[3]) and m["core_dram_bandwidth"]==0.75e9, (d["est_ns"], m)' "$out" "$want_ns" "$want_cores" \
    && pass "--threads $nt: est_ns $want_ns, cores $want_cores" || fail "--threads $nt: $(head -c 300 "$out")"
done <<'EOF'
1 64 1
2 64 2
0 64 2
9 64 2
EOF
expect_exit 0 "--threads text" "$optic" compile "$f0" --machine "$tmp/m2.json" --threads 1
grep -q "machine=unit2 threads=1" "$out" && grep -q "core_dram_bandwidth=7.5e+08" "$out" \
  && pass "--threads: header and machine line" || fail "--threads text: $(head -3 "$out")"
for v in -1 x 1.5 ""; do
  expect_exit 2 "--threads '$v'" "$optic" compile "$f0" --threads "$v"
done
expect_exit 2 "--threads without a value" "$optic" compile "$f0" --threads
"$optic" compile --help | grep -q -- "--threads N" && pass "--help lists --threads" || fail "--help lacks --threads"

expect_exit 0 "stdin" sh -c "\"$optic\" compile - --machine tpu-v4 <\"$f0\""
grep -q "machine=tpu-v4" "$out" || fail "stdin: header names the machine"

for f in "$data"/*.hlo; do
  name=$(basename "$f")
  "$optic" cost "$f" --json >"$tmp/cost.json" 2>/dev/null || { fail "$name: optic cost"; continue; }
  for level in none basic full; do
    expect_exit 0 "$name --opt $level" "$optic" compile "$f" --opt "$level" --machine host
    grep -q "^// program: entry=" "$out" && grep -q "buffer=" "$out" && grep -q "// totals " "$out" \
      || fail "$name $level: annotations missing"
    # the annotated text is still HLO text
    cp "$out" "$tmp/dump.hlo"
    expect_exit 0 "$name --opt $level: output parses" sh -c "\"$optic\" cost - <\"$tmp/dump.hlo\""
    expect_exit 0 "$name --opt $level --json" "$optic" compile "$f" --opt "$level" --json --machine tpu-v5e
    python3 - "$out" "$tmp/cost.json" "$level" <<'PY' && pass "$name $level: JSON sums" || fail "$name $level: JSON sums"
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)
assert text.count("\n") == 1
for k in ["module", "entry", "level", "fusion", "machine", "flops", "transcendentals", "bytes_accessed", "est_ns",
          "instructions", "fusions", "arena_bytes", "parameter_bytes", "output_bytes", "constant_bytes",
          "peak_bytes", "compile_seconds", "passes", "computations"]:
    assert k in d, k
assert d["level"] == sys.argv[3] and d["machine"]["name"] == "tpu-v5e"
entry = [c for c in d["computations"] if c["name"] == d["entry"]]
assert len(entry) == 1, "entry listed once"
for c in d["computations"]:
    for k in ["flops", "transcendentals", "bytes_accessed"]:
        assert c[k] == sum(i[k] for i in c["instructions"]), (c["name"], k)
    assert abs(c["est_ns"] - sum(i["est_ns"] for i in c["instructions"])) <= 1e-9 * max(1, c["est_ns"])
    for i in c["instructions"]:
        for b in i["buffers"]:
            assert b["kind"] in ("arena", "parameter", "constant", "output")
            if b["kind"] == "arena":
                assert b["offset"] % 64 == 0 and b["offset"] + b["size"] <= c["arena_bytes"], (i, c["arena_bytes"])
e = entry[0]
for k in ["flops", "transcendentals", "bytes_accessed", "est_ns"]:
    assert e[k] == d[k], k
assert d["instructions"] == len(e["instructions"])
assert d["fusions"] == sum(1 for i in e["instructions"] if i["opcode"] == "fusion")
assert d["peak_bytes"] >= d["arena_bytes"] + d["parameter_bytes"] + d["output_bytes"]
if sys.argv[3] == "none":
    cost = json.load(open(sys.argv[2]))
    assert d["fusions"] == 0 and d["passes"]["fusion"]["runs"] == 0
    for k in ["flops", "transcendentals", "bytes_accessed"]:
        assert d[k] == cost[k], (k, d[k], cost[k])
PY
  done
  expect_exit 0 "$name --no-fusion" "$optic" compile "$f" --no-fusion --json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["fusions"]==0 and d["fusion"]=="off", d["fusions"]' "$out" \
    && pass "$name --no-fusion: no fusions" || fail "$name --no-fusion"
done

# softmax fuses at full (exp and divide loops) and not at basic
"$optic" compile "$data/softmax_f32.hlo" --json >"$out" 2>"$err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["fusions"]>=1 and d["transcendentals"]==15875, d["fusions"]' "$out" \
  && pass "softmax: fused at full, transcendentals kept" || fail "softmax fusions"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
