/* Every optimizer × convention through optic_optim_step against a naive
 * double-precision implementation written here from each library's own
 * update rule (/work/shared/reference/optimizers/FORMULAS.md: PyTorch's
 * pseudo-code, Keras 3's update_step, optax's chains), NOT from optic's
 * kernel formulas: e.g. Keras Adam is evaluated in its ε-hat form with
 * α_t = γ·√(1−β2^t)/(1−β1^t), Keras SGD keeps m = μm − γg, optax adamw adds
 * λθ to the update. 10 steps on random data, five tensors of odd shapes (one
 * spanning two work blocks), with a learning-rate schedule and, in some
 * cases, global-norm clipping; the parameters and every exported state
 * tensor must be within 1e-6 (scaled error, optim_test_util.h) of the
 * reference after every step. Hyperparameters are rounded to float before
 * the reference uses them (the library computes in float), and are
 * exaggerated (λ = 0.1, ε = 0.05, ...) so every term matters. Also: the same
 * run on 1, 2 and 3 threads is bitwise identical, and two groups of
 * different kinds in one optimizer each match their reference. */
#include <string.h>

#include "tests/optim/optim_test_util.h"

#define NSTEPS 10
#define TOL 1e-6

typedef struct ref_case {
  const char *name;
  optic_optim_kind kind;
  optic_optim_convention conv;
  double lr, momentum, dampening, wd, eps, eps_root, alpha, lr_decay, init_acc;
  bool nesterov, amsgrad, centered;
  optic_lr_schedule_kind sched;
  double clip; /* clip_global_norm (0: off) */
} ref_case;

#define PT OPTIC_OPTIM_CONVENTION_PYTORCH
#define OX OPTIC_OPTIM_CONVENTION_OPTAX
#define KR OPTIC_OPTIM_CONVENTION_KERAS
#define K(x) OPTIC_OPTIM_KIND_##x
#define S(x) OPTIC_LR_##x

/* Betas are set per kind below (0.9/0.99; Lion 0.9/0.99). */
static const ref_case cases_table[] = {
    /* SGD */
    {"sgd_plain_pytorch", K(SGD), PT, .lr = 0.1, .wd = 0.1, .sched = S(STEP)},
    {"sgd_momentum_dampening_pytorch", K(SGD), PT, .lr = 0.1, .momentum = 0.9, .dampening = 0.3, .wd = 0.1,
     .sched = S(COSINE)},
    {"sgd_nesterov_pytorch", K(SGD), PT, .lr = 0.05, .momentum = 0.8, .nesterov = true, .wd = 0.05,
     .sched = S(WARMUP_COSINE), .clip = 20.0},
    {"sgd_momentum_optax", K(SGD), OX, .lr = 0.1, .momentum = 0.9, .wd = 0.1, .sched = S(EXPONENTIAL)},
    {"sgd_nesterov_optax", K(SGD), OX, .lr = 0.1, .momentum = 0.7, .nesterov = true, .sched = S(COSINE)},
    {"sgd_momentum_keras", K(SGD), KR, .lr = 0.1, .momentum = 0.9, .wd = 0.1, .sched = S(COSINE)},
    {"sgd_nesterov_keras", K(SGD), KR, .lr = 0.1, .momentum = 0.8, .nesterov = true, .sched = S(WARMUP_COSINE)},
    /* Adam */
    {"adam_pytorch", K(ADAM), PT, .lr = 0.01, .wd = 0.1, .eps = 0.05, .sched = S(COSINE)},
    {"adam_amsgrad_pytorch", K(ADAM), PT, .lr = 0.01, .eps = 0.05, .amsgrad = true, .sched = S(STEP), .clip = 25.0},
    {"adam_optax_eps_root", K(ADAM), OX, .lr = 0.01, .eps = 0.05, .eps_root = 0.02, .sched = S(WARMUP_COSINE)},
    {"adam_keras", K(ADAM), KR, .lr = 0.01, .wd = 0.1, .eps = 0.05, .sched = S(EXPONENTIAL)},
    {"adam_amsgrad_keras", K(ADAM), KR, .lr = 0.01, .eps = 0.05, .amsgrad = true, .sched = S(CONSTANT)},
    {"adamw_pytorch", K(ADAMW), PT, .lr = 0.01, .wd = 0.1, .eps = 0.05, .sched = S(WARMUP_COSINE)},
    {"adamw_optax", K(ADAMW), OX, .lr = 0.01, .wd = 0.1, .eps = 0.05, .sched = S(STEP)},
    {"adamw_keras", K(ADAMW), KR, .lr = 0.01, .wd = 0.1, .eps = 0.05, .sched = S(COSINE), .clip = 30.0},
    /* RMSprop */
    {"rmsprop_pytorch", K(RMSPROP), PT, .lr = 0.01, .alpha = 0.9, .eps = 0.05, .wd = 0.1, .sched = S(COSINE)},
    {"rmsprop_centered_momentum_pytorch", K(RMSPROP), PT, .lr = 0.01, .alpha = 0.8, .eps = 0.05, .momentum = 0.9,
     .centered = true, .sched = S(WARMUP_COSINE)},
    {"rmsprop_momentum_optax", K(RMSPROP), OX, .lr = 0.01, .alpha = 0.9, .eps = 0.05, .momentum = 0.8, .init_acc = 0.5,
     .sched = S(EXPONENTIAL)},
    {"rmsprop_centered_keras", K(RMSPROP), KR, .lr = 0.01, .alpha = 0.8, .eps = 0.05, .centered = true, .wd = 0.1,
     .sched = S(STEP)},
    {"rmsprop_momentum_keras", K(RMSPROP), KR, .lr = 0.01, .alpha = 0.9, .eps = 0.05, .momentum = 0.9,
     .sched = S(COSINE)},
    /* Adagrad */
    {"adagrad_pytorch", K(ADAGRAD), PT, .lr = 0.1, .eps = 0.05, .lr_decay = 0.1, .init_acc = 0.2, .wd = 0.1,
     .sched = S(EXPONENTIAL)},
    {"adagrad_optax", K(ADAGRAD), OX, .lr = 0.1, .eps = 0.05, .init_acc = 0.1, .sched = S(COSINE), .clip = 20.0},
    {"adagrad_keras", K(ADAGRAD), KR, .lr = 0.1, .eps = 0.05, .init_acc = 0.1, .wd = 0.1, .sched = S(STEP)},
    /* LAMB */
    {"lamb_optax", K(LAMB), OX, .lr = 0.01, .eps = 0.05, .wd = 0.1, .sched = S(WARMUP_COSINE)},
    {"lamb_optax_eps_root", K(LAMB), OX, .lr = 0.01, .eps = 0.05, .eps_root = 0.02, .sched = S(EXPONENTIAL),
     .clip = 30.0},
    {"lamb_keras", K(LAMB), KR, .lr = 0.01, .eps = 0.05, .wd = 0.1, .sched = S(COSINE)},
    /* Lion */
    {"lion_optax", K(LION), OX, .lr = 0.01, .wd = 0.1, .sched = S(COSINE)},
    {"lion_keras", K(LION), KR, .lr = 0.01, .wd = 0.1, .sched = S(WARMUP_COSINE)},
};

/* ------------------------------------------------ the hyperparameters */

static double F(double x) { return (double)(float)x; }

static optic_lr_schedule schedule_for(optic_lr_schedule_kind k, double lr) {
  optic_lr_schedule s = {.kind = k, .gamma = 1.0};
  switch (k) {
    case S(STEP): s.step_size = 3, s.gamma = 0.5; break;
    case S(EXPONENTIAL): s.gamma = 0.8; break;
    case S(COSINE): s.decay_steps = 8, s.min_lr = 0.1 * lr; break;
    case S(WARMUP_COSINE): s.warmup_steps = 3, s.decay_steps = 9, s.min_lr = 0.05 * lr; break;
    default: break;
  }
  return s;
}

static optic_optim_hparams hparams_for(const ref_case *c) {
  optic_optim_hparams h;
  OT_EXPECT_OK(optic_optim_hparams_default(c->kind, c->conv, &h));
  h.lr = c->lr;
  h.weight_decay = c->wd;
  h.momentum = c->momentum;
  h.dampening = c->dampening;
  h.nesterov = c->nesterov;
  h.beta1 = 0.9;
  h.beta2 = c->kind == K(LION) ? 0.99 : 0.95;
  h.amsgrad = c->amsgrad;
  h.eps = c->eps > 0 ? c->eps : h.eps;
  h.eps_root = c->eps_root;
  h.alpha = c->alpha;
  h.centered = c->centered;
  h.lr_decay = c->lr_decay;
  h.initial_accumulator_value = c->init_acc;
  h.schedule = schedule_for(c->sched, c->lr);
  OT_EXPECT_OK(optic_optim_hparams_clear_unused(&h)); /* the table sets every field; a kind takes only its own */
  return h;
}

/* The schedules' closed forms, written independently of optim/schedule.c. */
static double ref_lr(const optic_optim_hparams *h, int t0) {
  const optic_lr_schedule *s = &h->schedule;
  const double pi = 3.14159265358979323846;
  switch (s->kind) {
    case S(STEP): return h->lr * pow(s->gamma, floor((double)t0 / (double)s->step_size));
    case S(EXPONENTIAL): return h->lr * pow(s->gamma, t0);
    case S(COSINE): {
      double x = t0 > (int)s->decay_steps ? 1.0 : (double)t0 / (double)s->decay_steps;
      return s->min_lr + (h->lr - s->min_lr) * (1 + cos(pi * x)) / 2;
    }
    case S(WARMUP_COSINE): {
      if (t0 < (int)s->warmup_steps) return h->lr * (t0 + 1) / (double)s->warmup_steps;
      double T = (double)(s->decay_steps - s->warmup_steps), u = t0 - (double)s->warmup_steps;
      return s->min_lr + (h->lr - s->min_lr) * (1 + cos(pi * fmin(u, T) / T)) / 2;
    }
    default: return h->lr;
  }
}

/* ------------------------------------------------------ the reference */

/* θ and every state a library keeps, in double. Slots are named as the
 * export names them; Keras SGD's m is kept as Keras keeps it (m = −b). */
typedef struct ref_tensor {
  size_t n;
  double *p, *b, *m, *v, *vmax, *s, *gavg, *sum;
} ref_tensor;

static double *dzeros(size_t n, double v) {
  double *x = malloc(n * sizeof *x);
  if (!x) exit(2);
  for (size_t i = 0; i < n; i++) x[i] = v;
  return x;
}

static void ref_init(ref_tensor *r, const float *p, size_t n, double init_acc) {
  r->n = n;
  r->p = dzeros(n, 0);
  for (size_t i = 0; i < n; i++) r->p[i] = p[i];
  r->b = dzeros(n, 0), r->m = dzeros(n, 0), r->v = dzeros(n, 0), r->vmax = dzeros(n, 0);
  r->s = dzeros(n, init_acc), r->gavg = dzeros(n, 0), r->sum = dzeros(n, init_acc);
}

static void ref_free(ref_tensor *r) {
  free(r->p), free(r->b), free(r->m), free(r->v), free(r->vmax), free(r->s), free(r->gavg), free(r->sum);
}

/* Hyperparameters as the library's kernels see them (rounded to float). */
typedef struct rh {
  double lr, mu, tau, wd, b1, b2, eps, eps_root, alpha, lr_decay;
} rh;

/* One step t (1-based) of one tensor; g is the (clipped) gradient. */
static void ref_step(const ref_case *c, const rh *h, int t, ref_tensor *r, const double *g) {
  const size_t n = r->n;
  const double lr = h->lr, wd = h->wd, b1 = h->b1, b2 = h->b2, eps = h->eps;
  const double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
  double *p = r->p;
  const bool torch = c->conv == PT, keras = c->conv == KR;
  if (keras && wd != 0) { /* Keras base_optimizer._apply_weight_decay, before every update */
    for (size_t i = 0; i < n; i++) p[i] -= p[i] * wd * lr;
  }
  switch (c->kind) {
    case K(SGD):
      for (size_t i = 0; i < n; i++) {
        if (keras) { /* m = μm − γg; θ += μm − γg (nesterov) or m */
          if (h->mu == 0) {
            p[i] -= lr * g[i];
            continue;
          }
          r->b[i] = h->mu * r->b[i] - lr * g[i]; /* Keras's m itself */
          p[i] += c->nesterov ? h->mu * r->b[i] - lr * g[i] : r->b[i];
          continue;
        }
        double gi = g[i] + wd * p[i]; /* PyTorch weight_decay; optax chain(add_decayed_weights, sgd) */
        if (h->mu != 0) {
          if (torch && t == 1) r->b[i] = gi;                  /* PyTorch b_1 = g */
          else r->b[i] = h->mu * r->b[i] + (1 - h->tau) * gi; /* optax trace T = g + μT */
          gi = c->nesterov ? gi + h->mu * r->b[i] : r->b[i];
        }
        p[i] -= lr * gi;
      }
      break;
    case K(ADAM):
    case K(ADAMW):
      for (size_t i = 0; i < n; i++) {
        double gi = g[i];
        if (!keras && c->kind == K(ADAM)) gi += wd * p[i];
        if (torch && c->kind == K(ADAMW)) p[i] -= lr * wd * p[i]; /* torch AdamW: θ ← θ − γλθ first */
        r->m[i] = b1 * r->m[i] + (1 - b1) * gi;
        r->v[i] = b2 * r->v[i] + (1 - b2) * gi * gi;
        r->vmax[i] = fmax(r->vmax[i], r->v[i]);
        const double vv = c->amsgrad ? r->vmax[i] : r->v[i];
        if (keras) { /* α_t = γ√(1−β2^t)/(1−β1^t); θ −= α_t·m/(√v + ε) */
          p[i] -= lr * sqrt(bc2) / bc1 * r->m[i] / (sqrt(vv) + eps);
        } else {
          double u = (r->m[i] / bc1) / (sqrt(vv / bc2 + h->eps_root) + eps);
          if (c->conv == OX && c->kind == K(ADAMW)) u += wd * p[i]; /* optax adamw: −γ(u + λθ) */
          p[i] -= lr * u;
        }
      }
      break;
    case K(RMSPROP):
      for (size_t i = 0; i < n; i++) {
        const double gi = keras ? g[i] : g[i] + wd * p[i];
        r->s[i] = h->alpha * r->s[i] + (1 - h->alpha) * gi * gi;
        double w = r->s[i];
        if (c->centered) {
          r->gavg[i] = h->alpha * r->gavg[i] + (1 - h->alpha) * gi;
          w -= r->gavg[i] * r->gavg[i];
        }
        if (torch) { /* PyTorch: ε outside, lr outside the buffer */
          const double q = gi / (sqrt(w) + eps);
          if (h->mu > 0) {
            r->b[i] = h->mu * r->b[i] + q;
            p[i] -= lr * r->b[i];
          } else {
            p[i] -= lr * q;
          }
        } else { /* Keras: inc = γg/√(den + ε), m = μm + inc; optax: trace of γ·g/√(ν + ε) */
          const double inc = lr * gi / sqrt(w + eps);
          if (h->mu > 0) {
            r->b[i] = h->mu * r->b[i] + inc;
            p[i] -= r->b[i];
          } else {
            p[i] -= inc;
          }
        }
      }
      break;
    case K(ADAGRAD): {
      const double clr = lr / (1 + (t - 1) * h->lr_decay);
      for (size_t i = 0; i < n; i++) {
        const double gi = keras ? g[i] : g[i] + wd * p[i];
        r->sum[i] += gi * gi;
        p[i] -= torch ? clr * gi / (sqrt(r->sum[i]) + eps) : clr * gi / sqrt(r->sum[i] + eps);
      }
      break;
    }
    case K(LAMB): {
      double *u = dzeros(n, 0);
      double pn = 0, un = 0;
      for (size_t i = 0; i < n; i++) {
        r->m[i] = b1 * r->m[i] + (1 - b1) * g[i];
        r->v[i] = b2 * r->v[i] + (1 - b2) * g[i] * g[i];
        u[i] = (r->m[i] / bc1) / (sqrt(r->v[i] / bc2 + h->eps_root) + eps);
        if (!keras) u[i] += wd * p[i]; /* optax add_decayed_weights inside the trust ratio */
        pn += p[i] * p[i];
        un += u[i] * u[i];
      }
      const double ratio = (pn > 0 && un > 0) ? sqrt(pn) / sqrt(un) : 1.0;
      for (size_t i = 0; i < n; i++) p[i] -= lr * ratio * u[i];
      free(u);
      break;
    }
    case K(LION):
      for (size_t i = 0; i < n; i++) {
        const double cc = b1 * r->m[i] + (1 - b1) * g[i];
        const double sg = cc > 0 ? 1.0 : cc < 0 ? -1.0 : 0.0;
        p[i] -= keras ? lr * sg : lr * (sg + wd * p[i]);
        r->m[i] = b2 * r->m[i] + (1 - b2) * g[i];
      }
      break;
    default: break;
  }
}

/* The reference array an exported slot corresponds to (sign: Keras SGD m = −b). */
static const double *ref_slot(const ref_case *c, ref_tensor *r, const char *slot, double *sign) {
  *sign = 1.0;
  if (strcmp(slot, "momentum_buffer") == 0) {
    if (c->kind == K(SGD) && c->conv == KR) *sign = -1.0;
    return r->b;
  }
  if (strcmp(slot, "exp_avg") == 0) return r->m;
  if (strcmp(slot, "exp_avg_sq") == 0) return r->v;
  if (strcmp(slot, "max_exp_avg_sq") == 0) return r->vmax;
  if (strcmp(slot, "square_avg") == 0) return r->s;
  if (strcmp(slot, "grad_avg") == 0) return r->gavg;
  if (strcmp(slot, "sum") == 0) return r->sum;
  return NULL;
}

/* ------------------------------------------------------------ the runs */

/* Runs case c for NSTEPS through a fresh optimizer (threads), checking
 * against the reference after every step when check is set; leaves the
 * final parameters in t. */
static void run_case(const ref_case *c, int threads, ot_tensors *t, bool check, uint64_t seed, int steps) {
  optic_optim_options o = {.size = sizeof o, .threads = threads, .clip_global_norm = c->clip};
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  optic_optim_hparams h = hparams_for(c);
  OT_EXPECT_OK(optic_optim_add_group(opt, &h, t->count, t->shapes, NULL));
  ref_tensor ref[OT_NTENSORS];
  kt_rng rng = {.s = seed};
  for (size_t i = 0; i < t->count; i++) {
    kt_fill(&rng, t->p[i], t->n[i], -1.0f, 1.0f, 0);
    ref_init(&ref[i], t->p[i], t->n[i], F(c->init_acc));
  }
  double worst = 0.0;
  for (int step = 1; step <= steps && opt; step++) {
    double *dg[OT_NTENSORS], sq = 0;
    for (size_t i = 0; i < t->count; i++) {
      ot_grad(seed, (uint64_t)step, i, t->g[i], t->n[i]);
      dg[i] = dzeros(t->n[i], 0);
      for (size_t e = 0; e < t->n[i]; e++) dg[i][e] = t->g[i][e], sq += dg[i][e] * dg[i][e];
    }
    optic_optim_step_report rep;
    OT_EXPECT_OK(optic_optim_step(opt, t->tp, t->tg, t->count, &rep));
    if (!check) {
      for (size_t i = 0; i < t->count; i++) free(dg[i]);
      continue;
    }
    /* torch clip_grad_norm_: coef = max/(‖g‖ + 1e-6) when < 1. */
    if (c->clip > 0) {
      const double coef = c->clip / (sqrt(sq) + 1e-6);
      OT_CHECK(fabs(rep.grad_norm - sqrt(sq)) <= 1e-12 * sqrt(sq), "%s: grad_norm %.17g vs %.17g", c->name,
               rep.grad_norm, sqrt(sq));
      OT_CHECK(step > 1 || coef < 1.0, "%s: the test's clip bound should clip on step 1 (coef %g)", c->name, coef);
      if (coef < 1.0) {
        for (size_t i = 0; i < t->count; i++)
          for (size_t e = 0; e < t->n[i]; e++) dg[i][e] *= coef;
      }
    }
    const rh hh = {.lr = F(F(ref_lr(&h, step - 1))),
                   .mu = F(c->momentum),
                   .tau = F(c->dampening),
                   .wd = F(c->wd),
                   .b1 = F(h.beta1),
                   .b2 = F(h.beta2),
                   .eps = F(h.eps),
                   .eps_root = F(c->eps_root),
                   .alpha = F(c->alpha),
                   .lr_decay = c->lr_decay};
    for (size_t i = 0; i < t->count; i++) {
      ref_step(c, &hh, step, &ref[i], dg[i]);
      free(dg[i]);
      double e = ot_scaled_error(t->p[i], ref[i].p, t->n[i]);
      worst = fmax(worst, e);
      OT_CHECK(e <= TOL, "%s, threads %d, step %d, tensor %zu: params error %.3g > %g", c->name, threads, step, i, e,
               TOL);
    }
    optic_optim_state *st = NULL;
    OT_EXPECT_OK(optic_optim_state_export(opt, &st));
    for (size_t k = 0; st && k < st->tensor_count; k++) {
      size_t g, i;
      char slot[32];
      OT_CHECK(sscanf(st->tensors[k].name, "group.%zu/tensor.%zu/%31s", &g, &i, slot) == 3, "bad name %s",
               st->tensors[k].name);
      double sign;
      const double *rs = ref_slot(c, &ref[i], slot, &sign);
      OT_CHECK(rs != NULL, "%s: unexpected slot %s", c->name, slot);
      if (!rs) continue;
      double *signed_ref = dzeros(ref[i].n, 0);
      for (size_t e = 0; e < ref[i].n; e++) signed_ref[e] = sign * rs[e];
      double e = ot_scaled_error(st->tensors[k].tensor.data, signed_ref, ref[i].n);
      free(signed_ref);
      worst = fmax(worst, e);
      OT_CHECK(e <= TOL, "%s, step %d: state %s error %.3g > %g", c->name, step, st->tensors[k].name, e, TOL);
    }
    optic_optim_state_destroy(st);
  }
  if (check) printf("  %-36s worst scaled error %.2e\n", c->name, worst);
  for (size_t i = 0; i < t->count; i++) ref_free(&ref[i]);
  optic_optim_destroy(opt);
}

static void every_case_matches_its_reference(void) {
  for (size_t k = 0; k < sizeof cases_table / sizeof *cases_table; k++) {
    ot_tensors t;
    ot_tensors_make(&t, OT_NTENSORS);
    run_case(&cases_table[k], 2, &t, true, 100 + k, NSTEPS);
    ot_tensors_free(&t);
  }
}

/* The same case on 1, 2 and 3 threads gives the same bits (4 steps: past
 * every first-step rule and warm-up; 3 threads oversubscribe a 2-core host). */
static void thread_count_does_not_change_bits(void) {
  for (size_t k = 0; k < sizeof cases_table / sizeof *cases_table; k++) {
    ot_tensors t1, tn;
    ot_tensors_make(&t1, OT_NTENSORS);
    run_case(&cases_table[k], 1, &t1, false, 7, 4);
    for (int threads = 2; threads <= 3; threads++) {
      ot_tensors_make(&tn, OT_NTENSORS);
      run_case(&cases_table[k], threads, &tn, false, 7, 4);
      for (size_t i = 0; i < OT_NTENSORS; i++) {
        OT_CHECK(memcmp(t1.p[i], tn.p[i], t1.n[i] * sizeof(float)) == 0, "%s: %d threads differ from 1 on tensor %zu",
                 cases_table[k].name, threads, i);
      }
      ot_tensors_free(&tn);
    }
    ot_tensors_free(&t1);
  }
}

/* Two groups of different kinds (Adam on tensors 0-2, LAMB on 3-4): each
 * group's tensors end bitwise as in a single-group optimizer of that kind. */
static void groups_have_their_own_hyperparameters(void) {
  const ref_case *adam = &cases_table[7], *lamb = &cases_table[23];
  OT_CHECK(adam->kind == K(ADAM) && lamb->kind == K(LAMB), "table order changed");
  ot_tensors a, b, both;
  ot_tensors_make(&a, 3);
  ot_tensors_make(&b, OT_NTENSORS);
  ot_tensors_make(&both, OT_NTENSORS);
  optic_optim_t *o1 = NULL, *o2 = NULL, *o3 = NULL;
  OT_EXPECT_OK(optic_optim_create(NULL, &o1));
  OT_EXPECT_OK(optic_optim_create(NULL, &o2));
  OT_EXPECT_OK(optic_optim_create(NULL, &o3));
  optic_optim_hparams ha = hparams_for(adam), hl = hparams_for(lamb);
  OT_EXPECT_OK(optic_optim_add_group(o1, &ha, 3, a.shapes, NULL));
  OT_EXPECT_OK(optic_optim_add_group(o2, &hl, 2, b.shapes + 3, NULL));
  size_t gi = 9;
  OT_EXPECT_OK(optic_optim_add_group(o3, &ha, 3, both.shapes, &gi));
  OT_CHECK(gi == 0);
  OT_EXPECT_OK(optic_optim_add_group(o3, &hl, 2, both.shapes + 3, &gi));
  OT_CHECK(gi == 1 && optic_optim_group_count(o3) == 2 && optic_optim_tensor_count(o3) == 5);
  kt_rng r = {.s = 3};
  for (size_t i = 0; i < OT_NTENSORS; i++) {
    kt_fill(&r, both.p[i], both.n[i], -1.0f, 1.0f, 0);
    memcpy(i < 3 ? a.p[i] : b.p[i], both.p[i], both.n[i] * sizeof(float));
  }
  for (int step = 1; step <= NSTEPS; step++) {
    for (size_t i = 0; i < OT_NTENSORS; i++) {
      ot_grad(5, (uint64_t)step, i, both.g[i], both.n[i]);
      memcpy(i < 3 ? a.g[i] : b.g[i], both.g[i], both.n[i] * sizeof(float));
    }
    OT_EXPECT_OK(optic_optim_step(o1, a.tp, a.tg, 3, NULL));
    OT_EXPECT_OK(optic_optim_step(o2, b.tp + 3, b.tg + 3, 2, NULL));
    OT_EXPECT_OK(optic_optim_step(o3, both.tp, both.tg, 5, NULL));
  }
  for (size_t i = 0; i < OT_NTENSORS; i++) {
    const float *want = i < 3 ? a.p[i] : b.p[i];
    OT_CHECK(memcmp(want, both.p[i], both.n[i] * sizeof(float)) == 0, "tensor %zu differs in the two-group run", i);
  }
  uint64_t s0 = 0;
  double lr1 = 0;
  OT_EXPECT_OK(optic_optim_group_step(o3, 1, &s0));
  OT_EXPECT_OK(optic_optim_group_lr(o3, 1, &lr1));
  OT_CHECK(s0 == NSTEPS && fabs(lr1 - ref_lr(&hl, NSTEPS)) <= 1e-15, "group 1: step %llu, lr %g",
           (unsigned long long)s0, lr1);
  optic_optim_destroy(o1), optic_optim_destroy(o2), optic_optim_destroy(o3);
  ot_tensors_free(&a), ot_tensors_free(&b), ot_tensors_free(&both);
}

/* The optimizer dispatches to optic_isa_selected(): a few cases under every
 * ISA this CPU runs (OPTIC_ISA caps the choice; restored after). */
static void every_isa_matches_on_a_subset(void) {
  static const char *const names[] = {"sgd_nesterov_pytorch", "adam_keras", "rmsprop_centered_momentum_pytorch",
                                      "adagrad_pytorch",      "lamb_keras", "lion_optax"};
  const char *saved = getenv("OPTIC_ISA");
  char *saved_copy = saved ? strdup(saved) : NULL;
  for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
    if (!optic_isa_supported((optic_isa)isa)) continue;
    setenv("OPTIC_ISA", optic_isa_name((optic_isa)isa), 1);
    optic_isa_reselect();
    OT_CHECK(optic_isa_selected() == (optic_isa)isa, "OPTIC_ISA=%s selected %s", optic_isa_name((optic_isa)isa),
             optic_isa_name(optic_isa_selected()));
    printf(" isa %s\n", optic_isa_name((optic_isa)isa));
    for (size_t k = 0; k < sizeof cases_table / sizeof *cases_table; k++) {
      for (size_t m = 0; m < sizeof names / sizeof *names; m++) {
        if (strcmp(cases_table[k].name, names[m]) != 0) continue;
        ot_tensors t;
        ot_tensors_make(&t, OT_NTENSORS);
        run_case(&cases_table[k], 2, &t, true, 300 + k, NSTEPS);
        ot_tensors_free(&t);
      }
    }
  }
  if (saved_copy) setenv("OPTIC_ISA", saved_copy, 1);
  else unsetenv("OPTIC_ISA");
  free(saved_copy);
  optic_isa_reselect();
}

static const ot_case cases[] = {
    {"every_isa_matches_on_a_subset", every_isa_matches_on_a_subset},
    {"every_case_matches_its_reference", every_case_matches_its_reference},
    {"thread_count_does_not_change_bits", thread_count_does_not_change_bits},
    {"groups_have_their_own_hyperparameters", groups_have_their_own_hyperparameters},
};
OT_MAIN(cases)
