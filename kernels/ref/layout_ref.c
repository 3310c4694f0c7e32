/* Naive reference for the layout family: the test oracle. Byte-by-byte loops
 * and per-element index arithmetic, no blocking, no tricks; never optimize
 * this file. */
#include "kernels/layout.h"

static void copy_element(size_t elem_size, const unsigned char *from, unsigned char *to) {
  for (size_t b = 0; b < elem_size; b++) to[b] = from[b];
}

void optic_ref_copy(size_t nbytes, const void *x, void *y) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  for (size_t i = 0; i < nbytes; i++) yb[i] = xb[i];
}

void optic_ref_copy2d(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  for (size_t r = 0; r < rows; r++) {
    for (size_t b = 0; b < row_bytes; b++) yb[r * ldy + b] = xb[r * ldx + b];
  }
}

void optic_ref_transpose2d(size_t elem_size, size_t rows, size_t cols, const void *x, size_t ldx, void *y, size_t ldy) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < cols; j++)
      copy_element(elem_size, xb + (i * ldx + j) * elem_size, yb + (j * ldy + i) * elem_size);
  }
}

void optic_ref_fill(size_t elem_size, size_t n, const void *value, void *y) {
  unsigned char *yb = y;
  for (size_t i = 0; i < n; i++) copy_element(elem_size, value, yb + i * elem_size);
}

/* Advances the row-major multi-index idx over dims; false after the last. */
static bool next_index(int rank, const int64_t *dims, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

static bool any_zero(const optic_shape *s) {
  for (int d = 0; d < s->rank; d++) {
    if (s->dims[d] == 0) return true;
  }
  return false;
}

void optic_ref_permute(size_t elem_size, const optic_shape *in, const int64_t *permutation, const void *x, void *y) {
  int rank = in->rank;
  int64_t out_dims[OPTIC_MAX_RANK], in_stride[OPTIC_MAX_RANK], idx[OPTIC_MAX_RANK] = {0};
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    in_stride[d] = s;
    s *= in->dims[d];
  }
  for (int k = 0; k < rank; k++) out_dims[k] = in->dims[permutation[k]];
  if (any_zero(in)) return;
  const unsigned char *xb = x;
  unsigned char *yb = y;
  size_t o = 0;
  do {
    int64_t xi = 0;
    for (int k = 0; k < rank; k++) xi += idx[k] * in_stride[permutation[k]];
    copy_element(elem_size, xb + (size_t)xi * elem_size, yb + o * elem_size);
    o++;
  } while (next_index(rank, out_dims, idx));
}

void optic_ref_broadcast(size_t elem_size, const optic_shape *operand, const optic_shape *out,
                         const int64_t *dimensions, const void *x, void *y) {
  int64_t op_stride[OPTIC_MAX_RANK], idx[OPTIC_MAX_RANK] = {0};
  int64_t s = 1;
  for (int d = operand->rank - 1; d >= 0; d--) {
    op_stride[d] = s;
    s *= operand->dims[d];
  }
  if (any_zero(out)) return;
  const unsigned char *xb = x;
  unsigned char *yb = y;
  size_t o = 0;
  do {
    int64_t xi = 0;
    for (int k = 0; k < operand->rank; k++) {
      if (operand->dims[k] != 1) xi += idx[dimensions[k]] * op_stride[k];
    }
    copy_element(elem_size, xb + (size_t)xi * elem_size, yb + o * elem_size);
    o++;
  } while (next_index(out->rank, out->dims, idx));
}
