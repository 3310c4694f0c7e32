/* AVX-512 f32 <-> bf16/f16 conversion kernels: the integer bit arithmetic of
 * core/half.h on 16 lanes (every case computed, one selected by masks), so
 * the results are bitwise the scalar converter's, FTZ/DAZ or not; masked
 * remainders (nothing past n is read or written). AVX512_BF16's vcvtneps2bf16
 * is not used: it flushes subnormal inputs to zero, which the scalar
 * converter does not. Semantics as in kernels/convert.h. */
#include <immintrin.h>

#include "kernels/convert.h"

static inline __mmask16 tail16(size_t r) { return (__mmask16)((1u << (r < 16 ? r : 16)) - 1); }
static inline __m512i set1i(uint32_t v) { return _mm512_set1_epi32((int)v); }

/* b + 0x7FFF + (b >> 16 & 1), >> 16: nearest even; NaN: (b >> 16) | 0x40. */
static inline __m256i f32_bf16_16(__m512 x) {
  const __m512i b = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), set1i(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(b, set1i(0x7FFF)), lsb), 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(b, set1i(0x7FFFFFFF)), set1i(0x7F800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(b, 16), set1i(0x0040)));
  return _mm512_cvtepi32_epi16(r);
}

static inline __m512 bf16_f32_16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* NaN, overflow, normal (rebias, nearest even), subnormal (|x| 2^24 rounded to
 * an integer, which cvtps2dq does to nearest even), in that priority. */
static inline __m256i f32_f16_16(__m512 x) {
  const __m512i b = _mm512_castps_si512(x), a = _mm512_and_si512(b, set1i(0x7FFFFFFF));
  const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(b, 16), set1i(0x8000));
  const __m512i sub = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(0x1p24f)));
  const __m512i an = _mm512_sub_epi32(a, set1i(0x38000000));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(an, 13), set1i(1));
  const __m512i normal = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(an, set1i(0x0FFF)), lsb), 13);
  const __m512i nan = _mm512_or_si512(set1i(0x7E00), _mm512_and_si512(_mm512_srli_epi32(a, 13), set1i(0x1FF)));
  __m512i r = _mm512_mask_mov_epi32(sub, _mm512_cmpge_epu32_mask(a, set1i(0x38800000)), normal);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpge_epu32_mask(a, set1i(0x477FF000)), set1i(0x7C00));
  r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(a, set1i(0x7F800000)), nan);
  return _mm512_cvtepi32_epi16(_mm512_or_si512(r, sign));
}

/* Subnormal m 2^-24 from an integer, normal by an exponent rebias (15 -> 127),
 * inf/NaN with the payload kept; the sign or'ed in. */
static inline __m512 f16_f32_16(__m256i h16) {
  const __m512i h = _mm512_cvtepu16_epi32(h16), em = _mm512_and_si512(h, set1i(0x7FFF));
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(h, set1i(0x8000)), 16);
  const __m512i sub = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(em), _mm512_set1_ps(0x1p-24f)));
  const __m512i sh = _mm512_slli_epi32(em, 13);
  __m512i r = _mm512_add_epi32(sh, set1i(112u << 23));
  r = _mm512_mask_mov_epi32(r, _mm512_cmplt_epu32_mask(em, set1i(0x400)), sub);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpge_epu32_mask(em, set1i(0x7C00)), _mm512_or_si512(sh, set1i(0x7F800000)));
  return _mm512_castsi512_ps(_mm512_or_si512(r, sign));
}

#define NARROW16(fn, OP)                                                             \
  void fn(size_t n, const float *x, uint16_t *y) {                                   \
    size_t i = 0;                                                                    \
    for (; i + 32 <= n; i += 32) {                                                   \
      __m256i r0 = OP(_mm512_loadu_ps(x + i)), r1 = OP(_mm512_loadu_ps(x + i + 16)); \
      _mm256_storeu_si256((__m256i *)(void *)(y + i), r0);                           \
      _mm256_storeu_si256((__m256i *)(void *)(y + i + 16), r1);                      \
    }                                                                                \
    for (; i < n; i += 16) {                                                         \
      __mmask16 m = tail16(n - i);                                                   \
      _mm256_mask_storeu_epi16(y + i, m, OP(_mm512_maskz_loadu_ps(m, x + i)));       \
    }                                                                                \
  }

#define WIDEN16(fn, OP)                                                                \
  void fn(size_t n, const uint16_t *x, float *y) {                                     \
    size_t i = 0;                                                                      \
    for (; i + 32 <= n; i += 32) {                                                     \
      __m512 r0 = OP(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)));      \
      __m512 r1 = OP(_mm256_loadu_si256((const __m256i *)(const void *)(x + i + 16))); \
      _mm512_storeu_ps(y + i, r0);                                                     \
      _mm512_storeu_ps(y + i + 16, r1);                                                \
    }                                                                                  \
    for (; i < n; i += 16) {                                                           \
      __mmask16 m = tail16(n - i);                                                     \
      _mm512_mask_storeu_ps(y + i, m, OP(_mm256_maskz_loadu_epi16(m, x + i)));         \
    }                                                                                  \
  }

NARROW16(optic_f32_bf16_vcvt__avx512, f32_bf16_16)
WIDEN16(optic_bf16_f32_vcvt__avx512, bf16_f32_16)
NARROW16(optic_f32_f16_vcvt__avx512, f32_f16_16)
WIDEN16(optic_f16_f32_vcvt__avx512, f16_f32_16)
