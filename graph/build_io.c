/* Builders for the token and host-transfer instructions (after-all,
 * infeed, outfeed) and for rng-bit-generator, with XLA's shape rules.
 * replica-id and partition-id are 0 (one replica, one partition).
 * after-all runs as nothing; infeed and outfeed need a host transfer queue
 * and rng-bit-generator XLA's exact bit streams, which optic does not have:
 * they parse, print, cost and compile, and evaluating or running them is
 * UNSUPPORTED (graph/evaluate_dynamic.c, exec/bind.c). */
#include "graph/internal.h"

static optic_status token_operand(const optic_module_t *m, optic_comp_id comp, optic_node_id id, const char *op,
                                  int32_t index) {
  optic_status st = graph_check_operand(m, comp, id, op, index);
  if (st != OPTIC_OK) return st;
  const optic_type *t = optic_node_type(m, id);
  if (optic_type_is_tuple(t) || t->dtype != OPTIC_TOKEN) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: operand %d (%s) must be a token, not %s", op, (int)index,
                      optic_node_name(m, id), optic_type_is_tuple(t) ? "a tuple" : optic_dtype_name(t->dtype));
  }
  return OPTIC_OK;
}

static optic_type token_type(void) { return optic_type_array(OPTIC_TOKEN, &(optic_shape){.rank = 0}); }

static bool holds_token(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return t->dtype == OPTIC_TOKEN;
  for (int32_t i = 0; i < t->tuple_size; i++) {
    if (holds_token(&t->elements[i])) return true;
  }
  return false;
}

bool graph_opcode_is_host_transfer(optic_opcode op) { return op == OPTIC_OP_INFEED || op == OPTIC_OP_OUTFEED; }

optic_status optic_graph_after_all(optic_module_t *m, optic_comp_id comp, const optic_node_id *tokens, int32_t n,
                                   const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "after-all");
  if (st != OPTIC_OK) return st;
  if (out == NULL || n < 0 || (n > 0 && tokens == NULL)) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "after-all: NULL or bad argument");
  }
  for (int32_t i = 0; i < n; i++) {
    if ((st = token_operand(m, comp, tokens[i], "after-all", i)) != OPTIC_OK) return st;
  }
  optic_instr_proto p = graph_proto(OPTIC_OP_AFTER_ALL);
  p.type = token_type();
  p.operands = tokens;
  p.n_operands = n;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_replica_id(optic_module_t *m, optic_comp_id comp, bool partition, const char *name,
                                    optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, partition ? "partition-id" : "replica-id");
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "replica-id: out is NULL");
  optic_instr_proto p = graph_proto(partition ? OPTIC_OP_PARTITION_ID : OPTIC_OP_REPLICA_ID);
  p.type = optic_type_array(OPTIC_U32, &(optic_shape){.rank = 0});
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_infeed(optic_module_t *m, optic_comp_id comp, optic_node_id token, const optic_type *data,
                                const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "infeed");
  if (st != OPTIC_OK) return st;
  if (out == NULL || data == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "infeed: NULL argument");
  if ((st = token_operand(m, comp, token, "infeed", 0)) != OPTIC_OK) return st;
  if (holds_token(data)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "infeed: the data shape holds a token; XLA's infeed result is "
                      "(data, token[]) with the data free of tokens");
  }
  optic_type els[2] = {*data, token_type()};
  optic_instr_proto p = graph_proto(OPTIC_OP_INFEED);
  p.type.dtype = OPTIC_DTYPE_INVALID;
  p.type.tuple_size = 2;
  p.type.elements = els;
  p.operands = &token;
  p.n_operands = 1;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_outfeed(optic_module_t *m, optic_comp_id comp, optic_node_id x, optic_node_id token,
                                 const char *name, optic_node_id *out) {
  optic_status st = graph_check_comp(m, comp, "outfeed");
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "outfeed: out is NULL");
  if ((st = graph_check_operand(m, comp, x, "outfeed", 0)) != OPTIC_OK ||
      (st = token_operand(m, comp, token, "outfeed", 1)) != OPTIC_OK) {
    return st;
  }
  if (holds_token(optic_node_type(m, x))) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "outfeed: operand 0 (%s) holds a token; only data is sent",
                      optic_node_name(m, x));
  }
  const optic_node_id ops[2] = {x, token};
  optic_instr_proto p = graph_proto(OPTIC_OP_OUTFEED);
  p.type = token_type();
  p.operands = ops;
  p.n_operands = 2;
  return graph_add_instr(m, comp, &p, name, out);
}

optic_status optic_graph_rng_bit_generator(optic_module_t *m, optic_comp_id comp, optic_node_id state,
                                           optic_rng_algorithm algorithm, const optic_type *bits, const char *name,
                                           optic_node_id *out) {
  static const char op[] = "rng-bit-generator";
  const optic_type *s;
  optic_status st = graph_array_operand(m, comp, state, op, 0, &s);
  if (st != OPTIC_OK) return st;
  if (out == NULL || bits == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: NULL argument", op);
  if (algorithm < OPTIC_RNG_DEFAULT || algorithm > OPTIC_RNG_PHILOX) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "%s: unknown algorithm %d", op, (int)algorithm);
  }
  if (s->dtype != OPTIC_U64 || s->shape.rank != 1) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: the state must be a u64 vector, not %s of rank %d", op,
                      optic_dtype_name(s->dtype), (int)s->shape.rank);
  }
  int64_t n = s->shape.dims[0];
  bool ok = algorithm == OPTIC_RNG_THREE_FRY ? n == 2 : algorithm == OPTIC_RNG_PHILOX ? (n == 2 || n == 3) : n >= 1;
  if (!ok) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH,
                      "%s: a state of %lld u64 values does not suit %s (three-fry takes 2, "
                      "philox 2 or 3)",
                      op, (long long)n,
                      algorithm == OPTIC_RNG_THREE_FRY ? "three-fry"
                      : algorithm == OPTIC_RNG_PHILOX  ? "philox"
                                                       : "the default");
  }
  if (optic_type_is_tuple(bits) || !optic_dtype_is_int(bits->dtype)) {
    return optic_fail(OPTIC_ERR_SHAPE_MISMATCH, "%s: the bits must be an integer array, not %s", op,
                      optic_type_is_tuple(bits) ? "a tuple" : optic_dtype_name(bits->dtype));
  }
  size_t count;
  if ((st = optic_shape_elements(&bits->shape, &count)) != OPTIC_OK) return st;
  optic_type els[2] = {*s, *bits};
  int64_t alg = algorithm;
  optic_instr_proto p = graph_proto(OPTIC_OP_RNG_BIT_GENERATOR);
  p.type.dtype = OPTIC_DTYPE_INVALID;
  p.type.tuple_size = 2;
  p.type.elements = els;
  p.operands = &state;
  p.n_operands = 1;
  p.ints = &alg;
  p.n_ints = 1;
  return graph_add_instr(m, comp, &p, name, out);
}
