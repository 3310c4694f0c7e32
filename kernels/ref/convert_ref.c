/* Naive reference for the convert family: the test oracle and what constant
 * folding evaluates with. Plain loops; the integer conversions are written
 * from their definition (range checks in double, then trunc), not from the
 * kernels' helpers. Never optimize this file. */
#include <math.h>
#include <string.h>

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

/* The halves from their definitions, one case at a time (not core/half.h's
 * bit tricks): bf16 is f32's top half rounded to nearest even, f16 has 5
 * exponent bits (bias 15) and 10 mantissa bits, subnormals m 2^-24. NaN: a
 * quiet NaN of the same sign with the payload's high bits. */
static uint16_t ref_bf16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  if (isnan(f)) return (uint16_t)((b >> 16) | 0x0040u);
  uint32_t hi = b >> 16, rest = b & 0xFFFFu;
  if (rest > 0x8000u || (rest == 0x8000u && (hi & 1u))) hi++;
  return (uint16_t)hi;
}

static uint16_t ref_f16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
  if (isnan(f)) return (uint16_t)(sign | 0x7E00u | ((b >> 13) & 0x1FFu));
  double a = fabs((double)f);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7C00u); /* 65504 + half its ulp: rounds to inf */
  int e;
  double m = frexp(a, &e);                /* a = m 2^e, m in [0.5, 1) */
  if (a == 0.0 || e < -13) {              /* below 2^-14: subnormal quantum 2^-24 */
    double q = nearbyint(a * 16777216.0); /* exact scaling; round to nearest even */
    return (uint16_t)(sign | (uint16_t)q);
  }
  double q = nearbyint(m * 2048.0); /* 11 significant bits */
  if (q == 2048.0) q = 1024.0, e++;
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)((uint32_t)q - 1024u));
}

static float ref_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  float s = (h & 0x8000u) ? -1.0f : 1.0f;
  if (e == 0x1F) {
    uint32_t b = ((uint32_t)(h & 0x8000u) << 16) | 0x7F800000u | ((uint32_t)m << 13);
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  if (e == 0) return s * (float)ldexp((double)m, -24);
  return s * (float)ldexp(1024.0 + m, e - 25);
}

void optic_ref_f32_bf16_cvt(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = ref_bf16(x[i]);
}

void optic_ref_bf16_f32_cvt(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) {
    uint32_t b = (uint32_t)x[i] << 16;
    memcpy(&y[i], &b, 4);
  }
}

void optic_ref_f32_f16_cvt(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = ref_f16(x[i]);
}

void optic_ref_f16_f32_cvt(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = ref_f16_value(x[i]);
}
