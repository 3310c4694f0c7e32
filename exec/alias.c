/* The aliasing rule of optic_program_run: a caller's output buffer shares no
 * byte with an input, another output or a constant of the program, because
 * the steps read operands while they write results (a transpose into its
 * own input is silently wrong). Checked before anything runs, in
 * O(n log n) over the run's buffers plus O(log k) per output over the
 * program's k constants. Never allocates during a run. */
#include <stdio.h>
#include <stdlib.h>

#include "exec/exec_internal.h"

enum { ALIAS_INPUT, ALIAS_OUTPUT, ALIAS_CONSTANT };

static int const_by_lo(const void *pa, const void *pb) {
  const optic_range *a = pa, *b = pb;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

optic_status exec_bind_constants(exec_bound *b) {
  const optic_module_t *m = b->m;
  size_t n = 0;
  for (int32_t pass = 0; pass < 2; pass++) {
    n = 0;
    for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
      size_t bytes;
      const void *data = optic_node_constant_data(m, id, &bytes);
      if (data == NULL || bytes == 0) continue;
      if (pass == 1) {
        b->consts[n] =
            (optic_range){.lo = (uintptr_t)data, .hi = (uintptr_t)data + bytes, .kind = ALIAS_CONSTANT, .index = id};
      }
      n++;
    }
    if (pass == 0) {
      b->consts = malloc((n + 1) * sizeof *b->consts);
      b->consts_max_hi = malloc((n + 1) * sizeof *b->consts_max_hi);
      if (b->consts == NULL || b->consts_max_hi == NULL) {
        return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "runtime bind: out of memory");
      }
    }
  }
  qsort(b->consts, n, sizeof *b->consts, const_by_lo);
  optic_ranges_index(b->consts, n, b->consts_max_hi);
  b->n_consts = n;
  return OPTIC_OK;
}

static const char *kind_name(int32_t kind) { return kind == ALIAS_INPUT ? "input" : "output"; }

/* a and b share a byte and at least one is an output: name the output
 * first (of two outputs, the later one). */
static optic_status conflict(const optic_range *a, const optic_range *b) {
  const optic_range *o = a->written ? a : b, *other = o == a ? b : a;
  if (a->written && b->written && b->index > a->index) o = b, other = a;
  const char *rule = "an output must not share memory with an input or another output";
  size_t o_bytes = (size_t)(o->hi - o->lo), other_bytes = (size_t)(other->hi - other->lo);
  if (o->lo == other->lo && o->hi == other->hi) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_program_run: output %d is the same buffer as %s %d (%p, %zu bytes); %s", (int)o->index,
                      kind_name(other->kind), (int)other->index, (void *)o->lo, o_bytes, rule);
  }
  uintptr_t lo = o->lo > other->lo ? o->lo : other->lo, hi = o->hi < other->hi ? o->hi : other->hi;
  return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                    "optic_program_run: output %d (%p, %zu bytes) overlaps %s %d (%p, %zu bytes) in %zu bytes; %s",
                    (int)o->index, (void *)o->lo, o_bytes, kind_name(other->kind), (int)other->index, (void *)other->lo,
                    other_bytes, (size_t)(hi - lo), rule);
}

static optic_status add_range(exec_run_ranges *tab, const optic_tensor *x, int32_t kind, int32_t index) {
  if (x->data == NULL) return OPTIC_OK; /* the context's output, or an empty input */
  size_t bytes;
  optic_status st = optic_shape_bytes(&x->shape, x->dtype, &bytes);
  if (st != OPTIC_OK) return st;
  if (bytes == 0) return OPTIC_OK; /* an empty buffer holds no byte to share */
  uintptr_t lo = (uintptr_t)x->data;
  tab->r[tab->n++] =
      (optic_range){.lo = lo, .hi = lo + bytes, .kind = kind, .index = index, .written = kind == ALIAS_OUTPUT};
  return OPTIC_OK;
}

optic_status exec_check_aliasing(const exec_bound *b, exec_run_ranges *tab, const optic_tensor *in, int32_t n_in,
                                 const optic_tensor *out, int32_t n_out) {
  tab->n = 0;
  optic_status st = OPTIC_OK;
  for (int32_t i = 0; i < n_in && st == OPTIC_OK; i++) st = add_range(tab, &in[i], ALIAS_INPUT, i);
  for (int32_t j = 0; j < n_out && st == OPTIC_OK; j++) st = add_range(tab, &out[j], ALIAS_OUTPUT, j);
  if (st != OPTIC_OK) return st;
  size_t x, y;
  if (optic_ranges_find_conflict(tab->r, tab->n, &x, &y)) return conflict(&tab->r[x], &tab->r[y]);
  for (size_t k = 0; k < tab->n; k++) {
    const optic_range *o = &tab->r[k];
    if (!o->written) continue;
    ptrdiff_t c = optic_ranges_hit(b->consts, b->consts_max_hi, b->n_consts, o->lo, o->hi);
    if (c >= 0) {
      const optic_range *cr = &b->consts[c];
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "optic_program_run: output %d (%p, %zu bytes) overlaps constant '%s' of the program (%p, %zu "
                        "bytes); the program's constants are read-only",
                        (int)o->index, (void *)o->lo, (size_t)(o->hi - o->lo), optic_node_name(b->m, cr->index),
                        (void *)cr->lo, (size_t)(cr->hi - cr->lo));
    }
  }
  optic_ranges_index(tab->r, tab->n, tab->max_hi);
  return OPTIC_OK;
}

bool exec_caller_overlaps(const exec_run_ranges *tab, const void *p, size_t bytes) {
  uintptr_t lo = (uintptr_t)p;
  return bytes > 0 && optic_ranges_hit(tab->r, tab->max_hi, tab->n, lo, lo + bytes) >= 0;
}
