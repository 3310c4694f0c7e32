/* Builders for leaves and elementwise ops: parameter, constant, iota, unary,
 * binary, compare, select, clamp, convert. Each checks its operands' types
 * and infers the result type (XLA's rules: no implicit broadcasting except
 * scalar bounds in clamp and a scalar predicate in select). */
#include <string.h>

#include "graph/internal.h"
#include "graph/opcode_kernels.h"

static bool is_float(optic_dtype d) { return optic_dtype_is_float(d); }
static bool is_int(optic_dtype d) { return optic_dtype_is_int(d); }

static optic_status check_array_type(const char *op, const optic_type *t) {
  if (optic_type_is_tuple(t)) return OPTIC_OK;
  if (!optic_dtype_valid(t->dtype)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", op, (int)t->dtype);
  }
  if (t->dtype == OPTIC_TOKEN && t->shape.rank != 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: a token has no dimensions (token[]), rank %d given", op,
                      (int)t->shape.rank);
  }
  size_t n;
  return optic_shape_elements(&t->shape, &n);
}

static optic_status check_type_deep(const char *op, const optic_type *t) {
  optic_status st = check_array_type(op, t);
  if (st != OPTIC_OK || !optic_type_is_tuple(t)) return st;
  if (t->tuple_size < 0 || (t->tuple_size > 0 && t->elements == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: tuple type with %d elements and no element list", op,
                      (int)t->tuple_size);
  }
  for (int32_t i = 0; i < t->tuple_size; i++) {
    if ((st = check_type_deep(op, &t->elements[i])) != OPTIC_OK) return st;
  }
  return OPTIC_OK;
}

optic_status optic_graph_parameter(optic_module_t *m, optic_comp_id comp, int32_t number, const optic_type *type,
                                   const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "parameter");
  if (st != OPTIC_OK) return st;
  if (type == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "parameter: NULL argument");
  if (number < 0 || number > 1 << 20) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "parameter: number %d is outside [0, 2^20]", (int)number);
  }
  if (optic_computation_parameter(m, comp, number) != OPTIC_NO_NODE) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "parameter: computation '%s' already has parameter %d",
                      optic_computation_name(m, comp), (int)number);
  }
  if ((st = check_type_deep("parameter", type)) != OPTIC_OK) return st;
  optic_instr_proto p = graph_proto(OPTIC_OP_PARAMETER);
  p.type = *type;
  p.param_number = number;
  int64_t num = number;
  p.ints = &num;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_constant(optic_module_t *m, optic_comp_id comp, optic_dtype dtype, const optic_shape *shape,
                                  const void *data, size_t bytes, const char *name, optic_node_id *out) {
  if (shape == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "constant: NULL argument");
  if (dtype == OPTIC_TOKEN) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "constant: a token has no literal (make one with after-all)");
  }
  size_t want;
  optic_status st = optic_shape_bytes(shape, dtype, &want);
  if (st != OPTIC_OK) return st;
  if (bytes != want) {
    char buf[TYPE_BUF];
    optic_shape_format(shape, dtype, buf, sizeof buf);
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "constant: %s needs %zu bytes, %zu given", buf, want, bytes);
  }
  if (bytes > 0 && data == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "constant: data is NULL");
  optic_instr_proto p = graph_proto(OPTIC_OP_CONSTANT);
  p.type = optic_type_array(dtype, shape);
  p.data = data;
  p.data_bytes = bytes;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_iota(optic_module_t *m, optic_comp_id comp, optic_dtype dtype, const optic_shape *shape,
                              int64_t iota_dimension, const char *name, optic_node_id *out) {
  if (shape == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "iota: NULL argument");
  optic_type t = optic_type_array(dtype, shape);
  optic_status st = check_array_type("iota", &t);
  if (st != OPTIC_OK) return st;
  if (shape->rank == 0 || iota_dimension < 0 || iota_dimension >= shape->rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "iota: iota_dimension %lld is outside [0, %d)",
                      (long long)iota_dimension, (int)shape->rank);
  }
  if (dtype == OPTIC_PRED || dtype == OPTIC_TOKEN) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "iota: dtype %s is not numeric", optic_dtype_name(dtype));
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_IOTA);
  p.type = t;
  p.ints = &iota_dimension;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status graph_array_operand(const optic_module_t *m, optic_comp_id comp, optic_node_id id, const char *op,
                                 int32_t index, const optic_type **t) {
  optic_status st = graph_check_comp(m, comp, op);
  if (st == OPTIC_OK) st = graph_check_operand(m, comp, id, op, index);
  if (st != OPTIC_OK) return st;
  *t = optic_node_type(m, id);
  if (optic_type_is_tuple(*t) || (*t)->dtype == OPTIC_TOKEN) {
    char buf[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand %d (%s) is a %s %s; an array is needed", op, (int)index,
                      optic_node_name(m, id), optic_type_is_tuple(*t) ? "tuple" : "token",
                      graph_type_str(*t, buf, sizeof buf));
  }
  return OPTIC_OK;
}

static optic_status same_type(const optic_module_t *m, const char *op, optic_node_id a, const optic_type *ta,
                              int32_t ib, optic_node_id b, const optic_type *tb) {
  if (optic_type_equal(ta, tb)) return OPTIC_OK;
  char ba[TYPE_BUF], bb[TYPE_BUF];
  return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand %d (%s) has type %s but operand 0 (%s) has %s", op, (int)ib,
                    optic_node_name(m, b), graph_type_str(tb, bb, sizeof bb), optic_node_name(m, a),
                    graph_type_str(ta, ba, sizeof ba));
}

optic_status optic_graph_unary(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x,
                               const char *name, optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, opn, 0, &t);
  if (st != OPTIC_OK) return st;
  bool ok;
  switch (op) {
    case OPTIC_OP_NEGATE:
    case OPTIC_OP_ABS: ok = is_float(t->dtype) || is_int(t->dtype); break; /* XLA: integral or floating */
    case OPTIC_OP_SIGN: ok = is_float(t->dtype) || optic_dtype_is_signed_int(t->dtype); break;
    case OPTIC_OP_EXPONENTIAL:
    case OPTIC_OP_LOG:
    case OPTIC_OP_SQRT:
    case OPTIC_OP_RSQRT:
    case OPTIC_OP_TANH:
    case OPTIC_OP_LOGISTIC:
    case OPTIC_OP_FLOOR:
    case OPTIC_OP_CEIL:
    case OPTIC_OP_ERF:
    case OPTIC_OP_LOG_PLUS_ONE:
    case OPTIC_OP_EXPONENTIAL_MINUS_ONE: ok = is_float(t->dtype); break;
    case OPTIC_OP_NOT: ok = t->dtype == OPTIC_PRED || is_int(t->dtype); break;
    case OPTIC_OP_SINE:
    case OPTIC_OP_COSINE:
    case OPTIC_OP_TAN:
    case OPTIC_OP_CBRT:
    case OPTIC_OP_ROUND_NEAREST_AFZ:
    case OPTIC_OP_ROUND_NEAREST_EVEN:
    case OPTIC_OP_POPCNT:
    case OPTIC_OP_COUNT_LEADING_ZEROS: ok = graph_ew_scalar_defines(op, t->dtype, t->dtype); break;
    case OPTIC_OP_COPY: ok = true; break;
    default: return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "unary: %s is not an elementwise unary opcode", opn);
  }
  if (!ok) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand 0 (%s) has dtype %s, which %s does not take", opn,
                      optic_node_name(m, x), optic_dtype_name(t->dtype), opn);
  }
  optic_instr_proto p = graph_proto(op);
  p.type = *t;
  p.operands = &x;
  p.n_operands = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_binary(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id a,
                                optic_node_id b, const char *name, optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  const optic_type *ta, *tb;
  optic_status st = graph_array_operand(m, comp, a, opn, 0, &ta);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, b, opn, 1, &tb);
  if (st != OPTIC_OK) return st;
  bool ok;
  switch (op) {
    case OPTIC_OP_ADD:
    case OPTIC_OP_SUBTRACT:
    case OPTIC_OP_MULTIPLY:
    case OPTIC_OP_DIVIDE:
    case OPTIC_OP_MAXIMUM:
    case OPTIC_OP_MINIMUM: ok = ta->dtype != OPTIC_PRED || op == OPTIC_OP_MAXIMUM || op == OPTIC_OP_MINIMUM; break;
    case OPTIC_OP_POWER: ok = ta->dtype != OPTIC_PRED; break;
    case OPTIC_OP_AND:
    case OPTIC_OP_OR: ok = ta->dtype == OPTIC_PRED || is_int(ta->dtype); break;
    case OPTIC_OP_ATAN2:
    case OPTIC_OP_REMAINDER:
    case OPTIC_OP_XOR:
    case OPTIC_OP_SHIFT_LEFT:
    case OPTIC_OP_SHIFT_RIGHT_LOGICAL:
    case OPTIC_OP_SHIFT_RIGHT_ARITHMETIC: ok = graph_ew_scalar_defines(op, ta->dtype, ta->dtype); break;
    default: return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "binary: %s is not an elementwise binary opcode", opn);
  }
  if ((st = same_type(m, opn, a, ta, 1, b, tb)) != OPTIC_OK) return st;
  if (!ok) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operands have dtype %s, which %s does not take", opn,
                      optic_dtype_name(ta->dtype), opn);
  }
  optic_node_id ops[2] = {a, b};
  optic_instr_proto p = graph_proto(op);
  p.type = *ta;
  p.operands = ops;
  p.n_operands = 2;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_compare(optic_module_t *m, optic_comp_id comp, optic_compare_dir dir, optic_node_id a,
                                 optic_node_id b, const char *name, optic_node_id *out) {
  const optic_type *ta, *tb;
  optic_status st = graph_array_operand(m, comp, a, "compare", 0, &ta);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, b, "compare", 1, &tb);
  if (st == OPTIC_OK) st = same_type(m, "compare", a, ta, 1, b, tb);
  if (st != OPTIC_OK) return st;
  if ((unsigned)dir > OPTIC_CMP_GE) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "compare: direction %d", (int)dir);
  optic_node_id ops[2] = {a, b};
  optic_instr_proto p = graph_proto(OPTIC_OP_COMPARE);
  p.type = optic_type_array(OPTIC_PRED, &ta->shape);
  p.operands = ops;
  p.n_operands = 2;
  p.cmp = dir;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_select(optic_module_t *m, optic_comp_id comp, optic_node_id pred, optic_node_id on_true,
                                optic_node_id on_false, const char *name, optic_node_id *out) {
  const optic_type *tp, *tt, *tf;
  optic_status st = graph_array_operand(m, comp, pred, "select", 0, &tp);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, on_true, "select", 1, &tt);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, on_false, "select", 2, &tf);
  if (st != OPTIC_OK) return st;
  char b1[TYPE_BUF], b2[TYPE_BUF];
  if (!optic_type_equal(tt, tf)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "select: on_true (operand 1) has type %s but on_false has %s",
                      graph_type_str(tt, b1, sizeof b1), graph_type_str(tf, b2, sizeof b2));
  }
  if (tp->dtype != OPTIC_PRED || (tp->shape.rank != 0 && !optic_shape_equal(&tp->shape, &tt->shape))) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "select: predicate (operand 0) has type %s; it must be pred[] or pred with the shape of %s",
                      graph_type_str(tp, b1, sizeof b1), graph_type_str(tt, b2, sizeof b2));
  }
  optic_node_id ops[3] = {pred, on_true, on_false};
  optic_instr_proto p = graph_proto(OPTIC_OP_SELECT);
  p.type = *tt;
  p.operands = ops;
  p.n_operands = 3;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_clamp(optic_module_t *m, optic_comp_id comp, optic_node_id lo, optic_node_id x,
                               optic_node_id hi, const char *name, optic_node_id *out) {
  const optic_type *tl, *tx, *th;
  optic_status st = graph_array_operand(m, comp, lo, "clamp", 0, &tl);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, x, "clamp", 1, &tx);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, hi, "clamp", 2, &th);
  if (st != OPTIC_OK) return st;
  const optic_type *bounds[2] = {tl, th};
  const char *which[2] = {"min (operand 0)", "max (operand 2)"};
  for (int i = 0; i < 2; i++) {
    const optic_type *b = bounds[i];
    if (b->dtype != tx->dtype || (b->shape.rank != 0 && !optic_shape_equal(&b->shape, &tx->shape))) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "clamp: %s has type %s; it must be a scalar or the type of %s",
                        which[i], graph_type_str(b, b1, sizeof b1), graph_type_str(tx, b2, sizeof b2));
    }
  }
  optic_node_id ops[3] = {lo, x, hi};
  optic_instr_proto p = graph_proto(OPTIC_OP_CLAMP);
  p.type = *tx;
  p.operands = ops;
  p.n_operands = 3;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_convert(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_dtype dtype,
                                 const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "convert", 0, &t);
  if (st != OPTIC_OK) return st;
  if (!optic_dtype_has_values(dtype)) {
    return optic_fail(dtype == OPTIC_TOKEN ? OPTIC_ERR_SHAPE_MISMATCH : OPTIC_ERR_INVALID_ARGUMENT,
                      "convert: %s is not a convertible dtype",
                      optic_dtype_valid(dtype) ? optic_dtype_name(dtype) : "invalid");
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_CONVERT);
  p.type = optic_type_array(dtype, &t->shape);
  p.operands = &x;
  p.n_operands = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

/* The one-operand elementwise ops whose result dtype is not the operand's
 * or that carry attributes: is-finite, bitcast-convert, reduce-precision. */
static optic_status add_elementwise1(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x,
                                     optic_dtype dtype, const int64_t *ints, int32_t n_ints, const char *name,
                                     optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, opn, 0, &t);
  if (st != OPTIC_OK) return st;
  if (dtype == OPTIC_DTYPE_INVALID) dtype = t->dtype;
  if (op == OPTIC_OP_BITCAST_CONVERT && optic_dtype_size(dtype) == 0) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "bitcast-convert: invalid dtype %d", (int)dtype);
  }
  if (op == OPTIC_OP_BITCAST_CONVERT && optic_dtype_size(dtype) != optic_dtype_size(t->dtype)) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED,
                      "bitcast-convert: from %s (%zu bytes) to %s (%zu bytes): only equal element sizes are supported",
                      optic_dtype_name(t->dtype), optic_dtype_size(t->dtype), optic_dtype_name(dtype),
                      optic_dtype_size(dtype));
  }
  if (!graph_ew_scalar_defines(op, t->dtype, dtype)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand 0 (%s) has dtype %s; a floating-point operand is needed",
                      opn, optic_node_name(m, x), optic_dtype_name(t->dtype));
  }
  optic_instr_proto p = graph_proto(op);
  p.type = optic_type_array(dtype, &t->shape);
  p.operands = &x;
  p.n_operands = 1;
  p.ints = ints;
  p.n_ints = n_ints;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_is_finite(optic_module_t *m, optic_comp_id comp, optic_node_id x, const char *name,
                                   optic_node_id *out) {
  return add_elementwise1(m, comp, OPTIC_OP_IS_FINITE, x, OPTIC_PRED, NULL, 0, name, out);
}

optic_status optic_graph_bitcast_convert(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_dtype dtype,
                                         const char *name, optic_node_id *out) {
  if (dtype == OPTIC_DTYPE_INVALID) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "bitcast-convert: invalid dtype");
  return add_elementwise1(m, comp, OPTIC_OP_BITCAST_CONVERT, x, dtype, NULL, 0, name, out);
}

optic_status optic_graph_reduce_precision(optic_module_t *m, optic_comp_id comp, optic_node_id x, int32_t exponent_bits,
                                          int32_t mantissa_bits, const char *name, optic_node_id *out) {
  /* XLA's shape inference: exponent_bits >= 1, mantissa_bits >= 0; wider
   * than the operand's format changes nothing. */
  if (exponent_bits < 1 || mantissa_bits < 0 || exponent_bits > 64 || mantissa_bits > 255) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "reduce-precision: exponent_bits %d must be in [1, 64] and mantissa_bits %d in [0, 255]",
                      (int)exponent_bits, (int)mantissa_bits);
  }
  int64_t ints[2] = {exponent_bits, mantissa_bits};
  return add_elementwise1(m, comp, OPTIC_OP_REDUCE_PRECISION, x, OPTIC_DTYPE_INVALID, ints, 2, name, out);
}
