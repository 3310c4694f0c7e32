/* Runtime of dynamic-slice and dynamic-update-slice: the start indices are
 * read and clamped as XLA does (graph_dynamic_starts) when the step runs;
 * each thread then writes only its share of the result, so no barrier is
 * needed inside the step. */
#include <string.h>

#include "exec/exec_internal.h"
#include "graph/gather_scatter.h"

static void row_major_strides(const optic_shape *s, int64_t *st) {
  int64_t v = 1;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    st[d] = v;
    v *= s->dims[d];
  }
}

static void clamped_starts(const exec_step *s, const exec_frame *f, int32_t first, const int64_t *window,
                           int64_t *start) {
  const void *idx[OPTIC_MAX_RANK];
  int32_t n = s->n_operands - first;
  for (int32_t i = 0; i < n && i < OPTIC_MAX_RANK; i++) idx[i] = ref_ptr(f, &s->in[s->in_first[first + i]]);
  const optic_shape *xs = &s->operand_shape[0];
  graph_dynamic_starts(idx, n, s->operand_dtype[first], xs->rank, xs->dims, window, start);
}

/* The walk over a window of shape win at start inside an array of shape big. */
static exec_walk window_walk(const optic_shape *big, const int64_t *start, const optic_shape *win) {
  int64_t st[OPTIC_MAX_RANK];
  row_major_strides(big, st);
  exec_walk w = {.rank = win->rank};
  for (int32_t d = 0; d < win->rank; d++) {
    w.dims[d] = win->dims[d];
    w.strides[d] = st[d];
    w.base += start[d] * st[d];
  }
  return w;
}

/* Offset (in elements of the big array) of window element k. */
static int64_t walk_at(const exec_walk *w, size_t k) {
  int64_t off = w->base;
  for (int32_t d = w->rank - 1; d >= 0; d--) {
    size_t dim = (size_t)w->dims[d];
    off += (int64_t)(k % dim) * w->strides[d];
    k /= dim;
  }
  return off;
}

/* First window element whose offset is >= target (offsets grow with k). */
static size_t first_at_or_after(const exec_walk *w, size_t n, int64_t target) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (walk_at(w, mid) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

typedef struct scatter_ctx {
  const ew_prog *prog;
  unsigned char *regs;
  size_t es;
} scatter_ctx;

static optic_status scatter_combine(void *ctx, void *dst, const void *update) {
  const scatter_ctx *c = ctx;
  uint64_t tmp = 0;
  const void *inputs[2] = {dst, update};
  void *outs[1] = {&tmp};
  ew_run_block(c->prog, inputs, 0, outs, 0, 1, c->regs);
  memcpy(dst, &tmp, c->es);
  return OPTIC_OK;
}

/* scatter: thread 0 alone, so duplicate indices combine in the updates'
 * order, as in the evaluator (the barrier placement orders later readers). */
static optic_status run_scatter(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  if (th->t != 0) return OPTIC_OK;
  size_t es = optic_dtype_size(s->type->dtype);
  unsigned char *y = ref_ptr(f, &s->out[0]);
  const unsigned char *x = ref_ptr(f, &s->in[s->in_first[0]]);
  if (y != x && s->out[0].size) memcpy(y, x, s->out[0].size);
  graph_index_array ix = {s->operand_dtype[1], &s->operand_shape[1], ref_ptr(f, &s->in[s->in_first[1]])};
  scatter_ctx c = {s->prog, th->regs, es};
  return graph_scatter_run(&s->attrs.scatter, es, &s->type->shape, y, &ix, &s->operand_shape[2],
                           ref_ptr(f, &s->in[s->in_first[2]]), scatter_combine, &c);
}

typedef struct sort_ctx {
  const ew_prog *prog;
  unsigned char *regs;
} sort_ctx;

static optic_status sort_less(void *ctx, const void *const *args, bool *before) {
  const sort_ctx *c = ctx;
  uint8_t r = 0;
  void *outs[1] = {&r};
  ew_run_block(c->prog, args, 0, outs, 0, 1, c->regs);
  *before = r != 0;
  return OPTIC_OK;
}

/* sort: slices split across threads, each with its own position scratch. */
static optic_status run_sort(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  int32_t n = s->n_operands, dim = (int32_t)s->attrs.sort.dimension;
  if (th->t >= s->sort_threads) {
    return optic_fail(OPTIC_ERR_INTERNAL, "sort %s: thread %d has no scratch (%d planned)", s->name, th->t,
                      s->sort_threads);
  }
  const void *ins[32];
  void *outs[32];
  for (int32_t k = 0; k < n && k < 32; k++) {
    ins[k] = ref_ptr(f, &s->in[s->in_first[k]]);
    outs[k] = ref_ptr(f, &s->out[k]);
  }
  size_t lo, hi;
  exec_share(graph_sort_slices(&s->operand_shape[0], dim), th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  sort_ctx c = {s->prog, th->regs};
  graph_sort_io io = {n, dim, &s->operand_shape[0], s->operand_dtype, ins, outs, sort_less, &c};
  int64_t *scratch = (int64_t *)(void *)(th->scratch + s->scratch_offset + (size_t)th->t * s->sort_scratch);
  return graph_sort_run(&io, lo, hi, scratch);
}

/* topk: rows split across threads, scratch as for sort. */
static optic_status run_topk(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  if (th->t >= s->sort_threads) {
    return optic_fail(OPTIC_ERR_INTERNAL, "topk %s: thread %d has no scratch (%d planned)", s->name, th->t,
                      s->sort_threads);
  }
  const optic_shape *xs = &s->operand_shape[0];
  int64_t len = xs->dims[xs->rank - 1];
  size_t rows = len ? s->operand_elems[0] / (size_t)len : 0, lo, hi;
  exec_share(rows, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  int64_t *scratch = (int64_t *)(void *)(th->scratch + s->scratch_offset + (size_t)th->t * s->sort_scratch);
  return graph_topk_run(s->operand_dtype[0], xs, ref_ptr(f, &s->in[s->in_first[0]]), s->attrs.topk.k,
                        s->attrs.topk.largest, ref_ptr(f, &s->out[0]), ref_ptr(f, &s->out[1]), lo, hi, scratch);
}

size_t exec_batch_norm_scratch_bytes(int64_t features) {
  return GRAPH_BATCH_NORM_SCRATCH(features + 1) * sizeof(double);
}

optic_status exec_op_dynamic(const exec_step *s, const exec_frame *f, const exec_thread *th) {
  if (s->op == OPTIC_OP_SCATTER) return run_scatter(s, f, th);
  if (s->op == OPTIC_OP_TOPK) return run_topk(s, f, th);
  if (s->op == OPTIC_OP_BATCH_NORM_TRAINING || s->op == OPTIC_OP_BATCH_NORM_INFERENCE ||
      s->op == OPTIC_OP_BATCH_NORM_GRAD) {
    if (th->t != 0) return OPTIC_OK; /* one thread, in the evaluator's order */
    const void *ins[5];
    void *outs[3] = {NULL, NULL, NULL};
    for (int32_t k = 0; k < s->n_operands && k < 5; k++) ins[k] = ref_ptr(f, &s->in[s->in_first[k]]);
    for (int32_t k = 0; k < s->n_out && k < 3; k++) outs[k] = ref_ptr(f, &s->out[k]);
    const optic_attrs_batch_norm *bn = &s->attrs.batch_norm;
    graph_batch_norm_run(s->op, s->operand_dtype[0], &s->operand_shape[0], bn->feature_index, bn->epsilon, ins, outs,
                         (double *)(void *)(th->scratch + s->scratch_offset));
    return OPTIC_OK;
  }
  if (s->op == OPTIC_OP_SORT) return run_sort(s, f, th);
  const optic_shape *os = &s->type->shape;
  size_t es = optic_dtype_size(s->type->dtype), n = 1, lo, hi;
  for (int32_t d = 0; d < os->rank; d++) n *= (size_t)os->dims[d];
  exec_share(n, th->t, th->nt, &lo, &hi);
  if (lo >= hi) return OPTIC_OK;
  unsigned char *y = ref_ptr(f, &s->out[0]);
  const unsigned char *x = ref_ptr(f, &s->in[s->in_first[0]]);
  int64_t start[OPTIC_MAX_RANK];
  if (s->op == OPTIC_OP_GATHER) {
    graph_index_array ix = {s->operand_dtype[1], &s->operand_shape[1], ref_ptr(f, &s->in[s->in_first[1]])};
    graph_gather_run(&s->attrs.gather, es, &s->operand_shape[0], x, &ix, os, y, lo, hi);
    return OPTIC_OK;
  }
  if (s->op == OPTIC_OP_DYNAMIC_SLICE) {
    clamped_starts(s, f, 1, os->dims, start);
    exec_walk w = window_walk(&s->operand_shape[0], start, os);
    walk_gather(&w, es, x, lo, hi - lo, y + lo * es);
    return OPTIC_OK;
  }
  /* dynamic-update-slice: this thread's share of the operand, then the
   * update elements that land in the share (a contiguous run of them, as
   * their offsets grow with their index). */
  const optic_shape *us = &s->operand_shape[1];
  const unsigned char *u = ref_ptr(f, &s->in[s->in_first[1]]);
  if (y != x) memcpy(y + lo * es, x + lo * es, (hi - lo) * es);
  size_t nu = 1;
  for (int32_t d = 0; d < us->rank; d++) nu *= (size_t)us->dims[d];
  if (nu == 0) return OPTIC_OK;
  clamped_starts(s, f, 2, us->dims, start);
  exec_walk w = window_walk(os, start, us);
  size_t k0 = first_at_or_after(&w, nu, (int64_t)lo), k1 = first_at_or_after(&w, nu, (int64_t)hi);
  if (k0 < k1) walk_scatter(&w, es, u + k0 * es, k0, k1 - k0, y);
  return OPTIC_OK;
}
