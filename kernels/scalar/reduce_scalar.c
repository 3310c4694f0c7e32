/* Scalar production fallback for the contiguous reductions: the evaluation
 * order of kernels/reduce.h written with plain arrays (64 lanes per leaf), so
 * every SIMD kernel can be held to its bits. No -m flags; never reads past n. */
#include <math.h>

#include "kernels/reduce_tree.h"

/* sumsq rounds the square in its own statement: a compiler that contracts
 * within one expression must not fuse it into a multiply-add. */
OPTIC_REDUCE_INLINE float lane_step(optic_reduce_op op, float acc, float v) {
  if (op == OPTIC_REDUCE_SUMSQ) {
    const float sq = v * v;
    return acc + sq;
  }
  return optic_reduce_tree_op(op, acc, v);
}

/* One leaf of n <= OPTIC_REDUCE_BLOCK floats: element j in lane j % 64, lanes
 * combined l + 32, l + 16, ..., l + 1. */
OPTIC_REDUCE_INLINE float leaf(optic_reduce_op op, size_t n, const float *x) {
  float lane[OPTIC_REDUCE_LANES];
  const float id = op == OPTIC_REDUCE_PROD ? 1.0f : 0.0f;
  for (size_t j = 0; j < OPTIC_REDUCE_LANES; j++) lane[j] = id;
  for (size_t i = 0; i < n; i += OPTIC_REDUCE_LANES) {
    const size_t w = n - i < OPTIC_REDUCE_LANES ? n - i : OPTIC_REDUCE_LANES;
    for (size_t j = 0; j < w; j++) lane[j] = lane_step(op, lane[j], x[i + j]);
  }
  for (size_t half = OPTIC_REDUCE_LANES / 2; half > 0; half /= 2) {
    for (size_t j = 0; j < half; j++) lane[j] = optic_reduce_tree_op(op, lane[j], lane[j + half]);
  }
  return lane[0];
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

float optic_f32_rsum__scalar(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUM, n, x); }
float optic_f32_rsumsq__scalar(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_SUMSQ, n, x); }
float optic_f32_rprod__scalar(size_t n, const float *x) { return reduce_tree(OPTIC_REDUCE_PROD, n, x); }

/* Lanes the compiler can vectorize (v > a ? v : a is exactly MAXPS); a NaN
 * never enters them, it is only flagged, and optic_reduce_extremum_bits then
 * returns the fold's bits (first NaN, sign of a zero extremum). */
OPTIC_REDUCE_INLINE float extremum(bool is_max, size_t n, const float *x) {
  enum { W = 16 };
  float lane[W];
  const float id = is_max ? -INFINITY : INFINITY;
  for (size_t j = 0; j < W; j++) lane[j] = id;
  int nan = 0;
  size_t i = 0;
  for (; i + W <= n; i += W) {
    for (size_t j = 0; j < W; j++) {
      const float v = x[i + j];
      nan |= v != v;
      lane[j] = is_max ? (v > lane[j] ? v : lane[j]) : (v < lane[j] ? v : lane[j]);
    }
  }
  for (size_t j = 0; i + j < n; j++) {
    const float v = x[i + j];
    nan |= v != v;
    lane[j] = is_max ? (v > lane[j] ? v : lane[j]) : (v < lane[j] ? v : lane[j]);
  }
  float m = id;
  for (size_t j = 0; j < W; j++) m = is_max ? (lane[j] > m ? lane[j] : m) : (lane[j] < m ? lane[j] : m);
  return optic_reduce_extremum_bits(m, nan != 0, n, x);
}

float optic_f32_rmax__scalar(size_t n, const float *x) { return extremum(true, n, x); }
float optic_f32_rmin__scalar(size_t n, const float *x) { return extremum(false, n, x); }
