/* Tensor views: a dtype, a shape and a pointer the caller owns. Validation
 * only; a view never allocates or frees. */
#include "core/error.h"

optic_status optic_tensor_make(optic_dtype dtype, const optic_shape *shape, void *data, optic_tensor *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "tensor_make: out is NULL");
  size_t bytes = 0;
  optic_status st = optic_shape_bytes(shape, dtype, &bytes);
  if (st != OPTIC_OK) return st;
  if (data == NULL && bytes != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "tensor_make: data is NULL for a %zu-byte array", bytes);
  }
  out->dtype = dtype;
  out->shape = *shape;
  out->data = data;
  return OPTIC_OK;
}

optic_status optic_tensor_bytes(const optic_tensor *t, size_t *out) {
  if (t == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "tensor_bytes: NULL argument");
  return optic_shape_bytes(&t->shape, t->dtype, out);
}
