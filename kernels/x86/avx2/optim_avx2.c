/* AVX2+FMA optimizer update kernels: one 8-float vector per step of a single
 * pass over memory; the remainder runs the same step body with vmaskmov loads
 * and stores (masked-out lanes are never touched, so no over-read). Formulas
 * and constants in kernels/optim_prep.h; built with -mavx2 -mfma only. */
#include <immintrin.h>

#include "kernels/optim_prep.h"

#define STEP static inline __attribute__((always_inline))

/* `masked` is a constant at every inlined call: full vectors use plain
 * unaligned loads and stores, the remainder masked ones. Steps take base
 * pointers and an index so an unused (NULL) state pointer is never offset. */
STEP __m256 ld(const float *p, __m256i m, bool masked) {
  return masked ? _mm256_maskload_ps(p, m) : _mm256_loadu_ps(p);
}
STEP void st(float *p, __m256 v, __m256i m, bool masked) {
  if (masked) {
    _mm256_maskstore_ps(p, m, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}
/* Lane mask for the first r (< 8) lanes; full vectors pass no_mask(). */
static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}
static inline __m256i no_mask(void) { return _mm256_setzero_si256(); }

typedef struct decay_v {
  bool use_l2, use_keep;
  __m256 l2, keep;
} decay_v;

static inline decay_v decay_v_of(const optic_decay_prep *d) {
  decay_v v = {d->use_l2, d->use_keep, _mm256_set1_ps(d->l2), _mm256_set1_ps(d->keep)};
  return v;
}
/* g' = g + λθ (L2) from the original θ, or θ ← keep·θ (decoupled). */
STEP void apply_decay(const decay_v *d, __m256 *th, __m256 *g) {
  if (d->use_l2) *g = _mm256_fmadd_ps(d->l2, *th, *g);
  if (d->use_keep) *th = _mm256_mul_ps(*th, d->keep);
}

/* ±1 with c's sign, 0 for ±0, c itself for NaN (optax's jnp.sign). */
STEP __m256 sign_nan(__m256 c) {
  __m256 s = _mm256_or_ps(_mm256_and_ps(c, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
  s = _mm256_and_ps(s, _mm256_cmp_ps(c, _mm256_setzero_ps(), _CMP_NEQ_UQ));
  return _mm256_blendv_ps(s, c, _mm256_cmp_ps(c, c, _CMP_UNORD_Q));
}

/* Σ x² of 8 floats into two double accumulators. */
STEP void acc_sq(__m256d *lo, __m256d *hi, __m256 x) {
  __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
  __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
  *lo = _mm256_fmadd_pd(a, a, *lo);
  *hi = _mm256_fmadd_pd(b, b, *hi);
}

/* ------------------------------------------------------------------ SGD */
typedef struct sgd_v {
  optic_sgd_prep k;
  decay_v d;
  __m256 lr, mu, cg, cb, s_out;
} sgd_v;

STEP void sgd_step(const sgd_v *c, float *param, const float *grad, float *buf, size_t i, __m256i m, bool masked) {
  __m256 th = ld(param + i, m, masked), g = ld(grad + i, m, masked);
  apply_decay(&c->d, &th, &g);
  if (!c->k.momentum) {
    th = _mm256_fnmadd_ps(c->lr, g, th);
  } else {
    __m256 b = _mm256_mul_ps(c->cg, g);
    if (!c->k.first) b = _mm256_fmadd_ps(c->mu, ld(buf + i, m, masked), b);
    st(buf + i, b, m, masked);
    th = c->k.nesterov ? _mm256_sub_ps(th, _mm256_fmadd_ps(c->cb, b, _mm256_mul_ps(c->lr, g)))
                       : _mm256_fnmadd_ps(c->s_out, b, th);
  }
  st(param + i, th, m, masked);
}

void optic_f32_sgd__avx2(size_t n, float *param, const float *grad, float *momentum_buf, const optic_sgd_params *p) {
  sgd_v c;
  c.k = optic_sgd_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.lr = _mm256_set1_ps(c.k.lr), c.mu = _mm256_set1_ps(c.k.mu), c.cg = _mm256_set1_ps(c.k.cg);
  c.cb = _mm256_set1_ps(c.k.cb), c.s_out = _mm256_set1_ps(c.k.s_out);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) sgd_step(&c, param, grad, momentum_buf, i, no_mask(), false);
  if (i < n) sgd_step(&c, param, grad, momentum_buf, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- Adam */
typedef struct adam_v {
  optic_adam_prep k;
  decay_v d;
  __m256 b1, c1, b2, c2, step, inv_bc2, eps, eps_root;
} adam_v;

STEP void adam_step(const adam_v *c, float *param, const float *grad, float *m, float *v, float *vmax, size_t i,
                    __m256i k, bool masked) {
  __m256 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m256 mi = _mm256_fmadd_ps(c->c1, g, _mm256_mul_ps(c->b1, ld(m + i, k, masked)));
  __m256 vi = _mm256_fmadd_ps(_mm256_mul_ps(c->c2, g), g, _mm256_mul_ps(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  __m256 w = vi;
  if (c->k.amsgrad) {
    w = _mm256_max_ps(ld(vmax + i, k, masked), vi); /* vi when either is NaN */
    st(vmax + i, w, k, masked);
  }
  __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_fmadd_ps(w, c->inv_bc2, c->eps_root)), c->eps);
  th = _mm256_fnmadd_ps(c->step, _mm256_div_ps(mi, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adam__avx2(size_t n, float *param, const float *grad, float *m, float *v, float *vmax,
                          const optic_adam_params *p) {
  adam_v c;
  c.k = optic_adam_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.b1 = _mm256_set1_ps(c.k.b1), c.c1 = _mm256_set1_ps(c.k.c1);
  c.b2 = _mm256_set1_ps(c.k.b2), c.c2 = _mm256_set1_ps(c.k.c2);
  c.step = _mm256_set1_ps(c.k.step), c.inv_bc2 = _mm256_set1_ps(c.k.inv_bc2);
  c.eps = _mm256_set1_ps(c.k.eps), c.eps_root = _mm256_set1_ps(c.k.eps_root);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) adam_step(&c, param, grad, m, v, vmax, i, no_mask(), false);
  if (i < n) adam_step(&c, param, grad, m, v, vmax, i, tail_mask(n - i), true);
}

/* -------------------------------------------------------------- RMSprop */
typedef struct rmsprop_v {
  optic_rmsprop_prep k;
  decay_v d;
  __m256 a, c, eps, eps_root, mu, s_in, s_out, lr;
} rmsprop_v;

STEP void rmsprop_step(const rmsprop_v *c, float *param, const float *grad, float *sq, float *ga, float *buf, size_t i,
                       __m256i k, bool masked) {
  __m256 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m256 s = _mm256_fmadd_ps(_mm256_mul_ps(c->c, g), g, _mm256_mul_ps(c->a, ld(sq + i, k, masked)));
  st(sq + i, s, k, masked);
  __m256 w = s;
  if (c->k.centered) {
    __m256 a = _mm256_fmadd_ps(c->c, g, _mm256_mul_ps(c->a, ld(ga + i, k, masked)));
    st(ga + i, a, k, masked);
    w = _mm256_fnmadd_ps(a, a, s);
  }
  __m256 q = _mm256_div_ps(g, _mm256_add_ps(_mm256_sqrt_ps(_mm256_add_ps(w, c->eps_root)), c->eps));
  if (c->k.momentum) {
    __m256 b = _mm256_fmadd_ps(c->mu, ld(buf + i, k, masked), _mm256_mul_ps(c->s_in, q));
    st(buf + i, b, k, masked);
    th = _mm256_fnmadd_ps(c->s_out, b, th);
  } else {
    th = _mm256_fnmadd_ps(c->lr, q, th);
  }
  st(param + i, th, k, masked);
}

void optic_f32_rmsprop__avx2(size_t n, float *param, const float *grad, float *square_avg, float *grad_avg,
                             float *momentum_buf, const optic_rmsprop_params *p) {
  rmsprop_v c;
  c.k = optic_rmsprop_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.a = _mm256_set1_ps(c.k.a), c.c = _mm256_set1_ps(c.k.c);
  c.eps = _mm256_set1_ps(c.k.eps), c.eps_root = _mm256_set1_ps(c.k.eps_root);
  c.mu = _mm256_set1_ps(c.k.mu), c.s_in = _mm256_set1_ps(c.k.s_in), c.s_out = _mm256_set1_ps(c.k.s_out);
  c.lr = _mm256_set1_ps(c.k.lr);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, no_mask(), false);
  }
  if (i < n) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, tail_mask(n - i), true);
  }
}

/* -------------------------------------------------------------- Adagrad */
typedef struct adagrad_v {
  decay_v d;
  __m256 lr, eps, eps_root;
} adagrad_v;

STEP void adagrad_step(const adagrad_v *c, float *param, const float *grad, float *sum, size_t i, __m256i k,
                       bool masked) {
  __m256 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  __m256 s = _mm256_fmadd_ps(g, g, ld(sum + i, k, masked));
  st(sum + i, s, k, masked);
  __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_add_ps(s, c->eps_root)), c->eps);
  th = _mm256_fnmadd_ps(c->lr, _mm256_div_ps(g, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adagrad__avx2(size_t n, float *param, const float *grad, float *sum, const optic_adagrad_params *p) {
  const optic_adagrad_prep k = optic_adagrad_prepare(p);
  adagrad_v c = {decay_v_of(&k.d), _mm256_set1_ps(k.lr), _mm256_set1_ps(k.eps), _mm256_set1_ps(k.eps_root)};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) adagrad_step(&c, param, grad, sum, i, no_mask(), false);
  if (i < n) adagrad_step(&c, param, grad, sum, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- Lion */
typedef struct lion_v {
  bool use_wd;
  __m256 b1, c1, b2, c2, lr, wd;
} lion_v;

STEP void lion_step(const lion_v *c, float *param, const float *grad, float *m, size_t i, __m256i k, bool masked) {
  __m256 th = ld(param + i, k, masked), g = ld(grad + i, k, masked), mi = ld(m + i, k, masked);
  __m256 u = sign_nan(_mm256_fmadd_ps(c->c1, g, _mm256_mul_ps(c->b1, mi)));
  if (c->use_wd) u = _mm256_fmadd_ps(c->wd, th, u);
  st(param + i, _mm256_fnmadd_ps(c->lr, u, th), k, masked);
  st(m + i, _mm256_fmadd_ps(c->c2, g, _mm256_mul_ps(c->b2, mi)), k, masked);
}

void optic_f32_lion__avx2(size_t n, float *param, const float *grad, float *m, const optic_lion_params *p) {
  const optic_lion_prep k = optic_lion_prepare(p);
  lion_v c = {k.use_wd,
              _mm256_set1_ps(k.b1),
              _mm256_set1_ps(k.c1),
              _mm256_set1_ps(k.b2),
              _mm256_set1_ps(k.c2),
              _mm256_set1_ps(k.lr),
              _mm256_set1_ps(k.wd)};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) lion_step(&c, param, grad, m, i, no_mask(), false);
  if (i < n) lion_step(&c, param, grad, m, i, tail_mask(n - i), true);
}

/* ----------------------------------------------------------------- LAMB */
typedef struct lamb_v {
  bool use_wd;
  __m256 b1, c1, b2, c2, inv_bc1, inv_bc2, eps, eps_root, wd;
} lamb_v;

static inline lamb_v lamb_v_of(const optic_lamb_params *p) {
  const optic_lamb_prep k = optic_lamb_prepare(p);
  lamb_v c = {k.use_wd,
              _mm256_set1_ps(k.b1),
              _mm256_set1_ps(k.c1),
              _mm256_set1_ps(k.b2),
              _mm256_set1_ps(k.c2),
              _mm256_set1_ps(k.inv_bc1),
              _mm256_set1_ps(k.inv_bc2),
              _mm256_set1_ps(k.eps),
              _mm256_set1_ps(k.eps_root),
              _mm256_set1_ps(k.wd)};
  return c;
}

/* u from the updated moments: the one formula both passes use. */
STEP __m256 lamb_update(const lamb_v *c, __m256 th, __m256 mi, __m256 vi) {
  __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_fmadd_ps(vi, c->inv_bc2, c->eps_root)), c->eps);
  __m256 u = _mm256_div_ps(_mm256_mul_ps(mi, c->inv_bc1), den);
  return c->use_wd ? _mm256_fmadd_ps(c->wd, th, u) : u;
}

/* Horizontal sum in a fixed order (reproducible). */
static inline double sum4(__m256d x) {
  double t[4];
  _mm256_storeu_pd(t, x);
  return (t[0] + t[2]) + (t[1] + t[3]);
}

typedef struct lamb_acc {
  __m256d p0, p1, u0, u1;
} lamb_acc;

STEP void lamb_moments_step(const lamb_v *c, lamb_acc *acc, const float *param, const float *grad, float *m, float *v,
                            size_t i, __m256i k, bool masked) {
  __m256 th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  __m256 mi = _mm256_fmadd_ps(c->c1, g, _mm256_mul_ps(c->b1, ld(m + i, k, masked)));
  __m256 vi = _mm256_fmadd_ps(_mm256_mul_ps(c->c2, g), g, _mm256_mul_ps(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  __m256 u = lamb_update(c, th, mi, vi);
  if (masked) u = _mm256_and_ps(u, _mm256_castsi256_ps(k)); /* idle lanes may hold 0/0 */
  acc_sq(&acc->p0, &acc->p1, th);
  acc_sq(&acc->u0, &acc->u1, u);
}

void optic_f32_lamb_moments__avx2(size_t n, const float *param, const float *grad, float *m, float *v,
                                  const optic_lamb_params *p, optic_lamb_norms *norms) {
  const lamb_v c = lamb_v_of(p);
  lamb_acc acc = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) lamb_moments_step(&c, &acc, param, grad, m, v, i, no_mask(), false);
  if (i < n) lamb_moments_step(&c, &acc, param, grad, m, v, i, tail_mask(n - i), true);
  norms->param_sq = sum4(_mm256_add_pd(acc.p0, acc.p1));
  norms->update_sq = sum4(_mm256_add_pd(acc.u0, acc.u1));
}

STEP void lamb_apply_step(const lamb_v *c, __m256 step, float *param, const float *m, const float *v, size_t i,
                          __m256i k, bool masked) {
  __m256 th = ld(param + i, k, masked);
  __m256 u = lamb_update(c, th, ld(m + i, k, masked), ld(v + i, k, masked));
  st(param + i, _mm256_fnmadd_ps(step, u, th), k, masked);
}

void optic_f32_lamb_apply__avx2(size_t n, float *param, const float *m, const float *v, const optic_lamb_params *p,
                                float trust_ratio) {
  const lamb_v c = lamb_v_of(p);
  const __m256 step = _mm256_set1_ps((float)((double)p->lr * (double)trust_ratio));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) lamb_apply_step(&c, step, param, m, v, i, no_mask(), false);
  if (i < n) lamb_apply_step(&c, step, param, m, v, i, tail_mask(n - i), true);
}
