/* AVX-512 pow for the binary family (y = a^b, vv and vs): C powf semantics,
 * log2|a| and 2^(b log2|a|) evaluated in double (8 lanes per half vector) so
 * the one float rounding at the end dominates the error. Masked remainder, no
 * gathers, no scalar fallback. Semantics in kernels/binary.h; AVX-512 flags only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/binary.h"
#include "kernels/unary_consts.h"

static inline __m512 set1(float v) { return _mm512_set1_ps(v); }
static inline __m512d set1d(double v) { return _mm512_set1_pd(v); }
static inline __m512d maddd(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }

/* 2^(b L) for 8 lanes: L = log2|a| = e + log(m) log2e with log(m) = 2 atanh(s),
 * s = (m - 1)/(m + 1); then 2^t = 2^n 2^r, |r| <= 1/2. Special L (+-inf, NaN)
 * and t flow through: the clamp keeps 2^n finite and NaN passes the max/min
 * (they return their second operand when either is NaN). */
static inline __m256 pow_half(__m256 e_f, __m256 m_f, __m256 b_f, __m256 l_special, __mmask8 special) {
  const __m512d m = _mm512_cvtps_pd(m_f);
  const __m512d s = _mm512_div_pd(_mm512_sub_pd(m, set1d(1.0)), _mm512_add_pd(m, set1d(1.0)));
  const __m512d z = _mm512_mul_pd(s, s);
  __m512d p = maddd(set1d(1.0 / 15), z, set1d(1.0 / 13));
  p = maddd(p, z, set1d(1.0 / 11));
  p = maddd(p, z, set1d(1.0 / 9));
  p = maddd(p, z, set1d(1.0 / 7));
  p = maddd(p, z, set1d(1.0 / 5));
  p = maddd(p, z, set1d(1.0 / 3));
  const __m512d s2 = _mm512_add_pd(s, s);
  const __m512d lm = maddd(_mm512_mul_pd(s2, z), p, s2);
  __m512d l = maddd(lm, set1d(OPTIC_POW_LOG2E), _mm512_cvtps_pd(e_f));
  l = _mm512_mask_mov_pd(l, special, _mm512_cvtps_pd(l_special));
  __m512d t = _mm512_mul_pd(_mm512_cvtps_pd(b_f), l);
  t = _mm512_max_pd(set1d(-OPTIC_POW_T_LIMIT), t);
  t = _mm512_min_pd(set1d(OPTIC_POW_T_LIMIT), t);
  const __m512d d = _mm512_add_pd(t, set1d(OPTIC_POW_ROUND_MAGIC));
  const __m512d r = _mm512_sub_pd(t, _mm512_sub_pd(d, set1d(OPTIC_POW_ROUND_MAGIC)));
  __m512d q = maddd(set1d(OPTIC_POW_EXP2_C10), r, set1d(OPTIC_POW_EXP2_C9));
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
  const __m512i scale =
      _mm512_add_epi64(_mm512_slli_epi64(_mm512_castpd_si512(d), 52), _mm512_set1_epi64(0x3ff0000000000000ll));
  return _mm512_cvtpd_ps(_mm512_mul_pd(q, _mm512_castsi512_pd(scale)));
}

static inline __m512 pow16(__m512 a, __m512 b) {
  const __m512 ax = _mm512_abs_ps(a);
  /* |a| = 2^e m, m in [sqrt(1/2), sqrt(2)); subnormals scaled by 2^23 first. */
  const __mmask16 sub = _mm512_cmp_ps_mask(ax, set1(1.17549435e-38f), _CMP_LT_OQ);
  const __m512 xs = _mm512_mask_mul_ps(ax, sub, ax, set1(8388608.0f));
  const __m512i u = _mm512_sub_epi32(_mm512_castps_si512(xs), _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS));
  __m512i ei = _mm512_srai_epi32(u, 23);
  ei = _mm512_mask_sub_epi32(ei, sub, ei, _mm512_set1_epi32(23));
  const __m512 e = _mm512_cvtepi32_ps(ei);
  const __m512 m = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x007fffff)),
                                                        _mm512_set1_epi32(OPTIC_LOG_SQRT_HALF_BITS)));
  /* log2|a| of 0, inf, NaN: -inf, inf, NaN (NaN + inf is NaN, inf + inf is inf). */
  const __mmask16 zero = _mm512_cmp_ps_mask(ax, _mm512_setzero_ps(), _CMP_EQ_OQ);
  const __mmask16 special = zero | _mm512_cmp_ps_mask(ax, set1(INFINITY), _CMP_NLT_UQ);
  const __m512 l_special = _mm512_mask_mov_ps(_mm512_add_ps(ax, set1(INFINITY)), zero, set1(-INFINITY));
  const __m256 lo = pow_half(_mm512_castps512_ps256(e), _mm512_castps512_ps256(m), _mm512_castps512_ps256(b),
                             _mm512_castps512_ps256(l_special), (__mmask8)special);
  const __m256 hi = pow_half(_mm512_extractf32x8_ps(e, 1), _mm512_extractf32x8_ps(m, 1), _mm512_extractf32x8_ps(b, 1),
                             _mm512_extractf32x8_ps(l_special, 1), (__mmask8)(special >> 8));
  __m512 y = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  /* Negative a (sign bit set, -0 and -inf included): odd integer b flips the
   * sign; finite a < 0 with finite non-integer b is NaN. */
  const __m512 bi = _mm512_roundscale_ps(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __mmask16 b_int = _mm512_cmp_ps_mask(b, bi, _CMP_EQ_OQ);
  const __mmask16 b_small = _mm512_cmp_ps_mask(_mm512_abs_ps(b), set1(16777216.0f), _CMP_LT_OQ);
  const __m512i odd_bit = _mm512_slli_epi32(_mm512_cvttps_epi32(_mm512_maskz_mov_ps(b_small, b)), 31);
  const __mmask16 neg = _mm512_movepi32_mask(_mm512_castps_si512(a));
  const __mmask16 odd = b_int & b_small & _mm512_test_epi32_mask(odd_bit, odd_bit);
  y = _mm512_mask_or_ps(y, neg & odd, y, set1(-0.0f));
  const __mmask16 b_finite = _mm512_cmp_ps_mask(_mm512_abs_ps(b), set1(INFINITY), _CMP_LT_OQ);
  const __mmask16 a_finite_neg =
      _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ) & _mm512_cmp_ps_mask(a, set1(-INFINITY), _CMP_GT_OQ);
  y = _mm512_mask_mov_ps(y, a_finite_neg & b_finite & ~b_int, set1(NAN));
  /* pow(x, +-0) = 1 (x NaN too), pow(1, y) = 1 (y NaN too), pow(-1, +-inf) = 1. */
  const __mmask16 one =
      _mm512_cmp_ps_mask(b, _mm512_setzero_ps(), _CMP_EQ_OQ) | _mm512_cmp_ps_mask(a, set1(1.0f), _CMP_EQ_OQ) |
      (_mm512_cmp_ps_mask(ax, set1(1.0f), _CMP_EQ_OQ) & ~b_finite & _mm512_cmp_ps_mask(b, b, _CMP_ORD_Q));
  return _mm512_mask_mov_ps(y, one, set1(1.0f));
}

void optic_f32_vpow__avx512(size_t n, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, pow16(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, pow16(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
  }
}

void optic_f32_vpowc__avx512(size_t n, const float *a, float s, float *y) {
  const __m512 vs = _mm512_set1_ps(s);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, pow16(_mm512_loadu_ps(a + i), vs));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, pow16(_mm512_maskz_loadu_ps(m, a + i), vs));
  }
}
