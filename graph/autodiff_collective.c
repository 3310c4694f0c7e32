/* Autodiff rules of the collectives, JAX's transposes (psum's is psum,
 * all_gather's is psum_scatter and back, ppermute's is ppermute with the
 * pairs inverted): each cotangent takes the transposed collective over
 * the same replica groups. In the single-replica programs optic's
 * evaluator and runtime run they are identities, as the forward ones are;
 * the pod layer runs the real ones. Sums only: an all-reduce or
 * reduce-scatter with another combiner is refused. */
#include <stdlib.h>

#include "graph/autodiff_internal.h"

static bool sums(const ad_ctx *c, optic_node_id y) {
  return ad_combiner_op(c->m, optic_node_called(c->m, y, 0)) == OPTIC_OP_ADD;
}

const char *ad_collective_unsupported(const ad_ctx *c, optic_node_id y) {
  optic_opcode op = optic_node_opcode(c->m, y);
  if ((op == OPTIC_OP_ALL_REDUCE || op == OPTIC_OP_REDUCE_SCATTER) && !sums(c, y)) {
    return "only the sum (add combiner) has a rule";
  }
  return NULL;
}

/* all-reduce of the n cotangents gs over y's groups; out[i] each. */
static optic_status all_reduce_back(ad_ctx *c, optic_node_id y, optic_node_id *gs, int32_t n, optic_node_id *out) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const optic_attrs_all_reduce *r = &a.all_reduce;
  int32_t *ids = malloc((size_t)(r->n_replica_ids + 1) * sizeof *ids),
          *sizes = malloc((size_t)(r->n_groups + 1) * sizeof *sizes);
  optic_status st = ids && sizes ? OPTIC_OK : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; st == OPTIC_OK && i < r->n_replica_ids; i++) ids[i] = (int32_t)r->replica_ids[i];
  for (int32_t i = 0; st == OPTIC_OK && i < r->n_groups; i++) sizes[i] = (int32_t)r->group_sizes[i];
  optic_comp_id add = -1;
  if (st == OPTIC_OK) add = ad_add_computation(c, ad_type(c, gs[0])->dtype, &st);
  optic_node_id t = OPTIC_NO_NODE;
  if (st == OPTIC_OK) {
    st = optic_graph_all_reduce(c->m, c->dst, gs, n, add, r->n_groups ? ids : NULL, r->n_groups ? sizes : NULL,
                                r->n_groups, NULL, &t);
  }
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    out[i] = t;
    if (n > 1) st = optic_graph_get_tuple_element(c->m, c->dst, t, i, NULL, &out[i]);
  }
  free(ids);
  free(sizes);
  return st;
}

optic_status ad_rule_collective(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_node_id x = optic_node_operand(c->m, y, 0);
  if (!ad_wants(c, x)) return OPTIC_OK;
  optic_status st = OPTIC_OK;
  switch (optic_node_opcode(c->m, y)) {
    case OPTIC_OP_ALL_REDUCE: return all_reduce_back(c, y, &g, 1, &gx[0]);
    case OPTIC_OP_ALL_GATHER: {
      optic_comp_id add = ad_add_computation(c, ad_type(c, g)->dtype, &st);
      if (st != OPTIC_OK) return st;
      return optic_graph_reduce_scatter(c->m, c->dst, g, a.all_gather.dimension, a.all_gather.shard_count, add, NULL,
                                        &gx[0]);
    }
    case OPTIC_OP_REDUCE_SCATTER:
      return optic_graph_all_gather(c->m, c->dst, g, a.reduce_scatter.dimension, a.reduce_scatter.shard_count, NULL,
                                    &gx[0]);
    default: { /* collective-permute: the pairs inverted */
      int32_t n = a.collective_permute.n_pairs;
      int64_t *inv = malloc((size_t)(2 * n + 1) * sizeof *inv);
      if (inv == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
      for (int32_t i = 0; i < n; i++) {
        inv[2 * i] = a.collective_permute.pairs[2 * i + 1], inv[2 * i + 1] = a.collective_permute.pairs[2 * i];
      }
      st = optic_graph_collective_permute(c->m, c->dst, g, inv, n, NULL, &gx[0]);
      free(inv);
      return st;
    }
  }
}

optic_status ad_rule_all_reduce_tuple(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx) {
  int32_t n = optic_node_operand_count(c->m, y);
  optic_node_id *gs = malloc((size_t)n * sizeof *gs);
  if (gs == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  optic_status st = OPTIC_OK;
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    gs[i] = gy[i];
    if (gs[i] == OPTIC_NO_NODE) st = ad_zeros_like(c, optic_node_operand(c->m, y, i), &gs[i]);
  }
  if (st == OPTIC_OK) st = all_reduce_back(c, y, gs, n, gx);
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    if (!ad_wants(c, optic_node_operand(c->m, y, i))) gx[i] = OPTIC_NO_NODE;
  }
  free(gs);
  return st;
}
