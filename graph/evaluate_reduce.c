/* Reference evaluation of ops that apply a computation to scalars: reduce,
 * reduce-window, map. The computation runs through the interpreter on
 * scalar literals; a combiner that is one binary op of its two parameters
 * takes a fast path through the same elementwise code, so both paths give
 * bitwise the same results. Folds run in a fixed order (docs/graph-evaluate.md). */
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"
#include "graph/gather_scatter.h"
#include "kernels/reduce.h"

/* A computation applied to scalars: nparams argument literals reused for
 * every call (their bytes are overwritten each time). */
typedef struct scalar_fn {
  eval_ctx *ctx;
  optic_comp_id comp;
  const eval_plan *plan;
  int32_t nparams;
  optic_literal_t **args;
} scalar_fn;

static void scalar_fn_free(scalar_fn *f) {
  for (int32_t i = 0; f->args && i < f->nparams; i++) lit_free(f->args[i]);
  free(f->args);
  f->args = NULL;
}

static optic_status scalar_fn_init(scalar_fn *f, eval_ctx *ctx, optic_comp_id comp) {
  memset(f, 0, sizeof *f);
  f->ctx = ctx;
  f->comp = comp;
  optic_status st = eval_get_plan(ctx, comp, &f->plan);
  if (st != OPTIC_OK) return st;
  const optic_computation *c = &ctx->m->comps[comp];
  f->nparams = c->n_params;
  f->args = calloc((size_t)(f->nparams > 0 ? f->nparams : 1), sizeof *f->args);
  if (f->args == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory");
  for (int32_t i = 0; i < f->nparams && st == OPTIC_OK; i++) {
    st = lit_new(&ctx->m->instrs[c->params[i]].type, &f->args[i]);
  }
  if (st != OPTIC_OK) scalar_fn_free(f);
  return st;
}

/* outputs[i] = result i of comp(inputs...), each a pointer to one element's
 * bytes; outputs may alias inputs. */
static optic_status scalar_fn_call(scalar_fn *f, const void *const *inputs, void *const *outputs, int32_t nout) {
  if (f->plan->fast) {
    const void *a = inputs[f->plan->fast_swapped ? 1 : 0], *b = inputs[f->plan->fast_swapped ? 0 : 1];
    return eval_binary_raw(f->plan->fast_op, f->args[0]->type.dtype, 1, a, b, outputs[0]);
  }
  for (int32_t i = 0; i < f->nparams; i++) memcpy(f->args[i]->data, inputs[i], f->args[i]->bytes);
  optic_literal_t *r;
  optic_status st = eval_computation(f->ctx, f->comp, (const optic_literal_t *const *)f->args, f->nparams, &r);
  if (st != OPTIC_OK) return st;
  for (int32_t i = 0; i < nout; i++) {
    const optic_literal_t *e = optic_type_is_tuple(&r->type) ? r->elements[i] : r;
    memcpy(outputs[i], e->data, e->bytes);
  }
  lit_free(r);
  return OPTIC_OK;
}

/* The n output arrays of a reduce-like instruction (y itself when n == 1). */
static optic_literal_t *output_array(optic_literal_t *y, int32_t i) {
  return optic_type_is_tuple(&y->type) ? y->elements[i] : y;
}

#define MAX_REDUCE_INPUTS 64

/* Whether reduce `in` folds in the fixed order of the reduction kernels: one
 * f32 input whose combiner is add(p0, p1) or multiply(p0, p1) (the runtime's
 * fast reducers, exec/bind.c). */
static bool kernel_ordered(const scalar_fn *f, const optic_instr *in, const optic_literal_t *const *ops) {
  return in->n_operands == 2 && f->plan->fast && !f->plan->fast_swapped && ops[0]->type.dtype == OPTIC_F32 &&
         (f->plan->fast_op == OPTIC_OP_ADD || f->plan->fast_op == OPTIC_OP_MULTIPLY);
}

/* y[j] = init op R(x_j): x_j the output's reduced elements in row-major order
 * of the reduced dims, R the contiguous kernels' evaluation order
 * (kernels/reduce.h; the scalar kernel, bitwise every ISA's). */
static optic_status reduce_kernel_ordered(const scalar_fn *f, const optic_literal_t *x, const optic_literal_t *init,
                                          int32_t nk, const int64_t *kdims, const int64_t *kst, int32_t nr,
                                          const int64_t *rdims, const int64_t *rst, size_t red_count,
                                          optic_literal_t *y) {
  const bool add = f->plan->fast_op == OPTIC_OP_ADD;
  optic_f32_reduce_fn fn = optic_reduce_kernels_for(OPTIC_ISA_SCALAR)->r[add ? OPTIC_REDUCE_SUM : OPTIC_REDUCE_PROD];
  float *seq = malloc((red_count ? red_count : 1) * sizeof *seq);
  if (seq == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "evaluate: out of memory");
  const float *xs = x->data;
  float *ys = y->data, iv;
  memcpy(&iv, init->data, sizeof iv);
  size_t out_count = lit_elements(y);
  int64_t kidx[OPTIC_MAX_RANK] = {0};
  for (size_t j = 0; j < out_count; j++, eval_next_index(nk, kdims, kidx)) {
    int64_t base = 0;
    for (int32_t d = 0; d < nk; d++) base += kidx[d] * kst[d];
    int64_t ridx[OPTIC_MAX_RANK] = {0};
    for (size_t r = 0; r < red_count; r++, eval_next_index(nr, rdims, ridx)) {
      int64_t off = base;
      for (int32_t d = 0; d < nr; d++) off += ridx[d] * rst[d];
      seq[r] = xs[off];
    }
    const float v = fn(red_count, seq);
    ys[j] = add ? iv + v : iv * v;
  }
  free(seq);
  return OPTIC_OK;
}

optic_status eval_reduce(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                         optic_literal_t **out) {
  int32_t n = in->n_operands / 2;
  const optic_shape *s = &ops[0]->type.shape;
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < in->n_ints; i++) reduced[in->ints[i]] = true;
  /* Kept and reduced dims, each in increasing order, with input strides. */
  int64_t st_in[OPTIC_MAX_RANK], kdims[OPTIC_MAX_RANK], kst[OPTIC_MAX_RANK], rdims[OPTIC_MAX_RANK], rst[OPTIC_MAX_RANK];
  int32_t nk = 0, nr = 0;
  optic_shape_strides(s, st_in);
  size_t red_count = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (reduced[d]) {
      rdims[nr] = s->dims[d], rst[nr++] = st_in[d];
      red_count *= (size_t)s->dims[d];
    } else {
      kdims[nk] = s->dims[d], kst[nk++] = st_in[d];
    }
  }
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  scalar_fn f;
  if ((st = scalar_fn_init(&f, ctx, in->calls[0])) != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  if (kernel_ordered(&f, in, ops)) {
    st = reduce_kernel_ordered(&f, ops[0], ops[1], nk, kdims, kst, nr, rdims, rst, red_count, y);
    scalar_fn_free(&f);
    if (st != OPTIC_OK) {
      lit_free(y);
      return st;
    }
    *out = y;
    return OPTIC_OK;
  }
  size_t es[MAX_REDUCE_INPUTS], out_count = lit_elements(output_array(y, 0));
  for (int32_t i = 0; i < n; i++) es[i] = optic_dtype_size(ops[i]->type.dtype);
  const void *args[2 * MAX_REDUCE_INPUTS];
  void *acc[MAX_REDUCE_INPUTS];
  int64_t kidx[OPTIC_MAX_RANK] = {0};
  for (size_t j = 0; j < out_count && st == OPTIC_OK; j++, eval_next_index(nk, kdims, kidx)) {
    int64_t base = 0;
    for (int32_t d = 0; d < nk; d++) base += kidx[d] * kst[d];
    for (int32_t i = 0; i < n; i++) {
      acc[i] = (unsigned char *)output_array(y, i)->data + j * es[i];
      memcpy(acc[i], ops[n + i]->data, es[i]);
      args[i] = acc[i];
    }
    int64_t ridx[OPTIC_MAX_RANK] = {0};
    for (size_t r = 0; r < red_count && st == OPTIC_OK; r++, eval_next_index(nr, rdims, ridx)) {
      int64_t off = base;
      for (int32_t d = 0; d < nr; d++) off += ridx[d] * rst[d];
      for (int32_t i = 0; i < n; i++) args[n + i] = (const unsigned char *)ops[i]->data + off * (int64_t)es[i];
      st = scalar_fn_call(&f, args, acc, n);
    }
  }
  scalar_fn_free(&f);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

/* One window dim, read from the attribute layout (graph/internal.h). */
typedef struct window_dim {
  int64_t size, stride, pad_low, base_dilation, window_dilation, dilated_in;
  bool reversal;
} window_dim;

optic_status eval_reduce_window(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                                optic_literal_t **out) {
  int32_t n = in->n_operands / 2;
  const optic_shape *s = &ops[0]->type.shape;
  int32_t rank = s->rank;
  window_dim w[OPTIC_MAX_RANK];
  int64_t wsize[OPTIC_MAX_RANK], st_in[OPTIC_MAX_RANK];
  optic_shape_strides(s, st_in);
  const optic_shape *os = optic_type_is_tuple(&in->type) ? &in->type.elements[0].shape : &in->type.shape;
  for (int32_t d = 0; d < rank; d++) {
    const int64_t *e = &in->ints[7 * d];
    w[d] = (window_dim){.size = e[0],
                        .stride = e[1],
                        .pad_low = e[2],
                        .base_dilation = e[4],
                        .window_dilation = e[5],
                        .reversal = e[6] != 0};
    wsize[d] = e[0];
    /* Positions reached: (out - 1) * stride + (size - 1) * dilation - pad_low,
     * and the dilated input; both must fit in int64 (the builder bounds each
     * factor by 2^40, not their products). */
    int64_t a, b, c;
    if (__builtin_mul_overflow(s->dims[d] > 0 ? s->dims[d] - 1 : 0, w[d].base_dilation, &w[d].dilated_in) ||
        __builtin_mul_overflow(os->dims[d] > 0 ? os->dims[d] - 1 : 0, w[d].stride, &a) ||
        __builtin_mul_overflow(w[d].size - 1, w[d].window_dilation, &b) || __builtin_add_overflow(a, b, &c) ||
        __builtin_add_overflow(c, w[d].pad_low > 0 ? 0 : -w[d].pad_low, &c)) {
      return optic_fail(OPTIC_ERR_OVERFLOW, "reduce-window: window positions of dim %d overflow int64", (int)d);
    }
    if (s->dims[d] > 0) w[d].dilated_in += 1;
  }
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  scalar_fn f;
  if ((st = scalar_fn_init(&f, ctx, in->calls[0])) != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  size_t es[MAX_REDUCE_INPUTS], out_count = lit_elements(output_array(y, 0)), win_count = 1;
  for (int32_t d = 0; d < rank; d++) win_count *= (size_t)wsize[d];
  for (int32_t i = 0; i < n; i++) es[i] = optic_dtype_size(ops[i]->type.dtype);
  const void *args[2 * MAX_REDUCE_INPUTS];
  void *acc[MAX_REDUCE_INPUTS];
  int64_t oidx[OPTIC_MAX_RANK] = {0};
  for (size_t j = 0; j < out_count && st == OPTIC_OK; j++, eval_next_index(rank, os->dims, oidx)) {
    for (int32_t i = 0; i < n; i++) {
      acc[i] = (unsigned char *)output_array(y, i)->data + j * es[i];
      memcpy(acc[i], ops[n + i]->data, es[i]);
      args[i] = acc[i];
    }
    int64_t k[OPTIC_MAX_RANK] = {0};
    for (size_t r = 0; r < win_count && st == OPTIC_OK; r++, eval_next_index(rank, wsize, k)) {
      /* Position in the base-dilated, padded input; padding and dilation
       * holes hold the init value (StableHLO's reduce_window). */
      int64_t off = 0;
      bool inside = true;
      for (int32_t d = 0; d < rank && inside; d++) {
        int64_t kk = w[d].reversal ? w[d].size - 1 - k[d] : k[d];
        int64_t x = oidx[d] * w[d].stride + kk * w[d].window_dilation - w[d].pad_low;
        inside = x >= 0 && x < w[d].dilated_in && x % w[d].base_dilation == 0;
        off += inside ? (x / w[d].base_dilation) * st_in[d] : 0;
      }
      for (int32_t i = 0; i < n; i++) {
        args[n + i] = inside ? (const unsigned char *)ops[i]->data + off * (int64_t)es[i] : ops[n + i]->data;
      }
      st = scalar_fn_call(&f, args, acc, n);
    }
  }
  scalar_fn_free(&f);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

optic_status eval_map(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out) {
  int32_t n = in->n_operands;
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  scalar_fn f;
  if ((st = scalar_fn_init(&f, ctx, in->calls[0])) != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  size_t count = lit_elements(y), es_out = optic_dtype_size(y->type.dtype), es[MAX_REDUCE_INPUTS];
  if (f.plan->fast && n == 2) {
    /* The whole arrays at once: the same elementwise code, in the same order. */
    const optic_literal_t *a = ops[f.plan->fast_swapped ? 1 : 0], *b = ops[f.plan->fast_swapped ? 0 : 1];
    st = eval_binary_raw(f.plan->fast_op, a->type.dtype, count, a->data, b->data, y->data);
  } else {
    for (int32_t k = 0; k < n; k++) es[k] = optic_dtype_size(ops[k]->type.dtype);
    const void *args[MAX_REDUCE_INPUTS];
    for (size_t i = 0; i < count && st == OPTIC_OK; i++) {
      for (int32_t k = 0; k < n; k++) args[k] = (const unsigned char *)ops[k]->data + i * es[k];
      void *dst = (unsigned char *)y->data + i * es_out;
      st = scalar_fn_call(&f, args, &dst, 1);
    }
  }
  scalar_fn_free(&f);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

/* ------------------------------------------------------------ scatter */

static optic_status scatter_combine(void *ctx, void *dst, const void *update) {
  const void *in[2] = {dst, update};
  void *out[1] = {dst};
  return scalar_fn_call(ctx, in, out, 1);
}

optic_status eval_scatter(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out) {
  optic_scatter_dims g;
  optic_node_scatter_dims(ctx->m, (optic_node_id)(in - ctx->m->instrs), &g);
  optic_literal_t *y;
  optic_status st = lit_clone(ops[0], &y);
  if (st != OPTIC_OK) return st;
  scalar_fn f;
  if ((st = scalar_fn_init(&f, ctx, in->calls[0])) != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  graph_index_array ix = {ops[1]->type.dtype, &ops[1]->type.shape, ops[1]->data};
  st = graph_scatter_run(&g, optic_dtype_size(y->type.dtype), &y->type.shape, y->data, &ix, &ops[2]->type.shape,
                         ops[2]->data, scatter_combine, &f);
  scalar_fn_free(&f);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}

/* ------------------------------------------------------------ sort */

static optic_status sort_less(void *ctx, const void *const *args, bool *before) {
  uint8_t r = 0;
  void *out[1] = {&r};
  optic_status st = scalar_fn_call(ctx, args, out, 1);
  *before = r != 0;
  return st;
}

optic_status eval_sort(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out) {
  int32_t n = in->n_operands, dim = (int32_t)in->ints[0];
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  const optic_shape *s = &ops[0]->type.shape;
  int64_t *scratch = malloc(2 * (size_t)(s->dims[dim] > 0 ? s->dims[dim] : 1) * sizeof *scratch);
  scalar_fn f;
  if (scratch == NULL || (st = scalar_fn_init(&f, ctx, in->calls[0])) != OPTIC_OK) {
    free(scratch);
    lit_free(y);
    return scratch == NULL ? optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "sort: out of memory") : st;
  }
  const void *ins[32];
  void *outs[32];
  optic_dtype dts[32];
  for (int32_t k = 0; k < n; k++) {
    ins[k] = ops[k]->data;
    outs[k] = output_array(y, k)->data;
    dts[k] = ops[k]->type.dtype;
  }
  graph_sort_io io = {n, dim, s, dts, ins, outs, sort_less, &f};
  st = graph_sort_run(&io, 0, graph_sort_slices(s, dim), scratch);
  scalar_fn_free(&f);
  free(scratch);
  if (st != OPTIC_OK) {
    lit_free(y);
    return st;
  }
  *out = y;
  return OPTIC_OK;
}
