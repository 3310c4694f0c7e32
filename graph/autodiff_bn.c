/* Autodiff rules of batch-norm-training and batch-norm-inference.
 * Training's result is the tuple (y, mean, variance), read through
 * get-tuple-element; the adjoint of y (summed over its readers) goes
 * through XLA's own batch-norm-grad with the batch's mean and variance,
 * which gives the gradients of x, scale and offset; adjoints of the mean
 * and (biased) variance outputs add gm / N and gv * 2 (x - mean) / N to x's
 * (N: elements per feature). Inference is elementwise per feature:
 * y = scale * (x - mean) * r + offset with r = rsqrt(variance + epsilon). */
#include "graph/autodiff_internal.h"

/* The dims of x other than the feature dim fi, and their element count. */
static int32_t other_dims(const optic_shape *xs, int64_t fi, int64_t *dims, int64_t *count) {
  int32_t k = 0;
  *count = 1;
  for (int32_t d = 0; d < xs->rank; d++) {
    if (d != fi) dims[k++] = d, *count *= xs->dims[d];
  }
  return k;
}

/* v (of shape [C]) broadcast along feature dim fi of x's shape. */
static optic_status per_feature(ad_ctx *c, optic_node_id x, optic_node_id v, int64_t fi, optic_node_id *out) {
  optic_shape xs = ad_type(c, x)->shape;
  return optic_graph_broadcast(c->m, c->dst, v, &xs, &fi, 1, NULL, out);
}

/* What x receives through the batch statistics: gm / N + gv * 2 (x - mean) / N
 * per feature (the variance is biased). */
static optic_status stats_grad(ad_ctx *c, optic_node_id y, int64_t fi, optic_node_id mean, optic_node_id gm,
                               optic_node_id gv, optic_node_id *out) {
  optic_node_id x = optic_node_operand(c->m, y, 0), t, acc = OPTIC_NO_NODE;
  int64_t dims[OPTIC_MAX_RANK], n;
  optic_shape xs = ad_type(c, x)->shape;
  other_dims(&xs, fi, dims, &n);
  double inv = n > 0 ? 1.0 / (double)n : 0.0;
  if (gm != OPTIC_NO_NODE) {
    AD_TRY(per_feature(c, x, gm, fi, &t));
    AD_TRY(ad_scale(c, t, inv, &acc));
  }
  if (gv != OPTIC_NO_NODE) {
    optic_node_id mb, d;
    AD_TRY(per_feature(c, x, mean, fi, &mb));
    AD_TRY(ad_bin(c, OPTIC_OP_SUBTRACT, x, mb, &d));
    AD_TRY(per_feature(c, x, gv, fi, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, t, d, &t));
    AD_TRY(ad_scale(c, t, 2.0 * inv, &t));
    if (acc == OPTIC_NO_NODE) acc = t;
    else AD_TRY(ad_bin(c, OPTIC_OP_ADD, acc, t, &acc));
  }
  *out = acc;
  return OPTIC_OK;
}

optic_status ad_rule_batch_norm_training(ad_ctx *c, optic_node_id y, optic_node_id *gx, const char **why) {
  optic_node_id g3[3];
  gx[0] = gx[1] = gx[2] = OPTIC_NO_NODE;
  *why = NULL;
  bool any;
  AD_TRY(ad_tuple_adjoints(c, y, g3, &any));
  if (!any) return OPTIC_OK;
  optic_node_id gy = g3[0], gm = g3[1], gv = g3[2];
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_node_id mean, var, r, xs[5], sg = OPTIC_NO_NODE;
  AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, y, 1, NULL, &mean));
  AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, y, 2, NULL, &var));
  optic_node_id x = optic_node_operand(c->m, y, 0);
  if (ad_wants(c, x)) AD_TRY(stats_grad(c, y, a.batch_norm.feature_index, mean, gm, gv, &sg));
  if (gy == OPTIC_NO_NODE) {
    gx[0] = ad_wants(c, x) ? sg : OPTIC_NO_NODE;
    return OPTIC_OK;
  }
  xs[0] = x, xs[1] = optic_node_operand(c->m, y, 1);
  xs[2] = mean, xs[3] = var, xs[4] = gy;
  AD_TRY(optic_graph_batch_norm(c->m, c->dst, OPTIC_OP_BATCH_NORM_GRAD, xs, 5, a.batch_norm.epsilon,
                                a.batch_norm.feature_index, NULL, &r));
  for (int32_t i = 0; i < 3; i++) {
    if (ad_wants(c, optic_node_operand(c->m, y, i)))
      AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, r, i, NULL, &gx[i]));
  }
  if (gx[0] != OPTIC_NO_NODE && sg != OPTIC_NO_NODE) AD_TRY(ad_bin(c, OPTIC_OP_ADD, gx[0], sg, &gx[0]));
  return OPTIC_OK;
}

/* x's gradient g * scale * r, and the per-feature sums the other
 * operands take. */
optic_status ad_rule_batch_norm_inference(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  int64_t fi = a.batch_norm.feature_index, dims[OPTIC_MAX_RANK], n;
  optic_node_id x = optic_node_operand(c->m, y, 0), scale = optic_node_operand(c->m, y, 1);
  optic_node_id mean = optic_node_operand(c->m, y, 3), var = optic_node_operand(c->m, y, 4);
  optic_shape xs = ad_type(c, x)->shape;
  int32_t k = other_dims(&xs, fi, dims, &n);
  optic_node_id eps, r, sr, srb, mb, d, t, gs;
  AD_TRY(ad_const(c, (double)a.batch_norm.epsilon, ad_type(c, var)->dtype, &ad_type(c, var)->shape, &eps));
  AD_TRY(ad_bin(c, OPTIC_OP_ADD, var, eps, &r));
  AD_TRY(ad_un(c, OPTIC_OP_RSQRT, r, &r));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, scale, r, &sr));
  AD_TRY(per_feature(c, x, sr, fi, &srb));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, srb, &t)); /* g * scale * r */
  if (ad_wants(c, x)) gx[0] = t;
  if (ad_wants(c, optic_node_operand(c->m, y, 2))) AD_TRY(ad_sum(c, g, dims, k, &gx[2]));
  if (ad_wants(c, mean)) {
    AD_TRY(ad_sum(c, t, dims, k, &gx[3]));
    AD_TRY(ad_un(c, OPTIC_OP_NEGATE, gx[3], &gx[3]));
  }
  if (!ad_wants(c, scale) && !ad_wants(c, var)) return OPTIC_OK;
  AD_TRY(per_feature(c, x, mean, fi, &mb));
  AD_TRY(ad_bin(c, OPTIC_OP_SUBTRACT, x, mb, &d));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, d, &d));
  AD_TRY(ad_sum(c, d, dims, k, &gs)); /* sum of g * (x - mean) per feature */
  if (ad_wants(c, scale)) AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, gs, r, &gx[1]));
  if (ad_wants(c, var)) { /* d r / d var = -r^3 / 2 */
    optic_node_id r3;
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, r, r, &r3));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, r3, sr, &r3));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, gs, r3, &t));
    AD_TRY(ad_scale(c, t, -0.5, &gx[4]));
  }
  return OPTIC_OK;
}
