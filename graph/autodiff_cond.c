/* Autodiff rule of conditional: JAX's rule, a conditional of the
 * transposed branches. The backward conditional has the forward's
 * selector; its branch j takes (operand j, the result's cotangent),
 * recomputes branch j's forward on its operand and returns the
 * vector-Jacobian product (graph/autodiff.c ad_vjp_into). Its result has
 * one slot per distinct differentiated operand: branch j fills its own
 * operand's slot and zeros the others (the branch did not read them). */
#include <stdio.h>
#include <stdlib.h>

#include "graph/autodiff_internal.h"

typedef struct cond_slots {
  int32_t n;             /* distinct differentiated operands */
  optic_node_id *node;   /* per slot: the operand */
  int32_t *of;           /* per branch: its operand's slot, or -1 */
  optic_node_id *branch; /* per branch: its backward operand (operand, cotangent) */
  optic_comp_id *vjp;    /* per branch: its backward computation */
} cond_slots;

static void slots_free(cond_slots *s) {
  free(s->node);
  free(s->of);
  free(s->branch);
  free(s->vjp);
}

static optic_status slots_init(ad_ctx *c, optic_node_id y, int32_t nb, cond_slots *s) {
  s->n = 0;
  s->node = malloc((size_t)nb * sizeof *s->node);
  s->of = malloc((size_t)nb * sizeof *s->of);
  s->branch = malloc((size_t)nb * sizeof *s->branch);
  s->vjp = malloc((size_t)nb * sizeof *s->vjp);
  if (!s->node || !s->of || !s->branch || !s->vjp)
    return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  for (int32_t j = 0; j < nb; j++) {
    optic_node_id x = optic_node_operand(c->m, y, j + 1);
    s->of[j] = -1;
    if (!ad_wants(c, x)) continue;
    for (int32_t k = 0; k < s->n && s->of[j] < 0; k++) {
      if (s->node[k] == x) s->of[j] = k;
    }
    if (s->of[j] < 0) s->node[s->of[j] = s->n++] = x;
  }
  return OPTIC_OK;
}

/* Branch j's backward computation: parameter (operand j, cotangent),
 * result the slots' tuple. */
static optic_status branch_vjp(ad_ctx *c, optic_node_id y, int32_t j, cond_slots *s) {
  optic_module_t *m = c->m;
  optic_comp_id src = optic_node_called(m, y, j), bw;
  char name[320];
  snprintf(name, sizeof name, "%.200s.vjp", optic_computation_name(m, src));
  AD_TRY(ad_new_comp(m, name, &bw));
  optic_type el[2] = {*optic_node_type(m, optic_node_operand(m, y, j + 1)), *optic_node_type(m, y)};
  optic_type qt = {.dtype = OPTIC_DTYPE_INVALID, .tuple_size = 2, .elements = el};
  optic_node_id q, ct, *xs = malloc((size_t)s->n * sizeof *xs), r;
  if (xs == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
  optic_status st = optic_graph_parameter(m, bw, 0, &qt, NULL, &q);
  if (st == OPTIC_OK) st = ad_vjp_into(m, bw, src, q, &ct);
  for (int32_t k = 0; k < s->n && st == OPTIC_OK; k++) {
    if (k == s->of[j]) xs[k] = ct;
    else st = ad_zeros_of_type(m, bw, *optic_node_type(m, s->node[k]), &xs[k]);
  }
  if (st == OPTIC_OK) st = optic_graph_tuple(m, bw, xs, s->n, NULL, &r);
  if (st == OPTIC_OK) st = optic_computation_set_root(m, bw, r);
  free(xs);
  s->vjp[j] = bw;
  return st;
}

/* ct: the result's whole cotangent (of y's type). */
static optic_status cond_rule(ad_ctx *c, optic_node_id y, optic_node_id ct, optic_node_id *gx) {
  int32_t nb = optic_node_called_count(c->m, y);
  cond_slots s = {0};
  optic_status st = slots_init(c, y, nb, &s);
  optic_node_id bw = OPTIC_NO_NODE;
  for (int32_t j = 0; j < nb && st == OPTIC_OK && s.n > 0; j++) {
    optic_node_id pair[2] = {optic_node_operand(c->m, y, j + 1), ct};
    st = optic_graph_tuple(c->m, c->dst, pair, 2, NULL, &s.branch[j]);
    if (st == OPTIC_OK) st = branch_vjp(c, y, j, &s);
  }
  if (st == OPTIC_OK && s.n > 0) {
    st = optic_graph_conditional(c->m, c->dst, optic_node_operand(c->m, y, 0), s.branch, s.vjp, nb, NULL, &bw);
  }
  for (int32_t k = 0; k < s.n && st == OPTIC_OK; k++) {
    int32_t j = 0;
    while (s.of[j] != k) j++; /* the first branch of that operand */
    st = optic_graph_get_tuple_element(c->m, c->dst, bw, k, NULL, &gx[j + 1]);
  }
  slots_free(&s);
  return st;
}

optic_status ad_rule_conditional(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  return cond_rule(c, y, g, gx);
}

optic_status ad_rule_conditional_tuple(ad_ctx *c, optic_node_id y, const optic_node_id *gy, optic_node_id *gx) {
  optic_node_id ct;
  AD_TRY(ad_tuple_fill(c, y, gy, &ct));
  return cond_rule(c, y, ct, gx);
}
