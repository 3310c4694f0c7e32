/* sort's element movement, shared by the evaluator and the runtime: each
 * 1-D slice along the sort dimension is ordered by a stable bottom-up merge
 * sort of positions (the comparator decides "lhs before rhs"), then every
 * operand's slice is written out in that order. Never allocates: the caller
 * provides 2 x slice-length positions of scratch. */
#include "graph/gather_scatter.h"

#include "graph/internal.h"

#include <string.h>

typedef struct slice_view {
  const graph_sort_io *io;
  size_t base, stride; /* element offset of the slice's position 0, and the step between positions */
} slice_view;

/* less(a, b) through the comparator: args lhs0, rhs0, lhs1, rhs1, ... */
static optic_status before(const slice_view *v, int64_t a, int64_t b, bool *out) {
  const graph_sort_io *io = v->io;
  const void *args[64];
  for (int32_t k = 0; k < io->n; k++) {
    size_t es = optic_dtype_size(io->dtype[k]);
    args[2 * k] = (const unsigned char *)io->in[k] + (v->base + (size_t)a * v->stride) * es;
    args[2 * k + 1] = (const unsigned char *)io->in[k] + (v->base + (size_t)b * v->stride) * es;
  }
  return io->less(io->ctx, args, out);
}

/* Stable: on a tie (neither before the other) the left run's element goes first. */
static optic_status merge_sort(const slice_view *v, int64_t len, int64_t *perm, int64_t *tmp) {
  for (int64_t i = 0; i < len; i++) perm[i] = i;
  for (int64_t width = 1; width < len; width *= 2) {
    for (int64_t lo = 0; lo < len; lo += 2 * width) {
      int64_t mid = lo + width < len ? lo + width : len, hi = lo + 2 * width < len ? lo + 2 * width : len;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        bool b_first;
        optic_status st = before(v, perm[j], perm[i], &b_first);
        if (st != OPTIC_OK) return st;
        tmp[k++] = b_first ? perm[j++] : perm[i++];
      }
      while (i < mid) tmp[k++] = perm[i++];
      while (j < hi) tmp[k++] = perm[j++];
    }
    memcpy(perm, tmp, (size_t)len * sizeof *perm);
  }
  return OPTIC_OK;
}

optic_status graph_sort_run(const graph_sort_io *io, size_t lo, size_t hi, int64_t *scratch) {
  const optic_shape *s = io->shape;
  int64_t len = s->dims[io->dim];
  size_t stride = 1, outer = 1;
  for (int32_t d = io->dim + 1; d < s->rank; d++) stride *= (size_t)s->dims[d];
  for (int32_t d = 0; d < io->dim; d++) outer *= (size_t)s->dims[d];
  (void)outer;
  int64_t *perm = scratch, *tmp = scratch + len;
  for (size_t q = lo; q < hi; q++) { /* slice q: outer index q / stride, inner q % stride */
    slice_view v = {io, (q / stride) * (size_t)len * stride + q % stride, stride};
    optic_status st = merge_sort(&v, len, perm, tmp);
    if (st != OPTIC_OK) return st;
    for (int32_t k = 0; k < io->n; k++) {
      size_t es = optic_dtype_size(io->dtype[k]);
      const unsigned char *x = io->in[k];
      unsigned char *y = io->out[k];
      for (int64_t i = 0; i < len; i++) {
        memcpy(y + (v.base + (size_t)i * stride) * es, x + (v.base + (size_t)perm[i] * stride) * es, es);
      }
    }
  }
  return OPTIC_OK;
}

size_t graph_sort_slices(const optic_shape *s, int32_t dim) {
  size_t n = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (d != dim) n *= (size_t)s->dims[d];
  }
  return s->dims[dim] == 0 ? 0 : n;
}

/* ------------------------------------------------------------ topk */

/* XLA's float total order (comparators.h): -NaN < -inf < ... < -0 < 0 < ... < inf < NaN,
 * as an integer key: a negative float's magnitude bits are flipped, so the
 * bits read as a signed integer order as the values do; integers compare as
 * themselves. */
static int64_t order_key(optic_dtype dt, const void *p) {
  if (dt == OPTIC_F32) {
    int32_t v;
    memcpy(&v, p, 4);
    return v ^ ((v >> 31) & INT32_MAX);
  }
  if (dt == OPTIC_F64) {
    int64_t v;
    memcpy(&v, p, 8);
    return v ^ ((v >> 63) & INT64_MAX);
  }
  if (dt == OPTIC_BF16 || dt == OPTIC_F16) {
    int16_t v;
    memcpy(&v, p, 2);
    int32_t w = v;
    return w ^ ((w >> 31) & INT16_MAX);
  }
  if (dt == OPTIC_PRED) return *(const uint8_t *)p != 0;
  return graph_load_index(dt, p);
}

/* keys[i] = order_key(x[i]) for a block, one loop per float type so that the
 * compiler vectorizes the common cases. */
static void block_keys(optic_dtype dt, const void *x, size_t n, int64_t *keys) {
  if (dt == OPTIC_BF16 || dt == OPTIC_F16) {
    const int16_t *h = x;
    for (size_t i = 0; i < n; i++) {
      int32_t w = h[i];
      keys[i] = w ^ ((w >> 31) & INT16_MAX);
    }
  } else if (dt == OPTIC_F32) {
    const int32_t *f = x;
    for (size_t i = 0; i < n; i++) keys[i] = f[i] ^ ((f[i] >> 31) & INT32_MAX);
  } else {
    size_t es = optic_dtype_size(dt);
    for (size_t i = 0; i < n; i++) keys[i] = order_key(dt, (const unsigned char *)x + i * es);
  }
}

typedef struct topk_ctx {
  optic_dtype dt;
  bool largest;
} topk_ctx;

static optic_status topk_less(void *ctx, const void *const *args, bool *before) {
  const topk_ctx *c = ctx;
  int64_t a = order_key(c->dt, args[0]), b = order_key(c->dt, args[1]);
  *before = c->largest ? a > b : a < b;
  return OPTIC_OK;
}

enum { TOPK_SELECT_MAX = 64, TOPK_BLOCK = 256 };

/* The first k of one row in topk order by selection: a sorted list of the best
 * k so far; an element enters only when strictly better than the list's last
 * (an equal key came later, so the earlier index keeps its place), and a
 * block whose best key cannot enter is skipped whole. Keys are negated for
 * smallest-first, so "better" is always "greater". */
static void topk_select_row(optic_dtype dt, const void *row, int64_t len, int64_t k, bool largest, int64_t *best_key,
                            int64_t *best_at) {
  int64_t keys[TOPK_BLOCK], have = 0;
  size_t es = optic_dtype_size(dt);
  for (int64_t b0 = 0; b0 < len; b0 += TOPK_BLOCK) {
    int64_t n = len - b0 < TOPK_BLOCK ? len - b0 : TOPK_BLOCK, top = INT64_MIN;
    block_keys(dt, (const unsigned char *)row + (size_t)b0 * es, (size_t)n, keys);
    if (!largest) {
      for (int64_t i = 0; i < n; i++) keys[i] = -1 - keys[i]; /* order-reversing, never overflows */
    }
    for (int64_t i = 0; i < n; i++) top = keys[i] > top ? keys[i] : top;
    if (have == k && top <= best_key[k - 1]) continue;
    for (int64_t i = 0; i < n; i++) {
      int64_t key = keys[i];
      if (have == k && key <= best_key[k - 1]) continue;
      int64_t j = have < k ? have++ : k - 1;
      for (; j > 0 && best_key[j - 1] < key; j--) best_key[j] = best_key[j - 1], best_at[j] = best_at[j - 1];
      best_key[j] = key;
      best_at[j] = b0 + i;
    }
  }
}

optic_status graph_topk_run(optic_dtype dt, const optic_shape *xs, const void *x, int64_t k, bool largest, void *values,
                            int32_t *indices, size_t lo, size_t hi, int64_t *scratch) {
  int32_t last = xs->rank - 1;
  int64_t len = xs->dims[last];
  size_t es = optic_dtype_size(dt);
  topk_ctx c = {dt, largest};
  const void *in[1] = {x};
  graph_sort_io io = {1, last, xs, &dt, in, NULL, topk_less, &c};
  int64_t sel_key[TOPK_SELECT_MAX], sel_at[TOPK_SELECT_MAX];
  if (k == 0) return OPTIC_OK;
  const bool select = k <= TOPK_SELECT_MAX;
  int64_t *perm = select ? sel_at : scratch;
  for (size_t q = lo; q < hi; q++) {
    slice_view v = {&io, q * (size_t)len, 1};
    if (select) {
      topk_select_row(dt, (const unsigned char *)x + v.base * es, len, k, largest, sel_key, sel_at);
    } else {
      optic_status st = merge_sort(&v, len, perm, scratch + len);
      if (st != OPTIC_OK) return st;
    }
    for (int64_t i = 0; i < k; i++) {
      memcpy((unsigned char *)values + (q * (size_t)k + (size_t)i) * es,
             (const unsigned char *)x + (v.base + (size_t)perm[i]) * es, es);
      indices[q * (size_t)k + (size_t)i] = (int32_t)perm[i];
    }
  }
  return OPTIC_OK;
}

optic_status optic_graph_topk(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t k, bool largest,
                              const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "topk", 0, &t);
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "topk: out is NULL");
  if (t->shape.rank < 1) return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "topk: the operand must have rank >= 1");
  int64_t len = t->shape.dims[t->shape.rank - 1];
  if (k < 0 || k > len) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "topk: k = %lld is outside [0, %lld] (the last dim)", (long long)k,
                      (long long)len);
  }
  if (len > INT32_MAX) return optic_fail(OPTIC_ERR_UNSUPPORTED, "topk: the last dim does not fit s32 indices");
  optic_shape s = t->shape;
  s.dims[s.rank - 1] = k;
  optic_type els[2] = {optic_type_array(t->dtype, &s), optic_type_array(OPTIC_S32, &s)};
  int64_t ints[2] = {k, largest ? 1 : 0};
  optic_instr_proto p = graph_proto(OPTIC_OP_TOPK);
  p.type.dtype = OPTIC_DTYPE_INVALID;
  p.type.tuple_size = 2;
  p.type.elements = els;
  p.operands = &x;
  p.n_operands = 1;
  p.ints = ints;
  p.n_ints = 2;
  return graph_add_instr(m, comp, &p, name, out);
}
