/* Naive reference for the chain family: the test oracle. Element by
 * element, step by step, each step the binary family's definition
 * (kernels/binary.h); never optimize this file. */
#include <math.h>

#include "kernels/chain.h"

static float apply(optic_binary_op op, float a, float b) {
  switch (op) {
    case OPTIC_BINARY_ADD: return a + b;
    case OPTIC_BINARY_SUB: return a - b;
    case OPTIC_BINARY_MUL: return a * b;
    case OPTIC_BINARY_DIV: return a / b;
    case OPTIC_BINARY_MAX: return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b);
    case OPTIC_BINARY_MIN: return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b);
    default: return NAN;
  }
}

void optic_ref_f32_chain(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y) {
  for (size_t i = 0; i < n; i++) {
    float v = a[i];
    for (int32_t k = 0; k < n_steps; k++) {
      float o = (steps[k].flags & OPTIC_CHAIN_SCALAR) ? steps[k].s : steps[k].b[i];
      v = (steps[k].flags & OPTIC_CHAIN_ACC_FIRST) ? apply(steps[k].op, v, o) : apply(steps[k].op, o, v);
    }
    y[i] = v;
  }
}
