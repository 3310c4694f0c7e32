/* Internal, AVX-512 kernels only: the f32 binary ops as the binary kernels
 * (binary_avx512.c) and the chain kernel (chain_avx512.c) both apply them, so
 * that a chain is bitwise the binary kernels called one after another, NaN
 * payloads included. When both operands are NaN the instruction's first
 * source decides the payload; the compiler may swap the operands of its own
 * commutative add and multiply (to fold a load or tie a register), so these
 * two are written to keep x as the first source, always. */
#ifndef OPTIC_KERNELS_X86_AVX512_BINARY_OPS_AVX512_H
#define OPTIC_KERNELS_X86_AVX512_BINARY_OPS_AVX512_H

#include <immintrin.h>

static inline __m512 optic_avx512_add(__m512 x, __m512 z) {
  __m512 r;
  __asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(x), "vm"(z));
  return r;
}
static inline __m512 optic_avx512_mul(__m512 x, __m512 z) {
  __m512 r;
  __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(x), "vm"(z));
  return r;
}
/* x when x is NaN; else vmaxps's answer (z when z is NaN, or x == z). */
static inline __m512 optic_avx512_max(__m512 x, __m512 z) {
  __m512 r = _mm512_max_ps(x, z);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
static inline __m512 optic_avx512_min(__m512 x, __m512 z) {
  __m512 r = _mm512_min_ps(x, z);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

#endif
