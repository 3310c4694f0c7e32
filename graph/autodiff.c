/* Reverse-mode autodiff (include/optic/autodiff.h, docs/autodiff.md): the
 * driver. It copies the output's cone into a new computation (inlining
 * call and fusion), marks what depends on a differentiated parameter, then
 * walks the copies in reverse, each opcode's rule turning its result's
 * adjoint into its operands' (summed where a value has several users). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/autodiff_internal.h"

optic_grad_options optic_grad_options_default(void) {
  optic_grad_options o = {.size = sizeof(optic_grad_options), .output = OPTIC_NO_NODE};
  return o;
}

/* ---------------------------------------------------------------- dispatch */

/* Why a loop is refused: reverse mode needs every iteration's state, which
 * optic gets by unrolling, and it can unroll only a known trip count. */
#define AD_WHILE_WHY                                                                                          \
  "its trip count is not fixed when the loop is built (only loops with a counter set, advanced and compared " \
  "with constants, JAX's scan and fori_loop shape, of at most 1024 iterations are differentiated, by "        \
  "unrolling); a data-dependent loop would need its iterations' states stacked, which optic does not do"

ad_rule_fn ad_rule_for(const ad_ctx *c, optic_node_id y, const char **why) {
  optic_opcode op = optic_node_opcode(c->m, y);
  *why = NULL;
  switch (graph_opcode_kind_of(op)) {
    case GRAPH_OPCODE_UNARY: return ad_rule_unary;
    case GRAPH_OPCODE_BINARY: return ad_rule_binary;
    default: break;
  }
  switch (op) {
    case OPTIC_OP_SELECT: return ad_rule_select;
    case OPTIC_OP_CLAMP: return ad_rule_clamp;
    case OPTIC_OP_CONVERT: return ad_rule_convert;
    case OPTIC_OP_COPY:
    case OPTIC_OP_OPT_BARRIER:
    case OPTIC_OP_REDUCE_PRECISION: return ad_rule_identity;
    case OPTIC_OP_BROADCAST: return ad_rule_broadcast;
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_BITCAST: return ad_rule_reshape;
    case OPTIC_OP_TRANSPOSE: return ad_rule_transpose;
    case OPTIC_OP_SLICE: return ad_rule_slice;
    case OPTIC_OP_PAD: return ad_rule_pad;
    case OPTIC_OP_CONCATENATE: return ad_rule_concatenate;
    case OPTIC_OP_REVERSE: return ad_rule_reverse;
    case OPTIC_OP_DYNAMIC_SLICE: return ad_rule_dynamic_slice;
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE: return ad_rule_dynamic_update_slice;
    case OPTIC_OP_DOT: return ad_rule_dot;
    case OPTIC_OP_CONVOLUTION: return (*why = ad_convolution_unsupported(c->m, y)) ? NULL : ad_rule_convolution;
    case OPTIC_OP_REDUCE:
      if (optic_node_operand_count(c->m, y) != 2) *why = "variadic reduce (several inputs) has no rule";
      else if (ad_combiner_op(c->m, optic_node_called(c->m, y, 0)) == OPTIC_OP_PARAMETER)
        *why = "only add, multiply, maximum and minimum combiners have rules";
      return *why ? NULL : ad_rule_reduce;
    case OPTIC_OP_GATHER: return (*why = ad_gather_unsupported(c->m, y)) ? NULL : ad_rule_gather;
    case OPTIC_OP_REDUCE_WINDOW: return (*why = ad_reduce_window_unsupported(c->m, y)) ? NULL : ad_rule_reduce_window;
    case OPTIC_OP_WHILE: *why = AD_WHILE_WHY; return NULL;
    case OPTIC_OP_SCATTER: return (*why = ad_scatter_unsupported(c->m, y)) ? NULL : ad_rule_scatter;
    case OPTIC_OP_CONDITIONAL: return ad_rule_conditional;
    case OPTIC_OP_BATCH_NORM_INFERENCE: return ad_rule_batch_norm_inference;
    case OPTIC_OP_MAP: return (*why = ad_map_unsupported(c->m, y)) ? NULL : ad_rule_map;
    case OPTIC_OP_ALL_REDUCE:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE: return (*why = ad_collective_unsupported(c, y)) ? NULL : ad_rule_collective;
    default: *why = "no rule for this opcode"; return NULL;
  }
}

ad_tuple_rule_fn ad_tuple_rule_for(const ad_ctx *c, optic_node_id y, const char **why) {
  *why = NULL;
  switch (optic_node_opcode(c->m, y)) {
    case OPTIC_OP_SORT: return ad_rule_sort;
    case OPTIC_OP_TOPK: return ad_rule_topk;
    case OPTIC_OP_CONDITIONAL: return ad_rule_conditional_tuple;
    case OPTIC_OP_ALL_REDUCE: return (*why = ad_collective_unsupported(c, y)) ? NULL : ad_rule_all_reduce_tuple;
    default: break;
  }
  if (ad_rule_for(c, y, why) != NULL || *why == NULL) *why = "tuple-valued results have no rule";
  return NULL;
}

/* ------------------------------------------------------------ forward copy */

typedef struct ad_build {
  ad_ctx c;
  int32_t first;               /* the first id of the new computation */
  optic_node_id *origin;       /* per id - first: the source instruction copied */
  bool *dep;                   /* per id - first: computed from a differentiated parameter */
  int32_t cap_origin;          /* entries of origin and dep */
  const optic_grad_options *o; /* the stop_gradient list (NULL inside a conditional's branch) */
} ad_build;

/* Records that new instruction id copies src (for messages). */
static optic_status note_origin(ad_build *b, optic_node_id id, optic_node_id src) {
  int32_t k = id - b->first;
  if (k >= b->cap_origin) {
    int32_t cap = k + 1 > 2 * b->cap_origin ? k + 1 : 2 * b->cap_origin;
    optic_node_id *o = realloc(b->origin, (size_t)cap * sizeof *o);
    if (o != NULL) b->origin = o;
    bool *d = o == NULL ? NULL : realloc(b->dep, (size_t)cap * sizeof *d);
    if (d == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
    for (int32_t i = b->cap_origin; i < cap; i++) o[i] = OPTIC_NO_NODE, d[i] = false;
    b->dep = d, b->cap_origin = cap;
  }
  b->origin[k] = src;
  return OPTIC_OK;
}

static bool get_dep(const ad_build *b, optic_node_id id) {
  int32_t k = id - b->first;
  return k >= 0 && k < b->cap_origin && b->dep[k];
}

/* note_origin, and id depends on a differentiated parameter. */
static optic_status note_dep(ad_build *b, optic_node_id id, optic_node_id src) {
  AD_TRY(note_origin(b, id, src));
  b->dep[id - b->first] = true;
  return OPTIC_OK;
}

static bool is_stopped(const optic_grad_options *o, optic_node_id src) {
  for (int32_t i = 0; o != NULL && i < o->n_stop_gradient; i++) {
    if (o->stop_gradient[i] == src) return true;
  }
  return false;
}

static optic_status clone_cone(ad_build *b, optic_comp_id src, optic_node_id *map, optic_node_id root);

/* Callee's cone copied with its parameters bound to the n copied operands
 * ops: a call or fusion inlined, or one iteration of a while body. */
static optic_status inline_comp(ad_build *b, optic_comp_id callee, const optic_node_id *ops, int32_t n,
                                optic_node_id *out) {
  optic_module_t *m = b->c.m;
  optic_node_id *map = malloc((size_t)m->n_instrs * sizeof *map);
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < m->n_instrs; i++) map[i] = OPTIC_NO_NODE;
  for (int32_t i = 0; i < n; i++) map[optic_computation_parameter(m, callee, i)] = ops[i];
  optic_node_id root = optic_computation_root(m, callee);
  optic_status st = clone_cone(b, callee, map, root);
  *out = map[root];
  free(map);
  return st;
}

/* A copy of comparator cmp (2n scalar parameters) taking two more, s32
 * scalars it ignores: the comparator of a sort given one more operand. */
static optic_status widen_comparator(ad_build *b, optic_comp_id cmp, optic_comp_id *out) {
  optic_module_t *m = b->c.m;
  char name[320];
  snprintf(name, sizeof name, "%.200s.with_iota", optic_computation_name(m, cmp));
  AD_TRY(ad_new_comp(m, name, out));
  int32_t np = optic_computation_parameter_count(m, cmp);
  optic_node_id *map = malloc((size_t)(m->n_instrs + 2 * np + 2) * sizeof *map), q;
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < m->n_instrs + 2 * np + 2; i++) map[i] = OPTIC_NO_NODE;
  optic_status st = OPTIC_OK;
  optic_shape sc = {.rank = 0};
  optic_type s32 = optic_type_array(OPTIC_S32, &sc);
  for (int32_t i = 0; i < np + 2 && st == OPTIC_OK; i++) {
    optic_node_id p = i < np ? optic_computation_parameter(m, cmp, i) : OPTIC_NO_NODE;
    optic_type t = p == OPTIC_NO_NODE ? s32 : *optic_node_type(m, p);
    st = optic_graph_parameter(m, *out, i, &t, NULL, &q);
    if (st == OPTIC_OK && p != OPTIC_NO_NODE) map[p] = q;
  }
  optic_comp_id keep = b->c.dst;
  optic_node_id root = optic_computation_root(m, cmp);
  b->c.dst = *out; /* the comparator's body copied into the new one */
  if (st == OPTIC_OK) st = clone_cone(b, cmp, map, root);
  b->c.dst = keep;
  if (st == OPTIC_OK) st = optic_computation_set_root(m, *out, map[root]);
  free(map);
  return st;
}

/* Sort id (operands o, copied) copied as a sort of one more operand, an
 * s32 iota along its dimension that the comparator ignores: the same
 * values (optic's sort is stable) and the permutation, which its rule
 * needs (JAX's sort rule does the same). *out: the original's value. */
static optic_status clone_sort(ad_build *b, optic_node_id id, const optic_node_id *o, optic_node_id *out) {
  optic_module_t *m = b->c.m;
  optic_node_attrs_t a;
  ad_attrs(m, id, &a);
  int32_t n = optic_node_operand_count(m, id);
  optic_comp_id wide;
  AD_TRY(widen_comparator(b, optic_node_called(m, id, 0), &wide));
  optic_node_id *xs = malloc((size_t)(n + 1) * sizeof *xs), s;
  if (xs == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < n; i++) xs[i] = o[i];
  optic_shape sh = optic_node_type(m, o[0])->shape;
  optic_status st = optic_graph_iota(m, b->c.dst, OPTIC_S32, &sh, a.sort.dimension, NULL, &xs[n]);
  if (st == OPTIC_OK) st = note_origin(b, xs[n], id);
  if (st == OPTIC_OK) st = optic_graph_sort(m, b->c.dst, xs, n + 1, a.sort.dimension, a.sort.is_stable, wide, NULL, &s);
  if (st == OPTIC_OK) st = note_dep(b, s, id);
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) { /* the original's elements */
    st = optic_graph_get_tuple_element(m, b->c.dst, s, i, NULL, &xs[i]);
    if (st == OPTIC_OK) st = note_dep(b, xs[i], id);
  }
  if (st == OPTIC_OK && n == 1) *out = xs[0];
  else if (st == OPTIC_OK) st = optic_graph_tuple(m, b->c.dst, xs, n, NULL, out);
  if (st == OPTIC_OK && n > 1) st = note_dep(b, *out, id);
  free(xs);
  return st;
}

/* One copied instruction, operands o already copied. */
static optic_status clone_plain(ad_build *b, optic_node_id id, const optic_node_id *o, optic_node_id *out) {
  optic_module_t *m = b->c.m;
  const optic_instr *in = graph_instr(m, id);
  bool dep = false;
  for (int32_t i = 0; i < in->n_operands; i++) dep = dep || get_dep(b, o[i]);
  dep = dep && !is_stopped(b->o, id);
  if (dep && in->op == OPTIC_OP_SORT && ad_sort_needs_iota(m, id, o)) return clone_sort(b, id, o, out);
  optic_instr_proto p = graph_proto(in->op);
  p.type = in->type, p.operands = o, p.n_operands = in->n_operands;
  p.ints = in->ints, p.n_ints = in->n_ints, p.cmp = in->cmp;
  p.calls = in->calls, p.n_calls = in->n_calls, p.data = in->data, p.data_bytes = in->data_bytes;
  AD_TRY(graph_add_instr(m, b->c.dst, &p, NULL, out));
  AD_TRY(note_origin(b, *out, id));
  b->dep[*out - b->first] = dep;
  return OPTIC_OK;
}

static optic_status clone_one(ad_build *b, optic_node_id id, optic_node_id *map) {
  optic_module_t *m = b->c.m;
  const optic_instr *in = graph_instr(m, id);
  optic_node_id ops[OPTIC_MAX_CALLS], *big = NULL, *o = ops;
  if (in->n_operands > OPTIC_MAX_CALLS) {
    if ((big = malloc((size_t)in->n_operands * sizeof *big)) == NULL) {
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
    }
    o = big;
  }
  for (int32_t i = 0; i < in->n_operands; i++) o[i] = map[in->operands[i]];
  optic_status st;
  int64_t trips;
  if (in->op == OPTIC_OP_GET_TUPLE_ELEMENT && optic_node_opcode(m, o[0]) == OPTIC_OP_TUPLE) {
    map[id] = optic_node_operand(m, o[0], (int32_t)in->ints[0]); /* an element of a tuple built here: itself */
    st = OPTIC_OK;
  } else if (in->op == OPTIC_OP_CALL || in->op == OPTIC_OP_FUSION) {
    st = inline_comp(b, in->calls[0], o, in->n_operands, &map[id]);
  } else if (in->op == OPTIC_OP_WHILE && graph_while_trip_count(m, id, AD_MAX_UNROLL, &trips)) {
    optic_node_id v = o[0];            /* unrolled: the body applied trips times */
    optic_comp_id body = in->calls[1]; /* in moves when the module grows */
    st = OPTIC_OK;
    for (int64_t t = 0; t < trips && st == OPTIC_OK; t++) st = inline_comp(b, body, &v, 1, &v);
    map[id] = v;
  } else {
    st = clone_plain(b, id, o, &map[id]);
  }
  free(big);
  return st;
}

/* Copies root's cone in src into b's computation, operands first
 * (iterative DFS: deep chains need no deep C stack). */
static optic_status clone_cone(ad_build *b, optic_comp_id src, optic_node_id *map, optic_node_id root) {
  (void)src;
  if (map[root] != OPTIC_NO_NODE) return OPTIC_OK;
  int32_t cap = 64, n = 0;
  optic_node_id *stack = malloc((size_t)cap * sizeof *stack);
  if (stack == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  stack[n++] = root;
  optic_status st = OPTIC_OK;
  while (n > 0 && st == OPTIC_OK) {
    optic_node_id id = stack[n - 1];
    const optic_instr *in = graph_instr(b->c.m, id);
    bool ready = true;
    for (int32_t i = 0; i < in->n_operands && st == OPTIC_OK; i++) {
      optic_node_id o = in->operands[i];
      if (map[o] != OPTIC_NO_NODE) continue;
      ready = false;
      if (n == cap) {
        optic_node_id *s = realloc(stack, (size_t)cap * 2 * sizeof *s);
        if (s == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
        else stack = s, cap *= 2;
      }
      if (st == OPTIC_OK) stack[n++] = o;
    }
    if (!ready || st != OPTIC_OK) continue;
    n--;
    if (map[id] == OPTIC_NO_NODE) st = clone_one(b, id, map);
  }
  free(stack);
  return st;
}

/* ------------------------------------------------------------ backward */

/* needs[y]: y is a float array computed from a differentiated parameter
 * (not through an instruction the options stop). */
static void mark_needs(ad_build *b, const optic_grad_options *o) {
  ad_ctx *c = &b->c;
  for (optic_node_id y = b->first; y < c->n_fwd; y++) {
    const optic_instr *in = graph_instr(c->m, y);
    if (in == NULL || in->op == OPTIC_OP_PARAMETER) continue;
    int32_t k = y - b->first;
    if (o != NULL && o->n_stop_gradient > 0 && k < b->cap_origin && is_stopped(o, b->origin[k])) continue;
    bool any = false;
    for (int32_t i = 0; i < in->n_operands; i++) any = any || ad_wants(c, in->operands[i]);
    c->needs[y] = any && !optic_type_is_tuple(&in->type) ? optic_dtype_is_float(in->type.dtype) : any;
  }
}

static optic_status accumulate(ad_ctx *c, optic_node_id x, optic_node_id g) {
  if (g == OPTIC_NO_NODE || !ad_wants(c, x)) return OPTIC_OK;
  if (c->adj[x] == OPTIC_NO_NODE) {
    c->adj[x] = g;
    return OPTIC_OK;
  }
  return ad_add_any(c, c->adj[x], g, &c->adj[x]);
}

static optic_status unsupported(const ad_build *b, optic_node_id y, const char *why) {
  optic_node_id src = b->origin[y - b->first];
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "autodiff: cannot differentiate %s '%s': %s",
                    optic_opcode_name(optic_node_opcode(b->c.m, y)), optic_node_name(b->c.m, src), why);
}

static optic_status batch_norm_rule(ad_build *b, optic_node_id y) {
  ad_ctx *c = &b->c;
  optic_node_id g3[3];
  const char *why;
  AD_TRY(ad_rule_batch_norm_training(c, y, g3, &why));
  if (why != NULL) return unsupported(b, y, why);
  for (int32_t i = 0; i < 3; i++) AD_TRY(accumulate(c, optic_node_operand(c->m, y, i), g3[i]));
  return OPTIC_OK;
}

static optic_status accumulate_all(ad_ctx *c, optic_node_id y, const optic_node_id *gx) {
  for (int32_t i = 0; i < optic_node_operand_count(c->m, y); i++) {
    AD_TRY(accumulate(c, optic_node_operand(c->m, y, i), gx[i]));
  }
  return OPTIC_OK;
}

/* A tuple-valued y: its elements' adjoints (from its get-tuple-element
 * readers and its own adjoint) go to its operands by its rule; a tuple
 * element of a tuple takes them as one tuple, for its own producer. */
static optic_status tuple_valued(ad_build *b, optic_node_id y, optic_node_id *gy, optic_node_id *gx) {
  ad_ctx *c = &b->c;
  optic_opcode op = optic_node_opcode(c->m, y);
  if (op == OPTIC_OP_BATCH_NORM_TRAINING) return batch_norm_rule(b, y);
  bool any;
  AD_TRY(ad_tuple_adjoints(c, y, gy, &any));
  if (!any) return OPTIC_OK;
  if (op == OPTIC_OP_GET_TUPLE_ELEMENT) return ad_tuple_fill(c, y, gy, &c->adj[y]);
  if (op == OPTIC_OP_TUPLE) return accumulate_all(c, y, gy);
  const char *why = NULL;
  ad_tuple_rule_fn rule = ad_tuple_rule_for(c, y, &why);
  if (rule == NULL) return unsupported(b, y, why);
  for (int32_t i = 0; i < optic_node_operand_count(c->m, y); i++) gx[i] = OPTIC_NO_NODE;
  AD_TRY(rule(c, y, gy, gx));
  return accumulate_all(c, y, gx);
}

/* Room for n entries in *buf (its capacity *cap; initially the caller's small). */
static optic_status room(optic_node_id **buf, int32_t *cap, int32_t n, optic_node_id *small) {
  if (n <= *cap) return OPTIC_OK;
  optic_node_id *g2 = malloc((size_t)n * sizeof *g2);
  if (g2 == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  if (*buf != small) free(*buf);
  *buf = g2, *cap = n;
  return OPTIC_OK;
}

static optic_status sweep(ad_build *b) {
  ad_ctx *c = &b->c;
  optic_node_id gx_small[8], *gx = gx_small, gy_small[8], *gy = gy_small;
  int32_t cap = 8, cap_y = 8;
  optic_status st = OPTIC_OK;
  for (optic_node_id y = c->n_fwd - 1; y >= b->first && st == OPTIC_OK; y--) {
    optic_opcode op = optic_node_opcode(c->m, y);
    if (!c->needs[y] || op == OPTIC_OP_PARAMETER) continue;
    const optic_type *t = optic_node_type(c->m, y);
    int32_t n = optic_node_operand_count(c->m, y);
    if ((st = room(&gx, &cap, n, gx_small)) != OPTIC_OK) break;
    if (optic_type_is_tuple(t)) {
      if ((st = room(&gy, &cap_y, t->tuple_size, gy_small)) == OPTIC_OK) st = tuple_valued(b, y, gy, gx);
      continue;
    }
    /* An array element of a tuple: its producer reads its adjoint. */
    if (c->adj[y] == OPTIC_NO_NODE || op == OPTIC_OP_GET_TUPLE_ELEMENT) continue;
    const char *why;
    ad_rule_fn rule = ad_rule_for(c, y, &why);
    if (rule == NULL) {
      st = unsupported(b, y, why);
      break;
    }
    for (int32_t i = 0; i < n; i++) gx[i] = OPTIC_NO_NODE;
    if ((st = rule(c, y, c->adj[y], gx)) == OPTIC_OK) st = accumulate_all(c, y, gx);
  }
  if (gx != gx_small) free(gx);
  if (gy != gy_small) free(gy);
  return st;
}

/* ------------------------------------------------------------ driver */

static optic_status new_computation(optic_module_t *m, optic_comp_id comp, const char *name, optic_comp_id *out) {
  if (name != NULL) return optic_module_add_computation(m, name, out);
  char buf[320];
  snprintf(buf, sizeof buf, "%.200s.value_and_grad", optic_computation_name(m, comp));
  return ad_new_comp(m, buf, out);
}

/* Parameters (and the seed) copied; map gets src -> dst for them. */
static optic_status copy_parameters(ad_build *b, optic_comp_id comp, optic_node_id *map, const optic_grad_options *o,
                                    optic_node_id out_src, optic_node_id *seed) {
  optic_module_t *m = b->c.m;
  int32_t np = optic_computation_parameter_count(m, comp);
  for (int32_t i = 0; i < np; i++) {
    optic_node_id p = optic_computation_parameter(m, comp, i), q;
    if (p == OPTIC_NO_NODE) continue;
    AD_TRY(optic_graph_parameter(m, b->c.dst, i, optic_node_type(m, p), NULL, &q));
    AD_TRY(note_origin(b, q, p));
    map[p] = q;
  }
  *seed = OPTIC_NO_NODE;
  if (!o->seeded) return OPTIC_OK;
  char name[32] = "seed"; /* module-unique: "seed", "seed.1", ... */
  for (int i = 1; graph_names_contains(&m->names, name) && i < 1000000; i++) snprintf(name, sizeof name, "seed.%d", i);
  return optic_graph_parameter(m, b->c.dst, np, optic_node_type(m, out_src), name, seed);
}

static optic_status check_args(const optic_module_t *m, optic_comp_id comp, const int32_t *wrt, int32_t n_wrt,
                               const optic_grad_options *o, optic_node_id *output) {
  if (m == NULL || comp < 0 || comp >= optic_module_computation_count(m)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: no computation %d", (int)comp);
  }
  if (n_wrt < 0 || (n_wrt > 0 && wrt == NULL)) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: bad wrt list");
  *output = o->output == OPTIC_NO_NODE ? optic_computation_root(m, comp) : o->output;
  if (*output == OPTIC_NO_NODE || optic_node_computation(m, *output) != comp) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "autodiff: the output is not an instruction of '%s' (or it has no root)",
                      optic_computation_name(m, comp));
  }
  const optic_type *t = optic_node_type(m, *output);
  if (optic_type_is_tuple(t)) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: the output is a tuple");
  if (!o->seeded && t->shape.rank != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: the output '%s' is not a scalar; pass seeded = true",
                      optic_node_name(m, *output));
  }
  if (o->n_stop_gradient < 0 || (o->n_stop_gradient > 0 && o->stop_gradient == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: bad stop_gradient list");
  }
  for (int32_t i = 0; i < o->n_stop_gradient; i++) {
    optic_node_id s = o->stop_gradient[i];
    if (optic_node_computation(m, s) != comp) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: stop_gradient[%d] = %d is not an instruction of '%s'",
                        (int)i, (int)s, optic_computation_name(m, comp));
    }
    for (int32_t j = 0; j < i; j++) {
      if (o->stop_gradient[j] == s)
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: stop_gradient lists '%s' twice",
                          optic_node_name(m, s));
    }
  }
  for (int32_t i = 0; i < n_wrt; i++) {
    optic_node_id p = optic_computation_parameter(m, comp, wrt[i]);
    if (p == OPTIC_NO_NODE) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: no parameter %d", (int)wrt[i]);
    const optic_type *pt = optic_node_type(m, p);
    if (optic_type_is_tuple(pt) || !optic_dtype_is_float(pt->dtype)) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: parameter %d is not a floating-point array",
                        (int)wrt[i]);
    }
    for (int32_t j = 0; j < i; j++) {
      if (wrt[j] == wrt[i])
        return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: parameter %d listed twice", (int)wrt[i]);
    }
  }
  return OPTIC_OK;
}

/* The gradients (zeros where none flowed) and the result tuple. */
static optic_status finish(ad_build *b, optic_node_id out_dst, const int32_t *wrt, int32_t n_wrt) {
  ad_ctx *c = &b->c;
  optic_node_id small[16], *xs = small;
  if (n_wrt + 1 > 16 && (xs = malloc((size_t)(n_wrt + 1) * sizeof *xs)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  }
  optic_status st = OPTIC_OK;
  xs[0] = out_dst;
  for (int32_t i = 0; i < n_wrt && st == OPTIC_OK; i++) {
    optic_node_id p = optic_computation_parameter(c->m, c->dst, wrt[i]);
    xs[i + 1] = c->adj[p];
    if (xs[i + 1] == OPTIC_NO_NODE) st = ad_zeros_like(c, p, &xs[i + 1]);
  }
  optic_node_id root;
  if (st == OPTIC_OK) st = optic_graph_tuple(c->m, c->dst, xs, n_wrt + 1, NULL, &root);
  if (st == OPTIC_OK) st = optic_computation_set_root(c->m, c->dst, root);
  if (xs != small) free(xs);
  return st;
}

/* After the forward copy: adjoints and needs for every id so far. */
static optic_status begin_backward(ad_build *b) {
  ad_ctx *c = &b->c;
  c->n_fwd = c->m->n_instrs;
  c->adj = malloc((size_t)c->n_fwd * sizeof *c->adj);
  c->needs = calloc((size_t)c->n_fwd, sizeof *c->needs);
  if (c->adj == NULL || c->needs == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < c->n_fwd; i++) c->adj[i] = OPTIC_NO_NODE;
  return OPTIC_OK;
}

static void free_build(ad_build *b) {
  free(b->c.adj);
  free(b->c.needs);
  free(b->origin);
  free(b->dep);
}

static optic_node_id *new_map(const optic_module_t *m) {
  optic_node_id *map = malloc((size_t)m->n_instrs * sizeof *map);
  for (int32_t i = 0; map != NULL && i < m->n_instrs; i++) map[i] = OPTIC_NO_NODE;
  return map;
}

static optic_status build(optic_module_t *m, optic_comp_id comp, const int32_t *wrt, int32_t n_wrt,
                          const optic_grad_options *o, optic_node_id out_src, optic_comp_id *out) {
  ad_build b = {.c = {.m = m}, .o = o};
  for (int32_t i = 0; i < OPTIC_DTYPE_COUNT_; i++) b.c.add_comp[i] = -1;
  optic_status st = new_computation(m, comp, o->name, &b.c.dst);
  if (st != OPTIC_OK) return st;
  b.first = m->n_instrs;
  optic_node_id *map = new_map(m), seed = OPTIC_NO_NODE;
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  st = copy_parameters(&b, comp, map, o, out_src, &seed);
  for (int32_t i = 0; i < n_wrt && st == OPTIC_OK; i++) {
    b.dep[optic_computation_parameter(m, b.c.dst, wrt[i]) - b.first] = true;
  }
  if (st == OPTIC_OK) st = clone_cone(&b, comp, map, out_src);
  optic_node_id out_dst = map[out_src];
  free(map);
  if (st == OPTIC_OK) st = begin_backward(&b);
  if (st != OPTIC_OK) goto done;
  for (int32_t i = 0; i < n_wrt; i++) b.c.needs[optic_computation_parameter(m, b.c.dst, wrt[i])] = true;
  mark_needs(&b, o);
  if (seed == OPTIC_NO_NODE) st = ad_const(&b.c, 1.0, optic_node_type(m, out_dst)->dtype, NULL, &seed);
  if (st == OPTIC_OK && ad_wants(&b.c, out_dst)) b.c.adj[out_dst] = seed;
  if (st == OPTIC_OK) st = sweep(&b);
  if (st == OPTIC_OK) st = finish(&b, out_dst, wrt, n_wrt);
  if (st == OPTIC_OK) *out = b.c.dst;
done:
  free_build(&b);
  return st;
}

optic_status ad_vjp_into(optic_module_t *m, optic_comp_id dst, optic_comp_id src, optic_node_id q, optic_node_id *out) {
  ad_build b = {.c = {.m = m, .dst = dst}, .first = q};
  for (int32_t i = 0; i < OPTIC_DTYPE_COUNT_; i++) b.c.add_comp[i] = -1;
  optic_node_id param = optic_computation_parameter(m, src, 0), p, ct, root = optic_computation_root(m, src);
  optic_node_id *map = new_map(m);
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  optic_status st = note_origin(&b, q, param);
  if (st == OPTIC_OK) st = optic_graph_get_tuple_element(m, dst, q, 0, NULL, &p);
  if (st == OPTIC_OK) st = note_dep(&b, p, param);
  if (st == OPTIC_OK && param != OPTIC_NO_NODE) map[param] = p;
  if (st == OPTIC_OK) st = clone_cone(&b, src, map, root);
  optic_node_id root_dst = map[root];
  free(map);
  if (st == OPTIC_OK) st = begin_backward(&b);
  if (st == OPTIC_OK) {
    b.c.needs[q] = true;
    mark_needs(&b, NULL);
    st = optic_graph_get_tuple_element(m, dst, q, 1, NULL, &ct);
  }
  if (st == OPTIC_OK && ad_wants(&b.c, root_dst)) b.c.adj[root_dst] = ct;
  if (st == OPTIC_OK) st = sweep(&b);
  if (st == OPTIC_OK) st = ad_full_cotangent(&b.c, p, out);
  free_build(&b);
  return st;
}

optic_status optic_autodiff_value_and_grad(optic_module_t *m, optic_comp_id comp, const int32_t *wrt, int32_t n_wrt,
                                           const optic_grad_options *opts, optic_comp_id *out) {
  optic_grad_options o = optic_grad_options_default();
  if (opts != NULL) {
    size_t n = opts->size < sizeof o ? opts->size : sizeof o;
    memcpy(&o, opts, n);
    o.size = sizeof o;
  }
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "autodiff: NULL out");
  optic_node_id out_src = OPTIC_NO_NODE;
  optic_status st = check_args(m, comp, wrt, n_wrt, &o, &out_src);
  if (st != OPTIC_OK) return st;
  /* Built first on a copy, so that an op without a rule leaves m untouched;
   * then on m, where it can only fail for lack of memory. */
  optic_module_t *trial;
  if ((st = optic_module_clone(m, &trial)) != OPTIC_OK) return st;
  optic_comp_id ignored;
  st = build(trial, comp, wrt, n_wrt, &o, out_src, &ignored);
  optic_module_destroy(trial);
  if (st != OPTIC_OK) return st;
  return build(m, comp, wrt, n_wrt, &o, out_src, out);
}
