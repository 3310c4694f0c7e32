#!/usr/bin/env bash
# `optic run`: exit codes (0 ok, 1 parse/runtime error with the message on
# stderr, 2 usage), every reference module (except the parse-only one) run
# with --random-inputs and --json and compared with an independent NumPy
# evaluation (tests/cli/run_reference.py) that reproduces the documented input
# generator, .npy in/out round trips, --output-dir for tuples, JSON for
# nan/inf, pred, s32 and u8, layouts at the boundary, --repeat (the cold run
# apart; repeated runs give the one-run output), --threads and the estimate
# beside the measurement, --engine, stdin.
# usage: test_cli_run.sh PATH/TO/optic PATH/TO/tests/data/hlo [all|small|large]
# The 3.5-GFLOP conv_isolated_layout_3021.hlo takes ~40 s in the reference
# evaluator (release build): "small" (ctest cli_run) runs everything else,
# "large" (ctest cli_run_large, not in sanitized builds) only that module.
set -u
optic=$1
data=$2
mode=${3:-all}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err
fails=0; passes=0; skips=0
fail() { echo "FAIL $*"; echo "  reproduce: $0 $optic $data $mode"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }
skip() { echo "skip $*"; skips=$((skips + 1)); }

expect_exit() { # expected-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, expected $want"; cat "$err"; fi
}
expect_err() { # grep pattern in stderr
  grep -q -- "$1" "$err" && pass "  stderr has '$1'" || fail "stderr lacks '$1': $(head -c 600 "$err")"
}

# NumPy for the independent evaluation: Debian's python3 has python3-numpy;
# a python3 earlier on PATH (pyenv) may not.
np=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then np=$p; break; fi
done
py=${np:-python3}

# ------------------------------------------------ every reference module
# Engines (tools/run_engine.c): the reference evaluator always; the runtime
# when this build has it. Each module runs on every engine, except that the
# 3.5-GFLOP convolution runs on the evaluator only in "large" mode and on the
# runtime only in "small" mode.
engines=evaluate
OPTIC_RUN_ENGINE=runtime "$optic" run "$data/add_f32_2x2.hlo" --random-inputs 1 >/dev/null 2>&1 && engines="evaluate runtime"
echo "engines: $engines"
run_modules() {
  for f in "$data"/*.hlo; do
    name=$(basename "$f")
    case $name in *parse_only*) continue ;; esac
    large=no; [ "$name" = conv_isolated_layout_3021.hlo ] && large=yes
    for engine in $engines; do
    if [ $large = yes ]; then
      { [ "$mode" = small ] && [ $engine = evaluate ]; } && continue
      { [ "$mode" = large ] && [ $engine != evaluate ]; } && continue
    else
      [ "$mode" = large ] && continue
    fi
    expect_exit 0 "[$engine] run $name --random-inputs 7 --json" env OPTIC_RUN_ENGINE=$engine "$optic" run "$f" --random-inputs 7 --json
    "$py" - "$out" "$name" <<'PY' && pass "$name: JSON shape" || fail "$name: JSON shape"
import json, sys, math
text = open(sys.argv[1]).read()
assert text.endswith("}\n") and text.count("\n") == 1, "one line of JSON"
d = json.loads(text)
assert list(d) == ["outputs"] and d["outputs"], d.keys()
for o in d["outputs"]:
    assert list(o) == ["shape", "dtype", "data"], list(o)
    assert o["dtype"] == "f32" and all(isinstance(x, int) and x >= 0 for x in o["shape"])
    assert len(o["data"]) == math.prod(o["shape"]), (len(o["data"]), o["shape"])
    assert all(isinstance(x, (int, float)) for x in o["data"])
PY
    if [ -n "$np" ]; then
      "$np" "$here/run_reference.py" check "$f" "$out" 7 && pass "$name: agrees with NumPy" || fail "$name: NumPy comparison"
    else
      skip "$name: NumPy comparison (no python3 with numpy)"
    fi
    done
  done
}

if [ "$mode" = large ]; then
  run_modules
  echo "$passes passed, $fails failed, $skips skipped"
  [ "$fails" -eq 0 ]
  exit
fi

add=$data/add_f32_2x2.hlo
train=$data/one_matmul_train_step.hlo

# ---------------------------------------------------------------- usage: 2
expect_exit 0 "--help" "$optic" run --help
grep -q "usage: optic run FILE.hlo \[--input NAME_OR_INDEX=FILE.npy\]" "$out" || fail "--help prints the usage on stdout"
expect_exit 2 "no file" "$optic" run
expect_err "no HLO file given"
expect_exit 2 "unknown option" "$optic" run "$add" --bogus
expect_err "unknown option '--bogus'"
expect_exit 2 "two files" "$optic" run "$add" "$add" --random-inputs 1
expect_exit 2 "--input without '='" "$optic" run "$add" --input arg
expect_err "expected NAME_OR_INDEX=FILE.npy"
expect_exit 2 "--input with no value" "$optic" run "$add" --input
expect_exit 2 "--random-inputs not a number" "$optic" run "$add" --random-inputs x1
expect_exit 2 "--random-inputs negative" "$optic" run "$add" --random-inputs -1
expect_exit 2 "--repeat 0" "$optic" run "$add" --random-inputs 1 --repeat 0
expect_exit 2 "--output and --output-dir" "$optic" run "$add" --random-inputs 1 --output "$tmp/a.npy" --output-dir "$tmp/d"
expect_exit 2 "no inputs and no --random-inputs" "$optic" run "$add"
expect_err "parameter 0 'arg' has no value: give --input arg=FILE.npy or --random-inputs SEED"
expect_err "0  arg  f32\[2,2\]"
expect_exit 2 "--input naming no parameter" "$optic" run "$add" --input nope="$tmp/x.npy"
expect_err "--input nope: no such parameter"
expect_exit 2 "--input index out of range" "$optic" run "$add" --input 1="$tmp/x.npy"
expect_exit 2 "--output for a tuple result" "$optic" run "$train" --random-inputs 1 --output "$tmp/t.npy"
expect_err "the result has 2 outputs; --output writes one array, use --output-dir DIR"

# ---------------------------------------------------------- errors: 1
expect_exit 1 "missing file" "$optic" run "$data/no_such.hlo" --random-inputs 1
expect_err "no_such.hlo: cannot open"
[ -s "$out" ] && fail "missing file: nothing on stdout"
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] foo(p)\n}\n' >"$tmp/bad.hlo"
expect_exit 1 "unknown opcode" "$optic" run "$tmp/bad.hlo" --random-inputs 1
expect_err "line 4:19: unknown opcode 'foo'"
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] rng(p, p), distribution=rng_uniform\n}\n' >"$tmp/rng.hlo"
expect_exit 1 "unsupported op" "$optic" run "$tmp/rng.hlo" --random-inputs 1
expect_err "opcode 'rng' (instruction 'r') is not supported.*(OPTIC_ERR_UNSUPPORTED)"
printf 'HloModule m\nENTRY e {\n  a = pred[2,2] parameter(0)\n  ROOT d = pred[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n' >"$tmp/pdot.hlo"
expect_exit 1 "valid HLO optic cannot run (pred dot)" "$optic" run "$tmp/pdot.hlo" --random-inputs 1
expect_err "dot: operands are pred and pred; only f32, f16 and bf16 are supported (OPTIC_ERR_UNSUPPORTED)"
printf 'HloModule m\nENTRY e {\n  t = (f32[2], s32[]) parameter(0)\n  ROOT g = f32[2] get-tuple-element(t), index=0\n}\n' >"$tmp/tup.hlo"
expect_exit 1 "a tuple parameter from a .npy file" "$optic" run "$tmp/tup.hlo" --input t="$data/../npy/f32_2x3.npy"
expect_err "parameter 't' is a tuple (f32\[2\], s32\[\]); a .npy file holds one array"
expect_exit 0 "a tuple parameter from --random-inputs" "$optic" run "$tmp/tup.hlo" --random-inputs 1 --json
grep -q '^{"outputs":\[{"shape":\[2\],"dtype":"f32","data":\[' "$out" && pass "  tuple parameter filled" || fail "tuple parameter: $(cat "$out")"
head -c 150 "$data/softmax_f32.hlo" >"$tmp/trunc.hlo"
expect_exit 1 "truncated file" "$optic" run "$tmp/trunc.hlo" --random-inputs 1
expect_exit 1 "--profile on the evaluator" env OPTIC_RUN_ENGINE=evaluate "$optic" run "$add" --random-inputs 1 --profile "$tmp/trace.json"
expect_err "--profile needs the runtime"
[ -e "$tmp/trace.json" ] && fail "--profile: no trace file written"
case $engines in
  *runtime*)
    expect_exit 0 "--profile on the runtime" "$optic" run "$train" --random-inputs 1 --repeat 2 --profile "$tmp/trace.json"
    "$py" - "$tmp/trace.json" <<'PY' && pass "--profile writes a Chrome trace with op events" || fail "--profile trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
assert all(e.get("ph") in ("X", "M") for e in ev), "complete events and metadata only"
ev = [e for e in ev if e["ph"] == "X"]
cats = {e.get("cat") for e in ev}
assert all(e["dur"] >= 0 for e in ev), "negative durations"
assert {"compile", "run"} <= cats and cats & {"op", "fusion"}, cats
assert sum(e.get("cat") == "run" for e in ev) == 2, "one run event per --repeat"
PY
    ;;
esac
expect_exit 1 "--input file missing" "$optic" run "$add" --input arg="$tmp/none.npy"
expect_err "none.npy: cannot open"
expect_exit 1 "--input not a .npy" "$optic" run "$add" --input 0="$add"
expect_err "not a .npy file"
npydata=$data/../npy
expect_exit 1 "--input of the wrong shape" "$optic" run "$add" --input arg="$npydata/f32_2x3.npy"
expect_err "parameter 'arg' is f32\[2,2\] but .*f32_2x3.npy holds f32\[2,3\] (OPTIC_ERR_SHAPE_MISMATCH)"
expect_exit 1 "--input big-endian" "$optic" run "$add" --input arg="$npydata/bad_big_endian_f32.npy"
expect_err "big-endian"
expect_exit 1 "--output-dir under a file" "$optic" run "$add" --random-inputs 1 --output-dir "$add/sub"
expect_exit 1 "--output to a missing directory" "$optic" run "$add" --random-inputs 1 --output "$tmp/no/dir/x.npy"
expect_err "cannot create"
# a while loop whose condition is always true: the evaluator's iteration bound
# stops it (a runtime error naming the loop, not a hang)
cat >"$tmp/forever.hlo" <<'HLO'
HloModule forever
cond {
  c = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(b, one)
}
ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}
HLO
expect_exit 1 "while that never ends" timeout 120 "$optic" run "$tmp/forever.hlo" --random-inputs 1
expect_err "max_while_iterations.*(OPTIC_ERR_TIMEOUT)"

run_modules

# --------------------------------------------------------- determinism, summary
"$optic" run "$add" --random-inputs 7 --json >"$tmp/a7" 2>"$err"
"$optic" run "$add" --random-inputs 7 --json >"$tmp/b7" 2>"$err"
"$optic" run "$add" --random-inputs 8 --json >"$tmp/a8" 2>"$err"
cmp -s "$tmp/a7" "$tmp/b7" && pass "same seed, same output" || fail "same seed differs"
cmp -s "$tmp/a7" "$tmp/a8" && fail "seeds 7 and 8 give the same output" || pass "another seed, other output"
expect_exit 0 "summary with --repeat 3" "$optic" run "$train" --random-inputs 1 --repeat 3
grep -q "^engine  \(evaluate\|runtime\): " "$out" && grep -q "^output 0  f32\[32,128\]  min" "$out" && grep -q "^output 1  f32\[\]" "$out" \
  && grep -q "^first   [0-9.]* [mun]*s (cold: the first run after prepare)$" "$out" \
  && grep -q "^time    [0-9.]* [mun]*s median of 2 runs after the first (min .*, max .*)" "$out" \
  && pass "summary lines: the cold run apart from the median of the other 2" || { fail "summary"; cat "$out"; }
# --repeat 2: the steady figure is the second run alone, so min = max = median;
# --repeat 1 claims no steady state.
expect_exit 0 "--repeat 2" "$optic" run "$add" --random-inputs 1 --repeat 2
sed -n 's/^time    \(.*\) median of 1 run after the first (min \(.*\), max \(.*\))$/\1|\2|\3/p' "$out" \
  | awk -F'|' '$1 == $2 && $2 == $3 && $1 != "" {ok = 1} END {exit !ok}' \
  && pass "  --repeat 2: the median of the one steady run is that run" || { fail "--repeat 2 timing"; cat "$out"; }
expect_exit 0 "--repeat 1" "$optic" run "$add" --random-inputs 1
grep -q "^time    one run only" "$out" && ! grep -q "median of [0-9]" "$out" && pass "  --repeat 1: no median claimed" \
  || { fail "--repeat 1 timing"; cat "$out"; }
# Repeated runs write into the first run's result (the runtime reuses its
# storage): the last of 3 runs must equal a single run, byte for byte, for
# reduces, row groups, dots, tuples and the 1- and 2-thread splits.
for mod in softmax_f32 layernorm_f32 one_matmul_train_step dot_transpose_output conv2d_nhwc_bias_relu; do
  for t in 1 2; do
    "$optic" run "$data/$mod.hlo" --random-inputs 3 --threads $t --json >"$tmp/r1" 2>"$err"
    "$optic" run "$data/$mod.hlo" --random-inputs 3 --threads $t --repeat 3 --json >"$tmp/r3" 2>"$err"
    [ -s "$tmp/r1" ] && cmp -s "$tmp/r1" "$tmp/r3" && pass "  $mod, $t thread(s): --repeat 3 gives the one-run output" \
      || fail "$mod --threads $t: --repeat 3 output differs from one run's"
  done
done

# ------------------------------------------------ --engine, --threads, the estimate
expect_exit 0 "--engine evaluate" "$optic" run "$add" --random-inputs 1 --engine evaluate
grep -q "^engine  evaluate: " "$out" && grep -q "^est     none (the evaluate engine" "$out" \
  && pass "  the evaluator runs and prints no estimate" || { fail "--engine evaluate"; cat "$out"; }
expect_exit 0 "--engine=evaluate beats OPTIC_RUN_ENGINE=runtime" env OPTIC_RUN_ENGINE=runtime "$optic" run "$add" --random-inputs 1 --engine=evaluate
grep -q "^engine  evaluate: " "$out" && pass "  the flag wins over the variable" || fail "--engine vs OPTIC_RUN_ENGINE: $(grep engine "$out")"
expect_exit 0 "OPTIC_RUN_ENGINE=evaluate alone" env OPTIC_RUN_ENGINE=evaluate "$optic" run "$add" --random-inputs 1
grep -q "^engine  evaluate: " "$out" && pass "  the variable still picks the engine" || fail "OPTIC_RUN_ENGINE ignored"
expect_exit 2 "--engine bogus" "$optic" run "$add" --random-inputs 1 --engine bogus
expect_err "--engine 'bogus' names no engine (known: runtime, evaluate)"
expect_exit 2 "OPTIC_RUN_ENGINE=bogus" env OPTIC_RUN_ENGINE=bogus "$optic" run "$add" --random-inputs 1
expect_err "OPTIC_RUN_ENGINE 'bogus' names no engine"
expect_exit 2 "--engine with no name" "$optic" run "$add" --random-inputs 1 --engine=
expect_exit 2 "--threads 0" "$optic" run "$add" --random-inputs 1 --threads 0
expect_exit 2 "--threads x" "$optic" run "$add" --random-inputs 1 --threads x
expect_exit 2 "--threads on the evaluator" "$optic" run "$add" --random-inputs 1 --engine evaluate --threads 2
expect_err "--threads applies to the runtime engine"
expect_exit 1 "--profile with --engine evaluate" "$optic" run "$add" --random-inputs 1 --engine evaluate --profile "$tmp/t2.json"
case $engines in
  *runtime*)
    # The estimate beside the measurement is the compiled program's for the
    # run's threads: it equals `optic compile --threads N`'s est_ns (same
    # machine model; 3 significant digits printed).
    for t in 1 3; do
      expect_exit 0 "--threads $t" "$optic" run "$train" --random-inputs 1 --repeat 3 --engine runtime --threads $t
      grep -q "^threads $t$" "$out" && pass "  runs on $t thread(s)" || fail "--threads $t: $(grep threads "$out")"
      grep -q "^est     [0-9.]* [mun]*s, measured [0-9.]* [mun]*s (steady median), [0-9.]*x the estimate$" "$out" \
        && pass "  est, measured and their ratio on one line" || { fail "--threads $t: est line"; cat "$out"; }
      "$optic" compile "$train" --threads $t --json >"$tmp/c.json" 2>"$err"
      "$py" - "$out" "$tmp/c.json" <<'PY' && pass "  the estimate is optic compile --threads $t's" || fail "--threads $t: estimate differs from optic compile's"
import json, re, sys
scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
text = open(sys.argv[1]).read()
m = re.search(r"^est     ([0-9.]+) (ns|us|ms|s), measured ([0-9.]+) (ns|us|ms|s) \(steady median\), ([0-9.]+)x", text, re.M)
t = re.search(r"^time    ([0-9.]+) (ns|us|ms|s) median", text, re.M)
est, meas, x = float(m[1]) * scale[m[2]], float(m[3]) * scale[m[4]], float(m[5])
want = json.load(open(sys.argv[2]))["est_ns"]
assert abs(est - want) <= 0.02 * want + 0.5, (est, want)
assert abs(meas - float(t[1]) * scale[t[2]]) <= 1e-9 * meas, "measured is the steady median"
assert abs(x - meas / est) <= 0.06 * meas / est + 0.5, (x, meas / est)
PY
    done
    t1=$(sed -n 's/^est     \(.*\), measured.*/\1/p' "$out")
    "$optic" run "$train" --random-inputs 1 --engine runtime --threads 1 >"$tmp/t1" 2>"$err"
    [ "$(sed -n 's/^est     \(.*\), measured.*/\1/p' "$tmp/t1")" != "$t1" ] && pass "  1 and 3 threads give different estimates" \
      || fail "--threads does not reach the estimate ($t1 both)"
    ;;
esac
expect_exit 0 "stdin" sh -c "\"$optic\" run - --random-inputs 7 --json <\"$add\""
cmp -s "$out" "$tmp/a7" && pass "stdin gives the same output" || fail "stdin output differs"

# ------------------------------------------------------------- .npy round trips
# add(x, x) on its own output: exact doubling, through .npy files only.
expect_exit 0 "--output" "$optic" run "$add" --random-inputs 7 --output "$tmp/y.npy"
expect_exit 0 "--input from a previous --output" "$optic" run "$add" --input arg="$tmp/y.npy" --json
"$py" - "$tmp/a7" "$out" <<'PY' && pass "npy round trip doubles exactly" || fail "npy round trip"
import json, struct, sys
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
a = [f32(x) for x in json.load(open(sys.argv[1]))["outputs"][0]["data"]]
b = [f32(x) for x in json.load(open(sys.argv[2]))["outputs"][0]["data"]]
assert b == [f32(2 * x) for x in a], (a, b)
PY
expect_exit 0 "--input=INDEX=FILE form" "$optic" run "$add" --input=0="$tmp/y.npy" --json
"$optic" run "$add" --input %arg="$tmp/y.npy" --json >"$tmp/y2" 2>"$err"
cmp -s "$out" "$tmp/y2" && pass "--input by index and by %name agree" || fail "--input forms differ"
expect_exit 0 "--output-dir for a tuple" "$optic" run "$train" --random-inputs 3 --output-dir "$tmp/od"
[ -f "$tmp/od/output_0.npy" ] && [ -f "$tmp/od/output_1.npy" ] && [ ! -e "$tmp/od/output_2.npy" ] \
  && pass "output_0.npy and output_1.npy" || fail "--output-dir files: $(ls "$tmp/od")"
expect_exit 0 "--json for the same run" "$optic" run "$train" --random-inputs 3 --json
if [ -n "$np" ]; then
  "$np" - "$tmp/od" "$out" <<'PY' && pass "npy outputs equal the JSON bit for bit" || fail "npy vs JSON"
import json, sys
import numpy as np
outs = json.load(open(sys.argv[2]))["outputs"]
for k, o in enumerate(outs):
    a = np.load(f"{sys.argv[1]}/output_{k}.npy")
    assert a.dtype == np.float32 and list(a.shape) == o["shape"], (a.dtype, a.shape)
    assert np.array_equal(a.ravel(), np.array(o["data"], dtype=np.float32)), k  # %.9g round-trips f32
PY
  # NumPy-written inputs by name and index, NumPy reads our output
  mkdir -p "$tmp/in"
  "$np" "$here/run_reference.py" inputs "$data/dot_reshape_divide.hlo" 11 "$tmp/in"
  expect_exit 0 "NumPy .npy inputs (names and indices)" "$optic" run "$data/dot_reshape_divide.hlo" \
    --input lhs_0="$tmp/in/0.npy" --input %rhs_0="$tmp/in/1.npy" --input 2="$tmp/in/2.npy" --input 3="$tmp/in/3.npy" \
    --output "$tmp/r.npy"
  "$optic" run "$data/dot_reshape_divide.hlo" --random-inputs 11 --output "$tmp/r11.npy" >/dev/null 2>"$err"
  cmp -s "$tmp/r.npy" "$tmp/r11.npy" && pass "NumPy's inputs = the generator's: same output bytes" || fail "generator vs NumPy inputs"
  "$np" -c "import numpy as np, sys; a = np.load(sys.argv[1]); assert a.shape == (20,) and a.dtype == np.float32" "$tmp/r.npy" \
    && pass "NumPy reads the --output file" || fail "NumPy cannot read --output"
  # the source's own input for reduce_dim1_with_copy (XLA's reduce_hlo_test.cc), hand-summed over dim 1
  "$np" - "$data/reduce_dim1_with_copy.input.txt" "$tmp/rin.npy" <<'PY'
import re, sys
import numpy as np
text = open(sys.argv[1]).read()
body = text[text.index("{"):text.rindex("}") + 1]
vals = [float(v) for v in re.findall(r"-?\d+\.\d+", body)]
np.save(sys.argv[2], np.array(vals, dtype=np.float32).reshape(2, 2, 2, 3))
PY
  expect_exit 0 "reduce_dim1_with_copy on the source's input" "$optic" run "$data/reduce_dim1_with_copy.hlo" \
    --input parameter="$tmp/rin.npy" --json
  "$np" - "$out" <<'PY' && pass "reduce over dim 1 = hand sums" || fail "reduce on the source's input"
import json, sys
d = json.load(open(sys.argv[1]))["outputs"][0]
assert d["shape"] == [2, 2, 3]
# [i][k][l] = x[i][0][k][l] + x[i][1][k][l], from the literal's numbers
want = [-0.246092796 + -0.14222312, -0.179497838 + -0.162200093, -0.161181688 + -0.193907976,
        -0.151643038 + -0.239411, -0.240213156 + -0.198166847, -0.198156 + -0.172471642,
        -0.22965157 + -0.241772294, -0.218723893 + -0.245131493, -0.129257083 + -0.160247207,
        -0.188762426 + -0.179881215, -0.16123569 + -0.23383224, -0.181166649 + -0.121976733]
assert all(abs(a - b) < 1e-6 for a, b in zip(d["data"], want)), d["data"]
PY
else
  skip "NumPy .npy checks (no python3 with numpy)"
fi

# ------------------------------------------------- JSON for special values and dtypes
cat >"$tmp/special.hlo" <<'HLO'
HloModule special
ENTRY e {
  x = f32[4] constant({1, -1, 0, 2.5})
  z = f32[4] constant({0, 0, 0, 0})
  q = f32[4] divide(x, z)
  d = f64[2] constant({0.1, -1e300})
  i = s32[3] constant({-2147483648, 0, 2147483647})
  u = u8[2] constant({0, 255})
  b = pred[2] compare(x, z), direction=GT, metadata={op_name="gt"}
  s = f32[] constant(3.40282347e+38)
  ROOT t = (f32[4], f64[2], s32[3], u8[2], pred[4], f32[]) tuple(q, d, i, u, b, s)
}
HLO
sed -i 's/pred\[2\] compare/pred[4] compare/' "$tmp/special.hlo"
expect_exit 0 "special values and dtypes" "$optic" run "$tmp/special.hlo" --json
"$py" - "$out" <<'PY' && pass "JSON: nan/inf strings, f64 17 digits, s32, u8, pred" || { fail "special JSON"; cat "$out"; }
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)["outputs"]
assert [o["dtype"] for o in d] == ["f32", "f64", "s32", "u8", "pred", "f32"], [o["dtype"] for o in d]
assert d[0]["data"] == ["inf", "-inf", "nan", "inf"], d[0]["data"]
assert d[1]["data"] == [0.1, -1e300] and '0.10000000000000001' in text, d[1]
assert d[2]["data"] == [-2147483648, 0, 2147483647]
assert d[3]["data"] == [0, 255]
assert d[4]["data"] == [True, False, False, True]
assert d[5]["shape"] == [] and d[5]["data"] == [3.40282347e+38]
PY
expect_exit 0 "--output-dir for mixed dtypes" "$optic" run "$tmp/special.hlo" --output-dir "$tmp/sd"
if [ -n "$np" ]; then
  "$np" - "$tmp/sd" <<'PY' && pass "NumPy reads f32/f64/s32/u8/bool outputs" || fail "mixed dtypes via NumPy"
import sys
import numpy as np
want = [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.float32]
for k, w in enumerate(want):
    a = np.load(f"{sys.argv[1]}/output_{k}.npy")
    assert a.dtype == w, (k, a.dtype)
assert np.load(f"{sys.argv[1]}/output_4.npy").tolist() == [True, False, False, True]
assert np.isnan(np.load(f"{sys.argv[1]}/output_0.npy")[2])
PY
fi

# ------------------------------------------ the wider integers and the halves
cat >"$tmp/wide.hlo" <<'HLO'
HloModule wide
ENTRY e {
  a = s8[2] constant({-128, 127})
  one = s8[2] constant({1, 1})
  w = s8[2] add(a, one)
  l = s64[2] constant({-9223372036854775808, 9223372036854775807})
  u = u64[1] constant({18446744073709551615})
  h = f16[3] constant({65504, 6e-08, -inf})
  f = f32[2] constant({1.00390625, 3.4e38})
  b = bf16[2] convert(f)
  ROOT t = (s8[2], s64[2], u64[1], f16[3], bf16[2]) tuple(w, l, u, h, b)
}
HLO
expect_exit 0 "s8/s64/u64/f16/bf16 values" "$optic" run "$tmp/wide.hlo" --json
"$py" - "$out" <<'PY' && pass "JSON: s8 wraps, s64/u64 limits exact, f16 limits, bf16 ties to even and overflows to inf" || { fail "wide JSON"; cat "$out"; }
import json, sys
d = json.loads(open(sys.argv[1]).read())["outputs"]
assert [o["dtype"] for o in d] == ["s8", "s64", "u64", "f16", "bf16"], [o["dtype"] for o in d]
assert d[0]["data"] == [-127, -128], d[0]
assert d[1]["data"] == [-9223372036854775808, 9223372036854775807], d[1]
assert d[2]["data"] == [18446744073709551615], d[2]
assert d[3]["data"] == [65504, 5.9605e-08, "-inf"], d[3]
assert d[4]["data"] == [1, "inf"], d[4]
PY
expect_exit 0 "--output-dir for the new dtypes" "$optic" run "$tmp/wide.hlo" --output-dir "$tmp/wd"
if [ -n "$np" ]; then
  "$np" - "$tmp/wd" <<'PY' && pass "NumPy reads s8/s64/u64/f16 outputs; bf16 as its <u2 bit patterns" || fail "new dtypes via NumPy"
import sys
import numpy as np
want = [np.int8, np.int64, np.uint64, np.float16, np.uint16]
a = [np.load(f"{sys.argv[1]}/output_{k}.npy") for k in range(5)]
for k, w in enumerate(want):
    assert a[k].dtype == w, (k, a[k].dtype)
assert a[1].tolist() == [-2**63, 2**63 - 1] and a[2].tolist() == [2**64 - 1]
assert a[3][0] == 65504 and a[3][1] == np.float16(2.0**-24) and np.isneginf(a[3][2])
assert a[4].tolist() == [0x3F80, 0x7F80], [hex(x) for x in a[4]]
PY
  "$np" -c "import numpy as np, sys; np.save(sys.argv[1], np.array([0x3F80, 0xC000], dtype=np.uint16))" "$tmp/bf.npy"
  printf 'HloModule m\nENTRY e {\n  p = bf16[2] parameter(0)\n  ROOT r = f32[2] convert(p)\n}\n' >"$tmp/bf.hlo"
  expect_exit 0 "a bf16 parameter from a <u2 .npy of bit patterns" "$optic" run "$tmp/bf.hlo" --input p="$tmp/bf.npy" --json
  grep -q '"data":\[1,-2\]' "$out" && pass "  bf16 0x3F80, 0xC000 read as 1, -2" || fail "bf16 input: $(cat "$out")"
fi

# ----------------------------------------- layouts at the boundary are physical
cat >"$tmp/layout.hlo" <<'HLO'
HloModule layout
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  n = f32[2,3]{1,0} negate(p)
  ROOT t = f32[3,2]{0,1} transpose(n), dimensions={1,0}
}
HLO
expect_exit 1 "the parameter takes its physical shape" "$optic" run "$tmp/layout.hlo" --input p="$npydata/f32_2x3.npy"
expect_err "parameter 'p' is f32\[3,2\] but .* holds f32\[2,3\]"
expect_exit 0 "column-major parameter and result" "$optic" run "$tmp/layout.hlo" --random-inputs 5 --json
if [ -n "$np" ]; then
  "$np" - "$out" "$here" <<'PY' && pass "layout {0,1}: in and out are physical (column-major) bytes" || { fail "layout run"; cat "$out"; }
import json, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
from run_reference import random_array
o = json.load(open(sys.argv[1]))["outputs"][0]
# p's bytes are P[2,3] column by column (physical [3,2]); t = transpose(-P) is
# logical [3,2] and its layout {0,1} makes the result physical [2,3] = -P.
phys = random_array(5, 0, (3, 2), "f32")
assert o["shape"] == [2, 3], o["shape"]
assert np.array_equal(np.array(o["data"], dtype=np.float32).reshape(2, 3), -phys.T), o["data"]
PY
fi

echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" -eq 0 ]
