/* AVX2+FMA unary f32 kernels: two 8-float vectors per iteration, then one,
 * then a masked tail (vmaskmov never touches masked-out lanes: no over-read).
 * exp/log/tanh/logistic are range reduction + polynomial with the shared
 * constants of kernels/unary_consts.h; no gathers, no scalar fallback.
 * Semantics and bounds as in kernels/unary.h; built with -mavx2 -mfma only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/unary.h"
#include "kernels/x86/stream_x86.h"
#include "kernels/unary_consts.h"

#define SIGN_MASK 0x80000000u
#define ABS_MASK 0x7fffffffu

/* Lane mask for the first r (< 8) lanes. */
static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}

static inline __m256 set1(float v) { return _mm256_set1_ps(v); }
static inline __m256i set1i(int32_t v) { return _mm256_set1_epi32(v); }
static inline __m256 madd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
static inline __m256 sign_bits(void) { return _mm256_castsi256_ps(set1i((int32_t)SIGN_MASK)); }
static inline __m256 blend8(__m256 mask, __m256 if_true, __m256 if_false) {
  return _mm256_blendv_ps(if_false, if_true, mask);
}

static inline __m256 neg8(__m256 x) { return _mm256_xor_ps(x, sign_bits()); }
static inline __m256 abs8(__m256 x) { return _mm256_andnot_ps(sign_bits(), x); }
static inline __m256 sqrt8(__m256 x) { return _mm256_sqrt_ps(x); }
static inline __m256 square8(__m256 x) { return _mm256_mul_ps(x, x); }
static inline __m256 floor8(__m256 x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline __m256 ceil8(__m256 x) { return _mm256_round_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
/* Two correctly rounded steps: within 1 ULP, and 1/sqrt's special values
 * (+-0 -> +-inf, inf -> 0, x < 0 -> NaN) for free. */
static inline __m256 rsqrt8(__m256 x) { return _mm256_div_ps(set1(1.0f), _mm256_sqrt_ps(x)); }

/* x where x is +-0 or NaN (the ordered not-equal compare is false for both),
 * else copysign(1, x). */
static inline __m256 sign8(__m256 x) {
  __m256 one = _mm256_or_ps(set1(1.0f), _mm256_and_ps(x, sign_bits()));
  return blend8(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NEQ_OQ), one, x);
}
/* Keep x where x > 0 or x is NaN ("not less or equal", unordered -> true). */
static inline __m256 relu8(__m256 x) { return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ), x); }

/* 2^k as a float for integer k in [-126, 127]. */
static inline __m256 pow2i(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, set1i(127)), 23));
}

/* p 2^n rounded once for lanes where n may leave one normal factor (n
 * integral in [-150, 129] as the float n and the integer ni, p in [0.7,
 * 1.42]; a NaN p stays NaN), never computing a subnormal
 * (Intel cores take a microcode assist for each subnormal result lane, so
 * exp below -87 ran many times slower): where n <= -126 the result, under
 * 2^-125, is the integer p 2^(n + 149) rounded to nearest even, which is its
 * bit pattern; elsewhere 2^n = 2^(n/2) 2^(n - n/2), two normal factors, the
 * first product exact, so the result (normal, or inf) is rounded once. */
static __attribute__((noinline, cold)) __m256 scale_pow2_wide8(__m256 p, __m256 n, __m256i ni) {
  const __m256 low = _mm256_cmp_ps(n, set1(-125.0f), _CMP_LT_OQ); /* false for NaN */
  const __m256i hi = _mm256_max_epi32(ni, set1i(-125)), half = _mm256_srai_epi32(hi, 1);
  const __m256 high = _mm256_mul_ps(_mm256_mul_ps(p, pow2i(half)), pow2i(_mm256_sub_epi32(hi, half)));
  const __m256i k = _mm256_add_epi32(_mm256_min_epi32(ni, set1i(-126)), set1i(149)); /* [-1, 23] */
  const __m256i bits = _mm256_cvtps_epi32(_mm256_mul_ps(p, pow2i(k)));
  return blend8(low, _mm256_castsi256_ps(bits), high);
}

/* exp: x = n ln2 + r, exp(r) by the degree-6 minimax polynomial, times 2^n.
 * The clamp keeps r finite for +-inf (max/min return their second operand
 * when either is NaN, so NaN passes through). While every |x| <= 87, 2^n is
 * one normal float; otherwise scale_pow2_wide8 (subnormal results, inf). */
static inline __m256 exp8(__m256 x) {
  const __m256 big = _mm256_cmp_ps(abs8(x), set1(OPTIC_EXP_FAST), _CMP_GT_OQ);
  x = _mm256_max_ps(set1(OPTIC_EXP_LO), x);
  x = _mm256_min_ps(set1(OPTIC_EXP_HI), x);
  const __m256 t = madd(x, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const __m256 n = _mm256_sub_ps(t, set1(OPTIC_ROUND_MAGIC_F));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(set1(OPTIC_ROUND_MAGIC_F)));
  __m256 r = madd(n, set1(-OPTIC_LN2_HI_F), x);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  __m256 p = madd(set1(OPTIC_EXP_C6), r, set1(OPTIC_EXP_C5));
  p = madd(p, r, set1(OPTIC_EXP_C4));
  p = madd(p, r, set1(OPTIC_EXP_C3));
  p = madd(p, r, set1(OPTIC_EXP_C2));
  p = madd(p, r, set1(1.0f));
  p = madd(p, r, set1(1.0f));
  if (_mm256_movemask_ps(big) == 0) return _mm256_mul_ps(p, pow2i(ni));
  return scale_pow2_wide8(p, n, ni);
}

/* Q of log(1 + f) = f + f^2 Q(f), f in [sqrt(1/2) - 1, sqrt(2) - 1):
 * the log polynomial, shared by log and log1p. */
static inline __m256 log_q8(__m256 f) {
  __m256 q = madd(set1(OPTIC_LOG_C10), f, set1(OPTIC_LOG_C9));
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
static inline __m256 log8(__m256 x) {
  const __m256 sub = _mm256_cmp_ps(x, set1(1.17549435e-38f), _CMP_LT_OQ);
  const __m256 xs = blend8(sub, _mm256_mul_ps(x, set1(8388608.0f)), x);
  const __m256i u = _mm256_sub_epi32(_mm256_castps_si256(xs), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  __m256i ei = _mm256_srai_epi32(u, 23);
  ei = _mm256_sub_epi32(ei, _mm256_and_si256(_mm256_castps_si256(sub), set1i(23)));
  const __m256i mi = _mm256_add_epi32(_mm256_and_si256(u, set1i(0x007fffff)), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(mi), set1(1.0f));
  const __m256 e = _mm256_cvtepi32_ps(ei);
  const __m256 q = log_q8(f);
  const __m256 t = madd(_mm256_mul_ps(f, f), q, madd(e, set1(OPTIC_LN2_LO_F), f));
  __m256 y = madd(e, set1(OPTIC_LN2_HI_F), t);
  /* x <= 0, inf, NaN: -inf for +-0, inf for inf, NaN otherwise. */
  const __m256 ok =
      _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ), _mm256_cmp_ps(x, set1(INFINITY), _CMP_LT_OQ));
  if (_mm256_movemask_ps(ok) != 0xff) {
    __m256 special = blend8(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ), set1(-INFINITY), set1(NAN));
    special = blend8(_mm256_cmp_ps(x, set1(INFINITY), _CMP_EQ_OQ), x, special);
    y = blend8(ok, y, special);
  }
  return y;
}

/* tanh(|x|) = E / (E + 2) with E = expm1(2|x|) = 2^n (expm1(r) + 1) - 1,
 * computed as fma(2^n, expm1(r), 2^n - 1); accurate down to tiny |x| (E = 2|x|
 * exactly there), saturating to 1 past the clamp; the sign is x's. */
static inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, sign_bits());
  __m256 z = _mm256_min_ps(set1(OPTIC_TANH_CLAMP), abs8(x));
  z = _mm256_add_ps(z, z);
  const __m256 t = madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const __m256 n = _mm256_sub_ps(t, set1(OPTIC_ROUND_MAGIC_F));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(set1(OPTIC_ROUND_MAGIC_F)));
  __m256 r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  __m256 p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  const __m256 em1 = madd(_mm256_mul_ps(r, r), p, r);
  const __m256 s = pow2i(ni);
  const __m256 e = madd(s, em1, _mm256_sub_ps(s, set1(1.0f)));
  return _mm256_or_ps(_mm256_div_ps(e, _mm256_add_ps(e, set1(2.0f))), sign);
}

/* logistic(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, e = exp(-|x|):
 * no overflow, and subnormal results for x < -87.3 instead of a flush to 0. */
static inline __m256 logistic8(__m256 x) {
  const __m256 e = exp8(_mm256_or_ps(x, sign_bits()));
  const __m256 num = blend8(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ), set1(1.0f), e);
  return _mm256_div_ps(num, _mm256_add_ps(e, set1(1.0f)));
}

/* expm1(r) on the reduced interval (kernels/unary_consts.h), r + r^2 P(r). */
static inline __m256 expm1_poly8(__m256 r) {
  __m256 p = madd(set1(OPTIC_EXPM1_C7), r, set1(OPTIC_EXPM1_C6));
  p = madd(p, r, set1(OPTIC_EXPM1_C5));
  p = madd(p, r, set1(OPTIC_EXPM1_C4));
  p = madd(p, r, set1(OPTIC_EXPM1_C3));
  p = madd(p, r, set1(OPTIC_EXPM1_C2));
  return madd(_mm256_mul_ps(r, r), p, r);
}

/* expm1: x = n ln2 + r, 2^n (expm1(r) + (1 - 2^-n)); 2^-n is one normal
 * float (n >= 126 leaves 1 - 2^-n = 1), 2^n two normal factors (the first
 * product is exact, the second rounds once, overflow to inf); tiny |x| (and
 * +-0) return x. NaN passes the clamps and every step. */
static inline __m256 expm18(__m256 x) {
  __m256 z = _mm256_max_ps(set1(OPTIC_EXPM1_LO), x);
  z = _mm256_min_ps(set1(OPTIC_EXPM1_HI), z);
  const __m256 t = madd(z, set1(OPTIC_LOG2E_F), set1(OPTIC_ROUND_MAGIC_F));
  const __m256 n = _mm256_sub_ps(t, set1(OPTIC_ROUND_MAGIC_F));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(set1(OPTIC_ROUND_MAGIC_F)));
  __m256 r = madd(n, set1(-OPTIC_LN2_HI_F), z);
  r = madd(n, set1(-OPTIC_LN2_LO_F), r);
  const __m256 c =
      _mm256_sub_ps(set1(1.0f), pow2i(_mm256_max_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), ni), set1i(-126))));
  const __m256i half = _mm256_srai_epi32(ni, 1);
  __m256 y = _mm256_mul_ps(_mm256_add_ps(expm1_poly8(r), c), pow2i(half));
  y = _mm256_mul_ps(y, pow2i(_mm256_sub_epi32(ni, half)));
  return blend8(_mm256_cmp_ps(abs8(x), set1(OPTIC_EXPM1_TINY), _CMP_LT_OQ), x, y);
}

/* log1p: u = 1 + x = 2^e m (u >= 2^-24 is never subnormal); f = m - 1, or x
 * when e = 0; for e != 0 the rounding error of u, d = x - (u - 1) (exact),
 * enters as d / u. Special lanes (x <= -1, inf, NaN) as log of u; tiny |x|
 * returns x. */
static inline __m256 log1p8(__m256 x) {
  const __m256 u = _mm256_add_ps(x, set1(1.0f));
  const __m256i b = _mm256_sub_epi32(_mm256_castps_si256(u), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const __m256i ei = _mm256_srai_epi32(b, 23);
  const __m256i mi = _mm256_add_epi32(_mm256_and_si256(b, set1i(0x007fffff)), set1i(OPTIC_LOG_SQRT_HALF_BITS));
  const __m256 e0 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(ei, _mm256_setzero_si256()));
  const __m256 f = blend8(e0, x, _mm256_sub_ps(_mm256_castsi256_ps(mi), set1(1.0f)));
  const __m256 d = _mm256_andnot_ps(e0, _mm256_div_ps(_mm256_sub_ps(x, _mm256_sub_ps(u, set1(1.0f))), u));
  const __m256 e = _mm256_cvtepi32_ps(ei);
  const __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(f, f), log_q8(f)), madd(e, set1(OPTIC_LN2_LO_F), d));
  __m256 y = madd(e, set1(OPTIC_LN2_HI_F), _mm256_add_ps(f, t));
  const __m256 ok =
      _mm256_and_ps(_mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GT_OQ), _mm256_cmp_ps(u, set1(INFINITY), _CMP_LT_OQ));
  if (_mm256_movemask_ps(ok) != 0xff) {
    __m256 special = blend8(_mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_EQ_OQ), set1(-INFINITY), set1(NAN));
    special = blend8(_mm256_cmp_ps(u, set1(INFINITY), _CMP_EQ_OQ), u, special);
    y = blend8(ok, y, special);
  }
  return blend8(_mm256_cmp_ps(abs8(x), set1(OPTIC_LOG1P_TINY), _CMP_LT_OQ), x, y);
}

/* erf: three intervals of |x| (kernels/unary_consts.h), one Horner pass with
 * per-lane coefficients; the interval A result x + x P(x^2) keeps x's sign
 * (and +-0, NaN), B and C take it by or, |x| >= ERF_SAT gives +-1. */
#define ERF_COEF8(k, mb, mc) blend8(mc, set1(OPTIC_ERF_C##k), blend8(mb, set1(OPTIC_ERF_B##k), set1(OPTIC_ERF_A##k)))
static inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, sign_bits());
  const __m256 a = abs8(x);
  const __m256 mb = _mm256_cmp_ps(a, set1(OPTIC_ERF_T1), _CMP_GE_OQ);
  const __m256 mc = _mm256_cmp_ps(a, set1(OPTIC_ERF_T2), _CMP_GE_OQ);
  __m256 t = blend8(mb, _mm256_sub_ps(a, set1(OPTIC_ERF_MID_B)), _mm256_mul_ps(x, x));
  t = blend8(mc, _mm256_sub_ps(a, set1(OPTIC_ERF_MID_C)), t);
  __m256 p = madd(ERF_COEF8(9, mb, mc), t, ERF_COEF8(8, mb, mc));
  p = madd(p, t, ERF_COEF8(7, mb, mc));
  p = madd(p, t, ERF_COEF8(6, mb, mc));
  p = madd(p, t, ERF_COEF8(5, mb, mc));
  p = madd(p, t, ERF_COEF8(4, mb, mc));
  p = madd(p, t, ERF_COEF8(3, mb, mc));
  p = madd(p, t, ERF_COEF8(2, mb, mc));
  p = madd(p, t, ERF_COEF8(1, mb, mc));
  p = madd(p, t, ERF_COEF8(0, mb, mc));
  const __m256 far = _mm256_or_ps(_mm256_min_ps(p, set1(1.0f)), sign);
  const __m256 y = blend8(mb, far, madd(x, p, x));
  return blend8(_mm256_cmp_ps(a, set1(OPTIC_ERF_SAT), _CMP_GE_OQ), _mm256_or_ps(set1(1.0f), sign), y);
}
#undef ERF_COEF8

/* Large calls stream their stores (kernels/stream.h), as in binary_avx2.c. */
#define AVX2_UNARY(fn, OP)                                                                    \
  void fn(size_t n, const float *x, float *y) {                                               \
    size_t i = 0, head = optic_x86_stream_head(y, n, 2 * n * sizeof(float), 32);              \
    if (head != SIZE_MAX) {                                                                   \
      if (head > 0) {                                                                         \
        __m256i m = tail_mask(head);                                                          \
        _mm256_maskstore_ps(y, m, OP(_mm256_maskload_ps(x, m)));                              \
      }                                                                                       \
      for (i = head; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, OP(_mm256_loadu_ps(x + i))); \
    } else {                                                                                  \
      for (; i + 16 <= n; i += 16) {                                                          \
        __m256 r0 = OP(_mm256_loadu_ps(x + i));                                               \
        __m256 r1 = OP(_mm256_loadu_ps(x + i + 8));                                           \
        _mm256_storeu_ps(y + i, r0);                                                          \
        _mm256_storeu_ps(y + i + 8, r1);                                                      \
      }                                                                                       \
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, OP(_mm256_loadu_ps(x + i)));         \
    }                                                                                         \
    if (i < n) {                                                                              \
      __m256i m = tail_mask(n - i);                                                           \
      _mm256_maskstore_ps(y + i, m, OP(_mm256_maskload_ps(x + i, m)));                        \
    }                                                                                         \
    if (head != SIZE_MAX) _mm_sfence();                                                       \
  }

AVX2_UNARY(optic_f32_vneg__avx2, neg8)
AVX2_UNARY(optic_f32_vabs__avx2, abs8)
AVX2_UNARY(optic_f32_vexp__avx2, exp8)
AVX2_UNARY(optic_f32_vlog__avx2, log8)
AVX2_UNARY(optic_f32_vsqrt__avx2, sqrt8)
AVX2_UNARY(optic_f32_vrsqrt__avx2, rsqrt8)
AVX2_UNARY(optic_f32_vtanh__avx2, tanh8)
AVX2_UNARY(optic_f32_vlogistic__avx2, logistic8)
AVX2_UNARY(optic_f32_vsign__avx2, sign8)
AVX2_UNARY(optic_f32_vfloor__avx2, floor8)
AVX2_UNARY(optic_f32_vceil__avx2, ceil8)
AVX2_UNARY(optic_f32_vsquare__avx2, square8)
AVX2_UNARY(optic_f32_vrelu__avx2, relu8)
AVX2_UNARY(optic_f32_verf__avx2, erf8)
AVX2_UNARY(optic_f32_vexpm1__avx2, expm18)
AVX2_UNARY(optic_f32_vlog1p__avx2, log1p8)
