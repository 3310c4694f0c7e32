/* Scalar production fallback for the convert family: plain loops the compiler
 * may auto-vectorize for the baseline ISA (no -m flags here). Semantics as in
 * kernels/convert.h; the saturating conversions check the range before the
 * cast (optic_convert_*_s32_one), so nothing here is undefined behaviour. */
#include "core/half.h"
#include "kernels/convert.h"

void optic_f32_f64_vcvt__scalar(size_t n, const float *x, double *y) {
  for (size_t i = 0; i < n; i++) y[i] = (double)x[i];
}

void optic_f64_f32_vcvt__scalar(size_t n, const double *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}

void optic_f32_s32_vcvt__scalar(size_t n, const float *x, int32_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_convert_f32_s32_one(x[i]);
}

void optic_s32_f32_vcvt__scalar(size_t n, const int32_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}

void optic_f64_s32_vcvt__scalar(size_t n, const double *x, int32_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_convert_f64_s32_one(x[i]);
}

void optic_s32_f64_vcvt__scalar(size_t n, const int32_t *x, double *y) {
  for (size_t i = 0; i < n; i++) y[i] = (double)x[i];
}

void optic_f32_pred_vcvt__scalar(size_t n, const float *x, uint8_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = x[i] != 0.0f;
}

void optic_u8_f32_vcvt__scalar(size_t n, const uint8_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
}

/* The halves: core/half.h's converters, the definition the SIMD kernels match. */
void optic_f32_bf16_vcvt__scalar(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_half_from_f32_bf16(x[i]);
}

void optic_bf16_f32_vcvt__scalar(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_half_to_f32_bf16(x[i]);
}

void optic_f32_f16_vcvt__scalar(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_half_from_f32_f16(x[i]);
}

void optic_f16_f32_vcvt__scalar(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = optic_half_to_f32_f16(x[i]);
}
