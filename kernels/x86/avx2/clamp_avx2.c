/* AVX2 f32 clamp kernels: two 8-float vectors per iteration, then one, then a
 * masked tail (vmaskmov never touches masked-out lanes, so no over-read).
 * Semantics as in kernels/clamp.h. vmaxps/vminps return their second operand
 * when either is NaN or both are equal, which is the definition's tie rule;
 * a blend then restores the NaN the definition lets through first. */
#include <immintrin.h>

#include "kernels/clamp.h"

static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}

/* maximum(x, lo) then minimum(t, hi), NaN-propagating as in kernels/binary.h. */
static inline __m256 clamp_vv(__m256 x, __m256 lo, __m256 hi) {
  __m256 t = _mm256_max_ps(x, lo);
  t = _mm256_blendv_ps(t, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  __m256 r = _mm256_min_ps(t, hi);
  return _mm256_blendv_ps(r, t, _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
}

/* Scalar bounds where lo is not NaN, or lo and hi are the same NaN (see
 * optic_f32_vclampc__avx2): only x's NaN needs restoring. */
static inline __m256 clamp_vs(__m256 x, __m256 lo, __m256 hi) {
  __m256 r = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

void optic_f32_vclamp__avx2(size_t n, const float *x, const float *lo, const float *hi, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 r0 = clamp_vv(_mm256_loadu_ps(x + i), _mm256_loadu_ps(lo + i), _mm256_loadu_ps(hi + i));
    __m256 r1 = clamp_vv(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(lo + i + 8), _mm256_loadu_ps(hi + i + 8));
    _mm256_storeu_ps(y + i, r0);
    _mm256_storeu_ps(y + i + 8, r1);
  }
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, clamp_vv(_mm256_loadu_ps(x + i), _mm256_loadu_ps(lo + i), _mm256_loadu_ps(hi + i)));
  }
  if (i < n) {
    __m256i m = tail_mask(n - i);
    __m256 r = clamp_vv(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(lo + i, m), _mm256_maskload_ps(hi + i, m));
    _mm256_maskstore_ps(y + i, m, r);
  }
}

void optic_f32_vclampc__avx2(size_t n, const float *x, float lo, float hi, float *y) {
  /* A NaN lo makes y = (x is NaN ? x : lo); with hi = lo too, clamp_vs
   * computes exactly that. A NaN hi (lo not NaN) needs nothing: vminps returns
   * its second operand when either is NaN. */
  if (lo != lo) hi = lo;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 r0 = clamp_vs(_mm256_loadu_ps(x + i), vlo, vhi);
    __m256 r1 = clamp_vs(_mm256_loadu_ps(x + i + 8), vlo, vhi);
    _mm256_storeu_ps(y + i, r0);
    _mm256_storeu_ps(y + i + 8, r1);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, clamp_vs(_mm256_loadu_ps(x + i), vlo, vhi));
  if (i < n) {
    __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, clamp_vs(_mm256_maskload_ps(x + i, m), vlo, vhi));
  }
}
