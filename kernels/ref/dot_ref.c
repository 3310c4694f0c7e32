/* Naive reference for dot_general: the test oracle and what constant folding
 * may evaluate with. One plain loop over output elements and one over the
 * contracting index, in double; never optimize this file. */
#include "kernels/dot.h"

/* Offset of the row-major multi-index of linear index `linear` over the dims
 * `which` of an operand (sizes from `shape`, element strides `strides`). */
static int64_t offset_of(int64_t linear, const optic_shape *shape, const int64_t *strides, const int32_t *which,
                         int32_t count) {
  int64_t off = 0;
  for (int32_t i = count - 1; i >= 0; i--) {
    int64_t size = shape->dims[which[i]];
    off += (linear % size) * strides[which[i]];
    linear /= size;
  }
  return off;
}

static int64_t product(const optic_shape *shape, const int32_t *which, int32_t count) {
  int64_t p = 1;
  for (int32_t i = 0; i < count; i++) p *= shape->dims[which[i]];
  return p;
}

optic_status optic_ref_f32_dot(const optic_shape *lhs_shape, const optic_shape *rhs_shape, const optic_dot_dims *dims,
                               const float *lhs, const float *rhs, float *out) {
  optic_shape out_shape;
  optic_status st = optic_dot_infer_shape(lhs_shape, rhs_shape, dims, &out_shape);
  if (st != OPTIC_OK) return st;
  int64_t ls[OPTIC_MAX_RANK], rs[OPTIC_MAX_RANK];
  optic_shape_strides(lhs_shape, ls);
  optic_shape_strides(rhs_shape, rs);
  int32_t lfree[OPTIC_MAX_RANK], rfree[OPTIC_MAX_RANK];
  int32_t nlf = optic_dot_free_dims(lhs_shape->rank, dims->lhs_batch, dims->lhs_batch_count, dims->lhs_contracting,
                                    dims->lhs_contracting_count, lfree);
  int32_t nrf = optic_dot_free_dims(rhs_shape->rank, dims->rhs_batch, dims->rhs_batch_count, dims->rhs_contracting,
                                    dims->rhs_contracting_count, rfree);
  int64_t nb = product(lhs_shape, dims->lhs_batch, dims->lhs_batch_count);
  int64_t m = product(lhs_shape, lfree, nlf), n = product(rhs_shape, rfree, nrf);
  int64_t k = product(lhs_shape, dims->lhs_contracting, dims->lhs_contracting_count);
  for (int64_t b = 0; b < nb; b++) {
    int64_t lb = offset_of(b, lhs_shape, ls, dims->lhs_batch, dims->lhs_batch_count);
    int64_t rb = offset_of(b, rhs_shape, rs, dims->rhs_batch, dims->rhs_batch_count);
    for (int64_t i = 0; i < m; i++) {
      int64_t lm = lb + offset_of(i, lhs_shape, ls, lfree, nlf);
      for (int64_t j = 0; j < n; j++) {
        int64_t rn = rb + offset_of(j, rhs_shape, rs, rfree, nrf);
        double sum = 0.0;
        for (int64_t c = 0; c < k; c++) {
          int64_t lo = lm + offset_of(c, lhs_shape, ls, dims->lhs_contracting, dims->lhs_contracting_count);
          int64_t ro = rn + offset_of(c, rhs_shape, rs, dims->rhs_contracting, dims->rhs_contracting_count);
          sum += (double)lhs[lo] * (double)rhs[ro];
        }
        out[(b * m + i) * n + j] = (float)sum;
      }
    }
  }
  return OPTIC_OK;
}
