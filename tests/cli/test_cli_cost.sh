#!/usr/bin/env bash
# `optic cost FILE.hlo [--json]`: exit codes (0 ok, 1 parse/runtime error with
# the message on stderr, 2 usage), well-formed JSON in the exact shape of
# issue 10 for every reference module, totals equal to the per-instruction
# sums and to the text output, and hand-checked figures.
# usage: test_cli_cost.sh PATH/TO/optic PATH/TO/tests/data/hlo
set -u
optic=$1
data=$2
out=$(mktemp) err=$(mktemp) bad=$(mktemp --suffix=.hlo)
trap 'rm -f "$out" "$err" "$bad"' EXIT
fails=0; passes=0
fail() { echo "FAIL $*"; echo "  reproduce: $0 $optic $data"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }

expect_exit() { # expected-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, expected $want"; cat "$err"; fi
}

expect_exit 0 "optic cost --help" "$optic" cost --help
grep -q "usage: optic cost FILE.hlo \[--json\]" "$out" || fail "--help prints the usage on stdout"
expect_exit 2 "optic cost (no file)" "$optic" cost
grep -q "no HLO file given" "$err" && grep -q "usage: optic cost" "$err" || fail "no file: message and usage on stderr"
expect_exit 2 "optic cost --bogus" "$optic" cost "$data/add_f32_2x2.hlo" --bogus
grep -q "unknown option '--bogus'" "$err" || fail "--bogus: message on stderr"
expect_exit 2 "optic cost with two files" "$optic" cost "$data/add_f32_2x2.hlo" "$data/add_f32_2x2.hlo"
expect_exit 1 "optic cost on a missing file" "$optic" cost "$data/no_such_file.hlo"
grep -q "no_such_file.hlo: cannot open" "$err" || fail "missing file: message names the path"
[ -s "$out" ] && fail "missing file: nothing on stdout"

printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] foo(p)\n}\n' >"$bad"
expect_exit 1 "optic cost on an unknown opcode" "$optic" cost "$bad" --json
grep -q "line 4:19: unknown opcode 'foo'" "$err" || fail "unknown opcode: line:col message on stderr: $(cat "$err")"
[ -s "$out" ] && fail "parse error: nothing on stdout"
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] rng(p, p), distribution=rng_uniform\n}\n' >"$bad"
expect_exit 1 "optic cost on an unsupported opcode" "$optic" cost "$bad"
grep -q "opcode 'rng' (instruction 'r') is not supported" "$err" || fail "rng: message on stderr: $(cat "$err")"
head -c 100 "$data/softmax_f32.hlo" >"$bad"
expect_exit 1 "optic cost on a truncated file" "$optic" cost "$bad"

expect_exit 0 "optic cost - (stdin)" sh -c "\"$optic\" cost - --json <\"$data/add_f32_2x2.hlo\""
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["flops"]==4 and d["bytes_accessed"]==48, d' "$out" \
  && pass "stdin: add f32[2,2] costs 4 flops, 48 bytes" || fail "stdin figures"

for f in "$data"/*.hlo; do
  name=$(basename "$f")
  expect_exit 0 "optic cost $name" "$optic" cost "$f"
  cp "$out" "$bad.txt"
  expect_exit 0 "optic cost $name --json" "$optic" cost "$f" --json
  python3 - "$out" "$bad.txt" "$name" <<'PY' && pass "$name: JSON shape and sums" || fail "$name: JSON shape and sums"
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)
assert text.endswith("}\n") and text.count("\n") == 1, "one line of JSON"
assert list(d) == ["flops", "transcendentals", "bytes_accessed", "instructions"], list(d)
keys = ["name", "opcode", "flops", "transcendentals", "bytes_accessed"]
assert d["instructions"], "no instructions"
for i in d["instructions"]:
    assert list(i) == keys, list(i)
    assert isinstance(i["name"], str) and isinstance(i["opcode"], str)
    assert all(isinstance(i[k], int) and i[k] >= 0 for k in keys[2:]), i
for k in keys[2:]:
    assert d[k] == sum(i[k] for i in d["instructions"]), (k, d[k])
plain = dict(l.split(None, 1) for l in open(sys.argv[2]).read().splitlines())
for k in keys[2:]:
    assert int(plain[k]) == d[k], (k, plain[k], d[k])
want = {  # worked out by hand with COST_ANALYSIS.md's rules
    "one_matmul_train_step.hlo": (75775, 0, 177188),
    "conv0d_as_matmul.hlo": (700, 0, 620),
    "softmax_f32.hlo": (63246, 15875, 764040),
    "add_f32_2x2.hlo": (4, 0, 48),
    "conv_isolated_layout_3021.hlo": (3525312512, 0, 13434880),
}.get(sys.argv[3])
if want:
    assert (d["flops"], d["transcendentals"], d["bytes_accessed"]) == want, (d["flops"], d["transcendentals"], d["bytes_accessed"])
if sys.argv[3] == "one_matmul_train_step.hlo":
    dots = {i["name"]: i["flops"] for i in d["instructions"] if i["opcode"] == "dot"}
    assert dots == {"dot.0": 32768, "dot.2": 32768}, dots
PY
done
rm -f "$bad.txt"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
