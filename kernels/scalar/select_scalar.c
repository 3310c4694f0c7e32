/* Scalar production fallback for the select family: a plain loop the compiler
 * may auto-vectorize (no -m flags here), and a copy for the scalar predicate.
 * Semantics as in kernels/select.h; values are moved, never computed. */
#include <string.h>

#include "kernels/select.h"

void optic_f32_vselect__scalar(size_t n, const uint8_t *p, const float *a, const float *b, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = p[i] != 0 ? a[i] : b[i];
}

/* y is either exactly the chosen input (nothing to do) or disjoint from it
 * (the contract forbids partial overlap), so memcpy is safe. */
void optic_f32_vselect_spred__scalar(size_t n, uint8_t p, const float *a, const float *b, float *y) {
  const float *src = p != 0 ? a : b;
  if (n != 0 && src != y) memcpy(y, src, n * sizeof(float));
}
