/* One spatial dim of a convolution as the direct window loops see it
 * (kernels/conv_grouped.h, kernels/conv_taps.h), and the window taps that
 * read the input at an output position. Header-only: the loops of every
 * ISA inline it. */
#ifndef OPTIC_KERNELS_CONV_WINDOW_H
#define OPTIC_KERNELS_CONV_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/conv.h"

typedef struct optic_conv_wdim {
  int64_t in, k, out, stride, pad, dil, in_s, k_s, out_s;
  bool rev;
} optic_conv_wdim;

/* Spatial dim s of g; s < 0 gives a dummy dim of extent 1 (a 1-D
 * convolution run by 2-D loops). */
static inline optic_conv_wdim optic_conv_wdim_of(const optic_conv_geom *g, int32_t s) {
  if (s < 0) return (optic_conv_wdim){.in = 1, .k = 1, .out = 1, .stride = 1, .dil = 1};
  return (optic_conv_wdim){g->in_size[s], g->k_size[s], g->out_size[s], g->stride[s], g->pad_lo[s],
                           g->rhs_dil[s], g->in_ss[s],  g->k_ss[s],     g->out_ss[s], g->rev[s]};
}

/* Window taps (unreversed index range [*lo, *hi)) that read the input at
 * output position y: 0 <= y*stride + t*dil - pad < in. */
static inline void optic_conv_tap_range(const optic_conv_wdim *d, int64_t y, int64_t *lo, int64_t *hi) {
  int64_t base = y * d->stride - d->pad;                 /* X = base + t*dil */
  if (base >= 0 && base + (d->k - 1) * d->dil < d->in) { /* all taps inside: no division */
    *lo = 0, *hi = d->k;
    return;
  }
  int64_t a = base >= 0 ? 0 : (-base + d->dil - 1) / d->dil;
  int64_t b = d->in - base <= 0 ? 0 : (d->in - base + d->dil - 1) / d->dil;
  *lo = a < d->k ? a : d->k;
  *hi = b < d->k ? b : d->k;
  if (*hi < *lo) *hi = *lo;
}

#endif
