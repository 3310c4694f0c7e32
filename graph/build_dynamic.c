/* Builders for ops whose positions are data: dynamic-slice,
 * dynamic-update-slice, and the identity opt-barrier. Shape inference
 * follows XLA's ShapeInference (start indices are integer scalars, one per
 * operand dimension, or XLA's older single rank-1 index array). */
#include <string.h>

#include "graph/gather_scatter.h"
#include "graph/internal.h"
#include "kernels/elem.h"

/* The start-index operands: n scalars of one integer dtype (n = rank), or
 * one integer array of shape [rank]. */
static optic_status check_starts(const optic_module_t *m, optic_comp_id comp, const char *op, int32_t first,
                                 const optic_node_id *starts, int32_t n, int32_t rank) {
  const optic_type *t0 = NULL;
  int bits;
  bool sg;
  for (int32_t i = 0; i < n; i++) {
    const optic_type *t;
    optic_status st = graph_array_operand(m, comp, starts[i], op, first + i, &t);
    if (st != OPTIC_OK) return st;
    if (!optic_elem_dtype_int_info(t->dtype, &bits, &sg)) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: start index operand %d has dtype %s; an integer is needed", op,
                        (int)(first + i), optic_dtype_name(t->dtype));
    }
    if (t0 && t->dtype != t0->dtype) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: start indices mix dtypes %s and %s", op,
                        optic_dtype_name(t0->dtype), optic_dtype_name(t->dtype));
    }
    t0 = t;
    bool vector_form = n == 1 && t->shape.rank == 1 && t->shape.dims[0] == rank;
    if (t->shape.rank != 0 && !vector_form) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: start index operand %d has rank %d; scalars are needed", op,
                        (int)(first + i), (int)t->shape.rank);
    }
    if (vector_form) return OPTIC_OK;
  }
  if (n != rank) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: %d start indices for an operand of rank %d", op, (int)n,
                      (int)rank);
  }
  return OPTIC_OK;
}

optic_status optic_graph_dynamic_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                       const optic_node_id *starts, int32_t n_starts, const int64_t *sizes,
                                       const char *name, optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "dynamic-slice", 0, &t);
  if (st != OPTIC_OK) return st;
  if (out == NULL || (n_starts > 0 && (starts == NULL || sizes == NULL)) || n_starts < 0 || n_starts > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dynamic-slice: NULL or bad argument");
  }
  int32_t r = t->shape.rank;
  if ((st = check_starts(m, comp, "dynamic-slice", 1, starts, n_starts, r)) != OPTIC_OK) return st;
  optic_shape s = {.rank = r};
  for (int32_t d = 0; d < r; d++) {
    if (sizes[d] < 0 || sizes[d] > t->shape.dims[d]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "dynamic-slice: slice size %lld of dim %d is outside [0, %lld]",
                        (long long)sizes[d], (int)d, (long long)t->shape.dims[d]);
    }
    s.dims[d] = sizes[d];
  }
  optic_node_id ops[1 + OPTIC_MAX_RANK];
  ops[0] = x;
  if (n_starts) memcpy(ops + 1, starts, (size_t)n_starts * sizeof *ops);
  optic_instr_proto p = graph_proto(OPTIC_OP_DYNAMIC_SLICE);
  p.type = optic_type_array(t->dtype, &s);
  p.operands = ops;
  p.n_operands = 1 + n_starts;
  p.ints = sizes;
  p.n_ints = r;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_dynamic_update_slice(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                              optic_node_id update, const optic_node_id *starts, int32_t n_starts,
                                              const char *name, optic_node_id *out) {
  const optic_type *t, *u;
  optic_status st = graph_array_operand(m, comp, x, "dynamic-update-slice", 0, &t);
  if (st == OPTIC_OK) st = graph_array_operand(m, comp, update, "dynamic-update-slice", 1, &u);
  if (st != OPTIC_OK) return st;
  if (out == NULL || (n_starts > 0 && starts == NULL) || n_starts < 0 || n_starts > OPTIC_MAX_RANK) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "dynamic-update-slice: NULL or bad argument");
  }
  int32_t r = t->shape.rank;
  if ((st = check_starts(m, comp, "dynamic-update-slice", 2, starts, n_starts, r)) != OPTIC_OK) return st;
  if (u->dtype != t->dtype || u->shape.rank != r) {
    char b1[TYPE_BUF], b2[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "dynamic-update-slice: update %s must have the dtype and rank of %s",
                      graph_type_str(u, b1, sizeof b1), graph_type_str(t, b2, sizeof b2));
  }
  for (int32_t d = 0; d < r; d++) {
    if (u->shape.dims[d] > t->shape.dims[d]) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "dynamic-update-slice: update dim %d has size %lld > operand's %lld",
                        (int)d, (long long)u->shape.dims[d], (long long)t->shape.dims[d]);
    }
  }
  optic_node_id ops[2 + OPTIC_MAX_RANK];
  ops[0] = x, ops[1] = update;
  if (n_starts) memcpy(ops + 2, starts, (size_t)n_starts * sizeof *ops);
  optic_instr_proto p = graph_proto(OPTIC_OP_DYNAMIC_UPDATE_SLICE);
  p.type = *t;
  p.operands = ops;
  p.n_operands = 2 + n_starts;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_opt_barrier(optic_module_t *m, optic_comp_id comp, optic_node_id x, const char *name,
                                     optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "opt-barrier");
  if (st == OPTIC_OK) st = graph_check_operand(m, comp, x, "opt-barrier", 0);
  if (st != OPTIC_OK) return st;
  optic_instr_proto p = graph_proto(OPTIC_OP_OPT_BARRIER);
  p.type = *optic_node_type(m, x);
  p.operands = &x;
  p.n_operands = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

/* XLA's clamp: start = min(max(index, 0), operand_dim - window_dim). */
void graph_dynamic_starts(const void *const *index, int32_t n_index, optic_dtype dt, int32_t rank,
                          const int64_t *operand_dims, const int64_t *window_dims, int64_t *start) {
  int bits = 0;
  bool is_signed = false;
  optic_elem_dtype_int_info(dt, &bits, &is_signed);
  size_t es = optic_dtype_size(dt);
  for (int32_t d = 0; d < rank; d++) {
    /* one array of [rank] (or rank 1 either way): element d; else scalar d */
    const unsigned char *p = n_index == 1 ? (const unsigned char *)index[0] + (size_t)d * es : index[d];
    uint64_t raw = 0;
    memcpy(&raw, p, es);
    int64_t v;
    if (is_signed) {
      v = bits < 64 && ((raw >> (bits - 1)) & 1u) ? (int64_t)(raw | ~((((uint64_t)1) << bits) - 1)) : (int64_t)raw;
    } else {
      v = raw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)raw;
    }
    int64_t hi = operand_dims[d] - window_dims[d];
    start[d] = v < 0 ? 0 : v > hi ? hi : v;
  }
}

optic_status optic_graph_sort(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                              int64_t dimension, bool is_stable, optic_comp_id comparator, const char *name,
                              optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "sort");
  if (st != OPTIC_OK) return st;
  if (xs == NULL || out == NULL || n < 1 || n > 32) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "sort: 1 to 32 operands are needed, %d given", (int)n);
  }
  const optic_type *t0 = NULL;
  optic_type els[32], params[64];
  optic_shape scalar = {.rank = 0};
  for (int32_t i = 0; i < n; i++) {
    const optic_type *t;
    if ((st = graph_array_operand(m, comp, xs[i], "sort", i, &t)) != OPTIC_OK) return st;
    if (t0 && !optic_shape_equal(&t->shape, &t0->shape)) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "sort: operand %d has type %s but operand 0 has %s", (int)i,
                        graph_type_str(t, b1, sizeof b1), graph_type_str(t0, b2, sizeof b2));
    }
    t0 = t0 ? t0 : t;
    els[i] = *t;
    params[2 * i] = params[2 * i + 1] = optic_type_array(t->dtype, &scalar);
  }
  if (dimension < 0 || dimension >= t0->shape.rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "sort: dimension %lld is outside the rank %d", (long long)dimension,
                      (int)t0->shape.rank);
  }
  const optic_dtype pred = OPTIC_PRED;
  if ((st = graph_check_callee(m, comp, comparator, "sort", params, 2 * n)) != OPTIC_OK ||
      (st = graph_check_scalar_root(m, comparator, "sort", &pred, 1)) != OPTIC_OK) {
    return st;
  }
  int64_t ints[2] = {dimension, is_stable ? 1 : 0};
  optic_instr_proto p = graph_proto(OPTIC_OP_SORT);
  if (n == 1) {
    p.type = *t0;
  } else {
    p.type.dtype = OPTIC_DTYPE_INVALID;
    p.type.tuple_size = n;
    p.type.elements = els;
  }
  p.operands = xs;
  p.n_operands = n;
  p.ints = ints;
  p.n_ints = 2;
  p.calls = &comparator;
  p.n_calls = 1;
  return graph_add_instr(m, comp, &p, name, out);
}
