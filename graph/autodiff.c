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
    case OPTIC_OP_WHILE:
      *why =
          "only loops with a counter fixed at build time (JAX's scan and fori_loop shape) and at most 1024 "
          "iterations are differentiated (unrolled)";
      return NULL;
    case OPTIC_OP_SCATTER: return (*why = ad_scatter_unsupported(c->m, y)) ? NULL : ad_rule_scatter;
    default: *why = "no rule for this opcode"; return NULL;
  }
}

/* ------------------------------------------------------------ forward copy */

typedef struct ad_build {
  ad_ctx c;
  int32_t first;         /* the first id of the new computation */
  optic_node_id *origin; /* per id - first: the source instruction copied */
  int32_t cap_origin;
} ad_build;

/* Records that new instruction id copies src (for messages). */
static optic_status note_origin(ad_build *b, optic_node_id id, optic_node_id src) {
  int32_t k = id - b->first;
  if (k >= b->cap_origin) {
    int32_t cap = k + 1 > 2 * b->cap_origin ? k + 1 : 2 * b->cap_origin;
    optic_node_id *o = realloc(b->origin, (size_t)cap * sizeof *o);
    if (o == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
    for (int32_t i = b->cap_origin; i < cap; i++) o[i] = OPTIC_NO_NODE;
    b->origin = o, b->cap_origin = cap;
  }
  b->origin[k] = src;
  return OPTIC_OK;
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
    optic_instr_proto p = graph_proto(in->op);
    p.type = in->type, p.operands = o, p.n_operands = in->n_operands;
    p.ints = in->ints, p.n_ints = in->n_ints, p.cmp = in->cmp;
    p.calls = in->calls, p.n_calls = in->n_calls, p.data = in->data, p.data_bytes = in->data_bytes;
    st = graph_add_instr(m, b->c.dst, &p, NULL, &map[id]);
    if (st == OPTIC_OK) st = note_origin(b, map[id], id);
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

static bool is_stopped(const optic_grad_options *o, optic_node_id src) {
  for (int32_t i = 0; i < o->n_stop_gradient; i++) {
    if (o->stop_gradient[i] == src) return true;
  }
  return false;
}

/* needs[y]: y is a float array computed from a differentiated parameter
 * (not through an instruction the options stop). */
static void mark_needs(ad_build *b, const optic_grad_options *o) {
  ad_ctx *c = &b->c;
  for (optic_node_id y = b->first; y < c->n_fwd; y++) {
    const optic_instr *in = graph_instr(c->m, y);
    if (in == NULL || in->op == OPTIC_OP_PARAMETER) continue;
    int32_t k = y - b->first;
    if (o->n_stop_gradient > 0 && k < b->cap_origin && is_stopped(o, b->origin[k])) continue;
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
  return ad_bin(c, OPTIC_OP_ADD, c->adj[x], g, &c->adj[x]);
}

static optic_status unsupported(const ad_build *b, optic_node_id y, const char *why) {
  optic_node_id src = b->origin[y - b->first];
  return optic_fail(OPTIC_ERR_UNSUPPORTED, "autodiff: cannot differentiate %s '%s': %s",
                    optic_opcode_name(optic_node_opcode(b->c.m, y)), optic_node_name(b->c.m, src), why);
}

static optic_status tuple_rule(ad_build *b, optic_node_id y) {
  ad_ctx *c = &b->c;
  optic_node_id g3[3];
  const char *why;
  AD_TRY(ad_rule_batch_norm_training(c, y, g3, &why));
  if (why != NULL) return unsupported(b, y, why);
  for (int32_t i = 0; i < 3; i++) AD_TRY(accumulate(c, optic_node_operand(c->m, y, i), g3[i]));
  return OPTIC_OK;
}

static optic_status sweep(ad_build *b) {
  ad_ctx *c = &b->c;
  optic_node_id gx_small[8], *gx = gx_small;
  int32_t cap = 8;
  optic_status st = OPTIC_OK;
  for (optic_node_id y = c->n_fwd - 1; y >= b->first && st == OPTIC_OK; y--) {
    optic_opcode op = optic_node_opcode(c->m, y);
    if (!c->needs[y] || op == OPTIC_OP_PARAMETER) continue;
    if (op == OPTIC_OP_BATCH_NORM_TRAINING) { /* tuple-valued: reads its readers' adjoints */
      st = tuple_rule(b, y);
      continue;
    }
    if (c->adj[y] == OPTIC_NO_NODE) continue;
    if (op == OPTIC_OP_GET_TUPLE_ELEMENT &&
        optic_node_opcode(c->m, optic_node_operand(c->m, y, 0)) == OPTIC_OP_BATCH_NORM_TRAINING) {
      continue; /* taken by the batch-norm-training rule */
    }
    const char *why;
    ad_rule_fn rule = ad_rule_for(c, y, &why);
    if (rule == NULL && optic_node_opcode(c->m, y) == OPTIC_OP_GET_TUPLE_ELEMENT) {
      optic_node_id t = optic_node_operand(c->m, y, 0); /* name the producer of the tuple */
      if (ad_rule_for(c, t, &why) != NULL || why == NULL) why = "tuple-valued results have no rule";
      st = unsupported(b, t, why);
      break;
    }
    if (rule == NULL) {
      st = unsupported(b, y, why);
      break;
    }
    if (optic_type_is_tuple(optic_node_type(c->m, y))) {
      st = unsupported(b, y, "tuple-valued results have no rule");
      break;
    }
    int32_t n = optic_node_operand_count(c->m, y);
    if (n > cap) {
      optic_node_id *g2 = malloc((size_t)n * sizeof *g2);
      if (g2 == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
      if (gx != gx_small) free(gx);
      gx = g2, cap = n;
    }
    for (int32_t i = 0; i < n; i++) gx[i] = OPTIC_NO_NODE;
    if ((st = rule(c, y, c->adj[y], gx)) != OPTIC_OK) break;
    for (int32_t i = 0; i < n && st == OPTIC_OK; i++) st = accumulate(c, optic_node_operand(c->m, y, i), gx[i]);
  }
  if (gx != gx_small) free(gx);
  return st;
}

/* ------------------------------------------------------------ driver */

static optic_status new_computation(optic_module_t *m, optic_comp_id comp, const char *name, optic_comp_id *out) {
  char buf[320];
  const char *base = name;
  if (base == NULL) {
    snprintf(buf, sizeof buf, "%.200s.value_and_grad", optic_computation_name(m, comp));
    base = buf;
  }
  optic_status st = optic_module_add_computation(m, base, out);
  if (st != OPTIC_ERR_INVALID_ARGUMENT || name != NULL) return st;
  for (int i = 1; i < 100000; i++) {
    char alt[340];
    snprintf(alt, sizeof alt, "%s.%d", base, i);
    if ((st = optic_module_add_computation(m, alt, out)) != OPTIC_ERR_INVALID_ARGUMENT) return st;
  }
  return st;
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

static optic_status build(optic_module_t *m, optic_comp_id comp, const int32_t *wrt, int32_t n_wrt,
                          const optic_grad_options *o, optic_node_id out_src, optic_comp_id *out) {
  ad_build b = {.c = {.m = m}};
  for (int32_t i = 0; i < OPTIC_DTYPE_COUNT_; i++) b.c.add_comp[i] = -1;
  optic_status st = new_computation(m, comp, o->name, &b.c.dst);
  if (st != OPTIC_OK) return st;
  b.first = m->n_instrs;
  optic_node_id *map = malloc((size_t)m->n_instrs * sizeof *map), seed = OPTIC_NO_NODE;
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < m->n_instrs; i++) map[i] = OPTIC_NO_NODE;
  st = copy_parameters(&b, comp, map, o, out_src, &seed);
  if (st == OPTIC_OK) st = clone_cone(&b, comp, map, out_src);
  optic_node_id out_dst = map[out_src];
  free(map);
  if (st != OPTIC_OK) goto done;
  b.c.n_fwd = m->n_instrs;
  b.c.adj = malloc((size_t)b.c.n_fwd * sizeof *b.c.adj);
  b.c.needs = calloc((size_t)b.c.n_fwd, sizeof *b.c.needs);
  if (b.c.adj == NULL || b.c.needs == NULL) {
    st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
    goto done;
  }
  for (int32_t i = 0; i < b.c.n_fwd; i++) b.c.adj[i] = OPTIC_NO_NODE;
  for (int32_t i = 0; i < n_wrt; i++) b.c.needs[optic_computation_parameter(m, b.c.dst, wrt[i])] = true;
  mark_needs(&b, o);
  if (seed == OPTIC_NO_NODE) st = ad_const(&b.c, 1.0, optic_node_type(m, out_dst)->dtype, NULL, &seed);
  if (st == OPTIC_OK && ad_wants(&b.c, out_dst)) b.c.adj[out_dst] = seed;
  if (st == OPTIC_OK) st = sweep(&b);
  if (st == OPTIC_OK) st = finish(&b, out_dst, wrt, n_wrt);
  if (st == OPTIC_OK) *out = b.c.dst;
done:
  free(b.c.adj);
  free(b.c.needs);
  free(b.origin);
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
