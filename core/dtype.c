/* Element types: sizes and XLA names, generated from OPTIC_DTYPE_LIST. */
#include <string.h>

#include "core/error.h"

size_t optic_dtype_size(optic_dtype dtype) {
  switch (dtype) {
#define SIZE_CASE(name, str, size) \
  case OPTIC_##name:               \
    return size;
    OPTIC_DTYPE_LIST(SIZE_CASE)
#undef SIZE_CASE
    default:
      return 0;
  }
}

const char *optic_dtype_name(optic_dtype dtype) {
  switch (dtype) {
#define NAME_CASE(name, str, size) \
  case OPTIC_##name:               \
    return str;
    OPTIC_DTYPE_LIST(NAME_CASE)
#undef NAME_CASE
    default:
      return "invalid";
  }
}

optic_status optic_dtype_from_name(const char *name, optic_dtype *out) {
  if (name == NULL || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dtype_from_name: NULL argument");
  }
#define PARSE_CASE(n, str, size)   \
  if (strcmp(name, str) == 0) {    \
    *out = OPTIC_##n;              \
    return OPTIC_OK;               \
  }
  OPTIC_DTYPE_LIST(PARSE_CASE)
#undef PARSE_CASE
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "dtype_from_name: unknown dtype '%.64s' (known: f32, f64, s32, u8, pred)", name);
}
