/* Portable multiply-add peak loop (kernels/fma_peak.h): 8 independent scalar
 * accumulators, the same converging recurrence acc = acc * x + y (x < 1) as
 * the SIMD loops, so no overflow and no subnormals. */
#include "kernels/fma_peak.h"

float optic_fma_peak_scalar(uint64_t reps) {
  /* volatile loads keep the compiler from folding the recurrence away. */
  volatile float xv = 0.999f, yv = 0.001f;
  const float x = xv, y = yv;
  float a0 = 0.0f, a1 = 0.1f, a2 = 0.2f, a3 = 0.3f, a4 = 0.4f, a5 = 0.5f, a6 = 0.6f, a7 = 0.7f;
  for (uint64_t r = 0; r < reps; r++) {
    a0 = a0 * x + y;
    a1 = a1 * x + y;
    a2 = a2 * x + y;
    a3 = a3 * x + y;
    a4 = a4 * x + y;
    a5 = a5 * x + y;
    a6 = a6 * x + y;
    a7 = a7 * x + y;
  }
  return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}
