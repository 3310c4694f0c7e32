/* NEON (AArch64 Advanced SIMD) binary f32 kernels: two 4-float vectors per
 * iteration, then one, then a scalar tail. Semantics as in kernels/binary.h:
 * max/min use compare + select (FMAX would return +0 for max(-0, +0) and a
 * default NaN). */
#include <arm_neon.h>

#include "kernels/binary.h"

static inline float32x4_t max_nan(float32x4_t a, float32x4_t b) {
  float32x4_t r = vbslq_f32(vcgtq_f32(a, b), a, b);
  return vbslq_f32(vceqq_f32(a, a), r, a); /* a where a is NaN */
}
static inline float32x4_t min_nan(float32x4_t a, float32x4_t b) {
  float32x4_t r = vbslq_f32(vcltq_f32(a, b), a, b);
  return vbslq_f32(vceqq_f32(a, a), r, a);
}
static inline float max1(float a, float b) { return a != a ? a : b != b ? b : (a > b ? a : b); }
static inline float min1(float a, float b) { return a != a ? a : b != b ? b : (a < b ? a : b); }
static inline float add1(float a, float b) { return a + b; }
static inline float sub1(float a, float b) { return a - b; }
static inline float mul1(float a, float b) { return a * b; }
static inline float div1(float a, float b) { return a / b; }

#define NEON_VV(fn, OP, OP1)                                                             \
  void fn(size_t n, const float *a, const float *b, float *y) {                          \
    size_t i = 0;                                                                        \
    for (; i + 8 <= n; i += 8) {                                                         \
      float32x4_t r0 = OP(vld1q_f32(a + i), vld1q_f32(b + i));                           \
      float32x4_t r1 = OP(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));                   \
      vst1q_f32(y + i, r0);                                                              \
      vst1q_f32(y + i + 4, r1);                                                          \
    }                                                                                    \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, OP(vld1q_f32(a + i), vld1q_f32(b + i))); \
    for (; i < n; i++) y[i] = OP1(a[i], b[i]);                                           \
  }

#define NEON_VS(fn, OP, OP1)                                               \
  void fn(size_t n, const float *a, float s, float *y) {                   \
    const float32x4_t vs = vdupq_n_f32(s);                                 \
    size_t i = 0;                                                          \
    for (; i + 8 <= n; i += 8) {                                           \
      float32x4_t r0 = OP(vld1q_f32(a + i), vs);                           \
      float32x4_t r1 = OP(vld1q_f32(a + i + 4), vs);                       \
      vst1q_f32(y + i, r0);                                                \
      vst1q_f32(y + i + 4, r1);                                            \
    }                                                                      \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, OP(vld1q_f32(a + i), vs)); \
    for (; i < n; i++) y[i] = OP1(a[i], s);                                \
  }

NEON_VV(optic_f32_vadd__neon, vaddq_f32, add1)
NEON_VV(optic_f32_vsub__neon, vsubq_f32, sub1)
NEON_VV(optic_f32_vmul__neon, vmulq_f32, mul1)
NEON_VV(optic_f32_vdiv__neon, vdivq_f32, div1)
NEON_VV(optic_f32_vmax__neon, max_nan, max1)
NEON_VV(optic_f32_vmin__neon, min_nan, min1)
NEON_VS(optic_f32_vaddc__neon, vaddq_f32, add1)
NEON_VS(optic_f32_vsubc__neon, vsubq_f32, sub1)
NEON_VS(optic_f32_vmulc__neon, vmulq_f32, mul1)
NEON_VS(optic_f32_vdivc__neon, vdivq_f32, div1)
NEON_VS(optic_f32_vmaxc__neon, max_nan, max1)
NEON_VS(optic_f32_vminc__neon, min_nan, min1)
