/* Internal: fused optimizer update kernels (SGD, Adam/AdamW, RMSprop, Adagrad,
 * Lion, LAMB). Each kernel reads and writes parameters and state in ONE pass
 * over [0, n); the formulas, conventions and accuracy are in
 * docs/kernels-optim.md. Kernels never allocate, validate or fail.
 * Contract (beyond kernels/common.h): every array passed is n floats; the
 * parameter, gradient and state arrays must be pairwise distinct and must not
 * overlap (no in place between them); a state pointer an option does not use
 * may be NULL. The executor splits a tensor across threads by calling a kernel
 * on disjoint sub-ranges; every kernel is elementwise except LAMB's norms. */
#ifndef OPTIC_KERNELS_OPTIM_H
#define OPTIC_KERNELS_OPTIM_H

#include "kernels/common.h"

/* X(OP, name) */
#define OPTIC_OPTIM_OP_LIST(X)    \
  X(SGD, "sgd")                   \
  X(ADAM, "adam")                 \
  X(RMSPROP, "rmsprop")           \
  X(ADAGRAD, "adagrad")           \
  X(LION, "lion")                 \
  X(LAMB_MOMENTS, "lamb_moments") \
  X(LAMB_APPLY, "lamb_apply")

typedef enum optic_optim_op {
#define OPTIC_OPTIM_OP_ENUM_(op, name) OPTIC_OPTIM_##op,
  OPTIC_OPTIM_OP_LIST(OPTIC_OPTIM_OP_ENUM_)
#undef OPTIC_OPTIM_OP_ENUM_
      OPTIC_OPTIM_OP_COUNT
} optic_optim_op;

/* How weight_decay λ enters an update (SGD, Adam, RMSprop, Adagrad). With
 * λ == 0 the term is skipped entirely (an infinite θ then stays infinite
 * instead of turning 0·inf into NaN). */
typedef enum optic_optim_decay {
  OPTIC_OPTIM_DECAY_L2 = 0,       /* g' = g + λθ before anything else (PyTorch weight_decay) */
  OPTIC_OPTIM_DECAY_DECOUPLED = 1 /* θ ← θ·(1 − γλ) before the step, g' = g (AdamW, Keras) */
} optic_optim_decay;

/* The square-root denominators of Adam, RMSprop, Adagrad and LAMB are all
 * √(x + eps_root) + eps: PyTorch puts ε outside (eps_root = 0, eps = ε);
 * optax's eps_root and Keras's/optax's ε-inside-the-root put it inside
 * (eps_root = ε, eps = 0). Both may be non-zero. */

/* SGD with momentum (PyTorch torch.optim.SGD; Keras's Sutskever form with
 * lr_in_momentum). State: momentum buffer b (unused when momentum == 0). */
typedef struct optic_sgd_params {
  float lr;           /* γ */
  float momentum;     /* μ; 0 = plain SGD */
  float dampening;    /* τ */
  float weight_decay; /* λ */
  optic_optim_decay decay;
  bool nesterov;
  bool first_step;     /* b ← s_in·g' (no μ, no dampening): PyTorch's b_1 = g */
  bool lr_in_momentum; /* the buffer accumulates γ·g (Keras) instead of g (PyTorch, optax) */
} optic_sgd_params;

/* Adam and AdamW (PyTorch formula; AdamW = decay DECOUPLED). The caller
 * precomputes the step-dependent bias corrections for step t (t >= 1), in
 * double and then rounded: optic_optim_bias_correction(). State: m, v, and
 * vmax (the running max of v; amsgrad only). */
typedef struct optic_adam_params {
  float lr, beta1, beta2;
  float eps;      /* outside the square root (PyTorch, optax eps) */
  float eps_root; /* inside the square root (optax eps_root) */
  float weight_decay;
  optic_optim_decay decay;
  bool amsgrad;
  float bias_correction1; /* 1 − β1^t */
  float bias_correction2; /* 1 − β2^t */
} optic_adam_params;

/* RMSprop (PyTorch; Keras/optax via eps_root and lr_in_momentum). State:
 * square_avg; grad_avg (centered only); momentum buffer (momentum > 0 only). */
typedef struct optic_rmsprop_params {
  float lr, alpha, eps, eps_root, momentum, weight_decay;
  optic_optim_decay decay;
  bool centered;
  bool lr_in_momentum; /* buffer = μ·buffer + γ·g'/d, θ −= buffer (Keras, optax) */
} optic_rmsprop_params;

/* Adagrad. lr is the already-decayed γ/(1 + (t−1)·lr_decay) (PyTorch); the
 * accumulator's initial value (PyTorch 0, Keras and optax 0.1) is state
 * initialisation, done by the caller. State: the sum S. */
typedef struct optic_adagrad_params {
  float lr, eps, eps_root, weight_decay;
  optic_optim_decay decay;
} optic_adagrad_params;

/* Lion (optax semantics; weight decay is decoupled by construction). State: m. */
typedef struct optic_lion_params {
  float lr, beta1, beta2, weight_decay;
} optic_lion_params;

/* LAMB (optax semantics: λθ is part of the update, inside the trust ratio).
 * Two passes per step: lamb_moments updates m and v and returns the squared
 * norms of θ and of u = m̂/(√(v̂ + eps_root) + eps) + λθ over its sub-range;
 * the caller combines every sub-range's norms (optic_lamb_trust_ratio) and
 * calls lamb_apply, which recomputes u from θ, m, v (bitwise the same u as
 * pass 1 on the same ISA) and writes θ ← θ − γ·ratio·u. Between the passes
 * θ, m and v must not change. State: m, v. */
typedef struct optic_lamb_params {
  float lr, beta1, beta2, eps, eps_root, weight_decay;
  float bias_correction1, bias_correction2;
} optic_lamb_params;

/* Squared L2 norms of one sub-range, accumulated in double. Given the same
 * ISA, sub-range and data, the sums are bitwise reproducible; different ISAs
 * sum in different orders (results agree to double rounding). */
typedef struct optic_lamb_norms {
  double param_sq;  /* Σ θ² */
  double update_sq; /* Σ u² */
} optic_lamb_norms;

typedef void (*optic_f32_sgd_fn)(size_t n, float *param, const float *grad, float *momentum_buf,
                                 const optic_sgd_params *p);
typedef void (*optic_f32_adam_fn)(size_t n, float *param, const float *grad, float *m, float *v, float *vmax,
                                  const optic_adam_params *p);
typedef void (*optic_f32_rmsprop_fn)(size_t n, float *param, const float *grad, float *square_avg, float *grad_avg,
                                     float *momentum_buf, const optic_rmsprop_params *p);
typedef void (*optic_f32_adagrad_fn)(size_t n, float *param, const float *grad, float *sum,
                                     const optic_adagrad_params *p);
typedef void (*optic_f32_lion_fn)(size_t n, float *param, const float *grad, float *m, const optic_lion_params *p);
/* Writes *norms (does not add to it). */
typedef void (*optic_f32_lamb_moments_fn)(size_t n, const float *param, const float *grad, float *m, float *v,
                                          const optic_lamb_params *p, optic_lamb_norms *norms);
typedef void (*optic_f32_lamb_apply_fn)(size_t n, float *param, const float *m, const float *v,
                                        const optic_lamb_params *p, float trust_ratio);

typedef struct optic_optim_kernels {
  optic_f32_sgd_fn sgd;
  optic_f32_adam_fn adam;
  optic_f32_rmsprop_fn rmsprop;
  optic_f32_adagrad_fn adagrad;
  optic_f32_lion_fn lion;
  optic_f32_lamb_moments_fn lamb_moments;
  optic_f32_lamb_apply_fn lamb_apply;
  optic_isa isa_of[OPTIC_OPTIM_OP_COUNT]; /* which ISA each entry really is */
} optic_optim_kernels;

/* Name of an op ("adam"). */
const char *optic_optim_op_name(optic_optim_op op);

/* The table for isa: the scalar kernels, overridden by isa's own where the
 * list has them. NULL if isa's kernels are not built into this binary. Built
 * once, thread-safe, static. */
const optic_optim_kernels *optic_optim_kernels_for(optic_isa isa);
/* The table for optic_isa_selected(). */
const optic_optim_kernels *optic_optim_kernels_get(void);

/* Mixed precision (kernels/optim_mixed.c): Adam/AdamW on bf16 parameters
 * and gradients with f32 master weights `master` and f32 state m, v, vmax
 * (vmax NULL unless amsgrad). The master and state get exactly what the
 * selected f32 Adam kernel gives for the exactly widened gradient; param[i]
 * becomes master[i] rounded once to bf16 (nearest even). Thread shares:
 * disjoint [lo, hi) ranges, as for the f32 kernels. No buffer may overlap
 * another. */
void optic_mixed_adam_bf16(size_t n, uint16_t *param, float *master, const uint16_t *grad, float *m, float *v,
                           float *vmax, const optic_adam_params *p);

/* Step scalars the caller precomputes (kernels/optim_step.c). */
/* 1 − β^t for step t >= 1, computed in double as −expm1(t·log β) and rounded
 * once (no cancellation for β near 1). */
float optic_optim_bias_correction(float beta, uint64_t step);
/* LAMB trust ratio from the norms of `count` sub-ranges that together cover
 * the tensor, summed in index order (so the ratio does not depend on which
 * thread computed which part): 1 if either norm is 0, else ‖θ‖/‖u‖ (optax
 * scale_by_trust_ratio with min_norm = 0, eps = 0; NaN if a norm is NaN and
 * the other is not 0). Computed in double, rounded once. */
float optic_lamb_trust_ratio(const optic_lamb_norms *parts, size_t count);

/* Naive references in double precision (test oracle): the textbook formulas
 * of docs/kernels-optim.md, one plain loop each, hyperparameters widened from
 * the same params structs. Same state conventions as the kernels. */
void optic_ref_sgd(size_t n, double *param, const double *grad, double *momentum_buf, const optic_sgd_params *p);
void optic_ref_adam(size_t n, double *param, const double *grad, double *m, double *v, double *vmax,
                    const optic_adam_params *p);
void optic_ref_rmsprop(size_t n, double *param, const double *grad, double *square_avg, double *grad_avg,
                       double *momentum_buf, const optic_rmsprop_params *p);
void optic_ref_adagrad(size_t n, double *param, const double *grad, double *sum, const optic_adagrad_params *p);
void optic_ref_lion(size_t n, double *param, const double *grad, double *m, const optic_lion_params *p);
/* One whole LAMB step over the full tensor (both passes); *norms (may be
 * NULL) receives the squared norms it used. */
void optic_ref_lamb(size_t n, double *param, const double *grad, double *m, double *v, const optic_lamb_params *p,
                    optic_lamb_norms *norms);

/* Every kernel in kernels/list/optim.inc is declared here. */
#define X_SGD(op, isa, fn) \
  void fn(size_t n, float *param, const float *grad, float *momentum_buf, const optic_sgd_params *p);
#define X_ADAM(op, isa, fn) \
  void fn(size_t n, float *param, const float *grad, float *m, float *v, float *vmax, const optic_adam_params *p);
#define X_RMSPROP(op, isa, fn)                                                                                \
  void fn(size_t n, float *param, const float *grad, float *square_avg, float *grad_avg, float *momentum_buf, \
          const optic_rmsprop_params *p);
#define X_ADAGRAD(op, isa, fn) \
  void fn(size_t n, float *param, const float *grad, float *sum, const optic_adagrad_params *p);
#define X_LION(op, isa, fn) void fn(size_t n, float *param, const float *grad, float *m, const optic_lion_params *p);
#define X_LAMB_MOMENTS(op, isa, fn)                                                                        \
  void fn(size_t n, const float *param, const float *grad, float *m, float *v, const optic_lamb_params *p, \
          optic_lamb_norms *norms);
#define X_LAMB_APPLY(op, isa, fn) \
  void fn(size_t n, float *param, const float *m, const float *v, const optic_lamb_params *p, float trust_ratio);
#include "kernels/list/optim.inc"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY

#endif
