/* Naive reference for the select family: the test oracle and what constant
 * folding evaluates with. Plain loops; never optimize this file. */
#include "kernels/select.h"

void optic_ref_f32_select(size_t n, const uint8_t *p, const float *a, const float *b, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = p[i] != 0 ? a[i] : b[i];
}

void optic_ref_f32_select_spred(size_t n, uint8_t p, const float *a, const float *b, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = p != 0 ? a[i] : b[i];
}
