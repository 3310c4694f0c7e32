/* AVX-512 f32 compare kernels: a compare mask per 16 floats expanded into 16
 * predicate bytes with a byte-masked move (BW+VL); the remainder uses masked
 * loads and a masked byte store, so nothing past n is touched. Semantics as
 * in kernels/compare.h (ordered-quiet predicates; NE is unordered-or-unequal). */
#include <immintrin.h>

#include "kernels/compare.h"

static inline __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << r) - 1); }

#define AVX512_VV(fn, PRED)                                                                                   \
  void fn(size_t n, const float *a, const float *b, uint8_t *y) {                                             \
    const __m128i one = _mm_set1_epi8(1);                                                                     \
    size_t i = 0;                                                                                             \
    for (; i + 32 <= n; i += 32) {                                                                            \
      __mmask16 k0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), PRED);                \
      __mmask16 k1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), PRED);      \
      _mm_storeu_si128((__m128i *)(y + i), _mm_maskz_mov_epi8(k0, one));                                      \
      _mm_storeu_si128((__m128i *)(y + i + 16), _mm_maskz_mov_epi8(k1, one));                                 \
    }                                                                                                         \
    for (; i < n; i += 16) {                                                                                  \
      __mmask16 m = tail_mask(n - i < 16 ? n - i : 16);                                                       \
      __mmask16 k =                                                                                           \
          _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), PRED); \
      _mm_mask_storeu_epi8(y + i, m, _mm_maskz_mov_epi8(k, one));                                             \
    }                                                                                                         \
  }

#define AVX512_VS(fn, PRED)                                                                \
  void fn(size_t n, const float *a, float s, uint8_t *y) {                                 \
    const __m128i one = _mm_set1_epi8(1);                                                  \
    const __m512 vs = _mm512_set1_ps(s);                                                   \
    size_t i = 0;                                                                          \
    for (; i + 32 <= n; i += 32) {                                                         \
      __mmask16 k0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(a + i), vs, PRED);                 \
      __mmask16 k1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(a + i + 16), vs, PRED);            \
      _mm_storeu_si128((__m128i *)(y + i), _mm_maskz_mov_epi8(k0, one));                   \
      _mm_storeu_si128((__m128i *)(y + i + 16), _mm_maskz_mov_epi8(k1, one));              \
    }                                                                                      \
    for (; i < n; i += 16) {                                                               \
      __mmask16 m = tail_mask(n - i < 16 ? n - i : 16);                                    \
      __mmask16 k = _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, a + i), vs, PRED); \
      _mm_mask_storeu_epi8(y + i, m, _mm_maskz_mov_epi8(k, one));                          \
    }                                                                                      \
  }

AVX512_VV(optic_f32_vcmpeq__avx512, _CMP_EQ_OQ)
AVX512_VV(optic_f32_vcmpne__avx512, _CMP_NEQ_UQ)
AVX512_VV(optic_f32_vcmplt__avx512, _CMP_LT_OQ)
AVX512_VV(optic_f32_vcmple__avx512, _CMP_LE_OQ)
AVX512_VV(optic_f32_vcmpgt__avx512, _CMP_GT_OQ)
AVX512_VV(optic_f32_vcmpge__avx512, _CMP_GE_OQ)
AVX512_VS(optic_f32_vcmpeqc__avx512, _CMP_EQ_OQ)
AVX512_VS(optic_f32_vcmpnec__avx512, _CMP_NEQ_UQ)
AVX512_VS(optic_f32_vcmpltc__avx512, _CMP_LT_OQ)
AVX512_VS(optic_f32_vcmplec__avx512, _CMP_LE_OQ)
AVX512_VS(optic_f32_vcmpgtc__avx512, _CMP_GT_OQ)
AVX512_VS(optic_f32_vcmpgec__avx512, _CMP_GE_OQ)
