/* Planning for the OpenBLAS convolution: turns a validated descriptor into the
 * strided geometry the engine runs (the backward-input pass as a forward
 * convolution over grad_output, as XLA and JAX transpose it), chooses the
 * strategy, walk orders and block size, and sizes the scratch. Never
 * allocates; all decisions are made here so runs only execute. */
#include <limits.h>
#include <string.h>

#include "core/error.h"
#include "kernels/blas_conv_engine.h"
#include "kernels/conv_direct.h"
#include "kernels/conv_grouped.h"
#include "kernels/conv_taps.h"

/* Bytes of one im2col block: small enough to stay in L2 between the gather
 * and OpenBLAS packing it (measured on the ResNet-50 3x3 layer: see
 * docs/kernels-conv.md), large enough for efficient GEMM calls. */
#define CONV_COL_BLOCK_BYTES ((int64_t)192 * 1024)
#define CONV_MIN_BLOCK 32

static void forward_geometry(const optic_conv_desc *d, const optic_shape *out, optic_conv_geom *g) {
  const optic_conv_dnums *dn = &d->dn;
  int64_t ist[OPTIC_MAX_RANK], kst[OPTIC_MAX_RANK], ost[OPTIC_MAX_RANK];
  optic_shape_strides(&d->input, ist);
  optic_shape_strides(&d->kernel, kst);
  optic_shape_strides(out, ost);
  memset(g, 0, sizeof *g);
  g->nsp = dn->nspatial;
  int64_t fgc = d->feature_group_count, bgc = d->batch_group_count;
  g->groups = fgc > bgc ? fgc : bgc;
  g->batch = out->dims[dn->out_batch];
  g->cin = d->kernel.dims[dn->k_in];
  g->cout = d->kernel.dims[dn->k_out] / g->groups;
  for (int32_t s = 0; s < g->nsp; s++) {
    g->in_size[s] = d->input.dims[dn->in_spatial[s]];
    g->k_size[s] = d->kernel.dims[dn->k_spatial[s]];
    g->out_size[s] = out->dims[dn->out_spatial[s]];
    g->stride[s] = d->stride[s];
    g->pad_lo[s] = d->pad_lo[s];
    g->lhs_dil[s] = d->lhs_dilation[s];
    g->rhs_dil[s] = d->rhs_dilation[s];
    g->rev[s] = d->reverse[s];
    g->in_ss[s] = ist[dn->in_spatial[s]];
    g->k_ss[s] = kst[dn->k_spatial[s]];
    g->out_ss[s] = ost[dn->out_spatial[s]];
  }
  g->in_sb = ist[dn->in_batch];
  g->in_sc = ist[dn->in_feature];
  g->in_sg = fgc > 1 ? g->cin * g->in_sc : bgc > 1 ? g->batch * g->in_sb : 0;
  g->k_si = kst[dn->k_in];
  g->k_so = kst[dn->k_out];
  g->k_sg = g->cout * g->k_so;
  g->out_sb = ost[dn->out_batch];
  g->out_so = ost[dn->out_feature];
  g->out_sg = g->cout * g->out_so;
}

/* The gradient w.r.t. the input is a forward convolution of grad_output with
 * the kernel's features swapped and its window reversed: stride and lhs
 * dilation trade places, pad_lo becomes (k-1)*rhs_dilation - pad_lo, and each
 * group's output lands where the forward group read its input. */
static void backward_input_geometry(const optic_conv_geom *f, optic_conv_geom *g) {
  *g = *f;
  g->cin = f->cout;
  g->cout = f->cin;
  for (int32_t s = 0; s < f->nsp; s++) {
    g->in_size[s] = f->out_size[s];
    g->out_size[s] = f->in_size[s];
    g->stride[s] = f->lhs_dil[s];
    g->lhs_dil[s] = f->stride[s];
    g->pad_lo[s] = (f->k_size[s] - 1) * f->rhs_dil[s] - f->pad_lo[s];
    g->rev[s] = !f->rev[s];
    g->in_ss[s] = f->out_ss[s];
    g->out_ss[s] = f->in_ss[s];
  }
  g->in_sb = f->out_sb, g->in_sc = f->out_so, g->in_sg = f->out_sg;
  g->out_sb = f->in_sb, g->out_so = f->in_sc, g->out_sg = f->in_sg;
  g->k_si = f->k_so, g->k_so = f->k_si;
}

/* Removes spatial dim s from g (the dims after it move down one). */
static void remove_spatial(optic_conv_geom *g, int32_t s) {
  for (int32_t t = s; t + 1 < g->nsp; t++) {
    g->in_size[t] = g->in_size[t + 1], g->k_size[t] = g->k_size[t + 1], g->out_size[t] = g->out_size[t + 1];
    g->stride[t] = g->stride[t + 1], g->pad_lo[t] = g->pad_lo[t + 1];
    g->lhs_dil[t] = g->lhs_dil[t + 1], g->rhs_dil[t] = g->rhs_dil[t + 1], g->rev[t] = g->rev[t + 1];
    g->in_ss[t] = g->in_ss[t + 1], g->k_ss[t] = g->k_ss[t + 1], g->out_ss[t] = g->out_ss[t + 1];
  }
  g->nsp--;
}

/* A forward spatial dim with one output position whose window has exactly
 * one tap inside the input (a 3-D convolution of a depth-1 volume with a
 * padded 3-deep window: two of its three taps read padding) contributes a
 * fixed input and kernel offset and no contraction: it is dropped, so every
 * strategy runs the lower-rank convolution and skips the padding's zero
 * multiply-adds. At least one spatial dim is kept. */
static void drop_single_tap_dims(optic_conv_geom *g) {
  for (int32_t s = 0; s < g->nsp && g->nsp > 1;) {
    int64_t valid = 0, tap = 0;
    for (int64_t t = 0; g->out_size[s] == 1 && g->lhs_dil[s] == 1 && t < g->k_size[s] && valid < 2; t++) {
      int64_t x = t * g->rhs_dil[s] - g->pad_lo[s];
      if (x >= 0 && x < g->in_size[s]) valid++, tap = t;
    }
    if (valid != 1) {
      s++;
      continue;
    }
    g->in_off += (tap * g->rhs_dil[s] - g->pad_lo[s]) * g->in_ss[s];
    g->k_off += (g->rev[s] ? g->k_size[s] - 1 - tap : tap) * g->k_ss[s];
    remove_spatial(g, s);
  }
}

/* Stable sort of walk dims by decreasing stride (outermost first). */
static void sort_by_stride(optic_conv_walk_dim *w, int64_t *st, int32_t n) {
  for (int32_t i = 1; i < n; i++) {
    for (int32_t j = i; j > 0 && st[j - 1] < st[j]; j--) {
      optic_conv_walk_dim tw = w[j];
      w[j] = w[j - 1], w[j - 1] = tw;
      int64_t ts = st[j];
      st[j] = st[j - 1], st[j - 1] = ts;
    }
  }
}

/* Longest suffix of walk dims [from, n) that is one uniform-stride run in an
 * operand with these strides: returns from, its length and stride. */
static int32_t collapse_suffix(const optic_conv_walk_dim *w, const int64_t *st, int32_t n, int64_t *len,
                               int64_t *stride) {
  *len = 1;
  *stride = 1;
  int32_t from = n;
  for (int32_t d = n - 1; d >= 0; d--) {
    if (from == n) {
      *stride = st[d];
    } else if (st[d] != *stride * *len) {
      break;
    }
    *len *= w[d].size;
    from = d;
  }
  return from;
}

static void build_position_walk(optic_conv_plan *p) {
  const optic_conv_geom *g = &p->g;
  int64_t st[OPTIC_CONV_MAX_SPATIAL + 1];
  p->npos = 0;
  if (g->batch > 1) p->pos[p->npos] = (optic_conv_walk_dim){g->batch, -1}, st[p->npos++] = g->out_sb;
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->out_size[s] > 1) p->pos[p->npos] = (optic_conv_walk_dim){g->out_size[s], s}, st[p->npos++] = g->out_ss[s];
  }
  sort_by_stride(p->pos, st, p->npos);
}

/* Row walk: spatial taps sorted by kernel stride; the feature dim last (MK
 * gathers copy features contiguously) or sorted with them (KM). */
static void build_row_walk(optic_conv_plan *p, bool feature_last) {
  const optic_conv_geom *g = &p->g;
  int64_t st[OPTIC_CONV_MAX_SPATIAL + 1];
  p->nrow = 0;
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->k_size[s] > 1) p->row[p->nrow] = (optic_conv_walk_dim){g->k_size[s], s}, st[p->nrow++] = g->k_ss[s];
  }
  if (!feature_last && g->cin > 1) p->row[p->nrow] = (optic_conv_walk_dim){g->cin, -1}, st[p->nrow++] = g->k_si;
  sort_by_stride(p->row, st, p->nrow);
  if (feature_last) p->row[p->nrow] = (optic_conv_walk_dim){g->cin, -1}, st[p->nrow++] = g->k_si;
  int64_t len, stride;
  int32_t from = collapse_suffix(p->row, st, p->nrow, &len, &stride);
  p->k_row_stride = stride;
  p->kernel_direct = from == 0 && conv_view_ok(p->kc, g->cout, stride, g->k_so);
}

static bool is_pointwise(const optic_conv_geom *g) {
  for (int32_t s = 0; s < g->nsp; s++) {
    if (g->k_size[s] != 1 || g->stride[s] != 1 || g->pad_lo[s] != 0 || g->lhs_dil[s] != 1 ||
        g->out_size[s] != g->in_size[s]) {
      return false;
    }
  }
  return true;
}

static optic_status plan_engine(optic_conv_plan *p) {
  const optic_conv_geom *g = &p->g;
  p->kc = g->cin;
  p->positions = g->batch;
  bool ovf = false;
  for (int32_t s = 0; s < g->nsp; s++) {
    ovf |= __builtin_mul_overflow(p->kc, g->k_size[s], &p->kc);
    ovf |= __builtin_mul_overflow(p->positions, g->out_size[s], &p->positions);
  }
  if (ovf || p->kc > INT_MAX || g->cout > INT_MAX) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED,
                      "convolution: contraction length %lld or output features %lld exceed the BLAS int range",
                      (long long)p->kc, (long long)g->cout);
  }
  build_position_walk(p);
  int64_t ost[OPTIC_CONV_MAX_SPATIAL + 1], ist[OPTIC_CONV_MAX_SPATIAL + 1];
  conv_pos_strides_out(p, ost);
  conv_pos_strides_in(p, ist);

  /* Pointwise windows read the input itself as the GEMM operand when the
   * positions of a run are uniformly strided in both input and output. */
  bool gemm = false;
  if (is_pointwise(g)) {
    int64_t olen, ostride, ilen, istride;
    int32_t ofrom = collapse_suffix(p->pos, ost, p->npos, &olen, &ostride);
    int32_t ifrom = collapse_suffix(p->pos, ist, p->npos, &ilen, &istride);
    int32_t from = ofrom > ifrom ? ofrom : ifrom;
    int64_t run = 1;
    for (int32_t d = from; d < p->npos; d++) run *= p->pos[d].size;
    int64_t min_run = p->positions < CONV_MIN_BLOCK ? p->positions : CONV_MIN_BLOCK;
    if (run >= min_run && conv_view_ok(run, g->cout, ostride, g->out_so) &&
        conv_view_ok(run, g->cin, istride, g->in_sc)) {
      gemm = true;
      p->run = run;
      p->out_run_stride = ostride;
      p->in_run_stride = istride;
      p->output_direct = true;
    }
  }
  if (gemm) {
    p->strategy = OPTIC_CONV_STRATEGY_GEMM;
    build_row_walk(p, false);
    p->block = p->run < INT_MAX ? p->run : INT_MAX;
  } else {
    p->strategy = (g->in_sc == 1 && g->cin > 1) ? OPTIC_CONV_STRATEGY_IM2COL_MK : OPTIC_CONV_STRATEGY_IM2COL_KM;
    build_row_walk(p, p->strategy == OPTIC_CONV_STRATEGY_IM2COL_MK);
    /* KM copies runs along the innermost output position dim; when the
     * innermost window dim is much longer (a kernel gradient, whose window is
     * the image and whose output is the small kernel), copy along it. */
    if (p->strategy == OPTIC_CONV_STRATEGY_IM2COL_KM && p->nrow > 0 && p->row[p->nrow - 1].which >= 0) {
      int64_t pos_run = p->npos > 0 ? p->pos[p->npos - 1].size : 1;
      if (p->row[p->nrow - 1].size >= 4 * pos_run) p->strategy = OPTIC_CONV_STRATEGY_IM2COL_MK_TAP;
    }
    int64_t block = CONV_COL_BLOCK_BYTES / (4 * (p->kc > 0 ? p->kc : 1));
    p->block = block < CONV_MIN_BLOCK ? CONV_MIN_BLOCK : block;
    int64_t len, stride;
    int32_t from = collapse_suffix(p->pos, ost, p->npos, &len, &stride);
    /* Write blocks in place when runs are long enough to hold full blocks;
     * otherwise compute into a tile and scatter (cost: one extra pass over
     * the output). */
    if (conv_view_ok(len, g->cout, stride, g->out_so) && (len >= p->block || from == 0 || len >= CONV_MIN_BLOCK)) {
      /* (a run shorter than the block but not tiny, as an NCHW image of a
       * small contraction: blocks of one run each beat the tile's scatter,
       * measured 2.3x on bench kernel/conv_class/fwd_nchw_cin1) */
      p->output_direct = true;
      p->run = len;
      p->out_run_stride = stride;
    } else {
      p->output_direct = false;
      p->run = p->positions;
    }
  }
  if (p->block > p->run) p->block = p->run > 0 ? p->run : 1;
  return OPTIC_OK;
}

/* Scratch floats per slice, overflow-checked. */
static optic_status size_scratch(optic_conv_plan *p) {
  const optic_conv_geom *g = &p->g;
  size_t col = 0, pack = 0, tile = 0;
  bool ovf = false;
  int64_t rows = p->pass == OPTIC_CONV_BACKWARD_KERNEL ? p->kchunk : p->kc;
  if (p->strategy != OPTIC_CONV_STRATEGY_GEMM && p->strategy != OPTIC_CONV_STRATEGY_DIRECT &&
      p->strategy != OPTIC_CONV_STRATEGY_GROUPED && p->strategy != OPTIC_CONV_STRATEGY_TAPS) {
    ovf |= __builtin_mul_overflow((size_t)p->block, (size_t)rows, &col);
  }
  if (!p->kernel_direct) ovf |= __builtin_mul_overflow((size_t)rows, (size_t)g->cout, &pack);
  if (!p->output_direct) ovf |= __builtin_mul_overflow((size_t)p->block, (size_t)g->cout, &tile);
  size_t per = 0, bytes = 0;
  ovf |= __builtin_add_overflow(col, pack, &per);
  ovf |= __builtin_add_overflow(per, tile, &per);
  if (p->strategy == OPTIC_CONV_STRATEGY_DIRECT) {
    per = (optic_conv_direct_packing_of(g).floats + 15) / 16 * 16;
    ovf |= __builtin_add_overflow(per, p->pk_floats, &per);
  }
  per = (per + 15) / 16 * 16; /* keep each slice 64-byte aligned relative to the scratch start */
  ovf |= __builtin_mul_overflow(per, (size_t)p->threads, &bytes);
  ovf |= __builtin_mul_overflow(bytes, sizeof(float), &bytes);
  if (ovf) return optic_fail(OPTIC_ERR_OVERFLOW, "convolution: scratch size overflows size_t");
  p->col_floats = col;
  p->pack_floats = pack;
  p->per_thread_floats = per;
  p->scratch_bytes = bytes;
  return OPTIC_OK;
}

/* The direct strategy replaces the BLAS plan of a forward pass: no col
 * block, no kernel pack, no tile; its scratch is the ring of packed input
 * rows; units are output rows. */
static void plan_direct(optic_conv_plan *p) {
  p->strategy = OPTIC_CONV_STRATEGY_DIRECT;
  p->loops_isa = optic_isa_selected();
  p->kernel_direct = p->output_direct = true;
  p->units = optic_conv_direct_units(&p->g);
  p->direct_cin_block = optic_conv_direct_packing_of(&p->g).cin_group;
}

/* The kernel strides of the direct strategy's kernel copy: [group][taps,
 * row-major over the spatial dims][in][out]. */
static void packed_kernel_strides(optic_conv_geom *g) {
  int64_t st = g->cin * g->cout;
  g->k_so = 1, g->k_si = g->cout;
  for (int32_t s = g->nsp - 1; s >= 0; s--) g->k_ss[s] = st, st *= g->k_size[s];
  g->k_sg = st;
}

/* Whether the direct strategy should run g with its kernel copied (its
 * output features strided): it fits and is preferred once copied, and the
 * copy (made by every slice on every run) is at most as large as the input
 * a slice reads. */
static bool direct_with_packed_kernel(const optic_conv_plan *p, optic_conv_geom *packed) {
  const optic_conv_geom *g = &p->g;
  if (g->k_so == 1 || g->cout <= 1) return false;
  *packed = *g;
  packed_kernel_strides(packed);
  double kernel = (double)packed->k_sg * (double)g->groups, input = (double)p->positions * (double)g->cin;
  return optic_conv_direct_unfit(packed, optic_isa_selected()) == NULL && optic_conv_direct_preferred(packed) &&
         kernel * (double)p->threads <= input;
}

/* The grouped loops likewise: units are output positions, all groups each. */
static void plan_grouped(optic_conv_plan *p, bool rows) {
  p->strategy = OPTIC_CONV_STRATEGY_GROUPED;
  p->kernel_direct = p->output_direct = true;
  p->grouped_rows = rows;
  p->units = rows ? optic_conv_grouped_rows_units(&p->g) : p->positions;
  p->grouped_simd = optic_conv_grouped_simd_fits(&p->g, rows, optic_isa_selected());
  if (!p->grouped_simd && !rows && optic_conv_grouped_dots_fits(&p->g, optic_isa_selected())) {
    p->grouped_dots = true;
    p->units = p->g.groups * p->g.batch;
  }
}

/* The window-tap loops likewise: units are output positions. */
static void plan_taps(optic_conv_plan *p) {
  p->strategy = OPTIC_CONV_STRATEGY_TAPS;
  p->loops_isa = optic_isa_selected();
  p->kernel_direct = p->output_direct = true;
  p->units = p->positions;
}

/* Loops that replace the BLAS plan where they are preferred (or forced):
 * grouped, direct, window taps. */
static optic_status choose_loops(optic_conv_plan *p, optic_conv_pass pass, int32_t strategy) {
  if (pass == OPTIC_CONV_FORWARD && strategy == 0 && optic_conv_grouped_preferred(&p->g)) {
    plan_grouped(p, false);
  } else if (pass == OPTIC_CONV_FORWARD && strategy == 0 && optic_conv_grouped_rows_preferred(&p->g)) {
    plan_grouped(p, true);
  } else if (pass == OPTIC_CONV_FORWARD && strategy == 0 && optic_conv_grouped_strided_preferred(&p->g)) {
    plan_grouped(p, false);
  } else if (pass == OPTIC_CONV_FORWARD || strategy != 0) {
    const char *unfit = pass != OPTIC_CONV_FORWARD ? "it runs the forward pass only"
                                                   : optic_conv_direct_unfit(&p->g, optic_isa_selected());
    if (strategy == OPTIC_CONV_STRATEGY_DIRECT && unfit != NULL) {
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "convolution: plan: the direct strategy cannot run this pass: %s",
                        unfit);
    }
    optic_conv_geom packed;
    if (unfit == NULL && (strategy == OPTIC_CONV_STRATEGY_DIRECT || optic_conv_direct_preferred(&p->g))) {
      plan_direct(p);
    } else if (pass == OPTIC_CONV_FORWARD && strategy == 0 && direct_with_packed_kernel(p, &packed)) {
      p->direct_kernel_pack = true;
      p->pk_si = p->g.k_si, p->pk_so = p->g.k_so, p->pk_sg = p->g.k_sg;
      memcpy(p->pk_ss, p->g.k_ss, sizeof p->pk_ss);
      p->pk_floats = (size_t)(packed.k_sg * packed.groups);
      p->g = packed;
      plan_direct(p);
    }
    /* A window larger than the output grid that the direct loops do not take
     * (a kernel gradient: its input features are the strided batch). */
    if (p->strategy != OPTIC_CONV_STRATEGY_DIRECT && pass == OPTIC_CONV_FORWARD && strategy == 0 &&
        optic_conv_taps_unfit(&p->g, optic_isa_selected()) == NULL && optic_conv_taps_preferred(&p->g)) {
      plan_taps(p);
    }
  }
  return OPTIC_OK;
}

optic_status optic_conv_plan_make(const optic_conv_desc *d, optic_conv_pass pass, int32_t threads,
                                  optic_conv_plan *out) {
  return optic_conv_plan_make_strategy(d, pass, threads, 0, out);
}

optic_status optic_conv_plan_make_strategy(const optic_conv_desc *d, optic_conv_pass pass, int32_t threads,
                                           int32_t strategy, optic_conv_plan *out) {
  if (strategy != 0 && strategy != OPTIC_CONV_STRATEGY_DIRECT) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: plan: strategy %d cannot be forced (only 0 or %d)",
                      (int)strategy, OPTIC_CONV_STRATEGY_DIRECT);
  }
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: plan: out is NULL");
  if (pass != OPTIC_CONV_FORWARD && pass != OPTIC_CONV_BACKWARD_INPUT && pass != OPTIC_CONV_BACKWARD_KERNEL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: plan: unknown pass %d", (int)pass);
  }
  if (threads < 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "convolution: plan: threads is %d, must be >= 1", threads);
  optic_conv_plan p;
  memset(&p, 0, sizeof p);
  optic_shape oshape;
  optic_status st = optic_conv_infer_shape(d, &oshape);
  if (st != OPTIC_OK) return st;
  p.pass = pass;
  p.threads = threads;
  p.result_shape = pass == OPTIC_CONV_FORWARD ? oshape : pass == OPTIC_CONV_BACKWARD_INPUT ? d->input : d->kernel;
  optic_conv_geom fwd;
  forward_geometry(d, &oshape, &fwd);
  if (pass == OPTIC_CONV_BACKWARD_INPUT) {
    backward_input_geometry(&fwd, &p.g);
  } else {
    p.g = fwd;
    if (pass == OPTIC_CONV_FORWARD) drop_single_tap_dims(&p.g);
  }
  st = plan_engine(&p);
  if (st != OPTIC_OK) return st;
  if (pass == OPTIC_CONV_BACKWARD_KERNEL) {
    /* Threads split the gradient's rows, so each accumulates its own rows over
     * all positions and no reduction between threads is needed. */
    int64_t chunks = (threads + p.g.groups - 1) / p.g.groups;
    if (chunks > p.kc) chunks = p.kc > 0 ? p.kc : 1;
    p.kchunk = p.kc > 0 ? (p.kc + chunks - 1) / chunks : 0;
    p.units = p.g.groups * chunks;
    if (p.strategy != OPTIC_CONV_STRATEGY_GEMM) {
      int64_t block = CONV_COL_BLOCK_BYTES / (4 * (p.kchunk > 0 ? p.kchunk : 1));
      p.block = block < CONV_MIN_BLOCK ? CONV_MIN_BLOCK : block;
      if (p.block > p.run) p.block = p.run > 0 ? p.run : 1;
    }
  } else {
    p.units = p.g.groups * p.positions;
  }
  st = choose_loops(&p, pass, strategy);
  if (st != OPTIC_OK) return st;
  size_t ein = 0, ek = 0, eo = 0;
  optic_shape_elements(&d->input, &ein);
  optic_shape_elements(&d->kernel, &ek);
  optic_shape_elements(&oshape, &eo);
  if (pass == OPTIC_CONV_FORWARD) {
    p.operand_elems[0] = ein, p.operand_elems[1] = ek, p.operand_elems[2] = eo;
  } else if (pass == OPTIC_CONV_BACKWARD_INPUT) {
    p.operand_elems[0] = eo, p.operand_elems[1] = ek, p.operand_elems[2] = ein;
  } else {
    p.operand_elems[0] = ein, p.operand_elems[1] = eo, p.operand_elems[2] = ek;
  }
  st = size_scratch(&p);
  if (st != OPTIC_OK) return st;
  *out = p;
  return OPTIC_OK;
}
