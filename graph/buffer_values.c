/* Value analysis shared by the scheduler and the buffer assigner: which leaf
 * of which instruction defines the bytes of every result leaf (tuple,
 * get-tuple-element and reshape alias their operands), which values are the
 * caller's (parameters, outputs) or the module's (constants), and liveness
 * with in-place reuse over a given order. Linear in instructions, operand
 * edges and leaves. Ids need not be topological (fusion appends fusion
 * instructions that older ones use): a topological order is computed. Never allocates arena offsets: see buffer_assign.c. */
#include <stdlib.h>
#include <string.h>

#include "graph/buffer_internal.h"

int32_t gs_local_index(const optic_node_id *ids, int32_t n, optic_node_id id) {
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return (lo < n && ids[lo] == id) ? lo : -1;
}

optic_status gs_index_build(gs_index *x, const optic_node_id *ids, int32_t n) {
  *x = (gs_index){.ids = ids, .n = n};
  if (n == 0) return OPTIC_OK;
  x->base = ids[0];
  int64_t range = (int64_t)ids[n - 1] - ids[0] + 1;
  if (range > 4 * (int64_t)n + 4096) return OPTIC_OK;
  x->dense = malloc((size_t)range * sizeof *x->dense);
  if (x->dense == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "graph: out of memory for an id index");
  x->range = range;
  for (int64_t k = 0; k < range; k++) x->dense[k] = -1;
  for (int32_t i = 0; i < n; i++) x->dense[ids[i] - x->base] = i;
  return OPTIC_OK;
}

void gs_index_free(gs_index *x) {
  free(x->dense);
  x->dense = NULL;
}

bool gs_is_alias(optic_opcode op) {
  return op == OPTIC_OP_TUPLE || op == OPTIC_OP_GET_TUPLE_ELEMENT || op == OPTIC_OP_RESHAPE || op == OPTIC_OP_BITCAST ||
         op == OPTIC_OP_OPT_BARRIER;
}

bool gs_in_place_operand(const optic_instr *in, int32_t index, const optic_type *operand_type) {
  switch (graph_opcode_kind_of(in->op)) {
    case GRAPH_OPCODE_UNARY:
    case GRAPH_OPCODE_BINARY: break;
    case GRAPH_OPCODE_ELEMENTWISE:
      /* compare, convert: distinct buffers; select: y may be a or b, never p (kernels/select.h) */
      if (in->op == OPTIC_OP_CLAMP || (in->op == OPTIC_OP_SELECT && index != 0)) break;
      return false;
    default: return false;
  }
  return !optic_type_is_tuple(&in->type) && operand_type != NULL && optic_type_equal(operand_type, &in->type);
}

static int64_t leaf_count(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return 1;
  int64_t n = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) n += leaf_count(&t->elements[i]);
  return n;
}

/* Writes the byte sizes of t's leaves depth-first; returns the next slot. */
static size_t *leaf_sizes(const optic_type *t, size_t *out) {
  if (!optic_type_is_tuple(t)) {
    size_t b = 0;
    optic_shape_bytes(&t->shape, t->dtype, &b); /* shapes are validated by the builders */
    *out = b;
    return out + 1;
  }
  for (int32_t i = 0; i < t->tuple_size; i++) out = leaf_sizes(&t->elements[i], out);
  return out;
}

static int cmp_ids(const void *a, const void *b) {
  optic_node_id x = *(const optic_node_id *)a, y = *(const optic_node_id *)b;
  return (x > y) - (x < y);
}

void gs_values_free(gs_values *v) {
  gs_index_free(&v->index);
  free(v->ids);
  free(v->instr);
  free(v->operand_start);
  free(v->operands);
  free(v->topo);
  free(v->leaf_start);
  free(v->value_of);
  free(v->owner);
  free(v->size);
  free(v->kind);
  free(v->output_leaf);
  memset(v, 0, sizeof *v);
}

/* Collects the live instructions (ascending ids) and their operand lists. */
static optic_status collect(const optic_module_t *m, optic_comp_id comp, const char *op, gs_values *v) {
  const optic_computation *c = &m->comps[comp];
  int32_t n = 0;
  v->ids = malloc(((size_t)c->n_instrs + 1) * sizeof *v->ids);
  v->instr = malloc(((size_t)c->n_instrs + 1) * sizeof *v->instr);
  v->operand_start = malloc(((size_t)c->n_instrs + 1) * sizeof *v->operand_start);
  if (!v->ids || !v->instr || !v->operand_start) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  bool sorted = true;
  for (int32_t i = 0; i < c->n_instrs; i++) {
    optic_node_id id = c->instrs[i];
    if (c->has_removed && m->instrs[id].removed) continue;
    if (n > 0 && v->ids[n - 1] >= id) sorted = false;
    v->ids[n++] = id;
  }
  v->n = n;
  if (!sorted) qsort(v->ids, (size_t)n, sizeof *v->ids, cmp_ids);
  optic_status st = gs_index_build(&v->index, v->ids, n);
  if (st != OPTIC_OK) return st;
  int64_t edges = 0;
  for (int32_t i = 0; i < n; i++) {
    v->instr[i] = &m->instrs[v->ids[i]];
    edges += v->instr[i]->n_operands;
  }
  if (edges > INT32_MAX) return optic_fail(OPTIC_ERR_OVERFLOW, "%s: more than 2^31 operand edges", op);
  v->operands = malloc(((size_t)edges + 1) * sizeof *v->operands);
  if (v->operands == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  int32_t e = 0;
  for (int32_t i = 0; i < n; i++) {
    v->operand_start[i] = e;
    const optic_instr *in = v->instr[i];
    for (int32_t k = 0; k < in->n_operands; k++) {
      int32_t o = gs_index_of(&v->index, in->operands[k]);
      if (o < 0) {
        return optic_fail(OPTIC_ERR_INTERNAL, "%s: operand %d of %s is not a live instruction of '%s'", op, (int)k,
                          in->name, c->name);
      }
      v->operands[e++] = o;
    }
  }
  v->operand_start[n] = e;
  return OPTIC_OK;
}

/* v->topo: depth-first post-order over operands, started from each local in
 * ascending order, so ids that are already topological give 0..n-1. Each
 * local enters the stack once (O(n + edges)); meeting an operand that is on
 * the stack means a cycle, which the builders cannot make. */
static optic_status topological_order(const optic_module_t *m, optic_comp_id comp, const char *op, gs_values *v) {
  int32_t n = v->n;
  v->topo = malloc(((size_t)n + 1) * sizeof *v->topo);
  int32_t *stack = malloc(((size_t)n + 1) * sizeof *stack), *next = malloc(((size_t)n + 1) * sizeof *next);
  uint8_t *state = calloc((size_t)n + 1, 1); /* 0 new, 1 on the stack, 2 emitted */
  optic_status st = OPTIC_OK;
  if (!v->topo || !stack || !next || !state) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    goto done;
  }
  int32_t emitted = 0;
  for (int32_t start = 0; start < n && st == OPTIC_OK; start++) {
    if (state[start]) continue;
    int32_t depth = 0;
    stack[depth] = start, next[depth++] = v->operand_start[start], state[start] = 1;
    while (depth > 0) {
      int32_t x = stack[depth - 1];
      if (next[depth - 1] < v->operand_start[x + 1]) {
        int32_t o = v->operands[next[depth - 1]++];
        if (state[o] == 1) {
          st = optic_fail(OPTIC_ERR_INTERNAL, "%s: '%s' has a cycle through %s", op, m->comps[comp].name,
                          v->instr[o]->name);
          break;
        }
        if (state[o] == 0) stack[depth] = o, next[depth++] = v->operand_start[o], state[o] = 1;
      } else {
        state[x] = 2;
        v->topo[emitted++] = x;
        depth--;
      }
    }
  }
done:
  free(stack);
  free(next);
  free(state);
  return st;
}

/* Numbers the leaves and resolves every leaf to the value defining it. */
static optic_status resolve_leaves(const optic_module_t *m, const char *op, gs_values *v) {
  int32_t n = v->n;
  v->leaf_start = malloc(((size_t)n + 1) * sizeof *v->leaf_start);
  if (v->leaf_start == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  int64_t total = 0;
  for (int32_t i = 0; i < n; i++) {
    v->leaf_start[i] = (int32_t)total;
    total += leaf_count(&v->instr[i]->type);
    if (total > INT32_MAX - 1) return optic_fail(OPTIC_ERR_OVERFLOW, "%s: more than 2^31 result leaves", op);
  }
  v->leaf_start[n] = (int32_t)total;
  v->n_leaves = (int32_t)total;
  size_t nl = (size_t)total + 1;
  v->value_of = malloc(nl * sizeof *v->value_of);
  v->owner = malloc(nl * sizeof *v->owner);
  v->size = malloc(nl * sizeof *v->size);
  v->kind = malloc(nl * sizeof *v->kind);
  v->output_leaf = malloc(nl * sizeof *v->output_leaf);
  if (!v->value_of || !v->owner || !v->size || !v->kind || !v->output_leaf) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  /* Operands first: an alias reads its operands' resolved values. */
  for (int32_t t = 0; t < n; t++) {
    int32_t i = v->topo[t];
    const optic_instr *in = v->instr[i];
    int32_t first = v->leaf_start[i], count = v->leaf_start[i + 1] - first;
    leaf_sizes(&in->type, v->size + first);
    for (int32_t l = first; l < first + count; l++) {
      v->owner[l] = i;
      v->output_leaf[l] = -1;
      v->kind[l] = OPTIC_BUFFER_ARENA;
    }
    const int32_t *ops = v->operands + v->operand_start[i];
    if (in->op == OPTIC_OP_TUPLE) {
      int32_t l = first;
      for (int32_t k = 0; k < in->n_operands; k++) {
        for (int32_t s = v->leaf_start[ops[k]]; s < v->leaf_start[ops[k] + 1]; s++) v->value_of[l++] = v->value_of[s];
      }
    } else if (in->op == OPTIC_OP_GET_TUPLE_ELEMENT) {
      const optic_type *tt = &m->instrs[in->operands[0]].type;
      int64_t skip = 0;
      for (int64_t e = 0; e < in->ints[0]; e++) skip += leaf_count(&tt->elements[e]);
      int32_t s = v->leaf_start[ops[0]] + (int32_t)skip;
      for (int32_t l = first; l < first + count; l++) v->value_of[l] = v->value_of[s++];
    } else if (in->op == OPTIC_OP_OPT_BARRIER) { /* every leaf of the operand, as is */
      for (int32_t l = first, s = v->leaf_start[ops[0]]; l < first + count; l++) v->value_of[l] = v->value_of[s++];
    } else if (in->op == OPTIC_OP_RESHAPE || in->op == OPTIC_OP_BITCAST) {
      v->value_of[first] = v->value_of[v->leaf_start[ops[0]]];
    } else {
      uint8_t kind = in->op == OPTIC_OP_PARAMETER  ? OPTIC_BUFFER_PARAMETER
                     : in->op == OPTIC_OP_CONSTANT ? OPTIC_BUFFER_CONSTANT
                                                   : OPTIC_BUFFER_ARENA;
      for (int32_t l = first; l < first + count; l++) {
        v->value_of[l] = l;
        v->kind[l] = kind;
      }
    }
  }
  /* What the root holds is written straight into the caller's buffers. */
  for (int32_t l = v->leaf_start[v->root]; l < v->leaf_start[v->root + 1]; l++) {
    int32_t val = v->value_of[l];
    if (v->kind[val] == OPTIC_BUFFER_ARENA) {
      v->kind[val] = OPTIC_BUFFER_OUTPUT;
      v->output_leaf[val] = l - v->leaf_start[v->root];
    }
  }
  return OPTIC_OK;
}

optic_status gs_values_build(const optic_module_t *m, optic_comp_id comp, const char *op, gs_values *out) {
  memset(out, 0, sizeof *out);
  optic_status st = graph_check_comp(m, comp, op);
  if (st != OPTIC_OK) return st;
  const optic_computation *c = &m->comps[comp];
  if (graph_instr(m, c->root) == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: computation '%s' has no root (declare its output first)", op,
                      c->name);
  }
  if ((st = collect(m, comp, op, out)) == OPTIC_OK && (st = topological_order(m, comp, op, out)) == OPTIC_OK) {
    out->root = gs_index_of(&out->index, c->root);
    st = resolve_leaves(m, op, out);
  }
  if (st != OPTIC_OK) gs_values_free(out);
  return st;
}

static inline bool add_ok(size_t *acc, size_t x) {
  if (*acc > SIZE_MAX - x) return false;
  *acc += x;
  return true;
}

optic_status gs_liveness(const gs_values *v, const int32_t *pos, int32_t *last, int32_t *in_place, size_t *peak) {
  int32_t n = v->n;
  int32_t *held = malloc(((size_t)n + 1) * sizeof *held);
  if (held == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "liveness: out of memory");
  /* held[i]: last position at which i's result is read by an op that is not
   * an alias (an alias's own readers are accounted through its leaves). */
  for (int32_t i = 0; i < n; i++) held[i] = pos[i];
  for (int32_t u = 0; u < n; u++) {
    if (gs_is_alias(v->instr[u]->op)) continue;
    for (int32_t e = v->operand_start[u]; e < v->operand_start[u + 1]; e++) {
      int32_t o = v->operands[e];
      if (held[o] < pos[u]) held[o] = pos[u];
    }
  }
  for (int32_t l = 0; l < v->n_leaves; l++) last[l] = -1;
  for (int32_t i = 0; i < n; i++) {
    for (int32_t l = v->leaf_start[i]; l < v->leaf_start[i + 1]; l++) {
      int32_t val = v->value_of[l];
      if (last[val] < held[i]) last[val] = held[i];
    }
  }
  free(held);
  for (int32_t x = 0; x < n; x++) {
    in_place[x] = -1;
    const optic_instr *in = v->instr[x];
    int32_t xl = v->leaf_start[x];
    if (v->leaf_start[x + 1] - xl != 1 || v->value_of[xl] != xl || v->kind[xl] != OPTIC_BUFFER_ARENA) continue;
    for (int32_t k = 0; k < in->n_operands; k++) {
      int32_t o = v->operands[v->operand_start[x] + k];
      if (!gs_in_place_operand(in, k, &v->instr[o]->type)) continue;
      int32_t u = v->value_of[v->leaf_start[o]];
      if (v->kind[u] == OPTIC_BUFFER_ARENA && last[u] == pos[x] && v->size[u] == v->size[xl]) {
        in_place[x] = u;
        break;
      }
    }
  }
  if (peak == NULL) return OPTIC_OK;
  /* Sweep the order: births at a step, the in-place result sharing its
   * operand's block, then the step's deaths. */
  size_t *born = calloc((size_t)n + 1, sizeof *born), *dead = calloc((size_t)n + 1, sizeof *dead);
  int32_t *at = malloc(((size_t)n + 1) * sizeof *at);
  optic_status st = OPTIC_OK;
  if (!born || !dead || !at) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "liveness: out of memory");
    goto done;
  }
  for (int32_t i = 0; i < n; i++) at[pos[i]] = i;
  for (int32_t l = 0; l < v->n_leaves; l++) {
    if (v->value_of[l] != l || v->kind[l] != OPTIC_BUFFER_ARENA) continue;
    if (!add_ok(&born[pos[v->owner[l]]], v->size[l]) || !add_ok(&dead[last[l]], v->size[l])) goto overflow;
  }
  size_t live = 0, best = 0;
  for (int32_t t = 0; t < n; t++) {
    if (!add_ok(&live, born[t])) goto overflow;
    int32_t shared = in_place[at[t]];
    size_t now = live - (shared >= 0 ? v->size[shared] : 0);
    if (now > best) best = now;
    live -= dead[t];
  }
  *peak = best;
  goto done;
overflow:
  st = optic_fail(OPTIC_ERR_OVERFLOW, "liveness: live bytes overflow size_t");
done:
  free(born);
  free(dead);
  free(at);
  return st;
}
