/* The time estimate of one compiled instruction (graph/compile.c calls it
 * for every scheduled instruction): the roofline of its XLA counts on the
 * program's machine, raised to the op-class bounds the machine carries
 * (docs/cost-model.md, "Time"). The counts are never changed; only the time
 * differs from the roofline:
 *   dot, convolution, output fusions   the runtime's plan priced per strategy
 *                                      (graph/estimate_contraction.c), else
 *                                      the GEMM bound (gemm_efficiency)
 *   reduce, input fusions              bytes / the reduce class of their
 *                                      reduced dims (minor, strided, 2+ dims)
 *   loop fusions                       bytes / loop_stream_bandwidth + f32
 *                                      flops and transcendentals x their ns
 *                                      (format 12; before: bytes /
 *                                      loop_bandwidth) + the leaves it
 *                                      gathers (loop_leaf_element_ns, _run_ns)
 *   gather, scatter, sort, topk        units of work x the class's ns per unit
 *   batch norm                         its fixed cost + elements x its op's ns
 *   f32 reduce paths                   + column-kernel calls x their ns; at
 *                                      least rows or gathered outputs x
 *                                      theirs (reduce_path_ns); columns the
 *                                      wide kernel streams: the minor class
 *   16-bit float elementwise work      elements x bf16_element_ns (or
 *                                      f16_element_ns) per instruction (the runtime's per-element
 *                                      path widens each element to f32)
 * Work the runtime splits over the threads is divided by them; scatter runs
 * on one thread. */
#include <math.h>

#include <optic/attrs.h>

#include "graph/internal.h"
#include "graph/program_internal.h"
#include "kernels/reduce.h"

static double elements(const optic_type *t) { return graph_array_elements(t); }

/* A loop fusion's domain: its array result's elements, or a tuple result's
 * first leaf's (the runtime loops over tuples whose leaves agree). */
static double loop_elements(const optic_type *t) {
  return optic_type_is_tuple(t) && t->tuple_size > 0 ? elements(&t->elements[0]) : elements(t);
}

/* The threads work of `units` independent pieces is divided over. */
static double split_share(double units, double threads) { return threads > 1 && units > threads ? threads : 1; }

static bool half(optic_dtype d) { return d == OPTIC_F16 || d == OPTIC_BF16; }

/* ns per element of a 16-bit float instruction: f16 when any of its arrays
 * is f16, else bf16. */
static double half_ns(const optic_machine *mc, const optic_module_t *m, optic_node_id id) {
  bool f16 = optic_node_type(m, id)->dtype == OPTIC_F16;
  for (int32_t i = 0; i < optic_node_operand_count(m, id) && !f16; i++)
    f16 = optic_node_type(m, optic_node_operand(m, id, i))->dtype == OPTIC_F16;
  return f16 ? mc->f16_element_ns : mc->bf16_element_ns;
}

/* ns per element of a convert from `from` to `to` through the runtime's
 * convert kernels (format 5: each 16-bit side its own figure, measured
 * against f32), 0 when one of the figures it needs is not known, no side is
 * 16-bit or the other side is neither f32 nor 16-bit (an integer: not
 * measured, the per-instruction figure). */
static double convert_ns(const optic_machine *mc, optic_dtype from, optic_dtype to) {
  if (!half(from) && !half(to)) return 0;
  if ((!half(from) && from != OPTIC_F32) || (!half(to) && to != OPTIC_F32)) return 0;
  double a = from == OPTIC_BF16 ? mc->convert_from_bf16_ns : from == OPTIC_F16 ? mc->convert_from_f16_ns : -1;
  double b = to == OPTIC_BF16 ? mc->convert_to_bf16_ns : to == OPTIC_F16 ? mc->convert_to_f16_ns : -1;
  if (a == 0 || b == 0) return 0;
  return (a > 0 ? a : 0) + (b > 0 ? b : 0);
}

/* ns of the per-element path for 16-bit floats an instruction takes (an
 * elementwise op whose result or an operand is f16/bf16, a reduce of such an
 * input), else 0. */
static double narrow_ns(const optic_machine *mc, const optic_module_t *m, optic_node_id id) {
  optic_opcode op = optic_node_opcode(m, id);
  const optic_type *t = optic_node_type(m, id);
  if (op == OPTIC_OP_REDUCE) {
    const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
    return half(in->dtype) ? elements(in) * (in->dtype == OPTIC_F16 ? mc->f16_element_ns : mc->bf16_element_ns) : 0;
  }
  if (!graph_opcode_is_elementwise(op) || optic_type_is_tuple(t)) return 0;
  if (op == OPTIC_OP_CONVERT) {
    double ns = convert_ns(mc, optic_node_type(m, optic_node_operand(m, id, 0))->dtype, t->dtype);
    if (ns > 0) return elements(t) * ns;
  }
  bool narrow = half(t->dtype);
  for (int32_t i = 0; i < optic_node_operand_count(m, id) && !narrow; i++)
    narrow = half(optic_node_type(m, optic_node_operand(m, id, i))->dtype);
  return narrow ? elements(t) * half_ns(mc, m, id) : 0;
}

/* narrow_ns summed over a fused computation (nested fusions too). */
static double fused_narrow_ns(const optic_machine *mc, const optic_module_t *m, optic_comp_id comp, int depth) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  double sum = 0;
  for (int32_t i = 0; i < n; i++) {
    if (optic_node_opcode(m, ids[i]) == OPTIC_OP_FUSION && depth < 8)
      sum += fused_narrow_ns(mc, m, optic_node_called(m, ids[i], 0), depth + 1);
    else sum += narrow_ns(mc, m, ids[i]);
  }
  return sum;
}

/* The XLA flops and transcendentals of a fused computation's
 * instructions but skip (nested fusions too). */
static void fused_counts(const optic_module_t *m, optic_comp_id comp, optic_node_id skip, int depth, optic_cost *sum) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  for (int32_t i = 0; i < n; i++) {
    optic_cost c;
    if (ids[i] == skip) continue;
    if (optic_node_opcode(m, ids[i]) == OPTIC_OP_FUSION && depth < 8)
      fused_counts(m, optic_node_called(m, ids[i], 0), skip, depth + 1, sum);
    else if (optic_node_cost(m, ids[i], &c) == OPTIC_OK)
      sum->flops += c.flops, sum->transcendentals += c.transcendentals;
  }
}

double program_fused_work_ns(const optic_machine *mc, const optic_module_t *m, optic_comp_id comp, optic_node_id skip) {
  optic_cost work = {0, 0, 0};
  fused_counts(m, comp, skip, 0, &work);
  return work.flops * mc->loop_flop_ns + work.transcendentals * mc->loop_transcendental_ns;
}

/* A loop fusion without 16-bit work by the format-12 figures: its bytes at
 * loop_stream_bandwidth (at least the roofline's memory time), plus its
 * flops and transcendentals at their ns on one core, split as the runtime
 * splits the loop's elements; at least the roofline. */
static double loop_parts_ns(const optic_machine *mc, const optic_module_t *m, optic_node_id id,
                            const optic_cost *cost) {
  const optic_cost bytes = {0, 0, cost->bytes_accessed};
  const double share = split_share(loop_elements(optic_node_type(m, id)), mc->cores);
  const double t = optic_machine_estimate_class_ns(mc, &bytes, mc->loop_stream_bandwidth) +
                   program_fused_work_ns(mc, m, optic_node_called(m, id, 0), OPTIC_NO_NODE) / share;
  const double roof = optic_machine_estimate_ns(mc, cost);
  return t > roof ? t : roof;
}

/* The leaves of a loop fusion the runtime gathers (exec/ewprog.c: a
 * broadcast or transpose of a non-scalar): ns of their elements and of
 * their runs along the last dim on one core. */
static double fused_leaves_ns(const optic_machine *mc, const optic_module_t *m, optic_comp_id comp) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  double ns = 0;
  for (int32_t i = 0; i < n; i++) {
    optic_opcode op = optic_node_opcode(m, ids[i]);
    if (op != OPTIC_OP_BROADCAST && op != OPTIC_OP_TRANSPOSE) continue;
    const optic_type *src = optic_node_type(m, optic_node_operand(m, ids[i], 0)), *t = optic_node_type(m, ids[i]);
    if (src->shape.rank == 0 || optic_type_is_tuple(t) || t->shape.rank == 0) continue;
    double e = elements(t), last = (double)t->shape.dims[t->shape.rank - 1];
    ns += e * mc->loop_leaf_element_ns + (last > 0 ? e / last : 0) * mc->loop_leaf_run_ns;
  }
  return ns;
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
/* The reducer's opcode when reduce id has one input and a reducer that is
 * one add/multiply/maximum/minimum of its two parameters; else 0. */
static optic_opcode one_op_reduce(const optic_module_t *m, optic_node_id id) {
  if (optic_node_operand_count(m, id) != 2) return (optic_opcode)0;
  optic_comp_id f = optic_node_called(m, id, 0);
  optic_node_id root = optic_computation_root(m, f);
  optic_opcode op = optic_node_opcode(m, root);
  if (op != OPTIC_OP_ADD && op != OPTIC_OP_MULTIPLY && op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) {
    return (optic_opcode)0;
  }
  bool one = optic_computation_parameter_count(m, f) == 2 &&
             optic_node_operand(m, root, 0) == optic_computation_parameter(m, f, 0) &&
             optic_node_operand(m, root, 1) == optic_computation_parameter(m, f, 1);
  return one ? op : (optic_opcode)0;
}

static bool fast_reduce(const optic_module_t *m, optic_node_id id) {
  return optic_node_type(m, id)->dtype == OPTIC_F32 && one_op_reduce(m, id) != 0;
}

bool program_reduce_is_fast(const optic_module_t *m, optic_node_id id) { return fast_reduce(m, id); }

/* An f16/bf16 maximum/minimum over the trailing dims: the runtime reduces
 * each row with the f32 kernel on widened blocks (no reducer steps). */
static bool half_rows_extremum(const optic_module_t *m, optic_node_id id) {
  optic_dtype dt = optic_node_type(m, id)->dtype;
  optic_opcode op = one_op_reduce(m, id);
  optic_node_attrs_t a;
  if ((dt != OPTIC_F16 && dt != OPTIC_BF16) || (op != OPTIC_OP_MAXIMUM && op != OPTIC_OP_MINIMUM) ||
      optic_node_attrs(m, id, &a) != OPTIC_OK) {
    return false;
  }
  const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < a.reduce.count; i++)
    if (a.reduce.dims[i] >= 0 && a.reduce.dims[i] < OPTIC_MAX_RANK) reduced[a.reduce.dims[i]] = true;
  bool seen = false; /* a reduced dim of extent > 1 before: a later kept one breaks the rows */
  for (int32_t d = 0; d < in->shape.rank; d++) {
    if (in->shape.dims[d] == 1) continue;
    if (reduced[d]) seen = true;
    else if (seen) return false;
  }
  return true;
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

/* Whether f is a one-op reducer (add, multiply, maximum or minimum of its
 * two parameters, over dt: exec/bind.c's rule), its opcode in *op. */
static bool one_op_reducer(const optic_module_t *m, optic_comp_id f, optic_dtype dt, optic_opcode *op) {
  optic_node_id root = optic_computation_root(m, f);
  *op = optic_node_opcode(m, root);
  if (*op != OPTIC_OP_ADD && *op != OPTIC_OP_MULTIPLY && *op != OPTIC_OP_MAXIMUM && *op != OPTIC_OP_MINIMUM)
    return false;
  if (optic_node_type(m, root)->dtype != dt || optic_computation_parameter_count(m, f) != 2) return false;
  return optic_node_operand(m, root, 0) == optic_computation_parameter(m, f, 0) &&
         optic_node_operand(m, root, 1) == optic_computation_parameter(m, f, 1);
}

/* Whether the runtime runs input fusion `fused` as one reduction loop
 * (exec/bind.c, bind_input_fusion): its root a one-input reduce of the
 * trailing dims with an f32 add/multiply/maximum/minimum reducer, a
 * parameter or constant init and an f32 result; else it runs the fused
 * computation instruction by instruction. */
static bool input_fusion_lowers(const optic_module_t *m, optic_comp_id fused) {
  const optic_node_id r = optic_computation_root(m, fused);
  optic_node_attrs_t a;
  optic_opcode op;
  if (optic_node_opcode(m, r) != OPTIC_OP_REDUCE || optic_node_operand_count(m, r) != 2 ||
      optic_node_type(m, r)->dtype != OPTIC_F32 || !one_op_reducer(m, optic_node_called(m, r, 0), OPTIC_F32, &op) ||
      optic_node_attrs(m, r, &a) != OPTIC_OK)
    return false;
  const optic_opcode init = optic_node_opcode(m, optic_node_operand(m, r, 1));
  if (init != OPTIC_OP_PARAMETER && init != OPTIC_OP_CONSTANT) return false;
  const optic_type *in = optic_node_type(m, optic_node_operand(m, r, 0));
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < a.reduce.count; i++)
    if (a.reduce.dims[i] >= 0 && a.reduce.dims[i] < OPTIC_MAX_RANK) reduced[a.reduce.dims[i]] = true;
  for (int32_t d = 1; d < in->shape.rank; d++)
    if (!reduced[d] && reduced[d - 1]) return false;
  return true;
}

/* Whether the runtime may run output fusion `fused` (result type t) as one
 * contraction with its epilogue (exec/bind.c, bind_output_fusion): its
 * contraction reads two f32 fusion parameters and it, and t, are f32 (that
 * the epilogue lowers to a block program is assumed). */
static bool output_fusion_may_lower(const optic_module_t *m, optic_comp_id fused, const optic_type *t) {
  const optic_node_id c = program_fused_contraction(m, fused);
  if (c == OPTIC_NO_NODE || t->dtype != OPTIC_F32 || optic_node_type(m, c)->dtype != OPTIC_F32) return false;
  for (int32_t k = 0; k < 2; k++) {
    const optic_node_id o = optic_node_operand(m, c, k);
    if (optic_node_opcode(m, o) != OPTIC_OP_PARAMETER || optic_node_type(m, o)->dtype != OPTIC_F32) return false;
  }
  return true;
}

/* Whether the runtime runs tuple-result loop fusion `fused` (result t) as
 * one block loop writing every leaf (exec/bind.c, bind_fusion): its root a
 * tuple instruction of at most 64 array leaves of one element count. */
static bool tuple_loop_lowers(const optic_module_t *m, optic_comp_id fused, const optic_type *t) {
  if (t->tuple_size < 1 || t->tuple_size > 64) return false;
  if (optic_node_opcode(m, optic_computation_root(m, fused)) != OPTIC_OP_TUPLE) return false;
  for (int32_t k = 0; k < t->tuple_size; k++) {
    const optic_type *e = &t->elements[k];
    if (optic_type_is_tuple(e) || elements(e) != elements(&t->elements[0])) return false;
  }
  return true;
}

bool program_fusion_runs_as_sequence(const optic_module_t *m, optic_node_id id) {
  optic_node_attrs_t a;
  if (optic_node_opcode(m, id) != OPTIC_OP_FUSION || optic_node_attrs(m, id, &a) != OPTIC_OK) return false;
  const optic_type *t = optic_node_type(m, id);
  const optic_comp_id fused = optic_node_called(m, id, 0);
  const int32_t n = optic_node_operand_count(m, id);
  if (optic_type_is_tuple(t)) return a.fusion.kind != OPTIC_FUSION_LOOP || n > 63 || !tuple_loop_lowers(m, fused, t);
  switch (a.fusion.kind) {
    case OPTIC_FUSION_LOOP: return n > 63;
    case OPTIC_FUSION_INPUT: return n > 63 || !input_fusion_lowers(m, fused);
    case OPTIC_FUSION_OUTPUT: return n > 62 || !output_fusion_may_lower(m, fused, t);
    default: return true;
  }
}

/* Comparisons of a bottom-up merge sort of `len` elements, `slices` times. */
static double merge_compares(double slices, double len) { return len > 1 ? slices * len * ceil(log2(len)) : 0; }

/* Time to move `bytes` (read + write counted) at the machine's bandwidth. */
static double move_ns(const optic_machine *mc, double bytes) {
  optic_cost c = {0, 0, bytes};
  return optic_machine_estimate_ns(mc, &c) - mc->op_overhead_ns;
}

/* Whether get-tuple-element g reads element e of parameter param. */
static bool gte_of(const optic_module_t *m, optic_node_id g, optic_node_id param, int64_t e) {
  optic_node_attrs_t a;
  return optic_node_opcode(m, g) == OPTIC_OP_GET_TUPLE_ELEMENT && optic_node_operand(m, g, 0) == param &&
         optic_node_attrs(m, g, &a) == OPTIC_OK && a.get_tuple_element.index == e;
}

/* Whether computation c is some while's body. */
static bool is_while_body(const optic_module_t *m, optic_comp_id c) {
  for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
    if (optic_node_opcode(m, id) == OPTIC_OP_WHILE && optic_node_called(m, id, 1) == c) return true;
  }
  return false;
}

/* A dynamic-update-slice the runtime runs over its while's state, copying
 * nothing (exec/bind.c, root_over_param): in a while body whose one parameter
 * is a tuple of arrays, its operand element e of that parameter, itself
 * element e of the root tuple, no other root element the old element e, its
 * update not it, and every other reader of the old element scheduled before it. */
static bool dus_over_state(const optic_program_t *p, optic_node_id id) {
  const optic_module_t *m = p->module;
  const optic_comp_id c = optic_node_computation(m, id);
  const optic_node_id x = optic_node_operand(m, id, 0), param = optic_node_operand(m, x, 0);
  optic_node_attrs_t a;
  if (optic_node_opcode(m, x) != OPTIC_OP_GET_TUPLE_ELEMENT || optic_node_attrs(m, x, &a) != OPTIC_OK) return false;
  const int64_t e = a.get_tuple_element.index;
  const optic_type *pt = optic_node_type(m, param);
  if (optic_computation_parameter_count(m, c) != 1 || optic_computation_parameter(m, c, 0) != param ||
      !optic_type_is_tuple(pt))
    return false;
  for (int32_t i = 0; i < pt->tuple_size; i++) {
    if (optic_type_is_tuple(&pt->elements[i])) return false;
  }
  const optic_node_id root = optic_computation_root(m, c);
  if (optic_node_opcode(m, root) != OPTIC_OP_TUPLE || e >= optic_node_operand_count(m, root) ||
      optic_node_operand(m, root, (int32_t)e) != id || !is_while_body(m, c))
    return false;
  for (int32_t j = 0; j < optic_node_operand_count(m, root); j++) {
    if (gte_of(m, optic_node_operand(m, root, j), param, e)) return false;
  }
  for (int32_t k = 1; k < optic_node_operand_count(m, id); k++) {
    if (gte_of(m, optic_node_operand(m, id, k), param, e)) return false;
  }
  const optic_schedule_t *s = optic_program_schedule(p, c);
  const int32_t at = s ? optic_schedule_position(s, id) : -1;
  if (at < 0) return false;
  for (int32_t u = 0; u < optic_node_user_count(m, param); u++) {
    const optic_node_id g = optic_node_user(m, param, u);
    if (!gte_of(m, g, param, e)) continue;
    for (int32_t v = 0; v < optic_node_user_count(m, g); v++) {
      const optic_node_id r = optic_node_user(m, g, v);
      if (r != id && (optic_schedule_position(s, r) > at || optic_node_opcode(m, r) == OPTIC_OP_RESHAPE ||
                      optic_node_opcode(m, r) == OPTIC_OP_BITCAST))
        return false;
    }
  }
  return true;
}

double program_while_copied_bytes(const optic_program_t *p, optic_node_id w) {
  const optic_module_t *m = p->module;
  const optic_comp_id body = optic_node_called(m, w, 1);
  const optic_node_id root = optic_computation_root(m, body);
  if (optic_computation_parameter_count(m, body) != 1 || optic_node_opcode(m, root) != OPTIC_OP_TUPLE) return -1;
  const optic_node_id param = optic_computation_parameter(m, body, 0);
  double bytes = 0;
  for (int32_t e = 0; e < optic_node_operand_count(m, root); e++) {
    const optic_node_id r = optic_node_operand(m, root, e);
    const optic_type *t = optic_node_type(m, r);
    if (optic_type_is_tuple(t)) return -1;
    if (gte_of(m, r, param, e)) continue;
    if (optic_node_opcode(m, r) == OPTIC_OP_DYNAMIC_UPDATE_SLICE && dus_over_state(p, r)) continue;
    bytes += graph_array_bytes(t);
  }
  return bytes;
}

/* Whether two slots of one plan are the same bytes. */
static bool same_bytes(const optic_buffer_slot *a, const optic_buffer_slot *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == OPTIC_BUFFER_ARENA) return a->offset == b->offset;
  if (a->kind == OPTIC_BUFFER_OUTPUT) return a->output_leaf == b->output_leaf && a->offset == b->offset;
  return a->source == b->source && a->source_leaf == b->source_leaf;
}

double program_while_entry_copied_bytes(const optic_program_t *p, optic_node_id w) {
  const optic_module_t *m = p->module;
  const optic_comp_id c = optic_node_computation(m, w);
  const optic_buffer_plan_t *plan = c >= 0 && c < p->n_comps ? p->plans[c] : NULL;
  if (plan == NULL || optic_node_operand_count(m, w) != 1) return 0;
  const optic_node_id init = optic_node_operand(m, w, 0);
  const int32_t n = optic_buffer_plan_leaf_count(plan, w);
  if (optic_buffer_plan_leaf_count(plan, init) != n) return 0;
  double bytes = 0;
  for (int32_t l = 0; l < n; l++) {
    optic_buffer_slot x, y;
    if (optic_buffer_plan_slot(plan, init, l, &x) != OPTIC_OK || optic_buffer_plan_slot(plan, w, l, &y) != OPTIC_OK)
      continue;
    if (!same_bytes(&x, &y)) bytes += (double)y.size;
  }
  return bytes;
}

/* A dynamic-update-slice whose result does not take over its operand's
 * buffer copies the whole operand first (XLA counts only the update). */
static double dus_copy_ns(const optic_program_t *p, const optic_machine *mc, optic_node_id id) {
  const optic_module_t *m = p->module;
  optic_comp_id c = optic_node_computation(m, id);
  const optic_buffer_plan_t *plan = c >= 0 && c < p->n_comps ? p->plans[c] : NULL;
  optic_buffer_slot y, x;
  optic_node_id operand = optic_node_operand(m, id, 0);
  if (plan && optic_buffer_plan_slot(plan, id, 0, &y) == OPTIC_OK &&
      optic_buffer_plan_slot(plan, operand, 0, &x) == OPTIC_OK && y.kind == x.kind && y.offset == x.offset &&
      y.source == x.source)
    return 0; /* in place */
  if (dus_over_state(p, id)) return 0;
  const optic_type *t = optic_node_type(m, operand);
  return move_ns(mc, 2.0 * graph_array_bytes(t));
}

static bool listed(const int64_t *v, int32_t n, int64_t x) {
  for (int32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* The contiguous runs a gather copies (graph/gather_scatter.c): a row of
 * the output's minor dim where that dim is an offset dim over the
 * operand's minor dim, else one element each. */
static double gather_runs(const optic_module_t *m, optic_node_id id) {
  const optic_type *t = optic_node_type(m, id), *x = optic_node_type(m, optic_node_operand(m, id, 0));
  double e = elements(t);
  optic_gather_dims g;
  if (!optic_node_gather_dims(m, id, &g) || t->shape.rank == 0 || x->shape.rank == 0) return e;
  int64_t last = x->shape.rank - 1;
  bool rows = g.n_offset_dims > 0 && g.offset_dims[g.n_offset_dims - 1] == t->shape.rank - 1 &&
              !listed(g.collapsed_slice_dims, g.n_collapsed, last) &&
              !listed(g.operand_batching_dims, g.n_batching, last);
  double len = (double)t->shape.dims[t->shape.rank - 1];
  return rows && len > 0 ? e / len : e;
}

static double gather_ns(const optic_module_t *m, const optic_machine *mc, optic_node_id id, double threads) {
  double e = elements(optic_node_type(m, id));
  double ns = e * mc->gather_element_ns + (mc->gather_run_ns > 0 ? gather_runs(m, id) * mc->gather_run_ns : 0);
  return ns / split_share(e, threads);
}

/* topk: a block selection of each row for k <= 64 (graph/sort.c), else a
 * merge sort of the row. */
static double topk_ns(const optic_module_t *m, const optic_machine *mc, optic_node_id id, const optic_type *x,
                      double threads) {
  optic_node_attrs_t a;
  if (x == NULL || x->shape.rank == 0 || optic_node_attrs(m, id, &a) != OPTIC_OK) return 0;
  double len = (double)x->shape.dims[x->shape.rank - 1], rows = len > 0 ? elements(x) / len : 0;
  if (a.topk.k <= 64 && mc->topk_select_element_ns > 0)
    return rows * len * mc->topk_select_element_ns / split_share(rows, threads);
  return merge_compares(rows, len) * mc->topk_compare_ns / split_share(rows, threads);
}

/* Outputs per thread below which the runtime folds a one-op f16/bf16 reduce
 * directly (exec/ops_reduce.c, REDUCE_FEW_OUTPUTS). */
#define REDUCE_FEW_OUTPUTS 16.0

/* ns of a one-op f16/bf16 reduce the runtime folds directly (few outputs per
 * thread: each input element widened, combined and, for add/multiply,
 * rounded back), or -1 when it takes another path (a maximum or minimum
 * over contiguous rows takes the rows path, few outputs or many) or the
 * figure is not known. */
static double reduce_fold_ns(const optic_module_t *m, const optic_machine *mc, optic_node_id id, double threads) {
  if (optic_node_operand_count(m, id) != 2 || half_rows_extremum(m, id)) return -1;
  const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
  if (!half(in->dtype)) return -1;
  optic_opcode op;
  double out = elements(optic_node_type(m, id)), share = out < threads ? (out > 1 ? out : 1) : threads;
  if (!one_op_reducer(m, optic_node_called(m, id, 0), in->dtype, &op) || !(ceil(out / share) < REDUCE_FEW_OUTPUTS))
    return -1;
  bool ext = op == OPTIC_OP_MAXIMUM || op == OPTIC_OP_MINIMUM, bf = in->dtype == OPTIC_BF16;
  double ns = ext ? (bf ? mc->reduce_fold_bf16_minmax_ns : mc->reduce_fold_f16_minmax_ns)
                  : (bf ? mc->reduce_fold_bf16_ns : mc->reduce_fold_f16_ns);
  return ns > 0 ? elements(in) * ns / share : -1;
}

/* ns of an f16/bf16 maximum or minimum over contiguous rows on the rows
 * path (exec/ops_reduce.c): every input element widened by the convert
 * kernel (convert_from_<type>_ns), each row one call of the f32 row kernel
 * (reduce_row_ns); -1 for another reduce or when the convert figure is not
 * known (then the per-element 16-bit figure prices it). */
static double half_rows_ns(const optic_module_t *m, const optic_machine *mc, optic_node_id id) {
  if (optic_node_operand_count(m, id) != 2 || !half_rows_extremum(m, id)) return -1;
  const optic_type *in = optic_node_type(m, optic_node_operand(m, id, 0));
  const double widen = in->dtype == OPTIC_BF16 ? mc->convert_from_bf16_ns : mc->convert_from_f16_ns;
  if (!(widen > 0)) return -1;
  return elements(in) * widen + elements(optic_node_type(m, id)) * mc->reduce_row_ns;
}

/* Dims of an array walked in row-major order, merged as the runtime merges
 * its walks (exec/ew.c, walk_merged): size-1 dims dropped, a dim folded into
 * the one before it when the two are contiguous together. */
typedef struct {
  int32_t rank;
  int64_t dims[OPTIC_MAX_RANK], strides[OPTIC_MAX_RANK];
} dim_walk;

static void walk_push(dim_walk *w, int64_t n, int64_t stride) {
  if (n == 1) return;
  if (w->rank > 0 && w->strides[w->rank - 1] == n * stride) {
    w->dims[w->rank - 1] *= n;
    w->strides[w->rank - 1] = stride;
    return;
  }
  w->dims[w->rank] = n;
  w->strides[w->rank++] = stride;
}

/* The fixed costs of a fast f32 reduce's path (exec/ops_reduce.c,
 * reduce_f32_kernels), split over the threads with the outputs; 0 when not
 * known or not that path. One strided reduced dim over a contiguous
 * innermost kept dim runs one column-kernel call per group of that dim's
 * outputs: reduce_cols_call_ns each, added to the class's bytes (the strided
 * class was measured with one call). Contiguous rows (reduce_row_ns each)
 * and reduced dims that do not merge into one, gathered per output
 * (reduce_gather_output_ns each), are the paths the row and multi-dim
 * classes were measured on: those costs are a floor (*floor), not added.
 * *streams: the column calls take the wide kernel (optic_f32_reduce_cols_streams:
 * each thread's call reads more than 1 MiB of rows), which reads the rows in
 * long contiguous runs as the row kernel does: the minor class prices it. */
static double reduce_path_ns(const optic_machine *mc, const optic_module_t *m, optic_node_id id, double threads,
                             double *floor, bool *streams) {
  optic_node_attrs_t a;
  *floor = 0;
  *streams = false;
  if (!fast_reduce(m, id) || optic_node_operand_count(m, id) != 2 || optic_node_attrs(m, id, &a) != OPTIC_OK) return 0;
  const optic_shape *in = &optic_node_type(m, optic_node_operand(m, id, 0))->shape;
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < a.reduce.count; i++)
    if (a.reduce.dims[i] >= 0 && a.reduce.dims[i] < OPTIC_MAX_RANK) reduced[a.reduce.dims[i]] = true;
  int64_t stride[OPTIC_MAX_RANK], v = 1;
  for (int32_t d = in->rank - 1; d >= 0; d--) stride[d] = v, v *= in->dims[d];
  dim_walk kept = {0}, red = {0};
  double outputs = 1, R = 1;
  for (int32_t d = 0; d < in->rank; d++) {
    walk_push(reduced[d] ? &red : &kept, in->dims[d], stride[d]);
    *(reduced[d] ? &R : &outputs) *= (double)in->dims[d];
  }
  if (!(R > 0) || !(outputs > 0)) return 0;
  double share = split_share(outputs, threads);
  if (red.rank <= 1 && (red.rank == 0 || red.strides[0] == 1)) {
    *floor = outputs * mc->reduce_row_ns / share;
    return 0;
  }
  if (red.rank == 1 && kept.rank > 0 && kept.strides[kept.rank - 1] == 1) {
    const double inner = (double)kept.dims[kept.rank - 1], w = ceil(inner / (share < inner ? share : inner));
    *streams = optic_f32_reduce_cols_streams((size_t)R, (size_t)w, (size_t)red.strides[0]);
    return outputs / inner * mc->reduce_cols_call_ns / share;
  }
  *floor = outputs * mc->reduce_gather_output_ns / share;
  return 0;
}

/* batch-norm-training/-inference/-grad (graph/batch_norm.c, on one thread):
 * the op's fixed cost plus its per-element cost over the operand; 0 when
 * the op's per-element figure is not known. */
static double batch_norm_ns(const optic_machine *mc, optic_opcode op, const optic_type *x) {
  double e = op == OPTIC_OP_BATCH_NORM_TRAINING    ? mc->batch_norm_training_element_ns
             : op == OPTIC_OP_BATCH_NORM_INFERENCE ? mc->batch_norm_inference_element_ns
                                                   : mc->batch_norm_grad_element_ns;
  return e > 0 ? mc->batch_norm_run_ns + elements(x) * e : 0;
}

/* A pad's or reduce-window's own work on one core (format 13): per element
 * (a pad's outputs, a reduce-window's outputs x window size) and per run of
 * outputs along the last dim, which is the whole last dim only when the op
 * leaves it alone (no padding; a window of 1 with stride 1). 0 when the
 * figures are not known. */
static double window_op_ns(const optic_machine *mc, const optic_module_t *m, optic_node_id id, optic_opcode op) {
  optic_node_attrs_t a;
  const optic_type *t = optic_node_type(m, id);
  if (optic_type_is_tuple(t)) t = t->tuple_size > 0 ? &t->elements[0] : NULL;
  if (t == NULL || t->shape.rank < 1 || optic_node_attrs(m, id, &a) != OPTIC_OK) return 0;
  const int32_t last = t->shape.rank - 1;
  const double outputs = elements(t), extent = (double)t->shape.dims[last];
  if (op == OPTIC_OP_PAD) {
    const optic_pad_dim *d = &a.pad.dims[last];
    const double runs = d->low == 0 && d->high == 0 && d->interior == 0 && extent > 0 ? outputs / extent : outputs;
    return outputs * mc->pad_element_ns + runs * mc->pad_run_ns;
  }
  double w = 1;
  for (int32_t d = 0; d < a.reduce_window.rank; d++) w *= (double)a.reduce_window.window[d].size;
  const optic_window_dim *d = &a.reduce_window.window[last];
  const bool still = d->size == 1 && d->stride == 1 && d->base_dilation <= 1 && d->pad_low == 0 && d->pad_high == 0;
  const double runs = still && extent > 0 ? outputs / extent : outputs;
  return outputs * w * mc->reduce_window_element_ns + runs * mc->reduce_window_run_ns;
}

/* Work units x ns per unit the class adds (the op's own runtime path), with
 * the threads it is split over; 0 when the class is not known. */
static double class_work_ns(const optic_program_t *p, const optic_machine *mc, optic_node_id id, optic_opcode op) {
  const double threads = mc->cores;
  const optic_module_t *m = p->module;
  const optic_type *t = optic_node_type(m, id);
  const optic_type *x = optic_node_operand_count(m, id) > 0 ? optic_node_type(m, optic_node_operand(m, id, 0)) : NULL;
  switch (op) {
    case OPTIC_OP_GATHER: return gather_ns(m, mc, id, threads);
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
    case OPTIC_OP_TOPK: return topk_ns(m, mc, id, x, threads);
    case OPTIC_OP_PAD:
    case OPTIC_OP_REDUCE_WINDOW:
      return (window_op_ns(mc, m, id, op) + narrow_ns(mc, m, id)) / split_share(elements(t), threads);
    case OPTIC_OP_FUSION: {
      return fused_narrow_ns(mc, m, optic_node_called(m, id, 0), 0) / split_share(elements(t), threads);
    }
    case OPTIC_OP_DYNAMIC_UPDATE_SLICE: return dus_copy_ns(p, mc, id);
    case OPTIC_OP_BATCH_NORM_TRAINING:
    case OPTIC_OP_BATCH_NORM_INFERENCE:
    case OPTIC_OP_BATCH_NORM_GRAD: return batch_norm_ns(mc, op, x);
    case OPTIC_OP_REDUCE: {
      double fold = reduce_fold_ns(m, mc, id, threads);
      if (fold >= 0) return fold;
      double rows = half_rows_ns(m, mc, id);
      if (rows >= 0) return rows / split_share(elements(t), threads);
      double steps = fast_reduce(m, id) || half_rows_extremum(m, id) ? 0 : reduce_steps(m, id);
      double blocks = elements(t) / REDUCE_BLOCK_OUTPUTS;
      return (narrow_ns(mc, m, id) + steps * mc->reduce_step_ns) / split_share(blocks, threads);
    }
    default: return narrow_ns(mc, m, id) / split_share(elements(t), threads);
  }
}

static bool runs_code(optic_opcode op) {
  return op != OPTIC_OP_PARAMETER && op != OPTIC_OP_CONSTANT && op != OPTIC_OP_TUPLE &&
         op != OPTIC_OP_GET_TUPLE_ELEMENT && op != OPTIC_OP_RESHAPE && op != OPTIC_OP_BITCAST &&
         op != OPTIC_OP_OPT_BARRIER;
}

double program_fused_sequence_ns(const optic_program_t *p, optic_comp_id comp) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(p->module, comp, &n);
  double sum = 0;
  for (int32_t i = 0; i < n; i++) {
    optic_opcode op = optic_node_opcode(p->module, ids[i]);
    optic_cost c;
    if (!runs_code(op) || optic_node_cost(p->module, ids[i], &c) != OPTIC_OK) continue;
    sum += program_node_estimate_ns(p, ids[i], op, &c);
  }
  return sum;
}

/* The estimate on machine m (the program's threads, or one thread for an
 * op the runtime keeps on one). */
double program_node_estimate_on_ns(const optic_program_t *p, const optic_machine *m, optic_node_id id, optic_opcode op,
                                   const optic_cost *cost) {
  double t;
  optic_node_attrs_t a;
  double floor = 0;
  if (op == OPTIC_OP_REDUCE) { /* the class's bytes, then the path's fixed costs */
    bool streams = false;
    const double path = reduce_path_ns(m, p->module, id, m->cores, &floor, &streams);
    const double wide = m->reduce_cols_stream_bandwidth > 0 ? m->reduce_cols_stream_bandwidth : m->reduce_bandwidth;
    t = optic_machine_estimate_class_ns(m, cost, streams ? wide : reduce_class(m, p->module, id)) + path;
  } else if (op == OPTIC_OP_FUSION && optic_node_attrs(p->module, id, &a) == OPTIC_OK) {
    optic_comp_id fc = optic_node_called(p->module, id, 0);
    switch (a.fusion.kind) {
      case OPTIC_FUSION_OUTPUT: return program_contraction_ns(p, m, id, cost);
      case OPTIC_FUSION_INPUT: { /* one reduction loop (a fusion run as a sequence is priced by its caller) */
        optic_node_id r = optic_computation_root(p->module, fc);
        /* the input's block program (its 16-bit work) runs before each block is reduced: the two add;
         * its rows at least their fixed cost */
        bool streams = false;
        t = optic_machine_estimate_class_ns(m, cost, reduce_class(m, p->module, r)) + class_work_ns(p, m, id, op) +
            reduce_path_ns(m, p->module, r, m->cores, &floor, &streams);
        return floor + m->op_overhead_ns > t ? floor + m->op_overhead_ns : t;
      }
      case OPTIC_FUSION_LOOP: { /* the loop's bytes (and work), then its gathered leaves and 16-bit work */
        /* a loop with 16-bit work keeps the format-11 rule its per-element
         * figures were measured beside (docs/cost-model.md) */
        const double narrow = class_work_ns(p, m, id, op);
        return (m->loop_flop_ns > 0 && narrow == 0 ? loop_parts_ns(m, p->module, id, cost)
                                                   : optic_machine_estimate_class_ns(m, cost, m->loop_bandwidth)) +
               fused_leaves_ns(m, p->module, fc) /
                   split_share(loop_elements(optic_node_type(p->module, id)), m->cores) +
               narrow;
      }
      default: t = optic_machine_estimate_ns(m, cost); break;
    }
  } else if (op == OPTIC_OP_SLICE || op == OPTIC_OP_DYNAMIC_SLICE) {
    /* the part it copies lives where its whole operand does */
    const double whole = graph_array_bytes(optic_node_type(p->module, optic_node_operand(p->module, id, 0)));
    t = graph_machine_estimate_at_ns(m, cost, whole > cost->bytes_accessed ? whole : cost->bytes_accessed);
  } else {
    t = optic_machine_estimate_ns(m, cost);
  }
  double work = class_work_ns(p, m, id, op) + floor;
  if (work + m->op_overhead_ns > t) t = work + m->op_overhead_ns;
  return t;
}

/* Elements an op touches (result + operands; reduce-window x 4), as the
 * runtime counts them for its by-size split rule. */
static double touched_elements(const optic_module_t *m, optic_node_id id, optic_opcode op) {
  const optic_type *t = optic_node_type(m, id);
  double n = elements(t);
  if (op == OPTIC_OP_FUSION && optic_type_is_tuple(t)) n = t->tuple_size * loop_elements(t); /* every leaf */
  for (int32_t i = 0; i < optic_node_operand_count(m, id); i++)
    n += elements(optic_node_type(m, optic_node_operand(m, id, i)));
  return op == OPTIC_OP_REDUCE_WINDOW ? 4 * n : n;
}

double program_node_estimate_ns(const optic_program_t *p, optic_node_id id, optic_opcode op, const optic_cost *cost) {
  const optic_machine *m = &p->machine;
  if (op == OPTIC_OP_DOT || op == OPTIC_OP_CONVOLUTION) return program_contraction_ns(p, m, id, cost);
  /* a fusion run as a sequence: its instructions, each split or not on its
   * own, plus the step that runs them (as a call) */
  if (op == OPTIC_OP_FUSION && program_fusion_runs_as_sequence(p->module, id))
    return program_fused_sequence_ns(p, optic_node_called(p->module, id, 0)) + m->op_overhead_ns;
  if (m->cores <= 1) return program_node_estimate_on_ns(p, m, id, op, cost);
  /* the runtime's own decision (exec/bind.c calls optic_split_op too): a
   * split op runs on every thread and pays a barrier, a solo one runs on one */
  const double t1 = optic_machine_estimate_ns(&p->machine1, cost) - p->machine1.op_overhead_ns;
  if (optic_split_op(m->cores, p->options.split_min_elements, touched_elements(p->module, id, op), t1, m->sync_ns))
    return program_node_estimate_on_ns(p, m, id, op, cost) + m->sync_ns;
  return program_node_estimate_on_ns(p, &p->machine1, id, op, cost);
}
