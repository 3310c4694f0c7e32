/* optic's dot_general wrapper (kernels/dot.h) on the MLP shapes the raw
 * cblas_sgemm peer runs (M = 256, K and N in {1024, 4096}): lhs f32[M,K],
 * rhs f32[K,N], contracting lhs 1 with rhs 0, which the plan maps onto BLAS
 * with no copies. Per iteration ONE OpenMP parallel region in which thread t
 * computes its share with single-threaded OpenBLAS, the executor protocol of
 * docs/kernels-dot.md (no pack step: nothing is packed for these layouts, and
 * the run fails if the plan says otherwise). OpenBLAS is set to one thread for
 * the run, as for the conv benchmark (a 1-thread region is not "active").
 * GFLOP/s = 2*M*N*K per call, the peer's count. Planning is untimed. */
#include <cblas.h>

#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/dot.h"

typedef struct dot_job {
  const struct optic_dot_plan *plan;
  const float *lhs, *rhs;
  float *out;
} dot_job;

static bool dot_slice(void *job, int t, int nt) {
  const dot_job *j = job;
  return optic_dot_compute(j->plan, j->lhs, j->rhs, j->out, NULL, t, nt) == OPTIC_OK;
}

static void run_dot(optic_bench_state *st, void *user) {
  (void)user;
  int64_t m = optic_bench_range(st, 0), n = optic_bench_range(st, 1), k = optic_bench_range(st, 2);
  int threads = (int)optic_bench_range(st, 3);
  optic_shape ls, rs;
  optic_dot_dims dims = {
      .lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}};
  struct optic_dot_plan plan;
  if (optic_shape_make(2, (const int64_t[]){m, k}, &ls) != OPTIC_OK ||
      optic_shape_make(2, (const int64_t[]){k, n}, &rs) != OPTIC_OK ||
      optic_dot_plan(&ls, &rs, &dims, &plan) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  if (plan.scratch_bytes != 0) {
    optic_bench_skip_with_error(st, "dot: the plan packs an operand; this benchmark measures the copy-free mapping");
    return;
  }
  dot_job j = {.plan = &plan,
               .lhs = bench_f32_array(BENCH_INPUT_SLOT0, (size_t)(m * k)),
               .rhs = bench_f32_array(BENCH_INPUT_SLOT0 + 1, (size_t)(k * n)),
               .out = bench_f32_array(BENCH_OUTPUT_SLOT0, (size_t)(m * n))};
  if (j.lhs == NULL || j.rhs == NULL || j.out == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  /* The estimate: the compiler's count for this dot (XLA's: 2MNK flops,
   * every operand and the result once) at the machine's GEMM bound. */
  bench_parallel p = {.slice = dot_slice,
                      .job = &j,
                      .flops_per_iteration = 2.0 * (double)m * (double)n * (double)k,
                      .est_bytes_per_iteration = 4.0 * (double)(m * k + k * n + m * n),
                      .gemm = true};
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  bench_run_parallel(st, threads, &p, "dot");
  openblas_set_num_threads(saved);
  optic_bench_set_label(st, openblas_get_corename());
}

void bench_register_dot_kernels(void) {
  optic_bench *b = optic_bench_register("kernel/dot", run_dot, NULL);
  const int64_t widths[] = {1024, 4096};
  for (int64_t threads = 1; threads <= 2; threads++) {
    for (size_t i = 0; i < 2; i++) {
      for (size_t j = 0; j < 2; j++) OPTIC_BENCH_ARGS(b, 256, widths[j], widths[i], threads);
    }
  }
  OPTIC_BENCH_ARG_NAMES(b, "m", "n", "k", "threads");
  optic_bench_use_real_time(b);
  optic_bench_set_unit(b, OPTIC_BENCH_US);
}
