/* Direct forward convolution, AVX2 + FMA (OPTIC_CONV_STRATEGY_DIRECT; planning
 * in kernels/conv_direct.c). The AVX-512 loops' scheme on 16 ymm registers:
 * a tile of up to 6 output pixels of one row x 16 output features (2 ymm
 * each), 8 x 8 or 4 x 24, stays in at most 12 accumulators while the loops
 * run over the window taps and the input features; each step loads NV kernel
 * vectors and broadcasts one input scalar per pixel.
 *
 * The input is read from the same per-slice ring of packed rows as on
 * AVX-512 (kernels/conv_direct.h): 16 input features per 64-byte line,
 * padding as zeros, the pixel stride split into phases, so every tile of a
 * row is full width. Per row, 16 input features at a time run over all of
 * its tiles. The last feature vector of a tile is masked (loads and stores),
 * so nothing outside the operands is touched. Never allocates, never spawns
 * threads. */
#include <immintrin.h>
#include <string.h>

#include "kernels/conv_direct.h"
#include "kernels/conv_direct_pass.h"

#define CB OPTIC_CONV_DIRECT_CB
#define MAX_R 8  /* output pixels per tile with 1 feature vector */
#define MAX_NV 3 /* feature vectors (of 8) per tile */
#define MAX_R2 6 /* output pixels per tile with 2 feature vectors */
#define MAX_R3 4 /* with 3 */
/* Input features ahead at which the inner loop prefetches kernel lines into
 * L1 (a tile's kernel slice, taps x 64 x 16 floats for a 3x3 layer of 64
 * features, is 36 KiB: more than L1). Prefetches never fault. */
#define K_PREFETCH_AHEAD 8

/* One tile (see the AVX-512 loops): ring rows from slot0 stepping dil_h,
 * `roff` the offset of the tile's first pixel in each; `k` the kernel at the
 * first valid row tap, pixel tap 0, the group's first input feature and the
 * tile's first output feature. */
typedef struct tile_args {
  const float *ring;
  int64_t row_floats, span, slot0, dil_h, roff;
  const float *k;
  float *out;
  int64_t out_pix;            /* output stride between the tile's pixels */
  int64_t nh, k_hstep;        /* row taps and their kernel step */
  int64_t nw, k_wstep;        /* pixel taps and their kernel step */
  int64_t wq, phases, dq, dp; /* packed sub-row length; tap t+1 is dq pixels and dp phases after tap t */
  int64_t blocks, sub, cn;    /* feature blocks, floats between them, features in the group (> 0) */
  int64_t k_si;               /* kernel stride between input features */
  __m256i last;               /* lanes of the last feature vector (MASKED tiles only) */
  bool accumulate;            /* add to the output (a later feature group) instead of overwriting it */
} tile_args;

static inline __attribute__((always_inline)) __m256 load_last(const float *p, __m256i m, const bool MASKED) {
  return MASKED ? _mm256_maskload_ps(p, m) : _mm256_loadu_ps(p);
}

static inline __attribute__((always_inline)) void tile_load(const tile_args *a, __m256 acc[MAX_R][MAX_NV], const int R,
                                                            const int NV, const bool MASKED) {
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    const float *op = a->out + r * a->out_pix;
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) acc[r][v] = a->accumulate ? _mm256_loadu_ps(op + 8 * v) : _mm256_setzero_ps();
    acc[r][NV - 1] = a->accumulate ? load_last(op + 8 * (NV - 1), a->last, MASKED) : _mm256_setzero_ps();
  }
}

static inline __attribute__((always_inline)) void tile_store(const tile_args *a, __m256 acc[MAX_R][MAX_NV], const int R,
                                                             const int NV, const bool MASKED) {
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    float *op = a->out + r * a->out_pix;
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) _mm256_storeu_ps(op + 8 * v, acc[r][v]);
    if (MASKED) {
      _mm256_maskstore_ps(op + 8 * (NV - 1), a->last, acc[r][NV - 1]);
    } else {
      _mm256_storeu_ps(op + 8 * (NV - 1), acc[r][NV - 1]);
    }
  }
}

/* The inner loop: cn input features of one tap, kernel kp, packed input ip. */
static inline __attribute__((always_inline)) void tile_features(__m256 acc[MAX_R][MAX_NV], const float *ip,
                                                                const float *kp, int64_t cn, int64_t k_si, __m256i last,
                                                                const int R, const int NV, const bool MASKED) {
  for (int64_t c = 0; c < cn; c++) {
    __m256 w[MAX_NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) w[v] = _mm256_loadu_ps(kp + 8 * v);
    w[NV - 1] = load_last(kp + 8 * (NV - 1), last, MASKED);
#pragma GCC unroll 2
    for (int v = 0; v < NV; v += 2) _mm_prefetch((const char *)(kp + K_PREFETCH_AHEAD * k_si + 8 * v), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m256 x = _mm256_broadcast_ss(ip + r * CB + c);
#pragma GCC unroll 3
      for (int v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(x, w[v], acc[r][v]);
    }
    kp += k_si;
  }
}

static inline __attribute__((always_inline)) void tile(const tile_args *a, const int R, const int NV,
                                                       const bool MASKED) {
  __m256 acc[MAX_R][MAX_NV];
  tile_load(a, acc, R, NV, MASKED);
  const int64_t k_si = a->k_si;
  for (int64_t th = 0, slot = a->slot0; th < a->nh; th++) {
    const float *row = a->ring + slot * a->row_floats + a->roff, *kt = a->k + th * a->k_hstep;
    int64_t phase = 0, q = 0;
    for (int64_t tw = 0; tw < a->nw; tw++) {
      const float *ip = row + (phase * a->wq + q) * CB, *kp = kt + tw * a->k_wstep;
      for (int64_t b = 0; b < a->blocks; b++) {
        int64_t cn = a->cn - b * CB < CB ? a->cn - b * CB : CB;
        tile_features(acc, ip + b * a->sub, kp + b * CB * k_si, cn, k_si, a->last, R, NV, MASKED);
      }
      phase += a->dp, q += a->dq;
      if (phase >= a->phases) phase -= a->phases, q++;
    }
    slot += a->dil_h;
    if (slot >= a->span) slot -= a->span;
  }
  tile_store(a, acc, R, NV, MASKED);
}

typedef void (*tile_fn)(const tile_args *);
#define TILE_FN(R, NV)                                                       \
  static void tile_##R##_##NV(const tile_args *a) { tile(a, R, NV, false); } \
  static void tile_##R##_##NV##_masked(const tile_args *a) { tile(a, R, NV, true); }
#define TILE_FNS_4(NV) TILE_FN(1, NV) TILE_FN(2, NV) TILE_FN(3, NV) TILE_FN(4, NV)
#define TILE_FNS_6(NV) TILE_FNS_4(NV) TILE_FN(5, NV) TILE_FN(6, NV)
#define TILE_FNS_8(NV) TILE_FNS_6(NV) TILE_FN(7, NV) TILE_FN(8, NV)
TILE_FNS_8(1)
TILE_FNS_6(2)
TILE_FNS_4(3)
#define ROW_4(NV, M) tile_1_##NV##M, tile_2_##NV##M, tile_3_##NV##M, tile_4_##NV##M
#define ROW_6(NV, M) ROW_4(NV, M), tile_5_##NV##M, tile_6_##NV##M
#define ROW_8(NV, M) ROW_6(NV, M), tile_7_##NV##M, tile_8_##NV##M
/* [masked][vectors - 1][pixels - 1] */
static const tile_fn tiles[2][MAX_NV][MAX_R] = {{{ROW_8(1, )}, {ROW_6(2, )}, {ROW_4(3, )}},
                                                {{ROW_8(1, _masked)}, {ROW_6(2, _masked)}, {ROW_4(3, _masked)}}};
static const int max_r[MAX_NV] = {MAX_R, MAX_R2, MAX_R3};
#undef ROW_8
#undef ROW_6
#undef ROW_4
#undef TILE_FNS_8
#undef TILE_FNS_6
#undef TILE_FNS_4
#undef TILE_FN

/* Lanes [0, n) of a vector of 8 (n clamped to 0..8) as a maskload mask. */
static __m256i lanes_mask(int64_t n) {
  n = n < 0 ? 0 : n > 8 ? 8 : n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Packs input row `src` (already at the group's first feature) into dst:
 * every feature block, every padded pixel. */
static void pack_row(const pass_ctx *x, const float *src, float *dst) {
  const optic_conv_direct_packing *pk = x->pk;
  const int64_t blocks = (x->cgn + CB - 1) / CB, sub = pk->phases * pk->wq * CB, tail = x->cgn - (blocks - 1) * CB;
  const __m256i t0 = lanes_mask(tail), t1 = lanes_mask(tail - 8), all = lanes_mask(8);
  int64_t phase = 0, xq = 0;
  for (int64_t X = 0; X < pk->wspan; X++) {
    int64_t xin = X - x->W.pad;
    float *d = dst + (phase * pk->wq + xq) * CB;
    bool inside = xin >= 0 && xin < x->W.in;
    const float *s = src + (inside ? xin * x->W.in_s : 0);
    for (int64_t b = 0; b < blocks; b++) {
      __m256i m0 = b == blocks - 1 ? t0 : all, m1 = b == blocks - 1 ? t1 : all;
      __m256 v0 = inside ? _mm256_maskload_ps(s + b * CB, m0) : _mm256_setzero_ps();
      __m256 v1 = inside ? _mm256_maskload_ps(s + b * CB + 8, m1) : _mm256_setzero_ps();
      _mm256_storeu_ps(d + b * sub, v0);
      _mm256_storeu_ps(d + b * sub + 8, v1);
    }
    if (++phase == pk->phases) phase = 0, xq++;
  }
}

/* Feature vectors of the next output-feature block: 2 (16 features) while
 * more than 24 remain, else all that remain (1 to 3). */
static int64_t block_vectors(int64_t left) { return left > 24 ? 2 : (left + 7) / 8; }

/* Packs the valid row taps [h0, h1) of output row u that the ring lacks. */
static void pack_rows(const pass_ctx *x, int64_t u, int64_t y0, int64_t h0, int64_t h1) {
  const optic_conv_geom *g = &x->p->g;
  const dim_view *H = &x->H;
  int64_t grp = u / (g->batch * H->out), b = (u / H->out) % g->batch;
  const float *image = x->input + grp * g->in_sg + b * g->in_sb + x->c0;
  for (int64_t th = h0; th < h1; th++) {
    int64_t y = y0 + th * H->dil, slot = y % x->pk->span, tag = (grp * g->batch + b) * H->in + y, had;
    memcpy(&had, x->tags + slot * sizeof had, sizeof had);
    if (had != tag) {
      pack_row(x, image + y * H->in_s, x->ring + slot * x->pk->row_floats);
      memcpy(x->tags + slot * sizeof tag, &tag, sizeof tag);
    }
  }
}

/* The tile arguments of output row u that do not change across its tiles. */
static tile_args row_args(const pass_ctx *x, int64_t y0, int64_t h0, int64_t h1) {
  const optic_conv_direct_packing *pk = x->pk;
  const dim_view *H = &x->H, *W = &x->W;
  return (tile_args){.ring = x->ring,
                     .row_floats = pk->row_floats,
                     .span = pk->span,
                     .slot0 = h1 > h0 ? (y0 + h0 * H->dil) % pk->span : 0,
                     .dil_h = H->dil,
                     .out_pix = W->out_s,
                     .nh = h1 - h0,
                     .k_hstep = k_step(H),
                     .nw = W->k,
                     .k_wstep = k_step(W),
                     .wq = pk->wq,
                     .phases = pk->phases,
                     .dq = W->dil / pk->phases,
                     .dp = W->dil % pk->phases,
                     .blocks = (x->cgn + CB - 1) / CB,
                     .sub = pk->phases * pk->wq * CB,
                     .cn = x->cgn,
                     .k_si = x->p->g.k_si,
                     .accumulate = x->c0 > 0};
}

/* Output row u: its packed rows, then each output-feature block over every
 * tile of the row. */
static void run_row(const pass_ctx *x, int64_t u) {
  const optic_conv_geom *g = &x->p->g;
  const dim_view *H = &x->H, *W = &x->W;
  int64_t grp = u / (g->batch * H->out), b = (u / H->out) % g->batch, oh = u % H->out;
  int64_t y0 = oh * H->stride - H->pad, h0, h1;
  tap_range(y0, H->dil, H->in, H->k, &h0, &h1);
  pack_rows(x, u, y0, h0, h1);
  tile_args a = row_args(x, y0, h0, h1);
  const float *krow = x->kernel + grp * g->k_sg + (h1 > h0 ? k_offset(H, h0) : 0) + k_offset(W, 0) + x->c0 * g->k_si;
  float *orow = x->output + grp * g->out_sg + b * g->out_sb + oh * H->out_s;
  for (int64_t co = 0, nv; co < g->cout; co += 8 * nv) {
    nv = block_vectors(g->cout - co);
    int64_t lanes = g->cout - co - 8 * (nv - 1), rmax = max_r[nv - 1], ntiles = (W->out + rmax - 1) / rmax;
    a.last = lanes_mask(lanes);
    a.k = krow + co;
    for (int64_t t = 0, ow = 0; t < ntiles; t++) {
      int64_t r = W->out / ntiles + (t < W->out % ntiles ? 1 : 0);
      a.roff = ow * CB;
      a.out = orow + ow * W->out_s + co;
      tiles[lanes < 8][nv - 1][r - 1](&a);
      ow += r;
    }
  }
}

/* Without input features every output is zero. */
static void zero_rows(const optic_conv_plan *p, const dim_view *H, const dim_view *W, float *output, int64_t u0,
                      int64_t u1) {
  const optic_conv_geom *g = &p->g;
  for (int64_t u = u0; u < u1; u++) {
    int64_t grp = u / (g->batch * H->out), b = (u / H->out) % g->batch, oh = u % H->out;
    float *orow = output + grp * g->out_sg + b * g->out_sb + oh * H->out_s;
    for (int64_t ow = 0; ow < W->out; ow++) {
      for (int64_t o = 0; o < g->cout; o++) orow[ow * W->out_s + o] = 0.0f;
    }
  }
}

/* Loop order as on AVX-512: an input-feature group, then the slice's rows in
 * order, so consecutive rows share packed input rows. */
void optic_conv_direct_rows_avx2(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                 float *scratch, int64_t u0, int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const optic_conv_direct_packing pk = optic_conv_direct_packing_of(g);
  pass_ctx x = {.p = p,
                .pk = &pk,
                .H = view_of(g, g->nsp == 2 ? 0 : -1),
                .W = view_of(g, g->nsp - 1),
                .input = input,
                .kernel = kernel,
                .output = output,
                .tags = (unsigned char *)scratch,
                .ring = scratch + (2 * pk.span + 15) / 16 * 16};
  if (g->cin == 0 || g->cout == 0) {
    if (g->cin == 0) zero_rows(p, &x.H, &x.W, output, u0, u1);
    return;
  }
  for (x.c0 = 0; x.c0 < g->cin; x.c0 += pk.cin_group) {
    x.cgn = g->cin - x.c0 < pk.cin_group ? g->cin - x.c0 : pk.cin_group;
    memset(x.tags, 0xFF, (size_t)pk.span * sizeof(int64_t)); /* -1: no row */
    for (int64_t u = u0; u < u1; u++) run_row(&x, u);
  }
}
