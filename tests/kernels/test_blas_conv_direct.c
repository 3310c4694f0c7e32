/* The direct forward convolution (OPTIC_CONV_STRATEGY_DIRECT,
 * kernels/conv_direct.c and the loops of the selected ISA,
 * kernels/x86/avx512/conv_direct_avx512.c or kernels/x86/avx2/conv_direct_avx2.c) against
 * the naive double reference optic_ref_f32_conv, planned with the strategy
 * forced (optic_conv_plan_make_strategy) over a structured sweep: output
 * features around the 16-lane vector and the 32/48-feature blocks (1 to 65),
 * (and the 8-lane vector, 16- and 24-feature blocks of AVX2),
 * input features around the 16-feature packed block (1, 3, 15, 16, 17, 33, 64),
 * windows 1x1/3x3/5x5/1x3/3x1 and 1-D, strides 1/2, padding 0, 1, 2, negative
 * and asymmetric, rhs dilation 1/2/3, window reversal, feature and batch
 * groups, batch 1 and 3, widths around the 9- and 14-pixel tiles (4, 6 and 8
 * on AVX2) (1 to 57),
 * operands and scratch 1 float past a 64-byte boundary, 1..3 slices; input
 * features in several groups (kernel slice or packed rows beyond their L2
 * budgets). Plus: when the
 * automatic plan picks it, that OPTIC_ISA=scalar never gets it, and that
 * it refuses what it cannot run.
 * Tolerance: |got - ref| <= 2e-5 * M + 1e-6 per element, where M is the
 * convolution of |input| and |kernel| (the sum of |terms|, which bounds the
 * f32 accumulation error); ref is exact to double before its final rounding.
 * The output is pre-filled with NaN (an element left unwritten fails) and
 * followed by guard floats. Without AVX-512 or AVX2 the direct cases are skipped
 * (printed), the fallback checks still run. */
#include "kernels/conv.h"
#include "tests/kernels/conv_test.h"

#define RTOL 2e-5
#define ATOL 1e-6

static bool have_direct; /* the selected ISA has direct loops (avx512, avx2) */

static const char *describe(const optic_conv_desc *d) {
  static char buf[1024];
  char in[96], k[96];
  optic_shape_format(&d->input, OPTIC_DTYPE_INVALID, in, sizeof in);
  optic_shape_format(&d->kernel, OPTIC_DTYPE_INVALID, k, sizeof k);
  int n = snprintf(buf, sizeof buf, "in%s k%s fgc %lld bgc %lld", in, k, (long long)d->feature_group_count,
                   (long long)d->batch_group_count);
  for (int32_t s = 0; s < d->dn.nspatial && n < (int)sizeof buf - 80; s++) {
    n += snprintf(buf + n, sizeof buf - (size_t)n, " | s%d st%lld pad%lld_%lld rd%lld%s", s, (long long)d->stride[s],
                  (long long)d->pad_lo[s], (long long)d->pad_hi[s], (long long)d->rhs_dilation[s],
                  d->reverse[s] ? " rev" : "");
  }
  return buf;
}

/* Runs d with the direct strategy forced, as `threads` slices one after
 * another, every operand `offset` floats past a 64-byte boundary, and checks
 * every element and the guards. Returns the number of mismatches. */
static int check_direct(const optic_conv_desc *d, uint64_t seed, int32_t threads, size_t offset, const char *ctx) {
  optic_shape os;
  optic_status st = optic_conv_infer_shape(d, &os);
  OT_CHECK(st == OPTIC_OK, "%s: %s", ctx, optic_last_error());
  if (st != OPTIC_OK) return 1;
  optic_conv_plan p;
  st = optic_conv_plan_make_strategy(d, OPTIC_CONV_FORWARD, threads, OPTIC_CONV_STRATEGY_DIRECT, &p);
  OT_CHECK(st == OPTIC_OK, "%s: plan: %s", ctx, optic_last_error());
  if (st != OPTIC_OK) return 1;
  OT_CHECK(p.strategy == OPTIC_CONV_STRATEGY_DIRECT, "%s: strategy %d, scratch %zu", ctx, p.strategy, p.scratch_bytes);
  size_t nin = kt_elements(&d->input), nk = kt_elements(&d->kernel), nout = kt_elements(&os);
  kt_buf in = kt_buf_make(nin, offset), k = kt_buf_make(nk, offset), out = kt_buf_make(nout, offset);
  kt_rng rng = {seed | 1};
  kt_fill(&rng, in.p, nin, -1.0f, 1.0f, 0);
  kt_fill(&rng, k.p, nk, -1.0f, 1.0f, 0);
  float *want = malloc((nout + 1) * sizeof(float)), *mag = malloc((nout + 1) * sizeof(float));
  float *ain = malloc((nin + 1) * sizeof(float)), *ak = malloc((nk + 1) * sizeof(float));
  for (size_t i = 0; i < nin; i++) ain[i] = fabsf(in.p[i]);
  for (size_t i = 0; i < nk; i++) ak[i] = fabsf(k.p[i]);
  OT_EXPECT_OK(optic_ref_f32_conv(d, in.p, k.p, want));
  OT_EXPECT_OK(optic_ref_f32_conv(d, ain, ak, mag));
  /* the scratch (the slices' rings of packed rows) misaligned like the operands, guarded */
  kt_buf scr = kt_buf_make(p.scratch_bytes / sizeof(float), offset);
  for (int32_t t = 0; t < threads; t++) OT_EXPECT_OK(optic_conv_run_forward(&p, in.p, k.p, out.p, scr.p, t, threads));
  OT_CHECK(kt_buf_guard_ok(&scr), "%s: wrote past the scratch", ctx);
  kt_buf_free(&scr);
  int bad = 0;
  for (size_t i = 0; i < nout; i++) {
    double err = fabs((double)out.p[i] - (double)want[i]);
    if (!(err <= RTOL * mag[i] + ATOL) && bad++ < 3) {
      OT_CHECK(false, "%s: %d slices, offset %zu: [%zu] = %.9g, ref %.9g (|terms| %.3g)", ctx, threads, offset, i,
               out.p[i], want[i], mag[i]);
    }
  }
  OT_CHECK(kt_buf_guard_ok(&out), "%s: wrote past the output", ctx);
  kt_buf_free(&in), kt_buf_free(&k), kt_buf_free(&out);
  free(want), free(mag), free(ain), free(ak);
  return bad;
}

/* ------------------------------------------------------------- the sweep */

typedef struct window {
  const char *name;
  int32_t nsp;
  int64_t kh, kw; /* kh unused for 1-D */
} window;

static const window windows[] = {{"1x1", 2, 1, 1}, {"3x3", 2, 3, 3}, {"5x5", 2, 5, 5},
                                 {"1x3", 2, 1, 3}, {"3x1", 2, 3, 1}, {"1-D 3", 1, 0, 3}};
/* Output features around the 16-lane vector and the 32- and 48-feature
 * blocks; input features around the 16-feature packed block. */
static const int64_t couts[] = {1, 7, 9, 15, 16, 17, 24, 25, 32, 33, 47, 48, 64, 65};
static const int64_t cins[] = {1, 3, 15, 16, 17, 33, 64};
/* Around the tiles (14 pixels with 1 or 2 feature vectors, 9 with 3); a row
 * is split into tiles of near-equal width. */
static const int64_t widths[] = {1, 4, 5, 6, 7, 8, 9, 13, 14, 15, 28, 29, 57};
/* (pad_lo, pad_hi) per spatial dim: none, 1, 2, negative, asymmetric */
static const int64_t pad_cases[][2] = {{0, 0}, {1, 1}, {2, 2}, {-1, 0}, {2, 0}, {0, 3}};

/* Every (cout, cin, window) triple once; the other parameters cycle with
 * coprime periods so that each value meets many of the others. */
static void test_sweep(void) {
  if (!have_direct) {
    printf("skipped: this CPU (or OPTIC_ISA) selects neither avx512 nor avx2\n");
    return;
  }
  const size_t nwin = sizeof windows / sizeof *windows, nco = sizeof couts / sizeof *couts;
  const size_t nci = sizeof cins / sizeof *cins, nwid = sizeof widths / sizeof *widths;
  const size_t npad = sizeof pad_cases / sizeof *pad_cases;
  int cases = 0, failed = 0;
  for (size_t i = 0; i < nco * nci * nwin && failed < 5; i++) {
    const window *w = &windows[i % nwin];
    int64_t cout = couts[(i / nwin) % nco], cin = cins[i / (nwin * nco)];
    int64_t width = widths[i % nwid], rows = 2 + (int64_t)(i % 3), batch = i % 4 == 3 ? 3 : 1;
    int64_t stride = 1 + (int64_t)(i % 2 == 1 && i % 7 != 0), dil = i % 5 == 2 ? 2 : i % 5 == 4 ? 3 : 1;
    bool rev = i % 7 == 3;
    const int64_t *pad = pad_cases[i % npad];
    int64_t groups = i % 11 == 5 ? 2 : 1, bgroups = groups == 1 && i % 13 == 8 ? 2 : 1;
    if (cin * cout * width > 64 * 65 * 7 && batch > 1) batch = 1; /* keep the reference fast */
    optic_conv_desc d;
    if (w->nsp == 2) {
      d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){batch * bgroups, rows + 3, width, cin * groups},
                       (int64_t[]){w->kh, w->kw, cin, cout * groups * bgroups});
    } else {
      d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){batch * bgroups, width, cin * groups},
                       (int64_t[]){w->kw, cin, cout * groups * bgroups});
    }
    d.feature_group_count = groups, d.batch_group_count = bgroups;
    for (int32_t s = 0; s < w->nsp; s++) {
      d.stride[s] = stride, d.rhs_dilation[s] = dil, d.reverse[s] = rev;
      d.pad_lo[s] = pad[0], d.pad_hi[s] = pad[1];
    }
    optic_shape os;
    if (optic_conv_infer_shape(&d, &os) != OPTIC_OK) { /* a negative pad can empty a dim: pad it back */
      for (int32_t s = 0; s < w->nsp; s++) d.pad_lo[s] = d.pad_hi[s] = (w->nsp == 2 ? w->kh : w->kw);
      OT_EXPECT_OK(optic_conv_infer_shape(&d, &os));
    }
    char ctx[1200];
    snprintf(ctx, sizeof ctx, "sweep %zu (%s, cout %lld, cin %lld, width %lld): %s", i, w->name, (long long)cout,
             (long long)cin, (long long)width, describe(&d));
    int32_t threads = 1 + (int32_t)(i % 3);
    size_t offset = i % 2;
    int bad = check_direct(&d, 1000 + i, threads, offset, ctx);
    if (i % 9 == 0) bad += check_direct(&d, 1000 + i, 3 - (int32_t)(i % 3) + 0, 1 - offset, ctx);
    failed += bad != 0;
    cases++;
  }
  printf("direct sweep: %d descriptors\n", cases);
}

/* Windows larger than the input, pixels with no valid tap, a zero-sized
 * batch, zero features: every output element is still written. */
static void test_edges(void) {
  if (!have_direct) {
    printf("skipped: neither avx512 nor avx2 selected\n");
    return;
  }
  optic_conv_desc d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 3, 4, 5}, (int64_t[]){3, 3, 5, 20});
  for (int32_t s = 0; s < 2; s++) d.pad_lo[s] = d.pad_hi[s] = 4;
  check_direct(&d, 1, 2, 1, "pad 4 > window: rows and pixels with no tap are zero");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){1, 1, 1, 7}, (int64_t[]){5, 5, 7, 33});
  for (int32_t s = 0; s < 2; s++) d.pad_lo[s] = d.pad_hi[s] = 2, d.rhs_dilation[s] = 2;
  check_direct(&d, 2, 1, 0, "1x1 image, dilated 5x5 window");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 6, 9, 8}, (int64_t[]){3, 3, 8, 16});
  d.pad_lo[0] = -2, d.pad_hi[0] = 1, d.pad_lo[1] = 3, d.pad_hi[1] = -2, d.stride[1] = 3;
  check_direct(&d, 3, 3, 1, "mixed negative and large padding, stride 3");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){0, 5, 5, 8}, (int64_t[]){3, 3, 8, 16});
  check_direct(&d, 4, 2, 0, "zero batch");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 5, 5, 0}, (int64_t[]){3, 3, 0, 16});
  check_direct(&d, 5, 2, 0, "zero input features: zeros");
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 5, 5, 4}, (int64_t[]){3, 3, 4, 0});
  check_direct(&d, 6, 2, 0, "zero output features");
  /* Spatial dims in another order (the pixel dim is the outer one) and
   * input/output strides that differ from the dense NHWC ones. */
  d = kt_conv_desc("b10f_10io->b10f", 4, (int64_t[]){2, 7, 5, 16}, (int64_t[]){3, 2, 16, 24});
  d.pad_lo[0] = 1, d.pad_hi[1] = 1;
  check_direct(&d, 7, 2, 1, "b10f layout");
  d = kt_conv_desc("0b1f_01io->1b0f", 4, (int64_t[]){5, 2, 6, 16}, (int64_t[]){3, 3, 16, 17});
  d.pad_lo[0] = d.pad_hi[0] = 1;
  check_direct(&d, 8, 3, 0, "0b1f input, 1b0f output");
  /* Kernel slices beyond the L2 budget: input features run in groups, later
   * groups adding to the output (3x3 x 1000 x 128 outputs: four groups of 224
   * and one of 104; 1-D 5 taps x 2000 x 65 outputs: 800 + 800 + 400, output
   * features in blocks of 32, 32 and 1),
   * and packed rows beyond the ring budget (1-D, 3000 pixels x 64 features:
   * groups of 32). */
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 5, 7, 1000}, (int64_t[]){3, 3, 1000, 128});
  for (int32_t s = 0; s < 2; s++) d.pad_lo[s] = d.pad_hi[s] = 1;
  {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 2, OPTIC_CONV_STRATEGY_DIRECT, &p));
    OT_CHECK(p.direct_cin_block > 0 && p.direct_cin_block < 1000 && p.direct_cin_block % 16 == 0,
             "input-feature group %lld", (long long)p.direct_cin_block);
  }
  check_direct(&d, 10, 2, 1, "3x3, 1000 input features in five groups");
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){1, 9, 2000}, (int64_t[]){5, 2000, 65});
  d.pad_lo[0] = 2, d.pad_hi[0] = 1, d.reverse[0] = true;
  check_direct(&d, 11, 3, 0, "1-D, 2000 input features in three groups, 65 outputs");
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){2, 3000, 64}, (int64_t[]){3, 64, 32});
  d.pad_lo[0] = d.pad_hi[0] = 1;
  {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 2, OPTIC_CONV_STRATEGY_DIRECT, &p));
    OT_CHECK(p.direct_cin_block == 32, "input-feature group %lld (ring budget)", (long long)p.direct_cin_block);
  }
  check_direct(&d, 12, 2, 1, "1-D, 3000 pixels, 64 input features in groups of 32");
  /* More slices than rows. */
  d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){1, 40, 16}, (int64_t[]){5, 16, 70});
  check_direct(&d, 9, 3, 1, "1-D, one row, 3 slices");
}

/* ------------------------------------------------------------- choice */

static int32_t auto_strategy(const optic_conv_desc *d) {
  optic_conv_plan p;
  OT_EXPECT_OK(optic_conv_plan_make(d, OPTIC_CONV_FORWARD, 2, &p));
  return p.strategy;
}

static void test_automatic_choice(void) {
  optic_conv_desc resnet = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){8, 56, 56, 64}, (int64_t[]){3, 3, 64, 64});
  resnet.pad_lo[0] = resnet.pad_hi[0] = resnet.pad_lo[1] = resnet.pad_hi[1] = 1;
  optic_conv_desc pointwise =
      kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){8, 56, 56, 64}, (int64_t[]){1, 1, 64, 256});
  optic_conv_desc narrow = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 9, 9, 64}, (int64_t[]){3, 3, 64, 15});
  optic_conv_desc rgb = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 9, 9, 3}, (int64_t[]){7, 7, 3, 64});
  optic_conv_desc gray = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 9, 9, 1}, (int64_t[]){3, 3, 1, 64});
  optic_conv_desc deep = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 7, 7, 512}, (int64_t[]){3, 3, 512, 512});
  optic_conv_desc nchw = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 64, 9, 9}, (int64_t[]){64, 64, 3, 3});
  optic_conv_desc conv1d = kt_conv_desc("b0f_0io->b0f", 3, (int64_t[]){4, 100, 32}, (int64_t[]){5, 32, 48});
  int32_t want = have_direct ? OPTIC_CONV_STRATEGY_DIRECT : OPTIC_CONV_STRATEGY_IM2COL_MK;
  OT_CHECK(auto_strategy(&resnet) == want, "ResNet-50 3x3 NHWC: strategy %d", auto_strategy(&resnet));
  OT_CHECK(auto_strategy(&conv1d) == want, "1-D, 5 taps, 32 -> 48 features: strategy %d", auto_strategy(&conv1d));
  OT_CHECK(auto_strategy(&pointwise) == OPTIC_CONV_STRATEGY_GEMM, "1x1 stays a plain GEMM");
  OT_CHECK(auto_strategy(&narrow) == OPTIC_CONV_STRATEGY_IM2COL_MK, "15 output features stay on im2col");
  OT_CHECK(auto_strategy(&rgb) == want, "7x7 window on 3 input features: strategy %d", auto_strategy(&rgb));
  OT_CHECK(auto_strategy(&gray) == OPTIC_CONV_STRATEGY_IM2COL_KM, "1 input feature stays on im2col");
  OT_CHECK(auto_strategy(&deep) == want, "3x3x512 (input features in blocks): strategy %d", auto_strategy(&deep));
  OT_CHECK(auto_strategy(&nchw) == OPTIC_CONV_STRATEGY_IM2COL_KM, "NCHW cannot run direct");
  for (int pass = 1; pass < 3; pass++) {
    optic_conv_plan p;
    OT_EXPECT_OK(optic_conv_plan_make(&resnet, (optic_conv_pass)pass, 2, &p));
    OT_CHECK(p.strategy != OPTIC_CONV_STRATEGY_DIRECT, "gradient pass %d is not direct", pass);
    OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&resnet, (optic_conv_pass)pass, 2, OPTIC_CONV_STRATEGY_DIRECT, &p),
                     OPTIC_ERR_UNSUPPORTED);
  }
  if (have_direct) check_direct(&conv1d, 11, 2, 1, "1-D automatic case");

  /* OPTIC_ISA caps the choice: avx2 keeps the direct plan (its own loops),
   * scalar has none. The caller's OPTIC_ISA is restored afterwards. */
  const char *env = getenv("OPTIC_ISA");
  char saved[32] = "";
  if (env != NULL) snprintf(saved, sizeof saved, "%s", env);
  setenv("OPTIC_ISA", "scalar", 1);
  optic_isa_reselect();
  OT_CHECK(auto_strategy(&resnet) == OPTIC_CONV_STRATEGY_IM2COL_MK, "OPTIC_ISA=scalar: strategy %d",
           auto_strategy(&resnet));
  optic_conv_plan p;
  OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&resnet, OPTIC_CONV_FORWARD, 2, OPTIC_CONV_STRATEGY_DIRECT, &p),
                   OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "neither avx512 nor avx2") != NULL, "%s", optic_last_error());
  setenv("OPTIC_ISA", "avx2", 1);
  optic_isa_reselect();
  if (optic_isa_selected() == OPTIC_ISA_AVX2) { /* the CPU has AVX2 */
    OT_CHECK(auto_strategy(&resnet) == OPTIC_CONV_STRATEGY_DIRECT, "OPTIC_ISA=avx2: strategy %d",
             auto_strategy(&resnet));
    OT_EXPECT_OK(optic_conv_plan_make(&conv1d, OPTIC_CONV_FORWARD, 2, &p));
    OT_CHECK(p.loops_isa == OPTIC_ISA_AVX2, "OPTIC_ISA=avx2: loops_isa %d", (int)p.loops_isa);
  }
  if (env != NULL) {
    setenv("OPTIC_ISA", saved, 1);
  } else {
    unsetenv("OPTIC_ISA");
  }
  optic_isa_reselect();
}

static void test_refusals(void) {
  optic_conv_plan p;
  optic_conv_desc d = kt_conv_desc("bf01_oi01->bf01", 4, (int64_t[]){2, 16, 9, 9}, (int64_t[]){16, 16, 3, 3});
  OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 1, OPTIC_CONV_STRATEGY_DIRECT, &p),
                   OPTIC_ERR_UNSUPPORTED);
  d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){2, 9, 9, 16}, (int64_t[]){3, 3, 16, 16});
  d.lhs_dilation[0] = 2;
  OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 1, OPTIC_CONV_STRATEGY_DIRECT, &p),
                   OPTIC_ERR_UNSUPPORTED);
  if (have_direct) OT_CHECK(strstr(optic_last_error(), "lhs") != NULL, "%s", optic_last_error());
  d = kt_conv_desc("b012f_012io->b012f", 5, (int64_t[]){1, 4, 4, 4, 16}, (int64_t[]){2, 2, 2, 16, 16});
  OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 1, OPTIC_CONV_STRATEGY_DIRECT, &p),
                   OPTIC_ERR_UNSUPPORTED);
  OT_EXPECT_STATUS(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 1, OPTIC_CONV_STRATEGY_GEMM, &p),
                   OPTIC_ERR_INVALID_ARGUMENT);
  /* The run contract: a slice beyond the plan's count is refused. */
  if (have_direct) {
    d = kt_conv_desc("b01f_01io->b01f", 4, (int64_t[]){1, 4, 4, 16}, (int64_t[]){3, 3, 16, 16});
    OT_EXPECT_OK(optic_conv_plan_make_strategy(&d, OPTIC_CONV_FORWARD, 2, OPTIC_CONV_STRATEGY_DIRECT, &p));
    float buf[1024] = {0};
    OT_EXPECT_STATUS(optic_conv_run_forward(&p, buf, buf, buf, NULL, 0, 3), OPTIC_ERR_INVALID_ARGUMENT);
    OT_EXPECT_STATUS(optic_conv_run_forward(&p, NULL, buf, buf, NULL, 0, 1), OPTIC_ERR_INVALID_ARGUMENT);
  }
}

static void setup(void) {
  have_direct = optic_isa_selected() == OPTIC_ISA_AVX512 || optic_isa_selected() == OPTIC_ISA_AVX2;
}

static void test_sweep_case(void) { setup(), test_sweep(); }
static void test_edges_case(void) { setup(), test_edges(); }
static void test_choice_case(void) { setup(), test_automatic_choice(); }
static void test_refusals_case(void) { setup(), test_refusals(); }

static const ot_case cases[] = {
    {"sweep", test_sweep_case},
    {"edges", test_edges_case},
    {"automatic_choice", test_choice_case},
    {"refusals", test_refusals_case},
};
OT_MAIN(cases)
