/* Strided columns in the contiguous evaluation order (kernels/reduce.h): each
 * column's values, read at a fixed stride, are reduced exactly as the
 * contiguous kernels reduce the same values laid out one after another, so a
 * reduction gives the same bits whichever axis of the data is the reduced
 * one. Columns are handled a block at a time, vectorized across columns by
 * the compiler (generic file: baseline ISA). Never allocates; the per-call
 * state (lanes and the leaf tree of one column block) lives on the stack. */
#include <math.h>

#include "kernels/reduce_tree.h"

#define COLS 32               /* columns per stack block: 64 lanes + 64 tree levels of 32 floats = 16 KiB */
#define PREFETCH_ROWS 16      /* rows ahead that a block's next row segments are fetched */
#define PREFETCH_MAX_COLS 128 /* blocks this wide (512 B per row) stream without it */

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

/* w columns (a block), tree ops: leaves of OPTIC_REDUCE_BLOCK values, 64
 * lanes each, lanes paired l + 32, ..., l + 1, leaves by the binary counter.
 * lane: 64 rows of ld floats; level: max_levels rows of ld floats (one per
 * level of the counter: popcount of the leaves so far). */
OPTIC_REDUCE_INLINE void tree_block(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                    float *lane, float *level, size_t ld) {
  const float id = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_BLOCK ? r - k0 : OPTIC_REDUCE_BLOCK;
    for (size_t l = 0; l < OPTIC_REDUCE_LANES; l++) {
      for (size_t c = 0; c < w; c++) lane[l * ld + c] = id;
    }
    for (size_t j = 0; j < kn; j++) {
      const float *row = x + (k0 + j) * stride;
      /* short row segments a page or more apart defeat the hardware
       * prefetchers: fetch ahead (long ones stream by themselves) */
      if (w < PREFETCH_MAX_COLS && k0 + j + PREFETCH_ROWS < r) {
        const char *ahead = (const char *)(x + (k0 + j + PREFETCH_ROWS) * stride);
        for (size_t b = 0; b < w * sizeof(float); b += 64) __builtin_prefetch(ahead + b, 0, 0);
      }
      float *acc = lane + (j % OPTIC_REDUCE_LANES) * ld;
      for (size_t c = 0; c < w; c++) acc[c] = step_op(op, acc[c], row[c]);
    }
    for (size_t half = OPTIC_REDUCE_LANES / 2; half > 0; half /= 2) {
      for (size_t l = 0; l < half; l++) {
        float *a = lane + l * ld;
        const float *b = lane + (l + half) * ld;
        for (size_t c = 0; c < w; c++) a[c] = optic_reduce_tree_op(op, a[c], b[c]);
      }
    }
    for (size_t cnt = count++; cnt & 1; cnt >>= 1) {
      depth--;
      for (size_t c = 0; c < w; c++) lane[c] = optic_reduce_tree_op(op, level[depth * ld + c], lane[c]);
    }
    for (size_t c = 0; c < w; c++) level[depth * ld + c] = lane[c];
    depth++;
  }
  if (depth == 0) {
    for (size_t c = 0; c < w; c++) y[c] = id;
    return;
  }
  unsigned d = depth - 1;
  for (size_t c = 0; c < w; c++) lane[c] = level[d * ld + c];
  while (d > 0) {
    d--;
    for (size_t c = 0; c < w; c++) lane[c] = optic_reduce_tree_op(op, level[d * ld + c], lane[c]);
  }
  for (size_t c = 0; c < w; c++) y[c] = lane[c];
}

/* w columns, max/min folded in k order (exact, as the kernels). */
OPTIC_REDUCE_INLINE void fold_block(bool is_max, size_t r, size_t w, const float *x, size_t stride, float *y) {
  if (w > COLS) {
    for (size_t c0 = 0; c0 < w; c0 += COLS)
      fold_block(is_max, r, w - c0 < COLS ? w - c0 : COLS, x + c0, stride, y + c0);
    return;
  }
  float acc[COLS];
  for (size_t c = 0; c < w; c++) acc[c] = is_max ? -INFINITY : INFINITY;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * stride;
    if (w < PREFETCH_MAX_COLS && k + PREFETCH_ROWS < r) {
      const char *ahead = (const char *)(x + (k + PREFETCH_ROWS) * stride);
      for (size_t b = 0; b < w * sizeof(float); b += 64) __builtin_prefetch(ahead + b, 0, 0);
    }
    for (size_t c = 0; c < w; c++) acc[c] = fold_op(is_max, acc[c], row[c]);
  }
  for (size_t c = 0; c < w; c++) y[c] = acc[c];
}

size_t optic_f32_reduce_cols_work_floats(size_t r, size_t w) {
  size_t cols = w < OPTIC_REDUCE_COLS_WIDE ? w : OPTIC_REDUCE_COLS_WIDE;
  return (OPTIC_REDUCE_LANES + optic_reduce_leaf_levels(r)) * (cols ? cols : 1);
}

void optic_f32_reduce_cols_wide__scalar(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                        float *work, size_t work_floats) {
  const size_t rows = OPTIC_REDUCE_LANES + optic_reduce_leaf_levels(r);
  size_t block = work_floats / rows;
  float stack[(OPTIC_REDUCE_LANES + OPTIC_REDUCE_TREE_LEVELS) * COLS];
  if (work == NULL || block < COLS) { /* too little work space: blocks of COLS on the stack */
    work = stack;
    block = COLS;
  }
  if (block > w) block = w;
  float *lane = work, *level = work + OPTIC_REDUCE_LANES * block;
  for (size_t c0 = 0; c0 < w; c0 += block) {
    const size_t wb = w - c0 < block ? w - c0 : block;
    const float *xc = r ? x + c0 : x; /* r = 0: x may be empty, read nothing */
    switch (op) {
      case OPTIC_REDUCE_SUM: tree_block(OPTIC_REDUCE_SUM, r, wb, xc, stride, y + c0, lane, level, block); break;
      case OPTIC_REDUCE_SUMSQ: tree_block(OPTIC_REDUCE_SUMSQ, r, wb, xc, stride, y + c0, lane, level, block); break;
      case OPTIC_REDUCE_PROD: tree_block(OPTIC_REDUCE_PROD, r, wb, xc, stride, y + c0, lane, level, block); break;
      case OPTIC_REDUCE_MAX: fold_block(true, r, wb, xc, stride, y + c0); break;
      default: fold_block(false, r, wb, xc, stride, y + c0); break;
    }
  }
}

void optic_f32_reduce_cols__scalar(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  optic_f32_reduce_cols_wide__scalar(op, r, w, x, stride, y, NULL, 0);
}

/* The ISA kernels read each row a column group (128 B) at a time, a leaf's
 * rows in lane order: fastest while the rows stay in cache; streaming from
 * memory, the wide kernels' long row runs are (one core, sums: 256 x 1024
 * floats 26 against 31 us, 512 x 1024 75 against 51 us, 4096 x 1024 2.5 ms
 * against 0.59 ms, CPU-time minima). */
#define ISA_COLS_MAX_BYTES ((size_t)1 << 20)
bool optic_f32_reduce_cols_streams(size_t r, size_t w, size_t stride) {
  return r > 0 && ((r - 1) * stride + w) * sizeof(float) > ISA_COLS_MAX_BYTES;
}

void optic_f32_reduce_cols_work(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y,
                                float *work, size_t work_floats) {
  const optic_reduce_kernels *k = optic_reduce_kernels_get();
  if (k->isa_of_cols != OPTIC_ISA_SCALAR && !optic_f32_reduce_cols_streams(r, w, stride)) {
    k->cols(op, r, w, x, stride, y);
    return;
  }
  k->cols_wide(op, r, w, x, stride, y, work, work_floats);
}

void optic_f32_reduce_cols(optic_reduce_op op, size_t r, size_t w, const float *x, size_t stride, float *y) {
  optic_f32_reduce_cols_work(op, r, w, x, stride, y, NULL, 0);
}
