/* Compile time of the graph compiler (issue 4): optic_compile at level full
 * on a deep MLP chain (per layer: weight and bias parameters, dot, bias
 * broadcast, add, relu as maximum with a shared broadcast zero) of about
 * 1k, 10k and 100k instructions. Building the module and destroying the
 * program are not timed. Counters: instructions (input), instructions_after
 * (entry after optimization), fusions, ns_per_instruction (compile wall time
 * / input instructions), ms_per_compile. The bar (10k instructions < 200 ms)
 * and the growth ratio are in bench/README.md and bench/ratios.json. */
#include <optic/optic.h>

#include "bench/bench_util.h"

enum { BATCH = 4, WIDTH = 8 };

/* A chain with at least n instructions in its entry; NULL on a builder error. */
static optic_module_t *build_mlp(int64_t n, int64_t *instructions) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  if (optic_module_create("mlp", &m) != OPTIC_OK || optic_module_add_computation(m, "main", &c) != OPTIC_OK) {
    optic_module_destroy(m);
    return NULL;
  }
  optic_shape act = {.rank = 2, .dims = {BATCH, WIDTH}}, wsh = {.rank = 2, .dims = {WIDTH, WIDTH}};
  optic_shape bsh = {.rank = 1, .dims = {WIDTH}}, scalar = {.rank = 0};
  optic_type ta = optic_type_array(OPTIC_F32, &act), tw = optic_type_array(OPTIC_F32, &wsh);
  optic_type tb = optic_type_array(OPTIC_F32, &bsh);
  optic_dot_dims dd = {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1},
                       .rhs_contracting = {0}};
  const int64_t bias_dims[] = {1};
  float zero = 0.0f;
  optic_node_id x, z, zeros;
  int32_t param = 0;
  bool ok = optic_graph_parameter(m, c, param++, &ta, "x", &x) == OPTIC_OK &&
            optic_graph_constant(m, c, OPTIC_F32, &scalar, &zero, sizeof zero, "zero", &z) == OPTIC_OK &&
            optic_graph_broadcast(m, c, z, &act, NULL, 0, "zeros", &zeros) == OPTIC_OK;
  int64_t count = 3;
  while (ok && count < n) {
    optic_node_id w, b, d, bb, s, r;
    ok = optic_graph_parameter(m, c, param++, &tw, NULL, &w) == OPTIC_OK &&
         optic_graph_parameter(m, c, param++, &tb, NULL, &b) == OPTIC_OK &&
         optic_graph_dot(m, c, x, w, &dd, NULL, &d) == OPTIC_OK &&
         optic_graph_broadcast(m, c, b, &act, bias_dims, 1, NULL, &bb) == OPTIC_OK &&
         optic_graph_binary(m, c, OPTIC_OP_ADD, d, bb, NULL, &s) == OPTIC_OK &&
         optic_graph_binary(m, c, OPTIC_OP_MAXIMUM, s, zeros, NULL, &r) == OPTIC_OK;
    x = r;
    count += 6;
  }
  if (!ok || optic_computation_set_root(m, c, x) != OPTIC_OK) {
    optic_module_destroy(m);
    return NULL;
  }
  *instructions = count;
  return m;
}

static void run_compile(optic_bench_state *st, void *user) {
  (void)user;
  int64_t target = optic_bench_range(st, 0), n = 0;
  optic_module_t *m = build_mlp(target, &n);
  optic_machine machine;
  if (m == NULL || optic_machine_preset("host-default", &machine) != OPTIC_OK) {
    optic_module_destroy(m);
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  optic_compile_options o = optic_compile_options_default();
  o.level = OPTIC_OPT_FULL;
  o.machine = &machine;
  optic_program_summary summary = {0};
  uint64_t total_ns = 0;
  bool failed = false;
  while (optic_bench_keep_running(st)) {
    optic_program_t *p = NULL;
    uint64_t t0 = optic_now_ns();
    optic_status s = optic_compile(m, &o, &p);
    total_ns += optic_now_ns() - t0;
    optic_bench_pause(st);
    if (s != OPTIC_OK) failed = true;
    else optic_program_summary_get(p, &summary);
    optic_program_destroy(p);
    optic_bench_resume(st);
    if (failed) break;
  }
  optic_module_destroy(m);
  if (failed) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  double iters = (double)optic_bench_iterations(st);
  optic_bench_counter(st, "instructions", (double)n, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "instructions_after", (double)summary.instructions, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "fusions", (double)summary.fusions, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "ns_per_instruction", iters > 0 ? (double)total_ns / iters / (double)n : 0,
                      OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "ms_per_compile", iters > 0 ? (double)total_ns / iters * 1e-6 : 0,
                      OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_register_graph_compile(void) {
  optic_bench *b = optic_bench_register("graph/compile_mlp", run_compile, NULL);
  OPTIC_BENCH_ARGS(b, 1000);
  OPTIC_BENCH_ARGS(b, 10000);
  OPTIC_BENCH_ARGS(b, 100000);
  OPTIC_BENCH_ARG_NAMES(b, "instructions");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
