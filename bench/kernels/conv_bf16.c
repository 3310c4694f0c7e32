/* bf16 convolution on the bf16 GEMM (kernels/conv_bf16.h) on the layers of
 * bench/conv_layers.h, "kernel/conv_bf16/<kernel>/<layer>/threads:T" with
 * kernel "best" (the runtime's choice, named in the label) or avx512_bf16:
 * NHWC bf16 input, HWIO bf16 kernel, NHWC bf16 output (rounded from the f32
 * accumulators), forward pass, planned once for T slices, then per
 * iteration ONE OpenMP region in which thread t runs slice t, as
 * kernel/conv does for f32; compare with kernel/conv/<layer> in the same run.
 * GFLOP/s = 2*N*K*C*R*S*OH*OW per call. The estimate: on the runtime's
 * kernel the compiler's (the bf16 class calibrate measured on it), on
 * another kernel (no figure measured) the f32 FMA roofline. A kernel this
 * machine cannot run is skipped with a message. Planning and scratch are
 * untimed. */
#include <stdio.h>

#include "bench/conv_layers.h"
#include "bench/estimate.h"
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "core/unconst.h"
#include "kernels/conv.h"
#include "kernels/conv_bf16.h"

typedef struct conv_bf16_job {
  const optic_conv_bf16_plan *plan;
  const uint16_t *input, *kernel;
  uint16_t *output;
  void *scratch;
} conv_bf16_job;

static bool conv_bf16_slice(void *job, int t, int nt) {
  const conv_bf16_job *j = job;
  return optic_conv_bf16_run(j->plan, j->input, j->kernel, j->output, j->scratch, t, nt) == OPTIC_OK;
}

/* n bf16 values in [-1, 1) in a float slot (n/2 floats hold n halves). */
static uint16_t *bf16_array(int slot, size_t n) {
  float *f = bench_f32_array(slot, (n + 1) / 2);
  if (f == NULL) return NULL;
  uint16_t *h = (uint16_t *)(void *)f;
  for (size_t i = 0; i < n; i++) h[i] = optic_f32_to_bf16((float)(i % 1021) / 510.5f - 1.0f);
  return h;
}

static optic_status describe(const bench_conv_layer *l, optic_conv_desc *d) {
  optic_conv_desc_init(d);
  optic_status s = optic_conv_parse_dim_labels("b01f_01io->b01f", &d->dn);
  if (s == OPTIC_OK) s = optic_shape_make(4, (const int64_t[]){l->n, l->h, l->w, l->c}, &d->input);
  if (s == OPTIC_OK) s = optic_shape_make(4, (const int64_t[]){l->r, l->s, l->c, l->k}, &d->kernel);
  for (int i = 0; i < 2; i++) d->pad_lo[i] = d->pad_hi[i] = l->pad;
  return s;
}

/* The compiler's price of d on the runtime's bf16 kernel: the bf16 class
 * over the f32 plan's geometry (optic_conv_plan_bf16_work), 0 without the
 * class figure. */
static double class_estimate(const optic_conv_desc *d, int threads) {
  optic_conv_plan f;
  optic_machine mc;
  if (optic_conv_plan_make(d, OPTIC_CONV_FORWARD, threads, &f) != OPTIC_OK || !bench_machine(threads, &mc)) return 0;
  optic_conv_work w;
  optic_conv_plan_bf16_work(&f, &w);
  return optic_machine_estimate_conv_ns(&mc, &w);
}

typedef struct variant {
  const bench_conv_layer *layer;
  intptr_t kernel; /* -1: the runtime's choice */
} variant;

static void run_conv_bf16(optic_bench_state *st, void *user) {
  const variant *v = user;
  const bench_conv_layer *l = v->layer;
  optic_bf16_kernel kernel = v->kernel < 0 ? optic_conv_bf16_kernel() : (optic_bf16_kernel)v->kernel;
  int threads = (int)optic_bench_range(st, 0);
  optic_conv_desc d;
  optic_conv_bf16_plan plan;
  if (describe(l, &d) != OPTIC_OK || optic_conv_bf16_plan_make(&d, OPTIC_BF16, kernel, threads, &plan) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  size_t in_elems = (size_t)(l->n * l->h * l->w * l->c), k_elems = (size_t)(l->r * l->s * l->c * l->k);
  size_t out_elems = (size_t)(bench_conv_gemm_m(l) * l->k);
  conv_bf16_job j = {.plan = &plan,
                     .input = bf16_array(BENCH_INPUT_SLOT0 + 2, in_elems),
                     .kernel = bf16_array(BENCH_INPUT_SLOT0 + 3, k_elems),
                     .output = bf16_array(BENCH_OUTPUT_SLOT0, out_elems),
                     .scratch = bench_f32_array(BENCH_OUTPUT_SLOT0 + 1, (plan.scratch_bytes + 3) / 4)};
  if (j.input == NULL || j.kernel == NULL || j.output == NULL || j.scratch == NULL) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_parallel p = {.slice = conv_bf16_slice,
                      .job = &j,
                      .flops_per_iteration = bench_conv_flops(l),
                      .est_bytes_per_iteration = 2.0 * (double)(in_elems + k_elems + out_elems)};
  if (kernel == optic_conv_bf16_kernel()) p.est_ns_per_iteration = class_estimate(&d, threads);
  p.est_beyond_f32_peak = p.est_ns_per_iteration > 0;
  bench_run_parallel(st, threads, &p, "conv_bf16");
  optic_bench_set_label(st, optic_dot_bf16_kernel_name(kernel));
}

void bench_register_conv_bf16_kernels(void) {
  static variant variants[2 * BENCH_CONV_LAYER_COUNT];
  for (size_t kk = 0; kk < 2; kk++) {
    for (size_t i = 0; i < BENCH_CONV_LAYER_COUNT; i++) {
      variant *v = &variants[kk * BENCH_CONV_LAYER_COUNT + i];
      v->layer = &bench_conv_layers[i];
      v->kernel = kk == 0 ? -1 : OPTIC_BF16_AVX512;
      optic_bench *b = optic_bench_register(
          bench_name("kernel/conv_bf16/%s/%s", kk == 0 ? "best" : "avx512_bf16", bench_conv_layers[i].name),
          run_conv_bf16, OPTIC_UNCONST(void *, v));
      OPTIC_BENCH_ARGS(b, 1);
      OPTIC_BENCH_ARGS(b, 2);
      OPTIC_BENCH_ARG_NAMES(b, "threads");
      optic_bench_use_real_time(b);
      optic_bench_set_unit(b, OPTIC_BENCH_MS);
    }
  }
}
