/* AVX-512 f32 select kernel: a byte test (BW+VL) turns 16 predicate bytes
 * into a lane mask for a blend; the remainder uses masked loads and a masked
 * store, so nothing past n is touched. Semantics as in kernels/select.h: any
 * nonzero byte is true; blends move bits. */
#include <immintrin.h>

#include "kernels/select.h"

void optic_f32_vselect__avx512(size_t n, const uint8_t *p, const float *a, const float *b, float *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m128i p0 = _mm_loadu_si128((const __m128i *)(p + i));
    __m128i p1 = _mm_loadu_si128((const __m128i *)(p + i + 16));
    __m512 r0 = _mm512_mask_blend_ps(_mm_test_epi8_mask(p0, p0), _mm512_loadu_ps(b + i), _mm512_loadu_ps(a + i));
    __m512 r1 =
        _mm512_mask_blend_ps(_mm_test_epi8_mask(p1, p1), _mm512_loadu_ps(b + i + 16), _mm512_loadu_ps(a + i + 16));
    _mm512_storeu_ps(y + i, r0);
    _mm512_storeu_ps(y + i + 16, r1);
  }
  for (; i < n; i += 16) {
    size_t r = n - i < 16 ? n - i : 16;
    __mmask16 m = (__mmask16)((1u << r) - 1);
    __m128i pv = _mm_maskz_loadu_epi8(m, p + i); /* masked-out bytes read as 0: false */
    __m512 v = _mm512_mask_blend_ps(_mm_test_epi8_mask(pv, pv), _mm512_maskz_loadu_ps(m, b + i),
                                    _mm512_maskz_loadu_ps(m, a + i));
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}
