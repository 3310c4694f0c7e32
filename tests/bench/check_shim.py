#!/usr/bin/env python3
"""Runs shim_selftest (C benchmarks on bench/shim/gbench.h) with a tiny min
time and checks its exit codes and the Google Benchmark JSON it writes:
custom counters with their known values, the custom context, argument
names, threads, repetitions and errors, and that Google Benchmark's
compare.py reads it. Never checks a speed.

Usage: check_shim.py SHIM_SELFTEST OUT_DIR"""
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(binary, out, *flags):
    args = [binary, "--benchmark_min_time=0.01", "--benchmark_out=" + out, "--benchmark_out_format=json"] + list(flags)
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def near(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def main(binary, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "shim.json")
    rc, text = run(binary, out, "--benchmark_filter=^shim/(counters|threads|range|dense|manual)")
    check(rc == 0, "run exits 0 (got %d):\n%s" % (rc, text))
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    ctx = doc.get("context", {})
    check(ctx.get("shim_test_key") == "shim test value", "custom context entry in JSON context: %r" % ctx)
    by_name = {}
    for b in doc["benchmarks"]:
        by_name.setdefault(b["name"], []).append(b)

    c = by_name.get("shim/counters/n:64/k:2", [None])[0]
    check(c is not None, "argument names in the benchmark name: %s" % sorted(by_name))
    if c:
        check(c.get("plain") == 42, "plain counter is reported as set")
        check(near(c.get("per_iteration", 0), 3.0), "per-iteration counter divides by iterations")
        check(c.get("rate", 0) > 0 and c.get("rate_per_iteration", 0) > 0, "rate counters present and positive")
        # rate_per_iteration = n * iterations / seconds, rate = 1000 / seconds.
        check(near(c["rate_per_iteration"] / c["rate"], 64 * c["iterations"] / 1000.0, 1e-6),
              "rate-per-iteration counter multiplies by iterations")
        check(c.get("kib") == 2048, "base-1024 counter keeps its value")
        check(c.get("items_per_second", 0) > 0 and c.get("bytes_per_second", 0) > 0, "items and bytes rates")
        check(near(c["bytes_per_second"], 4 * c["items_per_second"], 1e-6), "bytes are 4x items")
        check(c.get("label") == "shim label", "label")

    t = by_name.get("shim/threads/threads:2", [None])[0]
    check(t is not None, "Threads(2) run named shim/threads/threads:2")
    if t:
        check(t.get("threads") == 2, "threads field is 2")
        check(t.get("thread_sum") == 2, "plain counters are summed over threads")
        check(near(t.get("thread_avg", 0), 1.5), "averaged counter is the mean over threads")

    for n in (8, 64):
        r = by_name.get("shim/range/%d/real_time" % n, [None])[0]
        check(r is not None and r.get("n") == n and r.get("time_unit") == "us", "range %d with real time, unit us" % n)

    mt = by_name.get("shim/manual/manual_time", [None])[0]
    check(mt is not None and near(mt.get("real_time", 0), 250.0, 1e-9) and mt.get("time_unit") == "us",
          "manual time: real_time is the time each iteration set (250 us): %r" % (mt and mt.get("real_time")))

    dense = [b for name, bs in by_name.items() if name.startswith("shim/dense/") for b in bs]
    medians = [b for b in dense if b.get("aggregate_name") == "median"]
    check(len(medians) == 3, "dense range 1..3 with 2 repetitions gives 3 median aggregates (got %d)" % len(medians))
    check(all("min_time:0.002" in b["name"] for b in dense), "per-benchmark min time shows in the name")

    # Google Benchmark's compare.py (Debian libbenchmark-tools, with Debian's
    # python3-scipy) reads the JSON the shim writes.
    compare = "/usr/share/benchmark/compare.py"
    check(os.path.exists(compare), "%s exists (apt-get install libbenchmark-tools python3-scipy)" % compare)
    if os.path.exists(compare):
        p = subprocess.run(["/usr/bin/python3", compare, "benchmarks", out, out], capture_output=True, text=True,
                           timeout=120)
        check(p.returncode == 0 and "shim/counters/n:64/k:2" in p.stdout,
              "compare.py reads two shim JSONs (rc %d): %s" % (p.returncode, (p.stdout + p.stderr)[-2000:]))

    rc, text = run(binary, os.path.join(out_dir, "error.json"), "--benchmark_filter=^shim/error$")
    check(rc == 3, "a benchmark that skips with an error makes main return 3 (got %d)" % rc)
    with open(os.path.join(out_dir, "error.json"), encoding="utf-8") as f:
        err = json.load(f)["benchmarks"]
    check(len(err) == 1 and err[0].get("error_occurred") and err[0].get("error_message") == "deliberate failure",
          "error recorded in the JSON: %r" % err)

    rc, _ = run(binary, os.path.join(out_dir, "none.json"), "--benchmark_filter=^no_such_benchmark$")
    check(rc == 2, "a filter matching nothing returns 2 (got %d)" % rc)
    rc, _ = run(binary, os.path.join(out_dir, "bad.json"), "--no_such_flag")
    check(rc == 1, "an unrecognized argument returns 1 (got %d)" % rc)

    print("check_shim: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
