/* Scalar production fallback for the optimizer update kernels: one plain loop
 * per optimizer over the constants of kernels/optim_prep.h, which the compiler
 * may auto-vectorize for the baseline ISA (no -m flags here, no fmaf: without
 * hardware FMA that would be a library call). Semantics in kernels/optim.h. */
#include <math.h>

#include "kernels/optim_prep.h"

/* sign(c) as optax's jnp.sign: ±1, 0 for ±0, NaN for NaN. */
static inline float sign_nan(float c) { return c > 0.0f ? 1.0f : c < 0.0f ? -1.0f : c == 0.0f ? 0.0f : c; }

void optic_f32_sgd__scalar(size_t n, float *restrict param, const float *restrict grad, float *restrict momentum_buf,
                           const optic_sgd_params *p) {
  const optic_sgd_prep k = optic_sgd_prepare(p);
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i];
    if (k.d.use_l2) g += k.d.l2 * th;
    if (k.d.use_keep) th *= k.d.keep;
    if (!k.momentum) {
      param[i] = th - k.lr * g;
      continue;
    }
    float b = k.first ? k.cg * g : k.mu * momentum_buf[i] + k.cg * g;
    momentum_buf[i] = b;
    param[i] = k.nesterov ? th - (k.lr * g + k.cb * b) : th - k.s_out * b;
  }
}

void optic_f32_adam__scalar(size_t n, float *restrict param, const float *restrict grad, float *restrict m,
                            float *restrict v, float *restrict vmax, const optic_adam_params *p) {
  const optic_adam_prep k = optic_adam_prepare(p);
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i];
    if (k.d.use_l2) g += k.d.l2 * th;
    if (k.d.use_keep) th *= k.d.keep;
    float mi = k.b1 * m[i] + k.c1 * g;
    float vi = k.b2 * v[i] + k.c2 * g * g;
    m[i] = mi;
    v[i] = vi;
    float w = vi;
    if (k.amsgrad) {
      float old = vmax[i];
      w = (old > vi) ? old : vi; /* NaN in v propagates */
      vmax[i] = w;
    }
    float den = sqrtf(w * k.inv_bc2 + k.eps_root) + k.eps;
    param[i] = th - k.step * mi / den;
  }
}

void optic_f32_rmsprop__scalar(size_t n, float *restrict param, const float *restrict grad, float *restrict square_avg,
                               float *restrict grad_avg, float *restrict momentum_buf, const optic_rmsprop_params *p) {
  const optic_rmsprop_prep k = optic_rmsprop_prepare(p);
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i];
    if (k.d.use_l2) g += k.d.l2 * th;
    if (k.d.use_keep) th *= k.d.keep;
    float s = k.a * square_avg[i] + k.c * g * g;
    square_avg[i] = s;
    float w = s;
    if (k.centered) {
      float ga = k.a * grad_avg[i] + k.c * g;
      grad_avg[i] = ga;
      w = s - ga * ga;
    }
    float q = g / (sqrtf(w + k.eps_root) + k.eps);
    if (k.momentum) {
      float b = k.mu * momentum_buf[i] + k.s_in * q;
      momentum_buf[i] = b;
      param[i] = th - k.s_out * b;
    } else {
      param[i] = th - k.lr * q;
    }
  }
}

void optic_f32_adagrad__scalar(size_t n, float *restrict param, const float *restrict grad, float *restrict sum,
                               const optic_adagrad_params *p) {
  const optic_adagrad_prep k = optic_adagrad_prepare(p);
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i];
    if (k.d.use_l2) g += k.d.l2 * th;
    if (k.d.use_keep) th *= k.d.keep;
    float s = sum[i] + g * g;
    sum[i] = s;
    param[i] = th - k.lr * g / (sqrtf(s + k.eps_root) + k.eps);
  }
}

void optic_f32_lion__scalar(size_t n, float *restrict param, const float *restrict grad, float *restrict m,
                            const optic_lion_params *p) {
  const optic_lion_prep k = optic_lion_prepare(p);
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i], mi = m[i];
    float u = sign_nan(k.b1 * mi + k.c1 * g);
    if (k.use_wd) u += k.wd * th;
    param[i] = th - k.lr * u;
    m[i] = k.b2 * mi + k.c2 * g;
  }
}

/* u of LAMB from the updated moments; shared by both passes so they agree. */
static inline float lamb_update(const optic_lamb_prep *k, float th, float mi, float vi) {
  float u = (mi * k->inv_bc1) / (sqrtf(vi * k->inv_bc2 + k->eps_root) + k->eps);
  return k->use_wd ? u + k->wd * th : u;
}

void optic_f32_lamb_moments__scalar(size_t n, const float *restrict param, const float *restrict grad,
                                    float *restrict m, float *restrict v, const optic_lamb_params *p,
                                    optic_lamb_norms *norms) {
  const optic_lamb_prep k = optic_lamb_prepare(p);
  double ps = 0.0, us = 0.0;
  for (size_t i = 0; i < n; i++) {
    float th = param[i], g = grad[i];
    float mi = k.b1 * m[i] + k.c1 * g;
    float vi = k.b2 * v[i] + k.c2 * g * g;
    m[i] = mi;
    v[i] = vi;
    double u = (double)lamb_update(&k, th, mi, vi);
    ps += (double)th * (double)th;
    us += u * u;
  }
  norms->param_sq = ps;
  norms->update_sq = us;
}

void optic_f32_lamb_apply__scalar(size_t n, float *restrict param, const float *restrict m, const float *restrict v,
                                  const optic_lamb_params *p, float trust_ratio) {
  const optic_lamb_prep k = optic_lamb_prepare(p);
  const float step = (float)((double)p->lr * (double)trust_ratio);
  for (size_t i = 0; i < n; i++) {
    float th = param[i];
    param[i] = th - step * lamb_update(&k, th, m[i], v[i]);
  }
}
