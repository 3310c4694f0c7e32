/* What callers of the reduction kernels need around them: the rows form, and
 * combining per-chunk partial results when work is split across threads, in
 * the same tree the kernels use (kernels/reduce.h). Never allocates. */
#include "kernels/reduce_tree.h"

void optic_f32_reduce_rows(optic_f32_reduce_fn fn, size_t rows, size_t n, const float *x, size_t x_stride, float *y) {
  for (size_t j = 0; j < rows; j++) y[j] = fn(n, x + j * x_stride);
}

/* The binary family's max/min, folded in part order like the kernels fold
 * elements, so the fold over chunk results is the fold over all elements. */
static float fold_extremum(bool is_max, size_t nparts, const float *parts, size_t part_stride) {
  float acc = is_max ? optic_reduce_identity(OPTIC_REDUCE_MAX) : optic_reduce_identity(OPTIC_REDUCE_MIN);
  for (size_t p = 0; p < nparts; p++) {
    const float b = parts[p * part_stride];
    if (acc != acc) break;
    acc = b != b ? b : is_max ? (acc > b ? acc : b) : (acc < b ? acc : b);
  }
  return acc;
}

void optic_f32_reduce_combine(optic_reduce_op op, size_t nparts, size_t m, const float *parts, size_t part_stride,
                              float *y) {
  for (size_t i = 0; i < m; i++) {
    float v;
    if (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) {
      v = fold_extremum(op == OPTIC_REDUCE_MAX, nparts, parts + i, part_stride);
    } else {
      /* sumsq partials are sums of squares already: they are added */
      const optic_reduce_op join = op == OPTIC_REDUCE_PROD ? OPTIC_REDUCE_PROD : OPTIC_REDUCE_SUM;
      optic_reduce_tree t;
      t.count = 0;
      t.depth = 0;
      for (size_t p = 0; p < nparts; p++) optic_reduce_tree_push(join, &t, parts[p * part_stride + i]);
      v = optic_reduce_tree_root(join, &t);
    }
    y[i] = v;
  }
}

size_t optic_reduce_chunk_size(size_t n, size_t max_parts, size_t block) {
  if (block == 0) block = 1;
  size_t c = block;
  if (max_parts == 0) return c;
  while (c < n && (n - 1) / c + 1 > max_parts && c <= SIZE_MAX / 2) c *= 2;
  return c;
}
