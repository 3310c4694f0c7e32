/* AVX2 f32 select kernel: 16 predicate bytes widened to two 8-lane masks per
 * iteration (vpmovzxbd, compare with zero), blend, then 8, then a scalar tail
 * (AVX2 has no masked byte load; nothing past n is read or written).
 * Semantics as in kernels/select.h: any nonzero byte is true; blends move bits. */
#include <immintrin.h>

#include "kernels/select.h"

/* Lanes from a where the low 8 bytes of p8 are nonzero, from b elsewhere. */
static inline __m256 select8(__m128i p8, __m256 a, __m256 b) {
  __m256i is_zero = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(p8), _mm256_setzero_si256());
  return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(is_zero));
}

void optic_f32_vselect__avx2(size_t n, const uint8_t *p, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i p16 = _mm_loadu_si128((const __m128i *)(p + i));
    __m256 r0 = select8(p16, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 r1 = select8(_mm_srli_si128(p16, 8), _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    _mm256_storeu_ps(y + i, r0);
    _mm256_storeu_ps(y + i + 8, r1);
  }
  for (; i + 8 <= n; i += 8) {
    __m128i p8 = _mm_loadl_epi64((const __m128i *)(p + i));
    _mm256_storeu_ps(y + i, select8(p8, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  for (; i < n; i++) y[i] = p[i] != 0 ? a[i] : b[i];
}
