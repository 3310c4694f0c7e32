/* Dense row-major shapes: validation with overflow checks, element and byte
 * counts, strides, formatting. A shape whose size does not fit is an error,
 * never a wrapped count. */
#include <stdio.h>

#include "core/error.h"
#include "core/shape_check.h"

/* Largest element count we accept: its byte size at the widest dtype (8 B) must
 * fit both size_t and int64_t, so no later size or stride computation wraps. */
static uint64_t max_elements(void) {
  uint64_t lim = (uint64_t)INT64_MAX;
  if ((uint64_t)SIZE_MAX < lim) lim = (uint64_t)SIZE_MAX;
  return lim / 8;
}

static optic_status check_shape(const char *op, const optic_shape *s, uint64_t *count) {
  if (s == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: shape is NULL", op);
  if (s->rank < 0 || s->rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: rank %d is outside [0, %d]", op, (int)s->rank, OPTIC_MAX_RANK);
  }
  uint64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->dims[i];
    if (d < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dim %d is %lld; dims must be >= 0", op, i, (long long)d);
    }
    /* Keep scanning after an overflow: a later 0 dim makes the count 0, and a
     * later negative dim is still reported as such. */
    if (d == 0) {
      n = 0;
      overflow = false;
    } else if (n != 0 && (overflow || n > max_elements() / (uint64_t)d)) {
      overflow = true;
    } else {
      n *= (uint64_t)d;
    }
  }
  if (overflow) {
    char buf[256];
    optic_shape_format(s, OPTIC_DTYPE_INVALID, buf, sizeof buf);
    return optic_fail(OPTIC_ERR_OVERFLOW, "%s: shape %s has more than %llu elements", op, buf,
                      (unsigned long long)max_elements());
  }
  *count = n;
  return OPTIC_OK;
}

optic_status optic_shape_check(const char *context, const optic_shape *shape, size_t *elements) {
  uint64_t count;
  optic_status st = check_shape(context, shape, &count);
  if (st == OPTIC_OK && elements != NULL) *elements = (size_t)count;
  return st;
}

optic_status optic_shape_make(int32_t rank, const int64_t *dims, optic_shape *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_make: out is NULL");
  if (rank < 0 || rank > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_make: rank %d is outside [0, %d]", (int)rank, OPTIC_MAX_RANK);
  }
  if (rank > 0 && dims == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_make: dims is NULL for rank %d", (int)rank);
  }
  optic_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  uint64_t count;
  optic_status st = check_shape("shape_make", &s, &count);
  if (st != OPTIC_OK) return st;
  *out = s;
  return OPTIC_OK;
}

optic_status optic_shape_elements(const optic_shape *shape, size_t *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_elements: out is NULL");
  uint64_t count;
  optic_status st = check_shape("shape_elements", shape, &count);
  if (st != OPTIC_OK) return st;
  *out = (size_t)count;
  return OPTIC_OK;
}

optic_status optic_shape_bytes(const optic_shape *shape, optic_dtype dtype, size_t *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_bytes: out is NULL");
  size_t esize = optic_dtype_size(dtype); /* 0 for token: no bytes */
  if (!optic_dtype_valid(dtype))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_bytes: invalid dtype %d", (int)dtype);
  uint64_t count;
  optic_status st = check_shape("shape_bytes", shape, &count);
  if (st != OPTIC_OK) return st;
  *out = (size_t)count * esize; /* cannot wrap: count <= max_elements() */
  return OPTIC_OK;
}

optic_status optic_shape_strides(const optic_shape *shape, int64_t *strides) {
  if (strides == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "shape_strides: strides is NULL");
  uint64_t count;
  optic_status st = check_shape("shape_strides", shape, &count);
  if (st != OPTIC_OK) return st;
  int64_t stride = 1;
  for (int i = shape->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    /* A zero dim would make every outer stride 0; keep them as if the dim
     * were 1 so strides stay meaningful for empty arrays. */
    stride *= shape->dims[i] > 0 ? shape->dims[i] : 1;
  }
  return OPTIC_OK;
}

bool optic_shape_equal(const optic_shape *a, const optic_shape *b) {
  if (a == NULL || b == NULL || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++) {
    if (a->dims[i] != b->dims[i]) return false;
  }
  return true;
}

int optic_shape_format(const optic_shape *shape, optic_dtype dtype, char *buf, size_t size) {
  char tmp[16 + OPTIC_MAX_RANK * 21];
  int n = 0;
  if (dtype != OPTIC_DTYPE_INVALID) n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%s", optic_dtype_name(dtype));
  n += snprintf(tmp + n, sizeof tmp - (size_t)n, "[");
  int rank = shape == NULL ? 0 : shape->rank;
  if (rank < 0 || rank > OPTIC_MAX_RANK) rank = 0;
  for (int i = 0; i < rank; i++) {
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, i ? ",%lld" : "%lld", (long long)shape->dims[i]);
  }
  n += snprintf(tmp + n, sizeof tmp - (size_t)n, "]");
  return snprintf(buf, size, "%s", tmp);
}
