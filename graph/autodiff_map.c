/* Autodiff rule of map: its scalar computation f, when made of
 * elementwise ops and scalar constants, is rebuilt over whole arrays (a
 * computation E of the operands' tuple, constants broadcast), E's
 * vector-Jacobian product is built as for a conditional's branch
 * (ad_vjp_into), and the gradient is a call of it on (operands, g). The
 * forward map itself is kept (its values are the original's). */
#include <stdio.h>
#include <stdlib.h>

#include "graph/autodiff_internal.h"

static bool expandable(optic_opcode op) {
  graph_opcode_kind k = graph_opcode_kind_of(op);
  return k == GRAPH_OPCODE_UNARY || k == GRAPH_OPCODE_BINARY || op == OPTIC_OP_COMPARE || op == OPTIC_OP_SELECT ||
         op == OPTIC_OP_CLAMP || op == OPTIC_OP_CONVERT || op == OPTIC_OP_COPY || op == OPTIC_OP_PARAMETER ||
         op == OPTIC_OP_CONSTANT;
}

const char *ad_map_unsupported(const optic_module_t *m, optic_node_id y) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, optic_node_called(m, y, 0), &n);
  for (int32_t i = 0; i < n; i++) {
    if (!expandable(optic_node_opcode(m, ids[i]))) {
      return "only maps whose computation is made of elementwise ops and constants have a rule";
    }
  }
  return NULL;
}

/* f's instruction id (scalar) rebuilt in E over shape s; map: f id -> E id. */
static optic_status expand_one(optic_module_t *m, optic_comp_id e, optic_node_id q, const optic_shape *s,
                               optic_node_id id, optic_node_id *map) {
  optic_opcode op = optic_node_opcode(m, id);
  optic_node_id a = OPTIC_NO_NODE, b = OPTIC_NO_NODE, k = OPTIC_NO_NODE, *out = &map[id];
  int32_t n = optic_node_operand_count(m, id);
  if (n > 0) a = map[optic_node_operand(m, id, 0)];
  if (n > 1) b = map[optic_node_operand(m, id, 1)];
  if (n > 2) k = map[optic_node_operand(m, id, 2)];
  optic_node_attrs_t at;
  ad_attrs(m, id, &at);
  switch (graph_opcode_kind_of(op)) {
    case GRAPH_OPCODE_UNARY: return optic_graph_unary(m, e, op, a, NULL, out);
    case GRAPH_OPCODE_BINARY: return optic_graph_binary(m, e, op, a, b, NULL, out);
    default: break;
  }
  switch (op) {
    case OPTIC_OP_PARAMETER: return optic_graph_get_tuple_element(m, e, q, at.parameter.number, NULL, out);
    case OPTIC_OP_COMPARE: return optic_graph_compare(m, e, optic_node_compare_dir(m, id), a, b, NULL, out);
    case OPTIC_OP_SELECT: return optic_graph_select(m, e, a, b, k, NULL, out);
    case OPTIC_OP_CLAMP: return optic_graph_clamp(m, e, a, b, k, NULL, out);
    case OPTIC_OP_CONVERT: return optic_graph_convert(m, e, a, optic_node_type(m, id)->dtype, NULL, out);
    case OPTIC_OP_COPY: *out = a; return OPTIC_OK;
    default: { /* a scalar constant, broadcast */
      size_t bytes = 0;
      const void *data = optic_node_constant_data(m, id, &bytes);
      optic_type t = *optic_node_type(m, id);
      optic_node_id c;
      AD_TRY(optic_graph_constant(m, e, t.dtype, &t.shape, data, bytes, NULL, &c));
      return optic_graph_broadcast(m, e, c, s, NULL, 0, NULL, out);
    }
  }
}

/* E: f over whole arrays of y's shape, one parameter: the operands' tuple. */
static optic_status expand(ad_ctx *c, optic_node_id y, const optic_type *qt, optic_comp_id *out) {
  optic_module_t *m = c->m;
  optic_comp_id f = optic_node_called(m, y, 0);
  char name[320];
  snprintf(name, sizeof name, "%.200s.arrays", optic_computation_name(m, f));
  AD_TRY(ad_new_comp(m, name, out));
  optic_node_id q, *map = malloc((size_t)m->n_instrs * sizeof *map);
  if (map == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  optic_shape s = ad_type(c, y)->shape;
  optic_status st = optic_graph_parameter(m, *out, 0, qt, NULL, &q);
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, f, &n);
  optic_node_id *copy = st == OPTIC_OK ? malloc((size_t)(n + 1) * sizeof *copy) : NULL;
  if (st == OPTIC_OK && copy == NULL) st = optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) copy[i] = ids[i]; /* ids move as the module grows */
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) st = expand_one(m, *out, q, &s, copy[i], map);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, *out, map[optic_computation_root(m, f)]);
  free(copy);
  free(map);
  return st;
}

optic_status ad_rule_map(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_module_t *m = c->m;
  int32_t n = optic_node_operand_count(m, y);
  optic_type *el = malloc((size_t)(n + 1) * sizeof *el), pair_el[2];
  optic_node_id *xs = malloc((size_t)(n + 1) * sizeof *xs), t = OPTIC_NO_NODE, pair = OPTIC_NO_NODE, q = OPTIC_NO_NODE,
                ct = OPTIC_NO_NODE, r = OPTIC_NO_NODE;
  optic_status st = el && xs ? OPTIC_OK : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) xs[i] = optic_node_operand(m, y, i);
  optic_comp_id e = -1, v = -1;
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) el[i] = *ad_type(c, xs[i]);
  optic_type tt = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = n, .elements = el};
  if (st == OPTIC_OK) st = expand(c, y, &tt, &e);
  if (st == OPTIC_OK) st = optic_graph_tuple(m, c->dst, xs, n, NULL, &t);
  if (st == OPTIC_OK) st = ad_new_comp(m, "autodiff.map_vjp", &v);
  pair_el[0] = tt, pair_el[1] = *ad_type(c, y);
  optic_type pt = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = pair_el};
  if (st == OPTIC_OK) st = optic_graph_parameter(m, v, 0, &pt, NULL, &q);
  if (st == OPTIC_OK) st = ad_vjp_into(m, v, e, q, &ct);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, v, ct);
  optic_node_id two[2] = {t, g};
  if (st == OPTIC_OK) st = optic_graph_tuple(m, c->dst, two, 2, NULL, &pair);
  if (st == OPTIC_OK) st = optic_graph_call(m, c->dst, v, &pair, 1, NULL, &r);
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    if (ad_wants(c, optic_node_operand(m, y, i))) st = optic_graph_get_tuple_element(m, c->dst, r, i, NULL, &gx[i]);
  }
  free(el);
  free(xs);
  return st;
}
