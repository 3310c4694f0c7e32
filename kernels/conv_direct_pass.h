/* Private to the direct convolution's loops (kernels/x86/avx2/conv_direct_avx2.c,
 * kernels/x86/avx512/conv_direct_avx512.c): what they share that is not
 * ISA code -- the window-tap range, a spatial dim as the loops walk it, and
 * what one pass over a slice's rows carries. Include after
 * kernels/conv_direct.h. */
#ifndef OPTIC_KERNELS_CONV_DIRECT_PASS_H
#define OPTIC_KERNELS_CONV_DIRECT_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/conv_direct.h"

/* Window taps k' in [lo, hi) of a window of k taps, dilation d, whose input
 * positions x0 + k'*d fall inside [0, n). */
static inline void tap_range(int64_t x0, int64_t d, int64_t n, int64_t k, int64_t *lo, int64_t *hi) {
  int64_t l = x0 < 0 ? (-x0 + d - 1) / d : 0;
  int64_t lim = n - 1 - x0;
  int64_t h = lim < 0 ? 0 : lim / d + 1;
  if (h > k) h = k;
  if (l > k) l = k;
  if (h < l) h = l;
  *lo = l, *hi = h;
}

/* One spatial dim as the loops see it (a missing row dim has size 1). */
typedef struct dim_view {
  int64_t in, k, out, stride, pad, dil, in_s, k_s, out_s;
  bool rev;
} dim_view;

static inline dim_view view_of(const optic_conv_geom *g, int32_t s) {
  if (s < 0) return (dim_view){1, 1, 1, 1, 0, 1, 0, 0, 0, false};
  return (dim_view){g->in_size[s], g->k_size[s], g->out_size[s], g->stride[s], g->pad_lo[s],
                    g->rhs_dil[s], g->in_ss[s],  g->k_ss[s],     g->out_ss[s], g->rev[s]};
}

/* Kernel offset of window tap k' (in input order) and the step to k'+1. */
static inline int64_t k_offset(const dim_view *v, int64_t tap) { return (v->rev ? v->k - 1 - tap : tap) * v->k_s; }
static inline int64_t k_step(const dim_view *v) { return v->rev ? -v->k_s : v->k_s; }

/* What one pass (an input-feature group) over a slice's rows shares. */
typedef struct pass_ctx {
  const optic_conv_plan *p;
  const optic_conv_direct_packing *pk;
  dim_view H, W;
  const float *input, *kernel;
  float *output;
  int64_t c0, cgn;     /* input features [c0, c0 + cgn) */
  unsigned char *tags; /* per ring row: the packed (group, image, row) as int64, or -1 (any alignment) */
  float *ring;
} pass_ctx;

#endif
