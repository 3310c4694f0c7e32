/* AVX-512 axis reductions ([outer, r, inner] -> [outer, inner]): tiles of 64
 * columns (4 vectors), then 16-column tiles under a mask, walk k row by row in
 * the evaluation order of kernels/reduce.h, so each column's result is bitwise
 * the scalar kernel's. Masked-out lanes are never read or written. */
#include <immintrin.h>
#include <math.h>

#include "kernels/reduce_tree.h"
#include "kernels/x86/avx512/reduce_step_avx512.h"

/* The binary family's max/min: the accumulator a wins only when NaN or
 * strictly better; max_ps(a, b) returns b on ties and when either is NaN. */
OPTIC_REDUCE_INLINE __m512 v_fold(bool is_max, __m512 a, __m512 b) {
  const __m512 r = is_max ? _mm512_max_ps(a, b) : _mm512_min_ps(a, b);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}

/* 64 columns from x (row stride inner) into y, tree ops. */
OPTIC_REDUCE_INLINE void tree_cols64(optic_reduce_op op, size_t r, size_t inner, const float *x, float *y) {
  const __m512 id = _mm512_set1_ps(op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f);
  __m512 level[OPTIC_REDUCE_TREE_LEVELS][4];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_AXIS_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_AXIS_BLOCK ? r - k0 : OPTIC_REDUCE_AXIS_BLOCK;
    __m512 a0 = id, a1 = id, a2 = id, a3 = id;
    for (size_t k = k0; k < k0 + kn; k++) {
      const float *row = x + k * inner;
      a0 = v_step(op, a0, _mm512_loadu_ps(row));
      a1 = v_step(op, a1, _mm512_loadu_ps(row + 16));
      a2 = v_step(op, a2, _mm512_loadu_ps(row + 32));
      a3 = v_step(op, a3, _mm512_loadu_ps(row + 48));
    }
    for (size_t c = count++; c & 1; c >>= 1) {
      depth--;
      a0 = v_join(op, level[depth][0], a0);
      a1 = v_join(op, level[depth][1], a1);
      a2 = v_join(op, level[depth][2], a2);
      a3 = v_join(op, level[depth][3], a3);
    }
    level[depth][0] = a0, level[depth][1] = a1, level[depth][2] = a2, level[depth][3] = a3;
    depth++;
  }
  unsigned d = depth - 1; /* r > 0: there is at least one leaf */
  __m512 a0 = level[d][0], a1 = level[d][1], a2 = level[d][2], a3 = level[d][3];
  while (d-- > 0) {
    a0 = v_join(op, level[d][0], a0);
    a1 = v_join(op, level[d][1], a1);
    a2 = v_join(op, level[d][2], a2);
    a3 = v_join(op, level[d][3], a3);
  }
  _mm512_storeu_ps(y, a0);
  _mm512_storeu_ps(y + 16, a1);
  _mm512_storeu_ps(y + 32, a2);
  _mm512_storeu_ps(y + 48, a3);
}

/* The columns of mask m (at most 16) from x into y, tree ops. */
OPTIC_REDUCE_INLINE void tree_cols16(optic_reduce_op op, size_t r, size_t inner, __mmask16 m, const float *x,
                                     float *y) {
  const __m512 id = _mm512_set1_ps(op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f);
  __m512 level[OPTIC_REDUCE_TREE_LEVELS];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_AXIS_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_AXIS_BLOCK ? r - k0 : OPTIC_REDUCE_AXIS_BLOCK;
    __m512 a = id;
    for (size_t k = k0; k < k0 + kn; k++) a = v_step(op, a, _mm512_mask_loadu_ps(id, m, x + k * inner));
    for (size_t c = count++; c & 1; c >>= 1) a = v_join(op, level[--depth], a);
    level[depth++] = a;
  }
  unsigned d = depth - 1;
  __m512 a = level[d];
  while (d-- > 0) a = v_join(op, level[d], a);
  _mm512_mask_storeu_ps(y, m, a);
}

OPTIC_REDUCE_INLINE void fold_cols64(bool is_max, size_t r, size_t inner, const float *x, float *y) {
  const __m512 id = _mm512_set1_ps(is_max ? -INFINITY : INFINITY);
  __m512 a0 = id, a1 = id, a2 = id, a3 = id;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * inner;
    a0 = v_fold(is_max, a0, _mm512_loadu_ps(row));
    a1 = v_fold(is_max, a1, _mm512_loadu_ps(row + 16));
    a2 = v_fold(is_max, a2, _mm512_loadu_ps(row + 32));
    a3 = v_fold(is_max, a3, _mm512_loadu_ps(row + 48));
  }
  _mm512_storeu_ps(y, a0);
  _mm512_storeu_ps(y + 16, a1);
  _mm512_storeu_ps(y + 32, a2);
  _mm512_storeu_ps(y + 48, a3);
}

OPTIC_REDUCE_INLINE void fold_cols16(bool is_max, size_t r, size_t inner, __mmask16 m, const float *x, float *y) {
  const __m512 id = _mm512_set1_ps(is_max ? -INFINITY : INFINITY);
  __m512 a = id;
  for (size_t k = 0; k < r; k++) a = v_fold(is_max, a, _mm512_mask_loadu_ps(id, m, x + k * inner));
  _mm512_mask_storeu_ps(y, m, a);
}

OPTIC_REDUCE_INLINE void reduce_axis(optic_reduce_op op, size_t outer, size_t r, size_t inner, const float *x,
                                     float *y) {
  const bool fold = op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN;
  if (r == 0) { /* x may be empty: form no pointers into it */
    const float id = optic_reduce_identity(op);
    for (size_t j = 0; j < outer * inner; j++) y[j] = id;
    return;
  }
  for (size_t o = 0; o < outer; o++) {
    const float *xo = x + o * r * inner;
    float *yo = y + o * inner;
    size_t i = 0;
    for (; i + 64 <= inner; i += 64) {
      if (fold) {
        fold_cols64(op == OPTIC_REDUCE_MAX, r, inner, xo + i, yo + i);
      } else {
        tree_cols64(op, r, inner, xo + i, yo + i);
      }
    }
    for (; i < inner; i += 16) {
      const size_t w = inner - i;
      const __mmask16 m = w >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << w) - 1);
      if (fold) {
        fold_cols16(op == OPTIC_REDUCE_MAX, r, inner, m, xo + i, yo + i);
      } else {
        tree_cols16(op, r, inner, m, xo + i, yo + i);
      }
    }
  }
}

void optic_f32_rdsum__avx512(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUM, outer, r, inner, x, y);
}
void optic_f32_rdmax__avx512(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MAX, outer, r, inner, x, y);
}
void optic_f32_rdmin__avx512(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MIN, outer, r, inner, x, y);
}
void optic_f32_rdprod__avx512(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_PROD, outer, r, inner, x, y);
}
void optic_f32_rdsumsq__avx512(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUMSQ, outer, r, inner, x, y);
}
