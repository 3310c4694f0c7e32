/* Naive reference for the compare family: the test oracle and what constant
 * folding evaluates with. Plain loops and C's own comparison operators (IEEE
 * semantics); never optimize this file. */
#include "kernels/compare.h"

static uint8_t apply(optic_compare_op op, float a, float b) {
  switch (op) {
    case OPTIC_COMPARE_EQ: return a == b;
    case OPTIC_COMPARE_NE: return a != b;
    case OPTIC_COMPARE_LT: return a < b;
    case OPTIC_COMPARE_LE: return a <= b;
    case OPTIC_COMPARE_GT: return a > b;
    case OPTIC_COMPARE_GE: return a >= b;
    default: return 0;
  }
}

void optic_ref_f32_compare(optic_compare_op op, size_t n, const float *a, const float *b, uint8_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = apply(op, a[i], b[i]);
}

void optic_ref_f32_comparec(optic_compare_op op, size_t n, const float *a, float s, uint8_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = apply(op, a[i], s);
}
