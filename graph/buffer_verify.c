/* Buffer plan verifier: proves a plan sound against the module without
 * trusting the assigner's analysis (it shares only the rule tables: which ops
 * alias, which operands may be overwritten in place). It recomputes leaves,
 * aliases and liveness from the module's own edges (user lists, where the
 * assigner reads operand lists), then sweeps the schedule keeping the live
 * arena blocks in an occupancy tree over their sorted offsets: a block born at
 * a step must not overlap its neighbours there. O(n log n). Never changes the
 * plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/buffer_internal.h"

#define FAIL(...) optic_fail(OPTIC_ERR_INTERNAL, "buffer_verify: " __VA_ARGS__)

typedef struct verifier {
  const optic_module_t *m;
  const optic_buffer_plan_t *p;
  const optic_schedule_t *s;
  const char *comp_name;
  gs_index index;
  const optic_instr **instr; /* local -> the module's instruction */
  int32_t *last;             /* defining leaf -> last step its bytes are used (arena values) */
  int32_t *takes;            /* defining leaf -> the operand value whose block it legally took, or -1 */
} verifier;

static int32_t local_of(const verifier *v, optic_node_id id) { return gs_index_of(&v->index, id); }

static int64_t count_leaves(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return 1;
  int64_t n = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) n += count_leaves(&t->elements[i]);
  return n;
}

static size_t *sizes_of(const optic_type *t, size_t *out) {
  if (!optic_type_is_tuple(t)) {
    size_t b = 0;
    optic_shape_bytes(&t->shape, t->dtype, &b);
    *out = b;
    return out + 1;
  }
  for (int32_t i = 0; i < t->tuple_size; i++) out = sizes_of(&t->elements[i], out);
  return out;
}

static bool slot_equal(const optic_buffer_slot *a, const optic_buffer_slot *b) {
  return a->kind == b->kind && a->offset == b->offset && a->size == b->size && a->source == b->source &&
         a->source_leaf == b->source_leaf && a->output_leaf == b->output_leaf && a->in_place_of == b->in_place_of;
}

/* The defining leaf a slot names, as an index into the plan's leaves. */
static int32_t defining_leaf(const verifier *v, const optic_buffer_slot *sl) {
  int32_t i = local_of(v, sl->source);
  return i < 0 ? -1 : v->p->leaf_start[i] + sl->source_leaf;
}

static const char *leaf_name(const verifier *v, int32_t leaf, char *buf, size_t size) {
  const optic_buffer_slot *sl = &v->p->slots[leaf];
  const char *name = optic_node_name(v->m, sl->source);
  int32_t i = local_of(v, sl->source);
  if (i >= 0 && v->p->leaf_start[i + 1] - v->p->leaf_start[i] > 1) snprintf(buf, size, "%s{%d}", name, sl->source_leaf);
  else snprintf(buf, size, "%s", name);
  return buf;
}

/* 1. The schedule is a topological order of exactly the live instructions. */
static optic_status check_schedule(verifier *v) {
  const optic_module_t *m = v->m;
  const optic_schedule_t *s = v->s;
  const optic_computation *c = &m->comps[s->comp];
  for (int32_t i = 1; i < s->n; i++) {
    if (s->ids[i - 1] >= s->ids[i]) return FAIL("the plan's instruction ids are not strictly ascending");
  }
  for (int32_t i = 0; i < s->n; i++) v->instr[i] = NULL;
  int32_t live = 0;
  for (int32_t i = 0; i < c->n_instrs; i++) {
    const optic_instr *in = graph_instr(m, c->instrs[i]);
    if (in == NULL) continue;
    live++;
    int32_t k = local_of(v, c->instrs[i]);
    if (k < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_verify: %s of '%s' is not in the plan (module changed?)",
                        in->name, c->name);
    }
    v->instr[k] = in;
  }
  if (live != s->n) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_verify: the plan has %d instructions, '%s' has %d live ones",
                      (int)s->n, c->name, (int)live);
  }
  for (int32_t t = 0; t < s->n; t++) {
    int32_t i = local_of(v, s->order[t]);
    if (i < 0 || s->pos[i] != t)
      return FAIL("schedule entry %d (id %d) is not a permutation entry", (int)t, (int)s->order[t]);
  }
  for (int32_t i = 0; i < s->n; i++) {
    const optic_instr *in = v->instr[i];
    for (int32_t k = 0; k < in->n_operands; k++) {
      int32_t o = local_of(v, in->operands[k]);
      if (o < 0 || s->pos[o] >= s->pos[i]) {
        return FAIL("%s runs at step %d, not after its operand %s", in->name, (int)s->pos[i],
                    m->instrs[in->operands[k]].name);
      }
    }
  }
  if (graph_instr(m, c->root) == NULL || local_of(v, c->root) < 0) return FAIL("'%s' has no root in the plan", c->name);
  return OPTIC_OK;
}

/* 2. Every slot has the kind, source and size its instruction requires. */
static optic_status check_slot(const verifier *v, const optic_instr *in, int32_t leaf, int32_t k, size_t bytes) {
  const optic_buffer_plan_t *p = v->p;
  const optic_buffer_slot *sl = &p->slots[leaf];
  optic_node_id id = (optic_node_id)(in - v->m->instrs);
  if (sl->source != id || sl->source_leaf != k || sl->size != bytes) {
    return FAIL("%s leaf %d: slot names source %d leaf %d with %zu bytes, expected itself with %zu", in->name, (int)k,
                (int)sl->source, (int)sl->source_leaf, sl->size, bytes);
  }
  optic_buffer_kind want = in->op == OPTIC_OP_PARAMETER  ? OPTIC_BUFFER_PARAMETER
                           : in->op == OPTIC_OP_CONSTANT ? OPTIC_BUFFER_CONSTANT
                                                         : OPTIC_BUFFER_ARENA;
  bool kind_ok = sl->kind == want || (want == OPTIC_BUFFER_ARENA && sl->kind == OPTIC_BUFFER_OUTPUT);
  if (!kind_ok) return FAIL("%s leaf %d: slot kind %d, expected %d", in->name, (int)k, (int)sl->kind, (int)want);
  if (sl->kind == OPTIC_BUFFER_ARENA) {
    if (sl->offset % OPTIC_BUFFER_ALIGNMENT != 0) {
      return FAIL("%s leaf %d: offset %zu is not %d-byte aligned", in->name, (int)k, sl->offset,
                  OPTIC_BUFFER_ALIGNMENT);
    }
    if (sl->offset > p->arena_bytes || sl->size > p->arena_bytes - sl->offset) {
      return FAIL("%s leaf %d: bytes [%zu, %zu + %zu) run past the arena's %zu", in->name, (int)k, sl->offset,
                  sl->offset, sl->size, p->arena_bytes);
    }
    if (sl->output_leaf != -1) return FAIL("%s leaf %d: arena slot with an output leaf", in->name, (int)k);
    return OPTIC_OK;
  }
  if (sl->offset != 0 || sl->in_place_of != OPTIC_NO_NODE ||
      (sl->kind != OPTIC_BUFFER_OUTPUT && sl->output_leaf != -1)) {
    return FAIL("%s leaf %d: a slot outside the arena with an offset, output leaf or in-place source", in->name,
                (int)k);
  }
  return OPTIC_OK;
}

static optic_status check_slots(const verifier *v) {
  const optic_module_t *m = v->m;
  const optic_buffer_plan_t *p = v->p;
  const optic_schedule_t *s = v->s;
  if (p->leaf_start[0] != 0) return FAIL("leaf numbering does not start at 0");
  size_t max_leaves = 0;
  for (int32_t i = 0; i < s->n; i++) {
    int64_t want = count_leaves(&v->instr[i]->type);
    if ((int64_t)p->leaf_start[i + 1] - p->leaf_start[i] != want) {
      return FAIL("%s has %d leaves in the plan, its type has %lld", v->instr[i]->name,
                  (int)(p->leaf_start[i + 1] - p->leaf_start[i]), (long long)want);
    }
    if ((size_t)want > max_leaves) max_leaves = (size_t)want;
  }
  size_t *bytes = malloc((max_leaves + 1) * sizeof *bytes);
  if (bytes == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_verify: out of memory");
  optic_status st = OPTIC_OK;
  /* Schedule order: an alias's operands are checked before it. */
  for (int32_t t = 0; t < s->n && st == OPTIC_OK; t++) {
    int32_t i = local_of(v, s->order[t]);
    const optic_instr *in = v->instr[i];
    int32_t first = p->leaf_start[i], count = p->leaf_start[i + 1] - first;
    sizes_of(&in->type, bytes);
    if (!gs_is_alias(in->op)) {
      for (int32_t k = 0; k < count && st == OPTIC_OK; k++) st = check_slot(v, in, first + k, k, bytes[k]);
      continue;
    }
    int32_t src = -1, skip = 0;
    if (in->op == OPTIC_OP_GET_TUPLE_ELEMENT) {
      const optic_type *tt = optic_node_type(m, in->operands[0]);
      for (int64_t e = 0; e < in->ints[0]; e++) skip += (int32_t)count_leaves(&tt->elements[e]);
    }
    for (int32_t k = 0, op_i = 0, op_leaf = 0; k < count; k++) {
      if (in->op == OPTIC_OP_TUPLE) {
        int32_t o = local_of(v, in->operands[op_i]);
        while (op_leaf >= p->leaf_start[o + 1] - p->leaf_start[o]) {
          o = local_of(v, in->operands[++op_i]);
          op_leaf = 0;
        }
        src = p->leaf_start[o] + op_leaf++;
      } else {
        src = p->leaf_start[local_of(v, in->operands[0])] + skip + k;
      }
      if (!slot_equal(&p->slots[first + k], &p->slots[src])) {
        st = FAIL("%s leaf %d does not alias its operand's slot", in->name, (int)k);
        break;
      }
    }
  }
  free(bytes);
  return st;
}

/* 3. Outputs: what the root holds never lives in the arena, and only what it
 * holds is marked as an output. Also the plan's byte totals. */
static optic_status check_outputs(const verifier *v) {
  const optic_module_t *m = v->m;
  const optic_buffer_plan_t *p = v->p;
  int32_t r = local_of(v, m->comps[v->s->comp].root);
  int32_t first = p->leaf_start[r], count = p->leaf_start[r + 1] - first;
  int32_t n_leaves = p->leaf_start[v->s->n];
  uint8_t *is_out = calloc((size_t)n_leaves + 1, 1);
  if (is_out == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_verify: out of memory");
  optic_status st = OPTIC_OK;
  size_t out_bytes = 0, param_bytes = 0, const_bytes = 0;
  for (int32_t k = 0; k < count && st == OPTIC_OK; k++) {
    const optic_buffer_slot *sl = &p->slots[first + k];
    out_bytes += sl->size;
    if (sl->kind == OPTIC_BUFFER_ARENA) st = FAIL("output leaf %d of the root lives in the arena", (int)k);
    else if (sl->kind == OPTIC_BUFFER_OUTPUT &&
             (sl->output_leaf < 0 || sl->output_leaf > k || p->slots[first + sl->output_leaf].source != sl->source ||
              p->slots[first + sl->output_leaf].source_leaf != sl->source_leaf)) {
      st = FAIL("root leaf %d names output leaf %d, which holds something else", (int)k, (int)sl->output_leaf);
    }
    if (st == OPTIC_OK && sl->kind == OPTIC_BUFFER_OUTPUT) is_out[defining_leaf(v, sl)] = 1;
  }
  for (int32_t l = 0; l < n_leaves && st == OPTIC_OK; l++) {
    const optic_buffer_slot *sl = &p->slots[l];
    int32_t d = defining_leaf(v, sl);
    if (d != l) continue;
    if (sl->kind == OPTIC_BUFFER_OUTPUT && !is_out[l]) {
      char b[300];
      st = FAIL("%s is marked as an output but the root does not hold it", leaf_name(v, l, b, sizeof b));
    }
    if (sl->kind == OPTIC_BUFFER_PARAMETER) param_bytes += sl->size;
    if (sl->kind == OPTIC_BUFFER_CONSTANT) const_bytes += sl->size;
  }
  free(is_out);
  if (st == OPTIC_OK && (out_bytes != p->output_bytes || param_bytes != p->parameter_bytes ||
                         const_bytes != p->constant_bytes || p->arena_bytes % OPTIC_BUFFER_ALIGNMENT != 0)) {
    st = FAIL(
        "totals (arena %zu, parameters %zu, outputs %zu, constants %zu) disagree with the slots (parameters "
        "%zu, outputs %zu, constants %zu) or the arena is not a multiple of %d",
        p->arena_bytes, p->parameter_bytes, p->output_bytes, p->constant_bytes, param_bytes, out_bytes, const_bytes,
        OPTIC_BUFFER_ALIGNMENT);
  }
  return st;
}

/* 4. Liveness from the module's user lists: a value's bytes are live from its
 * step to the last step of a non-alias reader of anything holding them. */
static void compute_liveness(verifier *v) {
  const optic_buffer_plan_t *p = v->p;
  const optic_schedule_t *s = v->s;
  int32_t n_leaves = p->leaf_start[s->n];
  for (int32_t l = 0; l < n_leaves; l++) v->last[l] = -1;
  for (int32_t i = 0; i < s->n; i++) {
    const optic_instr *in = v->instr[i];
    int32_t until = s->pos[i];
    for (int32_t u = 0; u < in->n_users; u++) {
      int32_t ul = local_of(v, in->users[u]);
      const optic_instr *user = v->instr[ul];
      int32_t at = s->pos[ul];
      if (!gs_is_alias(user->op) && at > until) until = at;
    }
    for (int32_t l = p->leaf_start[i]; l < p->leaf_start[i + 1]; l++) {
      if (p->slots[l].kind != OPTIC_BUFFER_ARENA) continue;
      int32_t d = defining_leaf(v, &p->slots[l]);
      if (v->last[d] < until) v->last[d] = until;
    }
  }
}

/* 5. A claimed in-place takeover must be legal: an elementwise op whose kernel
 * allows it, an operand of the result's type holding that block and dying at
 * this very step. */
static optic_status check_in_place(verifier *v) {
  const optic_module_t *m = v->m;
  const optic_buffer_plan_t *p = v->p;
  int32_t n_leaves = p->leaf_start[v->s->n];
  for (int32_t l = 0; l < n_leaves; l++) v->takes[l] = -1;
  for (int32_t i = 0; i < v->s->n; i++) {
    int32_t l = p->leaf_start[i];
    if (p->leaf_start[i + 1] - l < 1) continue;
    const optic_buffer_slot *sl = &p->slots[l];
    if (sl->kind != OPTIC_BUFFER_ARENA || sl->in_place_of == OPTIC_NO_NODE || defining_leaf(v, sl) != l) continue;
    const optic_instr *in = v->instr[i];
    for (int32_t k = 0; k < in->n_operands && v->takes[l] < 0; k++) {
      if (!gs_in_place_operand(in, k, optic_node_type(m, in->operands[k]))) continue;
      const optic_buffer_slot *os = &p->slots[p->leaf_start[local_of(v, in->operands[k])]];
      if (os->kind != OPTIC_BUFFER_ARENA || os->source != sl->in_place_of || os->offset != sl->offset ||
          os->size != sl->size) {
        continue;
      }
      int32_t d = defining_leaf(v, os);
      if (v->last[d] == v->s->pos[i]) v->takes[l] = d;
    }
    if (v->takes[l] < 0) {
      return FAIL("%s claims the block of %s in place, but no operand of its type holding that block dies at it",
                  in->name, optic_node_name(m, sl->in_place_of) ? optic_node_name(m, sl->in_place_of) : "?");
    }
  }
  return OPTIC_OK;
}

/* Occupancy tree over offset ranks: which live block starts at each rank. */
typedef struct occupancy {
  int32_t size; /* leaves: a power of two */
  int32_t *count;
  int32_t *who;
} occupancy;

static void occ_set(occupancy *o, int32_t r, int32_t who) {
  int32_t delta = (who >= 0) - (o->who[r] >= 0);
  o->who[r] = who;
  for (int32_t x = r + o->size; x >= 1; x /= 2) o->count[x] += delta;
}

/* Nearest occupied rank below r (dir -1) or above r (dir +1), or -1. */
static int32_t occ_near(const occupancy *o, int32_t r, int dir) {
  int32_t x = r + o->size;
  while (x > 1) {
    int32_t sib = x ^ 1;
    if ((dir < 0 ? (x & 1) : !(x & 1)) && o->count[sib] > 0) {
      x = sib;
      while (x < o->size)
        x = dir < 0 ? (o->count[2 * x + 1] > 0 ? 2 * x + 1 : 2 * x) : (o->count[2 * x] > 0 ? 2 * x : 2 * x + 1);
      return x - o->size;
    }
    x /= 2;
  }
  return -1;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

static int32_t rank_of(const size_t *offs, int32_t n, size_t off) {
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (offs[mid] < off) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static optic_status overlap_error(const verifier *v, int32_t a, int32_t b, int32_t step) {
  char na[300], nb[300];
  const optic_buffer_slot *x = &v->p->slots[a], *y = &v->p->slots[b];
  int32_t xa = v->s->pos[local_of(v, x->source)], ya = v->s->pos[local_of(v, y->source)];
  return FAIL("in '%s' at step %d, %s (bytes [%zu, %zu), live %d..%d) overlaps %s (bytes [%zu, %zu), live %d..%d)",
              v->comp_name, (int)step, leaf_name(v, a, na, sizeof na), x->offset, x->offset + x->size, (int)xa,
              (int)v->last[a], leaf_name(v, b, nb, sizeof nb), y->offset, y->offset + y->size, (int)ya,
              (int)v->last[b]);
}

/* 6. The sweep: at each step, the blocks born there are checked against the
 * live blocks next to them by offset (the live set is disjoint, so the
 * neighbours are the only candidates), then the step's dead blocks leave. */
static optic_status sweep(const verifier *v) {
  const optic_buffer_plan_t *p = v->p;
  int32_t n = v->s->n, n_leaves = p->leaf_start[n];
  int32_t nv = 0;
  for (int32_t l = 0; l < n_leaves; l++) {
    nv += p->slots[l].kind == OPTIC_BUFFER_ARENA && p->slots[l].size > 0 && defining_leaf(v, &p->slots[l]) == l;
  }
  size_t *offs = malloc(((size_t)nv + 1) * sizeof *offs);
  int32_t *vals = malloc(((size_t)nv + 1) * sizeof *vals);
  int32_t *by_death = malloc(((size_t)nv + 1) * sizeof *by_death);
  int32_t *death_start = calloc((size_t)n + 2, sizeof *death_start);
  occupancy o = {.size = 1};
  while (o.size < nv) o.size *= 2;
  o.count = calloc(2 * (size_t)o.size, sizeof *o.count);
  o.who = malloc((size_t)o.size * sizeof *o.who);
  optic_status st = OPTIC_OK;
  if (!offs || !vals || !by_death || !death_start || !o.count || !o.who) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_verify: out of memory");
    goto done;
  }
  for (int32_t r = 0; r < o.size; r++) o.who[r] = -1;
  nv = 0;
  for (int32_t l = 0; l < n_leaves; l++) {
    if (p->slots[l].kind == OPTIC_BUFFER_ARENA && p->slots[l].size > 0 && defining_leaf(v, &p->slots[l]) == l) {
      vals[nv] = l;
      offs[nv++] = p->slots[l].offset;
      death_start[v->last[l] + 1]++;
    }
  }
  qsort(offs, (size_t)nv, sizeof *offs, cmp_size);
  int32_t n_offs = 0;
  for (int32_t i = 0; i < nv; i++) {
    if (n_offs == 0 || offs[n_offs - 1] != offs[i]) offs[n_offs++] = offs[i];
  }
  for (int32_t t = 0; t < n; t++) death_start[t + 1] += death_start[t];
  for (int32_t i = 0; i < nv; i++) by_death[death_start[v->last[vals[i]]]++] = vals[i];
  for (int32_t t = n; t > 0; t--) death_start[t] = death_start[t - 1];
  death_start[0] = 0;
  for (int32_t t = 0; t < n && st == OPTIC_OK; t++) {
    int32_t i = local_of(v, v->s->order[t]);
    for (int32_t l = p->leaf_start[i]; l < p->leaf_start[i + 1] && st == OPTIC_OK; l++) {
      const optic_buffer_slot *sl = &p->slots[l];
      if (sl->kind != OPTIC_BUFFER_ARENA || sl->size == 0 || defining_leaf(v, sl) != l) continue;
      int32_t r = rank_of(offs, n_offs, sl->offset);
      int32_t here = o.who[r];
      if (here >= 0 && here != v->takes[l]) {
        st = overlap_error(v, l, here, t);
        break;
      }
      int32_t below = occ_near(&o, r, -1), above = occ_near(&o, r, +1);
      if (below >= 0) {
        const optic_buffer_slot *b = &p->slots[o.who[below]];
        if (b->offset + b->size > sl->offset) st = overlap_error(v, l, o.who[below], t);
      }
      if (st == OPTIC_OK && above >= 0 && offs[above] < sl->offset + sl->size)
        st = overlap_error(v, l, o.who[above], t);
      if (st == OPTIC_OK) occ_set(&o, r, l);
    }
    for (int32_t d = death_start[t]; d < death_start[t + 1]; d++) {
      int32_t r = rank_of(offs, n_offs, p->slots[by_death[d]].offset);
      if (o.who[r] == by_death[d]) occ_set(&o, r, -1);
    }
  }
done:
  free(offs);
  free(vals);
  free(by_death);
  free(death_start);
  free(o.count);
  free(o.who);
  return st;
}

optic_status optic_buffer_plan_verify(const optic_module_t *m, const optic_buffer_plan_t *p) {
  if (p == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "buffer_verify: plan is NULL");
  optic_status st = graph_check_comp(m, p->schedule.comp, "buffer_verify");
  if (st != OPTIC_OK) return st;
  verifier v = {.m = m, .p = p, .s = &p->schedule, .comp_name = m->comps[p->schedule.comp].name};
  int32_t n_leaves = p->leaf_start[v.s->n];
  v.instr = malloc(((size_t)v.s->n + 1) * sizeof *v.instr);
  v.last = malloc(((size_t)n_leaves + 1) * sizeof *v.last);
  v.takes = malloc(((size_t)n_leaves + 1) * sizeof *v.takes);
  if (!v.instr || !v.last || !v.takes) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "buffer_verify: out of memory");
  if (st == OPTIC_OK) st = gs_index_build(&v.index, p->schedule.ids, p->schedule.n);
  if (st == OPTIC_OK) st = check_schedule(&v);
  if (st == OPTIC_OK) st = check_slots(&v);
  if (st == OPTIC_OK) st = check_outputs(&v);
  if (st == OPTIC_OK) {
    compute_liveness(&v);
    st = check_in_place(&v);
  }
  if (st == OPTIC_OK) st = sweep(&v);
  free(v.instr);
  free(v.last);
  free(v.takes);
  gs_index_free(&v.index);
  return st;
}
