/* AVX-512 window-tap loops (kernels/conv_taps.h): per output position and
 * block of 16 output features, four interleaved accumulators over input
 * features and window taps; the kernel's feature row is a (masked) vector,
 * the input element a broadcast. */
#include <immintrin.h>
#include <stddef.h>

#include "kernels/conv_taps.h"
#include "kernels/conv_window.h"

/* One row of taps along the inner dim: n taps, input elements at x with
 * step xs, kernel rows at k with step ks; tap j goes to accumulator j % 4. */
static inline void row_taps(const float *x, ptrdiff_t xs, const float *k, ptrdiff_t ks, int64_t n, __mmask16 m,
                            __m512 *a0, __m512 *a1, __m512 *a2, __m512 *a3) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4, x += 4 * xs, k += 4 * ks) {
    *a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[0]), _mm512_maskz_loadu_ps(m, k), *a0);
    *a1 = _mm512_fmadd_ps(_mm512_set1_ps(x[xs]), _mm512_maskz_loadu_ps(m, k + ks), *a1);
    *a2 = _mm512_fmadd_ps(_mm512_set1_ps(x[2 * xs]), _mm512_maskz_loadu_ps(m, k + 2 * ks), *a2);
    *a3 = _mm512_fmadd_ps(_mm512_set1_ps(x[3 * xs]), _mm512_maskz_loadu_ps(m, k + 3 * ks), *a3);
  }
  if (j < n) *a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[0]), _mm512_maskz_loadu_ps(m, k), *a0);
  if (j + 1 < n) *a1 = _mm512_fmadd_ps(_mm512_set1_ps(x[xs]), _mm512_maskz_loadu_ps(m, k + ks), *a1);
  if (j + 2 < n) *a2 = _mm512_fmadd_ps(_mm512_set1_ps(x[2 * xs]), _mm512_maskz_loadu_ps(m, k + 2 * ks), *a2);
}

/* The 16 (mask m) output features from o of one position: input at in
 * (batch and position applied), kernel at ker (feature block applied). */
static __m512 position_block(const optic_conv_geom *g, const optic_conv_wdim *d0, const optic_conv_wdim *d1,
                             const int64_t *y, const float *in, const float *ker, __mmask16 m) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  int64_t lo0, hi0, lo1, hi1;
  optic_conv_tap_range(d0, y[0], &lo0, &hi0);
  optic_conv_tap_range(d1, y[1], &lo1, &hi1);
  const int64_t b0 = y[0] * d0->stride - d0->pad, b1 = y[1] * d1->stride - d1->pad;
  /* inner taps lo1.. in the kernel's order: k1 = lo1 (or k - 1 - lo1 reversed), stepping +-1 */
  const int64_t k1 = d1->rev ? d1->k - 1 - lo1 : lo1;
  const ptrdiff_t ks = d1->rev ? -(ptrdiff_t)d1->k_s : (ptrdiff_t)d1->k_s, xs = (ptrdiff_t)(d1->dil * d1->in_s);
  for (int64_t c = 0; c < g->cin; c++) {
    for (int64_t t0 = lo0; t0 < hi0; t0++) {
      int64_t k0 = d0->rev ? d0->k - 1 - t0 : t0;
      const float *irow = in + c * g->in_sc + (b0 + t0 * d0->dil) * d0->in_s + (b1 + lo1 * d1->dil) * d1->in_s;
      const float *krow = ker + c * g->k_si + k0 * d0->k_s + k1 * d1->k_s;
      row_taps(irow, xs, krow, ks, hi1 - lo1, m, &a0, &a1, &a2, &a3);
    }
  }
  return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}

void optic_conv_taps_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                            int64_t u0, int64_t u1) {
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
      __mmask16 m = (__mmask16)((1u << n) - 1u);
      __m512 v = position_block(g, &d0, &d1, y, in, kernel + o * g->k_so, m);
      _mm512_mask_storeu_ps(out + o * g->out_so, m, v);
    }
    if (++y[1] == d1.out) {
      y[1] = 0;
      if (++y[0] == d0.out) y[0] = 0, b++;
    }
  }
}
