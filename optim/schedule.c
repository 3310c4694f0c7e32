/* Learning-rate schedules: closed forms of the rate at step t (docs/optim.md),
 * evaluated in double. Pure functions of (schedule, base rate, t); no state. */
#include <math.h>

#include "optim/optim_internal.h"

/* m + (γ − m)·(1 + cos(π·min(t, T)/T))/2 */
static double cosine(double base, double min_lr, uint64_t t, uint64_t T) {
  double frac = t >= T ? 1.0 : (double)t / (double)T;
  return min_lr + (base - min_lr) * 0.5 * (1.0 + cos(M_PI * frac));
}

double optim_schedule_rate(const optic_lr_schedule *s, double base, uint64_t t) {
  switch (s->kind) {
    case OPTIC_LR_STEP: return base * pow(s->gamma, (double)(t / s->step_size));
    case OPTIC_LR_EXPONENTIAL: return base * pow(s->gamma, (double)t);
    case OPTIC_LR_COSINE: return cosine(base, s->min_lr, t, s->decay_steps);
    case OPTIC_LR_WARMUP_COSINE:
      if (t < s->warmup_steps) return base * (double)(t + 1) / (double)s->warmup_steps;
      return cosine(base, s->min_lr, t - s->warmup_steps, s->decay_steps - s->warmup_steps);
    case OPTIC_LR_CONSTANT:
    default: return base;
  }
}

static optic_status check_gamma(const optic_lr_schedule *s, const char *what) {
  if (s->gamma > 0.0 && s->gamma <= 1.0) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: schedule gamma = %g is outside (0, 1]", what, s->gamma);
}

static optic_status check_cosine(const optic_lr_schedule *s, double base, const char *what) {
  if (s->decay_steps == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: cosine schedule decay_steps is 0", what);
  if (s->min_lr >= 0.0 && s->min_lr <= base) return OPTIC_OK;
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: cosine schedule min_lr = %g is outside [0, lr = %g]", what,
                    s->min_lr, base);
}

optic_status optim_schedule_check(const optic_lr_schedule *s, double base, const char *what) {
  switch (s->kind) {
    case OPTIC_LR_CONSTANT: return OPTIC_OK;
    case OPTIC_LR_STEP:
      if (s->step_size == 0) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: step schedule step_size is 0", what);
      return check_gamma(s, what);
    case OPTIC_LR_EXPONENTIAL: return check_gamma(s, what);
    case OPTIC_LR_COSINE: return check_cosine(s, base, what);
    case OPTIC_LR_WARMUP_COSINE:
      if (s->warmup_steps == 0 || s->decay_steps <= s->warmup_steps) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                          "%s: warm-up cosine schedule needs 0 < warmup_steps < decay_steps (got %llu and %llu)", what,
                          (unsigned long long)s->warmup_steps, (unsigned long long)s->decay_steps);
      }
      return check_cosine(s, base, what);
    default:
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: schedule kind %d is not a known schedule", what, (int)s->kind);
  }
}

optic_status optic_lr_schedule_value(const optic_lr_schedule *schedule, double base_lr, uint64_t t, double *out) {
  const char *what = "lr_schedule_value";
  if (schedule == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (!(base_lr >= 0.0) || !isfinite(base_lr)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: base lr = %g must be finite and >= 0", what, base_lr);
  }
  optic_status st = optim_schedule_check(schedule, base_lr, what);
  if (st != OPTIC_OK) return st;
  *out = optim_schedule_rate(schedule, base_lr, t);
  return OPTIC_OK;
}
