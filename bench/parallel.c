/* The parallel-slice harness (contract in parallel.h): one OpenMP region per
 * iteration, slices and an optional serial combine, the standard counters.
 * Must never add work to the timed loop beyond the region and the combine. */
#include "bench/parallel.h"

#include <omp.h>
#include <stdio.h>

#include "bench/cpu_path.h"
#include "bench/estimate.h"

/* One iteration; returns the thread count OpenMP gave, or -1 if a slice
 * failed (msg then holds the failing thread's optic error message). */
static int iterate(const bench_parallel *p, int threads, size_t repeats, bench_cpu_path *cpu, char *msg,
                   size_t msg_size) {
  int got = 0, failed = 0;
#pragma omp parallel num_threads(threads) reduction(+ : failed)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    bool ok = true;
    uint64_t t0 = bench_thread_cpu_ns();
    for (size_t r = 0; r < repeats && ok; r++) ok = p->slice(p->job, t, nt);
    bench_cpu_path_record(cpu, t, bench_thread_cpu_ns() - t0);
    if (!ok) {
      failed++;
      /* optic's message is thread-local: copy it out on the thread that failed. */
#pragma omp critical(bench_parallel_error)
      snprintf(msg, msg_size, "%s", optic_last_error());
    }
    if (t == 0) got = nt;
  }
  bench_cpu_path_end_region(cpu, got);
  if (p->finish != NULL) {
    uint64_t t0 = bench_thread_cpu_ns();
    p->finish(p->job, got);
    cpu->total_ns += (double)(bench_thread_cpu_ns() - t0);
  }
  return failed ? -1 : got;
}

static void report_failure(optic_bench_state *st, const char *what, const char *error) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s: a slice failed: %s", what, error);
  optic_bench_skip_with_error(st, msg);
}

void bench_run_parallel(optic_bench_state *st, int threads, const bench_parallel *p, const char *what) {
  char error[256] = "";
  const size_t repeats = p->repeats > 1 ? p->repeats : 1;
  bench_cpu_path cpu = {.total_ns = 0};
  int got = iterate(p, threads, 1, &cpu, error, sizeof error);
  cpu.total_ns = 0; /* the untimed pass does not count */
  if (got < 0) {
    report_failure(st, what, error);
    return;
  }
  bool failed = false;
  while (optic_bench_keep_running(st)) {
    if (!failed && iterate(p, threads, repeats, &cpu, error, sizeof error) < 0) {
      failed = true;
      /* The loop ends at the next keep_running; the run is marked failed. */
      report_failure(st, what, error);
    }
  }
  if (failed) return;
  const double r = (double)repeats;
  bench_report_rates(st, p->bytes_per_iteration * r, p->flops_per_iteration * r);
  bench_cpu_path_report(st, &cpu, p->bytes_per_iteration * r, p->flops_per_iteration * r);
  if (p->items_per_iteration > 0) {
    optic_bench_set_items_processed(st, p->items_per_iteration * (int64_t)repeats * optic_bench_iterations(st));
  }
  optic_bench_counter(st, "omp_threads", (double)got, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "repeats", r, OPTIC_BENCH_COUNTER_PLAIN);
  const double est_bytes = p->est_bytes_per_iteration > 0 ? p->est_bytes_per_iteration : p->bytes_per_iteration;
  const optic_cost one = {p->flops_per_iteration, p->transcendentals_per_iteration, est_bytes};
  if (p->est_ns_per_iteration > 0) {
    bench_report_model_estimate(st, got, r, &one, p->est_ns_per_iteration, !p->est_beyond_f32_peak);
  } else {
    bench_report_kernel_estimate(st, got, r, &one, p->gemm);
  }
}

optic_bench *bench_register_n_threads(const char *name, optic_bench_fn fn, void *user, int64_t n_small,
                                      int64_t n_large) {
  optic_bench *b = optic_bench_register(name, fn, user);
  const int64_t sizes[] = {n_small, n_large};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    for (int64_t threads = 1; threads <= 2; threads++) OPTIC_BENCH_ARGS(b, sizes[i], threads);
  }
  OPTIC_BENCH_ARG_NAMES(b, "n", "threads");
  optic_bench_use_real_time(b);
  return b;
}
