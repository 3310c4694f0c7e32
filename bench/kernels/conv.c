/* optic's planned convolution (kernels/conv.h) on the layers of
 * bench/conv_layers.h, NHWC input, HWIO kernel, NHWC output, forward pass:
 * planned once for T slices, then per iteration ONE OpenMP parallel region in
 * which thread t runs slice t of T with single-threaded OpenBLAS, as
 * docs/kernels-conv.md prescribes. OpenBLAS (the OpenMP build) is set to one
 * thread for the run and restored after: inside a 2-thread region it runs
 * single-threaded anyway, but a 1-thread region is not "active"
 * (omp_in_parallel() is false), and OpenBLAS would then thread every block's
 * GEMM itself (measured: seconds instead of tens of ms).
 * GFLOP/s = 2*N*K*C*R*S*OH*OW per call, the count the peers use. Label: the
 * plan's strategy and the OpenBLAS core. Planning and scratch are untimed. */
#include <cblas.h>
#include <stdio.h>

#include "bench/conv_layers.h"
#include "bench/kernels/kernel_families.h"
#include "bench/estimate.h"
#include "bench/parallel.h"
#include "kernels/conv.h"
#include "core/unconst.h"

typedef struct conv_job {
  const optic_conv_plan *plan;
  const float *input, *kernel;
  float *output;
  unsigned char *scratch;
} conv_job;

static bool conv_slice(void *job, int t, int nt) {
  const conv_job *j = job;
  return optic_conv_run_forward(j->plan, j->input, j->kernel, j->output, j->scratch, t, nt) == OPTIC_OK;
}

static const char *strategy_name(int32_t s) {
  switch (s) {
    case OPTIC_CONV_STRATEGY_GEMM: return "gemm";
    case OPTIC_CONV_STRATEGY_IM2COL_MK: return "im2col_mk";
    case OPTIC_CONV_STRATEGY_IM2COL_KM: return "im2col_km";
    case OPTIC_CONV_STRATEGY_DIRECT: return "direct";
    default: return "unknown";
  }
}

/* The layer's descriptor: b01f_01io->b01f (NHWC, HWIO), symmetric padding. */
static optic_status describe(const bench_conv_layer *l, optic_conv_desc *d) {
  optic_conv_desc_init(d);
  optic_status s = optic_conv_parse_dim_labels("b01f_01io->b01f", &d->dn);
  if (s == OPTIC_OK) s = optic_shape_make(4, (const int64_t[]){l->n, l->h, l->w, l->c}, &d->input);
  if (s == OPTIC_OK) s = optic_shape_make(4, (const int64_t[]){l->r, l->s, l->c, l->k}, &d->kernel);
  for (int i = 0; i < 2; i++) d->pad_lo[i] = d->pad_hi[i] = l->pad;
  return s;
}

static void run_conv(optic_bench_state *st, void *user) {
  const bench_conv_layer *l = user;
  int threads = (int)optic_bench_range(st, 0);
  optic_conv_desc d;
  optic_conv_plan plan;
  if (describe(l, &d) != OPTIC_OK || optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, threads, &plan) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  size_t in_elems = (size_t)(l->n * l->h * l->w * l->c), k_elems = (size_t)(l->r * l->s * l->c * l->k);
  size_t out_elems = (size_t)(bench_conv_gemm_m(l) * l->k);
  conv_job j = {.plan = &plan,
                .input = bench_f32_array(BENCH_INPUT_SLOT0, in_elems),
                .kernel = bench_f32_array(BENCH_INPUT_SLOT0 + 1, k_elems),
                .output = bench_f32_array(BENCH_OUTPUT_SLOT0, out_elems)};
  void *scratch = NULL;
  if (j.input == NULL || j.kernel == NULL || j.output == NULL ||
      optic_alloc(NULL, plan.scratch_bytes, 64, &scratch) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  j.scratch = scratch;
  /* The estimate: the plan's strategy priced by the compiler's model
   * (optic_machine_estimate_conv_ns), at least the roofline of the count
   * (input, kernel, output once); the GEMM bound where the model has no
   * figure for the strategy. */
  bench_parallel p = {.slice = conv_slice,
                      .job = &j,
                      .flops_per_iteration = bench_conv_flops(l),
                      .est_bytes_per_iteration = 4.0 * (double)(in_elems + k_elems + out_elems),
                      .gemm = true};
  optic_machine mc;
  optic_conv_work w;
  optic_conv_plan_work(&plan, p.flops_per_iteration, &w);
  if (bench_machine(threads, &mc)) p.est_ns_per_iteration = optic_machine_estimate_conv_ns(&mc, &w);
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  bench_run_parallel(st, threads, &p, "conv");
  openblas_set_num_threads(saved);
  optic_free(NULL, scratch, plan.scratch_bytes, 64);
  char label[128];
  snprintf(label, sizeof label, "%s %s", strategy_name(plan.strategy), openblas_get_corename());
  optic_bench_set_label(st, label);
}

void bench_register_conv_kernels(void) {
  for (size_t i = 0; i < BENCH_CONV_LAYER_COUNT; i++) {
    optic_bench *b = optic_bench_register(bench_name("kernel/conv/%s", bench_conv_layers[i].name), run_conv,
                                          OPTIC_UNCONST(void *, &bench_conv_layers[i]));
    OPTIC_BENCH_ARGS(b, 1);
    OPTIC_BENCH_ARGS(b, 2);
    OPTIC_BENCH_ARG_NAMES(b, "threads");
    optic_bench_use_real_time(b);
    optic_bench_set_unit(b, OPTIC_BENCH_MS);
  }
}
