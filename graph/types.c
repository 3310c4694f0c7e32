/* Instruction types (arrays and tuples): construction, deep copy, equality,
 * formatting; and the module's instruction-name set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "core/unconst.h"

optic_type optic_type_array(optic_dtype dtype, const optic_shape *shape) {
  optic_type t = {.dtype = dtype};
  if (shape) t.shape = *shape;
  return t;
}

bool optic_type_is_tuple(const optic_type *t) { return t != NULL && t->dtype == OPTIC_DTYPE_INVALID; }

double graph_array_elements(const optic_type *t) {
  if (t == NULL || optic_type_is_tuple(t)) return 0;
  double n = 1;
  for (int32_t d = 0; d < t->shape.rank; d++) n *= (double)t->shape.dims[d];
  return n;
}

double graph_array_bytes(const optic_type *t) {
  return t == NULL ? 0 : graph_array_elements(t) * (double)optic_dtype_size(t->dtype);
}

bool optic_type_equal(const optic_type *a, const optic_type *b) {
  if (a == NULL || b == NULL || a->dtype != b->dtype) return false;
  if (!optic_type_is_tuple(a)) return optic_shape_equal(&a->shape, &b->shape);
  if (a->tuple_size != b->tuple_size) return false;
  for (int32_t i = 0; i < a->tuple_size; i++) {
    if (!optic_type_equal(&a->elements[i], &b->elements[i])) return false;
  }
  return true;
}

static int format_into(const optic_type *t, char *buf, size_t size) {
  if (!optic_type_is_tuple(t)) return optic_shape_format(&t->shape, t->dtype, buf, size);
  int n = snprintf(buf, size, "(");
  for (int32_t i = 0; i < t->tuple_size; i++) {
    size_t used = (size_t)n < size ? (size_t)n : size;
    if (i) n += snprintf(buf + used, size - used, ", "), used = (size_t)n < size ? (size_t)n : size;
    n += format_into(&t->elements[i], buf + used, size - used);
  }
  size_t used = (size_t)n < size ? (size_t)n : size;
  n += snprintf(buf + used, size - used, ")");
  return n;
}

int optic_type_format(const optic_type *t, char *buf, size_t size) {
  if (t == NULL) return snprintf(buf, size, "(null)");
  return format_into(t, buf, size);
}

const char *graph_type_str(const optic_type *t, char *buf, size_t size) {
  optic_type_format(t, buf, size);
  return buf;
}

optic_status graph_type_clone(const optic_type *src, optic_type *dst) {
  *dst = *src;
  dst->elements = NULL;
  if (!optic_type_is_tuple(src)) {
    dst->tuple_size = 0;
    return OPTIC_OK;
  }
  if (src->tuple_size < 0 || (src->tuple_size > 0 && src->elements == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "type: tuple of %d elements without element types",
                      (int)src->tuple_size);
  }
  if (src->tuple_size == 0) return OPTIC_OK;
  optic_type *els = calloc((size_t)src->tuple_size, sizeof *els);
  if (els == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "type: cannot copy a %d-tuple", (int)src->tuple_size);
  for (int32_t i = 0; i < src->tuple_size; i++) {
    optic_status st = graph_type_clone(&src->elements[i], &els[i]);
    if (st != OPTIC_OK) {
      for (int32_t k = 0; k < i; k++) graph_type_release(&els[k]);
      free(els);
      return st;
    }
  }
  dst->elements = els;
  return OPTIC_OK;
}

void graph_type_release(optic_type *t) {
  if (t == NULL || !optic_type_is_tuple(t) || t->elements == NULL) return;
  optic_type *els = OPTIC_UNCONST(optic_type *, t->elements);
  for (int32_t i = 0; i < t->tuple_size; i++) graph_type_release(&els[i]);
  free(els);
  t->elements = NULL;
}

/* ---- name set: open addressing, FNV-1a, load factor <= 1/2 */

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  /* FNV's low bits depend only on the low bits of the input bytes, and the
   * table indexes by the low bits: names differing in digits ("dot.123")
   * clustered into long probe runs. Mixing the high bits down (the murmur3
   * finalizer) spreads them. */
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

bool graph_names_contains(const optic_name_set *s, const char *name) {
  if (s->cap == 0) return false;
  for (size_t i = hash_name(name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (s->slots[i] == NULL) return false;
    if (strcmp(s->slots[i], name) == 0) return true;
  }
}

static void place(char **slots, size_t cap, char *name) {
  size_t i = hash_name(name) & (cap - 1);
  while (slots[i] != NULL) i = (i + 1) & (cap - 1);
  slots[i] = name;
}

optic_status graph_names_insert(optic_name_set *s, const char *name, const char **stored) {
  if ((s->count + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "graph: cannot grow the name table");
    for (size_t i = 0; i < s->cap; i++) {
      if (s->slots[i]) place(slots, cap, s->slots[i]);
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
  }
  char *copy = strdup(name);
  if (copy == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "graph: cannot copy a name");
  place(s->slots, s->cap, copy);
  s->count++;
  if (stored) *stored = copy;
  return OPTIC_OK;
}

void graph_names_free(optic_name_set *s) {
  for (size_t i = 0; i < s->cap; i++) free(s->slots[i]);
  free(s->slots);
  memset(s, 0, sizeof *s);
}
