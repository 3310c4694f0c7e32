/* Critical-path CPU time bookkeeping (contract in cpu_path.h). Runs between
 * regions, never inside a kernel call. */
#include "bench/cpu_path.h"

void bench_cpu_path_end_region(bench_cpu_path *c, int nt) {
  uint64_t worst = 0;
  for (int t = 0; t < nt && t < BENCH_CPU_PATH_MAX_THREADS; t++) {
    if (c->slot[t].ns > worst) worst = c->slot[t].ns;
  }
  c->total_ns += (double)worst;
}

void bench_cpu_path_report(optic_bench_state *st, const bench_cpu_path *c, double bytes_per_iteration,
                           double flops_per_iteration) {
  double iterations = (double)optic_bench_iterations(st);
  if (iterations <= 0 || c->total_ns <= 0) return;
  double seconds = c->total_ns * 1e-9;
  optic_bench_counter(st, "cpu_path_ns", c->total_ns / iterations, OPTIC_BENCH_COUNTER_PLAIN);
  if (bytes_per_iteration > 0) {
    optic_bench_counter(st, "cpu_GB/s", bytes_per_iteration * iterations / seconds * 1e-9, OPTIC_BENCH_COUNTER_PLAIN);
  }
  if (flops_per_iteration > 0) {
    optic_bench_counter(st, "cpu_GFLOP/s", flops_per_iteration * iterations / seconds * 1e-9,
                        OPTIC_BENCH_COUNTER_PLAIN);
  }
}
