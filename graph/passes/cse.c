/* Common subexpression elimination by hash-consing: within each needed
 * computation, a live instruction equal to an earlier live one (same opcode, operand
 * ids, type, attributes, called computations and constant bytes) hands its
 * uses to that first occurrence. Visits in instruction order, so the result
 * never depends on hash values or addresses. Never merges parameters or
 * anything with an effect (all-reduce, or a call into code that has one). */
#include <stdlib.h>
#include <string.h>

#include "graph/passes/passes.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

static uint64_t hash_type(uint64_t h, const optic_type *t) {
  h = mix(h, (uint64_t)t->dtype);
  h = mix(h, (uint64_t)t->tuple_size);
  if (optic_type_is_tuple(t)) {
    for (int32_t i = 0; i < t->tuple_size; i++) h = hash_type(h, &t->elements[i]);
    return h;
  }
  h = mix(h, (uint64_t)t->shape.rank);
  for (int32_t d = 0; d < t->shape.rank; d++) h = mix(h, (uint64_t)t->shape.dims[d]);
  return h;
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  for (; i < n; i++) tail = (tail << 8) | p[i];
  return mix(h, tail ^ ((uint64_t)n << 56));
}

/* Everything equal_instr compares goes into the hash. */
static uint64_t hash_instr(const optic_instr *in) {
  uint64_t h = mix(0x243F6A8885A308D3ull, (uint64_t)in->op);
  h = hash_type(h, &in->type);
  h = mix(h, (uint64_t)in->n_operands);
  for (int32_t i = 0; i < in->n_operands; i++) h = mix(h, (uint64_t)in->operands[i]);
  h = mix(h, (uint64_t)in->n_ints);
  for (int32_t i = 0; i < in->n_ints; i++) h = mix(h, (uint64_t)in->ints[i]);
  h = mix(h, (uint64_t)in->cmp);
  h = mix(h, (uint64_t)in->n_calls);
  for (int32_t i = 0; i < in->n_calls; i++) h = mix(h, (uint64_t)in->calls[i]);
  return hash_bytes(h, in->data, in->data_bytes);
}

static bool equal_instr(const optic_instr *a, const optic_instr *b) {
  if (a->op != b->op || a->n_operands != b->n_operands || a->n_ints != b->n_ints || a->cmp != b->cmp ||
      a->n_calls != b->n_calls || a->data_bytes != b->data_bytes || !optic_type_equal(&a->type, &b->type)) {
    return false;
  }
  if (a->n_operands && memcmp(a->operands, b->operands, (size_t)a->n_operands * sizeof *a->operands) != 0) return false;
  if (a->n_ints && memcmp(a->ints, b->ints, (size_t)a->n_ints * sizeof *a->ints) != 0) return false;
  if (a->n_calls && memcmp(a->calls, b->calls, (size_t)a->n_calls * sizeof *a->calls) != 0) return false;
  return a->data_bytes == 0 || memcmp(a->data, b->data, a->data_bytes) == 0;
}

/* Open addressing with linear probing, at most half full. */
typedef struct cse_table {
  optic_node_id *ids; /* OPTIC_NO_NODE: empty */
  uint64_t *hashes;
  size_t mask;
} cse_table;

static optic_status table_init(cse_table *t, int32_t n) {
  size_t cap = 16;
  while (cap < 2 * (size_t)n) cap *= 2;
  t->ids = malloc(cap * sizeof *t->ids);
  t->hashes = malloc(cap * sizeof *t->hashes);
  if (t->ids == NULL || t->hashes == NULL) {
    free(t->ids);
    free(t->hashes);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "cse: out of memory for the hash table");
  }
  for (size_t i = 0; i < cap; i++) t->ids[i] = OPTIC_NO_NODE;
  t->mask = cap - 1;
  return OPTIC_OK;
}

/* The earlier instruction equal to id, or OPTIC_NO_NODE after inserting id. */
static optic_node_id find_or_insert(const optic_module_t *m, cse_table *t, optic_node_id id, int64_t *probes) {
  const optic_instr *in = &m->instrs[id];
  uint64_t h = hash_instr(in);
  for (size_t s = h & t->mask;; s = (s + 1) & t->mask) {
    (*probes)++;
    optic_node_id other = t->ids[s];
    if (other == OPTIC_NO_NODE) {
      t->ids[s] = id;
      t->hashes[s] = h;
      return OPTIC_NO_NODE;
    }
    if (t->hashes[s] == h && equal_instr(&m->instrs[other], in)) return other;
  }
}

optic_status pass_cse(optic_module_t *m, const pass_liveness *l, pass_counts *counts, bool *changed) {
  for (int32_t q = 0; q < l->n_comps; q++) {
    optic_comp_id comp = l->comps[q];
    int32_t n;
    /* replace_all_uses never edits the list, so the pointer stays valid. */
    const optic_node_id *list = graph_instructions(m, comp, &n);
    cse_table t = {0};
    optic_status st = table_init(&t, n);
    if (st != OPTIC_OK) return st;
    for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
      optic_node_id id = list[i];
      const optic_instr *in = &m->instrs[id];
      if (!pass_is_live(l, id) || in->op == OPTIC_OP_PARAMETER || pass_instr_has_effect(m, in, l->comp_effect)) {
        continue;
      }
      /* Operands were made canonical when their duplicates were replaced
       * earlier in this loop, so equal values hash equal here. */
      optic_node_id first = find_or_insert(m, &t, id, &counts->work);
      if (first == OPTIC_NO_NODE) continue;
      if ((st = optic_node_replace_all_uses(m, id, first)) == OPTIC_OK) {
        counts->replaced++;
        *changed = true;
      }
    }
    free(t.ids);
    free(t.hashes);
    if (st != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}
