/* AVX-512 binary f32 kernels: two 16-float vectors per iteration, then a
 * masked remainder (masked loads never fault on masked-out lanes, so no
 * over-read); large calls use streaming stores (kernels/stream.h). Semantics
 * as in kernels/binary.h; built with AVX-512 flags only. */
#include <immintrin.h>

#include "kernels/binary.h"
#include "kernels/x86/stream_x86.h"
#include "kernels/x86/avx512/binary_ops_avx512.h"

/* Masked remainder from i to n: at most one masked vector per 16 floats. */
#define AVX512_VV_TAIL(OP, i, n)                                                     \
  for (; i < n; i += 16) {                                                           \
    size_t r = n - i < 16 ? n - i : 16;                                              \
    __mmask16 m = (__mmask16)((1u << r) - 1);                                        \
    __m512 v = OP(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)); \
    _mm512_mask_storeu_ps(y + i, m, v);                                              \
  }

/* Large calls (kernels/stream.h) store a masked head until y is 64-byte
 * aligned, then stream whole vectors, then the masked tail, then SFENCE. */
#define AVX512_VV(fn, OP)                                                            \
  void fn(size_t n, const float *a, const float *b, float *y) {                      \
    size_t i = 0, head = optic_x86_stream_head(y, n, 3 * n * sizeof(float), 64);     \
    if (head != SIZE_MAX) {                                                          \
      AVX512_VV_TAIL(OP, i, head)                                                    \
      for (i = head; i + 16 <= n; i += 16) {                                         \
        _mm512_stream_ps(y + i, OP(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i))); \
      }                                                                              \
      AVX512_VV_TAIL(OP, i, n)                                                       \
      _mm_sfence();                                                                  \
      return;                                                                        \
    }                                                                                \
    for (; i + 32 <= n; i += 32) {                                                   \
      __m512 r0 = OP(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));                \
      __m512 r1 = OP(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));      \
      _mm512_storeu_ps(y + i, r0);                                                   \
      _mm512_storeu_ps(y + i + 16, r1);                                              \
    }                                                                                \
    AVX512_VV_TAIL(OP, i, n)                                                         \
  }

#define AVX512_VS_TAIL(OP, i, n)                                              \
  for (; i < n; i += 16) {                                                    \
    size_t r = n - i < 16 ? n - i : 16;                                       \
    __mmask16 m = (__mmask16)((1u << r) - 1);                                 \
    _mm512_mask_storeu_ps(y + i, m, OP(_mm512_maskz_loadu_ps(m, a + i), vs)); \
  }

#define AVX512_VS(fn, OP)                                                                           \
  void fn(size_t n, const float *a, float s, float *y) {                                            \
    const __m512 vs = _mm512_set1_ps(s);                                                            \
    size_t i = 0, head = optic_x86_stream_head(y, n, 2 * n * sizeof(float), 64);                    \
    if (head != SIZE_MAX) {                                                                         \
      AVX512_VS_TAIL(OP, i, head)                                                                   \
      for (i = head; i + 16 <= n; i += 16) _mm512_stream_ps(y + i, OP(_mm512_loadu_ps(a + i), vs)); \
      AVX512_VS_TAIL(OP, i, n)                                                                      \
      _mm_sfence();                                                                                 \
      return;                                                                                       \
    }                                                                                               \
    for (; i + 32 <= n; i += 32) {                                                                  \
      __m512 r0 = OP(_mm512_loadu_ps(a + i), vs);                                                   \
      __m512 r1 = OP(_mm512_loadu_ps(a + i + 16), vs);                                              \
      _mm512_storeu_ps(y + i, r0);                                                                  \
      _mm512_storeu_ps(y + i + 16, r1);                                                             \
    }                                                                                               \
    AVX512_VS_TAIL(OP, i, n)                                                                        \
  }

AVX512_VV(optic_f32_vadd__avx512, optic_avx512_add)
AVX512_VV(optic_f32_vsub__avx512, _mm512_sub_ps)
AVX512_VV(optic_f32_vmul__avx512, optic_avx512_mul)
AVX512_VV(optic_f32_vdiv__avx512, _mm512_div_ps)
AVX512_VV(optic_f32_vmax__avx512, optic_avx512_max)
AVX512_VV(optic_f32_vmin__avx512, optic_avx512_min)
AVX512_VS(optic_f32_vaddc__avx512, optic_avx512_add)
AVX512_VS(optic_f32_vsubc__avx512, _mm512_sub_ps)
AVX512_VS(optic_f32_vmulc__avx512, optic_avx512_mul)
AVX512_VS(optic_f32_vdivc__avx512, _mm512_div_ps)
AVX512_VS(optic_f32_vmaxc__avx512, optic_avx512_max)
AVX512_VS(optic_f32_vminc__avx512, optic_avx512_min)
