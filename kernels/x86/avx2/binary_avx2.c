/* AVX2 binary f32 kernels: two 8-float vectors per iteration, then one, then a
 * masked tail (vmaskmov never touches masked-out lanes, so no over-read);
 * large calls use streaming stores (kernels/stream.h).
 * Semantics as in kernels/binary.h; built with -mavx2 -mfma only. */
#include <immintrin.h>

#include "kernels/binary.h"
#include "kernels/x86/stream_x86.h"
#include "kernels/x86/avx2/binary_ops_avx2.h"

/* Lane mask for the first r (< 8) lanes. */
static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}

/* Large calls (kernels/stream.h) store a masked head until y is 32-byte
 * aligned, stream whole vectors, store the masked tail, then SFENCE. */
#define AVX2_VV(fn, OP)                                                                    \
  void fn(size_t n, const float *a, const float *b, float *y) {                            \
    size_t i = 0, head = optic_x86_stream_head(y, n, 3 * n * sizeof(float), 32);           \
    if (head != SIZE_MAX) {                                                                \
      if (head > 0) {                                                                      \
        __m256i m = tail_mask(head);                                                       \
        _mm256_maskstore_ps(y, m, OP(_mm256_maskload_ps(a, m), _mm256_maskload_ps(b, m))); \
      }                                                                                    \
      for (i = head; i + 8 <= n; i += 8) {                                                 \
        _mm256_stream_ps(y + i, OP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));       \
      }                                                                                    \
    } else {                                                                               \
      for (; i + 16 <= n; i += 16) {                                                       \
        __m256 r0 = OP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));                    \
        __m256 r1 = OP(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));            \
        _mm256_storeu_ps(y + i, r0);                                                       \
        _mm256_storeu_ps(y + i + 8, r1);                                                   \
      }                                                                                    \
      for (; i + 8 <= n; i += 8) {                                                         \
        _mm256_storeu_ps(y + i, OP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));       \
      }                                                                                    \
    }                                                                                      \
    if (i < n) {                                                                           \
      __m256i m = tail_mask(n - i);                                                        \
      __m256 r = OP(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m));           \
      _mm256_maskstore_ps(y + i, m, r);                                                    \
    }                                                                                      \
    if (head != SIZE_MAX) _mm_sfence();                                                    \
  }

#define AVX2_VS(fn, OP)                                                                           \
  void fn(size_t n, const float *a, float s, float *y) {                                          \
    const __m256 vs = _mm256_set1_ps(s);                                                          \
    size_t i = 0, head = optic_x86_stream_head(y, n, 2 * n * sizeof(float), 32);                  \
    if (head != SIZE_MAX) {                                                                       \
      if (head > 0) {                                                                             \
        __m256i m = tail_mask(head);                                                              \
        _mm256_maskstore_ps(y, m, OP(_mm256_maskload_ps(a, m), vs));                              \
      }                                                                                           \
      for (i = head; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, OP(_mm256_loadu_ps(a + i), vs)); \
    } else {                                                                                      \
      for (; i + 16 <= n; i += 16) {                                                              \
        __m256 r0 = OP(_mm256_loadu_ps(a + i), vs);                                               \
        __m256 r1 = OP(_mm256_loadu_ps(a + i + 8), vs);                                           \
        _mm256_storeu_ps(y + i, r0);                                                              \
        _mm256_storeu_ps(y + i + 8, r1);                                                          \
      }                                                                                           \
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, OP(_mm256_loadu_ps(a + i), vs));         \
    }                                                                                             \
    if (i < n) {                                                                                  \
      __m256i m = tail_mask(n - i);                                                               \
      _mm256_maskstore_ps(y + i, m, OP(_mm256_maskload_ps(a + i, m), vs));                        \
    }                                                                                             \
    if (head != SIZE_MAX) _mm_sfence();                                                           \
  }

AVX2_VV(optic_f32_vadd__avx2, optic_avx2_add)
AVX2_VV(optic_f32_vsub__avx2, _mm256_sub_ps)
AVX2_VV(optic_f32_vmul__avx2, optic_avx2_mul)
AVX2_VV(optic_f32_vdiv__avx2, _mm256_div_ps)
AVX2_VV(optic_f32_vmax__avx2, optic_avx2_max)
AVX2_VV(optic_f32_vmin__avx2, optic_avx2_min)
AVX2_VS(optic_f32_vaddc__avx2, optic_avx2_add)
AVX2_VS(optic_f32_vsubc__avx2, _mm256_sub_ps)
AVX2_VS(optic_f32_vmulc__avx2, optic_avx2_mul)
AVX2_VS(optic_f32_vdivc__avx2, _mm256_div_ps)
AVX2_VS(optic_f32_vmaxc__avx2, optic_avx2_max)
AVX2_VS(optic_f32_vminc__avx2, optic_avx2_min)
