/* Plans a dot_general onto OpenBLAS: validates, then decides per operand
 * whether BLAS can read it where it is (copy-free) or it must be packed into
 * scratch first, and records everything running needs. Never allocates and
 * never touches tensor data. */
#include <cblas.h>
#include <string.h>

#include "core/error.h"
#include "kernels/dot.h"

/* Largest M, N, K, leading dimension or increment this OpenBLAS accepts. */
#define BLAS_INDEX_MAX ((int64_t)(sizeof(blasint) >= 8 ? INT64_MAX : INT32_MAX))

/* A list of dims read as one row-major index. ok: every dim of size > 1 sits
 * exactly inside the next one in memory, so the index has one stride. */
typedef struct group {
  int64_t size;
  int64_t stride; /* meaningful only when size > 1 */
  bool ok;
} group;

static group merge_group(const optic_shape *s, const int64_t *strides, const int32_t *dims, int32_t count) {
  group g = {1, 1, true};
  for (int32_t i = 0; i < count; i++) {
    int64_t size = s->dims[dims[i]];
    if (size == 1) continue;
    if (g.size > 1 && g.stride != strides[dims[i]] * size) g.ok = false;
    g.size *= size;
    g.stride = strides[dims[i]];
  }
  return g;
}

/* Can BLAS read a rows x cols matrix in place? Row-major (element (r, c) at
 * r*ld + c) is "not transposed"; column-major is "transposed", ld the column
 * stride. BLAS requires ld >= the contiguous extent, and ld within its index
 * type. A group of size 1 has no stride of its own, so any ld fits it. */
static bool direct_matrix(group rows, group cols, bool *trans, int64_t *ld) {
  if (!rows.ok || !cols.ok) return false;
  int64_t r = rows.size, c = cols.size;
  if (c <= 1 || cols.stride == 1) {
    int64_t l = r <= 1 ? (c > 1 ? c : 1) : rows.stride;
    if (l >= (c > 1 ? c : 1) && l <= BLAS_INDEX_MAX) {
      *trans = false, *ld = l;
      return true;
    }
  }
  if (r <= 1 || rows.stride == 1) {
    int64_t l = c <= 1 ? (r > 1 ? r : 1) : cols.stride;
    if (l >= (r > 1 ? r : 1) && l <= BLAS_INDEX_MAX) {
      *trans = true, *ld = l;
      return true;
    }
  }
  return false;
}

static bool direct_vector(group k, int64_t *inc) {
  if (!k.ok) return false;
  *inc = k.size <= 1 ? 1 : k.stride;
  return *inc <= BLAS_INDEX_MAX;
}

/* One operand seen as a matrix: its batch dims (output order), and the dims of
 * its rows and columns (lhs: free x contracting; rhs: contracting x free). */
typedef struct operand_view {
  const optic_shape *shape;
  int64_t strides[OPTIC_MAX_RANK];
  const int32_t *batch;
  int32_t nbatch;
  int32_t rows[OPTIC_MAX_RANK], cols[OPTIC_MAX_RANK];
  int32_t nrows, ncols;
  bool vector;   /* the GEMV vector: only its contracting index matters */
  bool k_is_row; /* rhs: contracting dims are the rows */
} operand_view;

static bool try_direct(const operand_view *v, optic_dot_operand *op) {
  group rows = merge_group(v->shape, v->strides, v->rows, v->nrows);
  group cols = merge_group(v->shape, v->strides, v->cols, v->ncols);
  if (v->vector) return direct_vector(v->k_is_row ? rows : cols, &op->ld);
  return direct_matrix(rows, cols, &op->trans, &op->ld);
}

/* Dest dims of the packed copy: batch, then the outer group, then the inner
 * one; dims of size 1 dropped and runs that are contiguous in the source too
 * merged, so the copy's inner loop is as long as it can be. */
static void describe_pack(const operand_view *v, bool rows_inner, optic_dot_operand *op) {
  int32_t order[OPTIC_MAX_RANK], n = 0;
  for (int32_t i = 0; i < v->nbatch; i++) order[n++] = v->batch[i];
  const int32_t *outer = rows_inner ? v->cols : v->rows, *inner = rows_inner ? v->rows : v->cols;
  int32_t nouter = rows_inner ? v->ncols : v->nrows, ninner = rows_inner ? v->nrows : v->ncols;
  for (int32_t i = 0; i < nouter; i++) order[n++] = outer[i];
  for (int32_t i = 0; i < ninner; i++) order[n++] = inner[i];
  op->pack_rank = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t size = v->shape->dims[order[i]], stride = v->strides[order[i]];
    if (size == 1) continue;
    int32_t r = op->pack_rank;
    if (r > 0 && op->pack_strides[r - 1] == stride * size) {
      op->pack_sizes[r - 1] *= size;
      op->pack_strides[r - 1] = stride;
    } else {
      op->pack_sizes[r] = size;
      op->pack_strides[r] = stride;
      op->pack_rank++;
    }
  }
}

/* The packed layout: the group holding the source's innermost dim of size > 1
 * goes inner, so the copy reads runs of consecutive floats. */
static void plan_packed(const operand_view *v, int64_t rows, int64_t cols, const int64_t *batch_sizes,
                        optic_dot_operand *op) {
  bool rows_inner = false;
  for (int32_t d = v->shape->rank - 1; d >= 0; d--) {
    if (v->shape->dims[d] == 1) continue;
    for (int32_t i = 0; i < v->nrows; i++) rows_inner |= v->rows[i] == d;
    break;
  }
  if (v->vector) rows_inner = v->k_is_row; /* the vector's K dims are inner */
  op->packed = true;
  op->trans = rows_inner && !v->vector;
  op->ld = v->vector ? 1 : rows_inner ? rows : cols;
  describe_pack(v, rows_inner, op);
  int64_t stride = rows * cols;
  for (int32_t i = v->nbatch - 1; i >= 0; i--) {
    op->batch_strides[i] = stride;
    stride *= batch_sizes[i];
  }
}

static void sort_pairs_by(const int32_t *key, int32_t *perm, int32_t n) {
  for (int32_t i = 0; i < n; i++) perm[i] = i;
  for (int32_t i = 1; i < n; i++) {
    for (int32_t j = i; j > 0 && key[perm[j]] < key[perm[j - 1]]; j--) {
      int32_t t = perm[j];
      perm[j] = perm[j - 1], perm[j - 1] = t;
    }
  }
}

/* Fills lhs/rhs views for one order of the contracting pairs. */
static void make_views(const optic_shape *lhs, const optic_shape *rhs, const optic_dot_dims *d, const int32_t *perm,
                       const int32_t *lfree, int32_t nlf, const int32_t *rfree, int32_t nrf, operand_view *lv,
                       operand_view *rv) {
  lv->shape = lhs, rv->shape = rhs;
  optic_shape_strides(lhs, lv->strides);
  optic_shape_strides(rhs, rv->strides);
  lv->batch = d->lhs_batch, rv->batch = d->rhs_batch;
  lv->nbatch = rv->nbatch = d->lhs_batch_count;
  lv->k_is_row = false, rv->k_is_row = true;
  lv->nrows = nlf, rv->ncols = nrf;
  memcpy(lv->rows, lfree, sizeof(int32_t) * (size_t)nlf);
  memcpy(rv->cols, rfree, sizeof(int32_t) * (size_t)nrf);
  lv->ncols = rv->nrows = d->lhs_contracting_count;
  for (int32_t i = 0; i < d->lhs_contracting_count; i++) {
    lv->cols[i] = d->lhs_contracting[perm[i]];
    rv->rows[i] = d->rhs_contracting[perm[i]];
  }
}

optic_status optic_dot_plan(const optic_shape *lhs, const optic_shape *rhs, const optic_dot_dims *dims,
                            struct optic_dot_plan *plan) {
  if (plan == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dot: plan is NULL");
  optic_shape out_shape;
  optic_status st = optic_dot_infer_shape(lhs, rhs, dims, &out_shape);
  if (st != OPTIC_OK) return st;
  struct optic_dot_plan p;
  memset(&p, 0, sizeof p);
  p.lhs_shape = *lhs, p.rhs_shape = *rhs, p.out_shape = out_shape;
  int32_t lfree[OPTIC_MAX_RANK], rfree[OPTIC_MAX_RANK];
  int32_t nlf = optic_dot_free_dims(lhs->rank, dims->lhs_batch, dims->lhs_batch_count, dims->lhs_contracting,
                                    dims->lhs_contracting_count, lfree);
  int32_t nrf = optic_dot_free_dims(rhs->rank, dims->rhs_batch, dims->rhs_batch_count, dims->rhs_contracting,
                                    dims->rhs_contracting_count, rfree);
  p.batch_rank = dims->lhs_batch_count;
  p.batch = p.m = p.n = p.k = 1;
  for (int32_t i = 0; i < p.batch_rank; i++) p.batch *= p.batch_sizes[i] = lhs->dims[dims->lhs_batch[i]];
  for (int32_t i = 0; i < nlf; i++) p.m *= lhs->dims[lfree[i]];
  for (int32_t i = 0; i < nrf; i++) p.n *= rhs->dims[rfree[i]];
  for (int32_t i = 0; i < dims->lhs_contracting_count; i++) p.k *= lhs->dims[dims->lhs_contracting[i]];
  p.split_n = p.m <= p.n;
  if (p.batch == 0 || p.m == 0 || p.n == 0) {
    p.path = OPTIC_DOT_PATH_EMPTY;
  } else if (p.k == 0) {
    p.path = OPTIC_DOT_PATH_ZEROS;
  } else {
    p.path = (p.m == 1 || p.n == 1) ? OPTIC_DOT_PATH_GEMV : OPTIC_DOT_PATH_GEMM;
  }
  if (p.path == OPTIC_DOT_PATH_EMPTY || p.path == OPTIC_DOT_PATH_ZEROS) {
    *plan = p;
    return OPTIC_OK;
  }
  if (p.m > BLAS_INDEX_MAX || p.n > BLAS_INDEX_MAX || p.k > BLAS_INDEX_MAX) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED,
                      "dot: M=%lld, N=%lld, K=%lld exceeds the %d-bit index range of this OpenBLAS build",
                      (long long)p.m, (long long)p.n, (long long)p.k, (int)(8 * sizeof(blasint)));
  }

  /* Contracting pairs may be summed in any order: try them in lhs memory
   * order and in rhs memory order, and keep the order that packs fewer bytes. */
  int32_t perms[2][OPTIC_MAX_RANK];
  sort_pairs_by(dims->lhs_contracting, perms[0], dims->lhs_contracting_count);
  sort_pairs_by(dims->rhs_contracting, perms[1], dims->rhs_contracting_count);
  int64_t best_cost = -1;
  operand_view lv, rv;
  for (int c = 0; c < 2; c++) {
    operand_view l, r;
    make_views(lhs, rhs, dims, perms[c], lfree, nlf, rfree, nrf, &l, &r);
    l.vector = p.path == OPTIC_DOT_PATH_GEMV && p.m == 1;
    r.vector = p.path == OPTIC_DOT_PATH_GEMV && p.m != 1;
    optic_dot_operand probe = {0};
    int64_t cost = (try_direct(&l, &probe) ? 0 : p.m * p.k) + (try_direct(&r, &probe) ? 0 : p.k * p.n);
    if (best_cost < 0 || cost < best_cost) best_cost = cost, lv = l, rv = r;
  }
  if (!try_direct(&lv, &p.lhs)) plan_packed(&lv, p.m, p.k, p.batch_sizes, &p.lhs);
  if (!try_direct(&rv, &p.rhs)) plan_packed(&rv, p.k, p.n, p.batch_sizes, &p.rhs);
  p.lhs.vector = lv.vector, p.rhs.vector = rv.vector;
  for (int32_t i = 0; i < p.batch_rank; i++) {
    if (!p.lhs.packed) p.lhs.batch_strides[i] = lv.strides[dims->lhs_batch[i]];
    if (!p.rhs.packed) p.rhs.batch_strides[i] = rv.strides[dims->rhs_batch[i]];
  }
  size_t lhs_bytes = p.lhs.packed ? (size_t)(p.batch * p.m * p.k) * sizeof(float) : 0;
  size_t rhs_bytes = p.rhs.packed ? (size_t)(p.batch * p.k * p.n) * sizeof(float) : 0;
  p.lhs.scratch_offset = 0;
  p.rhs.scratch_offset = (lhs_bytes + 63) / 64 * 64;
  p.scratch_bytes = rhs_bytes ? p.rhs.scratch_offset + rhs_bytes : lhs_bytes;
  *plan = p;
  return OPTIC_OK;
}
