#!/usr/bin/env python3
"""The PyTorch peer without PyTorch (never needs torch, never checks a speed):

1. torch_peer.py's request parser: every op with its argument count, bad
   requests (unknown op, wrong count, non-integers, threads < 1) get `error`.
2. The skip path end to end: optic_bench runs peer/torch/* with a `torch`
   package on PYTHONPATH whose import fails, and each benchmark errors with
   the worker's skip message (or, without /usr/bin/python3, the C side's).
3. The protocol end to end with a fake `torch` (pure Python, no tensors):
   peer/torch/chain at 1 and 2 threads answer with per-call counters that
   agree with each other (GB/s x ns_per_call = 16 B x n), the label names the
   version and the wait policy, the worker saw torch.set_num_threads(T) and
   inherited the run's GOMP_SPINCOUNT; peer/torch/mlp_step, which the fake cannot run,
   errors with the worker's `error` line and the worker keeps serving.
4. bench/ratios.json: every peer/torch ratio names registered benchmarks and
   says why it may be MISSING; summary_bars.real_module_bound_share has a
   numeric min in (0, 1].

With --real (test bench_torch_peer_real) it instead runs the real peers once at 1 thread,
briefly, where /usr/bin/python3 has torch, and checks every one answers with consistent
per-call counters; without torch it exits 77 (skipped) saying so.

Usage: check_torch_peer.py OPTIC_BENCH SOURCE_DIR OUT_DIR [--real]"""
import importlib.util
import json
import os
import subprocess
import sys

failures = []

FAKE_TORCH = r'''
import os
__version__ = "0.fake"
_log = os.environ["FAKE_TORCH_LOG"]
with open(_log, "a") as f:
    f.write("spincount %s\n" % os.environ.get("GOMP_SPINCOUNT", "unset"))
def set_num_threads(t):
    with open(_log, "a") as f:
        f.write("threads %d\n" % t)
def set_grad_enabled(on): pass
class Generator:
    def manual_seed(self, s): return self
class T:
    def add_(self, o): return self
    def relu_(self): return self
    def mul_(self, o): return self
    def sub_(self, o): return self
def rand(*shape, generator=None): return T()
def empty(*shape): return T()
def mul(x, a, out=None): return out
'''

BROKEN_TORCH = "raise ImportError('no torch in this test')\n"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def load_worker(source_dir):
    path = os.path.join(source_dir, "bench", "peers", "torch_peer.py")
    spec = importlib.util.spec_from_file_location("torch_peer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_parser(mod):
    good = {"softmax 1 127 125": ("softmax", 1, (127, 125)),
            "mlp_step 2 256 64 256 256 10": ("mlp_step", 2, (256, 64, 256, 256, 10)),
            "conv 1 1 8 64 64 56 56 3 3 1": ("conv", 1, (1, 8, 64, 64, 56, 56, 3, 3, 1)),
            "adam 2 16777216": ("adam", 2, (16777216,)), "chain 1 0": ("chain", 1, (0,))}
    for line, want in good.items():
        check(mod.parse(line) == want, "parse(%r) = %r, want %r" % (line, mod.parse(line), want))
    for line in ["", "bogus 1 2", "chain 1", "chain 1 2 3", "chain x 5", "chain 0 5", "chain 1 -5", "conv 1 1 8"]:
        check(isinstance(mod.parse(line), str), "parse(%r) is an error: %r" % (line, mod.parse(line)))


def run_bench(binary, flt, pythonpath, out_json, extra_env=None):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    env.update(extra_env or {})
    cmd = [binary, "--benchmark_filter=" + flt, "--benchmark_min_time=0.01",
           "--benchmark_out=" + out_json, "--benchmark_out_format=json"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    # 3: some benchmark errored (skipped), as every run here expects
    check(p.returncode == 3, "%s exits 3 (rc %d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    with open(out_json, encoding="utf-8") as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"]}


def check_skip(binary, out_dir):
    fake = os.path.join(out_dir, "broken")
    os.makedirs(os.path.join(fake, "torch"), exist_ok=True)
    with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
        f.write(BROKEN_TORCH)
    runs = run_bench(binary, "^peer/torch/(chain|mlp_step|conv_channels_last)/", fake,
                     os.path.join(out_dir, "skip.json"))
    check(len(runs) == 6, "6 peer/torch benchmarks ran (skipped): %s" % sorted(runs))
    expect = "PyTorch is not importable" if os.access("/usr/bin/python3", os.X_OK) else "PyTorch peer skipped"
    for name, b in runs.items():
        check(b.get("error_occurred") is True and expect in b.get("error_message", ""),
              "%s is skipped with %r: %r" % (name, expect, b.get("error_message")))


def check_protocol(binary, out_dir):
    if not os.access("/usr/bin/python3", os.X_OK):
        print("check_torch_peer: no /usr/bin/python3, protocol run skipped (the skip path was checked)")
        return
    fake = os.path.join(out_dir, "fake")
    os.makedirs(os.path.join(fake, "torch"), exist_ok=True)
    with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
        f.write(FAKE_TORCH)
    log = os.path.join(out_dir, "fake_torch.log")
    if os.path.exists(log):
        os.remove(log)
    runs = run_bench(binary, "^peer/torch/(mlp_step|chain)/", fake, os.path.join(out_dir, "fake.json"),
                     {"FAKE_TORCH_LOG": log, "GOMP_SPINCOUNT": "2000"})
    n = 16777216
    for t in (1, 2):
        b = runs.get("peer/torch/chain/n:%d/threads:%d/manual_time" % (n, t), {})
        check(not b.get("error_occurred") and b.get("ns_per_call", 0) > 0,
              "chain at %d thread(s) answered: %r" % (t, b.get("error_message")))
        if b.get("ns_per_call", 0) > 0:
            bytes_per_call = b.get("GB/s", 0) * 1e9 * b["ns_per_call"] * 1e-9
            check(abs(bytes_per_call - 16.0 * n) < 1e-3 * 16.0 * n,
                  "GB/s x ns_per_call = 16 B x n at %d thread(s): %g" % (t, bytes_per_call))
        check(b.get("omp_threads") == t, "omp_threads %d: %r" % (t, b.get("omp_threads")))
        check(b.get("label") == "torch 0.fake, OpenMP wait GOMP_SPINCOUNT=2000", "label: %r" % b.get("label"))
        m = runs.get("peer/torch/mlp_step/batch:256/threads:%d/manual_time" % t, {})
        check(m.get("error_occurred") is True and "PyTorch peer: error" in m.get("error_message", ""),
              "mlp_step with the fake torch errors with the worker's answer: %r" % m.get("error_message"))
    with open(log, encoding="utf-8") as f:
        lines = f.read().split("\n")
    check("spincount 2000" in lines, "the worker inherited GOMP_SPINCOUNT=2000: %r" % lines[:3])
    check("threads 1" in lines and "threads 2" in lines, "torch.set_num_threads(1) and (2) were called")


def check_spec(binary, source_dir):
    with open(os.path.join(source_dir, "bench", "ratios.json"), encoding="utf-8") as f:
        spec = json.load(f)
    p = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True, timeout=120)
    names = set(p.stdout.split())
    torch_ratios = [r for r in spec["ratios"] if r["peer"].startswith("peer/torch/")]
    check(len(torch_ratios) >= 26, "ratios.json has the torch ratios (%d)" % len(torch_ratios))
    for r in torch_ratios:
        for side in ("ours", "peer"):
            check(r[side] in names, "ratio %s: %s %s is registered" % (r["name"], side, r[side]))
        check("python3-torch" in r.get("pending", ""), "ratio %s says why it may be MISSING" % r["name"])
    bar = spec.get("summary_bars", {}).get("real_module_bound_share", {})
    check(isinstance(bar.get("min"), (int, float)) and 0 < bar["min"] <= 1,
          "summary_bars.real_module_bound_share.min is a share: %r" % bar)


def check_real(binary, out_dir):
    """The real worker at 1 thread: no errors, and counters that agree with the work."""
    flt = ("^peer/torch/((softmax|layer_norm|sum_rows|sum_cols)/m:127/n:125|mlp_step/batch:256|conv_nchw/[^/]*"
           "|conv_channels_last/[^/]*|adam/n:16777216|chain/n:16777216)/threads:1/")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    cmd = [binary, "--benchmark_filter=" + flt, "--benchmark_min_time=0.01",
           "--benchmark_out=" + os.path.join(out_dir, "real.json"), "--benchmark_out_format=json"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    check(p.returncode == 0, "%s exits 0 (rc %d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    with open(os.path.join(out_dir, "real.json"), encoding="utf-8") as f:
        runs = json.load(f)["benchmarks"]
    check(len(runs) == 9, "9 real peers ran: %s" % [b["name"] for b in runs])
    conv_flops = 2.0 * 8 * 56 * 56 * 64 * 64 * 3 * 3
    for b in runs:
        name, ns = b["name"], b.get("ns_per_call", 0)
        check(not b.get("error_occurred") and ns > 0, "%s answered: %r" % (name, b.get("error_message")))
        check(b.get("label", "").startswith("torch "), "%s label names torch: %r" % (name, b.get("label")))
        per_call = {"GFLOP/s": (1e9, conv_flops if "/conv_" in name else None),
                    "samples_per_s": (1.0, 256.0 if "/mlp_step/" in name else None)}
        for counter, (unit, want) in per_call.items():
            if want is not None:
                got = b.get(counter, 0) * unit * ns * 1e-9
                check(abs(got - want) < 1e-6 * want, "%s: %s x ns_per_call = %g, want %g" % (name, counter, got, want))


def main_real(binary, out_dir):
    p = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True, text=True) \
        if os.access("/usr/bin/python3", os.X_OK) else None
    if p is None or p.returncode != 0:
        print("check_torch_peer --real: skipped: /usr/bin/python3 cannot import torch (Debian python3-torch); "
              "make test does not need it")
        return 77
    check_real(binary, out_dir)
    print("check_torch_peer --real: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


def main(binary, source_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    check_parser(load_worker(source_dir))
    check_skip(binary, out_dir)
    check_protocol(binary, out_dir)
    check_spec(binary, source_dir)
    print("check_torch_peer: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    if failures:
        print("reproduce: %s %s %s %s" % (sys.executable, os.path.abspath(__file__), binary, source_dir))
    return 1 if failures else 0


if __name__ == "__main__":
    if "--real" in sys.argv[4:]:
        os.makedirs(sys.argv[3], exist_ok=True)
        sys.exit(main_real(sys.argv[1], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
