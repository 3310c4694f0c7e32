#!/usr/bin/env python3
"""optic autodiff against torch.autograd (optional: skipped, exit 77, when
torch is not installed; Debian package python3-torch).

usage: autodiff_torch.py DUMP_BINARY WORKDIR

Runs DUMP_BINARY WORKDIR (tests/graph/autodiff_torch_dump.c), which writes
an MLP's and a conv block's inputs, loss and optic gradients as .npy; then
rebuilds both models in torch (float64, from the same float32 inputs) and
compares loss and every gradient: |optic - torch| <= 1e-5 * max(1, max|torch|).
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"skipped: {e.name} is not installed (Debian: python3-torch, python3-numpy)")
    sys.exit(77)

TOL = 1e-5


def load(d, model, name):
    return np.load(os.path.join(d, f"{model}_{name}.npy"))


def params(d, model, names):
    return {n: torch.tensor(load(d, model, n).astype(np.float64), requires_grad=True) for n in names}


def mlp(p):
    h = torch.tanh(p["x"] @ p["w1"] + p["b1"])
    e = h @ p["w2"] + p["b2"] - p["t"]
    return (e * e).sum() * 0.125


def conv(p):
    x = p["x"].permute(0, 3, 1, 2)                  # NHWC -> NCHW
    k = p["k"].permute(3, 2, 0, 1)                  # HWIO -> OIHW
    y = torch.nn.functional.conv2d(x, k, p["b"], stride=1, padding=1)
    y = torch.relu(y)
    y = torch.nn.functional.max_pool2d(y, 2, 2)
    f = y.permute(0, 2, 3, 1).reshape(2, 64) @ p["w"]  # flatten in NHWC order, as optic
    return (f * f).sum()


def check(d, model, names, fn):
    p = params(d, model, names)
    loss = fn(p)
    loss.backward()
    bad = 0
    pairs = [("loss", loss.detach().numpy(), load(d, model, "loss"))]
    pairs += [(f"grad_{n}", p[n].grad.numpy(), load(d, model, f"grad_{n}")) for n in names]
    for what, want, got in pairs:
        scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        ok = err <= TOL * scale
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {model} {what}: max |optic - torch| = {err:.3g} (tol {TOL * scale:.3g})")
    return bad


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    subprocess.run([binary, work], check=True)
    bad = check(work, "mlp", ["x", "w1", "b1", "w2", "b2", "t"], mlp)
    bad += check(work, "conv", ["x", "k", "b", "w"], conv)
    if bad:
        print(f"{bad} mismatches; reproduce: {sys.argv[0]} {binary} {work}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
