/* The time of a convolution or dot as the runtime runs it (machine format 4):
 * the estimate plans each contraction with the planner the runtime calls
 * (kernels/conv.h optic_conv_plan_make, kernels/dot.h optic_dot_plan, with
 * the same descriptor and threads as exec/bind.c), so it follows the same
 * strategy, and prices the plan's executed work with its strategy's figures:
 *   convolution  2 x executed multiply-adds / (conv_efficiency[class] x
 *                peak_flops / cores) + moved elements x conv_element_ns[class],
 *                over the threads its work units allow; f16/bf16 arrays are
 *                widened to f32 first (a copy of each), except where the
 *                bf16 GEMM or the grouped loops read bf16 in place
 *   dot          flops / (dot_efficiency x peak_flops / cores) + operand and
 *                result elements x dot_element_ns + BLAS calls (one per
 *                batch item) x dot_call_ns + packed operands' elements x
 *                dot_pack_element_ns, over the threads (format 7: a GEMM-path
 *                dot takes its efficiency from the machine's grid over
 *                M, N, K instead, the element and call terms inside it);
 *                a dot of two bf16
 *                operands on the bf16 GEMM kernel the bf16 conv class was
 *                measured on takes that class's figures, nothing widened
 * A machine without the class figure (0: files before format 4, presets)
 * keeps the GEMM figure on XLA's flops. The XLA counts are never changed. */
#include <string.h>

#include <optic/attrs.h>

#include "graph/internal.h"
#include "graph/program_internal.h"
#include "kernels/conv.h"
#include "kernels/conv_bf16.h"
#include "kernels/dot.h"
#include "kernels/dot_bf16.h"

static double elements(const optic_type *t) { return graph_array_elements(t); }

int32_t graph_conv_class_of(int32_t strategy, bool grouped_rows) {
  switch (strategy) {
    case OPTIC_CONV_STRATEGY_GEMM: return OPTIC_CONV_CLASS_GEMM;
    case OPTIC_CONV_STRATEGY_IM2COL_MK: return OPTIC_CONV_CLASS_IM2COL_MK;
    case OPTIC_CONV_STRATEGY_DIRECT: return OPTIC_CONV_CLASS_DIRECT;
    case OPTIC_CONV_STRATEGY_GROUPED: return grouped_rows ? OPTIC_CONV_CLASS_GROUPED_ROWS : OPTIC_CONV_CLASS_GROUPED;
    /* KM, its tap-wise copy, and the window-tap loops (kernels/conv_taps.h:
     * no class of their own yet, they take KM's figures) */
    default: return OPTIC_CONV_CLASS_IM2COL_KM;
  }
}

/* Widened arrays of a contraction with f16/bf16 operands or result
 * (exec/bind.c plan_widen): elements copied to or from f32. */
static double widened_elements(const optic_module_t *m, optic_node_id id) {
  double n = 0;
  const optic_type *t[3] = {optic_node_type(m, optic_node_operand(m, id, 0)),
                            optic_node_type(m, optic_node_operand(m, id, 1)), optic_node_type(m, id)};
  for (int k = 0; k < 3; k++)
    if (t[k]->dtype == OPTIC_F16 || t[k]->dtype == OPTIC_BF16) n += elements(t[k]);
  return n;
}

void optic_conv_plan_work(const optic_conv_plan *plan, double xla_flops, optic_conv_work *out) {
  if (!plan || !out) return;
  memset(out, 0, sizeof *out);
  out->strategy = plan->strategy;
  out->conv_class = graph_conv_class_of(plan->strategy, plan->grouped_rows);
  double positions = (double)plan->g.groups * (double)plan->positions;
  /* the im2col and GEMM strategies compute padding taps as zeros; the
   * direct and grouped loops run the valid taps only (XLA's count) */
  bool valid_only = plan->strategy == OPTIC_CONV_STRATEGY_DIRECT || plan->strategy == OPTIC_CONV_STRATEGY_GROUPED ||
                    plan->strategy == OPTIC_CONV_STRATEGY_TAPS;
  out->macs = valid_only ? xla_flops / 2 : positions * (double)plan->kc * (double)plan->g.cout;
  out->moved = positions * ((double)plan->kc + (double)plan->g.cout);
  out->units = (double)plan->units;
}

void optic_conv_plan_bf16_work(const optic_conv_plan *plan, optic_conv_work *out) {
  if (!plan || !out) return;
  optic_conv_plan_work(plan, 0, out);
  out->strategy = 0, out->conv_class = OPTIC_CONV_CLASS_BF16, out->widened = 0;
  out->macs = (double)plan->g.groups * (double)plan->positions * (double)plan->kc * (double)plan->g.cout;
}

optic_status optic_program_conv_work(const optic_program_t *p, optic_node_id id, optic_conv_work *out) {
  if (!p || !out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_conv_work: NULL argument");
  const optic_module_t *m = p->module;
  if (id < 0 || id >= p->n_nodes || optic_node_opcode(m, id) != OPTIC_OP_CONVOLUTION)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_program_conv_work: node %d is not a convolution", (int)id);
  optic_conv_desc d;
  graph_conv_desc(m, graph_instr(m, id), &d);
  optic_conv_plan plan;
  int32_t threads = p->machine.cores > 0 ? p->machine.cores : 1;
  optic_status st = optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, threads, &plan);
  if (st != OPTIC_OK) return st;
  optic_cost c = {0};
  if ((st = optic_node_cost(m, id, &c)) != OPTIC_OK) return st;
  optic_conv_plan_work(&plan, c.flops, out);
  out->widened = widened_elements(m, id);
  /* the runtime's choice of the bf16 GEMM (exec/bind.c makes the same call):
   * im2col in bf16 over the f32 plan's geometry, nothing widened */
  if (optic_conv_bf16_chosen(&d, optic_node_type(m, optic_node_operand(m, id, 0))->dtype,
                             optic_node_type(m, optic_node_operand(m, id, 1))->dtype, optic_node_type(m, id)->dtype)) {
    optic_conv_plan_bf16_work(&plan, out);
  } else if (optic_conv_grouped_bf16_chosen(&plan, optic_node_type(m, optic_node_operand(m, id, 0))->dtype,
                                            optic_node_type(m, optic_node_operand(m, id, 1))->dtype,
                                            optic_node_type(m, id)->dtype)) {
    out->widened = 0; /* the grouped loops read bf16 in place: the f32 class, nothing widened */
  }
  return OPTIC_OK;
}

/* The share of mc's cores a plan with `units` work units keeps busy. */
static double share(const optic_machine *mc, double units) {
  double t = mc->cores > 1 ? (double)mc->cores : 1;
  return units >= t ? t : units >= 1 ? units : 1;
}

/* Time to copy `elements` 16-bit floats to or from f32 (6 bytes each). */
static double widen_ns(const optic_machine *mc, double elements) {
  optic_cost c = {0, 0, 6 * elements};
  return elements > 0 ? optic_machine_estimate_ns(mc, &c) - mc->op_overhead_ns : 0;
}

double optic_machine_estimate_conv_ns(const optic_machine *mc, const optic_conv_work *w) {
  if (!mc || !w || w->conv_class < 0 || w->conv_class >= OPTIC_CONV_CLASS_COUNT) return 0;
  double eff = mc->conv_efficiency[w->conv_class];
  if (!(eff > 0)) return 0;
  double core_peak = mc->peak_flops / (mc->cores > 1 ? mc->cores : 1);
  double one = 2 * w->macs / (eff * core_peak) * 1e9 + w->moved * mc->conv_element_ns[w->conv_class];
  return one / share(mc, w->units) + mc->conv_call_ns; /* every thread pays its own call at once */
}

double optic_machine_estimate_dot_ns(const optic_machine *mc, double batch, double M, double N, double K,
                                     double packed_elements, double units) {
  if (!mc) return 0;
  double core_peak = mc->peak_flops / (mc->cores > 1 ? mc->cores : 1);
  double grid = M >= 2 && N >= 2 ? optic_machine_dot_grid_efficiency(mc, M, N, K) : 0;
  if (grid > 0) /* the GEMM path on the grid: its times include the call and element costs */
    return (2 * batch * M * N * K / (grid * core_peak) * 1e9 + packed_elements * mc->dot_pack_element_ns) /
           share(mc, units);
  if (!(mc->dot_efficiency > 0)) return 0;
  double one = 2 * batch * M * N * K / (mc->dot_efficiency * core_peak) * 1e9 +
               batch * (M * K + K * N + M * N) * mc->dot_element_ns + batch * mc->dot_call_ns +
               packed_elements * mc->dot_pack_element_ns;
  return one / share(mc, units);
}

/* Convolution id on mc from its class figures, or -1 when the class is not
 * known (the caller takes the GEMM figure). */
static double conv_ns(const optic_program_t *p, const optic_machine *mc, optic_node_id id) {
  optic_conv_work w;
  if (optic_program_conv_work(p, id, &w) != OPTIC_OK) return -1;
  double t = optic_machine_estimate_conv_ns(mc, &w);
  return t > 0 ? t + widen_ns(mc, w.widened) : -1;
}

/* Whether a dot of these operand types runs on the bf16 GEMM kernel the
 * bf16 convolution class was measured on (exec/bind.c takes the bf16 kernel
 * for two bf16 operands; the conv class is timed where that kernel is the
 * one bf16 convolutions use), with that class's figure known. */
static bool bf16_dot_on_class(const optic_machine *mc, optic_dtype l, optic_dtype r) {
  return l == OPTIC_BF16 && r == OPTIC_BF16 && mc->conv_efficiency[OPTIC_CONV_CLASS_BF16] > 0 &&
         optic_dot_bf16_kernel() != OPTIC_BF16_NONE && optic_dot_bf16_kernel() == optic_conv_bf16_kernel();
}

double optic_machine_estimate_bf16_dot_ns(const optic_machine *mc, double batch, double M, double N, double K,
                                          double units) {
  if (!mc || !bf16_dot_on_class(mc, OPTIC_BF16, OPTIC_BF16)) return 0;
  double core_peak = mc->peak_flops / (mc->cores > 1 ? mc->cores : 1);
  double one = 2 * batch * M * N * K / (mc->conv_efficiency[OPTIC_CONV_CLASS_BF16] * core_peak) * 1e9 +
               batch * (M * K + K * N + M * N) * mc->conv_element_ns[OPTIC_CONV_CLASS_BF16] + batch * mc->dot_call_ns;
  return one / share(mc, units);
}

/* A bf16 x bf16 dot on the bf16 GEMM: the bf16 class's efficiency and
 * element figure over the plan's GEMM view, one kernel call per batch item;
 * the operands are read in place (packed into bf16 panels), only a 16-bit
 * result is rounded from f32. */
static double bf16_dot_ns(const optic_machine *mc, const struct optic_dot_plan *plan, double units,
                          const optic_type *result) {
  bool half = result->dtype == OPTIC_BF16 || result->dtype == OPTIC_F16;
  return optic_machine_estimate_bf16_dot_ns(mc, (double)plan->batch, (double)plan->m, (double)plan->n, (double)plan->k,
                                            units) +
         widen_ns(mc, half ? elements(result) : 0);
}

/* Dot id on mc from the dot planner's GEMM view and the dot figures, or -1
 * when neither the grid nor dot_efficiency prices it. */
static double dot_ns(const optic_program_t *p, const optic_machine *mc, optic_node_id id) {
  const optic_module_t *m = p->module;
  optic_node_attrs_t a;
  if (!(mc->dot_efficiency > 0 || optic_machine_has_dot_grid(mc)) || optic_node_attrs(m, id, &a) != OPTIC_OK ||
      a.kind != OPTIC_ATTRS_DOT)
    return -1;
  struct optic_dot_plan plan;
  const optic_type *l = optic_node_type(m, optic_node_operand(m, id, 0));
  const optic_type *r = optic_node_type(m, optic_node_operand(m, id, 1));
  if (optic_dot_plan(&l->shape, &r->shape, &a.dot, &plan) != OPTIC_OK) return -1;
  if (plan.path != OPTIC_DOT_PATH_GEMM && plan.path != OPTIC_DOT_PATH_GEMV) return -1;
  double packed = (plan.lhs.packed ? elements(l) : 0) + (plan.rhs.packed ? elements(r) : 0);
  double units = (double)plan.batch * (double)(plan.split_n ? plan.n : plan.m);
  if (bf16_dot_on_class(mc, l->dtype, r->dtype)) return bf16_dot_ns(mc, &plan, units, optic_node_type(m, id));
  double t = optic_machine_estimate_dot_ns(mc, (double)plan.batch, (double)plan.m, (double)plan.n, (double)plan.k,
                                           packed, units);
  return t > 0 ? t + widen_ns(mc, widened_elements(m, id)) : -1;
}

optic_node_id program_fused_contraction(const optic_module_t *m, optic_comp_id comp) {
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, comp, &n);
  optic_node_id c = OPTIC_NO_NODE;
  for (int32_t i = 0; i < n; i++) {
    optic_opcode op = optic_node_opcode(m, ids[i]);
    if (op != OPTIC_OP_DOT && op != OPTIC_OP_CONVOLUTION) continue;
    if (c != OPTIC_NO_NODE) return OPTIC_NO_NODE;
    c = ids[i];
  }
  return c;
}

double program_contraction_ns(const optic_program_t *p, const optic_machine *mc, optic_node_id id,
                              const optic_cost *cost) {
  const optic_module_t *m = p->module;
  double gemm = optic_machine_estimate_gemm_ns(mc, cost);
  optic_node_id c = id;
  double epilogue = 0;
  if (optic_node_opcode(m, id) == OPTIC_OP_FUSION) {
    /* one step: a fusion the runtime runs as a sequence is priced by program_node_estimate_ns */
    c = program_fused_contraction(m, optic_node_called(m, id, 0));
    if (c == OPTIC_NO_NODE) return gemm;
    /* the epilogue reads and writes the result once more as a fused loop
     * (format 12, an f32 result: at the loop's stream rate, plus the
     * epilogue's own flops and transcendentals, split as the contraction) */
    const optic_type *t = optic_node_type(m, id);
    double bytes = optic_type_is_tuple(t) ? 0 : 2 * elements(t) * (double)optic_dtype_size(t->dtype);
    const bool parts =
        mc->loop_flop_ns > 0 && mc->loop_stream_bandwidth > 0 && !optic_type_is_tuple(t) && t->dtype == OPTIC_F32;
    double bw = parts ? mc->loop_stream_bandwidth : mc->loop_bandwidth > 0 ? mc->loop_bandwidth : mc->cache_bandwidth;
    epilogue = bytes / bw * 1e9;
    if (parts) {
      const double share = mc->cores > 1 && elements(t) > mc->cores ? mc->cores : 1;
      epilogue += program_fused_work_ns(mc, m, optic_node_called(m, id, 0), c) / share;
    }
  }
  optic_cost cc;
  if (optic_node_cost(m, c, &cc) != OPTIC_OK) return gemm;
  double t = optic_node_opcode(m, c) == OPTIC_OP_CONVOLUTION ? conv_ns(p, mc, c) : dot_ns(p, mc, c);
  if (t < 0) return gemm;
  t += epilogue;
  /* never below the roofline; the bf16 GEMM's flops are not bound by the f32 peak */
  optic_conv_work w;
  optic_cost rc = *cost;
  if (optic_node_opcode(m, c) == OPTIC_OP_CONVOLUTION && optic_program_conv_work(p, c, &w) == OPTIC_OK &&
      w.conv_class == OPTIC_CONV_CLASS_BF16)
    rc.flops = 0;
  if (optic_node_opcode(m, c) == OPTIC_OP_DOT &&
      bf16_dot_on_class(mc, optic_node_type(m, optic_node_operand(m, c, 0))->dtype,
                        optic_node_type(m, optic_node_operand(m, c, 1))->dtype))
    rc.flops = 0;
  double roof = optic_machine_estimate_ns(mc, &rc) - mc->op_overhead_ns;
  return (t > roof ? t : roof) + mc->op_overhead_ns;
}
