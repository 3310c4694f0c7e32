/* NEON (AArch64 Advanced SIMD) f32 clamp kernels: two 4-float vectors per
 * iteration, then one, then a scalar tail. Semantics as in kernels/clamp.h,
 * built from compare + bitwise select: FMAX/FMIN would return +0 for (-0, +0)
 * and the default NaN instead of the input's. */
#include <arm_neon.h>

#include "kernels/clamp.h"

/* maximum(x, lo) then minimum(t, hi), NaN-propagating as in kernels/binary.h. */
static inline float32x4_t clamp_vv(float32x4_t x, float32x4_t lo, float32x4_t hi) {
  /* A false compare picks the second operand, so a NaN bound comes through
   * by itself; a NaN first operand is put back by the second select. */
  float32x4_t t = vbslq_f32(vcgtq_f32(x, lo), x, lo);
  t = vbslq_f32(vceqq_f32(x, x), t, x);
  float32x4_t r = vbslq_f32(vcltq_f32(t, hi), t, hi);
  return vbslq_f32(vceqq_f32(t, t), r, t);
}

/* Scalar bounds where lo is not NaN, or lo and hi are the same NaN (see
 * optic_f32_vclampc__neon): only x's NaN needs restoring. */
static inline float32x4_t clamp_vs(float32x4_t x, float32x4_t lo, float32x4_t hi) {
  float32x4_t t = vbslq_f32(vcgtq_f32(x, lo), x, lo);
  float32x4_t r = vbslq_f32(vcltq_f32(t, hi), t, hi);
  return vbslq_f32(vceqq_f32(x, x), r, x);
}

void optic_f32_vclamp__neon(size_t n, const float *x, const float *lo, const float *hi, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t r0 = clamp_vv(vld1q_f32(x + i), vld1q_f32(lo + i), vld1q_f32(hi + i));
    float32x4_t r1 = clamp_vv(vld1q_f32(x + i + 4), vld1q_f32(lo + i + 4), vld1q_f32(hi + i + 4));
    vst1q_f32(y + i, r0);
    vst1q_f32(y + i + 4, r1);
  }
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, clamp_vv(vld1q_f32(x + i), vld1q_f32(lo + i), vld1q_f32(hi + i)));
  for (; i < n; i++) y[i] = optic_clamp_f32(x[i], lo[i], hi[i]);
}

void optic_f32_vclampc__neon(size_t n, const float *x, float lo, float hi, float *y) {
  /* A NaN lo makes y = (x is NaN ? x : lo); with hi = lo too, clamp_vs
   * computes exactly that. A NaN hi (lo not NaN) needs nothing: a false t < hi
   * compare selects hi. */
  if (lo != lo) hi = lo;
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t r0 = clamp_vs(vld1q_f32(x + i), vlo, vhi);
    float32x4_t r1 = clamp_vs(vld1q_f32(x + i + 4), vlo, vhi);
    vst1q_f32(y + i, r0);
    vst1q_f32(y + i + 4, r1);
  }
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, clamp_vs(vld1q_f32(x + i), vlo, vhi));
  for (; i < n; i++) y[i] = optic_clamp_f32(x[i], lo, hi);
}
