#!/usr/bin/env python3
"""Every JSON `optic report` writes is Google Benchmark output that Google
Benchmark's compare.py reads, in each report mode:
 (a) the default-mode fixture (fixtures/report_default_mpi.json: a real
     default `optic report` run, 5 repetitions, with the pod MPI rows merged,
     trimmed to 26 of its benchmarks), and its re-rendering by --input;
 (b) a real report whose --filter selects pod MPI benchmarks, 2 repetitions
     (the rows optic_bench_pod_mpi writes, merged by the report; skipped,
     saying so, when MPI is not built);
 (c) two real --quick --filter reports.
For each: every entry has the fields Google Benchmark writes (name, run_name,
run_type, repetitions, iterations, real_time, cpu_time, time_unit;
repetition_index and threads on iterations; aggregate_name and aggregate_unit
on aggregates), every run with repetitions > 1 has its mean, median, stddev
and cv aggregates, and those equal the statistics of its iterations computed
here as Google Benchmark defines them (statistics.cc: mean, median averaging
the middle pair, sample standard deviation, cv = stddev / mean). Then
compare.py (Debian libbenchmark-tools, under /usr/bin/python3 for SciPy)
compares (a) with its re-rendering, (b) with itself and (c) A with B: exit 0
and every benchmark in its JSON dump. Without compare.py the test exits 77
(skipped) after the other checks, naming the package.

Usage: check_report_gbench.py OPTIC OPTIC_BENCH SOURCE_DIR OUT_DIR"""
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

COMPARE = "/usr/share/benchmark/compare.py"
failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else "\n     " + detail))
    if not cond:
        failures.append(what)


def gbench_stats(v):
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    return {"mean": mean, "median": statistics.median(v), "stddev": sd, "cv": sd / mean if mean else 0.0}


def close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def check_structure(path, label):
    """Checks every entry of path; returns the run names."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    entries = doc.get("benchmarks", [])
    check(len(entries) > 0, "%s: has benchmark entries (%d)" % (label, len(entries)))
    common = ("name", "run_name", "run_type", "repetitions", "iterations", "real_time", "cpu_time", "time_unit")
    runs = {}
    bad = []
    for e in entries:
        need = common + (("aggregate_name", "aggregate_unit") if e.get("run_type") == "aggregate"
                         else ("repetition_index", "threads"))
        missing = [k for k in need if k not in e]
        if missing or e.get("run_type") not in ("iteration", "aggregate"):
            bad.append("%s: %s" % (e.get("name"), missing or e.get("run_type")))
        runs.setdefault(e.get("run_name"), []).append(e)
    check(not bad, "%s: every entry has Google Benchmark's fields" % label, "; ".join(bad[:5]))
    wrong, checked = [], 0
    for name, es in runs.items():
        its = [e for e in es if e.get("run_type") == "iteration" and not e.get("error_occurred")]
        aggs = {e.get("aggregate_name"): e for e in es if e.get("run_type") == "aggregate"}
        reps = es[0].get("repetitions", 1)
        if reps <= 1 or len(its) != reps:
            continue  # one repetition: Google Benchmark writes no aggregates; errored runs: none either
        checked += 1
        for field in ("real_time", "cpu_time"):
            values = [e.get(field) for e in its]
            if None in values:
                wrong.append("%s: an iteration has no %s" % (name, field))
                continue
            want = gbench_stats(values)
            for agg, value in want.items():
                got = aggs.get(agg, {}).get(field)
                if not close(got, value):
                    wrong.append("%s_%s %s: %r, want %r" % (name, agg, field, got, value))
    expected = sum(1 for es in runs.values() if es[0].get("repetitions", 1) > 1)
    check(not wrong and checked == expected, "%s: the %d runs with repetitions > 1 have mean/median/stddev/cv "
          "aggregates equal to the statistics of their iterations" % (label, checked),
          "; ".join(wrong[:4]) or "%d of %d runs with repetitions > 1 have all their iterations" % (checked, expected))
    return set(runs), doc


def run(cmd, timeout=300):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def compare(a, b, names, label, out_dir):
    dump = os.path.join(out_dir, label.replace(" ", "_") + ".compare.json")
    p = run(["/usr/bin/python3", COMPARE, "--no-color", "-d", dump, "benchmarks", a, b])
    ok = p.returncode == 0 and os.path.exists(dump)
    check(ok, "compare.py benchmarks on %s: exit 0" % label, "exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-800:]))
    if ok:
        with open(dump, encoding="utf-8") as f:
            compared = {d["name"] for d in json.load(f)}
        missing = sorted(n for n in names if n not in compared)
        check(not missing, "compare.py on %s: every benchmark compared (%d)" % (label, len(names)), str(missing[:5]))


def main(optic, bench, src, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    machine = os.path.join(out, "machine.json")
    with open(machine, "w", encoding="utf-8") as f:
        json.dump({"name": "fixture", "peak_flops": 2e11, "peak_transcendentals": 1e10, "dram_bandwidth": 2e10,
                   "cache_bandwidth": 2e11, "cache_bytes": 2097152, "op_overhead_ns": 300, "cores": 2,
                   "mpi_link_latency_ns": 1000, "mpi_link_bandwidth": 1e9, "source": "check_report_gbench.py"}, f)
    ratios = os.path.join(src, "bench", "ratios.json")
    pairs = []  # (A, B, names, label) for compare.py

    # (a) The default-mode fixture and its re-rendering.
    fixture = os.path.join(src, "tests", "bench", "fixtures", "report_default_mpi.json")
    names, doc = check_structure(fixture, "default-mode fixture")
    check(doc["context"]["optic"]["run"]["mode"] == "default" and
          any(n.startswith("pod_mpi/") for n in names) and any(n.startswith("peer/mpi_allreduce/") for n in names),
          "the fixture is a default-mode report with pod MPI rows")
    rerendered = os.path.join(out, "default_rerendered.json")
    p = run([optic, "report", "--input", fixture, "--machine", machine, "--ratios", ratios, "--json", rerendered,
             "--html", rerendered + ".html"])
    check(p.returncode == 0, "report --input of the fixture: exit 0", p.stderr[-400:])
    if p.returncode == 0:
        check_structure(rerendered, "re-rendered fixture")
        pairs.append((fixture, rerendered, names, "default fixture vs re-rendered"))

    # (b) A real report with pod MPI rows, 2 repetitions.
    common = ["--machine", machine, "--bench", bench, "--ratios", ratios, "--min-time", "0.01", "--timeout", "200"]
    if not os.path.exists(os.path.join(os.path.dirname(bench), "optic_bench_pod_mpi")):
        print("skip the pod MPI report: optic_bench_pod_mpi is not built (MPI not found at configure)")
    else:
        j = os.path.join(out, "mpi.json")
        flt = ("^peer/fma_peak/[a-z0-9]+/threads:1/"
               "|^(pod_mpi/all_reduce|pod_mpi/all_reduce_messages|peer/mpi_allreduce)/bytes:4096/")
        p = run([optic, "report", "--filter", flt, "--repetitions", "2", "--json", j, "--html", j + ".html"] + common)
        check(p.returncode == 0 and "pod MPI benchmarks" not in p.stderr,
              "report with the pod MPI run: exit 0, MPI rows merged", "exit %d: %s" % (p.returncode, p.stderr[-600:]))
        if p.returncode == 0:
            names, doc = check_structure(j, "report with pod MPI rows")
            mpi = [b for b in doc["benchmarks"] if b["name"].startswith(("pod_mpi/", "peer/mpi_allreduce/"))]
            check(len(mpi) == 3 * (2 + 4) and all(b["cpu_time"] > 0 for b in mpi),
                  "3 pod MPI benchmarks x (2 iterations + 4 aggregates), cpu_time measured (%d rows)" % len(mpi))
            # over messages, the machine file's link (docs/cost-model.md): 2 exchanges of a
            # 2048-byte segment at 1000 ns + 1 GB/s, and one fold of 3 x 4096 bytes in cache
            want = 2 * (1000 + 2048 / 1e9 * 1e9) + 3 * 4096 / 2e11 * 1e9
            est = [b.get("est_time_ns") for b in mpi
                   if b["name"].startswith("pod_mpi/all_reduce_messages/") and b["run_type"] == "iteration"]
            check(est and all(e is not None and abs(e - want) <= 1e-6 * want for e in est),
                  "all_reduce_messages estimate from the calibrated link: %g ns" % want, str(est[:2]))
            fam = {b["family_index"] for b in doc["benchmarks"] if b["name"].startswith("peer/fma_peak/")}
            check(all(b["family_index"] not in fam for b in mpi), "MPI family_index values follow optic_bench's")
            pairs.append((j, j, names, "report with pod MPI rows"))

    # (c) Two real --quick reports.
    flt = ("^peer/fma_peak/[a-z0-9]+/threads:1/|^kernel/unary/optic_f32_vexp__[a-z0-9]+/n:8192/threads:1/"
           "|^exec/relu_affine/n:16777216/fusion:1/threads:1/")
    quick = []
    for k in ("a", "b"):
        j = os.path.join(out, "quick_%s.json" % k)
        p = run([optic, "report", "--quick", "--filter", flt, "--json", j, "--html", j + ".html"] + common)
        check(p.returncode == 0, "--quick report %s: exit 0" % k, "exit %d: %s" % (p.returncode, p.stderr[-600:]))
        if p.returncode == 0:
            quick.append(check_structure(j, "--quick report %s" % k)[0])
    if len(quick) == 2:
        pairs.append((os.path.join(out, "quick_a.json"), os.path.join(out, "quick_b.json"), quick[0] & quick[1],
                      "two --quick reports"))

    if not os.path.exists(COMPARE):
        print("%d failure(s)" % len(failures))
        print("SKIP compare.py: %s is absent (Debian libbenchmark-tools and python3-scipy; scripts/install-deps "
              "installs them)" % COMPARE)
        return 1 if failures else 77
    for a, b, names, label in pairs:
        compare(a, b, names, label, out)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
