/* Planned OpenBLAS convolution (kernels/blas_conv*.c) against the naive double
 * reference, for the forward pass and both gradients: the HLO reference cases,
 * edge sizes, a seeded random sweep over ranks, windows, groups and layouts,
 * finite differences of the double-precision forward, and invalid calls.
 * Tolerance: |got - ref| <= 2e-5 * M + 1e-6 per element, where M is the same
 * pass computed on |operands| (the sum of |terms|, which bounds f32
 * accumulation error); ref is exact to double before its final rounding.
 * Every result buffer is pre-filled with a NaN sentinel (an element left
 * unwritten fails) and followed by guard floats; scratch is guarded too. */
#include <omp.h>

#include "kernels/conv.h"
#include "tests/kernels/conv_test.h"

#define RTOL 2e-5
#define ATOL 1e-6

/* One line that identifies a descriptor in failure messages. */
static const char *describe(const optic_conv_desc *d) {
  static char buf[1024];
  char in[96], k[96];
  optic_shape_format(&d->input, OPTIC_DTYPE_INVALID, in, sizeof in);
  optic_shape_format(&d->kernel, OPTIC_DTYPE_INVALID, k, sizeof k);
  int n = snprintf(buf, sizeof buf, "in%s k%s dn(b%d f%d i%d o%d ob%d of%d) fgc %lld bgc %lld", in, k, d->dn.in_batch,
                   d->dn.in_feature, d->dn.k_in, d->dn.k_out, d->dn.out_batch, d->dn.out_feature,
                   (long long)d->feature_group_count, (long long)d->batch_group_count);
  for (int32_t s = 0; s < d->dn.nspatial && n < (int)sizeof buf - 80; s++) {
    n += snprintf(buf + n, sizeof buf - (size_t)n, " | s%d in%d k%d out%d st%lld pad%lld_%lld ld%lld rd%lld%s", s,
                  d->dn.in_spatial[s], d->dn.k_spatial[s], d->dn.out_spatial[s], (long long)d->stride[s],
                  (long long)d->pad_lo[s], (long long)d->pad_hi[s], (long long)d->lhs_dilation[s],
                  (long long)d->rhs_dilation[s], d->reverse[s] ? " rev" : "");
  }
  return buf;
}

static float *random_floats(kt_rng *r, size_t n) {
  float *x = malloc((n + 1) * sizeof(float));
  kt_fill(r, x, n, -1.0f, 1.0f, 0);
  return x;
}

static float *absolute(const float *x, size_t n) {
  float *y = malloc((n + 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
  return y;
}

static optic_status ref_pass(const optic_conv_desc *d, optic_conv_pass pass, const float *a, const float *b,
                             float *out) {
  if (pass == OPTIC_CONV_FORWARD) return optic_ref_f32_conv(d, a, b, out);
  if (pass == OPTIC_CONV_BACKWARD_INPUT) return optic_ref_f32_conv_backward_input(d, a, b, out);
  return optic_ref_f32_conv_backward_kernel(d, a, b, out);
}

static optic_status run_pass(const optic_conv_plan *p, const float *a, const float *b, float *out, void *scratch,
                             int32_t t, int32_t n) {
  if (p->pass == OPTIC_CONV_FORWARD) return optic_conv_run_forward(p, a, b, out, scratch, t, n);
  if (p->pass == OPTIC_CONV_BACKWARD_INPUT) return optic_conv_run_backward_input(p, a, b, out, scratch, t, n);
  return optic_conv_run_backward_kernel(p, a, b, out, scratch, t, n);
}

static const char *const pass_names[] = {"forward", "backward_input", "backward_kernel"};

/* Plans pass for `threads` slices, runs them (one after another, or at once
 * on OpenMP threads when omp), and checks every element and every guard.
 * Returns the number of mismatches. */
static int check_pass(const optic_conv_desc *d, optic_conv_pass pass, const float *a, const float *b, size_t nout,
                      const float *want, const float *mag, int32_t threads, bool omp, const char *ctx) {
  optic_conv_plan p;
  optic_status st = optic_conv_plan_make(d, pass, threads, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan %s: %s", ctx, pass_names[pass], optic_last_error());
  if (st != OPTIC_OK) return 1;
  OT_CHECK(kt_elements(&p.result_shape) == nout, "%s: result shape", ctx);
  kt_buf out = kt_buf_make(nout, 1);
  kt_buf scr = kt_buf_make((p.scratch_bytes + 3) / 4, 3);
  if (omp) {
    int bad = 0;
#pragma omp parallel num_threads(threads) reduction(+ : bad)
    {
      int32_t t = omp_get_thread_num(), n = omp_get_num_threads();
      bad += run_pass(&p, a, b, out.p, p.scratch_bytes ? scr.p : NULL, t, n) != OPTIC_OK;
    }
    OT_CHECK(bad == 0, "%s: %s: a slice failed", ctx, pass_names[pass]);
  } else {
    for (int32_t t = 0; t < threads; t++) {
      OT_EXPECT_OK(run_pass(&p, a, b, out.p, p.scratch_bytes ? scr.p : NULL, t, threads));
    }
  }
  int mismatches = 0;
  for (size_t i = 0; i < nout; i++) {
    double err = fabs((double)out.p[i] - (double)want[i]);
    if (!(err <= RTOL * mag[i] + ATOL)) {
      if (mismatches++ < 3) {
        OT_CHECK(false, "%s: %s threads %d strategy %d: [%zu] = %.9g, ref %.9g (|terms| %.3g)", ctx, pass_names[pass],
                 threads, p.strategy, i, out.p[i], want[i], mag[i]);
      }
    }
  }
  OT_CHECK(kt_buf_guard_ok(&out), "%s: %s wrote past the result", ctx, pass_names[pass]);
  OT_CHECK(kt_buf_guard_ok(&scr), "%s: %s wrote past the scratch (%zu bytes)", ctx, pass_names[pass], p.scratch_bytes);
  kt_buf_free(&out);
  kt_buf_free(&scr);
  return mismatches;
}

/* All three passes of d against the reference, with 1 and 3 slices. */
static int check_desc(const optic_conv_desc *d, uint64_t seed, const char *ctx) {
  optic_shape os;
  optic_status st = optic_conv_infer_shape(d, &os);
  OT_CHECK(st == OPTIC_OK, "%s: %s", ctx, optic_last_error());
  if (st != OPTIC_OK) return 1;
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_rng rng = {seed | 1};
  float *in = random_floats(&rng, nin), *k = random_floats(&rng, nk), *go = random_floats(&rng, nout);
  float *ain = absolute(in, nin), *ak = absolute(k, nk), *ago = absolute(go, nout);
  int bad = 0;
  for (int pass = 0; pass < 3; pass++) {
    const float *a = pass == OPTIC_CONV_BACKWARD_INPUT ? go : in, *b = pass == OPTIC_CONV_BACKWARD_KERNEL ? go : k;
    const float *aa = pass == OPTIC_CONV_BACKWARD_INPUT ? ago : ain,
                *ab = pass == OPTIC_CONV_BACKWARD_KERNEL ? ago : ak;
    size_t n = pass == OPTIC_CONV_FORWARD ? nout : pass == OPTIC_CONV_BACKWARD_INPUT ? nin : nk;
    float *want = malloc((n + 1) * sizeof(float)), *mag = malloc((n + 1) * sizeof(float));
    OT_EXPECT_OK(ref_pass(d, (optic_conv_pass)pass, a, b, want));
    OT_EXPECT_OK(ref_pass(d, (optic_conv_pass)pass, aa, ab, mag));
    bad += check_pass(d, (optic_conv_pass)pass, a, b, n, want, mag, 1, false, ctx);
    bad += check_pass(d, (optic_conv_pass)pass, a, b, n, want, mag, 3, false, ctx);
    free(want);
    free(mag);
  }
  free(in), free(k), free(go), free(ain), free(ak), free(ago);
  return bad;
}

static void pads(optic_conv_desc *d, int64_t p) {
  for (int32_t s = 0; s < d->dn.nspatial; s++) d->pad_lo[s] = d->pad_hi[s] = p;
}

static int strategy_of(const optic_conv_desc *d, optic_conv_pass pass) {
  optic_conv_plan p;
  OT_EXPECT_OK(optic_conv_plan_make(d, pass, 2, &p));
  return p.strategy;
}

/* ----------------------------------------------------- the HLO reference files */

static void test_hlo_conv0d_as_matmul(void) {
  optic_conv_desc d = kt_conv_desc("bf_io->bf", 2, (int64_t[]){10, 5}, (int64_t[]){5, 7});
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_GEMM, "a 0-D convolution is a GEMM");
  check_desc(&d, 1, describe(&d));
}

static void test_hlo_conv2d_nhwc(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){8, 5, 5, 1}, (int64_t[]){3, 3, 1, 32});
  pads(&d, 1);
  check_desc(&d, 2, describe(&d));
}

/* Copies indices [0, keep) and [n - keep, n) of dim `dim` of a row-major array. */
static float *take_ends(const float *x, const optic_shape *s, int32_t dim, int64_t keep, optic_shape *out) {
  int64_t outer = 1, inner = 1, n = s->dims[dim];
  for (int32_t i = 0; i < dim; i++) outer *= s->dims[i];
  for (int32_t i = dim + 1; i < s->rank; i++) inner *= s->dims[i];
  *out = *s;
  out->dims[dim] = 2 * keep;
  float *y = malloc((size_t)(outer * 2 * keep * inner) * sizeof(float));
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t j = 0; j < 2 * keep; j++) {
      int64_t src = j < keep ? j : n - 2 * keep + j;
      memcpy(y + (o * 2 * keep + j) * inner, x + (o * n + src) * inner, (size_t)inner * sizeof(float));
    }
  }
  return y;
}

/* conv_isolated_layout_3021.hlo at full size: input and output are stored
 * {3,0,2,1} (physically 01bf). The reference runs on the first and last
 * image only (the full reference would take minutes under sanitizers). */
static void test_hlo_isolated_layout_3021(void) {
  optic_conv_desc logical =
      kt_conv_desc("b01f_01oi->b01f", 4, (int64_t[]){16, 28, 28, 128}, (int64_t[]){3, 3, 128, 128});
  pads(&logical, 1);
  optic_conv_desc d;
  OT_EXPECT_OK(optic_conv_apply_layouts(&logical, (int64_t[]){3, 0, 2, 1}, (int64_t[]){3, 2, 1, 0},
                                        (int64_t[]){3, 0, 2, 1}, &d));
  for (int pass = 0; pass < 3; pass++) {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&d, (optic_conv_pass)pass, 2, &p));
    OT_CHECK(p.output_direct, "%s: 01bf output is written in place", pass_names[pass]);
  }
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(&d, &os));
  kt_rng rng = {77};
  size_t nin = kt_elements(&d.input), nk = kt_elements(&d.kernel), nout = kt_elements(&os);
  float *in = random_floats(&rng, nin), *k = random_floats(&rng, nk), *out = malloc(nout * sizeof(float));
  optic_conv_plan p;
  OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 2, &p));
  void *scr = malloc(p.scratch_bytes);
  for (int32_t t = 0; t < 2; t++) OT_EXPECT_OK(optic_conv_run_forward(&p, in, k, out, scr, t, 2));
  optic_conv_desc small = d;
  optic_shape so;
  float *sin = take_ends(in, &d.input, d.dn.in_batch, 1, &small.input);
  float *sout = take_ends(out, &os, d.dn.out_batch, 1, &so);
  float *ain = absolute(sin, kt_elements(&small.input)), *ak = absolute(k, nk);
  size_t ns = kt_elements(&so);
  float *want = malloc(ns * sizeof(float)), *mag = malloc(ns * sizeof(float));
  OT_EXPECT_OK(optic_ref_f32_conv(&small, sin, k, want));
  OT_EXPECT_OK(optic_ref_f32_conv(&small, ain, ak, mag));
  int bad = 0;
  for (size_t i = 0; i < ns && bad < 3; i++) {
    if (!(fabs((double)sout[i] - want[i]) <= RTOL * mag[i] + ATOL)) {
      OT_CHECK(false, "[%zu] = %.9g, ref %.9g", i, sout[i], want[i]);
      bad++;
    }
  }
  free(in), free(k), free(out), free(scr), free(sin), free(sout), free(ain), free(ak), free(want), free(mag);
}

/* conv_lhs_dilate_parse_only.hlo is too large to run (1 GiB kernel): shape
 * inference and planning only. */
static void test_hlo_lhs_dilate_parse_only(void) {
  optic_conv_desc d = kt_conv_desc("0bf1_0oi1->0bf1", 4, (int64_t[]){32, 24, 64, 128}, (int64_t[]){32, 1024, 64, 128});
  d.stride[0] = 31;
  d.lhs_dilation[0] = 32;
  for (int pass = 0; pass < 3; pass++) {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&d, (optic_conv_pass)pass, 2, &p));
    if (pass == OPTIC_CONV_FORWARD) {
      const int64_t want[4] = {32, 24, 1024, 1};
      OT_CHECK(p.result_shape.rank == 4);
      for (int i = 0; i < 4; i++) OT_CHECK(p.result_shape.dims[i] == want[i], "dim %d", i);
    }
  }
}

/* ------------------------------------------------------------ fixed cases */

static void test_common_layers(void) {
  /* NHWC 3x3 stride 2 pad 1, NCHW 3x3, 1x1 NHWC and NCHW (pure GEMM), depthwise. */
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 9, 8, 6}, (int64_t[]){3, 3, 6, 5});
  pads(&d, 1);
  d.stride[0] = d.stride[1] = 2;
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_MK);
  check_desc(&d, 10, describe(&d));
  d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 6, 9, 8}, (int64_t[]){5, 6, 3, 3});
  pads(&d, 1);
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_KM);
  check_desc(&d, 11, describe(&d));
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){3, 7, 5, 16}, (int64_t[]){1, 1, 16, 24});
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_GEMM, "1x1 NHWC is a GEMM");
  OT_CHECK(strategy_of(&d, OPTIC_CONV_BACKWARD_INPUT) == OPTIC_CONV_STRATEGY_GEMM, "its input gradient too");
  OT_CHECK(strategy_of(&d, OPTIC_CONV_BACKWARD_KERNEL) == OPTIC_CONV_STRATEGY_GEMM, "its kernel gradient too");
  check_desc(&d, 12, describe(&d));
  d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 16, 7, 6}, (int64_t[]){24, 16, 1, 1});
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_GEMM, "1x1 NCHW is a GEMM per image");
  check_desc(&d, 13, describe(&d));
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 6, 6, 8}, (int64_t[]){3, 3, 1, 16});
  d.feature_group_count = 8;
  pads(&d, 1);
  check_desc(&d, 14, describe(&d));
  /* Many blocks per run (contraction 1800 floats: 32-position blocks) in both
   * gathers, and the tiled path (output runs shorter than a block). */
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 10, 9, 200}, (int64_t[]){3, 3, 200, 3});
  pads(&d, 1);
  check_desc(&d, 16, "multi-block NHWC");
  d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 200, 9, 10}, (int64_t[]){3, 200, 3, 3});
  pads(&d, 1);
  check_desc(&d, 17, "multi-block NCHW");
  d = kt_conv_desc("0fb1_01io->0fb1", 4, (int64_t[]){8, 200, 2, 5}, (int64_t[]){3, 3, 200, 3});
  pads(&d, 1);
  {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p));
    OT_CHECK(!p.output_direct, "0fb1 output with 10-position runs goes through the tile");
  }
  check_desc(&d, 18, "multi-block tiled 0fb1");
  /* 3-D NDHWC with rhs dilation and a reversed window */
  d = kt_conv_desc("b012f_012io->b012f", 5, (int64_t[]){2, 5, 4, 6, 3}, (int64_t[]){2, 3, 2, 3, 4});
  d.rhs_dilation[1] = 2, d.reverse[2] = true, d.pad_lo[0] = 1, d.pad_hi[2] = -1, d.stride[2] = 2;
  check_desc(&d, 15, describe(&d));
}

static void test_edge_sizes(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 1, 1, 3}, (int64_t[]){1, 1, 3, 4});
  check_desc(&d, 20, "1x1 image, 1x1 window");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 1, 1, 3}, (int64_t[]){3, 3, 3, 4});
  pads(&d, 1);
  check_desc(&d, 21, "1x1 image, 3x3 window, pad 1");
  d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){3, 2, 5, 4}, (int64_t[]){3, 2, 5, 4});
  check_desc(&d, 22, "window = image (NCHW)");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){3, 5, 4, 2}, (int64_t[]){5, 4, 2, 3});
  check_desc(&d, 23, "window = image (NHWC)");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){0, 5, 4, 2}, (int64_t[]){3, 3, 2, 3});
  check_desc(&d, 24, "zero batch");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 2, 2, 2}, (int64_t[]){3, 3, 2, 3});
  check_desc(&d, 25, "window larger than the input: empty output");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 4, 4, 0}, (int64_t[]){3, 3, 0, 3});
  pads(&d, 1);
  check_desc(&d, 26, "zero input features: zero output");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 4, 4, 2}, (int64_t[]){3, 3, 2, 0});
  check_desc(&d, 27, "zero output features");
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){2, 0, 2}, (int64_t[]){2, 2, 3});
  d.pad_lo[0] = 3;
  check_desc(&d, 28, "empty spatial input, padded");
}

/* ------------------------------------------------------- class sweep */

/* Forward pass of d on operands at a float-misaligned address (one float
 * past a 64-byte boundary), against the reference. */
static void check_misaligned_forward(const optic_conv_desc *d, uint64_t seed, const char *ctx) {
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(d, &os));
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_rng rng = {seed | 1};
  float *in = random_floats(&rng, nin + 1), *k = random_floats(&rng, nk + 1);
  float *ain = absolute(in + 1, nin), *ak = absolute(k + 1, nk);
  float *want = malloc((nout + 1) * sizeof(float)), *mag = malloc((nout + 1) * sizeof(float));
  OT_EXPECT_OK(optic_ref_f32_conv(d, in + 1, k + 1, want));
  OT_EXPECT_OK(optic_ref_f32_conv(d, ain, ak, mag));
  check_pass(d, OPTIC_CONV_FORWARD, in + 1, k + 1, nout, want, mag, 2, true, ctx);
  free(in), free(k), free(ain), free(ak), free(want), free(mag);
}

/* Depthwise NHWC (one feature per group) and its kernel gradient as
 * graph/autodiff_conv.c builds it (batch groups, batch and feature roles
 * swapped) run the grouped loops; every window option, group counts around
 * the loops' 256-group block, odd and 0/1 sizes, against the reference. */
static void test_grouped_classes(void) {
  const int64_t groups[] = {8, 17, 256, 257};
  for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
    int64_t c = groups[i];
    char ctx[96];
    optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 7, 5, c}, (int64_t[]){3, 3, 1, c});
    d.feature_group_count = c;
    pads(&d, 1);
    OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_GROUPED, "depthwise %lld groups", (long long)c);
    snprintf(ctx, sizeof ctx, "depthwise NHWC, %lld groups", (long long)c);
    check_desc(&d, 40 + i, ctx);
    check_misaligned_forward(&d, 50 + i, ctx);
    d.stride[0] = 2, d.rhs_dilation[1] = 2, d.lhs_dilation[0] = 2, d.reverse[1] = true, d.pad_hi[0] = -1;
    snprintf(ctx, sizeof ctx, "depthwise NHWC, %lld groups, strided/dilated/reversed", (long long)c);
    check_desc(&d, 60 + i, ctx);
    /* the depthwise kernel gradient: [N=3, 6, 5, C] x grad_out [3, 6, 5, C] -> [3, 3, 1, C] */
    d = kt_conv_desc("f01b_i01o->01bf", 4, (int64_t[]){3, 6, 5, c}, (int64_t[]){3, 6, 5, c});
    d.batch_group_count = c;
    pads(&d, 1);
    OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_GROUPED, "bgc kernel grad %lld", (long long)c);
    snprintf(ctx, sizeof ctx, "depthwise kernel gradient (batch groups), %lld groups", (long long)c);
    check_desc(&d, 70 + i, ctx);
    check_misaligned_forward(&d, 80 + i, ctx);
    d.stride[0] = d.stride[1] = 2; /* the kernel gradient of a dilated depthwise conv */
    d.pad_hi[0] = d.pad_hi[1] = 2;
    check_desc(&d, 90 + i, "depthwise kernel gradient, window strides 2");
    /* the same in NCHW: groups 30 floats apart (the strided group loops) */
    d = kt_conv_desc("fb01_io01->bf01", 4, (int64_t[]){3, c, 6, 5}, (int64_t[]){3, c, 6, 5});
    d.batch_group_count = c;
    pads(&d, 1);
    {
      optic_conv_plan p;
      OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p));
      OT_CHECK(p.strategy == OPTIC_CONV_STRATEGY_GROUPED && !p.grouped_rows, "NCHW bgc kernel grad %lld", (long long)c);
    }
    snprintf(ctx, sizeof ctx, "NCHW depthwise kernel gradient (batch groups), %lld groups", (long long)c);
    check_desc(&d, 130 + i, ctx);
    check_misaligned_forward(&d, 140 + i, ctx);
  }
  /* NCHW depthwise (groups not adjacent): the row loops, with channel
   * multiplier 1 and 2, every window option off the row dim, rows of 10 and 13 (8 and 11 when dilated) */
  const int64_t widths[] = {10, 13};
  for (size_t i = 0; i < 2; i++) {
    for (int64_t mult = 1; mult <= 2; mult++) {
      char ctx[96];
      optic_conv_desc d =
          kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 6, 5, widths[i]}, (int64_t[]){6 * mult, 1, 3, 3});
      d.feature_group_count = 6;
      pads(&d, 1);
      optic_conv_plan p;
      OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p));
      OT_CHECK(p.strategy == OPTIC_CONV_STRATEGY_GROUPED && p.grouped_rows, "NCHW depthwise runs the row loops");
      snprintf(ctx, sizeof ctx, "NCHW depthwise, width %lld, multiplier %lld", (long long)widths[i], (long long)mult);
      check_desc(&d, 102 + i * 2 + (uint64_t)mult, ctx);
      check_misaligned_forward(&d, 106 + i * 2 + (uint64_t)mult, ctx);
      d.stride[0] = 2, d.lhs_dilation[0] = 2, d.rhs_dilation[1] = 2, d.reverse[0] = d.reverse[1] = true;
      d.pad_lo[1] = -1, d.pad_hi[1] = 3;
      OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p));
      OT_CHECK(p.strategy == OPTIC_CONV_STRATEGY_GROUPED && p.grouped_rows, "and with every window option");
      check_desc(&d, 120 + i * 2 + (uint64_t)mult, ctx);
    }
  }
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){0, 7, 5, 9}, (int64_t[]){3, 3, 1, 9});
  d.feature_group_count = 9;
  check_desc(&d, 99, "depthwise, zero batch");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){1, 1, 1, 9}, (int64_t[]){3, 3, 1, 9});
  d.feature_group_count = 9;
  pads(&d, 1);
  check_desc(&d, 100, "depthwise, 1x1 image");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 2, 2, 9}, (int64_t[]){3, 3, 1, 9});
  d.feature_group_count = 9;
  check_desc(&d, 101, "depthwise, empty output");
}

/* The other classes the runtime is handed (the bench kernel/conv_class set,
 * small): NCHW and odd dim labels, lhs dilation (input gradients), the
 * kernel gradients of plain, strided and dilated layers in NHWC and NCHW. */
static void test_runtime_classes(void) {
  optic_conv_desc d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 5, 7, 6}, (int64_t[]){4, 5, 3, 3});
  d.lhs_dilation[0] = d.lhs_dilation[1] = 2, d.pad_lo[0] = d.pad_lo[1] = 1, d.pad_hi[0] = d.pad_hi[1] = 2;
  check_desc(&d, 110, "NCHW input gradient of a stride-2 layer (lhs dilation 2)");
  d.lhs_dilation[1] = 4, d.stride[1] = 2, d.pad_lo[1] = -1; /* runs of valid taps with period 2 */
  check_desc(&d, 117, "NCHW, lhs dilation 4 with window stride 2 on the row dim");
  d.lhs_dilation[0] = 3, d.stride[0] = 2, d.pad_lo[0] = 4; /* period 3, outer dim */
  check_desc(&d, 118, "NCHW, lhs dilation 3 with window stride 2");
  d = kt_conv_desc("fb01_io01->bf01", 4, (int64_t[]){3, 5, 13, 14}, (int64_t[]){3, 4, 13, 14});
  pads(&d, 1);
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP, "NCHW kernel gradient");
  check_desc(&d, 111, "NCHW kernel gradient (swapped roles)");
  d.stride[0] = d.stride[1] = 2, d.pad_hi[0] = d.pad_hi[1] = 2;
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP, "its dilated version");
  check_desc(&d, 112, "NCHW kernel gradient of a dilated layer");
  d.rhs_dilation[0] = 2, d.lhs_dilation[0] = 2, d.reverse[1] = true, d.pad_lo[1] = -1;
  check_desc(&d, 115, "NCHW kernel gradient, window dilated, reversed, lhs-dilated");
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP, "with every window option");
  d = kt_conv_desc("fb01_io01->bf01", 4, (int64_t[]){3, 5, 13, 30}, (int64_t[]){3, 4, 13, 13});
  pads(&d, 1);
  d.rhs_dilation[1] = 2, d.stride[1] = 3; /* copies along the dilated window dim */
  OT_CHECK(strategy_of(&d, OPTIC_CONV_FORWARD) == OPTIC_CONV_STRATEGY_IM2COL_MK_TAP, "dilated innermost window dim");
  check_desc(&d, 116, "NCHW kernel gradient, innermost window dim dilated");
  d = kt_conv_desc("f01b_i01o->01bf", 4, (int64_t[]){3, 11, 9, 5}, (int64_t[]){3, 5, 4, 6});
  d.rhs_dilation[0] = d.rhs_dilation[1] = 2, d.pad_lo[0] = 1;
  check_desc(&d, 113, "NHWC kernel gradient of a strided layer (rhs dilation 2)");
  d = kt_conv_desc("01bf_o01i->f01b", 4, (int64_t[]){9, 7, 2, 5}, (int64_t[]){4, 3, 3, 5});
  pads(&d, 1);
  check_desc(&d, 114, "odd dim labels 01bf_o01i->f01b");
}

/* ---------------------------------------------------------- random sweep */

static void shuffle(kt_rng *r, int32_t *x, int32_t n) {
  for (int32_t i = n - 1; i > 0; i--) {
    int32_t j = (int32_t)(kt_next(r) % (uint64_t)(i + 1)), t = x[i];
    x[i] = x[j], x[j] = t;
  }
}

static int64_t pick(kt_rng *r, int64_t lo, int64_t hi) { return lo + (int64_t)(kt_next(r) % (uint64_t)(hi - lo + 1)); }

/* A random valid descriptor: rank 1-3 (sometimes 0), any dim order for each
 * operand, strides, signed pads, both dilations, reversal, groups. */
static optic_conv_desc random_desc(kt_rng *r) {
  optic_conv_desc d;
  optic_conv_desc_init(&d);
  int32_t nsp = (int32_t)pick(r, 0, 9);
  nsp = nsp == 0 ? 0 : nsp <= 4 ? 1 : nsp <= 7 ? 2 : 3;
  int32_t rank = nsp + 2, pi[OPTIC_MAX_RANK], pk[OPTIC_MAX_RANK], po[OPTIC_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) pi[i] = pk[i] = po[i] = i;
  shuffle(r, pi, rank), shuffle(r, pk, rank), shuffle(r, po, rank);
  d.dn.nspatial = nsp;
  d.dn.in_batch = pi[0], d.dn.in_feature = pi[1], d.dn.k_in = pk[0], d.dn.k_out = pk[1];
  d.dn.out_batch = po[0], d.dn.out_feature = po[1];
  int64_t mode = pick(r, 0, 5), fgc = 1, bgc = 1;
  if (mode == 4) fgc = pick(r, 2, 3);
  if (mode == 5) bgc = pick(r, 2, 3);
  d.feature_group_count = fgc, d.batch_group_count = bgc;
  int64_t bo = pick(r, 0, 9) == 0 ? 0 : pick(r, 1, 3), cin = pick(r, 1, 4), og = pick(r, 1, 4);
  d.input.rank = d.kernel.rank = rank;
  d.input.dims[pi[0]] = bo * bgc, d.input.dims[pi[1]] = cin * fgc;
  d.kernel.dims[pk[0]] = cin, d.kernel.dims[pk[1]] = og * fgc * bgc;
  for (int32_t s = 0; s < nsp; s++) {
    d.dn.in_spatial[s] = pi[2 + s], d.dn.k_spatial[s] = pk[2 + s], d.dn.out_spatial[s] = po[2 + s];
    d.input.dims[pi[2 + s]] = pick(r, 1, nsp == 3 ? 4 : 7);
    d.kernel.dims[pk[2 + s]] = pick(r, 1, 3);
    d.stride[s] = pick(r, 1, 3);
    d.lhs_dilation[s] = pick(r, 0, 3) == 0 ? pick(r, 2, 3) : 1;
    d.rhs_dilation[s] = pick(r, 0, 2) == 0 ? 2 : 1;
    d.pad_lo[s] = pick(r, -2, 3);
    d.pad_hi[s] = pick(r, -2, 3);
    d.reverse[s] = pick(r, 0, 4) == 0;
  }
  return d;
}

static void test_random_sweep(void) {
  const uint64_t seed = 0xC0FFEE1234ull;
  const int count = 400;
  printf("random sweep: seed 0x%llx, %d descriptors\n", (unsigned long long)seed, count);
  /* OPTIC_CONV_SWEEP_CASE=i runs only case i (the failure lines name it). */
  const char *only = getenv("OPTIC_CONV_SWEEP_CASE");
  kt_rng r = {seed};
  int failed = 0;
  for (int i = 0; i < count && failed < 5; i++) {
    optic_conv_desc d = random_desc(&r);
    if (only != NULL && atoi(only) != i) continue;
    char ctx[1100];
    snprintf(ctx, sizeof ctx, "sweep case %d (OPTIC_CONV_SWEEP_CASE=%d): %s", i, i, describe(&d));
    if (check_desc(&d, seed + (uint64_t)i, ctx) != 0) failed++;
  }
}

/* ------------------------------------------------------ finite differences */

static double loss(const optic_conv_desc *d, const double *in, const double *k, const double *go, double *out,
                   size_t nout) {
  optic_ref_f64_conv(d, in, k, out);
  double s = 0;
  for (size_t i = 0; i < nout; i++) s += go[i] * out[i];
  return s;
}

/* The loss sum(grad_output * conv(input, kernel)) is linear in each operand,
 * so a central difference with step 1 in double is exact up to rounding: the
 * BLAS gradients must match it within the f32 tolerance. */
static void fd_check(const optic_conv_desc *d, uint64_t seed, const char *what) {
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(d, &os));
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_rng rng = {seed};
  float *in = random_floats(&rng, nin), *k = random_floats(&rng, nk), *go = random_floats(&rng, nout);
  double *din = malloc(nin * sizeof(double)), *dk = malloc(nk * sizeof(double)), *dgo = malloc(nout * sizeof(double));
  double *tmp = malloc((nout + 1) * sizeof(double));
  for (size_t i = 0; i < nin; i++) din[i] = in[i];
  for (size_t i = 0; i < nk; i++) dk[i] = k[i];
  for (size_t i = 0; i < nout; i++) dgo[i] = go[i];
  float *gi = malloc(nin * sizeof(float)), *gk = malloc(nk * sizeof(float));
  float *ago = absolute(go, nout), *ak = absolute(k, nk), *ain = absolute(in, nin);
  float *mi = malloc(nin * sizeof(float)), *mk = malloc(nk * sizeof(float));
  optic_ref_f32_conv_backward_input(d, ago, ak, mi);
  optic_ref_f32_conv_backward_kernel(d, ain, ago, mk);
  optic_conv_plan pi, pk;
  OT_EXPECT_OK(optic_conv_plan_make(d, OPTIC_CONV_BACKWARD_INPUT, 2, &pi));
  OT_EXPECT_OK(optic_conv_plan_make(d, OPTIC_CONV_BACKWARD_KERNEL, 2, &pk));
  void *scr = malloc(pi.scratch_bytes + pk.scratch_bytes + 4);
  for (int32_t t = 0; t < 2; t++) {
    OT_EXPECT_OK(optic_conv_run_backward_input(&pi, go, k, gi, scr, t, 2));
    OT_EXPECT_OK(optic_conv_run_backward_kernel(&pk, in, go, gk, scr, t, 2));
  }
  for (int probe = 0; probe < 24; probe++) {
    bool on_input = probe % 2 == 0;
    size_t n = on_input ? nin : nk;
    if (n == 0) continue;
    size_t i = (size_t)(kt_next(&rng) % n);
    double *x = on_input ? din : dk, saved = x[i];
    x[i] = saved + 1.0;
    double up = loss(d, din, dk, dgo, tmp, nout);
    x[i] = saved - 1.0;
    double down = loss(d, din, dk, dgo, tmp, nout);
    x[i] = saved;
    double fd = (up - down) / 2.0, got = on_input ? gi[i] : gk[i], m = on_input ? mi[i] : mk[i];
    OT_CHECK(fabs(got - fd) <= RTOL * m + ATOL, "%s: d loss / d %s[%zu]: blas %.9g, finite difference %.9g", what,
             on_input ? "input" : "kernel", i, got, fd);
  }
  free(in), free(k), free(go), free(din), free(dk), free(dgo), free(tmp), free(gi), free(gk);
  free(ago), free(ak), free(ain), free(mi), free(mk), free(scr);
}

static void test_finite_differences(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 7, 6, 4}, (int64_t[]){3, 3, 2, 6});
  d.feature_group_count = 2, d.stride[0] = 2, d.pad_lo[0] = 1, d.pad_hi[1] = 1, d.rhs_dilation[1] = 2;
  fd_check(&d, 31, "NHWC stride 2, rhs dilation 2, 2 feature groups");
  d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 3, 6, 5}, (int64_t[]){4, 3, 3, 2});
  pads(&d, 1);
  d.stride[1] = 2;
  fd_check(&d, 32, "NCHW pad 1 stride 1x2");
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){4, 9, 3}, (int64_t[]){3, 3, 4});
  d.batch_group_count = 2, d.lhs_dilation[0] = 2, d.pad_lo[0] = -1, d.reverse[0] = true;
  fd_check(&d, 33, "1-D batch groups, lhs dilation, negative pad, reversed");
}

/* ------------------------------------------------ threads, calls, guards */

static void test_openmp_slices(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){3, 12, 11, 8}, (int64_t[]){3, 3, 8, 16});
  pads(&d, 1);
  optic_shape os;
  OT_EXPECT_OK(optic_conv_infer_shape(&d, &os));
  size_t nin = kt_elements(&d.input), nk = kt_elements(&d.kernel), nout = kt_elements(&os);
  kt_rng rng = {41};
  float *in = random_floats(&rng, nin), *k = random_floats(&rng, nk), *go = random_floats(&rng, nout);
  float *ain = absolute(in, nin), *ak = absolute(k, nk), *ago = absolute(go, nout);
  for (int pass = 0; pass < 3; pass++) {
    const float *a = pass == OPTIC_CONV_BACKWARD_INPUT ? go : in, *b = pass == OPTIC_CONV_BACKWARD_KERNEL ? go : k;
    const float *aa = pass == OPTIC_CONV_BACKWARD_INPUT ? ago : ain,
                *ab = pass == OPTIC_CONV_BACKWARD_KERNEL ? ago : ak;
    size_t n = pass == OPTIC_CONV_FORWARD ? nout : pass == OPTIC_CONV_BACKWARD_INPUT ? nin : nk;
    float *want = malloc(n * sizeof(float)), *mag = malloc(n * sizeof(float));
    OT_EXPECT_OK(ref_pass(&d, (optic_conv_pass)pass, a, b, want));
    OT_EXPECT_OK(ref_pass(&d, (optic_conv_pass)pass, aa, ab, mag));
    check_pass(&d, (optic_conv_pass)pass, a, b, n, want, mag, 2, true, "openmp 2 threads");
    free(want), free(mag);
  }
  free(in), free(k), free(go), free(ain), free(ak), free(ago);
}

static void test_invalid_calls(void) {
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 5, 5, 3}, (int64_t[]){3, 3, 3, 4});
  optic_conv_plan p;
  OT_EXPECT_STATUS(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 0, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_plan_make(&d, (optic_conv_pass)7, 1, &p), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, NULL), OPTIC_ERR_INVALID_ARGUMENT);
  d.kernel.dims[2] = 4;
  OT_EXPECT_STATUS(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 1, &p), OPTIC_ERR_SHAPE_MISMATCH);
  OT_CHECK(
      strstr(optic_last_error(),
             "input feature dim has size 3 but kernel input feature dim has size 4 (feature_group_count 1)") != NULL,
      "%s", optic_last_error());
  d.kernel.dims[2] = 3;
  OT_EXPECT_OK(optic_conv_plan_make(&d, OPTIC_CONV_FORWARD, 2, &p));
  float buf[2048] = {0};
  void *scr = malloc(p.scratch_bytes + 1);
  OT_EXPECT_STATUS(optic_conv_run_forward(&p, NULL, buf, buf, scr, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "operand 0 is NULL") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_conv_run_forward(&p, buf, buf, buf, NULL, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_run_forward(&p, buf, buf, buf, scr, 2, 2), OPTIC_ERR_INVALID_ARGUMENT);
  OT_EXPECT_STATUS(optic_conv_run_forward(&p, buf, buf, buf, scr, 0, 3), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "slice 0 of 3") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_conv_run_backward_input(&p, buf, buf, buf, scr, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  OT_CHECK(strstr(optic_last_error(), "another pass") != NULL, "%s", optic_last_error());
  OT_EXPECT_STATUS(optic_conv_run_forward(NULL, buf, buf, buf, scr, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  free(scr);
  /* Operands without elements may be NULL: a zero batch leaves only the kernel. */
  d.input.dims[0] = 0;
  for (int pass = 0; pass < 3; pass++) {
    OT_EXPECT_OK(optic_conv_plan_make(&d, (optic_conv_pass)pass, 1, &p));
    scr = malloc(p.scratch_bytes + 1);
    for (int i = 0; i < 64; i++) buf[i] = 1.0f;
    if (pass == OPTIC_CONV_FORWARD) OT_EXPECT_OK(optic_conv_run_forward(&p, NULL, buf, NULL, scr, 0, 1));
    if (pass == OPTIC_CONV_BACKWARD_INPUT) OT_EXPECT_OK(optic_conv_run_backward_input(&p, NULL, buf, NULL, scr, 0, 1));
    if (pass == OPTIC_CONV_BACKWARD_KERNEL) {
      OT_EXPECT_OK(optic_conv_run_backward_kernel(&p, NULL, NULL, buf, scr, 0, 1));
      for (int i = 0; i < 3 * 3 * 3 * 4; i++)
        OT_CHECK(buf[i] == 0.0f, "grad_kernel[%d] of an empty batch is %g", i, buf[i]);
    }
    free(scr);
  }
}

static const ot_case cases[] = {
    {"hlo_conv0d_as_matmul", test_hlo_conv0d_as_matmul},
    {"hlo_conv2d_nhwc", test_hlo_conv2d_nhwc},
    {"hlo_isolated_layout_3021", test_hlo_isolated_layout_3021},
    {"hlo_lhs_dilate_parse_only", test_hlo_lhs_dilate_parse_only},
    {"common_layers", test_common_layers},
    {"edge_sizes", test_edge_sizes},
    {"grouped_classes", test_grouped_classes},
    {"runtime_classes", test_runtime_classes},
    {"random_sweep", test_random_sweep},
    {"finite_differences", test_finite_differences},
    {"openmp_slices", test_openmp_slices},
    {"invalid_calls", test_invalid_calls},
};
OT_MAIN(cases)
