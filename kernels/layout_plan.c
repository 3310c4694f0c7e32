/* Planning of XLA transpose and broadcast: validate the attributes, then
 * reduce both to one strided gather y[o] = x[sum o_k * xs_k] over a dense y
 * (a permutation permutes x's strides; a broadcast gives stride 0 to new
 * dims), drop size-1 dims, merge dims that stay adjacent, and pick the inner
 * kernel: one copy, strided row copies, fills, or 2-D transposes, with the
 * remaining dims as loops. Planning never allocates; running is in
 * layout_run.c. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "kernels/layout.h"

/* Output tile of every transpose kernel divides this, so chunks of columns
 * start on a tile boundary. */
#define CHUNK_ALIGN 64

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* Validates shape s (rank, dims >= 0, element count fits) for op. */
static optic_status check_shape(const char *op, const char *what, const optic_shape *s) {
  if (s == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s shape is NULL", op, what);
  if (s->rank < 0 || s->rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s rank %d is outside [0, %d]", op, what, (int)s->rank,
                      OPTIC_MAX_RANK);
  }
  for (int d = 0; d < s->rank; d++) {
    if (s->dims[d] < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s dim %d is %lld; dims must be >= 0", op, what, d,
                        (long long)s->dims[d]);
    }
  }
  size_t n;
  optic_status st = optic_shape_elements(s, &n);
  if (st != OPTIC_OK) {
    char why[200];
    snprintf(why, sizeof why, "%s", optic_last_error());
    return optic_fail(st, "%s: %s: %s", op, what, why);
  }
  return OPTIC_OK;
}

static optic_status check_common(const char *op, const optic_layout_kernels **kernels, size_t elem_size,
                                 optic_layout_width *width, const void *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: plan out is NULL", op);
  if (!optic_layout_width_of(elem_size, width)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: element size %zu bytes is not supported (1, 4 or 8)", op,
                      elem_size);
  }
  if (*kernels == NULL) *kernels = optic_layout_kernels_get();
  return OPTIC_OK;
}

/* Plans y (dense, dims n[0..rank)) = x gathered with element strides xs. */
/* long: one plan built in stages (drop unit dims, merge, pick the kernel) over the same dim arrays */
static optic_status plan_gather(const char *op, const optic_layout_kernels *k, optic_layout_width width,
                                size_t elem_size, const optic_shape *out_shape, const size_t *xs_in,
                                optic_layout_plan *p) {
  memset(p, 0, sizeof *p);
  p->elem_size = elem_size;
  p->out_shape = *out_shape;
  p->copy = k->copy;
  p->copy2d = k->copy2d;
  p->transpose = k->transpose[width];
  p->fill = k->fill[width];

  /* Drop size-1 dims, merge dim d into the dim after it when x steps over
   * the inner one exactly (xs[d] == xs[d+1] * n[d+1], zero strides included). */
  size_t n[OPTIC_MAX_RANK], xs[OPTIC_MAX_RANK];
  int r = 0;
  for (int d = 0; d < out_shape->rank; d++) {
    size_t nd = (size_t)out_shape->dims[d];
    if (nd == 0) {
      p->kind = OPTIC_LAYOUT_PLAN_EMPTY;
      return OPTIC_OK;
    }
    if (nd == 1) continue;
    n[r] = nd;
    xs[r] = xs_in[d];
    r++;
  }
  int m = 0;
  for (int d = 0; d < r; d++) {
    if (m > 0 && xs[m - 1] == xs[d] * n[d]) {
      n[m - 1] *= n[d];
      xs[m - 1] = xs[d];
    } else {
      n[m] = n[d];
      xs[m] = xs[d];
      m++;
    }
  }
  r = m;
  size_t ys[OPTIC_MAX_RANK];
  size_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    ys[d] = s;
    s *= n[d];
  }

  if (r == 0 || (r == 1 && xs[0] <= 1)) { /* one element, one run, or one value */
    p->kind = r == 1 && xs[0] == 0 ? OPTIC_LAYOUT_PLAN_FILL : OPTIC_LAYOUT_PLAN_COPY;
    p->cols = r == 0 ? 1 : n[0];
    p->chunk = OPTIC_LAYOUT_UNIT_ELEMENTS;
    p->nchunks = ceil_div(p->cols, p->chunk);
    p->units = p->nchunks;
    return OPTIC_OK;
  }

  int inner = r - 1, rows_dim, cols_dim = inner;
  if (xs[inner] <= 1) {
    /* Rows of y are contiguous copies of x rows (xs 1) or one repeated x
     * element (xs 0); the next dim out is the row dim (after merging, its x
     * stride is not xs[inner] * n[inner]). */
    p->kind = xs[inner] == 1 ? OPTIC_LAYOUT_PLAN_ROWS : OPTIC_LAYOUT_PLAN_FILL_ROWS;
    rows_dim = r - 2;
    p->rows = n[rows_dim];
    p->cols = n[inner];
    p->ldx = xs[rows_dim];
    p->ldy = n[inner];
    p->chunk = OPTIC_LAYOUT_UNIT_ELEMENTS / p->cols;
    if (p->chunk == 0) p->chunk = 1;
    p->nchunks = ceil_div(p->rows, p->chunk);
  } else {
    /* y's inner dim walks x with a stride: transpose a block whose x rows run
     * along y's inner dim and whose x columns are the dim where x is unit
     * stride (the operand's innermost remaining dim; it always exists). */
    rows_dim = -1;
    for (int d = 0; d < inner; d++) {
      if (xs[d] == 1) cols_dim = d;
    }
    if (cols_dim == inner) {
      return optic_fail(OPTIC_ERR_INTERNAL, "%s: no unit-stride operand dim after merging dims", op);
    }
    p->kind = OPTIC_LAYOUT_PLAN_TRANSPOSE;
    p->rows = n[inner];
    p->ldx = xs[inner];
    p->cols = n[cols_dim];
    p->ldy = ys[cols_dim];
    size_t want = ceil_div(OPTIC_LAYOUT_UNIT_ELEMENTS, p->rows);
    p->chunk = ceil_div(want, CHUNK_ALIGN) * CHUNK_ALIGN;
    p->nchunks = ceil_div(p->cols, p->chunk);
    rows_dim = inner; /* consumed as the transpose's rows */
  }
  p->units = p->nchunks;
  for (int d = 0; d < r; d++) {
    if (d == rows_dim || d == cols_dim || d == inner) continue;
    p->loop_n[p->nloops] = n[d];
    p->loop_xs[p->nloops] = xs[d];
    p->loop_ys[p->nloops] = ys[d];
    p->nloops++;
    p->units *= n[d];
  }
  return OPTIC_OK;
}

optic_status optic_layout_plan_transpose(const optic_layout_kernels *kernels, const optic_shape *in,
                                         const int64_t *permutation, size_t nperm, size_t elem_size,
                                         optic_layout_plan *out) {
  static const char op[] = "transpose";
  optic_layout_width width;
  optic_status st = check_common(op, &kernels, elem_size, &width, out);
  if (st == OPTIC_OK) st = check_shape(op, "operand", in);
  if (st != OPTIC_OK) return st;
  if (nperm != (size_t)in->rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: permutation has %zu entries but the operand has rank %d", op,
                      nperm, (int)in->rank);
  }
  if (nperm > 0 && permutation == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: permutation is NULL for rank %d", op, (int)in->rank);
  }
  int seen_at[OPTIC_MAX_RANK];
  for (int d = 0; d < in->rank; d++) seen_at[d] = -1;
  for (int k = 0; k < in->rank; k++) {
    int64_t p = permutation[k];
    if (p < 0 || p >= in->rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: permutation[%d] is %lld; entries must be in [0, %d)", op, k,
                        (long long)p, (int)in->rank);
    }
    if (seen_at[p] >= 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: permutation[%d] and permutation[%d] are both %lld; each dim must appear once", op,
                        seen_at[p], k, (long long)p);
    }
    seen_at[p] = k;
  }
  optic_shape y = {.rank = in->rank};
  size_t in_stride[OPTIC_MAX_RANK], xs[OPTIC_MAX_RANK];
  size_t s = 1;
  for (int d = in->rank - 1; d >= 0; d--) {
    in_stride[d] = s;
    s *= (size_t)in->dims[d];
  }
  for (int k = 0; k < in->rank; k++) {
    y.dims[k] = in->dims[permutation[k]];
    xs[k] = in_stride[permutation[k]];
  }
  return plan_gather(op, kernels, width, elem_size, &y, xs, out);
}

optic_status optic_layout_plan_broadcast(const optic_layout_kernels *kernels, const optic_shape *operand,
                                         const optic_shape *out, const int64_t *dimensions, size_t ndims,
                                         size_t elem_size, optic_layout_plan *out_plan) {
  static const char op[] = "broadcast";
  optic_layout_width width;
  optic_status st = check_common(op, &kernels, elem_size, &width, out_plan);
  if (st == OPTIC_OK) st = check_shape(op, "operand", operand);
  if (st == OPTIC_OK) st = check_shape(op, "output", out);
  if (st != OPTIC_OK) return st;
  if (ndims != (size_t)operand->rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dimensions has %zu entries but the operand has rank %d", op,
                      ndims, (int)operand->rank);
  }
  if (ndims > 0 && dimensions == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dimensions is NULL for operand rank %d", op, (int)operand->rank);
  }
  if (operand->rank > out->rank) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand rank %d is larger than output rank %d", op,
                      (int)operand->rank, (int)out->rank);
  }
  int used_by[OPTIC_MAX_RANK];
  for (int d = 0; d < out->rank; d++) used_by[d] = -1;
  size_t stride[OPTIC_MAX_RANK], xs[OPTIC_MAX_RANK] = {0};
  size_t s = 1;
  for (int k = operand->rank - 1; k >= 0; k--) {
    stride[k] = s;
    s *= (size_t)operand->dims[k];
  }
  for (int k = 0; k < operand->rank; k++) {
    int64_t d = dimensions[k];
    if (d < 0 || d >= out->rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dimensions[%d] is %lld; entries must be in [0, %d)", op, k,
                        (long long)d, (int)out->rank);
    }
    if (used_by[d] >= 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "%s: dimensions[%d] and dimensions[%d] both map to output dim %lld; entries must be distinct",
                        op, used_by[d], k, (long long)d);
    }
    used_by[d] = k;
  }
  for (int k = 0; k < operand->rank; k++) {
    int64_t d = dimensions[k];
    if (operand->dims[k] != out->dims[d] && operand->dims[k] != 1) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "%s: operand dim %d has size %lld but output dim %lld (dimensions[%d]) has size %lld; "
                        "they must match or the operand's must be 1",
                        op, k, (long long)operand->dims[k], (long long)d, k, (long long)out->dims[d]);
    }
    if (operand->dims[k] != 1) xs[d] = stride[k];
  }
  return plan_gather(op, kernels, width, elem_size, out, xs, out_plan);
}
