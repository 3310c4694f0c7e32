/* AVX2 strided columns for data streamed from memory (kernels/reduce.h,
 * optic_f32_reduce_cols_wide__avx2): the generic kernel's evaluation, bit
 * for bit, with its lanes in caller work space: a block of up to
 * OPTIC_REDUCE_COLS_WIDE columns keeps a leaf's 64 lane rows (lane l folds
 * rows l, l + 64, ... in order, starting at the identity), the rows are
 * read in long contiguous runs, and rows j, j + 64, j + 128, j + 192 (one
 * lane's next four values) are folded in one pass, so each lane row is
 * loaded and stored once per four input rows. Lanes are then paired l + 32,
 * ..., l + 1 and leaves joined by the canonical counter, as the generic
 * kernel does. max/min fold four consecutive rows per pass into one row of
 * accumulators. Masked-out columns are never read or written. Built with
 * FP contraction off (kernels/CMakeLists.txt). */
#include <immintrin.h>
#include <math.h>

#include "kernels/reduce_tree.h"
#include "kernels/x86/avx2/reduce_step_avx2.h"

#define STACK_COLS 32 /* columns of the stack block when the work space is too small */
#define PASS_ROWS 4   /* rows folded into a lane row per pass */

static inline __m256i tail_mask(size_t n) { /* the first n (< 8) lanes */
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - n));
}

/* The binary family's max/min (the accumulator a wins only when NaN or
 * strictly better), and the tree ops' step; one helper for both. */
OPTIC_REDUCE_INLINE __m256 v_apply(optic_reduce_op op, __m256 a, __m256 b) {
  if (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) {
    const __m256 m = op == OPTIC_REDUCE_MAX ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
    return _mm256_blendv_ps(m, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  return v_step(op, a, b);
}

/* a[0, w) = op-fold of the k rows row + q * gap (q < k, in order) into a. */
OPTIC_REDUCE_INLINE void fold_rows(optic_reduce_op op, size_t k, size_t w, const float *row, size_t gap, float *a) {
  size_t c = 0;
  for (; c + 16 <= w; c += 16) {
    __m256 a0 = _mm256_loadu_ps(a + c), a1 = _mm256_loadu_ps(a + c + 8);
    for (size_t q = 0; q < k; q++) {
      a0 = v_apply(op, a0, _mm256_loadu_ps(row + q * gap + c));
      a1 = v_apply(op, a1, _mm256_loadu_ps(row + q * gap + c + 8));
    }
    _mm256_storeu_ps(a + c, a0);
    _mm256_storeu_ps(a + c + 8, a1);
  }
  for (; c + 8 <= w; c += 8) {
    __m256 a0 = _mm256_loadu_ps(a + c);
    for (size_t q = 0; q < k; q++) a0 = v_apply(op, a0, _mm256_loadu_ps(row + q * gap + c));
    _mm256_storeu_ps(a + c, a0);
  }
  if (c < w) {
    const __m256i m = tail_mask(w - c);
    __m256 a0 = _mm256_maskload_ps(a + c, m);
    for (size_t q = 0; q < k; q++) a0 = v_apply(op, a0, _mm256_maskload_ps(row + q * gap + c, m));
    _mm256_maskstore_ps(a + c, m, a0);
  }
}

/* a[0, w) = b[0, w) op a[0, w) (tree ops: join; the operand order is the
 * generic kernel's, IEEE + and * being commutative anyway). */
static inline void join_row(optic_reduce_op op, size_t w, const float *b, float *a) {
  if (op == OPTIC_REDUCE_PROD) fold_rows(OPTIC_REDUCE_PROD, 1, w, b, 0, a);
  else fold_rows(OPTIC_REDUCE_SUM, 1, w, b, 0, a);
}

static void fill_row(size_t w, float v, float *a) {
  for (size_t c = 0; c < w; c++) a[c] = v;
}

/* One leaf (kn <= OPTIC_REDUCE_BLOCK rows from x) of w columns into lane
 * row 0 (lane: 64 rows of ld floats). */
OPTIC_REDUCE_INLINE void leaf_wide(optic_reduce_op op, size_t kn, size_t w, const float *x, size_t stride, float *lane,
                                   size_t ld) {
  const size_t gap = OPTIC_REDUCE_LANES * stride;
  for (size_t l = 0; l < OPTIC_REDUCE_LANES; l++) fill_row(w, op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f, lane + l * ld);
  size_t j = 0;
  for (; j + PASS_ROWS * OPTIC_REDUCE_LANES <= kn; j += PASS_ROWS * OPTIC_REDUCE_LANES) {
    for (size_t l = 0; l < OPTIC_REDUCE_LANES; l++)
      fold_rows(op, PASS_ROWS, w, x + (j + l) * stride, gap, lane + l * ld);
  }
  for (; j < kn; j += OPTIC_REDUCE_LANES) {
    for (size_t l = 0; l < OPTIC_REDUCE_LANES && j + l < kn; l++)
      fold_rows(op, 1, w, x + (j + l) * stride, gap, lane + l * ld);
  }
  for (size_t half = OPTIC_REDUCE_LANES / 2; half > 0; half /= 2) {
    for (size_t l = 0; l < half; l++) join_row(op, w, lane + (l + half) * ld, lane + l * ld);
  }
}

/* w columns, tree ops, lanes and levels in work (64 + levels rows of ld). */
OPTIC_REDUCE_INLINE void tree_wide(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                   float *work, size_t ld) {
  float *lane = work, *level = work + OPTIC_REDUCE_LANES * ld;
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_BLOCK ? r - k0 : OPTIC_REDUCE_BLOCK;
    leaf_wide(op, kn, w, x + k0 * stride, stride, lane, ld);
    for (size_t cnt = count++; cnt & 1; cnt >>= 1) join_row(op, w, level + --depth * ld, lane);
    for (size_t c = 0; c < w; c++) level[depth * ld + c] = lane[c];
    depth++;
  }
  unsigned d = depth - 1;
  for (size_t c = 0; c < w; c++) lane[c] = level[d * ld + c];
  while (d > 0) join_row(op, w, level + --d * ld, lane);
  for (size_t c = 0; c < w; c++) y[c] = lane[c];
}

/* w columns, max/min folded in row order into acc. */
OPTIC_REDUCE_INLINE void fold_wide(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                   float *acc) {
  fill_row(w, op == OPTIC_REDUCE_MAX ? -INFINITY : INFINITY, acc);
  size_t k = 0;
  for (; k + PASS_ROWS <= r; k += PASS_ROWS) fold_rows(op, PASS_ROWS, w, x + k * stride, stride, acc);
  for (; k < r; k++) fold_rows(op, 1, w, x + k * stride, stride, acc);
  for (size_t c = 0; c < w; c++) y[c] = acc[c];
}

static void block_wide(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y, float *work,
                       size_t ld) {
  switch (op) {
    case OPTIC_REDUCE_SUM: tree_wide(OPTIC_REDUCE_SUM, r, w, x, stride, y, work, ld); break;
    case OPTIC_REDUCE_SUMSQ: tree_wide(OPTIC_REDUCE_SUMSQ, r, w, x, stride, y, work, ld); break;
    case OPTIC_REDUCE_PROD: tree_wide(OPTIC_REDUCE_PROD, r, w, x, stride, y, work, ld); break;
    case OPTIC_REDUCE_MAX: fold_wide(OPTIC_REDUCE_MAX, r, w, x, stride, y, work); break;
    default: fold_wide(OPTIC_REDUCE_MIN, r, w, x, stride, y, work); break;
  }
}

void optic_f32_reduce_cols_wide__avx2(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                      float *work, size_t work_floats) {
  if (r == 0) { /* x may be empty: form no pointers into it */
    fill_row(w, optic_reduce_identity(op), y);
    return;
  }
  const size_t rows = OPTIC_REDUCE_LANES + optic_reduce_leaf_levels(r);
  size_t block = work_floats / rows;
  if (block > OPTIC_REDUCE_COLS_WIDE) block = OPTIC_REDUCE_COLS_WIDE;
  float stack[(OPTIC_REDUCE_LANES + OPTIC_REDUCE_TREE_LEVELS) * STACK_COLS];
  if (work == NULL || block < STACK_COLS) { /* too little work space: blocks of STACK_COLS on the stack */
    work = stack;
    block = STACK_COLS;
  }
  if (block > w) block = w;
  for (size_t c0 = 0; c0 < w; c0 += block) {
    block_wide(op, r, w - c0 < block ? w - c0 : block, x + c0, stride, y + c0, work, block);
  }
}
