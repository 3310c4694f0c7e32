/* The convolution's GEMM alone, threaded as optic's convolution is: for each
 * layer of bench/conv_layers.h, C[M x N] = A[M x K] B[K x N] (row-major, no
 * transposes, dense A: the im2col matrix the convolution never builds), and
 * per iteration ONE OpenMP parallel region in which each thread calls
 * cblas_sgemm on its contiguous share of M's rows with OpenBLAS set to one
 * thread (as bench/kernels/conv.c, for the same reason; restored after).
 * issue 3's bars compare the convolution's time with this one's.
 * GFLOP/s = 2*M*N*K. The estimate is the compiler's for the same GEMM on
 * this many threads: the dot class (optic_machine_estimate_dot_ns, one call
 * of M x K by K x N, operands in place, split over M's rows), as for the
 * conv_class and dot_class GEMMs; a machine without it, the GEMM bound. */
#include <cblas.h>

#include "bench/bench_util.h"
#include "bench/estimate.h"
#include "bench/conv_layers.h"
#include "bench/parallel.h"

typedef struct gemm_job {
  int m, n, k;
  const float *a, *b;
  float *c;
} gemm_job;

static bool gemm_slice(void *job, int t, int nt) {
  const gemm_job *j = job;
  size_t lo, hi;
  /* Rows in multiples of 16, as the convolution's position blocks are. */
  bench_split((size_t)j->m, t, nt, &lo, &hi);
  if (hi > lo) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(hi - lo), j->n, j->k, 1.0f, j->a + lo * (size_t)j->k,
                j->k, j->b, j->n, 0.0f, j->c + lo * (size_t)j->n, j->n);
  }
  return true;
}

static void run_sgemm_slices(optic_bench_state *st, void *user) {
  (void)user;
  gemm_job j = {
      .m = (int)optic_bench_range(st, 0), .n = (int)optic_bench_range(st, 1), .k = (int)optic_bench_range(st, 2)};
  int threads = (int)optic_bench_range(st, 3);
  j.a = bench_f32_array(BENCH_INPUT_SLOT0, (size_t)j.m * (size_t)j.k);
  j.b = bench_f32_array(BENCH_INPUT_SLOT0 + 1, (size_t)j.k * (size_t)j.n);
  j.c = bench_f32_array(BENCH_OUTPUT_SLOT0, (size_t)j.m * (size_t)j.n);
  if (j.a == NULL || j.b == NULL || j.c == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_parallel p = {
      .slice = gemm_slice, .job = &j, .flops_per_iteration = 2.0 * j.m * (double)j.n * (double)j.k, .gemm = true};
  optic_machine mc;
  if (bench_machine(threads, &mc))
    p.est_ns_per_iteration = optic_machine_estimate_dot_ns(&mc, 1, j.m, j.n, j.k, 0, j.m);
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  bench_run_parallel(st, threads, &p, "sgemm_slices");
  openblas_set_num_threads(saved);
  optic_bench_set_label(st, openblas_get_corename());
}

void bench_register_sgemm_slices(void) {
  optic_bench *b = optic_bench_register("peer/sgemm_slices", run_sgemm_slices, NULL);
  for (int64_t threads = 1; threads <= 2; threads++) {
    for (size_t i = 0; i < BENCH_CONV_LAYER_COUNT; i++) {
      const bench_conv_layer *l = &bench_conv_layers[i];
      OPTIC_BENCH_ARGS(b, bench_conv_gemm_m(l), l->k, bench_conv_gemm_k(l), threads);
    }
  }
  OPTIC_BENCH_ARG_NAMES(b, "m", "n", "k", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_MS);
}
