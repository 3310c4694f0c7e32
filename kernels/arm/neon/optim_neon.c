/* NEON (AArch64 Advanced SIMD) optimizer update kernels: one 4-float vector
 * per step of a single pass over memory; the last 1-3 elements are copied
 * one by one into a zero-padded vector, run through the same step body and
 * copied back (no over-read, and the tail computes exactly like the body).
 * Formulas and constants in kernels/optim_prep.h. */
#include <arm_neon.h>

#include "kernels/optim_prep.h"

#define STEP static inline __attribute__((always_inline))

/* `masked` is a constant at every inlined call: full vectors load and store
 * directly, the remainder (r < 4 lanes) goes through a padded copy. Steps
 * take base pointers and an index so an unused (NULL) state pointer is never
 * offset. */
STEP float32x4_t ld(const float *p, size_t r, bool masked) {
  if (!masked) return vld1q_f32(p);
  float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t j = 0; j < r; j++) t[j] = p[j];
  return vld1q_f32(t);
}
STEP void st(float *p, float32x4_t v, size_t r, bool masked) {
  if (!masked) {
    vst1q_f32(p, v);
    return;
  }
  float t[4];
  vst1q_f32(t, v);
  for (size_t j = 0; j < r; j++) p[j] = t[j];
}

/* x86 operand order, so the step bodies read like the other ISAs':
 * fma_(a, b, c) = a·b + c, fnma_(a, b, c) = c − a·b (fused). */
STEP float32x4_t fma_(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmaq_f32(c, a, b); }
STEP float32x4_t fnma_(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmsq_f32(c, a, b); }

/* b when a > b fails (so b when either is NaN), like x86 max_ps(a, b). */
STEP float32x4_t max_nan(float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }

/* The first r lanes of x, zeros elsewhere. */
STEP float32x4_t first_lanes(float32x4_t x, size_t r) {
  static const uint32_t idx[4] = {0, 1, 2, 3};
  uint32x4_t keep = vcltq_u32(vld1q_u32(idx), vdupq_n_u32((uint32_t)r));
  return vbslq_f32(keep, x, vdupq_n_f32(0.0f));
}

typedef struct decay_v {
  bool use_l2, use_keep;
  float32x4_t l2, keep;
} decay_v;

static inline decay_v decay_v_of(const optic_decay_prep *d) {
  decay_v v = {d->use_l2, d->use_keep, vdupq_n_f32(d->l2), vdupq_n_f32(d->keep)};
  return v;
}
/* g' = g + λθ (L2) from the original θ, or θ ← keep·θ (decoupled). */
STEP void apply_decay(const decay_v *d, float32x4_t *th, float32x4_t *g) {
  if (d->use_l2) *g = fma_(d->l2, *th, *g);
  if (d->use_keep) *th = vmulq_f32(*th, d->keep);
}

/* ±1 with c's sign, 0 for ±0, c itself for NaN (optax's jnp.sign). */
STEP float32x4_t sign_nan(float32x4_t c) {
  float32x4_t s = vbslq_f32(vdupq_n_u32(0x80000000u), c, vdupq_n_f32(1.0f));
  s = vbslq_f32(vceqzq_f32(c), vdupq_n_f32(0.0f), s);
  return vbslq_f32(vceqq_f32(c, c), s, c);
}

/* Σ x² of 4 floats into two double accumulators. */
STEP void acc_sq(float64x2_t *lo, float64x2_t *hi, float32x4_t x) {
  float64x2_t a = vcvt_f64_f32(vget_low_f32(x)), b = vcvt_high_f64_f32(x);
  *lo = vfmaq_f64(*lo, a, a);
  *hi = vfmaq_f64(*hi, b, b);
}
static inline double sum2(float64x2_t x) { return vgetq_lane_f64(x, 0) + vgetq_lane_f64(x, 1); }

/* ------------------------------------------------------------------ SGD */
typedef struct sgd_v {
  optic_sgd_prep k;
  decay_v d;
  float32x4_t lr, mu, cg, cb, s_out;
} sgd_v;

STEP void sgd_step(const sgd_v *c, float *param, const float *grad, float *buf, size_t i, size_t m, bool masked) {
  float32x4_t th = ld(param + i, m, masked), g = ld(grad + i, m, masked);
  apply_decay(&c->d, &th, &g);
  if (!c->k.momentum) {
    th = fnma_(c->lr, g, th);
  } else {
    float32x4_t b = vmulq_f32(c->cg, g);
    if (!c->k.first) b = fma_(c->mu, ld(buf + i, m, masked), b);
    st(buf + i, b, m, masked);
    th = c->k.nesterov ? vsubq_f32(th, fma_(c->cb, b, vmulq_f32(c->lr, g))) : fnma_(c->s_out, b, th);
  }
  st(param + i, th, m, masked);
}

void optic_f32_sgd__neon(size_t n, float *param, const float *grad, float *momentum_buf, const optic_sgd_params *p) {
  sgd_v c;
  c.k = optic_sgd_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.lr = vdupq_n_f32(c.k.lr), c.mu = vdupq_n_f32(c.k.mu), c.cg = vdupq_n_f32(c.k.cg);
  c.cb = vdupq_n_f32(c.k.cb), c.s_out = vdupq_n_f32(c.k.s_out);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) sgd_step(&c, param, grad, momentum_buf, i, 4, false);
  if (i < n) sgd_step(&c, param, grad, momentum_buf, i, n - i, true);
}

/* ----------------------------------------------------------------- Adam */
typedef struct adam_v {
  optic_adam_prep k;
  decay_v d;
  float32x4_t b1, c1, b2, c2, step, inv_bc2, eps, eps_root;
} adam_v;

STEP void adam_step(const adam_v *c, float *param, const float *grad, float *m, float *v, float *vmax, size_t i,
                    size_t k, bool masked) {
  float32x4_t th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  float32x4_t mi = fma_(c->c1, g, vmulq_f32(c->b1, ld(m + i, k, masked)));
  float32x4_t vi = fma_(vmulq_f32(c->c2, g), g, vmulq_f32(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  float32x4_t w = vi;
  if (c->k.amsgrad) {
    w = max_nan(ld(vmax + i, k, masked), vi); /* vi when either is NaN */
    st(vmax + i, w, k, masked);
  }
  float32x4_t den = vaddq_f32(vsqrtq_f32(fma_(w, c->inv_bc2, c->eps_root)), c->eps);
  th = fnma_(c->step, vdivq_f32(mi, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adam__neon(size_t n, float *param, const float *grad, float *m, float *v, float *vmax,
                          const optic_adam_params *p) {
  adam_v c;
  c.k = optic_adam_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.b1 = vdupq_n_f32(c.k.b1), c.c1 = vdupq_n_f32(c.k.c1);
  c.b2 = vdupq_n_f32(c.k.b2), c.c2 = vdupq_n_f32(c.k.c2);
  c.step = vdupq_n_f32(c.k.step), c.inv_bc2 = vdupq_n_f32(c.k.inv_bc2);
  c.eps = vdupq_n_f32(c.k.eps), c.eps_root = vdupq_n_f32(c.k.eps_root);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) adam_step(&c, param, grad, m, v, vmax, i, 4, false);
  if (i < n) adam_step(&c, param, grad, m, v, vmax, i, n - i, true);
}

/* -------------------------------------------------------------- RMSprop */
typedef struct rmsprop_v {
  optic_rmsprop_prep k;
  decay_v d;
  float32x4_t a, c, eps, eps_root, mu, s_in, s_out, lr;
} rmsprop_v;

STEP void rmsprop_step(const rmsprop_v *c, float *param, const float *grad, float *sq, float *ga, float *buf, size_t i,
                       size_t k, bool masked) {
  float32x4_t th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  float32x4_t s = fma_(vmulq_f32(c->c, g), g, vmulq_f32(c->a, ld(sq + i, k, masked)));
  st(sq + i, s, k, masked);
  float32x4_t w = s;
  if (c->k.centered) {
    float32x4_t a = fma_(c->c, g, vmulq_f32(c->a, ld(ga + i, k, masked)));
    st(ga + i, a, k, masked);
    w = fnma_(a, a, s);
  }
  float32x4_t q = vdivq_f32(g, vaddq_f32(vsqrtq_f32(vaddq_f32(w, c->eps_root)), c->eps));
  if (c->k.momentum) {
    float32x4_t b = fma_(c->mu, ld(buf + i, k, masked), vmulq_f32(c->s_in, q));
    st(buf + i, b, k, masked);
    th = fnma_(c->s_out, b, th);
  } else {
    th = fnma_(c->lr, q, th);
  }
  st(param + i, th, k, masked);
}

void optic_f32_rmsprop__neon(size_t n, float *param, const float *grad, float *square_avg, float *grad_avg,
                             float *momentum_buf, const optic_rmsprop_params *p) {
  rmsprop_v c;
  c.k = optic_rmsprop_prepare(p);
  c.d = decay_v_of(&c.k.d);
  c.a = vdupq_n_f32(c.k.a), c.c = vdupq_n_f32(c.k.c);
  c.eps = vdupq_n_f32(c.k.eps), c.eps_root = vdupq_n_f32(c.k.eps_root);
  c.mu = vdupq_n_f32(c.k.mu), c.s_in = vdupq_n_f32(c.k.s_in), c.s_out = vdupq_n_f32(c.k.s_out);
  c.lr = vdupq_n_f32(c.k.lr);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, 4, false);
  }
  if (i < n) {
    rmsprop_step(&c, param, grad, square_avg, grad_avg, momentum_buf, i, n - i, true);
  }
}

/* -------------------------------------------------------------- Adagrad */
typedef struct adagrad_v {
  decay_v d;
  float32x4_t lr, eps, eps_root;
} adagrad_v;

STEP void adagrad_step(const adagrad_v *c, float *param, const float *grad, float *sum, size_t i, size_t k,
                       bool masked) {
  float32x4_t th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  apply_decay(&c->d, &th, &g);
  float32x4_t s = fma_(g, g, ld(sum + i, k, masked));
  st(sum + i, s, k, masked);
  float32x4_t den = vaddq_f32(vsqrtq_f32(vaddq_f32(s, c->eps_root)), c->eps);
  th = fnma_(c->lr, vdivq_f32(g, den), th);
  st(param + i, th, k, masked);
}

void optic_f32_adagrad__neon(size_t n, float *param, const float *grad, float *sum, const optic_adagrad_params *p) {
  const optic_adagrad_prep k = optic_adagrad_prepare(p);
  adagrad_v c = {decay_v_of(&k.d), vdupq_n_f32(k.lr), vdupq_n_f32(k.eps), vdupq_n_f32(k.eps_root)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) adagrad_step(&c, param, grad, sum, i, 4, false);
  if (i < n) adagrad_step(&c, param, grad, sum, i, n - i, true);
}

/* ----------------------------------------------------------------- Lion */
typedef struct lion_v {
  bool use_wd;
  float32x4_t b1, c1, b2, c2, lr, wd;
} lion_v;

STEP void lion_step(const lion_v *c, float *param, const float *grad, float *m, size_t i, size_t k, bool masked) {
  float32x4_t th = ld(param + i, k, masked), g = ld(grad + i, k, masked), mi = ld(m + i, k, masked);
  float32x4_t u = sign_nan(fma_(c->c1, g, vmulq_f32(c->b1, mi)));
  if (c->use_wd) u = fma_(c->wd, th, u);
  st(param + i, fnma_(c->lr, u, th), k, masked);
  st(m + i, fma_(c->c2, g, vmulq_f32(c->b2, mi)), k, masked);
}

void optic_f32_lion__neon(size_t n, float *param, const float *grad, float *m, const optic_lion_params *p) {
  const optic_lion_prep k = optic_lion_prepare(p);
  lion_v c = {k.use_wd,          vdupq_n_f32(k.b1), vdupq_n_f32(k.c1), vdupq_n_f32(k.b2),
              vdupq_n_f32(k.c2), vdupq_n_f32(k.lr), vdupq_n_f32(k.wd)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) lion_step(&c, param, grad, m, i, 4, false);
  if (i < n) lion_step(&c, param, grad, m, i, n - i, true);
}

/* ----------------------------------------------------------------- LAMB */
typedef struct lamb_v {
  bool use_wd;
  float32x4_t b1, c1, b2, c2, inv_bc1, inv_bc2, eps, eps_root, wd;
} lamb_v;

static inline lamb_v lamb_v_of(const optic_lamb_params *p) {
  const optic_lamb_prep k = optic_lamb_prepare(p);
  lamb_v c = {k.use_wd,
              vdupq_n_f32(k.b1),
              vdupq_n_f32(k.c1),
              vdupq_n_f32(k.b2),
              vdupq_n_f32(k.c2),
              vdupq_n_f32(k.inv_bc1),
              vdupq_n_f32(k.inv_bc2),
              vdupq_n_f32(k.eps),
              vdupq_n_f32(k.eps_root),
              vdupq_n_f32(k.wd)};
  return c;
}

/* u from the updated moments: the one formula both passes use. */
STEP float32x4_t lamb_update(const lamb_v *c, float32x4_t th, float32x4_t mi, float32x4_t vi) {
  float32x4_t den = vaddq_f32(vsqrtq_f32(fma_(vi, c->inv_bc2, c->eps_root)), c->eps);
  float32x4_t u = vdivq_f32(vmulq_f32(mi, c->inv_bc1), den);
  return c->use_wd ? fma_(c->wd, th, u) : u;
}

typedef struct lamb_acc {
  float64x2_t p0, p1, u0, u1;
} lamb_acc;

STEP void lamb_moments_step(const lamb_v *c, lamb_acc *acc, const float *param, const float *grad, float *m, float *v,
                            size_t i, size_t k, bool masked) {
  float32x4_t th = ld(param + i, k, masked), g = ld(grad + i, k, masked);
  float32x4_t mi = fma_(c->c1, g, vmulq_f32(c->b1, ld(m + i, k, masked)));
  float32x4_t vi = fma_(vmulq_f32(c->c2, g), g, vmulq_f32(c->b2, ld(v + i, k, masked)));
  st(m + i, mi, k, masked);
  st(v + i, vi, k, masked);
  float32x4_t u = lamb_update(c, th, mi, vi);
  if (masked) u = first_lanes(u, k); /* idle lanes may hold 0/0 */
  acc_sq(&acc->p0, &acc->p1, th);
  acc_sq(&acc->u0, &acc->u1, u);
}

void optic_f32_lamb_moments__neon(size_t n, const float *param, const float *grad, float *m, float *v,
                                  const optic_lamb_params *p, optic_lamb_norms *norms) {
  const lamb_v c = lamb_v_of(p);
  lamb_acc acc = {vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) lamb_moments_step(&c, &acc, param, grad, m, v, i, 4, false);
  if (i < n) lamb_moments_step(&c, &acc, param, grad, m, v, i, n - i, true);
  norms->param_sq = sum2(vaddq_f64(acc.p0, acc.p1));
  norms->update_sq = sum2(vaddq_f64(acc.u0, acc.u1));
}

STEP void lamb_apply_step(const lamb_v *c, float32x4_t step, float *param, const float *m, const float *v, size_t i,
                          size_t k, bool masked) {
  float32x4_t th = ld(param + i, k, masked);
  float32x4_t u = lamb_update(c, th, ld(m + i, k, masked), ld(v + i, k, masked));
  st(param + i, fnma_(step, u, th), k, masked);
}

void optic_f32_lamb_apply__neon(size_t n, float *param, const float *m, const float *v, const optic_lamb_params *p,
                                float trust_ratio) {
  const lamb_v c = lamb_v_of(p);
  const float32x4_t step = vdupq_n_f32((float)((double)p->lr * (double)trust_ratio));
  size_t i = 0;
  for (; i + 4 <= n; i += 4) lamb_apply_step(&c, step, param, m, v, i, 4, false);
  if (i < n) lamb_apply_step(&c, step, param, m, v, i, n - i, true);
}
