/* Compile time of the graph compiler (issue 4): optic_compile at level full
 * on a deep MLP chain (per layer: weight and bias parameters, dot, bias
 * broadcast, add, relu as maximum with a shared broadcast zero) of about
 * 1k, 10k and 100k instructions. Building the module and destroying the
 * program are not timed. Counters: instructions (input), instructions_after
 * (entry after optimization), fusions, ns_per_instruction and
 * ms_per_compile (wall time), cpu_ns_per_instruction and cpu_ms_per_compile
 * (this thread's CPU time: optic_compile is single-threaded, so this leaves
 * out the time it waits for a core on a loaded machine); est_time_ns from
 * optic_machine_estimate_compile_ns of the host model. The bar (10k instructions < 200 ms)
 * and the growth ratio are in bench/README.md and bench/ratios.json. */
#include <optic/optic.h>

#include <time.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"
#include "bench/graph_mlp.h"

static void run_compile(optic_bench_state *st, void *user) {
  (void)user;
  int64_t target = optic_bench_range(st, 0), n = 0;
  optic_module_t *m = graph_mlp_build(target, &n);
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
  double cpu_s = 0;
  bool failed = false;
  while (optic_bench_keep_running(st)) {
    optic_program_t *p = NULL;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    uint64_t t0 = optic_now_ns();
    optic_status s = optic_compile(m, &o, &p);
    total_ns += optic_now_ns() - t0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    cpu_s += (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
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
  optic_bench_counter(st, "cpu_ns_per_instruction", iters > 0 ? cpu_s * 1e9 / iters / (double)n : 0,
                      OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "cpu_ms_per_compile", iters > 0 ? cpu_s * 1e3 / iters : 0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "ms_per_compile", iters > 0 ? (double)total_ns / iters * 1e-6 : 0, OPTIC_BENCH_COUNTER_PLAIN);
  optic_machine host; /* the calibrated model of compile time (the compile itself used host-default) */
  if (bench_machine(1, &host)) bench_report_estimate(st, optic_machine_estimate_compile_ns(&host, (double)n), NULL);
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
