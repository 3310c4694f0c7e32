/* bf16 convolution on the bf16 GEMM kernels (kernels/conv_bf16.h): the plan,
 * the bf16 im2col gather, the kernel gather into B panels, and the slices.
 *
 * Slice scratch (each part 64-byte aligned): the A block (block rows of kld
 * bf16, the gathered positions; for AMX these rows are the A panels
 * themselves), the vdpbf16ps A panels (AVX512 only), the dense kernel
 * matrix (kc x cout bf16), its B panels, and the f32 result tile
 * (block x cout). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/half.h"
#include "kernels/conv_bf16.h"

#define NR OPTIC_BF16_NR
#define A_BLOCK_BYTES ((int64_t)64 * 1024) /* the gathered block stays in L2 next to the B panels */
#define MAX_BLOCK 512
#define ROWS OPTIC_BF16_CONV_ROWS /* rows of a direct call */
#define CHUNK (8 * ROWS)          /* direct: positions per work unit, at most */
#define LINE_BYTES ((int64_t)256 * 1024)

#if !defined(OPTIC_HAVE_AVX512BF16_KERNELS)
void optic_bf16_conv_rows__avx512bf16(const optic_bf16_conv_rows_args *r) { (void)r; }
#endif

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

/* Whether the direct rows run geometry g on kernel k: vdpbf16ps, feature
 * pairs contiguous in the input (cin even, stride 1), no input dilation, and
 * a line buffer of at most LINE_BYTES. */
static bool direct_fits(const optic_conv_geom *g, optic_bf16_kernel k) {
  if (k != OPTIC_BF16_AVX512 || g->nsp < 1 || g->in_sc != 1 || g->cin < 2 || g->cin % 2 != 0) return false;
  int64_t lines = 1, last = g->nsp - 1;
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->lhs_dil[s] != 1 || g->k_size[s] < 1 || g->out_size[s] < 1) return false;
    if (s < last) lines *= g->k_size[s];
  }
  int64_t px = (CHUNK + ROWS) * g->stride[last] + g->k_size[last] * g->rhs_dil[last];
  return lines <= LINE_BYTES && px <= LINE_BYTES && lines * px * g->cin * 2 <= LINE_BYTES;
}

optic_bf16_kernel optic_conv_bf16_kernel(void) {
  if (optic_isa_selected() != OPTIC_ISA_AVX512) return OPTIC_BF16_NONE;
  const char *cap = getenv("OPTIC_ISA");
  optic_isa ignored;
  bool capped = cap != NULL && cap[0] != '\0' && optic_isa_from_name(cap, &ignored) == OPTIC_OK;
  if (!capped && optic_dot_bf16_kernel() == OPTIC_BF16_AMX) return OPTIC_BF16_AMX;
  return optic_dot_bf16_kernel_usable(OPTIC_BF16_AVX512) ? OPTIC_BF16_AVX512 : OPTIC_BF16_NONE;
}

bool optic_conv_bf16_suits(const optic_conv_desc *d) {
  int64_t groups = d->feature_group_count > d->batch_group_count ? d->feature_group_count : d->batch_group_count;
  if (groups < 1 || d->dn.k_out < 0 || d->dn.k_in < 0) return false;
  int64_t window = 1;
  for (int32_t s = 0; s < d->dn.nspatial; s++) window *= d->kernel.dims[d->dn.k_spatial[s]];
  int64_t cout = d->kernel.dims[d->dn.k_out] / groups, kc = d->kernel.dims[d->dn.k_in] * window;
  return cout > 1 || kc >= 16;
}

bool optic_conv_bf16_chosen(const optic_conv_desc *d, optic_dtype lhs, optic_dtype rhs, optic_dtype out) {
  if (lhs != OPTIC_BF16 || rhs != OPTIC_BF16 || (out != OPTIC_F32 && out != OPTIC_BF16)) return false;
  optic_bf16_kernel k = optic_conv_bf16_kernel();
  if (k == OPTIC_BF16_NONE || !optic_conv_bf16_suits(d)) return false;
  if (k == OPTIC_BF16_AMX) return true;
  optic_conv_plan f; /* vdpbf16ps: only the direct rows, at least 16 features in and out */
  if (optic_conv_plan_make(d, OPTIC_CONV_FORWARD, 1, &f) != OPTIC_OK) return false;
  return f.g.cin >= 16 && f.g.cout >= 16 && direct_fits(&f.g, k);
}

/* The direct rows' sizes: chunks of at most CHUNK positions along the last
 * spatial dim, each with a line buffer per outer window tap holding the
 * padded input pixels the chunk reads (kernels/dot_bf16.h
 * optic_bf16_conv_rows__avx512bf16 reads up to a multiple of 14 rows). */
static void direct_sizes(optic_conv_bf16_plan *p) {
  const optic_conv_geom *g = &p->g;
  int32_t last = g->nsp - 1;
  int64_t ow = g->out_size[last];
  p->chunk = ow < CHUNK ? ow : CHUNK;
  p->nchunk = (ow + p->chunk - 1) / p->chunk;
  p->rows_out = p->positions / (ow > 0 ? ow : 1);
  p->lines = 1;
  for (int32_t s = 0; s < last; s++) p->lines *= g->k_size[s];
  int64_t read = (p->chunk + ROWS - 1) / ROWS * ROWS;
  p->line_px = (read - 1) * g->stride[last] + (g->k_size[last] - 1) * g->rhs_dil[last] + 1;
}

static optic_status plan_sizes(optic_conv_bf16_plan *p, int32_t threads) {
  const optic_conv_geom *g = &p->g;
  bool amx = p->kernel == OPTIC_BF16_AMX;
  p->kc = g->cin;
  for (int32_t s = 0; s < g->nsp; s++) p->kc *= g->k_size[s];
  p->mr = amx ? 32 : OPTIC_BF16_MR;
  p->kld = amx ? (p->kc + 31) / 32 * 32 : p->kc;
  p->kpairs = amx ? p->kld / 2 : (p->kc + 1) / 2;
  p->positions = g->batch;
  for (int32_t s = 0; s < g->nsp; s++) p->positions *= g->out_size[s];
  int64_t rows = A_BLOCK_BYTES / (2 * (p->kld > 0 ? p->kld : 1));
  rows = rows > MAX_BLOCK ? MAX_BLOCK : rows;
  int64_t need = (p->positions + p->mr - 1) / p->mr * p->mr;
  p->block = rows / p->mr * p->mr;
  if (p->block < p->mr) p->block = p->mr;
  if (p->block > need && need > 0) p->block = need;
  p->nblk = (p->positions + p->block - 1) / p->block;
  p->np = (g->cout + NR - 1) / NR;
  if (p->kc > (int64_t)1 << 40 || g->cout > (int64_t)1 << 40) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "conv_bf16: contraction %lld x %lld features is too large",
                      (long long)p->kc, (long long)g->cout);
  }
  p->direct = p->kc > 0 && p->positions > 0 && direct_fits(g, p->kernel);
  size_t off = 0;
  if (p->direct) {
    direct_sizes(p);
    p->block = ROWS; /* the result tile holds one call's rows */
    p->l_off = off, off += align64((size_t)(p->lines * p->line_px * g->cin) * 2);
    p->t_off = off, off += align64((size_t)(p->kc / g->cin) * sizeof(int64_t));
  } else {
    p->a_off = off, off += align64((size_t)(p->block * p->kld) * 2);
    p->p_off = off, off += amx ? 0 : align64((size_t)(p->block * p->kpairs) * 4);
  }
  p->bd_off = off, off += align64((size_t)(p->kc * g->cout) * 2);
  p->b_off = off, off += align64((size_t)(p->np * p->kpairs * NR) * 4);
  p->c_off = off, off += align64((size_t)(p->block * g->cout) * 4);
  p->slice_bytes = off;
  p->threads = threads;
  p->scratch_bytes = p->positions > 0 && g->cout > 0 ? (size_t)threads * off : 0;
  return OPTIC_OK;
}

optic_status optic_conv_bf16_plan_make(const optic_conv_desc *d, optic_dtype out_dtype, optic_bf16_kernel kernel,
                                       int32_t threads, optic_conv_bf16_plan *out) {
  if (d == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "conv_bf16_plan_make: NULL argument");
  if (out_dtype != OPTIC_F32 && out_dtype != OPTIC_BF16) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "conv_bf16_plan_make: the result must be f32 or bf16, not %s",
                      optic_dtype_name(out_dtype));
  }
  if (!optic_dot_bf16_kernel_usable(kernel)) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "conv_bf16_plan_make: the %s kernel cannot run here (selected ISA: %s)",
                      optic_dot_bf16_kernel_name(kernel), optic_isa_name(optic_isa_selected()));
  }
  optic_conv_plan f;
  optic_status st = optic_conv_plan_make(d, OPTIC_CONV_FORWARD, threads, &f);
  if (st != OPTIC_OK) return st;
  memset(out, 0, sizeof *out);
  out->result_shape = f.result_shape;
  out->out_dtype = out_dtype;
  out->kernel = kernel;
  out->g = f.g;
  if (f.direct_kernel_pack) { /* the kernel as the operand lays it out, not the direct strategy's copy */
    out->g.k_si = f.pk_si, out->g.k_so = f.pk_so, out->g.k_sg = f.pk_sg;
    memcpy(out->g.k_ss, f.pk_ss, sizeof f.pk_ss);
  }
  return plan_sizes(out, threads);
}

/* Group gi's kernel as the dense kc x cout matrix (row = tap * cin + c), then
 * its B panels. */
static void pack_kernel(const optic_conv_bf16_plan *p, const uint16_t *kernel, int64_t gi, char *slice) {
  const optic_conv_geom *g = &p->g;
  uint16_t *bd = (uint16_t *)(void *)(slice + p->bd_off);
  int64_t taps = p->kc / (g->cin > 0 ? g->cin : 1), tap_off[OPTIC_CONV_MAX_SPATIAL] = {0};
  for (int64_t t = 0; t < taps; t++) {
    int64_t rem = t, off = gi * g->k_sg;
    for (int32_t s = g->nsp - 1; s >= 0; s--) {
      tap_off[s] = rem % g->k_size[s], rem /= g->k_size[s];
      off += tap_off[s] * g->k_ss[s];
    }
    for (int64_t c = 0; c < g->cin; c++) {
      uint16_t *row = bd + (t * g->cin + c) * g->cout;
      const uint16_t *src = kernel + off + c * g->k_si;
      for (int64_t o = 0; o < g->cout; o++) row[o] = src[o * g->k_so];
    }
  }
  optic_bf16_matrix m = {bd, p->kc, g->cout, g->cout, false, false};
  uint32_t *bp = (uint32_t *)(void *)(slice + p->b_off);
  for (int64_t j = 0; j < p->np; j++) optic_bf16_pack_b__avx512bf16(&m, j * NR, p->kpairs, bp + j * p->kpairs * NR);
}

/* Input offset of the tap with window index k[] for the position whose
 * dilated-input origin per spatial dim is org[], or -1 on padding. */
static int64_t tap_offset(const optic_conv_geom *g, const int64_t *org, const int64_t *k) {
  int64_t off = 0;
  for (int32_t s = 0; s < g->nsp; s++) {
    int64_t x = org[s] + (g->rev[s] ? g->k_size[s] - 1 - k[s] : k[s]) * g->rhs_dil[s];
    if (x < 0 || x > (g->in_size[s] - 1) * g->lhs_dil[s]) return -1;
    if (g->lhs_dil[s] != 1) {
      if (x % g->lhs_dil[s] != 0) return -1;
      x /= g->lhs_dil[s];
    }
    off += x * g->in_ss[s];
  }
  return off;
}

/* The next window index (odometer, last spatial dim fastest). */
static void next_tap(const optic_conv_geom *g, int64_t *k) {
  for (int32_t s = g->nsp - 1; s >= 0; s--) {
    if (++k[s] < g->k_size[s]) return;
    k[s] = 0;
  }
}

/* Position pos of a group: its batch item and output coordinates. */
static void position_of(const optic_conv_geom *g, int64_t pos, int64_t *b, int64_t *y) {
  for (int32_t s = g->nsp - 1; s >= 0; s--) y[s] = pos % g->out_size[s], pos /= g->out_size[s];
  *b = pos;
}

/* Rows [0, rows) of the A block: positions p0.. of group gi (im2col). */
static void gather_block(const optic_conv_bf16_plan *p, const uint16_t *input, int64_t gi, int64_t p0, int64_t rows,
                         uint16_t *a) {
  const optic_conv_geom *g = &p->g;
  int64_t taps = p->kc / g->cin;
  for (int64_t i = 0; i < rows; i++) {
    int64_t b, y[OPTIC_CONV_MAX_SPATIAL], org[OPTIC_CONV_MAX_SPATIAL];
    position_of(g, p0 + i, &b, y);
    for (int32_t s = 0; s < g->nsp; s++) org[s] = y[s] * g->stride[s] - g->pad_lo[s];
    const uint16_t *base = input + gi * g->in_sg + b * g->in_sb;
    uint16_t *row = a + i * p->kld;
    int64_t k[OPTIC_CONV_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; t++, next_tap(g, k)) {
      int64_t off = tap_offset(g, org, k);
      uint16_t *dst = row + t * g->cin;
      if (off < 0) {
        memset(dst, 0, (size_t)g->cin * 2);
      } else if (g->in_sc == 1) {
        memcpy(dst, base + off, (size_t)g->cin * 2);
      } else {
        for (int64_t c = 0; c < g->cin; c++) dst[c] = base[off + c * g->in_sc];
      }
    }
    if (p->kld > p->kc) memset(row + p->kc, 0, (size_t)(p->kld - p->kc) * 2);
  }
  if (rows < p->block) memset(a + rows * p->kld, 0, (size_t)((p->block - rows) * p->kld) * 2);
}

/* The result tile (rows x cout f32) into the output, rounded to bf16 when
 * the plan says so. */
static void store_block(const optic_conv_bf16_plan *p, const float *c, int64_t gi, int64_t p0, int64_t rows,
                        void *output) {
  const optic_conv_geom *g = &p->g;
  for (int64_t i = 0; i < rows; i++) {
    int64_t b, y[OPTIC_CONV_MAX_SPATIAL];
    position_of(g, p0 + i, &b, y);
    int64_t off = gi * g->out_sg + b * g->out_sb;
    for (int32_t s = 0; s < g->nsp; s++) off += y[s] * g->out_ss[s];
    const float *ci = c + i * g->cout;
    if (p->out_dtype == OPTIC_F32) {
      float *o = (float *)output + off;
      if (g->out_so == 1) {
        memcpy(o, ci, (size_t)g->cout * sizeof(float));
      } else {
        for (int64_t k = 0; k < g->cout; k++) o[k * g->out_so] = ci[k];
      }
    } else {
      uint16_t *o = (uint16_t *)output + off;
      if (g->out_so == 1) { /* contiguous: the compiler's vector loop */
        for (int64_t k = 0; k < g->cout; k++) o[k] = optic_half_from_f32_bf16(ci[k]);
      } else {
        for (int64_t k = 0; k < g->cout; k++) o[k * g->out_so] = optic_half_from_f32_bf16(ci[k]);
      }
    }
  }
}

/* One block: gather, pack A (AVX512), GEMM into the tile, store. */
static void run_block(const optic_conv_bf16_plan *p, const uint16_t *input, int64_t gi, int64_t blk, char *slice,
                      void *output) {
  int64_t p0 = blk * p->block, rows = p->positions - p0 < p->block ? p->positions - p0 : p->block;
  uint16_t *a = (uint16_t *)(void *)(slice + p->a_off);
  float *c = (float *)(void *)(slice + p->c_off);
  if (p->kc > 0) gather_block(p, input, gi, p0, rows, a);
  int64_t panels = (rows + p->mr - 1) / p->mr;
  optic_bf16_gemm_args ga = {NULL,     (const uint32_t *)(const void *)(slice + p->b_off), c, rows, p->g.cout, p->kc,
                             p->g.cout};
  if (p->kc == 0) {
    memset(c, 0, (size_t)(rows * p->g.cout) * sizeof(float));
  } else if (p->kernel == OPTIC_BF16_AMX) {
    ga.a = (const uint32_t *)(const void *)a;
    ga.k = p->kld;
    optic_bf16_gemm__amx(&ga, 0, panels, 0, p->np);
  } else {
    uint32_t *ap = (uint32_t *)(void *)(slice + p->p_off);
    optic_bf16_matrix m = {a, rows, p->kc, p->kld, false, false};
    for (int64_t i = 0; i < panels; i++) optic_bf16_pack_a__avx512bf16(&m, i * p->mr, ap + i * p->kpairs * p->mr);
    ga.a = ap;
    optic_bf16_gemm__avx512bf16(&ga, 0, panels, 0, p->np);
  }
  store_block(p, c, gi, p0, rows, output);
}

/* Direct rows: the line buffer of one chunk (output row `row` of group gi,
 * positions x0.. along the last spatial dim): per outer window tap, the
 * input pixels the chunk reads, zero where they fall in the padding. */
static void fill_lines(const optic_conv_bf16_plan *p, const uint16_t *input, int64_t gi, int64_t row, int64_t x0,
                       uint16_t *line) {
  const optic_conv_geom *g = &p->g;
  int32_t last = g->nsp - 1;
  int64_t b, y[OPTIC_CONV_MAX_SPATIAL], k[OPTIC_CONV_MAX_SPATIAL] = {0};
  position_of(g, row * g->out_size[last], &b, y);
  const uint16_t *base = input + gi * g->in_sg + b * g->in_sb;
  size_t px_bytes = (size_t)g->cin * 2;
  for (int64_t lo = 0; lo < p->lines; lo++, line += p->line_px * g->cin) {
    int64_t off = 0;
    bool inside = true;
    for (int32_t s = 0; s < last; s++) {
      int64_t x = y[s] * g->stride[s] - g->pad_lo[s] + (g->rev[s] ? g->k_size[s] - 1 - k[s] : k[s]) * g->rhs_dil[s];
      inside = inside && x >= 0 && x < g->in_size[s];
      off += x * g->in_ss[s];
    }
    for (int32_t s = last - 1; s >= 0; s--) { /* next outer tap, dim last-1 fastest */
      if (++k[s] < g->k_size[s]) break;
      k[s] = 0;
    }
    int64_t xi = x0 * g->stride[last] - g->pad_lo[last];
    for (int64_t xp = 0; xp < p->line_px; xp++, xi++) {
      if (inside && xi >= 0 && xi < g->in_size[last]) {
        memcpy(line + xp * g->cin, base + off + xi * g->in_ss[last], px_bytes);
      } else {
        memset(line + xp * g->cin, 0, px_bytes);
      }
    }
  }
}

/* Tap t's offset into the line buffer (taps in pack_kernel's order: last
 * spatial dim fastest; the outer taps are the lines). */
static void tap_offsets(const optic_conv_bf16_plan *p, int64_t *tap_off) {
  const optic_conv_geom *g = &p->g;
  int32_t last = g->nsp - 1;
  int64_t kw = g->k_size[last];
  for (int64_t t = 0; t < p->kc / g->cin; t++) {
    int64_t kx = t % kw, kr = g->rev[last] ? kw - 1 - kx : kx;
    tap_off[t] = ((t / kw) * p->line_px + kr * g->rhs_dil[last]) * g->cin;
  }
}

/* One chunk: the lines, then per ROWS positions every B panel into the
 * result tile, stored. */
static void run_chunk(const optic_conv_bf16_plan *p, const uint16_t *input, int64_t gi, int64_t u, char *slice,
                      void *output) {
  const optic_conv_geom *g = &p->g;
  int64_t row = u / p->nchunk, x0 = u % p->nchunk * p->chunk, ow = g->out_size[g->nsp - 1];
  int64_t n = ow - x0 < p->chunk ? ow - x0 : p->chunk;
  uint16_t *line = (uint16_t *)(void *)(slice + p->l_off);
  fill_lines(p, input, gi, row, x0, line);
  float *c = (float *)(void *)(slice + p->c_off);
  optic_bf16_conv_rows_args r = {.tap_off = (const int64_t *)(const void *)(slice + p->t_off),
                                 .taps = p->kc / g->cin,
                                 .tap_pairs = g->cin / 2,
                                 .rs = g->stride[g->nsp - 1] * g->cin,
                                 .ldc = g->cout};
  /* features contiguous in the output: the tiles go straight there */
  char *o = NULL;
  size_t es = p->out_dtype == OPTIC_BF16 ? 2 : 4;
  if (g->out_so == 1) {
    int64_t b, y[OPTIC_CONV_MAX_SPATIAL], off = gi * g->out_sg;
    position_of(g, row * ow + x0, &b, y);
    off += b * g->out_sb;
    for (int32_t s = 0; s < g->nsp; s++) off += y[s] * g->out_ss[s];
    o = (char *)output + (size_t)off * es;
    r.ldo = g->out_ss[g->nsp - 1], r.out_bf16 = p->out_dtype == OPTIC_BF16;
  }
  for (int64_t i = 0; i < n; i += ROWS) {
    r.rows = (int)(n - i < ROWS ? n - i : ROWS);
    r.a = line + i * r.rs;
    for (int64_t j = 0; j < p->np; j++) {
      r.b = (const uint32_t *)(const void *)(slice + p->b_off) + j * p->kpairs * NR;
      r.c = c + j * NR;
      r.out = o != NULL ? o + (size_t)(i * r.ldo + j * NR) * es : NULL;
      r.cols = (int)(g->cout - j * NR < NR ? g->cout - j * NR : NR);
      optic_bf16_conv_rows__avx512bf16(&r);
    }
    if (o == NULL) store_block(p, c, gi, row * ow + x0 + i, r.rows, output);
  }
}

static optic_status run_direct(const optic_conv_bf16_plan *p, const uint16_t *input, const uint16_t *kernel,
                               void *output, char *slice, int32_t thread, int32_t threads) {
  int64_t per = p->rows_out * p->nchunk, units = p->g.groups * per;
  int64_t lo = units / threads * thread + (units % threads) * thread / threads;
  int64_t hi = units / threads * (thread + 1) + (units % threads) * (thread + 1) / threads;
  if (lo < hi) tap_offsets(p, (int64_t *)(void *)(slice + p->t_off));
  for (int64_t u = lo, packed = -1; u < hi; u++) {
    int64_t gi = u / per;
    if (gi != packed) pack_kernel(p, kernel, gi, slice), packed = gi;
    run_chunk(p, input, gi, u % per, slice, output);
  }
  return OPTIC_OK;
}

optic_status optic_conv_bf16_run(const optic_conv_bf16_plan *p, const uint16_t *input, const uint16_t *kernel,
                                 void *output, void *scratch, int32_t thread, int32_t threads) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "conv_bf16_run: plan is NULL");
  if (threads < 1 || threads > p->threads || thread < 0 || thread >= threads) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "conv_bf16_run: slice %d of %d (plan for up to %d)", thread, threads,
                      p->threads);
  }
  if (p->scratch_bytes == 0) return OPTIC_OK; /* no output element */
  if (input == NULL || kernel == NULL || output == NULL || scratch == NULL || (uintptr_t)scratch % 4 != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "conv_bf16_run: NULL operand, result or scratch, or scratch not 4-byte aligned");
  }
  char *slice = (char *)scratch + (size_t)thread * p->slice_bytes;
  input += p->g.in_off, kernel += p->g.k_off; /* dims the f32 plan dropped (kernels/conv.h) */
  if (p->direct) return run_direct(p, input, kernel, output, slice, thread, threads);
  int64_t units = p->g.groups * p->nblk;
  int64_t lo = units / threads * thread + (units % threads) * thread / threads;
  int64_t hi = units / threads * (thread + 1) + (units % threads) * (thread + 1) / threads;
  int64_t packed = -1;
  for (int64_t u = lo; u < hi; u++) {
    int64_t gi = u / p->nblk;
    if (gi != packed && p->kc > 0) pack_kernel(p, kernel, gi, slice), packed = gi;
    run_block(p, input, gi, u % p->nblk, slice, output);
  }
  return OPTIC_OK;
}
