/* Autodiff rules of the data-movement ops: broadcast, reshape, transpose,
 * slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice
 * (docs/autodiff.md, table). */
#include "graph/autodiff_internal.h"

/* broadcast: the sum of g over the dims the broadcast added. */
optic_status ad_rule_broadcast(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const int64_t *dims = a.broadcast.dims;
  int32_t n = a.broadcast.count, r = ad_type(c, y)->shape.rank, k = 0;
  int64_t added[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < r; d++) {
    bool kept = false;
    for (int32_t i = 0; i < n; i++) kept = kept || dims[i] == d;
    if (!kept) added[k++] = d;
  }
  gx[0] = OPTIC_NO_NODE;
  if (!ad_wants(c, optic_node_operand(c->m, y, 0))) return OPTIC_OK;
  return ad_sum(c, g, added, k, &gx[0]);
}

optic_status ad_rule_reshape(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0);
  return optic_graph_reshape(c->m, c->dst, g, &ad_type(c, x)->shape, NULL, &gx[0]);
}

optic_status ad_rule_transpose(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  int64_t inv[OPTIC_MAX_RANK];
  for (int32_t i = 0; i < a.transpose.count; i++) inv[a.transpose.dims[i]] = i;
  return ad_transpose(c, g, inv, &gx[0]);
}

/* g put back where the slice took it from, zeros elsewhere: a pad with
 * interior stride - 1. */
optic_status ad_rule_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  optic_node_id x = optic_node_operand(c->m, y, 0);
  const optic_shape *xs = &ad_type(c, x)->shape, *ys = &ad_type(c, y)->shape;
  int32_t r = xs->rank;
  optic_pad_dim cfg[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < r; d++) {
    if (ys->dims[d] == 0) return ad_zeros_like(c, x, &gx[0]);
    int64_t start = a.slice.start[d], stride = a.slice.stride[d];
    cfg[d].low = start;
    cfg[d].interior = stride - 1;
    cfg[d].high = xs->dims[d] - (start + (ys->dims[d] - 1) * stride + 1);
  }
  optic_node_id zero;
  AD_TRY(ad_const(c, 0.0, ad_type(c, g)->dtype, NULL, &zero));
  return optic_graph_pad(c->m, c->dst, g, zero, cfg, NULL, &gx[0]);
}

optic_status ad_pad_operand_grad(ad_ctx *c, optic_node_id x, optic_node_id g, const optic_pad_dim *cfg,
                                 optic_node_id *out) {
  const optic_shape *xs = &ad_type(c, x)->shape;
  int32_t r = xs->rank;
  optic_pad_dim undo[OPTIC_MAX_RANK];
  int64_t start[OPTIC_MAX_RANK], limit[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK];
  bool neg = false;
  for (int32_t d = 0; d < r; d++) {
    int64_t lo = cfg[d].low, hi = cfg[d].high, in = cfg[d].interior;
    if (xs->dims[d] == 0) return ad_zeros_like(c, x, out);
    undo[d].low = lo < 0 ? -lo : 0;
    undo[d].high = hi < 0 ? -hi : 0;
    undo[d].interior = 0;
    neg = neg || lo < 0 || hi < 0;
    start[d] = lo > 0 ? lo : 0;
    stride[d] = in + 1;
    limit[d] = start[d] + (xs->dims[d] - 1) * stride[d] + 1;
  }
  optic_node_id t = g, zero;
  if (neg) {
    AD_TRY(ad_const(c, 0.0, ad_type(c, g)->dtype, NULL, &zero));
    AD_TRY(optic_graph_pad(c->m, c->dst, g, zero, undo, NULL, &t));
  }
  return optic_graph_slice(c->m, c->dst, t, start, limit, stride, NULL, out);
}

optic_status ad_rule_pad(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  const optic_pad_dim *cfg = a.pad.dims;
  optic_node_id x = optic_node_operand(c->m, y, 0), v = optic_node_operand(c->m, y, 1);
  gx[0] = gx[1] = OPTIC_NO_NODE;
  if (ad_wants(c, x)) AD_TRY(ad_pad_operand_grad(c, x, g, cfg, &gx[0]));
  if (!ad_wants(c, v)) return OPTIC_OK;
  /* The padding value's gradient: g summed where the padding lies (a 0/1 mask). */
  optic_dtype dt = ad_type(c, g)->dtype;
  optic_node_id zeros, one, mask, t;
  AD_TRY(ad_const(c, 0.0, dt, &ad_type(c, x)->shape, &zeros));
  AD_TRY(ad_const(c, 1.0, dt, NULL, &one));
  AD_TRY(optic_graph_pad(c->m, c->dst, zeros, one, cfg, NULL, &mask));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, mask, &t));
  return ad_sum_all(c, t, &gx[1]);
}

optic_status ad_rule_concatenate(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  int64_t dim = a.concatenate.dimension;
  const optic_shape *ys = &ad_type(c, y)->shape;
  int64_t start[OPTIC_MAX_RANK] = {0}, limit[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < ys->rank; d++) limit[d] = ys->dims[d], stride[d] = 1;
  int64_t at = 0;
  for (int32_t k = 0; k < optic_node_operand_count(c->m, y); k++) {
    optic_node_id x = optic_node_operand(c->m, y, k);
    int64_t size = ad_type(c, x)->shape.dims[dim];
    gx[k] = OPTIC_NO_NODE;
    if (ad_wants(c, x)) {
      start[dim] = at;
      limit[dim] = at + size;
      AD_TRY(optic_graph_slice(c->m, c->dst, g, start, limit, stride, NULL, &gx[k]));
    }
    at += size;
  }
  return OPTIC_OK;
}

optic_status ad_rule_reverse(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_attrs_t a;
  ad_attrs(c->m, y, &a);
  return optic_graph_reverse(c->m, c->dst, g, a.reverse.dims, a.reverse.count, NULL, &gx[0]);
}

/* The start operands of a dynamic-slice (from operand 1) or
 * dynamic-update-slice (from operand 2). */
static int32_t starts_of(const ad_ctx *c, optic_node_id y, int32_t first, optic_node_id *starts) {
  int32_t n = optic_node_operand_count(c->m, y) - first;
  for (int32_t i = 0; i < n; i++) starts[i] = optic_node_operand(c->m, y, first + i);
  return n;
}

/* dynamic-slice: g written into zeros at the same (clamped) starts. */
optic_status ad_rule_dynamic_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id starts[OPTIC_MAX_RANK], x = optic_node_operand(c->m, y, 0), z;
  int32_t n = starts_of(c, y, 1, starts);
  for (int32_t i = 0; i <= n; i++) gx[i] = OPTIC_NO_NODE;
  AD_TRY(ad_zeros_like(c, x, &z));
  return optic_graph_dynamic_update_slice(c->m, c->dst, z, g, starts, n, NULL, &gx[0]);
}

/* dynamic-update-slice: the operand gets g with the window zeroed, the
 * update the window of g. Both clamp the starts the same way. */
optic_status ad_rule_dynamic_update_slice(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id starts[OPTIC_MAX_RANK], x = optic_node_operand(c->m, y, 0), u = optic_node_operand(c->m, y, 1), z;
  int32_t n = starts_of(c, y, 2, starts);
  for (int32_t i = 0; i < n + 2; i++) gx[i] = OPTIC_NO_NODE;
  if (ad_wants(c, x)) {
    AD_TRY(ad_zeros_like(c, u, &z));
    AD_TRY(optic_graph_dynamic_update_slice(c->m, c->dst, g, z, starts, n, NULL, &gx[0]));
  }
  if (ad_wants(c, u)) {
    const optic_shape *us = &ad_type(c, u)->shape;
    AD_TRY(optic_graph_dynamic_slice(c->m, c->dst, g, starts, n, us->dims, NULL, &gx[1]));
  }
  return OPTIC_OK;
}
