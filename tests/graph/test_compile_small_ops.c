/* The small-op fixed costs of machine format 8 reach the compiler's
 * estimates exactly as docs/cost-model.md states them, and the XLA counts
 * never change: an f32 reduce over one strided dim adds one column-kernel
 * call per group of its innermost kept outputs; one over contiguous rows or
 * over dims that do not merge takes at least its rows or gathered outputs x
 * their figure; one whose column calls read more than 1 MiB of rows takes
 * the wide column kernel's class; a slice takes the cache tier of its whole
 * operand; a reduce off the f32 kernels gets nothing; batch norm takes its fixed cost plus
 * elements x its own op's figure. Each check compares a machine with the
 * figure against the same machine without it (0: not known), so it fails
 * when the rule is off. Reproduce: build/release/tests/graph_compile_small_ops */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"
#include "tests/toy_machine.h"

/* tests/toy_machine.h on one core. */
static optic_machine toy(void) { return ot_toy_machine(1); }

/* The estimate of the instruction called `name` in text compiled for mc on
 * one thread without fusion, its counts in *cost; -1 on failure. */
static double est_fused(const char *text, const optic_machine *mc, const char *name, optic_cost *cost, int fusion) {
  optic_module_t *m = NULL;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  optic_compile_options o = optic_compile_options_default();
  o.machine = mc;
  o.threads = 1;
  o.fusion = fusion;
  if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
  optic_module_destroy(m);
  double est = -1;
  const optic_module_t *pm = p ? optic_program_module(p) : NULL;
  for (optic_comp_id c = 0; pm && c < optic_module_computation_count(pm); c++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(pm, c, &n);
    for (int32_t i = 0; i < n; i++) {
      optic_node_estimate e;
      if (strcmp(optic_node_name(pm, ids[i]), name) == 0 && optic_program_node_estimate(p, ids[i], &e) == OPTIC_OK)
        est = e.est_ns, *cost = e.cost;
    }
  }
  optic_program_destroy(p);
  return est;
}

static double est_of(const char *text, const optic_machine *mc, const char *name, optic_cost *cost) {
  return est_fused(text, mc, name, cost, 0);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-6; }

/* est of `name` with machine `with` minus with `without`; the counts must agree. */
static double added_ns(const char *text, const char *name, const optic_machine *with, const optic_machine *without) {
  optic_cost a = {0}, b = {0};
  double ea = est_of(text, with, name, &a), eb = est_of(text, without, name, &b);
  OT_CHECK(ea >= 0 && eb >= 0, "%s: no estimate", name);
  OT_CHECK(a.flops == b.flops && a.bytes_accessed == b.bytes_accessed, "%s: counts differ", name);
  return ea - eb;
}

static void reduce_text(const char *dt, const char *in, const char *dims, const char *out, char *buf, size_t size) {
  snprintf(buf, size,
           "HloModule r\nadd {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT s = %s[] add(a, b)\n}\n"
           "ENTRY e {\n  x = %s[%s] parameter(0)\n  z = %s[] constant(0)\n"
           "  ROOT r = %s[%s] reduce(x, z), dimensions={%s}, to_apply=add\n}\n",
           dt, dt, dt, dt, in, dt, dt, out, dims);
}

/* Column calls (outputs / innermost kept extent) are added to the class's
 * estimate; rows and gathered outputs are a floor (their count x figure +
 * op_overhead_ns), which wins here (the figures are large against the toy's
 * bytes) and adds nothing when small; reduces off the f32 kernels and empty
 * ones get nothing. */
static void reduce_paths(void) {
  optic_machine off = toy(), on = toy();
  on.reduce_strided_bandwidth = off.reduce_strided_bandwidth = 2e9;
  on.reduce_cols_call_ns = 7;
  on.reduce_gather_output_ns = 500;
  on.reduce_row_ns = 300;
  static const struct {
    const char *dt, *in, *dims, *out;
    double added, floor; /* floor: the estimate itself, 0: none */
  } cases[] = {
      {"f32", "8,16,4", "1", "8,4", 8 * 7, 0},      /* one strided dim: 8 groups of 4 outputs */
      {"f32", "2,3,4,5", "1,2", "2,5", 2 * 7, 0},   /* dims 1 and 2 merge into one strided dim */
      {"f32", "4,1,6", "0,1", "6", 1 * 7, 0},       /* a size-1 dim dropped: one group of 6 */
      {"f32", "7,9", "0", "9", 1 * 7, 0},           /* columns of a matrix: one group */
      {"f32", "2,3,4,5", "1,3", "2,4", 0, 8 * 500}, /* dims that do not merge: gathered per output */
      {"f32", "2,3,4,5", "2,3", "2,3", 0, 6 * 300}, /* trailing dims: 6 contiguous rows */
      {"f32", "6,3,1,5", "1,3", "6,1", 0, 6 * 300}, /* around a size-1 kept dim: dims 1 and 3 merge into rows */
      {"bf16", "8,16,4", "1", "8,4", 0, 0},         /* not on the f32 kernels */
      {"f32", "8,0,4", "1", "8,4", 0, 0},           /* nothing reduced */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[1024];
    reduce_text(cases[i].dt, cases[i].in, cases[i].dims, cases[i].out, text, sizeof text);
    optic_cost c = {0};
    double got = added_ns(text, "r", &on, &off), base = est_of(text, &off, "r", &c);
    double want = cases[i].floor > 0 ? cases[i].floor + 10 - base : cases[i].added;
    OT_CHECK(near(got, want) && (cases[i].floor == 0 || want > 0), "%s[%s] dims {%s}: added %g ns, want %g",
             cases[i].dt, cases[i].in, cases[i].dims, got, want);
  }
  /* a floor under the class's estimate adds nothing */
  on.reduce_row_ns = 1e-3;
  char text[1024];
  reduce_text("f32", "2,3,4,5", "2,3", "2,3", text, sizeof text);
  OT_CHECK(near(added_ns(text, "r", &on, &off), 0), "a small row figure adds nothing");
}

/* A column call that reads more than 1 MiB of rows runs the wide column
 * kernel (optic_f32_reduce_cols_streams), priced at its own class
 * (reduce_cols_stream_bandwidth, format 13) or, without it, the minor dim's
 * (reduce_bandwidth); smaller ones keep the strided class. Both classes are
 * below the toy's DRAM rate, so the class is the estimate: bytes / class +
 * op_overhead_ns. */
static void streamed_columns(void) {
  optic_machine mc = toy();
  mc.reduce_strided_bandwidth = 0.25e9;
  mc.reduce_bandwidth = 0.5e9;
  static const struct {
    const char *in, *dims, *out;
    bool streams;
  } cases[] = {
      {"4096,1024", "0", "1024", true},   /* 16 MiB of rows */
      {"256,256", "0", "256", false},     /* 256 KiB */
      {"4096,64", "0", "64", false},      /* exactly 1 MiB */
      {"4097,64", "0", "64", true},       /* 1 MiB + one row */
      {"3,4096,100", "1", "3,100", true}, /* a middle axis: each call 1.6 MB */
  };
  /* without the wide kernel's own figure (format 13) streamed calls take the minor dim's class */
  for (int own = 0; own < 2; own++) {
    mc.reduce_cols_stream_bandwidth = own ? 0.125e9 : 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char text[1024];
      reduce_text("f32", cases[i].in, cases[i].dims, cases[i].out, text, sizeof text);
      optic_cost c = {0};
      double got = est_of(text, &mc, "r", &c);
      double wide = own ? mc.reduce_cols_stream_bandwidth : mc.reduce_bandwidth;
      double bw = cases[i].streams ? wide : mc.reduce_strided_bandwidth;
      double want = c.bytes_accessed / bw * 1e9 + mc.op_overhead_ns;
      OT_CHECK(near(got, want), "f32[%s] dims {%s}, wide figure %g: est %g ns, want %g (%s class)", cases[i].in,
               cases[i].dims, mc.reduce_cols_stream_bandwidth, got, want, cases[i].streams ? "wide" : "strided");
    }
  }
}

/* An input fusion the runtime runs as one reduction loop (x * x summed over
 * the trailing dim: 12 rows) takes at least its rows x reduce_row_ns. */
static void input_fusion_rows(void) {
  static const char *const text =
      "HloModule f\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[12,8] parameter(0)\n"
      "  q = f32[12,8] multiply(x, x)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[12] reduce(q, z), dimensions={1}, to_apply=add\n}\n";
  optic_machine off = toy(), on = toy();
  on.reduce_row_ns = 300;
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  optic_program_t *p = NULL;
  optic_compile_options o = optic_compile_options_default();
  o.machine = &on;
  o.threads = 1;
  if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
  const optic_module_t *pm = p ? optic_program_module(p) : NULL;
  optic_comp_id e = pm ? optic_program_entry(p) : -1;
  optic_node_id root = pm ? optic_computation_root(pm, e) : OPTIC_NO_NODE;
  OT_CHECK(pm && optic_node_opcode(pm, root) == OPTIC_OP_FUSION, "the reduce is fused");
  char name[128];
  snprintf(name, sizeof name, "%s", pm ? optic_node_name(pm, root) : "");
  optic_program_destroy(p);
  optic_module_destroy(m);
  optic_cost c = {0}, c0 = {0};
  double got = est_fused(text, &on, name, &c, 1), base = est_fused(text, &off, name, &c0, 1);
  OT_CHECK(base < 12 * 300 + 10 && near(got, 12 * 300 + 10), "%s: est %g (without %g), want %g", name, got, base,
           12.0 * 300 + 10);
}

/* A slice or dynamic slice copies part of its operand from where the whole
 * operand lives: the cache tier is the operand's size, not the copy's. The
 * toy has a 1 MiB cache (4 B/ns), here a 32 MiB last-level cache (2 B/ns)
 * and DRAM beyond (1 B/ns); an elementwise op of the copy's size stays in
 * cache whatever its neighbours. */
static void slices_from_where_their_operand_lives(void) {
  optic_machine mc = toy();
  mc.llc_bytes = 32 << 20, mc.llc_bandwidth = 2e9, mc.core_llc_bandwidth = 2e9;
  static const struct {
    const char *src, *op, *out;
    double bandwidth;
  } cases[] = {
      {"f32[64,1024]", "slice(x), slice={[0:8], [0:1024]}", "f32[8,1024]", 4e9},     /* 256 KiB: cache */
      {"f32[2048,1024]", "slice(x), slice={[0:8], [0:1024]}", "f32[8,1024]", 2e9},   /* 8 MiB: LLC */
      {"f32[16384,1024]", "slice(x), slice={[8:16], [0:1024]}", "f32[8,1024]", 1e9}, /* 64 MiB: DRAM */
      {"f32[2048,1024]", "dynamic-slice(x, i, z), dynamic_slice_sizes={8,1024}", "f32[8,1024]", 2e9},
      {"f32[256,1024]", "dynamic-slice(x, i, z), dynamic_slice_sizes={8,1024}", "f32[8,1024]", 4e9}, /* exactly 1 MiB */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule s\nENTRY e {\n  x = %s parameter(0)\n  i = s32[] parameter(1)\n  z = s32[] constant(0)\n"
             "  r = %s %s\n  ROOT n = %s negate(r)\n}\n",
             cases[i].src, cases[i].out, cases[i].op, cases[i].out);
    optic_cost c = {0}, cn = {0};
    double got = est_of(text, &mc, "r", &c), neg = est_of(text, &mc, "n", &cn);
    double want = c.bytes_accessed / cases[i].bandwidth * 1e9 + mc.op_overhead_ns;
    OT_CHECK(c.bytes_accessed > 0 && near(got, want), "%s from %s: est %g ns, want %g (%g B at %g B/s)", cases[i].op,
             cases[i].src, got, want, c.bytes_accessed, cases[i].bandwidth);
    OT_CHECK(near(neg, cn.bytes_accessed / 4e9 * 1e9 + mc.op_overhead_ns), "negate of the copy: %g ns", neg);
  }
}

/* A pad and a reduce-window take at least their elements and their runs
 * along the last dim at the format-13 figures (the toy's roofline is far
 * under them): the whole last dim is one run when the op leaves it alone,
 * else every output is one. */
static void window_ops_elements_and_runs(void) {
  optic_machine off = toy(), on = toy();
  on.pad_element_ns = 1, on.pad_run_ns = 20, on.reduce_window_element_ns = 2, on.reduce_window_run_ns = 100;
  static const struct {
    const char *text;
    double outputs, elements, runs;
    bool pad;
  } cases[] = {
      {"HloModule p\nENTRY e {\n  x = f32[8,4,4,16] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT r = f32[8,9,9,16] pad(x, z), padding=0_0x1_1_1x1_1_1x0_0\n}\n",
       8 * 81 * 16, 8 * 81 * 16, 8 * 81, true},
      {"HloModule p\nENTRY e {\n  x = f32[8,16] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT r = f32[8,33] pad(x, z), padding=0_0x1_1_1\n}\n",
       8 * 33, 8 * 33, 8 * 33, true},
      {"HloModule w\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
       "ENTRY e {\n  x = f32[4,8,8,32] parameter(0)\n  n = f32[] constant(-inf)\n  ROOT r = f32[4,4,4,32] "
       "reduce-window(x, n), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n}\n",
       4 * 16 * 32, 4 * 16 * 32 * 4, 4 * 16, false},
      {"HloModule w\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
       "ENTRY e {\n  x = f32[16,64] parameter(0)\n  n = f32[] constant(-inf)\n  ROOT r = f32[16,32] "
       "reduce-window(x, n), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=max\n}\n",
       16 * 32, 16 * 32 * 3, 16 * 32, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const double e = cases[i].pad ? on.pad_element_ns : on.reduce_window_element_ns;
    const double r = cases[i].pad ? on.pad_run_ns : on.reduce_window_run_ns;
    optic_cost c = {0};
    const double got = est_of(cases[i].text, &on, "r", &c), base = est_of(cases[i].text, &off, "r", &c);
    const double want = cases[i].elements * e + cases[i].runs * r + on.op_overhead_ns;
    OT_CHECK(base < want && near(got, want), "case %zu (%s): est %g ns (without the figures %g), want %g", i,
             cases[i].pad ? "pad" : "reduce-window", got, base, want);
  }
}

static const char *const batch_norm_hlo =
    "HloModule bn\n"
    "ENTRY e {\n"
    "  x = f32[8,4] parameter(0)\n"
    "  s = f32[4] parameter(1)\n"
    "  o = f32[4] parameter(2)\n"
    "  m = f32[4] parameter(3)\n"
    "  v = f32[4] parameter(4)\n"
    "  dy = f32[8,4] parameter(5)\n"
    "  t = (f32[8,4], f32[4], f32[4]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n"
    "  i = f32[8,4] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1\n"
    "  g = (f32[8,4], f32[4], f32[4]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=1\n"
    "  ROOT r = ((f32[8,4], f32[4], f32[4]), f32[8,4], (f32[8,4], f32[4], f32[4])) tuple(t, i, g)\n"
    "}\n";

/* Each op: batch_norm_run_ns + 32 elements x its own figure + op_overhead_ns,
 * above its roofline (the toy's 4 bytes/ns); without figures the roofline. */
static void batch_norm_ops(void) {
  optic_machine off = toy(), on = toy();
  on.batch_norm_run_ns = 30;
  on.batch_norm_training_element_ns = 5;
  on.batch_norm_inference_element_ns = 4;
  on.batch_norm_grad_element_ns = 6;
  const char *names[3] = {"t", "i", "g"};
  const double per[3] = {5, 4, 6};
  for (int k = 0; k < 3; k++) {
    optic_cost c = {0}, c0 = {0};
    double e = est_of(batch_norm_hlo, &on, names[k], &c), e0 = est_of(batch_norm_hlo, &off, names[k], &c0);
    double roofline = c.bytes_accessed / 4 + 10, want = 30 + 32 * per[k] + 10;
    OT_CHECK(want > roofline && near(e, want), "%s: est %g, want %g (roofline %g)", names[k], e, want, roofline);
    OT_CHECK(near(e0, roofline) && c.bytes_accessed == c0.bytes_accessed, "%s without figures: %g, roofline %g",
             names[k], e0, roofline);
  }
  /* only the fixed cost known: the op's figure 0 means not known, nothing added */
  off.batch_norm_run_ns = 30;
  optic_cost c = {0};
  double e = est_of(batch_norm_hlo, &off, "t", &c);
  OT_CHECK(near(e, c.bytes_accessed / 4 + 10), "run_ns alone adds nothing: %g", e);
}

static const ot_case cases[] = {{"reduce_paths", reduce_paths},
                                {"streamed_columns", streamed_columns},
                                {"slices_from_where_their_operand_lives", slices_from_where_their_operand_lives},
                                {"window_ops_elements_and_runs", window_ops_elements_and_runs},
                                {"input_fusion_rows", input_fusion_rows},
                                {"batch_norm_ops", batch_norm_ops}};
OT_MAIN(cases)
