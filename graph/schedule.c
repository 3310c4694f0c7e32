/* Schedule: a deterministic topological order of one computation's live
 * instructions that keeps peak live bytes low (DFS post-order from the root,
 * operands ordered by Sethi-Ullman's rule on estimated memory), and the
 * schedule object. O(n log n); never assigns offsets (buffer_assign.c). */
#include <stdlib.h>
#include <string.h>

#include "graph/buffer_internal.h"

/* Saturating: the estimates below over-count shared subgraphs and may grow
 * past size_t on pathological DAGs; they only order operands. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void gs_schedule_release(optic_schedule_t *s) {
  free(s->ids);
  free(s->order);
  free(s->pos);
  memset(s, 0, sizeof *s);
}

optic_status gs_schedule_clone(const optic_schedule_t *src, optic_schedule_t *dst) {
  size_t n = (size_t)src->n + 1;
  *dst = *src;
  dst->ids = malloc(n * sizeof *dst->ids);
  dst->order = malloc(n * sizeof *dst->order);
  dst->pos = malloc(n * sizeof *dst->pos);
  if (!dst->ids || !dst->order || !dst->pos) {
    gs_schedule_release(dst);
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "schedule: out of memory");
  }
  memcpy(dst->ids, src->ids, (size_t)src->n * sizeof *dst->ids);
  memcpy(dst->order, src->order, (size_t)src->n * sizeof *dst->order);
  memcpy(dst->pos, src->pos, (size_t)src->n * sizeof *dst->pos);
  return OPTIC_OK;
}

optic_status gs_schedule_matches(const gs_values *v, const optic_schedule_t *s, const char *op) {
  if (s->n != v->n || (v->n > 0 && memcmp(s->ids, v->ids, (size_t)v->n * sizeof *v->ids) != 0)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: the schedule lists %d instructions but the computation now has %d live ones, or other "
                      "ones (schedule it again after changing the module)",
                      op, (int)s->n, (int)v->n);
  }
  for (int32_t i = 0; i < v->n; i++) {
    for (int32_t e = v->operand_start[i]; e < v->operand_start[i + 1]; e++) {
      int32_t o = v->operands[e];
      if (s->pos[o] >= s->pos[i]) {
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                          "%s: the schedule runs %s (position %d) before its operand %s (%d)", op, v->instr[i]->name,
                          (int)s->pos[i], v->instr[o]->name, (int)s->pos[o]);
      }
    }
  }
  return OPTIC_OK;
}

/* Fills s->ids/pos from v and the order given as local indexes, and the peak. */
static optic_status finish(const gs_values *v, optic_comp_id comp, const int32_t *order_local, optic_schedule_t *s) {
  size_t n = (size_t)v->n + 1;
  memset(s, 0, sizeof *s);
  s->comp = comp;
  s->n = v->n;
  s->ids = malloc(n * sizeof *s->ids);
  s->order = malloc(n * sizeof *s->order);
  s->pos = malloc(n * sizeof *s->pos);
  int32_t *last = malloc(((size_t)v->n_leaves + 1) * sizeof *last);
  int32_t *in_place = malloc(n * sizeof *in_place);
  optic_status st = OPTIC_OK;
  if (!s->ids || !s->order || !s->pos || !last || !in_place) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "schedule: out of memory");
  } else {
    memcpy(s->ids, v->ids, (size_t)v->n * sizeof *s->ids);
    for (int32_t t = 0; t < v->n; t++) {
      s->order[t] = v->ids[order_local[t]];
      s->pos[order_local[t]] = t;
    }
    st = gs_liveness(v, s->pos, last, in_place, &s->peak_bytes);
  }
  free(last);
  free(in_place);
  if (st != OPTIC_OK) gs_schedule_release(s);
  return st;
}

typedef struct child_key {
  uint64_t key;  /* need - out: bytes the subtree needs beyond what it leaves live */
  int32_t index; /* first operand position: the tie-break */
  int32_t local;
} child_key;

static int cmp_child(const void *a, const void *b) {
  const child_key *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1; /* larger first */
  return (x->index > y->index) - (x->index < y->index);
}

static int cmp_child_local(const void *a, const void *b) {
  const child_key *x = a, *y = b;
  if (x->local != y->local) return (x->local > y->local) - (x->local < y->local);
  return (x->index > y->index) - (x->index < y->index);
}

/* The ordering heuristic. For instruction i with distinct operands c_1..c_k
 * evaluated in that order, each subtree whole before the next:
 *   need(i) = max( max_j (out(c_1) + ... + out(c_{j-1}) + need(c_j)),
 *                  out(c_1) + ... + out(c_k) + bytes(i) )
 * where out(x) is what x's result keeps live in the arena and bytes(i) what i
 * allocates. need(i) is least when the c_j come in decreasing need - out
 * (an exchange argument; optimal for trees under whole-subtree evaluation).
 * On DAGs shared operands are counted in every user: a heuristic, and the
 * reported peak is measured on the order actually produced. */
/* long: one iterative post-order walk whose stack and visit state are shared by every step */
static optic_status dfs_order(const gs_values *v, int32_t *order_local) {
  int32_t n = v->n, ne = v->operand_start[n];
  uint64_t *need = malloc(((size_t)n + 1) * sizeof *need), *out = malloc(((size_t)n + 1) * sizeof *out);
  child_key *kids = malloc(((size_t)ne + 1) * sizeof *kids);
  int32_t *kid_start = malloc(((size_t)n + 1) * sizeof *kid_start),
          *kid_end = malloc(((size_t)n + 1) * sizeof *kid_end);
  int32_t *stack = malloc(((size_t)n + 1) * sizeof *stack), *next = malloc(((size_t)n + 1) * sizeof *next);
  uint8_t *state = calloc((size_t)n + 1, 1), *has_user = calloc((size_t)n + 1, 1);
  optic_status st = OPTIC_OK;
  if (!need || !out || !kids || !kid_start || !kid_end || !stack || !next || !state || !has_user) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    goto done;
  }
  /* In topological order: an operand's need is known before its users'. */
  int32_t nk = 0;
  for (int32_t t = 0; t < n; t++) {
    int32_t i = v->topo[t];
    uint64_t bytes = 0, held = 0;
    for (int32_t l = v->leaf_start[i]; l < v->leaf_start[i + 1]; l++) {
      int32_t val = v->value_of[l];
      if (v->kind[val] != OPTIC_BUFFER_ARENA) continue;
      held = sat_add(held, v->size[l]);
      if (val == l) bytes = sat_add(bytes, v->size[l]);
    }
    out[i] = held;
    /* Distinct operands, keyed, sorted. */
    kid_start[i] = nk;
    int32_t first = nk;
    for (int32_t e = v->operand_start[i]; e < v->operand_start[i + 1]; e++) {
      int32_t o = v->operands[e];
      has_user[o] = 1;
      kids[nk++] = (child_key){.key = 0, .index = e - v->operand_start[i], .local = o};
    }
    qsort(kids + first, (size_t)(nk - first), sizeof *kids, cmp_child_local);
    int32_t w = first;
    for (int32_t r = first; r < nk; r++) {
      if (w > first && kids[w - 1].local == kids[r].local) continue;
      child_key k = kids[r];
      k.key = need[k.local] > out[k.local] ? need[k.local] - out[k.local] : 0;
      kids[w++] = k;
    }
    nk = w;
    qsort(kids + first, (size_t)(nk - first), sizeof *kids, cmp_child);
    uint64_t acc = 0, best = 0;
    for (int32_t r = first; r < nk; r++) {
      uint64_t here = sat_add(acc, need[kids[r].local]);
      if (here > best) best = here;
      acc = sat_add(acc, out[kids[r].local]);
    }
    acc = sat_add(acc, bytes);
    need[i] = acc > best ? acc : best;
    kid_end[i] = nk;
  }
  /* Iterative DFS post-order: unreached sinks in id order, then the root. */
  int32_t emitted = 0;
  for (int32_t s = 0; s <= n; s++) {
    int32_t start = s < n ? s : v->root;
    if (s < n && (has_user[s] || s == v->root)) continue;
    if (state[start]) continue;
    int32_t depth = 0;
    stack[depth] = start;
    next[depth++] = kid_start[start];
    state[start] = 1;
    while (depth > 0) {
      int32_t x = stack[depth - 1];
      if (next[depth - 1] < kid_end[x]) {
        int32_t c = kids[next[depth - 1]++].local;
        if (state[c]) continue;
        state[c] = 1;
        stack[depth] = c;
        next[depth++] = kid_start[c];
      } else {
        order_local[emitted++] = x;
        depth--;
      }
    }
  }
  if (emitted != n) st = optic_fail(OPTIC_ERR_INTERNAL, "schedule: reached %d of %d instructions", emitted, n);
done:
  free(need);
  free(out);
  free(kids);
  free(kid_start);
  free(kid_end);
  free(stack);
  free(next);
  free(state);
  free(has_user);
  return st;
}

optic_status optic_schedule_create(const optic_module_t *m, optic_comp_id comp, optic_schedule_t **out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "schedule: out is NULL");
  *out = NULL;
  gs_values v;
  optic_status st = gs_values_build(m, comp, "schedule", &v);
  if (st != OPTIC_OK) return st;
  optic_schedule_t *s = calloc(1, sizeof *s);
  int32_t *order = malloc(((size_t)v.n + 1) * sizeof *order);
  if (s == NULL || order == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "schedule: out of memory");
  if (st == OPTIC_OK) st = dfs_order(&v, order);
  if (st == OPTIC_OK) st = finish(&v, comp, order, s);
  free(order);
  gs_values_free(&v);
  if (st != OPTIC_OK) {
    free(s);
    return st;
  }
  *out = s;
  return OPTIC_OK;
}

optic_status optic_schedule_from_order(const optic_module_t *m, optic_comp_id comp, const optic_node_id *order,
                                       int32_t n, optic_schedule_t **out) {
  if (out == NULL || (order == NULL && n > 0)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "schedule_from_order: NULL argument");
  }
  *out = NULL;
  gs_values v;
  optic_status st = gs_values_build(m, comp, "schedule_from_order", &v);
  if (st != OPTIC_OK) return st;
  optic_schedule_t *s = calloc(1, sizeof *s);
  int32_t *local = malloc(((size_t)v.n + 1) * sizeof *local), *pos = malloc(((size_t)v.n + 1) * sizeof *pos);
  if (s == NULL || local == NULL || pos == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "schedule_from_order: out of memory");
    goto done;
  }
  if (n != v.n) {
    st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "schedule_from_order: %d ids given but '%s' has %d live instructions",
                    (int)n, m->comps[comp].name, (int)v.n);
    goto done;
  }
  for (int32_t i = 0; i < n; i++) pos[i] = -1;
  for (int32_t t = 0; t < n; t++) {
    int32_t i = gs_index_of(&v.index, order[t]);
    if (i < 0) {
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "schedule_from_order: entry %d (id %d) is not a live instruction of '%s'", (int)t, (int)order[t],
                      m->comps[comp].name);
      goto done;
    }
    if (pos[i] >= 0) {
      st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "schedule_from_order: %s is listed at %d and at %d", v.instr[i]->name,
                      (int)pos[i], (int)t);
      goto done;
    }
    pos[i] = t;
    local[t] = i;
  }
  for (int32_t t = 0; t < n; t++) {
    int32_t i = local[t];
    for (int32_t e = v.operand_start[i]; e < v.operand_start[i + 1]; e++) {
      int32_t o = v.operands[e];
      if (pos[o] > t) {
        st = optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "schedule_from_order: %s (at %d) comes before its operand %s (at %d)", v.instr[i]->name, (int)t,
                        v.instr[o]->name, (int)pos[o]);
        goto done;
      }
    }
  }
  st = finish(&v, comp, local, s);
done:
  free(local);
  free(pos);
  gs_values_free(&v);
  if (st != OPTIC_OK) {
    free(s);
    return st;
  }
  *out = s;
  return OPTIC_OK;
}

void optic_schedule_destroy(optic_schedule_t *s) {
  if (s == NULL) return;
  gs_schedule_release(s);
  free(s);
}

optic_comp_id optic_schedule_computation(const optic_schedule_t *s) { return s ? s->comp : -1; }

const optic_node_id *optic_schedule_order(const optic_schedule_t *s, int32_t *count) {
  if (count) *count = s ? s->n : 0;
  return s ? s->order : NULL;
}

int32_t optic_schedule_position(const optic_schedule_t *s, optic_node_id id) {
  if (s == NULL) return -1;
  int32_t i = gs_local_index(s->ids, s->n, id);
  return i < 0 ? -1 : s->pos[i];
}

size_t optic_schedule_peak_bytes(const optic_schedule_t *s) { return s ? s->peak_bytes : 0; }
