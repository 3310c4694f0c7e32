/* Scalar production fallback for the clamp family: plain loops over
 * optic_clamp_f32 (no -m flags here). Semantics as in kernels/clamp.h. */
#include "kernels/clamp.h"

void optic_f32_vclamp__scalar(size_t n, const float *x, const float *lo, const float *hi, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_clamp_f32(x[i], lo[i], hi[i]);
}

void optic_f32_vclampc__scalar(size_t n, const float *x, float lo, float hi, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_clamp_f32(x[i], lo, hi);
}
