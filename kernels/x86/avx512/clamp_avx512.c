/* AVX-512 f32 clamp kernels: two 16-float vectors per iteration, then a
 * masked remainder (masked loads never fault on masked-out lanes). Semantics
 * as in kernels/clamp.h. vmaxps/vminps return their second operand when either
 * is NaN or both are equal, which is the definition's tie rule; a masked move
 * then restores the NaN the definition lets through first. */
#include <immintrin.h>

#include "kernels/clamp.h"

/* maximum(x, lo) then minimum(t, hi), NaN-propagating as in kernels/binary.h. */
static inline __m512 clamp_vv(__m512 x, __m512 lo, __m512 hi) {
  __m512 t = _mm512_mask_mov_ps(_mm512_max_ps(x, lo), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
  return _mm512_mask_mov_ps(_mm512_min_ps(t, hi), _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q), t);
}

/* Scalar bounds where lo is not NaN, or lo and hi are the same NaN (see
 * optic_f32_vclampc__avx512): only x's NaN needs restoring. */
static inline __m512 clamp_vs(__m512 x, __m512 lo, __m512 hi) {
  __m512 r = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

void optic_f32_vclamp__avx512(size_t n, const float *x, const float *lo, const float *hi, float *y) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 r0 = clamp_vv(_mm512_loadu_ps(x + i), _mm512_loadu_ps(lo + i), _mm512_loadu_ps(hi + i));
    __m512 r1 = clamp_vv(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(lo + i + 16), _mm512_loadu_ps(hi + i + 16));
    _mm512_storeu_ps(y + i, r0);
    _mm512_storeu_ps(y + i + 16, r1);
  }
  for (; i < n; i += 16) {
    size_t r = n - i < 16 ? n - i : 16;
    __mmask16 m = (__mmask16)((1u << r) - 1);
    __m512 v =
        clamp_vv(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, lo + i), _mm512_maskz_loadu_ps(m, hi + i));
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}

void optic_f32_vclampc__avx512(size_t n, const float *x, float lo, float hi, float *y) {
  /* A NaN lo makes y = (x is NaN ? x : lo); with hi = lo too, clamp_vs
   * computes exactly that. A NaN hi (lo not NaN) needs nothing: vminps returns
   * its second operand when either is NaN. */
  if (lo != lo) hi = lo;
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 r0 = clamp_vs(_mm512_loadu_ps(x + i), vlo, vhi);
    __m512 r1 = clamp_vs(_mm512_loadu_ps(x + i + 16), vlo, vhi);
    _mm512_storeu_ps(y + i, r0);
    _mm512_storeu_ps(y + i + 16, r1);
  }
  for (; i < n; i += 16) {
    size_t r = n - i < 16 ? n - i : 16;
    __mmask16 m = (__mmask16)((1u << r) - 1);
    _mm512_mask_storeu_ps(y + i, m, clamp_vs(_mm512_maskz_loadu_ps(m, x + i), vlo, vhi));
  }
}
