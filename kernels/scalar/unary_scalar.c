/* Scalar production fallback for the unary family: plain loops over libm's
 * float functions (glibc: expf, logf, sqrtf correctly rounded in practice,
 * tanhf within 2 ULP; erff, expm1f, log1pf within the bounds of kernels/unary.h) and IEEE operations; no -m flags here. Semantics and
 * bounds as in kernels/unary.h; never allocates or prints. */
#include <math.h>
#include <string.h>

#include "kernels/unary.h"

static inline float flip_sign(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u ^= 0x80000000u;
  memcpy(&x, &u, 4);
  return x;
}
static inline float clear_sign(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u &= 0x7fffffffu;
  memcpy(&x, &u, 4);
  return x;
}
static inline float sign1(float x) { return (x != x || x == 0.0f) ? x : (x > 0.0f ? 1.0f : -1.0f); }
static inline float relu1(float x) { return (x > 0.0f || x != x) ? x : 0.0f; }
/* e = exp(-|x|) <= 1 never overflows, and for x < 0 the result e / (1 + e) is
 * as accurate as e itself, down to the subnormals 1/(1+exp(-x)) would flush. */
static inline float logistic1(float x) {
  const float e = expf(-fabsf(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

#define SCALAR_UNARY(fn, expr)                  \
  void fn(size_t n, const float *x, float *y) { \
    for (size_t i = 0; i < n; i++) {            \
      const float v = x[i];                     \
      y[i] = (expr);                            \
    }                                           \
  }

SCALAR_UNARY(optic_f32_vneg__scalar, flip_sign(v))
SCALAR_UNARY(optic_f32_vabs__scalar, clear_sign(v))
SCALAR_UNARY(optic_f32_vexp__scalar, expf(v))
SCALAR_UNARY(optic_f32_vlog__scalar, logf(v))
SCALAR_UNARY(optic_f32_vsqrt__scalar, sqrtf(v))
SCALAR_UNARY(optic_f32_vrsqrt__scalar, 1.0f / sqrtf(v))
SCALAR_UNARY(optic_f32_vtanh__scalar, tanhf(v))
SCALAR_UNARY(optic_f32_vlogistic__scalar, logistic1(v))
SCALAR_UNARY(optic_f32_vsign__scalar, sign1(v))
SCALAR_UNARY(optic_f32_vfloor__scalar, floorf(v))
SCALAR_UNARY(optic_f32_vceil__scalar, ceilf(v))
SCALAR_UNARY(optic_f32_vsquare__scalar, v *v)
SCALAR_UNARY(optic_f32_vrelu__scalar, relu1(v))
SCALAR_UNARY(optic_f32_verf__scalar, erff(v))
SCALAR_UNARY(optic_f32_vexpm1__scalar, expm1f(v))
SCALAR_UNARY(optic_f32_vlog1p__scalar, log1pf(v))
