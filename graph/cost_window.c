/* XLA's convolution valid(d) in closed form: the number of (kernel index k,
 * output index o) pairs of one spatial dimension whose input position
 *   y = o * stride + k * window_dilation - pad_low
 * lands on a real input element (0 <= y <= (in - 1) * base_dilation and
 * y divisible by base_dilation). XLA counts it with a loop over every
 * pair (HloCostAnalysis::GetConvolutionFlops); here the count is a handful
 * of floor sums, so it costs O(log(max value)) whatever the window size.
 *
 * How: y must be a multiple of L = base_dilation. Write g = gcd(stride, L),
 * M = L / g. For a kernel index k the equation stride * o == pad - k * r
 * (mod L) (r = window_dilation) has solutions only when g divides
 * pad - k * r, which holds on one residue class k = k0 + g1 * t; there the
 * valid o form the residue class o == alpha + beta * t (mod M) inside the
 * interval [lo(k), hi(k)] where 0 <= y <= last and 0 <= o < out. The number
 * of o == a (mod M) in [lo, hi] is floor((hi - a) / M) - floor((lo - 1 - a) / M);
 * lo and hi are clamped floor-linear functions of k, so the k range splits
 * into at most three pieces on which every term is floor((A + B * t) / D),
 * and a sum of those over t is the classic floor_sum (Euclid-like,
 * logarithmic steps). All arithmetic is in __int128 with overflow checks:
 * the builder caps every window field and dimension at 2^40, which keeps
 * every intermediate below 2^125. */
#include "graph/internal.h"

typedef __int128 i128;

/* Floor division and a non-negative remainder, for d > 0. */
static i128 fdiv(i128 a, i128 d) {
  i128 q = a / d;
  return (a % d != 0 && a < 0) ? q - 1 : q;
}
static i128 fmod_pos(i128 a, i128 d) { return a - fdiv(a, d) * d; }

static i128 gcd128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = a % b;
    a = b, b = t;
  }
  return a;
}

/* The inverse of a modulo m (gcd(a, m) = 1, m >= 1); 0 when m = 1. */
static i128 inverse_mod(i128 a, i128 m) {
  i128 r0 = m, r1 = fmod_pos(a, m), s0 = 0, s1 = 1;
  while (r1 != 0) {
    i128 q = r0 / r1, t;
    t = r0 - q * r1, r0 = r1, r1 = t;
    t = s0 - q * s1, s0 = s1, s1 = t;
  }
  return fmod_pos(s0, m);
}

typedef struct checked {
  bool overflow;
} checked;

static i128 mul(checked *c, i128 a, i128 b) {
  i128 r;
  if (__builtin_mul_overflow(a, b, &r)) c->overflow = true;
  return r;
}
static i128 add(checked *c, i128 a, i128 b) {
  i128 r;
  if (__builtin_add_overflow(a, b, &r)) c->overflow = true;
  return r;
}

/* sum_{i=0}^{n-1} floor((a * i + b) / m), for n >= 0, m > 0, any a and b. */
static i128 floor_sum(checked *c, i128 n, i128 m, i128 a, i128 b) {
  i128 total = 0;
  if (n <= 0) return 0;
  i128 qa = fdiv(a, m), qb = fdiv(b, m);
  a -= qa * m, b -= qb * m;
  /* n (n - 1) / 2 with the even factor halved first */
  i128 tri = (n % 2 == 0) ? mul(c, n / 2, n - 1) : mul(c, n, (n - 1) / 2);
  total = add(c, mul(c, qa, tri), mul(c, qb, n));
  /* now 0 <= a, b < m: the lattice-point recursion */
  while (!c->overflow) {
    if (a >= m) {
      i128 q = a / m;
      tri = (n % 2 == 0) ? mul(c, n / 2, n - 1) : mul(c, n, (n - 1) / 2);
      total = add(c, total, mul(c, q, tri));
      a -= q * m;
    }
    if (b >= m) {
      total = add(c, total, mul(c, b / m, n));
      b %= m;
    }
    i128 y_max = add(c, mul(c, a, n), b);
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    i128 t = m;
    m = a, a = t;
  }
  return total;
}

/* sum over t in [t0, t1] of floor((A + B * t) / D). */
static i128 linear_floor_sum(checked *c, i128 t0, i128 t1, i128 A, i128 B, i128 D) {
  if (t1 < t0) return 0;
  return floor_sum(c, t1 - t0 + 1, D, B, add(c, A, mul(c, B, t0)));
}

/* One dimension's problem, with the residue classes solved. */
typedef struct window_problem {
  i128 out, stride, pad, rdil, last; /* last: (in - 1) * base_dilation */
  i128 M, k0, g1, alpha, beta;
} window_problem;

/* The count over kernel indices k in [ka, kb] (all inside the range where
 * the o interval is not inverted) with the given lower/upper regimes:
 * lo_zero: lo(k) = 0, else ceil((pad - k r) / stride);
 * hi_full: hi(k) = out - 1, else floor((last + pad - k r) / stride). */
static i128 piece(checked *c, const window_problem *w, i128 ka, i128 kb, bool lo_zero, bool hi_full) {
  if (kb < ka) return 0;
  i128 t0 = -fdiv(-(ka - w->k0), w->g1), t1 = fdiv(kb - w->k0, w->g1);
  if (t1 < t0) return 0;
  i128 rg = mul(c, w->rdil, w->g1);
  i128 sM = mul(c, w->stride, w->M);
  i128 slope = add(c, rg, mul(c, w->stride, w->beta));
  i128 sa = mul(c, w->stride, w->alpha);
  i128 k0r = mul(c, w->k0, w->rdil);
  i128 hi_sum, lo_sum;
  if (hi_full) {
    hi_sum = linear_floor_sum(c, t0, t1, w->out - 1 - w->alpha, -w->beta, w->M);
  } else {
    i128 ch = add(c, add(c, w->last, w->pad), -k0r);
    hi_sum = linear_floor_sum(c, t0, t1, add(c, ch, -sa), -slope, sM);
  }
  if (lo_zero) {
    lo_sum = linear_floor_sum(c, t0, t1, -1 - w->alpha, -w->beta, w->M);
  } else {
    i128 cl = add(c, add(c, w->pad, -k0r), -1);
    lo_sum = linear_floor_sum(c, t0, t1, add(c, cl, -sa), -slope, sM);
  }
  return add(c, hi_sum, -lo_sum);
}

static i128 max128(i128 a, i128 b) { return a > b ? a : b; }
static i128 min128(i128 a, i128 b) { return a < b ? a : b; }

/* Solves the residue classes of one dimension; false when no kernel index
 * can ever hit a real input element. */
static bool solve_classes(window_problem *w, i128 ldil) {
  i128 g = gcd128(w->stride, ldil);
  w->M = ldil / g;
  i128 gr = gcd128(w->rdil, g);
  if (fmod_pos(w->pad, gr) != 0) return false;
  w->g1 = g / gr;
  w->k0 = w->g1 == 1 ? 0 : fmod_pos((w->pad / gr) * inverse_mod(w->rdil / gr, w->g1), w->g1);
  /* o == u * (pad - k r) / g (mod M) with k = k0 + g1 t */
  i128 u = w->M == 1 ? 0 : inverse_mod(w->stride / g, w->M);
  i128 e0 = (w->pad - w->k0 * w->rdil) / g, e1 = w->g1 * w->rdil / g;
  w->alpha = w->M == 1 ? 0 : fmod_pos(fmod_pos(u, w->M) * fmod_pos(e0, w->M), w->M);
  w->beta = w->M == 1 ? 0 : fmod_pos(-(fmod_pos(u, w->M) * fmod_pos(e1, w->M)), w->M);
  return true;
}

optic_status graph_conv_valid_pairs(int64_t in, int64_t k_size, int64_t out, int64_t stride, int64_t pad_lo,
                                    int64_t ldil, int64_t rdil, double *count) {
  *count = 0;
  if (in <= 0 || k_size <= 0 || out <= 0) return OPTIC_OK;
  if (stride < 1 || ldil < 1 || rdil < 1) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: convolution window has stride %lld and dilations %lld/%lld",
                      (long long)stride, (long long)ldil, (long long)rdil);
  }
  window_problem w = {.out = out, .stride = stride, .pad = pad_lo, .rdil = rdil, .last = (i128)(in - 1) * ldil};
  if (!solve_classes(&w, ldil)) return OPTIC_OK;
  /* k where the o interval is not inverted: pad - out*stride <= k r <= last + pad + stride */
  i128 ka = max128(0, -fdiv(-(w.pad - w.out * w.stride), w.rdil));
  i128 kb = min128(k_size - 1, fdiv(w.last + w.pad + w.stride, w.rdil));
  if (kb < ka) return OPTIC_OK;
  i128 kl = -fdiv(-w.pad, w.rdil);                                 /* k >= kl: lo(k) = 0 */
  i128 kh = fdiv(w.last + w.pad - (w.out - 1) * w.stride, w.rdil); /* k <= kh: hi(k) = out - 1 */
  checked c = {false};
  i128 total = 0;
  /* the split points kl and kh cut [ka, kb] into at most three pieces */
  i128 cut[4] = {ka, 0, 0, kb + 1};
  cut[1] = min128(max128(min128(kl, kh + 1), ka), kb + 1);
  cut[2] = min128(max128(max128(kl, kh + 1), ka), kb + 1);
  for (int i = 0; i < 3; i++) {
    i128 a = cut[i], b = cut[i + 1] - 1;
    if (b < a) continue;
    bool lo_zero = a >= kl, hi_full = a <= kh;
    total = add(&c, total, piece(&c, &w, a, b, lo_zero, hi_full));
  }
  if (c.overflow || total < 0) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "cost: convolution window count overflows (in %lld, window %lld, out %lld)",
                      (long long)in, (long long)k_size, (long long)out);
  }
  *count = (double)total;
  return OPTIC_OK;
}
