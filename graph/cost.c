/* Cost model counts with XLA HloCostAnalysis's rules (summarized, with
 * sources, in ../shared/reference/hlo/COST_ANALYSIS.md): flops,
 * transcendentals and bytes accessed per instruction and per computation.
 * Counts are doubles (exact below 2^53). Never estimates time: see the
 * machine models for that. */
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "kernels/conv.h"

#define MAX_CALL_DEPTH 64

/* A small open-addressing map from an id to a remembered count, sized to
 * what one query visits (allocated on first use), so a query on a plain
 * instruction allocates nothing and a query's memory and time follow what
 * it visits, not the module's size. */
typedef struct memo_entry {
  int32_t key;         /* -1: empty */
  unsigned char state; /* 1 in progress, 2 done */
  optic_cost value;
} memo_entry;

typedef struct memo_map {
  memo_entry *e;
  int32_t cap, n;
} memo_map;

/* The entry for key, inserted (state 0) if absent; NULL when out of memory. */
static memo_entry *memo_get(memo_map *mm, int32_t key) {
  if (2 * (mm->n + 1) > mm->cap) {
    int32_t cap = mm->cap ? 2 * mm->cap : 16;
    memo_entry *e = malloc((size_t)cap * sizeof *e);
    if (e == NULL) return NULL;
    for (int32_t i = 0; i < cap; i++) e[i].key = -1;
    for (int32_t i = 0; i < mm->cap; i++) {
      if (mm->e[i].key < 0) continue;
      uint32_t h = ((uint32_t)mm->e[i].key * 2654435761u) & (uint32_t)(cap - 1);
      while (e[h].key >= 0) h = (h + 1) & (uint32_t)(cap - 1);
      e[h] = mm->e[i];
    }
    free(mm->e);
    mm->e = e, mm->cap = cap;
  }
  uint32_t h = ((uint32_t)key * 2654435761u) & (uint32_t)(mm->cap - 1);
  while (mm->e[h].key >= 0 && mm->e[h].key != key) h = (h + 1) & (uint32_t)(mm->cap - 1);
  if (mm->e[h].key < 0) {
    mm->e[h] = (memo_entry){.key = key};
    mm->n++;
  }
  return &mm->e[h];
}

/* One cost query. A computation's totals and a fused parameter's read
 * bytes are computed once per query and remembered, so a computation called
 * from many places (or nested fusions passing one value on twice) costs its
 * size once, not once per path to it: a query is linear in what it visits. */
typedef struct cost_ctx {
  const optic_module_t *m;
  memo_map comps; /* by computation id: totals */
  memo_map reads; /* by node id: a fused parameter's read bytes (in value.bytes_accessed) */
  bool oom;       /* a memo insert failed: the query fails with OUT_OF_MEMORY */
} cost_ctx;

static void ctx_free(cost_ctx *cx) { free(cx->comps.e), free(cx->reads.e); }

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

static optic_status computation_cost(cost_ctx *cx, optic_comp_id c, int depth, optic_cost *out);

static double default_bytes(const optic_module_t *m, const optic_instr *in) {
  double b = size_of(&in->type);
  for (int32_t i = 0; i < in->n_operands; i++) b += size_of(optic_node_type(m, in->operands[i]));
  return b;
}

/* XLA's FusionParameterReadBytes: what reading fused parameter (or, for a
 * tuple parameter, get-tuple-element) p costs, from how its users inside the
 * fusion read it: a slice reads its output, a dynamic-slice whose operand
 * 0 is p reads its output, a dynamic-update-slice whose operand 0 is p
 * reads nothing for that use (p is updated in place), each broadcast or
 * reshape reads all of p, a nested fusion reads what its own parameter
 * reads, and all other users (dynamic-slice start indices and
 * dynamic-update-slice updates included) share one read of p. */
static double fusion_parameter_read_bytes(cost_ctx *cx, const optic_instr *p, optic_node_id p_id, int depth) {
  const optic_module_t *m = cx->m;
  memo_entry *memo = memo_get(&cx->reads, p_id);
  if (memo == NULL) {
    cx->oom = true;
    return 0;
  }
  if (memo->state == 2) return memo->value.bytes_accessed;
  double size = size_of(&p->type), bytes = 0;
  bool shared_read = false;
  for (int32_t u = 0; u < p->n_users; u++) {
    const optic_instr *user = graph_instr(m, p->users[u]);
    switch (user->op) {
      case OPTIC_OP_SLICE: bytes += size_of(&user->type); break;
      case OPTIC_OP_DYNAMIC_SLICE: /* as the sliced operand it reads the window; as a start index, shared */
        if (user->operands[0] == p_id) bytes += size_of(&user->type);
        else shared_read = true;
        break;
      case OPTIC_OP_DYNAMIC_UPDATE_SLICE: /* operand 0 is updated in place: that use reads nothing */
        if (user->operands[0] != p_id) shared_read = true;
        break;
      case OPTIC_OP_BROADCAST:
      case OPTIC_OP_RESHAPE: bytes += size; break;
      case OPTIC_OP_FUSION:
        if (depth < MAX_CALL_DEPTH) {
          const optic_computation *inner = &m->comps[user->calls[0]];
          for (int32_t k = 0; k < user->n_operands && k < inner->n_params; k++) {
            const optic_instr *q = graph_instr(m, inner->params[k]);
            if (user->operands[k] == p_id && q != NULL)
              bytes += fusion_parameter_read_bytes(cx, q, inner->params[k], depth + 1);
          }
          break;
        }
        shared_read = true;
        break;
      default: shared_read = true; break;
    }
  }
  bytes += shared_read ? size : 0;
  memo = memo_get(&cx->reads, p_id); /* the recursion may have moved it */
  if (memo == NULL) {
    cx->oom = true;
    return bytes;
  }
  memo->state = 2, memo->value.bytes_accessed = bytes;
  return bytes;
}

/* The get-tuple-element user of x that takes element index, or x itself
 * when there is none (XLA's walk in HandleFusion keeps its place then). */
static optic_node_id gte_user(const optic_module_t *m, optic_node_id x, int64_t index) {
  const optic_instr *in = graph_instr(m, x);
  for (int32_t u = 0; u < in->n_users; u++) {
    const optic_instr *user = graph_instr(m, in->users[u]);
    if (user->op == OPTIC_OP_GET_TUPLE_ELEMENT && user->ints[0] == index) return in->users[u];
  }
  return x;
}

/* A tuple parameter reads, per array leaf of its type, what the chain of
 * get-tuple-elements down to that leaf reads (XLA: GetLeafShapes, then
 * FusionParameterReadBytes of the leaf's get-tuple-element). path holds the
 * leaf's index so far. */
static double tuple_parameter_read_bytes(cost_ctx *cx, optic_node_id param, const optic_type *t, int64_t *path,
                                         int32_t depth) {
  const optic_module_t *m = cx->m;
  if (!optic_type_is_tuple(t)) {
    optic_node_id at = param;
    for (int32_t i = 0; i < depth; i++) at = gte_user(m, at, path[i]);
    return fusion_parameter_read_bytes(cx, graph_instr(m, at), at, 0);
  }
  double b = 0;
  for (int32_t i = 0; i < t->tuple_size && depth < MAX_CALL_DEPTH; i++) {
    path[depth] = i;
    b += tuple_parameter_read_bytes(cx, param, &t->elements[i], path, depth + 1);
  }
  return b;
}

/* What array result t written by fused instruction r costs (XLA's
 * FusionProcessOutputBytesAccessed): a dynamic-update-slice writes only its
 * update, anything else its whole size. */
static double fusion_output_bytes(const optic_module_t *m, const optic_instr *r, const optic_type *t) {
  if (r != NULL && r->op == OPTIC_OP_DYNAMIC_UPDATE_SLICE) return size_of(optic_node_type(m, r->operands[1]));
  return leaf_bytes(t);
}

/* The bytes a fusion writes: every array leaf of its result, where the
 * root, or the root tuple's element for a top-level element, decides the
 * leaf's size (nested tuple elements count whole). */
static double fusion_written_bytes(const optic_module_t *m, const optic_instr *in, const optic_computation *f) {
  const optic_instr *root = f->root == OPTIC_NO_NODE ? NULL : graph_instr(m, f->root);
  if (!optic_type_is_tuple(&in->type)) return fusion_output_bytes(m, root, &in->type);
  double b = 0;
  for (int32_t i = 0; i < in->type.tuple_size; i++) {
    const optic_type *e = &in->type.elements[i];
    const optic_instr *r = root;
    if (r != NULL && r->op == OPTIC_OP_TUPLE && i < r->n_operands) r = graph_instr(m, r->operands[i]);
    b += optic_type_is_tuple(e) ? leaf_bytes(e) : fusion_output_bytes(m, r, e);
  }
  return b;
}

static optic_status fusion_bytes(cost_ctx *cx, const optic_instr *in, double *bytes) {
  const optic_module_t *m = cx->m;
  const optic_computation *f = &m->comps[in->calls[0]];
  double b = fusion_written_bytes(m, in, f);
  int64_t path[MAX_CALL_DEPTH];
  for (int32_t i = 0; i < f->n_instrs; i++) {
    const optic_instr *x = graph_instr(m, f->instrs[i]);
    if (x == NULL) continue;
    if (x->op == OPTIC_OP_PARAMETER) {
      b += optic_type_is_tuple(&x->type) ? tuple_parameter_read_bytes(cx, f->instrs[i], &x->type, path, 0)
                                         : fusion_parameter_read_bytes(cx, x, f->instrs[i], 0);
    }
    if (x->op == OPTIC_OP_CONSTANT && elements(&x->type) > 1) b += size_of(&x->type);
  }
  *bytes = b;
  return cx->oom ? optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "cost: out of memory") : OPTIC_OK;
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

static optic_status conv_flops(const optic_module_t *m, const optic_instr *in, double *flops) {
  optic_conv_desc d;
  graph_conv_desc(m, in, &d);
  const optic_shape *out = &in->type.shape;
  double f = 2.0 * (double)(d.input.dims[d.dn.in_feature] / d.feature_group_count) *
             (double)out->dims[d.dn.out_feature] * (double)(d.input.dims[d.dn.in_batch] / d.batch_group_count);
  for (int32_t s = 0; s < d.dn.nspatial; s++) {
    double valid;
    optic_status st = graph_conv_valid_pairs(d.input.dims[d.dn.in_spatial[s]], d.kernel.dims[d.dn.k_spatial[s]],
                                             out->dims[d.dn.out_spatial[s]], d.stride[s], d.pad_lo[s],
                                             d.lhs_dilation[s], d.rhs_dilation[s], &valid);
    if (st != OPTIC_OK) return st;
    f *= valid;
  }
  *flops = f;
  return OPTIC_OK;
}

/* How many times a reduce-window applies its computation, by XLA's
 * HandleReduceWindow: (window elements - 1) x output elements, except for a
 * window that is a reduce followed by a broadcast along one dimension d
 * (the only dimension with size > 1 and the only padded one, pads
 * n-1 on both sides and size 2n-1, n = output dim d, array result), which
 * XLA counts as output elements / n + n - 1. Window fields per dim: size,
 * stride, pad_low, pad_high, base dilation, window dilation, reversal. */
static double reduce_window_count(const optic_instr *in) {
  int32_t rank = in->n_ints / 7, reducing = 0, padded = 0, found = -1;
  double window = 1;
  for (int32_t d = 0; d < rank; d++) {
    const int64_t *w = &in->ints[7 * d];
    window *= (double)w[0];
    reducing += w[0] != 1;
    padded += w[2] != 0 || w[3] != 0;
    if (found < 0 && w[0] != 1 && w[2] != 0 && w[2] == w[3] && w[0] == 2 * w[2] + 1) found = d;
  }
  bool array = !optic_type_is_tuple(&in->type);
  double outs = elements(array ? &in->type : &in->type.elements[0]);
  if (reducing == 1 && padded == 1 && array && found >= 0 &&
      in->ints[7 * found + 2] == in->type.shape.dims[found] - 1) {
    double n = (double)in->type.shape.dims[found];
    return outs / n + (n - 1);
  }
  return (window - 1) * outs;
}

/* The elementwise ops and the others whose cost needs no called
 * computation (XLA's rules, named per case); false for the rest. */
static bool plain_cost(const optic_module_t *m, const optic_instr *in, optic_cost *out) {
  double out_elems = elements(&in->type);
  const optic_type *op0 = in->n_operands ? optic_node_type(m, in->operands[0]) : NULL;
  if (graph_opcode_is_elementwise(in->op)) {
    if (is_transcendental(in->op)) {
      out->transcendentals = out_elems;
    } else {
      out->flops = out_elems;
    }
    out->bytes_accessed = default_bytes(m, in);
    return true;
  }
  switch (in->op) {
    case OPTIC_OP_PARAMETER:
    case OPTIC_OP_CONSTANT:
    case OPTIC_OP_GET_TUPLE_ELEMENT:
    case OPTIC_OP_AFTER_ALL: /* XLA HandleAfterAll: ordering only, nothing touched */
    case OPTIC_OP_BITCAST: return true;
    case OPTIC_OP_INFEED: /* XLA HandleInfeed: every leaf of the result (the token's is 0 bytes) */
      out->bytes_accessed = leaf_bytes(&in->type);
      return true;
    case OPTIC_OP_OUTFEED: /* XLA HandleOutfeed: every leaf of every operand, nothing for the result */
      for (int32_t i = 0; i < in->n_operands; i++)
        out->bytes_accessed += leaf_bytes(optic_node_type(m, in->operands[i]));
      return true;
    case OPTIC_OP_RNG_BIT_GENERATOR: /* XLA: one transcendental per element of the state and the bits */
      out->transcendentals = elements(&in->type.elements[0]) + elements(&in->type.elements[1]);
      out->bytes_accessed = default_bytes(m, in);
      return true;
    case OPTIC_OP_TRANSPOSE:
      if (!transpose_is_bitcast(in, op0)) out->bytes_accessed = default_bytes(m, in);
      return true;
    case OPTIC_OP_SLICE: out->bytes_accessed = 2 * size_of(&in->type); return true;
    case OPTIC_OP_CUSTOM_CALL: /* XLA HandleCustomCall: unknown, -1 */
      out->flops = -1;
      out->bytes_accessed = -1;
      return true;
    case OPTIC_OP_SORT: { /* XLA: n * ceil(log2 n) flops, n the elements of operand 0 */
      double n = elements(op0), lg = 0;
      while (lg < 64 && (double)((uint64_t)1 << (int)lg) < n) lg++;
      out->flops = n * lg;
      out->bytes_accessed = default_bytes(m, in);
      return true;
    }
    case OPTIC_OP_GATHER: /* XLA: the result twice and the indices */
      out->bytes_accessed = 2 * size_of(&in->type) + size_of(optic_node_type(m, in->operands[1]));
      return true;
    case OPTIC_OP_DYNAMIC_SLICE: /* XLA: the window twice and operand 1 (the first start index) */
      out->bytes_accessed = 2 * size_of(&in->type) + size_of(optic_node_type(m, in->operands[1]));
      return true;
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE: /* XLA: the update twice and operand 2; operand 0 is updated in place */
      out->bytes_accessed =
          2 * size_of(optic_node_type(m, in->operands[1])) + size_of(optic_node_type(m, in->operands[2]));
      return true;
    case OPTIC_OP_TUPLE: out->bytes_accessed = size_of(&in->type); return true;
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
      return true;
    }
    case OPTIC_OP_DOT: {
      double k = 1;
      for (int64_t i = 0; i < in->ints[1]; i++) k *= (double)op0->shape.dims[in->ints[2 + 2 * in->ints[0] + i]];
      out->flops = 2.0 * out_elems * k;
      out->bytes_accessed = default_bytes(m, in);
      return true;
    }
    default: return false;
  }
}

/* while: condition plus body, once; conditional: the costliest branch. */
static optic_status control_cost(cost_ctx *cx, const optic_instr *in, int depth, optic_cost *out) {
  optic_cost sub = {0};
  optic_status st = OPTIC_OK;
  if (in->op == OPTIC_OP_WHILE) {
    for (int32_t k = 0; k < 2; k++) {
      if ((st = computation_cost(cx, in->calls[k], depth + 1, &sub)) != OPTIC_OK) return st;
      out->flops += sub.flops, out->transcendentals += sub.transcendentals, out->bytes_accessed += sub.bytes_accessed;
    }
    return OPTIC_OK;
  }
  for (int32_t k = 0; k < in->n_calls; k++) {
    if ((st = computation_cost(cx, in->calls[k], depth + 1, &sub)) != OPTIC_OK) return st;
    if (sub.flops > out->flops) out->flops = sub.flops;
    if (sub.transcendentals > out->transcendentals) out->transcendentals = sub.transcendentals;
    if (sub.bytes_accessed > out->bytes_accessed) out->bytes_accessed = sub.bytes_accessed;
  }
  return OPTIC_OK;
}

static optic_status node_cost(cost_ctx *cx, const optic_instr *in, int depth, optic_cost *out) {
  const optic_module_t *m = cx->m;
  memset(out, 0, sizeof *out);
  if (depth > MAX_CALL_DEPTH) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: computations nest deeper than %d (a call cycle?)",
                      MAX_CALL_DEPTH);
  }
  double out_elems = elements(&in->type);
  optic_cost sub = {0};
  optic_status st = OPTIC_OK;
  if (in->n_calls > 0 && in->op != OPTIC_OP_CONDITIONAL && in->op != OPTIC_OP_WHILE) {
    if ((st = computation_cost(cx, in->calls[0], depth + 1, &sub)) != OPTIC_OK) return st;
  }
  if (plain_cost(m, in, out)) return OPTIC_OK;
  const optic_type *op0 = in->n_operands ? optic_node_type(m, in->operands[0]) : NULL;
  switch (in->op) {
    case OPTIC_OP_SCATTER: { /* XLA: the updates three times and the indices; to_apply once per update */
      double nu = elements(optic_node_type(m, in->operands[2]));
      out->flops = sub.flops * nu;
      out->transcendentals = sub.transcendentals * nu;
      out->bytes_accessed =
          3 * size_of(optic_node_type(m, in->operands[2])) + size_of(optic_node_type(m, in->operands[1]));
      return OPTIC_OK;
    }
    case OPTIC_OP_REDUCE: {
      double reduced = elements(op0) - (optic_type_is_tuple(&in->type) ? elements(&in->type.elements[0]) : out_elems);
      out->flops = sub.flops * reduced;
      out->transcendentals = sub.transcendentals * reduced;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_REDUCE_WINDOW: {
      double n = reduce_window_count(in);
      out->flops = sub.flops * n;
      out->transcendentals = sub.transcendentals * n;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    }
    case OPTIC_OP_MAP:
      out->flops = sub.flops * out_elems;
      out->transcendentals = sub.transcendentals * out_elems;
      out->bytes_accessed = default_bytes(m, in);
      return OPTIC_OK;
    case OPTIC_OP_CALL: *out = sub; return OPTIC_OK;
    case OPTIC_OP_CONVOLUTION: out->bytes_accessed = default_bytes(m, in); return conv_flops(m, in, &out->flops);
    case OPTIC_OP_FUSION:
      out->flops = sub.flops;
      out->transcendentals = sub.transcendentals;
      return fusion_bytes(cx, in, &out->bytes_accessed);
    case OPTIC_OP_WHILE:
    case OPTIC_OP_CONDITIONAL: return control_cost(cx, in, depth, out);
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
    case OPTIC_OP_REPLICA_ID:
    case OPTIC_OP_PARTITION_ID:
    case OPTIC_OP_IOTA: out->bytes_accessed = default_bytes(m, in); return OPTIC_OK;
    default:
      return optic_fail(OPTIC_ERR_UNSUPPORTED, "cost: no cost rule for %s (%s)", optic_opcode_name(in->op), in->name);
  }
}

static optic_status computation_cost(cost_ctx *cx, optic_comp_id c, int depth, optic_cost *out) {
  memset(out, 0, sizeof *out);
  memo_entry *memo = memo_get(&cx->comps, c);
  if (memo == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "cost: out of memory");
  if (memo->state == 2) {
    *out = memo->value;
    return OPTIC_OK;
  }
  if (memo->state == 1 || depth > MAX_CALL_DEPTH) {
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "cost: computation '%s' calls itself, or computations nest deeper "
                      "than %d",
                      cx->m->comps[c].name, MAX_CALL_DEPTH);
  }
  memo->state = 1;
  const optic_computation *comp = &cx->m->comps[c];
  for (int32_t i = 0; i < comp->n_instrs; i++) {
    const optic_instr *in = graph_instr(cx->m, comp->instrs[i]);
    if (in == NULL) continue; /* removed */
    optic_cost one;
    optic_status st = node_cost(cx, in, depth, &one);
    if (st != OPTIC_OK) return st;
    out->flops += one.flops, out->transcendentals += one.transcendentals, out->bytes_accessed += one.bytes_accessed;
  }
  memo = memo_get(&cx->comps, c); /* inserts below may have moved it */
  if (memo == NULL) return optic_fail(OPTIC_ERR_OUT_OF_MEMORY, "cost: out of memory");
  memo->value = *out, memo->state = 2;
  return OPTIC_OK;
}

optic_status optic_node_cost(const optic_module_t *m, optic_node_id id, optic_cost *out) {
  const optic_instr *in = graph_instr(m, id);
  if (in == NULL || out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: no instruction %d", (int)id);
  cost_ctx cx = {.m = m};
  optic_status st = node_cost(&cx, in, 0, out);
  ctx_free(&cx);
  return st;
}

optic_status optic_computation_cost(const optic_module_t *m, optic_comp_id comp, optic_cost *out) {
  optic_status st = graph_check_comp(m, comp, "cost");
  if (st != OPTIC_OK) return st;
  if (out == NULL) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "cost: out is NULL");
  cost_ctx cx = {.m = m};
  st = computation_cost(&cx, comp, 0, out);
  ctx_free(&cx);
  return st;
}
