/* A deep copy of a module sharing nothing with the original, with the same
 * ids (optic_module_clone: optic_compile optimizes a copy while the caller's
 * module stays as it was), and renumbering in place so that ids are
 * topological again after passes rewired uses (a fusion instruction is newer
 * than the users it feeds), for optic_compile's dense program tables. */
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"

static void *copy_array(const void *src, size_t n, size_t elem, bool *ok) {
  if (n == 0 || src == NULL) return NULL;
  void *p = malloc(n * elem);
  if (p == NULL) {
    *ok = false;
    return NULL;
  }
  memcpy(p, src, n * elem);
  return p;
}

static int cmp_id(const void *a, const void *b) {
  optic_node_id x = *(const optic_node_id *)a, y = *(const optic_node_id *)b;
  return (x > y) - (x < y);
}

/* Copies instruction `src` into the zeroed `dst`, everything but the name. */
static bool copy_instr(const optic_instr *src, optic_instr *dst) {
  bool ok = true;
  *dst = *src;
  dst->type.elements = NULL, dst->type.tuple_size = 0;
  dst->operands = NULL, dst->user_pos = NULL, dst->users = NULL, dst->user_slot = NULL;
  dst->ints = NULL, dst->calls = NULL, dst->data = NULL;
  dst->name = NULL;
  dst->cap_users = src->n_users;
  if (graph_type_clone(&src->type, &dst->type) != OPTIC_OK) return false;
  /* operands and user_pos share one allocation (graph/internal.h) */
  dst->operands = copy_array(src->operands, 2 * (size_t)src->n_operands, sizeof *src->operands, &ok);
  if (dst->operands != NULL) dst->user_pos = dst->operands + src->n_operands;
  /* users then user_slot, n_users each (cap_users = n_users): one allocation */
  if (src->n_users > 0) {
    dst->users = malloc(2 * (size_t)src->n_users * sizeof *dst->users);
    if (dst->users == NULL) return false;
    dst->user_slot = dst->users + src->n_users;
    memcpy(dst->users, src->users, (size_t)src->n_users * sizeof *dst->users);
    memcpy(dst->user_slot, src->user_slot, (size_t)src->n_users * sizeof *dst->user_slot);
  }
  dst->ints = copy_array(src->ints, (size_t)src->n_ints, sizeof *src->ints, &ok);
  dst->calls = copy_array(src->calls, (size_t)src->n_calls, sizeof *src->calls, &ok);
  dst->data = copy_array(src->data, src->data_bytes, 1, &ok);
  return ok;
}

/* The new id of every old instruction (-1: dropped) and the count. Without
 * renumbering: the identity, removed instructions kept as removed. With it:
 * live instructions only, computation by computation, each computation in a
 * DFS post-order over operands from its instructions in creation order (so
 * an order that is already topological is kept), making every operand's id
 * smaller than its users'. */
static optic_status new_ids(const optic_module_t *m, bool renumber, int32_t *map, int32_t *n_new) {
  if (!renumber) {
    for (int32_t i = 0; i < m->n_instrs; i++) map[i] = i;
    *n_new = m->n_instrs;
    return OPTIC_OK;
  }
  for (int32_t i = 0; i < m->n_instrs; i++) map[i] = -1;
  int32_t *stack = malloc(((size_t)m->n_instrs + 1) * sizeof *stack);
  int32_t *next = malloc(((size_t)m->n_instrs + 1) * sizeof *next);
  if (stack == NULL || next == NULL) {
    free(stack), free(next);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "module_clone: out of memory");
  }
  /* map doubles as the visited mark: -2 while on the stack */
  int32_t count = 0;
  for (int32_t k = 0; k < m->n_comps; k++) {
    const optic_computation *c = &m->comps[k];
    for (int32_t t = 0; t < c->n_instrs; t++) {
      optic_node_id start = c->instrs[t];
      if (m->instrs[start].removed || map[start] != -1) continue;
      int32_t depth = 0;
      stack[depth] = start, next[depth++] = 0, map[start] = -2;
      while (depth > 0) {
        const optic_instr *in = &m->instrs[stack[depth - 1]];
        if (next[depth - 1] < in->n_operands) {
          optic_node_id o = in->operands[next[depth - 1]++];
          if (map[o] != -1) continue; /* placed, or on the stack (no cycles: builders make none) */
          map[o] = -2;
          stack[depth] = o, next[depth++] = 0;
        } else {
          map[stack[--depth]] = count++;
        }
      }
    }
  }
  free(stack), free(next);
  *n_new = count;
  return OPTIC_OK;
}

static optic_node_id remap(const int32_t *map, optic_node_id id) { return id < 0 ? id : map[id]; }

optic_status optic_module_clone(const optic_module_t *m, optic_module_t **out) {
  if (m == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "module_clone: NULL argument");
  *out = NULL;
  int32_t *map = malloc(((size_t)m->n_instrs + 1) * sizeof *map), n_new = 0;
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "module_clone: out of memory");
  optic_status st = new_ids(m, false, map, &n_new);
  optic_module_t *c = NULL;
  if (st == OPTIC_OK) st = optic_module_create(m->name, &c);
  if (st != OPTIC_OK) {
    free(map);
    return st;
  }
  c->entry = m->entry;
  /* Zeroed tables sized up front: on failure optic_module_destroy frees
   * whatever was copied so far (free(NULL) for the rest). */
  if (n_new > 0) {
    c->instrs = calloc((size_t)n_new, sizeof *c->instrs);
    if (c->instrs == NULL) goto oom;
    c->cap_instrs = c->n_instrs = n_new;
  }
  if (m->n_comps > 0) {
    c->comps = calloc((size_t)m->n_comps, sizeof *c->comps);
    if (c->comps == NULL) goto oom;
    c->cap_comps = c->n_comps = m->n_comps;
  }
  for (int32_t i = 0; i < m->n_instrs; i++) {
    if (map[i] < 0) continue;
    optic_instr *dst = &c->instrs[map[i]];
    if (!copy_instr(&m->instrs[i], dst)) goto oom;
    for (int32_t k = 0; k < dst->n_operands; k++) dst->operands[k] = remap(map, dst->operands[k]);
    for (int32_t k = 0; k < dst->n_users; k++) dst->users[k] = remap(map, dst->users[k]);
  }
  /* Names in new-id order (the name set is only a uniqueness check). */
  for (int32_t i = 0; i < m->n_instrs; i++) {
    if (map[i] >= 0 && graph_names_insert(&c->names, m->instrs[i].name, &c->instrs[map[i]].name) != OPTIC_OK) goto oom;
  }
  for (int32_t k = 0; k < m->n_comps; k++) {
    const optic_computation *src = &m->comps[k];
    optic_computation *dst = &c->comps[k];
    dst->root = remap(map, src->root);
    dst->name = strdup(src->name);
    if (dst->name == NULL || graph_names_insert(&c->comp_names, src->name, NULL) != OPTIC_OK) goto oom;
    if (src->n_instrs > 0) {
      dst->instrs = malloc((size_t)src->n_instrs * sizeof *dst->instrs);
      if (dst->instrs == NULL) goto oom;
      dst->cap_instrs = src->n_instrs;
      for (int32_t i = 0; i < src->n_instrs; i++) {
        if (!m->instrs[src->instrs[i]].removed) dst->instrs[dst->n_instrs++] = map[src->instrs[i]];
      }
    }
    if (src->n_params > 0) {
      dst->params = malloc((size_t)src->n_params * sizeof *dst->params);
      if (dst->params == NULL) goto oom;
      for (int32_t i = 0; i < src->n_params; i++) dst->params[i] = remap(map, src->params[i]);
      dst->n_params = dst->cap_params = src->n_params;
    }
  }
  if (m->n_aliases > 0) {
    c->aliases = malloc(sizeof *c->aliases * (size_t)m->n_aliases);
    if (c->aliases == NULL) goto oom;
    memcpy(c->aliases, m->aliases, sizeof *c->aliases * (size_t)m->n_aliases);
    c->n_aliases = m->n_aliases;
  }
  free(map);
  *out = c;
  return OPTIC_OK;
oom:
  free(map);
  optic_module_destroy(c);
  return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "module_clone: out of memory copying '%s'", m->name);
}

static void release_instr(optic_instr *in) {
  graph_type_release(&in->type);
  free(in->operands);
  free(in->users);
  free(in->ints);
  free(in->calls);
  free(in->data);
}

optic_status graph_module_renumber(optic_module_t *m) {
  int32_t *map = malloc(((size_t)m->n_instrs + 1) * sizeof *map), n_new = 0;
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "renumber: out of memory");
  optic_status st = new_ids(m, true, map, &n_new);
  optic_instr *moved = st == OPTIC_OK ? malloc(((size_t)n_new + 1) * sizeof *moved) : NULL;
  if (st == OPTIC_OK && moved == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "renumber: out of memory");
  if (st != OPTIC_OK) {
    free(map);
    return st;
  }
  /* Nothing below can fail: the module changes all at once. Names stay in
   * the name set (the instructions keep pointing at them). */
  for (int32_t i = 0; i < m->n_instrs; i++) {
    if (map[i] >= 0) moved[map[i]] = m->instrs[i];
    else release_instr(&m->instrs[i]);
  }
  for (int32_t i = 0; i < n_new; i++) {
    optic_instr *in = &moved[i];
    for (int32_t k = 0; k < in->n_operands; k++) in->operands[k] = map[in->operands[k]];
    for (int32_t k = 0; k < in->n_users; k++) in->users[k] = map[in->users[k]];
  }
  for (int32_t k = 0; k < m->n_comps; k++) {
    optic_computation *c = &m->comps[k];
    int32_t w = 0;
    for (int32_t i = 0; i < c->n_instrs; i++) {
      if (map[c->instrs[i]] >= 0) c->instrs[w++] = map[c->instrs[i]];
    }
    c->n_instrs = w;
    c->has_removed = false;
    /* new ids ascend in a topological order: list them that way */
    qsort(c->instrs, (size_t)c->n_instrs, sizeof *c->instrs, cmp_id);
    for (int32_t i = 0; i < c->n_params; i++) c->params[i] = remap(map, c->params[i]);
    c->root = remap(map, c->root);
  }
  free(m->instrs);
  m->instrs = moved;
  m->n_instrs = m->cap_instrs = n_new;
  free(map);
  return OPTIC_OK;
}
