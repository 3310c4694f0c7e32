/* Naive reference for the convert family: the test oracle and what constant
 * folding evaluates with. Plain loops; the integer conversions are written
 * from their definition (range checks in double, then trunc), not from the
 * kernels' helpers. Never optimize this file. */
#include <math.h>

#include "kernels/convert.h"

/* Truncation toward zero, NaN -> 0, saturating outside int32's range. Every
 * float and every s32 is exact in double, so the checks are exact. */
static int32_t trunc_to_s32(double d) {
  if (isnan(d)) return 0;
  double t = trunc(d);
  if (t > 2147483647.0) return INT32_MAX;
  if (t < -2147483648.0) return INT32_MIN;
  return (int32_t)t;
}

void optic_ref_f32_f64_cvt(size_t n, const float *x, double *y) {
  for (size_t i = 0; i < n; i++) y[i] = (double)x[i];
}

/* C's double -> float conversion is IEEE round to nearest even (Annex F,
 * which gcc and clang implement): overflow gives ±inf. */
void optic_ref_f64_f32_cvt(size_t n, const double *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}

void optic_ref_f32_s32_cvt(size_t n, const float *x, int32_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = trunc_to_s32((double)x[i]);
}

/* Through double, which holds every s32 exactly: one rounding, to nearest even. */
void optic_ref_s32_f32_cvt(size_t n, const int32_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)(double)x[i];
}

void optic_ref_f64_s32_cvt(size_t n, const double *x, int32_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = trunc_to_s32(x[i]);
}

void optic_ref_s32_f64_cvt(size_t n, const int32_t *x, double *y) {
  for (size_t i = 0; i < n; i++) y[i] = (double)x[i];
}

void optic_ref_f32_pred_cvt(size_t n, const float *x, uint8_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = x[i] != 0.0f ? 1 : 0;
}

void optic_ref_u8_f32_cvt(size_t n, const uint8_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}
