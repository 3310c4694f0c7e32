/* The typed attribute view (include/optic/attrs.h): decodes the module's
 * packed integer attributes (graph/internal.h) into optic_node_attrs_t.
 * Together with the builders that pack them, this is the only code that
 * knows the packing; every layer outside graph/ reads attributes here. */
#include <string.h>

#include <optic/attrs.h>

#include "graph/internal.h"

int32_t optic_module_node_count(const optic_module_t *m) { return m ? m->n_instrs : 0; }

optic_attrs_kind optic_opcode_attrs_kind(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_PARAMETER: return OPTIC_ATTRS_PARAMETER;
    case OPTIC_OP_CONSTANT: return OPTIC_ATTRS_CONSTANT;
    case OPTIC_OP_IOTA: return OPTIC_ATTRS_IOTA;
    case OPTIC_OP_COMPARE: return OPTIC_ATTRS_COMPARE;
    case OPTIC_OP_REDUCE_PRECISION: return OPTIC_ATTRS_REDUCE_PRECISION;
    case OPTIC_OP_BROADCAST: return OPTIC_ATTRS_BROADCAST;
    case OPTIC_OP_TRANSPOSE: return OPTIC_ATTRS_TRANSPOSE;
    case OPTIC_OP_REVERSE: return OPTIC_ATTRS_REVERSE;
    case OPTIC_OP_REDUCE: return OPTIC_ATTRS_REDUCE;
    case OPTIC_OP_DYNAMIC_SLICE: return OPTIC_ATTRS_DYNAMIC_SLICE;
    case OPTIC_OP_SLICE: return OPTIC_ATTRS_SLICE;
    case OPTIC_OP_CONCATENATE: return OPTIC_ATTRS_CONCATENATE;
    case OPTIC_OP_PAD: return OPTIC_ATTRS_PAD;
    case OPTIC_OP_GET_TUPLE_ELEMENT: return OPTIC_ATTRS_GET_TUPLE_ELEMENT;
    case OPTIC_OP_REDUCE_WINDOW: return OPTIC_ATTRS_REDUCE_WINDOW;
    case OPTIC_OP_DOT: return OPTIC_ATTRS_DOT;
    case OPTIC_OP_CONVOLUTION: return OPTIC_ATTRS_CONVOLUTION;
    case OPTIC_OP_GATHER: return OPTIC_ATTRS_GATHER;
    case OPTIC_OP_SCATTER: return OPTIC_ATTRS_SCATTER;
    case OPTIC_OP_SORT: return OPTIC_ATTRS_SORT;
    case OPTIC_OP_ALL_REDUCE: return OPTIC_ATTRS_ALL_REDUCE;
    case OPTIC_OP_ALL_GATHER: return OPTIC_ATTRS_ALL_GATHER;
    case OPTIC_OP_REDUCE_SCATTER: return OPTIC_ATTRS_REDUCE_SCATTER;
    case OPTIC_OP_COLLECTIVE_PERMUTE: return OPTIC_ATTRS_COLLECTIVE_PERMUTE;
    case OPTIC_OP_CUSTOM_CALL: return OPTIC_ATTRS_CUSTOM_CALL;
    case OPTIC_OP_TOPK: return OPTIC_ATTRS_TOPK;
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: return OPTIC_ATTRS_BATCH_NORM;
    case OPTIC_OP_FUSION: return OPTIC_ATTRS_FUSION;
    case OPTIC_OP_RNG_BIT_GENERATOR: return OPTIC_ATTRS_RNG_BIT_GENERATOR;
    case OPTIC_OP_CONDITIONAL: return OPTIC_ATTRS_CONDITIONAL;
    default: return OPTIC_ATTRS_NONE;
  }
}

/* A list of at most OPTIC_MAX_RANK entries, all of ints. */
static void take_dims(const optic_instr *in, optic_attrs_dims *d) {
  d->count = in->n_ints < OPTIC_MAX_RANK ? in->n_ints : OPTIC_MAX_RANK;
  for (int32_t i = 0; i < d->count; i++) d->dims[i] = in->ints[i];
}

/* One window dim packed as 7 entries (size, stride, pad_low, pad_high,
 * base_dilation, window_dilation, reversal). */
static optic_window_dim take_window(const int64_t *e) {
  return (optic_window_dim){.size = e[0],
                            .stride = e[1],
                            .pad_low = e[2],
                            .pad_high = e[3],
                            .base_dilation = e[4],
                            .window_dilation = e[5],
                            .reversal = e[6] != 0};
}

void graph_conv_attrs(const optic_instr *in, optic_attrs_convolution *c) {
  const int64_t *v = in->ints;
  int32_t ns = (int32_t)v[0];
  c->spatial_count = ns;
  c->feature_group_count = v[1], c->batch_group_count = v[2];
  c->input_batch = (int32_t)v[3], c->input_feature = (int32_t)v[4];
  c->kernel_input_feature = (int32_t)v[5], c->kernel_output_feature = (int32_t)v[6];
  c->output_batch = (int32_t)v[7], c->output_feature = (int32_t)v[8];
  for (int32_t s = 0; s < ns; s++) {
    const int64_t *sp = &v[9 + 3 * s];
    c->input_spatial[s] = (int32_t)sp[0], c->kernel_spatial[s] = (int32_t)sp[1], c->output_spatial[s] = (int32_t)sp[2];
    c->window[s] = take_window(&v[9 + 3 * ns + 7 * s]);
  }
}

/* The forms whose length follows the operand's rank. */
static void take_ranked(const optic_instr *in, optic_node_attrs_t *out) {
  const int64_t *v = in->ints;
  switch (in->op) {
    case OPTIC_OP_SLICE: {
      int32_t r = in->n_ints / 3;
      out->slice.rank = r;
      for (int32_t d = 0; d < r; d++) {
        out->slice.start[d] = v[d], out->slice.limit[d] = v[r + d], out->slice.stride[d] = v[2 * r + d];
      }
      break;
    }
    case OPTIC_OP_PAD:
      out->pad.rank = in->n_ints / 3;
      for (int32_t d = 0; d < out->pad.rank; d++) {
        out->pad.dims[d] = (optic_pad_dim){.low = v[3 * d], .high = v[3 * d + 1], .interior = v[3 * d + 2]};
      }
      break;
    case OPTIC_OP_REDUCE_WINDOW:
      out->reduce_window.rank = in->n_ints / 7;
      for (int32_t d = 0; d < out->reduce_window.rank; d++) out->reduce_window.window[d] = take_window(&v[7 * d]);
      break;
    default: break;
  }
}

static void take_collective(const optic_instr *in, optic_node_attrs_t *out) {
  const int64_t *v = in->ints;
  switch (in->op) {
    case OPTIC_OP_ALL_REDUCE: {
      int32_t ng = (int32_t)v[0];
      out->all_reduce.n_groups = ng;
      out->all_reduce.n_replica_ids = in->n_ints - 1 - ng;
      out->all_reduce.group_sizes = ng ? v + 1 : NULL;
      out->all_reduce.replica_ids = out->all_reduce.n_replica_ids ? v + 1 + ng : NULL;
      break;
    }
    case OPTIC_OP_ALL_GATHER: out->all_gather = (optic_attrs_shard){v[0], v[1]}; break;
    case OPTIC_OP_REDUCE_SCATTER: out->reduce_scatter = (optic_attrs_shard){v[0], v[1]}; break;
    case OPTIC_OP_COLLECTIVE_PERMUTE:
      out->collective_permute.n_pairs = in->n_ints / 2;
      out->collective_permute.pairs = in->n_ints ? v : NULL;
      break;
    default: break;
  }
}

/* The forms of one or two scalars. */
static void take_scalars(const optic_module_t *m, optic_node_id id, const optic_instr *in, optic_node_attrs_t *out) {
  const int64_t *v = in->ints;
  switch (out->kind) {
    case OPTIC_ATTRS_PARAMETER: out->parameter.number = v[0]; break;
    case OPTIC_ATTRS_CONSTANT: out->constant.data = optic_node_constant_data(m, id, &out->constant.bytes); break;
    case OPTIC_ATTRS_IOTA: out->iota.dimension = v[0]; break;
    case OPTIC_ATTRS_COMPARE: out->compare.direction = in->cmp; break;
    case OPTIC_ATTRS_REDUCE_PRECISION:
      out->reduce_precision.exponent_bits = (int32_t)v[0], out->reduce_precision.mantissa_bits = (int32_t)v[1];
      break;
    case OPTIC_ATTRS_CONCATENATE: out->concatenate.dimension = v[0]; break;
    case OPTIC_ATTRS_GET_TUPLE_ELEMENT: out->get_tuple_element.index = v[0]; break;
    case OPTIC_ATTRS_SORT: out->sort.dimension = v[0], out->sort.is_stable = v[1] != 0; break;
    case OPTIC_ATTRS_CUSTOM_CALL: out->custom_call.target = in->data ? (const char *)in->data : ""; break;
    case OPTIC_ATTRS_TOPK: out->topk.k = v[0], out->topk.largest = v[1] != 0; break;
    case OPTIC_ATTRS_BATCH_NORM: {
      uint32_t bits = (uint32_t)v[1];
      out->batch_norm.feature_index = v[0];
      memcpy(&out->batch_norm.epsilon, &bits, sizeof bits);
      break;
    }
    case OPTIC_ATTRS_FUSION: out->fusion.kind = (optic_fusion_kind)v[0]; break;
    case OPTIC_ATTRS_RNG_BIT_GENERATOR: out->rng_bit_generator.algorithm = (optic_rng_algorithm)v[0]; break;
    case OPTIC_ATTRS_CONDITIONAL: out->conditional.pred_selector = v[0] != 0; break;
    default: break;
  }
}

/* Entries the packing of each opcode holds at least (the builders write
 * exactly the documented layout; a shorter array is corrupt storage). */
static int32_t min_ints(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_PARAMETER:
    case OPTIC_OP_IOTA:
    case OPTIC_OP_CONCATENATE:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_FUSION:
    case OPTIC_OP_RNG_BIT_GENERATOR:
    case OPTIC_OP_CONDITIONAL:
    case OPTIC_OP_ALL_REDUCE: return 1;
    case OPTIC_OP_REDUCE_PRECISION:
    case OPTIC_OP_SORT:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_TOPK:
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD:
    case OPTIC_OP_DOT: return 2;
    case OPTIC_OP_GATHER:
    case OPTIC_OP_SCATTER: return 4;
    case OPTIC_OP_CONVOLUTION: return 9;
    default: return 0;
  }
}

optic_status optic_node_attrs(const optic_module_t *m, optic_node_id id, optic_node_attrs_t *out) {
  if (out) memset(out, 0, sizeof *out);
  if (m == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_node_attrs: NULL argument");
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_node_attrs: %d is not an instruction of module '%s'%s",
                      (int)id, m->name, id >= 0 && id < m->n_instrs ? " (it was removed)" : "");
  }
  if (in->n_ints < min_ints(in->op)) {
    return optic_fail(OPTIC_ERR_INTERNAL,
                      "optic_node_attrs: %s %s holds %d attribute entries, fewer than its form needs",
                      optic_opcode_name(in->op), in->name, (int)in->n_ints);
  }
  out->op = in->op;
  out->kind = optic_opcode_attrs_kind(in->op);
  switch (out->kind) {
    case OPTIC_ATTRS_BROADCAST: take_dims(in, &out->broadcast); break;
    case OPTIC_ATTRS_TRANSPOSE: take_dims(in, &out->transpose); break;
    case OPTIC_ATTRS_REVERSE: take_dims(in, &out->reverse); break;
    case OPTIC_ATTRS_REDUCE: take_dims(in, &out->reduce); break;
    case OPTIC_ATTRS_DYNAMIC_SLICE: take_dims(in, &out->dynamic_slice); break;
    case OPTIC_ATTRS_SLICE:
    case OPTIC_ATTRS_PAD:
    case OPTIC_ATTRS_REDUCE_WINDOW: take_ranked(in, out); break;
    case OPTIC_ATTRS_DOT: graph_dot_dims(in, &out->dot); break;
    case OPTIC_ATTRS_CONVOLUTION: graph_conv_attrs(in, &out->convolution); break;
    case OPTIC_ATTRS_GATHER: optic_node_gather_dims(m, id, &out->gather); break;
    case OPTIC_ATTRS_SCATTER: optic_node_scatter_dims(m, id, &out->scatter); break;
    case OPTIC_ATTRS_ALL_REDUCE:
    case OPTIC_ATTRS_ALL_GATHER:
    case OPTIC_ATTRS_REDUCE_SCATTER:
    case OPTIC_ATTRS_COLLECTIVE_PERMUTE: take_collective(in, out); break;
    default: take_scalars(m, id, in, out); break;
  }
  return OPTIC_OK;
}
