#!/usr/bin/python3
"""PyTorch peer of optic_bench (bench/peers/torch.c starts it and talks to it).

Reads requests on stdin, one per line: `OP M N THREADS` with OP one of
softmax, layer_norm, sum_rows, sum_cols. For each it times the op on an
f32[M,N] tensor (torch.set_num_threads(THREADS), no autograd) with
time.perf_counter over a batch of calls long enough to time (about 1 ms, the
batch size found once per request kind), and answers `ok SECONDS CALLS`.
The first line it writes is `ready TORCH_VERSION`, or `skip REASON` when
torch cannot be imported (then it exits). Never writes anything else.
"""
import sys
import time


def main():
    try:
        import torch
    except Exception as e:  # any import failure: the peer is absent
        print(f"skip PyTorch is not importable by /usr/bin/python3 ({type(e).__name__}); "
              "install Debian's python3-torch", flush=True)
        return 0
    print(f"ready {torch.__version__}", flush=True)
    torch.set_grad_enabled(False)
    batch = {}
    cache = {}
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 4:
            print("error bad request", flush=True)
            continue
        op, m, n, threads = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
        torch.set_num_threads(threads)
        key = (op, m, n)
        if key not in cache:
            g = torch.Generator().manual_seed(m * 131 + n)
            x = torch.rand(m, n, generator=g) * 2 - 1
            ln = torch.nn.LayerNorm(n, eps=1e-5)
            cache[key] = (x, ln)
        x, ln = cache[key]
        fns = {
            "softmax": lambda: torch.softmax(x, 1),
            "layer_norm": lambda: ln(x),
            "sum_rows": lambda: x.sum(1),
            "sum_cols": lambda: x.sum(0),
        }
        if op not in fns:
            print("error unknown op", flush=True)
            continue
        fn = fns[op]
        k = batch.get((key, threads))
        if k is None:
            fn()
            k = 1
            while True:
                t0 = time.perf_counter()
                for _ in range(k):
                    fn()
                if time.perf_counter() - t0 > 1e-3 or k >= 1 << 20:
                    break
                k *= 2
            batch[(key, threads)] = k
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        dt = time.perf_counter() - t0
        print(f"ok {dt:.9e} {k}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
