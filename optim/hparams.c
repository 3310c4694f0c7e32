/* Hyperparameters: each library's defaults per optimizer and convention, and
 * the validation every group goes through before any state exists. Never
 * touches tensor data. */
#include <math.h>
#include <string.h>

#include "optim/optim_internal.h"

const char *optic_optim_kind_name(optic_optim_kind kind) {
  switch (kind) {
#define OPTIC_OPTIM_KIND_NAME_(name, str) \
  case OPTIC_OPTIM_KIND_##name: return str;
    OPTIC_OPTIM_KIND_LIST(OPTIC_OPTIM_KIND_NAME_)
#undef OPTIC_OPTIM_KIND_NAME_
    default: return "invalid";
  }
}

const char *optic_optim_convention_name(optic_optim_convention c) {
  switch (c) {
    case OPTIC_OPTIM_CONVENTION_DEFAULT: return "default";
    case OPTIC_OPTIM_CONVENTION_PYTORCH: return "pytorch";
    case OPTIC_OPTIM_CONVENTION_OPTAX: return "optax";
    case OPTIC_OPTIM_CONVENTION_KERAS: return "keras";
    default: return "invalid";
  }
}

static bool kind_valid(optic_optim_kind k) { return (unsigned)k < OPTIC_OPTIM_KIND_COUNT_; }

/* DEFAULT → PYTORCH, or OPTAX for LAMB and Lion (torch.optim has neither). */
static optic_status resolve_convention(optic_optim_kind kind, optic_optim_convention c, const char *what,
                                       optic_optim_convention *out) {
  if ((unsigned)c >= OPTIC_OPTIM_CONVENTION_COUNT_) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: convention %d is not a known convention", what, (int)c);
  }
  bool torchless = kind == OPTIC_OPTIM_KIND_LAMB || kind == OPTIC_OPTIM_KIND_LION;
  if (c == OPTIC_OPTIM_CONVENTION_DEFAULT)
    c = torchless ? OPTIC_OPTIM_CONVENTION_OPTAX : OPTIC_OPTIM_CONVENTION_PYTORCH;
  if (c == OPTIC_OPTIM_CONVENTION_PYTORCH && torchless) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED,
                      "%s: torch.optim has no %s, so there is no pytorch convention for it (use optax or keras)", what,
                      optic_optim_kind_name(kind));
  }
  *out = c;
  return OPTIC_OK;
}

optic_status optic_optim_hparams_default(optic_optim_kind kind, optic_optim_convention convention,
                                         optic_optim_hparams *out) {
  const char *what = "optim_hparams_default";
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
  if (!kind_valid(kind))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: kind %d is not a known optimizer", what, (int)kind);
  optic_optim_convention c;
  optic_status st = resolve_convention(kind, convention, what, &c);
  if (st != OPTIC_OK) return st;
  const bool torch = c == OPTIC_OPTIM_CONVENTION_PYTORCH, keras = c == OPTIC_OPTIM_CONVENTION_KERAS;
  optic_optim_hparams h;
  memset(&h, 0, sizeof h);
  h.size = sizeof h;
  h.kind = kind;
  h.convention = c;
  h.schedule.kind = OPTIC_LR_CONSTANT;
  h.schedule.gamma = 1.0;
  /* optax has no default learning rate: it takes what the torch default is,
   * 1e-3 unless noted. */
  h.lr = 1e-3;
  h.beta1 = 0.9;
  h.beta2 = 0.999;
  h.eps = keras ? 1e-7 : 1e-8;
  switch (kind) {
    case OPTIC_OPTIM_KIND_SGD: h.lr = keras ? 1e-2 : 1e-3; break;
    case OPTIC_OPTIM_KIND_ADAM: break;
    case OPTIC_OPTIM_KIND_ADAMW: h.weight_decay = torch ? 1e-2 : keras ? 4e-3 : 1e-4; break;
    case OPTIC_OPTIM_KIND_RMSPROP:
      h.lr = torch ? 1e-2 : 1e-3;
      h.alpha = torch ? 0.99 : 0.9;
      break;
    case OPTIC_OPTIM_KIND_ADAGRAD:
      h.lr = torch ? 1e-2 : 1e-3;
      h.eps = torch ? 1e-10 : 1e-7;
      h.initial_accumulator_value = torch ? 0.0 : 0.1;
      break;
    case OPTIC_OPTIM_KIND_LAMB: h.eps = keras ? 1e-7 : 1e-6; break;
    case OPTIC_OPTIM_KIND_LION:
      h.lr = keras ? 1e-3 : 1e-4;
      h.beta2 = 0.99;
      h.weight_decay = keras ? 0.0 : 1e-3;
      break;
    default: break;
  }
  *out = h;
  return OPTIC_OK;
}

/* x must be finite and in [lo, hi) (hi_open) or [lo, hi]. */
static optic_status check_range(const char *what, const char *kind, const char *field, double x, double lo, double hi,
                                bool hi_open) {
  bool ok = isfinite(x) && x >= lo && (hi_open ? x < hi : x <= hi);
  if (ok) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s %s = %g is outside [%g, %g%c", what, kind, field, x, lo, hi,
                    hi_open ? ')' : ']');
}

/* Fields each kind reads (besides lr, weight_decay and the schedule). */
enum {
  F_MOMENTUM = 1 << 0,
  F_DAMPENING = 1 << 1,
  F_NESTEROV = 1 << 2,
  F_BETAS = 1 << 3,
  F_AMSGRAD = 1 << 4,
  F_EPS = 1 << 5,
  F_ALPHA = 1 << 6,
  F_CENTERED = 1 << 7,
  F_LR_DECAY = 1 << 8,
  F_INIT_ACC = 1 << 9
};

static unsigned used_fields(optic_optim_kind k) {
  switch (k) {
    case OPTIC_OPTIM_KIND_SGD: return F_MOMENTUM | F_DAMPENING | F_NESTEROV;
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW: return F_BETAS | F_AMSGRAD | F_EPS;
    case OPTIC_OPTIM_KIND_RMSPROP: return F_ALPHA | F_EPS | F_MOMENTUM | F_CENTERED | F_INIT_ACC;
    case OPTIC_OPTIM_KIND_ADAGRAD: return F_EPS | F_LR_DECAY | F_INIT_ACC;
    case OPTIC_OPTIM_KIND_LAMB: return F_BETAS | F_EPS;
    case OPTIC_OPTIM_KIND_LION: return F_BETAS;
    default: return 0;
  }
}

/* A field the kind does not read must hold the kind's default (as
 * optic_optim_hparams_default gives it), so a setting that would do nothing
 * (Adam with nesterov, SGD with eps) is an error, not silently ignored. */
static optic_status check_unused(const optic_optim_hparams *h, const char *what) {
  optic_optim_hparams d;
  if (optic_optim_hparams_default(h->kind, h->convention, &d) != OPTIC_OK) return OPTIC_OK; /* reported elsewhere */
  const unsigned used = used_fields(h->kind);
  const char *k = optic_optim_kind_name(h->kind);
#define UNUSED_D_(flag, field)                                                                                     \
  if (!(used & (flag)) && memcmp(&h->field, &d.field, sizeof(double)) != 0)                                        \
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,                                                                  \
                      "%s: %s does not use " #field " (set to %g); leave it at the default %g", what, k, h->field, \
                      d.field);
#define UNUSED_B_(flag, field)                                                                                        \
  if (!(used & (flag)) && h->field != d.field)                                                                        \
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s does not use " #field " (set to %s); leave it %s", what, k, \
                      h->field ? "true" : "false", d.field ? "true" : "false");
  UNUSED_D_(F_MOMENTUM, momentum)
  UNUSED_D_(F_DAMPENING, dampening)
  UNUSED_B_(F_NESTEROV, nesterov)
  UNUSED_D_(F_BETAS, beta1)
  UNUSED_D_(F_BETAS, beta2)
  UNUSED_B_(F_AMSGRAD, amsgrad)
  UNUSED_D_(F_EPS, eps)
  UNUSED_D_(F_EPS, eps_root)
  UNUSED_D_(F_ALPHA, alpha)
  UNUSED_B_(F_CENTERED, centered)
  UNUSED_D_(F_LR_DECAY, lr_decay)
  UNUSED_D_(F_INIT_ACC, initial_accumulator_value)
#undef UNUSED_D_
#undef UNUSED_B_
  return OPTIC_OK;
}

optic_status optic_optim_hparams_clear_unused(optic_optim_hparams *hp) {
  if (hp == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optim_hparams_clear_unused: NULL hparams");
  optic_optim_hparams d;
  optic_status st = optic_optim_hparams_default(hp->kind, hp->convention, &d);
  if (st != OPTIC_OK) return st;
  const unsigned used = used_fields(hp->kind);
#define CLEAR_(flag, field)                  \
  if (!(used & (flag))) hp->field = d.field; \
  else (void)0
  // clang-format off
  CLEAR_(F_MOMENTUM, momentum); CLEAR_(F_DAMPENING, dampening); CLEAR_(F_NESTEROV, nesterov); CLEAR_(F_BETAS, beta1);
  CLEAR_(F_BETAS, beta2); CLEAR_(F_AMSGRAD, amsgrad); CLEAR_(F_EPS, eps); CLEAR_(F_EPS, eps_root); CLEAR_(F_ALPHA, alpha);
  CLEAR_(F_CENTERED, centered); CLEAR_(F_LR_DECAY, lr_decay); CLEAR_(F_INIT_ACC, initial_accumulator_value);
  // clang-format on
#undef CLEAR_
  return OPTIC_OK;
}

optic_status optic_optim_kind_from_name(const char *name, optic_optim_kind *out) {
  if (name == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optim_kind_from_name: NULL argument");
  for (int k = 0; k < OPTIC_OPTIM_KIND_COUNT_; k++) {
    if (strcmp(name, optic_optim_kind_name((optic_optim_kind)k)) == 0) {
      *out = (optic_optim_kind)k;
      return OPTIC_OK;
    }
  }
  return optic_fail(
      OPTIC_ERR_INVALID_ARGUMENT,
      "optim_kind_from_name: '%.64s' is not an optimizer (sgd, adam, adamw, rmsprop, adagrad, lamb, lion)", name);
}

optic_status optic_optim_convention_from_name(const char *name, optic_optim_convention *out) {
  if (name == NULL || out == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optim_convention_from_name: NULL argument");
  for (int c = 0; c < OPTIC_OPTIM_CONVENTION_COUNT_; c++) {
    if (strcmp(name, optic_optim_convention_name((optic_optim_convention)c)) == 0) {
      *out = (optic_optim_convention)c;
      return OPTIC_OK;
    }
  }
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "optim_convention_from_name: '%.64s' is not a convention (default, pytorch, optax, keras)", name);
}

optic_status optim_hparams_check(const optic_optim_hparams *hp, const char *what, optic_optim_hparams *out) {
  if (hp == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: hparams is NULL", what);
  if (hp->size != sizeof *hp) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: hparams.size is %zu, expected %zu (use optic_optim_hparams_default)", what, hp->size,
                      sizeof *hp);
  }
  if (!kind_valid(hp->kind)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: kind %d is not a known optimizer", what, (int)hp->kind);
  }
  optic_optim_hparams h = *hp;
  optic_status st = resolve_convention(h.kind, h.convention, what, &h.convention);
  if (st != OPTIC_OK) return st;
  const char *k = optic_optim_kind_name(h.kind);
  const double inf = (double)INFINITY;
  if (!(h.lr >= 0.0) || !isfinite(h.lr)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s lr = %g; the learning rate must be finite and >= 0", what, k,
                      h.lr);
  }
  if ((st = check_range(what, k, "weight_decay", h.weight_decay, 0.0, inf, true)) != OPTIC_OK) return st;
  switch (h.kind) {
    case OPTIC_OPTIM_KIND_SGD:
      if ((st = check_range(what, k, "momentum", h.momentum, 0.0, inf, true)) != OPTIC_OK) return st;
      if ((st = check_range(what, k, "dampening", h.dampening, 0.0, 1.0, false)) != OPTIC_OK) return st;
      if (h.nesterov && (h.momentum <= 0.0 || h.dampening != 0.0)) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                          "%s: sgd nesterov needs momentum > 0 and dampening 0 (momentum = %g, dampening = %g)", what,
                          h.momentum, h.dampening);
      }
      break;
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW:
    case OPTIC_OPTIM_KIND_LAMB:
    case OPTIC_OPTIM_KIND_LION:
      if ((st = check_range(what, k, "beta1", h.beta1, 0.0, 1.0, true)) != OPTIC_OK) return st;
      if ((st = check_range(what, k, "beta2", h.beta2, 0.0, 1.0, true)) != OPTIC_OK) return st;
      if (h.amsgrad && h.convention == OPTIC_OPTIM_CONVENTION_OPTAX &&
          (h.kind == OPTIC_OPTIM_KIND_ADAM || h.kind == OPTIC_OPTIM_KIND_ADAMW)) {
        return optic_fail(OPTIC_ERR_UNSUPPORTED,
                          "%s: %s amsgrad with the optax convention (optax keeps the max of the bias-corrected "
                          "nu_hat; the kernels keep the max of the raw v as PyTorch and Keras do)",
                          what, k);
      }
      break;
    case OPTIC_OPTIM_KIND_RMSPROP:
      if ((st = check_range(what, k, "alpha", h.alpha, 0.0, 1.0, true)) != OPTIC_OK) return st;
      if ((st = check_range(what, k, "momentum", h.momentum, 0.0, inf, true)) != OPTIC_OK) return st;
      if ((st = check_range(what, k, "initial_accumulator_value", h.initial_accumulator_value, 0.0, inf, true)) !=
          OPTIC_OK)
        return st;
      break;
    case OPTIC_OPTIM_KIND_ADAGRAD:
      if ((st = check_range(what, k, "lr_decay", h.lr_decay, 0.0, inf, true)) != OPTIC_OK) return st;
      if ((st = check_range(what, k, "initial_accumulator_value", h.initial_accumulator_value, 0.0, inf, true)) !=
          OPTIC_OK)
        return st;
      break;
    default: break;
  }
  if (h.kind != OPTIC_OPTIM_KIND_SGD && h.kind != OPTIC_OPTIM_KIND_LION) {
    if (!(h.eps > 0.0) || !isfinite(h.eps)) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s eps = %g; eps must be finite and > 0", what, k, h.eps);
    }
    if ((st = check_range(what, k, "eps_root", h.eps_root, 0.0, inf, true)) != OPTIC_OK) return st;
  }
  if (h.bf16_master && h.kind != OPTIC_OPTIM_KIND_ADAM && h.kind != OPTIC_OPTIM_KIND_ADAMW) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: %s bf16_master: f32 master weights are kept for adam and adamw only", what, k);
  }
  if ((st = check_unused(&h, what)) != OPTIC_OK) return st;
  if ((st = optim_schedule_check(&h.schedule, h.lr, what)) != OPTIC_OK) return st;
  /* The values must survive the rounding to float the kernels work in. */
  if ((double)(float)h.lr == inf || (double)(float)h.eps == inf || (double)(float)h.weight_decay == inf) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s lr, eps or weight_decay overflows float", what, k);
  }
  if (out) *out = h;
  return OPTIC_OK;
}

bool optim_group_has_slot(const optic_optim_hparams *hp, optim_slot s) {
  if (s == OPTIM_SLOT_MASTER) return hp->bf16_master;
  switch (hp->kind) {
    case OPTIC_OPTIM_KIND_SGD: return s == OPTIM_SLOT_MOMENTUM_BUFFER && hp->momentum != 0.0;
    case OPTIC_OPTIM_KIND_ADAM:
    case OPTIC_OPTIM_KIND_ADAMW:
      return s == OPTIM_SLOT_EXP_AVG || s == OPTIM_SLOT_EXP_AVG_SQ || (s == OPTIM_SLOT_MAX_EXP_AVG_SQ && hp->amsgrad);
    case OPTIC_OPTIM_KIND_RMSPROP:
      return s == OPTIM_SLOT_SQUARE_AVG || (s == OPTIM_SLOT_GRAD_AVG && hp->centered) ||
             (s == OPTIM_SLOT_MOMENTUM_BUFFER && hp->momentum != 0.0);
    case OPTIC_OPTIM_KIND_ADAGRAD: return s == OPTIM_SLOT_SUM;
    case OPTIC_OPTIM_KIND_LAMB: return s == OPTIM_SLOT_EXP_AVG || s == OPTIM_SLOT_EXP_AVG_SQ;
    case OPTIC_OPTIM_KIND_LION: return s == OPTIM_SLOT_EXP_AVG;
    default: return false;
  }
}

float optim_slot_initial(const optic_optim_hparams *hp, optim_slot s) {
  if (s == OPTIM_SLOT_SUM || s == OPTIM_SLOT_SQUARE_AVG) return (float)hp->initial_accumulator_value;
  return 0.0f;
}

const char *optim_slot_name(optim_slot s) {
  static const char *const names[OPTIM_SLOT_COUNT] = {"momentum_buffer", "exp_avg",  "exp_avg_sq", "max_exp_avg_sq",
                                                      "square_avg",      "grad_avg", "sum",        "master"};
  return (unsigned)s < OPTIM_SLOT_COUNT ? names[s] : "invalid";
}
