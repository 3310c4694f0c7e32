/* The compute bound: FMA peak GFLOP/s per ISA at 1 and 2 OpenMP threads, one
 * parallel region per iteration, each thread running the ISA's loop
 * (kernels/fma_peak.h, shared with `optic calibrate`). Registered only for
 * the SIMD ISAs this CPU supports; never calls a loop the CPU cannot run. */
#include <omp.h>

#include "bench/bench_util.h"
#include "bench/cpu_path.h"
#include "kernels/common.h"
#include "kernels/fma_peak.h"
#include "core/unconst.h"

/* Rounds per thread per iteration: about 0.1-0.5 ms, long against the
 * parallel region's fork/join, short enough for many iterations. */
static const uint64_t reps = 100000;

static void run_fma_peak(optic_bench_state *st, void *user) {
  const optic_fma_peak_loop *f = user;
  int threads = (int)optic_bench_range(st, 0);
  float sink[2] = {0.0f, 0.0f};
  int got_threads = 0;
  bench_cpu_path cpu = {.total_ns = 0};
  while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(threads)
    {
      uint64_t t0 = bench_thread_cpu_ns();
      float r = f->run(reps);
      int t = omp_get_thread_num();
      bench_cpu_path_record(&cpu, t, bench_thread_cpu_ns() - t0);
      if (t == 0 || t == 1) sink[t] += r;
      if (t == 0) got_threads = omp_get_num_threads();
    }
    bench_cpu_path_end_region(&cpu, got_threads);
  }
  optic_bench_do_not_optimize(sink);
  bench_report_rates(st, 0.0, f->flops_per_rep * (double)reps * (double)got_threads);
  bench_cpu_path_report(st, &cpu, 0.0, f->flops_per_rep * (double)reps * (double)got_threads);
  optic_bench_counter(st, "omp_threads", (double)got_threads, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_register_fma_peak(void) {
  size_t n = 0;
  const optic_fma_peak_loop *loops = optic_fma_peak_loops(&n);
  for (size_t i = 0; i < n; i++) {
    /* The scalar loop is calibrate's fallback, not a bound worth a peer. */
    if (loops[i].isa == OPTIC_ISA_SCALAR || !optic_isa_supported(loops[i].isa)) continue;
    optic_bench *b = optic_bench_register(bench_name("peer/fma_peak/%s", optic_isa_name(loops[i].isa)), run_fma_peak,
                                          OPTIC_UNCONST(void *, &loops[i]));
    OPTIC_BENCH_ARGS(b, 1);
    OPTIC_BENCH_ARGS(b, 2);
    OPTIC_BENCH_ARG_NAMES(b, "threads");
    optic_bench_use_real_time(b);
  }
}
