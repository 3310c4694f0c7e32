/* Schedule: hand-computed orders and peaks (the operand-order rule, a fan of
 * reductions, dead code), errors of caller-given orders, determinism and
 * topological order on random graphs, ids that are not topological (a
 * fused module scheduled without renumbering), and near-linear time up to 100k
 * instructions (schedule + buffer assignment + verifier). */
#include <optic/optic.h>

#include <time.h>

#include "tests/graph/random_graph.h"
#include "tests/harness.h"

static optic_node_id param(optic_module_t *m, optic_comp_id c, int32_t n, int32_t rank, const int64_t *dims) {
  optic_shape s = {.rank = rank};
  for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  optic_type t = optic_type_array(OPTIC_F32, &s);
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_parameter(m, c, n, &t, NULL, &id));
  return id;
}

static optic_node_id unary(optic_module_t *m, optic_comp_id c, optic_opcode op, optic_node_id x) {
  optic_node_id id = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_unary(m, c, op, x, NULL, &id));
  return id;
}

static optic_comp_id scalar_adder(optic_module_t *m) {
  optic_comp_id c;
  optic_node_id r;
  OT_EXPECT_OK(optic_module_add_computation(m, "add", &c));
  optic_node_id x = param(m, c, 0, 0, NULL), y = param(m, c, 1, 0, NULL);
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, x, y, NULL, &r));
  OT_EXPECT_OK(optic_computation_set_root(m, c, r));
  return c;
}

static bool order_is(const optic_schedule_t *s, const optic_node_id *want, int32_t n) {
  int32_t count;
  const optic_node_id *got = optic_schedule_order(s, &count);
  bool same = count == n;
  for (int32_t i = 0; same && i < n; i++) same = got[i] == want[i];
  if (!same) {
    fprintf(stderr, "  order:");
    for (int32_t i = 0; i < count; i++) fprintf(stderr, " %d", (int)got[i]);
    fprintf(stderr, "\n  want: ");
    for (int32_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)want[i]);
    fprintf(stderr, "\n");
  }
  return same;
}

static void plan_and_verify(optic_module_t *m, const optic_schedule_t *s) {
  optic_buffer_plan_t *p = NULL;
  OT_EXPECT_OK(optic_buffer_plan_create(m, s, &p));
  if (p) {
    OT_EXPECT_OK(optic_buffer_plan_verify(m, p));
    OT_CHECK(optic_buffer_plan_arena_bytes(p) >= optic_schedule_peak_bytes(s));
  }
  optic_buffer_plan_destroy(p);
}

/* add(y, x): y = exp(p) needs 4000 bytes and keeps them; x = broadcast of a
 * reduce of a 40000-byte broadcast needs 40004 and keeps 4000. Computing x
 * first peaks at 40004; the operands' order (y first) at 44004. */
static void operand_order(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("order", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_comp_id add = scalar_adder(m);
  int64_t d1000[] = {1000};
  optic_node_id p = param(m, c, 0, 1, d1000), q = param(m, c, 1, 0, NULL), zero, big, r, x, y, root;
  float zf = 0;
  OT_EXPECT_OK(optic_graph_constant(m, c, OPTIC_F32, &(optic_shape){.rank = 0}, &zf, 4, NULL, &zero));
  y = unary(m, c, OPTIC_OP_EXPONENTIAL, p);
  OT_EXPECT_OK(optic_graph_broadcast(m, c, q, &(optic_shape){.rank = 1, .dims = {10000}}, NULL, 0, NULL, &big));
  int64_t dims0[] = {0};
  OT_EXPECT_OK(optic_graph_reduce(m, c, &big, &zero, 1, dims0, 1, add, NULL, &r));
  OT_EXPECT_OK(optic_graph_broadcast(m, c, r, &(optic_shape){.rank = 1, .dims = {1000}}, NULL, 0, NULL, &x));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, y, x, NULL, &root));
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_schedule_t *s = NULL, *naive = NULL;
  OT_EXPECT_OK(optic_schedule_create(m, c, &s));
  optic_node_id want[] = {q, big, zero, r, x, p, y, root};
  OT_CHECK(s && order_is(s, want, 8));
  OT_CHECK(optic_schedule_peak_bytes(s) == 40004, "peak %zu", optic_schedule_peak_bytes(s));
  OT_CHECK(optic_schedule_position(s, root) == 7 && optic_schedule_position(s, q) == 0);
  optic_node_id operands_first[] = {p, y, q, big, zero, r, x, root};
  OT_EXPECT_OK(optic_schedule_from_order(m, c, operands_first, 8, &naive));
  OT_CHECK(optic_schedule_peak_bytes(naive) == 44004, "peak %zu", optic_schedule_peak_bytes(naive));
  plan_and_verify(m, s);
  plan_and_verify(m, naive);
  optic_schedule_destroy(s);
  optic_schedule_destroy(naive);
  optic_module_destroy(m);
}

/* Eight 8 KiB broadcasts each reduced to a 1 KiB output: built all
 * broadcasts first, creation order holds them all (64 KiB); the DFS order
 * holds one at a time. */
static void fan_of_reductions(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("fan", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_comp_id add = scalar_adder(m);
  int64_t d[] = {256}, keep[] = {1}, dims0[] = {0};
  optic_node_id p = param(m, c, 0, 1, d), zero, b[8], r[8], root;
  float zf = 0;
  OT_EXPECT_OK(optic_graph_constant(m, c, OPTIC_F32, &(optic_shape){.rank = 0}, &zf, 4, NULL, &zero));
  for (int i = 0; i < 8; i++) {
    OT_EXPECT_OK(optic_graph_broadcast(m, c, p, &(optic_shape){.rank = 2, .dims = {8, 256}}, keep, 1, NULL, &b[i]));
  }
  for (int i = 0; i < 8; i++) OT_EXPECT_OK(optic_graph_reduce(m, c, &b[i], &zero, 1, dims0, 1, add, NULL, &r[i]));
  OT_EXPECT_OK(optic_graph_tuple(m, c, r, 8, NULL, &root));
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_schedule_t *s = NULL, *creation = NULL;
  OT_EXPECT_OK(optic_schedule_create(m, c, &s));
  int32_t n;
  const optic_node_id *ids = optic_computation_instructions(m, c, &n);
  OT_EXPECT_OK(optic_schedule_from_order(m, c, ids, n, &creation));
  OT_CHECK(optic_schedule_peak_bytes(s) == 8192, "peak %zu", optic_schedule_peak_bytes(s));
  OT_CHECK(optic_schedule_peak_bytes(creation) == 8 * 8192, "peak %zu", optic_schedule_peak_bytes(creation));
  for (int i = 0; i < 8; i++) {
    OT_CHECK(optic_schedule_position(s, r[i]) == optic_schedule_position(s, b[i]) + 1 ||
                 optic_schedule_position(s, r[i]) == optic_schedule_position(s, b[i]) + 2,
             "reduce %d runs right after its broadcast", i);
  }
  optic_buffer_plan_t *plan = NULL;
  OT_EXPECT_OK(optic_buffer_plan_create(m, s, &plan));
  OT_CHECK(plan && optic_buffer_plan_arena_bytes(plan) == 8192, "arena %zu", optic_buffer_plan_arena_bytes(plan));
  optic_buffer_plan_destroy(plan);
  plan_and_verify(m, creation);
  optic_schedule_destroy(s);
  optic_schedule_destroy(creation);
  optic_module_destroy(m);
}

/* Instructions the root does not reach (and an unused parameter) come first,
 * by DFS from each instruction without users in id order; the root is last. */
static void dead_code_first(void) {
  optic_module_t *m;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("dead", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {16};
  optic_node_id p = param(m, c, 0, 1, d), unused = param(m, c, 1, 1, d);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, p), dead1 = unary(m, c, OPTIC_OP_NEGATE, a);
  optic_node_id dead2 = unary(m, c, OPTIC_OP_ABS, p), root = unary(m, c, OPTIC_OP_TANH, a);
  OT_EXPECT_OK(optic_computation_set_root(m, c, root));
  optic_schedule_t *s = NULL;
  OT_EXPECT_OK(optic_schedule_create(m, c, &s));
  optic_node_id want[] = {unused, p, a, dead1, dead2, root};
  OT_CHECK(s && order_is(s, want, 6));
  OT_CHECK(optic_schedule_peak_bytes(s) == 128, "a and dead1 live together: peak %zu", optic_schedule_peak_bytes(s));
  plan_and_verify(m, s);
  optic_schedule_destroy(s);
  optic_module_destroy(m);
}

static void order_errors(void) {
  optic_module_t *m;
  optic_comp_id c, other;
  OT_EXPECT_OK(optic_module_create("errors", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  OT_EXPECT_OK(optic_module_add_computation(m, "other", &other));
  int64_t d[] = {4};
  optic_node_id p = param(m, c, 0, 1, d), a = unary(m, c, OPTIC_OP_EXPONENTIAL, p), b = unary(m, c, OPTIC_OP_ABS, a);
  optic_node_id o = param(m, other, 0, 1, d);
  OT_EXPECT_OK(optic_computation_set_root(m, c, b));
  optic_schedule_t *s = NULL;
  optic_node_id short_order[] = {p, a}, dup[] = {p, a, a}, backwards[] = {p, b, a}, foreign[] = {p, a, o};
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, short_order, 2, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, dup, 3, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "listed at 1 and at 2") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, backwards, 3, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "before its operand") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, foreign, 3, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, NULL, 3, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_schedule_create(m, other, &s), OPTIC_ERR_INVALID_ARGUMENT); /* no root */
  OT_EXPECT_STATUS(optic_schedule_create(NULL, c, &s), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_schedule_create(m, c, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(s == NULL && optic_schedule_order(NULL, NULL) == NULL && optic_schedule_peak_bytes(NULL) == 0);
  (void)o;
  optic_module_destroy(m);
}

/* Same order every time; operands first; the root last unless unreached
 * (dead) instructions use it. */
static void random_deterministic(void) {
  uint64_t seed = rg_seed(0x5c4ed);
  printf("random_deterministic: seed %#llx (repeat with OPTIC_TEST_SEED=%#llx %s random_deterministic)\n",
         (unsigned long long)seed, (unsigned long long)seed, ot_prog_);
  rg_rng r = {seed};
  for (int it = 0; it < 300; it++) {
    uint64_t gseed = rg_next(&r);
    rg_graph g;
    bool built = rg_build(gseed, (int32_t)rg_int(&r, 1, 120), &g);
    OT_CHECK(built, "graph seed %#llx", (unsigned long long)gseed);
    optic_schedule_t *s1 = NULL, *s2 = NULL;
    if (built) {
      OT_EXPECT_OK(optic_schedule_create(g.m, g.main, &s1));
      OT_EXPECT_OK(optic_schedule_create(g.m, g.main, &s2));
    }
    if (s1 && s2) {
      int32_t n1, n2, n;
      const optic_node_id *o1 = optic_schedule_order(s1, &n1), *o2 = optic_schedule_order(s2, &n2);
      optic_computation_instructions(g.m, g.main, &n);
      OT_CHECK(n1 == n && n2 == n && memcmp(o1, o2, (size_t)n * sizeof *o1) == 0 &&
                   optic_schedule_peak_bytes(s1) == optic_schedule_peak_bytes(s2),
               "graph seed %#llx", (unsigned long long)gseed);
      optic_node_id root = optic_computation_root(g.m, g.main);
      OT_CHECK(o1[n - 1] == root || optic_node_user_count(g.m, root) > 0, "graph seed %#llx",
               (unsigned long long)gseed);
      for (int32_t t = 0; t < n; t++) {
        OT_CHECK(optic_schedule_position(s1, o1[t]) == t);
        for (int32_t k = 0; k < optic_node_operand_count(g.m, o1[t]); k++) {
          OT_CHECK(optic_schedule_position(s1, optic_node_operand(g.m, o1[t], k)) < t, "graph seed %#llx",
                   (unsigned long long)gseed);
        }
      }
      plan_and_verify(g.m, s1);
    }
    optic_schedule_destroy(s1);
    optic_schedule_destroy(s2);
    optic_module_destroy(g.m);
  }
}

/* A user with a smaller id than its operand (replace_all_uses by a newer
 * instruction): the schedule computes a topological order instead of
 * assuming ids are one. */
static void user_older_than_operand(void) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("older", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  int64_t d[] = {16};
  optic_node_id x = param(m, c, 0, 1, d);
  optic_node_id a = unary(m, c, OPTIC_OP_EXPONENTIAL, x);
  optic_node_id b = unary(m, c, OPTIC_OP_NEGATE, a);
  optic_node_id t = OPTIC_NO_NODE;
  OT_EXPECT_OK(optic_graph_tuple(m, c, &b, 1, NULL, &t));
  OT_EXPECT_OK(optic_computation_set_root(m, c, t));
  optic_node_id l = unary(m, c, OPTIC_OP_LOG, x);
  optic_node_id g = unary(m, c, OPTIC_OP_TANH, l);
  OT_EXPECT_OK(optic_node_replace_all_uses(m, a, g)); /* b (id 2) now uses g (id 5) */
  OT_EXPECT_OK(optic_node_remove(m, a));
  optic_schedule_t *s = NULL;
  OT_EXPECT_OK(optic_schedule_create(m, c, &s));
  if (s) {
    optic_node_id want[] = {x, l, g, b, t};
    OT_CHECK(order_is(s, want, 5));
    plan_and_verify(m, s);
  }
  optic_schedule_destroy(s);
  optic_node_id bad[] = {x, b, l, g, t};
  OT_EXPECT_STATUS(optic_schedule_from_order(m, c, bad, 5, &s), OPTIC_ERR_INVALID_ARGUMENT);
  optic_node_id good[] = {x, l, g, b, t};
  OT_EXPECT_OK(optic_schedule_from_order(m, c, good, 5, &s));
  if (s) plan_and_verify(m, s);
  optic_schedule_destroy(s);
  optic_module_destroy(m);
}

/* Names of a schedule's order joined by spaces (caller frees). */
static char *order_names(const optic_module_t *m, const optic_schedule_t *s) {
  int32_t n = 0;
  const optic_node_id *o = optic_schedule_order(s, &n);
  size_t len = 1;
  for (int32_t i = 0; i < n; i++) len += strlen(optic_node_name(m, o[i])) + 1;
  char *out = malloc(len), *w = out;
  if (out == NULL) exit(2);
  for (int32_t i = 0; i < n; i++) w += sprintf(w, "%s ", optic_node_name(m, o[i]));
  *w = '\0';
  return out;
}

/* Fusion appends fusion instructions that older ones use. Scheduling,
 * planning and verifying the optimized module as it is (not renumbered):
 * the entry and every fused computation must work, and the entry's order
 * (by name), peak and arena must equal those of optic_compile, which plans
 * a renumbered copy. */
static void fused_module_without_renumbering(void) {
  uint64_t seed = rg_seed(0xf05ed);
  printf(
      "fused_module_without_renumbering: seed %#llx (repeat with OPTIC_TEST_SEED=%#llx %s "
      "fused_module_without_renumbering)\n",
      (unsigned long long)seed, (unsigned long long)seed, ot_prog_);
  rg_rng r = {seed};
  long inverted = 0, fused_plans = 0;
  optic_machine mc;
  OT_EXPECT_OK(optic_machine_preset("tpu-v4", &mc));
  for (int it = 0; it < 200; it++) {
    uint64_t gseed = rg_next(&r);
    rg_graph g;
    bool built = rg_build_with(gseed, (int32_t)rg_int(&r, 5, 130), (int32_t)rg_int(&r, 0, 2), &g);
    OT_CHECK(built, "graph seed %#llx", (unsigned long long)gseed);
    if (!built) {
      optic_module_destroy(g.m);
      continue;
    }
    optic_compile_options co = optic_compile_options_default();
    co.machine = &mc;
    optic_program_t *prog = NULL;
    OT_EXPECT_OK(optic_compile(g.m, &co, &prog));
    optic_optimize_options oo = optic_optimize_options_default();
    OT_EXPECT_OK(optic_graph_optimize(g.m, &oo, NULL));
    int32_t n = 0;
    const optic_node_id *ids = optic_computation_instructions(g.m, g.main, &n);
    for (int32_t i = 0; i < n; i++) {
      for (int32_t k = 0; k < optic_node_operand_count(g.m, ids[i]); k++)
        inverted += optic_node_operand(g.m, ids[i], k) > ids[i];
    }
    optic_schedule_t *s = NULL;
    optic_buffer_plan_t *p = NULL;
    OT_EXPECT_OK(optic_schedule_create(g.m, g.main, &s));
    if (s) OT_EXPECT_OK(optic_buffer_plan_create(g.m, s, &p));
    if (p) OT_EXPECT_OK(optic_buffer_plan_verify(g.m, p));
    const optic_schedule_t *ps = prog ? optic_program_schedule(prog, optic_program_entry(prog)) : NULL;
    const optic_buffer_plan_t *pp = prog ? optic_program_buffers(prog, optic_program_entry(prog)) : NULL;
    if (s && p && ps && pp) {
      char *a = order_names(g.m, s), *b = order_names(optic_program_module(prog), ps);
      OT_CHECK(strcmp(a, b) == 0, "graph seed %#llx: order\n  %s\nvs compile's\n  %s", (unsigned long long)gseed, a, b);
      OT_CHECK(optic_schedule_peak_bytes(s) == optic_schedule_peak_bytes(ps) &&
                   optic_buffer_plan_arena_bytes(p) == optic_buffer_plan_arena_bytes(pp),
               "graph seed %#llx: peak %zu arena %zu vs compile's %zu, %zu", (unsigned long long)gseed,
               optic_schedule_peak_bytes(s), optic_buffer_plan_arena_bytes(p), optic_schedule_peak_bytes(ps),
               optic_buffer_plan_arena_bytes(pp));
      free(a);
      free(b);
    }
    optic_buffer_plan_destroy(p);
    optic_schedule_destroy(s);
    /* the fused computations, whose ids are in creation order, not operand order */
    ids = optic_computation_instructions(g.m, g.main, &n);
    for (int32_t i = 0; i < n; i++) {
      if (optic_node_opcode(g.m, ids[i]) != OPTIC_OP_FUSION) continue;
      optic_comp_id fc = optic_node_called(g.m, ids[i], 0);
      optic_schedule_t *fs = NULL;
      OT_EXPECT_OK(optic_schedule_create(g.m, fc, &fs));
      if (fs) plan_and_verify(g.m, fs);
      optic_schedule_destroy(fs);
      fused_plans++;
    }
    optic_program_destroy(prog);
    optic_module_destroy(g.m);
  }
  printf(
      "fused_module_without_renumbering: %ld operands with a larger id than their user, %ld fused computations "
      "planned\n",
      inverted, fused_plans);
  OT_CHECK(inverted > 0 && fused_plans > 0, "fusion must leave ids out of operand order on random graphs");
}

/* A deep chain shaped like an MLP (a layout op where the matmul will be, bias
 * broadcast and add, tanh, a bias-scaled residual); returns its instruction
 * count. No instruction has many users (building those is quadratic in the
 * module's user lists, which is not what this measures). */
static int32_t build_chain(optic_module_t *m, optic_comp_id c, int32_t layers) {
  int64_t d[] = {32, 32}, dv[] = {32}, keep[] = {1}, perm[] = {1, 0};
  optic_node_id x = param(m, c, 0, 2, d);
  for (int32_t l = 0; l < layers; l++) {
    optic_node_id bias = param(m, c, 1 + l, 1, dv), t, bb, y, z, s, res;
    OT_EXPECT_OK(optic_graph_transpose(m, c, x, perm, NULL, &t));
    OT_EXPECT_OK(optic_graph_broadcast(m, c, bias, &(optic_shape){.rank = 2, .dims = {32, 32}}, keep, 1, NULL, &bb));
    OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, t, bb, NULL, &y));
    z = unary(m, c, OPTIC_OP_TANH, y);
    OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, z, bb, NULL, &s));
    OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, s, x, NULL, &res));
    x = res;
  }
  OT_EXPECT_OK(optic_computation_set_root(m, c, x));
  int32_t n;
  optic_computation_instructions(m, c, &n);
  return n;
}

/* This thread's CPU time: other processes on a shared machine do not count. */
static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Best of three runs of schedule + assign + verify, in CPU ms. */
static double time_pipeline(optic_module_t *m, optic_comp_id c, size_t *arena) {
  double best = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    uint64_t t0 = cpu_ns();
    optic_schedule_t *s = NULL;
    optic_buffer_plan_t *p = NULL;
    OT_EXPECT_OK(optic_schedule_create(m, c, &s));
    OT_EXPECT_OK(optic_buffer_plan_create(m, s, &p));
    OT_EXPECT_OK(optic_buffer_plan_verify(m, p));
    double ms = (double)(cpu_ns() - t0) / 1e6;
    if (ms < best) best = ms;
    *arena = optic_buffer_plan_arena_bytes(p);
    optic_buffer_plan_destroy(p);
    optic_schedule_destroy(s);
  }
  return best;
}

static void scaling(void) {
  static const int32_t layers[] = {143, 1429, 14286}; /* 1k, 10k, 100k instructions */
  double ms[3];
  int32_t n[3];
  for (int i = 0; i < 3; i++) {
    optic_module_t *m;
    optic_comp_id c;
    OT_EXPECT_OK(optic_module_create("chain", &m));
    OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
    n[i] = build_chain(m, c, layers[i]);
    size_t arena = 0;
    ms[i] = time_pipeline(m, c, &arena);
    printf("scaling: %6d instructions: schedule + assign + verify %.2f ms CPU, arena %zu bytes\n", (int)n[i], ms[i],
           arena);
    /* Each layer's temporaries die within it: the arena does not grow with depth. */
    OT_CHECK(arena <= 3 * 4096, "arena %zu for %d layers", arena, (int)layers[i]);
    optic_module_destroy(m);
  }
  OT_CHECK(ms[1] < 200, "10k instructions took %.1f ms", ms[1]);
  /* Near-linear: 10x the instructions may cost up to ~30x (n log n, and the
   * 100k module's ~40 MB of instructions no longer fit in cache), never the
   * 100x of a quadratic step. */
  OT_CHECK(ms[2] < 30 * ms[1] + 5, "100k took %.1f ms vs %.1f ms for 10k", ms[2], ms[1]);
}

static const ot_case cases[] = {
    {"operand_order", operand_order},
    {"fan_of_reductions", fan_of_reductions},
    {"dead_code_first", dead_code_first},
    {"order_errors", order_errors},
    {"random_deterministic", random_deterministic},
    {"user_older_than_operand", user_older_than_operand},
    {"fused_module_without_renumbering", fused_module_without_renumbering},
    {"scaling", scaling},
};
OT_MAIN(cases)
