/* AVX-512 contiguous reductions: a leaf is up to 16 steps of 4 vectors (lanes
 * 0-15, 16-31, 32-47, 48-63 of kernels/reduce.h's order), the tail loaded
 * under a mask with the identity in the other lanes (masked-out lanes are
 * never read), so results are bitwise the scalar kernel's. AVX-512 flags only. */
#include <immintrin.h>
#include <math.h>

#include "kernels/reduce_tree.h"
#include "kernels/x86/avx512/reduce_step_avx512.h"

static inline __mmask16 first_lanes(size_t r) { return r >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1); }

OPTIC_REDUCE_INLINE __m256 v_join256(optic_reduce_op op, __m256 a, __m256 b) {
  return op == OPTIC_REDUCE_PROD ? _mm256_mul_ps(a, b) : _mm256_add_ps(a, b);
}
OPTIC_REDUCE_INLINE __m128 v_join128(optic_reduce_op op, __m128 a, __m128 b) {
  return op == OPTIC_REDUCE_PROD ? _mm_mul_ps(a, b) : _mm_add_ps(a, b);
}

OPTIC_REDUCE_INLINE float leaf(optic_reduce_op op, size_t n, const float *x) {
  const __m512 id = _mm512_set1_ps(op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f);
  __m512 a0 = id, a1 = id, a2 = id, a3 = id;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = v_step(op, a0, _mm512_loadu_ps(x + i));
    a1 = v_step(op, a1, _mm512_loadu_ps(x + i + 16));
    a2 = v_step(op, a2, _mm512_loadu_ps(x + i + 32));
    a3 = v_step(op, a3, _mm512_loadu_ps(x + i + 48));
  }
  if (i < n) {
    const size_t r = n - i;
    a0 = v_step(op, a0, _mm512_mask_loadu_ps(id, first_lanes(r), x + i));
    if (r > 16) a1 = v_step(op, a1, _mm512_mask_loadu_ps(id, first_lanes(r - 16), x + i + 16));
    if (r > 32) a2 = v_step(op, a2, _mm512_mask_loadu_ps(id, first_lanes(r - 32), x + i + 32));
    if (r > 48) a3 = v_step(op, a3, _mm512_mask_loadu_ps(id, first_lanes(r - 48), x + i + 48));
  }
  /* lanes l + 32, l + 16, l + 8, l + 4, l + 2, l + 1 */
  const __m512 v = v_join(op, v_join(op, a0, a2), v_join(op, a1, a3));
  const __m256 h = v_join256(op, _mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = v_join128(op, _mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = v_join128(op, q, _mm_movehl_ps(q, q));
  q = v_join128(op, q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
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

float optic_f32_rsum__avx512(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUM, n, x); }
float optic_f32_rsumsq__avx512(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUMSQ, n, x); }
float optic_f32_rprod__avx512(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_PROD, n, x); }

/* max_ps(v, acc) returns acc when v is NaN, so NaN never enters the
 * accumulators; a NaN is only flagged, and optic_reduce_extremum_bits then
 * returns the fold's bits (first NaN, sign of a zero extremum). */
OPTIC_REDUCE_INLINE __m512 v_ext(bool is_max, __m512 v, __m512 acc) {
  return is_max ? _mm512_max_ps(v, acc) : _mm512_min_ps(v, acc);
}

OPTIC_REDUCE_INLINE float extremum(bool is_max, size_t n, const float *x) {
  const __m512 id = _mm512_set1_ps(is_max ? -INFINITY : INFINITY);
  __m512 a0 = id, a1 = id, a2 = id, a3 = id;
  __mmask16 nan = 0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
    nan |= (__mmask16)(_mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v2, v3, _CMP_UNORD_Q));
    a0 = v_ext(is_max, v0, a0);
    a1 = v_ext(is_max, v1, a1);
    a2 = v_ext(is_max, v2, a2);
    a3 = v_ext(is_max, v3, a3);
  }
  for (; i < n; i += 16) {
    const __m512 v = _mm512_mask_loadu_ps(id, first_lanes(n - i), x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    a0 = v_ext(is_max, v, a0);
  }
  a0 = v_ext(is_max, v_ext(is_max, a0, a1), v_ext(is_max, a2, a3));
  const float m = is_max ? _mm512_reduce_max_ps(a0) : _mm512_reduce_min_ps(a0);
  return optic_reduce_extremum_bits(m, nan != 0, n, x);
}

float optic_f32_rmax__avx512(size_t n, const float *x) { return extremum(true, n, x); }
float optic_f32_rmin__avx512(size_t n, const float *x) { return extremum(false, n, x); }
