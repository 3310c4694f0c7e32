/* AVX-512 grouped (depthwise) loops (kernels/conv_grouped.h), f32:
 *   channels in lanes: groups adjacent in all three operands (NHWC
 *     depthwise); per block of 16 groups, a tile of 8 output pixels along
 *     the last spatial dim accumulates in registers over input features and
 *     window taps, the kernel vector loaded once per tap for the tile;
 *   pixels in lanes: groups apart, the last spatial dim unit-stride with
 *     window stride 1 (NCHW depthwise); per output row, up to 4 vectors of
 *     16 pixels accumulate over taps with the weight broadcast and the
 *     input read with masks that drop the padding.
 * Operands are f32, or bf16 widened in registers (exactly: a shift) with
 * an f32 or bf16 result (rounded once to nearest even, NaN kept quiet, as
 * core/half.h); accumulation is f32 in every case.
 * Each output is summed in one fixed order (channels: input features, then
 * taps row-major; pixels: inner taps, then input features and outer taps;
 * one FMA per tap), whatever the tile or the slicing. */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "kernels/conv_grouped.h"
#include "kernels/conv_window.h"

/* Operand and result types of an instantiation: a constant argument of the
 * always-inline loops, so each mode compiles to its own loops. */
enum { F32 = 0, BF16_F32 = 1, BF16_BF16 = 2 };

static inline __attribute__((always_inline)) __m512 ld(const void *base, int64_t off, __mmask16 m, int mode) {
  if (mode == F32) return _mm512_maskz_loadu_ps(m, (const float *)base + off);
  __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)base + off);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) float ld1(const void *base, int64_t off, int mode) {
  if (mode == F32) return ((const float *)base)[off];
  uint32_t b = (uint32_t)((const uint16_t *)base)[off] << 16;
  float x;
  memcpy(&x, &b, 4);
  return x;
}

/* Stores lanes m of x at element off of base, rounding to bf16 in mode
 * BF16_BF16: bits + 0x7FFF + (bit 16) then the high half; a NaN keeps its
 * high half with the quiet bit set. */
static inline __attribute__((always_inline)) void st(void *base, int64_t off, __mmask16 m, __m512 x, int mode) {
  if (mode != BF16_BF16) {
    _mm512_mask_storeu_ps((float *)base + off, m, x);
    return;
  }
  __m512i b = _mm512_castps_si512(x);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
  __m512i q = _mm512_or_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x40));
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, q);
  _mm256_mask_storeu_epi16((uint16_t *)base + off, m, _mm512_cvtepi32_epi16(r));
}

static inline int64_t kidx(const optic_conv_wdim *d, int64_t t) { return d->rev ? d->k - 1 - t : t; }

static inline __mmask16 lanes(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }

/* Where a tile of output pixels reads: input and kernel at the batch, group
 * block, feature and outer-row offsets; the inner taps [lo1, hi1). */
typedef struct gtile {
  const void *in, *ker; /* element offsets below: in and ker are f32 or bf16 */
  int64_t ioff, koff;
  int64_t x0;       /* first output pixel along the inner dim */
  int64_t lo0, hi0; /* outer taps */
  int64_t lo1, hi1; /* inner taps */
  int64_t y0;       /* outer output coordinate */
} gtile;

/* N output pixels (x0.. along the inner dim) of 16 groups (mask m) and one
 * output feature: sum over cin input features and the tile's taps. */
static inline __attribute__((always_inline)) void channel_tile(const optic_conv_geom *g, const optic_conv_wdim *d0,
                                                               const optic_conv_wdim *d1, const gtile *t, __mmask16 m,
                                                               int N, __m512 *acc, int mode) {
  for (int j = 0; j < N; j++) acc[j] = _mm512_setzero_ps();
  const int64_t px = d1->stride * d1->in_s;
  for (int64_t c = 0; c < g->cin; c++) {
    for (int64_t t0 = t->lo0; t0 < t->hi0; t0++) {
      int64_t irow = t->ioff + c * g->in_sc + (t->y0 * d0->stride - d0->pad + t0 * d0->dil) * d0->in_s;
      int64_t krow = t->koff + c * g->k_si + kidx(d0, t0) * d0->k_s;
      for (int64_t t1 = t->lo1; t1 < t->hi1; t1++) {
        __m512 w = ld(t->ker, krow + kidx(d1, t1) * d1->k_s, m, mode);
        int64_t x = irow + (t->x0 * d1->stride - d1->pad + t1 * d1->dil) * d1->in_s;
        for (int j = 0; j < N; j++) acc[j] = _mm512_fmadd_ps(ld(t->in, x + j * px, m, mode), w, acc[j]);
      }
    }
  }
}

#define TILE 8

/* Output pixels [x, x + n) of row (b, y0) along the inner dim, all groups
 * and output features: interior tiles of TILE pixels, single pixels at the
 * borders (their own inner tap range). */
static inline __attribute__((always_inline)) void channel_row(const optic_conv_geom *g, const optic_conv_wdim *d0,
                                                              const optic_conv_wdim *d1, const void *in,
                                                              const void *ker, void *out, int64_t b, int64_t y0,
                                                              int64_t x, int64_t n, int mode) {
  gtile t = {.in = in, .ker = ker, .y0 = y0};
  optic_conv_tap_range(d0, y0, &t.lo0, &t.hi0);
  const int64_t last_tap = (d1->k - 1) * d1->dil;
  for (int64_t xe = x + n; x < xe;) {
    int64_t base = x * d1->stride - d1->pad, base_end = (x + TILE - 1) * d1->stride - d1->pad;
    bool tile = x + TILE <= xe && base >= 0 && base_end + last_tap < d1->in;
    t.x0 = x;
    if (tile) {
      t.lo1 = 0, t.hi1 = d1->k;
    } else {
      optic_conv_tap_range(d1, x, &t.lo1, &t.hi1);
    }
    int64_t orow = b * g->out_sb + y0 * d0->out_s + x * d1->out_s;
    for (int64_t o = 0; o < g->cout; o++) {
      for (int64_t g0 = 0; g0 < g->groups; g0 += 16) {
        __mmask16 m = lanes(g->groups - g0);
        t.ioff = b * g->in_sb + g0;
        t.koff = o * g->k_so + g0;
        __m512 acc[TILE];
        int64_t dst = orow + o * g->out_so + g0;
        if (tile) {
          channel_tile(g, d0, d1, &t, m, TILE, acc, mode);
          for (int j = 0; j < TILE; j++) st(out, dst + j * d1->out_s, m, acc[j], mode);
        } else {
          channel_tile(g, d0, d1, &t, m, 1, acc, mode);
          st(out, dst, m, acc[0], mode);
        }
      }
    }
    x += tile ? TILE : 1;
  }
}

static inline __attribute__((always_inline)) void channels(const optic_conv_plan *p, const void *input,
                                                           const void *kernel, void *output, int64_t u0, int64_t u1,
                                                           int mode) {
  const optic_conv_geom *g = &p->g;
  const optic_conv_wdim d0 = optic_conv_wdim_of(g, g->nsp == 2 ? 0 : -1), d1 = optic_conv_wdim_of(g, g->nsp - 1);
  /* units are output positions (b, y0, x), x fastest: walk them row by row */
  for (int64_t u = u0; u < u1;) {
    int64_t x = u % d1.out, rest = u / d1.out;
    int64_t y0 = rest % d0.out, b = rest / d0.out;
    int64_t n = d1.out - x < u1 - u ? d1.out - x : u1 - u;
    channel_row(g, &d0, &d1, input, kernel, output, b, y0, x, n, mode);
    u += n;
  }
}

void optic_conv_grouped_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                               int64_t u0, int64_t u1) {
  channels(p, input, kernel, output, u0, u1, F32);
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
 * keep R x NV independent FMA chains in flight. in, ker and orow are
 * element offsets into input, kernel and output. */
static inline __attribute__((always_inline)) void pixel_block(const optic_conv_geom *g, const optic_conv_wdim *d0,
                                                              const optic_conv_wdim *d1, const void *input,
                                                              const void *kernel, void *output, const int64_t *off,
                                                              int64_t y0, int R, int64_t x0, int NV, int mode) {
  __m512 acc[16];
  for (int j = 0; j < R * NV; j++) acc[j] = _mm512_setzero_ps();
  int64_t lo0, hi0;
  optic_conv_tap_range(d0, y0, &lo0, &hi0);
  const int64_t row0 = y0 * d0->stride - d0->pad, rs = d0->stride * d0->in_s, n = d1->out;
  for (int64_t t1 = 0; t1 < d1->k; t1++) {
    const int64_t a = x0 + t1 * d1->dil - d1->pad; /* input pixel of lane 0 of vector 0 */
    __mmask16 m[4];
    for (int v = 0; v < NV; v++) {
      int64_t s = a + 16 * v, lim = n - x0 - 16 * v;
      m[v] = lane_range(-s, d1->in - s < lim ? d1->in - s : lim);
    }
    const int64_t kt = off[1] + kidx(d1, t1) * d1->k_s;
    for (int64_t c = 0; c < g->cin; c++) {
      for (int64_t t0 = lo0; t0 < hi0; t0++) {
        int64_t x = off[0] + c * g->in_sc + (row0 + t0 * d0->dil) * d0->in_s + a;
        __m512 w = _mm512_set1_ps(ld1(kernel, kt + c * g->k_si + kidx(d0, t0) * d0->k_s, mode));
        for (int r = 0; r < R; r++) {
          for (int v = 0; v < NV; v++) {
            acc[r * NV + v] = _mm512_fmadd_ps(ld(input, x + r * rs + 16 * v, m[v], mode), w, acc[r * NV + v]);
          }
        }
      }
    }
  }
  for (int r = 0; r < R; r++) {
    for (int v = 0; v < NV; v++)
      st(output, off[2] + r * d0->out_s + x0 + 16 * v, lane_range(0, n - x0 - 16 * v), acc[r * NV + v], mode);
  }
}

/* R rows from y0 of one (group, batch, output feature): blocks of up to 64
 * pixels, as few vectors as the row needs. */
static inline __attribute__((always_inline)) void pixel_rows(const optic_conv_geom *g, const optic_conv_wdim *d0,
                                                             const optic_conv_wdim *d1, const void *in, const void *ker,
                                                             void *out, const int64_t *off, int64_t y0, int R,
                                                             int mode) {
  const int64_t n = d1->out;
  for (int64_t x0 = 0; x0<n; x0 += R> 1 ? 32 : 64) {
    int64_t r = n - x0;
    if (R == 1 && r > 32) {
      pixel_block(g, d0, d1, in, ker, out, off, y0, 1, x0, 4, mode);
    } else if (r > 16) {
      pixel_block(g, d0, d1, in, ker, out, off, y0, R, x0, 2, mode);
    } else {
      pixel_block(g, d0, d1, in, ker, out, off, y0, R, x0, 1, mode);
    }
  }
}

/* Output rows per block where all of them see every outer tap. */
#define ROWS 4

static inline __attribute__((always_inline)) void rows(const optic_conv_plan *p, const void *input, const void *kernel,
                                                       void *output, int64_t u0, int64_t u1, int mode) {
  const optic_conv_geom *g = &p->g;
  const optic_conv_wdim d0 = optic_conv_wdim_of(g, g->nsp == 2 ? 0 : -1), d1 = optic_conv_wdim_of(g, g->nsp - 1);
  /* units: (group, batch, outer row), the row fastest: decoded once, then stepped */
  int64_t y0 = d0.out > 0 ? u0 % d0.out : 0, rest = d0.out > 0 ? u0 / d0.out : 0;
  int64_t b = g->batch > 0 ? rest % g->batch : 0, gr = g->batch > 0 ? rest / g->batch : 0;
  const int64_t last_tap = (d0.k - 1) * d0.dil;
  for (int64_t u = u0; u < u1;) {
    int64_t first = y0 * d0.stride - d0.pad, last = (y0 + ROWS - 1) * d0.stride - d0.pad + last_tap;
    int R = y0 + ROWS <= d0.out && u + ROWS <= u1 && first >= 0 && last < d0.in ? ROWS : 1;
    for (int64_t o = 0; o < g->cout; o++) {
      const int64_t off[3] = {gr * g->in_sg + b * g->in_sb, gr * g->k_sg + o * g->k_so,
                              gr * g->out_sg + b * g->out_sb + o * g->out_so + y0 * d0.out_s};
      if (R == ROWS) {
        pixel_rows(g, &d0, &d1, input, kernel, output, off, y0, ROWS, mode);
      } else {
        pixel_rows(g, &d0, &d1, input, kernel, output, off, y0, 1, mode);
      }
    }
    u += R;
    if ((y0 += R) == d0.out) {
      y0 = 0;
      if (++b == g->batch) b = 0, gr++;
    }
  }
}

void optic_conv_grouped_rows_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    int64_t u0, int64_t u1) {
  rows(p, input, kernel, output, u0, u1, F32);
}

void optic_conv_grouped_bf16_avx512(const optic_conv_plan *p, const uint16_t *input, const uint16_t *kernel,
                                    void *output, bool bf16_result, int64_t u0, int64_t u1) {
  if (p->grouped_rows && bf16_result) {
    rows(p, input, kernel, output, u0, u1, BF16_BF16);
  } else if (p->grouped_rows) {
    rows(p, input, kernel, output, u0, u1, BF16_F32);
  } else if (bf16_result) {
    channels(p, input, kernel, output, u0, u1, BF16_BF16);
  } else {
    channels(p, input, kernel, output, u0, u1, BF16_F32);
  }
}

/* ------------------------------------------------- window dot products */

/* Lanes of window taps [t, t + 16) along the inner dim that read the input
 * for output y1 (X = y1 * stride - pad + t, inside [0, in)) and are taps. */
static inline __mmask16 dot_mask(const optic_conv_wdim *d1, int64_t y1, int64_t t) {
  int64_t x = y1 * d1->stride - d1->pad + t;
  int64_t hi = d1->in - x < d1->k - t ? d1->in - x : d1->k - t;
  return lane_range(-x, hi);
}

/* All O0 x O1 output positions of one group and batch item (offsets in
 * off[]: input, kernel, output), f32: for each input feature and outer tap,
 * the window row is read once in chunks of 16 taps, each chunk multiplied
 * into the input row of every output position (P accumulators). */
static inline __attribute__((always_inline)) void dot_positions(const optic_conv_geom *g, const optic_conv_wdim *d0,
                                                                const optic_conv_wdim *d1, const float *input,
                                                                const float *kernel, float *output, const int64_t *off,
                                                                int64_t O0, int64_t O1, __m512 *acc) {
  for (int64_t j = 0; j < O0 * O1; j++) acc[j] = _mm512_setzero_ps();
  for (int64_t c = 0; c < g->cin; c++) {
    for (int64_t t0 = 0; t0 < d0->k; t0++) {
      const float *krow = kernel + off[1] + c * g->k_si + kidx(d0, t0) * d0->k_s;
      for (int64_t t = 0; t < d1->k; t += 16) {
        __m512 w = _mm512_maskz_loadu_ps(lanes(d1->k - t), krow + t);
        for (int64_t y0 = 0; y0 < O0; y0++) {
          int64_t X0 = y0 * d0->stride - d0->pad + t0 * d0->dil;
          if (X0 < 0 || X0 >= d0->in) continue;
          const float *irow = input + off[0] + c * g->in_sc + X0 * d0->in_s;
          for (int64_t y1 = 0; y1 < O1; y1++) {
            int64_t x = y1 * d1->stride - d1->pad + t;
            acc[y0 * O1 + y1] =
                _mm512_fmadd_ps(_mm512_maskz_loadu_ps(dot_mask(d1, y1, t), irow + x), w, acc[y0 * O1 + y1]);
          }
        }
      }
    }
  }
  for (int64_t y0 = 0; y0 < O0; y0++) {
    for (int64_t y1 = 0; y1 < O1; y1++)
      output[off[2] + y0 * d0->out_s + y1 * d1->out_s] = _mm512_reduce_add_ps(acc[y0 * O1 + y1]);
  }
}

void optic_conv_grouped_dots_avx512(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                    int64_t u0, int64_t u1) {
  const optic_conv_geom *g = &p->g;
  const optic_conv_wdim d0 = optic_conv_wdim_of(g, g->nsp == 2 ? 0 : -1), d1 = optic_conv_wdim_of(g, g->nsp - 1);
  __m512 acc[OPTIC_CONV_GROUPED_DOTS_MAX];
  for (int64_t u = u0; u < u1; u++) { /* units: (group, batch item) */
    int64_t b = u % g->batch, gr = u / g->batch;
    for (int64_t o = 0; o < g->cout; o++) {
      const int64_t off[3] = {gr * g->in_sg + b * g->in_sb, gr * g->k_sg + o * g->k_so,
                              gr * g->out_sg + b * g->out_sb + o * g->out_so};
      if (d0.out == 3 && d1.out == 3) { /* the 3x3 kernel gradient: nine accumulators in registers */
        dot_positions(g, &d0, &d1, input, kernel, output, off, 3, 3, acc);
      } else {
        dot_positions(g, &d0, &d1, input, kernel, output, off, d0.out, d1.out, acc);
      }
    }
  }
}
