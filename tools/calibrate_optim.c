/* `optic calibrate`'s figures of machine format 9 (calibrate_measure.h): per
 * optimizer kind, one core's ns per parameter element of the fused update,
 * through optic_optim_step on one thread (no profile, no clipping) with the
 * kind's library defaults (SGD: momentum 0.9), on tensors of 4096 and 16384
 * elements (cache-resident: at most 16384 x 28 bytes of parameters,
 * gradients and state). The figure is the difference of the two sizes'
 * fastest batches per element, so the step's fixed costs (checks, per-step
 * scalars, dispatch) stay out of it; format 12 takes those as their own
 * figure (the smaller step beyond its elements, median over the kinds),
 * and a clock read inside a profiled step from an SGD step of 4096
 * elements with and without the profile. */
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/error.h"
#include "tools/calibrate_measure.h"

enum { FEW = 4096, MANY = 16384 };

typedef struct optim_run {
  optic_optim_t *opt;
  optic_tensor param, grad;
} optim_run;

static optic_status run_steps(void *arg, uint64_t runs) {
  optim_run *r = arg;
  optic_status st = OPTIC_OK;
  for (uint64_t i = 0; i < runs && st == OPTIC_OK; i++) st = optic_optim_step(r->opt, &r->param, &r->grad, 1, NULL);
  return st;
}

/* The kind's defaults: PyTorch's where it has the kind, optax's otherwise. */
static optic_status kind_hparams(optic_optim_kind kind, optic_optim_hparams *h) {
  const bool torch = kind != OPTIC_OPTIM_KIND_LAMB && kind != OPTIC_OPTIM_KIND_LION;
  optic_status st =
      optic_optim_hparams_default(kind, torch ? OPTIC_OPTIM_CONVENTION_PYTORCH : OPTIC_OPTIM_CONVENTION_OPTAX, h);
  if (kind == OPTIC_OPTIM_KIND_SGD) h->momentum = 0.9;
  return st;
}

/* Fastest ns per step of kind on n elements (buf: 2n floats), profiled
 * (the step reads the thread CPU-time clock) or not. */
static optic_status time_kind(const calib_ops_plan *plan, optic_optim_kind kind, size_t n, bool profile, float *buf,
                              double *ns) {
  for (size_t i = 0; i < n; i++) {
    buf[i] = 1.0f + 0.001f * (float)(i % 997);                                 /* parameters */
    buf[n + i] = (i % 2 ? -1.0f : 1.0f) * (0.5f + 0.001f * (float)(i % 1009)); /* gradients, never 0 */
  }
  optic_optim_options o = optic_optim_options_default();
  o.threads = 1;
  o.profile = profile;
  optim_run r = {.opt = NULL};
  int64_t dim = (int64_t)n;
  optic_shape shape;
  optic_optim_hparams h;
  optic_status st = kind_hparams(kind, &h);
  if (st == OPTIC_OK) st = optic_shape_make(1, &dim, &shape);
  if (st == OPTIC_OK) st = optic_tensor_make(OPTIC_F32, &shape, buf, &r.param);
  if (st == OPTIC_OK) st = optic_tensor_make(OPTIC_F32, &shape, buf + n, &r.grad);
  if (st == OPTIC_OK) st = optic_optim_create(&o, &r.opt);
  if (st == OPTIC_OK) st = optic_optim_add_group(r.opt, &h, 1, &shape, NULL);
  if (st == OPTIC_OK) st = run_steps(&r, 2); /* untimed: state faulted in, the first step's path */
  if (st == OPTIC_OK) st = calib_best_ns_per_run(run_steps, &r, plan->trials, plan->target_ns, ns);
  optic_optim_destroy(r.opt);
  return st;
}

optic_status calib_measure_optim(const calib_ops_plan *plan, calib_optim *out) {
  memset(out, 0, sizeof *out);
  float *buf = malloc(2 * (size_t)MANY * sizeof *buf);
  if (!buf) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "calibrate: no memory for the optimizer buffers");
  optic_status st = OPTIC_OK;
  double fixed[OPTIC_OPTIM_KIND_COUNT_], sgd_few = 0, profiled = 0;
  int n_fixed = 0;
  for (int k = 0; k < OPTIC_OPTIM_KIND_COUNT_ && st == OPTIC_OK; k++) {
    double few = 0, many = 0;
    st = time_kind(plan, (optic_optim_kind)k, FEW, false, buf, &few);
    if (st == OPTIC_OK) st = time_kind(plan, (optic_optim_kind)k, MANY, false, buf, &many);
    if (st == OPTIC_OK && many > few) {
      out->element_ns[k] = (many - few) / (double)(MANY - FEW);
      fixed[n_fixed++] = few - FEW * out->element_ns[k]; /* the step beyond its elements */
    }
    if (k == OPTIC_OPTIM_KIND_SGD) sgd_few = few;
  }
  /* format 12: a step's fixed cost, and a clock read inside a profiled step
   * (two per pass: SGD's one pass) */
  if (st == OPTIC_OK) st = time_kind(plan, OPTIC_OPTIM_KIND_SGD, FEW, true, buf, &profiled);
  free(buf);
  if (st != OPTIC_OK) return st;
  const double mid = calib_median(fixed, n_fixed);
  out->step_ns = mid > 0 ? mid : 0;
  if (profiled > sgd_few && sgd_few > 0) out->clock_ns = (profiled - sgd_few) / 2;
  return OPTIC_OK;
}
