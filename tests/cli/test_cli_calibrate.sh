#!/usr/bin/env bash
# `optic calibrate`: --quick --out writes a machine model (with the 1-thread
# DRAM figure as core_dram_bandwidth and the runtime's per-op overhead) that
# optic_machine_load accepts (through `optic report --machine`) with plausible figures; the default
# path follows $OPTIC_MACHINE, then $XDG_CONFIG_HOME; usage errors exit 2.
# usage: test_cli_calibrate.sh PATH/TO/optic RUN_FIXTURE.json RATIOS.json WORKDIR
set -u
optic=$1 fixture=$2 ratios=$3 work=$4
fails=0
fail() { echo "FAIL $*"; echo "  reproduce: $0 $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }
rm -rf "$work" && mkdir -p "$work"

if "$optic" calibrate --quick --out "$work/m.json" >"$work/out.txt" 2>"$work/err.txt"; then
  pass "calibrate --quick --out exits 0"
else
  fail "calibrate --quick --out: exit $?: $(cat "$work/err.txt")"
fi
for word in "FMA peak" "exp (vexp" "L1 (" "L2 (" "DRAM (" "llc_bandwidth " "per-op overhead" "machine model host -> $work/m.json"; do
  grep -qF "$word" "$work/out.txt" || fail "calibrate output lacks '$word'"
done
# every CPU the process may use is probed; the one-thread figures are
# measured pinned to the fastest when another is clearly slower, else unpinned
allowed=$(python3 -c 'import os; print(" ".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
if [ "$(echo "$allowed" | wc -w)" -ge 2 ]; then
  line=$(grep -E "one-thread figures (on CPU|  *unpinned)" "$work/out.txt")
  ok=1
  for c in $allowed; do echo "$line" | grep -q "CPU $c [0-9.]* ns" || ok=0; done
  # pinned: "one-thread figures on CPU K ..."; the CPU it names is one allowed
  if echo "$line" | grep -q "figures on CPU"; then
    chosen=$(echo "$line" | awk '{print $5}')
    echo " $allowed " | grep -q " $chosen " || ok=0
  fi
  [ -n "$line" ] && [ "$ok" = 1 ] && pass "one-thread figures: $(echo "$line" | sed 's/  */ /g')" ||
    fail "calibrate's probe of the CPUs: '$line' (allowed: $allowed)"
fi

# format 10: with the MPI probe built beside optic and a launcher on PATH the
# link is measured; without either it stays 0 and the output says why.
mpi=0
if [ -x "$(dirname "$optic")/optic_mpi_probe" ] && { command -v mpiexec || command -v mpirun; } >/dev/null; then mpi=1; fi
python3 - "$work/m.json" "$mpi" <<'PY' && pass "machine file figures are plausible" || fail "machine file figures"
import json, os, sys
m = json.load(open(sys.argv[1]))
for k in ("peak_flops", "peak_transcendentals", "dram_bandwidth", "cache_bandwidth", "cache_bytes"):
    assert m[k] > 0, (k, m[k])
assert 1e8 < m["peak_flops"] < 1e15, m["peak_flops"]
assert m["peak_transcendentals"] < m["peak_flops"], "exp rate above the FMA peak"
assert m["dram_bandwidth"] < m["cache_bandwidth"], ("DRAM >= cache bandwidth", m)
assert 1e8 < m["dram_bandwidth"] < 1e13, m["dram_bandwidth"]
assert 0 <= m["op_overhead_ns"] < 1e6, m["op_overhead_ns"]
# the runtime's per-op cost on tiny ops (no barrier: far under 20 us even on a
# loaded machine, the figure being a median) and the 1-thread DRAM figure
assert 0 < m["op_overhead_ns"] < 20000, m["op_overhead_ns"]
assert 0 < m["core_dram_bandwidth"] <= m["dram_bandwidth"], (m["core_dram_bandwidth"], m["dram_bandwidth"])
assert m["cores"] >= 1 and m["name"] == "host" and "optic calibrate" in m["source"]
# format 3: the op classes, each measured (> 0) and within a plausible range
for k in ("scatter_element_ns", "sort_compare_ns", "topk_compare_ns",
          "bf16_element_ns", "f16_element_ns", "reduce_step_ns"):
    assert 0 < m[k] < 1e5, (k, m[k])
assert 1e6 < m["reduce_multi_bandwidth"] < 1e14, m["reduce_multi_bandwidth"]
assert 0 <= m["while_iteration_ns"] < 1e6, m["while_iteration_ns"]
# format 4: every convolution class the planner runs here measured (direct
# needs AVX-512: 0 where the planner never picks it), and the dot figures
# (bf16 needs a bf16 matrix unit; its efficiency is of the f32 peak, up to 64)
for c in ("gemm", "im2col_mk", "im2col_km", "direct", "grouped", "grouped_rows", "bf16"):
    e, ns = m["conv_%s_efficiency" % c], m["conv_%s_element_ns" % c]
    assert (0 < e <= (64 if c == "bf16" else 1) or (c in ("direct", "bf16") and e == 0)) and 0 <= ns < 1e3, (c, e, ns)
assert 0 < m["dot_efficiency"] <= 1, m["dot_efficiency"]
for k in ("dot_element_ns", "dot_call_ns", "dot_pack_element_ns", "loop_leaf_element_ns", "loop_leaf_run_ns"):
    assert 0 <= m[k] < 1e5, (k, m[k])
# format 5: the runtime's own paths (gather per run and per element, topk's
# block selection, 16-bit converts, the direct 16-bit reduce fold)
assert 0 <= m["gather_element_ns"] < 1e5 and 0 < m["gather_run_ns"] < 1e5, (m["gather_element_ns"], m["gather_run_ns"])
for k in ("topk_select_element_ns", "convert_from_bf16_ns", "convert_from_f16_ns", "convert_to_bf16_ns",
          "convert_to_f16_ns", "reduce_fold_bf16_ns", "reduce_fold_f16_ns", "reduce_fold_bf16_minmax_ns",
          "reduce_fold_f16_minmax_ns"):
    assert 0 < m[k] < 1e5, (k, m[k])
# format 6: one read of the thread CPU-time clock (a system call)
assert 0 < m["cpu_clock_ns"] < 1e5, m["cpu_clock_ns"]
# format 7: the dot efficiency grid, every entry a fraction of one core's peak;
# a large sgemm reaches more of it than a 4x4x4 one, whose fixed costs dominate
g = m["dot_grid_efficiency"]
assert m["dot_grid_sizes"] == [4, 16, 64, 256, 1024, 4096] and len(g) == 216, m["dot_grid_sizes"]
assert all(0 < e <= 1 for e in g), g
assert g[(3 * 6 + 3) * 6 + 3] > 2 * g[0], (g[(3 * 6 + 3) * 6 + 3], g[0])
# format 8: the small-op fixed costs (0 only when a pair's difference is not positive)
for k in ("reduce_cols_call_ns", "reduce_gather_output_ns", "reduce_row_ns", "batch_norm_run_ns"):
    assert 0 <= m[k] < 1e5, (k, m[k])
for k in ("batch_norm_training_element_ns", "batch_norm_inference_element_ns", "batch_norm_grad_element_ns"):
    assert 0 < m[k] < 1e3, (k, m[k])
# format 9: each optimizer kind's ns per element of its fused step (one core);
# LAMB's two passes cost more than SGD's one
for k in ("sgd", "adam", "adamw", "rmsprop", "adagrad", "lamb", "lion"):
    assert 0 < m["optim_%s_element_ns" % k] < 1e3, (k, m["optim_%s_element_ns" % k])
assert m["optim_lamb_element_ns"] > m["optim_sgd_element_ns"], (m["optim_lamb_element_ns"], m["optim_sgd_element_ns"])
assert m["format"] >= 14, m["format"]
# format 11: sync_ns is the runtime's barrier after a split op (positive on 2+ threads)
assert m["cores"] == 1 or 0 < m["sync_ns"] < 1e6, (m["cores"], m["sync_ns"])
# format 12: a fused loop's parts, the optimizer step's fixed cost and a
# clock read inside a profiled step. The parts and the fixed cost are
# differences that load on a busy machine can cancel: the loop pair then
# both 0 (loops keep the format-11 rule), the others >= 0.
assert (0 < m["loop_flop_ns"] < 1e2 and 1e8 < m["loop_stream_bandwidth"] < 1e13) or \
    m["loop_flop_ns"] == m["loop_stream_bandwidth"] == 0, (m["loop_flop_ns"], m["loop_stream_bandwidth"])
assert 0 <= m["loop_transcendental_ns"] < 1e3, m["loop_transcendental_ns"]
assert 0 <= m["optim_step_ns"] < 1e6 and 0 < m["cpu_clock_ns"] < 1e6, (m["optim_step_ns"], m["cpu_clock_ns"])
# format 13: the last-level-cache tier, when a shared set from 4 MiB up ran
# faster than DRAM: larger than the L2 tier, between DRAM and L2 speed, one
# core's figure within all cores'; else no tier at all
if m["llc_bytes"] > 0:
    assert m["cache_bytes"] < m["llc_bytes"] <= 256 << 20 and m["llc_bytes"] % (4 << 20) == 0, m["llc_bytes"]
    assert m["dram_bandwidth"] < m["llc_bandwidth"] < 1e13, (m["dram_bandwidth"], m["llc_bandwidth"])
    assert 0 < m["core_llc_bandwidth"] <= m["llc_bandwidth"], (m["core_llc_bandwidth"], m["llc_bandwidth"])
else:
    assert m["llc_bytes"] == m["llc_bandwidth"] == m["core_llc_bandwidth"] == 0, m
assert 1e6 < m["reduce_cols_stream_bandwidth"] < 1e14, m["reduce_cols_stream_bandwidth"]
# format 13: the window ops' figures (each a fit of two shapes: 0 only when
# load made a difference come out not positive)
for k in ("pad_element_ns", "pad_run_ns", "reduce_window_element_ns", "reduce_window_run_ns"):
    assert 0 <= m[k] < 1e4, (k, m[k])
# format 14: costs beyond any op (each a plain timing, positive), the
# compile figures per instruction at 1k/10k/100k
assert 0 < m["clock_read_ns"] < 1e5 and 0 < m["profile_record_ns"] < 1e5, (m["clock_read_ns"], m["profile_record_ns"])
assert 0 < m["page_touch_ns"] < 1e5, m["page_touch_ns"]
for k in ("compile_instruction_ns", "compile_instruction_10k_ns", "compile_instruction_100k_ns"):
    assert 10 < m[k] < 1e6, (k, m[k])
assert 0 <= m["conv_call_ns"] < 1e5, m["conv_call_ns"]  # a difference: 0 when not positive
if sys.argv[2] == "1":
    assert 0 < m["mpi_link_latency_ns"] < 1e7, m["mpi_link_latency_ns"]
    assert 1e7 < m["mpi_link_bandwidth"] < 1e12, m["mpi_link_bandwidth"]
else:
    assert m["mpi_link_latency_ns"] == 0 and m["mpi_link_bandwidth"] == 0, m
PY
if [ "$mpi" = 1 ]; then
  grep -q "MPI link (format 10) .* GB/s each way" "$work/out.txt" || fail "calibrate output lacks the MPI link"
else
  grep -q "MPI link (format 10) *not measured: " "$work/out.txt" || fail "calibrate output lacks why the MPI link is not measured"
fi

# optic_machine_load reads it (report --machine loads with it and prints the model).
if "$optic" report --input "$fixture" --ratios "$ratios" --machine "$work/m.json" --out-dir "$work/r" >"$work/rep.txt" 2>&1 &&
   grep -q "^machine host:" "$work/rep.txt"; then
  pass "optic_machine_load accepts the file"
else
  fail "report --machine on the calibrated file: $(tail -3 "$work/rep.txt")"
fi

# A model of an older format (the format-5 figures dropped, "format": 4) is
# calibrated again by report, which says so and replaces the file.
/usr/bin/python3 - "$work/m.json" "$work/old.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k in ("gather_run_ns", "topk_select_element_ns", "convert_from_bf16_ns", "convert_from_f16_ns",
          "convert_to_bf16_ns", "convert_to_f16_ns", "reduce_fold_bf16_ns", "reduce_fold_f16_ns",
          "reduce_fold_bf16_minmax_ns", "reduce_fold_f16_minmax_ns"):
    del m[k]
m["format"] = 4
json.dump(m, open(sys.argv[2], "w"))
PY
current=$(grep -o '"format": [0-9]*' "$work/m.json" | grep -o '[0-9]*$') # what calibrate writes
if OMP_NUM_THREADS=1 "$optic" report --quick --input "$fixture" --ratios "$ratios" --machine "$work/old.json" \
     --out-dir "$work/r4" >"$work/rep4.txt" 2>&1 &&
   grep -q "is format 4, older than this optic's $current .*: calibrating again" "$work/rep4.txt" &&
   grep -q "\"format\": $current" "$work/old.json" && grep -q '"gather_run_ns"' "$work/old.json"; then
  pass "report recalibrates a format-4 model and replaces it"
else
  fail "report on a format-4 model: $(grep -m3 "report:" "$work/rep4.txt")"
fi
if "$optic" report --input "$fixture" --ratios "$ratios" --machine "$work/old.json" --out-dir "$work/r5" \
     >"$work/rep5.txt" 2>&1 && ! grep -q "calibrating" "$work/rep5.txt"; then
  pass "a current model is used as it is"
else
  fail "report on the current model calibrated again"
fi

# Default destinations: $OPTIC_MACHINE, else $XDG_CONFIG_HOME/optic/machine.json
# (on one thread: quicker, and these check only where the file goes).
OMP_NUM_THREADS=1 OPTIC_MACHINE="$work/env.json" "$optic" calibrate --quick >/dev/null 2>&1 && [ -s "$work/env.json" ] \
  && pass "OPTIC_MACHINE names the output" || fail "calibrate with OPTIC_MACHINE set"
OMP_NUM_THREADS=1 OPTIC_MACHINE= XDG_CONFIG_HOME="$work/xdg" "$optic" calibrate --quick >/dev/null 2>&1 \
  && [ -s "$work/xdg/optic/machine.json" ] && grep -q '"cores": 1' "$work/xdg/optic/machine.json" \
  && pass "XDG_CONFIG_HOME/optic/machine.json by default; cores follow OMP_NUM_THREADS" || fail "calibrate default path"

"$optic" calibrate --bogus >/dev/null 2>&1; [ $? -eq 2 ] && pass "unknown option: exit 2" || fail "calibrate --bogus exit"
"$optic" calibrate --out >/dev/null 2>&1; [ $? -eq 2 ] && pass "--out without FILE: exit 2" || fail "calibrate --out exit"
"$optic" calibrate --help | grep -q "usage: optic calibrate" && pass "--help" || fail "calibrate --help"
"$optic" calibrate --quick --out /proc/nonexistent/m.json >/dev/null 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -q "optic calibrate:" "$work/err.txt" && pass "unwritable path: exit 1 with a message" \
  || fail "unwritable path: exit $rc"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
