/* AVX2 chained f32 kernel (kernels/chain.h): eight 8-float vectors of the
 * running value stay in registers while every step is applied to them, then
 * one, then a masked tail (vmaskmov never touches masked-out lanes, so no
 * over-read). Each step is the very instruction the binary kernel uses
 * (kernels/x86/avx2/binary_avx2.c), operands in the same order, so results
 * are bitwise theirs. Built with -mavx2 -mfma; no fused multiply-add is
 * formed (intrinsics only). */
#include <immintrin.h>

#include "kernels/chain.h"
#include "kernels/x86/chain_forms_x86.h"
#include "kernels/x86/avx2/binary_ops_avx2.h"

static inline __m256i tail_mask(size_t r) {
  static const int32_t ramp[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(ramp + 8 - r));
}

static inline __m256 apply8(optic_binary_op op, __m256 x, __m256 z) {
  switch (op) {
    case OPTIC_BINARY_ADD: return optic_avx2_add(x, z);
    case OPTIC_BINARY_SUB: return _mm256_sub_ps(x, z);
    case OPTIC_BINARY_MUL: return optic_avx2_mul(x, z);
    case OPTIC_BINARY_DIV: return _mm256_div_ps(x, z);
    case OPTIC_BINARY_MAX: return optic_avx2_max(x, z);
    default: return optic_avx2_min(x, z);
  }
}

/* v = v op o or o op v on one vector, as the step says. */
static inline __m256 step8(const optic_f32_chain_step *st, __m256 v, __m256 o) {
  return (st->flags & OPTIC_CHAIN_ACC_FIRST) ? apply8(st->op, v, o) : apply8(st->op, o, v);
}

/* Eight vectors (64 floats) from element i: one dispatch per step per 64
 * elements, on the step's op and operand form together. */
#define STRIP 64

static inline void strip8(const float *a, const optic_f32_chain_step *steps, int32_t n_steps, size_t i, __m256 *out) {
  __m256 v[8];
  for (int j = 0; j < 8; j++) v[j] = _mm256_loadu_ps(a + i + 8 * j);
  for (int32_t k = 0; k < n_steps; k++) {
    const optic_f32_chain_step *st = &steps[k];
    const __m256 vs = _mm256_set1_ps(st->s);
    switch (OPTIC_CHAIN_FORM(st)) {
      OPTIC_CHAIN_CASES(_mm256_loadu_ps(st->b + i + 8 * j), vs, optic_avx2_add, _mm256_sub_ps, optic_avx2_mul,
                        _mm256_div_ps, optic_avx2_max, optic_avx2_min)
      default: break;
    }
  }
  for (int j = 0; j < 8; j++) out[j] = v[j];
}

/* The first r (<= 8) elements from i, masked. */
static inline __m256 strip_masked(const float *a, const optic_f32_chain_step *steps, int32_t n_steps, size_t i,
                                  __m256i m) {
  __m256 v = _mm256_maskload_ps(a + i, m);
  for (int32_t k = 0; k < n_steps; k++) {
    const optic_f32_chain_step *st = &steps[k];
    __m256 o = (st->flags & OPTIC_CHAIN_SCALAR) ? _mm256_set1_ps(st->s) : _mm256_maskload_ps(st->b + i, m);
    v = step8(st, v, o);
  }
  return v;
}

void optic_f32_chain__avx2(size_t n, const float *a, const optic_f32_chain_step *steps, int32_t n_steps, float *y,
                           bool stream) {
  size_t i = 0;
  const bool nt = stream && ((uintptr_t)y & 3u) == 0;
  if (nt) { /* a masked head until y is 32-byte aligned, as streaming stores require */
    size_t head = ((32u - ((uintptr_t)y & 31u)) & 31u) / 4u;
    head = head < n ? head : n;
    if (head > 0) {
      __m256i m = tail_mask(head);
      _mm256_maskstore_ps(y, m, strip_masked(a, steps, n_steps, 0, m));
    }
    i = head;
  }
  for (; i + STRIP <= n; i += STRIP) {
    __m256 r[8];
    strip8(a, steps, n_steps, i, r);
    if (nt) {
      for (int j = 0; j < 8; j++) _mm256_stream_ps(y + i + 8 * j, r[j]);
    } else {
      for (int j = 0; j < 8; j++) _mm256_storeu_ps(y + i + 8 * j, r[j]);
    }
  }
  const __m256i all = _mm256_set1_epi32(-1);
  for (; i + 8 <= n; i += 8) {
    __m256 r = strip_masked(a, steps, n_steps, i, all);
    if (nt) _mm256_stream_ps(y + i, r);
    else _mm256_storeu_ps(y + i, r);
  }
  if (i < n) {
    __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, strip_masked(a, steps, n_steps, i, m));
  }
}
