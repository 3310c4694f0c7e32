/* Builders for structure and computation-calling ops: tuple,
 * get-tuple-element, call, reduce, map. Called computations are checked
 * against their call sites (parameter and root types), so a module that
 * builds is well-typed end to end. */
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"

optic_status optic_graph_tuple(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                               const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "tuple");
  if (st != OPTIC_OK) return st;
  if (out == NULL || n < 0 || (n > 0 && xs == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "tuple: NULL argument");
  optic_type *els = n ? malloc((size_t)n * sizeof *els) : NULL;
  if (n && els == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "tuple: out of memory");
  for (int32_t i = 0; i < n; i++) {
    if ((st = graph_check_operand(m, comp, xs[i], "tuple", i)) != OPTIC_OK) {
      free(els);
      return st;
    }
    els[i] = *optic_node_type(m, xs[i]); /* shallow: graph_add_instr deep-copies */
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_TUPLE);
  p.type = (optic_type){.dtype = OPTIC_DTYPE_INVALID, .tuple_size = n, .elements = els};
  p.operands = xs;
  p.n_operands = n;
  st = graph_add_instr(m, comp, &p, name, out);
  free(els);
  return st;
}

optic_status optic_graph_get_tuple_element(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t index,
                                           const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "get-tuple-element");
  if (st == OPTIC_OK) st = graph_check_operand(m, comp, x, "get-tuple-element", 0);
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "get-tuple-element: out is NULL");
  const optic_type *t = optic_node_type(m, x);
  if (!optic_type_is_tuple(t)) {
    char b[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "get-tuple-element: operand (%s) has array type %s, not a tuple",
                      optic_node_name(m, x), graph_type_str(t, b, sizeof b));
  }
  if (index < 0 || index >= t->tuple_size) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "get-tuple-element: index %lld is outside the %d-tuple",
                      (long long)index, (int)t->tuple_size);
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_GET_TUPLE_ELEMENT);
  p.type = t->elements[index];
  p.operands = &x;
  p.n_operands = 1;
  p.ints = &index;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status graph_check_callee(const optic_module_t *m, optic_comp_id comp, optic_comp_id callee, const char *op,
                                const optic_type *params, int32_t n) {
  optic_status st = graph_check_comp(m, callee, op);
  if (st != OPTIC_OK) return st;
  const char *cname = optic_computation_name(m, callee);
  if (callee == comp) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: computation '%s' calls itself", op, cname);
  if (optic_computation_root(m, callee) == OPTIC_NO_NODE) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: computation '%s' has no root", op, cname);
  }
  int32_t np = optic_computation_parameter_count(m, callee);
  if (np != n) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: computation '%s' takes %d parameters, %d given", op, cname,
                      (int)np, (int)n);
  }
  for (int32_t i = 0; i < n; i++) {
    optic_node_id pid = optic_computation_parameter(m, callee, i);
    if (pid == OPTIC_NO_NODE) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: computation '%s' has no parameter %d", op, cname, (int)i);
    }
    const optic_type *pt = optic_node_type(m, pid);
    if (!optic_type_equal(pt, &params[i])) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: parameter %d of '%s' has type %s but %s is passed", op, (int)i,
                        cname, graph_type_str(pt, b1, sizeof b1), graph_type_str(&params[i], b2, sizeof b2));
    }
  }
  return OPTIC_OK;
}

const optic_type *graph_root_type(const optic_module_t *m, optic_comp_id c) {
  return optic_node_type(m, optic_computation_root(m, c));
}

optic_status optic_graph_call(optic_module_t *m, optic_comp_id comp, optic_comp_id callee, const optic_node_id *xs,
                              int32_t n, const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "call");
  if (st != OPTIC_OK) return st;
  if (out == NULL || n < 0 || (n > 0 && xs == NULL))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "call: NULL argument");
  optic_type *ts = n ? malloc((size_t)n * sizeof *ts) : NULL;
  if (n && ts == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "call: out of memory");
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    st = graph_check_operand(m, comp, xs[i], "call", i);
    if (st == OPTIC_OK) ts[i] = *optic_node_type(m, xs[i]);
  }
  if (st == OPTIC_OK) st = graph_check_callee(m, comp, callee, "call", ts, n);
  free(ts);
  if (st != OPTIC_OK) return st;
  optic_instr_proto p = graph_proto(OPTIC_OP_CALL);
  p.type = *optic_node_type(m, optic_computation_root(m, callee));
  p.operands = xs;
  p.n_operands = n;
  p.calls = &callee;
  p.n_calls = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status graph_check_scalar_root(const optic_module_t *m, optic_comp_id callee, const char *op,
                                     const optic_dtype *dtypes, int32_t n) {
  const optic_type *rt = optic_node_type(m, optic_computation_root(m, callee));
  bool ok;
  if (n == 1) {
    ok = !optic_type_is_tuple(rt) && rt->shape.rank == 0 && rt->dtype == dtypes[0];
  } else {
    ok = optic_type_is_tuple(rt) && rt->tuple_size == n;
    for (int32_t i = 0; ok && i < n; i++) {
      ok = !optic_type_is_tuple(&rt->elements[i]) && rt->elements[i].shape.rank == 0 &&
           rt->elements[i].dtype == dtypes[i];
    }
  }
  if (!ok) {
    char b[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: computation '%s' returns %s, not %d scalar(s) of the input dtypes",
                      op, optic_computation_name(m, callee), graph_type_str(rt, b, sizeof b), (int)n);
  }
  return OPTIC_OK;
}

/* Shared by reduce and reduce-window: n inputs of one shape, n scalar inits
 * of the inputs' dtypes, and a combiner taking 2n scalars and returning n. */
static optic_status check_reduction(const optic_module_t *m, optic_comp_id comp, const char *op,
                                    const optic_node_id *inputs, const optic_node_id *inits, int32_t n,
                                    optic_comp_id to_apply, optic_dtype *dtypes, const optic_type **t0) {
  optic_status st = graph_check_comp(m, comp, op);
  if (st != OPTIC_OK) return st;
  if (inputs == NULL || inits == NULL || n < 1 || n > 64) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: needs 1 to 64 inputs with as many init values", op);
  }
  if ((st = graph_array_operand(m, comp, inputs[0], op, 0, t0)) != OPTIC_OK) return st;
  optic_type params[128];
  optic_shape scalar = {.rank = 0};
  for (int32_t i = 0; i < n; i++) {
    const optic_type *ti, *tz;
    if ((st = graph_array_operand(m, comp, inputs[i], op, i, &ti)) != OPTIC_OK) return st;
    if ((st = graph_array_operand(m, comp, inits[i], op, n + i, &tz)) != OPTIC_OK) return st;
    char b1[TYPE_BUF], b2[TYPE_BUF];
    if (!optic_shape_equal(&ti->shape, &(*t0)->shape)) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: input %d has type %s but input 0 has %s", op, (int)i,
                        graph_type_str(ti, b1, sizeof b1), graph_type_str(*t0, b2, sizeof b2));
    }
    if (tz->shape.rank != 0 || tz->dtype != ti->dtype) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: init value %d has type %s; it must be a %s scalar", op, (int)i,
                        graph_type_str(tz, b1, sizeof b1), optic_dtype_name(ti->dtype));
    }
    dtypes[i] = ti->dtype;
    params[i] = optic_type_array(ti->dtype, &scalar);
    params[n + i] = params[i];
  }
  if ((st = graph_check_callee(m, comp, to_apply, op, params, 2 * n)) != OPTIC_OK) return st;
  return graph_check_scalar_root(m, to_apply, op, dtypes, n);
}

/* Adds a reduce or reduce-window whose every output has shape s. */
static optic_status add_reduction(optic_module_t *m, optic_comp_id comp, optic_opcode opc, const optic_node_id *inputs,
                                  const optic_node_id *inits, int32_t n, const optic_dtype *dtypes,
                                  const optic_shape *s, const int64_t *ints, int32_t n_ints, optic_comp_id to_apply,
                                  const char *name, optic_node_id *out) {
  optic_type outs[64];
  for (int32_t i = 0; i < n; i++) outs[i] = optic_type_array(dtypes[i], s);
  optic_node_id ops[128];
  memcpy(ops, inputs, (size_t)n * sizeof *ops);
  memcpy(ops + n, inits, (size_t)n * sizeof *ops);
  optic_instr_proto p = graph_proto(opc);
  p.type = n == 1 ? outs[0] : (optic_type){.dtype = OPTIC_DTYPE_INVALID, .tuple_size = n, .elements = outs};
  p.operands = ops;
  p.n_operands = 2 * n;
  p.ints = ints;
  p.n_ints = n_ints;
  p.calls = &to_apply;
  p.n_calls = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_reduce(optic_module_t *m, optic_comp_id comp, const optic_node_id *inputs,
                                const optic_node_id *inits, int32_t n, const int64_t *dims, int32_t ndims,
                                optic_comp_id to_apply, const char *name, optic_node_id *out) {
  if (out == NULL || ndims < 0 || (ndims > 0 && dims == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "reduce: NULL argument");
  }
  optic_dtype dtypes[64];
  const optic_type *t0;
  optic_status st = check_reduction(m, comp, "reduce", inputs, inits, n, to_apply, dtypes, &t0);
  if (st != OPTIC_OK) return st;
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < ndims; i++) {
    if (dims[i] < 0 || dims[i] >= t0->shape.rank || reduced[dims[i]]) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "reduce: dimensions[%d] = %lld is out of range or repeated (rank %d)", (int)i,
                        (long long)dims[i], (int)t0->shape.rank);
    }
    reduced[dims[i]] = true;
  }
  optic_shape s = {.rank = 0};
  for (int32_t d = 0; d < t0->shape.rank; d++) {
    if (!reduced[d]) s.dims[s.rank++] = t0->shape.dims[d];
  }
  return add_reduction(m, comp, OPTIC_OP_REDUCE, inputs, inits, n, dtypes, &s, dims, ndims, to_apply, name, out);
}

optic_status optic_graph_reduce_window(optic_module_t *m, optic_comp_id comp, const optic_node_id *inputs,
                                       const optic_node_id *inits, int32_t n, const optic_window_dim *window,
                                       optic_comp_id to_apply, const char *name, optic_node_id *out) {
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "reduce-window: out is NULL");
  optic_dtype dtypes[64];
  const optic_type *t0;
  optic_status st = check_reduction(m, comp, "reduce-window", inputs, inits, n, to_apply, dtypes, &t0);
  if (st != OPTIC_OK) return st;
  int32_t rank = t0->shape.rank;
  if (rank > 0 && window == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "reduce-window: window is NULL");
  optic_shape s = {.rank = rank};
  int64_t ints[7 * OPTIC_MAX_RANK];
  for (int32_t d = 0; d < rank; d++) {
    if ((st = graph_window_output_size("reduce-window", d, t0->shape.dims[d], &window[d], &s.dims[d])) != OPTIC_OK) {
      return st;
    }
    const optic_window_dim *w = &window[d];
    int64_t *e = &ints[7 * d];
    e[0] = w->size, e[1] = w->stride, e[2] = w->pad_low, e[3] = w->pad_high;
    e[4] = w->base_dilation, e[5] = w->window_dilation, e[6] = w->reversal;
  }
  return add_reduction(m, comp, OPTIC_OP_REDUCE_WINDOW, inputs, inits, n, dtypes, &s, ints, 7 * rank, to_apply, name,
                       out);
}

optic_status optic_graph_map(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                             optic_comp_id to_apply, const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "map");
  if (st != OPTIC_OK) return st;
  if (out == NULL || xs == NULL || n < 1 || n > 64)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "map: needs 1 to 64 operands");
  const optic_type *t0;
  if ((st = graph_array_operand(m, comp, xs[0], "map", 0, &t0)) != OPTIC_OK) return st;
  optic_type params[64];
  optic_shape scalar = {.rank = 0};
  for (int32_t i = 0; i < n; i++) {
    const optic_type *ti;
    if ((st = graph_array_operand(m, comp, xs[i], "map", i, &ti)) != OPTIC_OK) return st;
    if (!optic_shape_equal(&ti->shape, &t0->shape)) {
      char b1[TYPE_BUF], b2[TYPE_BUF];
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "map: operand %d has type %s but operand 0 has %s", (int)i,
                        graph_type_str(ti, b1, sizeof b1), graph_type_str(t0, b2, sizeof b2));
    }
    params[i] = optic_type_array(ti->dtype, &scalar);
  }
  if ((st = graph_check_callee(m, comp, to_apply, "map", params, n)) != OPTIC_OK) return st;
  const optic_type *rt = optic_node_type(m, optic_computation_root(m, to_apply));
  if (optic_type_is_tuple(rt) || rt->shape.rank != 0) {
    char b[TYPE_BUF];
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "map: computation '%s' returns %s, not a scalar",
                      optic_computation_name(m, to_apply), graph_type_str(rt, b, sizeof b));
  }
  int64_t dims[OPTIC_MAX_RANK];
  for (int32_t d = 0; d < t0->shape.rank; d++) dims[d] = d;
  optic_instr_proto p = graph_proto(OPTIC_OP_MAP);
  p.type = optic_type_array(rt->dtype, &t0->shape);
  p.operands = xs;
  p.n_operands = n;
  p.ints = dims;
  p.n_ints = t0->shape.rank;
  p.calls = &to_apply;
  p.n_calls = 1;
  return graph_add_instr(m, comp, &p, name, out);
}
