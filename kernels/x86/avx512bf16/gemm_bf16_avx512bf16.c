/* bf16 GEMM on AVX512_BF16: panel packing and a register-blocked
 * 12 x 32 micro-kernel built on vdpbf16ps (bf16 pairs multiplied exactly and
 * added into f32 lanes). Compiled with -mavx512bf16; called only when
 * optic_dot_bf16_available() says the CPU has the instruction.
 *
 * Packed layouts (see kernels/dot_bf16.h): one 32-bit word holds the pair
 * (x[2p], x[2p+1]) of the contracting index, the low half the even element.
 *   A panel (12 rows): word [kp][i] = (A[i][2kp], A[i][2kp+1])
 *   B panel (32 cols): word [kp][j] = (B[2kp][j], B[2kp+1][j])
 * Rows, columns and the last half pair past the matrix are zero. */
#include <immintrin.h>
#include <string.h>

#include "kernels/dot_bf16.h"

#define MR OPTIC_BF16_MR
#define NR OPTIC_BF16_NR
#define KC_PAIRS 128 /* 256 k: a B micro-panel is 16 KiB (L1) */
#define MC_PANELS 16 /* 192 rows: an A block is 96 KiB (L2) */

static inline uint16_t at(const optic_bf16_matrix *s, int64_t r, int64_t c) {
  if (s->vector) return s->data[(s->rows == 1 ? c : r) * s->ld];
  return s->data[s->trans ? c * s->ld + r : r * s->ld + c];
}

static inline uint32_t pair(uint16_t lo, uint16_t hi) { return (uint32_t)lo | (uint32_t)hi << 16; }

/* A: rows [r0, r0 + MR) of the rows x k matrix s; k pairs kp. */
void optic_bf16_pack_a__avx512bf16(const optic_bf16_matrix *s, int64_t r0, uint32_t *dst) {
  int64_t rows = s->rows - r0 < MR ? s->rows - r0 : MR, k = s->cols, kpairs = (k + 1) / 2;
  memset(dst, 0, (size_t)kpairs * MR * sizeof(uint32_t));
  if (!s->vector && !s->trans) { /* row-major: each row is a run of pairs */
    for (int64_t i = 0; i < rows; i++) {
      const uint16_t *row = s->data + (r0 + i) * s->ld;
      for (int64_t kp = 0; kp < k / 2; kp++) dst[kp * MR + i] = pair(row[2 * kp], row[2 * kp + 1]);
      if (k & 1) dst[(kpairs - 1) * MR + i] = row[k - 1];
    }
    return;
  }
  for (int64_t kp = 0; kp < kpairs; kp++) {
    for (int64_t i = 0; i < rows; i++) {
      uint16_t hi = 2 * kp + 1 < k ? at(s, r0 + i, 2 * kp + 1) : 0;
      dst[kp * MR + i] = pair(at(s, r0 + i, 2 * kp), hi);
    }
  }
}

/* B: columns [c0, c0 + NR) of the k x cols matrix s (rows = k). */
void optic_bf16_pack_b__avx512bf16(const optic_bf16_matrix *s, int64_t c0, int64_t kpairs_pad, uint32_t *dst) {
  int64_t cols = s->cols - c0 < NR ? s->cols - c0 : NR, k = s->rows, kpairs = (k + 1) / 2;
  if (kpairs_pad > kpairs) memset(dst + kpairs * NR, 0, (size_t)((kpairs_pad - kpairs) * NR) * sizeof(uint32_t));
  if (!s->vector && !s->trans && cols == NR) { /* row-major, full panel: interleave two rows */
    const __m512i lo_idx = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6,
                                            37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    const __m512i hi_idx = _mm512_add_epi16(lo_idx, _mm512_set1_epi16(16));
    for (int64_t kp = 0; kp < kpairs; kp++) {
      __m512i r0 = _mm512_loadu_si512((const void *)(s->data + 2 * kp * s->ld + c0));
      __m512i r1 = 2 * kp + 1 < k ? _mm512_loadu_si512((const void *)(s->data + (2 * kp + 1) * s->ld + c0))
                                  : _mm512_setzero_si512();
      _mm512_storeu_si512((void *)(dst + kp * NR), _mm512_permutex2var_epi16(r0, lo_idx, r1));
      _mm512_storeu_si512((void *)(dst + kp * NR + 16), _mm512_permutex2var_epi16(r0, hi_idx, r1));
    }
    return;
  }
  memset(dst, 0, (size_t)kpairs * NR * sizeof(uint32_t));
  for (int64_t kp = 0; kp < kpairs; kp++) {
    for (int64_t j = 0; j < cols; j++) {
      uint16_t hi = 2 * kp + 1 < k ? at(s, 2 * kp + 1, c0 + j) : 0;
      dst[kp * NR + j] = pair(at(s, 2 * kp, c0 + j), hi);
    }
  }
}

static inline __m512bh as_bh(__m512i v) { return (__m512bh)v; }

/* c[rows x cols] (+)= A panel . B panel over kn pairs; rows <= MR, cols <= NR. */
static void kernel_12x32(int64_t kn, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int rows, int cols,
                         bool accumulate) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int i = 0; i < MR; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t kp = 0; kp < kn; kp++, a += MR, b += NR) {
    __m512bh b0 = as_bh(_mm512_loadu_si512((const void *)b));
    __m512bh b1 = as_bh(_mm512_loadu_si512((const void *)(b + 16)));
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
      __m512bh ai = as_bh(_mm512_set1_epi32((int)a[i]));
      acc0[i] = _mm512_dpbf16_ps(acc0[i], ai, b0);
      acc1[i] = _mm512_dpbf16_ps(acc1[i], ai, b1);
    }
  }
  __mmask16 m0 = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
  __mmask16 m1 = cols >= 32 ? (__mmask16)0xffff : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1);
  for (int i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    __m512 v0 = acc0[i], v1 = acc1[i];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, ci));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, ci + 16));
    }
    _mm512_mask_storeu_ps(ci, m0, v0);
    _mm512_mask_storeu_ps(ci + 16, m1, v1);
  }
}

/* Output rows [pa0 * MR, ...) x columns [pb0 * NR, ...) of one batch item,
 * panels [pa0, pa1) of A and [pb0, pb1) of B, blocked for L1 and L2. */
void optic_bf16_gemm__avx512bf16(const optic_bf16_gemm_args *g, int64_t pa0, int64_t pa1, int64_t pb0, int64_t pb1) {
  int64_t kpairs = (g->k + 1) / 2;
  for (int64_t kp0 = 0; kp0 < kpairs; kp0 += KC_PAIRS) {
    int64_t kn = kpairs - kp0 < KC_PAIRS ? kpairs - kp0 : KC_PAIRS;
    for (int64_t ia = pa0; ia < pa1; ia += MC_PANELS) {
      int64_t ie = ia + MC_PANELS < pa1 ? ia + MC_PANELS : pa1;
      for (int64_t jb = pb0; jb < pb1; jb++) {
        const uint32_t *bp = g->b + (jb * kpairs + kp0) * NR;
        int cols = (int)(g->n - jb * NR < NR ? g->n - jb * NR : NR);
        for (int64_t i = ia; i < ie; i++) {
          int rows = (int)(g->m - i * MR < MR ? g->m - i * MR : MR);
          kernel_12x32(kn, g->a + (i * kpairs + kp0) * MR, bp, g->c + i * MR * g->ldc + jb * NR, g->ldc, rows, cols,
                       kp0 > 0);
        }
      }
    }
  }
}
