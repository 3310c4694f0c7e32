/* Cost model counts with XLA HloCostAnalysis's rules (summarized, with
 * sources, in ../shared/reference/hlo/COST_ANALYSIS.md): flops,
 * transcendentals and bytes accessed per instruction and per computation.
 * Counts are doubles (exact below 2^53). Never estimates time: see the
 * machine models for that. */
#include <string.h>

#include "graph/internal.h"
#include "kernels/conv.h"

#define MAX_CALL_DEPTH 64

static double elements(const optic_type *t) {
  size_t n = 0;
  if (optic_type_is_tuple(t)) return 0;
  optic_shape_elements(&t->shape, &n);
  return (double)n;
}

/* XLA's ShapeUtil::ByteSizeOf with 8-byte pointers: arrays are elements x
 * dtype size, tuples only their pointer table. */
static double size_of(const optic_type *t) {
  if (optic_type_is_tuple(t)) return 8.0 * t->tuple_size;
  return elements(t) * (double)optic_dtype_size(t->dtype);
}

/* Bytes of every array leaf of a (possibly nested) tuple type: what XLA
 * counts as written by a multi-output fusion or a tuple all-reduce
 * (ForEachSubshape over array subshapes), unlike size_of's pointer table. */
static double leaf_bytes(const optic_type *t) {
  if (!optic_type_is_tuple(t)) return size_of(t);
  double b = 0;
  for (int32_t i = 0; i < t->tuple_size; i++) b += leaf_bytes(&t->elements[i]);
  return b;
}

static bool is_transcendental(optic_opcode op) {
  switch (op) {
    case OPTIC_OP_EXPONENTIAL:
    case OPTIC_OP_LOG:
    case OPTIC_OP_LOGISTIC:
    case OPTIC_OP_POWER:
    case OPTIC_OP_SQRT:
    case OPTIC_OP_RSQRT:
    case OPTIC_OP_TANH:
    case OPTIC_OP_ERF:
    case OPTIC_OP_CBRT:
    case OPTIC_OP_SINE:
    case OPTIC_OP_COSINE:
    case OPTIC_OP_TAN:
    case OPTIC_OP_EXPONENTIAL_MINUS_ONE:
    case OPTIC_OP_LOG_PLUS_ONE:
    case OPTIC_OP_ATAN2: return true;
    default: return false;
  }
}

static optic_status computation_cost(const optic_module_t *m, optic_comp_id c, int depth, optic_cost *out);

static double default_bytes(const optic_module_t *m, const optic_instr *in) {
  double b = size_of(&in->type);
  for (int32_t i = 0; i < in->n_operands; i++) b += size_of(optic_node_type(m, in->operands[i]));
  return b;
}

/* XLA's FusionParameterReadBytes: what reading fused parameter p costs,
 * from how its users inside the fusion read it. */
static double fusion_parameter_read_bytes(const optic_module_t *m, const optic_instr *p) {
  double size = size_of(&p->type), bytes = 0;
  bool shared_read = false;
  for (int32_t u = 0; u < p->n_users; u++) {
    const optic_instr *user = graph_instr(m, p->users[u]);
    switch (user->op) {
      case OPTIC_OP_SLICE: bytes += size_of(&user->type); break;
      case OPTIC_OP_BROADCAST:
      case OPTIC_OP_RESHAPE: bytes += size; break;
      default: shared_read = true; break;
    }
  }
  return bytes + (shared_read ? size : 0);
}

static optic_status fusion_bytes(const optic_module_t *m, const optic_instr *in, double *bytes) {
  const optic_computation *f = &m->comps[in->calls[0]];
  double b = leaf_bytes(&in->type);
  for (int32_t i = 0; i < f->n_instrs; i++) {
    const optic_instr *x = graph_instr(m, f->instrs[i]);
    if (x == NULL) continue;
    if (x->op == OPTIC_OP_PARAMETER) b += fusion_parameter_read_bytes(m, x);
    if (x->op == OPTIC_OP_CONSTANT && elements(&x->type) > 1) b += size_of(&x->type);
  }
  *bytes = b;
  return OPTIC_OK;
}

/* Transposes of row-major arrays are bitcasts when the dims of size > 1 keep their order. */
static bool transpose_is_bitcast(const optic_instr *in, const optic_type *operand) {
  int64_t last = -1;
  for (int32_t i = 0; i < in->n_ints; i++) {
    int64_t d = in->ints[i];
    if (operand->shape.dims[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* XLA's valid(d): the (kernel index, output index) pairs of one spatial dim
 * whose input position lands on a real input element (padding and dilation
 * holes excluded). For each kernel index the valid outputs form an arithmetic
 * progression inside an interval, so this costs O(window x lhs_dilation). */
static double conv_valid_pairs(int64_t in, int64_t k_size, int64_t out, int64_t stride, int64_t pad_lo, int64_t ldil,
                               int64_t rdil) {
  double total = 0;
  int64_t last = (in - 1) * ldil; /* last real position in the dilated input */
  if (in <= 0 || out <= 0) return 0;
  for (int64_t k = 0; k < k_size; k++) {
    int64_t c = k * rdil - pad_lo; /* X(o) = o * stride + c */
    int64_t lo = c >= 0 ? 0 : (-c + stride - 1) / stride;
    int64_t hi = last - c < 0 ? -1 : (last - c) / stride;
    if (hi > out - 1) hi = out - 1;
    if (lo > hi) continue;
    int64_t first = -1;
    for (int64_t o = lo; o <= hi && o < lo + ldil; o++) {
      int64_t x = o * stride + c;
      if (((x % ldil) + ldil) % ldil == 0) {
        first = o;
        break;
      }
    }
    if (first < 0) continue;
    int64_t period = ldil / gcd64(stride % ldil == 0 ? ldil : stride % ldil, ldil);
    total += (double)((hi - first) / period + 1);
  }
  return total;
}

static double conv_flops(const optic_module_t *m, const optic_instr *in) {
  optic_conv_desc d;
  graph_conv_desc(m, in, &d);
  const optic_shape *out = &in->type.shape;
  double f = 2.0 * (double)(d.input.dims[d.dn.in_feature] / d.feature_group_count) *
             (double)out->dims[d.dn.out_feature] * (double)(d.input.dims[d.dn.in_batch] / d.batch_group_count);
  for (int32_t s = 0; s < d.dn.nspatial; s++) {
    f *= conv_valid_pairs(d.input.dims[d.dn.in_spatial[s]], d.kernel.dims[d.dn.k_spatial[s]],
                          out->dims[d.dn.out_spatial[s]], d.stride[s], d.pad_lo[s], d.lhs_dilation[s],
                          d.rhs_dilation[s]);
  }
  return f;
}

static optic_status node_cost(const optic_module_t *m, const optic_instr *in, int depth, optic_cost *out) {
  memset(out, 0, sizeof *out);
  if (depth > MAX_CALL_DEPTH) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: computations nest deeper than %d (a call cycle?)", MAX_CALL_DEPTH);
  }
  double out_elems = elements(&in->type);
  optic_cost sub = {0};
  optic_status st = OPTIC_OK;
  if (in->n_calls > 0 && in->op != OPTIC_OP_CONDITIONAL && in->op != OPTIC_OP_WHILE) {
    if ((st = computation_cost(m, in->calls[0], depth + 1, &sub)) != OPTIC_OK) return st;
  }
  if (graph_opcode_is_elementwise(in->op)) {
    if (is_transcendental(in->op)) {
      out->transcendentals = out_elems;
    } else {
      out->flops = out_elems;
    }
    out->bytes_accessed = default_bytes(m, in);
    return OPTIC_OK;
  }
  const optic_type *op0 = in->n_operands ? optic_node_type(m, in->operands[0]) : NULL;
  switch (in->op) {
    case OPTIC_OP_PARAMETER:
    case OPTIC_OP_CONSTANT:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_BITCAST: return OPTIC_OK;
    case OPTIC_OP_TRANSPOSE:
      if (!transpose_is_bitcast(in, op0)) out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    case OPTIC_OP_SLICE: out->bytes_accessed = 2 * size_of(&in->type); return OPTIC_OK;
    case OPTIC_OP_CUSTOM_CALL: /* XLA HandleCustomCall: unknown, -1 */
      out->flops = -1;
      out->bytes_accessed = -1;
      return OPTIC_OK;
    case OPTIC_OP_SORT: { /* XLA: n * ceil(log2 n) flops, n the elements of operand 0 */
      double n = elements(op0), lg = 0;
      while (lg < 64 && (double)((uint64_t)1 << (int)lg) < n) lg++;
      out->flops = n * lg;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_GATHER: /* XLA: the result twice and the indices */
      out->bytes_accessed = 2 * size_of(&in->type) + size_of(optic_node_type(m, in->operands[1]));
      return OPTIC_OK;
    case OPTIC_OP_SCATTER: { /* XLA: the updates three times and the indices; to_apply once per update */
      double nu = elements(optic_node_type(m, in->operands[2]));
      out->flops = sub.flops * nu;
      out->transcendentals = sub.transcendentals * nu;
      out->bytes_accessed = 3 * size_of(optic_node_type(m, in->operands[2])) +
                            size_of(optic_node_type(m, in->operands[1]));
      return OPTIC_OK;
    }
    case OPTIC_OP_DYNAMIC_SLICE: /* XLA: the window twice and operand 1 (the first start index) */
      out->bytes_accessed = 2 * size_of(&in->type) + size_of(optic_node_type(m, in->operands[1]));
      return OPTIC_OK;
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE: /* XLA: the update twice and operand 2; operand 0 is updated in place */
      out->bytes_accessed = 2 * size_of(optic_node_type(m, in->operands[1])) +
                            size_of(optic_node_type(m, in->operands[2]));
      return OPTIC_OK;
    case OPTIC_OP_TUPLE: out->bytes_accessed = size_of(&in->type); return OPTIC_OK;
    case OPTIC_OP_REDUCE: {
      double reduced = elements(op0) - (optic_type_is_tuple(&in->type) ? elements(&in->type.elements[0]) : out_elems);
      out->flops = sub.flops * reduced;
      out->transcendentals = sub.transcendentals * reduced;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_REDUCE_WINDOW: {
      double window = 1;
      for (int32_t d = 0; d < in->n_ints / 7; d++) window *= (double)in->ints[7 * d];
      double outs = optic_type_is_tuple(&in->type) ? elements(&in->type.elements[0]) : out_elems;
      out->flops = sub.flops * (window - 1) * outs;
      out->transcendentals = sub.transcendentals * (window - 1) * outs;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_MAP:
      out->flops = sub.flops * out_elems;
      out->transcendentals = sub.transcendentals * out_elems;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    case OPTIC_OP_ALL_REDUCE: {
      double outs = 0;
      if (optic_type_is_tuple(&in->type)) {
        for (int32_t i = 0; i < in->type.tuple_size; i++) outs += elements(&in->type.elements[i]);
      } else {
        outs = out_elems;
      }
      out->flops = outs;
      out->bytes_accessed = leaf_bytes(&in->type);
      for (int32_t i = 0; i < in->n_operands; i++) out->bytes_accessed += size_of(optic_node_type(m, in->operands[i]));
      return OPTIC_OK;
    }
    case OPTIC_OP_CALL: *out = sub; return OPTIC_OK;
    case OPTIC_OP_DOT: {
      double k = 1;
      for (int64_t i = 0; i < in->ints[1]; i++) k *= (double)op0->shape.dims[in->ints[2 + 2 * in->ints[0] + i]];
      out->flops = 2.0 * out_elems * k;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_CONVOLUTION:
      out->flops = conv_flops(m, in);
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    case OPTIC_OP_FUSION:
      out->flops = sub.flops;
      out->transcendentals = sub.transcendentals;
      return fusion_bytes(m, in, &out->bytes_accessed);
    case OPTIC_OP_WHILE:
      for (int32_t k = 0; k < 2; k++) {
        if ((st = computation_cost(m, in->calls[k], depth + 1, &sub)) != OPTIC_OK) return st;
        out->flops += sub.flops, out->transcendentals += sub.transcendentals, out->bytes_accessed += sub.bytes_accessed;
      }
      return OPTIC_OK;
    case OPTIC_OP_CONDITIONAL:
      for (int32_t k = 0; k < in->n_calls; k++) {
        if ((st = computation_cost(m, in->calls[k], depth + 1, &sub)) != OPTIC_OK) return st;
        if (sub.flops > out->flops) out->flops = sub.flops;
        if (sub.transcendentals > out->transcendentals) out->transcendentals = sub.transcendentals;
        if (sub.bytes_accessed > out->bytes_accessed) out->bytes_accessed = sub.bytes_accessed;
      }
      return OPTIC_OK;
    case OPTIC_OP_BROADCAST:
    case OPTIC_OP_RESHAPE:
    case OPTIC_OP_COPY:
    case OPTIC_OP_CONCATENATE:
    case OPTIC_OP_PAD:
    case OPTIC_OP_REVERSE:
    case OPTIC_OP_OPT_BARRIER:
    case OPTIC_OP_TOPK:
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD:
    case OPTIC_OP_ALL_GATHER:
    case OPTIC_OP_REDUCE_SCATTER:
    case OPTIC_OP_COLLECTIVE_PERMUTE:
    case OPTIC_OP_IOTA: out->bytes_accessed = default_bytes(m, in); return OPTIC_OK;
    default:
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "cost: no cost rule for %s (%s)", optic_opcode_name(in->op), in->name);
  }
}

static optic_status computation_cost(const optic_module_t *m, optic_comp_id c, int depth, optic_cost *out) {
  memset(out, 0, sizeof *out);
  const optic_computation *comp = &m->comps[c];
  for (int32_t i = 0; i < comp->n_instrs; i++) {
    const optic_instr *in = graph_instr(m, comp->instrs[i]);
    if (in == NULL) continue; /* removed */
    optic_cost one;
    optic_status st = node_cost(m, in, depth, &one);
    if (st != OPTIC_OK) return st;
    out->flops += one.flops, out->transcendentals += one.transcendentals, out->bytes_accessed += one.bytes_accessed;
  }
  return OPTIC_OK;
}

optic_status optic_node_cost(const optic_module_t *m, optic_node_id id, optic_cost *out) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: no instruction %d", (int)id);
  return node_cost(m, in, 0, out);
}

optic_status optic_computation_cost(const optic_module_t *m, optic_comp_id comp, optic_cost *out) {
  optic_status st = graph_check_comp(m, comp, "cost");
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: out is NULL");
  return computation_cost(m, comp, 0, out);
}
