/* Naive reference for the binary family: the test oracle and what constant
 * folding evaluates with. Plain loops, no tricks; never optimize this file. */
#include <math.h>

#include "kernels/binary.h"

static float apply(optic_binary_op op, float a, float b) {
  switch (op) {
    case OPTIC_BINARY_ADD: return a + b;
    case OPTIC_BINARY_SUB: return a - b;
    case OPTIC_BINARY_MUL: return a * b;
    case OPTIC_BINARY_DIV: return a / b;
    case OPTIC_BINARY_MAX: return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b);
    case OPTIC_BINARY_MIN: return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b);
    case OPTIC_BINARY_POW: return (float)pow((double)a, (double)b);
    default: return NAN;
  }
}

void optic_ref_f32_binary(optic_binary_op op, size_t n, const float *a, const float *b, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = apply(op, a[i], b[i]);
}

void optic_ref_f32_binaryc(optic_binary_op op, size_t n, const float *a, float s, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = apply(op, a[i], s);
}
