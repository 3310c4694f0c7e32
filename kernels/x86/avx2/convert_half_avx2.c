/* AVX2 f32 <-> bf16/f16 conversion kernels: the integer bit arithmetic of
 * core/half.h on 8 lanes (every case computed, one selected by masks; the
 * compared values are below 2^31, so signed compares serve), bitwise the
 * scalar converter's, FTZ/DAZ or not; the last n mod 8 elements go through
 * core/half.h itself (nothing past n is touched). F16C's vcvtps2ph is not
 * used: the AVX2 tier does not require it. Semantics as in kernels/convert.h. */
#include <immintrin.h>

#include "core/half.h"
#include "kernels/convert.h"

static inline __m256i set1i(uint32_t v) { return _mm256_set1_epi32((int)v); }
static inline __m256i pick(__m256i mask, __m256i if_true, __m256i if_false) {
  return _mm256_blendv_epi8(if_false, if_true, mask);
}
/* Eight 32-bit lanes (each < 2^16) to eight u16 in order. */
static inline __m128i narrow8(__m256i r) {
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  return _mm256_castsi256_si128(p);
}

static inline __m128i f32_bf16_8(__m256 x) {
  const __m256i b = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), set1i(1));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(b, set1i(0x7FFF)), lsb), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(b, set1i(0x7FFFFFFF)), set1i(0x7F800000));
  return narrow8(pick(nan, _mm256_or_si256(_mm256_srli_epi32(b, 16), set1i(0x0040)), r));
}

static inline __m256 bf16_f32_8(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline __m128i f32_f16_8(__m256 x) {
  const __m256i b = _mm256_castps_si256(x), a = _mm256_and_si256(b, set1i(0x7FFFFFFF));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(b, 16), set1i(0x8000));
  const __m256i sub = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(0x1p24f)));
  const __m256i an = _mm256_sub_epi32(a, set1i(0x38000000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(an, 13), set1i(1));
  const __m256i normal = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(an, set1i(0x0FFF)), lsb), 13);
  const __m256i nan = _mm256_or_si256(set1i(0x7E00), _mm256_and_si256(_mm256_srli_epi32(a, 13), set1i(0x1FF)));
  __m256i r = pick(_mm256_cmpgt_epi32(a, set1i(0x38800000 - 1)), normal, sub);
  r = pick(_mm256_cmpgt_epi32(a, set1i(0x477FF000 - 1)), set1i(0x7C00), r);
  r = pick(_mm256_cmpgt_epi32(a, set1i(0x7F800000)), nan, r);
  return narrow8(_mm256_or_si256(r, sign));
}

static inline __m256 f16_f32_8(__m128i h16) {
  const __m256i h = _mm256_cvtepu16_epi32(h16), em = _mm256_and_si256(h, set1i(0x7FFF));
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(h, set1i(0x8000)), 16);
  const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(em), _mm256_set1_ps(0x1p-24f)));
  const __m256i sh = _mm256_slli_epi32(em, 13);
  __m256i r = _mm256_add_epi32(sh, set1i(112u << 23));
  r = pick(_mm256_cmpgt_epi32(set1i(0x400), em), sub, r);
  r = pick(_mm256_cmpgt_epi32(em, set1i(0x7C00 - 1)), _mm256_or_si256(sh, set1i(0x7F800000)), r);
  return _mm256_castsi256_ps(_mm256_or_si256(r, sign));
}

#define NARROW8(fn, OP, ONE)                                                                             \
  void fn(size_t n, const float *x, uint16_t *y) {                                                       \
    size_t i = 0;                                                                                        \
    for (; i + 16 <= n; i += 16) {                                                                       \
      __m128i r0 = OP(_mm256_loadu_ps(x + i)), r1 = OP(_mm256_loadu_ps(x + i + 8));                      \
      _mm_storeu_si128((__m128i *)(void *)(y + i), r0);                                                  \
      _mm_storeu_si128((__m128i *)(void *)(y + i + 8), r1);                                              \
    }                                                                                                    \
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(void *)(y + i), OP(_mm256_loadu_ps(x + i))); \
    for (; i < n; i++) y[i] = ONE(x[i]);                                                                 \
  }

#define WIDEN8(fn, OP, ONE)                                                                                          \
  void fn(size_t n, const uint16_t *x, float *y) {                                                                   \
    size_t i = 0;                                                                                                    \
    for (; i + 16 <= n; i += 16) {                                                                                   \
      __m256 r0 = OP(_mm_loadu_si128((const __m128i *)(const void *)(x + i)));                                       \
      __m256 r1 = OP(_mm_loadu_si128((const __m128i *)(const void *)(x + i + 8)));                                   \
      _mm256_storeu_ps(y + i, r0);                                                                                   \
      _mm256_storeu_ps(y + i + 8, r1);                                                                               \
    }                                                                                                                \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, OP(_mm_loadu_si128((const __m128i *)(const void *)(x + i)))); \
    for (; i < n; i++) y[i] = ONE(x[i]);                                                                             \
  }

NARROW8(optic_f32_bf16_vcvt__avx2, f32_bf16_8, optic_half_from_f32_bf16)
WIDEN8(optic_bf16_f32_vcvt__avx2, bf16_f32_8, optic_half_to_f32_bf16)
NARROW8(optic_f32_f16_vcvt__avx2, f32_f16_8, optic_half_from_f32_f16)
WIDEN8(optic_f16_f32_vcvt__avx2, f16_f32_8, optic_half_to_f32_f16)
