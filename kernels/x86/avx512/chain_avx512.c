/* AVX-512 chained f32 kernel (kernels/chain.h): eight 16-float vectors of
 * the running value stay in registers while every step is applied to them,
 * then one, then a masked tail (masked loads never fault on masked-out lanes,
 * so no over-read). Each step is the very instruction the binary kernel uses
 * (kernels/x86/avx512/binary_avx512.c), operands in the same order, so
 * results are bitwise theirs. No fused multiply-add is formed. */
#include <immintrin.h>

#include "kernels/chain.h"
#include "kernels/x86/chain_forms_x86.h"
#include "kernels/x86/avx512/binary_ops_avx512.h"

static inline __m512 apply16(optic_binary_op op, __m512 x, __m512 z) {
  switch (op) {
    case OPTIC_BINARY_ADD: return optic_avx512_add(x, z);
    case OPTIC_BINARY_SUB: return _mm512_sub_ps(x, z);
    case OPTIC_BINARY_MUL: return optic_avx512_mul(x, z);
    case OPTIC_BINARY_DIV: return _mm512_div_ps(x, z);
    case OPTIC_BINARY_MAX: return optic_avx512_max(x, z);
    default: return optic_avx512_min(x, z);
  }
}

/* Eight vectors (128 floats) from element i: one dispatch per step per 128
 * elements, on the step's op and operand form together. */
#define STRIP 128

static inline void strip8(const float *a, const optic_f32_chain_step *steps, int32_t n_steps, size_t i, __m512 *out) {
  __m512 v[8];
  for (int j = 0; j < 8; j++) v[j] = _mm512_loadu_ps(a + i + 16 * j);
  for (int32_t k = 0; k < n_steps; k++) {
    const optic_f32_chain_step *st = &steps[k];
    const __m512 vs = _mm512_set1_ps(st->s);
    switch (OPTIC_CHAIN_FORM(st)) {
      OPTIC_CHAIN_CASES(_mm512_loadu_ps(st->b + i + 16 * j), vs, optic_avx512_add, _mm512_sub_ps, optic_avx512_mul,
                        _mm512_div_ps, optic_avx512_max, optic_avx512_min)
      default: break;
    }
  }
  for (int j = 0; j < 8; j++) out[j] = v[j];
}

/* The elements of mask m from i (at most 16). */
static inline __m512 strip_masked(const float *a, const optic_f32_chain_step *steps, int32_t n_steps, size_t i,
                                  __mmask16 m) {
  __m512 v = _mm512_maskz_loadu_ps(m, a + i);
  for (int32_t k = 0; k < n_steps; k++) {
    const optic_f32_chain_step *st = &steps[k];
    __m512 o = (st->flags & OPTIC_CHAIN_SCALAR) ? _mm512_set1_ps(st->s) : _mm512_maskz_loadu_ps(m, st->b + i);
    v = (st->flags & OPTIC_CHAIN_ACC_FIRST) ? apply16(st->op, v, o) : apply16(st->op, o, v);
  }
  return v;
}

static inline __mmask16 first(size_t r) { return (__mmask16)((1u << r) - 1u); }

void optic_f32_chain__avx512(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y,
                             bool stream) {
  size_t i = 0;
  const bool nt = stream && ((uintptr_t)y & 3u) == 0;
  if (nt) { /* a masked head until y is 64-byte aligned, as streaming stores require */
    size_t head = ((64u - ((uintptr_t)y & 63u)) & 63u) / 4u;
    head = head < n ? head : n;
    if (head > 0) _mm512_mask_storeu_ps(y, first(head), strip_masked(a, steps, n_steps, 0, first(head)));
    i = head;
  }
  for (; i + STRIP <= n; i += STRIP) {
    __m512 r[8];
    strip8(a, steps, n_steps, i, r);
    if (nt) {
      for (int j = 0; j < 8; j++) _mm512_stream_ps(y + i + 16 * j, r[j]);
    } else {
      for (int j = 0; j < 8; j++) _mm512_storeu_ps(y + i + 16 * j, r[j]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    __m512 r = strip_masked(a, steps, n_steps, i, (__mmask16)0xFFFFu);
    if (nt) _mm512_stream_ps(y + i, r);
    else _mm512_storeu_ps(y + i, r);
  }
  if (i < n) _mm512_mask_storeu_ps(y + i, first(n - i), strip_masked(a, steps, n_steps, i, first(n - i)));
}
