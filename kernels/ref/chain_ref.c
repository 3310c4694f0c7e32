/* Naive reference for the chain family: the test oracle. Element by
 * element, step by step, each step the binary family's definition
 * (kernels/binary.h); never optimize this file. */
#include "kernels/chain.h"

/* One step: the binary family's own reference on one element. */
static float apply(optic_binary_op op, float a, float b) {
  float y;
  optic_ref_f32_binary(op, 1, &a, &b, &y);
  return y;
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
