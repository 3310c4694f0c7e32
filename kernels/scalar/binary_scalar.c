/* Scalar production fallback for the binary family: plain loops the compiler
 * may auto-vectorize for the baseline ISA (no -m flags here). Semantics as in
 * kernels/binary.h. */
#include <math.h>

#include "kernels/binary.h"

static inline float max_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
static inline float min_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }

#define SCALAR_VV(fn, expr)                                     \
  void fn(size_t n, const float *a, const float *b, float *y) { \
    for (size_t i = 0; i < n; i++) {                            \
      const float x = a[i], z = b[i];                           \
      y[i] = (expr);                                            \
    }                                                           \
  }
#define SCALAR_VS(fn, expr)                              \
  void fn(size_t n, const float *a, float s, float *y) { \
    const float z = s;                                   \
    for (size_t i = 0; i < n; i++) {                     \
      const float x = a[i];                              \
      y[i] = (expr);                                     \
    }                                                    \
  }

SCALAR_VV(optic_f32_vadd__scalar, x + z)
SCALAR_VV(optic_f32_vsub__scalar, x - z)
SCALAR_VV(optic_f32_vmul__scalar, x *z)
SCALAR_VV(optic_f32_vdiv__scalar, x / z)
SCALAR_VV(optic_f32_vmax__scalar, max_nan(x, z))
SCALAR_VV(optic_f32_vmin__scalar, min_nan(x, z))
SCALAR_VV(optic_f32_vpow__scalar, powf(x, z))
SCALAR_VS(optic_f32_vaddc__scalar, x + z)
SCALAR_VS(optic_f32_vsubc__scalar, x - z)
SCALAR_VS(optic_f32_vmulc__scalar, x *z)
SCALAR_VS(optic_f32_vdivc__scalar, x / z)
SCALAR_VS(optic_f32_vmaxc__scalar, max_nan(x, z))
SCALAR_VS(optic_f32_vminc__scalar, min_nan(x, z))
SCALAR_VS(optic_f32_vpowc__scalar, powf(x, z))
