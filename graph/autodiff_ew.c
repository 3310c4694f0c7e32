/* Autodiff rules of the elementwise ops: unary and binary arithmetic and
 * transcendentals, select, clamp, convert (docs/autodiff.md, table). */
#include <math.h>

#include "graph/autodiff_internal.h"

/* g * f'(x) for the unary op of y = f(x); *d gets f'(x) (or g * f'(x)
 * directly when *done is set). */
static optic_status unary_derivative(ad_ctx *c, optic_opcode op, optic_node_id x, optic_node_id y, optic_node_id g,
                                     optic_node_id *out) {
  optic_node_id t, u;
  switch (op) {
    case OPTIC_OP_NEGATE: return ad_un(c, OPTIC_OP_NEGATE, g, out);
    case OPTIC_OP_ABS: AD_TRY(ad_un(c, OPTIC_OP_SIGN, x, &t)); break;
    case OPTIC_OP_EXPONENTIAL: t = y; break;
    case OPTIC_OP_LOG: return ad_bin(c, OPTIC_OP_DIVIDE, g, x, out);
    case OPTIC_OP_SQRT: /* g / (2 sqrt x) */
      AD_TRY(ad_scale(c, y, 2.0, &u));
      return ad_bin(c, OPTIC_OP_DIVIDE, g, u, out);
    case OPTIC_OP_RSQRT: /* -y / (2x) */
      AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, y, x, &u));
      AD_TRY(ad_scale(c, u, -0.5, &t));
      break;
    case OPTIC_OP_TANH: /* 1 - y^2 */
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, y, y, &u));
      AD_TRY(ad_const(c, 1.0, ad_type(c, y)->dtype, &ad_type(c, y)->shape, &t));
      AD_TRY(ad_bin(c, OPTIC_OP_SUBTRACT, t, u, &t));
      break;
    case OPTIC_OP_LOGISTIC: /* y (1 - y) */
      AD_TRY(ad_const(c, 1.0, ad_type(c, y)->dtype, &ad_type(c, y)->shape, &u));
      AD_TRY(ad_bin(c, OPTIC_OP_SUBTRACT, u, y, &u));
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, y, u, &t));
      break;
    case OPTIC_OP_ERF: /* 2/sqrt(pi) exp(-x^2) */
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, x, x, &u));
      AD_TRY(ad_un(c, OPTIC_OP_NEGATE, u, &u));
      AD_TRY(ad_un(c, OPTIC_OP_EXPONENTIAL, u, &u));
      AD_TRY(ad_scale(c, u, 1.1283791670955126, &t));
      break;
    case OPTIC_OP_LOG_PLUS_ONE: /* g / (1 + x) */
      AD_TRY(ad_const(c, 1.0, ad_type(c, x)->dtype, &ad_type(c, x)->shape, &u));
      AD_TRY(ad_bin(c, OPTIC_OP_ADD, u, x, &u));
      return ad_bin(c, OPTIC_OP_DIVIDE, g, u, out);
    case OPTIC_OP_EXPONENTIAL_MINUS_ONE: /* y + 1 */
      AD_TRY(ad_const(c, 1.0, ad_type(c, y)->dtype, &ad_type(c, y)->shape, &u));
      AD_TRY(ad_bin(c, OPTIC_OP_ADD, y, u, &t));
      break;
    case OPTIC_OP_SINE: AD_TRY(ad_un(c, OPTIC_OP_COSINE, x, &t)); break;
    case OPTIC_OP_COSINE:
      AD_TRY(ad_un(c, OPTIC_OP_SINE, x, &u));
      AD_TRY(ad_un(c, OPTIC_OP_NEGATE, u, &t));
      break;
    case OPTIC_OP_TAN: /* 1 + y^2 */
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, y, y, &u));
      AD_TRY(ad_const(c, 1.0, ad_type(c, y)->dtype, &ad_type(c, y)->shape, &t));
      AD_TRY(ad_bin(c, OPTIC_OP_ADD, t, u, &t));
      break;
    case OPTIC_OP_CBRT: /* g / (3 y^2) */
      AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, y, y, &u));
      AD_TRY(ad_scale(c, u, 3.0, &u));
      return ad_bin(c, OPTIC_OP_DIVIDE, g, u, out);
    default: return optic_fail(OPTIC_ERR_INTERNAL, "autodiff: no rule for %s", optic_opcode_name(op));
  }
  return ad_bin(c, OPTIC_OP_MULTIPLY, g, t, out);
}

/* Unary ops whose derivative is zero wherever it exists. */
static bool piecewise_constant(optic_opcode op) {
  return op == OPTIC_OP_SIGN || op == OPTIC_OP_FLOOR || op == OPTIC_OP_CEIL || op == OPTIC_OP_ROUND_NEAREST_AFZ ||
         op == OPTIC_OP_ROUND_NEAREST_EVEN;
}

optic_status ad_rule_unary(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_opcode op = optic_node_opcode(c->m, y);
  optic_node_id x = optic_node_operand(c->m, y, 0);
  gx[0] = OPTIC_NO_NODE;
  if (piecewise_constant(op) || !ad_wants(c, x)) return OPTIC_OK;
  return unary_derivative(c, op, x, y, g, &gx[0]);
}

optic_status ad_rule_identity(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  (void)c, (void)y;
  gx[0] = g;
  return OPTIC_OK;
}

/* maximum/minimum: the lhs takes the gradient where it is the result
 * (a >= b for maximum, a <= b for minimum: ties go to the lhs), the rhs
 * elsewhere, so the two always sum to g. */
static optic_status minmax(ad_ctx *c, bool is_max, optic_node_id a, optic_node_id b, optic_node_id g,
                           optic_node_id *gx) {
  optic_node_id p, z;
  AD_TRY(ad_cmp(c, is_max ? OPTIC_CMP_GE : OPTIC_CMP_LE, a, b, &p));
  AD_TRY(ad_zeros_like(c, g, &z));
  if (ad_wants(c, a)) AD_TRY(optic_graph_select(c->m, c->dst, p, g, z, NULL, &gx[0]));
  if (ad_wants(c, b)) AD_TRY(optic_graph_select(c->m, c->dst, p, z, g, NULL, &gx[1]));
  return OPTIC_OK;
}

static optic_status divide(ad_ctx *c, optic_node_id y, optic_node_id a, optic_node_id b, optic_node_id g,
                           optic_node_id *gx) {
  optic_node_id q;
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, g, b, &q)); /* g / b */
  if (ad_wants(c, a)) gx[0] = q;
  if (ad_wants(c, b)) { /* -g a / b^2 = -(g / b) y */
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, q, y, &q));
    AD_TRY(ad_un(c, OPTIC_OP_NEGATE, q, &gx[1]));
  }
  return OPTIC_OK;
}

/* y = a^b: da = g b a^(b-1), db = g y log(a), with log(0) read as 0 (as
 * JAX does, so 0^b gives db = 0, not 0 * -inf); NaN for a < 0. */
static optic_status power(ad_ctx *c, optic_node_id y, optic_node_id a, optic_node_id b, optic_node_id g,
                          optic_node_id *gx) {
  optic_node_id t, one;
  if (ad_wants(c, a)) {
    AD_TRY(ad_const(c, 1.0, ad_type(c, b)->dtype, &ad_type(c, b)->shape, &one));
    AD_TRY(ad_bin(c, OPTIC_OP_SUBTRACT, b, one, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_POWER, a, t, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, b, t, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, t, &gx[0]));
  }
  if (ad_wants(c, b)) {
    optic_node_id zero, is_zero;
    AD_TRY(ad_un(c, OPTIC_OP_LOG, a, &t));
    AD_TRY(ad_zeros_like(c, a, &zero));
    AD_TRY(ad_cmp(c, OPTIC_CMP_EQ, a, zero, &is_zero));
    AD_TRY(optic_graph_select(c->m, c->dst, is_zero, zero, t, NULL, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, y, t, &t));
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, t, &gx[1]));
  }
  return OPTIC_OK;
}

/* atan2(a, b): da = g b / (a^2 + b^2), db = -g a / (a^2 + b^2). */
static optic_status atan2_rule(ad_ctx *c, optic_node_id a, optic_node_id b, optic_node_id g, optic_node_id *gx) {
  optic_node_id aa, bb, r, t;
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, a, a, &aa));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, b, b, &bb));
  AD_TRY(ad_bin(c, OPTIC_OP_ADD, aa, bb, &r));
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, g, r, &r));
  if (ad_wants(c, a)) AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, r, b, &gx[0]));
  if (ad_wants(c, b)) {
    AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, r, a, &t));
    AD_TRY(ad_un(c, OPTIC_OP_NEGATE, t, &gx[1]));
  }
  return OPTIC_OK;
}

/* remainder(a, b) = a - trunc(a / b) b: da = g, db = -g trunc(a / b). */
static optic_status remainder_rule(ad_ctx *c, optic_node_id a, optic_node_id b, optic_node_id g, optic_node_id *gx) {
  if (ad_wants(c, a)) gx[0] = g;
  if (!ad_wants(c, b)) return OPTIC_OK;
  optic_node_id q, s, t;
  AD_TRY(ad_bin(c, OPTIC_OP_DIVIDE, a, b, &q));
  AD_TRY(ad_un(c, OPTIC_OP_SIGN, q, &s));
  AD_TRY(ad_un(c, OPTIC_OP_ABS, q, &t));
  AD_TRY(ad_un(c, OPTIC_OP_FLOOR, t, &t));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, s, t, &t));
  AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, t, &t));
  return ad_un(c, OPTIC_OP_NEGATE, t, &gx[1]);
}

optic_status ad_rule_binary(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_opcode op = optic_node_opcode(c->m, y);
  optic_node_id a = optic_node_operand(c->m, y, 0), b = optic_node_operand(c->m, y, 1);
  gx[0] = gx[1] = OPTIC_NO_NODE;
  switch (op) {
    case OPTIC_OP_ADD:
      if (ad_wants(c, a)) gx[0] = g;
      if (ad_wants(c, b)) gx[1] = g;
      return OPTIC_OK;
    case OPTIC_OP_SUBTRACT:
      if (ad_wants(c, a)) gx[0] = g;
      if (ad_wants(c, b)) AD_TRY(ad_un(c, OPTIC_OP_NEGATE, g, &gx[1]));
      return OPTIC_OK;
    case OPTIC_OP_MULTIPLY:
      if (ad_wants(c, a)) AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, g, b, &gx[0]));
      if (ad_wants(c, b)) AD_TRY(ad_bin(c, OPTIC_OP_MULTIPLY, a, g, &gx[1]));
      return OPTIC_OK;
    case OPTIC_OP_DIVIDE: return divide(c, y, a, b, g, gx);
    case OPTIC_OP_POWER: return power(c, y, a, b, g, gx);
    case OPTIC_OP_MAXIMUM: return minmax(c, true, a, b, g, gx);
    case OPTIC_OP_MINIMUM: return minmax(c, false, a, b, g, gx);
    case OPTIC_OP_ATAN2: return atan2_rule(c, a, b, g, gx);
    case OPTIC_OP_REMAINDER: return remainder_rule(c, a, b, g, gx);
    default: return optic_fail(OPTIC_ERR_INTERNAL, "autodiff: no rule for %s", optic_opcode_name(op));
  }
}

optic_status ad_rule_select(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id p = optic_node_operand(c->m, y, 0), a = optic_node_operand(c->m, y, 1),
                b = optic_node_operand(c->m, y, 2), z;
  gx[0] = gx[1] = gx[2] = OPTIC_NO_NODE;
  AD_TRY(ad_zeros_like(c, g, &z));
  if (ad_wants(c, a)) AD_TRY(optic_graph_select(c->m, c->dst, p, g, z, NULL, &gx[1]));
  if (ad_wants(c, b)) AD_TRY(optic_graph_select(c->m, c->dst, p, z, g, NULL, &gx[2]));
  return OPTIC_OK;
}

/* The part of g where `which` holds, summed to a scalar when bound is one. */
static optic_status clamp_bound(ad_ctx *c, optic_node_id bound, optic_node_id which, optic_node_id g,
                                optic_node_id *out) {
  optic_node_id t;
  AD_TRY(ad_mask(c, which, g, &t));
  if (ad_type(c, bound)->shape.rank == 0 && ad_type(c, g)->shape.rank > 0) return ad_sum_all(c, t, out);
  *out = t;
  return OPTIC_OK;
}

/* clamp(lo, x, hi), JAX's rule: x takes g where lo < x < hi, lo where
 * x < lo, hi where x > hi; at x == lo or x == hi nobody does. */
optic_status ad_rule_clamp(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id lo = optic_node_operand(c->m, y, 0), x = optic_node_operand(c->m, y, 1),
                hi = optic_node_operand(c->m, y, 2);
  optic_shape xs = ad_type(c, x)->shape;
  const optic_shape *s = &xs;
  optic_node_id blo, bhi, p, q;
  gx[0] = gx[1] = gx[2] = OPTIC_NO_NODE;
  blo = lo, bhi = hi;
  if (ad_type(c, lo)->shape.rank == 0) AD_TRY(ad_bcast_scalar(c, lo, s, &blo));
  if (ad_type(c, hi)->shape.rank == 0) AD_TRY(ad_bcast_scalar(c, hi, s, &bhi));
  if (ad_wants(c, x)) {
    AD_TRY(ad_cmp(c, OPTIC_CMP_GT, x, blo, &p));
    AD_TRY(ad_cmp(c, OPTIC_CMP_LT, x, bhi, &q));
    AD_TRY(ad_bin(c, OPTIC_OP_AND, p, q, &p));
    AD_TRY(ad_mask(c, p, g, &gx[1]));
  }
  if (ad_wants(c, lo)) {
    AD_TRY(ad_cmp(c, OPTIC_CMP_LT, x, blo, &p));
    AD_TRY(clamp_bound(c, lo, p, g, &gx[0]));
  }
  if (ad_wants(c, hi)) {
    AD_TRY(ad_cmp(c, OPTIC_CMP_GT, x, bhi, &p));
    AD_TRY(clamp_bound(c, hi, p, g, &gx[2]));
  }
  return OPTIC_OK;
}

/* convert between float types: the gradient converted back. */
optic_status ad_rule_convert(ad_ctx *c, optic_node_id y, optic_node_id g, optic_node_id *gx) {
  optic_node_id x = optic_node_operand(c->m, y, 0);
  gx[0] = OPTIC_NO_NODE;
  if (!ad_wants(c, x) || !optic_dtype_is_float(ad_type(c, x)->dtype)) return OPTIC_OK;
  return optic_graph_convert(c->m, c->dst, g, ad_type(c, x)->dtype, NULL, &gx[0]);
}
