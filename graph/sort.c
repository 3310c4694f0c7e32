/* sort's element movement, shared by the evaluator and the runtime: each
 * 1-D slice along the sort dimension is ordered by a stable bottom-up merge
 * sort of positions (the comparator decides "lhs before rhs"), then every
 * operand's slice is written out in that order. Never allocates: the caller
 * provides 2 x slice-length positions of scratch. */
#include "graph/gather_scatter.h"

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
