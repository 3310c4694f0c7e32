/* Direct forward convolution, AVX-512 (OPTIC_CONV_STRATEGY_DIRECT; planning in
 * kernels/conv_direct.c). Output-stationary register blocking: a tile of up to
 * 14 output pixels of one row x up to 32 output features (2 zmm each), or 9
 * pixels x 48 features, stays in at most 28 zmm accumulators while the loops
 * run over the window taps and the input features; each step loads NV kernel
 * vectors and broadcasts one input scalar per pixel.
 *
 * The input is read from a per-slice ring of packed rows (the layout is
 * described in kernels/conv_direct.h): 16 input features per 64-byte line,
 * padding as zeros, the pixel stride split into phases, so the pixels of a
 * tile are adjacent lines at constant offsets from one pointer whatever the
 * stride, dilation or padding, and every tile of a row is full width. Each
 * input row is packed once per pass over the slice (the ring keeps the rows of
 * one window extent). Per row, 16 input features at a time run over all of
 * its tiles, so their kernel block (taps x 16 x 32 floats) stays in L1; later
 * blocks add to what the first wrote. The last feature vector of a tile is
 * masked (loads and stores), so nothing outside the operands is touched.
 * Never allocates, never spawns threads. */
#include <immintrin.h>
#include <string.h>

#include "kernels/conv_direct.h"
#include "kernels/conv_direct_pass.h"

#define CB OPTIC_CONV_DIRECT_CB
#define MAX_R 14 /* output pixels per tile (NV 1 and 2) */
#define MAX_NV 3 /* feature vectors per tile */
#define MAX_R3 9 /* output pixels per tile with 3 feature vectors */
/* Input features ahead at which the inner loop prefetches kernel lines into
 * L1: a tile's kernel slice (taps x group x features, 72 KiB for 64 x 32
 * features) outgrows L1, and the 256-byte stride between input features is
 * left to L2. 8 steps are ~110 cycles ahead (3-4% on the ResNet-50 3x3 layer).
 * A prefetch past the kernel's end is harmless: prefetches never fault. */
#define K_PREFETCH_AHEAD 8

/* One tile: the valid row taps' packed rows are ring rows slot0, slot0 +
 * dil_h, ... (mod span), `roff` the offset in each of the tile's first pixel;
 * `k` is the kernel at the first valid row tap, pixel tap 0 (in input
 * order), the group's first input feature and the tile's first output
 * feature. The tile runs every feature block of the group; while it does, it
 * prefetches `pf_lines` 64-byte lines from `pf` (the input row the next
 * output row packs), one per tap and block. */
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
  const char *pf;
  int64_t pf_lines;
  __mmask16 last;  /* lanes of the last feature vector (MASKED tiles only) */
  bool accumulate; /* add to the output (a later feature group) instead of overwriting it */
} tile_args;

static inline __attribute__((always_inline)) void tile_load(const tile_args *a, __m512 acc[MAX_R][MAX_NV], const int R,
                                                            const int NV, const bool MASKED) {
  if (!a->accumulate) {
#pragma GCC unroll 14
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 3
      for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    }
    return;
  }
#pragma GCC unroll 14
  for (int r = 0; r < R; r++) {
    const float *op = a->out + r * a->out_pix;
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) acc[r][v] = _mm512_loadu_ps(op + 16 * v);
    acc[r][NV - 1] = MASKED ? _mm512_maskz_loadu_ps(a->last, op + 16 * (NV - 1)) : _mm512_loadu_ps(op + 16 * (NV - 1));
  }
}

static inline __attribute__((always_inline)) void tile_store(const tile_args *a, __m512 acc[MAX_R][MAX_NV], const int R,
                                                             const int NV, const bool MASKED) {
#pragma GCC unroll 14
  for (int r = 0; r < R; r++) {
    float *op = a->out + r * a->out_pix;
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) _mm512_storeu_ps(op + 16 * v, acc[r][v]);
    if (MASKED) {
      _mm512_mask_storeu_ps(op + 16 * (NV - 1), a->last, acc[r][NV - 1]);
    } else {
      _mm512_storeu_ps(op + 16 * (NV - 1), acc[r][NV - 1]);
    }
  }
}

/* The inner loop: cn input features of one tap, kernel kp, packed input ip. */
static inline __attribute__((always_inline)) void tile_features(__m512 acc[MAX_R][MAX_NV], const float *ip,
                                                                const float *kp, int64_t cn, int64_t k_si,
                                                                __mmask16 last, const int R, const int NV,
                                                                const bool MASKED) {
  for (int64_t c = 0; c < cn; c++) {
    __m512 w[MAX_NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; v++) w[v] = _mm512_loadu_ps(kp + 16 * v);
    w[NV - 1] = MASKED ? _mm512_maskz_loadu_ps(last, kp + 16 * (NV - 1)) : _mm512_loadu_ps(kp + 16 * (NV - 1));
#pragma GCC unroll 3
    for (int v = 0; v < NV; v++) _mm_prefetch((const char *)(kp + K_PREFETCH_AHEAD * k_si + 16 * v), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int r = 0; r < R; r++) {
      __m512 x = _mm512_set1_ps(ip[r * CB + c]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(x, w[v], acc[r][v]);
    }
    kp += k_si;
  }
}

static inline __attribute__((always_inline)) void tile(const tile_args *a, const int R, const int NV,
                                                       const bool MASKED) {
  __m512 acc[MAX_R][MAX_NV];
  tile_load(a, acc, R, NV, MASKED);
  const int64_t k_si = a->k_si;
  const char *pf = a->pf;
  int64_t pf_left = a->pf_lines;
  for (int64_t th = 0, slot = a->slot0; th < a->nh; th++) {
    const float *row = a->ring + slot * a->row_floats + a->roff, *kt = a->k + th * a->k_hstep;
    int64_t phase = 0, q = 0;
    for (int64_t tw = 0; tw < a->nw; tw++) {
      const float *ip = row + (phase * a->wq + q) * CB, *kp = kt + tw * a->k_wstep;
      for (int64_t b = 0; b < a->blocks; b++) {
        int64_t cn = a->cn - b * CB < CB ? a->cn - b * CB : CB;
        tile_features(acc, ip + b * a->sub, kp + b * CB * k_si, cn, k_si, a->last, R, NV, MASKED);
        if (pf_left > 0) _mm_prefetch(pf, _MM_HINT_T1), pf += 64, pf_left--;
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
#define TILE_FNS_9(NV) \
  TILE_FN(1, NV)       \
  TILE_FN(2, NV)       \
  TILE_FN(3, NV) TILE_FN(4, NV) TILE_FN(5, NV) TILE_FN(6, NV) TILE_FN(7, NV) TILE_FN(8, NV) TILE_FN(9, NV)
#define TILE_FNS_14(NV) TILE_FNS_9(NV) TILE_FN(10, NV) TILE_FN(11, NV) TILE_FN(12, NV) TILE_FN(13, NV) TILE_FN(14, NV)
TILE_FNS_14(1)
TILE_FNS_14(2)
TILE_FNS_9(3)
#define ROW_9(NV, M)                                                                                              \
  tile_1_##NV##M, tile_2_##NV##M, tile_3_##NV##M, tile_4_##NV##M, tile_5_##NV##M, tile_6_##NV##M, tile_7_##NV##M, \
      tile_8_##NV##M, tile_9_##NV##M
#define ROW_14(NV, M) ROW_9(NV, M), tile_10_##NV##M, tile_11_##NV##M, tile_12_##NV##M, tile_13_##NV##M, tile_14_##NV##M
/* [masked][vectors - 1][pixels - 1] */
static const tile_fn tiles[2][MAX_NV][MAX_R] = {{{ROW_14(1, )}, {ROW_14(2, )}, {ROW_9(3, )}},
                                                {{ROW_14(1, _masked)}, {ROW_14(2, _masked)}, {ROW_9(3, _masked)}}};
static const int max_r[MAX_NV] = {MAX_R, MAX_R, MAX_R3};
#undef ROW_14
#undef ROW_9
#undef TILE_FNS_14
#undef TILE_FNS_9
#undef TILE_FN

/* Packs input row `src` (already at the group's first feature) into dst:
 * every feature block, every padded pixel. */
static void pack_row(const pass_ctx *x, const float *src, float *dst) {
  const optic_conv_direct_packing *pk = x->pk;
  const int64_t blocks = (x->cgn + CB - 1) / CB, sub = pk->phases * pk->wq * CB;
  const __mmask16 tail = (__mmask16)((x->cgn % CB) == 0 ? 0xFFFF : (1u << (x->cgn % CB)) - 1u);
  int64_t phase = 0, xq = 0;
  for (int64_t X = 0; X < pk->wspan; X++) {
    int64_t xin = X - x->W.pad;
    float *d = dst + (phase * pk->wq + xq) * CB;
    bool inside = xin >= 0 && xin < x->W.in;
    const float *s = src + (inside ? xin * x->W.in_s : 0);
    for (int64_t b = 0; b < blocks; b++) {
      __mmask16 m = b == blocks - 1 ? tail : (__mmask16)0xFFFF;
      _mm512_storeu_ps(d + b * sub, inside ? _mm512_maskz_loadu_ps(m, s + b * CB) : _mm512_setzero_ps());
    }
    if (++phase == pk->phases) phase = 0, xq++;
  }
}

/* The input row (as bytes from its first pixel at the group's first
 * feature) that the unit after u packs last, when it is of the same group and
 * image and dense enough to prefetch as one range; else *bytes = 0. */
static const char *next_row(const pass_ctx *x, int64_t u, int64_t *bytes) {
  const optic_conv_geom *g = &x->p->g;
  const dim_view *H = &x->H, *W = &x->W;
  int64_t oh = u % H->out + 1, y = oh * H->stride - H->pad + (H->k - 1) * H->dil;
  *bytes = 0;
  if (oh >= H->out || y < 0 || y >= H->in || W->in == 0) return NULL;
  int64_t span = ((W->in - 1) * W->in_s + x->cgn) * (int64_t)sizeof(float);
  if (span > 2 * W->in * x->cgn * (int64_t)sizeof(float)) return NULL;
  int64_t grp = u / (g->batch * H->out), b = (u / H->out) % g->batch;
  *bytes = span;
  return (const char *)(x->input + grp * g->in_sg + b * g->in_sb + y * H->in_s + x->c0);
}

/* Feature vectors of the next output-feature block: 2 (32 features) while
 * more than 48 remain, else all that remain (1 to 3). */
static int64_t block_vectors(int64_t left) { return left > 48 ? 2 : (left + 15) / 16; }

/* Tile calls of one output row. */
static int64_t row_calls(const pass_ctx *x) {
  int64_t calls = 0;
  for (int64_t co = 0, nv; co < x->p->g.cout; co += 16 * nv) {
    nv = block_vectors(x->p->g.cout - co);
    calls += (x->W.out + max_r[nv - 1] - 1) / max_r[nv - 1];
  }
  return calls;
}

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
 * tile of the row, prefetching the next row's input on the way. */
static void run_row(const pass_ctx *x, int64_t u, int64_t calls) {
  const optic_conv_geom *g = &x->p->g;
  const dim_view *H = &x->H, *W = &x->W;
  int64_t grp = u / (g->batch * H->out), b = (u / H->out) % g->batch, oh = u % H->out;
  int64_t y0 = oh * H->stride - H->pad, h0, h1, pf_bytes;
  tap_range(y0, H->dil, H->in, H->k, &h0, &h1);
  pack_rows(x, u, y0, h0, h1);
  tile_args a = row_args(x, y0, h0, h1);
  const char *pf = next_row(x, u, &pf_bytes);
  int64_t pf_lines = (pf_bytes + 63) / 64, per_call = (pf_lines + calls - 1) / (calls > 0 ? calls : 1);
  const float *krow = x->kernel + grp * g->k_sg + (h1 > h0 ? k_offset(H, h0) : 0) + k_offset(W, 0) + x->c0 * g->k_si;
  float *orow = x->output + grp * g->out_sg + b * g->out_sb + oh * H->out_s;
  for (int64_t co = 0, nv; co < g->cout; co += 16 * nv) {
    nv = block_vectors(g->cout - co);
    int64_t lanes = g->cout - co - 16 * (nv - 1), rmax = max_r[nv - 1], ntiles = (W->out + rmax - 1) / rmax;
    a.last = (__mmask16)(lanes >= 16 ? 0xFFFF : (1u << lanes) - 1u);
    a.k = krow + co;
    for (int64_t t = 0, ow = 0; t < ntiles; t++) {
      int64_t r = W->out / ntiles + (t < W->out % ntiles ? 1 : 0);
      a.roff = ow * CB;
      a.out = orow + ow * W->out_s + co;
      a.pf = pf, a.pf_lines = per_call < pf_lines ? per_call : pf_lines;
      if (a.pf_lines > 0) pf += a.pf_lines * 64, pf_lines -= a.pf_lines; /* pf is NULL when there is none */
      tiles[lanes < 16][nv - 1][r - 1](&a);
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

/* Loop order: an input-feature group (the packing's cin_group, sized so that
 * its kernel slice for all output features and the ring stay in L2), then
 * the slice's rows in order, so consecutive rows share packed input rows. */
void optic_conv_direct_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
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
    int64_t calls = row_calls(&x);
    for (int64_t u = u0; u < u1; u++) run_row(&x, u, calls);
  }
}
