/* AVX2 conversion kernels: vector bodies, then scalar tails with the same
 * semantics (kernels/convert.h), so nothing past n is read or written.
 * cvttps2dq/cvttpd2dq give 0x80000000 for NaN and out-of-range input; the
 * saturating kernels repair those lanes explicitly (see each kernel). */
#include <immintrin.h>

#include "kernels/convert.h"
#include "kernels/x86/avx2/mask_bytes_avx2.h"

void optic_f32_f64_vcvt__avx2(size_t n, const float *x, double *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d d0 = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    __m256d d1 = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
    _mm256_storeu_pd(y + i, d0);
    _mm256_storeu_pd(y + i + 4, d1);
  }
  for (; i < n; i++) y[i] = (double)x[i];
}

void optic_f64_f32_vcvt__avx2(size_t n, const double *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128 f0 = _mm256_cvtpd_ps(_mm256_loadu_pd(x + i));
    __m128 f1 = _mm256_cvtpd_ps(_mm256_loadu_pd(x + i + 4));
    _mm_storeu_ps(y + i, f0);
    _mm_storeu_ps(y + i + 4, f1);
  }
  for (; i < n; i++) y[i] = (float)x[i];
}

/* cvttps2dq already gives INT32_MIN below -2^31 (and for -inf). Lanes >= 2^31
 * (with +inf) also came out 0x80000000: xor with the all-ones compare mask
 * turns that into 0x7fffffff. NaN lanes are then zeroed (the >= compare is
 * false for NaN, so they are still 0x80000000 before the and). */
static inline __m256i f32_to_s32_sat(__m256 v) {
  __m256i r = _mm256_cvttps_epi32(v);
  __m256 too_big = _mm256_cmp_ps(v, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ);
  r = _mm256_xor_si256(r, _mm256_castps_si256(too_big));
  return _mm256_and_si256(r, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q)));
}

void optic_f32_s32_vcvt__avx2(size_t n, const float *x, int32_t *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i r0 = f32_to_s32_sat(_mm256_loadu_ps(x + i));
    __m256i r1 = f32_to_s32_sat(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_si256((__m256i *)(y + i), r0);
    _mm256_storeu_si256((__m256i *)(y + i + 8), r1);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(y + i), f32_to_s32_sat(_mm256_loadu_ps(x + i)));
  for (; i < n; i++) y[i] = optic_convert_f32_s32_one(x[i]);
}

void optic_s32_f32_vcvt__avx2(size_t n, const int32_t *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 f0 = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(x + i)));
    __m256 f1 = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(x + i + 8)));
    _mm256_storeu_ps(y + i, f0);
    _mm256_storeu_ps(y + i + 8, f1);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
  for (; i < n; i++) y[i] = (float)x[i];
}

/* INT32_MAX is a double, so the repair happens before converting: min()
 * brings everything >= 2^31 down to INT32_MAX (min returns its second operand
 * for NaN, so NaN lanes become INT32_MAX too, and the ordered mask then zeroes
 * them). Below -2^31 - 1, cvttpd2dq's 0x80000000 is INT32_MIN already. */
static inline __m128i f64_to_s32_sat(__m256d v) {
  __m256d c = _mm256_min_pd(v, _mm256_set1_pd(2147483647.0));
  c = _mm256_and_pd(c, _mm256_cmp_pd(v, v, _CMP_ORD_Q));
  return _mm256_cvttpd_epi32(c);
}

void optic_f64_s32_vcvt__avx2(size_t n, const double *x, int32_t *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i r0 = f64_to_s32_sat(_mm256_loadu_pd(x + i));
    __m128i r1 = f64_to_s32_sat(_mm256_loadu_pd(x + i + 4));
    _mm_storeu_si128((__m128i *)(y + i), r0);
    _mm_storeu_si128((__m128i *)(y + i + 4), r1);
  }
  for (; i < n; i++) y[i] = optic_convert_f64_s32_one(x[i]);
}

void optic_s32_f64_vcvt__avx2(size_t n, const int32_t *x, double *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d d0 = _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(x + i)));
    __m256d d1 = _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(x + i + 4)));
    _mm256_storeu_pd(y + i, d0);
    _mm256_storeu_pd(y + i + 4, d1);
  }
  for (; i < n; i++) y[i] = (double)x[i];
}

/* x != 0 as the unordered not-equal compare: true for NaN, false for ±0. */
void optic_f32_pred_vcvt__avx2(size_t n, const float *x, uint8_t *y) {
  const __m256 zero = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 m0 = _mm256_cmp_ps(_mm256_loadu_ps(x + i), zero, _CMP_NEQ_UQ);
    __m256 m1 = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 8), zero, _CMP_NEQ_UQ);
    __m256 m2 = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 16), zero, _CMP_NEQ_UQ);
    __m256 m3 = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 24), zero, _CMP_NEQ_UQ);
    optic_avx2_store_mask_bytes32(y + i, m0, m1, m2, m3);
  }
  for (; i + 8 <= n; i += 8) {
    optic_avx2_store_mask_bytes8(y + i, _mm256_cmp_ps(_mm256_loadu_ps(x + i), zero, _CMP_NEQ_UQ));
  }
  for (; i < n; i++) y[i] = x[i] != 0.0f;
}

void optic_u8_f32_vcvt__avx2(size_t n, const uint8_t *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i b = _mm_loadu_si128((const __m128i *)(x + i));
    __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
    __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8)));
    _mm256_storeu_ps(y + i, f0);
    _mm256_storeu_ps(y + i + 8, f1);
  }
  for (; i + 8 <= n; i += 8) {
    __m128i b = _mm_loadl_epi64((const __m128i *)(x + i));
    _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)));
  }
  for (; i < n; i++) y[i] = (float)x[i];
}
