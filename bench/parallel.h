/* The harness for kernels that are not one call per element range: reductions
 * (per-thread partials, then a combine), strided layout kernels (split by
 * rows), optimizer updates (several arrays and a params struct), convolution
 * slices and GEMM slices. Like the elementwise harness: ONE OpenMP parallel
 * region per iteration, every thread running its own slice, wall-clock time.
 * Benchmark-only code; never allocates inside the timed loop. */
#ifndef OPTIC_BENCH_PARALLEL_H
#define OPTIC_BENCH_PARALLEL_H

#include <stdint.h>

#include "bench/bench_util.h"

typedef struct bench_parallel {
  /* Run by every thread t of nt inside the region (nt <= the threads asked
   * for: OpenMP may give fewer); returns false to report a failure. */
  bool (*slice)(void *job, int t, int nt);
  /* Run once per iteration after the region, on the benchmark's thread, and
   * timed (combining partial results); NULL for nothing. */
  void (*finish)(void *job, int nt);
  void *job;
  /* Each thread runs its slice this many times in a row per region (0 or 1:
   * once); bench_repeats(n) for in-cache sizes. finish still runs once. */
  size_t repeats;
  /* Per slice round (all threads' slices once): */
  double bytes_per_iteration;           /* real bytes moved (0: no GB/s counter) */
  double flops_per_iteration;           /* floating-point operations (0: no GFLOP/s counter) */
  int64_t items_per_iteration;          /* elements (0: no items_per_second) */
  double transcendentals_per_iteration; /* XLA's count, for the estimate only */
  double est_bytes_per_iteration; /* bytes the estimate counts when no GB/s is reported (0: bytes_per_iteration) */
  bool gemm;                      /* the estimate's flops bound is the GEMM one (dot, convolution) */
  /* The model's time of one slice round (a planned dot or convolution
   * priced by its class figures), at least the roofline of the counts;
   * 0: the roofline (or GEMM bound) alone. */
  double est_ns_per_iteration;
  bool est_beyond_f32_peak; /* est_ns_per_iteration may pass the f32 FMA peak (bf16 matrix unit) */
} bench_parallel;

/* One untimed iteration (faults pages in, warms caches, starts OpenMP's
 * threads), then the timed loop, then the counters (times repeats): GB/s,
 * GFLOP/s, items_per_second, and plain omp_threads and repeats. If a slice fails, the run is marked with
 * `what` as its error. */
void bench_run_parallel(optic_bench_state *st, int threads, const bench_parallel *p, const char *what);

/* Registers name with arguments (n, threads) for n in {n_small, n_large} and
 * threads 1 and 2, wall-clock time: "<name>/n:N/threads:T/real_time". */
optic_bench *bench_register_n_threads(const char *name, optic_bench_fn fn, void *user, int64_t n_small,
                                      int64_t n_large);

#endif
