/* Autodiff rule of batch-norm-training: its result is the tuple (y, mean,
 * variance), read through get-tuple-element; the adjoint of y (summed over
 * its readers) goes through XLA's own batch-norm-grad with the batch's mean
 * and variance, which gives the gradients of x, scale and offset. A
 * gradient through the mean or variance outputs (used by a loss, not only
 * for running statistics) has no rule. */
#include "graph/autodiff_internal.h"

/* The adjoint of element `index` of tuple-valued y: the sum over y's
 * get-tuple-element readers of that index (OPTIC_NO_NODE if none flowed). */
static optic_status element_adjoint(ad_ctx *c, optic_node_id y, int64_t index, optic_node_id *out) {
  *out = OPTIC_NO_NODE;
  for (int32_t i = 0; i < optic_node_user_count(c->m, y); i++) {
    optic_node_id u = optic_node_user(c->m, y, i);
    if (u >= c->n_fwd || optic_node_opcode(c->m, u) != OPTIC_OP_GET_TUPLE_ELEMENT || c->adj[u] == OPTIC_NO_NODE)
      continue;
    optic_node_attrs_t a;
    ad_attrs(c->m, u, &a);
    if (a.get_tuple_element.index != index) continue;
    if (*out == OPTIC_NO_NODE) *out = c->adj[u];
    else AD_TRY(ad_bin(c, OPTIC_OP_ADD, *out, c->adj[u], out));
  }
  return OPTIC_OK;
}

optic_status ad_rule_batch_norm_training(ad_ctx *c, optic_node_id y, optic_node_id *gx, const char **why) {
  optic_node_id gy, gm, gv;
  gx[0] = gx[1] = gx[2] = OPTIC_NO_NODE;
  *why = NULL;
  AD_TRY(element_adjoint(c, y, 0, &gy));
  AD_TRY(element_adjoint(c, y, 1, &gm));
  AD_TRY(element_adjoint(c, y, 2, &gv));
  if (gm != OPTIC_NO_NODE || gv != OPTIC_NO_NODE) {
    *why = "a gradient through its mean or variance output has no rule";
    return OPTIC_OK;
  }
  if (gy == OPTIC_NO_NODE) return OPTIC_OK;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_node_id mean, var, r, xs[5];
  AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, y, 1, NULL, &mean));
  AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, y, 2, NULL, &var));
  xs[0] = optic_node_operand(c->m, y, 0), xs[1] = optic_node_operand(c->m, y, 1);
  xs[2] = mean, xs[3] = var, xs[4] = gy;
  AD_TRY(optic_graph_batch_norm(c->m, c->dst, OPTIC_OP_BATCH_NORM_GRAD, xs, 5, a.batch_norm.epsilon,
                                a.batch_norm.feature_index, NULL, &r));
  for (int32_t i = 0; i < 3; i++) {
    if (ad_wants(c, optic_node_operand(c->m, y, i)))
      AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, r, i, NULL, &gx[i]));
  }
  return OPTIC_OK;
}
