/* Builders for the collectives beyond all-reduce (all-gather,
 * reduce-scatter, collective-permute) and for custom-call. optic runs
 * single-replica programs: a collective over one replica is the identity
 * (or, for collective-permute, the identity when replica 0 sends to itself
 * and zeros when nobody sends to it); over more replicas it parses, prints,
 * costs and compiles, and running it is UNSUPPORTED. A custom-call's target
 * is kept as text; optic runs none. */
#include <string.h>

#include "graph/internal.h"

bool graph_opcode_has_effect(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_ALL_REDUCE:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE:
    case OPTIC_OP_CUSTOM_CALL:
    case OPTIC_OP_INFEED:
    case OPTIC_OP_OUTFEED: return true;
    default: return false;
  }
}

/* all-gather (gather = true) multiplies dim by shards; reduce-scatter divides it. */
static optic_status shard_op(optic_module_t *m, optic_comp_id comp, optic_opcode op, optic_node_id x, int64_t dim,
                             int64_t shards, const optic_comp_id *to_apply, const char *name, optic_node_id *out) {
  const char *opn = optic_opcode_name(op);
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, opn, 0, &t);
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: out is NULL", opn);
  if (dim < 0 || dim >= t->shape.rank) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: dimension %lld is outside the rank %d", opn, (long long)dim,
                      (int)t->shape.rank);
  }
  if (shards < 1 || shards > 65536) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: %lld replicas per group", opn, (long long)shards);
  }
  optic_shape s = t->shape;
  if (op == OPTIC_OP_ALL_GATHER) {
    s.dims[dim] *= shards;
  } else {
    if (s.dims[dim] % shards) {
      return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: dim %lld of size %lld does not split into %lld shards", opn,
                        (long long)dim, (long long)s.dims[dim], (long long)shards);
    }
    s.dims[dim] /= shards;
    const optic_type pt[2] = {optic_type_array(t->dtype, &(optic_shape){.rank = 0}),
                              optic_type_array(t->dtype, &(optic_shape){.rank = 0})};
    if ((st = graph_check_callee(m, comp, *to_apply, opn, pt, 2)) != OPTIC_OK ||
        (st = graph_check_scalar_root(m, *to_apply, opn, &t->dtype, 1)) != OPTIC_OK) {
      return st;
    }
  }
  int64_t ints[2] = {dim, shards};
  optic_instr_proto p = graph_proto(op);
  if ((st = optic_shape_make(s.rank, s.dims, &p.type.shape)) != OPTIC_OK) return st;
  p.type.dtype = t->dtype;
  p.operands = &x;
  p.n_operands = 1;
  p.ints = ints;
  p.n_ints = 2;
  p.calls = to_apply;
  p.n_calls = to_apply ? 1 : 0;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_all_gather(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t dimension,
                                    int64_t shard_count, const char *name, optic_node_id *out) {
  return shard_op(m, comp, OPTIC_OP_ALL_GATHER, x, dimension, shard_count, NULL, name, out);
}

optic_status optic_graph_reduce_scatter(optic_module_t *m, optic_comp_id comp, optic_node_id x, int64_t dimension,
                                        int64_t shard_count, optic_comp_id to_apply, const char *name,
                                        optic_node_id *out) {
  return shard_op(m, comp, OPTIC_OP_REDUCE_SCATTER, x, dimension, shard_count, &to_apply, name, out);
}

optic_status optic_graph_collective_permute(optic_module_t *m, optic_comp_id comp, optic_node_id x,
                                            const int64_t *pairs, int32_t n_pairs, const char *name,
                                            optic_node_id *out) {
  const optic_type *t;
  optic_status st = graph_array_operand(m, comp, x, "collective-permute", 0, &t);
  if (st != OPTIC_OK) return st;
  if (out == NULL || n_pairs < 0 || n_pairs > 65536 || (n_pairs && pairs == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "collective-permute: NULL or bad argument");
  }
  for (int32_t i = 0; i < 2 * n_pairs; i++) {
    if (pairs[i] < 0 || pairs[i] >= 65536) {
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "collective-permute: replica id %lld is outside [0, 65536)",
                        (long long)pairs[i]);
    }
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_COLLECTIVE_PERMUTE);
  p.type = *t;
  p.operands = &x;
  p.n_operands = 1;
  p.ints = pairs;
  p.n_ints = 2 * n_pairs;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_custom_call(optic_module_t *m, optic_comp_id comp, const optic_node_id *xs, int32_t n,
                                     const optic_type *result, const char *target, const char *name,
                                     optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "custom-call");
  if (st != OPTIC_OK) return st;
  if (out == NULL || result == NULL || target == NULL || n < 0 || (n > 0 && xs == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "custom-call: NULL or bad argument");
  }
  for (int32_t i = 0; i < n; i++) {
    if ((st = graph_check_operand(m, comp, xs[i], "custom-call", i)) != OPTIC_OK) return st;
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_CUSTOM_CALL);
  p.type = *result;
  p.operands = xs;
  p.n_operands = n;
  p.data = target; /* the target's name, with its terminating NUL */
  p.data_bytes = strlen(target) + 1;
  return graph_add_instr(m, comp, &p, name, out);
}

const char *optic_node_custom_call_target(const optic_module_t *m, optic_node_id id) {
  const optic_instr *in = graph_instr(m, id);
  return in && in->op == OPTIC_OP_CUSTOM_CALL && in->data ? (const char *)in->data : NULL;
}
