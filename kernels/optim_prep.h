/* Internal: the per-call scalars every optimizer kernel derives from its params
 * struct, computed once here (in double, rounded once) so all ISAs use the
 * same float constants. Static inline and ISA-neutral: included by the scalar
 * and per-ISA kernel files; never put vector code here. */
#ifndef OPTIC_KERNELS_OPTIM_PREP_H
#define OPTIC_KERNELS_OPTIM_PREP_H

#include "kernels/optim.h"

/* Weight decay split into the two forms: g' = g + l2·θ when use_l2,
 * θ ← keep·θ (keep = 1 − γλ) when use_keep; at most one is set, none for λ == 0. */
typedef struct optic_decay_prep {
  bool use_l2, use_keep;
  float l2, keep;
} optic_decay_prep;

static inline optic_decay_prep optic_decay_prepare(optic_optim_decay mode, float lr, float weight_decay) {
  optic_decay_prep d = {false, false, 0.0f, 1.0f};
  if (weight_decay == 0.0f) return d;
  if (mode == OPTIC_OPTIM_DECAY_DECOUPLED) {
    d.use_keep = true;
    d.keep = (float)(1.0 - (double)lr * (double)weight_decay);
  } else {
    d.use_l2 = true;
    d.l2 = weight_decay;
  }
  return d;
}

/* SGD: b ← first ? cg·g' : mu·b + cg·g'; then θ ← θ − (nesterov ? lr·g' + cb·b : s_out·b),
 * or θ ← θ − lr·g' without momentum. */
typedef struct optic_sgd_prep {
  optic_decay_prep d;
  bool momentum, first, nesterov;
  float lr, mu, cg, cb, s_out;
} optic_sgd_prep;

static inline optic_sgd_prep optic_sgd_prepare(const optic_sgd_params *p) {
  optic_sgd_prep k;
  double s_in = p->lr_in_momentum ? (double)p->lr : 1.0, s_out = p->lr_in_momentum ? 1.0 : (double)p->lr;
  k.d = optic_decay_prepare(p->decay, p->lr, p->weight_decay);
  k.momentum = p->momentum != 0.0f;
  k.first = p->first_step;
  k.nesterov = p->nesterov;
  k.lr = p->lr;
  k.mu = p->momentum;
  k.cg = (float)(p->first_step ? s_in : s_in * (1.0 - (double)p->dampening));
  k.cb = (float)(s_out * (double)p->momentum);
  k.s_out = (float)s_out;
  return k;
}

/* Adam: m ← b1·m + c1·g'; v ← b2·v + c2·g'²; w = amsgrad ? (vmax ← max(vmax, v)) : v;
 * θ ← θ − step·m / (√(w·inv_bc2 + eps_root) + eps). */
typedef struct optic_adam_prep {
  optic_decay_prep d;
  bool amsgrad;
  float b1, c1, b2, c2, step, inv_bc2, eps, eps_root;
} optic_adam_prep;

static inline optic_adam_prep optic_adam_prepare(const optic_adam_params *p) {
  optic_adam_prep k;
  k.d = optic_decay_prepare(p->decay, p->lr, p->weight_decay);
  k.amsgrad = p->amsgrad;
  k.b1 = p->beta1;
  k.c1 = (float)(1.0 - (double)p->beta1);
  k.b2 = p->beta2;
  k.c2 = (float)(1.0 - (double)p->beta2);
  k.step = (float)((double)p->lr / (double)p->bias_correction1);
  k.inv_bc2 = (float)(1.0 / (double)p->bias_correction2);
  k.eps = p->eps;
  k.eps_root = p->eps_root;
  return k;
}

/* RMSprop: s ← a·s + c·g'²; centered: ḡ ← a·ḡ + c·g', w = s − ḡ², else w = s;
 * d = √(w + eps_root) + eps; momentum: b ← mu·b + s_in·g'/d, θ ← θ − s_out·b;
 * otherwise θ ← θ − lr·g'/d. */
typedef struct optic_rmsprop_prep {
  optic_decay_prep d;
  bool centered, momentum;
  float a, c, eps, eps_root, mu, s_in, s_out, lr;
} optic_rmsprop_prep;

static inline optic_rmsprop_prep optic_rmsprop_prepare(const optic_rmsprop_params *p) {
  optic_rmsprop_prep k;
  k.d = optic_decay_prepare(p->decay, p->lr, p->weight_decay);
  k.centered = p->centered;
  k.momentum = p->momentum != 0.0f;
  k.a = p->alpha;
  k.c = (float)(1.0 - (double)p->alpha);
  k.eps = p->eps;
  k.eps_root = p->eps_root;
  k.mu = p->momentum;
  k.s_in = p->lr_in_momentum ? p->lr : 1.0f;
  k.s_out = p->lr_in_momentum ? 1.0f : p->lr;
  k.lr = p->lr;
  return k;
}

/* Adagrad: S ← S + g'²; θ ← θ − lr·g' / (√(S + eps_root) + eps). */
typedef struct optic_adagrad_prep {
  optic_decay_prep d;
  float lr, eps, eps_root;
} optic_adagrad_prep;

static inline optic_adagrad_prep optic_adagrad_prepare(const optic_adagrad_params *p) {
  optic_adagrad_prep k;
  k.d = optic_decay_prepare(p->decay, p->lr, p->weight_decay);
  k.lr = p->lr;
  k.eps = p->eps;
  k.eps_root = p->eps_root;
  return k;
}

/* Lion: c = b1·m + c1·g; θ ← θ − lr·(sign(c) + wd·θ); m ← b2·m + c2·g. */
typedef struct optic_lion_prep {
  bool use_wd;
  float b1, c1, b2, c2, lr, wd;
} optic_lion_prep;

static inline optic_lion_prep optic_lion_prepare(const optic_lion_params *p) {
  optic_lion_prep k;
  k.use_wd = p->weight_decay != 0.0f;
  k.b1 = p->beta1;
  k.c1 = (float)(1.0 - (double)p->beta1);
  k.b2 = p->beta2;
  k.c2 = (float)(1.0 - (double)p->beta2);
  k.lr = p->lr;
  k.wd = p->weight_decay;
  return k;
}

/* LAMB: m ← b1·m + c1·g; v ← b2·v + c2·g²;
 * u = (m·inv_bc1) / (√(v·inv_bc2 + eps_root) + eps) + wd·θ. */
typedef struct optic_lamb_prep {
  bool use_wd;
  float b1, c1, b2, c2, inv_bc1, inv_bc2, eps, eps_root, wd;
} optic_lamb_prep;

static inline optic_lamb_prep optic_lamb_prepare(const optic_lamb_params *p) {
  optic_lamb_prep k;
  k.use_wd = p->weight_decay != 0.0f;
  k.b1 = p->beta1;
  k.c1 = (float)(1.0 - (double)p->beta1);
  k.b2 = p->beta2;
  k.c2 = (float)(1.0 - (double)p->beta2);
  k.inv_bc1 = (float)(1.0 / (double)p->bias_correction1);
  k.inv_bc2 = (float)(1.0 / (double)p->bias_correction2);
  k.eps = p->eps;
  k.eps_root = p->eps_root;
  k.wd = p->weight_decay;
  return k;
}

#endif
