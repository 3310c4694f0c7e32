/* The group-vectorised direct convolution (kernels/conv_grouped.h): for each
 * output position and output feature, every window tap and input feature
 * adds one run across the groups (unit-stride where the groups are adjacent)
 * into an accumulator block; or, in the row loops, one run along an output
 * row per tap. */
#include <string.h>

#include "kernels/conv_grouped.h"

/* Groups accumulated at once: a block of floats that stays in L1. */
#define GROUPED_BLOCK 256

bool optic_conv_grouped_preferred(const optic_conv_geom *g) {
  return g->groups >= 8 && g->cin * g->cout <= 16 && g->in_sg == 1 && g->k_sg == 1 && g->out_sg == 1;
}

bool optic_conv_grouped_strided_preferred(const optic_conv_geom *g) { return g->groups >= 8 && g->cin * g->cout <= 16; }

bool optic_conv_grouped_rows_preferred(const optic_conv_geom *g) {
  if (g->nsp < 1 || g->groups < 2 || g->cin * g->cout > 16) return false;
  int32_t s = g->nsp - 1;
  return g->in_ss[s] == 1 && g->out_ss[s] == 1 && g->stride[s] == 1 && g->lhs_dil[s] == 1 && g->out_size[s] >= 8;
}

int64_t optic_conv_grouped_rows_units(const optic_conv_geom *g) {
  int64_t u = g->groups * g->batch;
  for (int32_t s = 0; s + 1 < g->nsp; s++) u *= g->out_size[s];
  return u;
}

/* Input offset along spatial dim s of tap k for output coordinate y (as the
 * im2col gathers compute it); false on padding or a lhs-dilation hole. */
static inline bool tap_input(const optic_conv_geom *G, int32_t s, int64_t y, int64_t k, int64_t *off) {
  int64_t keff = G->rev[s] ? G->k_size[s] - 1 - k : k;
  int64_t X = y * G->stride[s] - G->pad_lo[s] + keff * G->rhs_dil[s];
  int64_t ld = G->lhs_dil[s];
  if (X < 0 || X % ld != 0 || X / ld >= G->in_size[s]) return false;
  *off += (X / ld) * G->in_ss[s];
  return true;
}

static void axpy_block(float *restrict acc, const float *restrict x, const float *restrict w, int64_t n) {
  for (int64_t i = 0; i < n; i++) acc[i] += x[i] * w[i];
}

static void axpy_strided(float *restrict acc, const float *restrict x, int64_t xs, const float *restrict w, int64_t ws,
                         int64_t n) {
  for (int64_t i = 0; i < n; i++) acc[i] += x[i * xs] * w[i * ws];
}

/* acc[0..n) = sum over input features and taps for output feature o at
 * output coordinates y of batch b, groups [g0, g0+n). */
static void accumulate(const optic_conv_geom *G, const float *in, const float *ker, int64_t b, const int64_t *y,
                       int64_t o, int64_t g0, int64_t n, float *acc) {
  int64_t taps = 1;
  for (int32_t s = 0; s < G->nsp; s++) taps *= G->k_size[s];
  memset(acc, 0, (size_t)n * sizeof(float));
  for (int64_t c = 0; c < G->cin; c++) {
    const float *ib = in + b * G->in_sb + c * G->in_sc + g0 * G->in_sg;
    const float *kb = ker + c * G->k_si + o * G->k_so + g0 * G->k_sg;
    const bool unit = G->in_sg == 1 && G->k_sg == 1;
    int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; t++) {
      int64_t ioff = 0, koff = 0;
      bool valid = true;
      for (int32_t s = 0; s < G->nsp && valid; s++) {
        valid = tap_input(G, s, y[s], k[s], &ioff);
        koff += k[s] * G->k_ss[s];
      }
      if (valid && unit) {
        axpy_block(acc, ib + ioff, kb + koff, n);
      } else if (valid) {
        axpy_strided(acc, ib + ioff, G->in_sg, kb + koff, G->k_sg, n);
      }
      for (int32_t s = G->nsp - 1; s >= 0; s--) { /* next tap, last dim fastest */
        if (++k[s] < G->k_size[s]) break;
        k[s] = 0;
      }
    }
  }
}

bool optic_conv_grouped_simd_fits(const optic_conv_geom *g, bool rows, optic_isa isa) {
  if (isa != OPTIC_ISA_AVX512 || !OPTIC_ARCH_X86_64 || g->nsp < 1 || g->nsp > 2) return false;
  for (int32_t s = 0; s < g->nsp; s++)
    if (g->lhs_dil[s] != 1) return false;
  if (rows) return g->in_ss[g->nsp - 1] == 1 && g->out_ss[g->nsp - 1] == 1 && g->stride[g->nsp - 1] == 1;
  return g->in_sg == 1 && g->k_sg == 1 && g->out_sg == 1;
}

bool optic_conv_grouped_dots_fits(const optic_conv_geom *g, optic_isa isa) {
  if (isa != OPTIC_ISA_AVX512 || !OPTIC_ARCH_X86_64 || g->nsp < 1 || g->nsp > 2) return false;
  for (int32_t s = 0; s < g->nsp; s++)
    if (g->lhs_dil[s] != 1) return false;
  const int32_t l = g->nsp - 1;
  int64_t outs = g->nsp == 2 ? g->out_size[0] * g->out_size[1] : g->out_size[0];
  return g->in_ss[l] == 1 && g->k_ss[l] == 1 && g->rhs_dil[l] == 1 && !g->rev[l] && g->k_size[l] >= 16 &&
         outs <= OPTIC_CONV_GROUPED_DOTS_MAX;
}

void optic_conv_grouped_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                            int64_t u0, int64_t u1) {
#if OPTIC_ARCH_X86_64
  if (p->grouped_dots) {
    optic_conv_grouped_dots_avx512(p, input, kernel, output, u0, u1);
    return;
  }
  if (p->grouped_simd) {
    optic_conv_grouped_avx512(p, input, kernel, output, u0, u1);
    return;
  }
#endif
  const optic_conv_geom *G = &p->g;
  float acc[GROUPED_BLOCK];
  for (int64_t u = u0; u < u1; u++) {
    int64_t y[OPTIC_CONV_MAX_SPATIAL], rest = u, ooff = 0;
    for (int32_t s = G->nsp - 1; s >= 0; s--) {
      y[s] = rest % G->out_size[s];
      rest /= G->out_size[s];
      ooff += y[s] * G->out_ss[s];
    }
    int64_t b = rest;
    ooff += b * G->out_sb;
    for (int64_t o = 0; o < G->cout; o++) {
      for (int64_t g0 = 0; g0 < G->groups; g0 += GROUPED_BLOCK) {
        int64_t n = G->groups - g0 < GROUPED_BLOCK ? G->groups - g0 : GROUPED_BLOCK;
        accumulate(G, input, kernel, b, y, o, g0, n, acc);
        float *dst = output + ooff + o * G->out_so + g0 * G->out_sg;
        if (G->out_sg == 1) {
          memcpy(dst, acc, (size_t)n * sizeof(float));
        } else {
          for (int64_t i = 0; i < n; i++) dst[i * G->out_sg] = acc[i];
        }
      }
    }
  }
}

/* row[x] += w * in[x + a] for the x in [0, n) that land inside [0, in_n). */
static void axpy_row(float *restrict row, const float *restrict in, int64_t in_n, int64_t a, int64_t n, float w) {
  int64_t lo = a < 0 ? -a : 0, hi = in_n - a < n ? in_n - a : n;
  for (int64_t x = lo; x < hi; x++) row[x] += w * in[x + a];
}

/* One output row (all o) of group g, batch b, outer coordinates y. */
static void grouped_row(const optic_conv_geom *G, const float *in, const float *ker, float *out, int64_t g, int64_t b,
                        const int64_t *y) {
  const int32_t last = G->nsp - 1;
  int64_t taps = 1, ooff = g * G->out_sg + b * G->out_sb, n = G->out_size[last];
  for (int32_t s = 0; s < G->nsp; s++) taps *= G->k_size[s];
  for (int32_t s = 0; s < last; s++) ooff += y[s] * G->out_ss[s];
  for (int64_t o = 0; o < G->cout; o++) {
    float *row = out + ooff + o * G->out_so;
    memset(row, 0, (size_t)n * sizeof(float));
    for (int64_t c = 0; c < G->cin; c++) {
      const float *ib = in + g * G->in_sg + b * G->in_sb + c * G->in_sc;
      const float *kb = ker + g * G->k_sg + c * G->k_si + o * G->k_so;
      int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
      for (int64_t t = 0; t < taps; t++) {
        int64_t ioff = 0, koff = 0;
        bool valid = true;
        for (int32_t s = 0; s < last && valid; s++) valid = tap_input(G, s, y[s], k[s], &ioff);
        for (int32_t s = 0; s <= last; s++) koff += k[s] * G->k_ss[s];
        if (valid) {
          int64_t keff = G->rev[last] ? G->k_size[last] - 1 - k[last] : k[last];
          axpy_row(row, ib + ioff, G->in_size[last], keff * G->rhs_dil[last] - G->pad_lo[last], n, kb[koff]);
        }
        for (int32_t s = last; s >= 0; s--) {
          if (++k[s] < G->k_size[s]) break;
          k[s] = 0;
        }
      }
    }
  }
}

void optic_conv_grouped_rows_run(const optic_conv_plan *p, const float *input, const float *kernel, float *output,
                                 int64_t u0, int64_t u1) {
#if OPTIC_ARCH_X86_64
  if (p->grouped_simd) {
    optic_conv_grouped_rows_avx512(p, input, kernel, output, u0, u1);
    return;
  }
#endif
  const optic_conv_geom *G = &p->g;
  for (int64_t u = u0; u < u1; u++) {
    int64_t y[OPTIC_CONV_MAX_SPATIAL] = {0}, rest = u;
    for (int32_t s = G->nsp - 2; s >= 0; s--) {
      y[s] = rest % G->out_size[s];
      rest /= G->out_size[s];
    }
    int64_t b = rest % G->batch, g = rest / G->batch;
    grouped_row(G, input, kernel, output, g, b, y);
  }
}
