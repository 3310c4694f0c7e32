/* The runtime and the compiler agree on which fusions run as a sequence of
 * their fused instructions: a fusion's computation is scheduled by the
 * compiler exactly when the runtime's profile shows events of its fused
 * instructions, every event carries the program's estimate of its
 * instruction, and the profile summary counts each run's time once: fused
 * instructions (and a while body's) are nested in their fusion, the
 * totals add up the top-level ops only (the entry's: their estimates sum to
 * the program's, and on one thread their measured times fit in the run).
 * Their results are the reference evaluator's (the fused computations now
 * run on the program's buffer plans).
 * On 1 and 2 threads (the fused instructions split or not by the program's
 * estimates). Reproduce: build/release/tests/exec_fusion_sequences */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/exec/exec_util.h"
#include "tests/harness.h"
#include "tests/toy_machine.h"

/* tests/toy_machine.h on `cores` cores. */
static optic_machine toy(int32_t cores) { return ot_toy_machine(cores); }

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-6; }

#define ADD "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

/* fusion g of kind KIND and type TYPE over computation f = BODY of
 * p0 = f32[64,32] and p1 = f32[32,32] */
#define FUSION(BODY, KIND, TYPE)                                                                   \
  "HloModule k\n" ADD "f {\n  p0 = f32[64,32] parameter(0)\n  p1 = f32[32,32] parameter(1)\n" BODY \
  "}\n"                                                                                            \
  "ENTRY e {\n  x = f32[64,32] parameter(0)\n  y = f32[32,32] parameter(1)\n"                      \
  "  ROOT g = " TYPE " fusion(x, y), kind=" KIND ", calls=f\n}\n"

static const char *const modules[] = {
    FUSION("  e0 = f32[64,32] exponential(p0)\n  ROOT r = f32[64,32] add(e0, p0)\n", "kLoop", "f32[64,32]"),
    FUSION("  e0 = f32[64,32] exponential(p0)\n  n0 = f32[64,32] negate(p0)\n"
           "  ROOT r = (f32[64,32], f32[64,32]) tuple(e0, n0)\n",
           "kLoop", "(f32[64,32], f32[64,32])"),
    FUSION("  e0 = f32[64,32] exponential(p0)\n  n0 = f32[32,32] negate(p1)\n"
           "  ROOT r = (f32[64,32], f32[32,32]) tuple(e0, n0)\n",
           "kLoop", "(f32[64,32], f32[32,32])"),
    FUSION("  e0 = f32[64,32] exponential(p0)\n  z = f32[] constant(0)\n"
           "  ROOT r = f32[64] reduce(e0, z), dimensions={1}, to_apply=add\n",
           "kInput", "f32[64]"),
    FUSION("  e0 = f32[64,32] exponential(p0)\n  z = f32[] constant(0)\n"
           "  ROOT r = f32[32] reduce(e0, z), dimensions={0}, to_apply=add\n",
           "kInput", "f32[32]"),
    FUSION("  z = f32[] constant(0)\n  s0 = f32[64] reduce(p0, z), dimensions={1}, to_apply=add\n"
           "  ROOT r = f32[64] exponential(s0)\n",
           "kInput", "f32[64]"),
    FUSION("  d0 = f32[64,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  ROOT r = f32[64,32] exponential(d0)\n",
           "kOutput", "f32[64,32]"),
    FUSION("  n0 = f32[64,32] negate(p0)\n"
           "  d0 = f32[64,32] dot(n0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  ROOT r = f32[64,32] exponential(d0)\n",
           "kOutput", "f32[64,32]"),
    FUSION("  d0 = f32[64,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  ROOT r = f16[64,32] convert(d0)\n",
           "kOutput", "f16[64,32]"),
    "HloModule gemm\n"
    "f {\n  p0 = f16[8,16,16] parameter(0)\n  p1 = s8[8,16,16] parameter(1)\n  c = f16[8,16,16] convert(p1)\n"
    "  ROOT d = f32[8,16,16] dot(p0, c), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
    "rhs_contracting_dims={1}\n}\n"
    "ENTRY e {\n  x = f16[8,16,16] parameter(0)\n  w = s8[8,16,16] parameter(1)\n"
    "  g = f32[8,16,16] fusion(x, w), kind=kCustom, calls=f\n  ROOT n = f32[8,16,16] negate(g)\n}\n",
    /* a custom fusion in a while body, 3 trips: its instructions are nested twice */
    "HloModule loop\n"
    "f {\n  q = f32[256] parameter(0)\n  t = f32[256] tanh(q)\n  ROOT u = f32[256] multiply(t, q)\n}\n"
    "cond {\n  s = (s32[], f32[256]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  k = s32[] constant(3)\n  ROOT lt = pred[] compare(i, k), direction=LT\n}\n"
    "body {\n  s = (s32[], f32[256]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[256] get-tuple-element(s), index=1\n"
    "  h = f32[256] fusion(v), kind=kCustom, calls=f\n  ROOT r = (s32[], f32[256]) tuple(j, h)\n}\n"
    "ENTRY e {\n  x = f32[256] parameter(0)\n  z = s32[] constant(0)\n  s0 = (s32[], f32[256]) tuple(z, x)\n"
    "  w = (s32[], f32[256]) while(s0), condition=cond, body=body\n"
    "  ROOT o = f32[256] get-tuple-element(w), index=1\n}\n",
};

/* Flat array leaves of t into out (up to cap); their count. */
static int32_t leaves(const optic_type *t, const optic_type **out, int32_t n, int32_t cap) {
  if (!optic_type_is_tuple(t)) {
    if (n < cap) out[n] = t;
    return n + 1;
  }
  for (int32_t i = 0; i < t->tuple_size; i++) n = leaves(&t->elements[i], out, n, cap);
  return n;
}

static size_t type_bytes(const optic_type *t) {
  size_t b = 0;
  return optic_shape_bytes(&t->shape, t->dtype, &b) == OPTIC_OK ? b : 0;
}

/* Runs p `runs` times on zero inputs on `threads` threads, profiled; the
 * profiler is the returned context's. */
static optic_exec_ctx_t *run_profiled(const optic_program_t *p, int runs, int32_t threads) {
  const optic_module_t *m = optic_program_module(p);
  const optic_comp_id e = optic_program_entry(p);
  const optic_type *in_t[8], *out_t[8];
  int32_t ni = 0, no = leaves(optic_node_type(m, optic_computation_root(m, e)), out_t, 0, 8);
  for (int32_t k = 0; k < optic_computation_parameter_count(m, e); k++)
    ni = leaves(optic_node_type(m, optic_computation_parameter(m, e, k)), in_t, ni, 8);
  optic_tensor in[8], out[8];
  void *bufs[16] = {0};
  for (int32_t i = 0; i < ni && i < 8; i++)
    in[i] = (optic_tensor){in_t[i]->dtype, in_t[i]->shape, bufs[i] = calloc(1, type_bytes(in_t[i]) + 64)};
  for (int32_t i = 0; i < no && i < 8; i++)
    out[i] = (optic_tensor){out_t[i]->dtype, out_t[i]->shape, bufs[8 + i] = calloc(1, type_bytes(out_t[i]) + 64)};
  optic_exec_options o = optic_exec_options_default();
  o.threads = threads;
  o.profile = true;
  optic_exec_ctx_t *ctx = NULL;
  OT_EXPECT_OK(optic_exec_ctx_create(&o, &ctx));
  for (int r = 0; r < runs && ctx; r++) OT_EXPECT_OK(optic_program_run(p, ctx, in, ni, out, no));
  for (int i = 0; i < 16; i++) free(bufs[i]);
  return ctx;
}

/* Whether some event of the profile is of an instruction of computation c. */
static bool events_in(const optic_module_t *m, const optic_profile_event *ev, size_t n, optic_comp_id c) {
  for (size_t i = 0; i < n; i++)
    if (ev[i].node >= 0 && optic_node_computation(m, (optic_node_id)ev[i].node) == c) return true;
  return false;
}

/* Every fusion of the program: scheduled by the compiler iff the runtime ran
 * its instructions; every op event with the program's estimate. */
static void check_agreement(const char *mod, const optic_program_t *p, const optic_profile_event *ev, size_t n) {
  const optic_module_t *m = optic_program_module(p);
  for (optic_node_id id = 0; id < optic_module_node_count(m); id++) {
    if (optic_node_opcode(m, id) != OPTIC_OP_FUSION) continue;
    optic_comp_id f = optic_node_called(m, id, 0);
    bool compiled = optic_program_schedule(p, f) != NULL, ran = events_in(m, ev, n, f);
    OT_CHECK(compiled == ran, "%s: fusion %s: compiler schedules its computation %d, the runtime runs its ops %d", mod,
             optic_node_name(m, id), compiled, ran);
  }
  for (size_t i = 0; i < n; i++) {
    if (ev[i].kind != OPTIC_PROFILE_OP && ev[i].kind != OPTIC_PROFILE_FUSION) continue;
    optic_node_estimate e = {{0}, -1};
    OT_EXPECT_OK(optic_program_node_estimate(p, (optic_node_id)ev[i].node, &e));
    OT_CHECK(ev[i].est_ns == e.est_ns && ev[i].est_ns > 0, "%s: %s event estimate %g, the program's %g", mod,
             ev[i].name, ev[i].est_ns, e.est_ns);
  }
}

/* Depth 0 exactly for the entry's instructions; the totals theirs (on one
 * thread within the runs' wall time). */
static void check_summary(const char *mod, const optic_program_t *p, const optic_profile_summary *s, int32_t threads) {
  const optic_module_t *m = optic_program_module(p);
  optic_program_summary ps;
  OT_EXPECT_OK(optic_program_summary_get(p, &ps));
  double top_est = 0, top_meas = 0;
  for (size_t i = 0; i < s->op_count; i++) {
    const optic_profile_op_stat *o = &s->ops[i];
    bool entry = optic_node_computation(m, (optic_node_id)o->node) == optic_program_entry(p);
    OT_CHECK((o->depth == 0) == entry, "%s: %s depth %d, in the entry %d", mod, o->name, (int)o->depth, entry);
    if (o->depth == 0) top_est += o->est_ns, top_meas += o->measured_ns;
  }
  OT_CHECK(near(s->est_ns, top_est) && near(s->est_ns, ps.est_ns - optic_program_machine(p)->run_overhead_ns),
           "%s: summary estimate %g, its top-level ops %g, the program %g", mod, s->est_ns, top_est, ps.est_ns);
  OT_CHECK(s->measured_ns == top_meas && s->measured_ns > 0 && (threads > 1 || s->measured_ns <= s->run_ns),
           "%s: measured %g ns (top-level ops %g) in runs of %g ns", mod, s->measured_ns, top_meas, s->run_ns);
}

/* On 1 and 2 threads: the runtime splits the fused instructions by the
 * program's estimates, as the compiler priced them. */
static void runtime_agrees_on(int32_t threads) {
  optic_machine mc = toy(threads);
  for (size_t k = 0; k < sizeof modules / sizeof modules[0]; k++) {
    optic_module_t *m = NULL;
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(modules[k], strlen(modules[k]), &m));
    optic_compile_options o = optic_compile_options_default();
    o.machine = &mc;
    o.threads = threads;
    o.fusion = 0; /* the fusions are the text's own */
    if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
    optic_module_destroy(m);
    if (!p) continue;
    char mod[48];
    snprintf(mod, sizeof mod, "module %zu, %d threads", k, (int)threads);
    optic_exec_ctx_t *ctx = run_profiled(p, 3, threads);
    optic_profiler_t *prof = ctx ? optic_exec_ctx_profiler(ctx) : NULL;
    size_t n = 0;
    const optic_profile_event *ev = prof ? optic_profiler_events(prof, &n) : NULL;
    if (ev) check_agreement(mod, p, ev, n);
    optic_profile_summary s;
    if (prof && optic_profiler_summary(prof, p, &s) == OPTIC_OK) {
      check_summary(mod, p, &s, threads);
      optic_profile_summary_free(&s);
    }
    optic_exec_ctx_destroy(ctx);
    optic_program_destroy(p);
  }
}

static void runtime_agrees(void) {
  runtime_agrees_on(1);
  runtime_agrees_on(2);
}

/* Random inputs: the evaluator's results, at levels NONE and FULL on 1 and 2
 * threads (f16 operands and results: within 1e-2). */
static void results_match_the_evaluator(void) {
  for (size_t k = 0; k < sizeof modules / sizeof modules[0]; k++) {
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(modules[k], strlen(modules[k]), &m));
    char label[48];
    snprintf(label, sizeof label, "module %zu", k);
    if (m) ex_check_module(m, 0x5e9 + k, 1e-2, 1e-2, label);
    optic_module_destroy(m);
  }
}

static const ot_case cases[] = {
    {"runtime_agrees", runtime_agrees},
    {"results_match_the_evaluator", results_match_the_evaluator},
};

OT_MAIN(cases)
