/* AVX2+FMA pow for the binary family (y = a^b, vv and vs): C powf semantics,
 * log2|a| and 2^(b log2|a|) evaluated in double (two halves of 4 doubles)
 * so the one float rounding at the end dominates the error. Masked tail, no
 * gathers, no scalar fallback. Semantics in kernels/binary.h; built with
 * -mavx2 -mfma only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/binary.h"
#include "kernels/unary_consts.h"

static inline __m256 set1(float v) { return _mm256_set1_ps(v); }
static inline __m256d set1d(double v) { return _mm256_set1_pd(v); }
static inline __m256d maddd(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
static inline __m256 blend(__m256 mask, __m256 if_true, __m256 if_false) {
  return _mm256_blendv_ps(if_false, if_true, mask);
}
static inline __m256 abs8(__m256 x) { return _mm256_andnot_ps(set1(-0.0f), x); }

/* Lane mask for the first r (< 8) lanes. */
static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}

/* 2^(b L) for 4 lanes: L = log2|a| = e + log(m) log2e with log(m) = 2 atanh(s),
 * s = (m - 1)/(m + 1); then 2^t = 2^n 2^r, |r| <= 1/2. l_special replaces L
 * where special is set (|a| = 0, inf, NaN). The clamp keeps 2^n finite; NaN
 * passes the max/min (they return their second operand when either is NaN). */
static inline __m128 pow_half(__m128 e_f, __m128 m_f, __m128 b_f, __m128 l_special, __m128 special) {
  const __m256d m = _mm256_cvtps_pd(m_f);
  const __m256d s = _mm256_div_pd(_mm256_sub_pd(m, set1d(1.0)), _mm256_add_pd(m, set1d(1.0)));
  const __m256d z = _mm256_mul_pd(s, s);
  __m256d p = maddd(set1d(1.0 / 15), z, set1d(1.0 / 13));
  p = maddd(p, z, set1d(1.0 / 11));
  p = maddd(p, z, set1d(1.0 / 9));
  p = maddd(p, z, set1d(1.0 / 7));
  p = maddd(p, z, set1d(1.0 / 5));
  p = maddd(p, z, set1d(1.0 / 3));
  const __m256d s2 = _mm256_add_pd(s, s);
  const __m256d lm = maddd(_mm256_mul_pd(s2, z), p, s2);
  __m256d l = maddd(lm, set1d(OPTIC_POW_LOG2E), _mm256_cvtps_pd(e_f));
  l = _mm256_blendv_pd(l, _mm256_cvtps_pd(l_special), _mm256_cvtps_pd(special));
  __m256d t = _mm256_mul_pd(_mm256_cvtps_pd(b_f), l);
  t = _mm256_max_pd(set1d(-OPTIC_POW_T_LIMIT), t);
  t = _mm256_min_pd(set1d(OPTIC_POW_T_LIMIT), t);
  const __m256d d = _mm256_add_pd(t, set1d(OPTIC_POW_ROUND_MAGIC));
  const __m256d r = _mm256_sub_pd(t, _mm256_sub_pd(d, set1d(OPTIC_POW_ROUND_MAGIC)));
  __m256d q = maddd(set1d(OPTIC_POW_EXP2_C10), r, set1d(OPTIC_POW_EXP2_C9));
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
  const __m256i scale =
      _mm256_add_epi64(_mm256_slli_epi64(_mm256_castpd_si256(d), 52), _mm256_set1_epi64x(0x3ff0000000000000ll));
  return _mm256_cvtpd_ps(_mm256_mul_pd(q, _mm256_castsi256_pd(scale)));
}

static inline __m256 pow8(__m256 a, __m256 b) {
  const __m256 ax = abs8(a);
  /* |a| = 2^e m, m in [sqrt(1/2), sqrt(2)); subnormals scaled by 2^23 first. */
  const __m256 sub = _mm256_cmp_ps(ax, set1(1.17549435e-38f), _CMP_LT_OQ);
  const __m256 xs = blend(sub, _mm256_mul_ps(ax, set1(8388608.0f)), ax);
  const __m256i u = _mm256_sub_epi32(_mm256_castps_si256(xs), _mm256_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  __m256i ei = _mm256_srai_epi32(u, 23);
  ei = _mm256_sub_epi32(ei, _mm256_and_si256(_mm256_castps_si256(sub), _mm256_set1_epi32(23)));
  const __m256 e = _mm256_cvtepi32_ps(ei);
  const __m256 m = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x007fffff)),
                                                        _mm256_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS)));
  /* log2|a| of 0, inf, NaN: -inf, inf, NaN (NaN + inf is NaN, inf + inf is inf). */
  const __m256 zero = _mm256_cmp_ps(ax, _mm256_setzero_ps(), _CMP_EQ_OQ);
  const __m256 special = _mm256_or_ps(zero, _mm256_cmp_ps(ax, set1(INFINITY), _CMP_NLT_UQ));
  const __m256 l_special = blend(zero, set1(-INFINITY), _mm256_add_ps(ax, set1(INFINITY)));
  const __m128 lo = pow_half(_mm256_castps256_ps128(e), _mm256_castps256_ps128(m), _mm256_castps256_ps128(b),
                             _mm256_castps256_ps128(l_special), _mm256_castps256_ps128(special));
  const __m128 hi = pow_half(_mm256_extractf128_ps(e, 1), _mm256_extractf128_ps(m, 1), _mm256_extractf128_ps(b, 1),
                             _mm256_extractf128_ps(l_special, 1), _mm256_extractf128_ps(special, 1));
  __m256 y = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
  /* Negative a (sign bit set, -0 and -inf included): odd integer b flips the
   * sign; finite a < 0 with finite non-integer b is NaN. */
  const __m256 b_int = _mm256_cmp_ps(b, _mm256_round_ps(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), _CMP_EQ_OQ);
  const __m256 b_small = _mm256_cmp_ps(abs8(b), set1(16777216.0f), _CMP_LT_OQ);
  const __m256i odd_bit = _mm256_slli_epi32(_mm256_cvttps_epi32(_mm256_and_ps(b_small, b)), 31);
  const __m256 odd = _mm256_and_ps(_mm256_and_ps(b_int, b_small), _mm256_castsi256_ps(odd_bit));
  /* odd holds the sign bit where b is an odd integer; a's sign bit selects it. */
  y = _mm256_or_ps(y, _mm256_and_ps(_mm256_and_ps(a, set1(-0.0f)), odd));
  const __m256 b_finite = _mm256_cmp_ps(abs8(b), set1(INFINITY), _CMP_LT_OQ);
  const __m256 a_finite_neg =
      _mm256_and_ps(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_LT_OQ), _mm256_cmp_ps(a, set1(-INFINITY), _CMP_GT_OQ));
  y = blend(_mm256_andnot_ps(b_int, _mm256_and_ps(a_finite_neg, b_finite)), set1(NAN), y);
  /* pow(x, +-0) = 1 (x NaN too), pow(1, y) = 1 (y NaN too), pow(-1, +-inf) = 1. */
  const __m256 b_inf = _mm256_cmp_ps(abs8(b), set1(INFINITY), _CMP_EQ_OQ);
  const __m256 one = _mm256_or_ps(
      _mm256_or_ps(_mm256_cmp_ps(b, _mm256_setzero_ps(), _CMP_EQ_OQ), _mm256_cmp_ps(a, set1(1.0f), _CMP_EQ_OQ)),
      _mm256_and_ps(_mm256_cmp_ps(ax, set1(1.0f), _CMP_EQ_OQ), b_inf));
  return blend(one, set1(1.0f), y);
}

void optic_f32_vpow__avx2(size_t n, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, pow8(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  if (i < n) {
    __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, pow8(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m)));
  }
}

void optic_f32_vpowc__avx2(size_t n, const float *a, float s, float *y) {
  const __m256 vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, pow8(_mm256_loadu_ps(a + i), vs));
  if (i < n) {
    __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, pow8(_mm256_maskload_ps(a + i, m), vs));
  }
}
