/* Autodiff rules of gather and scatter-add. gather's gradient scatters g
 * (adding) into zeros of the operand's shape at the same starts; gather
 * clamps each start so the slice lies inside the operand while scatter
 * skips windows that do not, so the rule clamps the indices itself first,
 * exactly as gather does; batching dims are first rewritten as collapsed
 * dims indexed by an iota. scatter-add's operand takes g; its updates take
 * g gathered at their windows, zero for windows scatter skipped (out of
 * bounds). */
#include "graph/autodiff_internal.h"

const char *ad_gather_unsupported(const optic_module_t *m, optic_node_id y) {
  optic_node_attrs_t a;
  ad_attrs(m, y, &a);
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

/* The gather that reads back the windows scatter s writes (x: its operand,
 * u: its updates). */
optic_gather_dims ad_gather_of_scatter(const ad_ctx *c, const optic_scatter_dims *s, optic_node_id x, optic_node_id u) {
  optic_gather_dims d = {.n_offset_dims = s->n_update_window_dims,
                         .n_collapsed = s->n_inserted,
                         .n_start_index_map = s->n_scatter_dims_to_operand_dims,
                         .index_vector_dim = s->index_vector_dim};
  for (int32_t i = 0; i < s->n_update_window_dims; i++) d.offset_dims[i] = s->update_window_dims[i];
  for (int32_t i = 0; i < s->n_inserted; i++) d.collapsed_slice_dims[i] = s->inserted_window_dims[i];
  for (int32_t i = 0; i < d.n_start_index_map; i++) d.start_index_map[i] = s->scatter_dims_to_operand_dims[i];
  const optic_shape *us = &ad_type(c, u)->shape;
  for (int32_t dim = 0, w = 0; dim < ad_type(c, x)->shape.rank; dim++) {
    bool inserted = false;
    for (int32_t i = 0; i < s->n_inserted; i++) inserted = inserted || s->inserted_window_dims[i] == dim;
    d.slice_sizes[dim] = inserted ? 1 : us->dims[s->update_window_dims[w++]];
  }
  return d;
}

/* pred per update window: its start lies where scatter writes it. */
optic_status ad_scatter_in_bounds(ad_ctx *c, const optic_gather_dims *d, optic_node_id x, optic_node_id idx,
                                  optic_node_id u, const optic_scatter_dims *s, optic_node_id *out) {
  optic_node_id cl, eq, ok;
  AD_TRY(clamp_indices(c, d, x, idx, &cl));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, cl, idx, &eq));
  optic_shape is = ad_type(c, idx)->shape, us = ad_type(c, u)->shape;
  if (d->index_vector_dim < is.rank) { /* every entry of the index vector */
    optic_dtype dt = ad_type(c, u)->dtype;
    optic_node_id n;
    AD_TRY(optic_graph_convert(c->m, c->dst, eq, dt, NULL, &ok));
    AD_TRY(ad_sum(c, ok, &d->index_vector_dim, 1, &ok));
    AD_TRY(ad_const(c, (double)d->n_start_index_map, dt, &ad_type(c, ok)->shape, &n));
    AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, ok, n, &eq));
  }
  int64_t dims[OPTIC_MAX_RANK];
  int32_t k = 0;
  for (int32_t dim = 0; dim < us.rank; dim++) {
    bool window = false;
    for (int32_t i = 0; i < s->n_update_window_dims; i++) window = window || s->update_window_dims[i] == dim;
    if (!window) dims[k++] = dim;
  }
  return ad_bcast(c, eq, &us, dims, k, out);
}

const char *ad_scatter_unsupported(const optic_module_t *m, optic_node_id y) {
  if (ad_scatter_combiner(m, y) == OPTIC_OP_PARAMETER) {
    return "only the add, multiply, maximum, minimum and replace (returns the update) combiners have rules";
  }
  optic_dtype it = optic_node_type(m, optic_node_operand(m, y, 1))->dtype;
  if (optic_dtype_is_float(it) || it == OPTIC_PRED) return "indices must be integers";
  return NULL;
}

optic_status ad_rule_scatter(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), idx = optic_node_operand(c->m, y, 1),
                u = optic_node_operand(c->m, y, 2), t, ok;
  gx[0] = gx[1] = gx[2] = OPTIC_NO_NODE;
  if (ad_scatter_combiner(c->m, y) != OPTIC_OP_ADD) return ad_rule_scatter_other(c, y, g, gx);
  if (ad_wants(c, x)) gx[0] = g;
  if (!ad_wants(c, u)) return OPTIC_OK;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_scatter_dims s = a.scatter;
  optic_gather_dims d = ad_gather_of_scatter(c, &s, x, u);
  AD_TRY(optic_graph_gather(c->m, c->dst, g, idx, &d, NULL, &t));
  AD_TRY(ad_scatter_in_bounds(c, &d, x, idx, u, &s, &ok));
  return ad_mask(c, ok, t, &gx[2]);
}

/* The gather without batching dims that reads what gather (d, idx) reads
 * (XLA's batching dims expander does the same): each operand batching dim
 * becomes a collapsed, start-mapped dim whose index entry is an iota along
 * its paired indices dim. */
static optic_status unbatch(ad_ctx *c, optic_gather_dims *d, optic_node_id *idx) {
  optic_shape s = ad_type(c, *idx)->shape;
  optic_dtype dt = ad_type(c, *idx)->dtype;
  if (d->index_vector_dim == s.rank) { /* the index vector made explicit */
    s.dims[s.rank++] = 1;
    AD_TRY(optic_graph_reshape(c->m, c->dst, *idx, &s, NULL, idx));
  }
  optic_node_id parts[OPTIC_MAX_RANK + 1];
  int32_t n = 0;
  parts[n++] = *idx;
  s.dims[d->index_vector_dim] = 1;
  for (int32_t b = 0; b < d->n_batching; b++) {
    AD_TRY(optic_graph_iota(c->m, c->dst, dt, &s, d->start_indices_batching_dims[b], NULL, &parts[n++]));
    d->start_index_map[d->n_start_index_map++] = d->operand_batching_dims[b];
    int32_t k = d->n_collapsed++; /* kept sorted */
    while (k > 0 && d->collapsed_slice_dims[k - 1] > d->operand_batching_dims[b]) {
      d->collapsed_slice_dims[k] = d->collapsed_slice_dims[k - 1], k--;
    }
    d->collapsed_slice_dims[k] = d->operand_batching_dims[b];
  }
  d->n_batching = 0;
  return optic_graph_concatenate(c->m, c->dst, parts, n, d->index_vector_dim, NULL, idx);
}

optic_status ad_rule_gather(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), idx = optic_node_operand(c->m, y, 1), z, ci;
  gx[0] = gx[1] = OPTIC_NO_NODE;
  if (!ad_wants(c, x)) return OPTIC_OK;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  if (a.gather.n_batching > 0) AD_TRY(unbatch(c, &a.gather, &idx));
  const optic_gather_dims *d = &a.gather;
  optic_scatter_dims s = {.n_update_window_dims = d->n_offset_dims,
                          .n_inserted = d->n_collapsed,
                          .n_scatter_dims_to_operand_dims = d->n_start_index_map,
                          .index_vector_dim = d->index_vector_dim};
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
