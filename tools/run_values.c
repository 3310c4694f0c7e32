/* `optic run` values: .npy inputs and outputs, the --random-inputs generator,
 * the --json document and the text summary. The generator is part of the
 * CLI's contract (docs/hlo-text.md): changing it changes every script's
 * numbers, so it is written out in full here and in the docs. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "tools/run_values.h"
#include "core/unconst.h"

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64: the state advances by GOLDEN, the output is the mixed state. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += GOLDEN);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* One element from 64 random bits: floats uniform in [-1, 1) on a grid exact
 * in the dtype, s32 in [-8, 8], u8 in [0, 255], pred 0/1. */
static void fill_leaf(optic_literal_t *leaf, uint64_t *state) {
  size_t bytes = 0;
  void *data = optic_literal_mutable_data(leaf, &bytes);
  optic_dtype dt = optic_literal_type(leaf)->dtype;
  size_t es = optic_dtype_size(dt), n = es ? bytes / es : 0; /* a token holds nothing */
  for (size_t i = 0; i < n; i++) {
    uint64_t u = splitmix64(state);
    unsigned char *p = (unsigned char *)data + i * es;
    switch (dt) {
      case OPTIC_F32: ((float *)data)[i] = (float)(u >> 40) * 0x1p-23f - 1.0f; break;
      case OPTIC_F64: ((double *)data)[i] = (double)(u >> 11) * 0x1p-52 - 1.0; break;
      case OPTIC_S32: ((int32_t *)data)[i] = (int32_t)(u % 17) - 8; break;
      case OPTIC_U8: ((uint8_t *)data)[i] = (uint8_t)(u >> 56); break;
      case OPTIC_PRED: ((uint8_t *)data)[i] = (uint8_t)(u >> 63); break;
      case OPTIC_F16:
      case OPTIC_BF16: { /* [-1, 1) on the 2^-10 (f16) or 2^-7 (bf16) grid: exact */
        double v = dt == OPTIC_F16 ? (double)(u >> 53) * 0x1p-10 - 1.0 : (double)(u >> 56) * 0x1p-7 - 1.0;
        optic_convert_elements(OPTIC_F64, &v, dt, p, 1);
        break;
      }
      case OPTIC_S8:
      case OPTIC_S16:
      case OPTIC_S64: { /* [-8, 8] as s32 */
        int64_t v = (int64_t)(u % 17) - 8;
        optic_convert_elements(OPTIC_S64, &v, dt, p, 1);
        break;
      }
      default: { /* u16, u32, u64: the top 16, 32 or 64 bits (as u8 takes the top 8) */
        uint64_t v = u >> (64 - 8 * es);
        optic_convert_elements(OPTIC_U64, &v, dt, p, 1);
        break;
      }
    }
  }
}

static void fill_tree(optic_literal_t *lit, uint64_t *state) {
  int32_t k = optic_literal_tuple_size(lit);
  if (!optic_type_is_tuple(optic_literal_type(lit))) {
    fill_leaf(lit, state);
    return;
  }
  for (int32_t i = 0; i < k; i++) fill_tree(OPTIC_UNCONST(optic_literal_t *, optic_literal_element(lit, i)), state);
}

optic_status run_random_literal(const optic_type *type, uint64_t seed, int32_t index, optic_literal_t **out) {
  optic_status st = optic_literal_create(type, out);
  if (st != OPTIC_OK) return st;
  uint64_t state = seed + (uint64_t)(index + 1) * GOLDEN; /* an independent stream per parameter */
  fill_tree(*out, &state);
  return OPTIC_OK;
}

optic_status run_npy_literal(const char *path, const optic_type *type, const char *param, optic_literal_t **out) {
  *out = NULL;
  char want[256];
  optic_type_format(type, want, sizeof want);
  if (optic_type_is_tuple(type)) {
    fprintf(stderr, "optic run: parameter '%s' is a tuple %s; a .npy file holds one array\n", param, want);
    return OPTIC_ERR_UNSUPPORTED;
  }
  optic_tensor t;
  optic_status st = optic_npy_read(path, NULL, &t);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic run: %s (%s)\n", optic_last_error(), optic_status_name(st));
    return st;
  }
  if (type->dtype == OPTIC_BF16 && t.dtype == OPTIC_U16) t.dtype = OPTIC_BF16; /* bit patterns (docs/npy.md) */
  if (t.dtype != type->dtype || !optic_shape_equal(&t.shape, &type->shape)) {
    char have[256];
    optic_shape_format(&t.shape, t.dtype, have, sizeof have);
    fprintf(stderr, "optic run: parameter '%s' is %s but %s holds %s (OPTIC_ERR_SHAPE_MISMATCH)\n", param, want, path,
            have);
    optic_npy_free(NULL, &t);
    return OPTIC_ERR_SHAPE_MISMATCH;
  }
  size_t bytes = 0;
  optic_tensor_bytes(&t, &bytes);
  st = optic_literal_create_array(t.dtype, &t.shape, t.data, bytes, out);
  optic_npy_free(NULL, &t);
  if (st != OPTIC_OK) fprintf(stderr, "optic run: %s: %s\n", path, optic_last_error());
  return st;
}

int32_t run_literal_leaves(const optic_literal_t *lit, const optic_literal_t **leaves, int32_t cap) {
  if (!optic_type_is_tuple(optic_literal_type(lit))) {
    if (cap > 0) leaves[0] = lit;
    return 1;
  }
  int32_t n = 0;
  for (int32_t i = 0; i < optic_literal_tuple_size(lit); i++) {
    n += run_literal_leaves(optic_literal_element(lit, i), cap > n ? leaves + n : NULL, cap > n ? cap - n : 0);
  }
  return n;
}

optic_status run_write_npy(const optic_literal_t *leaf, const char *path) {
  const optic_type *t = optic_literal_type(leaf);
  optic_tensor view = {
      .dtype = t->dtype, .shape = t->shape, .data = OPTIC_UNCONST(void *, optic_literal_data(leaf, NULL))};
  return optic_npy_write(path, &view);
}

/* ------------------------------------------------------------------- JSON */

static void json_float(FILE *out, double v, int digits) {
  if (isnan(v)) {
    fputs("\"nan\"", out);
  } else if (isinf(v)) {
    fputs(v > 0 ? "\"inf\"" : "\"-inf\"", out);
  } else {
    fprintf(out, "%.*g", digits, v);
  }
}

static void json_element(FILE *out, optic_dtype dt, const void *data, size_t i) {
  switch (dt) {
    case OPTIC_F32: json_float(out, (double)((const float *)data)[i], 9); break;
    case OPTIC_F64: json_float(out, ((const double *)data)[i], 17); break;
    case OPTIC_S32: fprintf(out, "%" PRId32, ((const int32_t *)data)[i]); break;
    case OPTIC_U8: fprintf(out, "%u", (unsigned)((const uint8_t *)data)[i]); break;
    case OPTIC_PRED: fputs(((const uint8_t *)data)[i] ? "true" : "false", out); break;
    default: {
      const unsigned char *p = (const unsigned char *)data + i * optic_dtype_size(dt);
      if (optic_dtype_is_float(dt)) { /* f16, bf16: 5 and 4 digits read back exactly */
        float f;
        optic_convert_elements(dt, p, OPTIC_F32, &f, 1);
        json_float(out, (double)f, dt == OPTIC_F16 ? 5 : 4);
      } else if (optic_dtype_is_signed_int(dt)) {
        int64_t v;
        optic_convert_elements(dt, p, OPTIC_S64, &v, 1);
        fprintf(out, "%" PRId64, v);
      } else {
        uint64_t v;
        optic_convert_elements(dt, p, OPTIC_U64, &v, 1);
        fprintf(out, "%" PRIu64, v);
      }
      break;
    }
  }
}

bool run_print_json(FILE *out, const optic_literal_t *const *leaves, int32_t n) {
  fputs("{\"outputs\":[", out);
  for (int32_t k = 0; k < n; k++) {
    const optic_type *t = optic_literal_type(leaves[k]);
    fprintf(out, "%s{\"shape\":[", k ? "," : "");
    for (int32_t d = 0; d < t->shape.rank; d++) fprintf(out, "%s%" PRId64, d ? "," : "", t->shape.dims[d]);
    fprintf(out, "],\"dtype\":\"%s\",\"data\":[", optic_dtype_name(t->dtype));
    size_t bytes = 0;
    const void *data = optic_literal_data(leaves[k], &bytes);
    size_t es = optic_dtype_size(t->dtype), count = es ? bytes / es : 0;
    for (size_t i = 0; i < count; i++) {
      if (i) fputc(',', out);
      json_element(out, t->dtype, data, i);
    }
    fputs("]}", out);
  }
  fputs("]}\n", out);
  return !ferror(out);
}

/* ---------------------------------------------------------------- summary */

static double element_value(optic_dtype dt, const void *data, size_t i) {
  switch (dt) {
    case OPTIC_F32: return (double)((const float *)data)[i];
    case OPTIC_F64: return ((const double *)data)[i];
    case OPTIC_S32: return ((const int32_t *)data)[i];
    case OPTIC_U8:
    case OPTIC_PRED: return ((const uint8_t *)data)[i];
    default: {
      double v = 0;
      optic_convert_elements(dt, (const unsigned char *)data + i * optic_dtype_size(dt), OPTIC_F64, &v, 1);
      return v;
    }
  }
}

void run_print_summary(FILE *out, const optic_literal_t *const *leaves, int32_t n) {
  for (int32_t k = 0; k < n; k++) {
    const optic_type *t = optic_literal_type(leaves[k]);
    char type[256];
    optic_type_format(t, type, sizeof type);
    size_t bytes = 0;
    const void *data = optic_literal_data(leaves[k], &bytes);
    size_t es = optic_dtype_size(t->dtype), count = es ? bytes / es : 0, nans = 0;
    double lo = (double)INFINITY, hi = -(double)INFINITY, sum = 0;
    for (size_t i = 0; i < count; i++) {
      double v = element_value(t->dtype, data, i);
      if (isnan(v)) {
        nans++;
        continue;
      }
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += v;
    }
    fprintf(out, "output %d  %s", (int)k, type);
    if (count > nans) fprintf(out, "  min %.6g  max %.6g  mean %.6g", lo, hi, sum / (double)(count - nans));
    if (nans) fprintf(out, "  nan %zu", nans);
    fputs("  [", out);
    for (size_t i = 0; i < count && i < 6; i++) {
      if (i) fputs(", ", out);
      double v = element_value(t->dtype, data, i);
      if (isnan(v)) {
        fputs("nan", out); /* printf may say -nan */
      } else if (optic_dtype_is_float(t->dtype)) {
        fprintf(out, "%.6g", v);
      } else {
        json_element(out, t->dtype, data, i);
      }
    }
    fputs(count > 6 ? ", ...]\n" : "]\n", out);
  }
}
