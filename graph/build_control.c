/* Builders for control flow and multi-core ops: while, conditional, fusion,
 * all-reduce; and the window arithmetic shared by reduce-window and
 * convolution. Called computations are checked against their call sites. */
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"

optic_status graph_window_output_size(const char *op, int32_t dim, int64_t in, const optic_window_dim *w,
                                      int64_t *out) {
  const int64_t lim = INT64_C(1) << 40;
  if (w->size < 1 || w->stride < 1 || w->base_dilation < 1 || w->window_dilation < 1 || w->size > lim ||
      w->stride > lim || w->base_dilation > lim || w->window_dilation > lim || w->pad_low < -lim || w->pad_low > lim ||
      w->pad_high < -lim || w->pad_high > lim || in > lim) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "%s: window dim %d has size %lld stride %lld pad %lld_%lld dilations %lld/%lld; sizes, strides "
                      "and dilations must be in [1, 2^40], pads in [-2^40, 2^40]",
                      op, (int)dim, (long long)w->size, (long long)w->stride, (long long)w->pad_low,
                      (long long)w->pad_high, (long long)w->base_dilation, (long long)w->window_dilation);
  }
  int64_t dilated_in = in == 0 ? 0 : (in - 1) * w->base_dilation + 1;
  int64_t padded = dilated_in + w->pad_low + w->pad_high;
  int64_t dilated_window = (w->size - 1) * w->window_dilation + 1;
  *out = padded < dilated_window ? 0 : (padded - dilated_window) / w->stride + 1;
  return OPTIC_OK;
}

optic_status optic_graph_while(optic_module_t *m, optic_comp_id comp, optic_node_id init, optic_comp_id condition,
                               optic_comp_id body, const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "while");
  if (st == OPTIC_OK) st = graph_check_operand(m, comp, init, "while", 0);
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "while: out is NULL");
  const optic_type *t = optic_node_type(m, init);
  if ((st = graph_check_callee(m, comp, condition, "while condition", t, 1)) != OPTIC_OK) return st;
  if ((st = graph_check_callee(m, comp, body, "while body", t, 1)) != OPTIC_OK) return st;
  const optic_type *ct = graph_root_type(m, condition), *bt = graph_root_type(m, body);
  char b1[TYPE_BUF], b2[TYPE_BUF];
  if (optic_type_is_tuple(ct) || ct->dtype != OPTIC_PRED || ct->shape.rank != 0) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "while: condition '%s' returns %s, not pred[]",
                      optic_computation_name(m, condition), graph_type_str(ct, b1, sizeof b1));
  }
  if (!optic_type_equal(bt, t)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "while: body '%s' returns %s but the loop state is %s",
                      optic_computation_name(m, body), graph_type_str(bt, b1, sizeof b1),
                      graph_type_str(t, b2, sizeof b2));
  }
  optic_comp_id calls[2] = {condition, body};
  optic_instr_proto p = graph_proto(OPTIC_OP_WHILE);
  p.type = *t;
  p.operands = &init;
  p.n_operands = 1;
  p.calls = calls;
  p.n_calls = 2;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_conditional(optic_module_t *m, optic_comp_id comp, optic_node_id selector,
                                     const optic_node_id *operands, const optic_comp_id *branches, int32_t n,
                                     const char *name, optic_node_id *out) {
  const optic_type *ts;
  optic_status st = graph_array_operand(m, comp, selector, "conditional", 0, &ts);
  if (st != OPTIC_OK) return st;
  if (out == NULL || operands == NULL || branches == NULL || n < 1 || n > OPTIC_MAX_CALLS) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "conditional: needs 1 to %d branches", OPTIC_MAX_CALLS);
  }
  bool is_pred = ts->dtype == OPTIC_PRED;
  char b1[TYPE_BUF], b2[TYPE_BUF];
  if (ts->shape.rank != 0 || (!is_pred && ts->dtype != OPTIC_S32) || (is_pred && n != 2)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "conditional: selector has type %s with %d branches; it must be pred[] with 2 or s32[]",
                      graph_type_str(ts, b1, sizeof b1), (int)n);
  }
  optic_node_id ops[OPTIC_MAX_CALLS + 1];
  ops[0] = selector;
  const optic_type *result = NULL;
  for (int32_t i = 0; i < n; i++) {
    if ((st = graph_check_operand(m, comp, operands[i], "conditional", i + 1)) != OPTIC_OK) return st;
    ops[i + 1] = operands[i];
    if ((st = graph_check_callee(m, comp, branches[i], "conditional", optic_node_type(m, operands[i]), 1)) !=
        OPTIC_OK) {
      return st;
    }
    const optic_type *rt = graph_root_type(m, branches[i]);
    if (result && !optic_type_equal(rt, result)) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "conditional: branch %d returns %s but branch 0 returns %s", (int)i,
                        graph_type_str(rt, b1, sizeof b1), graph_type_str(result, b2, sizeof b2));
    }
    result = rt;
  }
  int64_t pred_flag = is_pred;
  optic_instr_proto p = graph_proto(OPTIC_OP_CONDITIONAL);
  p.type = *result;
  p.operands = ops;
  p.n_operands = n + 1;
  p.calls = branches;
  p.n_calls = n;
  p.ints = &pred_flag;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_fusion(optic_module_t *m, optic_comp_id comp, optic_fusion_kind kind, const optic_node_id *xs,
                                int32_t n, optic_comp_id fused, const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "fusion");
  if (st != OPTIC_OK) return st;
  if (out == NULL || n < 0 || (n > 0 && xs == NULL) || (unsigned)kind > OPTIC_FUSION_CUSTOM) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "fusion: bad operands or kind");
  }
  optic_type *ts = n ? malloc((size_t)n * sizeof *ts) : NULL;
  if (n && ts == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "fusion: out of memory");
  for (int32_t i = 0; i < n && st == OPTIC_OK; i++) {
    st = graph_check_operand(m, comp, xs[i], "fusion", i);
    if (st == OPTIC_OK) ts[i] = *optic_node_type(m, xs[i]);
  }
  if (st == OPTIC_OK) st = graph_check_callee(m, comp, fused, "fusion", ts, n);
  free(ts);
  if (st != OPTIC_OK) return st;
  int64_t k = kind;
  optic_instr_proto p = graph_proto(OPTIC_OP_FUSION);
  p.type = *graph_root_type(m, fused);
  p.operands = xs;
  p.n_operands = n;
  p.calls = &fused;
  p.n_calls = 1;
  p.ints = &k;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_all_reduce(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                    optic_comp_id to_apply, const int32_t *replica_ids, const int32_t *group_sizes,
                                    int32_t n_groups, const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "all-reduce");
  if (st != OPTIC_OK) return st;
  if (out == NULL || xs == NULL || n < 1 || n > 64 || n_groups < 0 || n_groups > 4096 ||
      (n_groups > 0 && (replica_ids == NULL || group_sizes == NULL))) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "all-reduce: needs 1 to 64 operands and valid replica groups");
  }
  optic_type outs[64];
  optic_shape scalar = {.rank = 0};
  for (int32_t i = 0; i < n; i++) {
    const optic_type *t;
    if ((st = graph_array_operand(m, comp, xs[i], "all-reduce", i, &t)) != OPTIC_OK) return st;
    outs[i] = *t;
    optic_type params[2] = {optic_type_array(t->dtype, &scalar), optic_type_array(t->dtype, &scalar)};
    if ((st = graph_check_callee(m, comp, to_apply, "all-reduce", params, 2)) != OPTIC_OK) return st;
    if ((st = graph_check_scalar_root(m, to_apply, "all-reduce", &t->dtype, 1)) != OPTIC_OK) return st;
  }
  int64_t total = 0;
  for (int32_t g = 0; g < n_groups; g++) {
    if (group_sizes[g] < 1 || total + group_sizes[g] > 65536) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "all-reduce: replica group %d has size %d", (int)g,
                        (int)group_sizes[g]);
    }
    total += group_sizes[g];
  }
  unsigned char seen[65536 / 8] = {0};
  for (int64_t i = 0; i < total; i++) {
    int32_t id = replica_ids[i];
    if (id < 0 || id >= 65536 || (seen[id / 8] >> (id % 8)) & 1) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "all-reduce: replica id %d is outside [0, 65536) or in two groups",
                        (int)id);
    }
    seen[id / 8] |= (unsigned char)(1u << (id % 8));
  }
  int64_t *ints = malloc((size_t)(1 + n_groups + total) * sizeof *ints);
  if (ints == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "all-reduce: out of memory");
  ints[0] = n_groups;
  for (int32_t g = 0; g < n_groups; g++) ints[1 + g] = group_sizes[g];
  for (int64_t i = 0; i < total; i++) ints[1 + n_groups + i] = replica_ids[i];
  optic_instr_proto p = graph_proto(OPTIC_OP_ALL_REDUCE);
  p.type = n == 1 ? outs[0] : (optic_type){.dtype = OPTIC_DTYPE_INVALID, .tuple_size = n, .elements = outs};
  p.operands = xs;
  p.n_operands = n;
  p.calls = &to_apply;
  p.n_calls = 1;
  p.ints = ints;
  p.n_ints = (int32_t)(1 + n_groups + total);
  st = graph_add_instr(m, comp, &p, name, out);
  free(ints);
  return st;
}
