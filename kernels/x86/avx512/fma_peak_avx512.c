/* AVX-512 peak loop (see kernels/fma_peak.h); in the AVX-512 folder (its flags only).
 * 16 accumulators in zmm registers (of 32), 2 operands; same converging
 * recurrence as the AVX2 loop, so no overflow and no subnormals. */
#include <immintrin.h>

#include "kernels/fma_peak.h"

float optic_fma_peak_avx512(uint64_t reps) {
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  __m512 a0 = _mm512_set1_ps(0.00f), a1 = _mm512_set1_ps(0.05f), a2 = _mm512_set1_ps(0.10f);
  __m512 a3 = _mm512_set1_ps(0.15f), a4 = _mm512_set1_ps(0.20f), a5 = _mm512_set1_ps(0.25f);
  __m512 a6 = _mm512_set1_ps(0.30f), a7 = _mm512_set1_ps(0.35f), a8 = _mm512_set1_ps(0.40f);
  __m512 a9 = _mm512_set1_ps(0.45f), a10 = _mm512_set1_ps(0.50f), a11 = _mm512_set1_ps(0.55f);
  __m512 a12 = _mm512_set1_ps(0.60f), a13 = _mm512_set1_ps(0.65f), a14 = _mm512_set1_ps(0.70f);
  __m512 a15 = _mm512_set1_ps(0.75f);
  for (uint64_t r = 0; r < reps; r++) {
    a0 = _mm512_fmadd_ps(a0, x, y);
    a1 = _mm512_fmadd_ps(a1, x, y);
    a2 = _mm512_fmadd_ps(a2, x, y);
    a3 = _mm512_fmadd_ps(a3, x, y);
    a4 = _mm512_fmadd_ps(a4, x, y);
    a5 = _mm512_fmadd_ps(a5, x, y);
    a6 = _mm512_fmadd_ps(a6, x, y);
    a7 = _mm512_fmadd_ps(a7, x, y);
    a8 = _mm512_fmadd_ps(a8, x, y);
    a9 = _mm512_fmadd_ps(a9, x, y);
    a10 = _mm512_fmadd_ps(a10, x, y);
    a11 = _mm512_fmadd_ps(a11, x, y);
    a12 = _mm512_fmadd_ps(a12, x, y);
    a13 = _mm512_fmadd_ps(a13, x, y);
    a14 = _mm512_fmadd_ps(a14, x, y);
    a15 = _mm512_fmadd_ps(a15, x, y);
  }
  __m512 s0 = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
  __m512 s1 = _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7));
  __m512 s2 = _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11));
  __m512 s3 = _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}
