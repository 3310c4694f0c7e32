/* Literals: host values of an optic_type (row-major arrays, tuples of
 * literals) for the reference evaluator; creation, copies, accessors, XLA
 * literal text and the comparison tests use. Sizes are overflow-checked;
 * nothing is left half-built on error. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"

static optic_literal_t *lit_shell(void) { return calloc(1, sizeof(optic_literal_t)); }

/* Gives an array shell its zeroed storage. */
static optic_status lit_storage(optic_literal_t *lit, const char *op) {
  size_t bytes;
  optic_status st = optic_shape_bytes(&lit->type.shape, lit->type.dtype, &bytes);
  if (st != OPTIC_OK) return st;
  lit->bytes = bytes;
  if (bytes == 0) return OPTIC_OK;
  if (bytes <= LIT_INLINE_BYTES) {
    lit->data = lit->inline_data.b;
    return OPTIC_OK;
  }
  lit->data = calloc(1, bytes);
  if (lit->data == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", op, bytes);
  return OPTIC_OK;
}

void lit_free(optic_literal_t *lit) {
  if (lit == NULL) return;
  if (lit->elements) {
    for (int32_t i = 0; i < lit->type.tuple_size; i++) lit_free(lit->elements[i]);
    free(lit->elements);
  }
  if (lit->data != lit->inline_data.b) free(lit->data);
  graph_type_release(&lit->type);
  free(lit);
}

static optic_status check_type(const optic_type *t, int depth) {
  if (depth > 64) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal: tuples nested deeper than 64");
  if (optic_type_is_tuple(t)) {
    if (t->tuple_size < 0 || (t->tuple_size > 0 && t->elements == NULL)) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal: tuple of %d elements without element types",
                        (int)t->tuple_size);
    }
    for (int32_t i = 0; i < t->tuple_size; i++) {
      optic_status st = check_type(&t->elements[i], depth + 1);
      if (st != OPTIC_OK) return st;
    }
    return OPTIC_OK;
  }
  if (!optic_dtype_valid(t->dtype)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal: invalid dtype %d", (int)t->dtype);
  }
  size_t n;
  return optic_shape_elements(&t->shape, &n);
}

/* Builds a zeroed literal of a type already checked. */
static optic_status lit_new_checked(const optic_type *t, optic_literal_t **out) {
  *out = NULL;
  optic_literal_t *lit = lit_shell();
  if (lit == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "literal: out of memory");
  optic_status st = graph_type_clone(t, &lit->type);
  if (st != OPTIC_OK) {
    free(lit);
    return st;
  }
  if (!optic_type_is_tuple(t)) {
    st = lit_storage(lit, "literal");
  } else if (t->tuple_size > 0) {
    lit->elements = calloc((size_t)t->tuple_size, sizeof *lit->elements);
    if (lit->elements == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "literal: out of memory");
    for (int32_t i = 0; st == OPTIC_OK && i < t->tuple_size; i++)
      st = lit_new_checked(&t->elements[i], &lit->elements[i]);
  }
  if (st != OPTIC_OK) {
    lit_free(lit);
    return st;
  }
  *out = lit;
  return OPTIC_OK;
}

optic_status lit_new(const optic_type *t, optic_literal_t **out) { return lit_new_checked(t, out); }

size_t lit_elements(const optic_literal_t *lit) {
  size_t es = optic_dtype_size(lit->type.dtype);
  return es ? lit->bytes / es : 0;
}

optic_status lit_clone(const optic_literal_t *src, optic_literal_t **out) {
  optic_status st = lit_new_checked(&src->type, out);
  if (st != OPTIC_OK) return st;
  if (src->bytes) memcpy((*out)->data, src->data, src->bytes);
  for (int32_t i = 0; src->elements && i < src->type.tuple_size; i++) {
    optic_literal_t *e;
    if ((st = lit_clone(src->elements[i], &e)) != OPTIC_OK) {
      lit_free(*out);
      *out = NULL;
      return st;
    }
    lit_free((*out)->elements[i]);
    (*out)->elements[i] = e;
  }
  return OPTIC_OK;
}

optic_status lit_tuple_of(const optic_literal_t *const *els, int32_t n, optic_literal_t **out) {
  *out = NULL;
  optic_type *types = n ? malloc((size_t)n * sizeof *types) : NULL;
  if (n && types == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "tuple: out of memory");
  for (int32_t i = 0; i < n; i++) types[i] = els[i]->type; /* shallow: the literal copies deeply */
  optic_type t = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = n, .elements = types};
  optic_literal_t *lit = lit_shell();
  optic_status st =
      lit ? graph_type_clone(&t, &lit->type) : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "tuple: out of memory");
  free(types);
  if (st != OPTIC_OK) {
    free(lit);
    return st;
  }
  if (n > 0) {
    lit->elements = calloc((size_t)n, sizeof *lit->elements);
    if (lit->elements == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "tuple: out of memory");
  }
  for (int32_t i = 0; st == OPTIC_OK && i < n; i++) st = lit_clone(els[i], &lit->elements[i]);
  if (st != OPTIC_OK) {
    lit_free(lit);
    return st;
  }
  *out = lit;
  return OPTIC_OK;
}

/* ------------------------------------------------------------ public API */

optic_status optic_literal_create(const optic_type *type, optic_literal_t **out) {
  if (out) *out = NULL;
  if (type == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal_create: NULL argument");
  optic_status st = check_type(type, 0);
  return st == OPTIC_OK ? lit_new_checked(type, out) : st;
}

optic_status optic_literal_create_array(optic_dtype dtype, const optic_shape *shape, const void *data, size_t bytes,
                                        optic_literal_t **out) {
  if (out) *out = NULL;
  if (shape == NULL || out == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal_create_array: NULL argument");
  optic_type t = optic_type_array(dtype, shape);
  optic_status st = check_type(&t, 0);
  if (st != OPTIC_OK) return st;
  size_t want;
  if ((st = optic_shape_bytes(shape, dtype, &want)) != OPTIC_OK) return st;
  if (data != NULL && bytes != want) {
    char buf[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "literal_create_array: %s needs %zu bytes, %zu given",
                      graph_type_str(&t, buf, sizeof buf), want, bytes);
  }
  if ((st = lit_new_checked(&t, out)) != OPTIC_OK) return st;
  if (data && want) memcpy((*out)->data, data, want);
  return OPTIC_OK;
}

optic_status optic_literal_create_tuple(const optic_literal_t *const *elements, int32_t n, optic_literal_t **out) {
  if (out) *out = NULL;
  if (out == NULL || n < 0 || (n > 0 && elements == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal_create_tuple: NULL argument or negative count");
  }
  for (int32_t i = 0; i < n; i++) {
    if (elements[i] == NULL)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal_create_tuple: element %d is NULL", (int)i);
  }
  return lit_tuple_of(elements, n, out);
}

optic_status optic_literal_clone(const optic_literal_t *lit, optic_literal_t **out) {
  if (out) *out = NULL;
  if (lit == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "literal_clone: NULL argument");
  return lit_clone(lit, out);
}

void optic_literal_destroy(optic_literal_t *lit) { lit_free(lit); }

const optic_type *optic_literal_type(const optic_literal_t *lit) { return lit ? &lit->type : NULL; }

const void *optic_literal_data(const optic_literal_t *lit, size_t *bytes) {
  if (bytes) *bytes = lit ? lit->bytes : 0;
  return lit ? lit->data : NULL;
}

void *optic_literal_mutable_data(optic_literal_t *lit, size_t *bytes) {
  if (bytes) *bytes = lit ? lit->bytes : 0;
  return lit ? lit->data : NULL;
}

int32_t optic_literal_tuple_size(const optic_literal_t *lit) {
  return lit && optic_type_is_tuple(&lit->type) ? lit->type.tuple_size : 0;
}

const optic_literal_t *optic_literal_element(const optic_literal_t *lit, int32_t i) {
  if (lit == NULL || !optic_type_is_tuple(&lit->type) || i < 0 || i >= lit->type.tuple_size) return NULL;
  return lit->elements[i];
}

/* ------------------------------------------------------------ text */

/* snprintf into buf at offset *n, keeping *n the length needed. */
static void put(char *buf, size_t size, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, int *n, const char *fmt, ...) {
  size_t used = (size_t)*n < size ? (size_t)*n : size;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf ? buf + used : NULL, buf ? size - used : 0, fmt, ap);
  va_end(ap);
  if (k > 0) *n += k;
}

static void put_element(char *buf, size_t size, int *n, optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: {
      float v;
      memcpy(&v, p, sizeof v);
      put(buf, size, n, "%.9g", (double)v);
      break;
    }
    case OPTIC_F64: {
      double v;
      memcpy(&v, p, sizeof v);
      put(buf, size, n, "%.17g", v);
      break;
    }
    case OPTIC_S32: {
      int32_t v;
      memcpy(&v, p, sizeof v);
      put(buf, size, n, "%d", (int)v);
      break;
    }
    case OPTIC_F16:
    case OPTIC_BF16: {
      float v;
      optic_convert_elements(dt, p, OPTIC_F32, &v, 1);
      put(buf, size, n, "%.5g", (double)v);
      break;
    }
    case OPTIC_S8:
    case OPTIC_S16:
    case OPTIC_S64: {
      int64_t v;
      optic_convert_elements(dt, p, OPTIC_S64, &v, 1);
      put(buf, size, n, "%lld", (long long)v);
      break;
    }
    case OPTIC_U16:
    case OPTIC_U32:
    case OPTIC_U64: {
      uint64_t v;
      optic_convert_elements(dt, p, OPTIC_U64, &v, 1);
      put(buf, size, n, "%llu", (unsigned long long)v);
      break;
    }
    default: put(buf, size, n, "%u", (unsigned)*p); break;
  }
}

static void format_lit(const optic_literal_t *lit, char *buf, size_t size, int *n) {
  if (optic_type_is_tuple(&lit->type)) {
    put(buf, size, n, "(");
    for (int32_t i = 0; i < lit->type.tuple_size; i++) {
      if (i) put(buf, size, n, ", ");
      format_lit(lit->elements[i], buf, size, n);
    }
    put(buf, size, n, ")");
    return;
  }
  char tb[TYPE_BUF];
  put(buf, size, n, "%s ", graph_type_str(&lit->type, tb, sizeof tb));
  const optic_shape *s = &lit->type.shape;
  size_t es = optic_dtype_size(lit->type.dtype), count = lit_elements(lit);
  if (s->rank == 0) {
    put_element(buf, size, n, lit->type.dtype, lit->data);
    return;
  }
  int64_t idx[OPTIC_MAX_RANK] = {0};
  for (int32_t d = 0; d < s->rank; d++) put(buf, size, n, "{");
  for (size_t i = 0; i < count; i++) {
    put_element(buf, size, n, lit->type.dtype, (const unsigned char *)lit->data + i * es);
    eval_next_index(s->rank, s->dims, idx);
    /* Close the dims whose index wrapped to 0, then reopen them. */
    int32_t wrapped = 0;
    for (int32_t d = s->rank - 1; d >= 0 && idx[d] == 0; d--) wrapped++;
    if (i + 1 == count) break;
    for (int32_t k = 0; k < wrapped; k++) put(buf, size, n, "}");
    put(buf, size, n, ", ");
    for (int32_t k = 0; k < wrapped; k++) put(buf, size, n, "{");
  }
  for (int32_t d = 0; d < s->rank; d++) put(buf, size, n, "}");
}

int optic_literal_format(const optic_literal_t *lit, char *buf, size_t size) {
  if (buf && size) buf[0] = '\0';
  if (lit == NULL) return snprintf(buf, size, "(null)");
  int n = 0;
  format_lit(lit, buf, size, &n);
  return n;
}

/* ------------------------------------------------------------ comparison */

static double element_as_double(optic_dtype dt, const unsigned char *p) {
  switch (dt) {
    case OPTIC_F32: {
      float v;
      memcpy(&v, p, sizeof v);
      return (double)v;
    }
    case OPTIC_F64: {
      double v;
      memcpy(&v, p, sizeof v);
      return v;
    }
    case OPTIC_S32: {
      int32_t v;
      memcpy(&v, p, sizeof v);
      return v;
    }
    default: {
      double v = 0;
      if (optic_dtype_has_values(dt)) optic_convert_elements(dt, p, OPTIC_F64, &v, 1);
      return v;
    }
  }
}

static bool element_matches(optic_dtype dt, const unsigned char *e, const unsigned char *a,
                            optic_literal_match_mode mode, double abs_tol, double rel_tol) {
  size_t es = optic_dtype_size(dt);
  bool is_float = optic_dtype_is_float(dt);
  if (memcmp(e, a, es) == 0) return true;
  if (!is_float || mode == OPTIC_MATCH_BITWISE) return false;
  double x = element_as_double(dt, e), y = element_as_double(dt, a);
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (mode == OPTIC_MATCH_NAN_AWARE) return false;
  if (x == y) return true;
  if (isinf(x) || isinf(y)) return false;
  return fabs(y - x) <= abs_tol + rel_tol * fabs(x);
}

static bool match_lit(const optic_literal_t *e, const optic_literal_t *a, optic_literal_match_mode mode, double abs_tol,
                      double rel_tol, char *why, size_t why_size, const char *path) {
  char tb1[TYPE_BUF], tb2[TYPE_BUF];
  if (!optic_type_equal(&e->type, &a->type)) {
    if (why) {
      snprintf(why, why_size, "%stype: expected %s, got %s", path, graph_type_str(&e->type, tb1, sizeof tb1),
               graph_type_str(&a->type, tb2, sizeof tb2));
    }
    return false;
  }
  if (optic_type_is_tuple(&e->type)) {
    for (int32_t i = 0; i < e->type.tuple_size; i++) {
      char sub[96];
      snprintf(sub, sizeof sub, "%stuple element %d: ", path, (int)i);
      if (!match_lit(e->elements[i], a->elements[i], mode, abs_tol, rel_tol, why, why_size, sub)) return false;
    }
    return true;
  }
  optic_dtype dt = e->type.dtype;
  size_t es = optic_dtype_size(dt), count = lit_elements(e);
  const unsigned char *pe = e->data, *pa = a->data;
  for (size_t i = 0; i < count; i++) {
    if (element_matches(dt, pe + i * es, pa + i * es, mode, abs_tol, rel_tol)) continue;
    if (why) {
      int64_t idx[OPTIC_MAX_RANK];
      size_t rest = i;
      for (int32_t d = e->type.shape.rank - 1; d >= 0; d--) {
        idx[d] = (int64_t)(rest % (size_t)e->type.shape.dims[d]);
        rest /= (size_t)e->type.shape.dims[d];
      }
      char ib[160], vb1[40], vb2[40];
      int n = 0;
      put(ib, sizeof ib, &n, "[");
      for (int32_t d = 0; d < e->type.shape.rank; d++)
        put(ib, sizeof ib, &n, "%s%lld", d ? "," : "", (long long)idx[d]);
      put(ib, sizeof ib, &n, "]");
      n = 0;
      put_element(vb1, sizeof vb1, &n, dt, pe + i * es);
      n = 0;
      put_element(vb2, sizeof vb2, &n, dt, pa + i * es);
      snprintf(why, why_size, "%selement %zu (index %s): expected %s, got %s", path, i, ib, vb1, vb2);
    }
    return false;
  }
  return true;
}

bool optic_literal_match(const optic_literal_t *expected, const optic_literal_t *actual, optic_literal_match_mode mode,
                         double abs_tol, double rel_tol, char *why, size_t why_size) {
  if (why && why_size) why[0] = '\0';
  if (why_size == 0) why = NULL;
  if (expected == NULL || actual == NULL) {
    if (why) snprintf(why, why_size, "a literal is NULL");
    return false;
  }
  if ((unsigned)mode > OPTIC_MATCH_TOLERANCE || !(abs_tol >= 0) || !(rel_tol >= 0)) {
    if (why) snprintf(why, why_size, "bad match mode %d or negative tolerance", (int)mode);
    return false;
  }
  return match_lit(expected, actual, mode, abs_tol, rel_tol, why, why_size, "");
}
