/* Convolutions and dots in the compiler's estimates (machine format 4): the
 * estimate plans each convolution with the runtime's planner, so the
 * strategy optic_program_conv_work reports is the one optic_conv_plan_make
 * chooses for the same descriptor (built here independently from the dim
 * labels), in the documented class; the time is exactly the documented
 * formula of the class's figures; a machine without the class keeps the
 * GEMM figure; f16/bf16 operands add their widening; the threads divide the
 * work up to the plan's work units; an output fusion adds one pass of its
 * result; a dot takes the dot figures on the dot planner's GEMM view
 * (flops, elements, calls, packed copies). The XLA counts
 * never change with the machine.
 * Reproduce: build/release/tests/graph_compile_conv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "kernels/conv.h"
#include "kernels/conv_bf16.h"
#include "kernels/dot.h"
#include "kernels/dot_bf16.h"
#include "tests/compile_text.h"
#include "tests/harness.h"
#include "tests/toy_machine.h"

/* tests/toy_machine.h on one core. */
static optic_machine toy(void) { return ot_toy_machine(1); }

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-9; }

typedef struct conv_case {
  const char *what, *labels, *input, *kernel, *output, *window, *pad;
  int64_t groups;
  int32_t want_class; /* OPTIC_CONV_CLASS_*; -1: direct on AVX-512, else im2col_mk */
} conv_case;

static const conv_case cases_conv[] = {
    {"NHWC 3x3", "b01f_01io->b01f", "1,12,12,32", "3,3,32,32", "1,12,12,32", "3x3", "1_1x1_1", 1, -1},
    {"1x1", "b01f_01io->b01f", "2,8,8,16", "1,1,16,24", "2,8,8,24", "1x1", "0_0x0_0", 1, OPTIC_CONV_CLASS_GEMM},
    {"NCHW 3x3", "bf01_oi01->bf01", "1,8,10,10", "16,8,3,3", "1,16,10,10", "3x3", "1_1x1_1", 1,
     OPTIC_CONV_CLASS_IM2COL_KM},
    {"one input feature", "b01f_01io->b01f", "4,5,5,1", "3,3,1,32", "4,5,5,32", "3x3", "1_1x1_1", 1,
     OPTIC_CONV_CLASS_IM2COL_KM},
    {"3-D", "b012f_012io->b012f", "1,2,8,8,3", "3,3,3,3,16", "1,2,8,8,16", "3x3x3", "1_1x1_1x1_1", 1,
     OPTIC_CONV_CLASS_IM2COL_MK},
    {"OI kernel", "b01f_01oi->b01f", "1,8,8,16", "3,3,16,16", "1,8,8,16", "3x3", "1_1x1_1", 1,
     OPTIC_CONV_CLASS_IM2COL_MK},
    {"depthwise NHWC", "b01f_01io->b01f", "1,9,9,32", "3,3,1,32", "1,9,9,32", "3x3", "1_1x1_1", 32,
     OPTIC_CONV_CLASS_GROUPED},
    {"depthwise NCHW", "bf01_oi01->bf01", "1,16,12,12", "16,1,3,3", "1,16,12,12", "3x3", "1_1x1_1", 16,
     OPTIC_CONV_CLASS_GROUPED_ROWS},
};
#define N_CONV ((int)(sizeof cases_conv / sizeof cases_conv[0]))

static void conv_text(const conv_case *c, const char *dt, char *buf, size_t size) {
  snprintf(buf, size,
           "HloModule c\n"
           "ENTRY e {\n"
           "  x = %s[%s] parameter(0)\n"
           "  k = %s[%s] parameter(1)\n"
           "  ROOT y = %s[%s] convolution(x, k), window={size=%s pad=%s}, dim_labels=%s, feature_group_count=%lld\n"
           "}\n",
           dt, c->input, dt, c->kernel, dt, c->output, c->window, c->pad, c->labels, (long long)c->groups);
}

static optic_program_t *compile_text(const char *text, const optic_machine *mc, int32_t threads, int32_t fusion) {
  return ot_compile_text(text, mc, threads, 0, fusion);
}

/* The first instruction of the entry with this opcode, or NO_NODE. */
static optic_node_id find_op(const optic_program_t *p, optic_opcode op) {
  const optic_module_t *m = optic_program_module(p);
  int32_t n = 0;
  const optic_node_id *ids = optic_computation_instructions(m, optic_program_entry(p), &n);
  for (int32_t i = 0; i < n; i++)
    if (optic_node_opcode(m, ids[i]) == op) return ids[i];
  return OPTIC_NO_NODE;
}

static void parse_dims(const char *s, optic_shape *sh) {
  sh->rank = 0;
  for (const char *q = s; *q;) {
    char *end;
    sh->dims[sh->rank++] = strtoll(q, &end, 10);
    q = *end == ',' ? end + 1 : end;
  }
}

/* What optic_conv_plan_make chooses for the case, planned here directly. */
static int32_t kernel_strategy(const conv_case *c, int32_t threads) {
  optic_conv_desc d;
  optic_conv_desc_init(&d);
  OT_EXPECT_OK(optic_conv_parse_dim_labels(c->labels, &d.dn));
  parse_dims(c->input, &d.input);
  parse_dims(c->kernel, &d.kernel);
  for (int32_t s = 0; s < d.dn.nspatial; s++) d.pad_lo[s] = d.pad_hi[s] = strcmp(c->window, "1x1") == 0 ? 0 : 1;
  d.feature_group_count = c->groups;
  optic_conv_plan plan;
  OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, threads, &plan));
  return plan.strategy;
}

/* The strategy of every case is the planner's, in the documented class. */
static void planner_shared(void) {
  optic_machine mc = toy();
  char text[1024];
  bool direct = optic_isa_selected() == OPTIC_ISA_AVX512 || optic_isa_selected() == OPTIC_ISA_AVX2;
  for (int i = 0; i < N_CONV; i++) {
    const conv_case *c = &cases_conv[i];
    conv_text(c, "f32", text, sizeof text);
    optic_program_t *p = compile_text(text, &mc, 0, 1);
    optic_node_id id = p ? find_op(p, OPTIC_OP_CONVOLUTION) : OPTIC_NO_NODE;
    optic_conv_work w = {0};
    if (id != OPTIC_NO_NODE) OT_EXPECT_OK(optic_program_conv_work(p, id, &w));
    int32_t want = c->want_class >= 0 ? c->want_class : direct ? OPTIC_CONV_CLASS_DIRECT : OPTIC_CONV_CLASS_IM2COL_MK;
    OT_CHECK(w.strategy == kernel_strategy(c, 1), "%s: strategy %d, the planner's %d", c->what, (int)w.strategy,
             (int)kernel_strategy(c, 1));
    OT_CHECK(w.conv_class == want, "%s: class %s, documented %s", c->what, optic_conv_class_name(w.conv_class),
             optic_conv_class_name(want));
    /* the GEMM-based strategies compute padding taps, the loops do not */
    optic_cost cost = {0};
    if (id != OPTIC_NO_NODE) OT_EXPECT_OK(optic_node_cost(optic_program_module(p), id, &cost));
    bool loops = w.conv_class == OPTIC_CONV_CLASS_DIRECT || w.conv_class == OPTIC_CONV_CLASS_GROUPED ||
                 w.conv_class == OPTIC_CONV_CLASS_GROUPED_ROWS;
    OT_CHECK(loops ? near(w.macs, cost.flops / 2) : w.macs >= cost.flops / 2 - 0.5, "%s: macs %g, XLA flops %g",
             c->what, w.macs, cost.flops);
    OT_CHECK(w.moved > 0 && w.units >= 1 && w.widened == 0, "%s", c->what);
    optic_program_destroy(p);
  }
  /* not a convolution */
  const char *add = "HloModule a\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, x)\n}\n";
  optic_program_t *p = compile_text(add, &mc, 0, 0);
  optic_conv_work w;
  if (p) OT_EXPECT_STATUS(optic_program_conv_work(p, find_op(p, OPTIC_OP_ADD), &w), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_program_conv_work(NULL, 0, &w), OPTIC_ERR_INVALID_ARGUMENT);
  optic_program_destroy(p);
}

/* est of the entry's convolution (or first op `op`) of text on mc. */
static double est_op(const char *text, const optic_machine *mc, int32_t threads, int32_t fusion, optic_opcode op,
                     optic_conv_work *w, optic_cost *cost) {
  optic_program_t *p = compile_text(text, mc, threads, fusion);
  optic_node_id id = p ? find_op(p, op) : OPTIC_NO_NODE;
  optic_node_estimate e = {{0}, -1};
  if (id != OPTIC_NO_NODE) OT_EXPECT_OK(optic_program_node_estimate(p, id, &e));
  if (w && id != OPTIC_NO_NODE && op == OPTIC_OP_CONVOLUTION) OT_EXPECT_OK(optic_program_conv_work(p, id, w));
  if (cost) *cost = e.cost;
  optic_program_destroy(p);
  return e.est_ns;
}

/* The formula per class (+ conv_call_ns when known); without the class, the GEMM figure. */
static void estimate_per_class(void) {
  optic_machine with = toy(), without = toy();
  with.gemm_efficiency = without.gemm_efficiency = 0.5;
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) with.conv_efficiency[c] = 0.25, with.conv_element_ns[c] = 0.5;
  char text[1024];
  for (int i = 0; i < N_CONV; i++) {
    conv_text(&cases_conv[i], "f32", text, sizeof text);
    optic_conv_work w = {0};
    optic_cost c1 = {0}, c0 = {0};
    double e1 = est_op(text, &with, 0, 0, OPTIC_OP_CONVOLUTION, &w, &c1);
    double e0 = est_op(text, &without, 0, 0, OPTIC_OP_CONVOLUTION, NULL, &c0);
    OT_CHECK(memcmp(&c1, &c0, sizeof c1) == 0, "%s: the XLA counts do not depend on the machine", cases_conv[i].what);
    double model = 2 * w.macs / 0.25 + w.moved * 0.5, roof = optic_machine_estimate_ns(&with, &c1) - 10;
    OT_CHECK(near(e1, (model > roof ? model : roof) + 10), "%s: %g, formula %g", cases_conv[i].what, e1, model + 10);
    OT_CHECK(near(e0, optic_machine_estimate_gemm_ns(&without, &c0)), "%s: without the class %g, GEMM figure %g",
             cases_conv[i].what, e0, optic_machine_estimate_gemm_ns(&without, &c0));
    /* conv_call_ns (format 14): once per convolution, whatever its class and threads */
    optic_machine called = with;
    called.conv_call_ns = 150;
    const double model_called = model + 150;
    OT_CHECK(near(est_op(text, &called, 0, 0, OPTIC_OP_CONVOLUTION, NULL, NULL),
                  (model_called > roof ? model_called : roof) + 10),
             "%s: with conv_call_ns 150", cases_conv[i].what);
    OT_CHECK(near(optic_machine_estimate_conv_ns(&called, &w), optic_machine_estimate_conv_ns(&with, &w) + 150),
             "%s: optic_machine_estimate_conv_ns adds conv_call_ns", cases_conv[i].what);
    /* one class known, another case's class not: that one falls back alone */
    optic_machine one = without;
    one.conv_efficiency[w.conv_class] = 0.25;
    OT_CHECK(near(est_op(text, &one, 0, 0, OPTIC_OP_CONVOLUTION, NULL, NULL),
                  2 * w.macs / 0.25 > roof ? 2 * w.macs / 0.25 + 10 : roof + 10),
             "%s: its own class only", cases_conv[i].what);
  }
}

/* bf16 arrays are widened (6 bytes per element at the roofline) where the
 * runtime runs the convolution in f32 (a depthwise one unless the grouped
 * vector loops read it in place: optic_conv_grouped_bf16_chosen; any other
 * where no bf16 GEMM is chosen: optic_conv_bf16_chosen, the runtime's own
 * calls), else the bf16 class prices the padded multiply-adds unwidened; two
 * threads divide the work up to the plan's units. */
static void widening_and_threads(void) {
  optic_machine mc = toy();
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) mc.conv_efficiency[c] = 0.25, mc.conv_element_ns[c] = 0.5;
  mc.conv_efficiency[OPTIC_CONV_CLASS_BF16] = 2; /* above the f32 peak, as AMX is */
  char text[1024];
  const conv_case *cs[2] = {&cases_conv[6], &cases_conv[2]}; /* depthwise NHWC 1x9x9x32; NCHW 1x8x10x10 -> 16 */
  const double widened[2] = {2592 + 288 + 2592, 800 + 1152 + 1600};
  for (int i = 0; i < 2; i++) {
    conv_text(cs[i], "f32", text, sizeof text);
    optic_conv_work w = {0}, wb = {0};
    double f32 = est_op(text, &mc, 0, 0, OPTIC_OP_CONVOLUTION, &w, NULL);
    conv_text(cs[i], "bf16", text, sizeof text);
    double bf16 = est_op(text, &mc, 0, 0, OPTIC_OP_CONVOLUTION, &wb, NULL);
    optic_conv_desc d;
    optic_conv_desc_init(&d);
    OT_EXPECT_OK(optic_conv_parse_dim_labels(cs[i]->labels, &d.dn));
    parse_dims(cs[i]->input, &d.input);
    parse_dims(cs[i]->kernel, &d.kernel);
    d.feature_group_count = cs[i]->groups;
    bool gemm16 = optic_conv_bf16_chosen(&d, OPTIC_BF16, OPTIC_BF16, OPTIC_BF16);
    OT_CHECK(i == 1 || !gemm16, "a depthwise conv is never on the bf16 GEMM");
    optic_conv_plan plan;
    OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &plan));
    bool in_place = !gemm16 && optic_conv_grouped_bf16_chosen(&plan, OPTIC_BF16, OPTIC_BF16, OPTIC_BF16);
    OT_CHECK(i == 1 || in_place == (optic_isa_selected() == OPTIC_ISA_AVX512),
             "a depthwise conv reads bf16 in place exactly where the vector loops run");
    if (in_place) {
      OT_CHECK(wb.conv_class == w.conv_class && wb.widened == 0 && wb.macs == w.macs, "%s: widened %g", cs[i]->what,
               wb.widened);
      OT_CHECK(near(bf16, f32), "bf16 in place %g = f32 %g", bf16, f32);
    } else if (gemm16) {
      OT_CHECK(wb.conv_class == OPTIC_CONV_CLASS_BF16 && wb.widened == 0 && wb.macs == w.macs, "%s", cs[i]->what);
      OT_CHECK(near(bf16, 2 * wb.macs / 2 + wb.moved * 0.5 + 10), "bf16 GEMM: %g", bf16);
      optic_conv_desc dp = d; /* the program's padding (conv_text: 1 on each side) */
      for (int32_t sp = 0; sp < dp.dn.nspatial; sp++) dp.pad_lo[sp] = dp.pad_hi[sp] = 1;
      optic_conv_plan pp;
      OT_EXPECT_OK(optic_conv_plan_make(&dp, OPTIC_CONV_FORWARD, 1, &pp));
      optic_conv_work direct; /* what a benchmark of the kernel alone prices: the same work */
      optic_conv_plan_bf16_work(&pp, &direct);
      OT_CHECK(direct.conv_class == wb.conv_class && direct.macs == wb.macs && direct.moved == wb.moved &&
                   direct.units == wb.units && direct.widened == 0,
               "%s: optic_conv_plan_bf16_work: macs %g/%g moved %g/%g units %g/%g", cs[i]->what, direct.macs, wb.macs,
               direct.moved, wb.moved, direct.units, wb.units);
    } else {
      OT_CHECK(wb.conv_class == w.conv_class && wb.widened == widened[i] && wb.macs == w.macs, "%s: widened %g",
               cs[i]->what, wb.widened);
      OT_CHECK(near(bf16 - f32, 6 * widened[i] / 4), "bf16 %g = f32 %g + widening %g", bf16, f32, 6 * widened[i] / 4);
    }
  }
  const conv_case *c = cs[1];
  optic_machine two = mc;
  two.cores = 2, two.peak_flops = 2e9, two.cache_bandwidth = 8e9, two.dram_bandwidth = 2e9, two.sync_ns = 100;
  conv_text(c, "f32", text, sizeof text);
  optic_conv_work w2 = {0};
  double e2 = est_op(text, &two, 2, 0, OPTIC_OP_CONVOLUTION, &w2, NULL);
  double share = w2.units >= 2 ? 2 : 1;
  OT_CHECK(near(e2, (2 * w2.macs / 0.25 + w2.moved * 0.5) / share + 10), "2 threads: %g (units %g)", e2, w2.units);
}

/* An output fusion (conv + bias + relu): its convolution's time plus one
 * read and write of its result at loop_bandwidth (format 12: at
 * loop_stream_bandwidth, plus the epilogue's flops). */
static void output_fusion(void) {
  const char *text =
      "HloModule f\n"
      "ENTRY e {\n"
      "  x = f32[4,6,6,8] parameter(0)\n"
      "  k = f32[3,3,8,16] parameter(1)\n"
      "  b = f32[16] parameter(2)\n"
      "  y = f32[4,6,6,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  bb = f32[4,6,6,16] broadcast(b), dimensions={3}\n"
      "  s = f32[4,6,6,16] add(y, bb)\n"
      "  z = f32[] constant(0)\n"
      "  zb = f32[4,6,6,16] broadcast(z), dimensions={}\n"
      "  ROOT r = f32[4,6,6,16] maximum(s, zb)\n"
      "}\n";
  optic_machine mc = toy();
  mc.loop_bandwidth = 2e9;
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) mc.conv_efficiency[c] = 0.25, mc.conv_element_ns[c] = 0.5;
  optic_conv_work w = {0};
  double conv = est_op(text, &mc, 0, 0, OPTIC_OP_CONVOLUTION, &w, NULL);
  double fused = est_op(text, &mc, 0, 1, OPTIC_OP_FUSION, NULL, NULL);
  OT_CHECK(fused > 0 && near(fused, conv + 2 * 2304 * 4 / 2.0), "fusion %g = conv %g + epilogue %g", fused, conv,
           2 * 2304 * 4 / 2.0);
  /* format 12: the result's read and write at loop_stream_bandwidth, plus
   * the epilogue's add and maximum (2 flops per element) at loop_flop_ns */
  mc.loop_stream_bandwidth = 4e9, mc.loop_flop_ns = 0.5, mc.loop_transcendental_ns = 3;
  fused = est_op(text, &mc, 0, 1, OPTIC_OP_FUSION, NULL, NULL);
  const double epilogue = 2 * 2304 * 4 / 4.0 + 2 * 2304 * 0.5;
  OT_CHECK(fused > 0 && near(fused, conv + epilogue), "format 12: fusion %g = conv %g + epilogue %g", fused, conv,
           epilogue);
}

/* An output fusion the runtime cannot run as one step (a bf16 convolution:
 * exec/bind.c takes f32 only) runs its instructions one by one: its
 * estimate is the sum of theirs, which the unfused program's instructions
 * are too, plus the dispatch of the step that runs them (as a call's). */
static void output_fusion_sequence(void) {
  const char *text =
      "HloModule f\n"
      "ENTRY e {\n"
      "  x = bf16[4,6,6,8] parameter(0)\n"
      "  k = bf16[3,3,8,16] parameter(1)\n"
      "  b = bf16[16] parameter(2)\n"
      "  y = bf16[4,6,6,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  bb = bf16[4,6,6,16] broadcast(b), dimensions={3}\n"
      "  ROOT s = bf16[4,6,6,16] add(y, bb)\n"
      "}\n";
  optic_machine mc = toy();
  mc.loop_bandwidth = 2e9, mc.bf16_element_ns = 0.75;
  for (int c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) mc.conv_efficiency[c] = 0.25, mc.conv_element_ns[c] = 0.5;
  double fused = est_op(text, &mc, 0, 1, OPTIC_OP_FUSION, NULL, NULL);
  optic_program_t *p = compile_text(text, &mc, 0, 0);
  optic_program_summary sum;
  if (p) OT_EXPECT_OK(optic_program_summary_get(p, &sum));
  OT_CHECK(p && fused > 0 && near(fused, sum.est_ns + mc.op_overhead_ns), "fusion %g, its instructions unfused %g",
           fused, p ? sum.est_ns : -1);
  optic_program_destroy(p);
}

/* A batch of 64 4x4x4 products on the dot figures: flops / (0.5 x peak)
 * + 64 x 48 elements x 0.25 + 64 calls x 100; without dot_efficiency the
 * GEMM figure. A batch whose rhs free dims are apart (the planner packs
 * it, checked here with optic_dot_plan) adds 2 ns per packed element; a
 * format-7 grid replaces the efficiency and the element and call terms. */
static void dot_calls(void) {
  const char *text =
      "HloModule d\n"
      "ENTRY e {\n"
      "  a = f32[64,4,4] parameter(0)\n"
      "  b = f32[64,4,4] parameter(1)\n"
      "  ROOT d = f32[64,4,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_contracting_dims={1}\n"
      "}\n";
  optic_machine mc = toy();
  optic_cost c = {0};
  double e0 = est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, &c);
  OT_CHECK(c.flops == 2.0 * 64 * 64 && near(e0, optic_machine_estimate_gemm_ns(&mc, &c)), "no dot figures: %g", e0);
  mc.dot_efficiency = 0.5, mc.dot_element_ns = 0.25, mc.dot_call_ns = 100, mc.dot_pack_element_ns = 2;
  double e1 = est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, NULL);
  OT_CHECK(near(e1, c.flops / 0.5 + 64 * 48 * 0.25 + 64 * 100 + 10), "64 calls: %g", e1);
  const char *packed =
      "HloModule d\n"
      "ENTRY e {\n"
      "  a = f32[64,4,4] parameter(0)\n"
      "  b = f32[64,3,4,2] parameter(1)\n"
      "  ROOT d = f32[64,4,3,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_contracting_dims={2}\n"
      "}\n";
  optic_shape ls = {3, {64, 4, 4}}, rs = {4, {64, 3, 4, 2}};
  optic_dot_dims dd = {1, 1, 1, 1, {0}, {0}, {2}, {2}};
  struct optic_dot_plan plan;
  OT_EXPECT_OK(optic_dot_plan(&ls, &rs, &dd, &plan));
  OT_CHECK(plan.rhs.packed && !plan.lhs.packed && plan.batch == 64 && plan.m == 4 && plan.n == 6 && plan.k == 4);
  optic_cost cp = {0};
  double e2 = est_op(packed, &mc, 0, 0, OPTIC_OP_DOT, NULL, &cp);
  OT_CHECK(near(e2, cp.flops / 0.5 + 64 * (16 + 24 + 24) * 0.25 + 64 * 100 + 1536 * 2 + 10), "packed rhs: %g", e2);
  /* format 7: with a grid (0.25 everywhere) the GEMM path takes its
   * efficiency, no element or call terms; the packed copy still adds */
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) mc.dot_grid_efficiency[i] = 0.25;
  double g1 = est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, NULL);
  OT_CHECK(near(g1, c.flops / 0.25 + 10), "grid: %g", g1);
  double g2 = est_op(packed, &mc, 0, 0, OPTIC_OP_DOT, NULL, NULL);
  OT_CHECK(near(g2, cp.flops / 0.25 + 1536 * 2 + 10), "grid, packed rhs: %g", g2);
  mc.dot_efficiency = 0; /* the grid alone prices it */
  OT_CHECK(near(est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, NULL), g1), "grid without dot_efficiency");
}

/* A dot of two bf16 operands where the runtime's bf16 GEMM kernel is the one
 * the bf16 convolution class was measured on (optic_dot_bf16_kernel() ==
 * optic_conv_bf16_kernel(), not NONE: AMX here) is priced with that class:
 * flops / (2 x peak) + 64 x 48 elements x 0.5 + 64 calls x 100 + the bf16
 * result's rounding, its operands read in place. Elsewhere, or without the
 * class figure, the f32 dot figures plus widening all three arrays. */
static void bf16_dot_class(void) {
  const char *text =
      "HloModule d\n"
      "ENTRY e {\n"
      "  a = bf16[64,4,4] parameter(0)\n"
      "  b = bf16[64,4,4] parameter(1)\n"
      "  ROOT d = bf16[64,4,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_contracting_dims={1}\n"
      "}\n";
  optic_machine mc = toy();
  mc.dot_efficiency = 0.5, mc.dot_element_ns = 0.25, mc.dot_call_ns = 100;
  optic_cost c = {0}, w1 = {0, 0, 6 * 1024.0}, w3 = {0, 0, 6 * 3072.0};
  const double widen1 = optic_machine_estimate_ns(&mc, &w1) - 10, widen3 = optic_machine_estimate_ns(&mc, &w3) - 10;
  double f32 = est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, &c);
  OT_CHECK(c.flops == 2.0 * 64 * 64, "flops %g", c.flops);
  OT_CHECK(near(f32, c.flops / 0.5 + 64 * 48 * 0.25 + 64 * 100 + widen3 + 10), "no bf16 class: %g", f32);
  mc.conv_efficiency[OPTIC_CONV_CLASS_BF16] = 2, mc.conv_element_ns[OPTIC_CONV_CLASS_BF16] = 0.5;
  double e = est_op(text, &mc, 0, 0, OPTIC_OP_DOT, NULL, NULL);
  bool on_class = optic_dot_bf16_kernel() != OPTIC_BF16_NONE && optic_dot_bf16_kernel() == optic_conv_bf16_kernel();
  /* the same figure for a benchmark that calls the kernel directly: no dispatch, no rounding */
  double direct = optic_machine_estimate_bf16_dot_ns(&mc, 64, 4, 4, 4, 64 * 4);
  if (on_class) {
    OT_CHECK(near(e, c.flops / 2 + 64 * 48 * 0.5 + 64 * 100 + widen1 + 10), "bf16 class: %g", e);
    OT_CHECK(near(direct, c.flops / 2 + 64 * 48 * 0.5 + 64 * 100), "direct bf16 estimate: %g", direct);
    mc.conv_efficiency[OPTIC_CONV_CLASS_BF16] = 0;
    OT_CHECK(optic_machine_estimate_bf16_dot_ns(&mc, 64, 4, 4, 4, 64 * 4) == 0, "no class figure: 0");
  } else {
    OT_CHECK(direct == 0, "another kernel: no bf16 estimate, got %g", direct);
    OT_CHECK(near(e, f32), "bf16 kernel %s is not the class's: f32 figures %g, got %g",
             optic_dot_bf16_kernel_name(optic_dot_bf16_kernel()), f32, e);
  }
}

static const ot_case cases[] = {
    {"planner_shared", planner_shared},
    {"estimate_per_class", estimate_per_class},
    {"widening_and_threads", widening_and_threads},
    {"output_fusion", output_fusion},
    {"output_fusion_sequence", output_fusion_sequence},
    {"dot_calls", dot_calls},
    {"bf16_dot_class", bf16_dot_class},
};

OT_MAIN(cases)
