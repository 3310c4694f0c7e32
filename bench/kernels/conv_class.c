/* Every class of convolution the runtime can be handed (forward NHWC/NCHW,
 * strided, padded, rhs- and lhs-dilated, the kernel gradient with its
 * swapped batch/feature roles, batch and feature groups, depthwise, 1x1, odd
 * dim_labels) planned as the executor plans them (optic_conv_plan_make,
 * forward pass, whatever descriptor autodiff or an HLO module gives), and next
 * to each the GEMM its im2col strategy reduces to, run alone on dense
 * operands: groups x sgemm(positions x kc by kc x cout). Both are named
 * "kernel/conv_class/<class>/{plan,gemm}/threads:1/real_time", so the
 * same-run ratio plan/gemm (bench/ratios.json, GFLOP/s) shows how close each
 * class runs to its strategy's best. GFLOP/s counts 2 * the GEMM's
 * multiply-adds (taps falling in lhs-dilation holes included), for both. */
#include <cblas.h>
#include <stdio.h>

#include "bench/estimate.h"
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/conv.h"

typedef struct conv_class {
  const char *name, *labels;
  int64_t in[4], k[4];
  int64_t stride, pad_lo, pad_hi, lhs_dil, rhs_dil, fgc, bgc;
} conv_class;

/* A ResNet-like layer (N 4, 64 -> 64 features, 28x28, 3x3) in each guise.
 * The gradients are the ones graph/autodiff_conv.c builds for it. */
static conv_class conv_classes[] = {
    /* not const: registered as the benchmarks' user pointer */
    {"fwd_nhwc_3x3", "b01f_01io->b01f", {4, 28, 28, 64}, {3, 3, 64, 64}, 1, 1, 1, 1, 1, 1, 1},
    {"fwd_nchw_3x3", "bf01_oi01->bf01", {4, 64, 28, 28}, {64, 64, 3, 3}, 1, 1, 1, 1, 1, 1, 1},
    {"fwd_nhwc_stride2", "b01f_01io->b01f", {4, 56, 56, 64}, {3, 3, 64, 64}, 2, 1, 0, 1, 1, 1, 1},
    {"fwd_nhwc_valid", "b01f_01io->b01f", {4, 30, 30, 64}, {3, 3, 64, 64}, 1, 0, 0, 1, 1, 1, 1},
    {"fwd_nhwc_rhs_dil2", "b01f_01io->b01f", {4, 28, 28, 64}, {3, 3, 64, 64}, 1, 2, 2, 1, 2, 1, 1},
    {"fwd_nchw_rhs_dil2", "bf01_oi01->bf01", {4, 64, 28, 28}, {64, 64, 3, 3}, 1, 2, 2, 1, 2, 1, 1},
    /* input gradient of the stride-2 layer: lhs dilation 2 (transposed conv) */
    {"dinput_nhwc_lhs_dil2", "b01f_01oi->b01f", {4, 28, 28, 64}, {3, 3, 64, 64}, 1, 1, 2, 2, 1, 1, 1},
    {"dinput_nchw_lhs_dil2", "bf01_oi01->bf01", {4, 64, 28, 28}, {64, 64, 3, 3}, 1, 1, 2, 2, 1, 1, 1},
    /* kernel gradients: batch and feature roles swapped, the window is the image */
    {"dkernel_nhwc", "f01b_i01o->01bf", {4, 28, 28, 64}, {4, 28, 28, 64}, 1, 1, 1, 1, 1, 1, 1},
    {"dkernel_nchw", "fb01_io01->bf01", {4, 64, 28, 28}, {4, 64, 28, 28}, 1, 1, 1, 1, 1, 1, 1},
    {"dkernel_nhwc_of_stride2", "f01b_i01o->01bf", {4, 56, 56, 64}, {4, 28, 28, 64}, 1, 1, 0, 1, 2, 1, 1},
    {"dkernel_nhwc_of_rhs_dil2", "f01b_i01o->01bf", {4, 28, 28, 64}, {4, 28, 28, 64}, 2, 2, 2, 1, 1, 1, 1},
    {"dkernel_nchw_of_rhs_dil2", "fb01_io01->bf01", {4, 64, 28, 28}, {4, 64, 28, 28}, 2, 2, 2, 1, 1, 1, 1},
    /* the first layer of a small convnet (examples/mlp_train --model conv): one input feature, 8x8 images, 16
     * output features, batch 64 */
    {"dkernel_nhwc_cin1", "f01b_i01o->01bf", {64, 8, 8, 1}, {64, 8, 8, 16}, 1, 1, 1, 1, 1, 1, 1},
    /* depthwise kernel gradient: batch groups */
    {"dkernel_depthwise_bgc", "f01b_i01o->01bf", {4, 28, 28, 64}, {4, 28, 28, 64}, 1, 1, 1, 1, 1, 1, 64},
    {"dkernel_nchw_depthwise_bgc", "fb01_io01->bf01", {4, 64, 28, 28}, {4, 64, 28, 28}, 1, 1, 1, 1, 1, 1, 64},
    {"fwd_grouped4", "b01f_01io->b01f", {4, 28, 28, 64}, {3, 3, 16, 64}, 1, 1, 1, 1, 1, 4, 1},
    {"fwd_depthwise", "b01f_01io->b01f", {4, 28, 28, 64}, {3, 3, 1, 64}, 1, 1, 1, 1, 1, 64, 1},
    {"fwd_nchw_depthwise", "bf01_oi01->bf01", {4, 64, 28, 28}, {64, 1, 3, 3}, 1, 1, 1, 1, 1, 64, 1},
    {"fwd_nhwc_1x1", "b01f_01io->b01f", {4, 28, 28, 64}, {1, 1, 64, 256}, 1, 0, 0, 1, 1, 1, 1},
    /* a first layer: one input feature (the window-tap loops) */
    {"fwd_nhwc_cin1", "b01f_01io->b01f", {4, 28, 28, 1}, {3, 3, 1, 32}, 1, 1, 1, 1, 1, 1, 1},
    {"fwd_nchw_cin1", "bf01_oi01->bf01", {4, 1, 28, 28}, {32, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1},
    {"fwd_nchw_1x1", "bf01_oi01->bf01", {4, 64, 28, 28}, {256, 64, 1, 1}, 1, 0, 0, 1, 1, 1, 1},
    {"fwd_odd_labels", "01bf_o01i->f01b", {28, 28, 4, 64}, {64, 3, 3, 64}, 1, 1, 1, 1, 1, 1, 1},
};
enum { CONV_CLASS_COUNT = sizeof conv_classes / sizeof conv_classes[0] };

static optic_status describe(const conv_class *c, optic_conv_desc *d) {
  optic_conv_desc_init(d);
  optic_status s = optic_conv_parse_dim_labels(c->labels, &d->dn);
  if (s == OPTIC_OK) s = optic_shape_make(4, c->in, &d->input);
  if (s == OPTIC_OK) s = optic_shape_make(4, c->k, &d->kernel);
  for (int i = 0; i < 2; i++) {
    d->stride[i] = c->stride, d->pad_lo[i] = c->pad_lo, d->pad_hi[i] = c->pad_hi;
    d->lhs_dilation[i] = c->lhs_dil, d->rhs_dilation[i] = c->rhs_dil;
  }
  d->feature_group_count = c->fgc, d->batch_group_count = c->bgc;
  return s;
}

typedef struct class_job {
  const optic_conv_plan *plan;
  const float *a, *b;
  float *c;
  unsigned char *scratch;
} class_job;

static bool plan_slice(void *job, int t, int nt) {
  const class_job *j = job;
  return optic_conv_run_forward(j->plan, j->a, j->b, j->c, j->scratch, t, nt) == OPTIC_OK;
}

/* The strategy's best: every group's GEMM on dense operands, nothing else. */
static bool gemm_slice(void *job, int t, int nt) {
  const class_job *j = job;
  const optic_conv_plan *p = j->plan;
  int64_t m = p->positions, n = p->g.cout, k = p->kc;
  for (int64_t g = t; g < p->g.groups; g += nt) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, j->a + g * m * k,
                (blasint)k, j->b + g * k * n, (blasint)n, 0.0f, j->c + g * m * n, (blasint)n);
  }
  return true;
}

static const char *strategy_name(int32_t s) {
  switch (s) {
    case OPTIC_CONV_STRATEGY_GEMM: return "gemm";
    case OPTIC_CONV_STRATEGY_IM2COL_MK: return "im2col_mk";
    case OPTIC_CONV_STRATEGY_IM2COL_KM: return "im2col_km";
    case OPTIC_CONV_STRATEGY_DIRECT: return "direct";
    case OPTIC_CONV_STRATEGY_GROUPED: return "grouped";
    case OPTIC_CONV_STRATEGY_IM2COL_MK_TAP: return "im2col_mk_tap";
    case OPTIC_CONV_STRATEGY_TAPS: return "taps";
    default: return "unknown";
  }
}

static void run_class(optic_bench_state *st, const conv_class *c, bool alone) {
  optic_conv_desc d;
  optic_conv_plan plan;
  optic_shape out;
  if (describe(c, &d) != OPTIC_OK || optic_conv_infer_shape(&d, &out) != OPTIC_OK ||
      optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &plan) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  size_t ein = 0, ek = 0, eo = 0;
  optic_shape_elements(&d.input, &ein);
  optic_shape_elements(&d.kernel, &ek);
  optic_shape_elements(&out, &eo);
  int64_t G = plan.g.groups, m = plan.positions, n = plan.g.cout, k = plan.kc;
  if (alone) ein = (size_t)(G * m * k), ek = (size_t)(G * k * n), eo = (size_t)(G * m * n);
  class_job j = {.plan = &plan,
                 .a = bench_f32_array(BENCH_INPUT_SLOT0, ein),
                 .b = bench_f32_array(BENCH_INPUT_SLOT0 + 1, ek),
                 .c = bench_f32_array(BENCH_OUTPUT_SLOT0, eo)};
  void *scratch = NULL;
  if (j.a == NULL || j.b == NULL || j.c == NULL || optic_alloc(NULL, plan.scratch_bytes, 64, &scratch) != OPTIC_OK) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  j.scratch = scratch;
  bench_parallel p = {.slice = alone ? gemm_slice : plan_slice,
                      .job = &j,
                      .flops_per_iteration = 2.0 * (double)G * (double)m * (double)n * (double)k};
  optic_machine mc; /* the compiler's model: the plan's class, or G sgemm calls for the GEMM alone */
  optic_conv_work w;
  optic_conv_plan_work(&plan, p.flops_per_iteration, &w);
  if (bench_machine(1, &mc))
    p.est_ns_per_iteration = alone ? bench_sgemm_calls_ns(&mc, (double)G, (double)m, (double)n, (double)k)
                                   : optic_machine_estimate_conv_ns(&mc, &w);
  int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  bench_run_parallel(st, 1, &p, alone ? "gemm" : "conv");
  openblas_set_num_threads(saved);
  optic_free(NULL, scratch, plan.scratch_bytes, 64);
  char label[160];
  snprintf(label, sizeof label, "%s groups %lld m %lld n %lld k %lld", strategy_name(plan.strategy), (long long)G,
           (long long)m, (long long)n, (long long)k);
  optic_bench_set_label(st, label);
}

static void run_plan(optic_bench_state *st, void *user) { run_class(st, user, false); }
static void run_gemm(optic_bench_state *st, void *user) { run_class(st, user, true); }

void bench_register_conv_class_kernels(void) {
  for (size_t i = 0; i < CONV_CLASS_COUNT; i++) {
    for (int alone = 0; alone < 2; alone++) {
      const char *what = alone ? "gemm" : "plan";
      optic_bench *b = optic_bench_register(bench_name("kernel/conv_class/%s/%s", conv_classes[i].name, what),
                                            alone ? run_gemm : run_plan, &conv_classes[i]);
      OPTIC_BENCH_ARGS(b, 1);
      OPTIC_BENCH_ARG_NAMES(b, "threads");
      optic_bench_use_real_time(b);
      optic_bench_set_unit(b, OPTIC_BENCH_MS);
    }
  }
}
