/* Naive reference for the reduction family (the test oracle): one plain loop
 * per output, double accumulation for sum, sumsq and prod, the binary
 * family's max/min folded in index order. Never optimize this file. */
#include <math.h>

#include "kernels/reduce.h"

static float max_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static float min_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

/* op over x[0], x[stride], ..., n values. */
static double reduce_strided(optic_reduce_op op, size_t n, const float *x, size_t stride) {
  if (op == OPTIC_REDUCE_MAX || op == OPTIC_REDUCE_MIN) {
    float acc = optic_reduce_identity(op);
    for (size_t k = 0; k < n; k++)
      acc = op == OPTIC_REDUCE_MAX ? max_nan(acc, x[k * stride]) : min_nan(acc, x[k * stride]);
    return (double)acc;
  }
  double acc = op == OPTIC_REDUCE_PROD ? 1.0 : 0.0;
  for (size_t k = 0; k < n; k++) {
    const double v = (double)x[k * stride];
    switch (op) {
      case OPTIC_REDUCE_PROD: acc *= v; break;
      case OPTIC_REDUCE_SUMSQ: acc += v * v; break;
      default: acc += v; break;
    }
  }
  return acc;
}

double optic_ref_f32_reduce(optic_reduce_op op, size_t n, const float *x) { return reduce_strided(op, n, x, 1); }

void optic_ref_f32_reduce_axis(optic_reduce_op op, size_t outer, size_t r, size_t inner, const float *x, double *y) {
  for (size_t o = 0; o < outer; o++) {
    for (size_t i = 0; i < inner; i++) {
      y[o * inner + i] =
          r == 0 ? (double)optic_reduce_identity(op) : reduce_strided(op, r, x + o * r * inner + i, inner);
    }
  }
}
