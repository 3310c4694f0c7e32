/* bf16 GEMM on each bf16 kernel (kernels/dot_bf16.h: amx_bf16 tiles,
 * avx512_bf16 vdpbf16ps) and on "best" (the one the runtime uses, named in
 * the label), "kernel/dot_bf16/<kernel>/...", square M = N = K in
 * {256, 1024}, lhs bf16[M,K] . rhs bf16[K,N] -> f32[M,N], against the raw
 * cblas_sgemm peer on the same f32 shapes (peer/sgemm). Each iteration is
 * the whole dot as the executor runs it: ONE OpenMP region in which every
 * thread packs its share of the panels, a barrier, then computes its share
 * (packing is timed, as sgemm's own packing is). GFLOP/s = 2*M*N*K per
 * call, the peer's count. The estimate: on the runtime's kernel, the
 * compiler's bf16 dot estimate (optic_machine_estimate_bf16_dot_ns: the
 * bf16 class calibrate measured on that kernel); on a kernel the runtime
 * does not choose here (no figure measured for it), the f32 FMA roofline.
 * A kernel this machine cannot run (CPU, OS permission, OPTIC_ISA cap) is
 * skipped with a message. */
#include <omp.h>
#include <stdio.h>

#include "bench/estimate.h"
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/dot_bf16.h"

typedef struct bf16_job {
  optic_bf16_kernel kernel;
  const struct optic_dot_plan *plan;
  const uint16_t *lhs, *rhs;
  float *out;
  void *scratch;
} bf16_job;

static bool bf16_slice(void *job, int t, int nt) {
  const bf16_job *j = job;
  bool ok = optic_dot_bf16_pack_panels_with(j->kernel, j->plan, j->lhs, j->rhs, j->scratch, t, nt) == OPTIC_OK;
#pragma omp barrier
  return optic_dot_bf16_compute_with(j->kernel, j->plan, j->out, j->scratch, t, nt) == OPTIC_OK && ok;
}

/* n bf16 values in [1, 2) in a float slot (n/2 floats hold n halves). */
static uint16_t *bf16_input(int slot, size_t n) {
  float *f = bench_f32_array(slot, (n + 1) / 2);
  if (f == NULL) return NULL;
  uint16_t *h = (uint16_t *)(void *)f;
  for (size_t i = 0; i < n; i++) h[i] = optic_f32_to_bf16(1.0f + (float)(i % 1021) / 1021.0f);
  return h;
}

static void run_dot_bf16(optic_bench_state *st, void *user) {
  intptr_t which = (intptr_t)user; /* -1: the best kernel here */
  optic_bf16_kernel kernel = which < 0 ? optic_dot_bf16_kernel() : (optic_bf16_kernel)which;
  if (kernel == OPTIC_BF16_NONE) {
    optic_bench_skip_with_error(st, "dot_bf16: no bf16 kernel here (needs AVX512_BF16 or AMX-BF16, ISA avx512)");
    return;
  }
  int64_t m = optic_bench_range(st, 0), n = optic_bench_range(st, 1), k = optic_bench_range(st, 2);
  int threads = (int)optic_bench_range(st, 3);
  if (!optic_dot_bf16_kernel_usable(kernel)) {
    optic_bench_skip_with_error(st, kernel == OPTIC_BF16_AMX
                                        ? "dot_bf16: amx_bf16 needs AMX-BF16, OS tile permission, OPTIC_ISA unset"
                                        : "dot_bf16: avx512_bf16 needs AVX512_BF16 and the avx512 ISA");
    return;
  }
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
  size_t sb = optic_dot_bf16_scratch_bytes_for(&plan, kernel);
  bf16_job j = {.kernel = kernel,
                .plan = &plan,
                .lhs = bf16_input(BENCH_INPUT_SLOT0 + 2, (size_t)(m * k)),
                .rhs = bf16_input(BENCH_INPUT_SLOT0 + 3, (size_t)(k * n)),
                .out = bench_f32_array(BENCH_OUTPUT_SLOT0, (size_t)(m * n)),
                .scratch = bench_f32_array(BENCH_OUTPUT_SLOT0 + 1, (sb + 3) / 4)};
  if (j.lhs == NULL || j.rhs == NULL || j.out == NULL || j.scratch == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  if (plan.lhs.packed || plan.rhs.packed) {
    optic_bench_skip_with_error(st, "dot_bf16: the plan packs an operand; this benchmark measures the plain layout");
    return;
  }
  bench_parallel p = {.slice = bf16_slice, .job = &j, .flops_per_iteration = 2.0 * (double)m * (double)n * (double)k};
  /* the runtime's kernel: the compiler's bf16 dot estimate (the bf16 class),
   * where it has one; otherwise (another kernel, no figure) the roofline */
  optic_machine mc;
  if (kernel == optic_dot_bf16_kernel() && bench_machine(threads, &mc))
    p.est_ns_per_iteration =
        optic_machine_estimate_bf16_dot_ns(&mc, 1, (double)m, (double)n, (double)k, (double)(plan.split_n ? n : m));
  p.est_beyond_f32_peak = p.est_ns_per_iteration > 0; /* the compiler's bf16 estimate is not bound by it either */
  bench_run_parallel(st, threads, &p, "dot_bf16");
  optic_bench_set_label(st, optic_dot_bf16_kernel_name(kernel));
}

void bench_register_dot_bf16_kernels(void) {
  static const intptr_t kernels[] = {-1, OPTIC_BF16_AMX, OPTIC_BF16_AVX512};
  for (size_t kk = 0; kk < 3; kk++) {
    char name[64];
    snprintf(name, sizeof name, "kernel/dot_bf16/%s",
             kernels[kk] < 0 ? "best" : optic_dot_bf16_kernel_name((optic_bf16_kernel)kernels[kk]));
    optic_bench *b = optic_bench_register(name, run_dot_bf16, (void *)kernels[kk]);
    const int64_t squares[] = {256, 1024};
    for (int64_t threads = 1; threads <= 2; threads++) {
      for (size_t i = 0; i < sizeof squares / sizeof *squares; i++) {
        OPTIC_BENCH_ARGS(b, squares[i], squares[i], squares[i], threads);
      }
    }
    OPTIC_BENCH_ARG_NAMES(b, "m", "n", "k", "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_US);
  }
}
