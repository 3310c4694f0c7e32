/* Builders for data-movement ops: broadcast, reshape, transpose, slice,
 * concatenate, pad, reverse. Shape inference follows XLA's ShapeInference;
 * every size computation is overflow-checked through optic_shape_make. */
#include <string.h>

#include "graph/internal.h"

static optic_status add_unary_layout(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x,
                                     optic_dtype dtype, const optic_shape *shape, const int64_t *ints, int32_t n_ints,
                                     const char *name, optic_node_id *out) {
  optic_instr_proto p = graph_proto(op);
  p.type = optic_type_array(dtype, shape);
  p.operands = &x;
  p.n_operands = 1;
  p.ints = ints;
  p.n_ints = n_ints;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_broadcast(optic_module_t *m, optic_comp_id comp, optic_node_id x, const optic_shape *shape,
                                   const int64_t *dims, int32_t ndims, const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "broadcast", 0, &t);
  if (st != OPTIC_OK) return st;
  if (shape == NULL || out == NULL || (ndims > 0 && dims == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "broadcast: NULL argument");
  }
  optic_shape s;
  if ((st = optic_shape_make(shape->rank, shape->dims, &s)) != OPTIC_OK) return st;
  if (ndims != t->shape.rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "broadcast: %d dimensions given for an operand of rank %d",
                      (int)ndims, (int)t->shape.rank);
  }
  for (int32_t i = 0; i < ndims; i++) {
    if (dims[i] < 0 || dims[i] >= s.rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "broadcast: dimensions[%d] = %lld is outside the output rank %d",
                        (int)i, (long long)dims[i], (int)s.rank);
    }
    if (i > 0 && dims[i] <= dims[i - 1]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "broadcast: dimensions must be strictly increasing (%lld after %lld)", (long long)dims[i],
                        (long long)dims[i - 1]);
    }
    if (s.dims[dims[i]] != t->shape.dims[i]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "broadcast: operand dim %d has size %lld but output dim %lld has size %lld", (int)i,
                        (long long)t->shape.dims[i], (long long)dims[i], (long long)s.dims[dims[i]]);
    }
  }
  return add_unary_layout(m, comp, OPTIC_OP_BROADCAST, x, t->dtype, &s, dims, ndims, name, out);
}

static optic_status reshape_like(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x,
                                 const optic_shape *shape, const char *name, optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, opn, 0, &t);
  if (st != OPTIC_OK) return st;
  if (shape == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", opn);
  optic_shape s;
  size_t n_in, n_out;
  if ((st = optic_shape_make(shape->rank, shape->dims, &s)) != OPTIC_OK) return st;
  optic_shape_elements(&t->shape, &n_in);
  optic_shape_elements(&s, &n_out);
  if (n_in != n_out) {
    char b1[TYPE_BUF], b2[TYPE_BUF];
    optic_shape_format(&s, t->dtype, b2, sizeof b2);
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand %s has %zu elements but %s has %zu", opn,
                      graph_type_str(t, b1, sizeof b1), n_in, b2, n_out);
  }
  return add_unary_layout(m, comp, op, x, t->dtype, &s, NULL, 0, name, out);
}

optic_status optic_graph_reshape(optic_module_t *m, optic_comp_id comp, optic_node_id x, const optic_shape *shape,
                                 const char *name, optic_node_id *out) {
  return reshape_like(m, comp, OPTIC_OP_RESHAPE, x, shape, name, out);
}

optic_status optic_graph_bitcast(optic_module_t *m, optic_comp_id comp, optic_node_id x, const optic_shape *shape,
                                 const char *name, optic_node_id *out) {
  return reshape_like(m, comp, OPTIC_OP_BITCAST, x, shape, name, out);
}

/* dims must be distinct and in [0, rank): reverse dims, transpose perm. */
static optic_status check_dim_set(const char *op, const char *what, const int64_t *dims, int32_t n, int32_t rank) {
  bool seen[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s[%d] = %lld is outside [0, %d)", op, what, (int)i,
                        (long long)dims[i], (int)rank);
    }
    if (seen[dims[i]]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %s lists dimension %lld twice", op, what, (long long)dims[i]);
    }
    seen[dims[i]] = true;
  }
  return OPTIC_OK;
}

optic_status optic_graph_transpose(optic_module_t *m, optic_comp_id comp, optic_node_id x, const int64_t *perm,
                                   const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "transpose", 0, &t);
  if (st != OPTIC_OK) return st;
  int32_t rank = t->shape.rank;
  if (out == NULL || (rank > 0 && perm == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "transpose: NULL argument");
  if ((st = check_dim_set("transpose", "permutation", perm, rank, rank)) != OPTIC_OK) return st;
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = t->shape.dims[perm[i]];
  return add_unary_layout(m, comp, OPTIC_OP_TRANSPOSE, x, t->dtype, &s, perm, rank, name, out);
}

optic_status optic_graph_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x, const int64_t *start,
                               const int64_t *limit, const int64_t *stride, const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "slice", 0, &t);
  if (st != OPTIC_OK) return st;
  int32_t rank = t->shape.rank;
  if (out == NULL || (rank > 0 && (start == NULL || limit == NULL || stride == NULL))) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "slice: NULL argument");
  }
  optic_shape s = {.rank = rank};
  int64_t ints[3 * OPTIC_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) {
    int64_t size = t->shape.dims[i];
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > size || stride[i] < 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "slice: dim %d has [%lld:%lld:%lld]; need 0 <= start <= limit <= %lld and stride >= 1", (int)i,
                        (long long)start[i], (long long)limit[i], (long long)stride[i], (long long)size);
    }
    s.dims[i] = (limit[i] - start[i] + stride[i] - 1) / stride[i];
    ints[i] = start[i], ints[rank + i] = limit[i], ints[2 * rank + i] = stride[i];
  }
  return add_unary_layout(m, comp, OPTIC_OP_SLICE, x, t->dtype, &s, ints, 3 * rank, name, out);
}

optic_status optic_graph_concatenate(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                     int64_t dimension, const char *name, optic_node_id *out) {
  if (xs == NULL || n < 1 || out == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "concatenate: needs at least one operand");
  }
  const optic_type *t0;
  optic_status st = graph_array_operand(m, comp, xs[0], "concatenate", 0, &t0);
  if (st != OPTIC_OK) return st;
  int32_t rank = t0->shape.rank;
  if (rank == 0 || dimension < 0 || dimension >= rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "concatenate: dimension %lld is outside [0, %d)",
                      (long long)dimension, (int)rank);
  }
  optic_shape s = t0->shape;
  for (int32_t k = 1; k < n; k++) {
    const optic_type *t;
    if ((st = graph_array_operand(m, comp, xs[k], "concatenate", k, &t)) != OPTIC_OK) return st;
    bool fits = t->dtype == t0->dtype && t->shape.rank == rank;
    for (int32_t i = 0; fits && i < rank; i++) fits = i == dimension || t->shape.dims[i] == t0->shape.dims[i];
    if (!fits) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "concatenate: operand %d has type %s, which does not fit operand 0's %s along dimension %lld",
                        (int)k, graph_type_str(t, b1, sizeof b1), graph_type_str(t0, b2, sizeof b2),
                        (long long)dimension);
    }
    s.dims[dimension] += t->shape.dims[dimension]; /* each < 2^60: no overflow before the check below */
  }
  if ((st = optic_shape_make(s.rank, s.dims, &s)) != OPTIC_OK) return st;
  optic_instr_proto p = graph_proto(OPTIC_OP_CONCATENATE);
  p.type = optic_type_array(t0->dtype, &s);
  p.operands = xs;
  p.n_operands = n;
  p.ints = &dimension;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_pad(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_node_id value,
                             const optic_pad_dim *config, const char *name, optic_node_id *out) {
  const optic_type *t, *tv;
  optic_status st = graph_array_operand(m, comp, x, "pad", 0, &t);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, value, "pad", 1, &tv);
  if (st != OPTIC_OK) return st;
  int32_t rank = t->shape.rank;
  if (out == NULL || (rank > 0 && config == NULL)) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "pad: NULL argument");
  if (tv->dtype != t->dtype || tv->shape.rank != 0) {
    char b1[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "pad: padding value has type %s; it must be a %s scalar",
                      graph_type_str(tv, b1, sizeof b1), optic_dtype_name(t->dtype));
  }
  optic_shape s = {.rank = rank};
  int64_t ints[3 * OPTIC_MAX_RANK];
  const int64_t lim = INT64_C(1) << 60;
  for (int32_t i = 0; i < rank; i++) {
    int64_t d = t->shape.dims[i], lo = config[i].low, hi = config[i].high, in = config[i].interior;
    if (in < 0) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "pad: dim %d has low %lld, high %lld, interior %lld (interior must be >= 0)", (int)i,
                        (long long)lo, (long long)hi, (long long)in);
    }
    if (in > lim || lo < -lim || lo > lim || hi < -lim || hi > lim) {
      return optic_fail(OPTIC_ERR_OVERFLOW,
                        "pad: dim %d has low %lld, high %lld, interior %lld (each must be within +-2^60)", (int)i,
                        (long long)lo, (long long)hi, (long long)in);
    }
    /* Interior padding first: d + (d-1)*interior, then the edges. */
    int64_t inner = d == 0 ? 0 : d;
    if (d > 1 && in > 0) {
      if (d - 1 > lim / in) return optic_fail(OPTIC_ERR_OVERFLOW, "pad: dim %d overflows", (int)i);
      inner = d + (d - 1) * in;
    }
    int64_t size = inner + lo + hi;
    if (size < 0) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                        "pad: dim %d of size %lld padded by %lld/%lld (interior %lld) is negative", (int)i,
                        (long long)d, (long long)lo, (long long)hi, (long long)in);
    }
    s.dims[i] = size;
    ints[3 * i] = lo, ints[3 * i + 1] = hi, ints[3 * i + 2] = in;
  }
  if ((st = optic_shape_make(s.rank, s.dims, &s)) != OPTIC_OK) return st;
  optic_node_id ops[2] = {x, value};
  optic_instr_proto p = graph_proto(OPTIC_OP_PAD);
  p.type = optic_type_array(t->dtype, &s);
  p.operands = ops;
  p.n_operands = 2;
  p.ints = ints;
  p.n_ints = 3 * rank;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_reverse(optic_module_t *m, optic_comp_id comp, optic_node_id x, const int64_t *dims,
                                 int32_t ndims, const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "reverse", 0, &t);
  if (st != OPTIC_OK) return st;
  if (out == NULL || ndims < 0 || (ndims > 0 && dims == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "reverse: NULL argument");
  }
  if (ndims > t->shape.rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "reverse: %d dims for rank %d", (int)ndims, (int)t->shape.rank);
  }
  if ((st = check_dim_set("reverse", "dimensions", dims, ndims, t->shape.rank)) != OPTIC_OK) return st;
  return add_unary_layout(m, comp, OPTIC_OP_REVERSE, x, t->dtype, &t->shape, dims, ndims, name, out);
}
