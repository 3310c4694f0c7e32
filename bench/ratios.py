#!/usr/bin/env python3
"""Named ratios (our benchmark / its peer) from a Google Benchmark JSON run of
optic_bench, printed with their bars and PASS/FAIL. Importable: the
cli_report test checks `optic report`'s C evaluation of the same rules
against load_run() and compute(). Reads files only; never runs
benchmarks.

Usage: ratios.py RUN.json [--spec bench/ratios.json] [--json OUT] [--check] [--clock wall|cpu]
       ratios.py --filter [--isa ISA] [--spec bench/ratios.json]
  --check   exit 1 if any ratio FAILs (MISSING, N/A and INFO ones do not fail)
  --clock   wall (default): the metrics as the spec names them, wall-clock
            rates and times, which is what the bars are defined on; cpu: the
            critical-path CPU-time counters instead (GB/s -> cpu_GB/s,
            GFLOP/s -> cpu_GFLOP/s, real_time -> cpu_path_ns), which leave out
            the time threads spend descheduled on a loaded machine; peers
            without them (oneDNN, OpenBLAS-threaded sgemm) are then MISSING
  --filter  print a --benchmark_filter regex selecting every benchmark the
            spec names ({optic_isa} = --isa, default: $OPTIC_ISA, else the
            best of avx512/avx2/neon/scalar this CPU has per /proc/cpuinfo)

Statuses: PASS / FAIL (the ratio against its bar), INFO (a ratio reported
without a bar), N/A (the bar's applies_if condition on the run's context does
not hold: the ratio is still computed and printed), MISSING (a benchmark is
not in the run or errored; a ratio's "pending" text says why it may be).
Times (metric real_time or cpu_time) are compared in one unit, whatever
time_unit each benchmark reported in.
"""
import argparse
import json
import os
import statistics
import sys

DEFAULT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ratios.json")


def load_run(path):
    """Returns (context dict, {run_name: [benchmark entries]})."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    runs = {}
    for b in doc.get("benchmarks", []):
        runs.setdefault(b.get("run_name", b["name"]), []).append(b)
    return doc.get("context", {}), runs


TIME_METRICS = ("real_time", "cpu_time")
CPU_CLOCK_METRICS = {"GB/s": "cpu_GB/s", "GFLOP/s": "cpu_GFLOP/s", "real_time": "cpu_path_ns"}
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def value_of(entry, metric):
    """entry[metric] as a float; times in nanoseconds whatever the entry's time_unit."""
    v = float(entry[metric])
    if metric in TIME_METRICS:
        unit = entry.get("time_unit", "ns")
        if unit not in NS_PER_UNIT:
            raise ValueError("benchmark %r has unknown time_unit %r" % (entry.get("name"), unit))
        v *= NS_PER_UNIT[unit]
    return v


def figure(entries, metric):
    """The run's figure for metric and how it was taken: the median aggregate
    when repetitions were run, else the median over the iteration entries.
    None when the metric is absent or every entry errored."""
    for e in entries:
        if e.get("run_type") == "aggregate" and e.get("aggregate_name") == "median" and metric in e:
            return value_of(e, metric), "median"
    values = [value_of(e, metric) for e in entries
              if e.get("run_type", "iteration") == "iteration" and not e.get("error_occurred") and metric in e]
    if not values:
        return None, None
    return statistics.median(values), ("median of %d" % len(values) if len(values) > 1 else "single run")


def expand(name, context):
    try:
        return name.format(**context)
    except KeyError as missing:
        raise ValueError("benchmark name %r needs context key %s, which the run does not have" % (name, missing))


def applies(cond, context):
    """(True, "") when the bar applies to this run, else (False, why not).
    cond: {"context": key, "in": [values]} (None: always applies)."""
    if not cond:
        return True, ""
    key, allowed = cond["context"], cond["in"]
    have = context.get(key, "unknown")
    if have in allowed:
        return True, ""
    why = "bar applies only when %s is %s; this run: %s" % (key, " or ".join(allowed), have)
    if cond.get("show"):
        why += " (%s %s)" % (cond["show"], context.get(cond["show"], "unknown"))
    return False, why


def compute(spec, context, runs, clock="wall"):
    """One result dict per ratio in spec: name, ours, peer, metric, values,
    ratio, bar, status in PASS / FAIL / INFO / N/A / MISSING, note. clock
    "cpu" reads the critical-path CPU-time counters instead (see --clock)."""
    results = []
    for r in spec["ratios"]:
        ours, peer = expand(r["ours"], context), expand(r["peer"], context)
        metric, pending = r["metric"], r.get("pending", "")
        # peer_metric: the peer's figure is another counter (usually of the
        # same benchmark, which measured both sides alternately: a ratio
        # within one run, immune to the machine changing between runs).
        peer_metric = r.get("peer_metric")
        if clock == "cpu" and peer_metric is not None:
            peer_metric = CPU_CLOCK_METRICS.get(peer_metric, "cpu clock: " + peer_metric)
        if clock == "cpu":
            if metric in CPU_CLOCK_METRICS:
                metric = CPU_CLOCK_METRICS[metric]
                pending = pending or ("CPU-time counters come from optic_bench's own harnesses; "
                                      "peers that thread themselves (oneDNN, OpenBLAS) have none")
            else:
                # Never mixed with CPU figures: no counterpart, no figure.
                pending = pending or "no CPU-time counterpart of %s" % metric
                metric = "cpu clock: " + metric
        ours_value, how = figure(runs.get(ours, []), metric)
        peer_value, _ = figure(runs.get(peer, []), peer_metric or metric)
        applicable, why = applies(r.get("applies_if"), context)
        res = {"name": r["name"], "description": r.get("description", ""), "ours": ours, "peer": peer,
               "metric": metric, "clock": clock, "ours_value": ours_value, "peer_value": peer_value,
               "bar": r.get("bar", {}), "taken": how, "ratio": None, "status": "MISSING",
               "note": pending}
        if ours_value is not None and peer_value is not None and peer_value != 0:
            ratio = ours_value / peer_value
            bar = res["bar"]
            ok = ("min" not in bar or ratio >= bar["min"]) and ("max" not in bar or ratio <= bar["max"])
            res["ratio"] = ratio
            res["note"] = ""
            if not bar:
                res["status"] = "INFO"
            elif not applicable:
                res["status"] = "N/A"
                res["note"] = why
            else:
                res["status"] = "PASS" if ok else "FAIL"
        results.append(res)
    return results


def bar_text(bar):
    parts = []
    if "min" in bar:
        parts.append(">= %g" % bar["min"])
    if "max" in bar:
        parts.append("<= %g" % bar["max"])
    return " and ".join(parts) or "-"


def format_table(results):
    lines = []
    for r in results:
        if r["status"] == "MISSING":
            absent = [n for n, v in ((r["ours"], r["ours_value"]), (r["peer"], r["peer_value"])) if v is None]
            lines.append("%-36s %-8s bar %s; no %s figure (absent or errored) from: %s%s" % (
                r["name"], "MISSING", bar_text(r["bar"]), r["metric"], ", ".join(absent),
                "  (%s)" % r["note"] if r["note"] else ""))
            continue
        unit = " ns" if r["metric"] in TIME_METRICS else ""
        lines.append("%-36s %-8s ratio %.3f (bar %s)  %s %s: %.4g%s / %.4g%s  [%s]%s" % (
            r["name"], r["status"], r["ratio"], bar_text(r["bar"]), r["metric"], r["taken"],
            r["ours_value"], unit, r["peer_value"], unit, r["description"],
            "  (%s)" % r["note"] if r["note"] else ""))
    return "\n".join(lines)


def local_isa():
    """The ISA optic would dispatch to here: $OPTIC_ISA, else the best one
    /proc/cpuinfo shows (optic's own selection also needs OS support, which
    Linux gives whenever it lists the flag)."""
    if os.environ.get("OPTIC_ISA"):
        return os.environ["OPTIC_ISA"]
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = set()
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags.update(line.split(":", 1)[1].split())
    except OSError:
        return "scalar"
    if "avx512f" in flags and "avx512bw" in flags and "avx512vl" in flags and "avx512dq" in flags:
        return "avx512"
    if "avx2" in flags and "fma" in flags:
        return "avx2"
    if "asimd" in flags:
        return "neon"
    return "scalar"


def benchmark_filter(spec, context):
    """A --benchmark_filter regex matching every benchmark spec names."""
    names = []
    for r in spec["ratios"]:
        for side in ("ours", "peer"):
            name = expand(r[side], context)
            if name not in names:
                names.append(name)
    return "^(%s)" % "|".join(n.replace(".", "\\.") for n in names)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", help="Google Benchmark JSON (--benchmark_out=FILE --benchmark_out_format=json)")
    ap.add_argument("--spec", default=DEFAULT_SPEC, help="ratio definitions (default: bench/ratios.json)")
    ap.add_argument("--json", help="also write the results to this file as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 if any ratio fails its bar")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall-clock metrics (default, the bars' definition) or critical-path CPU time")
    ap.add_argument("--filter", action="store_true", help="print a --benchmark_filter regex for the spec's benchmarks")
    ap.add_argument("--isa", help="{optic_isa} for --filter (default: this machine's)")
    args = ap.parse_args(argv)
    if args.filter:
        try:
            with open(args.spec, encoding="utf-8") as f:
                spec = json.load(f)
            print(benchmark_filter(spec, {"optic_isa": args.isa or local_isa()}))
        except (OSError, ValueError, KeyError) as e:
            print("ratios: %s" % e, file=sys.stderr)
            return 2
        return 0
    if args.run is None:
        ap.error("RUN.json is required (or --filter)")
    try:
        with open(args.spec, encoding="utf-8") as f:
            spec = json.load(f)
        context, runs = load_run(args.run)
        results = compute(spec, context, runs, args.clock)
    except (OSError, ValueError, KeyError) as e:
        print("ratios: %s" % e, file=sys.stderr)
        return 2
    print(format_table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"ratios": results}, f, indent=2)
    if args.check and any(r["status"] == "FAIL" for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
