#!/usr/bin/env python3
"""What a person reads from `optic report`, checked as text and as a page:
 1. the table fits 100 columns (long names on a line of their own), --wide
    keeps names whole and adds the rate/peer/memory-estimate columns; every
    figure has its unit; the memory column appears only with a measured
    memory counter (and then shows measured and measured/estimated), never the
    old "X/-";
 2. ratios are oriented so that above 1 is better for optic, in the console,
    the JSON (oriented, higher_is_better) and the HTML, whose plot marks
    ratios beyond its 1/4..4 axis "off scale";
 3. --filter lists only the bars whose two benchmarks it selected (the rest
    are "not decided", not MISSING);
 4. progress: without a terminal one line per finished case, i/N counting
    cases (not repetitions); on a terminal (script(1), when present) one line
    rewritten in place, within the terminal width, naming the running case,
    with elapsed time and an ETA;
 5. the HTML: no internal issue references, no bare exponent axis labels
    ("1e3"), the filter folded away, well-formed SVG; with Chromium installed,
    scripts/screenshot-report finds no sideways scrolling and no cut-off
    label on a real report, and does find them on a page built to have them.

Usage: check_report_view.py OPTIC OPTIC_BENCH SOURCE_DIR OUT_DIR"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else "\n     " + str(detail)[:1500]))
    if not cond:
        failures.append(what)


def run(cmd, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)


TIME = r"[0-9.]+ (ns|us|ms|s)"


def bench_entry(name, real_time, family, **counters):
    e = {"name": name, "family_index": family, "per_family_instance_index": 0, "run_name": name,
         "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 10,
         "real_time": real_time, "cpu_time": real_time, "time_unit": "ns"}
    e.update(counters)
    return e


def table_checks(optic, src, out, machine):
    fixtures = os.path.join(src, "tests", "bench", "fixtures")
    spec = os.path.join(src, "bench", "ratios.json")
    est = os.path.join(fixtures, "run_estimates.json")
    # 1a. The estimates fixture (it has measured memory: peak_bytes, maxrss_delta_bytes).
    p = run([optic, "report", "--input", est, "--machine", machine, "--ratios", spec, "--out-dir",
             os.path.join(out, "est")])
    check(p.returncode == 0, "estimates fixture renders", p.stderr[-400:])
    lines = p.stdout.splitlines()
    wide = [l for l in lines if len(l) > 100]
    check(not wide, "every line of the default table fits 100 columns (widest %d)" % max(map(len, lines)), wide[:3])
    row = next((l for l in lines if l.startswith("graph/mlp_step/batch:256 ")), "")
    check(re.search(r"^graph/mlp_step/batch:256 +1\.2 ms +1 ms +1\.20x +\d+% FMA", row) is not None,
          "mlp row: measured 1.2 ms, estimated 1 ms, 1.20x, % of the FMA bound (units on every figure)", row)
    check("mem (meas/est)" in p.stdout and re.search(r"5\.72 MiB 1\.20x", row) is not None,
          "measured memory shown with its ratio to the estimate (6e6 B = 5.72 MiB, 6/5 = 1.20x)", row)
    check(not re.search(r"\S+/-(\s|$)", p.stdout), "no 'X/-' memory figures")

    # 1b. The same run without measured memory counters: no memory column at all.
    with open(est, encoding="utf-8") as f:
        doc = json.load(f)
    for b in doc["benchmarks"]:
        for k in ("peak_bytes", "maxrss_delta_bytes", "mem_peak_bytes"):
            b.pop(k, None)
    nomem = os.path.join(out, "nomem.json")
    with open(nomem, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    p = run([optic, "report", "--input", nomem, "--machine", machine, "--ratios", spec, "--out-dir",
             os.path.join(out, "nomem")])
    check(p.returncode == 0 and "mem" not in p.stdout.split("\n\n")[1].splitlines()[0],
          "without a measured memory counter the table has no memory column", p.stdout[:600])
    html = open(os.path.join(out, "nomem", "report.html"), encoding="utf-8").read()
    check("measured peak memory" not in html and "No case in this run measures its memory" in html,
          "nor the HTML (it says why)")

    # 1c. A long name, a mem_peak_bytes counter, and ratios to check the orientation:
    # a rate 10x the peer's (min bar), a time half the peer's (max bar), a time twice the
    # peer's with no bar (INFO).
    long_name = "suite/" + "very_long_component_" * 4 + "/n:1048576/threads:2/real_time"
    synth = {"context": copy.deepcopy(doc["context"]), "benchmarks": [
        bench_entry(long_name, 2.5e6, 0, est_time_ns=2e6, est_peak_bytes=1 << 20, mem_peak_bytes=3 << 19),
        bench_entry("fast/rate", 1e6, 1, **{"GB/s": 100.0}),
        bench_entry("peer/rate", 1e6, 2, **{"GB/s": 10.0}),
        bench_entry("fast/time", 1e6, 3),
        bench_entry("peer/time", 2e6, 4),
        bench_entry("slow/time", 4e6, 5)]}
    synth_spec = {"ratios": [
        {"name": "rate_10x", "ours": "fast/rate", "peer": "peer/rate", "metric": "GB/s", "bar": {"min": 0.9}},
        {"name": "time_half", "ours": "fast/time", "peer": "peer/time", "metric": "real_time", "bar": {"max": 1.1}},
        {"name": "time_twice_info", "ours": "slow/time", "peer": "peer/time", "metric": "real_time"}]}
    sj, ss = os.path.join(out, "synth.json"), os.path.join(out, "synth_spec.json")
    json.dump(synth, open(sj, "w"))
    json.dump(synth_spec, open(ss, "w"))
    sdir = os.path.join(out, "synth")
    p = run([optic, "report", "--input", sj, "--machine", machine, "--ratios", ss, "--out-dir", sdir])
    check(p.returncode == 0, "synthetic run renders", p.stderr[-400:])
    lines = p.stdout.splitlines()
    check(all(len(l) <= 100 for l in lines), "default table within 100 columns with a %d-character name"
          % len(long_name))
    shown = long_name[:-len("/real_time")]
    i = next((k for k in range(len(lines) - 1) if lines[k] + lines[k + 1] == shown), -1) + 1
    i = i if i > 0 else -1
    check(i >= 0 and re.search(r"^ +2\.5 ms +2 ms +1\.25x .* 1\.5 MiB 1\.50x$", lines[i + 1]) is not None,
          "the long name has its own line, its figures the next (mem_peak_bytes: 1.5 MiB, 1.50x the estimate)",
          lines[i:i + 2] if i >= 0 else p.stdout[:800])
    ratio_lines = {}
    for m in re.finditer(r"^  (PASS|FAIL|INFO|N/A|MISSING) +(\S+)  (.{13})  (\S+)$", p.stdout, re.M):
        ratio_lines[m.group(4)] = (m.group(1), m.group(2), m.group(3).strip())
    check(ratio_lines.get("rate_10x") == ("PASS", "10x", ">= 0.9"), "rate ratio 10x stays 10 (higher is better)",
          ratio_lines.get("rate_10x"))
    check(ratio_lines.get("time_half") == ("PASS", "2x", ">= 0.909"),
          "time ratio 0.5 with a max bar 1.1 shows 2 (peer/ours) against >= 0.909 (1/1.1)", ratio_lines.get("time_half"))
    check(ratio_lines.get("time_twice_info") == ("INFO", "0.5x", "-"), "a time twice the peer's shows 0.5 (worse)",
          ratio_lines.get("time_twice_info"))
    rep = json.load(open(os.path.join(sdir, "report.json")))["context"]["optic"]
    js = {r["name"]: r for r in rep["ratios"]}
    th, rt = js.get("time_half", {}), js.get("rate_10x", {})
    check(th.get("higher_is_better") is False and abs(th.get("oriented", 0) - 2) < 1e-12
          and abs(th.get("ratio", 0) - 0.5) < 1e-12 and rt.get("higher_is_better") is True,
          "report.json keeps ours/peer (ratio) and adds oriented, higher_is_better")
    html = open(os.path.join(sdir, "report.html"), encoding="utf-8").read()
    check("10x off scale" in html, "the HTML plot marks the 10x ratio off scale (axis 1/4..4)")
    check("above 1 is better for optic" in html and "right of 1 is better for optic" in html,
          "the HTML states the one direction of better")

    p = run([optic, "report", "--input", sj, "--machine", machine, "--ratios", ss, "--out-dir", sdir, "--wide"])
    header = next((l for l in p.stdout.splitlines() if l.startswith("case ")), "")
    check(p.returncode == 0 and all(k in header for k in ("rate", "peer", "est mem")),
          "--wide adds the rate, peer and memory-estimate columns", header)
    row = next((l for l in p.stdout.splitlines() if l.startswith(long_name)), "")
    check(len(row) > 100 and re.search(r"2\.5 ms +2 ms", row) is not None,
          "--wide keeps the long name (with /real_time) on the row with its figures", row)
    check(re.search(r"ours 100 GB/s \(fast/rate\), peer 10 GB/s \(peer/rate\); ours/peer 10", p.stdout) is not None,
          "--wide gives each ratio's figures with units and the spec's own terms")


def html_checks(html_path, label):
    html = open(html_path, encoding="utf-8").read()
    text = re.sub(r"<[^>]+>", " ", html)
    check(re.search(r"(?i)\bissues? \d", text) is None, "%s: no internal issue references in the text" % label,
          re.findall(r"(?i).{40}\bissues? \d.{20}", text)[:3])
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    ticks = []
    for s in svgs:
        ET.fromstring(s)
        ticks += re.findall(r">(1e-?\d+)</text>", s)
    check(not ticks, "%s: no bare exponent tick labels (%d plots)" % (label, len(svgs)), ticks[:5])
    check(re.search(r"<details><summary>Benchmark filter", html) is not None, "%s: the filter is folded away" % label)
    return html


def quick_run(optic, bench, src, out, machine, ratios):
    isa = ratios_local_isa(src)
    # exp's bar has an AVX-512 peer; the MLP's cblas peer makes a bar decidable on every host
    flt = ("^kernel/unary/optic_f32_vexp__%s/n:8192/threads:1/|^peer/fma_peak/%s/threads:1/|^exec/mlp/batch:256/"
           "|^peer/mlp_cblas/batch:256/threads:1/" % (isa, isa))
    d = os.path.join(out, "quick")
    p = run([optic, "report", "--quick", "--filter", flt, "--repetitions", "2", "--machine", machine, "--bench", bench,
             "--min-time", "0.01", "--timeout", "60", "--out-dir", d], timeout=90)
    check(p.returncode == 0, "report --filter --repetitions 2 exits 0", p.stderr[-600:])
    if p.returncode != 0:
        return None
    listed = run([bench, "--benchmark_list_tests", "--benchmark_filter=" + flt]).stdout.split()
    done = re.findall(r"^report: case (\d+)/(\d+) (\S+) done \(\d+:\d\d elapsed, ETA [0-9:?]+\)$", p.stderr, re.M)
    check(len(done) == len(listed) and all(int(n) == len(listed) for _, n, _ in done)
          and [int(i) for i, _, _ in done] == list(range(1, len(listed) + 1))
          and sorted(name for _, _, name in done) == sorted(listed),
          "not a terminal: one line per finished case, i/N over the %d cases, not the %d repetitions"
          % (len(listed), 2 * len(listed)), p.stderr[-800:])
    doc = json.load(open(os.path.join(d, "report.json")))
    o = doc["context"]["optic"]
    ran = {b.get("run_name", b["name"]) for b in doc["benchmarks"]}
    decidable = [r["name"] for r in o["ratios"] if r["ours"] in ran and r["peer"] in ran]
    listed_bars = re.findall(r"^  (?:PASS|FAIL|INFO|N/A|MISSING) +\S+  .{13}  (\S+)$", p.stdout, re.M)
    check(decidable and sorted(listed_bars) == sorted(decidable),
          "--filter lists exactly the bars it selected both sides of (%s)" % ", ".join(decidable), listed_bars)
    s = o["summary"]
    check(s.get("not_run") == len(o["ratios"]) - len(decidable) and s["missing"] == 0
          and ("%d bars not decided" % s.get("not_run", -1)) in p.stdout,
          "the others are counted as not decided (%s), not MISSING" % s.get("not_run"), p.stdout[-400:])
    check(all(r.get("listed") == (r["name"] in decidable) for r in o["ratios"]), "report.json marks the listed bars")
    p2 = run([optic, "report", "--input", os.path.join(d, "report.json"), "--machine", machine, "--out-dir",
              os.path.join(out, "rerender")])
    again = re.findall(r"^  (?:PASS|FAIL|INFO|N/A|MISSING) +\S+  .{13}  (\S+)$", p2.stdout, re.M)
    check(p2.returncode == 0 and sorted(again) == sorted(decidable) and "mode quick, 2 repetition(s)" in
          open(os.path.join(out, "rerender", "report.html"), encoding="utf-8").read(),
          "re-rendering the report (--input) keeps its run's mode, repetitions and filtered listing", again)
    html = html_checks(os.path.join(d, "report.html"), "quick run HTML")
    rows = re.findall(r"<tr class=\"(?:fail)?\"><td class=\"n\">", html)
    check(len(rows) == len(decidable), "the HTML ratio table lists the same bars (%d)" % len(rows))
    return flt, listed, os.path.join(d, "report.html")


def ratios_local_isa(src):
    sys.path.insert(0, os.path.join(src, "bench"))
    import ratios  # noqa: E402
    return ratios.local_isa()


def tty_progress(optic, bench, out, machine, flt, listed):
    script = shutil.which("script")
    if not script:
        print("skip terminal progress: no script(1) (util-linux)")
        return
    log = os.path.join(out, "tty.log")
    cmd = ("stty cols 80; '%s' report --quick --filter '%s' --repetitions 2 --machine '%s' --bench '%s' "
           "--min-time 0.02 --out-dir '%s' >/dev/null" % (optic, flt, machine, bench, os.path.join(out, "tty")))
    p = run([script, "-qec", cmd, log], timeout=90)
    raw = open(log, encoding="utf-8", errors="replace", newline="").read() if os.path.exists(log) else ""
    segs = [s.replace("\x1b[K", "").strip("\n") for s in raw.split("\r")]
    prog = [s for s in segs if s.startswith("report: ") and "cases done" in s]
    check(p.returncode == 0 and len(prog) >= 3, "on a terminal the progress line is rewritten in place (%d times)"
          % len(prog), raw[-600:])
    check(all(len(s) <= 79 for s in prog), "each rewrite fits the 80-column terminal",
          [s for s in prog if len(s) > 79][:3])
    n = len(listed)
    pat = re.compile(r"^report: (\d+)/%d cases done, \d+:\d\d elapsed, ETA [0-9:?]+, now (\S+)( \(rep [12]/2\))?$" % n)
    parsed = [pat.match(s) for s in prog]
    check(all(parsed), "each names i/%d cases, elapsed, ETA and the case now running" % n,
          [s for s, m in zip(prog, parsed) if not m][:3])
    shown = {m.group(2) for m in parsed if m and m.group(2) != "-"}
    stems = {x[:-len("/real_time")] if x.endswith("/real_time") else x for x in listed}
    check(shown and all(s in stems or "..." in s for s in shown) and any(m and m.group(3) for m in parsed),
          "the running case is a listed one, with its repetition (%d names seen)" % len(shown), sorted(shown)[:5])
    check(bool(parsed) and parsed[-1] is not None and parsed[-1].group(1) == str(n), "the last line says %d/%d" % (n, n),
          prog[-1:] if prog else raw[-300:])


def screenshot_checks(src, out, html_path):
    tool = os.path.join(src, "scripts", "screenshot-report")
    p = run([tool, html_path, os.path.join(out, "shots")], timeout=120)
    if p.returncode == 77:
        print("skip screenshot checks: " + p.stderr.strip())
        return
    check(p.returncode == 0 and "ok   no sideways scrolling" in p.stdout
          and "ok   every plot label inside its plot" in p.stdout,
          "Chromium: the report has no sideways scrolling and no cut-off label", p.stdout + p.stderr)
    bad = os.path.join(out, "bad.html")
    with open(bad, "w") as f:
        f.write('<!DOCTYPE html><html><body><p style="white-space:nowrap">%s</p><svg xmlns="http://www.w3.org/2000/svg"'
                ' width="200" height="60"><text x="10" y="30" text-anchor="end">a_label_cut_off</text></svg>'
                '</body></html>' % ("x" * 400))
    p = run([tool, bad, os.path.join(out, "shots_bad"), "--pages", "1"], timeout=120)
    check(p.returncode == 1 and "FAIL sideways scrolling" in p.stdout and "a_label_cut_off" in p.stdout,
          "Chromium: a page that scrolls sideways with a cut-off label is caught", p.stdout + p.stderr)


def main(optic, bench, src, out):
    os.makedirs(out, exist_ok=True)
    machine = os.path.join(out, "machine.json")
    with open(machine, "w", encoding="utf-8") as f:
        json.dump({"name": "fixture", "peak_flops": 2e11, "peak_transcendentals": 1e10, "dram_bandwidth": 2e10,
                   "cache_bandwidth": 2e11, "cache_bytes": 2097152, "op_overhead_ns": 300, "cores": 2,
                   "source": "check_report_view.py"}, f)
    table_checks(optic, src, out, machine)
    q = quick_run(optic, bench, src, out, machine, None)
    if q:
        flt, listed, html_path = q
        tty_progress(optic, bench, out, machine, flt, listed)
        screenshot_checks(src, out, html_path)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
