/* Direct forward convolution, AVX-512 (OPTIC_CONV_STRATEGY_DIRECT; planning in
 * kernels/conv_direct.c). Output-stationary register blocking: a tile of up to
 * DIRECT_R output pixels of one row x up to 64 output features (4 zmm each)
 * stays in 24 zmm accumulators while the loops run over the window taps
 * inside the input and the input features; each step loads 4 kernel vectors
 * and broadcasts one input scalar per pixel (4 loads + 6 broadcasts per 24
 * FMAs). Pixels whose window is cut by the input edge (padding) run one at a
 * time over their valid taps only, so no padded copy is made. The last
 * feature vector of a tile is masked (loads and stores), so nothing outside
 * the operands is touched. Never allocates, never spawns threads. */
#include <immintrin.h>

#include "kernels/conv_direct.h"

#define DIRECT_R 6  /* output pixels per tile */
#define DIRECT_NV 4 /* feature vectors per tile: 64 output features */

/* The operands of one tile: `in` is the input of its first pixel at its first
 * valid tap (h0, w0) and feature 0, `k` the kernel at that tap and the tile's
 * first output feature. */
typedef struct tile_args {
  const float *in, *k;
  float *out;
  int64_t in_pix, out_pix;       /* input and output strides between the tile's pixels */
  int64_t nh, in_hstep, k_hstep; /* valid taps of the row dim, their steps */
  int64_t nw, in_wstep, k_wstep; /* valid taps of the pixel dim, their steps */
  int64_t cin, k_si;
  __mmask16 last;  /* lanes of the last feature vector */
  bool accumulate; /* add to the output (a later input-feature block) instead of overwriting it */
} tile_args;

static inline __attribute__((always_inline)) void tile(const tile_args *a, const int R, const int NV) {
  __m512 acc[DIRECT_R][DIRECT_NV];
  const int64_t cin = a->cin, k_si = a->k_si, in_pix = a->in_pix;
  const __mmask16 last = a->last;
  if (a->accumulate) {
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const float *op = a->out + r * a->out_pix;
#pragma GCC unroll 4
      for (int v = 0; v < NV - 1; v++) acc[r][v] = _mm512_loadu_ps(op + 16 * v);
      acc[r][NV - 1] = _mm512_maskz_loadu_ps(last, op + 16 * (NV - 1));
    }
  } else {
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    }
  }
  for (int64_t th = 0; th < a->nh; th++) {
    for (int64_t tw = 0; tw < a->nw; tw++) {
      const float *ip = a->in + th * a->in_hstep + tw * a->in_wstep;
      const float *kp = a->k + th * a->k_hstep + tw * a->k_wstep;
      for (int64_t c = 0; c < cin; c++) {
        __m512 w[DIRECT_NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV - 1; v++) w[v] = _mm512_loadu_ps(kp + 16 * v);
        w[NV - 1] = _mm512_maskz_loadu_ps(last, kp + 16 * (NV - 1));
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
          __m512 x = _mm512_set1_ps(ip[r * in_pix + c]);
#pragma GCC unroll 4
          for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(x, w[v], acc[r][v]);
        }
        kp += k_si;
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    float *op = a->out + r * a->out_pix;
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; v++) _mm512_storeu_ps(op + 16 * v, acc[r][v]);
    _mm512_mask_storeu_ps(op + 16 * (NV - 1), last, acc[r][NV - 1]);
  }
}

#define TILE_FN(R, NV) \
  static void tile_##R##_##NV(const tile_args *a) { tile(a, R, NV); }
#define TILE_FNS(R) TILE_FN(R, 1) TILE_FN(R, 2) TILE_FN(R, 3) TILE_FN(R, 4)
TILE_FNS(1)
TILE_FNS(2)
TILE_FNS(3)
TILE_FNS(4)
TILE_FNS(5)
TILE_FNS(6)
#undef TILE_FNS
#undef TILE_FN

typedef void (*tile_fn)(const tile_args *);
#define TILE_ROW(R) \
  { tile_##R##_1, tile_##R##_2, tile_##R##_3, tile_##R##_4 }
static const tile_fn tiles[DIRECT_R][DIRECT_NV] = {TILE_ROW(1), TILE_ROW(2), TILE_ROW(3),
                                                   TILE_ROW(4), TILE_ROW(5), TILE_ROW(6)};
#undef TILE_ROW

/* Window taps k' in [lo, hi) of a window of k taps, dilation d, whose input
 * positions x0 + k'*d fall inside [0, n). */
static void tap_range(int64_t x0, int64_t d, int64_t n, int64_t k, int64_t *lo, int64_t *hi) {
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

static dim_view view_of(const optic_conv_geom *g, int32_t s) {
  if (s < 0) return (dim_view){1, 1, 1, 1, 0, 1, 0, 0, 0, false};
  return (dim_view){g->in_size[s], g->k_size[s], g->out_size[s], g->stride[s], g->pad_lo[s],
                    g->rhs_dil[s], g->in_ss[s],  g->k_ss[s],     g->out_ss[s], g->rev[s]};
}

/* Kernel offset of window tap k' (in input order) and the step to k'+1. */
static int64_t k_offset(const dim_view *v, int64_t tap) { return (v->rev ? v->k - 1 - tap : tap) * v->k_s; }
static int64_t k_step(const dim_view *v) { return v->rev ? -v->k_s : v->k_s; }

/* Output row u of the plan (group, image, row), input features [c0, c1) of
 * output features [co, co + 16*nv): every tile of the row. */
static void direct_row(const optic_conv_plan *p, const dim_view *H, const dim_view *W, const float *input,
                       const float *kernel, float *output, int64_t u, int64_t co, int64_t nv, __mmask16 last,
                       int64_t c0, int64_t c1) {
  const optic_conv_geom *g = &p->g;
  int64_t rows = H->out, batch = g->batch;
  int64_t grp = u / (batch * rows), b = (u / rows) % batch, oh = u % rows;
  int64_t y0 = oh * H->stride - H->pad, h0, h1;
  tap_range(y0, H->dil, H->in, H->k, &h0, &h1);
  int64_t in_row = grp * g->in_sg + b * g->in_sb + (h1 > h0 ? (y0 + h0 * H->dil) * H->in_s : 0);
  const float *k_row = kernel + grp * g->k_sg + (h1 > h0 ? k_offset(H, h0) : 0);
  float *out_row = output + grp * g->out_sg + b * g->out_sb + oh * H->out_s + co;
  tile_args a = {.in_pix = W->stride * W->in_s,
                 .out_pix = W->out_s,
                 .nh = h1 - h0,
                 .in_hstep = H->dil * H->in_s,
                 .k_hstep = k_step(H),
                 .in_wstep = W->dil * W->in_s,
                 .k_wstep = k_step(W),
                 .cin = c1 - c0,
                 .k_si = g->k_si,
                 .last = last,
                 .accumulate = c0 > 0};
  for (int64_t ow = 0; ow < W->out;) {
    int64_t x0 = ow * W->stride - W->pad, w0, w1;
    tap_range(x0, W->dil, W->in, W->k, &w0, &w1);
    int64_t r = 1;
    if (w0 == 0 && w1 == W->k) { /* whole window inside: extend the tile over the next such pixels */
      while (r < DIRECT_R && ow + r < W->out && (ow + r) * W->stride - W->pad + (W->k - 1) * W->dil < W->in) r++;
    }
    bool taps = h1 > h0 && w1 > w0;
    a.nw = w1 - w0;
    a.in = input + (taps ? in_row + (x0 + w0 * W->dil) * W->in_s + c0 * g->in_sc : 0);
    a.k = k_row + (taps ? k_offset(W, w0) + c0 * g->k_si : 0) + co;
    a.out = out_row + ow * W->out_s;
    tiles[r - 1][nv - 1](&a);
    ow += r;
  }
}

/* Loop order: 64 output features, then a block of input features (the plan's
 * direct_cin_block, sized so the kernel slice of both stays in L2), then the
 * slice's rows: the kernel slice is reused across every row of the slice.
 * Later input-feature blocks add to what the first wrote. */
void optic_conv_direct_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                   int64_t u0, int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const dim_view H = view_of(g, g->nsp == 2 ? 0 : -1), W = view_of(g, g->nsp - 1);
  const int64_t cin = g->cin, cb = p->direct_cin_block > 0 ? p->direct_cin_block : 1;
  for (int64_t co = 0; co < g->cout; co += 16 * DIRECT_NV) {
    int64_t left = g->cout - co, nv = left >= 16 * DIRECT_NV ? DIRECT_NV : (left + 15) / 16;
    int64_t lanes = left - 16 * (nv - 1);
    __mmask16 last = (__mmask16)(lanes >= 16 ? 0xFFFF : (1u << lanes) - 1u);
    for (int64_t c0 = 0; c0 == 0 || c0 < cin; c0 += cb) { /* one pass even without input features: zeros */
      int64_t c1 = c0 + cb < cin ? c0 + cb : cin;
      for (int64_t u = u0; u < u1; u++) direct_row(p, &H, &W, input, kernel, output, u, co, nv, last, c0, c1);
    }
  }
}
