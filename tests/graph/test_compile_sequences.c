/* Fusions the runtime runs as a sequence of their fused instructions (a
 * custom fusion, a loop fusion whose tuple result's leaves differ in
 * element count, an input fusion that is not one reduction
 * of trailing dims, an output fusion without an f32 contraction of two f32
 * parameters): the compiler schedules their computations, gives each fused
 * instruction its own estimate, and prices the fusion as those estimates
 * plus one step's dispatch, as a call. The reference is the same
 * instructions written in the entry without the fusion (fusion pass off):
 * each fused instruction's estimate must equal its unfused twin's, on one
 * thread and on two (each op split or not by the runtime's rule). Fusions
 * the runtime runs as one loop, reduction or contraction stay unscheduled.
 * Whether the runtime agrees is tests/exec/test_fusion_sequences.c. A
 * while also pays, once, the copy of its initial state into its own
 * buffers.
 * Reproduce: build/release/tests/graph_compile_sequences */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/harness.h"
#include "tests/toy_machine.h"

/* tests/toy_machine.h on `cores` cores. */
static optic_machine toy(int32_t cores) { return ot_toy_machine(cores); }

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-9; }

static optic_program_t *compile_text(const char *text, const optic_machine *mc) {
  optic_module_t *m = NULL;
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  optic_compile_options o = optic_compile_options_default();
  o.machine = mc;
  o.threads = mc->cores;
  o.fusion = 0; /* the fusions are the text's own */
  o.verify_buffers = true;
  if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
  optic_module_destroy(m);
  return p;
}

static optic_node_id named(const optic_program_t *p, const char *name) {
  const optic_module_t *m = optic_program_module(p);
  for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
    const char *n = optic_node_name(m, id);
    if (n && strcmp(n, name) == 0) return id;
  }
  return OPTIC_NO_NODE;
}

/* The estimate of instruction `name`, -1 when it has none. */
static double est_of(const optic_program_t *p, const char *name) {
  optic_node_estimate e;
  optic_node_id id = named(p, name);
  if (id == OPTIC_NO_NODE || optic_program_node_estimate(p, id, &e) != OPTIC_OK) return -1;
  return e.est_ns;
}

/* A custom fusion's computation f and its two fused instructions c and d,
 * and the entry that calls it; then the same instructions unfused. */
#define CUSTOM_BODY                                                                                         \
  "  p0 = f16[16,32,32] parameter(0)\n"                                                                     \
  "  p1 = s8[16,32,32] parameter(1)\n"                                                                      \
  "  c = f16[16,32,32] convert(p1)\n"                                                                       \
  "  ROOT d = f32[16,32,32] dot(p0, c), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, " \
  "rhs_contracting_dims={1}\n"
static const char *const custom_fused =
    "HloModule custom\n"
    "f {\n" CUSTOM_BODY
    "}\n"
    "ENTRY e {\n"
    "  x = f16[16,32,32] parameter(0)\n"
    "  w = s8[16,32,32] parameter(1)\n"
    "  ROOT g = f32[16,32,32] fusion(x, w), kind=kCustom, calls=f\n"
    "}\n";
static const char *const custom_unfused = "HloModule custom\nENTRY e {\n" CUSTOM_BODY "}\n";

static void custom_fusion_is_its_instructions(void) {
  for (int32_t cores = 1; cores <= 2; cores++) {
    optic_machine mc = toy(cores);
    optic_program_t *p = compile_text(custom_fused, &mc), *u = compile_text(custom_unfused, &mc);
    if (!p || !u) {
      optic_program_destroy(p), optic_program_destroy(u);
      continue;
    }
    const optic_module_t *m = optic_program_module(p);
    optic_node_id g = named(p, "g");
    OT_CHECK(g != OPTIC_NO_NODE && optic_program_schedule(p, optic_node_called(m, g, 0)) != NULL,
             "%d threads: the custom fusion's computation is not scheduled", (int)cores);
    double c = est_of(p, "c"), d = est_of(p, "d"), cu = est_of(u, "c"), du = est_of(u, "d");
    OT_CHECK(c > 0 && d > 0 && near(c, cu) && near(d, du), "%d threads: fused c %g d %g, unfused c %g d %g", (int)cores,
             c, d, cu, du);
    optic_program_summary s, su;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_EXPECT_OK(optic_program_summary_get(u, &su));
    OT_CHECK(near(est_of(p, "g"), cu + du + mc.op_overhead_ns) && near(s.est_ns, su.est_ns + mc.op_overhead_ns),
             "%d threads: fusion %g (program %g), its instructions %g + %g + dispatch %g (program %g)", (int)cores,
             est_of(p, "g"), s.est_ns, cu, du, mc.op_overhead_ns, su.est_ns);
    /* the counts stay XLA's: the fusion's are its instructions' */
    OT_CHECK(s.cost.flops == su.cost.flops && s.cost.flops > 2.0 * 16 * 32 * 32 * 32, "flops %g, unfused %g",
             s.cost.flops, su.cost.flops);
    optic_program_destroy(p);
    optic_program_destroy(u);
  }
}

typedef struct fusion_case {
  const char *what, *text, *inner; /* inner: a fused instruction that runs code */
  bool sequence;                   /* the runtime runs its instructions one by one */
} fusion_case;

/* fusion g of kind K over computation f = BODY, operands x (f32[64,32]) and y */
#define FUSION_TEXT(BODY, KIND, TYPE)                                          \
  "HloModule k\n"                                                              \
  "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"                \
  "  ROOT s = f32[] add(a, b)\n}\n"                                            \
  "f {\n  p0 = f32[64,32] parameter(0)\n  p1 = f32[32,32] parameter(1)\n" BODY \
  "}\n"                                                                        \
  "ENTRY e {\n  x = f32[64,32] parameter(0)\n  y = f32[32,32] parameter(1)\n"  \
  "  ROOT g = " TYPE " fusion(x, y), kind=" KIND ", calls=f\n}\n"

static const fusion_case kinds[] = {
    {"loop",
     FUSION_TEXT("  e0 = f32[64,32] exponential(p0)\n  ROOT r = f32[64,32] add(e0, p0)\n", "kLoop", "f32[64,32]"), "r",
     false},
    {"loop with a tuple result",
     FUSION_TEXT("  e0 = f32[64,32] exponential(p0)\n  n0 = f32[64,32] negate(p0)\n"
                 "  ROOT r = (f32[64,32], f32[64,32]) tuple(e0, n0)\n",
                 "kLoop", "(f32[64,32], f32[64,32])"),
     "e0", false},
    {"loop with tuple leaves of two sizes",
     FUSION_TEXT("  e0 = f32[64,32] exponential(p0)\n  n0 = f32[32,32] negate(p1)\n"
                 "  ROOT r = (f32[64,32], f32[32,32]) tuple(e0, n0)\n",
                 "kLoop", "(f32[64,32], f32[32,32])"),
     "e0", true},
    {"input: a sum of the minor dim",
     FUSION_TEXT("  e0 = f32[64,32] exponential(p0)\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[64] reduce(e0, z), dimensions={1}, to_apply=add\n",
                 "kInput", "f32[64]"),
     "r", false},
    {"input: a sum of the major dim",
     FUSION_TEXT("  e0 = f32[64,32] exponential(p0)\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[32] reduce(e0, z), dimensions={0}, to_apply=add\n",
                 "kInput", "f32[32]"),
     "r", true},
    {"input: a reduce that is not the root",
     FUSION_TEXT("  z = f32[] constant(0)\n  s0 = f32[64] reduce(p0, z), dimensions={1}, to_apply=add\n"
                 "  ROOT r = f32[64] exponential(s0)\n",
                 "kInput", "f32[64]"),
     "r", true},
    {"output: an f32 dot of two parameters",
     FUSION_TEXT("  d0 = f32[64,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 "  ROOT r = f32[64,32] exponential(d0)\n",
                 "kOutput", "f32[64,32]"),
     "r", false},
    {"output: a dot of a computed operand",
     FUSION_TEXT("  n0 = f32[64,32] negate(p0)\n"
                 "  d0 = f32[64,32] dot(n0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 "  ROOT r = f32[64,32] exponential(d0)\n",
                 "kOutput", "f32[64,32]"),
     "r", true},
    {"output: an f16 result",
     FUSION_TEXT("  d0 = f32[64,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                 "  ROOT r = f16[64,32] convert(d0)\n",
                 "kOutput", "f16[64,32]"),
     "r", true},
    {"custom", FUSION_TEXT("  ROOT r = f32[64,32] exponential(p0)\n", "kCustom", "f32[64,32]"), "r", true},
};

static void sequence_by_kind(void) {
  optic_machine mc = toy(1);
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const fusion_case *k = &kinds[i];
    optic_program_t *p = compile_text(k->text, &mc);
    if (!p) continue;
    const optic_module_t *m = optic_program_module(p);
    optic_node_id g = named(p, "g");
    bool scheduled = g != OPTIC_NO_NODE && optic_program_schedule(p, optic_node_called(m, g, 0)) != NULL;
    double r = est_of(p, k->inner), ge = est_of(p, "g");
    OT_CHECK(scheduled == k->sequence && (r > 0) == k->sequence, "%s: scheduled %d (%s's estimate %g), want %d",
             k->what, scheduled, k->inner, r, k->sequence);
    /* a sequence: its instructions' estimates plus one dispatch */
    if (k->sequence && scheduled) {
      const optic_schedule_t *s = optic_program_schedule(p, optic_node_called(m, g, 0));
      int32_t n = 0;
      const optic_node_id *order = optic_schedule_order(s, &n);
      double sum = 0;
      for (int32_t j = 0; j < n; j++) {
        optic_node_estimate e;
        OT_EXPECT_OK(optic_program_node_estimate(p, order[j], &e));
        sum += e.est_ns;
      }
      OT_CHECK(near(ge, sum + mc.op_overhead_ns), "%s: fusion %g, its instructions %g", k->what, ge, sum);
    }
    optic_program_destroy(p);
  }
}

/* A while whose state leaf 1 starts in another buffer (a broadcast's) is
 * copied into the loop's buffer once before the first trip: growing that
 * leaf (passed through by the body, so never copied per trip) by 1024 f32
 * adds their read and write, 8192 bytes at 4 bytes/ns, to the while. */
#define WHILE_TEXT(N)                                                                         \
  "HloModule w\n"                                                                             \
  "cond {\n  s = (s32[], f32[" N                                                              \
  "], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"                     \
  "  k = s32[] constant(2)\n  ROOT lt = pred[] compare(i, k), direction=LT\n}\n"              \
  "body {\n  s = (s32[], f32[" N                                                              \
  "], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"                     \
  "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[" N                          \
  "] get-tuple-element(s), index=1\n"                                                         \
  "  a = f32[64] get-tuple-element(s), index=2\n  n = f32[64] negate(a)\n"                    \
  "  ROOT r = (s32[], f32[" N                                                                 \
  "], f32[64]) tuple(j, v, n)\n}\n"                                                           \
  "ENTRY e {\n  x = f32[64] parameter(0)\n  z = s32[] constant(0)\n  c = f32[] constant(1)\n" \
  "  b = f32[" N "] broadcast(c), dimensions={}\n  t = (s32[], f32[" N                        \
  "], f32[64]) tuple(z, b, x)\n"                                                              \
  "  w = (s32[], f32[" N                                                                      \
  "], f32[64]) while(t), condition=cond, body=body\n"                                         \
  "  ROOT o = f32[64] get-tuple-element(w), index=2\n}\n"

static void while_copies_its_initial_state(void) {
  optic_machine mc = toy(1);
  optic_program_t *a = compile_text(WHILE_TEXT("1024"), &mc), *b = compile_text(WHILE_TEXT("2048"), &mc);
  if (a && b) {
    double wa = est_of(a, "w"), wb = est_of(b, "w");
    OT_CHECK(wa > 0 && near(wb - wa, 8192 / 4.0), "while %g ns with 1024 state floats, %g with 2048: +%g, want +%g", wa,
             wb, wb - wa, 8192 / 4.0);
  }
  optic_program_destroy(a);
  optic_program_destroy(b);
}

/* Three leaves of 1000 elements, one bf16 (its convert is 16-bit work), from
 * x, y and a scalar broadcast. */
static const char *const tuple_loop =
    "HloModule t\n"
    "f {\n  p0 = f32[1000] parameter(0)\n  p1 = f32[1000] parameter(1)\n  p2 = f32[] parameter(2)\n"
    "  b = f32[1000] broadcast(p2), dimensions={}\n  m = f32[1000] multiply(p0, b)\n"
    "  a = f32[1000] add(m, p1)\n  n = f32[1000] subtract(p0, a)\n  h = bf16[1000] convert(a)\n"
    "  ROOT r = (f32[1000], f32[1000], bf16[1000]) tuple(a, n, h)\n}\n"
    "ENTRY e {\n  x = f32[1000] parameter(0)\n  y = f32[1000] parameter(1)\n  s = f32[] parameter(2)\n"
    "  ROOT g = (f32[1000], f32[1000], bf16[1000]) fusion(x, y, s), kind=kLoop, calls=f\n}\n";

/* A loop fusion with a tuple result of leaves of one size runs as one
 * block loop: its estimate is the loop rule's (its bytes at loop_bandwidth
 * and its 16-bit work, on one core here), not its instructions' sum. */
static void tuple_loop_is_one_loop(void) {
  double est[2] = {-1, -1};
  for (int k = 0; k < 2; k++) {
    optic_machine mc = toy(1);
    mc.loop_bandwidth = 2e9;
    if (k) mc.convert_to_bf16_ns = 0.25;
    optic_program_t *p = compile_text(tuple_loop, &mc);
    if (!p) continue;
    const optic_module_t *m = optic_program_module(p);
    optic_node_id g = named(p, "g");
    optic_cost c;
    OT_EXPECT_OK(optic_node_cost(m, g, &c));
    OT_CHECK(optic_program_schedule(p, optic_node_called(m, g, 0)) == NULL && est_of(p, "a") < 0,
             "the tuple loop fusion's computation is not scheduled");
    est[k] = est_of(p, "g");
    double rule = optic_machine_estimate_class_ns(&mc, &c, mc.loop_bandwidth);
    if (!k)
      OT_CHECK(near(est[k], rule), "tuple loop fusion %g ns, the loop rule %g (%g bytes)", est[k], rule,
               c.bytes_accessed);
    optic_program_destroy(p);
  }
  OT_CHECK(near(est[1] - est[0], 1000 * 0.25), "the bf16 convert adds its 250 ns: %g vs %g", est[1], est[0]);
}

static const ot_case cases[] = {
    {"custom_fusion_is_its_instructions", custom_fusion_is_its_instructions},
    {"tuple_loop_is_one_loop", tuple_loop_is_one_loop},
    {"sequence_by_kind", sequence_by_kind},
    {"while_copies_its_initial_state", while_copies_its_initial_state},
};

OT_MAIN(cases)
