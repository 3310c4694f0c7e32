/* AVX2 strided columns (kernels/reduce.h, optic_f32_reduce_cols): 8
 * columns per vector, 16 per group (vmaskmov tails). Tree ops: each of a
 * leaf's 64 lanes is a vector of column accumulators folding its rows l,
 * l + 64, ... in order; lanes l, l + 32, l + 16, l + 48 are computed together
 * and joined in registers, then the 16 results are joined by the rest of the
 * pairwise lane tree (l + 8, ..., l + 1) in an L1 block. Leaves join by the
 * canonical leaf counter. So each column is bitwise what the contiguous
 * kernels give for its values laid out contiguously.
 * The identity the lanes start from is left out, and lanes past a leaf's rows
 * are skipped: x * 1 = x exactly, and x + 0 = x but for -0 + 0 = +0, so every
 * partial sum differs from the kernels' at most in the sign of a zero; the
 * kernels' root, with a +0 among its operands, is never -0, and one final
 * + 0 gives exactly it. max/min fold rows in order. Masked-out columns are
 * never read or written; nothing is allocated (the leaf counter lives on the
 * stack). Built with FP contraction off (kernels/CMakeLists.txt). */
#include <immintrin.h>
#include <math.h>

#include "kernels/reduce_tree.h"
#include "kernels/x86/avx2/reduce_step_avx2.h"

#define NV 2 /* vectors per column group */
/* A lane's first value, folded into the identity without the identity:
 * exact for prod (1 * v = v), and for sum, sumsq the same but for the sign of
 * a zero, which the root's one addition of +0 restores (see the file head). */
OPTIC_REDUCE_INLINE __m256 v_first(optic_reduce_op op, __m256 v) {
  return op == OPTIC_REDUCE_SUMSQ ? _mm256_mul_ps(v, v) : v;
}
/* The binary family's max/min: the accumulator a wins only when NaN or
 * strictly better; max_ps(a, b) returns b on ties and when either is NaN. */
OPTIC_REDUCE_INLINE __m256 v_fold(bool is_max, __m256 a, __m256 b) {
  const __m256 r = is_max ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
  return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

/* The mask of vector v of a group of w columns (w <= 8 NV). */
static inline __m256i vec_mask(size_t w, size_t v) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  const size_t c = v * 8, n = w <= c ? 0 : w - c < 8 ? w - c : 8;
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - n));
}

/* Lane l of a full leaf (kn >= 64 rows from x): its rows l, l + 64, ...
 * folded in order, into a (nv vectors, masks m). */
OPTIC_REDUCE_INLINE void lane_cols(optic_reduce_op op, size_t nv, const __m256i *m, size_t l, size_t kn, const float *x,
                                   size_t stride, __m256 *a) {
  const float *row = x + l * stride;
  for (size_t v = 0; v < nv; v++) a[v] = v_first(op, _mm256_maskload_ps(row + 8 * v, m[v]));
  for (size_t j = l + OPTIC_REDUCE_LANES; j < kn; j += OPTIC_REDUCE_LANES) {
    row = x + j * stride;
    for (size_t v = 0; v < nv; v++) a[v] = v_step(op, a[v], _mm256_maskload_ps(row + 8 * v, m[v]));
  }
}

/* One leaf (kn <= OPTIC_REDUCE_BLOCK rows from x) of a group of nv vectors
 * (masks m) into out, by the lane tree's halving steps on the lanes that have
 * rows: n lanes, a step of half joins lane l with l + half for l + half < n.
 * A full leaf does the first two steps (l, l + 32, l + 16, l + 48) in
 * registers as it computes the lanes. */
OPTIC_REDUCE_INLINE void leaf_cols(optic_reduce_op op, size_t nv, const __m256i *m, size_t kn, const float *x,
                                   size_t stride, __m256 *out) {
  __m256 t[OPTIC_REDUCE_LANES][NV];
  size_t n = kn, half = OPTIC_REDUCE_LANES / 2;
  if (kn >= OPTIC_REDUCE_LANES) {
    for (size_t l = 0; l < OPTIC_REDUCE_LANES / 4; l++) {
      __m256 a[NV], b[NV], c[NV], d[NV];
      lane_cols(op, nv, m, l, kn, x, stride, a);
      lane_cols(op, nv, m, l + 32, kn, x, stride, b);
      lane_cols(op, nv, m, l + 16, kn, x, stride, c);
      lane_cols(op, nv, m, l + 48, kn, x, stride, d);
      for (size_t v = 0; v < nv; v++) t[l][v] = v_join(op, v_join(op, a[v], b[v]), v_join(op, c[v], d[v]));
    }
    n = OPTIC_REDUCE_LANES / 4, half = n / 2;
  } else { /* one row per lane, lanes past kn hold only the identity */
    for (size_t l = 0; l < kn; l++) {
      const float *row = x + l * stride;
      for (size_t v = 0; v < nv; v++) t[l][v] = v_first(op, _mm256_maskload_ps(row + 8 * v, m[v]));
    }
  }
  for (; half > 0; half /= 2) {
    for (size_t l = 0; l + half < n && l < half; l++) {
      for (size_t v = 0; v < nv; v++) t[l][v] = v_join(op, t[l][v], t[l + half][v]);
    }
    if (n > half) n = half;
  }
  for (size_t v = 0; v < nv; v++) out[v] = t[0][v];
}

/* A group of w <= 8 NV columns (nv vectors), tree ops. r > 0. */
OPTIC_REDUCE_INLINE void tree_group(optic_reduce_op op, size_t nv, size_t r, size_t w, const float *x, size_t stride,
                                    float *y) {
  __m256i m[NV];
  for (size_t v = 0; v < nv; v++) m[v] = vec_mask(w, v);
  __m256 level[OPTIC_REDUCE_TREE_LEVELS][NV];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_BLOCK ? r - k0 : OPTIC_REDUCE_BLOCK;
    __m256 a[NV];
    leaf_cols(op, nv, m, kn, x + k0 * stride, stride, a);
    for (size_t c = count++; c & 1; c >>= 1) {
      depth--;
      for (size_t v = 0; v < nv; v++) a[v] = v_join(op, level[depth][v], a[v]);
    }
    for (size_t v = 0; v < nv; v++) level[depth][v] = a[v];
    depth++;
  }
  unsigned d = depth - 1;
  __m256 a[NV];
  for (size_t v = 0; v < nv; v++) a[v] = level[d][v];
  while (d-- > 0) {
    for (size_t v = 0; v < nv; v++) a[v] = v_join(op, level[d][v], a[v]);
  }
  if (op != OPTIC_REDUCE_PROD) {
    for (size_t v = 0; v < nv; v++) a[v] = _mm256_add_ps(a[v], _mm256_setzero_ps());
  }
  for (size_t v = 0; v < nv; v++) _mm256_maskstore_ps(y + 8 * v, m[v], a[v]);
}

/* A group of w <= 8 NV columns, max/min folded in row order. r > 0. */
OPTIC_REDUCE_INLINE void fold_group(bool is_max, size_t r, size_t w, const float *x, size_t stride, float *y) {
  const __m256 id = _mm256_set1_ps(is_max ? -INFINITY : INFINITY);
  const __m256i m0 = vec_mask(w, 0), m1 = vec_mask(w, 1);
  __m256 a0 = id, a1 = id;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * stride;
    a0 = v_fold(is_max, a0, _mm256_maskload_ps(row, m0));
    a1 = v_fold(is_max, a1, _mm256_maskload_ps(row + 8, m1));
  }
  _mm256_maskstore_ps(y, m0, a0);
  _mm256_maskstore_ps(y + 8, m1, a1);
}

OPTIC_REDUCE_INLINE void tree_cols(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  for (size_t c0 = 0; c0 < w; c0 += 8 * NV) {
    const size_t wg = w - c0 < 8 * NV ? w - c0 : 8 * NV;
    if (wg > 8) tree_group(op, NV, r, wg, x + c0, stride, y + c0);
    else tree_group(op, 1, r, wg, x + c0, stride, y + c0);
  }
}

void optic_f32_reduce_cols__avx2(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  if (r == 0) { /* x may be empty: form no pointers into it */
    const float id = optic_reduce_identity(op);
    for (size_t c = 0; c < w; c++) y[c] = id;
    return;
  }
  switch (op) {
    case OPTIC_REDUCE_SUM: tree_cols(OPTIC_REDUCE_SUM, r, w, x, stride, y); break;
    case OPTIC_REDUCE_SUMSQ: tree_cols(OPTIC_REDUCE_SUMSQ, r, w, x, stride, y); break;
    case OPTIC_REDUCE_PROD: tree_cols(OPTIC_REDUCE_PROD, r, w, x, stride, y); break;
    default:
      for (size_t c0 = 0; c0 < w; c0 += 8 * NV) {
        const size_t wg = w - c0 < 8 * NV ? w - c0 : 8 * NV;
        fold_group(op == OPTIC_REDUCE_MAX, r, wg, x + c0, stride, y + c0);
      }
      break;
  }
}
