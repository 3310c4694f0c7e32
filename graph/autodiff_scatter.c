/* Autodiff rules of scatter with a combiner other than add (that one is in
 * graph/autodiff_gather.c). Every update element lands on one operand
 * position (when its window lies inside the operand), read back by the
 * gather of the same dimension numbers:
 *   replace (the combiner returns the update, JAX's .at[].set): the last
 *     write to a position wins, so each update element's s32 id (1 + its
 *     row-major number) is scattered the same way; a position still 0
 *     kept the operand, which takes g there; an update takes g where the
 *     id read back is its own (JAX's scatter JVP does the same).
 *   multiply: operand g * P, P the product of the updates per position;
 *     update g * y / u read back (defined where no update is 0, as
 *     reduce-multiply's rule).
 *   maximum / minimum: g split evenly among the operand element and the
 *     update elements equal to the result (JAX's scatter-extremal rule). */
#include <stdint.h>

#include "graph/autodiff_internal.h"

optic_opcode ad_scatter_combiner(const optic_module_t *m, optic_node_id y) {
  optic_comp_id f = optic_node_called(m, y, 0);
  optic_opcode op = ad_combiner_op(m, f);
  if (op != OPTIC_OP_PARAMETER) return op;
  optic_node_id r = optic_computation_root(m, f);
  bool replace =
      optic_computation_parameter_count(m, f) == 2 && r != OPTIC_NO_NODE && r == optic_computation_parameter(m, f, 1);
  return replace ? OPTIC_OP_SCATTER : OPTIC_OP_PARAMETER;
}

typedef struct sc {
  optic_node_id y, x, idx, u;
  optic_scatter_dims s;
  optic_gather_dims d;
} sc;

static void sc_read(ad_ctx *c, optic_node_id y, sc *k) {
  k->y = y, k->x = optic_node_operand(c->m, y, 0), k->idx = optic_node_operand(c->m, y, 1);
  k->u = optic_node_operand(c->m, y, 2);
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  k->s = a.scatter;
  k->d = ad_gather_of_scatter(c, &k->s, k->x, k->u);
}

/* v (operand-shaped) at every update element's position. */
static optic_status read_back(ad_ctx *c, const sc *k, optic_node_id v, optic_node_id *out) {
  return optic_graph_gather(c->m, c->dst, v, k->idx, &k->d, NULL, out);
}

/* A scalar computation of dtype dt: op(a, b), or b for OPTIC_OP_SCATTER. */
static optic_status scalar_comp(ad_ctx *c, optic_opcode op, optic_dtype dt, optic_comp_id *out) {
  AD_TRY(ad_new_comp(c->m, op == OPTIC_OP_SCATTER ? "autodiff.replace" : "autodiff.multiply", out));
  optic_shape sc0 = {.rank = 0};
  optic_type t = optic_type_array(dt, &sc0);
  optic_node_id a, b, r;
  AD_TRY(optic_graph_parameter(c->m, *out, 0, &t, NULL, &a));
  AD_TRY(optic_graph_parameter(c->m, *out, 1, &t, NULL, &b));
  r = b;
  if (op != OPTIC_OP_SCATTER) AD_TRY(optic_graph_binary(c->m, *out, op, a, b, NULL, &r));
  return optic_computation_set_root(c->m, *out, r);
}

static optic_status scatter_with(ad_ctx *c, const sc *k, optic_node_id base, optic_node_id upd, optic_comp_id f,
                                 optic_node_id *out) {
  return optic_graph_scatter(c->m, c->dst, base, k->idx, upd, &k->s, f, NULL, out);
}

static optic_status rule_replace(ad_ctx *c, const sc *k, optic_node_id g, optic_node_id *gx) {
  optic_shape us = ad_type(c, k->u)->shape, xs = ad_type(c, k->x)->shape, flat = {.rank = 1, .dims = {1}};
  for (int32_t d = 0; d < us.rank; d++) flat.dims[0] *= us.dims[d];
  if (flat.dims[0] >= INT32_MAX) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "autodiff: cannot differentiate scatter '%s': 2^31 or more updates",
                      optic_node_name(c->m, k->y));
  }
  optic_node_id ids, one, zero, w, keep, back, mine, gb;
  optic_comp_id replace;
  AD_TRY(optic_graph_iota(c->m, c->dst, OPTIC_S32, &flat, 0, NULL, &ids));
  AD_TRY(optic_graph_reshape(c->m, c->dst, ids, &us, NULL, &ids));
  AD_TRY(ad_const(c, 1.0, OPTIC_S32, &us, &one));
  AD_TRY(ad_bin(c, OPTIC_OP_ADD, ids, one, &ids));
  AD_TRY(ad_const(c, 0.0, OPTIC_S32, &xs, &zero));
  AD_TRY(scalar_comp(c, OPTIC_OP_SCATTER, OPTIC_S32, &replace));
  AD_TRY(scatter_with(c, k, zero, ids, replace, &w));
  if (ad_wants(c, k->x)) {
    AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, w, zero, &keep));
    AD_TRY(ad_mask(c, keep, g, &gx[0]));
  }
  if (!ad_wants(c, k->u)) return OPTIC_OK;
  AD_TRY(read_back(c, k, w, &back));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, back, ids, &mine));
  AD_TRY(read_back(c, k, g, &gb));
  return ad_mask(c, mine, gb, &gx[2]);
}

static optic_status rule_multiply(ad_ctx *c, const sc *k, optic_node_id g, optic_node_id *gx) {
  optic_dtype dt = ad_type(c, k->x)->dtype;
  optic_shape xs = ad_type(c, k->x)->shape;
  if (ad_wants(c, k->x)) {
    optic_node_id ones, p;
    optic_comp_id mul;
    AD_TRY(scalar_comp(c, OPTIC_OP_MULTIPLY, dt, &mul));
    AD_TRY(ad_const(c, 1.0, dt, &xs, &ones));
    AD_TRY(scatter_with(c, k, ones, k->u, mul, &p));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, p, &gx[0]));
  }
  if (!ad_wants(c, k->u)) return OPTIC_OK;
  optic_node_id gy, t, ok;
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, k->y, &gy));
  AD_TRY(read_back(c, k, gy, &t));
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, t, k->u, &t));
  AD_TRY(ad_scatter_in_bounds(c, &k->d, k->x, k->idx, k->u, &k->s, &ok));
  return ad_mask(c, ok, t, &gx[2]);
}

static optic_status rule_extremal(ad_ctx *c, const sc *k, optic_node_id g, optic_node_id *gx) {
  optic_dtype dt = ad_type(c, k->x)->dtype;
  optic_node_id yb, ok, won, wf, xeq, xf, z, cnt, q, qb;
  AD_TRY(read_back(c, k, k->y, &yb));
  AD_TRY(ad_scatter_in_bounds(c, &k->d, k->x, k->idx, k->u, &k->s, &ok));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, k->u, yb, &won));
  AD_TRY(ad_bin(c, OPTIC_OP_AND, won, ok, &won));
  AD_TRY(optic_graph_convert(c->m, c->dst, won, dt, NULL, &wf));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, k->x, k->y, &xeq));
  AD_TRY(optic_graph_convert(c->m, c->dst, xeq, dt, NULL, &xf));
  optic_status st = OPTIC_OK;
  optic_comp_id add = ad_add_computation(c, dt, &st);
  if (st != OPTIC_OK) return st;
  AD_TRY(ad_zeros_like(c, k->x, &z));
  AD_TRY(scatter_with(c, k, z, wf, add, &cnt)); /* how many share each result */
  AD_TRY(ad_bin(c, OPTIC_OP_ADD, cnt, xf, &cnt));
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, g, cnt, &q));
  if (ad_wants(c, k->x)) AD_TRY(ad_mask(c, xeq, q, &gx[0]));
  if (!ad_wants(c, k->u)) return OPTIC_OK;
  AD_TRY(read_back(c, k, q, &qb));
  return ad_mask(c, won, qb, &gx[2]);
}

optic_status ad_rule_scatter_other(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  sc k;
  sc_read(c, y, &k);
  switch (ad_scatter_combiner(c->m, y)) {
    case OPTIC_OP_SCATTER: return rule_replace(c, &k, g, gx);
    case OPTIC_OP_MULTIPLY: return rule_multiply(c, &k, g, gx);
    default: return rule_extremal(c, &k, g, gx);
  }
}
