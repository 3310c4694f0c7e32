#!/usr/bin/env python3
"""Validates the Chrome trace that optic's profiler writes: runs a test
binary's trace-writing case with OPTIC_TRACE_OUT set, parses the file with
json and checks the trace event format (traceEvents, ph "X", ts/dur in
microseconds, pid/tid, args with the figures).
Usage: check_trace.py EXEC_PROFILE_BINARY
         (the write_trace_file case: synthetic events with known figures)
       check_trace.py --run EXEC_RUN_MEMORY_BINARY
         (the write_run_trace_file case: a real compile and 3 runs on 2 threads)"""
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def write_trace(binary, case):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        env = dict(os.environ, OPTIC_TRACE_OUT=path)
        r = subprocess.run([binary, case], env=env, timeout=120)
        if r.returncode != 0:
            fail("%s %s exited %d" % (binary, case, r.returncode))
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))


def check_format(doc):
    """The trace event format every optic trace follows: complete ("X")
    events with optic's figures, then metadata ("M") events naming every
    process (device) and thread that has events. Returns the X events."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("top level must be an object with a traceEvents array")
    events = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    for i, e in enumerate(events):
        where = "event %d (%r)" % (i, e.get("name"))
        for key, kind in (("name", str), ("cat", str), ("ph", str), ("pid", int), ("tid", int), ("args", dict)):
            if not isinstance(e.get(key), kind):
                fail("%s: %s missing or not %s" % (where, key, kind.__name__))
        if e["ph"] != "X":
            fail("%s: ph is %r, expected 'X' (complete event)" % (where, e["ph"]))
        if e["pid"] < 1 or e["tid"] < 1:
            fail("%s: pid and tid start at 1 (device + 1, thread + 1)" % where)
        for key in ("ts", "dur"):
            v = e.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                fail("%s: %s must be a number >= 0 (microseconds), got %r" % (where, key, v))
        for key in ("detail", "node", "run", "flops", "bytes", "est_us"):
            if key not in e["args"]:
                fail("%s: args lacks %s" % (where, key))
    procs, threads = set(), set()
    for e in meta:
        if e.get("name") not in ("process_name", "thread_name") or not isinstance(e.get("args", {}).get("name"), str):
            fail("metadata event %r must be process_name/thread_name with args.name" % e)
        (procs if e["name"] == "process_name" else threads).add((e["pid"], e["tid"]) if e["name"] == "thread_name"
                                                               else e["pid"])
    for e in events:
        if e["pid"] not in procs or (e["pid"], e["tid"]) not in threads:
            fail("%s: pid %d / tid %d has no process_name / thread_name" % (e["name"], e["pid"], e["tid"]))
    if events and min(e["ts"] for e in events) != 0:
        fail("ts must start at 0 (relative to the earliest event)")
    if doc.get("displayTimeUnit") != "ns" or doc.get("otherData", {}).get("dropped") != 0:
        fail("displayTimeUnit/otherData.dropped")
    return events


def check_synthetic(binary):
    events = check_format(write_trace(binary, "write_trace_file"))
    if len(events) < 10:
        fail("expected at least 10 events, got %d" % len(events))
    cats = {e["cat"] for e in events}
    ops = [e for e in events if e["cat"] in ("op", "fusion")]
    if not ops or any(abs(e["dur"] - 1.5) > 0.01 for e in ops if e["args"]["node"] == 0):
        fail("op events must carry their duration in microseconds (1500 ns -> 1.5)")
    if any(abs(e["args"]["est_us"] - 1.2345) > 1e-9 for e in ops):
        fail("est_us must be the estimate in microseconds")
    if any(e["args"]["flops"] != 2e6 for e in ops):
        fail("flops must be carried in args")
    if {e["tid"] for e in ops} != {1, 2}:
        fail("op events of threads 0 and 1 must have tid 1 and 2, got %s" % sorted({e["tid"] for e in ops}))
    want = {"op", "fusion", "run", "compile", "compile_pass", "reserve"}
    if not want <= cats:
        fail("categories %s lack %s" % (sorted(cats), sorted(want - cats)))
    if not any('"' in e["name"] for e in events):
        fail("the name with quotes did not survive escaping")
    print("ok: %d trace events, categories %s" % (len(events), ", ".join(sorted(cats))))


def check_real_run(binary):
    events = check_format(write_trace(binary, "write_run_trace_file"))
    cats = {e["cat"] for e in events}
    want = {"compile", "compile_pass", "run", "fusion", "reserve"}
    if not want <= cats:
        fail("categories %s lack %s" % (sorted(cats), sorted(want - cats)))
    runs = {e["args"]["run"]: e for e in events if e["cat"] == "run"}
    if sorted(runs) != [1, 2, 3]:
        fail("expected run events numbered 1, 2, 3, got %s" % sorted(runs))
    work = [e for e in events if e["cat"] in ("op", "fusion")]
    for e in work:
        r = runs.get(e["args"]["run"])
        if r is None:
            fail("%s: run %r has no run event" % (e["name"], e["args"]["run"]))
        # Both come from one clock; allow 1 ns of rounding in the microsecond figures.
        if e["ts"] < r["ts"] - 1e-3 or e["ts"] + e["dur"] > r["ts"] + r["dur"] + 1e-3:
            fail("%s (run %d) lies outside its run event" % (e["name"], e["args"]["run"]))
        if e["args"]["est_us"] <= 0 or e["args"]["bytes"] <= 0 or e["args"]["node"] < 0:
            fail("%s: estimate, bytes and node must come from the program" % e["name"])
    if {e["tid"] for e in work} != {1, 2}:
        fail("a fused loop of 64Ki+ elements on 2 threads records both threads' parts, got tids %s"
             % sorted({e["tid"] for e in work}))
    passes = [e for e in events if e["cat"] == "compile_pass"]
    comp = [e for e in events if e["cat"] == "compile"][0]
    if sum(p["dur"] for p in passes) > comp["dur"] + 1e-3:
        fail("the passes take longer than the compile")
    print("ok: real run, %d trace events, categories %s" % (len(events), ", ".join(sorted(cats))))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--run":
        check_real_run(args[1])
    else:
        check_synthetic(args[0])


if __name__ == "__main__":
    main()
