#!/usr/bin/env python3
"""Smoke test of optic_bench: every entry of every kernel list
(kernels/list/*.inc) whose ISA this CPU supports is registered as a
benchmark, every benchmark bench/ratios.json names is registered (unless the
ratio is marked pending), and a quick run of the small cases (in-cache
sizes, small GEMM, the convolution and its GEMM at 1 thread, the 4 MiB
write, oneDNN at 1 thread) completes without errors, with each suite's rate
counter and the machine context in the JSON. Never checks a speed.

Usage: check_suites.py OPTIC_BENCH SOURCE_DIR OUT_DIR"""
import glob
import json
import os
import re
import subprocess
import sys

failures = []

QUICK_FILTER = ("kernel/.*/n:8192/|peer/(stream_|rmw_).*/n:8192/|peer/fma_peak/|peer/sgemm/m:256/n:256/"
                "|kernel/conv/.*/threads:1/|peer/sgemm_slices/.*/threads:1/"
                "|peer/sha256/|peer/write_fsync/bytes:4194304/|peer/onednn_conv/.*/threads:1/"
                "|ckpt/.*/bytes:16777216/")
GFLOP_SUITES = r"(peer/(fma_peak|sgemm|sgemm_slices|onednn_conv)|kernel/conv)/"
CONTEXT_KEYS = ["optic_version", "optic_cpu_model", "optic_isa", "optic_isa_best", "optic_openblas_core",
                "optic_openblas_config", "optic_openssl", "optic_onednn", "optic_google_benchmark"]
ISA_ORDER = {"scalar": 0, "avx2": 1, "avx512": 2}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def supported(isa, best):
    isa = isa.lower()
    if isa == "scalar":
        return True
    if isa == "neon":
        return best == "neon"
    return best in ISA_ORDER and isa in ISA_ORDER and ISA_ORDER[isa] <= ISA_ORDER[best]


def list_entries(source_dir):
    """(family, isa, function) for every X-macro line of every kernel list."""
    entries = []
    for path in sorted(glob.glob(os.path.join(source_dir, "kernels", "list", "*.inc"))):
        family = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            for m in re.finditer(r"^\s*X\w*\(\s*\w+\s*,\s*(\w+)\s*,\s*(\w+)", f.read(), re.M):
                entries.append((family, m.group(1), m.group(2)))
    return entries


# A machine file with round figures (written into the test's own directory and
# passed to optic_bench through OPTIC_MACHINE) so each estimate can be
# recomputed here from the documented formulas (docs/cost-model.md).
# Adam's per-element figure (format 9) is large enough that the step's
# arithmetic, not its bytes, bounds the optim/step/adam estimate.
MACHINE = {"format": 10, "name": "check", "peak_flops": 2e11, "peak_transcendentals": 4e9,
           "dram_bandwidth": 2e10, "core_dram_bandwidth": 1.25e10, "cache_bandwidth": 1e11,
           "cache_bytes": 4194304, "op_overhead_ns": 50, "cores": 2, "gemm_efficiency": 0.5,
           "hash_bandwidth": 1e9, "disk_write_bandwidth": 5e8, "sync_ns": 300, "cpu_clock_ns": 40,
           "optim_adam_element_ns": 0.75}
EST_FILTER = ("kernel/(binary/optic_f32_vadd__scalar|unary/optic_f32_vexp__scalar)/n:8192/"
              "|kernel/dot/m:256/n:1024/k:1024/threads:1/|optim/step/adam/n:8192/|pod/barrier/"
              "|pod/all_reduce/bytes:4096/|ckpt/save/tensors:64/bytes:16777216/")


def machine_for(threads):
    """optic_machine_for_threads of MACHINE (include/optic/compile.h)."""
    m = dict(MACHINE)
    t = min(max(threads, 1), m["cores"])
    f = t / m["cores"]
    for k in ("peak_flops", "peak_transcendentals", "cache_bandwidth", "cache_bytes"):
        m[k] *= f
    m["dram_bandwidth"] = min(m["dram_bandwidth"], t * m["core_dram_bandwidth"])
    m["sync_ns"] *= (t - 1) / (m["cores"] - 1)
    m["cores"] = t
    return m


def roofline_ns(m, flops, transc, nbytes, peak_fraction=1.0):
    bw = m["cache_bandwidth"] if nbytes <= m["cache_bytes"] else m["dram_bandwidth"]
    return max(flops / (m["peak_flops"] * peak_fraction), transc / m["peak_transcendentals"], nbytes / bw) * 1e9


def expected_estimate(b):
    name, t = b["name"], int(b.get("omp_threads", 1) or 1)
    reps = b.get("repeats", 1)
    if "/optic_f32_vadd__" in name:
        return reps * roofline_ns(machine_for(t), 0, 0, 12 * 8192)
    if "/optic_f32_vexp__" in name:
        return reps * roofline_ns(machine_for(t), 20 * 8192, 8192, 8 * 8192)
    if name.startswith("kernel/dot/"):
        m, n, k = 256, 1024, 1024
        return roofline_ns(machine_for(t), 2 * m * n * k, 0, 4 * (m * k + k * n + m * n), MACHINE["gemm_efficiency"])
    if name.startswith("optim/step/adam/"):
        # A step runs on at most one thread per 65536-element block
        # (docs/optim.md): 8192 parameters run on one thread, no barrier;
        # the update takes the larger of its bytes at the roofline and its
        # share of elements x Adam's per-element figure; the profiled step
        # adds its two CPU-clock reads.
        n = 8192
        blocks = -(-n // 65536)
        used = 1 if blocks <= 1 else min(t, MACHINE["cores"], blocks)
        m = machine_for(used)
        sync = m["sync_ns"] if used > 1 else 0
        share = min(n, -(-blocks // used) * 65536)
        update = max(roofline_ns(m, 0, 0, 28 * n), share * MACHINE.get("optim_adam_element_ns", 0))
        return update + MACHINE["op_overhead_ns"] + sync + 2 * MACHINE.get("cpu_clock_ns", 0)
    if name.startswith("pod/barrier/"):
        return 2001 * MACHINE["sync_ns"]
    if name.startswith("pod/all_reduce/"):
        m = machine_for(2)
        ring = 2 * m["sync_ns"] + 5 * 4096 / (m["cache_bandwidth"] if 2 * 4096 <= m["cache_bytes"] else m["dram_bandwidth"]) * 1e9
        return ring * reps + m["sync_ns"]
    if name.startswith("ckpt/save/"):
        nbytes = 16 << 20
        return max(nbytes / MACHINE["disk_write_bandwidth"], nbytes / (MACHINE["hash_bandwidth"] * 2)) * 1e9
    return None


def check_estimates(binary, out_dir):
    """Every case of a small run carries est_time_ns from the machine model,
    equal (1e-6 relative) to the documented formula on a known machine file."""
    path = os.path.join(out_dir, "machine.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(MACHINE, f)
    out = os.path.join(out_dir, "estimates.json")
    env = dict(os.environ, OPTIC_MACHINE=path, OMP_NUM_THREADS="2")
    cmd = [binary, "--benchmark_filter=" + EST_FILTER, "--benchmark_min_time=0.001",
           "--benchmark_out=" + out, "--benchmark_out_format=json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    check(p.returncode == 0, "estimate run exits 0 (OPTIC_MACHINE=%s %s)" % (path, " ".join(cmd)))
    with open(out, encoding="utf-8") as f:
        ran = json.load(f).get("benchmarks", [])
    check(len(ran) >= 8, "the estimate run ran its cases (%d)" % len(ran))
    for b in ran:
        est, want = b.get("est_time_ns"), expected_estimate(b)
        check(est is not None and est > 0, "%s carries est_time_ns" % b["name"])
        if est is not None and want is not None:
            check(abs(est - want) <= 1e-6 * want, "%s: est_time_ns %g, the model gives %g (OPTIC_MACHINE=%s %s)"
                  % (b["name"], est, want, path, " ".join(cmd)))


def main(binary, source_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "suites.json")
    p = subprocess.run([binary, "--benchmark_filter=" + QUICK_FILTER, "--benchmark_min_time=0.001",
                        "--benchmark_out=" + out, "--benchmark_out_format=json"],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "quick run exits 0 (rc %d):\n%s%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    ctx = doc.get("context", {})
    for key in CONTEXT_KEYS:
        check(ctx.get(key, "") != "", "context has %s" % key)
    best = ctx.get("optic_isa_best", "scalar")

    listed = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
    names = set(listed.stdout.split())
    entries = list_entries(source_dir)
    check(len(entries) > 0, "kernel lists found under %s/kernels/list" % source_dir)
    for family, isa, fn in entries:
        name = "kernel/%s/%s/n:8192/threads:1/real_time" % (family, fn)
        if supported(isa, best):
            check(name in names, "list entry %s (%s, %s) is benchmarked as %s" % (fn, family, isa, name))
        else:
            check(name not in names, "%s is not registered: this CPU lacks %s" % (fn, isa))

    # Every benchmark a ratio names exists (a typo would leave the ratio MISSING forever).
    with open(os.path.join(source_dir, "bench", "ratios.json"), encoding="utf-8") as f:
        spec = json.load(f)
    for r in spec["ratios"]:
        for side in ("ours", "peer"):
            name = r[side].format(**ctx)
            if "pending" in r and name not in names:
                continue
            if "/fma_peak/avx512/" in name and not supported("avx512", best):
                continue
            check(name in names, "ratio %s: %s benchmark %s is registered" % (r["name"], side, name))

    ran = doc.get("benchmarks", [])
    check(len(ran) > 0, "the quick run ran benchmarks")
    for b in ran:
        check(not b.get("error_occurred"), "%s ran without error (%s)" % (b["name"], b.get("error_message")))
        counter = "GFLOP/s" if re.match(GFLOP_SUITES, b["name"]) else "GB/s"
        check(b.get(counter, 0) > 0, "%s reports %s" % (b["name"], counter))
        if not re.match(r"(peer/(sgemm|sha256|write_fsync|onednn_conv)|ckpt)/", b["name"]):
            check(b.get("cpu_path_ns", 0) > 0 and b.get("cpu_" + counter, 0) > 0,
                  "%s reports its critical-path CPU time and cpu_%s" % (b["name"], counter))
    prefixes = ["kernel/conv/", "peer/stream_add/", "peer/rmw_axpy/", "peer/fma_peak/", "peer/sgemm/",
                "peer/sgemm_slices/", "peer/sha256/", "peer/write_fsync/", "ckpt/save/", "ckpt/restore_verify/"]
    prefixes += sorted({"kernel/%s/" % family for family, _, _ in entries})
    if not ctx.get("optic_onednn", "").startswith("not built"):
        prefixes.append("peer/onednn_conv/")
    for prefix in prefixes:
        check(any(b["name"].startswith(prefix) for b in ran), "the quick run includes %s" % prefix)

    check_estimates(binary, out_dir)

    print("check_suites: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
