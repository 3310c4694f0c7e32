/* Naive reference for the unary family: the test oracle and what constant
 * folding evaluates with. Each op in double with libm, rounded to float once;
 * plain loops, no tricks; never optimize this file. */
#include <math.h>

#include "kernels/unary.h"

static float apply(optic_unary_op op, float xf) {
  const double x = (double)xf;
  switch (op) {
    case OPTIC_UNARY_NEG: return -xf;
    case OPTIC_UNARY_ABS: return fabsf(xf);
    case OPTIC_UNARY_EXP: return (float)exp(x);
    case OPTIC_UNARY_LOG: return (float)log(x);
    case OPTIC_UNARY_SQRT: return (float)sqrt(x);
    case OPTIC_UNARY_RSQRT: return (float)(1.0 / sqrt(x));
    case OPTIC_UNARY_TANH: return (float)tanh(x);
    case OPTIC_UNARY_LOGISTIC: return (float)(1.0 / (1.0 + exp(-x)));
    case OPTIC_UNARY_SIGN: return (isnan(x) || x == 0.0) ? xf : (x > 0.0 ? 1.0f : -1.0f);
    case OPTIC_UNARY_FLOOR: return (float)floor(x);
    case OPTIC_UNARY_CEIL: return (float)ceil(x);
    case OPTIC_UNARY_SQUARE: return (float)(x * x);
    case OPTIC_UNARY_RELU: return (isnan(x) || x > 0.0) ? xf : 0.0f;
    case OPTIC_UNARY_ERF: return (float)erf(x);
    case OPTIC_UNARY_EXPM1: return (float)expm1(x);
    case OPTIC_UNARY_LOG1P: return (float)log1p(x);
    default: return NAN;
  }
}

void optic_ref_f32_unary(optic_unary_op op, size_t n, const float *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = apply(op, x[i]);
}
