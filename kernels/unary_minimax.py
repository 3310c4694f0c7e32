#!/usr/bin/env python3
"""Derives the float polynomial coefficients in kernels/unary_consts.h.

Relative-error minimax fits by the Remez exchange in 50-digit arithmetic
(mpmath), then rounded to float; prints the fit's error before and after the
rounding. Run by hand when changing an approximation; never at build time.
usage: python3 kernels/unary_minimax.py exp 6 | expm1 7 | log1p 10 | erf
  exp:   exp(r)   ~ 1 + r + sum c_k r^k, |r| <= 0.3467 (ln2/2 plus slack)
  expm1: expm1(r) ~ r + sum c_k r^k,     same interval
  log1p: log1p(f) ~ f + sum c_k f^k,     f in [sqrt(1/2) - 1, sqrt(2) - 1)
  erf:   the three intervals of kernels/unary_consts.h: A, erf(x)/x - 1 ~
         sum a_k t^k (t = x^2 in [0, 1], degree 6, relative Remez); B and C,
         erf(x) ~ sum c_k (x - mid)^k (degree 9 on [1, 2.25] and [2.25, 3.92],
         least squares on 3000 Chebyshev nodes, needs numpy: /usr/bin/python3). The
         coefficients are rounded to float one at a time, each time refitting
         the rest to what the rounded ones leave.
"""
import struct
import sys

import mpmath as mp

mp.mp.dps = 50


def f32(v):
    """v rounded to the nearest float."""
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def remez(f, h, ks, w, a, b, iters=30, grid=6000):
    """Coefficients c of sum c_k x^k (k in ks) minimizing max |(f - h - sum) w|
    on [a, b], and that maximum (reference points exchanged on a grid)."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(ks)
    pts = [ (a+b)/2 - (b-a)/2*mp.cos(mp.pi*i/n) for i in range(n+1)]
    mx = 0
    xs = [a + (b-a)*i/grid for i in range(grid+1)]
    fx = [(f(x), h(x), w(x)) for x in xs]
    for it in range(iters):
        A = mp.matrix(n+1, n+1); rhs = mp.matrix(n+1, 1)
        for i, x in enumerate(pts):
            for j, k in enumerate(ks): A[i, j] = x**k
            A[i, n] = (-1)**i / w(x)
            rhs[i] = f(x) - h(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n)]
        def err(i):
            x = xs[i]; F, H, W = fx[i]
            return (F - H - sum(cc * x**k for cc, k in zip(c, ks))) * W
        e = [err(i) for i in range(len(xs))]
        segs = []; cur = None
        for i, v in enumerate(e):
            s = v >= 0
            if cur is None or cur[0] != s:
                cur = [s, i]; segs.append(cur)
            elif abs(v) > abs(e[cur[1]]): cur[1] = i
        while len(segs) > n+1:
            if abs(e[segs[0][1]]) < abs(e[segs[-1][1]]): segs.pop(0)
            else: segs.pop()
        mx = max(abs(v) for v in e)
        if len(segs) < n+1: break
        pts = [xs[s[1]] for s in segs]
        mx = max(abs(v) for v in e)
    return c, mx


def check(f, h, ks, c, w, a, b, N=20000):
    """max |(f - h - sum c_k x^k) w| on a fine grid (for rounded c)."""
    mx = 0
    for i in range(N+1):
        x = mp.mpf(a) + (mp.mpf(b)-a)*i/N
        v = (f(x) - h(x) - sum(mp.mpf(cc)*x**k for cc,k in zip(c,ks)))*w(x)
        mx = max(mx, abs(v))
    return mx


def erf_fits():
    """The erf coefficients of kernels/unary_consts.h (see the usage)."""
    import numpy as np
    g = lambda t: mp.erf(mp.sqrt(t))/mp.sqrt(t) if t > 0 else 2/mp.sqrt(mp.pi)
    w = lambda t: 1/g(t)
    fixed = []
    for j in range(7):
        h = lambda t, fx=list(fixed): 1 + sum(mp.mpf(c)*t**k for k, c in enumerate(fx))
        c, _ = remez(g, h, list(range(j, 7)), w, 0, 1, grid=2000)
        fixed.append(f32(c[0]))
    err = check(g, lambda t: 1, list(range(7)), fixed, w, 0, 1, N=4000)
    print('A rel err %.3g' % float(err))
    for k, v in enumerate(fixed): print('  a%d = %.9gf' % (k, v))
    for name, a, b in (('B', 1.0, 2.25), ('C', 2.25, 3.92)):
        mid, half, N = (a+b)/2, (b-a)/2, 3000
        xs = mid + half*np.cos(np.pi*(np.arange(N)+0.5)/N)
        ys = np.array([float(mp.erf(x)) for x in xs]); t = xs - mid
        cs = []
        for j in range(10):
            r = ys - sum(c*t**k for k, c in enumerate(cs))
            V = np.vstack([t**k for k in range(j, 10)]).T
            cs.append(f32(np.linalg.lstsq(V, r, rcond=None)[0][0]))
        xt = np.linspace(a, b, 20001)
        e = max(abs(sum(c*(x-mid)**k for k, c in enumerate(cs)) - float(mp.erf(x))) for x in xt)
        print('%s [%g, %g] mid %g abs err %.3g' % (name, a, b, mid, e))
        for k, v in enumerate(cs): print('  c%d = %.9gf' % (k, v))


if sys.argv[1] == 'erf':
    erf_fits()
    sys.exit(0)
which = sys.argv[1]; deg = int(sys.argv[2])
if which == 'exp':
    f = mp.exp; h = lambda x: 1 + x; w = lambda x: 1/mp.exp(x); a, b = -0.3467, 0.3467
elif which == 'expm1':
    f = mp.expm1; h = lambda x: x; w = lambda x: 1/mp.expm1(x) if x != 0 else 1/mp.mpf('1e-30'); a, b = -0.3467, 0.3467
elif which == 'log1p':
    f = mp.log1p; h = lambda x: x; w = lambda x: 1/mp.log1p(x) if x != 0 else mp.mpf(1e30); a, b = mp.sqrt(0.5)-1, mp.sqrt(2)-1
ks = list(range(2, deg+1))
c, mx = remez(f, h, ks, w, a, b)
cf = [f32(x) for x in c]
print(which, deg, 'minimax rel err', mp.nstr(mx, 5), '= %.3f ulp(2^-23)' % (float(mx)*2**23))
print('float-rounded rel err', mp.nstr(check(f, h, ks, cf, w, a, b), 5))
for k, v in zip(ks, cf): print('  c%d = %.9gf' % (k, v))
