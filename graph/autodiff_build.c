/* Small builders shared by the autodiff rules: constants of any float
 * dtype, elementwise helpers, sums and broadcasts (graph/autodiff_internal.h). */
#include <stdio.h>
#include <string.h>

#include "graph/autodiff_internal.h"

bool ad_wants(const ad_ctx *c, optic_node_id x) { return x >= 0 && x < c->n_fwd && c->needs[x]; }

void ad_attrs(const optic_module_t *m, optic_node_id y, optic_node_attrs_t *out) {
  if (optic_node_attrs(m, y, out) != OPTIC_OK) memset(out, 0, sizeof *out); /* y is always a live copy */
}

const optic_type *ad_type(const ad_ctx *c, optic_node_id x) { return optic_node_type(c->m, x); }

optic_status ad_const(ad_ctx *c, double v, optic_dtype dt, const optic_shape *shape_in, optic_node_id *out) {
  optic_shape scalar = {.rank = 0}, copy = shape_in ? *shape_in : scalar; /* shape_in may point into the module */
  const optic_shape *shape = &copy;
  optic_node_id k;
  if (dt == OPTIC_F64) {
    AD_TRY(optic_graph_constant(c->m, c->dst, OPTIC_F64, &scalar, &v, sizeof v, NULL, &k));
  } else {
    float f = (float)v;
    AD_TRY(optic_graph_constant(c->m, c->dst, OPTIC_F32, &scalar, &f, sizeof f, NULL, &k));
    if (dt != OPTIC_F32) AD_TRY(optic_graph_convert(c->m, c->dst, k, dt, NULL, &k));
  }
  if (shape == NULL || shape->rank == 0) {
    *out = k;
    return OPTIC_OK;
  }
  return optic_graph_broadcast(c->m, c->dst, k, shape, NULL, 0, NULL, out);
}

optic_status ad_zeros_like(ad_ctx *c, optic_node_id x, optic_node_id *out) {
  const optic_type *t = ad_type(c, x);
  if (optic_type_is_tuple(t)) return ad_zeros_of_type(c->m, c->dst, *t, out);
  return ad_const(c, 0.0, t->dtype, &t->shape, out);
}

optic_status ad_new_comp(optic_module_t *m, const char *base, optic_comp_id *out) {
  optic_status st = optic_module_add_computation(m, base, out);
  for (int i = 1; i < 100000 && st == OPTIC_ERR_INVALID_ARGUMENT; i++) {
    char alt[340];
    snprintf(alt, sizeof alt, "%.300s.%d", base, i);
    st = optic_module_add_computation(m, alt, out);
  }
  return st;
}

optic_status ad_un(ad_ctx *c, optic_opcode op, optic_node_id x, optic_node_id *out) {
  return optic_graph_unary(c->m, c->dst, op, x, NULL, out);
}

optic_status ad_bin(ad_ctx *c, optic_opcode op, optic_node_id a, optic_node_id b, optic_node_id *out) {
  return optic_graph_binary(c->m, c->dst, op, a, b, NULL, out);
}

optic_status ad_scale(ad_ctx *c, optic_node_id x, double v, optic_node_id *out) {
  const optic_type *t = ad_type(c, x);
  optic_node_id k;
  AD_TRY(ad_const(c, v, t->dtype, &t->shape, &k));
  return ad_bin(c, OPTIC_OP_MULTIPLY, x, k, out);
}

optic_status ad_cmp(ad_ctx *c, optic_compare_dir dir, optic_node_id a, optic_node_id b, optic_node_id *out) {
  return optic_graph_compare(c->m, c->dst, dir, a, b, NULL, out);
}

optic_status ad_mask(ad_ctx *c, optic_node_id p, optic_node_id g, optic_node_id *out) {
  optic_node_id z;
  AD_TRY(ad_zeros_like(c, g, &z));
  return optic_graph_select(c->m, c->dst, p, g, z, NULL, out);
}

optic_comp_id ad_add_computation(ad_ctx *c, optic_dtype dt, optic_status *st) {
  if (c->add_comp[dt] >= 0) return c->add_comp[dt];
  char name[64];
  optic_comp_id k = -1;
  *st = OPTIC_ERR_INVALID_ARGUMENT;
  for (int i = 0; i < 1000 && *st != OPTIC_OK; i++) {
    snprintf(name, sizeof name, i ? "autodiff.add.%s.%d" : "autodiff.add.%s", optic_dtype_name(dt), i);
    *st = optic_module_add_computation(c->m, name, &k);
    if (*st == OPTIC_ERR_OUT_OF_MEMORY) return -1;
  }
  if (*st != OPTIC_OK) return -1;
  optic_shape s = {.rank = 0};
  optic_type t = optic_type_array(dt, &s);
  optic_node_id a, b, r;
  if ((*st = optic_graph_parameter(c->m, k, 0, &t, NULL, &a)) != OPTIC_OK) return -1;
  if ((*st = optic_graph_parameter(c->m, k, 1, &t, NULL, &b)) != OPTIC_OK) return -1;
  if ((*st = optic_graph_binary(c->m, k, OPTIC_OP_ADD, a, b, NULL, &r)) != OPTIC_OK) return -1;
  if ((*st = optic_computation_set_root(c->m, k, r)) != OPTIC_OK) return -1;
  c->add_comp[dt] = k;
  return k;
}

optic_status ad_sum(ad_ctx *c, optic_node_id x, const int64_t *dims, int32_t n, optic_node_id *out) {
  if (n == 0) {
    *out = x;
    return OPTIC_OK;
  }
  optic_dtype dt = ad_type(c, x)->dtype;
  optic_status st = OPTIC_OK;
  optic_comp_id add = ad_add_computation(c, dt, &st);
  if (st != OPTIC_OK) return st;
  optic_node_id zero;
  AD_TRY(ad_const(c, 0.0, dt, NULL, &zero));
  return optic_graph_reduce(c->m, c->dst, &x, &zero, 1, dims, n, add, NULL, out);
}

optic_status ad_sum_all(ad_ctx *c, optic_node_id x, optic_node_id *out) {
  int64_t dims[OPTIC_MAX_RANK];
  int32_t r = ad_type(c, x)->shape.rank;
  for (int32_t i = 0; i < r; i++) dims[i] = i;
  return ad_sum(c, x, dims, r, out);
}

optic_status ad_bcast(ad_ctx *c, optic_node_id x, const optic_shape *shape, const int64_t *dims, int32_t n,
                      optic_node_id *out) {
  if (ad_type(c, x)->shape.rank == shape->rank) {
    *out = x; /* nothing was reduced: the shapes agree */
    return OPTIC_OK;
  }
  return optic_graph_broadcast(c->m, c->dst, x, shape, dims, n, NULL, out);
}

optic_status ad_bcast_scalar(ad_ctx *c, optic_node_id x, const optic_shape *shape, optic_node_id *out) {
  if (shape->rank == 0) {
    *out = x;
    return OPTIC_OK;
  }
  return optic_graph_broadcast(c->m, c->dst, x, shape, NULL, 0, NULL, out);
}

optic_status ad_transpose(ad_ctx *c, optic_node_id x, const int64_t *perm, optic_node_id *out) {
  int32_t r = ad_type(c, x)->shape.rank;
  bool identity = true;
  for (int32_t i = 0; i < r; i++) identity = identity && perm[i] == i;
  if (identity) {
    *out = x;
    return OPTIC_OK;
  }
  return optic_graph_transpose(c->m, c->dst, x, perm, NULL, out);
}
