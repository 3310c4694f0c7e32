/* Autodiff rules of sort and topk: both move elements, so the adjoint of
 * a result element goes back to the element it came from. A sort's copy
 * also sorts an s32 iota (graph/autodiff.c), whose sorted values are the
 * permutation; sorting (permutation, adjoints) by the permutation puts
 * every adjoint back in its source position. topk's values' adjoint is
 * scatter-added into zeros at the positions its indices output names (JAX's
 * rule); its indices carry no gradient. Ties: optic's sort is stable and
 * topk takes the lower index first, and the gradient follows the same
 * choice (the element the forward moved there). */
#include <stdio.h>
#include <stdlib.h>

#include "graph/autodiff_internal.h"

/* The operand of sort s that is an integer iota along its dimension, or -1. */
static int32_t iota_operand(const optic_module_t *m, optic_node_id s, const optic_node_id *ops) {
  optic_node_attrs_t a;
  ad_attrs(m, s, &a);
  for (int32_t i = 0; i < optic_node_operand_count(m, s); i++) {
    optic_node_id x = ops ? ops[i] : optic_node_operand(m, s, i);
    if (optic_node_opcode(m, x) != OPTIC_OP_IOTA) continue;
    optic_dtype dt = optic_node_type(m, x)->dtype;
    optic_node_attrs_t ia;
    ad_attrs(m, x, &ia);
    if ((dt == OPTIC_S32 || dt == OPTIC_S64) && ia.iota.dimension == a.sort.dimension) return i;
  }
  return -1;
}

bool ad_sort_needs_iota(const optic_module_t *m, optic_node_id sort, const optic_node_id *operands) {
  bool any_float = false;
  for (int32_t i = 0; i < optic_node_operand_count(m, sort); i++) {
    any_float = any_float || optic_dtype_is_float(optic_node_type(m, operands[i])->dtype);
  }
  return any_float && iota_operand(m, sort, operands) < 0;
}

/* The comparator "lhs before rhs" of operand 0 (dtype key) with the n
 * values of dtypes dts carried along. */
static optic_status key_less(ad_ctx *c, optic_dtype key, const optic_dtype *dts, int32_t n, optic_comp_id *out) {
  AD_TRY(ad_new_comp(c->m, "autodiff.unsort", out));
  optic_shape sc = {.rank = 0};
  optic_node_id p[2], r;
  for (int32_t i = 0; i < 2 * (n + 1); i++) {
    optic_type t = optic_type_array(i < 2 ? key : dts[i / 2 - 1], &sc);
    AD_TRY(optic_graph_parameter(c->m, *out, i, &t, NULL, i < 2 ? &p[i] : &r));
  }
  AD_TRY(optic_graph_compare(c->m, *out, OPTIC_CMP_LT, p[0], p[1], NULL, &r));
  return optic_computation_set_root(c->m, *out, r);
}

/* gx[i] for the operands i listed in take (n of them): the adjoints gy[i]
 * put back through permutation perm along dim (one sort by perm). */
static optic_status unsort(ad_ctx *c, optic_node_id perm, int64_t dim, const int32_t *take, int32_t n,
                           const optic_node_id *gy, optic_node_id *gx) {
  optic_node_id *xs = malloc((size_t)(n + 1) * sizeof *xs), r;
  optic_dtype *dts = malloc((size_t)(n + 1) * sizeof *dts);
  optic_status st = xs && dts ? OPTIC_OK : optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  optic_comp_id less = -1;
  if (st == OPTIC_OK) {
    xs[0] = perm;
    for (int32_t j = 0; j < n; j++) xs[j + 1] = gy[take[j]], dts[j] = ad_type(c, gy[take[j]])->dtype;
    st = key_less(c, ad_type(c, perm)->dtype, dts, n, &less);
  }
  if (st == OPTIC_OK) st = optic_graph_sort(c->m, c->dst, xs, n + 1, dim, true, less, NULL, &r);
  for (int32_t j = 0; j < n && st == OPTIC_OK; j++) {
    st = optic_graph_get_tuple_element(c->m, c->dst, r, j + 1, NULL, &gx[take[j]]);
  }
  free(xs);
  free(dts);
  return st;
}

optic_status ad_rule_sort(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx) {
  int32_t n = optic_node_operand_count(c->m, y), k = iota_operand(c->m, y, NULL), nt = 0;
  if (k < 0) { /* cannot happen: a differentiated sort's copy has one */
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "autodiff: cannot differentiate sort '%s': no permutation operand",
                      optic_node_name(c->m, y));
  }
  int32_t *take = malloc((size_t)n * sizeof *take);
  if (take == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t i = 0; i < n; i++) {
    if (gy[i] != OPTIC_NO_NODE && ad_wants(c, optic_node_operand(c->m, y, i))) take[nt++] = i;
  }
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_node_id perm;
  optic_status st = OPTIC_OK;
  if (nt > 0) st = optic_graph_get_tuple_element(c->m, c->dst, y, k, NULL, &perm);
  if (nt > 0 && st == OPTIC_OK) st = unsort(c, perm, a.sort.dimension, take, nt, gy, gx);
  free(take);
  return st;
}

/* topk's indices [b..., k] as full scatter indices [b..., k, r] of the
 * operand's r dims (iotas for the batch dims), or themselves for r = 1. */
static optic_status full_indices(ad_ctx *c, optic_node_id idx, int32_t r, optic_node_id *out) {
  if (r == 1) {
    *out = idx;
    return OPTIC_OK;
  }
  optic_shape s = ad_type(c, idx)->shape;
  s.dims[s.rank++] = 1;
  optic_node_id parts[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < r - 1; d++) AD_TRY(optic_graph_iota(c->m, c->dst, OPTIC_S32, &s, d, NULL, &parts[d]));
  AD_TRY(optic_graph_reshape(c->m, c->dst, idx, &s, NULL, &parts[r - 1]));
  return optic_graph_concatenate(c->m, c->dst, parts, r, r, NULL, out);
}

optic_status ad_rule_topk(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), idx, full, z;
  if (!ad_wants(c, x) || gy[0] == OPTIC_NO_NODE) return OPTIC_OK;
  int32_t r = ad_type(c, x)->shape.rank;
  optic_scatter_dims s = {.n_inserted = r, .n_scatter_dims_to_operand_dims = r, .index_vector_dim = r};
  for (int32_t d = 0; d < r; d++) s.inserted_window_dims[d] = s.scatter_dims_to_operand_dims[d] = d;
  optic_status st = OPTIC_OK;
  optic_comp_id add = ad_add_computation(c, ad_type(c, x)->dtype, &st);
  if (st != OPTIC_OK) return st;
  AD_TRY(optic_graph_get_tuple_element(c->m, c->dst, y, 1, NULL, &idx));
  AD_TRY(full_indices(c, idx, r, &full));
  AD_TRY(ad_zeros_like(c, x, &z));
  return optic_graph_scatter(c->m, c->dst, z, full, gy[0], &s, add, NULL, &gx[0]);
}
