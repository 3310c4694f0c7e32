/* optic_compile and the program object: hand-checked costs and estimates
 * (matmul f32[10,5]x[5,30] = 3000 flops / 2000 bytes; the loop fusion of
 * add/clamp/exp/mul/sub on three f32[2,2] = 16 flops, 4 transcendentals,
 * 64 bytes), every level, option validation, the caller's module untouched,
 * the annotated dump (and that it parses back), sequences for control flow,
 * concurrent compiles, and the randomized property: random graphs
 * (tests/graph/random_graph.h) compile at every level, every buffer plan
 * verifies, and the program's entry evaluates (optic_evaluate) to the
 * unoptimized module's value bit for bit, except that any NaN matches any
 * NaN (the simplifier may pass a signaling NaN through where x*1 would have
 * quieted it: docs/graph-passes.md).
 *
 * OPTIC_TEST_SEED sets the seed, OPTIC_TEST_GRAPHS the number of random
 * graphs (default 1000, under AddressSanitizer too). */
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/graph_mlp.h"
#include "tests/graph/pass_fixture.h"
#include "tests/graph/random_graph.h"

/* 1,000 graphs x 3 levels take about 0.3 s in release and 1.6 s under
 * AddressSanitizer on the 2-core development VM: no need to scale down. */
#define DEFAULT_GRAPHS 1000

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* 1 flop/ns, 10 ns per transcendental, 1 byte/ns from DRAM, 4 bytes/ns in a
 * 4 KiB cache, 5 ns per op: estimates are easy to check by hand. */
static optic_machine toy_machine(void) {
  optic_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "toy");
  m.peak_flops = 1e9;
  m.peak_transcendentals = 1e8;
  m.dram_bandwidth = 1e9;
  m.cache_bandwidth = 4e9;
  m.cache_bytes = 4096;
  m.op_overhead_ns = 5;
  m.cores = 1;
  snprintf(m.source, sizeof m.source, "test machine");
  return m;
}

static optic_compile_options options(optic_opt_level level, const optic_machine *mc) {
  optic_compile_options o = optic_compile_options_default();
  o.level = level;
  o.machine = mc;
  o.verify_buffers = true;
  return o;
}

static bool estimate_is(const optic_program_t *p, optic_node_id id, double flops, double trans, double bytes,
                        double est) {
  optic_node_estimate e;
  if (optic_program_node_estimate(p, id, &e) != OPTIC_OK) {
    fprintf(stderr, "  estimate failed: %s\n", optic_last_error());
    return false;
  }
  if (e.cost.flops == flops && e.cost.transcendentals == trans && e.cost.bytes_accessed == bytes && e.est_ns == est)
    return true;
  fprintf(stderr, "  %d: %g %g %g %g ns, want %g %g %g %g\n", (int)id, e.cost.flops, e.cost.transcendentals,
          e.cost.bytes_accessed, e.est_ns, flops, trans, bytes, est);
  return false;
}

static optic_node_id matmul(fixture *f) {
  int64_t a[] = {10, 5}, b[] = {5, 30};
  optic_node_id x = fx_param(f, f->main, 0, OPTIC_F32, 2, a), y = fx_param(f, f->main, 1, OPTIC_F32, 2, b), d;
  optic_dot_dims dims = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  BUILD(optic_graph_dot(f->m, f->main, x, y, &dims, NULL, &d));
  BUILD(optic_computation_set_root(f->m, f->main, d));
  return d;
}

static void matmul_costs(void) {
  fixture f = fx_setup();
  optic_node_id d = matmul(&f);
  optic_machine mc = toy_machine();
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
    optic_compile_options o = options((optic_opt_level)level, &mc);
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_compile(f.m, &o, &p));
    if (!p) continue;
    /* 3000 flops = 3000 ns; 2000 bytes in cache = 500 ns; + 5 ns overhead */
    OT_CHECK(estimate_is(p, d, 3000, 0, 2000, 3005), "level %d", level);
    OT_CHECK(estimate_is(p, optic_computation_parameter(f.m, f.main, 0), 0, 0, 0, 0));
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(s.cost.flops == 3000 && s.cost.transcendentals == 0 && s.cost.bytes_accessed == 2000);
    OT_CHECK(s.est_ns == 3005 && s.instructions == 3 && s.fusions == 0, "%g %lld", s.est_ns, (long long)s.instructions);
    OT_CHECK(s.memory.parameter_bytes == 800 && s.memory.output_bytes == 1200 && s.memory.arena_bytes == 0);
    OT_CHECK(s.peak_bytes == 2000, "peak %zu", s.peak_bytes);
    OT_CHECK(s.passes.size == sizeof s.passes && s.compile_seconds > 0 && s.compile_seconds < 10);
    optic_buffer_slot slot;
    OT_EXPECT_OK(optic_buffer_plan_slot(optic_program_buffers(p, optic_program_entry(p)), d, 0, &slot));
    OT_CHECK(slot.kind == OPTIC_BUFFER_OUTPUT && slot.size == 1200);
    OT_CHECK(strcmp(optic_program_machine(p)->name, "toy") == 0);
    optic_program_destroy(p);
  }
  optic_module_destroy(f.m);
}

/* XLA's FusionCostAnalysis.LoopFusion case, built unfused: fusion must make
 * one loop fusion whose cost is XLA's 16 flops, 4 transcendentals, 64 bytes. */
static void loop_fusion_costs(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 2};
  optic_node_id p0 = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), p1 = fx_param(&f, f.main, 1, OPTIC_F32, 2, d),
                p2 = fx_param(&f, f.main, 2, OPTIC_F32, 2, d);
  optic_node_id add = fx_bin(&f, f.main, OPTIC_OP_ADD, p0, p1), clamp, sub;
  BUILD(optic_graph_clamp(f.m, f.main, p1, add, add, NULL, &clamp));
  optic_node_id ex = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, add);
  optic_node_id mul = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, ex, p2);
  sub = fx_bin(&f, f.main, OPTIC_OP_SUBTRACT, mul, clamp);
  BUILD(optic_computation_set_root(f.m, f.main, sub));
  optic_machine mc = toy_machine();
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) {
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(s.fusions == 1 && s.instructions == 4, "fusions %lld instructions %lld", (long long)s.fusions,
             (long long)s.instructions);
    OT_CHECK(s.cost.flops == 16 && s.cost.transcendentals == 4 && s.cost.bytes_accessed == 64, "%g %g %g", s.cost.flops,
             s.cost.transcendentals, s.cost.bytes_accessed);
    /* the fusion: max(16 ns, 40 ns, 16 ns) + 5 */
    const optic_module_t *pm = optic_program_module(p);
    optic_node_id root = optic_computation_root(pm, optic_program_entry(p));
    OT_CHECK(optic_node_opcode(pm, root) == OPTIC_OP_FUSION);
    OT_CHECK(estimate_is(p, root, 16, 4, 64, 45));
    OT_CHECK(s.est_ns == 45, "%g", s.est_ns);
    OT_CHECK(s.passes.pass[OPTIC_PASS_FUSION].runs > 0);
    /* instructions inside the fused computation are not scheduled on their own */
    optic_comp_id fused = optic_node_called(pm, root, 0);
    OT_CHECK(optic_program_schedule(p, fused) == NULL && optic_program_buffers(p, fused) == NULL);
    optic_node_estimate e;
    OT_EXPECT_STATUS(optic_program_node_estimate(p, optic_computation_root(pm, fused), &e), OPTIC_ERR_INVALID_ARGUMENT);
    optic_program_destroy(p);
  }
  /* Without fusion every intermediate is read and written: 16 bytes x 15. */
  o.fusion = 0;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) {
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(s.fusions == 0 && s.cost.flops == 16 && s.cost.transcendentals == 4 && s.cost.bytes_accessed == 240,
             "%lld %g", (long long)s.fusions, s.cost.bytes_accessed);
    /* add 8 flops? no: 4 each for add, clamp (4), multiply, subtract; exp 4
     * transcendentals. Times: add 4 vs 48 bytes/4 = 12 -> 17; clamp 64/4 = 16
     * -> 21; exp 40 -> 45; mul 12 -> 17; sub 12 -> 17. */
    OT_CHECK(s.est_ns == 17 + 21 + 45 + 17 + 17, "%g", s.est_ns);
    optic_program_destroy(p);
  }
  /* fusion forced on at level basic */
  o.level = OPTIC_OPT_BASIC, o.fusion = 1;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) {
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(s.fusions == 1 && s.cost.bytes_accessed == 64, "%lld", (long long)s.fusions);
    optic_program_destroy(p);
  }
  optic_module_destroy(f.m);
}

/* options.threads: the estimates use the model of that many of the
 * machine's cores (optic_machine_for_threads). A 2-core toy: 1 flop/ns and
 * 2 bytes/ns of cache per core, 2 KiB of cache per core, DRAM 1 byte/ns in
 * all but 0.75 on one core, 5 ns per op. */
static void threads_scale_estimates(void) {
  optic_machine mc = toy_machine();
  mc.cores = 2;
  mc.peak_flops = 2e9;
  mc.peak_transcendentals = 2e8;
  mc.cache_bandwidth = 4e9;
  mc.cache_bytes = 4096;
  mc.dram_bandwidth = 1e9;
  mc.core_dram_bandwidth = 0.75e9;
  /* a dot: 3000 flops, 2000 bytes (in cache for 1 and 2 cores) */
  fixture f = fx_setup();
  optic_node_id d = matmul(&f);
  /* an add of [1000] f32: 1000 flops, 12000 bytes (beyond any cache: DRAM) */
  fixture g = fx_setup();
  int64_t n[] = {1000};
  optic_node_id add = fx_bin(&g, g.main, OPTIC_OP_ADD, fx_param(&g, g.main, 0, OPTIC_F32, 1, n),
                             fx_param(&g, g.main, 1, OPTIC_F32, 1, n));
  BUILD(optic_computation_set_root(g.m, g.main, add));
  static const struct {
    int32_t threads, cores;
    double dot_ns, add_ns;
  } want[] = {
      /* 2 cores: dot max(1500 flops, 500 cache) + 5; add max(500, 12000 DRAM)
       * + 5, + one barrier (sync_ns, 100 ns by default): the runtime splits it
       * (16000 ns on one thread, half of it saved > 100; optic_split_op) */
      {0, 2, 1505, 12105},
      {2, 2, 1505, 12105},
      {64, 2, 1505, 12105}, /* more threads than cores: all of them */
      /* 1 core: dot max(3000, 2000 B in 2 KiB at 2 B/ns = 1000) + 5; add: DRAM
       * min(1, 0.75) B/ns -> 16000 + 5 (not 24000: DRAM is not per core) */
      {1, 1, 3005, 16005},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    optic_compile_options o = options(OPTIC_OPT_NONE, &mc);
    o.threads = want[i].threads;
    optic_program_t *p = NULL, *q = NULL;
    OT_EXPECT_OK(optic_compile(f.m, &o, &p));
    OT_EXPECT_OK(optic_compile(g.m, &o, &q));
    if (p && q) {
      OT_CHECK(estimate_is(p, d, 3000, 0, 2000, want[i].dot_ns), "threads %d", (int)want[i].threads);
      OT_CHECK(estimate_is(q, add, 1000, 0, 12000, want[i].add_ns), "threads %d", (int)want[i].threads);
      optic_program_summary s;
      OT_EXPECT_OK(optic_program_summary_get(q, &s));
      OT_CHECK(s.est_ns == want[i].add_ns, "threads %d: summary %g", (int)want[i].threads, s.est_ns);
      const optic_machine *pm = optic_program_machine(p);
      OT_CHECK(pm->cores == want[i].cores && strcmp(pm->name, "toy") == 0, "threads %d: cores %d", (int)want[i].threads,
               (int)pm->cores);
      char *text = NULL;
      OT_EXPECT_OK(optic_program_to_text(p, &text));
      char hdr[64];
      snprintf(hdr, sizeof hdr, "machine=toy threads=%d\n", want[i].cores);
      OT_CHECK(text && strstr(text, hdr) != NULL, "missing '%s'", hdr);
      optic_string_free(text);
    }
    optic_program_destroy(p);
    optic_program_destroy(q);
  }
  /* an older options struct without the field: all cores */
  optic_compile_options o = options(OPTIC_OPT_NONE, &mc);
  o.threads = 1;
  o.size = offsetof(optic_compile_options, threads);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) OT_CHECK(estimate_is(p, d, 3000, 0, 2000, 1505), "short options");
  optic_program_destroy(p);
  o = options(OPTIC_OPT_NONE, &mc);
  o.threads = -1;
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(p == NULL && strstr(optic_last_error(), "threads is -1") != NULL, "%s", optic_last_error());
  optic_module_destroy(f.m);
  optic_module_destroy(g.m);
}

static void options_validated(void) {
  fixture f = fx_setup();
  matmul(&f);
  optic_machine mc = toy_machine();
  optic_program_t *p = (optic_program_t *)&f; /* must be reset to NULL on error */
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  o.size = 3;
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(p == NULL);
  o = options((optic_opt_level)3, &mc);
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "level 3") != NULL, "%s", optic_last_error());
  o = options(OPTIC_OPT_FULL, &mc), o.fusion = 2;
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  o = options(OPTIC_OPT_FULL, &mc), o.fold_max_bytes = -1;
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  o = options(OPTIC_OPT_FULL, &mc), o.max_fusion_size = -1;
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  optic_machine bad = mc;
  bad.dram_bandwidth = NAN;
  o = options(OPTIC_OPT_FULL, &bad);
  OT_EXPECT_STATUS(optic_compile(f.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "dram_bandwidth") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_compile(NULL, NULL, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_compile(f.m, NULL, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  /* An older, shorter options struct: later fields take their defaults. */
  o = options(OPTIC_OPT_BASIC, &mc);
  o.size = offsetof(optic_compile_options, fusion);
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  optic_program_destroy(p);
  /* machine NULL: the host model, from $OPTIC_MACHINE here */
  char path[] = "/tmp/optic_test_compile_machine.XXXXXX";
  int fd = mkstemp(path);
  OT_CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  mc.cores = 7;
  OT_EXPECT_OK(optic_machine_save(&mc, path));
  char *old = getenv("OPTIC_MACHINE") ? strdup(getenv("OPTIC_MACHINE")) : NULL;
  setenv("OPTIC_MACHINE", path, 1);
  OT_EXPECT_OK(optic_compile(f.m, NULL, &p));
  OT_CHECK(p && optic_program_machine(p)->cores == 7);
  optic_program_destroy(p);
  /* a corrupt host file is an error, not silently the defaults */
  FILE *fp = fopen(path, "w");
  if (fp) fputs("{", fp), fclose(fp);
  OT_EXPECT_STATUS(optic_compile(f.m, NULL, &p), OPTIC_ERR_CORRUPT);
  OT_CHECK(p == NULL);
  if (old) setenv("OPTIC_MACHINE", old, 1);
  else unsetenv("OPTIC_MACHINE");
  free(old);
  remove(path);
  /* a module the optimizer rejects: no root */
  fixture g = fx_setup();
  int64_t d4[] = {4};
  fx_param(&g, g.main, 0, OPTIC_F32, 1, d4);
  o = options(OPTIC_OPT_FULL, &mc);
  OT_EXPECT_STATUS(optic_compile(g.m, &o, &p), OPTIC_ERR_INVALID_ARGUMENT);
  optic_module_destroy(g.m);
  /* accessors are NULL-safe */
  OT_CHECK(optic_program_module(NULL) == NULL && optic_program_schedule(NULL, 0) == NULL);
  optic_program_destroy(NULL);
  optic_module_destroy(f.m);
}

/* Folding, CSE, DCE and fusion all fire on this module; the caller's copy
 * must print the same before and after every level. */
static void module_untouched(void) {
  fixture f = fx_setup();
  int64_t d[] = {8};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id c1 = fx_scalar(&f, f.main, OPTIC_F32, 1.0), c2 = fx_scalar(&f, f.main, OPTIC_F32, 2.0);
  optic_node_id c3 = fx_bin(&f, f.main, OPTIC_OP_ADD, c1, c2); /* folds */
  optic_node_id b = fx_splat(&f, f.main, c3, 1, d);
  optic_node_id a1 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, x, b), a2 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, x, b);
  fx_un(&f, f.main, OPTIC_OP_TANH, x); /* dead */
  optic_node_id r = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, fx_bin(&f, f.main, OPTIC_OP_ADD, a1, a2));
  BUILD(optic_computation_set_root(f.m, f.main, r));
  char *before = fx_hlo(f.m);
  optic_machine mc = toy_machine();
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
    optic_compile_options o = options((optic_opt_level)level, &mc);
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_compile(f.m, &o, &p));
    char *after = fx_hlo(f.m);
    OT_CHECK(strcmp(before, after) == 0, "level %d changed the caller's module:\n%s", level, after);
    optic_string_free(after);
    if (p && level == OPTIC_OPT_FULL) {
      char *opt = fx_hlo(optic_program_module(p));
      OT_CHECK(strcmp(before, opt) != 0, "full optimization changed nothing");
      optic_string_free(opt);
      optic_program_summary s;
      OT_EXPECT_OK(optic_program_summary_get(p, &s));
      OT_CHECK(s.passes.pass[OPTIC_PASS_FOLD].replaced > 0 && s.passes.pass[OPTIC_PASS_CSE].replaced > 0 &&
               s.passes.pass[OPTIC_PASS_DCE].removed > 0);
    }
    optic_program_destroy(p);
  }
  optic_string_free(before);
  optic_module_destroy(f.m);
}

/* Enumerates every computation of a const module: each listed id is a live
 * instruction of that computation, listed once, after all its operands;
 * the root is listed. Returns the number of instructions of comp `count_of`. */
static int32_t check_enumeration(const optic_module_t *m, optic_comp_id count_of, int64_t *fusions) {
  int32_t counted = -1;
  *fusions = 0;
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n = -1;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    OT_CHECK(n >= 0 && (n == 0 || ids != NULL), "computation %d: n %d", (int)c, (int)n);
    if (c == count_of) counted = n;
    bool root_seen = false;
    for (int32_t i = 0; i < n; i++) {
      OT_CHECK(optic_node_type(m, ids[i]) != NULL && optic_node_computation(m, ids[i]) == c,
               "computation %d: entry %d (id %d) is not a live instruction of it", (int)c, (int)i, (int)ids[i]);
      if (ids[i] == optic_computation_root(m, c)) root_seen = true;
      if (c == count_of && optic_node_opcode(m, ids[i]) == OPTIC_OP_FUSION) (*fusions)++;
      for (int32_t k = 0; k < optic_node_operand_count(m, ids[i]); k++) {
        optic_node_id op = optic_node_operand(m, ids[i], k);
        bool before = false;
        for (int32_t j = 0; j < i; j++) before |= ids[j] == op;
        OT_CHECK(before, "computation %d: operand %d of %s is not listed before it", (int)c, (int)k,
                 optic_node_name(m, ids[i]));
      }
      for (int32_t j = 0; j < i; j++) OT_CHECK(ids[j] != ids[i], "id %d listed twice", (int)ids[i]);
    }
    OT_CHECK(n == 0 || root_seen, "computation %d: root not listed", (int)c);
  }
  return counted;
}

/* optic_computation_instructions reads a const module: the optimized module
 * of a compiled program (passes removed instructions from it) enumerates
 * fully, agreeing with the program's summary; and after optic_node_remove a
 * const view of the caller's module no longer lists the removed id. */
static void program_module_enumerates(void) {
  fixture f = fx_setup();
  int64_t d[] = {8};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id c1 = fx_scalar(&f, f.main, OPTIC_F32, 1.0), c2 = fx_scalar(&f, f.main, OPTIC_F32, 2.0);
  optic_node_id b = fx_splat(&f, f.main, fx_bin(&f, f.main, OPTIC_OP_ADD, c1, c2), 1, d);
  optic_node_id a1 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, x, b), a2 = fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, x, b);
  optic_node_id dead = fx_un(&f, f.main, OPTIC_OP_TANH, x);
  optic_node_id r = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, fx_bin(&f, f.main, OPTIC_OP_ADD, a1, a2));
  BUILD(optic_computation_set_root(f.m, f.main, r));
  optic_machine mc = toy_machine();
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
    optic_compile_options o = options((optic_opt_level)level, &mc);
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_compile(f.m, &o, &p));
    if (!p) continue;
    const optic_module_t *pm = optic_program_module(p);
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    int64_t fusions = 0;
    int32_t n = check_enumeration(pm, optic_program_entry(p), &fusions);
    OT_CHECK(n == s.instructions && fusions == s.fusions, "level %d: %d listed, summary %lld (fusions %lld vs %lld)",
             level, (int)n, (long long)s.instructions, (long long)fusions, (long long)s.fusions);
    if (level == OPTIC_OPT_FULL) OT_CHECK(s.passes.pass[OPTIC_PASS_DCE].removed > 0, "nothing was removed");
    optic_program_destroy(p);
  }
  const optic_module_t *view = f.m;
  int32_t before = 0, after = 0;
  optic_computation_instructions(view, f.main, &before);
  OT_EXPECT_OK(optic_node_remove(f.m, dead));
  const optic_node_id *ids = optic_computation_instructions(view, f.main, &after);
  OT_CHECK(after == before - 1, "%d instructions before the removal, %d after", (int)before, (int)after);
  for (int32_t i = 0; i < after; i++) OT_CHECK(ids[i] != dead, "removed id %d still listed", (int)dead);
  int64_t fusions = 0;
  OT_CHECK(check_enumeration(view, f.main, &fusions) == after);
  optic_module_destroy(f.m);
}

/* optic_module_clone: same text and ids, removed instructions stay removed,
 * and the copy shares nothing (changing it leaves the original as it was). */
static void module_clone_independent(void) {
  fixture f = fx_setup();
  int64_t d[] = {3};
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d);
  optic_node_id dead = fx_un(&f, f.main, OPTIC_OP_NEGATE, x);
  optic_node_id r = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, x);
  BUILD(optic_computation_set_root(f.m, f.main, r));
  BUILD(optic_node_remove(f.m, dead));
  optic_module_t *c = NULL;
  OT_EXPECT_OK(optic_module_clone(f.m, &c));
  if (c) {
    char *a = fx_hlo(f.m), *b = fx_hlo(c);
    OT_CHECK(strcmp(a, b) == 0, "clone prints\n%s\nnot\n%s", b, a);
    OT_CHECK(optic_node_name(c, dead) == NULL && strcmp(optic_node_name(c, r), optic_node_name(f.m, r)) == 0);
    OT_CHECK(optic_node_user_count(c, x) == 1 && optic_node_user(c, x, 0) == r);
    optic_node_id t;
    BUILD(optic_graph_unary(c, f.main, OPTIC_OP_TANH, r, "only_in_clone", &t));
    BUILD(optic_computation_set_root(c, f.main, t));
    char *a2 = fx_hlo(f.m);
    OT_CHECK(strcmp(a, a2) == 0 && optic_node_user_count(f.m, r) == 0);
    /* the clone's name set knows the name: a second use is made unique */
    OT_EXPECT_OK(optic_graph_unary(c, f.main, OPTIC_OP_TANH, r, "only_in_clone", &t));
    OT_CHECK(strcmp(optic_node_name(c, t), "only_in_clone.1") == 0, "%s", optic_node_name(c, t));
    optic_string_free(a), optic_string_free(b), optic_string_free(a2);
  }
  optic_module_destroy(c);
  OT_EXPECT_STATUS(optic_module_clone(NULL, &c), OPTIC_ERR_INVALID_ARGUMENT);
  optic_module_destroy(f.m);
}

static void dump_annotated(void) {
  fixture f = fx_setup();
  matmul(&f);
  optic_machine mc = toy_machine();
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (!p) return;
  char *text = NULL, *again = NULL;
  OT_EXPECT_OK(optic_program_to_text(p, &text));
  OT_EXPECT_OK(optic_program_to_text(p, &again));
  if (text && again) {
    OT_CHECK(strcmp(text, again) == 0, "the dump is not deterministic");
    static const char *const want[] = {
        "HloModule test\n// optic compile: level=full fusion=by-level fold_max_bytes=1048576 max_fusion_size=64 "
        "machine=toy threads=1\n",
        "dot(parameter.0, parameter.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}  // flops=3000 "
        "transcendentals=0 bytes=2000 est_ns=3005 buffer=output:0+1200\n",
        "parameter(0)  // flops=0 transcendentals=0 bytes=0 est_ns=0 buffer=param:parameter.0\n",
        "// totals main: flops=3000 transcendentals=0 bytes=2000 est_ns=3005 arena_bytes=0 parameter_bytes=800 "
        "output_bytes=1200 constant_bytes=0 schedule_peak_bytes=0\n",
        "// program: entry=main instructions=3 fusions=0 flops=3000 transcendentals=0 bytes=2000 est_ns=3005 "
        "arena_bytes=0 peak_bytes=2000\n",
        "// machine: toy peak_flops=1e+09 ",
        "// source: test machine\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
      OT_CHECK(strstr(text, want[i]) != NULL, "missing '%s' in:\n%s", want[i], text);
    /* the comments keep it HLO text: it parses back to the same costs */
    optic_module_t *back = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &back));
    optic_cost c = {0};
    if (back) OT_EXPECT_OK(optic_computation_cost(back, optic_module_entry(back), &c));
    OT_CHECK(c.flops == 3000 && c.bytes_accessed == 2000);
    optic_module_destroy(back);
  }
  optic_string_free(text), optic_string_free(again);
  OT_EXPECT_STATUS(optic_program_to_text(NULL, &text), OPTIC_ERR_INVALID_ARGUMENT);
  optic_program_destroy(p);
  optic_module_destroy(f.m);
}

/* while (condition, body), call, conditional branches: each is a sequence
 * with its own schedule and plan; a reduce's to_apply is not. */
static void control_flow_sequences(void) {
  fixture f = fx_setup();
  int64_t d4[] = {4};
  optic_comp_id add, body, cond, neg, call_target;
  BUILD(optic_module_add_computation(f.m, "add", &add));
  optic_node_id ax = fx_param(&f, add, 0, OPTIC_F32, 0, NULL), ay = fx_param(&f, add, 1, OPTIC_F32, 0, NULL);
  BUILD(optic_computation_set_root(f.m, add, fx_bin(&f, add, OPTIC_OP_ADD, ax, ay)));
  BUILD(optic_module_add_computation(f.m, "body", &body));
  optic_node_id bx = fx_param(&f, body, 0, OPTIC_F32, 1, d4);
  BUILD(optic_computation_set_root(f.m, body, fx_bin(&f, body, OPTIC_OP_ADD, bx, bx)));
  BUILD(optic_module_add_computation(f.m, "cond", &cond));
  optic_node_id cx = fx_param(&f, cond, 0, OPTIC_F32, 1, d4), zero = fx_scalar(&f, cond, OPTIC_F32, 0), sum, lt;
  BUILD(optic_graph_reduce(f.m, cond, &cx, &zero, 1, (int64_t[]){0}, 1, add, NULL, &sum));
  BUILD(optic_graph_compare(f.m, cond, OPTIC_CMP_LT, sum, fx_scalar(&f, cond, OPTIC_F32, 100), NULL, &lt));
  BUILD(optic_computation_set_root(f.m, cond, lt));
  BUILD(optic_module_add_computation(f.m, "neg", &neg));
  optic_node_id nx = fx_param(&f, neg, 0, OPTIC_F32, 1, d4);
  BUILD(optic_computation_set_root(f.m, neg, fx_un(&f, neg, OPTIC_OP_NEGATE, nx)));
  BUILD(optic_module_add_computation(f.m, "ident", &call_target));
  optic_node_id ix = fx_param(&f, call_target, 0, OPTIC_F32, 1, d4);
  BUILD(optic_computation_set_root(f.m, call_target, fx_un(&f, call_target, OPTIC_OP_ABS, ix)));
  BUILD(optic_module_set_entry(f.m, f.main));
  optic_node_id x = fx_param(&f, f.main, 0, OPTIC_F32, 1, d4), w, pr, c, k;
  optic_type tp = optic_type_array(OPTIC_PRED, &(optic_shape){.rank = 0});
  BUILD(optic_graph_parameter(f.m, f.main, 1, &tp, NULL, &pr));
  BUILD(optic_graph_while(f.m, f.main, x, cond, body, NULL, &w));
  BUILD(optic_graph_conditional(f.m, f.main, pr, (optic_node_id[]){w, w}, (optic_comp_id[]){neg, call_target}, 2, NULL,
                                &c));
  BUILD(optic_graph_call(f.m, f.main, call_target, &c, 1, NULL, &k));
  BUILD(optic_computation_set_root(f.m, f.main, k));
  optic_machine mc = toy_machine();
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
    optic_compile_options o = options((optic_opt_level)level, &mc);
    optic_program_t *p = NULL;
    OT_EXPECT_OK(optic_compile(f.m, &o, &p));
    if (!p) continue;
    const optic_module_t *pm = optic_program_module(p);
    for (optic_comp_id cc = 0; cc < optic_module_computation_count(pm); cc++) {
      const char *name = optic_computation_name(pm, cc);
      bool sequence = strcmp(name, "main") == 0 || strcmp(name, "body") == 0 || strcmp(name, "cond") == 0 ||
                      strcmp(name, "neg") == 0 || strcmp(name, "ident") == 0;
      OT_CHECK((optic_program_buffers(p, cc) != NULL) == sequence, "level %d: %s", level, name);
      if (optic_program_buffers(p, cc)) OT_EXPECT_OK(optic_buffer_plan_verify(pm, optic_program_buffers(p, cc)));
      OT_CHECK((optic_program_schedule(p, cc) != NULL) == sequence);
    }
    /* body's root is scheduled and costed; the while costs body + condition once */
    optic_comp_id pbody = -1;
    for (optic_comp_id cc = 0; cc < optic_module_computation_count(pm); cc++)
      if (strcmp(optic_computation_name(pm, cc), "body") == 0) pbody = cc;
    optic_node_estimate e;
    OT_EXPECT_OK(optic_program_node_estimate(p, optic_computation_root(pm, pbody), &e));
    OT_CHECK(e.cost.flops == 4 && e.cost.bytes_accessed == 48);
    /* the program computes what the module computes */
    float xs[4] = {1, 2, 3, 4};
    unsigned char t = 1;
    optic_literal_t *args[2] = {NULL, NULL}, *want = NULL, *got = NULL;
    BUILD(optic_literal_create_array(OPTIC_F32, &(optic_shape){.rank = 1, .dims = {4}}, xs, sizeof xs, &args[0]));
    BUILD(optic_literal_create_array(OPTIC_PRED, &(optic_shape){.rank = 0}, &t, 1, &args[1]));
    OT_EXPECT_OK(optic_evaluate(f.m, f.main, (const optic_literal_t *const *)args, 2, NULL, &want));
    OT_EXPECT_OK(optic_evaluate(pm, optic_program_entry(p), (const optic_literal_t *const *)args, 2, NULL, &got));
    char why[256] = "";
    OT_CHECK(want && got && optic_literal_match(want, got, OPTIC_MATCH_BITWISE, 0, 0, why, sizeof why), "%s", why);
    const float *v = got ? optic_literal_data(got, NULL) : NULL;
    OT_CHECK(v && v[0] == 16 && v[3] == 64, "x doubled until its sum reached 100, then |-x|");
    optic_literal_destroy(want), optic_literal_destroy(got);
    optic_literal_destroy(args[0]), optic_literal_destroy(args[1]);
    char *text = NULL;
    OT_EXPECT_OK(optic_program_to_text(p, &text));
    OT_CHECK(text && strstr(text, "// totals body:") && strstr(text, "// totals cond:") &&
             !strstr(text, "// totals add:"));
    optic_string_free(text);
    optic_program_destroy(p);
  }
  optic_module_destroy(f.m);
}

/* Several threads compile one module and read one program at once. */
typedef struct thread_job {
  const optic_module_t *m;
  const optic_program_t *shared;
  char *own_text, *shared_text;
  optic_status st;
} thread_job;

static void *compile_thread(void *arg) {
  thread_job *j = arg;
  optic_machine mc = toy_machine();
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  optic_program_t *p = NULL;
  j->st = optic_compile(j->m, &o, &p);
  if (j->st == OPTIC_OK) j->st = optic_program_to_text(p, &j->own_text);
  if (j->st == OPTIC_OK) j->st = optic_program_to_text(j->shared, &j->shared_text);
  optic_program_destroy(p);
  return NULL;
}

static void concurrent_compiles(void) {
  rg_graph g;
  OT_CHECK(rg_build_with(0xc0ffee, 60, 4, &g));
  optic_machine mc = toy_machine();
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  optic_program_t *shared = NULL;
  OT_EXPECT_OK(optic_compile(g.m, &o, &shared));
  char *want = NULL;
  if (shared) OT_EXPECT_OK(optic_program_to_text(shared, &want));
  thread_job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){.m = g.m, .shared = shared};
    OT_CHECK(pthread_create(&th[i], NULL, compile_thread, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    OT_CHECK(
        jobs[i].st == OPTIC_OK && want && strcmp(jobs[i].own_text, want) == 0 && strcmp(jobs[i].shared_text, want) == 0,
        "thread %d", i);
    optic_string_free(jobs[i].own_text), optic_string_free(jobs[i].shared_text);
  }
  optic_string_free(want);
  optic_program_destroy(shared);
  optic_module_destroy(g.m);
}

static int32_t random_args(rg_rng *r, const optic_module_t *m, optic_comp_id comp, optic_literal_t **args) {
  int32_t n = optic_computation_parameter_count(m, comp);
  for (int32_t i = 0; i < n; i++) {
    BUILD(optic_literal_create(optic_node_type(m, optic_computation_parameter(m, comp, i)), &args[i]));
    size_t bytes;
    float *v = optic_literal_mutable_data(args[i], &bytes);
    for (size_t k = 0; k < bytes / sizeof *v; k++) v[k] = rg_float(r);
  }
  return n;
}

static void random_graphs_compile(void) {
  uint64_t seed = rg_seed(0xc0391e5ull);
  const char *e = getenv("OPTIC_TEST_GRAPHS");
  long n = (e && *e) ? strtol(e, NULL, 10) : DEFAULT_GRAPHS;
  printf(
      "random_graphs_compile: seed %#llx, %ld graphs (repeat with OPTIC_TEST_SEED=%#llx OPTIC_TEST_GRAPHS=%ld "
      "%s random_graphs_compile)\n",
      (unsigned long long)seed, n, (unsigned long long)seed, n, ot_prog_);
  rg_rng r = {seed};
  optic_machine mc = toy_machine();
  long compiled = 0, compared = 0, plans = 0, fusions = 0;
  for (long it = 0; it < n; it++) {
    uint64_t gseed = rg_next(&r);
    int32_t n_ops = (int32_t)rg_int(&r, 1, 60), n_consts = (int32_t)rg_int(&r, 0, 6);
    rg_graph g;
    if (!rg_build_with(gseed, n_ops, n_consts, &g)) {
      ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
      optic_module_destroy(g.m);
      continue;
    }
    rg_rng ar = {gseed ^ 0x5eed0fa65ull};
    optic_literal_t *args[4] = {NULL};
    int32_t nargs = random_args(&ar, g.m, g.main, args);
    optic_literal_t *want = NULL;
    optic_status est = optic_evaluate(g.m, g.main, (const optic_literal_t *const *)args, nargs, NULL, &want);
    OT_CHECK(est == OPTIC_OK, "graph seed %#llx: does not evaluate: %s", (unsigned long long)gseed, optic_last_error());
    for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
      optic_compile_options o = options((optic_opt_level)level, &mc);
      o.verify_buffers = false; /* verified below, one by one */
      optic_program_t *p = NULL;
      optic_status st = optic_compile(g.m, &o, &p);
      OT_CHECK(st == OPTIC_OK, "graph seed %#llx level %d: %s", (unsigned long long)gseed, level, optic_last_error());
      if (st != OPTIC_OK) continue;
      compiled++;
      const optic_module_t *pm = optic_program_module(p);
      for (optic_comp_id c = 0; c < optic_module_computation_count(pm); c++) {
        const optic_buffer_plan_t *plan = optic_program_buffers(p, c);
        if (!plan) continue;
        plans++;
        optic_status vst = optic_buffer_plan_verify(pm, plan);
        OT_CHECK(vst == OPTIC_OK, "graph seed %#llx level %d: plan of %s: %s", (unsigned long long)gseed, level,
                 optic_computation_name(pm, c), optic_last_error());
      }
      optic_program_summary s;
      OT_EXPECT_OK(optic_program_summary_get(p, &s));
      fusions += s.fusions;
      optic_cost total;
      OT_EXPECT_OK(optic_computation_cost(pm, optic_program_entry(p), &total));
      OT_CHECK(total.flops == s.cost.flops && total.bytes_accessed == s.cost.bytes_accessed &&
               total.transcendentals == s.cost.transcendentals && isfinite(s.est_ns) && s.est_ns >= 0);
      if (want) {
        optic_literal_t *got = NULL;
        optic_status gst =
            optic_evaluate(pm, optic_program_entry(p), (const optic_literal_t *const *)args, nargs, NULL, &got);
        char why[512] = "";
        bool same = gst == OPTIC_OK && optic_literal_match(want, got, OPTIC_MATCH_NAN_AWARE, 0, 0, why, sizeof why);
        if (!same) {
          char *text = NULL;
          optic_program_to_text(p, &text);
          ot_fail_(__FILE__, __LINE__, "graph seed %#llx level %d: the program computes something else: %s %s\n%s",
                   (unsigned long long)gseed, level, gst ? optic_last_error() : "", why, text ? text : "");
          optic_string_free(text);
        }
        compared++;
        optic_literal_destroy(got);
      }
      optic_program_destroy(p);
    }
    optic_literal_destroy(want);
    for (int32_t i = 0; i < nargs; i++) optic_literal_destroy(args[i]);
    optic_module_destroy(g.m);
  }
  printf("random_graphs_compile: %ld programs, %ld plans verified, %ld results compared, %ld fusions\n", compiled,
         plans, compared, fusions);
  OT_CHECK(compiled == 3 * n && compared == 3 * n);
  if (n >= 100) OT_CHECK(fusions > n / 4, "fusion must fire on random graphs (%ld)", fusions);
}

static double thread_cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Issue 4's bar: a 10,000-instruction MLP chain compiles at full in under
 * 200 ms. Measured as this thread's CPU time (optic_compile is
 * single-threaded), best of 3, so a loaded machine does not fail it; checked
 * in optimized unsanitized builds only (NDEBUG), printed always. Growth
 * 10k -> 40k is printed (bench/graph_compile.c measures 1k..100k). */
static void compile_time_10k(void) {
  optic_machine mc = toy_machine();
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  o.verify_buffers = false;
  double per_instr[2] = {0, 0};
  const int64_t sizes[2] = {10000, 40000};
  for (int k = 0; k < 2; k++) {
    int64_t n = 0;
    optic_module_t *m = graph_mlp_build(sizes[k], &n);
    OT_CHECK(m != NULL, "building the chain: %s", optic_last_error());
    if (!m) return;
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
      optic_program_t *p = NULL;
      double t0 = thread_cpu_seconds();
      OT_EXPECT_OK(optic_compile(m, &o, &p));
      double t = thread_cpu_seconds() - t0;
      if (t < best) best = t;
      optic_program_summary s;
      if (p && r == 0) {
        OT_EXPECT_OK(optic_program_summary_get(p, &s));
        OT_CHECK(s.fusions == (n - 3) / 6, "one output fusion per layer: %lld", (long long)s.fusions);
      }
      optic_program_destroy(p);
    }
    per_instr[k] = best * 1e9 / (double)n;
    printf("compile_time_10k: %lld instructions: %.1f ms CPU (best of 3), %.0f ns/instruction\n", (long long)n,
           best * 1e3, per_instr[k]);
    if (k == 0 && !SANITIZED) {
#ifdef NDEBUG
      OT_CHECK(best < 0.200, "10k instructions took %.1f ms of CPU time (bar: 200 ms)", best * 1e3);
#endif
    }
    optic_module_destroy(m);
  }
  printf("compile_time_10k: ns/instruction at 40k / at 10k = %.2f\n", per_instr[1] / per_instr[0]);
}

/* The machine's figures beyond the roofline reach the estimates: a loop
 * fusion is at least its bytes over loop_bandwidth, a dot runs at
 * gemm_efficiency of the peak, the summary adds run_overhead_ns once; the
 * counts do not change. */
static void op_class_estimates(void) {
  fixture f = fx_setup();
  int64_t d[] = {2, 2};
  optic_node_id p0 = fx_param(&f, f.main, 0, OPTIC_F32, 2, d), p1 = fx_param(&f, f.main, 1, OPTIC_F32, 2, d);
  optic_node_id ex = fx_un(&f, f.main, OPTIC_OP_EXPONENTIAL, fx_bin(&f, f.main, OPTIC_OP_ADD, p0, p1));
  BUILD(optic_computation_set_root(f.m, f.main, fx_bin(&f, f.main, OPTIC_OP_MULTIPLY, ex, p1)));
  optic_machine mc = toy_machine();
  mc.loop_bandwidth = 0.5e9; /* 2 ns per byte */
  mc.run_overhead_ns = 100;
  optic_compile_options o = options(OPTIC_OPT_FULL, &mc);
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) {
    const optic_module_t *pm = optic_program_module(p);
    optic_node_id root = optic_computation_root(pm, optic_program_entry(p));
    optic_program_summary s;
    OT_EXPECT_OK(optic_program_summary_get(p, &s));
    OT_CHECK(optic_node_opcode(pm, root) == OPTIC_OP_FUSION && s.fusions == 1);
    /* 8 flops, 4 transcendentals (40 ns), 48 bytes: roofline 40 + 5; class 96 + 5 */
    OT_CHECK(estimate_is(p, root, 8, 4, 48, 101));
    OT_CHECK(s.est_ns == 201, "run overhead once: %g", s.est_ns);
    optic_program_destroy(p);
  }
  mc.loop_bandwidth = 0; /* not known: the roofline */
  OT_EXPECT_OK(optic_compile(f.m, &o, &p));
  if (p) {
    optic_node_id root = optic_computation_root(optic_program_module(p), optic_program_entry(p));
    OT_CHECK(estimate_is(p, root, 8, 4, 48, 45));
    optic_program_destroy(p);
  }
  optic_module_destroy(f.m);
  fixture g = fx_setup();
  optic_node_id dt = matmul(&g);
  mc = toy_machine();
  mc.gemm_efficiency = 0.5;
  o = options(OPTIC_OPT_FULL, &mc);
  OT_EXPECT_OK(optic_compile(g.m, &o, &p));
  if (p) OT_CHECK(estimate_is(p, dt, 3000, 0, 2000, 6005), "dot at half the peak");
  optic_program_destroy(p);
  optic_module_destroy(g.m);
}

static const ot_case cases[] = {
    {"op_class_estimates", op_class_estimates},
    {"matmul_costs", matmul_costs},
    {"loop_fusion_costs", loop_fusion_costs},
    {"options_validated", options_validated},
    {"threads_scale_estimates", threads_scale_estimates},
    {"module_untouched", module_untouched},
    {"program_module_enumerates", program_module_enumerates},
    {"module_clone_independent", module_clone_independent},
    {"dump_annotated", dump_annotated},
    {"control_flow_sequences", control_flow_sequences},
    {"concurrent_compiles", concurrent_compiles},
    {"random_graphs_compile", random_graphs_compile},
    {"compile_time_10k", compile_time_10k},
};
OT_MAIN(cases)
