/* AVX2 contiguous reductions: a leaf is up to 16 steps of 8 vectors (lanes
 * 8q..8q+7 of kernels/reduce.h's order), the tail read with vmaskmov (which
 * never touches masked-out lanes) and the identity blended into them, so
 * results are bitwise the scalar kernel's. Built with -mavx2 -mfma only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/reduce_tree.h"
#include "kernels/x86/avx2/reduce_step_avx2.h"

/* Lane mask for the first r lanes (r >= 8: all). */
static inline __m256i first_lanes(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - (r < 8 ? r : 8)));
}
/* The first r floats of p, fill in the other lanes. */
static inline __m256 load_first(const float *p, size_t r, __m256 fill) {
  const __m256i m = first_lanes(r);
  return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}

OPTIC_REDUCE_INLINE __m128 v_join128(optic_reduce_op op, __m128 a, __m128 b) {
  return op == OPTIC_REDUCE_PROD ? _mm_mul_ps(a, b) : _mm_add_ps(a, b);
}

OPTIC_REDUCE_INLINE float leaf(optic_reduce_op op, size_t n, const float *x) {
  const __m256 id = _mm256_set1_ps(op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f);
  __m256 a0 = id, a1 = id, a2 = id, a3 = id, a4 = id, a5 = id, a6 = id, a7 = id;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = v_step(op, a0, _mm256_loadu_ps(x + i));
    a1 = v_step(op, a1, _mm256_loadu_ps(x + i + 8));
    a2 = v_step(op, a2, _mm256_loadu_ps(x + i + 16));
    a3 = v_step(op, a3, _mm256_loadu_ps(x + i + 24));
    a4 = v_step(op, a4, _mm256_loadu_ps(x + i + 32));
    a5 = v_step(op, a5, _mm256_loadu_ps(x + i + 40));
    a6 = v_step(op, a6, _mm256_loadu_ps(x + i + 48));
    a7 = v_step(op, a7, _mm256_loadu_ps(x + i + 56));
  }
  if (i < n) {
    const size_t r = n - i;
    a0 = v_step(op, a0, load_first(x + i, r, id));
    if (r > 8) a1 = v_step(op, a1, load_first(x + i + 8, r - 8, id));
    if (r > 16) a2 = v_step(op, a2, load_first(x + i + 16, r - 16, id));
    if (r > 24) a3 = v_step(op, a3, load_first(x + i + 24, r - 24, id));
    if (r > 32) a4 = v_step(op, a4, load_first(x + i + 32, r - 32, id));
    if (r > 40) a5 = v_step(op, a5, load_first(x + i + 40, r - 40, id));
    if (r > 48) a6 = v_step(op, a6, load_first(x + i + 48, r - 48, id));
    if (r > 56) a7 = v_step(op, a7, load_first(x + i + 56, r - 56, id));
  }
  /* lanes l + 32, l + 16, l + 8, then within a vector l + 4, l + 2, l + 1 */
  a0 = v_join(op, a0, a4), a1 = v_join(op, a1, a5), a2 = v_join(op, a2, a6), a3 = v_join(op, a3, a7);
  a0 = v_join(op, a0, a2), a1 = v_join(op, a1, a3);
  a0 = v_join(op, a0, a1);
  __m128 h = v_join128(op, _mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
  h = v_join128(op, h, _mm_movehl_ps(h, h));
  h = v_join128(op, h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

OPTIC_REDUCE_INLINE float reduce_tree(optic_reduce_op op, size_t n, const float *x) {
  optic_reduce_tree t;
  t.count = 0;
  t.depth = 0;
  for (size_t i = 0; i < n; i += OPTIC_REDUCE_BLOCK) {
    const size_t len = n - i < OPTIC_REDUCE_BLOCK ? n - i : OPTIC_REDUCE_BLOCK;
    optic_reduce_tree_push(op, &t, leaf(op, len, x + i));
  }
  return optic_reduce_tree_root(op, &t);
}

float optic_f32_rsum__avx2(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUM, n, x); }
float optic_f32_rsumsq__avx2(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUMSQ, n, x); }
float optic_f32_rprod__avx2(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_PROD, n, x); }

/* max_ps(v, acc) returns acc when v is NaN, so NaN never enters the
 * accumulators; NaN is only flagged, and optic_reduce_extremum_bits then
 * returns the fold's bits (first NaN, sign of a zero extremum). */
OPTIC_REDUCE_INLINE __m256 v_ext(bool is_max, __m256 v, __m256 acc) {
  return is_max ? _mm256_max_ps(v, acc) : _mm256_min_ps(v, acc);
}

OPTIC_REDUCE_INLINE float extremum(bool is_max, size_t n, const float *x) {
  const __m256 id = _mm256_set1_ps(is_max ? -INFINITY : INFINITY);
  __m256 a0 = id, a1 = id, a2 = id, a3 = id, nan = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
    a0 = v_ext(is_max, v0, a0);
    a1 = v_ext(is_max, v1, a1);
    a2 = v_ext(is_max, v2, a2);
    a3 = v_ext(is_max, v3, a3);
  }
  for (; i < n; i += 8) {
    const __m256 v = load_first(x + i, n - i, id);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    a0 = v_ext(is_max, v, a0);
  }
  const __m256 v = v_ext(is_max, v_ext(is_max, a0, a1), v_ext(is_max, a2, a3));
  __m128 h = is_max ? _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1))
                    : _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = is_max ? _mm_max_ps(h, _mm_movehl_ps(h, h)) : _mm_min_ps(h, _mm_movehl_ps(h, h));
  h = is_max ? _mm_max_ss(h, _mm_movehdup_ps(h)) : _mm_min_ss(h, _mm_movehdup_ps(h));
  return optic_reduce_extremum_bits(_mm_cvtss_f32(h), _mm256_movemask_ps(nan) != 0, n, x);
}

float optic_f32_rmax__avx2(size_t n, const float *x) { return extremum(true, n, x); }
float optic_f32_rmin__avx2(size_t n, const float *x) { return extremum(false, n, x); }
