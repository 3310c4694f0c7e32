/* Scalar production fallback for the compare family: plain loops the compiler
 * may auto-vectorize for the baseline ISA (no -m flags here). Semantics as in
 * kernels/compare.h: C's comparison operators are the IEEE ones. */
#include "kernels/compare.h"

#define SCALAR_VV(fn, OP)                                          \
  void fn(size_t n, const float *a, const float *b, uint8_t *y) {  \
    for (size_t i = 0; i < n; i++) y[i] = (uint8_t)(a[i] OP b[i]); \
  }
#define SCALAR_VS(fn, OP)                                       \
  void fn(size_t n, const float *a, float s, uint8_t *y) {      \
    for (size_t i = 0; i < n; i++) y[i] = (uint8_t)(a[i] OP s); \
  }

SCALAR_VV(optic_f32_vcmpeq__scalar, ==)
SCALAR_VV(optic_f32_vcmpne__scalar, !=)
SCALAR_VV(optic_f32_vcmplt__scalar, <)
SCALAR_VV(optic_f32_vcmple__scalar, <=)
SCALAR_VV(optic_f32_vcmpgt__scalar, >)
SCALAR_VV(optic_f32_vcmpge__scalar, >=)
SCALAR_VS(optic_f32_vcmpeqc__scalar, ==)
SCALAR_VS(optic_f32_vcmpnec__scalar, !=)
SCALAR_VS(optic_f32_vcmpltc__scalar, <)
SCALAR_VS(optic_f32_vcmplec__scalar, <=)
SCALAR_VS(optic_f32_vcmpgtc__scalar, >)
SCALAR_VS(optic_f32_vcmpgec__scalar, >=)
