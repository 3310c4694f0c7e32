#!/usr/bin/env python3
"""Checks bench/ratios.py on JSON fixtures: the median aggregate is used when
repetitions ran, bars (min, max) give PASS/FAIL, absent or errored runs are
MISSING (with a pending note), {context} placeholders expand, times in
different units compare in one unit, a bar whose applies_if condition fails is
N/A with its ratio still shown, a ratio without a bar is INFO, peer_metric
reads the peer's figure from another counter, and exit codes follow --check.

Usage: test_ratios.py RATIOS_PY FIXTURE_DIR OUT_DIR"""
import importlib.util
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def main(ratios_py, fixtures, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    run = os.path.join(fixtures, "run_repetitions.json")
    spec_cases = os.path.join(fixtures, "spec_cases.json")

    # The shipped spec: binary add (median 19.0 of 19, 10, 20) / STREAM add 20.0 = 0.95 >= 0.90.
    out = os.path.join(out_dir, "default.json")
    p = subprocess.run([sys.executable, ratios_py, run, "--json", out, "--check"], capture_output=True, text=True)
    check(p.returncode == 0, "default spec passes with --check (rc %d): %s%s" % (p.returncode, p.stdout, p.stderr))
    check("binary_add_dram_2t_vs_stream_add" in p.stdout and "PASS" in p.stdout, "table names the ratio and PASS")
    with open(out, encoding="utf-8") as f:
        res = {r["name"]: r for r in json.load(f)["ratios"]}
    r = res.get("binary_add_dram_2t_vs_stream_add", {})
    check(abs((r.get("ratio") or 0) - 0.95) < 1e-9, "ratio uses the median aggregate: %r" % r.get("ratio"))
    check(r.get("taken") == "median", "the figure is marked as the median aggregate")

    # Bars that fail, a max bar on times, a missing benchmark and an errored one.
    out = os.path.join(out_dir, "cases.json")
    p = subprocess.run([sys.executable, ratios_py, run, "--spec", spec_cases, "--json", out, "--check"],
                       capture_output=True, text=True)
    check(p.returncode == 1, "--check exits 1 when a ratio fails (rc %d)" % p.returncode)
    with open(out, encoding="utf-8") as f:
        res = {r["name"]: r for r in json.load(f)["ratios"]}
    check(res["fails_min"]["status"] == "FAIL", "0.95 fails a 0.99 minimum")
    check(res["time_max"]["status"] == "PASS" and abs(res["time_max"]["ratio"] - 1.0) < 1e-9, "max bar on real_time")
    check(res["missing_peer"]["status"] == "MISSING", "absent benchmark is MISSING")
    check(res["errored_run"]["status"] == "MISSING", "errored run gives no figure")
    t = res["time_units"]
    check(t["status"] == "PASS" and abs(t["ratio"] - 12.0 / 13.0) < 1e-9,
          "12 ms / 13000 us compare in one unit: %r %r" % (t["status"], t["ratio"]))
    na = res["bar_not_applicable"]
    check(na["status"] == "N/A" and abs(na["ratio"] - 0.6) < 1e-9, "bar on avx512 OpenBLAS is N/A on avx2: %r" % na)
    check("optic_openblas_core_isa" in na["note"] and "avx2" in na["note"] and "Haswell" in na["note"],
          "N/A says why: %r" % na["note"])
    check(res["bar_applies"]["status"] == "PASS", "applies_if holding gives a real PASS")
    check(res["info_only"]["status"] == "INFO" and res["info_only"]["ratio"] is not None, "no bar: INFO with its ratio")
    pair = res["peer_metric_pair"]
    check(pair["status"] == "PASS" and abs((pair["ratio"] or 0) - 19.0 / 1e7) < 1e-15,
          "peer_metric reads the peer's figure from another counter: %r" % pair)
    pm = res["pending_missing"]
    check(pm["status"] == "MISSING" and pm["note"] == "dot lands later", "pending ratio is MISSING with its note")
    check("dot lands later" in p.stdout and "N/A" in p.stdout and "INFO" in p.stdout, "table shows notes and statuses")
    p = subprocess.run([sys.executable, ratios_py, run, "--spec", spec_cases], capture_output=True, text=True)
    check(p.returncode == 0, "without --check a FAIL still exits 0")

    # A placeholder the context lacks, and unreadable input, exit 2.
    bad_spec = os.path.join(out_dir, "bad_spec.json")
    with open(bad_spec, "w", encoding="utf-8") as f:
        json.dump({"ratios": [{"name": "x", "ours": "a/{no_such_key}", "peer": "b", "metric": "GB/s"}]}, f)
    p = subprocess.run([sys.executable, ratios_py, run, "--spec", bad_spec], capture_output=True, text=True)
    check(p.returncode == 2 and "no_such_key" in p.stderr, "missing context key is an error naming it")
    p = subprocess.run([sys.executable, ratios_py, os.path.join(out_dir, "absent.json")], capture_output=True, text=True)
    check(p.returncode == 2, "unreadable run file exits 2")

    # --clock cpu: the critical-path CPU counters; peers without them are MISSING, never mixed.
    out = os.path.join(out_dir, "cpu.json")
    p = subprocess.run([sys.executable, ratios_py, run, "--spec", spec_cases, "--clock", "cpu", "--json", out],
                       capture_output=True, text=True)
    check(p.returncode == 0, "--clock cpu runs (rc %d): %s" % (p.returncode, p.stderr))
    with open(out, encoding="utf-8") as f:
        res = {r["name"]: r for r in json.load(f)["ratios"]}
    t = res["time_units"]
    check(t["metric"] == "cpu_path_ns" and abs((t["ratio"] or 0) - 11.0 / 12.0) < 1e-9,
          "real_time maps to cpu_path_ns: %r" % t)
    check(res["info_only"]["metric"] == "cpu_GFLOP/s" and abs((res["info_only"]["ratio"] or 0) - 160.0 / 147.0) < 1e-9,
          "GFLOP/s maps to cpu_GFLOP/s")
    check(res["bar_not_applicable"]["status"] == "MISSING", "a peer without CPU counters is MISSING under --clock cpu")
    check(res["peer_metric_pair"]["status"] == "MISSING", "a peer_metric counter has no CPU counterpart: MISSING")

    # --filter: one regex naming every benchmark of the spec, {optic_isa} from --isa.
    p = subprocess.run([sys.executable, ratios_py, "--filter", "--isa", "avx2", "--spec", spec_cases],
                       capture_output=True, text=True)
    rx = p.stdout.strip()
    check(p.returncode == 0 and rx.startswith("^(") and "kernel/binary/optic_f32_vadd__avx2/n:16777216" in rx
          and "peer/not_run" in rx and rx.count("peer/stream_add/n:16777216/threads:2/real_time") == 1,
          "--filter lists each named benchmark once: %r" % rx)

    # Imported as a module: without aggregates the median over repetitions is used.
    spec = importlib.util.spec_from_file_location("ratios", ratios_py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    entries = [{"run_type": "iteration", "GB/s": v} for v in (3.0, 1.0, 2.0)]
    value, how = mod.figure(entries, "GB/s")
    check(value == 2.0 and how == "median of 3", "median over iteration entries: %r %r" % (value, how))

    print("test_ratios: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
