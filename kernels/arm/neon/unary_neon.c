/* NEON (AArch64 Advanced SIMD) unary f32 kernels: two 4-float vectors per
 * iteration, then one; the last 1-3 floats go through the same vector code on
 * a zero-padded stack copy, so every element gets the same arithmetic and
 * nothing past the end is touched. exp/log/tanh/logistic are range reduction
 * + polynomial with the shared constants of kernels/unary_consts.h.
 * Semantics and bounds as in kernels/unary.h. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels/unary.h"
#include "kernels/unary_consts.h"

#define SIGN_MASK 0x80000000u

static inline float32x4_t set1(float v) { return vdupq_n_f32(v); }
static inline int32x4_t set1i(int32_t v) { return vdupq_n_s32(v); }
/* a * b + c, fused. */
static inline float32x4_t madd(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmaq_f32(c, a, b); }
static inline uint32x4_t sign_bits(void) { return vdupq_n_u32(SIGN_MASK); }

static inline float32x4_t neg4(float32x4_t x) {
  return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(x), sign_bits()));
}
static inline float32x4_t abs4(float32x4_t x) {
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(x), sign_bits()));
}
static inline float32x4_t sqrt4(float32x4_t x) { return vsqrtq_f32(x); }
static inline float32x4_t square4(float32x4_t x) { return vmulq_f32(x, x); }
static inline float32x4_t floor4(float32x4_t x) { return vrndmq_f32(x); }
static inline float32x4_t ceil4(float32x4_t x) { return vrndpq_f32(x); }
/* Two correctly rounded steps: within 1 ULP, and 1/sqrt's special values
 * (+-0 -> +-inf, inf -> 0, x < 0 -> NaN) for free. */
static inline float32x4_t rsqrt4(float32x4_t x) { return vdivq_f32(set1(1.0f), vsqrtq_f32(x)); }

/* copysign(1, x) where x is nonzero and not NaN; x itself for +-0 and NaN. */
static inline float32x4_t sign4(float32x4_t x) {
  const uint32x4_t bits = vreinterpretq_u32_f32(x);
  const float32x4_t one =
      vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(set1(1.0f)), vandq_u32(bits, sign_bits())));
  const uint32x4_t nonzero = vorrq_u32(vcgtq_f32(x, set1(0.0f)), vcltq_f32(x, set1(0.0f))); /* false for NaN */
  return vbslq_f32(nonzero, one, x);
}
/* Clear x where x <= 0 (false for NaN, which is kept): relu(-0) = +0. */
static inline float32x4_t relu4(float32x4_t x) {
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(x), vcleq_f32(x, set1(0.0f))));
}

/* 2^k as a float for integer k in [-126, 127]. */
static inline float32x4_t pow2i(int32x4_t k) {
  return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, set1i(127)), 23));
}

/* exp: x = n ln2 + r, exp(r) by the degree-6 minimax polynomial, times 2^n.
 * The clamp keeps r finite for +-inf (FMAX/FMIN return NaN if either operand
 * is NaN, so NaN passes through). While every |x| <= 87, 2^n is one normal
 * float; otherwise 2^n = 2^(n/2) 2^(n - n/2), two normal factors, and the
 * product p 2^(n/2) is exact, so the result (subnormal, or inf) is rounded once. */
static inline float32x4_t exp4(float32x4_t x) {
  const uint32x4_t big = vcagtq_f32(x, set1(OPTIC_EXP_FAST));
  x = vminq_f32(vmaxq_f32(x, set1(OPTIC_EXP_LO)), set1(OPTIC_EXP_HI));
  const float32x4_t t = madd(x, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const float32x4_t n = vsubq_f32(t, set1(OPTIC_ROUND_MAGIC_F));
  const int32x4_t ni = vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(set1(OPTIC_ROUND_MAGIC_F)));
  float32x4_t r = madd(n, set1(-OPTIC_LN2_HI_F), x);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  float32x4_t p = madd(set1(OPTIC_EXP_C6), r, set1(OPTIC_EXP_C5));
  p = madd(p, r, set1(OPTIC_EXP_C4));
  p = madd(p, r, set1(OPTIC_EXP_C3));
  p = madd(p, r, set1(OPTIC_EXP_C2));
  p = madd(p, r, set1(1.0f));
  p = madd(p, r, set1(1.0f));
  if (vmaxvq_u32(big) == 0) return vmulq_f32(p, pow2i(ni));
  const int32x4_t half = vshrq_n_s32(ni, 1);
  return vmulq_f32(vmulq_f32(p, pow2i(half)), pow2i(vsubq_s32(ni, half)));
}

/* Q of log(1 + f) = f + f^2 Q(f), f in [sqrt(1/2) - 1, sqrt(2) - 1):
 * the log polynomial, shared by log and log1p. */
static inline float32x4_t log_q4(float32x4_t f) {
  float32x4_t q = madd(set1(OPTIC_LOG_C10), f, set1(OPTIC_LOG_C9));
  q = madd(q, f, set1(OPTIC_LOG_C8));
  q = madd(q, f, set1(OPTIC_LOG_C7));
  q = madd(q, f, set1(OPTIC_LOG_C6));
  q = madd(q, f, set1(OPTIC_LOG_C5));
  q = madd(q, f, set1(OPTIC_LOG_C4));
  q = madd(q, f, set1(OPTIC_LOG_C3));
  q = madd(q, f, set1(OPTIC_LOG_C2));
  return q;
}

/* log: x = 2^e m, m in [sqrt(1/2), sqrt(2)) by integer ops on the bits
 * (subnormals are scaled by 2^23 first), log(m) = f + f^2 Q(f), f = m - 1
 * exact, plus e ln2 in two parts. Special lanes are patched at the end. */
static inline float32x4_t log4(float32x4_t x) {
  const uint32x4_t sub = vcltq_f32(x, set1(1.17549435e-38f));
  const float32x4_t xs = vbslq_f32(sub, vmulq_f32(x, set1(8388608.0f)), x);
  const int32x4_t u = vsubq_s32(vreinterpretq_s32_f32(xs), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  int32x4_t ei = vshrq_n_s32(u, 23);
  ei = vsubq_s32(ei, vandq_s32(vreinterpretq_s32_u32(sub), set1i(23)));
  const int32x4_t mi = vaddq_s32(vandq_s32(u, set1i(0x007fffff)), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const float32x4_t f = vsubq_f32(vreinterpretq_f32_s32(mi), set1(1.0f));
  const float32x4_t e = vcvtq_f32_s32(ei);
  const float32x4_t q = log_q4(f);
  const float32x4_t t = madd(vmulq_f32(f, f), q, madd(e, set1(OPTIC_LN2_LO_F), f));
  float32x4_t y = madd(e, set1(OPTIC_LN2_HI_F), t);
  /* x <= 0, inf, NaN: -inf for +-0, inf for inf, NaN otherwise. */
  const uint32x4_t ok = vandq_u32(vcgtq_f32(x, set1(0.0f)), vcltq_f32(x, set1(INFINITY)));
  if (vminvq_u32(ok) == 0) {
    float32x4_t special = vbslq_f32(vceqq_f32(x, set1(0.0f)), set1(-INFINITY), set1(NAN));
    special = vbslq_f32(vceqq_f32(x, set1(INFINITY)), x, special);
    y = vbslq_f32(ok, y, special);
  }
  return y;
}

/* tanh(|x|) = E / (E + 2) with E = expm1(2|x|) = 2^n (expm1(r) + 1) - 1,
 * computed as fma(2^n, expm1(r), 2^n - 1); accurate down to tiny |x| (E = 2|x|
 * exactly there), saturating to 1 past the clamp; the sign is x's (FMIN
 * keeps NaN). */
static inline float32x4_t tanh4(float32x4_t x) {
  const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), sign_bits());
  float32x4_t z = vminq_f32(abs4(x), set1(OPTIC_TANH_CLAMP));
  z = vaddq_f32(z, z);
  const float32x4_t t = madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const float32x4_t n = vsubq_f32(t, set1(OPTIC_ROUND_MAGIC_F));
  const int32x4_t ni = vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(set1(OPTIC_ROUND_MAGIC_F)));
  float32x4_t r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  float32x4_t p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  const float32x4_t em1 = madd(vmulq_f32(r, r), p, r);
  const float32x4_t s = pow2i(ni);
  const float32x4_t e = madd(s, em1, vsubq_f32(s, set1(1.0f)));
  const float32x4_t y = vdivq_f32(e, vaddq_f32(e, set1(2.0f)));
  return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(y), sign));
}

/* logistic(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, e = exp(-|x|):
 * no overflow, and subnormal results for x < -87.3 instead of a flush to 0. */
static inline float32x4_t logistic4(float32x4_t x) {
  const float32x4_t e = exp4(vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(x), sign_bits())));
  const float32x4_t num = vbslq_f32(vcgeq_f32(x, set1(0.0f)), set1(1.0f), e);
  return vdivq_f32(num, vaddq_f32(e, set1(1.0f)));
}

/* expm1(r) on the reduced interval (kernels/unary_consts.h), r + r^2 P(r). */
static inline float32x4_t expm1_poly4(float32x4_t r) {
  float32x4_t p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  return madd(vmulq_f32(r, r), p, r);
}

/* expm1: x = n ln2 + r, 2^n (expm1(r) + (1 - 2^-n)); 2^-n is one normal
 * float (n >= 126 leaves 1 - 2^-n = 1), 2^n two normal factors (the first
 * product is exact, the second rounds once, overflow to inf); tiny |x| (and
 * +-0) return x. FMAX/FMIN keep NaN, which passes every step. */
static inline float32x4_t expm14(float32x4_t x) {
  const float32x4_t z = vminq_f32(vmaxq_f32(x, set1(OPTIC_EXPM1_LO)), set1(OPTIC_EXPM1_HI));
  const float32x4_t t = madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const float32x4_t n = vsubq_f32(t, set1(OPTIC_ROUND_MAGIC_F));
  const int32x4_t ni = vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(set1(OPTIC_ROUND_MAGIC_F)));
  float32x4_t r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  const float32x4_t c = vsubq_f32(set1(1.0f), pow2i(vmaxq_s32(vnegq_s32(ni), set1i(-126))));
  const int32x4_t half = vshrq_n_s32(ni, 1);
  float32x4_t y = vmulq_f32(vaddq_f32(expm1_poly4(r), c), pow2i(half));
  y = vmulq_f32(y, pow2i(vsubq_s32(ni, half)));
  return vbslq_f32(vcaltq_f32(x, set1(OPTIC_EXPM1_TINY)), x, y);
}

/* log1p: u = 1 + x = 2^e m (u >= 2^-24 is never subnormal); f = m - 1, or x
 * when e = 0; for e != 0 the rounding error of u, d = x - (u - 1) (exact),
 * enters as d / u. Special lanes (x <= -1, inf, NaN) as log of u; tiny |x|
 * returns x. */
static inline float32x4_t log1p4(float32x4_t x) {
  const float32x4_t u = vaddq_f32(x, set1(1.0f));
  const int32x4_t b = vsubq_s32(vreinterpretq_s32_f32(u), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const int32x4_t ei = vshrq_n_s32(b, 23);
  const int32x4_t mi = vaddq_s32(vandq_s32(b, set1i(0x007fffff)), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const uint32x4_t e0 = vceqq_s32(ei, set1i(0));
  const float32x4_t f = vbslq_f32(e0, x, vsubq_f32(vreinterpretq_f32_s32(mi), set1(1.0f)));
  const float32x4_t dq = vdivq_f32(vsubq_f32(x, vsubq_f32(u, set1(1.0f))), u);
  const float32x4_t d = vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(dq), e0));
  const float32x4_t e = vcvtq_f32_s32(ei);
  const float32x4_t t = vaddq_f32(vmulq_f32(vmulq_f32(f, f), log_q4(f)), madd(e, set1(OPTIC_LN2_LO_F), d));
  float32x4_t y = madd(e, set1(OPTIC_LN2_HI_F), vaddq_f32(f, t));
  const uint32x4_t ok = vandq_u32(vcgtq_f32(u, set1(0.0f)), vcltq_f32(u, set1(INFINITY)));
  if (vminvq_u32(ok) == 0) {
    float32x4_t special = vbslq_f32(vceqq_f32(u, set1(0.0f)), set1(-INFINITY), set1(NAN));
    special = vbslq_f32(vceqq_f32(u, set1(INFINITY)), u, special);
    y = vbslq_f32(ok, y, special);
  }
  return vbslq_f32(vcaltq_f32(x, set1(OPTIC_LOG1P_TINY)), x, y);
}

/* erf: three intervals of |x| (kernels/unary_consts.h), one Horner pass with
 * per-lane coefficients; the interval A result x + x P(x^2) keeps x's sign
 * (and +-0, NaN), B and C take it by or, |x| >= ERF_SAT gives +-1. */
#define ERF_COEF4(k, mb, mc) \
  vbslq_f32(mc, set1(OPTIC_ERF_C##k), vbslq_f32(mb, set1(OPTIC_ERF_B##k), set1(OPTIC_ERF_A##k)))
static inline float32x4_t erf4(float32x4_t x) {
  const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), sign_bits());
  const float32x4_t a = abs4(x);
  const uint32x4_t mb = vcgeq_f32(a, set1(OPTIC_ERF_T1));
  const uint32x4_t mc = vcgeq_f32(a, set1(OPTIC_ERF_T2));
  float32x4_t t = vbslq_f32(mb, vsubq_f32(a, set1(OPTIC_ERF_MID_B)), vmulq_f32(x, x));
  t = vbslq_f32(mc, vsubq_f32(a, set1(OPTIC_ERF_MID_C)), t);
  float32x4_t p = madd(ERF_COEF4(9, mb, mc), t, ERF_COEF4(8, mb, mc));
  p = madd(p, t, ERF_COEF4(7, mb, mc));
  p = madd(p, t, ERF_COEF4(6, mb, mc));
  p = madd(p, t, ERF_COEF4(5, mb, mc));
  p = madd(p, t, ERF_COEF4(4, mb, mc));
  p = madd(p, t, ERF_COEF4(3, mb, mc));
  p = madd(p, t, ERF_COEF4(2, mb, mc));
  p = madd(p, t, ERF_COEF4(1, mb, mc));
  p = madd(p, t, ERF_COEF4(0, mb, mc));
  const float32x4_t far = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(vminq_f32(p, set1(1.0f))), sign));
  const float32x4_t y = vbslq_f32(mb, far, madd(x, p, x));
  const float32x4_t one = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(set1(1.0f)), sign));
  return vbslq_f32(vcgeq_f32(a, set1(OPTIC_ERF_SAT)), one, y);
}
#undef ERF_COEF4

#define NEON_UNARY(fn, OP)                                             \
  void fn(size_t n, const float *x, float *y) {                        \
    size_t i = 0;                                                      \
    for (; i + 8 <= n; i += 8) {                                       \
      float32x4_t r0 = OP(vld1q_f32(x + i));                           \
      float32x4_t r1 = OP(vld1q_f32(x + i + 4));                       \
      vst1q_f32(y + i, r0);                                            \
      vst1q_f32(y + i + 4, r1);                                        \
    }                                                                  \
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, OP(vld1q_f32(x + i))); \
    if (i < n) {                                                       \
      float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};                         \
      memcpy(buf, x + i, (n - i) * sizeof(float));                     \
      vst1q_f32(buf, OP(vld1q_f32(buf)));                              \
      memcpy(y + i, buf, (n - i) * sizeof(float));                     \
    }                                                                  \
  }

NEON_UNARY(optic_f32_vneg__neon, neg4)
NEON_UNARY(optic_f32_vabs__neon, abs4)
NEON_UNARY(optic_f32_vexp__neon, exp4)
NEON_UNARY(optic_f32_vlog__neon, log4)
NEON_UNARY(optic_f32_vsqrt__neon, sqrt4)
NEON_UNARY(optic_f32_vrsqrt__neon, rsqrt4)
NEON_UNARY(optic_f32_vtanh__neon, tanh4)
NEON_UNARY(optic_f32_vlogistic__neon, logistic4)
NEON_UNARY(optic_f32_vsign__neon, sign4)
NEON_UNARY(optic_f32_vfloor__neon, floor4)
NEON_UNARY(optic_f32_vceil__neon, ceil4)
NEON_UNARY(optic_f32_vsquare__neon, square4)
NEON_UNARY(optic_f32_vrelu__neon, relu4)
NEON_UNARY(optic_f32_verf__neon, erf4)
NEON_UNARY(optic_f32_vexpm1__neon, expm14)
NEON_UNARY(optic_f32_vlog1p__neon, log1p4)
