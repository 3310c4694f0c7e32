/* Buffer assignment by liveness over a schedule into one arena: every result
 * leaf that defines bytes of its own (not a parameter, constant or output)
 * gets a 64-byte aligned block from the best-fit allocator at its step and
 * gives it back after its last use; an elementwise result may take over the
 * block of an operand that dies at it; aliases report their operand's slot.
 * Also the plan object and its accessors. O(n log n). */
#include <stdlib.h>
#include <string.h>

#include "graph/buffer_internal.h"

static bool round_up(size_t size, size_t *out) {
  if (size > SIZE_MAX - (OPTIC_BUFFER_ALIGNMENT - 1)) return false;
  *out = (size + OPTIC_BUFFER_ALIGNMENT - 1) & ~(size_t)(OPTIC_BUFFER_ALIGNMENT - 1);
  return true;
}

static bool add_ok(size_t *acc, size_t x) {
  if (*acc > SIZE_MAX - x) return false;
  *acc += x;
  return true;
}

/* Walks the schedule: births (or in-place takeover) at each step, then the
 * frees of the values whose last use it is. Fills the defining slots. */
static optic_status place(const gs_values *v, const optic_schedule_t *s, const int32_t *last, const int32_t *in_place,
                          optic_buffer_slot *slots, size_t *arena) {
  int32_t n = v->n;
  int32_t *at = malloc(((size_t)n + 1) * sizeof *at);
  int32_t *die_start = calloc((size_t)n + 2, sizeof *die_start);
  int32_t *dying = malloc(((size_t)v->n_leaves + 1) * sizeof *dying);
  uint8_t *handed_on = calloc((size_t)v->n_leaves + 1, 1);
  gs_arena *a = NULL;
  optic_status st = OPTIC_OK;
  if (!at || !die_start || !dying || !handed_on) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_assign: out of memory");
    goto done;
  }
  /* Arena values bucketed by the step of their last use, in value order. */
  int32_t n_arena = 0;
  for (int32_t l = 0; l < v->n_leaves; l++) {
    if (v->value_of[l] == l && v->kind[l] == OPTIC_BUFFER_ARENA && v->size[l] > 0) {
      die_start[last[l] + 1]++;
      n_arena++;
    }
  }
  for (int32_t t = 0; t < n; t++) die_start[t + 1] += die_start[t];
  for (int32_t l = 0; l < v->n_leaves; l++) {
    if (v->value_of[l] == l && v->kind[l] == OPTIC_BUFFER_ARENA && v->size[l] > 0) dying[die_start[last[l]]++] = l;
  }
  for (int32_t t = n; t > 0; t--) die_start[t] = die_start[t - 1];
  die_start[0] = 0;
  for (int32_t i = 0; i < n; i++) at[s->pos[i]] = i;
  if ((st = gs_arena_create(n_arena + 2, &a)) != OPTIC_OK) goto done;
  for (int32_t t = 0; t < n; t++) {
    int32_t x = at[t];
    for (int32_t l = v->leaf_start[x]; l < v->leaf_start[x + 1]; l++) {
      if (v->value_of[l] != l) continue;
      optic_buffer_slot *sl = &slots[l];
      *sl = (optic_buffer_slot){.kind = (optic_buffer_kind)v->kind[l],
                                .size = v->size[l],
                                .source = v->ids[x],
                                .source_leaf = l - v->leaf_start[x],
                                .output_leaf = v->output_leaf[l],
                                .in_place_of = OPTIC_NO_NODE};
      if (sl->kind != OPTIC_BUFFER_ARENA || sl->size == 0) continue;
      int32_t u = in_place[x];
      if (u >= 0) {
        sl->offset = slots[u].offset;
        sl->in_place_of = v->ids[v->owner[u]];
        handed_on[u] = 1;
        continue;
      }
      size_t block;
      if (!round_up(sl->size, &block)) {
        st = optic_fail(OPTIC_ERR_OVERFLOW, "buffer_assign: %s's %zu bytes overflow when aligned", v->instr[x]->name,
                        sl->size);
        goto done;
      }
      if ((st = gs_arena_alloc(a, block, &sl->offset)) != OPTIC_OK) goto done;
    }
    for (int32_t d = die_start[t]; d < die_start[t + 1]; d++) {
      int32_t l = dying[d];
      if (handed_on[l]) continue;
      size_t block = 0;
      round_up(v->size[l], &block); /* succeeded when it was allocated */
      if ((st = gs_arena_free(a, slots[l].offset, block)) != OPTIC_OK) goto done;
    }
  }
  *arena = gs_arena_high_water(a);
done:
  gs_arena_destroy(a);
  free(at);
  free(die_start);
  free(dying);
  free(handed_on);
  return st;
}

static optic_status totals(const gs_values *v, optic_buffer_plan_t *p) {
  for (int32_t i = 0; i < v->n; i++) {
    size_t *acc = v->instr[i]->op == OPTIC_OP_PARAMETER  ? &p->parameter_bytes
                  : v->instr[i]->op == OPTIC_OP_CONSTANT ? &p->constant_bytes
                                                         : NULL;
    for (int32_t l = v->leaf_start[i]; acc && l < v->leaf_start[i + 1]; l++) {
      if (!add_ok(acc, v->size[l])) return optic_fail(OPTIC_ERR_OVERFLOW, "buffer_assign: byte totals overflow size_t");
    }
  }
  for (int32_t l = v->leaf_start[v->root]; l < v->leaf_start[v->root + 1]; l++) {
    if (!add_ok(&p->output_bytes, v->size[l])) {
      return optic_fail(OPTIC_ERR_OVERFLOW, "buffer_assign: byte totals overflow size_t");
    }
  }
  return OPTIC_OK;
}

optic_status optic_buffer_plan_create(const optic_module_t *m, const optic_schedule_t *s, optic_buffer_plan_t **out) {
  if (out == NULL || s == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_assign: NULL argument");
  *out = NULL;
  gs_values v;
  optic_status st = gs_values_build(m, s->comp, "buffer_assign", &v);
  if (st != OPTIC_OK) return st;
  optic_buffer_plan_t *p = calloc(1, sizeof *p);
  int32_t *last = malloc(((size_t)v.n_leaves + 1) * sizeof *last);
  int32_t *in_place = malloc(((size_t)v.n + 1) * sizeof *in_place);
  if (p) {
    p->leaf_start = malloc(((size_t)v.n + 1) * sizeof *p->leaf_start);
    p->slots = calloc((size_t)v.n_leaves + 1, sizeof *p->slots);
  }
  if (!p || !last || !in_place || !p->leaf_start || !p->slots) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_assign: out of memory");
    goto done;
  }
  if ((st = gs_schedule_matches(&v, s, "buffer_assign")) != OPTIC_OK) goto done;
  if ((st = gs_liveness(&v, s->pos, last, in_place, NULL)) != OPTIC_OK) goto done;
  if ((st = place(&v, s, last, in_place, p->slots, &p->arena_bytes)) != OPTIC_OK) goto done;
  /* Aliases report the slot of the leaf they alias (defined earlier). */
  for (int32_t l = 0; l < v.n_leaves; l++) {
    if (v.value_of[l] != l) p->slots[l] = p->slots[v.value_of[l]];
  }
  memcpy(p->leaf_start, v.leaf_start, ((size_t)v.n + 1) * sizeof *p->leaf_start);
  if ((st = totals(&v, p)) != OPTIC_OK) goto done;
  st = gs_schedule_clone(s, &p->schedule);
done:
  free(last);
  free(in_place);
  gs_values_free(&v);
  if (st != OPTIC_OK) {
    if (p) {
      free(p->leaf_start);
      free(p->slots);
      free(p);
    }
    return st;
  }
  *out = p;
  return OPTIC_OK;
}

void optic_buffer_plan_destroy(optic_buffer_plan_t *p) {
  if (p == NULL) return;
  gs_schedule_release(&p->schedule);
  free(p->leaf_start);
  free(p->slots);
  free(p);
}

const optic_schedule_t *optic_buffer_plan_schedule(const optic_buffer_plan_t *p) { return p ? &p->schedule : NULL; }

size_t optic_buffer_plan_arena_bytes(const optic_buffer_plan_t *p) { return p ? p->arena_bytes : 0; }

int32_t optic_buffer_plan_leaf_count(const optic_buffer_plan_t *p, optic_node_id id) {
  if (p == NULL) return 0;
  int32_t i = gs_local_index(p->schedule.ids, p->schedule.n, id);
  return i < 0 ? 0 : p->leaf_start[i + 1] - p->leaf_start[i];
}

optic_status optic_buffer_plan_slot(const optic_buffer_plan_t *p, optic_node_id id, int32_t leaf,
                                    optic_buffer_slot *out) {
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_plan_slot: NULL argument");
  int32_t i = gs_local_index(p->schedule.ids, p->schedule.n, id);
  if (i < 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_plan_slot: instruction %d is not in this plan", (int)id);
  }
  int32_t count = p->leaf_start[i + 1] - p->leaf_start[i];
  if (leaf < 0 || leaf >= count) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_plan_slot: leaf %d of instruction %d (it has %d)", (int)leaf,
                      (int)id, (int)count);
  }
  *out = p->slots[p->leaf_start[i] + leaf];
  return OPTIC_OK;
}

optic_status optic_buffer_plan_memory(const optic_buffer_plan_t *p, optic_memory_estimate *out) {
  if (p == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_plan_memory: NULL argument");
  optic_memory_estimate e = {.arena_bytes = p->arena_bytes,
                             .parameter_bytes = p->parameter_bytes,
                             .output_bytes = p->output_bytes,
                             .constant_bytes = p->constant_bytes};
  e.total_bytes = e.arena_bytes;
  if (!add_ok(&e.total_bytes, e.parameter_bytes) || !add_ok(&e.total_bytes, e.output_bytes)) {
    return optic_fail(OPTIC_ERR_OVERFLOW, "buffer_plan_memory: total overflows size_t");
  }
  *out = e;
  return OPTIC_OK;
}
