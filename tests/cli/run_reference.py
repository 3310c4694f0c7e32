#!/usr/bin/env python3
"""Independent evaluation for tests/cli/test_cli_run.sh: reproduces
`optic run --random-inputs SEED` inputs (the generator documented in
docs/hlo-text.md) with NumPy, computes each reference module's result in
float64 from the module's meaning (written here by hand, not from optic),
and compares with the --json document optic printed.

usage: run_reference.py check FILE.hlo OUT.json SEED
       run_reference.py inputs FILE.hlo SEED DIR   (writes DIR/<index>.npy)
Exit 0 on agreement, 1 with the first difference on stderr, 3 if the module
has no reference here."""
import json
import os
import sys

import numpy as np

G = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1


def random_array(seed, index, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64))
    start = (seed + (index + 1) * G) & M64
    with np.errstate(over="ignore"):
        x = np.uint64(start) + np.uint64(G) * np.arange(1, n + 1, dtype=np.uint64)
        z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    if dtype == "f32":
        v = ((z >> np.uint64(40)).astype(np.float64) * 2.0**-23 - 1.0).astype(np.float32)
    elif dtype == "f64":
        v = (z >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0
    elif dtype == "s32":
        v = ((z % np.uint64(17)).astype(np.int64) - 8).astype(np.int32)
    elif dtype == "u8":
        v = (z >> np.uint64(56)).astype(np.uint8)
    else:
        v = (z >> np.uint64(63)).astype(np.bool_)
    return v.reshape(shape)


def conv_nhwc(x, k):
    """x [b,h,w,i], k [kh,kw,i,o], stride 1, 'same' padding for 3x3."""
    b, h, w, _ = x.shape
    kh, kw, _, o = k.shape
    xp = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    out = np.zeros((b, h, w, o))
    for dy in range(kh):
        for dx in range(kw):
            out += np.einsum("bhwi,io->bhwo", xp[:, dy:dy + h, dx:dx + w, :], k[dy, dx], optimize=True)
    return out


def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x, scale, bias):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * scale + bias


def one_matmul(w, x):
    d = x @ w
    m = np.maximum(d, 0)
    sel = (d == m).astype(np.float64)
    g = x.T @ sel
    return [w + g * np.float64(np.float32(-0.01)), np.array(m.sum())]


def reshape_divide(l0, r0, l1, r1):
    return (l0 @ r0).reshape(20) / (l1 @ r1.T).reshape(20)


# name: (parameter types (physical shapes), reference function on float64 inputs,
#        magnitude of what each output element sums, for the tolerance)
MODULES = {
    "add_f32_2x2.hlo": ([("f32", (2, 2))], lambda a: [a + a]),
    "conv0d_as_matmul.hlo": ([("f32", (10, 5)), ("f32", (5, 7))], lambda a, b: [a @ b]),
    "conv2d_nhwc_bias_relu.hlo": ([("f32", (8, 5, 5, 1)), ("f32", (3, 3, 1, 32)), ("f32", (32,))],
                                  lambda x, k, b: [np.maximum(conv_nhwc(x, k) + b, 0)]),
    # layout {3,0,2,1}: parameter and result are physical [h,w,b,f]; kernel dims 01oi
    "conv_isolated_layout_3021.hlo": ([("f32", (28, 28, 16, 128)), ("f32", (3, 3, 128, 128))],
                                      lambda x, k: [conv_nhwc(x.transpose(2, 0, 1, 3), k.transpose(0, 1, 3, 2))
                                                    .transpose(1, 2, 0, 3)]),
    "dot_batch_reordered_dims.hlo": ([("f32", (7, 17, 10, 13)), ("f32", (7, 9, 10, 13, 6))],
                                     lambda l, r: [np.einsum("abcd,aecdf->cabef", l, r)]),
    "dot_batch_with_metadata.hlo": ([("f32", (4, 3, 5)), ("f32", (3, 5, 6))],
                                    lambda l, r: [np.einsum("xcb,cby->bxy", l, r)]),
    "dot_no_dnums_outer_product.hlo": ([("f32", (2, 3)), ("f32", (4, 5))], lambda l, r: [np.einsum("ab,cd->abcd", l, r)]),
    "dot_reshape_divide.hlo": ([("f32", (20, 40)), ("f32", (40, 1)), ("f32", (1, 40)), ("f32", (20, 40))],
                               lambda *a: [reshape_divide(*a)]),
    "dot_transpose_output.hlo": ([("f32", (32, 32)), ("f32", (32, 64))], lambda a, b: [(a.T @ b).T]),
    "layernorm_f32.hlo": ([("f32", (127, 125)), ("f32", (125,)), ("f32", (125,))],
                          lambda x, s, b: [layer_norm(x, s, b)]),
    "one_matmul_train_step.hlo": ([("f32", (32, 128)), ("f32", (4, 32))], one_matmul),
    "reduce_dim1_with_copy.hlo": ([("f32", (2, 2, 2, 3))], lambda x: [x.sum(axis=1)]),
    "softmax_f32.hlo": ([("f32", (127, 125))], lambda x: [softmax_rows(x)]),
}


def bound(name, inputs, expected):
    """Per-element error bound for an f32 evaluation: a few f32 ulps of the
    sum of |terms| (computed by running the reference on |inputs|)."""
    if name == "dot_reshape_divide.hlo":
        l0, r0, l1, r1 = [abs(a) for a in inputs]
        n0 = (l0 @ r0).reshape(20)
        n1 = (l1 @ r1.T).reshape(20)
        d0 = (inputs[0] @ inputs[1]).reshape(20)
        d1 = (inputs[2] @ inputs[3].T).reshape(20)
        return [abs(expected[0]) * 64 * 6e-8 * (n0 / abs(d0) + n1 / abs(d1)) + 1e-30]
    if name == "softmax_f32.hlo":
        return [abs(expected[0]) * 1e-5 + 1e-9]
    if name == "layernorm_f32.hlo":
        # normalized values are O(1): the mean/variance sums' f32 rounding and
        # rsqrt's few ulps, times |scale|, plus the bias add
        x, s, b = inputs
        return [np.full(expected[0].shape, 1e-5) * (abs(s) + 1) + abs(b) * 1e-6]
    if name == "one_matmul_train_step.hlo":
        w, x = [abs(a) for a in inputs]
        return [np.full(expected[0].shape, 1e-5) + abs(expected[0]) * 1e-6, np.array((abs(x) @ w).sum() * 64 * 6e-8)]
    mag = MODULES[name][1](*[abs(a) for a in inputs])
    return [64 * 6e-8 * abs(m) + 1e-30 for m in mag]


def check(name, out_json, seed):
    if name not in MODULES:
        return 3
    types, fn = MODULES[name]
    inputs = [random_array(seed, i, s, d) for i, (d, s) in enumerate(types)]
    wide = [a.astype(np.float64) for a in inputs]
    expected = fn(*wide)
    tol = bound(name, wide, expected)
    doc = json.load(open(out_json))
    outs = doc["outputs"]
    if len(outs) != len(expected):
        print(f"{name}: {len(outs)} outputs, expected {len(expected)}", file=sys.stderr)
        return 1
    for k, (o, e, t) in enumerate(zip(outs, expected, tol)):
        if list(o) != ["shape", "dtype", "data"] or o["dtype"] != "f32" or o["shape"] != list(e.shape):
            print(f"{name}: output {k}: {list(o)} {o['dtype']} {o['shape']}, expected f32 {list(e.shape)}",
                  file=sys.stderr)
            return 1
        got = np.array(o["data"], dtype=np.float32).astype(np.float64).reshape(e.shape)
        err = abs(got - e)
        bad = np.argwhere(err > t)
        if len(bad):
            i = tuple(bad[0])
            print(f"{name}: output {k} index {list(i)}: got {got[i]!r}, expected {e[i]!r} "
                  f"(|diff| {err[i]:.3g} > bound {np.broadcast_to(t, e.shape)[i]:.3g}; {len(bad)} elements off)",
                  file=sys.stderr)
            return 1
    print(f"{name}: {sum(int(np.prod(e.shape)) for e in expected)} values agree with the float64 reference")
    return 0


def write_inputs(name, seed, out_dir):
    types, _ = MODULES[name]
    for i, (d, s) in enumerate(types):
        np.save(os.path.join(out_dir, f"{i}.npy"), random_array(seed, i, s, d))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "check":
        sys.exit(check(os.path.basename(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
    if sys.argv[1] == "inputs":
        sys.exit(write_inputs(os.path.basename(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
    sys.exit(2)
