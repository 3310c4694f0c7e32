/* Reference evaluation of dynamic-slice, dynamic-update-slice and
 * opt-barrier: plain index loops with XLA's start clamping
 * (graph_dynamic_starts), so no read or write ever leaves an operand. */
#include <stdlib.h>
#include <string.h>

#include "graph/evaluate_internal.h"
#include "graph/gather_scatter.h"

/* Clamped starts of in's window (shape `window`) from its index operands. */
static void starts_of(const optic_instr *in, const optic_literal_t *const *ops, int32_t first, const int64_t *window,
                      int64_t *start) {
  const void *idx[OPTIC_MAX_RANK];
  int32_t n = in->n_operands - first;
  for (int32_t i = 0; i < n && i < OPTIC_MAX_RANK; i++) idx[i] = ops[first + i]->data;
  const optic_type *x = &ops[0]->type;
  graph_dynamic_starts(idx, n, ops[first]->type.dtype, x->shape.rank, x->shape.dims, window, start);
}

static size_t offset_of(int32_t rank, const int64_t *dims, const int64_t *idx) {
  size_t off = 0;
  for (int32_t d = 0; d < rank; d++) off = off * (size_t)dims[d] + (size_t)idx[d];
  return off;
}

/* Copies the window at start of big (shape big_dims) to or from small. */
static void copy_window(size_t es, int32_t rank, const int64_t *big_dims, const int64_t *start, const int64_t *win,
                        unsigned char *big, unsigned char *small, bool to_small) {
  for (int32_t d = 0; d < rank; d++) {
    if (win[d] == 0) return;
  }
  int64_t idx[OPTIC_MAX_RANK] = {0}, at[OPTIC_MAX_RANK];
  size_t k = 0;
  do {
    for (int32_t d = 0; d < rank; d++) at[d] = start[d] + idx[d];
    unsigned char *b = big + offset_of(rank, big_dims, at) * es;
    if (to_small) memcpy(small + k * es, b, es);
    else memcpy(b, small + k * es, es);
    k++;
  } while (eval_next_index(rank, win, idx));
}

/* Single-replica collectives (see optic_graph_all_gather): the identity, or
 * zeros for a collective-permute nobody sends to replica 0. */
static optic_status eval_collective(const optic_instr *in, const optic_literal_t *const *ops, optic_literal_t **out) {
  const char *why = NULL;
  if (graph_opcode_is_host_transfer(in->op)) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s '%s': optic has no host transfer queue to %s",
                      optic_opcode_name(in->op), in->name, in->op == OPTIC_OP_INFEED ? "read from" : "write to");
  }
  if (in->op == OPTIC_OP_CUSTOM_CALL) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "custom-call: target '%.64s' is not known to optic",
                      (const char *)in->data);
  }
  if (in->op == OPTIC_OP_COLLECTIVE_PERMUTE) {
    bool self = false, other = false;
    for (int32_t i = 0; i + 1 < in->n_ints; i += 2) {
      if (in->ints[i + 1] != 0) continue;
      if (in->ints[i] == 0) self = true;
      else other = true;
    }
    if (other) why = "another replica sends to replica 0";
    else if (!self) return lit_new(&in->type, out); /* no source: zeros */
  } else if (in->ints[1] != 1) {
    why = "it spans more than one replica";
  }
  if (why) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "%s: %s; optic evaluates and runs single-replica programs",
                      optic_opcode_name(in->op), why);
  }
  return lit_clone(ops[0], out);
}

optic_status eval_dynamic(eval_ctx *ctx, const optic_instr *in, const optic_literal_t *const *ops,
                          optic_literal_t **out) {
  if (in->op == OPTIC_OP_OPT_BARRIER) return lit_clone(ops[0], out);
  if (in->op == OPTIC_OP_AFTER_ALL || in->op == OPTIC_OP_REPLICA_ID || in->op == OPTIC_OP_PARTITION_ID) {
    return lit_new(&in->type, out); /* an empty token; replica and partition 0 */
  }
  if (in->op == OPTIC_OP_RNG_BIT_GENERATOR) {
    return optic_fail(OPTIC_ERR_UNSUPPORTED, "rng-bit-generator '%s': optic does not reproduce XLA's %s bit stream",
                      in->name, in->ints[0] == OPTIC_RNG_THREE_FRY ? "three-fry" : "philox");
  }
  if (graph_opcode_has_effect(in->op)) return eval_collective(in, ops, out);
  optic_literal_t *y;
  optic_status st = lit_new(&in->type, &y);
  if (st != OPTIC_OK) return st;
  if (in->op == OPTIC_OP_BATCH_NORM_TRAINING || in->op == OPTIC_OP_BATCH_NORM_INFERENCE ||
      in->op == OPTIC_OP_BATCH_NORM_GRAD) {
    const optic_shape *xs = &ops[0]->type.shape;
    double *acc = malloc(GRAPH_BATCH_NORM_SCRATCH(xs->dims[in->ints[0]] + 1) * sizeof *acc);
    if (acc == NULL) {
      lit_free(y);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "%s: out of memory", optic_opcode_name(in->op));
    }
    const void *ins[5];
    void *outs[3];
    for (int32_t k = 0; k < in->n_operands; k++) ins[k] = ops[k]->data;
    for (int32_t k = 0; k < 3; k++)
      outs[k] = optic_type_is_tuple(&y->type) ? y->elements[k]->data : (k ? NULL : y->data);
    uint32_t eb = (uint32_t)in->ints[1];
    float eps;
    memcpy(&eps, &eb, 4);
    graph_batch_norm_run(in->op, ops[0]->type.dtype, xs, in->ints[0], eps, ins, outs, acc);
    free(acc);
    *out = y;
    return OPTIC_OK;
  }
  if (in->op == OPTIC_OP_TOPK) {
    const optic_shape *xs = &ops[0]->type.shape;
    int64_t len = xs->dims[xs->rank - 1];
    int64_t *scratch = malloc(2 * (size_t)(len > 0 ? len : 1) * sizeof *scratch);
    if (scratch == NULL) {
      lit_free(y);
      return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "topk: out of memory");
    }
    size_t rows = len ? lit_elements(ops[0]) / (size_t)len : 0;
    st = graph_topk_run(ops[0]->type.dtype, xs, ops[0]->data, in->ints[0], in->ints[1] != 0, y->elements[0]->data,
                        y->elements[1]->data, 0, rows, scratch);
    free(scratch);
    if (st != OPTIC_OK) {
      lit_free(y);
      return st;
    }
    *out = y;
    return OPTIC_OK;
  }
  if (in->op == OPTIC_OP_GATHER) {
    optic_gather_dims g;
    optic_node_gather_dims(ctx->m, (optic_node_id)(in - ctx->m->instrs), &g);
    graph_index_array ix = {ops[1]->type.dtype, &ops[1]->type.shape, ops[1]->data};
    graph_gather_run(&g, optic_dtype_size(y->type.dtype), &ops[0]->type.shape, ops[0]->data, &ix, &y->type.shape,
                     y->data, 0, lit_elements(y));
    *out = y;
    return OPTIC_OK;
  }
  const optic_literal_t *x = ops[0];
  int32_t r = x->type.shape.rank;
  size_t es = optic_dtype_size(x->type.dtype);
  int64_t start[OPTIC_MAX_RANK];
  if (in->op == OPTIC_OP_DYNAMIC_SLICE) {
    starts_of(in, ops, 1, in->type.shape.dims, start);
    copy_window(es, r, x->type.shape.dims, start, in->type.shape.dims, x->data, y->data, true);
  } else {
    const optic_literal_t *u = ops[1];
    if (x->bytes) memcpy(y->data, x->data, x->bytes);
    starts_of(in, ops, 2, u->type.shape.dims, start);
    copy_window(es, r, x->type.shape.dims, start, u->type.shape.dims, y->data, u->data, false);
  }
  *out = y;
  return OPTIC_OK;
}
