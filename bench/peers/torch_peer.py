#!/usr/bin/python3
"""PyTorch peer of optic_bench (bench/peers/torch.c starts it and talks to it).

Reads requests on stdin, one per line: `OP THREADS ARG...` (integers), and
for each times one unit of work with torch.set_num_threads(THREADS) using
time.perf_counter over a batch of calls long enough to time (about 1 ms; the
batch size is found once per request kind, after warm-up calls), answering
`ok SECONDS CALLS`. Operations and their arguments:

  softmax M N, layer_norm M N, sum_rows M N, sum_cols M N
      torch.softmax(x, 1), nn.LayerNorm(N)(x), x.sum(1), x.sum(0) on f32[M,N],
      no autograd.
  mlp_step B IN H1 H2 CLASSES
      one training step of Linear(IN,H1)-ReLU-Linear(H1,H2)-ReLU-
      Linear(H2,CLASSES) on a batch of B: zero_grad(set_to_none=True),
      forward, F.cross_entropy (batch mean), backward, and
      torch.optim.Adam(foreach=True) at PyTorch's defaults (lr 1e-3). The
      fused Adam of torch 1.13 requires CUDA tensors, so foreach is CPU's
      fastest form.
  conv LAYOUT N C K H W R S PAD
      F.conv2d(x, w, padding=PAD), stride 1, no bias, no autograd, on
      x f32[N,C,H,W] and w f32[K,C,R,S]; LAYOUT 0: contiguous NCHW, 1: both
      tensors in torch.channels_last.
  adam N
      torch.optim.Adam([p], foreach=True).step() on one f32[N] parameter
      whose gradient is set once (the state is created by the warm-up step).
  chain N
      y = relu(a*x + b)*s - c on f32[N] arrays x, b, c with float scalars
      a, s, eagerly, in place on one temporary (t = x*a; t += b; t.relu_();
      t *= s; t -= c): the most favourable eager form (no allocations beyond t).

The first line it writes is `ready TORCH_VERSION`, or `skip REASON` when
torch cannot be imported (then it exits); a malformed request gets `error
REASON`. Never writes anything else.
"""
import sys
import time


def make_rows(torch, op, args):
    m, n = args
    g = torch.Generator().manual_seed(m * 131 + n)
    x = torch.rand(m, n, generator=g) * 2 - 1
    ln = torch.nn.LayerNorm(n, eps=1e-5)
    fns = {
        "softmax": lambda: torch.softmax(x, 1),
        "layer_norm": lambda: ln(x),
        "sum_rows": lambda: x.sum(1),
        "sum_cols": lambda: x.sum(0),
    }
    return fns[op]


def make_mlp_step(torch, args):
    b, d_in, h1, h2, classes = args
    nn = torch.nn
    g = torch.Generator().manual_seed(7)
    model = nn.Sequential(nn.Linear(d_in, h1), nn.ReLU(), nn.Linear(h1, h2), nn.ReLU(), nn.Linear(h2, classes))
    x = torch.rand(b, d_in, generator=g) * 2 - 1
    y = torch.arange(b) % classes  # the same labels as optic's one-hot rows
    opt = torch.optim.Adam(model.parameters(), foreach=True)

    def step():
        with torch.enable_grad():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
        return loss

    return step


def make_conv(torch, args):
    layout, n, c, k, h, w, r, s, pad = args
    g = torch.Generator().manual_seed(n * 7 + c)
    x = torch.rand(n, c, h, w, generator=g) + 1
    wt = torch.rand(k, c, r, s, generator=g) + 1
    if layout == 1:
        x = x.contiguous(memory_format=torch.channels_last)
        wt = wt.contiguous(memory_format=torch.channels_last)
    return lambda: torch.nn.functional.conv2d(x, wt, padding=pad)


def make_adam(torch, args):
    (n,) = args
    p = torch.nn.Parameter(torch.rand(n) + 1)
    p.grad = torch.rand(n) * 2 - 1
    opt = torch.optim.Adam([p], foreach=True)
    return opt.step


def make_chain(torch, args):
    (n,) = args
    g = torch.Generator().manual_seed(n)
    x, b, c = (torch.rand(n, generator=g) for _ in range(3))
    t = torch.empty(n)
    a, s = 1.25, 0.75

    def chain():
        torch.mul(x, a, out=t)
        t.add_(b)
        t.relu_()
        t.mul_(s)
        t.sub_(c)
        return t

    return chain


# op -> (number of integer arguments after THREADS, builder)
OPS = {
    "softmax": (2, lambda torch, a: make_rows(torch, "softmax", a)),
    "layer_norm": (2, lambda torch, a: make_rows(torch, "layer_norm", a)),
    "sum_rows": (2, lambda torch, a: make_rows(torch, "sum_rows", a)),
    "sum_cols": (2, lambda torch, a: make_rows(torch, "sum_cols", a)),
    "mlp_step": (5, make_mlp_step),
    "conv": (9, make_conv),
    "adam": (1, make_adam),
    "chain": (1, make_chain),
}

WARMUP_CALLS = 3


def parse(line):
    """(op, threads, args) or an error string."""
    parts = line.split()
    if not parts:
        return "bad request: empty line"
    if parts[0] not in OPS:
        return "unknown op %s" % parts[0][:40]
    want = OPS[parts[0]][0]
    if len(parts) != 2 + want:
        return "bad request: %s takes THREADS and %d arguments" % (parts[0], want)
    try:
        nums = [int(p) for p in parts[1:]]
    except ValueError:
        return "bad request: arguments must be integers"
    if nums[0] < 1 or any(v < 0 for v in nums[1:]):
        return "bad request: THREADS must be >= 1 and arguments >= 0"
    return parts[0], nums[0], tuple(nums[1:])


def batch_size(fn):
    """Warm-up calls, then the smallest power of two of calls lasting > 1 ms."""
    for _ in range(WARMUP_CALLS):
        fn()
    k = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        if time.perf_counter() - t0 > 1e-3 or k >= 1 << 20:
            return k
        k *= 2


def timed_batch(torch, cache, batch, op, threads, args):
    """(seconds, calls) of one timed batch of op at `threads` threads."""
    torch.set_num_threads(threads)
    key = (op, args)
    if key not in cache:
        cache[key] = OPS[op][1](torch, args)
    fn = cache[key]
    k = batch.get((key, threads))
    if k is None:
        k = batch[(key, threads)] = batch_size(fn)
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    return time.perf_counter() - t0, k


def serve(torch, lines, out):
    """Answers each request line on out (the protocol above)."""
    cache, batch = {}, {}
    for line in lines:
        req = parse(line)
        if isinstance(req, str):
            print("error " + req, file=out, flush=True)
            continue
        op, threads, args = req
        try:
            dt, k = timed_batch(torch, cache, batch, op, threads, args)
        except Exception as e:  # e.g. out of memory: the request fails, the worker stays
            print("error %s: %s" % (type(e).__name__, str(e).splitlines()[0][:160] if str(e) else ""),
                  file=out, flush=True)
            continue
        print("ok %.9e %d" % (dt, k), file=out, flush=True)


def main():
    try:
        import torch
    except Exception as e:  # any import failure: the peer is absent
        print("skip PyTorch is not importable by /usr/bin/python3 (%s); "
              "install Debian's python3-torch" % type(e).__name__, flush=True)
        return 0
    print("ready %s" % torch.__version__, flush=True)
    torch.set_grad_enabled(False)
    serve(torch, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
