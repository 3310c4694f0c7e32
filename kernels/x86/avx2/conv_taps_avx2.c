/* AVX2 window-tap loops (kernels/conv_taps.h): per output position and
 * block of 16 output features (two 8-lane vectors), four interleaved pairs of
 * accumulators over input features and window taps; the kernel's feature row
 * is a (masked) pair of vectors, the input element a broadcast. Same order of
 * sums as the AVX-512 loops. Never allocates; masked loads never touch
 * floats outside the operands. */
#include <immintrin.h>
#include <stddef.h>

#include "kernels/conv_taps.h"
#include "kernels/conv_window.h"

typedef struct taps_acc {
  __m256 lo[4], hi[4];
} taps_acc;

/* Lanes [0, n) of a vector of 8 (n clamped to 0..8) as a maskload mask. */
static inline __m256i lanes_mask(int64_t n) {
  n = n < 0 ? 0 : n > 8 ? 8 : n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline __attribute__((always_inline)) void tap(taps_acc *a, int j, float x, const float *k, __m256i mlo,
                                                      __m256i mhi) {
  __m256 xv = _mm256_set1_ps(x);
  a->lo[j] = _mm256_fmadd_ps(xv, _mm256_maskload_ps(k, mlo), a->lo[j]);
  a->hi[j] = _mm256_fmadd_ps(xv, _mm256_maskload_ps(k + 8, mhi), a->hi[j]);
}

/* One row of taps along the inner dim: n taps, input elements at x with
 * step xs, kernel rows at k with step ks; tap j goes to accumulator j % 4. */
static inline void row_taps(const float *x, ptrdiff_t xs, const float *k, ptrdiff_t ks, int64_t n, __m256i mlo,
                            __m256i mhi, taps_acc *a) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4, x += 4 * xs, k += 4 * ks) {
    tap(a, 0, x[0], k, mlo, mhi);
    tap(a, 1, x[xs], k + ks, mlo, mhi);
    tap(a, 2, x[2 * xs], k + 2 * ks, mlo, mhi);
    tap(a, 3, x[3 * xs], k + 3 * ks, mlo, mhi);
  }
  if (j < n) tap(a, 0, x[0], k, mlo, mhi);
  if (j + 1 < n) tap(a, 1, x[xs], k + ks, mlo, mhi);
  if (j + 2 < n) tap(a, 2, x[2 * xs], k + 2 * ks, mlo, mhi);
}

/* The (up to) 16 output features from o of one position into out (n of
 * them): input at in (batch and position applied), kernel at ker (feature
 * block applied). */
static void position_block(const optic_conv_geom *g, const optic_conv_wdim *d0, const optic_conv_wdim *d1,
                           const int64_t *y, const float *in, const float *ker, int64_t n, float *out) {
  taps_acc a;
  for (int j = 0; j < 4; j++) a.lo[j] = a.hi[j] = _mm256_setzero_ps();
  const __m256i mlo = lanes_mask(n), mhi = lanes_mask(n - 8);
  int64_t lo0, hi0, lo1, hi1;
  optic_conv_tap_range(d0, y[0], &lo0, &hi0);
  optic_conv_tap_range(d1, y[1], &lo1, &hi1);
  const int64_t b0 = y[0] * d0->stride - d0->pad, b1 = y[1] * d1->stride - d1->pad;
  const int64_t k1 = d1->rev ? d1->k - 1 - lo1 : lo1;
  const ptrdiff_t ks = d1->rev ? -(ptrdiff_t)d1->k_s : (ptrdiff_t)d1->k_s, xs = (ptrdiff_t)(d1->dil * d1->in_s);
  for (int64_t c = 0; c < g->cin; c++) {
    for (int64_t t0 = lo0; t0 < hi0; t0++) {
      int64_t k0 = d0->rev ? d0->k - 1 - t0 : t0;
      const float *irow = in + c * g->in_sc + (b0 + t0 * d0->dil) * d0->in_s + (b1 + lo1 * d1->dil) * d1->in_s;
      const float *krow = ker + c * g->k_si + k0 * d0->k_s + k1 * d1->k_s;
      row_taps(irow, xs, krow, ks, hi1 - lo1, mlo, mhi, &a);
    }
  }
  __m256 vlo = _mm256_add_ps(_mm256_add_ps(a.lo[0], a.lo[1]), _mm256_add_ps(a.lo[2], a.lo[3]));
  __m256 vhi = _mm256_add_ps(_mm256_add_ps(a.hi[0], a.hi[1]), _mm256_add_ps(a.hi[2], a.hi[3]));
  _mm256_maskstore_ps(out, mlo, vlo);
  _mm256_maskstore_ps(out + 8, mhi, vhi);
}

void optic_conv_taps_avx2(const optic_conv_plan *p, const float *input, const float *kernel, float *output, int64_t u0,
                          int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const optic_conv_wdim d0 = optic_conv_wdim_of(g, g->nsp == 2 ? 0 : -1),
                        d1 = optic_conv_wdim_of(g, g->nsp == 2 ? 1 : 0);
  const int64_t per_image = d0.out * d1.out;
  int64_t b = per_image > 0 ? u0 / per_image : 0, y[2] = {0, 0};
  if (per_image > 0) y[0] = (u0 % per_image) / d1.out, y[1] = u0 % d1.out;
  for (int64_t u = u0; u < u1; u++) { /* positions stepped, not divided */
    const float *in = input + b * g->in_sb;
    float *out = output + b * g->out_sb + y[0] * d0.out_s + y[1] * d1.out_s;
    for (int64_t o = 0; o < g->cout; o += 16) {
      int64_t n = g->cout - o < 16 ? g->cout - o : 16;
      position_block(g, &d0, &d1, y, in, kernel + o * g->k_so, n, out + o * g->out_so);
    }
    if (++y[1] == d1.out) {
      y[1] = 0;
      if (++y[0] == d0.out) y[0] = 0, b++;
    }
  }
}
