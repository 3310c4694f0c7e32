/* Runs one elementwise benchmark (see elementwise.h): the same code path for
 * optic's kernels and for the STREAM-style peers, so their ratio compares the
 * functions alone. Must never add work inside the parallel region beyond the
 * split and the call. */
#include "bench/elementwise.h"

#include <omp.h>
#include <stdio.h>

#include "bench/bench_util.h"

static const float scalar_operand = 0.5f;

static void run_elementwise(optic_bench_state *st, void *user) {
  const bench_elementwise *e = user;
  size_t n = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  int arrays = e->inputs + e->outputs;
  float *base[BENCH_ELEMENTWISE_MAX_ARRAYS];
  for (int k = 0; k < arrays; k++) {
    int slot = k < e->inputs ? BENCH_INPUT_SLOT0 + k : BENCH_OUTPUT_SLOT0 + (k - e->inputs);
    base[k] = bench_f32_array(slot, n);
    if (base[k] == NULL) {
      optic_bench_skip_with_error(st, optic_last_error());
      return;
    }
  }
  int got_threads = 0;
  /* One untimed pass: faults pages in, warms caches, and records how many
   * threads OpenMP really gives (it may give fewer than asked). */
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t lo, hi;
    bench_split(n, t, nt, &lo, &hi);
    float *p[BENCH_ELEMENTWISE_MAX_ARRAYS];
    for (int k = 0; k < arrays; k++) p[k] = base[k] + lo;
    e->call(e->fn, hi - lo, p, scalar_operand);
    if (t == 0) got_threads = nt;
  }
  while (optic_bench_keep_running(st)) {
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      size_t lo, hi;
      bench_split(n, t, nt, &lo, &hi);
      float *p[BENCH_ELEMENTWISE_MAX_ARRAYS];
      for (int k = 0; k < arrays; k++) p[k] = base[k] + lo;
      e->call(e->fn, hi - lo, p, scalar_operand);
    }
  }
  bench_report_rates(st, e->bytes_per_element * (double)n, 0.0);
  optic_bench_set_items_processed(st, (int64_t)n * optic_bench_iterations(st));
  optic_bench_counter(st, "omp_threads", (double)got_threads, OPTIC_BENCH_COUNTER_PLAIN);
}

void bench_register_elementwise(const char *prefix, const bench_elementwise *e) {
  if (!optic_isa_supported(e->isa)) return;
  if (e->inputs + e->outputs > BENCH_ELEMENTWISE_MAX_ARRAYS) {
    fprintf(stderr, "bench: %s/%s uses %d arrays, more than the harness's %d; not registered\n", prefix,
            e->function, e->inputs + e->outputs, BENCH_ELEMENTWISE_MAX_ARRAYS);
    return;
  }
  optic_bench *b = optic_bench_register(bench_name("%s/%s", prefix, e->function), run_elementwise, (void *)e);
  const int64_t sizes[] = {(int64_t)BENCH_N_IN_CACHE, (int64_t)BENCH_N_DRAM};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    for (int64_t threads = 1; threads <= 2; threads++) OPTIC_BENCH_ARGS(b, sizes[i], threads);
  }
  OPTIC_BENCH_ARG_NAMES(b, "n", "threads");
  optic_bench_use_real_time(b);
}
