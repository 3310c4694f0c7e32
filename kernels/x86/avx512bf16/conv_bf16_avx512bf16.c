/* Direct bf16 convolution rows on AVX512_BF16: up to 14 output positions x
 * 32 output features per call, accumulated in f32 registers over every
 * window tap, the A operand broadcast straight from a zero-padded line
 * buffer (no im2col, no A panels). Compiled with -mavx512bf16; called only
 * when the plan chose the vdpbf16ps kernel (kernels/conv_bf16.h).
 *
 * A: row i of tap t starts at r->a + r->tap_off[t] + i * r->rs (bf16
 * elements, even offsets); pair kp of the tap is the 32-bit word at 2 * kp.
 * B: the panel of pack_b (word [kp][j] = (B[2kp][j], B[2kp+1][j])), the
 * taps' pairs one after another. Sums: per lane, the pairs in increasing
 * (tap, kp), each pair's two products added by vdpbf16ps. */
#include <immintrin.h>
#include <string.h>

#include "kernels/dot_bf16.h"

#define NR OPTIC_BF16_NR

static inline __m512bh bcast_pair(const uint16_t *p) {
  uint32_t w;
  memcpy(&w, p, sizeof w);
  return (__m512bh)_mm512_set1_epi32((int)w);
}

/* 16 f32 to bf16, nearest even, NaN kept quiet (core/half.h
 * optic_half_from_f32_bf16, the same bits). */
static inline __m256i to_bf16(__m512 v) {
  __m512i b = _mm512_castps_si512(v), one = _mm512_set1_epi32(1);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), one);
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb), 16);
  __m512i nan = _mm512_or_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x40));
  __mmask16 is_nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, is_nan, nan));
}

static inline void store_rows(const __m512 *acc0, const __m512 *acc1, const optic_bf16_conv_rows_args *r) {
  int cols = r->cols;
  __mmask16 m0 = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
  __mmask16 m1 = cols >= 32 ? (__mmask16)0xffff : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1);
  for (int i = 0; i < r->rows; i++) {
    if (r->out_bf16) {
      uint16_t *o = (uint16_t *)r->out + i * r->ldo;
      _mm256_mask_storeu_epi16((void *)o, m0, to_bf16(acc0[i]));
      _mm256_mask_storeu_epi16((void *)(o + 16), m1, to_bf16(acc1[i]));
    } else {
      float *o = r->out != NULL ? (float *)r->out + i * r->ldo : r->c + i * r->ldc;
      _mm512_mask_storeu_ps(o, m0, acc0[i]);
      _mm512_mask_storeu_ps(o + 16, m1, acc1[i]);
    }
  }
}

/* R rows (a compile-time constant in each caller), all taps. */
static inline __attribute__((always_inline)) void rows_kernel(const optic_bf16_conv_rows_args *r, const int R) {
  __m512 acc0[14], acc1[14];
#pragma GCC unroll 14
  for (int i = 0; i < R; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
  const uint32_t *b = r->b;
  const int64_t rs = r->rs;
  const int H = R > 7 ? 7 : R; /* rows [H, R) from a second base: 7 row offsets in registers, not 14 */
  for (int64_t t = 0; t < r->taps; t++) {
    const uint16_t *a = r->a + r->tap_off[t], *a2 = a + H * rs;
    for (int64_t kp = 0; kp < r->tap_pairs; kp++, b += NR, a += 2, a2 += 2) {
      __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)b);
      __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(b + 16));
#pragma GCC unroll 14
      for (int i = 0; i < R; i++) {
        __m512bh ai = bcast_pair(i < H ? a + i * rs : a2 + (i - H) * rs);
        acc0[i] = _mm512_dpbf16_ps(acc0[i], ai, b0);
        acc1[i] = _mm512_dpbf16_ps(acc1[i], ai, b1);
      }
    }
  }
  store_rows(acc0, acc1, r);
}

static void rows_14(const optic_bf16_conv_rows_args *r) { rows_kernel(r, 14); }
static void rows_7(const optic_bf16_conv_rows_args *r) { rows_kernel(r, 7); }

void optic_bf16_conv_rows__avx512bf16(const optic_bf16_conv_rows_args *r) {
  if (r->rows > 7) {
    rows_14(r);
  } else {
    rows_7(r);
  }
}
