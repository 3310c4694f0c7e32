/* AVX-512 conversion kernels: vector bodies and masked remainders (masked
 * loads never touch masked-out elements, so nothing past n is read or
 * written). Semantics as in kernels/convert.h. vcvttps2dq/vcvttpd2dq give
 * 0x80000000 for NaN and out-of-range input (AVX-512 has no saturating form
 * before AVX10.2); the saturating kernels repair those lanes with masks. */
#include <immintrin.h>

#include "kernels/convert.h"

static inline __mmask16 mask16(size_t r) { return (__mmask16)((1u << (r < 16 ? r : 16)) - 1); }
static inline __mmask8 mask8(size_t r) { return (__mmask8)((1u << (r < 8 ? r : 8)) - 1); }

void optic_f32_f64_vcvt__avx512(size_t n, const float *x, double *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d d0 = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    __m512d d1 = _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8));
    _mm512_storeu_pd(y + i, d0);
    _mm512_storeu_pd(y + i + 8, d1);
  }
  for (; i < n; i += 8) {
    __mmask8 m = mask8(n - i);
    _mm512_mask_storeu_pd(y + i, m, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i)));
  }
}

void optic_f64_f32_vcvt__avx512(size_t n, const double *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 f0 = _mm512_cvtpd_ps(_mm512_loadu_pd(x + i));
    __m256 f1 = _mm512_cvtpd_ps(_mm512_loadu_pd(x + i + 8));
    _mm256_storeu_ps(y + i, f0);
    _mm256_storeu_ps(y + i + 8, f1);
  }
  for (; i < n; i += 8) {
    __mmask8 m = mask8(n - i);
    _mm256_mask_storeu_ps(y + i, m, _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(m, x + i)));
  }
}

/* Lanes >= 2^31 (and +inf) become INT32_MAX, NaN lanes 0; below -2^31 the
 * instruction's 0x80000000 is INT32_MIN already. */
static inline __m512i f32_to_s32_sat(__m512 v) {
  __m512i r = _mm512_cvttps_epi32(v);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),
                            _mm512_set1_epi32(INT32_MAX));
  return _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), r);
}

void optic_f32_s32_vcvt__avx512(size_t n, const float *x, int32_t *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512i r0 = f32_to_s32_sat(_mm512_loadu_ps(x + i));
    __m512i r1 = f32_to_s32_sat(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_si512(y + i, r0);
    _mm512_storeu_si512(y + i + 16, r1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = mask16(n - i);
    _mm512_mask_storeu_epi32(y + i, m, f32_to_s32_sat(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

void optic_s32_f32_vcvt__avx512(size_t n, const int32_t *x, float *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 f0 = _mm512_cvtepi32_ps(_mm512_loadu_si512(x + i));
    __m512 f1 = _mm512_cvtepi32_ps(_mm512_loadu_si512(x + i + 16));
    _mm512_storeu_ps(y + i, f0);
    _mm512_storeu_ps(y + i + 16, f1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = mask16(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, x + i)));
  }
}

/* INT32_MAX is a double: min() brings everything >= 2^31 down to it before
 * converting (and NaN too, min returning its second operand); the ordered
 * mask then zeroes NaN lanes. Below -2^31 - 1 the result is INT32_MIN already. */
static inline __m256i f64_to_s32_sat(__m512d v) {
  __m512d c = _mm512_min_pd(v, _mm512_set1_pd(2147483647.0));
  c = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), c);
  return _mm512_cvttpd_epi32(c);
}

void optic_f64_s32_vcvt__avx512(size_t n, const double *x, int32_t *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i r0 = f64_to_s32_sat(_mm512_loadu_pd(x + i));
    __m256i r1 = f64_to_s32_sat(_mm512_loadu_pd(x + i + 8));
    _mm256_storeu_si256((__m256i *)(y + i), r0);
    _mm256_storeu_si256((__m256i *)(y + i + 8), r1);
  }
  for (; i < n; i += 8) {
    __mmask8 m = mask8(n - i);
    _mm256_mask_storeu_epi32(y + i, m, f64_to_s32_sat(_mm512_maskz_loadu_pd(m, x + i)));
  }
}

void optic_s32_f64_vcvt__avx512(size_t n, const int32_t *x, double *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d d0 = _mm512_cvtepi32_pd(_mm256_loadu_si256((const __m256i *)(x + i)));
    __m512d d1 = _mm512_cvtepi32_pd(_mm256_loadu_si256((const __m256i *)(x + i + 8)));
    _mm512_storeu_pd(y + i, d0);
    _mm512_storeu_pd(y + i + 8, d1);
  }
  for (; i < n; i += 8) {
    __mmask8 m = mask8(n - i);
    _mm512_mask_storeu_pd(y + i, m, _mm512_cvtepi32_pd(_mm256_maskz_loadu_epi32(m, x + i)));
  }
}

/* x != 0 as the unordered not-equal compare: true for NaN, false for ±0. */
void optic_f32_pred_vcvt__avx512(size_t n, const float *x, uint8_t *y) {
  const __m512 zero = _mm512_setzero_ps();
  const __m128i one = _mm_set1_epi8(1);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __mmask16 k0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), zero, _CMP_NEQ_UQ);
    __mmask16 k1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i + 16), zero, _CMP_NEQ_UQ);
    _mm_storeu_si128((__m128i *)(y + i), _mm_maskz_mov_epi8(k0, one));
    _mm_storeu_si128((__m128i *)(y + i + 16), _mm_maskz_mov_epi8(k1, one));
  }
  for (; i < n; i += 16) {
    __mmask16 m = mask16(n - i);
    __mmask16 k = _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, x + i), zero, _CMP_NEQ_UQ);
    _mm_mask_storeu_epi8(y + i, m, _mm_maskz_mov_epi8(k, one));
  }
}

void optic_u8_f32_vcvt__avx512(size_t n, const uint8_t *x, float *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 f0 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x + i))));
    __m512 f1 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x + i + 16))));
    _mm512_storeu_ps(y + i, f0);
    _mm512_storeu_ps(y + i + 16, f1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = mask16(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x + i))));
  }
}
