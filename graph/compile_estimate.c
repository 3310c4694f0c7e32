/* The time estimate of one compiled instruction (graph/compile.c calls it
 * for every scheduled instruction): the roofline of its XLA counts on the
 * program's machine, raised to the op-class bounds the machine carries
 * (docs/cost-model.md, "Time"). The counts are never changed; only the time
 * differs from the roofline:
 *   dot, convolution, output fusions   GEMM bound (gemm_efficiency)
 *   reduce, input fusions              bytes / the reduce class of their
 *                                      reduced dims (minor, strided, 2+ dims)
 *   loop fusions                       bytes / loop_bandwidth
 *   gather, scatter, sort, topk        units of work x the class's ns per unit
 *   16-bit float elementwise work      elements x narrow_element_ns per
 *                                      instruction (the runtime's per-element
 *                                      path widens each element to f32)
 * Work the runtime splits over the threads is divided by them; scatter runs
 * on one thread. */
#include <math.h>

#include <optic/attrs.h>

#include "graph/internal.h"
#include "graph/program_internal.h"

static double elements(const optic_type *t) {
  if (t == NULL || optic_type_is_tuple(t)) return 0;
  double n = 1;
  for (int32_t d = 0; d < t->shape.rank; d++) n *= (double)t->shape.dims[d];
  return n;
}

static bool half(optic_dtype d) { return d == OPTIC_F16 || d == OPTIC_BF16; }

/* Elements an elementwise instruction runs through the per-element path
 * for 16-bit floats (its result or an operand is f16/bf16), else 0. */
static double narrow_elements(const optic_module_t *m, optic_node_id id) {
  optic_opcode op = optic_node_opcode(m, id);
  const optic_type *t = optic_node_type(m, id);
  if (op == OPTIC_OP_REDUCE) {
    const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
    return half(in->dtype) ? elements(in) : 0;
  }
  if (!graph_opcode_is_elementwise(op) || optic_type_is_tuple(t)) return 0;
  bool narrow = half(t->dtype);
  for (int32_t i = 0; i < optic_node_operand_count(m, id) && !narrow; i++)
    narrow = half(optic_node_type(m, optic_node_operand(m, id, i))->dtype);
  return narrow ? elements(t) : 0;
}

/* narrow_elements summed over a fused computation (nested fusions too). */
static double fused_narrow_elements(const optic_module_t *m, optic_comp_id comp, int depth) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  double sum = 0;
  for (int32_t i = 0; i < n; i++) {
    if (optic_node_opcode(m, ids[i]) == OPTIC_OP_FUSION && depth < 8)
      sum += fused_narrow_elements(m, optic_node_called(m, ids[i], 0), depth + 1);
    else sum += narrow_elements(m, ids[i]);
  }
  return sum;
}

/* The reduce an input fusion is built around (the first one), or NO_NODE. */
static optic_node_id fused_reduce(const optic_module_t *m, optic_comp_id comp) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  for (int32_t i = 0; i < n; i++)
    if (optic_node_opcode(m, ids[i]) == OPTIC_OP_REDUCE) return ids[i];
  return OPTIC_NO_NODE;
}

/* The class bandwidth of a reduce: over two or more dims of size > 1, over
 * the operand's minor dim, or over other dims only. */
static double reduce_class(const optic_machine *mc, const optic_module_t *m, optic_node_id id) {
  optic_node_attrs_t a;
  if (id == OPTIC_NO_NODE || optic_node_attrs(m, id, &a) != OPTIC_OK) return mc->reduce_bandwidth;
  const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
  bool minor = false;
  int32_t wide = 0;
  for (int32_t i = 0; i < a.reduce.count; i++) {
    int64_t d = a.reduce.dims[i];
    minor = minor || d == in->shape.rank - 1;
    wide += d >= 0 && d < in->shape.rank && in->shape.dims[d] > 1;
  }
  if (wide >= 2 && mc->reduce_multi_bandwidth > 0) return mc->reduce_multi_bandwidth;
  return minor ? mc->reduce_bandwidth : mc->reduce_strided_bandwidth;
}

/* Whether the runtime reduces id through the f32 reduction kernels: one f32
 * input and a reducer that is add, multiply, maximum or minimum of its two
 * parameters (exec/bind.c's fast reducer); other reduces run the reducer's
 * block program once per reduced position per block of outputs. */
static bool fast_reduce(const optic_module_t *m, optic_node_id id) {
  if (optic_node_operand_count(m, id) != 2 || optic_node_type(m, id)->dtype != OPTIC_F32) return false;
  optic_comp_id f = optic_node_called(m, id, 0);
  optic_node_id root = optic_computation_root(m, f);
  optic_opcode op = optic_node_opcode(m, root);
  if (op != OPTIC_OP_ADD && op != OPTIC_OP_MULTIPLY && op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) return false;
  return optic_computation_parameter_count(m, f) == 2 &&
         optic_node_operand(m, root, 0) == optic_computation_parameter(m, f, 0) &&
         optic_node_operand(m, root, 1) == optic_computation_parameter(m, f, 1);
}

/* Reduced positions x blocks of REDUCE_BLOCK_OUTPUTS outputs: the reducer
 * program's calls for a reduce that is not fast. */
#define REDUCE_BLOCK_OUTPUTS 512.0
static double reduce_steps(const optic_module_t *m, optic_node_id id) {
  double in = elements(optic_node_type(m, optic_node_operand(m, id, 0)));
  const optic_type *t = optic_node_type(m, id);
  double out = optic_type_is_tuple(t) ? elements(&t->elements[0]) : elements(t);
  if (!(out > 0)) return 0;
  return in / out * ceil(out / REDUCE_BLOCK_OUTPUTS);
}

/* Whether an input fusion runs as one reduction loop (a fast reducer over
 * trailing dims with an f32 result); else the runtime runs its fused
 * computation instruction by instruction. */
static bool input_fusion_fast(const optic_module_t *m, optic_node_id r) {
  optic_node_attrs_t a;
  if (r == OPTIC_NO_NODE || !fast_reduce(m, r) || optic_node_attrs(m, r, &a) != OPTIC_OK) return false;
  const optic_type *in = optic_node_type(m, optic_node_operand(m, r, 0));
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < a.reduce.count; i++)
    if (a.reduce.dims[i] >= 0 && a.reduce.dims[i] < OPTIC_MAX_RANK) reduced[a.reduce.dims[i]] = true;
  for (int32_t d = 1; d < in->shape.rank; d++)
    if (!reduced[d] && reduced[d - 1]) return false;
  return true;
}

/* Comparisons of a bottom-up merge sort of `len` elements, `slices` times. */
static double merge_compares(double slices, double len) { return len > 1 ? slices * len * ceil(log2(len)) : 0; }

static double split_share(double units, double threads) { return threads > 1 && units > threads ? threads : 1; }

/* Work units x ns per unit the class adds (the op's own runtime path), with
 * the threads it is split over; 0 when the class is not known. */
static double class_work_ns(const optic_program_t *p, optic_node_id id, optic_opcode op, double threads) {
  const optic_machine *mc = &p->machine;
  const optic_module_t *m = p->module;
  const optic_type *t = optic_node_type(m, id);
  const optic_type *x = optic_node_operand_count(m, id) > 0 ? optic_node_type(m, optic_node_operand(m, id, 0)) : NULL;
  switch (op) {
    case OPTIC_OP_GATHER: return elements(t) * mc->gather_element_ns / split_share(elements(t), threads);
    case OPTIC_OP_SCATTER: { /* thread 0 alone: one combiner run per update element */
      int32_t n = optic_node_operand_count(m, id);
      return elements(optic_node_type(m, optic_node_operand(m, id, n - 1))) * mc->scatter_element_ns;
    }
    case OPTIC_OP_SORT: {
      optic_node_attrs_t a;
      if (x == NULL || optic_node_attrs(m, id, &a) != OPTIC_OK || x->shape.rank == 0) return 0;
      double len = (double)x->shape.dims[a.sort.dimension], slices = len > 0 ? elements(x) / len : 0;
      return merge_compares(slices, len) * mc->sort_compare_ns / split_share(slices, threads);
    }
    case OPTIC_OP_TOPK: {
      if (x == NULL || x->shape.rank == 0) return 0;
      double len = (double)x->shape.dims[x->shape.rank - 1], rows = len > 0 ? elements(x) / len : 0;
      return merge_compares(rows, len) * mc->topk_compare_ns / split_share(rows, threads);
    }
    case OPTIC_OP_FUSION: {
      double n = fused_narrow_elements(m, optic_node_called(m, id, 0), 0);
      return n * mc->narrow_element_ns / split_share(n, threads);
    }
    case OPTIC_OP_REDUCE: {
      double n = narrow_elements(m, id), steps = fast_reduce(m, id) ? 0 : reduce_steps(m, id);
      double blocks = elements(t) / REDUCE_BLOCK_OUTPUTS;
      return (n * mc->narrow_element_ns + steps * mc->reduce_step_ns) / split_share(blocks, threads);
    }
    default: {
      double n = narrow_elements(m, id);
      return n * mc->narrow_element_ns / split_share(n, threads);
    }
  }
}

static bool runs_code(optic_opcode op) {
  return op != OPTIC_OP_PARAMETER && op != OPTIC_OP_CONSTANT && op != OPTIC_OP_TUPLE &&
         op != OPTIC_OP_GET_TUPLE_ELEMENT && op != OPTIC_OP_RESHAPE && op != OPTIC_OP_BITCAST &&
         op != OPTIC_OP_OPT_BARRIER;
}

/* A fusion the runtime runs instruction by instruction: the sum of its
 * instructions' estimates. */
static double fused_sequence_ns(const optic_program_t *p, optic_comp_id comp, int depth) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(p->module, comp, &n);
  double sum = 0;
  for (int32_t i = 0; i < n; i++) {
    optic_opcode op = optic_node_opcode(p->module, ids[i]);
    optic_cost c;
    if (!runs_code(op) || optic_node_cost(p->module, ids[i], &c) != OPTIC_OK) continue;
    if (op == OPTIC_OP_FUSION && depth > 8) continue;
    sum += program_node_estimate_ns(p, ids[i], op, &c);
  }
  return sum;
}

double program_node_estimate_ns(const optic_program_t *p, optic_node_id id, optic_opcode op, const optic_cost *cost) {
  const optic_machine *m = &p->machine;
  const double threads = m->cores;
  double t;
  if (op == OPTIC_OP_DOT || op == OPTIC_OP_CONVOLUTION) return optic_machine_estimate_gemm_ns(m, cost);
  optic_node_attrs_t a;
  if (op == OPTIC_OP_REDUCE) {
    t = optic_machine_estimate_class_ns(m, cost, reduce_class(m, p->module, id));
  } else if (op == OPTIC_OP_FUSION && optic_node_attrs(p->module, id, &a) == OPTIC_OK) {
    optic_comp_id fc = optic_node_called(p->module, id, 0);
    switch (a.fusion.kind) {
      case OPTIC_FUSION_OUTPUT: return optic_machine_estimate_gemm_ns(m, cost);
      case OPTIC_FUSION_INPUT: {
        optic_node_id r = fused_reduce(p->module, fc);
        if (!input_fusion_fast(p->module, r)) return fused_sequence_ns(p, fc, 0);
        t = optic_machine_estimate_class_ns(m, cost, reduce_class(m, p->module, r));
        break;
      }
      case OPTIC_FUSION_LOOP: t = optic_machine_estimate_class_ns(m, cost, m->loop_bandwidth); break;
      default: t = optic_machine_estimate_ns(m, cost); break;
    }
  } else {
    t = optic_machine_estimate_ns(m, cost);
  }
  double work = class_work_ns(p, id, op, threads);
  if (work + m->op_overhead_ns > t) t = work + m->op_overhead_ns;
  return t;
}
