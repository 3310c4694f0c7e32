/* Scalar production fallback for the axis reductions ([outer, r, inner] ->
 * [outer, inner]): tiles of 16 columns walk k row by row, in the evaluation
 * order of kernels/reduce.h. No -m flags; never touches memory outside x, y. */
#include <math.h>

#include "kernels/reduce_tree.h"

#define TILE 16

OPTIC_REDUCE_INLINE float lane_step(optic_reduce_op op, float acc, float v) {
  if (op == OPTIC_REDUCE_SUMSQ) {
    const float sq = v * v; /* own statement: never contracted into an fma */
    return acc + sq;
  }
  return optic_reduce_tree_op(op, acc, v);
}

/* w <= TILE columns starting at x (row stride inner) into y[0, w). */
OPTIC_REDUCE_INLINE void tree_tile(optic_reduce_op op, size_t r, size_t inner, size_t w, const float *x, float *y) {
  const float id = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  float level[OPTIC_REDUCE_TREE_LEVELS][TILE];
  unsigned depth = 0;
  size_t count = 0;
  for (size_t k0 = 0; k0 < r; k0 += OPTIC_REDUCE_AXIS_BLOCK) {
    const size_t kn = r - k0 < OPTIC_REDUCE_AXIS_BLOCK ? r - k0 : OPTIC_REDUCE_AXIS_BLOCK;
    float acc[TILE];
    for (size_t j = 0; j < w; j++) acc[j] = id;
    for (size_t k = k0; k < k0 + kn; k++) {
      const float *row = x + k * inner;
      for (size_t j = 0; j < w; j++) acc[j] = lane_step(op, acc[j], row[j]);
    }
    for (size_t c = count++; c & 1; c >>= 1) {
      depth--;
      for (size_t j = 0; j < w; j++) acc[j] = optic_reduce_tree_op(op, level[depth][j], acc[j]);
    }
    for (size_t j = 0; j < w; j++) level[depth][j] = acc[j];
    depth++;
  }
  for (size_t j = 0; j < w; j++) { /* r > 0: there is at least one leaf */
    unsigned d = depth - 1;
    float v = level[d][j];
    while (d > 0) v = optic_reduce_tree_op(op, level[--d][j], v);
    y[j] = v;
  }
}

/* The binary family's max/min, folded in k order. */
OPTIC_REDUCE_INLINE void fold_tile(bool is_max, size_t r, size_t inner, size_t w, const float *x, float *y) {
  float acc[TILE];
  for (size_t j = 0; j < w; j++) acc[j] = is_max ? -INFINITY : INFINITY;
  for (size_t k = 0; k < r; k++) {
    const float *row = x + k * inner;
    for (size_t j = 0; j < w; j++) {
      const float a = acc[j], b = row[j];
      acc[j] = a != a ? a : b != b ? b : is_max ? (a > b ? a : b) : (a < b ? a : b);
    }
  }
  for (size_t j = 0; j < w; j++) y[j] = acc[j];
}

OPTIC_REDUCE_INLINE void reduce_axis(optic_reduce_op op, size_t outer, size_t r, size_t inner, const float *x,
                                     float *y) {
  if (r == 0) { /* x may be empty: form no pointers into it */
    const float id = optic_reduce_identity(op);
    for (size_t j = 0; j < outer * inner; j++) y[j] = id;
    return;
  }
  for (size_t o = 0; o < outer; o++) {
    const float *xo = x + o * r * inner;
    float *yo = y + o * inner;
    for (size_t i = 0; i < inner; i += TILE) {
      const size_t w = inner - i < TILE ? inner - i : TILE;
      if (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) {
        fold_tile(op == OPTIC_REDUCE_MAX, r, inner, w, xo + i, yo + i);
      } else {
        tree_tile(op, r, inner, w, xo + i, yo + i);
      }
    }
  }
}

void optic_f32_rdsum__scalar(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUM, outer, r, inner, x, y);
}
void optic_f32_rdmax__scalar(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MAX, outer, r, inner, x, y);
}
void optic_f32_rdmin__scalar(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_MIN, outer, r, inner, x, y);
}
void optic_f32_rdprod__scalar(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_PROD, outer, r, inner, x, y);
}
void optic_f32_rdsumsq__scalar(size_t outer, size_t r, size_t inner, const float *x, float *y) {
  reduce_axis(OPTIC_REDUCE_SUMSQ, outer, r, inner, x, y);
}
