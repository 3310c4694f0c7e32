/* Internal, AVX2 kernels only: the f32 binary ops as the binary kernels
 * (binary_avx2.c) and the chain kernel (chain_avx2.c) both apply them, so
 * that a chain is bitwise the binary kernels called one after another, NaN
 * payloads included. When both operands are NaN the instruction's first
 * source decides the payload; the compiler may swap the operands of its own
 * commutative add and multiply (to fold a load or tie a register), so these
 * two are written to keep x as the first source, always. */
#ifndef OPTIC_KERNELS_X86_AVX2_BINARY_OPS_AVX2_H
#define OPTIC_KERNELS_X86_AVX2_BINARY_OPS_AVX2_H

#include <immintrin.h>

static inline __m256 optic_avx2_add(__m256 x, __m256 z) {
  __m256 r;
  __asm__("vaddps %2, %1, %0" : "=x"(r) : "x"(x), "xm"(z));
  return r;
}
static inline __m256 optic_avx2_mul(__m256 x, __m256 z) {
  __m256 r;
  __asm__("vmulps %2, %1, %0" : "=x"(r) : "x"(x), "xm"(z));
  return r;
}
/* x when x is NaN; else vmaxps's answer (z when z is NaN, or x == z). */
static inline __m256 optic_avx2_max(__m256 x, __m256 z) {
  __m256 r = _mm256_max_ps(x, z);
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
static inline __m256 optic_avx2_min(__m256 x, __m256 z) {
  __m256 r = _mm256_min_ps(x, z);
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

#endif
