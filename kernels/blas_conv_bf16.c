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

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

optic_bf16_kernel optic_conv_bf16_kernel(void) {
  if (optic_isa_selected() != OPTIC_ISA_AVX512) return OPTIC_BF16_NONE;
  const char *cap = getenv("OPTIC_ISA");
  optic_isa ignored;
  if (cap != NULL && cap[0] != '\0' && optic_isa_from_name(cap, &ignored) == OPTIC_OK) return OPTIC_BF16_NONE;
  return optic_dot_bf16_kernel() == OPTIC_BF16_AMX ? OPTIC_BF16_AMX : OPTIC_BF16_NONE;
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
  return lhs == OPTIC_BF16 && rhs == OPTIC_BF16 && (out == OPTIC_F32 || out == OPTIC_BF16) &&
         optic_conv_bf16_kernel() != OPTIC_BF16_NONE && optic_conv_bf16_suits(d);
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
  size_t off = 0;
  p->a_off = off, off += align64((size_t)(p->block * p->kld) * 2);
  p->p_off = off, off += amx ? 0 : align64((size_t)(p->block * p->kpairs) * 4);
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
      for (int64_t k = 0; k < g->cout; k++) o[k * g->out_so] = optic_half_from_f32_bf16(ci[k]);
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
