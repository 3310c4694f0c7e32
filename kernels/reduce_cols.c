/* Strided columns in the contiguous evaluation order (kernels/reduce.h): each
 * column's values, read at a fixed stride, are reduced exactly as the
 * contiguous kernels reduce the same values laid out one after another, so a
 * reduction gives the same bits whichever axis of the data is the reduced
 * one. Columns are handled a block at a time, vectorized across columns by
 * the compiler (generic file: baseline ISA). Never allocates; the per-call
 * state (lanes and the leaf tree of one column block) lives on the stack. */
#include <math.h>

#include "kernels/reduce_tree.h"

#define COLS 32 /* columns per block: 64 lanes + 64 tree levels of 32 floats = 16 KiB */
#define PREFETCH_ROWS 16 /* rows ahead that a block's next row segments are fetched */

OPTIC_REDUCE_INLINE float step_op(optic_reduce_op op, float acc, float v) {
  if (op == OPTIC_REDUCE_SUMSQ) {
    const float sq = v * v; /* own statement: never contracted into an fma */
    return acc + sq;
  }
  return optic_reduce_tree_op(op, acc, v);
}

/* The binary family's max/min of the accumulator a and the next value b. */
OPTIC_REDUCE_INLINE float fold_op(bool is_max, float a, float b) {
  return a != a ? a : b != b ? b : is_max ? (a > b ? a : b) : (a < b ? a : b);
}

/* w <= COLS columns, tree ops: leaves of OPTIC_REDUCE_BLOCK values, 64 lanes
 * each, lanes paired l + 32, ..., l + 1, leaves by the binary counter. */
OPTIC_REDUCE_INLINE void tree_block(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride,
                                    float *y) {
  const float id = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  float lane[OPTIC_REDUCE_LANES][COLS];
  float level[OPTIC_REDUCE_TREE_LEVELS][COLS];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_BLOCK ? r - k0 : OPTIC_REDUCE_BLOCK;
    for (size_t l = 0; l < OPTIC_REDUCE_LANES; l++) {
      for (size_t c = 0; c < w; c++) lane[l][c] = id;
    }
    for (size_t j = 0; j < kn; j++) {
      const float *row = x + (k0 + j) * stride;
      /* rows a page or more apart defeat the hardware prefetchers: fetch ahead */
      if (k0 + j + PREFETCH_ROWS < r) {
        const char *ahead = (const char *)(x + (k0 + j + PREFETCH_ROWS) * stride);
        for (size_t b = 0; b < w * sizeof(float); b += 64) __builtin_prefetch(ahead + b, 0, 0);
      }
      float *acc = lane[j % OPTIC_REDUCE_LANES];
      for (size_t c = 0; c < w; c++) acc[c] = step_op(op, acc[c], row[c]);
    }
    for (size_t half = OPTIC_REDUCE_LANES / 2; half > 0; half /= 2) {
      for (size_t l = 0; l < half; l++) {
        for (size_t c = 0; c < w; c++) lane[l][c] = optic_reduce_tree_op(op, lane[l][c], lane[l + half][c]);
      }
    }
    for (size_t cnt = count++; cnt & 1; cnt >>= 1) {
      depth--;
      for (size_t c = 0; c < w; c++) lane[0][c] = optic_reduce_tree_op(op, level[depth][c], lane[0][c]);
    }
    for (size_t c = 0; c < w; c++) level[depth][c] = lane[0][c];
    depth++;
  }
  if (depth == 0) {
    for (size_t c = 0; c < w; c++) y[c] = id;
    return;
  }
  unsigned d = depth - 1;
  for (size_t c = 0; c < w; c++) lane[0][c] = level[d][c];
  while (d > 0) {
    d--;
    for (size_t c = 0; c < w; c++) lane[0][c] = optic_reduce_tree_op(op, level[d][c], lane[0][c]);
  }
  for (size_t c = 0; c < w; c++) y[c] = lane[0][c];
}

/* w <= COLS columns, max/min folded in k order (exact, as the kernels). */
OPTIC_REDUCE_INLINE void fold_block(bool is_max, size_t r, size_t w, const float *x, size_t stride, float *y) {
  float acc[COLS];
  for (size_t c = 0; c < w; c++) acc[c] = is_max ? -INFINITY : INFINITY;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * stride;
    if (k + PREFETCH_ROWS < r) {
      const char *ahead = (const char *)(x + (k + PREFETCH_ROWS) * stride);
      for (size_t b = 0; b < w * sizeof(float); b += 64) __builtin_prefetch(ahead + b, 0, 0);
    }
    for (size_t c = 0; c < w; c++) acc[c] = fold_op(is_max, acc[c], row[c]);
  }
  for (size_t c = 0; c < w; c++) y[c] = acc[c];
}

void optic_f32_reduce_cols(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  for (size_t c0 = 0; c0 < w; c0 += COLS) {
    const size_t wb = w - c0 < COLS ? w - c0 : COLS;
    const float *xc = r ? x + c0 : x; /* r = 0: x may be empty, read nothing */
    switch (op) {
      case OPTIC_REDUCE_SUM: tree_block(OPTIC_REDUCE_SUM, r, wb, xc, stride, y + c0); break;
      case OPTIC_REDUCE_SUMSQ: tree_block(OPTIC_REDUCE_SUMSQ, r, wb, xc, stride, y + c0); break;
      case OPTIC_REDUCE_PROD: tree_block(OPTIC_REDUCE_PROD, r, wb, xc, stride, y + c0); break;
      case OPTIC_REDUCE_MAX: fold_block(true, r, wb, xc, stride, y + c0); break;
      default: fold_block(false, r, wb, xc, stride, y + c0); break;
    }
  }
}
