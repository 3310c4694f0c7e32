/* dot_general with the dimension numbers programs (and autodiff's
 * gradients) hand the runtime: plain, transposed operands, contracting on
 * dim 0 of both (a weight gradient), batch dims first, in the middle and
 * last, several contracting dims. Each runs as the executor runs it
 * (optic_dot_pack, then optic_dot_compute, one thread) and next to it the
 * same batch x sgemm(M x K by K x N) on dense operands:
 * "kernel/dot_class/<class>/{plan,gemm}/threads:1/real_time", so the same-run
 * ratio plan/gemm (bench/ratios.json, GFLOP/s) shows how close each class
 * runs to plain sgemm. GFLOP/s = 2*batch*M*N*K for both. */
#include <cblas.h>
#include <stdio.h>

#include "bench/estimate.h"
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/dot.h"

typedef struct dot_class {
  const char *name;
  int32_t lrank, rrank;
  int64_t l[4], r[4];
  optic_dot_dims dims;
} dot_class;

static dot_class dot_classes[] = {
    /* not const: registered as the benchmarks' user pointer */
    {"mk_kn",
     2,
     2,
     {256, 512},
     {512, 512},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {1}, .rhs_contracting = {0}}},
    {"km_nk",
     2,
     2,
     {512, 256},
     {512, 512},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {0}, .rhs_contracting = {1}}},
    /* the weight gradient x^T g: contracting dim 0 of both */
    {"contract_dim0_both",
     2,
     2,
     {512, 256},
     {512, 512},
     {.lhs_contracting_count = 1, .rhs_contracting_count = 1, .lhs_contracting = {0}, .rhs_contracting = {0}}},
    {"batch_first",
     3,
     3,
     {8, 128, 64},
     {8, 64, 128},
     {.lhs_batch_count = 1,
      .rhs_batch_count = 1,
      .lhs_batch = {0},
      .rhs_batch = {0},
      .lhs_contracting_count = 1,
      .rhs_contracting_count = 1,
      .lhs_contracting = {2},
      .rhs_contracting = {1}}},
    /* attention-like [b, s, h, d]: batch dims 0 and 2 (h in the middle) */
    {"batch_middle",
     4,
     4,
     {2, 128, 4, 64},
     {2, 128, 4, 64},
     {.lhs_batch_count = 2,
      .rhs_batch_count = 2,
      .lhs_batch = {0, 2},
      .rhs_batch = {0, 2},
      .lhs_contracting_count = 1,
      .rhs_contracting_count = 1,
      .lhs_contracting = {3},
      .rhs_contracting = {3}}},
    {"batch_last",
     3,
     3,
     {128, 64, 8},
     {64, 128, 8},
     {.lhs_batch_count = 1,
      .rhs_batch_count = 1,
      .lhs_batch = {2},
      .rhs_batch = {2},
      .lhs_contracting_count = 1,
      .rhs_contracting_count = 1,
      .lhs_contracting = {1},
      .rhs_contracting = {0}}},
    {"two_contracting",
     3,
     3,
     {256, 16, 32},
     {16, 32, 512},
     {.lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 2}, .rhs_contracting = {0, 1}}},
    {"two_contracting_swapped",
     3,
     3,
     {256, 16, 32},
     {32, 16, 512},
     {.lhs_contracting_count = 2, .rhs_contracting_count = 2, .lhs_contracting = {1, 2}, .rhs_contracting = {1, 0}}},
};
enum { DOT_CLASS_COUNT = sizeof dot_classes / sizeof dot_classes[0] };

typedef struct dclass_job {
  const struct optic_dot_plan *plan;
  const float *a, *b;
  float *c;
  void *scratch;
} dclass_job;

static bool plan_slice(void *job, int t, int nt) {
  const dclass_job *j = job;
  return optic_dot_pack(j->plan, j->a, j->b, j->scratch, t, nt) == OPTIC_OK &&
         optic_dot_compute(j->plan, j->a, j->b, j->c, j->scratch, t, nt) == OPTIC_OK;
}

static bool gemm_slice(void *job, int t, int nt) {
  const dclass_job *j = job;
  const struct optic_dot_plan *p = j->plan;
  int64_t m = p->m, n = p->n, k = p->k;
  for (int64_t b = t; b < p->batch; b += nt) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, j->a + b * m * k,
                (blasint)k, j->b + b * k * n, (blasint)n, 0.0f, j->c + b * m * n, (blasint)n);
  }
  return true;
}

static void run_class(optic_bench_state *st, const dot_class *c, bool alone) {
  optic_shape ls, rs;
  struct optic_dot_plan plan;
  if (optic_shape_make(c->lrank, c->l, &ls) != OPTIC_OK || optic_shape_make(c->rrank, c->r, &rs) != OPTIC_OK ||
      optic_dot_plan(&ls, &rs, &c->dims, &plan) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  int64_t B = plan.batch, m = plan.m, n = plan.n, k = plan.k;
  dclass_job j = {.plan = &plan,
                  .a = bench_f32_array(BENCH_INPUT_SLOT0, (size_t)(B * m * k)),
                  .b = bench_f32_array(BENCH_INPUT_SLOT0 + 1, (size_t)(B * k * n)),
                  .c = bench_f32_array(BENCH_OUTPUT_SLOT0, (size_t)(B * m * n))};
  if (j.a == NULL || j.b == NULL || j.c == NULL || optic_alloc(NULL, plan.scratch_bytes, 64, &j.scratch) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_parallel p = {.slice = alone ? gemm_slice : plan_slice,
                      .job = &j,
                      .flops_per_iteration = 2.0 * (double)B * (double)m * (double)n * (double)k};
  optic_machine mc; /* the compiler's model of the plan (packed operands included), or of the GEMM alone */
  double packed = alone ? 0 : (plan.lhs.packed ? (double)(B * m * k) : 0) + (plan.rhs.packed ? (double)(B * k * n) : 0);
  if (bench_machine(1, &mc))
    p.est_ns_per_iteration = optic_machine_estimate_dot_ns(&mc, (double)B, (double)m, (double)n, (double)k, packed,
                                                           (double)(B * (plan.split_n ? n : m)));
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  bench_run_parallel(st, 1, &p, alone ? "gemm" : "dot");
  openblas_set_num_threads(saved);
  optic_free(NULL, j.scratch, plan.scratch_bytes, 64);
  char label[160];
  snprintf(label, sizeof label, "batch %lld m %lld n %lld k %lld%s%s", (long long)B, (long long)m, (long long)n,
           (long long)k, plan.lhs.packed ? " lhs packed" : "", plan.rhs.packed ? " rhs packed" : "");
  optic_bench_set_label(st, label);
}

static void run_plan(optic_bench_state *st, void *user) { run_class(st, user, false); }
static void run_gemm(optic_bench_state *st, void *user) { run_class(st, user, true); }

void bench_register_dot_class_kernels(void) {
  for (size_t i = 0; i < DOT_CLASS_COUNT; i++) {
    for (int alone = 0; alone < 2; alone++) {
      optic_bench *b =
          optic_bench_register(bench_name("kernel/dot_class/%s/%s", dot_classes[i].name, alone ? "gemm" : "plan"),
                               alone ? run_gemm : run_plan, &dot_classes[i]);
      OPTIC_BENCH_ARGS(b, 1);
      OPTIC_BENCH_ARG_NAMES(b, "threads");
      optic_bench_use_real_time(b);
      optic_bench_set_unit(b, OPTIC_BENCH_US);
    }
  }
}
