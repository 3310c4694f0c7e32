/* Element types: sizes and XLA names, generated from OPTIC_DTYPE_LIST. */
#include <stdbool.h>
#include <string.h>

#include "core/error.h"

size_t optic_dtype_size(optic_dtype dtype) {
  switch (dtype) {
#define SIZE_CASE(name, str, size) \
  case OPTIC_##name: return size;
    OPTIC_DTYPE_LIST(SIZE_CASE)
#undef SIZE_CASE
    default: return 0;
  }
}

const char *optic_dtype_name(optic_dtype dtype) {
  switch (dtype) {
#define NAME_CASE(name, str, size) \
  case OPTIC_##name: return str;
    OPTIC_DTYPE_LIST(NAME_CASE)
#undef NAME_CASE
    default: return "invalid";
  }
}

optic_status optic_dtype_from_name(const char *name, optic_dtype *out) {
  if (name == NULL || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dtype_from_name: NULL argument");
  }
#define PARSE_CASE(n, str, size) \
  if (strcmp(name, str) == 0) {  \
    *out = OPTIC_##n;            \
    return OPTIC_OK;             \
  }
  OPTIC_DTYPE_LIST(PARSE_CASE)
#undef PARSE_CASE
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "dtype_from_name: unknown dtype '%.64s' (known: pred, s8, s16, s32, s64, u8, u16, u32, u64, "
                    "f16, bf16, f32, f64, token)",
                    name);
}

bool optic_dtype_valid(optic_dtype dtype) { return dtype > OPTIC_DTYPE_INVALID && dtype < OPTIC_DTYPE_COUNT_; }

bool optic_dtype_is_float(optic_dtype d) {
  return d == OPTIC_F32 || d == OPTIC_F64 || d == OPTIC_F16 || d == OPTIC_BF16;
}

bool optic_dtype_is_signed_int(optic_dtype d) {
  return d == OPTIC_S8 || d == OPTIC_S16 || d == OPTIC_S32 || d == OPTIC_S64;
}

bool optic_dtype_is_int(optic_dtype d) {
  return optic_dtype_is_signed_int(d) || d == OPTIC_U8 || d == OPTIC_U16 || d == OPTIC_U32 || d == OPTIC_U64;
}

int optic_dtype_int_bits(optic_dtype d) { return optic_dtype_is_int(d) ? (int)optic_dtype_size(d) * 8 : 0; }

bool optic_dtype_has_values(optic_dtype d) { return optic_dtype_valid(d) && d != OPTIC_TOKEN; }
