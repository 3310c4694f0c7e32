/* Autodiff rules of the contractions and reductions: dot (any dimension
 * numbers) and reduce (add, multiply, maximum, minimum) (docs/autodiff.md). */
#include "graph/autodiff_internal.h"

/* Dims of an operand of rank r in neither a nor b, increasing. */
static int32_t free_dims(int32_t r, const int32_t *a, int32_t na, const int32_t *b, int32_t nb, int32_t *out) {
  int32_t k = 0;
  for (int32_t d = 0; d < r; d++) {
    bool used = false;
    for (int32_t i = 0; i < na; i++) used = used || a[i] == d;
    for (int32_t i = 0; i < nb; i++) used = used || b[i] == d;
    if (!used) out[k++] = d;
  }
  return k;
}

/* Rank of v[i] among v[0..n) (their sorted position). */
static int32_t rank_among(const int32_t *v, int32_t n, int32_t i) {
  int32_t k = 0;
  for (int32_t j = 0; j < n; j++) k += v[j] < v[i];
  return k;
}

typedef struct dot_parts {
  optic_dot_dims d;
  int32_t lfree[OPTIC_MAX_RANK], rfree[OPTIC_MAX_RANK];
  int32_t nlf, nrf;
} dot_parts;

/* d lhs = g . rhs over rhs's free dims, batched, then transposed to lhs's order. */
static optic_status dot_lhs(ad_ctx *c, const dot_parts *p, optic_node_id g, optic_node_id lhs, optic_node_id rhs,
                            optic_node_id *out) {
  int32_t nb = p->d.lhs_batch_count, nc = p->d.lhs_contracting_count;
  optic_dot_dims d = {
      .lhs_batch_count = nb, .rhs_batch_count = nb, .lhs_contracting_count = p->nrf, .rhs_contracting_count = p->nrf};
  for (int32_t i = 0; i < nb; i++) d.lhs_batch[i] = i, d.rhs_batch[i] = p->d.rhs_batch[i];
  for (int32_t j = 0; j < p->nrf; j++) d.lhs_contracting[j] = nb + p->nlf + j, d.rhs_contracting[j] = p->rfree[j];
  optic_node_id t;
  AD_TRY(graph_dot_typed(c->m, c->dst, g, rhs, &d, ad_type(c, lhs)->dtype, NULL, &t));
  int64_t perm[OPTIC_MAX_RANK];
  for (int32_t i = 0; i < nb; i++) perm[p->d.lhs_batch[i]] = i;
  for (int32_t j = 0; j < p->nlf; j++) perm[p->lfree[j]] = nb + j;
  for (int32_t k = 0; k < nc; k++)
    perm[p->d.lhs_contracting[k]] = nb + p->nlf + rank_among(p->d.rhs_contracting, nc, k);
  return ad_transpose(c, t, perm, out);
}

/* d rhs = lhs . g over lhs's free dims, batched, then transposed to rhs's order. */
static optic_status dot_rhs(ad_ctx *c, const dot_parts *p, optic_node_id g, optic_node_id lhs, optic_node_id rhs,
                            optic_node_id *out) {
  int32_t nb = p->d.lhs_batch_count, nc = p->d.lhs_contracting_count;
  optic_dot_dims d = {
      .lhs_batch_count = nb, .rhs_batch_count = nb, .lhs_contracting_count = p->nlf, .rhs_contracting_count = p->nlf};
  for (int32_t i = 0; i < nb; i++) d.lhs_batch[i] = p->d.lhs_batch[i], d.rhs_batch[i] = i;
  for (int32_t j = 0; j < p->nlf; j++) d.lhs_contracting[j] = p->lfree[j], d.rhs_contracting[j] = nb + j;
  optic_node_id t;
  AD_TRY(graph_dot_typed(c->m, c->dst, lhs, g, &d, ad_type(c, rhs)->dtype, NULL, &t));
  int64_t perm[OPTIC_MAX_RANK];
  for (int32_t i = 0; i < nb; i++) perm[p->d.rhs_batch[i]] = i;
  for (int32_t k = 0; k < nc; k++) perm[p->d.rhs_contracting[k]] = nb + rank_among(p->d.lhs_contracting, nc, k);
  for (int32_t j = 0; j < p->nrf; j++) perm[p->rfree[j]] = nb + nc + j;
  return ad_transpose(c, t, perm, out);
}

optic_status ad_rule_dot(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id lhs = optic_node_operand(c->m, y, 0), rhs = optic_node_operand(c->m, y, 1);
  dot_parts p;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  p.d = a.dot;
  p.nlf = free_dims(ad_type(c, lhs)->shape.rank, p.d.lhs_batch, p.d.lhs_batch_count, p.d.lhs_contracting,
                    p.d.lhs_contracting_count, p.lfree);
  p.nrf = free_dims(ad_type(c, rhs)->shape.rank, p.d.rhs_batch, p.d.rhs_batch_count, p.d.rhs_contracting,
                    p.d.rhs_contracting_count, p.rfree);
  gx[0] = gx[1] = OPTIC_NO_NODE;
  if (ad_wants(c, lhs)) AD_TRY(dot_lhs(c, &p, g, lhs, rhs, &gx[0]));
  if (ad_wants(c, rhs)) AD_TRY(dot_rhs(c, &p, g, lhs, rhs, &gx[1]));
  return OPTIC_OK;
}

optic_opcode ad_combiner_op(const optic_module_t *m, optic_comp_id callee) {
  optic_node_id r = optic_computation_root(m, callee);
  if (r == OPTIC_NO_NODE || optic_computation_parameter_count(m, callee) != 2) return OPTIC_OP_PARAMETER;
  optic_opcode op = optic_node_opcode(m, r);
  if (op != OPTIC_OP_ADD && op != OPTIC_OP_MULTIPLY && op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) {
    return OPTIC_OP_PARAMETER;
  }
  optic_node_id p0 = optic_computation_parameter(m, callee, 0), p1 = optic_computation_parameter(m, callee, 1);
  optic_node_id a = optic_node_operand(m, r, 0), b = optic_node_operand(m, r, 1);
  return (a == p0 && b == p1) || (a == p1 && b == p0) ? op : OPTIC_OP_PARAMETER;
}

/* The reduced dims of a reduce, the kept ones, and g broadcast back. */
static optic_status reduce_back(ad_ctx *c, optic_node_id y, optic_node_id v, optic_node_id *out) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const optic_shape *xs = &ad_type(c, optic_node_operand(c->m, y, 0))->shape;
  int64_t kept[OPTIC_MAX_RANK];
  int32_t k = 0;
  for (int32_t d = 0; d < xs->rank; d++) {
    bool reduced = false;
    for (int32_t i = 0; i < a.reduce.count; i++) reduced = reduced || a.reduce.dims[i] == d;
    if (!reduced) kept[k++] = d;
  }
  return ad_bcast(c, v, xs, kept, k, out);
}

/* maximum/minimum: g split evenly among the elements equal to the result
 * (JAX's rule for reduce_max); the init value gets none. */
static optic_status reduce_chooser(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), by, eq, ones, cnt, share;
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_dtype dt = ad_type(c, x)->dtype;
  AD_TRY(reduce_back(c, y, y, &by));
  AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, x, by, &eq));
  AD_TRY(optic_graph_convert(c->m, c->dst, eq, dt, NULL, &ones));
  AD_TRY(ad_sum(c, ones, a.reduce.dims, a.reduce.count, &cnt));
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, g, cnt, &share));
  AD_TRY(reduce_back(c, y, share, &share));
  return ad_mask(c, eq, share, &gx[0]);
}

optic_status ad_rule_reduce(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0), init = optic_node_operand(c->m, y, 1), t;
  optic_opcode op = ad_combiner_op(c->m, optic_node_called(c->m, y, 0));
  gx[0] = gx[1] = OPTIC_NO_NODE;
  switch (op) {
    case OPTIC_OP_ADD:
      if (ad_wants(c, x)) AD_TRY(reduce_back(c, y, g, &gx[0]));
      if (ad_wants(c, init)) AD_TRY(ad_sum_all(c, g, &gx[1]));
      return OPTIC_OK;
    case OPTIC_OP_MAXIMUM:
    case OPTIC_OP_MINIMUM:
      if (ad_wants(c, x)) AD_TRY(reduce_chooser(c, y, g, gx));
      return OPTIC_OK;
    case OPTIC_OP_MULTIPLY: /* d x_i = g y / x_i, d init = sum(g y) / init: defined where nothing is 0 */
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, y, &t));
      if (ad_wants(c, x)) {
        optic_node_id b;
        AD_TRY(reduce_back(c, y, t, &b));
        AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, b, x, &gx[0]));
      }
      if (ad_wants(c, init)) {
        AD_TRY(ad_sum_all(c, t, &t));
        AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, t, init, &gx[1]));
      }
      return OPTIC_OK;
    default: return optic_fail(OPTIC_ERR_INTERNAL, "autodiff: reduce with an unknown combiner");
  }
}
