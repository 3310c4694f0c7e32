/* AVX-512 optimizer update kernels: one 16-float vector per step of a single
 * pass over memory; the remainder runs the same step body with masked loads
 * and stores (masked-out lanes are never touched, so no over-read). Formulas
 * and constants in kernels/optim_prep.h; built with AVX-512 flags only. */
#include <immintrin.h>

#include "kernels/optim_prep.h"

#define STEP static inline __attribute__((always_inline))

/* `masked` is a constant at every inlined call: full vectors use plain
 * unaligned loads and stores, the remainder masked ones. Steps take base
 * pointers and an index so an unused (NULL) state pointer is never offset. */
STEP __m512 ld(const float *p, __mmask16 m, bool masked) {
  return masked ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
}
STEP void st(float *p, __m512 v, __mmask16 m, bool masked) {
  if (masked) {
    _mm512_mask_storeu_ps(p, m, v);
  } else {
    _mm512_storeu_ps(p, v);
  }
}
static inline __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << r) - 1u); }

typedef struct decay_v {
  bool use_l2, use_keep;
  __m512 l2, keep;
} decay_v;

static inline decay_v decay_v_of(const optic_decay_prep *d) {
  decay_v v = {d->use_l2, d->use_keep, _mm512_set1_ps(d->l2), _mm512_set1_ps(d->keep)};
  return v;
}
/* g' = g + λθ (L2) from the original θ, or θ ← keep·θ (decoupled). */
STEP void apply_decay(const decay_v *d, __m512 *th, __m512 *g) {
  if (d->use_l2) *g = _mm512_fmadd_ps(d->l2, *th, *g);
  if (d->use_keep) *th = _mm512_mul_ps(*th, d->keep);
}

/* ±1 with c's sign, 0 for ±0, c itself for NaN (optax's jnp.sign). */
STEP __m512 sign_nan(__m512 c) {
  const __m512i sign_bit = _mm512_set1_epi32(INT32_MIN);
  __m512i s =
      _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(c), sign_bit), _mm512_castps_si512(_mm512_set1_ps(1.0f)));
  __mmask16 nonzero = _mm512_cmp_ps_mask(c, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  __m512 r = _mm512_maskz_mov_ps(nonzero, _mm512_castsi512_ps(s));
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q), c);
}

/* Σ x² of 16 floats into two double accumulators. */
STEP void acc_sq(__m512d *lo, __m512d *hi, __m512 x) {
  __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
  __m512d b = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
  *lo = _mm512_fmadd_pd(a, a, *lo);
  *hi = _mm512_fmadd_pd(b, b, *hi);
}

/* ------------------------------------------------------------------ SGD */
typedef struct sgd_v {
  optic_sgd_prep k;
  decay_v d;
  __m512 lr, mu, cg, cb, s_out;
} sgd_v;

STEP void sgd_step(const sgd_v *c, float *param, const float *grad, float *buf, size_t i, __mmask16 m, bool masked) {
  __m512 th = ld(param + i, m, masked), g = ld(grad + i, m, masked);
  apply_decay(&c->d, &th, &g);
  if (!c->k.momentum) {
    th = _mm512_fnmadd_ps(c->lr, g, th);
  } else {
    __m512 b = _mm512_mul_ps(c->cg, g);
    if (!c->k.first) b = _mm512_fmadd_ps(c->mu, ld(buf + i, m, masked), b);
    st(buf + i, b, m, masked);
    th = c->k.nesterov ? _mm512_sub_ps(th, _mm512_fmadd_ps(c->cb, b, _mm512_mul_ps(c->lr, g)))
                       : _mm512_fnmadd_ps(c->s_out, b, th);
  }
  st(param + i, th, m, masked);
}

void optic_f32_sgd__avx512(size_t n, float *param, const float *grad, float *momentum_buf, const optic_sgd_params *p) {
  sgd_v c;
  c.k = optic_sgd_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.lr = _mm512_set1_ps(c.k.lr), c.mu = _mm512_set1_ps(c.k.mu), c.cg = _mm512_set1_ps(c.k.cg);
  c.cb = _mm512_set1_ps(c.k.cb), c.s_out = _mm512_set1_ps(c.k.s_out);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) sgd_step(&c, param, grad, momentum_buf, i, 0xFFFF, false);
  if (i < n) sgd_step(&c, param, grad, momentum_buf, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- Adam */
typedef struct adam_v {
  optic_adam_prep k;
  decay_v d;
  __m512 b1, c1, b2, c2, step, inv_bc2, eps, eps_root;
} adam_v;

STEP void adam_step(const adam_v *c, float *param, const float *grad, float *m, float *v, float *vmax, size_t i,
                    __mmask16 k, bool masked) {
  __m512 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m512 mi = _mm512_fmadd_ps(c->c1, g, _mm512_mul_ps(c->b1, ld(m + i, k, masked)));
  __m512 vi = _mm512_fmadd_ps(_mm512_mul_ps(c->c2, g), g, _mm512_mul_ps(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  __m512 w = vi;
  if (c->k.amsgrad) {
    w = _mm512_max_ps(ld(vmax + i, k, masked), vi); /* vi when either is NaN */
    st(vmax + i, w, k, masked);
  }
  __m512 den = _mm512_add_ps(_mm512_sqrt_ps(_mm512_fmadd_ps(w, c->inv_bc2, c->eps_root)), c->eps);
  th = _mm512_fnmadd_ps(c->step, _mm512_div_ps(mi, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adam__avx512(size_t n, float *param, const float *grad, float *m, float *v, float *vmax,
                            const optic_adam_params *p) {
  adam_v c;
  c.k = optic_adam_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.b1 = _mm512_set1_ps(c.k.b1), c.c1 = _mm512_set1_ps(c.k.c1);
  c.b2 = _mm512_set1_ps(c.k.b2), c.c2 = _mm512_set1_ps(c.k.c2);
  c.step = _mm512_set1_ps(c.k.step), c.inv_bc2 = _mm512_set1_ps(c.k.inv_bc2);
  c.eps = _mm512_set1_ps(c.k.eps), c.eps_root = _mm512_set1_ps(c.k.eps_root);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) adam_step(&c, param, grad, m, v, vmax, i, 0xFFFF, false);
  if (i < n) adam_step(&c, param, grad, m, v, vmax, i, tail_mask(n - i), true);
}

/* -------------------------------------------------------------- RMSprop */
typedef struct rmsprop_v {
  optic_rmsprop_prep k;
  decay_v d;
  __m512 a, c, eps, eps_root, mu, s_in, s_out, lr;
} rmsprop_v;

STEP void rmsprop_step(const rmsprop_v *c, float *param, const float *grad, float *sq, float *ga, float *buf, size_t i,
                       __mmask16 k, bool masked) {
  __m512 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m512 s = _mm512_fmadd_ps(_mm512_mul_ps(c->c, g), g, _mm512_mul_ps(c->a, ld(sq + i, k, masked)));
  st(sq + i, s, k, masked);
  __m512 w = s;
  if (c->k.centered) {
    __m512 a = _mm512_fmadd_ps(c->c, g, _mm512_mul_ps(c->a, ld(ga + i, k, masked)));
    st(ga + i, a, k, masked);
    w = _mm512_fnmadd_ps(a, a, s);
  }
  __m512 q = _mm512_div_ps(g, _mm512_add_ps(_mm512_sqrt_ps(_mm512_add_ps(w, c->eps_root)), c->eps));
  if (c->k.momentum) {
    __m512 b = _mm512_fmadd_ps(c->mu, ld(buf + i, k, masked), _mm512_mul_ps(c->s_in, q));
    st(buf + i, b, k, masked);
    th = _mm512_fnmadd_ps(c->s_out, b, th);
  } else {
    th = _mm512_fnmadd_ps(c->lr, q, th);
  }
  st(param + i, th, k, masked);
}

void optic_f32_rmsprop__avx512(size_t n, float *param, const float *grad, float *square_avg, float *grad_avg,
                               float *momentum_buf, const optic_rmsprop_params *p) {
  rmsprop_v c;
  c.k = optic_rmsprop_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.a = _mm512_set1_ps(c.k.a), c.c = _mm512_set1_ps(c.k.c);
  c.eps = _mm512_set1_ps(c.k.eps), c.eps_root = _mm512_set1_ps(c.k.eps_root);
  c.mu = _mm512_set1_ps(c.k.mu), c.s_in = _mm512_set1_ps(c.k.s_in), c.s_out = _mm512_set1_ps(c.k.s_out);
  c.lr = _mm512_set1_ps(c.k.lr);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, 0xFFFF, false);
  }
  if (i < n) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, tail_mask(n - i), true);
  }
}

/* -------------------------------------------------------------- Adagrad */
typedef struct adagrad_v {
  decay_v d;
  __m512 lr, eps, eps_root;
} adagrad_v;

STEP void adagrad_step(const adagrad_v *c, float *param, const float *grad, float *sum, size_t i, __mmask16 k,
                       bool masked) {
  __m512 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m512 s = _mm512_fmadd_ps(g, g, ld(sum + i, k, masked));
  st(sum + i, s, k, masked);
  __m512 den = _mm512_add_ps(_mm512_sqrt_ps(_mm512_add_ps(s, c->eps_root)), c->eps);
  th = _mm512_fnmadd_ps(c->lr, _mm512_div_ps(g, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adagrad__avx512(size_t n, float *param, const float *grad, float *sum, const optic_adagrad_params *p) {
  const optic_adagrad_prep k = optic_adagrad_prepare(p);
  adagrad_v c = {decay_v_of(&k.d), _mm512_set1_ps(k.lr), _mm512_set1_ps(k.eps), _mm512_set1_ps(k.eps_root)};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) adagrad_step(&c, param, grad, sum, i, 0xFFFF, false);
  if (i < n) adagrad_step(&c, param, grad, sum, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- Lion */
typedef struct lion_v {
  bool use_wd;
  __m512 b1, c1, b2, c2, lr, wd;
} lion_v;

STEP void lion_step(const lion_v *c, float *param, const float *grad, float *m, size_t i, __mmask16 k, bool masked) {
  __m512 th = ld(param + i, k, masked), g = ld(grad + i, k, masked), mi = ld(m + i, k, masked);
  __m512 u = sign_nan(_mm512_fmadd_ps(c->c1, g, _mm512_mul_ps(c->b1, mi)));
  if (c->use_wd) u = _mm512_fmadd_ps(c->wd, th, u);
  st(param + i, _mm512_fnmadd_ps(c->lr, u, th), k, masked);
  st(m + i, _mm512_fmadd_ps(c->c2, g, _mm512_mul_ps(c->b2, mi)), k, masked);
}

void optic_f32_lion__avx512(size_t n, float *param, const float *grad, float *m, const optic_lion_params *p) {
  const optic_lion_prep k = optic_lion_prepare(p);
  lion_v c = {k.use_wd,
              _mm512_set1_ps(k.b1),
              _mm512_set1_ps(k.c1),
              _mm512_set1_ps(k.b2),
              _mm512_set1_ps(k.c2),
              _mm512_set1_ps(k.lr),
              _mm512_set1_ps(k.wd)};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) lion_step(&c, param, grad, m, i, 0xFFFF, false);
  if (i < n) lion_step(&c, param, grad, m, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- LAMB */
typedef struct lamb_v {
  bool use_wd;
  __m512 b1, c1, b2, c2, inv_bc1, inv_bc2, eps, eps_root, wd;
} lamb_v;

static inline lamb_v lamb_v_of(const optic_lamb_params *p) {
  const optic_lamb_prep k = optic_lamb_prepare(p);
  lamb_v c = {k.use_wd,
              _mm512_set1_ps(k.b1),
              _mm512_set1_ps(k.c1),
              _mm512_set1_ps(k.b2),
              _mm512_set1_ps(k.c2),
              _mm512_set1_ps(k.inv_bc1),
              _mm512_set1_ps(k.inv_bc2),
              _mm512_set1_ps(k.eps),
              _mm512_set1_ps(k.eps_root),
              _mm512_set1_ps(k.wd)};
  return c;
}

/* u from the updated moments: the one formula both passes use. */
STEP __m512 lamb_update(const lamb_v *c, __m512 th, __m512 mi, __m512 vi) {
  __m512 den = _mm512_add_ps(_mm512_sqrt_ps(_mm512_fmadd_ps(vi, c->inv_bc2, c->eps_root)), c->eps);
  __m512 u = _mm512_div_ps(_mm512_mul_ps(mi, c->inv_bc1), den);
  return c->use_wd ? _mm512_fmadd_ps(c->wd, th, u) : u;
}

typedef struct lamb_acc {
  __m512d p0, p1, u0, u1;
} lamb_acc;

STEP void lamb_moments_step(const lamb_v *c, lamb_acc *acc, const float *param, const float *grad, float *m, float *v,
                            size_t i, __mmask16 k, bool masked) {
  __m512 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  __m512 mi = _mm512_fmadd_ps(c->c1, g, _mm512_mul_ps(c->b1, ld(m + i, k, masked)));
  __m512 vi = _mm512_fmadd_ps(_mm512_mul_ps(c->c2, g), g, _mm512_mul_ps(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  __m512 u = lamb_update(c, th, mi, vi);
  if (masked) u = _mm512_maskz_mov_ps(k, u); /* idle lanes may hold 0/0 */
  acc_sq(&acc->p0, &acc->p1, th);
  acc_sq(&acc->u0, &acc->u1, u);
}

void optic_f32_lamb_moments__avx512(size_t n, const float *param, const float *grad, float *m, float *v,
                                    const optic_lamb_params *p, optic_lamb_norms *norms) {
  const lamb_v c = lamb_v_of(p);
  lamb_acc acc = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) lamb_moments_step(&c, &acc, param, grad, m, v, i, 0xFFFF, false);
  if (i < n) lamb_moments_step(&c, &acc, param, grad, m, v, i, tail_mask(n - i), true);
  norms->param_sq = _mm512_reduce_add_pd(_mm512_add_pd(acc.p0, acc.p1));
  norms->update_sq = _mm512_reduce_add_pd(_mm512_add_pd(acc.u0, acc.u1));
}

STEP void lamb_apply_step(const lamb_v *c, __m512 step, float *param, const float *m, const float *v, size_t i,
                          __mmask16 k, bool masked) {
  __m512 th = ld(param + i, k, masked);
  __m512 u = lamb_update(c, th, ld(m + i, k, masked), ld(v + i, k, masked));
  st(param + i, _mm512_fnmadd_ps(step, u, th), k, masked);
}

void optic_f32_lamb_apply__avx512(size_t n, float *param, const float *m, const float *v, const optic_lamb_params *p,
                                  float trust_ratio) {
  const lamb_v c = lamb_v_of(p);
  const __m512 step = _mm512_set1_ps((float)((double)p->lr * (double)trust_ratio));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) lamb_apply_step(&c, step, param, m, v, i, 0xFFFF, false);
  if (i < n) lamb_apply_step(&c, step, param, m, v, i, tail_mask(n - i), true);
}
