/* AVX-512 grouped (depthwise) loops (kernels/conv_grouped.h), f32:
 *   channels in lanes: groups adjacent in all three operands (NHWC
 *     depthwise); per block of 16 groups, a tile of 8 output pixels along
 *     the last spatial dim accumulates in registers over input features and
 *     window taps, the kernel vector loaded once per tap for the tile;
 *   pixels in lanes: groups apart, the last spatial dim unit-stride with
 *     window stride 1 (NCHW depthwise); per output row, up to 4 vectors of
 *     16 pixels accumulate over taps with the weight broadcast and the
 *     input read with masks that drop the padding.
 * Each output is summed in one fixed order (channels: input features, then
 * taps row-major; pixels: inner taps, then input features and outer taps;
 * one FMA per tap), whatever the tile or the slicing. */
#include <immintrin.h>
#include <stddef.h>

#include "kernels/conv_grouped.h"

/* One spatial dim as the loops see it (a 1-D convolution gets a dummy
 * outer dim of extent 1). */
typedef struct gdim {
  int64_t in, k, out, stride, pad, dil, in_s, k_s, out_s;
  bool rev;
} gdim;

static gdim dim_of(const optic_conv_geom *g, int32_t s) {
  if (s < 0) return (gdim){.in = 1, .k = 1, .out = 1, .stride = 1, .dil = 1};
  return (gdim){g->in_size[s], g->k_size[s], g->out_size[s], g->stride[s], g->pad_lo[s],
                g->rhs_dil[s], g->in_ss[s],  g->k_ss[s],     g->out_ss[s], g->rev[s]};
}

/* Window taps [*lo, *hi) (unreversed) that read the input at output y. */
static void tap_range(const gdim *d, int64_t y, int64_t *lo, int64_t *hi) {
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

static inline int64_t kidx(const gdim *d, int64_t t) { return d->rev ? d->k - 1 - t : t; }

static inline __mmask16 lanes(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }

/* Where a tile of output pixels reads: input and kernel at the batch, group
 * block, feature and outer-row offsets; the inner taps [lo1, hi1). */
typedef struct gtile {
  const float *in, *ker;
  int64_t x0;       /* first output pixel along the inner dim */
  int64_t lo0, hi0; /* outer taps */
  int64_t lo1, hi1; /* inner taps */
  int64_t y0;       /* outer output coordinate */
} gtile;

/* N output pixels (x0.. along the inner dim) of 16 groups (mask m) and one
 * output feature: sum over cin input features and the tile's taps. */
static inline __attribute__((always_inline)) void channel_tile(const optic_conv_geom *g, const gdim *d0, const gdim *d1,
                                                               const gtile *t, __mmask16 m, int N, __m512 *acc) {
  for (int j = 0; j < N; j++) acc[j] = _mm512_setzero_ps();
  const ptrdiff_t px = (ptrdiff_t)(d1->stride * d1->in_s);
  for (int64_t c = 0; c < g->cin; c++) {
    for (int64_t t0 = t->lo0; t0 < t->hi0; t0++) {
      const float *irow = t->in + c * g->in_sc + (t->y0 * d0->stride - d0->pad + t0 * d0->dil) * d0->in_s;
      const float *krow = t->ker + c * g->k_si + kidx(d0, t0) * d0->k_s;
      for (int64_t t1 = t->lo1; t1 < t->hi1; t1++) {
        __m512 w = _mm512_maskz_loadu_ps(m, krow + kidx(d1, t1) * d1->k_s);
        const float *x = irow + (t->x0 * d1->stride - d1->pad + t1 * d1->dil) * d1->in_s;
        for (int j = 0; j < N; j++) acc[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + j * px), w, acc[j]);
      }
    }
  }
}

#define TILE 8

/* Output pixels [x, x + n) of row (b, y0) along the inner dim, all groups
 * and output features: interior tiles of TILE pixels, single pixels at the
 * borders (their own inner tap range). */
static void channel_row(const optic_conv_geom *g, const gdim *d0, const gdim *d1, const float *in, const float *ker,
                        float *out, int64_t b, int64_t y0, int64_t x, int64_t n) {
  gtile t = {.y0 = y0};
  tap_range(d0, y0, &t.lo0, &t.hi0);
  const int64_t last_tap = (d1->k - 1) * d1->dil;
  for (int64_t xe = x + n; x < xe;) {
    int64_t base = x * d1->stride - d1->pad, base_end = (x + TILE - 1) * d1->stride - d1->pad;
    bool tile = x + TILE <= xe && base >= 0 && base_end + last_tap < d1->in;
    int64_t np = tile ? TILE : 1;
    t.x0 = x;
    if (tile) {
      t.lo1 = 0, t.hi1 = d1->k;
    } else {
      tap_range(d1, x, &t.lo1, &t.hi1);
    }
    float *orow = out + b * g->out_sb + y0 * d0->out_s + x * d1->out_s;
    for (int64_t o = 0; o < g->cout; o++) {
      for (int64_t g0 = 0; g0 < g->groups; g0 += 16) {
        __mmask16 m = lanes(g->groups - g0);
        t.in = in + b * g->in_sb + g0;
        t.ker = ker + o * g->k_so + g0;
        __m512 acc[TILE];
        float *dst = orow + o * g->out_so + g0;
        if (tile) {
          channel_tile(g, d0, d1, &t, m, TILE, acc);
          for (int j = 0; j < TILE; j++) _mm512_mask_storeu_ps(dst + j * d1->out_s, m, acc[j]);
        } else {
          channel_tile(g, d0, d1, &t, m, 1, acc);
          _mm512_mask_storeu_ps(dst, m, acc[0]);
        }
      }
    }
    x += np;
  }
}

void optic_conv_grouped_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                               int64_t u0, int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const gdim d0 = dim_of(g, g->nsp == 2 ? 0 : -1), d1 = dim_of(g, g->nsp - 1);
  /* units are output positions (b, y0, x), x fastest: walk them row by row */
  for (int64_t u = u0; u < u1;) {
    int64_t x = u % d1.out, rest = u / d1.out;
    int64_t y0 = rest % d0.out, b = rest / d0.out;
    int64_t n = d1.out - x < u1 - u ? d1.out - x : u1 - u;
    channel_row(g, &d0, &d1, input, kernel, output, b, y0, x, n);
    u += n;
  }
}

/* Lanes [lo, hi) of a 16-lane vector, both clamped to [0, 16]. */
static inline __mmask16 lane_range(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo;
  hi = hi > 16 ? 16 : hi;
  if (hi <= lo) return 0;
  return (__mmask16)(lanes(hi) & ~lanes(lo));
}

/* NV vectors of output pixels x0.. (n pixels in all) of R output rows from
 * y0 (R > 1 only where every row sees all outer taps): sum over inner taps,
 * then input features and outer taps, of the weight times the input row
 * shifted by the tap, read with masks (lanes outside [0, in) are the
 * padding's zeros); the masks depend on the inner tap only, and the R rows
 * keep R x NV independent FMA chains in flight. */
static inline __attribute__((always_inline)) void pixel_block(const optic_conv_geom *g, const gdim *d0, const gdim *d1,
                                                              const float *in, const float *ker, float *orow,
                                                              int64_t y0, int R, int64_t x0, int64_t n, int NV) {
  __m512 acc[16];
  for (int j = 0; j < R * NV; j++) acc[j] = _mm512_setzero_ps();
  int64_t lo0, hi0;
  tap_range(d0, y0, &lo0, &hi0);
  const int64_t row0 = y0 * d0->stride - d0->pad;
  const ptrdiff_t rs = (ptrdiff_t)(d0->stride * d0->in_s);
  for (int64_t t1 = 0; t1 < d1->k; t1++) {
    const int64_t a = x0 + t1 * d1->dil - d1->pad; /* input pixel of lane 0 of vector 0 */
    __mmask16 m[4];
    for (int v = 0; v < NV; v++) {
      int64_t s = a + 16 * v, lim = n - x0 - 16 * v;
      m[v] = lane_range(-s, d1->in - s < lim ? d1->in - s : lim);
    }
    const float *kt = ker + kidx(d1, t1) * d1->k_s;
    for (int64_t c = 0; c < g->cin; c++) {
      for (int64_t t0 = lo0; t0 < hi0; t0++) {
        const float *x = in + c * g->in_sc + (row0 + t0 * d0->dil) * d0->in_s + a;
        __m512 w = _mm512_set1_ps(kt[c * g->k_si + kidx(d0, t0) * d0->k_s]);
        for (int r = 0; r < R; r++) {
          for (int v = 0; v < NV; v++) {
            acc[r * NV + v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[v], x + r * rs + 16 * v), w, acc[r * NV + v]);
          }
        }
      }
    }
  }
  for (int r = 0; r < R; r++) {
    for (int v = 0; v < NV; v++) {
      _mm512_mask_storeu_ps(orow + r * d0->out_s + x0 + 16 * v, lane_range(0, n - x0 - 16 * v), acc[r * NV + v]);
    }
  }
}

/* R rows from y0 of one (group, batch, output feature): blocks of up to 64
 * pixels, as few vectors as the row needs. */
static inline __attribute__((always_inline)) void pixel_rows(const optic_conv_geom *g, const gdim *d0, const gdim *d1,
                                                             const float *in, const float *ker, float *orow, int64_t y0,
                                                             int R) {
  const int64_t n = d1->out;
  for (int64_t x0 = 0; x0<n; x0 += R> 1 ? 32 : 64) {
    int64_t r = n - x0;
    if (R == 1 && r > 32) {
      pixel_block(g, d0, d1, in, ker, orow, y0, 1, x0, n, 4);
    } else if (r > 16) {
      pixel_block(g, d0, d1, in, ker, orow, y0, R, x0, n, 2);
    } else {
      pixel_block(g, d0, d1, in, ker, orow, y0, R, x0, n, 1);
    }
  }
}

/* Output rows per block where all of them see every outer tap. */
#define ROWS 4

void optic_conv_grouped_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    int64_t u0, int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const gdim d0 = dim_of(g, g->nsp == 2 ? 0 : -1), d1 = dim_of(g, g->nsp - 1);
  /* units: (group, batch, outer row), the row fastest: decoded once, then stepped */
  int64_t y0 = d0.out > 0 ? u0 % d0.out : 0, rest = d0.out > 0 ? u0 / d0.out : 0;
  int64_t b = g->batch > 0 ? rest % g->batch : 0, gr = g->batch > 0 ? rest / g->batch : 0;
  const int64_t last_tap = (d0.k - 1) * d0.dil;
  for (int64_t u = u0; u < u1;) {
    const float *in = input + gr * g->in_sg + b * g->in_sb;
    int64_t first = y0 * d0.stride - d0.pad, last = (y0 + ROWS - 1) * d0.stride - d0.pad + last_tap;
    int R = y0 + ROWS <= d0.out && u + ROWS <= u1 && first >= 0 && last < d0.in ? ROWS : 1;
    for (int64_t o = 0; o < g->cout; o++) {
      const float *ker = kernel + gr * g->k_sg + o * g->k_so;
      float *orow = output + gr * g->out_sg + b * g->out_sb + o * g->out_so + y0 * d0.out_s;
      if (R == ROWS) {
        pixel_rows(g, &d0, &d1, in, ker, orow, y0, ROWS);
      } else {
        pixel_rows(g, &d0, &d1, in, ker, orow, y0, 1);
      }
    }
    u += R;
    if ((y0 += R) == d0.out) {
      y0 = 0;
      if (++b == g->batch) b = 0, gr++;
    }
  }
}
