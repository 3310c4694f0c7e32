/* The GEMM peer: raw cblas_sgemm (row-major, no transposes) on the MLP shapes
 * (M = 256 rows of a batch, K and N in {1024, 4096}) and square N = 256..2048,
 * at 1 and 2 OpenBLAS threads, reporting GFLOP/s = 2*M*N*K per call. optic's
 * dot wrapper is measured against these figures. Restores OpenBLAS's thread
 * count after each run. */
#include <cblas.h>

#include "bench/bench_util.h"

static void run_sgemm(optic_bench_state *st, void *user) {
  (void)user;
  int m = (int)optic_bench_range(st, 0), n = (int)optic_bench_range(st, 1), k = (int)optic_bench_range(st, 2);
  int threads = (int)optic_bench_range(st, 3);
  /* A and B are inputs (values in [1, 2)), C an output: distinct slots. */
  float *a = bench_f32_array(BENCH_INPUT_SLOT0, (size_t)m * (size_t)k);
  float *b = bench_f32_array(BENCH_INPUT_SLOT0 + 1, (size_t)k * (size_t)n);
  float *c = bench_f32_array(BENCH_OUTPUT_SLOT0, (size_t)m * (size_t)n);
  if (a == NULL || b == NULL || c == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(threads);
  /* Untimed call: OpenBLAS allocates its buffers and wakes its threads. */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  while (optic_bench_keep_running(st)) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }
  optic_bench_counter(st, "blas_threads", (double)openblas_get_num_threads(), OPTIC_BENCH_COUNTER_PLAIN);
  openblas_set_num_threads(saved);
  bench_report_rates(st, 0.0, 2.0 * m * (double)n * (double)k);
  optic_bench_set_label(st, openblas_get_corename());
}

void bench_register_sgemm(void) {
  optic_bench *b = optic_bench_register("peer/sgemm", run_sgemm, NULL);
  const int64_t widths[] = {1024, 4096};
  const int64_t squares[] = {256, 512, 1024, 2048};
  for (int64_t threads = 1; threads <= 2; threads++) {
    for (size_t i = 0; i < 2; i++) {
      for (size_t j = 0; j < 2; j++) OPTIC_BENCH_ARGS(b, 256, widths[j], widths[i], threads);
    }
    for (size_t i = 0; i < sizeof squares / sizeof *squares; i++) {
      OPTIC_BENCH_ARGS(b, squares[i], squares[i], squares[i], threads);
    }
  }
  OPTIC_BENCH_ARG_NAMES(b, "m", "n", "k", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
}
