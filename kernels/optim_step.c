/* Step-dependent scalars the optimizer kernels take precomputed: Adam/LAMB
 * bias corrections and the LAMB trust ratio from per-sub-range norms. Plain
 * double arithmetic; never touches tensor data. */
#include <math.h>

#include "kernels/optim.h"

float optic_optim_bias_correction(float beta, uint64_t step) {
  /* 1 − β^t without the cancellation of 1 − pow(β, t) for β near 1. */
  return (float)-expm1((double)step * log((double)beta));
}

float optic_lamb_trust_ratio(const optic_lamb_norms *parts, size_t count) {
  double ps = 0.0, us = 0.0;
  for (size_t i = 0; i < count; i++) {
    ps += parts[i].param_sq;
    us += parts[i].update_sq;
  }
  if (ps == 0.0 || us == 0.0) return 1.0f;
  return (float)(sqrt(ps) / sqrt(us));
}
