/* Autodiff rule of gather: the gradient scatters g (adding) into zeros of
 * the operand's shape at the same starts. gather clamps each start so the
 * slice lies inside the operand while scatter skips windows that do not, so
 * the rule clamps the indices itself first, exactly as gather does; then
 * every window lies inside and the two agree. Batching dims are refused. */
#include "graph/autodiff_internal.h"

const char *ad_gather_unsupported(const optic_module_t *m, optic_node_id y) {
  optic_node_attrs_t a;
  ad_attrs(m, y, &a);
  if (a.gather.n_batching > 0) return "gather with batching dims has no rule";
  optic_dtype it = optic_node_type(m, optic_node_operand(m, y, 1))->dtype;
  if (optic_dtype_is_float(it) || it == OPTIC_PRED) return "indices must be integers";
  return NULL;
}

/* The indices clamped to [0, operand dim - slice size] per start entry. */
static optic_status clamp_indices(ad_ctx *c, const optic_gather_dims *d, optic_node_id x, optic_node_id idx,
                                  optic_node_id *out) {
  optic_type itv = *ad_type(c, idx); /* copies: the builders below may move the module's records */
  const optic_type *it = &itv;
  optic_shape xsv = ad_type(c, x)->shape;
  const optic_shape *xs = &xsv;
  int64_t hi[OPTIC_MAX_RANK];
  for (int32_t k = 0; k < d->n_start_index_map; k++) {
    int64_t dim = d->start_index_map[k];
    hi[k] = xs->dims[dim] - d->slice_sizes[dim];
  }
  optic_shape vs = {.rank = 1, .dims = {d->n_start_index_map}}, sc = {.rank = 0};
  optic_node_id h, lo;
  bool vector = d->index_vector_dim < it->shape.rank;
  AD_TRY(optic_graph_constant(c->m, c->dst, OPTIC_S64, vector ? &vs : &sc, hi,
                              sizeof(int64_t) * (size_t)(vector ? d->n_start_index_map : 1), NULL, &h));
  AD_TRY(optic_graph_constant(c->m, c->dst, OPTIC_S64, &sc, &(int64_t){0}, sizeof(int64_t), NULL, &lo));
  if (it->dtype != OPTIC_S64) {
    AD_TRY(optic_graph_convert(c->m, c->dst, h, it->dtype, NULL, &h));
    AD_TRY(optic_graph_convert(c->m, c->dst, lo, it->dtype, NULL, &lo));
  }
  if (vector) {
    int64_t dim = d->index_vector_dim;
    AD_TRY(optic_graph_broadcast(c->m, c->dst, h, &it->shape, &dim, 1, NULL, &h));
  }
  return optic_graph_clamp(c->m, c->dst, lo, idx, h, NULL, out);
}

optic_status ad_rule_gather(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), idx = optic_node_operand(c->m, y, 1), z, ci;
  gx[0] = gx[1] = OPTIC_NO_NODE;
  if (!ad_wants(c, x)) return OPTIC_OK;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const optic_gather_dims *d = &a.gather;
  optic_scatter_dims s = {.n_update_window_dims = d->n_offset_dims, .n_inserted = d->n_collapsed,
                          .n_scatter_dims_to_operand_dims = d->n_start_index_map, .index_vector_dim = d->index_vector_dim};
  for (int32_t i = 0; i < d->n_offset_dims; i++) s.update_window_dims[i] = d->offset_dims[i];
  for (int32_t i = 0; i < d->n_collapsed; i++) s.inserted_window_dims[i] = d->collapsed_slice_dims[i];
  for (int32_t i = 0; i < d->n_start_index_map; i++) s.scatter_dims_to_operand_dims[i] = d->start_index_map[i];
  optic_status st = OPTIC_OK;
  optic_comp_id add = ad_add_computation(c, ad_type(c, g)->dtype, &st);
  if (st != OPTIC_OK) return st;
  AD_TRY(clamp_indices(c, d, x, idx, &ci));
  AD_TRY(ad_zeros_like(c, x, &z));
  return optic_graph_scatter(c->m, c->dst, z, ci, g, &s, add, NULL, &gx[0]);
}
