/* Scalar production fallback for the chain family: element by element, the
 * steps' ops as the scalar binary kernels compute them (kernels/chain.h).
 * No -m flags here; built without contraction concerns: every step's result
 * is stored to a float before the next (C11 forbids fusing across them). */
#include <math.h>

#include "kernels/chain.h"

static inline float max_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static inline float min_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

static inline float apply(optic_binary_op op, float x, float z) {
  switch (op) {
    case OPTIC_BINARY_ADD: return x + z;
    case OPTIC_BINARY_SUB: return x - z;
    case OPTIC_BINARY_MUL: return x * z;
    case OPTIC_BINARY_DIV: return x / z;
    case OPTIC_BINARY_MAX: return max_nan(x, z);
    default: return min_nan(x, z);
  }
}

void optic_f32_chain__scalar(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y,
                             bool stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    float v = a[i];
    for (int32_t k = 0; k < n_steps; k++) {
      const optic_f32_chain_step *st = &steps[k];
      const float o = (st->flags & OPTIC_CHAIN_SCALAR) ? st->s : st->b[i];
      v = (st->flags & OPTIC_CHAIN_ACC_FIRST) ? apply(st->op, v, o) : apply(st->op, o, v);
    }
    y[i] = v;
  }
}
