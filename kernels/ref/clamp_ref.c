/* Naive reference for the clamp family: the test oracle and what constant
 * folding evaluates with. Written out from the definition in kernels/clamp.h
 * (binary maximum, then binary minimum); never optimize this file. */
#include <math.h>

#include "kernels/clamp.h"

static float maximum(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static float minimum(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

void optic_ref_f32_clamp(size_t n, const float *x, const float *lo, const float *hi, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = minimum(maximum(x[i], lo[i]), hi[i]);
}

void optic_ref_f32_clampc(size_t n, const float *x, float lo, float hi, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = minimum(maximum(x[i], lo), hi);
}
