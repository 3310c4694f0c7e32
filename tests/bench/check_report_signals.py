#!/usr/bin/env python3
"""`optic report` stopped by a signal leaves no process behind:
 1. SIGTERM while optic_bench runs: exit 143 (128 + 15), "stopped by SIGTERM"
    on stderr, and no optic_bench of that run is left; after SIGKILL of the
    report (which it cannot catch) the run ends by itself (Linux);
 2. SIGINT while the pod MPI run goes on (mpiexec and its 2 ranks seen
    running): exit 130, and no mpiexec or rank of that run is left; a
    --timeout that ends the pod MPI run leaves none either (both skipped,
    saying so, when optic_bench_pod_mpi or mpiexec is not built/found);
 3. usage errors: --quick --full conflict (exit 2, naming both); an invalid
    --filter regex is named as such (exit 2, the regcomp message).
A run's processes are found by its own output directory in their command
lines (/proc/PID/cmdline), so other jobs' benchmarks do not count.

Usage: check_report_signals.py OPTIC OPTIC_BENCH OUT_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else "\n     " + detail))
    if not cond:
        failures.append(what)


def procs_with(marker, exclude=()):
    """(pid, argv) of the live processes with marker in an argument."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in exclude:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if any(marker in a for a in argv):
            found.append((int(d), argv))
    return found


def stop_run(optic, args, out, sig, ready, what):
    """Starts optic report with args writing into out, waits until ready(procs)
    holds for the processes of the run, sends sig, and checks the exit code and
    that nothing of the run is left."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [optic, "report"] + args + ["--out-dir", out]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    deadline = time.time() + 90
    while time.time() < deadline and p.poll() is None:
        seen = procs_with(out, exclude=(p.pid,))
        if ready(seen):
            break
        time.sleep(0.05)
    running = p.poll() is None and ready(seen)
    check(running, "%s: the run's processes started (%s)" % (what, ", ".join(os.path.basename(a[0]) for _, a in seen)),
          "report exit %r; reproduce: %s" % (p.poll(), " ".join(cmd)))
    if not running:
        p.kill()
        p.communicate()
        return
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        check(False, "%s: optic report ended within 60 s of the signal" % what)
    name = signal.Signals(sig).name
    check(p.returncode == 128 + sig and ("stopped by %s" % name) in err,
          "%s: %s gives exit %d and says so" % (what, name, 128 + sig),
          "exit %r: %s" % (p.returncode, err[-600:]))
    left = procs_with(out)
    check(not left, "%s: no process of the run is left after the report exits" % what,
          "left: %s; reproduce: %s, then kill -%s it" % (left, " ".join(cmd), name))
    for pid, _ in left:  # do not leave them to the rest of the suite either
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main(optic, bench, out):
    os.makedirs(out, exist_ok=True)
    machine = os.path.join(out, "machine.json")
    with open(machine, "w", encoding="utf-8") as f:
        json.dump({"name": "fixture", "peak_flops": 2e11, "peak_transcendentals": 1e10, "dram_bandwidth": 2e10,
                   "cache_bandwidth": 2e11, "cache_bytes": 2097152, "op_overhead_ns": 300, "cores": 2,
                   "source": "check_report_signals.py"}, f)
    common = ["--machine", machine, "--bench", bench, "--timeout", "300"]

    # 1. SIGTERM during optic_bench: one FMA-peak case asked to run for 60 s.
    def bench_running(procs):
        return any(os.path.basename(a[0]) == "optic_bench" and any(x.startswith("--benchmark_out=") for x in a)
                   for _, a in procs)
    stop_run(optic, ["--quick", "--filter", "^peer/fma_peak/[a-z0-9]+/threads:1/", "--min-time", "60"] + common,
             os.path.join(out, "term"), signal.SIGTERM, bench_running, "SIGTERM during optic_bench")

    # 1b. SIGKILL (which the report cannot catch) during optic_bench: the run
    # gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and ends by itself.
    d = os.path.join(out, "kill")
    shutil.rmtree(d, ignore_errors=True)
    cmd = [optic, "report", "--quick", "--filter", "^peer/fma_peak/[a-z0-9]+/threads:1/", "--min-time", "60"] + common + [
        "--out-dir", d]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 90
    started = False
    while time.time() < deadline and p.poll() is None and not started:
        started = bench_running(procs_with(d, exclude=(p.pid,)))
        if not started:
            time.sleep(0.05)
    check(started, "SIGKILL of the report during optic_bench: optic_bench started",
          "report exit %r; reproduce: %s" % (p.poll(), " ".join(cmd)))
    p.kill()
    p.wait()
    deadline = time.time() + 20
    while time.time() < deadline and procs_with(d):
        time.sleep(0.1)
    left = procs_with(d)
    check(not left, "SIGKILL of the report during optic_bench: the run ends by itself within 20 s",
          "left: %s; reproduce: %s, then kill -KILL it" % (left, " ".join(cmd)))
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    # 2. SIGINT during the pod MPI run: 16 repetitions of its 64 MiB cases take
    # far longer than it takes to see mpiexec and both ranks.
    pod_mpi = os.path.join(os.path.dirname(bench), "optic_bench_pod_mpi")
    if not os.path.exists(pod_mpi) or not (shutil.which("mpiexec") or shutil.which("mpirun")):
        print("skip SIGINT during the pod MPI run: %s or mpiexec not found (MPI not built)" % pod_mpi)
    else:
        def mpi_running(procs):
            return sum(1 for _, a in procs if any(x.endswith("optic_bench_pod_mpi") for x in a)) >= 3
        flt = "^peer/fma_peak/[a-z0-9]+/threads:1/|^(pod_mpi/all_reduce|peer/mpi_allreduce)/bytes:67108864/"
        stop_run(optic, ["--filter", flt, "--repetitions", "16", "--min-time", "0.01"] + common,
                 os.path.join(out, "int"), signal.SIGINT, mpi_running, "SIGINT during the pod MPI run")

        # --timeout during the pod MPI run: the report SIGKILLs mpiexec, whose
        # ranks (each in a process group of its own) must go too. optic_bench's
        # part takes under 1 s (0.7 s at load 10) and the pod MPI run over all
        # its cases at 16 repetitions (the report's cap) about 5 s on a quiet
        # machine and tens of seconds on a loaded one, so a 3 s budget runs
        # out in the pod MPI run; the message must say so (a timeout in
        # optic_bench would not test mpiexec at all).
        d = os.path.join(out, "timeout")
        shutil.rmtree(d, ignore_errors=True)
        flt_all = "^peer/fma_peak/[a-z0-9]+/threads:1/|^(pod_mpi|peer/mpi_allreduce)/"
        cmd = [optic, "report", "--filter", flt_all, "--repetitions", "16", "--min-time", "0.01", "--machine", machine,
               "--bench", bench, "--timeout", "3", "--out-dir", d]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        left = procs_with(d)
        check("optic_bench_pod_mpi ran past" in p.stderr and not left,
              "--timeout during the pod MPI run: stopped, no mpiexec or rank left",
              "exit %d, left %s: %s; reproduce: %s" % (p.returncode, left, p.stderr[-300:], " ".join(cmd)))
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    # 3. Usage errors.
    # (A short --timeout and an output directory of their own: should one start a run, it ends soon, there.)
    common = ["--machine", machine, "--bench", bench, "--timeout", "5", "--out-dir", os.path.join(out, "usage")]
    for args in (["--quick", "--full"], ["--full", "--quick"]):
        p = subprocess.run([optic, "report"] + args + common, capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and "--quick and --full conflict" in p.stderr.replace("--full and --quick", "--quick and --full"),
              "report %s: usage error (exit 2) naming the conflict" % " ".join(args),
              "exit %d: %s" % (p.returncode, p.stderr[:300]))
    p = subprocess.run([optic, "report", "--quick", "--filter", "("] + common, capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 2 and "--filter '(' is not a valid regular expression" in p.stderr,
          "report --filter '(': exit 2 naming the invalid regex", "exit %d: %s" % (p.returncode, p.stderr[:300]))

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
