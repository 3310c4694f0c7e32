/* The op classes of machine format 3 reach the compiler's estimates, each
 * exactly as docs/cost-model.md states it, and the XLA counts never change:
 * gather, scatter, sort and topk per unit of work; bf16/f16 elements per
 * instruction; reduces over two or more dims; reduces through the reducer's
 * program per block step; while loops as trips x (body + condition + state
 * copies + while_iteration_ns); a dynamic-update-slice not in place copies
 * its operand; and the split decision the runtime makes (optic_split_op):
 * split ops at the program's threads plus one barrier, solo ops on one
 * thread. Every check compares a machine with the class against one without
 * it (0: not known), so it fails when the class is ignored.
 * Reproduce: build/release/tests/graph_compile_classes */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <optic/optic.h>

#include "tests/compile_text.h"
#include "tests/harness.h"
#include "tests/toy_machine.h"

/* tests/toy_machine.h on one core. */
static optic_machine toy(void) { return ot_toy_machine(1); }

static optic_program_t *compile_with(const char *text, const optic_machine *mc, int32_t threads, int64_t split,
                                     int fusion) {
  return ot_compile_text(text, mc, threads, split, fusion);
}

/* Fusion off: one instruction per op, so the checks name them. */
static optic_program_t *compile_text(const char *text, const optic_machine *mc, int32_t threads, int64_t split) {
  return compile_with(text, mc, threads, split, 0);
}

/* The estimate of the instruction called name (any computation), its counts
 * in *cost; -1 when there is none. */
static double est_of(const optic_program_t *p, const char *name, optic_cost *cost) {
  const optic_module_t *m = optic_program_module(p);
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    for (int32_t i = 0; i < n; i++) {
      optic_node_estimate e;
      if (strcmp(optic_node_name(m, ids[i]), name) != 0 || optic_program_node_estimate(p, ids[i], &e) != OPTIC_OK)
        continue;
      if (cost) *cost = e.cost;
      return e.est_ns;
    }
  }
  return -1;
}

/* est of `name` in text with machine a and with b, and whether the counts agree. */
static bool two_estimates(const char *text, const char *name, const optic_machine *a, const optic_machine *b,
                          double *ea, double *eb) {
  optic_program_t *pa = compile_text(text, a, 0, 0), *pb = compile_text(text, b, 0, 0);
  optic_cost ca = {0}, cb = {0};
  *ea = pa ? est_of(pa, name, &ca) : -1;
  *eb = pb ? est_of(pb, name, &cb) : -1;
  optic_program_destroy(pa);
  optic_program_destroy(pb);
  bool same =
      ca.flops == cb.flops && ca.transcendentals == cb.transcendentals && ca.bytes_accessed == cb.bytes_accessed;
  if (!same) fprintf(stderr, "  counts differ: %g/%g bytes\n", ca.bytes_accessed, cb.bytes_accessed);
  return same && *ea >= 0 && *eb >= 0;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-6; }

static const char *const topk_hlo =
    "HloModule t\n"
    "ENTRY e {\n"
    "  x = f32[4,1000] parameter(0)\n"
    "  tk = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true\n"
    "  ROOT v = f32[4,5] get-tuple-element(tk), index=0\n"
    "}\n";

static const char *const sort_hlo =
    "HloModule s\n"
    "lt {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[8,64] parameter(0)\n"
    "  ROOT st = f32[8,64] sort(x), dimensions={1}, to_apply=lt\n"
    "}\n";

static const char *const gather_scatter_hlo =
    "HloModule g\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  t = f32[100,32] parameter(0)\n"
    "  i = s32[50,1] parameter(1)\n"
    "  g = f32[50,32] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,32}\n"
    "  ROOT sc = f32[100,32] scatter(t, i, g), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "}\n";

/* topk: rows x len x ceil(log2 len) comparisons; sort: the same per slice. */
static void sort_and_topk(void) {
  optic_machine a = toy(), b = toy();
  b.topk_compare_ns = 2;
  b.sort_compare_ns = 3;
  double ea, eb;
  OT_CHECK(two_estimates(topk_hlo, "tk", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4.0 * 1000 * 10 * 2 + 10) && eb > 10 * ea, "topk %g ns (without the class %g)", eb, ea);
  OT_CHECK(two_estimates(sort_hlo, "st", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 8.0 * 64 * 6 * 3 + 10) && eb > ea, "sort %g ns (without %g)", eb, ea);
  /* two cores: the rows are split over both */
  b.cores = 2;
  b.peak_flops = b.peak_transcendentals = 2e9;
  b.cache_bandwidth = 8e9;
  optic_program_t *p = compile_text(topk_hlo, &b, 2, 0);
  double e2 = p ? est_of(p, "tk", NULL) : -1;
  OT_CHECK(near(e2, 4.0 * 1000 * 10 * 2 / 2 + 10 + optic_program_machine(p)->sync_ns), "2 threads: %g", e2);
  optic_program_destroy(p);
}

/* gather per output element (split), scatter per update element (one thread). */
static void gather_scatter(void) {
  optic_machine a = toy(), b = toy();
  b.gather_element_ns = 5;
  b.scatter_element_ns = 4;
  double ea, eb;
  OT_CHECK(two_estimates(gather_scatter_hlo, "g", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 50.0 * 32 * 5 + 10) && eb > ea, "gather %g (without %g)", eb, ea);
  OT_CHECK(two_estimates(gather_scatter_hlo, "sc", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 50.0 * 32 * 4 + 10) && eb > ea, "scatter %g (without %g)", eb, ea);
}

#define HALF_LOOP(DT)       \
  "HloModule h\n"           \
  "ENTRY e {\n"             \
  "  x = " DT               \
  "[1000] parameter(0)\n"   \
  "  y = " DT               \
  "[1000] parameter(1)\n"   \
  "  ROOT s = " DT          \
  "[1000] multiply(x, y)\n" \
  "}\n"

/* 16-bit floats: elements x the dtype's own ns per element. */
static void half_elements(void) {
  optic_machine a = toy(), b = toy();
  b.bf16_element_ns = 2;
  b.f16_element_ns = 8;
  double ea, eb;
  OT_CHECK(two_estimates(HALF_LOOP("bf16"), "s", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 1000 * 2.0 + 10) && eb > ea, "bf16 %g (without %g)", eb, ea);
  OT_CHECK(two_estimates(HALF_LOOP("f16"), "s", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 1000 * 8.0 + 10), "f16 %g", eb);
  OT_CHECK(two_estimates(HALF_LOOP("f32"), "s", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "f32 takes no 16-bit class: %g vs %g", eb, ea);
}

#define REDUCE(DT, SHAPE, OUT, DIMS)                     \
  "HloModule r\n"                                        \
  "add {\n"                                              \
  "  a = " DT                                            \
  "[] parameter(0)\n"                                    \
  "  b = " DT                                            \
  "[] parameter(1)\n"                                    \
  "  ROOT s = " DT                                       \
  "[] add(a, b)\n"                                       \
  "}\n"                                                  \
  "ENTRY e {\n"                                          \
  "  x = " DT SHAPE                                      \
  " parameter(0)\n"                                      \
  "  z = " DT                                            \
  "[] constant(0)\n"                                     \
  "  ROOT r = " DT OUT " reduce(x, z), dimensions=" DIMS \
  ", to_apply=add\n"                                     \
  "}\n"

/* reduce over 2+ dims: bytes / reduce_multi_bandwidth; a reducer program
 * (bf16 here) per reduced position per block of 512 outputs. */
static void reduce_classes(void) {
  optic_machine a = toy(), b = toy();
  b.reduce_multi_bandwidth = 0.1e9; /* 10 ns per byte */
  double ea, eb;
  const char *multi = REDUCE("f32", "[8,16,8]", "[16]", "{0,2}");
  OT_CHECK(two_estimates(multi, "r", &a, &b, &ea, &eb));
  /* bytes: 4096 in + 64 out + 4 init */
  OT_CHECK(near(eb, 4164 * 10 + 10) && eb > ea, "multi-dim reduce %g (without %g)", eb, ea);
  b = toy();
  b.reduce_step_ns = 50;
  const char *steps = REDUCE("bf16", "[4,100]", "[4]", "{1}");
  OT_CHECK(two_estimates(steps, "r", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 100 * 50 + 10), "reducer program: 100 steps of one block: %g", eb);
  OT_CHECK(two_estimates(REDUCE("f32", "[4,100]", "[4]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "an f32 add reduce runs on the kernels: no steps (%g vs %g)", eb, ea);
}

#define WHILE_HLO(INIT, BOUND)                                    \
  "HloModule w\n"                                                 \
  "cond {\n"                                                      \
  "  p = (s32[], f32[256]) parameter(0)\n"                        \
  "  i = s32[] get-tuple-element(p), index=0\n"                   \
  "  n = s32[] " BOUND                                            \
  "\n"                                                            \
  "  ROOT c = pred[] compare(i, n), direction=LT\n"               \
  "}\n"                                                           \
  "body {\n"                                                      \
  "  p = (s32[], f32[256]) parameter(0)\n"                        \
  "  i = s32[] get-tuple-element(p), index=0\n"                   \
  "  x = f32[256] get-tuple-element(p), index=1\n"                \
  "  one = s32[] constant(1)\n"                                   \
  "  j = s32[] add(i, one)\n"                                     \
  "  y = f32[256] exponential(x)\n"                               \
  "  ROOT t = (s32[], f32[256]) tuple(j, y)\n"                    \
  "}\n"                                                           \
  "ENTRY e {\n"                                                   \
  "  x = f32[256] parameter(0)\n"                                 \
  "  k = s32[] " INIT                                             \
  "\n"                                                            \
  "  t = (s32[], f32[256]) tuple(k, x)\n"                         \
  "  w = (s32[], f32[256]) while(t), condition=cond, body=body\n" \
  "  ROOT y = f32[256] get-tuple-element(w), index=1\n"           \
  "}\n"

/* trips x (body + condition + 2 copies of the state leaves the body does
 * not pass through or update in place + while_iteration_ns) + condition +
 * one copy of the initial state (a parameter and a constant here: not the
 * loop's buffers) + the op's own overhead; one trip assumed without a fixed
 * counter. */
static void while_trips(void) {
  optic_machine mc = toy();
  mc.while_iteration_ns = 7;
  double per_trip[2] = {0}, total[2] = {0};
  const int trips[2] = {10, 20};
  const char *texts[2] = {WHILE_HLO("constant(0)", "constant(10)"), WHILE_HLO("constant(5)", "constant(25)")};
  for (int k = 0; k < 2; k++) {
    optic_program_t *p = compile_text(texts[k], &mc, 0, 0);
    if (!p) continue;
    double body = est_of(p, "j", NULL) + est_of(p, "y", NULL), cond = est_of(p, "c", NULL);
    const double copies = 2 * (2 * (4 + 1024) / 4e9 * 1e9); /* the state, read + written, twice */
    const double enter = 2 * (4 + 1024) / 4e9 * 1e9;        /* the initial state, read + written, once */
    per_trip[k] = body + cond + copies + 7;
    total[k] = est_of(p, "w", NULL);
    OT_CHECK(near(total[k], trips[k] * per_trip[k] + cond + enter + 10), "%d trips: %g, want %g", trips[k], total[k],
             trips[k] * per_trip[k] + cond + enter + 10);
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(s.est_ns >= total[k], "the program's estimate holds the loop: %g", s.est_ns);
    optic_program_destroy(p);
  }
  OT_CHECK(total[1] > 1.9 * total[0], "20 trips cost about twice 10: %g vs %g", total[1], total[0]);
  /* a bound the compiler cannot read (a parameter): one trip, and said so */
  const char *unknown =
      "HloModule u\n"
      "cond {\n  p = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] get-tuple-element(p), index=1\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
      "  ROOT t = (s32[], s32[]) tuple(j, n)\n}\n"
      "ENTRY e {\n  n = s32[] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], s32[]) tuple(z, n)\n"
      "  w = (s32[], s32[]) while(t), condition=cond, body=body\n  ROOT r = s32[] get-tuple-element(w), index=0\n}\n";
  optic_program_t *p = compile_text(unknown, &mc, 0, 0);
  if (p) {
    double j = est_of(p, "j", NULL), c = est_of(p, "c", NULL), w = est_of(p, "w", NULL);
    /* n passes through the body: only i (4 bytes) is copied back; both (8 bytes) are copied in */
    OT_CHECK(near(w, (j + c + 2 * (2 * 4 / 4e9 * 1e9) + 7) + c + 2 * 8 / 4e9 * 1e9 + 10),
             "unknown trips: one assumed, %g", w);
  }
  optic_program_destroy(p);
}

/* The split decision: with split_min_elements 1 every op splits over both
 * threads and pays a barrier; by cost the tiny ops stay on one thread. */
static void split_follows_runtime(void) {
  optic_machine mc = toy();
  mc.cores = 2;
  mc.sync_ns = 300;
  const char *chain =
      "HloModule c\n"
      "ENTRY e {\n"
      "  x = f32[16] parameter(0)\n"
      "  a = f32[16] add(x, x)\n"
      "  b = f32[16] multiply(a, x)\n"
      "  ROOT c = f32[16] subtract(b, a)\n"
      "}\n";
  optic_program_t *by_cost = compile_text(chain, &mc, 2, 0), *forced = compile_text(chain, &mc, 2, 1);
  optic_program_summary s0, s1;
  if (by_cost && forced) {
    OT_EXPECT_OK(optic_program_summary_get(by_cost, &s0));
    OT_EXPECT_OK(optic_program_summary_get(forced, &s1));
    OT_CHECK(s1.cost.bytes_accessed == s0.cost.bytes_accessed && s1.cost.flops == s0.cost.flops);
    /* each op: 192 bytes, 96 ns on one thread's 2 bytes/ns, 48 on two, + 300 */
    OT_CHECK(near(s1.est_ns - s0.est_ns, 3 * (300 - 48.0)), "3 forced splits: %g vs %g", s1.est_ns, s0.est_ns);
    double solo = est_of(by_cost, "a", NULL), split = est_of(forced, "a", NULL);
    OT_CHECK(near(split - 300, solo - 96.0 / 2e9 * 1e9), "solo on one thread (%g), split on two + barrier (%g)", solo,
             split);
  }
  optic_program_destroy(by_cost);
  optic_program_destroy(forced);
  optic_compile_options o = optic_compile_options_default();
  o.split_min_elements = -1;
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(chain, strlen(chain), &m));
  optic_program_t *p = NULL;
  OT_EXPECT_STATUS(optic_compile(m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(p == NULL && strstr(optic_last_error(), "split_min_elements") != NULL, "%s", optic_last_error());
  optic_module_destroy(m);
}

/* A dynamic-update-slice into a parameter cannot take its buffer over: it
 * copies the whole operand first (XLA counts only the update). */
static void dus_copies_operand(void) {
  const char *text =
      "HloModule d\n"
      "ENTRY e {\n"
      "  x = f32[1024] parameter(0)\n"
      "  u = f32[16] parameter(1)\n"
      "  i = s32[] parameter(2)\n"
      "  ROOT d = f32[1024] dynamic-update-slice(x, u, i)\n"
      "}\n";
  optic_machine mc = toy();
  optic_program_t *p = compile_text(text, &mc, 0, 0);
  optic_cost c = {0};
  double e = p ? est_of(p, "d", &c) : -1;
  OT_CHECK(c.bytes_accessed == 2 * 64 + 4, "XLA's count: 2 x update + the index: %g", c.bytes_accessed);
  OT_CHECK(near(e, 2 * 4096 / 4e9 * 1e9 + 10), "the operand's copy: %g", e);
  optic_program_destroy(p);
}

/* In a while body, a dynamic-update-slice of state leaf e into root leaf e
 * that nothing reads the old leaf after runs over the state (exec/bind.c):
 * no operand copy; when the old leaf is read after it, the copy is charged
 * as outside a loop. */
static void dus_over_while_state(void) {
  static const char *const tails[2] = {"  ROOT t = (s32[], f32[1024]) tuple(j, d)\n",
                                       "  a = f32[1024] add(y, d)\n  ROOT t = (s32[], f32[1024]) tuple(j, a)\n"};
  double est[2] = {-1, -1};
  for (int k = 0; k < 2; k++) {
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule w\n"
             "cond {\n  p = (s32[], f32[1024]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
             "  n = s32[] constant(10)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
             "body {\n  p = (s32[], f32[1024]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
             "  y = f32[1024] get-tuple-element(p), index=1\n  u = f32[16] slice(y), slice={[0:16]}\n"
             "  d = f32[1024] dynamic-update-slice(y, u, i)\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n%s}\n"
             "ENTRY e {\n  x = f32[1024] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[1024]) tuple(z, x)\n"
             "  w = (s32[], f32[1024]) while(t), condition=cond, body=body\n"
             "  ROOT r = f32[1024] get-tuple-element(w), index=1\n}\n",
             tails[k]);
    optic_machine mc = toy();
    optic_program_t *p = compile_text(text, &mc, 0, 0);
    est[k] = p ? est_of(p, "d", NULL) : -1;
    optic_program_destroy(p);
  }
  const double copy = 2 * 4096 / 4e9 * 1e9;
  OT_CHECK(est[0] >= 0 && est[0] < copy, "over the state: no operand copy: %g (a copy is %g)", est[0], copy);
  OT_CHECK(est[1] >= copy, "old leaf read after: the operand's copy: %g", est[1]);
}

/* A loop fusion reading a row through a broadcast (a leaf the runtime
 * gathers) adds elements x loop_leaf_element_ns + runs x loop_leaf_run_ns;
 * a scalar broadcast is no leaf; without the figures nothing is added. */
static void loop_leaves(void) {
  const char *text =
      "HloModule l\n"
      "ENTRY e {\n"
      "  x = f32[64,16] parameter(0)\n"
      "  r = f32[16] parameter(1)\n"
      "  s = f32[] parameter(2)\n"
      "  b = f32[64,16] broadcast(r), dimensions={1}\n"
      "  c = f32[64,16] broadcast(s), dimensions={}\n"
      "  a = f32[64,16] add(x, b)\n"
      "  ROOT y = f32[64,16] multiply(a, c)\n"
      "}\n";
  double est[2] = {-1, -1};
  for (int k = 0; k < 2; k++) {
    optic_machine mc = toy();
    mc.loop_bandwidth = 2e9;
    if (k) mc.loop_leaf_element_ns = 0.5, mc.loop_leaf_run_ns = 3;
    optic_module_t *m = NULL;
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    optic_compile_options o = optic_compile_options_default();
    o.machine = &mc;
    o.fusion = 1;
    if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
    optic_program_summary sum;
    if (p) OT_EXPECT_OK(optic_program_summary_get(p, &sum));
    OT_CHECK(p && sum.fusions == 1 && sum.instructions <= 5, "one loop fusion: %lld", p ? (long long)sum.fusions : -1);
    if (p) est[k] = sum.est_ns;
    optic_program_destroy(p);
    optic_module_destroy(m);
  }
  OT_CHECK(near(est[1] - est[0], 1024 * 0.5 + 64 * 3), "one leaf of 1024 elements in 64 runs: %g vs %g", est[1],
           est[0]);
}

#define CONVERT(FROM, TO) \
  "HloModule c\n"         \
  "ENTRY e {\n"           \
  "  x = " FROM           \
  "[1000] parameter(0)\n" \
  "  ROOT y = " TO        \
  "[1000] convert(x)\n"   \
  "}\n"

/* Format 5: the runtime's own paths. topk with k <= 64 selects (per row
 * element), larger k merge-sorts; a gather pays per run it copies (a row of
 * the minor offset dim, else each element) beside per element; a convert
 * from or to a 16-bit float takes the figures of its two sides (without
 * them, the format-4 per-instruction figure); a one-op 16-bit reduce with
 * few outputs is folded directly, per input element. */
/* A 16-bit maximum with few outputs: over a strided dim the runtime folds
 * it (the minmax fold figure, per input element); over contiguous rows it
 * takes the rows path, few outputs or many: each element widened
 * (convert_from_<type>_ns) and one row-kernel call per row (reduce_row_ns),
 * or the per-element 16-bit figure when the convert figure is not known. */
static const char *half_max(const char *shape, const char *dims) {
  static char text[512];
  snprintf(text, sizeof text,
           "HloModule r\nmx {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
           "  ROOT s = bf16[] maximum(a, b)\n}\nENTRY e {\n  x = bf16%s parameter(0)\n"
           "  z = bf16[] constant(0)\n  ROOT r = bf16[4] reduce(x, z), dimensions=%s, to_apply=mx\n}\n",
           shape, dims);
  return text;
}

static void half_extremum_paths(void) {
  optic_machine a = toy(), b = toy();
  a.bf16_element_ns = b.bf16_element_ns = 3;
  b.reduce_fold_bf16_minmax_ns = 7;
  double ea, eb;
  OT_CHECK(two_estimates(half_max("[1000,4]", "{0}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4000 * 7.0 + 10) && near(ea, 4000 * 3.0 + 10), "strided maximum folded: %g (unknown: %g)", eb, ea);
  OT_CHECK(two_estimates(half_max("[4,1000]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea && near(eb, 4000 * 3.0 + 10), "maximum over rows: the rows path: %g vs %g", eb, ea);
  b.convert_from_bf16_ns = 2, b.reduce_row_ns = 20; /* the widening and one row-kernel call per row */
  OT_CHECK(two_estimates(half_max("[4,1000]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4000 * 2.0 + 4 * 20.0 + 10), "rows path with the convert figure: %g", eb);
}

static void runtime_paths(void) {
  optic_machine a = toy(), b = toy();
  b.topk_compare_ns = 2;
  b.topk_select_element_ns = 2; /* above the bytes at 4 per ns */
  double ea, eb;
  OT_CHECK(two_estimates(topk_hlo, "tk", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4.0 * 1000 * 2 + 10), "topk k=5 selects: %g", eb);
  const char *topk_big =
      "HloModule t\nENTRY e {\n  x = f32[4,1000] parameter(0)\n"
      "  tk = (f32[4,100], s32[4,100]) topk(x), k=100, largest=true\n"
      "  ROOT v = f32[4,100] get-tuple-element(tk), index=0\n}\n";
  OT_CHECK(two_estimates(topk_big, "tk", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4.0 * 1000 * 10 * 2 + 10), "topk k=100 merge-sorts: %g", eb);
  b = toy();
  b.gather_element_ns = 5;
  b.gather_run_ns = 70;
  OT_CHECK(two_estimates(gather_scatter_hlo, "g", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 50 * 70 + 1600 * 5 + 10), "rows of 32: %g", eb);
  const char *columns =
      "HloModule g\nENTRY e {\n  t = f32[100,32] parameter(0)\n  i = s32[50,1] parameter(1)\n"
      "  ROOT g = f32[32,50] gather(t, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,32}\n}\n";
  OT_CHECK(two_estimates(columns, "g", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 1600 * 70 + 1600 * 5 + 10), "minor dim not an offset dim: a run per element: %g", eb);
  b = toy();
  b.bf16_element_ns = 2;
  a = b; /* format 4: the per-instruction figure */
  b.convert_from_bf16_ns = 4, b.convert_from_f16_ns = 1, b.convert_to_bf16_ns = 2;
  OT_CHECK(two_estimates(CONVERT("bf16", "f32"), "y", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 1000 * 4.0 + 10) && near(ea, 1000 * 2.0 + 10), "bf16 -> f32: %g (format 4: %g)", eb, ea);
  OT_CHECK(two_estimates(CONVERT("f16", "bf16"), "y", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 1000 * 3.0 + 10), "f16 -> bf16: both sides: %g", eb);
  OT_CHECK(two_estimates(CONVERT("f32", "f16"), "y", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "to f16 not known: the format-4 rule: %g vs %g", eb, ea);
  b.convert_to_f16_ns = 0.5;
  OT_CHECK(two_estimates(CONVERT("s8", "f16"), "y", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "s8 -> f16 not measured: the format-4 rule: %g vs %g", eb, ea);
  a = toy(), b = toy();
  b.reduce_fold_bf16_ns = 2; /* above the 3996 flops at 1 flop/ns */
  b.reduce_step_ns = 5;
  a.reduce_step_ns = 5;
  OT_CHECK(two_estimates(REDUCE("bf16", "[4,1000]", "[4]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(near(eb, 4000 * 2.0 + 10) && near(ea, 1000 * 5.0 + 10), "4 outputs folded: %g (program: %g)", eb, ea);
  OT_CHECK(two_estimates(REDUCE("bf16", "[64,100]", "[64]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "64 outputs: the block program: %g vs %g", eb, ea);
  OT_CHECK(two_estimates(REDUCE("f16", "[4,1000]", "[4]", "{1}"), "r", &a, &b, &ea, &eb));
  OT_CHECK(eb == ea, "f16 fold not known: %g vs %g", eb, ea);
  half_extremum_paths();
}

/* A loop fusion's 16-bit work adds to its bytes at loop_bandwidth (the
 * block program converts, then computes): the difference is the work. */
static void loop_work_adds(void) {
  const char *text =
      "HloModule l\nENTRY e {\n  x = bf16[1000] parameter(0)\n  y = f32[1000] parameter(1)\n"
      "  c = f32[1000] convert(x)\n  ROOT a = f32[1000] add(c, y)\n}\n";
  double est[2] = {-1, -1};
  for (int k = 0; k < 2; k++) {
    optic_machine mc = toy();
    mc.loop_bandwidth = 1e9; /* 10000 bytes: 10 us, far above the convert */
    if (k) mc.convert_from_bf16_ns = 0.25;
    optic_module_t *m = NULL;
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    optic_compile_options o = optic_compile_options_default();
    o.machine = &mc;
    o.fusion = 1;
    if (m) OT_EXPECT_OK(optic_compile(m, &o, &p));
    optic_program_summary sum;
    if (p) OT_EXPECT_OK(optic_program_summary_get(p, &sum));
    OT_CHECK(p && sum.fusions == 1, "one loop fusion");
    if (p) est[k] = sum.est_ns;
    optic_program_destroy(p);
    optic_module_destroy(m);
  }
  OT_CHECK(near(est[1] - est[0], 1000 * 0.25), "the convert adds its 250 ns: %g vs %g", est[1], est[0]);
}

/* est_ns of text compiled with fusion on mc for `threads` (every op split:
 * split_min_elements 1), its counts in *cost; -1 unless it is one fusion. */
static double fused_est(const char *text, const optic_machine *mc, int32_t threads, optic_cost *cost) {
  optic_program_t *p = compile_with(text, mc, threads, 1, 1);
  optic_program_summary sum;
  double est = -1;
  if (p && optic_program_summary_get(p, &sum) == OPTIC_OK && sum.fusions == 1) est = sum.est_ns, *cost = sum.cost;
  optic_program_destroy(p);
  return est;
}

/* Format 12: an f32 loop fusion takes its bytes at loop_stream_bandwidth
 * plus its flops and transcendentals at their ns (one core's, divided over
 * the threads it splits over); without loop_flop_ns, the format-11 rule
 * (bytes / loop_bandwidth); a loop with 16-bit work keeps that rule. */
static void loop_parts(void) {
  const char *exp_loop =
      "HloModule l\nENTRY e {\n  x = f32[64,64] parameter(0)\n  y = f32[64,64] parameter(1)\n"
      "  a = f32[64,64] subtract(x, y)\n  b = f32[64,64] exponential(a)\n  c = f32[64,64] multiply(b, y)\n"
      "  ROOT d = f32[64,64] add(c, x)\n}\n";
  for (int32_t cores = 1; cores <= 2; cores++) {
    optic_machine mc = ot_toy_machine(cores);
    mc.loop_bandwidth = 1e9 * cores;
    optic_cost c = {0};
    const double old = fused_est(exp_loop, &mc, cores, &c);
    const double sync = cores > 1 ? mc.sync_ns : 0;
    OT_CHECK(c.flops == 3 * 4096 && c.transcendentals == 4096 && c.bytes_accessed == 3 * 16384, "counts %g %g %g",
             c.flops, c.transcendentals, c.bytes_accessed);
    OT_CHECK(near(old, c.bytes_accessed / (1e9 * cores) * 1e9 + mc.op_overhead_ns + sync),
             "%d cores, format 11: bytes / loop_bandwidth: %g", cores, old);
    /* streams below the cache bandwidth (4e9 per core), then above it: at
     * least the roofline's memory time */
    for (int fast = 0; fast < 2; fast++) {
      const double bw = (fast ? 1e12 : 2e9) * cores;
      mc.loop_stream_bandwidth = bw, mc.loop_flop_ns = 2, mc.loop_transcendental_ns = 5;
      const double parts = fused_est(exp_loop, &mc, cores, &c);
      const double want = c.bytes_accessed / (fast ? mc.cache_bandwidth : bw) * 1e9 +
                          (c.flops * 2 + c.transcendentals * 5) / cores + mc.op_overhead_ns + sync;
      OT_CHECK(near(parts, want), "%d cores, format 12, streams at %g B/s: %g vs %g", cores, bw, parts, want);
    }
  }
  /* a bf16 operand: the 16-bit work, beside the format-11 bytes term */
  const char *narrow =
      "HloModule l\nENTRY e {\n  x = bf16[1000] parameter(0)\n  y = f32[1000] parameter(1)\n"
      "  c = f32[1000] convert(x)\n  ROOT a = f32[1000] add(c, y)\n}\n";
  optic_machine mc = toy();
  mc.loop_bandwidth = 1e9, mc.convert_from_bf16_ns = 0.25;
  optic_cost c = {0};
  const double before = fused_est(narrow, &mc, 1, &c);
  mc.loop_stream_bandwidth = 1e12, mc.loop_flop_ns = 2, mc.loop_transcendental_ns = 5;
  const double after = fused_est(narrow, &mc, 1, &c);
  OT_CHECK(before > 0 && near(before, after), "16-bit work keeps the format-11 rule: %g vs %g", before, after);
}

static const ot_case cases[] = {
    {"loop_parts", loop_parts},
    {"runtime_paths", runtime_paths},
    {"loop_work_adds", loop_work_adds},
    {"loop_leaves", loop_leaves},
    {"sort_and_topk", sort_and_topk},
    {"gather_scatter", gather_scatter},
    {"half_elements", half_elements},
    {"reduce_classes", reduce_classes},
    {"while_trips", while_trips},
    {"split_follows_runtime", split_follows_runtime},
    {"dus_copies_operand", dus_copies_operand},
    {"dus_over_while_state", dus_over_while_state},
};
OT_MAIN(cases)
