/* Adjoints of tuple-valued instructions (sort and topk results, a
 * conditional's tuple operand and result, a branch's tuple parameter):
 * the adjoint of element i is what its get-tuple-element readers received
 * plus element i of the tuple's own adjoint, when a rule gave it one
 * whole (a conditional's rule gives its tuple operand one). */
#include <stdlib.h>

#include "graph/autodiff_internal.h"

optic_status ad_zeros_of_type(optic_module_t *m, optic_comp_id comp, optic_type t, optic_node_id *out) {
  ad_ctx tmp = {.m = m, .dst = comp};
  if (!optic_type_is_tuple(&t)) return ad_const(&tmp, 0.0, t.dtype, &t.shape, out);
  optic_node_id small[8], *xs = small;
  if (t.tuple_size > 8 && (xs = malloc((size_t)t.tuple_size * sizeof *xs)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  }
  optic_status st = OPTIC_OK;
  for (int32_t i = 0; i < t.tuple_size && st == OPTIC_OK; i++) st = ad_zeros_of_type(m, comp, t.elements[i], &xs[i]);
  if (st == OPTIC_OK) st = optic_graph_tuple(m, comp, xs, t.tuple_size, NULL, out);
  if (xs != small) free(xs);
  return st;
}

optic_status ad_element(ad_ctx *c, optic_node_id t, int32_t i, optic_node_id *out) {
  if (optic_node_opcode(c->m, t) == OPTIC_OP_TUPLE) {
    *out = optic_node_operand(c->m, t, i);
    return OPTIC_OK;
  }
  return optic_graph_get_tuple_element(c->m, c->dst, t, i, NULL, out);
}

optic_status ad_add_any(ad_ctx *c, optic_node_id a, optic_node_id b, optic_node_id *out) {
  const optic_type *t = ad_type(c, a);
  if (!optic_type_is_tuple(t)) return ad_bin(c, OPTIC_OP_ADD, a, b, out);
  int32_t n = t->tuple_size;
  optic_node_id small[8], *xs = small;
  if (n > 8 && (xs = malloc((size_t)n * sizeof *xs)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  }
  optic_status st = OPTIC_OK;
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    optic_node_id ea, eb;
    st = ad_element(c, a, i, &ea);
    if (st == OPTIC_OK) st = ad_element(c, b, i, &eb);
    if (st == OPTIC_OK) st = ad_add_any(c, ea, eb, &xs[i]);
  }
  if (st == OPTIC_OK) st = optic_graph_tuple(c->m, c->dst, xs, n, NULL, out);
  if (xs != small) free(xs);
  return st;
}

static optic_status add_into(ad_ctx *c, optic_node_id *acc, optic_node_id g) {
  if (*acc == OPTIC_NO_NODE) {
    *acc = g;
    return OPTIC_OK;
  }
  return ad_add_any(c, *acc, g, acc);
}

optic_status ad_tuple_adjoints(ad_ctx *c, optic_node_id t, optic_node_id *gy, bool *any) {
  int32_t n = ad_type(c, t)->tuple_size;
  for (int32_t i = 0; i < n; i++) gy[i] = OPTIC_NO_NODE;
  for (int32_t k = 0; k < optic_node_user_count(c->m, t); k++) {
    optic_node_id u = optic_node_user(c->m, t, k);
    if (u >= c->n_fwd || optic_node_opcode(c->m, u) != OPTIC_OP_GET_TUPLE_ELEMENT || c->adj[u] == OPTIC_NO_NODE)
      continue;
    optic_node_attrs_t a;
    ad_attrs(c->m, u, &a);
    AD_TRY(add_into(c, &gy[a.get_tuple_element.index], c->adj[u]));
  }
  if (c->adj[t] != OPTIC_NO_NODE) {
    for (int32_t i = 0; i < n; i++) {
      optic_node_id e;
      AD_TRY(ad_element(c, c->adj[t], i, &e));
      AD_TRY(add_into(c, &gy[i], e));
    }
  }
  *any = false;
  for (int32_t i = 0; i < n; i++) *any = *any || gy[i] != OPTIC_NO_NODE;
  return OPTIC_OK;
}

optic_status ad_tuple_fill(ad_ctx *c, optic_node_id t, const optic_node_id *gy, optic_node_id *out) {
  int32_t n = ad_type(c, t)->tuple_size;
  optic_node_id small[8], *xs = small;
  if (n > 8 && (xs = malloc((size_t)n * sizeof *xs)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  }
  optic_status st = OPTIC_OK;
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    xs[i] = gy[i];
    if (xs[i] == OPTIC_NO_NODE) st = ad_zeros_of_type(c->m, c->dst, ad_type(c, t)->elements[i], &xs[i]);
  }
  if (st == OPTIC_OK) st = optic_graph_tuple(c->m, c->dst, xs, n, NULL, out);
  if (xs != small) free(xs);
  return st;
}

optic_status ad_full_cotangent(ad_ctx *c, optic_node_id x, optic_node_id *out) {
  const optic_type *t = ad_type(c, x);
  /* An array, or a tuple element of a tuple once the sweep has passed it:
   * it then holds its whole adjoint already. */
  if (!optic_type_is_tuple(t) || optic_node_opcode(c->m, x) == OPTIC_OP_GET_TUPLE_ELEMENT) {
    *out = x < c->n_fwd ? c->adj[x] : OPTIC_NO_NODE;
    return *out != OPTIC_NO_NODE ? OPTIC_OK : ad_zeros_like(c, x, out);
  }
  int32_t n = t->tuple_size;
  optic_node_id small[8], *gy = small;
  if (n > 8 && (gy = malloc((size_t)n * sizeof *gy)) == NULL) {
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  }
  bool any;
  optic_status st = ad_tuple_adjoints(c, x, gy, &any);
  if (st == OPTIC_OK) st = ad_tuple_fill(c, x, gy, out);
  if (gy != small) free(gy);
  return st;
}
