#!/usr/bin/env python3
"""Validates the Chrome trace that optic's profiler writes: runs the
exec_profile test's write_trace_file case with OPTIC_TRACE_OUT set, parses
the file with json and checks the trace event format (traceEvents, ph "X",
ts/dur in microseconds, pid/tid, args with the figures).
Usage: check_trace.py EXEC_PROFILE_BINARY"""
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        env = dict(os.environ, OPTIC_TRACE_OUT=path)
        r = subprocess.run([binary, "write_trace_file"], env=env, timeout=60)
        if r.returncode != 0:
            fail("%s write_trace_file exited %d" % (binary, r.returncode))
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("top level must be an object with a traceEvents array")
    events = doc["traceEvents"]
    if len(events) < 10:
        fail("expected at least 10 events, got %d" % len(events))
    cats = set()
    for i, e in enumerate(events):
        where = "event %d (%r)" % (i, e.get("name"))
        for key, kind in (("name", str), ("cat", str), ("ph", str), ("pid", int), ("tid", int), ("args", dict)):
            if not isinstance(e.get(key), kind):
                fail("%s: %s missing or not %s" % (where, key, kind.__name__))
        if e["ph"] != "X":
            fail("%s: ph is %r, expected 'X' (complete event)" % (where, e["ph"]))
        for key in ("ts", "dur"):
            v = e.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                fail("%s: %s must be a number >= 0 (microseconds), got %r" % (where, key, v))
        for key in ("detail", "node", "run", "flops", "bytes", "est_us"):
            if key not in e["args"]:
                fail("%s: args lacks %s" % (where, key))
        cats.add(e["cat"])
    ops = [e for e in events if e["cat"] in ("op", "fusion")]
    if not ops or any(abs(e["dur"] - 1.5) > 0.01 for e in ops if e["args"]["node"] == 0):
        fail("op events must carry their duration in microseconds (1500 ns -> 1.5)")
    if any(abs(e["args"]["est_us"] - 1.2345) > 1e-9 for e in ops):
        fail("est_us must be the estimate in microseconds")
    if any(e["args"]["flops"] != 2e6 for e in ops):
        fail("flops must be carried in args")
    if {e["tid"] for e in ops} != {0, 1}:
        fail("op events of 2 threads must have tid 0 and 1, got %s" % sorted({e["tid"] for e in ops}))
    want = {"op", "fusion", "run", "compile", "compile_pass", "reserve"}
    if not want <= cats:
        fail("categories %s lack %s" % (sorted(cats), sorted(want - cats)))
    if min(e["ts"] for e in events) != 0:
        fail("ts must start at 0 (relative to the earliest event)")
    if not any('"' in e["name"] for e in events):
        fail("the name with quotes did not survive escaping")
    if doc.get("displayTimeUnit") != "ns" or doc.get("otherData", {}).get("dropped") != 0:
        fail("displayTimeUnit/otherData.dropped")
    print("ok: %d trace events, categories %s" % (len(events), ", ".join(sorted(cats))))


if __name__ == "__main__":
    main()
