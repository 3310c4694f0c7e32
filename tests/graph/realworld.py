#!/usr/bin/env python3
"""Real-module corpus check (ctest graph_realworld), Python standard library only.

For every module listed in tests/data/hlo/realworld/MANIFEST.tsv, drives the
built `optic` CLI through the stages

  load     optic cost --json FILE          (parse, shape inference, cost)
  compile  optic compile FILE --opt full
  run      optic run FILE --random-inputs SEED --json --engine E, once with
           E=runtime and once with E=evaluate (the reference evaluator), the
           outputs compared within the tolerances below

and checks the outcome against the manifest line:

  run              every stage passes and the engines agree
  cost             load and compile pass; never run (too big or too slow here)
  refused-STAGE    the stages before STAGE pass and STAGE fails (exit 1, no
                   crash) with a message containing the line's substring

A module doing worse than its line fails the test; so does a module doing
better (a refused one that now gets past its stage): the failure names the
manifest line and the line to write instead, so the manifest follows what
optic can do. A crash, a hang (timeout) or an exit code other than 0/1 always
fails.

Tolerances (runtime output a, evaluator output e, per element), by the
least precise float type among the output's and those the module's text
computes in (a bf16 dot converted to f32 compares as bf16: summing in another
order may round an intermediate the other way, one bf16 ulp):
  f64           |a-e| <= 1e-10*|e| + 1e-12*max|e|
  f32           |a-e| <= 1e-4*|e|  + 1e-5*max|e|
  f16           |a-e| <= 4e-3*|e|  + 2e-3*max|e|
  bf16          |a-e| <= 3.2e-2*|e| + 1.6e-2*max|e|
  other floats  as bf16
  integers/pred exact
NaN must meet NaN and infinities the same infinity; max|e| is over the finite
elements of that output.

usage: realworld.py OPTIC DATA_DIR [--seed N] [--run-flops-limit F]
                    [--only NAME] [--timeout SECONDS] [--print-manifest]
--print-manifest prints, after the check, the manifest with each failing line
replaced by what optic did (a crash or disagreement is never written in).
--run-flops-limit skips the run stage (reported as skipped, not failed) of
`run` modules whose `optic cost` flops exceed F (sanitizer builds).
Exit 0 when every line holds, 1 otherwise."""
import json
import math
import os
import re
import subprocess
import sys
import time

STAGES = ("load", "compile", "run")
EXPECTS = ("run", "cost") + tuple("refused-" + s for s in STAGES)
SIZES = ("small", "large")
TOL = {"f64": (1e-10, 1e-12), "f32": (1e-4, 1e-5), "f16": (4e-3, 2e-3), "bf16": (3.2e-2, 1.6e-2)}
FLOATS = ("f64", "f32", "f16", "bf16")
SLOW_SECONDS = 15.0
INTS = ("pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")


class Line:
    def __init__(self, number, fields):
        self.number = number
        self.file = fields[0]
        self.expect = fields[1] if len(fields) > 1 else ""
        self.size = fields[2] if len(fields) > 2 else ""
        self.message = fields[3] if len(fields) > 3 else ""


def read_manifest(path):
    lines, errors = [], []
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            text = text.rstrip("\n")
            if not text.strip() or text.startswith("#"):
                continue
            line = Line(number, text.split("\t"))
            if line.expect not in EXPECTS:
                errors.append("%s:%d: expect '%s' is not one of %s" % (path, number, line.expect, ", ".join(EXPECTS)))
            elif line.size not in SIZES:
                errors.append("%s:%d: size '%s' is not small or large" % (path, number, line.size))
            elif line.expect == "run" and line.size != "small":
                errors.append("%s:%d: a 'run' module must be 'small'" % (path, number))
            elif line.expect.startswith("refused-") and not line.message:
                errors.append("%s:%d: a refused line needs the expected message substring (4th column)"
                              % (path, number))
            lines.append(line)
    return lines, errors


def call(argv, timeout):
    """(exit code or 'timeout', stdout, first stderr line, seconds)."""
    env = dict(os.environ)
    env.pop("OPTIC_RUN_ENGINE", None)
    start = time.monotonic()
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", b"", "timed out after %g s" % timeout, time.monotonic() - start
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    return p.returncode, p.stdout, (err[0] if err else ""), time.monotonic() - start


def value(x):
    if isinstance(x, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[x]
    return x


def compare_output(i, a, e, floats=()):
    """None when output i agrees, else a description of the first difference."""
    if a.get("shape") != e.get("shape") or a.get("dtype") != e.get("dtype"):
        return "output %d: runtime %s%s, evaluator %s%s" % (i, a.get("dtype"), a.get("shape"), e.get("dtype"),
                                                            e.get("shape"))
    if len(a["data"]) != len(e["data"]) or len(e["data"]) != math.prod(e["shape"]):
        return "output %d: %d and %d elements for shape %s" % (i, len(a["data"]), len(e["data"]), e["shape"])
    if a["data"] == e["data"]:  # identical (the common case; also NaN and inf, printed as strings)
        return None
    da, de = [value(x) for x in a["data"]], [value(x) for x in e["data"]]
    dtype = e["dtype"]
    if dtype in INTS:
        for k, (x, y) in enumerate(zip(da, de)):
            if x != y:
                return "output %d (%s) element %d: runtime %r, evaluator %r (integers compare exactly)" % (
                    i, dtype, k, x, y)
        return None
    loosest = max([dtype] + [t for t in floats if t in TOL], key=lambda t: TOL.get(t, TOL["bf16"]))
    rel, scale = TOL.get(loosest, TOL["bf16"])
    finite = [abs(y) for y in de if math.isfinite(y)]
    atol = scale * (max(finite) if finite else 0.0) + 1e-30
    for k, (x, y) in enumerate(zip(da, de)):
        if math.isnan(y) or math.isinf(y):
            ok = (math.isnan(x) and math.isnan(y)) or x == y
        else:
            ok = math.isfinite(x) and abs(x - y) <= rel * abs(y) + atol
        if not ok:
            return "output %d (%s) element %d: runtime %r, evaluator %r (%s tolerance %g*|e| + %g)" % (
                i, dtype, k, x, y, loosest, rel, atol)
    return None


def compare(out_a, out_e, floats=()):
    try:
        a, e = json.loads(out_a)["outputs"], json.loads(out_e)["outputs"]
    except (ValueError, KeyError, TypeError) as x:
        return "cannot read the --json outputs: %s" % x
    if len(a) != len(e):
        return "runtime gave %d outputs, evaluator %d" % (len(a), len(e))
    for i, (oa, oe) in enumerate(zip(a, e)):
        diff = compare_output(i, oa, oe, floats)
        if diff:
            return diff
    return None


class Outcome:
    """How far a module got: state is 'run', 'cost' (load and compile passed,
    not run) or 'refused-STAGE' with message; hard is set for a crash, a
    timeout, unreadable output or engines that disagree (never expected)."""

    def __init__(self):
        self.state, self.message, self.hard, self.flops, self.skipped = None, "", None, None, False
        self.seconds = {}


def short_message(text):
    """The part of an optic error line after 'optic CMD: FILE: [line L:C: ]'."""
    marker = text.find(": line ")
    if marker >= 0:
        rest = text[marker + 7:]
        colon = rest.find(": ")
        if colon >= 0:
            return rest[colon + 2:]
    parts = text.split(": ", 2)
    return parts[2] if len(parts) == 3 else text


def stage_result(out, stage, cmd, what):
    """False when the stage passed; otherwise fills out and returns True."""
    rc, _, err, _ = cmd
    if rc == 0:
        return False
    if rc == 1:
        out.state, out.message = "refused-" + stage, err
    else:
        out.hard = "%s: %s (exit %s): %s" % (what, "crashed" if isinstance(rc, int) and rc < 0 else "failed", rc, err)
    return True


def probe(optic, path, may_run, args):
    out = Outcome()
    cmd = call([optic, "cost", "--json", path], args.timeout)
    out.seconds["load"] = cmd[3]
    if stage_result(out, "load", cmd, "optic cost"):
        return out
    try:
        cost = json.loads(cmd[1])
        out.flops = cost["flops"]
        # Numbers, not necessarily >= 0: like XLA, a custom-call counts -1 (unknown).
        for key in ("flops", "transcendentals", "bytes_accessed"):
            if not isinstance(cost[key], (int, float)):
                raise ValueError("%s is %r" % (key, cost[key]))
        if not isinstance(cost["instructions"], list):
            raise ValueError("no instructions list")
    except (ValueError, KeyError, TypeError) as x:
        out.hard = "optic cost --json printed no valid cost document: %s" % x
        return out
    cmd = call([optic, "compile", path, "--opt", "full"], args.timeout)
    out.seconds["compile"] = cmd[3]
    if stage_result(out, "compile", cmd, "optic compile --opt full"):
        return out
    out.state = "cost"
    if not may_run:
        return out
    if args.run_flops_limit is not None and out.flops > args.run_flops_limit:  # -1 (unknown): run
        out.skipped = True
        return out
    run = [optic, "run", path, "--random-inputs", str(args.seed), "--json", "--engine"]
    got = {}
    for engine in ("runtime", "evaluate"):
        cmd = call(run + [engine], args.timeout)
        out.seconds[engine] = cmd[3]
        if stage_result(out, "run", cmd, "optic run (%s)" % engine):
            return out
        got[engine] = cmd[1]
    with open(path, encoding="utf-8", errors="replace") as f:
        floats = set(re.findall(r"\b(bf16|f16|f32|f64)\[", f.read()))
    diff = compare(got["runtime"], got["evaluate"], floats)
    if diff:
        out.hard = "runtime and evaluator disagree: " + diff
        return out
    out.state = "run"
    return out


def rank(state):
    return {"refused-load": 0, "refused-compile": 1, "refused-run": 2, "cost": 3, "run": 4}[state]


def suggested(line, out):
    fields = [line.file, out.state, line.size]
    if out.state.startswith("refused-"):
        fields.append(short_message(out.message).split(" (")[0])
    return "\t".join(fields)


def verdict(line, out):
    """None when the outcome is what the line expects, else the complaint."""
    if out.hard:
        return out.hard
    if out.skipped:
        return None
    fix = "change line %d to '%s' (tab-separated)" % (line.number, suggested(line, out).replace("\t", "<TAB>"))
    if out.state == line.expect:
        if line.expect.startswith("refused-") and line.message not in out.message:
            return "refused at %s as expected, but with '%s', not '%s': %s" % (
                line.expect[8:], out.message, line.message, fix)
        return None
    expected_rank = rank(line.expect)
    if line.expect == "cost" and out.state == "cost":
        return None
    if rank(out.state) < expected_rank:
        what = "refused at %s: %s" % (out.state[8:], out.message) if out.state.startswith("refused-") else out.state
        return "expected '%s', got %s (a regression, or %s)" % (line.expect, what, fix)
    return "does better than its manifest line '%s' says: now '%s'; tighten the manifest: %s" % (
        line.expect, out.state, fix)


def describe(out):
    if out.hard:
        return "ERROR"
    if out.skipped:
        return "cost (run skipped: %.3g flops over --run-flops-limit)" % out.flops
    if out.state.startswith("refused-"):
        return "%s: %s" % (out.state, short_message(out.message))
    return out.state


def self_test():
    """The checks above on made-up outcomes (so that a broken check cannot pass
    the corpus silently). Returns a list of failures."""
    bad = []

    def out(shape, dtype, data):
        return {"shape": shape, "dtype": dtype, "data": data}

    cases = [  # (runtime, evaluator, should agree)
        (out([2], "f32", [1.0, 2.0]), out([2], "f32", [1.0, 2.0]), True),
        (out([2], "f32", [1.00005, 2.0]), out([2], "f32", [1.0, 2.0]), True),
        (out([2], "f32", [1.001, 2.0]), out([2], "f32", [1.0, 2.0]), False),
        (out([2], "bf16", [1.01, 2.0]), out([2], "bf16", [1.0, 2.0]), True),
        (out([1], "f32", ["nan"]), out([1], "f32", ["nan"]), True),
        (out([1], "f32", [1.0]), out([1], "f32", ["nan"]), False),
        (out([1], "f32", ["nan"]), out([1], "f32", [1.0]), False),
        (out([1], "f32", ["inf"]), out([1], "f32", ["-inf"]), False),
        (out([1], "s32", [3]), out([1], "s32", [4]), False),
        (out([2], "f32", [1.0, 2.0]), out([1, 2], "f32", [1.0, 2.0]), False),
        (out([2], "f16", [1.0, 2.0]), out([2], "f32", [1.0, 2.0]), False),
        (out([1], "f32", [4.15625]), out([1], "f32", [4.1875]), False),
        (out([1], "f32", [4.15625]), out([1], "f32", [4.1875]), True, ("bf16", "f32")),
        (out([1], "f32", [3.5]), out([1], "f32", [4.1875]), False, ("bf16", "f32")),
    ]
    for k, case in enumerate(cases):
        a, e, agree = case[:3]
        if (compare_output(0, a, e, case[3] if len(case) > 3 else ()) is None) != agree:
            bad.append("self-test compare case %d: expected %s" % (k, "agreement" if agree else "a difference"))
    line = Line(1, ["m.hlo", "refused-load", "small", "element type 'bf16'"])
    outcomes = [  # (state, message, hard, should pass)
        ("refused-load", "line 1:2: element type 'bf16' is not supported", None, True),
        ("refused-load", "line 1:2: opcode 'sort' is not supported", None, False),
        ("refused-compile", "x", None, False),
        ("run", "", None, False),
        ("cost", "", "crashed", False),
    ]
    for k, (state, message, hard, ok) in enumerate(outcomes):
        o = Outcome()
        o.state, o.message, o.hard = state, message, hard
        if (verdict(line, o) is None) != ok:
            bad.append("self-test verdict case %d: expected %s" % (k, "a pass" if ok else "a complaint"))
    o = Outcome()
    o.state, o.message = "refused-load", "element type 'bf16' is not supported"
    if verdict(Line(1, ["m.hlo", "run", "small"]), o) is None:
        bad.append("self-test: a 'run' line refused at load passed")
    return bad


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="real-module corpus check")
    ap.add_argument("optic")
    ap.add_argument("data")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--run-flops-limit", type=float, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--print-manifest", action="store_true",
                    help="after the check, print the manifest with every failing line replaced by what optic did")
    args = ap.parse_args(argv)
    manifest = os.path.join(args.data, "MANIFEST.tsv")
    lines, errors = read_manifest(manifest)
    listed = {l.file for l in lines}
    for name in sorted(os.listdir(args.data)):
        if name.endswith(".hlo") and name not in listed:
            errors.append("%s has no line in %s: add one" % (name, manifest))
    for line in lines:
        if not os.path.isfile(os.path.join(args.data, line.file)):
            errors.append("%s:%d: %s does not exist" % (manifest, line.number, line.file))
    for e in self_test():
        errors.append(e)
    fails = list(errors)
    counts = {}
    replace = {}
    start = time.monotonic()
    for line in lines:
        if line.expect not in EXPECTS or line.size not in SIZES or (args.only and line.file != args.only):
            continue
        if not os.path.isfile(os.path.join(args.data, line.file)):
            continue
        path = os.path.join(args.data, line.file)
        began = time.monotonic()
        # may_run: a refused small line that gets past its stage is run too, to say what to write.
        out = probe(args.optic, path, line.size == "small" and line.expect != "cost", args)
        took = time.monotonic() - began
        complaint = verdict(line, out)
        print("%-4s %-48s %-16s %6.2fs  %s" % ("ok" if complaint is None else "FAIL", line.file, line.expect, took,
                                            describe(out)))
        if took > SLOW_SECONDS:
            print("     slow (%s): if this is usual, mark line %d 'large' (cost only)" % (
                ", ".join("%s %.1fs" % kv for kv in out.seconds.items()), line.number))
        if complaint:
            print("     %s:%d: %s" % (os.path.basename(manifest), line.number, complaint))
            print("     reproduce: %s %s %s --seed %d --only %s" % (sys.executable, os.path.abspath(__file__),
                                                                     " ".join([args.optic, args.data]), args.seed,
                                                                     line.file))
            fails.append("%s: %s" % (line.file, complaint))
            if not out.hard:
                replace[line.number] = suggested(line, out)
        key = line.expect if line.expect in ("run", "cost") else "refused"
        counts[key] = counts.get(key, 0) + 1
    for e in errors:
        print("FAIL " + e)
    print("%d modules: %d run, %d cost-only, %d refused; %d failures; %.1f s" % (
        sum(counts.values()), counts.get("run", 0), counts.get("cost", 0), counts.get("refused", 0), len(fails),
        time.monotonic() - start))
    if args.print_manifest:
        print("---- %s as optic does now:" % manifest)
        with open(manifest, encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                sys.stdout.write(replace[number] + "\n" if number in replace else text)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
