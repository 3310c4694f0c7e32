/* NEON (AArch64) pow for the binary family (y = a^b, vv and vs): C powf
 * semantics, log2|a| and 2^(b log2|a|) evaluated in double (two halves of 2
 * doubles) so the one float rounding at the end dominates the error. The last
 * 1-3 elements go through the same vector code on a stack copy: no scalar
 * fallback, nothing past the end touched. Semantics in kernels/binary.h. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels/binary.h"
#include "kernels/unary_consts.h"

static inline float32x4_t set1(float v) { return vdupq_n_f32(v); }
static inline float64x2_t set1d(double v) { return vdupq_n_f64(v); }
/* a * b + c, fused. */
static inline float64x2_t maddd(float64x2_t a, float64x2_t b, float64x2_t c) { return vfmaq_f64(c, a, b); }

/* 2^(b L) for 2 lanes: L = log2|a| = e + log(m) log2e with log(m) = 2 atanh(s),
 * s = (m - 1)/(m + 1); then 2^t = 2^n 2^r, |r| <= 1/2. l_special replaces L
 * where special is set (|a| = 0, inf, NaN). The clamp keeps 2^n finite; FMAX
 * and FMIN return NaN if either operand is NaN. */
static inline float64x2_t pow_half(float64x2_t e, float64x2_t m, float64x2_t b, float64x2_t l_special,
                                   uint64x2_t special) {
  const float64x2_t s = vdivq_f64(vsubq_f64(m, set1d(1.0)), vaddq_f64(m, set1d(1.0)));
  const float64x2_t z = vmulq_f64(s, s);
  float64x2_t p = maddd(set1d(1.0 / 15), z, set1d(1.0 / 13));
  p = maddd(p, z, set1d(1.0 / 11));
  p = maddd(p, z, set1d(1.0 / 9));
  p = maddd(p, z, set1d(1.0 / 7));
  p = maddd(p, z, set1d(1.0 / 5));
  p = maddd(p, z, set1d(1.0 / 3));
  const float64x2_t s2 = vaddq_f64(s, s);
  const float64x2_t lm = maddd(vmulq_f64(s2, z), p, s2);
  const float64x2_t l = vbslq_f64(special, l_special, maddd(lm, set1d(OPTIC_POW_LOG2E), e));
  float64x2_t t = vmulq_f64(b, l);
  t = vminq_f64(vmaxq_f64(t, set1d(-OPTIC_POW_T_LIMIT)), set1d(OPTIC_POW_T_LIMIT));
  const float64x2_t d = vaddq_f64(t, set1d(OPTIC_POW_ROUND_MAGIC));
  const float64x2_t r = vsubq_f64(t, vsubq_f64(d, set1d(OPTIC_POW_ROUND_MAGIC)));
  float64x2_t q = maddd(set1d(OPTIC_POW_EXP2_C10), r, set1d(OPTIC_POW_EXP2_C9));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C8));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C7));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C6));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C5));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C4));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C3));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C2));
  q = maddd(q, r, set1d(OPTIC_POW_EXP2_C1));
  q = maddd(q, r, set1d(1.0));
  /* The low bits of d hold n: (bits(d) << 52) + (1023 << 52) is 2^n. */
  const int64x2_t scale = vaddq_s64(vshlq_n_s64(vreinterpretq_s64_f64(d), 52), vdupq_n_s64(0x3ff0000000000000ll));
  return vmulq_f64(q, vreinterpretq_f64_s64(scale));
}

static inline float32x4_t pow4(float32x4_t a, float32x4_t b) {
  const float32x4_t ax = vabsq_f32(a);
  /* |a| = 2^e m, m in [sqrt(1/2), sqrt(2)); subnormals scaled by 2^23 first. */
  const uint32x4_t sub = vcltq_f32(ax, set1(1.17549435e-38f));
  const float32x4_t xs = vbslq_f32(sub, vmulq_f32(ax, set1(8388608.0f)), ax);
  const int32x4_t u = vsubq_s32(vreinterpretq_s32_f32(xs), vdupq_n_s32(OPTIC_LOG_SQRT_HALF_BITS));
  const int32x4_t ei = vsubq_s32(vshrq_n_s32(u, 23), vandq_s32(vreinterpretq_s32_u32(sub), vdupq_n_s32(23)));
  const float32x4_t e = vcvtq_f32_s32(ei);
  const float32x4_t m =
      vreinterpretq_f32_s32(vaddq_s32(vandq_s32(u, vdupq_n_s32(0x007fffff)), vdupq_n_s32(OPTIC_LOG_SQRT_HALF_BITS)));
  /* log2|a| of 0, inf, NaN: -inf, inf, NaN (NaN + inf is NaN, inf + inf is inf). */
  const uint32x4_t zero = vceqq_f32(ax, set1(0.0f));
  const uint32x4_t special = vorrq_u32(zero, vmvnq_u32(vcltq_f32(ax, set1(INFINITY))));
  const float32x4_t l_special = vbslq_f32(zero, set1(-INFINITY), vaddq_f32(ax, set1(INFINITY)));
  /* Lane masks widen to 64 bits by sign extension of the all-ones pattern. */
  const int32x4_t spec_i = vreinterpretq_s32_u32(special);
  const float64x2_t lo =
      pow_half(vcvt_f64_f32(vget_low_f32(e)), vcvt_f64_f32(vget_low_f32(m)), vcvt_f64_f32(vget_low_f32(b)),
               vcvt_f64_f32(vget_low_f32(l_special)), vreinterpretq_u64_s64(vmovl_s32(vget_low_s32(spec_i))));
  const float64x2_t hi = pow_half(vcvt_high_f64_f32(e), vcvt_high_f64_f32(m), vcvt_high_f64_f32(b),
                                  vcvt_high_f64_f32(l_special), vreinterpretq_u64_s64(vmovl_high_s32(spec_i)));
  float32x4_t y = vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);
  /* Negative a (sign bit set, -0 and -inf included): odd integer b flips the
   * sign; finite a < 0 with finite non-integer b is NaN. */
  const uint32x4_t b_int = vceqq_f32(b, vrndnq_f32(b));
  const uint32x4_t b_small = vcaltq_f32(b, set1(16777216.0f));
  const uint32x4_t odd_bit = vshlq_n_u32(vreinterpretq_u32_s32(vcvtq_s32_f32(vbslq_f32(b_small, b, set1(0.0f)))), 31);
  const uint32x4_t odd = vandq_u32(vandq_u32(b_int, b_small), odd_bit);
  const uint32x4_t a_sign = vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x80000000u));
  y = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), vandq_u32(a_sign, odd)));
  const uint32x4_t b_finite = vcaltq_f32(b, set1(INFINITY));
  const uint32x4_t a_finite_neg = vandq_u32(vcltq_f32(a, set1(0.0f)), vcgtq_f32(a, set1(-INFINITY)));
  y = vbslq_f32(vbicq_u32(vandq_u32(a_finite_neg, b_finite), b_int), set1(NAN), y);
  /* pow(x, +-0) = 1 (x NaN too), pow(1, y) = 1 (y NaN too), pow(-1, +-inf) = 1. */
  const uint32x4_t b_inf = vceqq_f32(vabsq_f32(b), set1(INFINITY));
  const uint32x4_t one = vorrq_u32(vorrq_u32(vceqq_f32(b, set1(0.0f)), vceqq_f32(a, set1(1.0f))),
                                   vandq_u32(vceqq_f32(ax, set1(1.0f)), b_inf));
  return vbslq_f32(one, set1(1.0f), y);
}

void optic_f32_vpow__neon(size_t n, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, pow4(vld1q_f32(a + i), vld1q_f32(b + i)));
  if (i < n) {
    float ba[4] = {1.0f, 1.0f, 1.0f, 1.0f}, bb[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    memcpy(ba, a + i, (n - i) * sizeof(float));
    memcpy(bb, b + i, (n - i) * sizeof(float));
    vst1q_f32(ba, pow4(vld1q_f32(ba), vld1q_f32(bb)));
    memcpy(y + i, ba, (n - i) * sizeof(float));
  }
}

void optic_f32_vpowc__neon(size_t n, const float *a, float s, float *y) {
  const float32x4_t vs = vdupq_n_f32(s);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, pow4(vld1q_f32(a + i), vs));
  if (i < n) {
    float ba[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    memcpy(ba, a + i, (n - i) * sizeof(float));
    vst1q_f32(ba, pow4(vld1q_f32(ba), vs));
    memcpy(y + i, ba, (n - i) * sizeof(float));
  }
}
