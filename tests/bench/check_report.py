#!/usr/bin/env python3
"""`optic report` end to end, checking structure, never speed:
 1. on JSON fixtures (--input): the peer ratios agree with bench/ratios.py's
    (status, ratio, values) for the shipped spec and the test spec; cases with
    est_* counters appear with their estimate, bound and memory; the summary
    (median |ln(measured/estimated)|, share within 2x) is right; the HTML has
    the three plots and every <svg> is well-formed XML;
 2. a real quick run of a few benchmarks (--quick --filter): valid Google
    Benchmark JSON plus context.optic, a row for every ratio of
    bench/ratios.json with its peer, the graph-backed cases (exec/relu_affine,
    exec/mlp, model/mlp_train_step) carry the est_* counters and their table
    rows have estimate and ratio, well-formed SVG;
 3. a report calibrates first when no machine model exists;
 4. compare.py (Debian libbenchmark-tools) reads two report JSONs;
 5. exit codes: usage 2, missing benchmark binary or bad machine file 1.

Usage: check_report.py OPTIC OPTIC_BENCH SOURCE_DIR OUT_DIR"""
import glob
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else "\n     " + detail))
    if not cond:
        failures.append(what)


def run(cmd, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)


def svgs_well_formed(html_path):
    with open(html_path, encoding="utf-8") as f:
        html = f.read()
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    for s in svgs:
        ET.fromstring(s)  # raises on malformed XML
    return len(svgs), html


def load_ratios_module(src):
    spec = importlib.util.spec_from_file_location("ratios", os.path.join(src, "bench", "ratios.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


def compare_with_ratios_py(ratios, spec_path, run_path, report_path, label, clock="wall"):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    context, runs = ratios.load_run(run_path)
    want = {r["name"]: r for r in ratios.compute(spec, context, runs, clock)}
    with open(report_path, encoding="utf-8") as f:
        got = {r["name"]: r for r in json.load(f)["context"]["optic"]["ratios"]}
    check(set(want) == set(got), "%s: every ratio of the spec is a row (%d)" % (label, len(want)))
    for name, w in want.items():
        g = got.get(name, {})
        ok = (g.get("status") == w["status"] and same(g.get("ratio"), w["ratio"])
              and same(g.get("ours_value"), w["ours_value"]) and same(g.get("peer_value"), w["peer_value"])
              and g.get("ours") == w["ours"] and g.get("peer") == w["peer"] and g.get("note") == w["note"]
              and g.get("metric") == w["metric"])
        check(ok, "%s: %s agrees with ratios.py (%s %r vs %s %r)" % (label, name, g.get("status"), g.get("ratio"),
                                                                   w["status"], w["ratio"]))


def check_bound_share(optic, machine, shipped_spec, out):
    entries = []
    for i, (name, ms) in enumerate((("model/hlo/a", 5.0), ("model/hlo/b", 2.5), ("model/hlo/c", 1.25),
                                    ("graph/other", 100.0))):
        entries.append({"name": name, "family_index": i, "per_family_instance_index": 0, "run_name": name,
                        "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
                        "iterations": 10, "real_time": ms, "cpu_time": ms, "time_unit": "ms",
                        "est_flops": 2e8, "est_time_ns": 1e6})
    run_path = os.path.join(out, "run_bound_share.json")
    with open(run_path, "w", encoding="utf-8") as f:
        json.dump({"context": {"date": "2025-01-01T00:00:00+00:00", "num_cpus": 2, "optic_isa": "avx512"},
                   "benchmarks": entries}, f)
    with open(shipped_spec, encoding="utf-8") as f:
        shipped_bar = json.load(f)["summary_bars"]["real_module_bound_share"]["min"]
    for bar, status in ((shipped_bar, "PASS" if shipped_bar <= 0.4 else "FAIL"), (0.5, "FAIL"), (None, "INFO")):
        spec = {"ratios": []}
        if bar is not None:
            spec["summary_bars"] = {"real_module_bound_share": {"min": bar}}
        spec_path = os.path.join(out, "spec_bound_share_%s.json" % bar)
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        j = os.path.join(out, "bound_share_%s.json" % bar)
        p = run([optic, "report", "--input", run_path, "--machine", machine, "--ratios", spec_path, "--json", j,
                 "--html", j + ".html"])
        check(p.returncode == 0, "bound share (bar %s): exit 0" % bar, "exit %d: %s" % (p.returncode, p.stderr[-400:]))
        if p.returncode != 0:
            continue
        b = json.load(open(j, encoding="utf-8"))["context"]["optic"]["summary"].get("real_module_bound_share", {})
        check(b.get("cases") == 3 and same(b.get("median"), 0.4) and same(b.get("min"), 0.2)
              and same(b.get("max"), 0.8) and b.get("status") == status and b.get("bar_min") == bar,
              "bound share in JSON with bar %s: %r" % (bar, b))
        line = "real modules vs their roofline bounds: median 0.400 of the bound over 3 cases (0.200 to 0.800)"
        check(line in p.stdout, "the table has the bound-share line", p.stdout[-600:])
        if bar is not None:
            check("bar median >= %g: %s" % (bar, status) in p.stdout, "the line gives the bar and %s" % status)
        check("Real modules: median 0.400 of their roofline bounds" in open(j + ".html", encoding="utf-8").read(),
              "the HTML summary has the bound share")


def main(optic, bench, src, out):
    os.makedirs(out, exist_ok=True)
    fixtures = os.path.join(src, "tests", "bench", "fixtures")
    shipped_spec = os.path.join(src, "bench", "ratios.json")
    machine = os.path.join(out, "machine.json")
    with open(machine, "w", encoding="utf-8") as f:
        json.dump({"name": "fixture", "peak_flops": 2e11, "peak_transcendentals": 1e10, "dram_bandwidth": 2e10,
                   "cache_bandwidth": 2e11, "cache_bytes": 2097152, "op_overhead_ns": 300, "cores": 2,
                   "source": "check_report.py"}, f)
    ratios = load_ratios_module(src)

    # 1. Fixtures: ratio semantics shared with ratios.py.
    rep_run = os.path.join(fixtures, "run_repetitions.json")
    for spec, label in ((shipped_spec, "shipped spec"), (os.path.join(fixtures, "spec_cases.json"), "test spec")):
        for clock in ("wall", "cpu"):
            what = "%s, %s clock" % (label, clock)
            j = os.path.join(out, "fixture_%s_%s.json" % (label.split()[0], clock))
            p = run([optic, "report", "--input", rep_run, "--machine", machine, "--ratios", spec, "--clock", clock,
                     "--json", j, "--html", j + ".html"])
            check(p.returncode == 0, "%s: report --input exits 0" % what, "exit %d: %s" % (p.returncode, p.stderr[-400:]))
            if p.returncode == 0:
                compare_with_ratios_py(ratios, spec, rep_run, j, what, clock)

    # Estimates fixture: est_* counters are picked up with no configuration.
    est_run = os.path.join(fixtures, "run_estimates.json")
    j = os.path.join(out, "estimates.json")
    p = run([optic, "report", "--input", est_run, "--machine", machine, "--ratios", shipped_spec, "--json", j,
             "--html", j + ".html"])
    check(p.returncode == 0, "estimates fixture: exit 0", "exit %d: %s" % (p.returncode, p.stderr[-400:]))
    if p.returncode == 0:
        check("median |ln(measured/estimated)| 0.223 over 3 cases, 67% within 2x" in p.stdout,
              "summary line: median |ln| 0.223 (ln 1.25) over 3 cases, 67%% within 2x")
        check("peer bars: 0 of 0 met" in p.stdout and "MISSING %d" % len(json.load(open(shipped_spec))["ratios"])
              in p.stdout, "summary counts the shipped bars as MISSING in a run without them")
        with open(j, encoding="utf-8") as f:
            doc = json.load(f)
        cases = {c["name"]: c for c in doc["context"]["optic"]["cases"]}
        mlp = cases.get("graph/mlp_step/batch:256/real_time", {})
        check(same(mlp.get("time_ns"), 1.2e6) and same(mlp.get("ratio"), 1.2), "median aggregate used: 1.2 ms, x1.2")
        check(mlp.get("bound") == "FMA" and abs(mlp.get("bound_percent", 0) - 100 / 1.2) < 1e-6,
              "mlp bound: FMA, 83.3%% (%r %r)" % (mlp.get("bound"), mlp.get("bound_percent")))
        check(same(mlp.get("est_peak_bytes"), 5e6) and same(mlp.get("peak_bytes"), 6e6), "memory estimate and measure")
        check([o["op"] for o in mlp.get("ops", [])] == ["dot", "add"], "per-op times read from op_ns: counters")
        chain = cases.get("graph/fused_chain/n:16777216/real_time", {})
        check(chain.get("bound") == "DRAM" and abs(chain.get("bound_percent", 0) - 80) < 1e-6, "byte-bound case: DRAM 80%")
        check("error" in cases.get("graph/broken/real_time", {}), "an errored case is reported with its error")
        s = doc["context"]["optic"]["summary"]
        check(s["estimated_cases"] == 3 and abs(s["median_abs_log_ratio"] - math.log(1.25)) < 1e-12
              and abs(s["share_within_2x"] - 2 / 3) < 1e-12, "summary in JSON")
        check(s["unestimated_cases"] == 0 and "every non-peer case carries an estimate" in p.stdout,
              "no non-peer case without an estimate (the peer and the errored case do not count)")
    # The same run with one case's estimate taken away: counted and named.
    with open(est_run, encoding="utf-8") as f:
        less = json.load(f)
    for b in less["benchmarks"]:
        if b["name"].startswith("model/resnet_block/"):
            b.pop("est_time_ns", None)
    less_run = os.path.join(out, "run_one_unestimated.json")
    with open(less_run, "w", encoding="utf-8") as f:
        json.dump(less, f)
    j2 = os.path.join(out, "one_unestimated.json")
    p = run([optic, "report", "--input", less_run, "--machine", machine, "--ratios", shipped_spec, "--json", j2])
    check(p.returncode == 0 and "1 non-peer case(s) without an estimate (the first listed: model/resnet_block/real_time)"
          in p.stdout, "a case without an estimate is counted and named", p.stdout[-600:])
    if p.returncode == 0:
        with open(j2, encoding="utf-8") as f:
            check(json.load(f)["context"]["optic"]["summary"]["unestimated_cases"] == 1, "unestimated_cases 1 in JSON")
        def nonfinite_to_none(v):
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: nonfinite_to_none(x) for k, x in v.items()}
            if isinstance(v, list):
                return [nonfinite_to_none(x) for x in v]
            return v
        check(doc["benchmarks"] == nonfinite_to_none(json.load(open(est_run))["benchmarks"]),
              "Google Benchmark entries kept unchanged (NaN and Infinity, which it writes bare, become null)")
        n, html = svgs_well_formed(j + ".html")
        check(n == 3, "estimates fixture: 3 plots (estimate, roofline, per-op), got %d" % n)
        check("y = x" in html and "&#177;25%" in html, "estimate plot explains the y = x line and the 25% band")

    # Real modules against their roofline bounds: shares 0.2, 0.4, 0.8 (bound 1 ms of flops at
    # 2e11 FLOP/s over 5, 2.5, 1.25 ms measured; a non-module case at 0.01 is left out): the
    # median 0.4 passes a 0.3 bar and fails a 0.5 one; without summary_bars it is INFO.
    check_bound_share(optic, machine, shipped_spec, out)

    # 2. A real quick run of a few benchmarks: the exp kernel and its FMA-peak peer at 1 thread, and
    # one small case of each graph-backed suite (exec/, model/, graph/compile), each for 0.01 s.
    isa = ratios.local_isa()
    j = os.path.join(out, "quick.json")
    est_required = ["exec/relu_affine/n:16777216/fusion:1/threads:1/real_time", "exec/mlp/batch:256/threads:1/real_time",
                    "model/mlp_train_step/batch:256/threads:1/real_time"]
    flt = ("^peer/fma_peak/[a-z0-9]+/threads:1/|^kernel/unary/optic_f32_vexp__%s/n:8192/threads:1/"
           "|^exec/relu_affine/n:16777216/fusion:1/threads:1/|^exec/mlp/batch:256/threads:1/"
           "|^model/mlp_train_step/batch:256/threads:1/|^graph/compile_mlp/instructions:1000/" % isa)
    p = run([optic, "report", "--quick", "--filter", flt, "--machine", machine, "--bench", bench, "--min-time", "0.01",
             "--timeout", "50", "--json", j, "--html", os.path.join(out, "quick.html")], timeout=60)
    check(p.returncode == 0, "report --quick --filter exits 0", "exit %d: %s" % (p.returncode, p.stderr[-600:]))
    check(re.search(r"report: case \d+/\d+ ", p.stderr) is not None, "progress lines on stderr")
    if p.returncode == 0:
        with open(j, encoding="utf-8") as f:
            doc = json.load(f)
        check("benchmarks" in doc and "context" in doc and "optic" in doc["context"], "Google Benchmark JSON + context.optic")
        o = doc["context"]["optic"]
        for k in ("machine", "isa", "openblas_core", "version", "google_benchmark", "cases", "ratios", "summary"):
            check(k in o, "context.optic has %s" % k)
        names = {r["name"] for r in o["ratios"]}
        spec_names = [r["name"] for r in json.load(open(shipped_spec))["ratios"]]
        check(all(n in names for n in spec_names) and all(r["peer"] for r in o["ratios"]),
              "every bar of bench/ratios.json is a row with its peer (%d)" % len(spec_names))
        est_keys = ("est_flops", "est_bytes", "est_time_ns", "est_peak_bytes")
        graph_cases = [b for b in doc["benchmarks"] if re.match(r"(exec|model)/", b["name"])]
        missing = sorted({b["name"] for b in graph_cases if not all(k in b for k in est_keys)})
        check(not missing, "graph-backed cases carry all of %s (%d such entries in this run)"
              % (", ".join(est_keys), len(graph_cases)), "incomplete: %s" % missing[:5])
        # every case that is not a peer carries the machine model's time
        unestimated = sorted({b["name"] for b in doc["benchmarks"]
                              if not b["name"].startswith("peer/") and not b["name"].startswith("graph/")
                              and not b.get("est_time_ns", 0) > 0})
        check(not unestimated, "every non-peer case carries est_time_ns", "without: %s" % unestimated[:5])
        # the benchmarks' estimates use the model given with --machine (a
        # format-1 file: plain roofline): vexp in cache on 1 thread is bound by
        # its 8192 transcendentals per call at half the 2-core rate
        vexp = [b for b in doc["benchmarks"] if b["name"].startswith("kernel/unary/optic_f32_vexp__")
                and b.get("run_type") == "iteration"]
        want = [b.get("repeats", 1) * 8192 / (1e10 / 2) * 1e9 for b in vexp]
        check(vexp and all(abs(b.get("est_time_ns", 0) - w) <= 1e-6 * w for b, w in zip(vexp, want)),
              "kernel estimates come from the --machine model",
              "%s vs %s" % ([b.get("est_time_ns") for b in vexp], want))
        # memory measured beside the estimate for the graph-backed cases
        unmeasured = sorted({b["name"] for b in graph_cases if not b.get("peak_bytes", 0) > 0})
        check(not unmeasured, "graph-backed cases report their measured peak_bytes", "without: %s" % unmeasured[:5])
        listed = subprocess.run([bench, "--benchmark_list_tests"], capture_output=True, text=True).stdout.split()
        for name in est_required:
            if name not in listed:
                continue  # the suite is not built in this configuration
            entries = [b for b in doc["benchmarks"] if b.get("run_name", b["name"]) == name]
            check(entries and all(k in b for b in entries for k in est_keys),
                  "%s ran and carries %s" % (name, ", ".join(est_keys)))
            row = [c for c in o["cases"] if c["name"] == name]
            check(row and row[0].get("est_time_ns") is not None and row[0].get("ratio") is not None,
                  "%s: the table row has its estimate and meas/est ratio" % name)
        est_rows = [c for c in o["cases"] if c.get("est_time_ns") is not None]
        check(all(c.get("ratio") is not None for c in est_rows), "every case with an estimate has its ratio")
        mlp_name = "model/mlp_train_step/batch:256/threads:1/real_time"
        if mlp_name in listed:
            mlp_runs = [b for b in doc["benchmarks"] if b.get("run_name", b["name"]) == mlp_name]
            check(mlp_runs and any(k.startswith("op_ns:") for k in mlp_runs[0])
                  and any(k.startswith("op_est_ns:") for k in mlp_runs[0]),
                  "the MLP training step carries per-op op_ns:/op_est_ns: counters (the per-op plot)")
        check(any(c["name"].startswith("kernel/unary/") for c in o["cases"]), "the filtered kernel is a case")
        n, _ = svgs_well_formed(os.path.join(out, "quick.html"))
        check(n >= 1, "quick run HTML: %d well-formed plot(s) (the exp kernels give the roofline)" % n)

        # 4. compare.py reads two report JSONs (the second re-rendered from the first).
        j2 = os.path.join(out, "quick2.json")
        p = run([optic, "report", "--input", j, "--machine", machine, "--ratios", shipped_spec, "--json", j2,
                 "--html", j2 + ".html"])
        check(p.returncode == 0, "a report JSON is itself valid input (--input)")
        compare = [c for c in ["/usr/share/benchmark/compare.py"] + glob.glob("/usr/share/*/benchmark*/compare.py")
                   if os.path.exists(c)]
        if not compare:
            check(False, "compare.py not found (Debian libbenchmark-tools installs /usr/share/benchmark/compare.py)")
        else:
            # Debian's scipy is for the system python.
            py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
            p = run([py, compare[0], "benchmarks", j, j2])
            check(p.returncode == 0 and "optic_f32_vexp" in p.stdout, "compare.py benchmarks report.json report2.json",
                  "exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-400:]))

    # 3. No machine model: the report calibrates first (quick) and saves it.
    xdg = os.path.join(out, "xdg")
    os.makedirs(xdg, exist_ok=True)
    model = os.path.join(xdg, "optic", "machine.json")
    if os.path.exists(model):
        os.remove(model)
    p = run([optic, "report", "--quick", "--input", rep_run, "--ratios", shipped_spec, "--out-dir",
             os.path.join(out, "calib")], env={"XDG_CONFIG_HOME": xdg, "OPTIC_MACHINE": "", "OMP_NUM_THREADS": "1"})
    check(p.returncode == 0 and os.path.exists(model) and "calibrating first" in p.stderr,
          "report without a machine model calibrates and writes xdg/optic/machine.json",
          "exit %d: %s" % (p.returncode, p.stderr[-300:]))
    check(os.path.exists(os.path.join(out, "calib", "report.json")) and os.path.exists(
        os.path.join(out, "calib", "report.html")), "--out-dir gets report.json and report.html")

    # 5. Exit codes.
    check(run([optic, "report", "--bogus"]).returncode == 2, "unknown option: exit 2")
    check(run([optic, "report", "--repetitions", "0"]).returncode == 2, "bad --repetitions: exit 2")
    check(run([optic, "report", "--clock", "gpu"]).returncode == 2, "bad --clock: exit 2")
    check(run([optic, "report", "--machine", machine, "--bench", os.path.join(out, "nope")]).returncode == 1,
          "missing optic_bench: exit 1")
    bad = os.path.join(out, "bad_machine.json")
    with open(bad, "w") as f:
        f.write("{\"name\": \"x\",}")
    p = run([optic, "report", "--machine", bad, "--input", rep_run])
    check(p.returncode == 1 and "bad_machine.json" in p.stderr, "corrupt machine file: exit 1 naming it")
    check(run([optic, "report", "--help"]).returncode == 0, "--help: exit 0")
    p = run([optic, "report", "--quick", "--filter", "^no/such/benchmark$", "--machine", machine, "--bench", bench,
             "--out-dir", os.path.join(out, "nomatch")])
    check(p.returncode == 1 and "selects no benchmark" in p.stderr, "a filter that selects nothing: exit 1",
          "exit %d: %s" % (p.returncode, p.stderr[-300:]))
    p = run([optic, "report", "--quick", "--filter", "^peer/fma_peak/", "--machine", machine, "--bench", bench,
             "--timeout", "0.001", "--out-dir", os.path.join(out, "timeout")])
    check(p.returncode == 1 and "--timeout" in p.stderr, "a run past --timeout is stopped: exit 1",
          "exit %d: %s" % (p.returncode, p.stderr[-300:]))

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
