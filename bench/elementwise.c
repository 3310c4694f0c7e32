/* Runs one elementwise benchmark (see elementwise.h): the same code path for
 * optic's kernels and for the STREAM-style peers, so their ratio compares the
 * functions alone. Must never add work inside the parallel region beyond the
 * split and the calls. */
#include "bench/elementwise.h"

#include <omp.h>
#include <stdio.h>

#include "bench/cpu_path.h"
#include "bench/estimate.h"
#include "core/unconst.h"

static const float scalar_operand = 0.5f;

/* Split granularity in elements: 64 bytes of the narrowest array, so no two
 * threads write the same cache line of any array. */
static size_t split_align(const bench_elementwise *e) {
  size_t narrowest = 8;
  for (int k = 0; k < e->inputs + e->outputs; k++) {
    size_t b = bench_dtype_bytes(e->types[k]);
    if (b < narrowest) narrowest = b;
  }
  return 64 / narrowest;
}

/* This thread's piece, `repeats` calls: every array advanced to element lo
 * in its own type. */
static void call_piece(const bench_elementwise *e, unsigned char *const *base, size_t n, size_t align, size_t repeats,
                       int t, int nt) {
  size_t lo, hi;
  bench_split_aligned(n, align, t, nt, &lo, &hi);
  void *p[BENCH_ELEMENTWISE_MAX_ARRAYS];
  for (int k = 0; k < e->inputs + e->outputs; k++) p[k] = base[k] + lo * bench_dtype_bytes(e->types[k]);
  for (size_t r = 0; r < repeats; r++) e->call(e->fn, hi - lo, p, scalar_operand);
}

static void run_elementwise(optic_bench_state *st, void *user) {
  const bench_elementwise *e = user;
  size_t n = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  int arrays = e->inputs + e->outputs;
  unsigned char *base[BENCH_ELEMENTWISE_MAX_ARRAYS];
  for (int k = 0; k < arrays; k++) {
    int slot = k < e->inputs ? BENCH_INPUT_SLOT0 + k : BENCH_OUTPUT_SLOT0 + (k - e->inputs);
    base[k] = bench_array(slot, n, e->types[k]);
    if (base[k] == NULL) {
      optic_bench_skip_with_error(st, optic_last_error());
      return;
    }
  }
  const size_t align = split_align(e), repeats = bench_repeats(n);
  int got_threads = 0;
  /* One untimed pass: faults pages in, warms caches, and records how many
   * threads OpenMP really gives (it may give fewer than asked). */
#pragma omp parallel num_threads(threads)
  {
    call_piece(e, base, n, align, 1, omp_get_thread_num(), omp_get_num_threads());
    if (omp_get_thread_num() == 0) got_threads = omp_get_num_threads();
  }
  bench_cpu_path cpu = {.total_ns = 0};
  while (optic_bench_keep_running(st)) {
    int nt = 1;
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num();
      uint64_t t0 = bench_thread_cpu_ns();
      call_piece(e, base, n, align, repeats, t, omp_get_num_threads());
      bench_cpu_path_record(&cpu, t, bench_thread_cpu_ns() - t0);
      if (t == 0) nt = omp_get_num_threads();
    }
    bench_cpu_path_end_region(&cpu, nt);
  }
  const double elements = (double)n * (double)repeats;
  bench_report_rates(st, e->bytes_per_element * elements, e->flops_per_element * elements);
  bench_cpu_path_report(st, &cpu, e->bytes_per_element * elements, e->flops_per_element * elements);
  optic_bench_set_items_processed(st, (int64_t)elements * optic_bench_iterations(st));
  optic_bench_counter(st, "repeats", (double)repeats, OPTIC_BENCH_COUNTER_PLAIN);
  optic_bench_counter(st, "omp_threads", (double)got_threads, OPTIC_BENCH_COUNTER_PLAIN);
  /* The estimate: the op's counts for one call on n elements, repeats calls. */
  const optic_cost one = {e->flops_per_element * (double)n, e->transcendentals_per_element * (double)n,
                          e->bytes_per_element * (double)n};
  bench_report_allocating_estimate(st, got_threads, (double)repeats, &one, e->allocated_per_element * (double)n);
}

void bench_register_elementwise(const char *prefix, const bench_elementwise *e) {
  if (!optic_isa_supported(e->isa)) return;
  if (e->inputs + e->outputs > BENCH_ELEMENTWISE_MAX_ARRAYS) {
    fprintf(stderr, "bench: %s/%s uses %d arrays, more than the harness's %d; not registered\n", prefix, e->function,
            e->inputs + e->outputs, BENCH_ELEMENTWISE_MAX_ARRAYS);
    return;
  }
  optic_bench *b =
      optic_bench_register(bench_name("%s/%s", prefix, e->function), run_elementwise, OPTIC_UNCONST(void *, e));
  const int64_t sizes[] = {(int64_t)BENCH_N_IN_CACHE, (int64_t)BENCH_N_DRAM};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    for (int64_t threads = 1; threads <= 2; threads++) OPTIC_BENCH_ARGS(b, sizes[i], threads);
  }
  OPTIC_BENCH_ARG_NAMES(b, "n", "threads");
  optic_bench_use_real_time(b);
}
