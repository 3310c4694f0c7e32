/* AVX2 f32 compare kernels: 32 floats per iteration packed into 32 predicate
 * bytes, then 8 at a time, then a scalar tail (no masked byte store in AVX2;
 * nothing is read or written past n). Semantics as in kernels/compare.h: the
 * ordered-quiet predicates, and unordered NEQ so NaN != x is 1. */
#include <immintrin.h>

#include "kernels/compare.h"
#include "kernels/x86/avx2/mask_bytes_avx2.h"

#define AVX2_VV(fn, PRED, OP1)                                                                                  \
  void fn(size_t n, const float *a, const float *b, uint8_t *y) {                                               \
    size_t i = 0;                                                                                               \
    for (; i + 32 <= n; i += 32) {                                                                              \
      __m256 m0 = _mm256_cmp_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), PRED);                          \
      __m256 m1 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), PRED);                  \
      __m256 m2 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), PRED);                \
      __m256 m3 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), PRED);                \
      optic_avx2_store_mask_bytes32(y + i, m0, m1, m2, m3);                                                     \
    }                                                                                                           \
    for (; i + 8 <= n; i += 8) {                                                                                \
      optic_avx2_store_mask_bytes8(y + i, _mm256_cmp_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), PRED)); \
    }                                                                                                           \
    for (; i < n; i++) y[i] = (uint8_t)(a[i] OP1 b[i]);                                                         \
  }

#define AVX2_VS(fn, PRED, OP1)                                                              \
  void fn(size_t n, const float *a, float s, uint8_t *y) {                                  \
    const __m256 vs = _mm256_set1_ps(s);                                                    \
    size_t i = 0;                                                                           \
    for (; i + 32 <= n; i += 32) {                                                          \
      __m256 m0 = _mm256_cmp_ps(_mm256_loadu_ps(a + i), vs, PRED);                          \
      __m256 m1 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 8), vs, PRED);                      \
      __m256 m2 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 16), vs, PRED);                     \
      __m256 m3 = _mm256_cmp_ps(_mm256_loadu_ps(a + i + 24), vs, PRED);                     \
      optic_avx2_store_mask_bytes32(y + i, m0, m1, m2, m3);                                 \
    }                                                                                       \
    for (; i + 8 <= n; i += 8) {                                                            \
      optic_avx2_store_mask_bytes8(y + i, _mm256_cmp_ps(_mm256_loadu_ps(a + i), vs, PRED)); \
    }                                                                                       \
    for (; i < n; i++) y[i] = (uint8_t)(a[i] OP1 s);                                        \
  }

AVX2_VV(optic_f32_vcmpeq__avx2, _CMP_EQ_OQ, ==)
AVX2_VV(optic_f32_vcmpne__avx2, _CMP_NEQ_UQ, !=)
AVX2_VV(optic_f32_vcmplt__avx2, _CMP_LT_OQ, <)
AVX2_VV(optic_f32_vcmple__avx2, _CMP_LE_OQ, <=)
AVX2_VV(optic_f32_vcmpgt__avx2, _CMP_GT_OQ, >)
AVX2_VV(optic_f32_vcmpge__avx2, _CMP_GE_OQ, >=)
AVX2_VS(optic_f32_vcmpeqc__avx2, _CMP_EQ_OQ, ==)
AVX2_VS(optic_f32_vcmpnec__avx2, _CMP_NEQ_UQ, !=)
AVX2_VS(optic_f32_vcmpltc__avx2, _CMP_LT_OQ, <)
AVX2_VS(optic_f32_vcmplec__avx2, _CMP_LE_OQ, <=)
AVX2_VS(optic_f32_vcmpgtc__avx2, _CMP_GT_OQ, >)
AVX2_VS(optic_f32_vcmpgec__avx2, _CMP_GE_OQ, >=)
